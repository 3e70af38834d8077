//! Parsers of harness output streams: each turns its harness's native output, line by line,
//! into [`Event`]s that the agent records in Bureau's trajectory.

mod claude;
mod codex;
mod hermes;
mod openclaw;
mod openhands;
mod text;

use serde::Serialize;
use serde_json::Value;

pub use claude::ClaudeCodeParser;
pub use codex::CodexParser;
pub use hermes::HermesParser;
pub use openclaw::OpenClawParser;
pub use openhands::OpenHandsParser;
pub use text::TextParser;

/// How a harness's output is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `claude -p --output-format stream-json --verbose`: one JSON message per line.
    ClaudeCode,
    /// `codex exec --json`: one thread event per line.
    Codex,
    /// `openhands --headless --json`: one event per line, plus the conversation's
    /// `base_state.json` (its usage).
    OpenHands,
    /// `openclaw agent --local --json`: one JSON envelope, plus the session transcript file
    /// it names.
    OpenClaw,
    /// `hermes chat --query ... --quiet`: the final response as plain text, the session on
    /// stderr, plus the session's rows of its SQLite store (tool calls, usage).
    Hermes,
    /// Plain text: stdout is the final message.
    Text,
}

impl Format {
    /// The format of a `format = ...` value (one of `bureau_agents::harness::FORMATS`).
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "claude-code" => Format::ClaudeCode,
            "codex" => Format::Codex,
            "openhands" => Format::OpenHands,
            "openclaw" => Format::OpenClaw,
            "hermes" => Format::Hermes,
            "text" => Format::Text,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::OpenHands => "openhands",
            Format::OpenClaw => "openclaw",
            Format::Hermes => "hermes",
            Format::Text => "text",
        }
    }

    /// A fresh parser for one turn's output.
    pub fn parser(&self) -> Box<dyn StreamParser> {
        match self {
            Format::ClaudeCode => Box::new(ClaudeCodeParser::default()),
            Format::Codex => Box::new(CodexParser::default()),
            Format::OpenHands => Box::new(OpenHandsParser::default()),
            Format::OpenClaw => Box::new(OpenClawParser::default()),
            Format::Hermes => Box::new(HermesParser::default()),
            Format::Text => Box::new(TextParser::plain()),
        }
    }
}

/// Tokens and cost a harness reported for one turn (its own totals for the run).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HarnessUsage {
    /// Every input token, cached ones included.
    pub input_tokens: u64,
    /// Input tokens read from the prompt cache (a part of `input_tokens`).
    pub cached_input_tokens: u64,
    /// Input tokens written to the prompt cache (a part of `input_tokens`).
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, when the harness reports a cost.
    pub cost_usd: Option<f64>,
    /// Model calls the harness made, when it says.
    pub model_calls: Option<u64>,
    /// The harness's own usage record, as it wrote it.
    pub raw: Value,
}

/// Something a harness did, read from its output.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The harness's session (thread, conversation) id, to resume it next turn.
    Session(String),
    /// The model the harness says it uses.
    Model(String),
    /// Text the assistant said.
    Message(String),
    /// A tool call. `bureau` is true for calls of Bureau's own MCP server, which the tool
    /// session already recorded as `tool_call` steps.
    ToolCall {
        id: String,
        tool: String,
        input: Value,
        bureau: bool,
    },
    /// The result of the tool call `id`.
    ToolResult {
        id: String,
        output: Value,
        is_error: bool,
    },
    /// The turn's usage (the last one reported wins).
    Usage(HarnessUsage),
    /// The turn's final answer, as the harness marks it.
    Final(String),
    /// The harness reported an error (recorded; the turn may still go on).
    Error(String),
    /// The harness marked the turn itself as failed (Claude Code's `result` with `is_error`,
    /// whatever its `subtype`; Codex's `turn.failed`): the turn did not complete, so the
    /// attempt is an `error`, even when the process exits 0.
    Failed(String),
    /// The harness stopped the turn at a limit of its own (Claude Code's `--max-turns`):
    /// the agent's limit, recorded as `limit_reached`, and the trial is scored.
    Limit { limit: String, detail: String },
    /// The harness reported a problem it went on after (recorded, not a failure).
    Warning(String),
    /// A line that is not in the harness's format (kept for the record).
    Unparsed(String),
}

/// Reads one turn's output of a harness.
pub trait StreamParser: Send {
    /// One line of stdout (without its newline).
    fn line(&mut self, line: &str) -> Vec<Event>;

    /// The output ended; `stderr` is the tail of the harness's stderr.
    fn finish(&mut self, stderr: &str) -> Vec<Event> {
        let _ = stderr;
        Vec::new()
    }

    /// The harness's transcript of the session, read after the turn where the harness keeps
    /// it apart from its output (OpenClaw's and Hermes's SQLite stores, one JSON row a line;
    /// OpenHands's `base_state.json`).
    fn transcript(&mut self, text: &str) -> Vec<Event> {
        let _ = text;
        Vec::new()
    }
}

/// One line of a JSON-lines stream: `Ok` with its object, or `Err` with the events the line is
/// instead — none for a blank line, [`Event::Unparsed`] for anything but a JSON object.
fn json_line(line: &str) -> Result<serde_json::Map<String, Value>, Vec<Event>> {
    if line.trim().is_empty() {
        return Err(Vec::new());
    }
    match serde_json::from_str::<Value>(line.trim()) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(vec![Event::Unparsed(line.to_string())]),
    }
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Parse a whole output with `format`, as the agent does line by line (for tests and tools).
pub fn parse_all(format: Format, stdout: &str, stderr: &str) -> Vec<Event> {
    let mut parser = format.parser();
    let mut events = Vec::new();
    for line in stdout.lines() {
        events.extend(parser.line(line));
    }
    events.extend(parser.finish(stderr));
    events
}
