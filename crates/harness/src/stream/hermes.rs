//! Hermes's quiet mode, `hermes chat --query ... --quiet`: stdout is the final response,
//! stderr ends with `session_id: <id>`.
//!
//! As Hermes 0.19.0 prints it (`tests/streams/hermes/`, captured from the real program): stdout
//! holds only the final response (with `security.tirith_enabled: false` in its config, which
//! Bureau writes — else its security scanner's notice, `⚠ tirith security scanner enabled but
//! not available ...`, comes first: read as a warning, not as the response); stderr holds
//! `session_id: <id>` (the session to `--resume`), `↻ Resumed session <id> (...)` on a resumed
//! turn, and `Error: <message>` when the turn failed with no response (exit 1).
//!
//! The turn's tool calls and the session's usage are in Hermes's SQLite store, read after the
//! turn (`adapter::after_turn`) and handed to [`StreamParser::transcript`], one JSON object a
//! line:
//!
//! * `{"session": {...}}` — the `sessions` row: `model`, `input_tokens` (cache reads
//!   excluded), `output_tokens`, `cache_read_tokens`, `cache_write_tokens`, `api_call_count`,
//!   `estimated_cost_usd`/`actual_cost_usd` with `cost_status` (`unknown` for a custom
//!   endpoint it has no prices for): the session's running totals;
//! * `{"message": {...}}` — the `messages` rows in order: `role` `user`, `assistant` (`content`;
//!   `tool_calls`, a JSON list of `{"id", "function": {"name", "arguments"}}`), `tool`
//!   (`tool_call_id`, `tool_name`, `content`). Only the rows after the last `user` row (this
//!   turn's prompt) are read. Hermes names an MCP server's tools `mcp__<server>__<tool>`
//!   (`mcp__bureau__files_write`); calls named so are Bureau's. A tool's result is an error
//!   when it is a JSON object with an `error` that is not null (how Hermes reports an MCP
//!   tool's `isError` and its own tools' failures), or one of the texts Hermes answers a call
//!   it refused with ([`tool_error`]) — such a call of Bureau's never reached Bureau.

use serde_json::Value;

use super::{Event, HarnessUsage, StreamParser, str_of, u64_of};

#[derive(Debug, Default)]
pub struct HermesParser {
    text: String,
}

impl StreamParser for HermesParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        // Hermes's security scanner's notice, printed first on stdout when its configuration
        // leaves `security.tirith_enabled` on (Bureau's does not): not the response.
        if self.text.trim().is_empty() && line.trim_start().starts_with("⚠ tirith") {
            return vec![Event::Warning(line.trim().to_string())];
        }
        self.text.push_str(line);
        self.text.push('\n');
        Vec::new()
    }

    fn finish(&mut self, stderr: &str) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some(id) = stderr
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("session_id:"))
            .map(str::trim)
            .filter(|id| !id.is_empty() && !id.contains(char::is_whitespace))
        {
            out.push(Event::Session(id.to_string()));
        }
        for l in stderr.lines() {
            if let Some(e) = l.trim().strip_prefix("Error:") {
                out.push(Event::Error(e.trim().to_string()));
            }
        }
        let text = self.text.trim();
        if !text.is_empty() {
            out.push(Event::Final(text.to_string()));
        }
        out
    }

    fn transcript(&mut self, text: &str) -> Vec<Event> {
        let rows: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        let mut out = Vec::new();
        if let Some(s) = rows.iter().find_map(|r| r.get("session")) {
            if let Some(m) = str_of(s, "model").filter(|m| !m.is_empty()) {
                out.push(Event::Model(m));
            }
            let cache_read = u64_of(s, "cache_read_tokens");
            let cache_write = u64_of(s, "cache_write_tokens");
            let known = !matches!(
                s.get("cost_status").and_then(Value::as_str),
                None | Some("unknown") | Some("")
            );
            let cost = known
                .then(|| {
                    s.get("actual_cost_usd")
                        .and_then(Value::as_f64)
                        .filter(|c| *c > 0.0)
                        .or_else(|| s.get("estimated_cost_usd").and_then(Value::as_f64))
                })
                .flatten();
            out.push(Event::Usage(HarnessUsage {
                input_tokens: u64_of(s, "input_tokens") + cache_read + cache_write,
                cached_input_tokens: cache_read,
                cache_write_tokens: cache_write,
                output_tokens: u64_of(s, "output_tokens"),
                cost_usd: cost,
                model_calls: s.get("api_call_count").and_then(Value::as_u64),
                raw: s.clone(),
            }));
        }
        let messages: Vec<&Value> = rows.iter().filter_map(|r| r.get("message")).collect();
        let start = messages
            .iter()
            .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map_or(0, |i| i + 1);
        for m in &messages[start..] {
            match m.get("role").and_then(Value::as_str) {
                Some("assistant") => {
                    if let Some(t) = str_of(m, "content").filter(|t| !t.trim().is_empty()) {
                        out.push(Event::Message(t));
                    }
                    let calls = match m.get("tool_calls") {
                        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                        Some(v) => v.clone(),
                        None => Value::Null,
                    };
                    for c in calls.as_array().into_iter().flatten() {
                        let f = c.get("function").unwrap_or(&Value::Null);
                        let tool = str_of(f, "name").unwrap_or_default();
                        let input = match f.get("arguments") {
                            Some(Value::String(s)) => {
                                serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                            }
                            Some(v) => v.clone(),
                            None => Value::Null,
                        };
                        out.push(Event::ToolCall {
                            id: str_of(c, "id").unwrap_or_default(),
                            bureau: is_bureau_tool(&tool),
                            tool,
                            input,
                        });
                    }
                }
                Some("tool") => {
                    let content = str_of(m, "content").unwrap_or_default();
                    let body = unwrap_untrusted(&content);
                    let is_error = tool_error(body);
                    out.push(Event::ToolResult {
                        id: str_of(m, "tool_call_id").unwrap_or_default(),
                        output: Value::String(body.to_string()),
                        is_error,
                    });
                }
                _ => {}
            }
        }
        out
    }
}

/// Whether a tool result of Hermes's store reports an error: a JSON object with an `error`
/// that is not null or empty (an MCP tool's `isError`, Hermes's own tools' failures), or one
/// of the texts Hermes answers calls it refused with (`Error: Invalid JSON arguments...`,
/// `Tool '<name>' does not exist...`, `Tool call rejected...`, `Skipped: ...`).
fn tool_error(body: &str) -> bool {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return v
            .get("error")
            .is_some_and(|e| !e.is_null() && e.as_str() != Some(""));
    }
    body.starts_with("Error")
        || body.starts_with("Tool call rejected")
        || body.starts_with("Skipped:")
        || (body.starts_with("Tool '") && body.contains("does not exist"))
}

/// Hermes's names of an MCP server's tools: `mcp__bureau__<tool>` (0.19), `mcp_bureau_<tool>`
/// (earlier releases).
fn is_bureau_tool(name: &str) -> bool {
    name.starts_with("mcp__bureau__") || name.starts_with("mcp_bureau_")
}

/// A tool result without the `<untrusted_tool_result source="...">` wrapper (and the
/// notice in it) Hermes puts around what MCP servers return.
fn unwrap_untrusted(content: &str) -> &str {
    let t = content.trim();
    let Some(rest) = t.strip_prefix("<untrusted_tool_result") else {
        return t;
    };
    let Some(body_start) = rest.find('>') else {
        return t;
    };
    let body = &rest[body_start + 1..];
    let body = body
        .strip_suffix("</untrusted_tool_result>")
        .unwrap_or(body)
        .trim();
    // The notice is one paragraph before the data.
    match body.split_once("\n\n") {
        Some((notice, data)) if notice.contains("external source") => data.trim(),
        _ => body,
    }
}
