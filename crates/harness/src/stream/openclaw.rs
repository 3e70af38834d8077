//! OpenClaw's `openclaw agent --local --json`: stdout ends with one JSON envelope.
//!
//! As OpenClaw 2026.9.6 prints it (`tests/streams/openclaw/`, captured from the real program):
//! `{"payloads":[{"text"}],"meta":{"agentMeta":{"sessionId","sessionFile","provider","model",
//! "usage":{"input","output","cacheRead","cacheWrite","total","cost":{"total"}},"costUsd",
//! "assistantTurns",...},"finalAssistantVisibleText","toolSummary",...}}`, or on failure
//! `{"ok":false,"error":{"type","message"}}`. `usage` is this run's (one turn's), not the
//! session's; `input` excludes the cache reads. `sessionFile` is no longer a file but the
//! session key (`agent:main:explicit:<id>`).
//!
//! The session transcript — the tool calls — is kept in OpenClaw's SQLite database
//! (`<state dir>/agents/<agent>/agent/openclaw-agent.sqlite`, table `transcript_events`,
//! one JSON row per event); the agent reads it after the turn
//! (`adapter::after_turn`) and hands the rows, one JSON object a line, to
//! [`StreamParser::transcript`]: rows `{"type":"message","message":{"role":"user"|
//! "assistant"|"toolResult",...}}`, assistant content blocks `{"type":"text","text"}` /
//! `{"type":"toolCall","id","name","arguments"}`, tool results with `toolCallId`, `content`
//! and `isError`. Only the rows after the last `user` row (this turn's prompt) are read.
//! OpenClaw names an MCP server's tools `<server>__<tool>` (`bureau__files_write`); calls
//! named so are Bureau's (already recorded by the tool session). A `sessionFile` that is a
//! path to a JSONL file (older OpenClaw) is still read.

use serde_json::Value;

use super::{Event, HarnessUsage, StreamParser, str_of, u64_of};

#[derive(Debug, Default)]
pub struct OpenClawParser {
    stdout: String,
}

impl StreamParser for OpenClawParser {
    fn line(&mut self, line: &str) -> Vec<Event> {
        self.stdout.push_str(line);
        self.stdout.push('\n');
        Vec::new()
    }

    fn finish(&mut self, _stderr: &str) -> Vec<Event> {
        let Some(envelope) = last_json_object(&self.stdout) else {
            let text = self.stdout.trim();
            return if text.is_empty() {
                Vec::new()
            } else {
                vec![Event::Unparsed(text.to_string())]
            };
        };
        let mut out = Vec::new();
        if envelope.get("ok").and_then(Value::as_bool) == Some(false) {
            let error = envelope.get("error").cloned().unwrap_or(Value::Null);
            out.push(Event::Error(
                str_of(&error, "message").unwrap_or_else(|| error.to_string()),
            ));
        }
        let agent_meta = envelope
            .get("meta")
            .and_then(|m| m.get("agentMeta"))
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(id) = str_of(&agent_meta, "sessionId") {
            out.push(Event::Session(id));
        }
        if let Some(model) = str_of(&agent_meta, "model") {
            out.push(Event::Model(match str_of(&agent_meta, "provider") {
                Some(p) if !model.starts_with(&format!("{p}/")) => format!("{p}/{model}"),
                _ => model,
            }));
        }
        // Older OpenClaw named a JSONL transcript file here; now it is a session key.
        if let Some(path) = str_of(&agent_meta, "sessionFile")
            && path.starts_with('/')
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            out.extend(transcript_events(&text));
        }
        if let Some(u) = agent_meta.get("usage") {
            let cache_read = u64_of(u, "cacheRead");
            let cache_write = u64_of(u, "cacheWrite");
            let cost = u
                .get("cost")
                .and_then(|c| c.get("total"))
                .and_then(Value::as_f64)
                .or_else(|| agent_meta.get("costUsd").and_then(Value::as_f64));
            out.push(Event::Usage(HarnessUsage {
                input_tokens: u64_of(u, "input") + cache_read + cache_write,
                cached_input_tokens: cache_read,
                cache_write_tokens: cache_write,
                output_tokens: u64_of(u, "output"),
                cost_usd: cost,
                model_calls: agent_meta.get("assistantTurns").and_then(Value::as_u64),
                raw: u.clone(),
            }));
        }
        let texts: Vec<String> = envelope
            .get("payloads")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|p| p.get("isReasoning").and_then(Value::as_bool) != Some(true))
            .filter_map(|p| str_of(p, "text"))
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        let final_text = if texts.is_empty() {
            envelope
                .get("meta")
                .and_then(|m| str_of(m, "finalAssistantVisibleText"))
        } else {
            Some(texts.join("\n\n"))
        };
        if let Some(text) = final_text {
            out.push(Event::Final(text));
        }
        out
    }

    fn transcript(&mut self, text: &str) -> Vec<Event> {
        transcript_events(text)
    }
}

/// The last JSON object of `text` that runs to its end (logs may come before it).
fn last_json_object(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    text.char_indices()
        .rev()
        .filter(|(_, c)| *c == '{')
        .find_map(|(i, _)| match serde_json::from_str::<Value>(&text[i..]) {
            Ok(v @ Value::Object(_)) => Some(v),
            _ => None,
        })
}

fn is_bureau_tool(name: &str) -> bool {
    name.starts_with("bureau__")
}

/// The events of the transcript rows after its last user message.
fn transcript_events(text: &str) -> Vec<Event> {
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("message"))
        .filter_map(|r| r.get("message").cloned())
        .collect();
    let start = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for m in &messages[start..] {
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                for block in m
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => {
                            if let Some(t) = str_of(block, "text")
                                && !t.trim().is_empty()
                            {
                                out.push(Event::Message(t));
                            }
                        }
                        Some("toolCall") => {
                            let tool = str_of(block, "name").unwrap_or_default();
                            let input = match block.get("arguments") {
                                Some(Value::String(s)) => serde_json::from_str(s)
                                    .unwrap_or_else(|_| Value::String(s.clone())),
                                Some(v) => v.clone(),
                                None => Value::Null,
                            };
                            out.push(Event::ToolCall {
                                id: str_of(block, "id").unwrap_or_default(),
                                bureau: is_bureau_tool(&tool),
                                tool,
                                input,
                            });
                        }
                        _ => {}
                    }
                }
            }
            Some("toolResult") => {
                let output = match m.get("content") {
                    Some(Value::Array(blocks)) => Value::String(
                        blocks
                            .iter()
                            .filter_map(|b| b.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                out.push(Event::ToolResult {
                    id: str_of(m, "toolCallId").unwrap_or_default(),
                    output,
                    is_error: m.get("isError").and_then(Value::as_bool).unwrap_or(false),
                });
            }
            _ => {}
        }
    }
    out
}
