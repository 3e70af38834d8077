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
const RESERVED_NAMES: &[&str] = &["oracle", "null", "llm"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    agents: BTreeMap<String, Spanned<RawAgent>>,
    #[serde(default)]
    prices: BTreeMap<String, Spanned<Price>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    /// `llm`, or `harness` (implied by `harness = ...`).
    kind: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    base_url: Option<Spanned<String>>,
    api_key_env: Option<Spanned<String>>,
    temperature: Option<Spanned<f64>>,
    top_p: Option<Spanned<f64>>,
    max_output_tokens: Option<Spanned<u32>>,
    seed: Option<i64>,
    limits: Option<Spanned<RawLimits>>,
    retry: Option<Spanned<RawRetry>>,
    extra_body: Option<toml::Table>,
    shell: Option<Spanned<RawShell>>,
    // Harness agents (see `harness_agent`).
    harness: Option<Spanned<String>>,
    command: Option<Spanned<Vec<String>>>,
    format: Option<Spanned<String>>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
}

/// `shell = false`, `shell = true`, or a `[agents.<name>.shell]` table.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawShell {
    On(bool),
    Settings(RawShellSettings),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShellSettings {
    enabled: Option<bool>,
    wall_seconds: Option<u64>,
    cpu_seconds: Option<u64>,
    memory_mb: Option<u64>,
    /// Per file (`RLIMIT_FSIZE`); `file_mb` is the older name, still accepted.
    #[serde(alias = "file_mb")]
    max_file_mb: Option<u64>,
    max_processes: Option<u64>,
    output_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    max_input_tokens: Option<u64>,
    max_output_tokens: Option<u64>,
    max_cost_usd: Option<Spanned<f64>>,
    /// Harness agents only: wall-clock seconds per turn.
    wall_seconds: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetry {
    max_retries: Option<u32>,
    max_wait_seconds: Option<Spanned<f64>>,
    initial_backoff_seconds: Option<Spanned<f64>>,
    max_backoff_seconds: Option<Spanned<f64>>,
    request_timeout_seconds: Option<Spanned<f64>>,
}

struct Loader<'a> {
    path: &'a Path,
    source: &'a str,
    errors: Vec<TaskError>,
}

impl Loader<'_> {
    fn err(
        &mut self,
        span: std::ops::Range<usize>,
        what: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.errors.push(TaskError::new(
            Location::from_offset(self.path, self.source, span.start),
            what,
            hint,
        ));
    }

    /// A duration in seconds that must be positive and finite.
    fn seconds(&mut self, v: Option<Spanned<f64>>, key: &str, default: Duration) -> Duration {
        let Some(v) = v else { return default };
        let s = *v.get_ref();
        if !(s.is_finite() && s > 0.0 && s < 1e9) {
            self.err(
                v.span(),
                format!("`{key}` is {s}"),
                "give a positive number of seconds",
            );
            return default;
        }
        Duration::from_secs_f64(s)
    }
}

impl AgentsFile {
    /// Read and validate an agents file. Every problem is reported, located.
    pub fn load(path: &Path) -> Result<AgentsFile, TaskErrors> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            TaskErrors::from(TaskError::new(
                Location::file(path),
                format!("cannot read the agents file: {e}"),
                "check the path given to --agents-file",
            ))
        })?;
        AgentsFile::parse(path, &source)
    }

    /// Validate the text of an agents file; `path` is used in error locations.
    pub fn parse(path: &Path, source: &str) -> Result<AgentsFile, TaskErrors> {
        let mut l = Loader {
            path,
            source,
            errors: Vec::new(),
        };
        let raw: RawFile = match toml::from_str(source) {
            Ok(r) => r,
            Err(e) => {
                let msg = e.message().trim().to_string();
                let hint = toml_hint(&msg);
                l.err(e.span().unwrap_or(0..0), msg, hint);
                return Err(TaskErrors(l.errors));
            }
        };

        let mut prices = BTreeMap::new();
        for (key, price) in raw.prices {
            let span = price.span();
            let p = price.into_inner();
            if let Err(msg) = ModelRef::parse(&key) {
                l.err(
                    span.clone(),
                    format!("[prices.\"{key}\"]: {msg}"),
                    "key prices by model exactly as agents name it, e.g. [prices.\"openai:gpt-4.1-mini\"]",
                );
            }
            let fields = [
                ("input_per_mtok", Some(p.input_per_mtok)),
                ("cached_input_per_mtok", p.cached_input_per_mtok),
                ("cache_write_per_mtok", p.cache_write_per_mtok),
                ("output_per_mtok", Some(p.output_per_mtok)),
            ];
            for (name, v) in fields {
                if let Some(v) = v
                    && !(v.is_finite() && v >= 0.0)
                {
                    l.err(
                        span.clone(),
                        format!("[prices.\"{key}\"] {name} is {v}"),
                        "prices are US dollars per million tokens, 0 or more",
                    );
                }
            }
            prices.insert(key, p);
        }

        let mut agents = BTreeMap::new();
        for (name, agent) in raw.agents {
            let span = agent.span();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            {
                l.err(
                    span.clone(),
                    format!("agent name `{name}` is empty or has characters other than letters, digits, `-`, `_`, `.`"),
                    "use a short name such as `gpt-mini`; it names directories in run output",
                );
            } else if RESERVED_NAMES.contains(&name.as_str()) || name.starts_with("replay") {
                l.err(
                    span.clone(),
                    format!("agent name `{name}` is a built-in agent spec"),
                    "choose another name, e.g. `my-llm`",
                );
            }
            let agent = agent.into_inner();
            let is_harness = agent.harness.is_some()
                || agent
                    .kind
                    .as_ref()
                    .is_some_and(|k| k.get_ref() == "harness");
            if is_harness {
                if let Some(def) = harness_agent(&mut l, &name, span, agent) {
                    agents.insert(name, AgentDef::Harness(def));
                }
            } else if let Some(def) = llm_agent(&mut l, &name, span, agent, &prices) {
                agents.insert(name, AgentDef::Llm(def));
            }
        }

        if l.errors.is_empty() {
            Ok(AgentsFile {
                path: path.to_path_buf(),
                agents,
                prices,
            })
        } else {
            Err(TaskErrors(l.errors))
        }
    }

    /// The price of `model`, if the file gives one.
    pub fn price(&self, model: &ModelRef) -> Option<&Price> {
        self.prices.get(&model.to_string())
    }
}

fn llm_agent(
    l: &mut Loader<'_>,
    name: &str,
    span: std::ops::Range<usize>,
    raw: RawAgent,
    prices: &BTreeMap<String, Price>,
) -> Option<LlmDefinition> {
    let Some(kind) = &raw.kind else {
        l.err(
            span,
            format!("agent `{name}` has no `kind`"),
            "add kind = \"llm\", or harness = \"claude-code\" (codex, openhands, openclaw, hermes, command) for a third-party harness",
        );
        return None;
    };
    let kind_str = kind.get_ref().as_str();
    if !FILE_AGENT_KINDS.contains(&kind_str) {
        l.err(
            kind.span(),
            format!("agent `{name}` has unknown kind `{kind_str}`"),
            format!("use one of: {}", FILE_AGENT_KINDS.join(", ")),
        );
        return None;
    }
    let harness_keys = [
        ("command", raw.command.as_ref().map(|c| c.span())),
        ("format", raw.format.as_ref().map(|c| c.span())),
        ("args", raw.args.as_ref().map(|_| span.clone())),
        ("env", raw.env.as_ref().map(|_| span.clone())),
    ];
    for (key, at) in harness_keys {
        if let Some(at) = at {
            l.err(
                at,
                format!("agent `{name}` (kind llm) sets `{key}`, a key of harness agents"),
                "remove it, or make the agent a harness with harness = \"command\"",
            );
            return None;
        }
    }
    let model = match &raw.model {
        None => {
            l.err(
                span.clone(),
                format!("agent `{name}` (kind llm) has no `model`"),
                "add model = \"openai:gpt-4.1-mini\" (or anthropic:<model>)",
            );
            None
        }
        Some(m) => match ModelRef::parse(m.get_ref()) {
            Ok(m) => Some(m),
            Err(msg) => {
                l.err(m.span(), msg, "see docs/agents.md for model names");
                None
            }
        },
    };
    let mut ok = model.is_some();

    if let Some(url) = &raw.base_url {
        let u = url.get_ref();
        if !(u.starts_with("http://") || u.starts_with("https://")) {
            l.err(
                url.span(),
                format!("base_url `{u}` is not an http(s) URL"),
                "write e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1",
            );
            ok = false;
        }
    }
    if let Some(env) = &raw.api_key_env {
        let e = env.get_ref();
        if e.starts_with("sk-") {
            // Not echoed: it may be a real key.
            l.err(
                env.span(),
                "api_key_env looks like an API key, not a variable name",
                "put the key in an environment variable and name the variable here; keys never go in files",
            );
            ok = false;
        } else if e.is_empty() || !e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            l.err(
                env.span(),
                format!("api_key_env `{e}` is not an environment variable name"),
                "name the variable that holds the key, e.g. OPENAI_API_KEY (never the key itself)",
            );
            ok = false;
        }
    }
    if let Some(t) = &raw.temperature {
        let v = *t.get_ref();
        if !(0.0..=2.0).contains(&v) {
            l.err(
                t.span(),
                format!("temperature {v} is out of range"),
                "give a value from 0 to 2",
            );
            ok = false;
        }
    }
    if let Some(p) = &raw.top_p {
        let v = *p.get_ref();
        if !(v > 0.0 && v <= 1.0) {
            l.err(
                p.span(),
                format!("top_p {v} is out of range"),
                "give a value above 0, at most 1",
            );
            ok = false;
        }
    }
    if let Some(m) = &raw.max_output_tokens
        && *m.get_ref() == 0
    {
        l.err(
            m.span(),
            "max_output_tokens is 0",
            "give at least 1 (tokens per model call)",
        );
        ok = false;
    }

    let price = model
        .as_ref()
        .and_then(|m| prices.get(&m.to_string()).cloned());
    let mut limits = LlmLimits::default();
    if let Some(raw_limits) = raw.limits {
        let lspan = raw_limits.span();
        let rl = raw_limits.into_inner();
        if let Some(w) = &rl.wall_seconds {
            l.err(
                w.span(),
                "`wall_seconds` is a limit of harness agents",
                "remove it: the task's [limits] wall_seconds bounds an llm agent's turns",
            );
            ok = false;
        }
        limits.max_input_tokens = rl.max_input_tokens;
        limits.max_output_tokens = rl.max_output_tokens;
        if let Some(c) = rl.max_cost_usd {
            let v = *c.get_ref();
            if !(v.is_finite() && v > 0.0) {
                l.err(
                    c.span(),
                    format!("max_cost_usd is {v}"),
                    "give a positive number of US dollars",
                );
                ok = false;
            } else if price.is_none()
                && let Some(m) = &model
            {
                l.err(
                    c.span(),
                    format!("max_cost_usd needs a price for `{m}`, and the file gives none"),
                    format!("add [prices.\"{m}\"] with input_per_mtok and output_per_mtok"),
                );
                ok = false;
            }
            limits.max_cost_usd = Some(v);
        }
        if limits.max_input_tokens == Some(0) || limits.max_output_tokens == Some(0) {
            l.err(
                lspan,
                "a token limit is 0",
                "give at least 1, or leave the limit out",
            );
            ok = false;
        }
    }

    let mut retry = RetrySettings::default();
    if let Some(raw_retry) = raw.retry {
        let rr = raw_retry.into_inner();
        if let Some(n) = rr.max_retries {
            retry.max_retries = n;
        }
        retry.max_wait = l.seconds(rr.max_wait_seconds, "max_wait_seconds", retry.max_wait);
        retry.initial_backoff = l.seconds(
            rr.initial_backoff_seconds,
            "initial_backoff_seconds",
            retry.initial_backoff,
        );
        retry.max_backoff = l.seconds(
            rr.max_backoff_seconds,
            "max_backoff_seconds",
            retry.max_backoff,
        );
        retry.request_timeout = l.seconds(
            rr.request_timeout_seconds,
            "request_timeout_seconds",
            retry.request_timeout,
        );
    }

    let extra_body = match raw.extra_body {
        None => serde_json::Map::new(),
        Some(t) => match serde_json::to_value(&t) {
            Ok(Value::Object(m)) => m,
            _ => {
                l.err(
                    span.clone(),
                    "extra_body cannot be given as JSON",
                    "use a plain TOML table",
                );
                ok = false;
                serde_json::Map::new()
            }
        },
    };
    for key in ["model", "messages", "tools", "system"] {
        if extra_body.contains_key(key) {
            l.err(
                span.clone(),
                format!("extra_body sets `{key}`, which Bureau writes itself"),
                "remove it from extra_body",
            );
            ok = false;
        }
    }

    let mut shell = ShellSettings::default();
    if let Some(raw_shell) = raw.shell {
        let sspan = raw_shell.span();
        match raw_shell.into_inner() {
            RawShell::On(on) => shell.enabled = on,
            RawShell::Settings(rs) => {
                shell.enabled = rs.enabled.unwrap_or(true);
                let fields = [
                    ("wall_seconds", rs.wall_seconds, &mut shell.wall_seconds),
                    ("cpu_seconds", rs.cpu_seconds, &mut shell.cpu_seconds),
                    ("memory_mb", rs.memory_mb, &mut shell.memory_mb),
                    ("max_file_mb", rs.max_file_mb, &mut shell.max_file_mb),
                    ("max_processes", rs.max_processes, &mut shell.max_processes),
                ];
                for (key, v, slot) in fields {
                    match v {
                        Some(0) => {
                            l.err(
                                sspan.clone(),
                                format!("[agents.{name}.shell] {key} is 0"),
                                "give at least 1, or `shell = false` to turn the shell off",
                            );
                            ok = false;
                        }
                        Some(v) => *slot = v,
                        None => {}
                    }
                }
                match rs.output_bytes {
                    Some(0) => {
                        l.err(
                            sspan.clone(),
                            format!("[agents.{name}.shell] output_bytes is 0"),
                            "give at least 1",
                        );
                        ok = false;
                    }
                    Some(v) => shell.output_bytes = v,
                    None => {}
                }
            }
        }
    }

    if !ok {
        return None;
    }
    let mut def = LlmDefinition::for_model(model?);
    def.shell = shell;
    def.base_url = raw.base_url.map(|u| u.into_inner());
    def.api_key_env = raw.api_key_env.map(|e| e.into_inner());
    def.sampling = Sampling {
        temperature: raw.temperature.map(|t| t.into_inner()),
        top_p: raw.top_p.map(|t| t.into_inner()),
        max_output_tokens: raw.max_output_tokens.map(|t| t.into_inner()),
        seed: raw.seed,
    };
    def.limits = limits;
    def.retry = retry;
    def.price = price;
    def.extra_body = extra_body;
    Some(def)
}

/// A harness agent (`harness = "..."`): see [`crate::harness`].
fn harness_agent(
    l: &mut Loader<'_>,
    name: &str,
    span: std::ops::Range<usize>,
    raw: RawAgent,
) -> Option<crate::harness::HarnessDef> {
    use crate::harness::{FORMATS, HARNESSES, HarnessDef};
    let mut ok = true;
    let Some(harness) = &raw.harness else {
        l.err(
            span,
            format!("agent `{name}` (kind harness) has no `harness`"),
            format!("add harness = one of: {}", HARNESSES.join(", ")),
        );
        return None;
    };
    let h = harness.get_ref().as_str();
    if !HARNESSES.contains(&h) {
        l.err(
            harness.span(),
            format!("agent `{name}` has unknown harness `{h}`"),
            format!("use one of: {}", HARNESSES.join(", ")),
        );
        return None;
    }
    let llm_keys = [
        ("base_url", raw.base_url.as_ref().map(|v| v.span())),
        ("api_key_env", raw.api_key_env.as_ref().map(|v| v.span())),
        ("temperature", raw.temperature.as_ref().map(|v| v.span())),
        ("top_p", raw.top_p.as_ref().map(|v| v.span())),
        (
            "max_output_tokens",
            raw.max_output_tokens.as_ref().map(|v| v.span()),
        ),
        ("seed", raw.seed.map(|_| span.clone())),
        ("retry", raw.retry.as_ref().map(|v| v.span())),
        ("extra_body", raw.extra_body.as_ref().map(|_| span.clone())),
        ("shell", raw.shell.as_ref().map(|v| v.span())),
    ];
    for (key, at) in llm_keys {
        if let Some(at) = at {
            l.err(
                at,
                format!("agent `{name}` (harness {h}) sets `{key}`, which only llm agents use"),
                "configure the harness itself (its own config or environment), or pass flags with args = [...]",
            );
            ok = false;
        }
    }
    let mut def = HarnessDef::new(h);
    match (&raw.command, h) {
        (Some(c), "command") => {
            if c.get_ref().is_empty() || c.get_ref()[0].trim().is_empty() {
                l.err(
                    c.span(),
                    "`command` is empty",
                    "give the program and its arguments, e.g. [\"my-agent\", \"--prompt-file\", \"{prompt_file}\"]",
                );
                ok = false;
            }
            def.command = Some(c.get_ref().clone());
        }
        (None, "command") => {
            l.err(
                span.clone(),
                format!("agent `{name}` (harness command) has no `command`"),
                "add command = [\"my-agent\", \"--prompt-file\", \"{prompt_file}\", \"--mcp\", \"{mcp_config}\"]",
            );
            ok = false;
        }
        (Some(c), _) => {
            l.err(
                c.span(),
                format!("agent `{name}` (harness {h}) sets `command`"),
                "use harness = \"command\" for your own command, or args = [...] to add flags to this harness's invocation",
            );
            ok = false;
        }
        (None, _) => {}
    }
    if let Some(f) = &raw.format {
        let v = f.get_ref().as_str();
        if h != "command" {
            l.err(
                f.span(),
                format!("agent `{name}` (harness {h}) sets `format`"),
                "remove it: a named harness is parsed in its own format",
            );
            ok = false;
        } else if !FORMATS.contains(&v) {
            l.err(
                f.span(),
                format!("unknown output format `{v}`"),
                format!("use one of: {}", FORMATS.join(", ")),
            );
            ok = false;
        }
        def.format = Some(v.to_string());
    }
    if let Some(m) = &raw.model {
        if h == "command" {
            l.err(
                m.span(),
                "a `command` harness takes no `model`",
                "put the model in the command itself",
            );
            ok = false;
        }
        def.model = Some(m.get_ref().clone());
    }
    if let Some(args) = raw.args {
        if h == "command" {
            l.err(
                span.clone(),
                "a `command` harness takes no `args`",
                "put the arguments in `command`",
            );
            ok = false;
        }
        def.args = args;
    }
    def.env = raw.env.unwrap_or_default();
    for key in def.env.keys() {
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            l.err(
                span.clone(),
                format!("env name `{key}` is not an environment variable name"),
                "use letters, digits and `_`",
            );
            ok = false;
        }
    }
    if let Some(limits) = raw.limits {
        let lspan = limits.span();
        let rl = limits.into_inner();
        if rl.max_input_tokens.is_some()
            || rl.max_output_tokens.is_some()
            || rl.max_cost_usd.is_some()
        {
            l.err(
                lspan,
                format!("agent `{name}` (harness {h}) sets a token or cost limit"),
                "a harness reports usage only when its turn ends, so Bureau cannot stop it there: give wall_seconds, and the harness's own budget flags with args = [...]",
            );
            ok = false;
        }
        if let Some(w) = rl.wall_seconds {
            if *w.get_ref() == 0 {
                l.err(w.span(), "wall_seconds is 0", "give at least 1 second");
                ok = false;
            }
            def.wall_seconds = Some(*w.get_ref());
        }
    }
    ok.then_some(def)
}

fn toml_hint(msg: &str) -> String {
    if msg.contains("unknown field") {
        "remove the key or fix its spelling (see docs/agents.md)".into()
    } else if msg.contains("missing field") {
        "add the field (see docs/agents.md)".into()
    } else if msg.contains("invalid type") || msg.contains("invalid value") {
        "give the value the type docs/agents.md lists for this key".into()
    } else {
        "fix the TOML syntax here".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Result<AgentsFile, String> {
        AgentsFile::parse(Path::new("agents.toml"), src).map_err(|e| e.to_string())
    }

    const EXAMPLE: &str = r#"
[agents.gpt-mini]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
temperature = 0
max_output_tokens = 4096
seed = 7
[agents.gpt-mini.limits]
max_input_tokens = 2000000
max_output_tokens = 200000
max_cost_usd = 5.0
[agents.gpt-mini.retry]
max_retries = 3
initial_backoff_seconds = 0.25

[agents.claude]
kind = "llm"
model = "anthropic:claude-sonnet-4-5"
extra_body = { metadata = { user_id = "bureau" } }

[prices."openai:gpt-4.1-mini"]
input_per_mtok = 0.4
cached_input_per_mtok = 0.1
output_per_mtok = 1.6
"#;

    #[test]
    fn shell_settings_load_from_a_table_or_a_bool() {
        let base = "[agents.a]\nkind = \"llm\"\nmodel = \"openai:m\"\n";
        let get = |extra: &str| {
            let f = parse(&format!("{base}{extra}")).unwrap();
            let AgentDef::Llm(d) = &f.agents["a"] else {
                panic!("`a` is an llm agent")
            };
            d.shell.clone()
        };
        assert_eq!(get(""), ShellSettings::default());
        assert!(get("").enabled);
        assert!(!get("shell = false\n").enabled);
        let s = get(
            "[agents.a.shell]\nwall_seconds = 5\nmemory_mb = 512\nmax_processes = 16\noutput_bytes = 1000\n",
        );
        assert!(s.enabled);
        assert_eq!(
            (s.wall_seconds, s.memory_mb, s.max_processes, s.output_bytes),
            (5, 512, 16, 1000)
        );
        assert_eq!(s.cpu_seconds, ShellSettings::default().cpu_seconds);
        // The per-file size limit, under its name and its older one.
        assert_eq!(get("[agents.a.shell]\nmax_file_mb = 3\n").max_file_mb, 3);
        assert_eq!(get("[agents.a.shell]\nfile_mb = 4\n").max_file_mb, 4);
        assert!(!get("[agents.a.shell]\nenabled = false\n").enabled);
        let err = parse(&format!("{base}[agents.a.shell]\nwall_seconds = 0\n")).unwrap_err();
        assert!(err.contains("[agents.a.shell] wall_seconds is 0"), "{err}");
        assert!(parse(&format!("{base}[agents.a.shell]\nwal_seconds = 5\n")).is_err());
    }

    #[test]
    fn the_documented_example_loads() {
        let f = parse(EXAMPLE).unwrap();
        let AgentDef::Llm(g) = &f.agents["gpt-mini"] else {
            panic!("gpt-mini is an llm agent")
        };
        assert_eq!(g.model.to_string(), "openai:gpt-4.1-mini");
        assert_eq!(g.sampling.temperature, Some(0.0));
        assert_eq!(g.sampling.max_output_tokens, Some(4096));
        assert_eq!(g.sampling.seed, Some(7));
        assert_eq!(g.limits.max_cost_usd, Some(5.0));
        assert_eq!(g.limits.max_input_tokens, Some(2_000_000));
        assert_eq!(g.retry.max_retries, 3);
        assert_eq!(g.retry.initial_backoff, Duration::from_millis(250));
        assert_eq!(g.retry.max_wait, RetrySettings::default().max_wait);
        assert_eq!(g.price.as_ref().unwrap().cached_input_per_mtok, Some(0.1));
        let AgentDef::Llm(c) = &f.agents["claude"] else {
            panic!("claude is an llm agent")
        };
        assert_eq!(c.model.provider, Provider::Anthropic);
        assert!(c.price.is_none());
        assert_eq!(c.extra_body["metadata"]["user_id"], "bureau");
    }

    #[test]
    fn errors_are_located_and_all_reported() {
        let src = r#"[agents.a]
kind = "llm"
model = "gpt-4"

[agents.b]
kind = "llm"
model = "openai:gpt-4.1"
temperature = 3
[agents.b.limits]
max_cost_usd = 1.0

[agents.c]
kind = "harness"
"#;
        let err = parse(src).unwrap_err();
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 4, "{err}");
        assert!(
            lines[0].starts_with("agents.toml:3:9: model `gpt-4` names no provider"),
            "{err}"
        );
        assert!(lines[0].contains(" — "), "{err}");
        assert!(
            lines[1].starts_with("agents.toml:8:15: temperature 3 is out of range"),
            "{err}"
        );
        assert!(
            lines[2]
                .starts_with("agents.toml:10:16: max_cost_usd needs a price for `openai:gpt-4.1`"),
            "{err}"
        );
        assert!(lines[2].contains("[prices.\"openai:gpt-4.1\"]"), "{err}");
        assert!(
            lines[3].starts_with("agents.toml:12:1: agent `c` (kind harness) has no `harness`"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_and_bad_types_are_toml_errors_with_a_hint() {
        let err = parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\ntemprature = 0\n")
            .unwrap_err();
        assert!(
            err.starts_with("agents.toml:4:1: unknown field `temprature`"),
            "{err}"
        );
        assert!(err.contains("remove the key or fix its spelling"), "{err}");
        let err = parse(
            "[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\nmax_output_tokens = \"many\"\n",
        )
        .unwrap_err();
        assert!(err.starts_with("agents.toml:4:"), "{err}");
        assert!(err.contains("give the value the type"), "{err}");
        let err = parse("[agents.a\n").unwrap_err();
        assert!(err.starts_with("agents.toml:1:"), "{err}");
    }

    #[test]
    fn names_keys_and_urls_are_checked() {
        let err = parse("[agents.oracle]\nkind = \"llm\"\nmodel = \"openai:x\"\n").unwrap_err();
        assert!(
            err.contains("agent name `oracle` is a built-in agent spec"),
            "{err}"
        );
        let err = parse("[agents.\"a b\"]\nkind = \"llm\"\nmodel = \"openai:x\"\n").unwrap_err();
        assert!(err.contains("agent name `a b`"), "{err}");
        let err = parse(
            "[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\napi_key_env = \"sk-abc123\"\n",
        )
        .unwrap_err();
        assert!(err.contains("looks like an API key"), "{err}");
        assert!(!err.contains("abc123"), "{err}");
        let err = parse(
            "[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\nbase_url = \"localhost:8000\"\n",
        )
        .unwrap_err();
        assert!(
            err.starts_with("agents.toml:4:12: base_url `localhost:8000`"),
            "{err}"
        );
        let err = parse("[agents.a]\nkind = \"llm\"\n").unwrap_err();
        assert!(
            err.starts_with("agents.toml:1:1: agent `a` (kind llm) has no `model`"),
            "{err}"
        );
        let err = parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\n[agents.a.retry]\nmax_wait_seconds = -1\n")
            .unwrap_err();
        assert!(
            err.starts_with("agents.toml:5:20: `max_wait_seconds` is -1"),
            "{err}"
        );
        let err =
            parse("[prices.\"gpt\"]\ninput_per_mtok = 1\noutput_per_mtok = -2\n").unwrap_err();
        assert!(err.contains("names no provider"), "{err}");
        assert!(err.contains("output_per_mtok is -2"), "{err}");
    }

    #[test]
    fn harness_agents_load_with_their_command_format_and_limits() {
        let f = parse(
            r#"
[agents.cc]
harness = "claude-code"
model = "claude-sonnet-4-5"
args = ["--max-turns", "40"]
[agents.cc.limits]
wall_seconds = 600

[agents.mine]
harness = "command"
command = ["my-agent", "--prompt-file", "{prompt_file}", "--mcp", "{mcp_config}"]
format = "codex"
env = { MY_AGENT_QUIET = "1" }
"#,
        )
        .unwrap();
        let AgentDef::Harness(cc) = &f.agents["cc"] else {
            panic!("cc is a harness agent")
        };
        assert_eq!(cc.harness, "claude-code");
        assert_eq!(cc.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(cc.args, vec!["--max-turns", "40"]);
        assert_eq!(cc.wall_seconds, Some(600));
        let AgentDef::Harness(mine) = &f.agents["mine"] else {
            panic!("mine is a harness agent")
        };
        assert_eq!(mine.command.as_ref().unwrap()[2], "{prompt_file}");
        assert_eq!(mine.format.as_deref(), Some("codex"));
        assert_eq!(mine.env["MY_AGENT_QUIET"], "1");
        let v = serde_json::to_value(mine).unwrap();
        assert_eq!(v["kind"], "harness");
        assert_eq!(v["harness"], "command");
    }

    #[test]
    fn harness_agents_refuse_keys_they_cannot_use() {
        let err = parse(
            r#"[agents.a]
harness = "codex"
temperature = 0
command = ["x"]
[agents.a.limits]
max_cost_usd = 1.0

[agents.b]
harness = "command"
format = "yaml"

[agents.c]
harness = "aider"

[agents.d]
kind = "llm"
model = "openai:x"
format = "codex"
"#,
        )
        .unwrap_err();
        let lines: Vec<&str> = err.lines().collect();
        assert!(
            lines[0].contains("(harness codex) sets `temperature`"),
            "{err}"
        );
        assert!(lines[1].contains("(harness codex) sets `command`"), "{err}");
        assert!(lines[2].contains("sets a token or cost limit"), "{err}");
        assert!(
            lines[3].contains("(harness command) has no `command`"),
            "{err}"
        );
        assert!(lines[4].contains("unknown output format `yaml`"), "{err}");
        assert!(lines[5].contains("unknown harness `aider`"), "{err}");
        assert!(lines[6].contains("(kind llm) sets `format`"), "{err}");
        assert_eq!(lines.len(), 7, "{err}");
        let err = parse("[agents.a]\nmodel = \"openai:x\"\n").unwrap_err();
        assert!(err.contains("agent `a` has no `kind`"), "{err}");
    }

    #[test]
    fn model_refs_parse_and_print() {
        let m = ModelRef::parse("openai:qwen2.5:7b").unwrap();
        assert_eq!(
            (m.provider, m.model.as_str()),
            (Provider::OpenAi, "qwen2.5:7b")
        );
        assert_eq!(m.to_string(), "openai:qwen2.5:7b");
        assert!(
            ModelRef::parse("gemini:x")
                .unwrap_err()
                .contains("unknown model provider `gemini`")
        );
        assert!(
            ModelRef::parse("openai:")
                .unwrap_err()
                .contains("empty model name")
        );
    }

    #[test]
    fn endpoints_follow_each_providers_base_url_convention() {
        assert_eq!(
            Provider::OpenAi.endpoint("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(
            Provider::Anthropic.endpoint("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            Provider::Anthropic.endpoint("http://proxy/v1"),
            "http://proxy/v1/messages"
        );
    }

    #[test]
    fn definitions_serialise_without_secrets_and_with_their_settings() {
        let f = parse(EXAMPLE).unwrap();
        let AgentDef::Llm(g) = &f.agents["gpt-mini"] else {
            panic!("gpt-mini is an llm agent")
        };
        let v = serde_json::to_value(g).unwrap();
        assert_eq!(v["kind"], "llm");
        assert_eq!(v["model"], "openai:gpt-4.1-mini");
        assert_eq!(v["api_key_env"], "OPENAI_API_KEY");
        assert_eq!(v["retry"]["initial_backoff_seconds"], 0.25);
        assert_eq!(v["price"]["output_per_mtok"], 1.6);
    }
}
