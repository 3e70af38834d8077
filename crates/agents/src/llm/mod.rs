//! `llm`: Bureau's own tool-calling agent over a model API.
//!
//! One conversation per trial, over the OpenAI Chat Completions API or the Anthropic
//! Messages API ([`Provider`]): a system prompt naming the task's user, then per turn the
//! wake-up prompt (with the office time) as a new user message, as ClawMark does. The model
//! sees the session's tools ([`ToolSession::tool_specs`]); each tool call it makes goes
//! through the session, and its outcome goes back to the model. The turn ends when the model
//! answers without calling a tool (its text is the turn's final message) or when a limit is
//! reached.
//!
//! What goes into the trajectory: every model call as a `model_call` step
//! ([`bureau_core::trajectory::ModelCall`]: raw request and response JSON, tokens, cost,
//! retries), every tool call as a `tool_call` step (by the session), text the model says
//! alongside tool calls as `message` steps, and every limit as a `limit_reached` step.
//!
//! Robustness: malformed tool calls (arguments that are not JSON, unknown tools, wrong
//! argument types) go back to the model as tool errors; tool outputs over
//! [`MAX_TOOL_OUTPUT_BYTES`] are cut with a note; API failures are retried ([`RetrySettings`])
//! and, once the budget is spent, end the trial as `error` ([`AgentError`]), never `failed`.
//!
//! The API key is read from the environment when the agent is made and only ever sent in a
//! request header: it is not part of the definition, not recorded, and removed from any API
//! text that echoes it.

pub mod colleague;
pub mod config;
pub mod embeddings;
pub mod judge;
pub mod pricing;
pub mod shell;

mod anthropic;
mod openai;
mod retry;

use std::time::Instant;

use bureau_core::task::Task;
use bureau_core::tool::{ToolOutcome, ToolSpec};
use bureau_core::trajectory::{ModelCall, ModelRetry, ModelUsage, Step, StepKind};
use reqwest::blocking::Client;
use serde_json::{Map, Value, json};

pub use colleague::LlmColleagues;
pub use config::{
    AgentDef, AgentsFile, LlmDefinition, LlmLimits, Modalities, ModelRef, Price, Provider,
    RetrySettings, Sampling,
};
pub use embeddings::{EmbeddingsClient, EmbeddingsDefinition};
pub use judge::LlmJudge;
pub use pricing::{Totals, cost_usd};

use crate::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};

/// Tool output longer than this (in bytes of the text sent to the model) is cut, with a note
/// saying so. The trajectory keeps the whole outcome.
pub const MAX_TOOL_OUTPUT_BYTES: usize = 32 * 1024;

/// What a provider module needs to build a request.
pub(crate) struct CallParams<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub tools: &'a [ToolSpec],
    pub sampling: &'a Sampling,
    /// Output tokens allowed for this call (the per-call setting, capped by the budget).
    pub max_output_tokens: Option<u32>,
    pub extra: &'a Map<String, Value>,
}

/// A model's answer, provider-neutral.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub text: Option<String>,
    pub calls: Vec<ToolUse>,
    pub usage: ModelUsage,
    pub stop_reason: Option<String>,
}

/// One tool call of a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolUse {
    /// Missing only from lenient OpenAI-compatible servers; filled in before use.
    pub id: Option<String>,
    pub name: String,
    /// The arguments as the model wrote them.
    pub raw_args: String,
    /// The parsed arguments, or why they are not JSON.
    pub args: Result<Value, String>,
}

/// The answer to one tool call, as it goes back to the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolAnswer {
    pub id: String,
    pub content: String,
    pub is_error: bool,
    /// Pictures and sounds of the result the model takes (see [`Modalities`]).
    pub media: Vec<bureau_core::tool::Media>,
}

/// An API key: shown as `[redacted]` in debug output, never serialised.
pub(crate) struct Secret(pub(crate) String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The base URL and API key of a model definition: the definition's `base_url`, else
/// `<PROVIDER>_BASE_URL`, else the provider's own; the key from `api_key_env`, else
/// `<PROVIDER>_API_KEY`. The key is required unless the model is reached at a base URL of its
/// own (a local server).
pub(crate) fn resolve_endpoint(
    def: &LlmDefinition,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, Option<Secret>), AgentError> {
    let provider = def.model.provider;
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let (base, custom_base) = match (&def.base_url, nonempty(env(provider.base_url_env()))) {
        (Some(b), _) => (b.clone(), true),
        (None, Some(b)) => {
            if !(b.starts_with("http://") || b.starts_with("https://")) {
                return Err(AgentError::Config(format!(
                    "{} is `{b}`, not an http(s) URL — set it to e.g. {}",
                    provider.base_url_env(),
                    provider.default_base_url()
                )));
            }
            (b, true)
        }
        (None, None) => (provider.default_base_url().to_string(), false),
    };
    let key_env = def
        .api_key_env
        .clone()
        .unwrap_or_else(|| provider.key_env().to_string());
    let key = nonempty(env(&key_env)).map(Secret);
    if let Some(k) = &key
        && k.0.len() < retry::MIN_REDACTED_KEY
    {
        // Redacting a one-letter key would rewrite every response; a key this short is a
        // placeholder for a local server, not a secret. Say so once per agent made.
        eprintln!(
            "warning: {key_env} is shorter than {} characters; it is used, but not redacted from recorded responses",
            retry::MIN_REDACTED_KEY
        );
    }
    if key.is_none() && (def.api_key_env.is_some() || !custom_base) {
        return Err(AgentError::Config(format!(
            "{key_env} is not set — export the {provider} API key for `{}` in it (a local server needs no key: give its base_url or {})",
            def.model,
            provider.base_url_env()
        )));
    }
    Ok((base, key))
}

/// The HTTP client of an `llm` agent: one of a few per process (per proxy setting: a server on
/// this machine is never reached through an HTTP proxy), handed out in turn. A blocking
/// reqwest client runs a runtime thread of its own and keeps its own connection pool, so one
/// per agent — the run loop makes an agent per trial — cost a thread and a pool per concurrent
/// trial; shared, the trials of a run reuse a few pools' connections (issue 18).
fn shared_client(loopback: bool) -> Result<Client, AgentError> {
    /// Clients (each its own I/O thread and connection pool) agents are spread over: one
    /// thread serving every request of a thousand concurrent trials answers a burst of
    /// replies one after the other (docs/BENCHMARKS.md, "Concurrent trials").
    static CLIENTS: std::sync::Mutex<[Vec<Client>; 2]> =
        std::sync::Mutex::new([Vec::new(), Vec::new()]);
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let pool = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    let mut clients = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
    let slot = &mut clients[usize::from(loopback)];
    let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % pool;
    if let Some(client) = slot.get(i) {
        return Ok(client.clone());
    }
    let mut builder = Client::builder()
        .timeout(None)
        .connect_timeout(std::time::Duration::from_secs(30))
        .user_agent(concat!("bureau/", env!("CARGO_PKG_VERSION")));
    if loopback {
        builder = builder.no_proxy();
    }
    let client = builder
        .build()
        .map_err(|e| AgentError::Failed(format!("cannot set up the HTTP client: {e}")))?;
    slot.push(client.clone());
    Ok(client)
}

/// The `llm` agent. Made by [`crate::AgentCatalog`] from a spec, or directly with
/// [`LlmAgent::new`].
#[derive(Debug)]
pub struct LlmAgent {
    name: String,
    def: LlmDefinition,
    url: String,
    key: Option<Secret>,
    client: Option<Client>,
    /// Per trial:
    system: String,
    messages: Vec<Value>,
    totals: Totals,
    /// Messages and tools of the last recorded request (what the next record may leave out).
    recorded_messages: usize,
    /// (Their digest: the schemas themselves are large, and a run holds a trial per worker.)
    recorded_tools: Option<blake3::Hash>,
    next_call_id: u64,
    /// The confined shell behind `shell_run`, when enabled and available here.
    shell: Option<bureau_shell::Confinement>,
    /// Why `shell_run` is not offered although enabled.
    shell_unavailable: Option<String>,
    /// The agent's requests-per-minute budget in this process, shared by its trials.
    rate_limit: Option<std::sync::Arc<crate::budget::RateLimit>>,
}

impl LlmAgent {
    /// An agent named `name` defined by `def`; `env` looks up environment variables (the base
    /// URL and API key when `def` names none). Fails when the API key is missing: it is
    /// required unless the agent talks to a base URL of its own (a local server).
    pub fn new(
        name: impl Into<String>,
        def: LlmDefinition,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<LlmAgent, AgentError> {
        let provider = def.model.provider;
        let (base, key) = resolve_endpoint(&def, env)?;
        let (shell, shell_unavailable) = if def.shell.enabled {
            match shell::confinement() {
                Ok(c) => (Some(c), None),
                Err(e) => (None, Some(e.to_string())),
            }
        } else {
            (None, None)
        };
        Ok(LlmAgent {
            shell,
            shell_unavailable,
            rate_limit: None,
            name: name.into(),
            url: provider.endpoint(&base),
            def,
            key,
            client: None,
            system: String::new(),
            messages: Vec::new(),
            totals: Totals::default(),
            recorded_messages: 0,
            recorded_tools: None,
            next_call_id: 0,
        })
    }

    /// What defines the agent (without its key).
    pub fn llm_definition(&self) -> &LlmDefinition {
        &self.def
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.url
    }

    /// Tokens and cost of the current trial so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    fn provider(&self) -> Provider {
        self.def.model.provider
    }

    /// The request for `tools` and the conversation so far: the bytes sent, and what the
    /// trajectory records — without the messages and tools an earlier record of this trial
    /// already holds. Returns (bytes, record, messages left out, tools left out).
    ///
    /// The bytes are serialised straight from the conversation, and the record is made of the
    /// new messages only: no `Value` copy of the whole conversation is made per call, nor kept
    /// while the model answers (issue 18).
    fn request(
        &mut self,
        tools: &[ToolSpec],
        tools_digest: blake3::Hash,
    ) -> (Vec<u8>, Value, u64, bool) {
        let per_call = self
            .def
            .sampling
            .max_output_tokens
            .or(match self.provider() {
                Provider::Anthropic => Some(anthropic::DEFAULT_MAX_TOKENS),
                Provider::OpenAi => None,
            });
        let max_output_tokens = match self.totals.output_left(&self.def.limits) {
            Some(left) => {
                let cap = u32::try_from(left).unwrap_or(u32::MAX).max(1);
                Some(per_call.map_or(cap, |p| p.min(cap)))
            }
            None => per_call,
        };
        let mut params = CallParams {
            model: &self.def.model.model,
            system: &self.system,
            tools,
            sampling: &self.def.sampling,
            max_output_tokens,
            extra: &self.def.extra_body,
        };
        let provider = self.provider();
        let bytes = match provider {
            Provider::OpenAi => openai::request_bytes(&params, &self.messages),
            Provider::Anthropic => anthropic::request_bytes(&params, &self.messages),
        };
        let total = self.messages.len();
        let elided = self.recorded_messages.min(total);
        let tools_elided = !tools.is_empty() && self.recorded_tools == Some(tools_digest);
        if tools_elided {
            params.tools = &[];
        }
        let new = &self.messages[elided..];
        let mut record = match provider {
            Provider::OpenAi => openai::request(&params, new),
            Provider::Anthropic => anthropic::request(&params, new),
        };
        scrub_media(&mut record);
        self.recorded_messages = total;
        if !tools.is_empty() {
            self.recorded_tools = Some(tools_digest);
        }
        (bytes, record, elided as u64, tools_elided)
    }

    /// Make one model call (with retries) and record it. `Ok(None)`: the turn's time ran out.
    fn call_model(
        &mut self,
        tools: &ToolSession,
        specs: &[ToolSpec],
        tools_digest: blake3::Hash,
        deadline: Instant,
    ) -> Result<Option<(Reply, Value)>, AgentError> {
        let client = self
            .client
            .clone()
            .ok_or_else(|| AgentError::Failed("llm: run_turn before start_trial".into()))?;
        let (body, request, messages_elided, tools_elided) = self.request(specs, tools_digest);
        let key = self.key.as_ref().map(|k| k.0.as_str());
        let headers = match self.provider() {
            Provider::OpenAi => openai::headers(key),
            Provider::Anthropic => anthropic::headers(key),
        };
        let req = retry::Request {
            url: &self.url,
            headers: &headers,
            body: &body,
            secret: key,
        };
        let mut retries: Vec<ModelRetry> = Vec::new();
        let provider = self.provider();
        // The agent's requests-per-minute budget (`--rpm`): wait for a slot, unless it comes
        // after the turn's time.
        let budget_wait = match &self.rate_limit {
            Some(limit) => match bureau_core::cpu::waiting(|| limit.acquire(deadline)) {
                Ok(w) => Some(w.as_millis().try_into().unwrap_or(u64::MAX)),
                Err(()) => return Ok(None),
            },
            None => None,
        };
        let started = std::time::Instant::now();
        let outcome = retry::call(
            &client,
            &req,
            &self.def.retry,
            deadline,
            &mut retries,
            |body| match provider {
                Provider::OpenAi => openai::parse(body).map(|r| (r, Value::Null)),
                Provider::Anthropic => {
                    anthropic::parse(body).map(|(r, content)| (r, Value::Array(content)))
                }
            },
        );
        let mut record = ModelCall {
            provider: provider.as_str().to_string(),
            model: self.def.model.model.clone(),
            request,
            messages_elided,
            tools_elided,
            response: Value::Null,
            usage: ModelUsage::default(),
            retries,
            error: None,
            wall_ms: Some(started.elapsed().as_millis().try_into().unwrap_or(u64::MAX)),
            budget_wait_ms: budget_wait.filter(|&w| w > 0),
        };
        match outcome {
            Ok(answer) => {
                let (mut reply, content) = answer.parsed;
                for call in &mut reply.calls {
                    if call.id.is_none() {
                        self.next_call_id += 1;
                        call.id = Some(format!("call_bureau_{}", self.next_call_id));
                    }
                }
                reply.usage.cost_usd = self.def.price.as_ref().map(|p| cost_usd(&reply.usage, p));
                self.totals.add(&reply.usage);
                record.response = answer.body;
                record.usage = reply.usage.clone();
                tools.record(StepKind::ModelCall(record));
                Ok(Some((reply, content)))
            }
            Err(retry::CallError::OutOfTime) => {
                record.error =
                    Some("the turn's wall time ran out before the model answered".into());
                tools.record(StepKind::ModelCall(record));
                Ok(None)
            }
            Err(retry::CallError::Fatal(m) | retry::CallError::Exhausted(m)) => {
                let message = format!("model API {} ({}): {m}", self.def.model, self.url);
                record.error = Some(message.clone());
                tools.record(StepKind::ModelCall(record));
                Err(AgentError::Failed(message))
            }
        }
    }
}

impl Agent for LlmAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn set_rate_limit(&mut self, limit: std::sync::Arc<crate::budget::RateLimit>) -> bool {
        self.rate_limit = Some(limit);
        true
    }

    /// The model and its endpoint: the key was found when the agent was made (else making
    /// it failed, naming the variable); the endpoint must accept a connection.
    fn diagnose(&self) -> Vec<crate::doctor::Check> {
        vec![
            crate::doctor::Check::ok(
                "model",
                format!(
                    "{} (key and settings read when the agent was made)",
                    self.def.model
                ),
            ),
            crate::doctor::endpoint(&self.url, "the model API"),
        ]
    }

    fn definition(&self) -> Option<Value> {
        let mut v = serde_json::to_value(&self.def).ok()?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("endpoint".into(), Value::String(strip_userinfo(&self.url)));
            // Whether `shell_run` is offered, and how it is confined or why it is not.
            let status = match (&self.shell, &self.shell_unavailable) {
                (Some(c), _) => serde_json::json!({"offered": true, "confinement": c.describe()}),
                (None, Some(why)) => serde_json::json!({"offered": false, "unavailable": why}),
                (None, None) => serde_json::json!({"offered": false, "reason": "shell = false"}),
            };
            obj.insert("shell_status".into(), status);
        }
        Some(v)
    }

    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        if self.client.is_none() {
            self.client = Some(shared_client(is_loopback(&self.url))?);
        }
        self.system = system_prompt(task);
        self.messages = match self.provider() {
            Provider::OpenAi => openai::start(&self.system),
            Provider::Anthropic => anthropic::start(),
        };
        self.totals = Totals::default();
        self.recorded_messages = 0;
        self.recorded_tools = None;
        self.next_call_id = 0;
        Ok(())
    }

    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        // Building requests, reading answers and running tool calls is the trial's CPU work:
        // it holds a permit of the run's CPU gate, given up while the model answers
        // (`retry::call`) and while a shell command runs.
        bureau_core::cpu::busy(|| self.turn(turn, tools))
    }
}

impl LlmAgent {
    fn turn(&mut self, turn: &TurnInput, tools: &ToolSession) -> Result<TurnOutput, AgentError> {
        let deadline = Instant::now() + tools.time_left();
        let mut specs = tools.tool_specs();
        if self.shell.is_some() {
            specs.push(shell::spec(&self.def.shell));
        }
        // Whether the tools changed since the last recorded request (then they are recorded
        // again): their digest, once per turn.
        let tools_digest = blake3::hash(&serde_json::to_vec(&specs).unwrap_or_default());
        // A feedback round continues the turn: the user's reply is the new user message.
        let tz = tools
            .world()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .timezone();
        let text = turn.text(tz);
        self.messages.push(match self.provider() {
            Provider::OpenAi => openai::user(&text),
            Provider::Anthropic => anthropic::user(&text),
        });

        loop {
            if let Some(signal) = bureau_core::interrupt::requested() {
                return Err(AgentError::Failed(format!(
                    "interrupted: Bureau was asked to stop ({})",
                    bureau_core::interrupt::name(signal)
                )));
            }
            if tools.limit_reached().is_some() {
                return Ok(TurnOutput::default());
            }
            if let Some((limit, detail)) = self.totals.exhausted(&self.def.limits) {
                tools.stop(limit, detail);
                return Ok(TurnOutput::default());
            }
            if Instant::now() >= deadline {
                tools.stop(
                    "wall_seconds",
                    format!(
                        "{} s per turn allowed; the model was not called again",
                        tools.limits().wall.as_secs()
                    ),
                );
                return Ok(TurnOutput::default());
            }
            let Some((reply, content)) = self.call_model(tools, &specs, tools_digest, deadline)?
            else {
                tools.stop(
                    "wall_seconds",
                    format!(
                        "{} s per turn allowed; the model had not answered by then",
                        tools.limits().wall.as_secs()
                    ),
                );
                return Ok(TurnOutput::default());
            };
            match (self.provider(), content) {
                (Provider::OpenAi, _) => self.messages.push(openai::assistant(&reply)),
                // The API refuses an empty assistant message; without one, the next user
                // message simply follows (consecutive user messages are combined).
                (Provider::Anthropic, Value::Array(blocks)) if !blocks.is_empty() => {
                    self.messages.push(anthropic::assistant(blocks))
                }
                (Provider::Anthropic, _) => {}
            }
            if reply.calls.is_empty() {
                return Ok(TurnOutput {
                    final_message: reply.text,
                });
            }
            if let Some(text) = &reply.text {
                tools.say(text.clone());
            }

            // A budget this call used up ends the turn before its tool calls run.
            let mut stopped = self
                .totals
                .exhausted(&self.def.limits)
                .map(|(limit, detail)| tools.stop(limit, detail));
            let mut answers = Vec::with_capacity(reply.calls.len());
            for call in &reply.calls {
                let id = call.id.clone().unwrap_or_default();
                let outcome = match &stopped {
                    Some(_) => None,
                    None => {
                        let done = match (&call.args, &self.shell) {
                            (Ok(args), Some(confined)) if call.name == shell::SHELL_TOOL => tools
                                .call_with_workspace(&call.name, args.clone(), |args, ws| {
                                    shell::run(
                                        confined,
                                        &self.def.shell,
                                        args,
                                        ws.path,
                                        ws.entry,
                                        tools.time_left(),
                                    )
                                }),
                            (Ok(args), _) => tools.call(&call.name, args.clone()),
                            (Err(why), _) => tools.reject(
                                &call.name,
                                Value::String(call.raw_args.clone()),
                                format!(
                                    "{why} — send the arguments of `{}` as one JSON object that matches its schema",
                                    call.name
                                ),
                            ),
                        };
                        match done {
                            Ok(outcome) => Some(outcome),
                            Err(limit) => {
                                stopped = Some(limit);
                                None
                            }
                        }
                    }
                };
                answers.push(match (outcome, &stopped) {
                    (Some(outcome), _) => {
                        let (a, withheld) =
                            answer(id, &outcome, self.def.modalities, self.provider());
                        if !withheld.is_empty() {
                            tools.note(json!({
                                "media_not_sent": {
                                    "tool_call": a.id,
                                    "tool": call.name,
                                    "media": withheld,
                                    "modalities": self.def.modalities.names(),
                                }
                            }));
                        }
                        a
                    }
                    (None, limit) => ToolAnswer {
                        id,
                        content: match limit {
                            Some(l) => format!("error: not run — {l}; the turn is over"),
                            None => "error: not run".into(),
                        },
                        is_error: true,
                        media: Vec::new(),
                    },
                });
            }
            self.messages.extend(match self.provider() {
                Provider::OpenAi => openai::tool_results(&answers),
                Provider::Anthropic => anthropic::tool_results(&answers),
            });
            if stopped.is_some() {
                return Ok(TurnOutput::default());
            }
        }
    }
}

/// The tool answer the model sees for `outcome`: the value as JSON text, or `error: <message>`,
/// cut to [`MAX_TOOL_OUTPUT_BYTES`] with a note; and the media the model takes. Media it does
/// not take (by its `modalities`, or because its API has no such input) are left out with a
/// line saying so; their labels are returned for the trajectory.
fn answer(
    id: String,
    outcome: &ToolOutcome,
    modalities: Modalities,
    provider: Provider,
) -> (ToolAnswer, Vec<String>) {
    let (content, is_error) = match outcome {
        ToolOutcome::Ok { value, .. } => (value.to_string(), false),
        ToolOutcome::Error { message } => (format!("error: {message}"), true),
    };
    let mut content = truncate(content, MAX_TOOL_OUTPUT_BYTES);
    let mut media = Vec::new();
    let mut withheld = Vec::new();
    for m in outcome.media() {
        let why = if !modalities.takes(m.kind) {
            Some(format!(
                "this model is configured without {} input (modalities = {:?})",
                m.kind.name(),
                modalities.names()
            ))
        } else {
            match provider {
                Provider::OpenAi => openai::unsupported(m),
                Provider::Anthropic => anthropic::unsupported(m),
            }
        };
        match why {
            None => media.push(m.clone()),
            Some(why) => {
                content.push_str(&format!(
                    "\n[{} not shown: {why}; the description above is what there is]",
                    m.label
                ));
                withheld.push(format!("{} ({}): {why}", m.label, m.mime_type));
            }
        }
    }
    (
        ToolAnswer {
            id,
            content,
            is_error,
            media,
        },
        withheld,
    )
}

/// Replace the base64 bytes of every picture and sound in a request body with
/// `bureau-blob:<blake3>`, the name of the bytes in the trial's `world/blobs/`: trajectories
/// record requests, and a picture's bytes are kept once, there.
pub(crate) fn scrub_media(v: &mut Value) {
    fn blob(data: &str) -> Option<String> {
        let bytes =
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, data).ok()?;
        Some(format!("bureau-blob:{}", blake3::hash(&bytes).to_hex()))
    }
    match v {
        Value::Object(o) => {
            // OpenAI: {"type": "image_url", "image_url": {"url": "data:<mime>;base64,<data>"}}
            if let Some(Value::String(url)) = o.get_mut("url")
                && let Some(rest) = url.strip_prefix("data:")
                && let Some((_, data)) = rest.split_once(";base64,")
                && let Some(b) = blob(data)
            {
                *url = b;
            }
            // Anthropic: {"type": "base64", "media_type": ..., "data": ...}; OpenAI audio:
            // {"input_audio": {"data": ..., "format": ...}}.
            let is_source =
                o.get("type").and_then(Value::as_str) == Some("base64") || o.contains_key("format");
            if is_source
                && let Some(Value::String(data)) = o.get_mut("data")
                && let Some(b) = blob(data)
            {
                *data = b;
            }
            for x in o.values_mut() {
                scrub_media(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(scrub_media),
        _ => {}
    }
}

/// `text` cut to at most `max` bytes (at a character boundary) plus a note, if longer.
pub fn truncate(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n[output truncated: it was {} bytes, only the first {cut} are shown — ask for less, e.g. a narrower path, a search, or a smaller limit]",
        &text[..cut],
        text.len()
    )
}

/// The system prompt of a trial: who the agent works as, and how turns work.
pub fn system_prompt(task: &Task) -> String {
    let u = &task.user;
    format!(
        "You are an AI assistant working as {name} <{email}> at the office, in {name}'s name. \
You act only through the tools you are given: {name}'s workspace files, mailbox and calendar. \
Mail you send goes out from {name}. The office's time zone is {tz}.\n\n\
Each message from {name} starts a new piece of work, possibly on a later day; the office may \
have changed in between (new mail, new or changed files, moved meetings), so look before you \
act. Work until the request is done, then reply with a short summary of what you did, without \
calling a tool.",
        name = u.name,
        email = u.email,
        tz = task.timezone,
    )
}

/// Whether `url` names this machine (`localhost`, `127.0.0.0/8`, `[::1]`).
fn is_loopback(url: &str) -> bool {
    let host = strip_userinfo(url);
    let host = host
        .split_once("://")
        .map_or(host.as_str(), |(_, rest)| rest);
    let host = host.split('/').next().unwrap_or("");
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A URL without `user:password@`.
fn strip_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// The full request bodies of the model calls in `steps` (one trial attempt's trajectory),
/// rebuilt from their records: each record's `messages` after those of the earlier records,
/// and the last recorded `tools` where a record left them out.
pub fn full_requests(steps: &[Step]) -> Vec<Value> {
    let mut messages: Vec<Value> = Vec::new();
    let mut tools: Option<Value> = None;
    let mut out = Vec::new();
    for call in steps.iter().filter_map(Step::as_model_call) {
        let mut body = call.request.clone();
        if let Some(obj) = body.as_object_mut() {
            let own = match obj.remove("messages") {
                Some(Value::Array(m)) => m,
                _ => Vec::new(),
            };
            messages.truncate(call.messages_elided as usize);
            messages.extend(own);
            obj.insert("messages".into(), Value::Array(messages.clone()));
            if call.tools_elided {
                if let Some(t) = &tools {
                    obj.insert("tools".into(), t.clone());
                }
            } else if let Some(t) = obj.get("tools") {
                tools = Some(t.clone());
            }
        }
        out.push(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_outputs_are_cut_at_a_character_boundary_with_a_note() {
        assert_eq!(truncate("short".into(), 10), "short");
        let cut = truncate("ééééé".into(), 5); // 10 bytes; byte 5 is inside an é
        assert!(
            cut.starts_with("éé\n[output truncated: it was 10 bytes, only the first 4"),
            "{cut}"
        );
        let (big, _) = answer(
            "c".into(),
            &ToolOutcome::ok(Value::String("x".repeat(100_000))),
            Modalities::default(),
            Provider::OpenAi,
        );
        assert!(big.content.len() < MAX_TOOL_OUTPUT_BYTES + 300);
        assert!(
            big.content
                .contains("[output truncated: it was 100002 bytes")
        );
        let (err, _) = answer(
            "c".into(),
            &ToolOutcome::Error {
                message: "no such file".into(),
            },
            Modalities::default(),
            Provider::Anthropic,
        );
        assert_eq!(
            (err.content.as_str(), err.is_error),
            ("error: no such file", true)
        );
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for url in [
            "http://127.0.0.1:8000/v1/chat/completions",
            "http://localhost/v1",
            "http://[::1]:8080/v1",
            "http://127.1.2.3",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "http://10.0.0.1:8000/v1",
            "http://localhost.evil/v1",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn userinfo_is_stripped_from_recorded_urls() {
        assert_eq!(
            strip_userinfo("https://u:p@proxy.test/v1/chat/completions"),
            "https://proxy.test/v1/chat/completions"
        );
        assert_eq!(
            strip_userinfo("http://127.0.0.1:8/v1"),
            "http://127.0.0.1:8/v1"
        );
    }

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn keys_and_base_urls_come_from_the_definition_or_the_environment() {
        let def = |m: &str| LlmDefinition::for_model(ModelRef::parse(m).unwrap());
        let a = LlmAgent::new(
            "a",
            def("openai:gpt-x"),
            &env(&[("OPENAI_API_KEY", "sk-1")]),
        )
        .unwrap();
        assert_eq!(a.endpoint(), "https://api.openai.com/v1/chat/completions");
        assert!(!format!("{a:?}").contains("sk-1"));
        let err = LlmAgent::new("a", def("openai:gpt-x"), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("OPENAI_API_KEY is not set — "), "{err}");
        // A local server needs no key.
        let local = LlmAgent::new(
            "a",
            def("openai:qwen"),
            &env(&[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")]),
        )
        .unwrap();
        assert_eq!(
            local.endpoint(),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        let c = LlmAgent::new(
            "c",
            def("anthropic:claude-x"),
            &env(&[
                ("ANTHROPIC_API_KEY", "k"),
                ("ANTHROPIC_BASE_URL", "http://h:1"),
            ]),
        )
        .unwrap();
        assert_eq!(c.endpoint(), "http://h:1/v1/messages");
        // A key variable named by the definition must be set, even for a local server.
        let mut d = def("openai:qwen");
        d.base_url = Some("http://127.0.0.1:1/v1".into());
        d.api_key_env = Some("MY_KEY".into());
        let err = LlmAgent::new("a", d, &env(&[])).unwrap_err().to_string();
        assert!(err.starts_with("MY_KEY is not set"), "{err}");
        let err = LlmAgent::new(
            "a",
            def("openai:x"),
            &env(&[("OPENAI_BASE_URL", "localhost")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not an http(s) URL"), "{err}");
    }

    #[test]
    fn definitions_name_the_endpoint_but_never_the_key() {
        let a = LlmAgent::new(
            "a",
            LlmDefinition::for_model(ModelRef::parse("openai:gpt-x").unwrap()),
            &env(&[("OPENAI_API_KEY", "sk-secret")]),
        )
        .unwrap();
        let d = a.llm_definition().clone();
        let v = Agent::definition(&a).unwrap();
        assert_eq!(v["endpoint"], "https://api.openai.com/v1/chat/completions");
        assert_eq!(v["model"], d.model.to_string());
        assert!(!v.to_string().contains("sk-secret"));
    }
}
