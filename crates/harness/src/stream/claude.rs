//! Claude Code's `--output-format stream-json --verbose`: one JSON message per line.
//!
//! * `{"type":"system","subtype":"init","session_id","model","tools","mcp_servers",...}`
//! * `{"type":"assistant","message":{"content":[{"type":"text"|"tool_use"|"thinking",...}],
//!   "usage":{...}},"session_id",...}` — `tool_use` has `id`, `name`, `input`; MCP tools are
//!   named `mcp__<server>__<tool>`.
//! * `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id","content",
//!   "is_error"}]}}`
//! * `{"type":"result","subtype":"success"|"error_...","is_error","result","session_id",
//!   "num_turns","total_cost_usd","usage":{"input_tokens","cache_creation_input_tokens",
//!   "cache_read_input_tokens","output_tokens",...}}`

use serde_json::Value;

use super::{Event, HarnessUsage, StreamParser, json_line, str_of, u64_of};

/// The prefix of tool names Claude Code gives the tools of Bureau's MCP server (`bureau`).
pub const BUREAU_MCP_PREFIX: &str = "mcp__bureau__";

#[derive(Debug, Default)]
pub struct ClaudeCodeParser {
    session: Option<String>,
}

impl StreamParser for ClaudeCodeParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let obj = match json_line(line) {
            Ok(obj) => obj,
            Err(events) => return events,
        };
        let v = Value::Object(obj);
        let mut out = Vec::new();
        if let Some(id) = str_of(&v, "session_id")
            && self.session.as_deref() != Some(id.as_str())
        {
            self.session = Some(id.clone());
            out.push(Event::Session(id));
        }
        match v.get("type").and_then(Value::as_str) {
            Some("system") => {
                if let Some(model) = str_of(&v, "model") {
                    out.push(Event::Model(model));
                }
            }
            Some("assistant") => {
                for block in content(&v) {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = str_of(block, "text")
                                && !t.trim().is_empty()
                            {
                                out.push(Event::Message(t));
                            }
                        }
                        Some("tool_use") => {
                            let tool = str_of(block, "name").unwrap_or_default();
                            out.push(Event::ToolCall {
                                id: str_of(block, "id").unwrap_or_default(),
                                bureau: tool.starts_with(BUREAU_MCP_PREFIX),
                                tool,
                                input: block.get("input").cloned().unwrap_or(Value::Null),
                            });
                        }
                        _ => {}
                    }
                }
            }
            Some("user") => {
                for block in content(&v) {
                    if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                        out.push(Event::ToolResult {
                            id: str_of(block, "tool_use_id").unwrap_or_default(),
                            output: tool_result_text(block.get("content")),
                            is_error: block
                                .get("is_error")
                                .and_then(Value::as_bool)
                                .unwrap_or(false),
                        });
                    }
                }
            }
            Some("result") => {
                let u = v.get("usage").cloned().unwrap_or(Value::Null);
                let cache_read = u64_of(&u, "cache_read_input_tokens");
                let cache_write = u64_of(&u, "cache_creation_input_tokens");
                out.push(Event::Usage(HarnessUsage {
                    input_tokens: u64_of(&u, "input_tokens") + cache_read + cache_write,
                    cached_input_tokens: cache_read,
                    cache_write_tokens: cache_write,
                    output_tokens: u64_of(&u, "output_tokens"),
                    cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
                    model_calls: v.get("num_turns").and_then(Value::as_u64),
                    raw: u,
                }));
                let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                let subtype = str_of(&v, "subtype").unwrap_or_default();
                let detail = str_of(&v, "result")
                    .or_else(|| {
                        v.get("errors")
                            .and_then(Value::as_array)
                            .map(|e| e.iter().filter_map(Value::as_str).collect::<Vec<_>>())
                            .map(|e| e.join("; "))
                    })
                    .unwrap_or_default();
                if subtype == "error_max_turns" {
                    out.push(Event::Limit {
                        limit: "harness_max_turns".into(),
                        detail: format!(
                            "Claude Code stopped at its --max-turns ({} model turns)",
                            v.get("num_turns").and_then(Value::as_u64).unwrap_or(0)
                        ),
                    });
                } else if is_error || subtype.starts_with("error") {
                    // `subtype: success` with `is_error: true` is how Claude Code reports a
                    // failed API call (a bad key, an unknown model): not an answer.
                    out.push(Event::Failed(
                        format!(
                            "{} {detail}",
                            if subtype.is_empty() {
                                "error"
                            } else {
                                &subtype
                            }
                        )
                        .trim()
                        .to_string(),
                    ));
                } else if let Some(text) = str_of(&v, "result") {
                    out.push(Event::Final(text));
                }
            }
            _ => {}
        }
        out
    }
}

fn content(v: &Value) -> impl Iterator<Item = &Value> {
    v.get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A tool result's content: its text blocks joined, or the value as it is.
fn tool_result_text(content: Option<&Value>) -> Value {
    match content {
        Some(Value::Array(blocks)) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if texts.len() == blocks.len() {
                Value::String(texts.join("\n"))
            } else {
                Value::Array(blocks.clone())
            }
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}
