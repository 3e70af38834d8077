//! OpenHands's `openhands --headless --json`: one JSON event per line.
//!
//! OpenHands documents the stream only by example: `{"type":"action","action":"write",
//! "path":...}`, `{"type":"observation","content":...}`, `{"type":"action","action":"run",
//! "command":...}`. This parser reads exactly that shape and nothing more is confirmed:
//!
//! * `type: action` — `action: message` (its `message` or `content`) is assistant text;
//!   `action: finish` (its `message`/`final_thought`/`content`) is the final answer; any other
//!   action is a tool call named by `action`, its other fields the input (`call_tool_mcp`, the
//!   MCP call action of OpenHands's event model, is Bureau's: Bureau is the only MCP server
//!   it is given);
//! * `type: observation` — the result of the latest open action (`content`; `error: true` or
//!   `observation: error` marks a failure);
//! * any event's `llm_metrics` (`accumulated_cost`, `accumulated_token_usage` with
//!   `prompt_tokens`, `completion_tokens`, `cache_read_tokens`, `cache_write_tokens`) — the
//!   last one seen is the turn's usage;
//! * `conversation_id` / `session_id` on any event — the session to resume.

use serde_json::{Map, Value};

use super::{Event, HarnessUsage, StreamParser, json_line, str_of, u64_of};

#[derive(Debug, Default)]
pub struct OpenHandsParser {
    next_id: u64,
    open: Vec<String>,
    session: Option<String>,
    usage: Option<HarnessUsage>,
}

impl StreamParser for OpenHandsParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let obj = match json_line(line) {
            Ok(obj) => obj,
            Err(events) => return events,
        };
        let mut out = Vec::new();
        let v = Value::Object(obj.clone());
        for key in ["conversation_id", "session_id"] {
            if let Some(id) = str_of(&v, key)
                && self.session.as_deref() != Some(id.as_str())
            {
                self.session = Some(id.clone());
                out.push(Event::Session(id));
            }
        }
        if let Some(m) = v.get("llm_metrics") {
            let t = m
                .get("accumulated_token_usage")
                .cloned()
                .unwrap_or(Value::Null);
            let cache_read = u64_of(&t, "cache_read_tokens");
            let cache_write = u64_of(&t, "cache_write_tokens");
            self.usage = Some(HarnessUsage {
                input_tokens: u64_of(&t, "prompt_tokens"),
                cached_input_tokens: cache_read,
                cache_write_tokens: cache_write,
                output_tokens: u64_of(&t, "completion_tokens"),
                cost_usd: m.get("accumulated_cost").and_then(Value::as_f64),
                model_calls: None,
                raw: m.clone(),
            });
        }
        match v.get("type").and_then(Value::as_str) {
            Some("action") => {
                let action = str_of(&v, "action").unwrap_or_default();
                let text = ["message", "final_thought", "content"]
                    .iter()
                    .find_map(|k| str_of(&v, k));
                match action.as_str() {
                    "message" => out.extend(text.map(Event::Message)),
                    "finish" => out.extend(text.map(Event::Final)),
                    _ => {
                        self.next_id += 1;
                        let id = format!("openhands-{}", self.next_id);
                        self.open.push(id.clone());
                        let input: Map<String, Value> = obj
                            .into_iter()
                            .filter(|(k, _)| {
                                !matches!(
                                    k.as_str(),
                                    "type" | "action" | "llm_metrics" | "conversation_id"
                                )
                            })
                            .collect();
                        out.push(Event::ToolCall {
                            id,
                            bureau: action == "call_tool_mcp",
                            tool: action,
                            input: Value::Object(input),
                        });
                    }
                }
            }
            Some("observation") => {
                if let Some(id) = self.open.pop() {
                    let is_error = v.get("error").and_then(Value::as_bool) == Some(true)
                        || str_of(&v, "observation").as_deref() == Some("error");
                    out.push(Event::ToolResult {
                        id,
                        output: v.get("content").cloned().unwrap_or(Value::Null),
                        is_error,
                    });
                }
            }
            _ => {}
        }
        out
    }

    fn finish(&mut self, _stderr: &str) -> Vec<Event> {
        self.usage.take().map(Event::Usage).into_iter().collect()
    }
}
