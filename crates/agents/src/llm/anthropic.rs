//! The Anthropic Messages wire format (`POST <base>/v1/messages`, non-streaming): the request
//! Bureau sends, the response it reads, and the conversation's messages.
//!
//! The assistant's content blocks are kept in the conversation exactly as received (thinking
//! blocks and their signatures must go back unchanged). The system prompt is marked as a
//! prompt-cache breakpoint, so the tools and system prompt are read from the cache on every
//! call after the first (when they are long enough for the model's cache minimum).

use bureau_core::tool::{Media, MediaKind, ToolSpec};
use bureau_core::trajectory::ModelUsage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{CallParams, Reply, ToolAnswer, ToolUse};

/// The API version header Bureau speaks.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when the agent gives no `max_output_tokens` (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// A message of the conversation: a role and content blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// The content blocks Bureau writes or reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// Anything else (thinking, redacted thinking, server tools): kept, not read.
    #[serde(other)]
    Other,
}

#[derive(Debug, Serialize)]
struct Request<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Value>,
    messages: &'a [Value],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

#[derive(Debug, Deserialize)]
struct Response {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    content: Vec<Value>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

fn to_value<T: Serialize>(v: &T) -> Value {
    // Serialising these plain structs cannot fail (string keys, finite floats from config).
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The conversation's first messages: none (the system prompt is a request field).
pub(crate) fn start() -> Vec<Value> {
    Vec::new()
}

pub(crate) fn user(text: &str) -> Value {
    to_value(&Message {
        role: Role::User,
        content: vec![to_value(&Block::Text {
            text: text.to_string(),
        })],
    })
}

/// The request body for the conversation `messages`.
pub(crate) fn request(p: &CallParams<'_>, messages: &[Value]) -> Value {
    to_value(&body(p, messages))
}

/// The request as the bytes sent (no `Value` tree of the conversation made on the way).
pub(crate) fn request_bytes(p: &CallParams<'_>, messages: &[Value]) -> Vec<u8> {
    // Strings for keys and plain values throughout: serialising cannot fail.
    serde_json::to_vec(&body(p, messages)).unwrap_or_default()
}

fn body<'a>(p: &'a CallParams<'_>, messages: &'a [Value]) -> Request<'a> {
    let system = if p.system.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": p.system, "cache_control": {"type": "ephemeral"}})]
    };
    Request {
        model: p.model,
        max_tokens: p.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        system,
        messages,
        tools: p
            .tools
            .iter()
            .map(|t: &ToolSpec| Tool {
                name: &t.name,
                description: &t.description,
                input_schema: &t.input_schema,
            })
            .collect(),
        temperature: p.sampling.temperature,
        top_p: p.sampling.top_p,
        extra: p.extra,
    }
}

/// Read a response body: its text blocks, tool uses, usage and the content to keep.
pub(crate) fn parse(body: &Value) -> Result<(Reply, Vec<Value>), String> {
    let r = Response::deserialize(body)
        .map_err(|e| format!("the body is not a Messages API response ({e})"))?;
    if let Some(kind) = &r.kind
        && kind != "message"
    {
        return Err(format!("the body is of type `{kind}`, not `message`"));
    }
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in &r.content {
        match Block::deserialize(block) {
            Ok(Block::Text { text }) => texts.push(text),
            Ok(Block::ToolUse { id, name, input }) => calls.push(ToolUse {
                id: Some(id),
                name,
                raw_args: input.to_string(),
                args: Ok(input),
            }),
            Ok(_) => {}
            Err(e) => return Err(format!("a content block is malformed ({e})")),
        }
    }
    let text = Some(texts.join("")).filter(|t| !t.is_empty());
    let u = r.usage.unwrap_or_default();
    let read = u.cache_read_input_tokens.unwrap_or(0);
    let written = u.cache_creation_input_tokens.unwrap_or(0);
    Ok((
        Reply {
            text,
            calls,
            usage: ModelUsage {
                input_tokens: u.input_tokens + read + written,
                cached_input_tokens: read,
                cache_write_tokens: written,
                output_tokens: u.output_tokens,
                cost_usd: None,
            },
            stop_reason: r.stop_reason,
        },
        r.content,
    ))
}

/// The assistant message that records a response: its content blocks as received.
pub(crate) fn assistant(content: Vec<Value>) -> Value {
    to_value(&Message {
        role: Role::Assistant,
        content,
    })
}

/// One user message with a `tool_result` block per answer, in the order of the calls.
pub(crate) fn tool_results(answers: &[ToolAnswer]) -> Vec<Value> {
    if answers.is_empty() {
        return Vec::new();
    }
    vec![to_value(&Message {
        role: Role::User,
        content: answers
            .iter()
            .map(|a| {
                if a.media.is_empty() {
                    return to_value(&Block::ToolResult {
                        tool_use_id: a.id.clone(),
                        content: a.content.clone(),
                        is_error: a.is_error,
                    });
                }
                // A result with pictures: its content is the text then one image block each.
                let mut content = vec![json!({"type": "text", "text": a.content})];
                for m in &a.media {
                    content.push(json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": m.mime_type, "data": m.data},
                    }));
                }
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": a.id,
                    "content": content,
                });
                if a.is_error {
                    block["is_error"] = json!(true);
                }
                block
            })
            .collect(),
    })]
}

/// Why the Messages API cannot take `m`, if it cannot.
pub(crate) fn unsupported(m: &Media) -> Option<String> {
    match m.kind {
        MediaKind::Image => match m.mime_type.as_str() {
            "image/png" | "image/jpeg" | "image/gif" | "image/webp" => None,
            other => Some(format!("the API takes no {other} images")),
        },
        MediaKind::Audio => Some("the Anthropic Messages API takes no audio".to_string()),
    }
}

/// `x-api-key` (when there is a key) and `anthropic-version`.
pub(crate) fn headers(key: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![("anthropic-version", API_VERSION.to_string())];
    if let Some(k) = key {
        h.push(("x-api-key", k.to_string()));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::Sampling;

    #[test]
    fn requests_put_the_system_prompt_and_tools_in_their_fields() {
        let tools = vec![ToolSpec {
            name: "mail_send".into(),
            description: "Send".into(),
            input_schema: json!({"type": "object"}),
            annotations: None,
        }];
        let sampling = Sampling {
            temperature: Some(0.5),
            seed: Some(1),
            ..Sampling::default()
        };
        let extra = Map::new();
        let p = CallParams {
            model: "claude-sonnet-4-5",
            system: "sys",
            tools: &tools,
            sampling: &sampling,
            max_output_tokens: None,
            extra: &extra,
        };
        let body = request(&p, &[user("hi")]);
        assert_eq!(
            body,
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 4096,
                "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                "tools": [{"name": "mail_send", "description": "Send", "input_schema": {"type": "object"}}],
                "temperature": 0.5
            })
        );
    }

    #[test]
    fn responses_give_text_tool_uses_and_usage_with_the_cache() {
        let body = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "files_read", "input": {"path": "a"}}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5,
                      "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000}
        });
        let (r, content) = parse(&body).unwrap();
        assert_eq!(r.text.as_deref(), Some("Reading it."));
        assert_eq!(r.calls.len(), 1);
        assert_eq!(r.calls[0].id.as_deref(), Some("toolu_1"));
        assert_eq!(r.calls[0].args, Ok(json!({"path": "a"})));
        assert_eq!(
            (
                r.usage.input_tokens,
                r.usage.cached_input_tokens,
                r.usage.cache_write_tokens,
                r.usage.output_tokens
            ),
            (1110, 1000, 100, 5)
        );
        // The thinking block goes back unchanged.
        assert_eq!(assistant(content)["content"][0]["signature"], "sig");
        let results = tool_results(&[ToolAnswer {
            id: "toolu_1".into(),
            content: "no such file".into(),
            is_error: true,
            media: Vec::new(),
        }]);
        assert_eq!(
            results,
            vec![
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "no such file", "is_error": true}]})
            ]
        );
    }

    #[test]
    fn errors_and_other_bodies_are_refused() {
        let e = parse(&json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}, "content": []}))
            .unwrap_err();
        assert!(e.contains("type `error`"), "{e}");
        assert!(parse(&json!({"type": "message"})).is_err());
    }
}
