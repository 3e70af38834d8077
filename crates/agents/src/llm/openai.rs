//! The OpenAI Chat Completions wire format (`POST <base>/chat/completions`, non-streaming):
//! the request Bureau sends, the response it reads, and the conversation's messages.
//!
//! Spoken by OpenAI and by most servers that call themselves OpenAI-compatible (vLLM,
//! Ollama, llama.cpp server, LiteLLM, OpenRouter). Leniencies for those servers: a tool
//! call's `arguments` may be a JSON object instead of a string, its `id` may be missing, the
//! `usage` block may be missing (counted as zero tokens), `content` may be a list of parts.

use bureau_core::tool::{Media, MediaKind, ToolSpec};
use bureau_core::trajectory::ModelUsage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{CallParams, Reply, ToolAnswer, ToolUse};

/// A message of the conversation, by role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A tool call as the assistant message carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, exactly as the model wrote it.
    pub arguments: String,
}

#[derive(Debug, Serialize)]
struct Request<'a> {
    model: &'a str,
    messages: &'a [Value],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Tool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(flatten)]
    extra: &'a Map<String, Value>,
}

#[derive(Debug, Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Debug, Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Debug, Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ResponseMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ResponseMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<ResponseToolCall>>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ResponseToolCall {
    #[serde(default)]
    id: Option<String>,
    function: ResponseFunction,
}

#[derive(Debug, Deserialize)]
struct ResponseFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Debug, Default, Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Default, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

fn to_value<T: Serialize>(v: &T) -> Value {
    // Serialising these plain structs cannot fail (string keys, finite floats from config).
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The conversation's first messages: the system prompt.
pub(crate) fn start(system: &str) -> Vec<Value> {
    vec![to_value(&Message::System {
        content: system.to_string(),
    })]
}

pub(crate) fn user(text: &str) -> Value {
    to_value(&Message::User {
        content: text.to_string(),
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
    Request {
        model: p.model,
        messages,
        tools: p.tools.iter().map(tool).collect(),
        temperature: p.sampling.temperature,
        top_p: p.sampling.top_p,
        max_completion_tokens: p.max_output_tokens,
        seed: p.sampling.seed,
        extra: p.extra,
    }
}

fn tool(spec: &ToolSpec) -> Tool<'_> {
    Tool {
        kind: "function",
        function: Function {
            name: &spec.name,
            description: &spec.description,
            parameters: &spec.input_schema,
        },
    }
}

/// Read a response body: the first choice's text and tool calls, and the usage.
pub(crate) fn parse(body: &Value) -> Result<Reply, String> {
    let c = Completion::deserialize(body)
        .map_err(|e| format!("the body is not a chat completion ({e})"))?;
    let Some(choice) = c.choices.into_iter().next() else {
        return Err("the response has no choices".into());
    };
    let text = match choice.message.content {
        Some(Value::String(s)) => Some(s),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
        ),
        _ => None,
    }
    .or(choice.message.refusal)
    .filter(|t| !t.is_empty());
    let calls = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|tc| {
            let (raw, args) = match tc.function.arguments {
                Value::String(s) if s.trim().is_empty() => (s, Ok(Value::Object(Map::new()))),
                Value::String(s) => {
                    let args = serde_json::from_str::<Value>(&s)
                        .map_err(|e| format!("the arguments are not valid JSON ({e})"));
                    (s, args)
                }
                Value::Null => (String::new(), Ok(Value::Object(Map::new()))),
                other => (other.to_string(), Ok(other)),
            };
            ToolUse {
                id: tc.id.filter(|id| !id.is_empty()),
                name: tc.function.name,
                raw_args: raw,
                args,
            }
        })
        .collect();
    let u = c.usage.unwrap_or_default();
    Ok(Reply {
        text,
        calls,
        usage: ModelUsage {
            input_tokens: u.prompt_tokens,
            cached_input_tokens: u
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
            cache_write_tokens: 0,
            output_tokens: u.completion_tokens,
            cost_usd: None,
        },
        stop_reason: choice.finish_reason,
    })
}

/// The assistant message that records `reply` in the conversation (every call has an id).
/// An answer with neither text nor tool calls is kept as empty text (an assistant message
/// needs one or the other).
pub(crate) fn assistant(reply: &Reply) -> Value {
    let content = match (&reply.text, reply.calls.is_empty()) {
        (None, true) => Some(String::new()),
        (text, _) => text.clone(),
    };
    to_value(&Message::Assistant {
        content,
        tool_calls: reply
            .calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone().unwrap_or_default(),
                kind: "function".into(),
                function: FunctionCall {
                    name: c.name.clone(),
                    arguments: c.raw_args.clone(),
                },
            })
            .collect(),
    })
}

/// One `tool` message per answer, in the order of the calls.
pub(crate) fn tool_results(answers: &[ToolAnswer]) -> Vec<Value> {
    let mut out: Vec<Value> = answers
        .iter()
        .map(|a| {
            to_value(&Message::Tool {
                tool_call_id: a.id.clone(),
                content: a.content.clone(),
            })
        })
        .collect();
    // A tool message holds text only: the pictures and sounds of the results follow in one
    // user message, each after a line naming its tool call.
    let mut parts = Vec::new();
    for a in answers {
        for m in &a.media {
            parts.push(
                json!({"type": "text", "text": format!("[{} from tool call {}]", m.label, a.id)}),
            );
            parts.push(match m.kind {
                MediaKind::Image => json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{};base64,{}", m.mime_type, m.data)},
                }),
                MediaKind::Audio => json!({
                    "type": "input_audio",
                    "input_audio": {"data": m.data, "format": audio_format(&m.mime_type).unwrap_or("wav")},
                }),
            });
        }
    }
    if !parts.is_empty() {
        out.push(json!({"role": "user", "content": parts}));
    }
    out
}

/// The `input_audio` format of a MIME type, if the API takes it.
fn audio_format(mime: &str) -> Option<&'static str> {
    match mime {
        "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// Why the chat completions API cannot take `m`, if it cannot.
pub(crate) fn unsupported(m: &Media) -> Option<String> {
    match m.kind {
        MediaKind::Image => match m.mime_type.as_str() {
            "image/png" | "image/jpeg" | "image/gif" | "image/webp" => None,
            other => Some(format!("the API takes no {other} images")),
        },
        MediaKind::Audio => match audio_format(&m.mime_type) {
            Some(_) => None,
            None => Some(format!(
                "the API takes audio as WAV or MP3 only, not {}",
                m.mime_type
            )),
        },
    }
}

/// `Authorization: Bearer <key>` when there is a key.
pub(crate) fn headers(key: Option<&str>) -> Vec<(&'static str, String)> {
    key.map(|k| vec![("authorization", format!("Bearer {k}"))])
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::Sampling;
    use serde_json::json;

    #[test]
    fn requests_carry_the_model_messages_tools_and_sampling() {
        let tools = vec![ToolSpec {
            name: "files_read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object"}),
            annotations: None,
        }];
        let sampling = Sampling {
            temperature: Some(0.0),
            top_p: None,
            max_output_tokens: Some(99),
            seed: Some(3),
        };
        let mut extra = Map::new();
        extra.insert("parallel_tool_calls".into(), json!(false));
        let p = CallParams {
            model: "gpt-4.1-mini",
            system: "sys",
            tools: &tools,
            sampling: &sampling,
            max_output_tokens: Some(50),
            extra: &extra,
        };
        let mut messages = start("sys");
        messages.push(user("hi"));
        let body = request(&p, &messages);
        assert_eq!(
            body,
            json!({
                "model": "gpt-4.1-mini",
                "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function": {"name": "files_read", "description": "Read a file", "parameters": {"type": "object"}}}],
                "temperature": 0.0,
                "max_completion_tokens": 50,
                "seed": 3,
                "parallel_tool_calls": false
            })
        );
    }

    #[test]
    fn responses_give_text_calls_and_usage() {
        let body = json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "files_read", "arguments": "{\"path\":\"a.txt\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "files_write", "arguments": "{\"path\": "}},
                    {"type": "function", "function": {"name": "files_list", "arguments": {"path": ""}}}
                ]}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                      "prompt_tokens_details": {"cached_tokens": 64}}
        });
        let r = parse(&body).unwrap();
        assert_eq!(r.text, None);
        assert_eq!(r.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(r.calls.len(), 3);
        assert_eq!(r.calls[0].args, Ok(json!({"path": "a.txt"})));
        assert!(
            r.calls[1]
                .args
                .as_ref()
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert_eq!(r.calls[1].raw_args, "{\"path\": ");
        assert_eq!(r.calls[2].id, None);
        assert_eq!(r.calls[2].args, Ok(json!({"path": ""})));
        assert_eq!(
            (
                r.usage.input_tokens,
                r.usage.cached_input_tokens,
                r.usage.output_tokens
            ),
            (120, 64, 30)
        );
        let echoed = assistant(&r);
        assert_eq!(
            echoed["tool_calls"][1]["function"]["arguments"],
            "{\"path\": "
        );
        assert!(echoed.get("content").is_none());
    }

    #[test]
    fn an_empty_answer_is_kept_as_empty_text() {
        let r = parse(&json!({"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": "stop"}]}))
            .unwrap();
        assert_eq!((r.text.as_deref(), r.calls.len()), (None, 0));
        assert_eq!(assistant(&r), json!({"role": "assistant", "content": ""}));
        assert_eq!(r.usage, ModelUsage::default());
    }

    #[test]
    fn malformed_responses_are_errors_with_a_reason() {
        assert!(
            parse(&json!({"choices": []}))
                .unwrap_err()
                .contains("no choices")
        );
        assert!(
            parse(&json!({"error": {"message": "x"}}))
                .unwrap_err()
                .contains("no choices")
        );
        assert!(parse(&json!({"choices": [{"nope": 1}]})).is_err());
    }
}
