//! The agents file as TOML gives it: raw structs with spans, before validation.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::Price;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    #[serde(default)]
    pub(super) agents: BTreeMap<String, Spanned<RawAgent>>,
    #[serde(default)]
    pub(super) prices: BTreeMap<String, Spanned<Price>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgent {
    /// `llm`, or `harness` (implied by `harness = ...`).
    pub(super) kind: Option<Spanned<String>>,
    pub(super) model: Option<Spanned<String>>,
    pub(super) base_url: Option<Spanned<String>>,
    pub(super) api_key_env: Option<Spanned<String>>,
    pub(super) temperature: Option<Spanned<f64>>,
    pub(super) top_p: Option<Spanned<f64>>,
    pub(super) max_output_tokens: Option<Spanned<u32>>,
    pub(super) modalities: Option<Spanned<Vec<String>>>,
    pub(super) seed: Option<i64>,
    pub(super) limits: Option<Spanned<RawLimits>>,
    pub(super) retry: Option<Spanned<RawRetry>>,
    pub(super) extra_body: Option<toml::Table>,
    pub(super) shell: Option<Spanned<RawShell>>,
    // Harness agents (see `harness_agent`).
    pub(super) harness: Option<Spanned<String>>,
    pub(super) command: Option<Spanned<Vec<String>>>,
    pub(super) format: Option<Spanned<String>>,
    pub(super) args: Option<Vec<String>>,
    pub(super) env: Option<BTreeMap<String, String>>,
}

/// `shell = false`, `shell = true`, or a `[agents.<name>.shell]` table.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawShell {
    On(bool),
    Settings(RawShellSettings),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawShellSettings {
    pub(super) enabled: Option<bool>,
    pub(super) wall_seconds: Option<u64>,
    pub(super) cpu_seconds: Option<u64>,
    pub(super) memory_mb: Option<u64>,
    /// Per file (`RLIMIT_FSIZE`); `file_mb` is the older name, still accepted.
    #[serde(alias = "file_mb")]
    pub(super) max_file_mb: Option<u64>,
    pub(super) max_processes: Option<u64>,
    pub(super) output_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    pub(super) max_input_tokens: Option<u64>,
    pub(super) max_output_tokens: Option<u64>,
    pub(super) max_cost_usd: Option<Spanned<f64>>,
    /// Harness agents only: wall-clock seconds per turn.
    pub(super) wall_seconds: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRetry {
    pub(super) max_retries: Option<u32>,
    pub(super) max_wait_seconds: Option<Spanned<f64>>,
    pub(super) initial_backoff_seconds: Option<Spanned<f64>>,
    pub(super) max_backoff_seconds: Option<Spanned<f64>>,
    pub(super) request_timeout_seconds: Option<Spanned<f64>>,
}
