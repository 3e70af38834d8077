//! What an `llm` agent is: its model, endpoint, sampling parameters, limits, retry budget and
//! price — and `agents.toml`, the file that declares named agents.
//!
//! ```toml
//! [agents.gpt-mini]
//! kind = "llm"
//! model = "openai:gpt-4.1-mini"
//! base_url = "https://api.openai.com/v1"   # optional
//! api_key_env = "OPENAI_API_KEY"           # optional
//! temperature = 0
//! max_output_tokens = 4096
//! modalities = ["text", "image"]           # optional; "audio" too where the API takes it
//! [agents.gpt-mini.limits]
//! max_input_tokens = 2000000
//! max_output_tokens = 200000
//! max_cost_usd = 5.0
//!
//! [prices."openai:gpt-4.1-mini"]
//! input_per_mtok = 0.4
//! cached_input_per_mtok = 0.1
//! output_per_mtok = 1.6
//! ```
//!
//! Every problem in the file is reported as `path:line:col: what — what to do`, all of them at
//! once (the style of the task loader). The reference is `docs/agents.md`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use super::shell::ShellSettings;

use bureau_core::{Location, TaskError, TaskErrors};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toml::Spanned;

/// The wire format a model is reached by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// The OpenAI Chat Completions API (also vLLM, Ollama, llama.cpp server, LiteLLM,
    /// OpenRouter, ... by base URL).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    pub const ALL: [Provider; 2] = [Provider::OpenAi, Provider::Anthropic];

    pub fn as_str(&self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The environment variable holding the API key when the agent names none.
    pub fn key_env(&self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The environment variable holding the base URL when the agent names none.
    pub fn base_url_env(&self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_BASE_URL",
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
        }
    }

    /// The provider's own endpoint.
    pub fn default_base_url(&self) -> &'static str {
        match self {
            Provider::OpenAi => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The URL requests go to, for a base URL: `<base>/chat/completions` (OpenAI, whose base
    /// URLs end in `/v1`) or `<base>/v1/messages` (Anthropic, whose base URLs do not; a base
    /// that already ends in `/v1` is accepted too).
    pub fn endpoint(&self, base_url: &str) -> String {
        let base = base_url.trim_end_matches('/');
        match self {
            Provider::OpenAi => format!("{base}/chat/completions"),
            Provider::Anthropic if base.ends_with("/v1") => format!("{base}/messages"),
            Provider::Anthropic => format!("{base}/v1/messages"),
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model as `provider:model`, e.g. `openai:gpt-4.1-mini`, `anthropic:claude-sonnet-4-5`.
/// The model part is passed to the API as it is (it may contain `:` and `/`, as Ollama's and
/// OpenRouter's names do).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelRef {
    pub provider: Provider,
    pub model: String,
}

impl ModelRef {
    /// Parse `provider:model`; the message says what is wrong.
    pub fn parse(text: &str) -> Result<ModelRef, String> {
        let Some((provider, model)) = text.split_once(':') else {
            return Err(format!(
                "model `{text}` names no provider — write it as provider:model, e.g. openai:gpt-4.1-mini or anthropic:claude-sonnet-4-5"
            ));
        };
        let provider = match provider.trim() {
            "openai" => Provider::OpenAi,
            "anthropic" => Provider::Anthropic,
            other => {
                return Err(format!(
                    "unknown model provider `{other}` in `{text}` — use openai (any OpenAI-compatible server: vLLM, Ollama, llama.cpp, LiteLLM, OpenRouter) or anthropic"
                ));
            }
        };
        let model = model.trim();
        if model.is_empty() {
            return Err(format!(
                "model `{text}` has an empty model name — write e.g. {provider}:<model name>"
            ));
        }
        Ok(ModelRef {
            provider,
            model: model.to_string(),
        })
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

impl Serialize for ModelRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Sampling parameters sent with every request (absent ones are not sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sampling {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Output tokens per model call (`max_completion_tokens` for OpenAI, `max_tokens` for
    /// Anthropic, which requires it: 4096 when not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// OpenAI only (the Anthropic API has no seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
}

/// Budgets of one trial (the whole conversation, over every turn). Reaching one ends the turn
/// with a `limit_reached` step; later turns end at once. The task's own limits (tool calls
/// and wall time per turn) hold as well.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LlmLimits {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

/// How model API failures are retried: 429, 408, 409, 5xx, timeouts, connection failures and
/// cut-off bodies, with exponential backoff and jitter, honouring `Retry-After`. When
/// `max_retries` retries failed, or the next wait would take the waits past `max_wait`, the
/// call fails and the trial is `error`.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySettings {
    pub max_retries: u32,
    /// Total waiting allowed between the attempts of one model call.
    pub max_wait: Duration,
    /// The first backoff; it doubles with each retry, up to `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Time allowed for one HTTP request, response body included.
    pub request_timeout: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_retries: 6,
            max_wait: Duration::from_secs(300),
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            request_timeout: Duration::from_secs(600),
        }
    }
}

impl Serialize for RetrySettings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("max_retries", &self.max_retries)?;
        m.serialize_entry("max_wait_seconds", &self.max_wait.as_secs_f64())?;
        m.serialize_entry(
            "initial_backoff_seconds",
            &self.initial_backoff.as_secs_f64(),
        )?;
        m.serialize_entry("max_backoff_seconds", &self.max_backoff.as_secs_f64())?;
        m.serialize_entry(
            "request_timeout_seconds",
            &self.request_timeout.as_secs_f64(),
        )?;
        m.end()
    }
}

/// US dollars per million tokens of one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_mtok: f64,
    /// Input read from the prompt cache; the input price when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
    /// Input written to the prompt cache (Anthropic); the input price when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_per_mtok: Option<f64>,
    pub output_per_mtok: f64,
}

/// Everything that defines an `llm` agent except its API key, which is read from the
/// environment when the agent is made and never written anywhere. Serialised into `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmDefinition {
    pub kind: &'static str,
    pub model: ModelRef,
    /// The provider's base URL; `<PROVIDER>_BASE_URL` or the provider's own when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key; `<PROVIDER>_API_KEY` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    pub sampling: Sampling,
    pub limits: LlmLimits,
    pub retry: RetrySettings,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// Fields merged into every request body as they are (e.g. `reasoning_effort`,
    /// `parallel_tool_calls`, a server's own options).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra_body: serde_json::Map<String, Value>,
    /// The confined `shell_run` tool (`shell = false` turns it off).
    pub shell: ShellSettings,
    /// What the model takes besides text (`modalities = ["text", "image"]` by default).
    pub modalities: Modalities,
}

/// What a model takes as input besides text: pictures, sound. A tool result's media the model
/// does not take are left out of the request, and the trajectory notes each time that
/// happens; the model still gets the text description of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modalities {
    pub image: bool,
    pub audio: bool,
}

impl Default for Modalities {
    /// Text and images: what current tool-calling models take. Audio must be declared.
    fn default() -> Modalities {
        Modalities {
            image: true,
            audio: false,
        }
    }
}

impl Modalities {
    /// The names accepted in `modalities = [...]`.
    pub const NAMES: &'static [&'static str] = &["text", "image", "audio"];

    /// As the agents file writes it: `["text", "image"]`.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v = vec!["text"];
        if self.image {
            v.push("image");
        }
        if self.audio {
            v.push("audio");
        }
        v
    }

    /// Whether the model takes media of `kind`.
    pub fn takes(&self, kind: bureau_core::tool::MediaKind) -> bool {
        match kind {
            bureau_core::tool::MediaKind::Image => self.image,
            bureau_core::tool::MediaKind::Audio => self.audio,
        }
    }
}

impl Serialize for Modalities {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.names().serialize(s)
    }
}

impl LlmDefinition {
    /// An agent for `model` with every default: no sampling parameters, no budgets, the
    /// default retry settings, no price.
    pub fn for_model(model: ModelRef) -> LlmDefinition {
        LlmDefinition {
            kind: "llm",
            model,
            base_url: None,
            api_key_env: None,
            sampling: Sampling::default(),
            limits: LlmLimits::default(),
            retry: RetrySettings::default(),
            price: None,
            extra_body: serde_json::Map::new(),
            shell: ShellSettings::default(),
            modalities: Modalities::default(),
        }
    }
}

/// One named agent of an agents file.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentDef {
    Llm(LlmDefinition),
    /// A third-party harness (`harness = "claude-code"`, ...), run by `bureau-harness`.
    Harness(crate::harness::HarnessDef),
}

/// A loaded `agents.toml`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AgentsFile {
    pub path: PathBuf,
    /// Named agents, by name.
    pub agents: BTreeMap<String, AgentDef>,
    /// Prices by model (`provider:model`).
    pub prices: BTreeMap<String, Price>,
}

/// Agent kinds an agents file can declare.
pub const FILE_AGENT_KINDS: &[&str] = &["llm", "harness"];

/// Names an agents file cannot give an agent: they are built-in specs.
pub(super) const RESERVED_NAMES: &[&str] = &["oracle", "null", "llm"];

mod load;
mod raw;
#[cfg(test)]
mod tests;
