//! OpenHands's `openhands --headless --json --override-with-envs`: one event a line, among the
//! CLI's own plain lines.
//!
//! As OpenHands CLI 1.16.0 prints it (`tests/streams/openhands/`, captured from the real
//! program): each event of the conversation is the model dump of the SDK's event, one JSON
//! object a line, named by `kind`:
//!
//! * `MessageEvent` — `source` `user` (the prompt) or `agent` (assistant text:
//!   `llm_message.content[]` blocks `{"type": "text", "text"}`);
//! * `ActionEvent` — a tool call: `tool_name`, `tool_call_id`, `tool_call.arguments` (the JSON
//!   text the model sent), `action` with its `kind`: `MCPToolAction` (a call of an MCP tool —
//!   Bureau's, the only MCP server OpenHands is given — its arguments in `action.data`),
//!   `FinishAction` (the final answer, `action.message`), or one of OpenHands's own tools
//!   (`TerminalAction`, `FileEditorAction`, `TaskTrackerAction`, `ThinkAction`, ...). `action`
//!   is `null` when OpenHands refused the call before running it (an `AgentErrorEvent` follows);
//! * `ObservationEvent` — the result of the call `tool_call_id`: `observation.content[]` text
//!   blocks and `observation.is_error`;
//! * `AgentErrorEvent` — OpenHands refused or failed the call `tool_call_id` (`error`; e.g. a
//!   missing `security_risk` argument): an error result, so that a call of Bureau's tool that
//!   never reached Bureau is noted with this error;
//! * `ConversationErrorEvent` — the conversation failed (`code`, `detail`; e.g. the model
//!   server answered 400), while the CLI still exits 0: the turn failed.
//!
//! Plain lines: `✓ Agent initialized with model: <model>` (the model), `Conversation ID: <hex>`
//! (the conversation to resume with `--resume <hex>`), `Error: ...` (the CLI's own error),
//! `Headless mode requires existing settings.` (no settings were read: the CLI exits 0 without
//! a model call — the turn failed), and
//! the CLI's decoration (a conversation summary box, greetings, hints) — dropped. The usage
//! is not in the stream: the agent reads the conversation's `base_state.json` after the turn
//! and hands it to [`StreamParser::transcript`]: `stats.usage_to_metrics.<usage id>` (the
//! agent's LLM, its condenser's, ...) with `accumulated_cost`, `accumulated_token_usage`
//! (`prompt_tokens` — cache reads included — `completion_tokens`, `cache_read_tokens`,
//! `cache_write_tokens`) and `token_usages[]` (one per model call): the conversation's running
//! totals, summed over the usage ids. A cost of 0 for tokens used is LiteLLM not knowing the
//! model's price: no cost (the agents file's prices apply).

use serde_json::{Map, Value};

use super::{Event, HarnessUsage, StreamParser, json_line, str_of, u64_of};

/// OpenHands's own tools (1.16.0's CLI tool set, plus the browser's): a call of another name
/// that OpenHands refused before running it is taken as a call of Bureau's MCP tools.
const OWN_TOOLS: &[&str] = &[
    "terminal",
    "file_editor",
    "task_tracker",
    "task",
    "finish",
    "think",
    "delegate",
    "browser",
];

#[derive(Debug, Default)]
pub struct OpenHandsParser {
    /// The CLI's summary box is being printed (dropped until `Goodbye`).
    in_summary: bool,
    session: Option<String>,
    /// Calls whose result is not a tool result (`finish`).
    silent: Vec<String>,
    /// Calls reported, by id (the errors that follow refer to them).
    calls: Vec<String>,
}

/// A plain line of the CLI without its terminal colours.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out.trim().to_string()
}

/// The text blocks of a content list, joined.
fn texts(content: Option<&Value>) -> String {
    content
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

impl OpenHandsParser {
    fn plain_line(&mut self, line: &str) -> Vec<Event> {
        let text = plain(line);
        if text.is_empty() {
            return Vec::new();
        }
        if text.contains("CONVERSATION SUMMARY") {
            self.in_summary = true;
            return Vec::new();
        }
        if text.starts_with("Goodbye") {
            self.in_summary = false;
            return Vec::new();
        }
        if let Some(id) = text.strip_prefix("Conversation ID:") {
            let id = id.trim();
            if !id.is_empty() && self.session.as_deref() != Some(id) {
                self.session = Some(id.to_string());
                return vec![Event::Session(id.to_string())];
            }
            return Vec::new();
        }
        if self.in_summary {
            return Vec::new();
        }
        if let Some(model) = text
            .trim_start_matches('✓')
            .trim()
            .strip_prefix("Agent initialized with model:")
        {
            return vec![Event::Model(model.trim().to_string())];
        }
        // Without `--override-with-envs` (or settings of its own) OpenHands stops here and
        // exits 0 without a model call: not an answer.
        if text.starts_with("Headless mode requires existing settings") {
            return vec![Event::Failed(format!(
                "{text} (OpenHands read no model settings: it needs --override-with-envs with LLM_MODEL and LLM_API_KEY)"
            ))];
        }
        if let Some(e) = text.strip_prefix("Error:") {
            return vec![Event::Error(e.trim().to_string())];
        }
        const CHATTER: &[&str] = &[
            "OpenHands CLI terminal UI may not work",
            "To override Rich's detection",
            "Initializing agent",
            "Agent is working",
            "Agent finished",
            "Hint: run openhands --resume",
            "conversation.",
        ];
        if CHATTER.iter().any(|c| text.starts_with(c)) {
            return Vec::new();
        }
        vec![Event::Unparsed(line.to_string())]
    }

    fn event(&mut self, obj: Map<String, Value>) -> Vec<Event> {
        let v = Value::Object(obj);
        let kind = str_of(&v, "kind").unwrap_or_default();
        let id = str_of(&v, "tool_call_id").unwrap_or_default();
        let tool = str_of(&v, "tool_name").unwrap_or_default();
        match kind.as_str() {
            "MessageEvent" => {
                if str_of(&v, "source").as_deref() != Some("agent") {
                    return Vec::new();
                }
                let text = texts(v.get("llm_message").and_then(|m| m.get("content")));
                if text.trim().is_empty() {
                    Vec::new()
                } else {
                    vec![Event::Message(text)]
                }
            }
            "ActionEvent" => {
                let action = v.get("action").cloned().unwrap_or(Value::Null);
                let action_kind = str_of(&action, "kind").unwrap_or_default();
                let mut out = Vec::new();
                let thought = texts(v.get("thought"));
                if !thought.trim().is_empty() {
                    out.push(Event::Message(thought));
                }
                if action_kind == "FinishAction" {
                    self.silent.push(id);
                    if let Some(m) = str_of(&action, "message") {
                        out.push(Event::Final(m));
                    }
                    return out;
                }
                let arguments = v
                    .get("tool_call")
                    .and_then(|c| c.get("arguments"))
                    .and_then(Value::as_str)
                    .and_then(|a| serde_json::from_str::<Value>(a).ok());
                let (bureau, input) = match action_kind.as_str() {
                    "MCPToolAction" => (true, action.get("data").cloned().unwrap_or(Value::Null)),
                    // Refused before it ran: Bureau's unless it is one of OpenHands's own.
                    "" => (
                        !OWN_TOOLS.contains(&tool.as_str()),
                        arguments.unwrap_or(Value::Null),
                    ),
                    _ => {
                        let mut input = action.as_object().cloned().unwrap_or_default();
                        input.remove("kind");
                        (false, Value::Object(input))
                    }
                };
                self.calls.push(id.clone());
                out.push(Event::ToolCall {
                    id,
                    tool,
                    input,
                    bureau,
                });
                out
            }
            "ObservationEvent" => {
                if self.silent.contains(&id) {
                    return Vec::new();
                }
                let obs = v.get("observation").cloned().unwrap_or(Value::Null);
                vec![Event::ToolResult {
                    id,
                    output: Value::String(texts(obs.get("content"))),
                    is_error: obs.get("is_error").and_then(Value::as_bool) == Some(true),
                }]
            }
            "UserRejectObservation" => vec![Event::ToolResult {
                id,
                output: Value::String(str_of(&v, "rejection_reason").unwrap_or_default()),
                is_error: true,
            }],
            "AgentErrorEvent" => {
                let error = str_of(&v, "error").unwrap_or_default();
                if !id.is_empty() && self.calls.contains(&id) {
                    vec![Event::ToolResult {
                        id,
                        output: Value::String(error),
                        is_error: true,
                    }]
                } else {
                    vec![Event::Error(error)]
                }
            }
            "ConversationErrorEvent" => {
                let detail = str_of(&v, "detail").unwrap_or_default();
                let code = str_of(&v, "code").unwrap_or_default();
                vec![Event::Failed(if code.is_empty() {
                    detail
                } else {
                    format!("{code}: {detail}")
                })]
            }
            _ => Vec::new(),
        }
    }
}

impl StreamParser for OpenHandsParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        if !line.trim_start().starts_with('{') {
            return self.plain_line(line);
        }
        match json_line(line) {
            Ok(obj) => self.event(obj),
            Err(events) => events,
        }
    }

    /// The conversation's `base_state.json`: its usage, a running total.
    fn transcript(&mut self, text: &str) -> Vec<Event> {
        let Ok(state) = serde_json::from_str::<Value>(text) else {
            return vec![Event::Warning(
                "OpenHands's base_state.json is not JSON: its usage is not known".into(),
            )];
        };
        let Some(metrics) = state
            .get("stats")
            .and_then(|s| s.get("usage_to_metrics"))
            .and_then(Value::as_object)
        else {
            return vec![Event::Warning(
                "OpenHands's base_state.json has no stats.usage_to_metrics: its usage is not known"
                    .into(),
            )];
        };
        let mut u = HarnessUsage {
            raw: Value::Object(metrics.clone()),
            ..HarnessUsage::default()
        };
        let mut cost = None;
        let mut calls = 0;
        for m in metrics.values() {
            let t = m.get("accumulated_token_usage").unwrap_or(&Value::Null);
            u.input_tokens += u64_of(t, "prompt_tokens");
            u.cached_input_tokens += u64_of(t, "cache_read_tokens");
            u.cache_write_tokens += u64_of(t, "cache_write_tokens");
            u.output_tokens += u64_of(t, "completion_tokens");
            if let Some(c) = m.get("accumulated_cost").and_then(Value::as_f64) {
                cost = Some(cost.unwrap_or(0.0) + c);
            }
            calls += m
                .get("token_usages")
                .and_then(Value::as_array)
                .map_or(0, Vec::len) as u64;
        }
        // LiteLLM prices a model it does not know at 0: that is no cost, not a free model.
        u.cost_usd = cost.filter(|c| *c > 0.0 || u.input_tokens + u.output_tokens == 0);
        u.model_calls = Some(calls);
        let mut out = Vec::new();
        if let Some(model) = metrics.get("agent").and_then(|m| str_of(m, "model_name")) {
            out.push(Event::Model(model));
        }
        out.push(Event::Usage(u));
        out
    }
}
