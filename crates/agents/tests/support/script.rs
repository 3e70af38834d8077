//! Scripted model answers in each wire format, as the real APIs write them.

use serde_json::{Value, json};

use super::fake::Reply;

/// Tokens a scripted answer reports.
#[derive(Debug, Clone, Copy)]
pub struct Tokens {
    /// Every input token, cached ones included.
    pub input: u64,
    /// Read from the prompt cache (a part of `input`).
    pub cached: u64,
    pub output: u64,
}

pub const fn tokens(input: u64, cached: u64, output: u64) -> Tokens {
    Tokens {
        input,
        cached,
        output,
    }
}

pub mod openai {
    use super::*;

    fn completion(message: Value, finish: &str, t: Tokens) -> Reply {
        Reply::ok(json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": t.input,
                "completion_tokens": t.output,
                "total_tokens": t.input + t.output,
                "prompt_tokens_details": {"cached_tokens": t.cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0}
            },
            "service_tier": "default",
            "system_fingerprint": "fp_fake"
        }))
    }

    /// An answer calling tools: (id, name, arguments as JSON text, sent as is).
    pub fn raw_calls(calls: &[(&str, &str, &str)], t: Tokens) -> Reply {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(id, name, args)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
            })
            .collect();
        completion(
            json!({"role": "assistant", "content": null, "tool_calls": calls, "refusal": null, "annotations": []}),
            "tool_calls",
            t,
        )
    }

    /// An answer calling tools: (id, name, arguments).
    pub fn calls(calls: &[(&str, &str, Value)], t: Tokens) -> Reply {
        let raw: Vec<(String, String, String)> = calls
            .iter()
            .map(|(id, name, args)| (id.to_string(), name.to_string(), args.to_string()))
            .collect();
        let borrowed: Vec<(&str, &str, &str)> = raw
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        raw_calls(&borrowed, t)
    }

    /// An answer with text only (the turn's end).
    pub fn text(text: &str, t: Tokens) -> Reply {
        completion(
            json!({"role": "assistant", "content": text, "refusal": null, "annotations": []}),
            "stop",
            t,
        )
    }
}

pub mod anthropic {
    use super::*;

    fn message(content: Vec<Value>, stop: &str, t: Tokens) -> Reply {
        // Anthropic's input_tokens excludes cache reads.
        Reply::ok(json!({
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": {
                "input_tokens": t.input - t.cached,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": t.cached,
                "output_tokens": t.output,
                "service_tier": "standard"
            }
        }))
    }

    /// An answer calling tools, with optional text first: (id, name, input).
    pub fn calls(text: Option<&str>, calls: &[(&str, &str, Value)], t: Tokens) -> Reply {
        let mut content: Vec<Value> = text
            .map(|s| json!({"type": "text", "text": s}))
            .into_iter()
            .collect();
        content.extend(calls.iter().map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        ));
        message(content, "tool_use", t)
    }

    pub fn text(text: &str, t: Tokens) -> Reply {
        message(vec![json!({"type": "text", "text": text})], "end_turn", t)
    }

    /// An answer with no content at all (models do this).
    pub fn empty(t: Tokens) -> Reply {
        message(Vec::new(), "end_turn", t)
    }
}
