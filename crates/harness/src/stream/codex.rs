//! Codex CLI's `codex exec --json`: one thread event per line.
//!
//! * `{"type":"thread.started","thread_id"}` — the id `codex exec resume <id>` takes;
//! * `{"type":"turn.started"}`, `{"type":"turn.completed","usage":{"input_tokens",
//!   "cached_input_tokens","output_tokens"}}`, `{"type":"turn.failed","error":{"message"}}`,
//!   `{"type":"error","message"}`;
//! * `{"type":"item.started"|"item.updated"|"item.completed","item":{"id","type",...}}` with
//!   item types `agent_message` (`text`), `reasoning` (`text`), `command_execution`
//!   (`command`, `aggregated_output`, `exit_code`, `status`), `file_change` (`changes`,
//!   `status`), `mcp_tool_call` (`server`, `tool`, `arguments`, `result`, `error`, `status`),
//!   `web_search` (`query`), `todo_list` (`items`), `error` (`message`).
//!
//! As Codex 0.169 prints it (`tests/streams/codex/`, captured from the real program):
//!
//! * `turn.completed`'s `usage` (`input_tokens`, `cached_input_tokens`,
//!   `cache_write_input_tokens`, `output_tokens`, `reasoning_output_tokens`) is the **thread's
//!   running total**: on a resumed turn (`codex exec resume <id>`) it includes the earlier
//!   turns. The parser reports it as it is; the agent subtracts the previous turn's total of
//!   the same thread (`CommandAgent`, `adapter::Harness::cumulative_usage`).
//! * a failure is an `error` event and then a `turn.failed` with the same message: one
//!   [`Event::Failed`] (the turn did not complete).
//! * an `error` *item* is a warning Codex goes on after (`Model metadata for ... not found`).
//! * an MCP call Codex refused or could not make has `status: failed` and `error.message`
//!   (`MCP tool call requires approval, but approval policy is never`): an error result (for
//!   Bureau's tools the agent then notes the call Bureau never received); one the server
//!   answered with `isError` has `status: failed` and its `result` (`is_error` in the result is
//!   read too).
//! * Codex never names the model in this stream.
//!
//! Codex's input tokens include the cached ones (OpenAI's convention). Codex reports no cost.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Event, HarnessUsage, StreamParser, json_line, str_of, u64_of};

#[derive(Debug, Default)]
pub struct CodexParser {
    /// Items started and not completed yet, by id.
    started: BTreeMap<String, Value>,
    last_message: Option<String>,
    /// An `error` not yet recorded: a `turn.failed` repeating it right after makes it the
    /// turn's failure, recorded once.
    pending_error: Option<String>,
}

impl StreamParser for CodexParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        let obj = match json_line(line) {
            Ok(obj) => obj,
            Err(events) => return events,
        };
        let v = Value::Object(obj);
        let mut out = Vec::new();
        let kind = v.get("type").and_then(Value::as_str);
        if kind != Some("turn.failed")
            && let Some(e) = self.pending_error.take()
        {
            out.push(Event::Error(e));
        }
        match kind {
            Some("thread.started") => {
                if let Some(id) = str_of(&v, "thread_id") {
                    out.push(Event::Session(id));
                }
            }
            Some("turn.completed") => {
                let u = v.get("usage").cloned().unwrap_or(Value::Null);
                out.push(Event::Usage(HarnessUsage {
                    input_tokens: u64_of(&u, "input_tokens"),
                    cached_input_tokens: u64_of(&u, "cached_input_tokens"),
                    cache_write_tokens: u64_of(&u, "cache_write_input_tokens"),
                    output_tokens: u64_of(&u, "output_tokens"),
                    cost_usd: None,
                    model_calls: None,
                    raw: u,
                }));
                if let Some(text) = self.last_message.take() {
                    out.push(Event::Final(text));
                }
            }
            Some("turn.failed") => {
                let msg = v
                    .get("error")
                    .and_then(|e| str_of(e, "message"))
                    .unwrap_or_else(|| "turn failed".into());
                // Codex prints the failure as `error` and then `turn.failed`: one failure.
                if let Some(e) = self.pending_error.take()
                    && e != msg
                {
                    out.push(Event::Error(e));
                }
                out.push(Event::Failed(msg));
            }
            Some("error") => {
                self.pending_error = Some(str_of(&v, "message").unwrap_or_else(|| "error".into()));
            }
            Some("item.started") => {
                if let Some(item) = v.get("item")
                    && let Some(id) = str_of(item, "id")
                {
                    self.started.insert(id, item.clone());
                }
            }
            Some("item.completed") => {
                if let Some(item) = v.get("item") {
                    if let Some(id) = str_of(item, "id") {
                        self.started.remove(&id);
                    }
                    out.extend(self.item(item, true));
                }
            }
            _ => {}
        }
        out
    }

    fn finish(&mut self, _stderr: &str) -> Vec<Event> {
        let mut out: Vec<Event> = self
            .pending_error
            .take()
            .map(Event::Error)
            .into_iter()
            .collect();
        // Items the harness started but never completed (it was stopped): the call, no result.
        let started = std::mem::take(&mut self.started);
        for item in started.values() {
            out.extend(self.item(item, false));
        }
        out
    }
}

impl CodexParser {
    fn item(&mut self, item: &Value, completed: bool) -> Vec<Event> {
        let id = str_of(item, "id").unwrap_or_default();
        let failed = str_of(item, "status").as_deref() == Some("failed");
        let call = |tool: &str, input: Value, bureau: bool| Event::ToolCall {
            id: id.clone(),
            tool: tool.to_string(),
            input,
            bureau,
        };
        let result = |output: Value, is_error: bool| Event::ToolResult {
            id: id.clone(),
            output,
            is_error,
        };
        let mut out = Vec::new();
        match item.get("type").and_then(Value::as_str) {
            Some("agent_message") => {
                if let Some(t) = str_of(item, "text") {
                    self.last_message = Some(t.clone());
                    out.push(Event::Message(t));
                }
            }
            Some("command_execution") => {
                out.push(call(
                    "command_execution",
                    json!({"command": item.get("command").cloned().unwrap_or(Value::Null)}),
                    false,
                ));
                if completed {
                    let exit = item.get("exit_code").and_then(Value::as_i64);
                    out.push(result(
                        json!({
                            "exit_code": exit,
                            "output": item.get("aggregated_output").cloned().unwrap_or(Value::Null),
                        }),
                        failed || exit.is_some_and(|c| c != 0),
                    ));
                }
            }
            Some("file_change") => {
                out.push(call(
                    "file_change",
                    json!({"changes": item.get("changes").cloned().unwrap_or(Value::Null)}),
                    false,
                ));
                if completed {
                    out.push(result(json!({"status": item.get("status")}), failed));
                }
            }
            Some("mcp_tool_call") => {
                let server = str_of(item, "server").unwrap_or_default();
                let tool = str_of(item, "tool").unwrap_or_default();
                out.push(call(
                    &format!("mcp:{server}:{tool}"),
                    item.get("arguments").cloned().unwrap_or(Value::Null),
                    server == "bureau",
                ));
                if completed {
                    // An `error` (Codex refused the call, or got no answer): an error result —
                    // for Bureau's tools, the agent notes the call Bureau never received.
                    out.push(match item.get("error").filter(|e| !e.is_null()) {
                        Some(e) => result(e.clone(), true),
                        None => {
                            let res = item.get("result").cloned().unwrap_or(Value::Null);
                            let is_error = failed
                                || ["is_error", "isError"]
                                    .iter()
                                    .any(|k| res.get(k).and_then(Value::as_bool) == Some(true));
                            result(res, is_error)
                        }
                    });
                }
            }
            Some("web_search") => {
                out.push(call(
                    "web_search",
                    json!({"query": item.get("query").cloned().unwrap_or(Value::Null)}),
                    false,
                ));
            }
            Some("error") => {
                // Codex goes on after an error item: a warning, not the turn's failure.
                out.push(Event::Warning(
                    str_of(item, "message").unwrap_or_else(|| "error item".into()),
                ));
            }
            // reasoning, todo_list: the model's own bookkeeping, not actions.
            _ => {}
        }
        out
    }
}
