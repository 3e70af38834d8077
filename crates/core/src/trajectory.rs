//! What an agent did during a trial, one step per line of `trajectory.jsonl`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::time::WorldTime;
use crate::tool::ToolOutcome;

/// One line of a trajectory. `turn` is 1-based.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub turn: u32,
    #[serde(flatten)]
    pub kind: StepKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StepKind {
    /// The wake-up prompt the agent received at the start of the turn.
    Prompt { time: WorldTime, text: String },
    /// A world tool call and its outcome.
    ToolCall {
        tool: String,
        args: Value,
        #[serde(flatten)]
        outcome: ToolOutcome,
    },
    /// Text the agent said (its final message of the turn, or intermediate text).
    Message { text: String },
    /// A limit ended the turn early (`max_steps`, `wall_seconds`, ...).
    LimitReached { limit: String, detail: String },
    /// Anything else an agent kind wants to keep.
    Note { data: Value },
    /// One call of a model API by a model-driven agent (`llm`): the raw request and response
    /// JSON, the tokens it used and what it cost, and the retries it took.
    ModelCall(ModelCall),
    /// The simulated user's reply after the turn's work fell short of the feedback threshold
    /// (AgencyBench's feedback rounds, `bureau run --feedback <n>`): round `round` (from 1) of
    /// the turn, naming the rubric items still failed. The agent continues the same turn.
    Feedback {
        round: u32,
        text: String,
        /// Ids of the rubric items the message is about.
        #[serde(default)]
        failed: Vec<String>,
    },
}

/// One model API call, as recorded in the trajectory (`"type": "model_call"`).
///
/// `request` is the JSON body exactly as sent, except that what an earlier call of the same
/// trial already recorded is left out to keep trajectories linear in size: the first
/// `messages_elided` entries of the body's `messages` array (the conversation so far) and,
/// when `tools_elided`, its `tools` array. The full body of call *n* is call *n*'s `request`
/// with the `messages` of calls 1..*n* concatenated before its own and the last recorded
/// `tools` put back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCall {
    /// `openai` or `anthropic` (the wire format).
    pub provider: String,
    pub model: String,
    pub request: Value,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub messages_elided: u64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_elided: bool,
    /// The response body as received (`null` when every attempt failed).
    pub response: Value,
    pub usage: ModelUsage,
    /// Failed attempts before the one that answered (or before giving up), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<ModelRetry>,
    /// Why the call failed after its retries (the trial then ends as `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall-clock milliseconds the call took, retries and their waits included (shown by
    /// `bureau view`; part of no score). Absent where it was not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<u64>,
    /// Milliseconds the call waited for the agent's requests-per-minute budget before it was
    /// sent (`bureau run --rpm`); not part of `wall_ms`. Absent when it did not wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_wait_ms: Option<u64>,
}

/// Tokens and cost of one model call.
///
/// `input_tokens` counts every input token, cached ones included (OpenAI's `prompt_tokens`;
/// Anthropic's `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    pub input_tokens: u64,
    /// Input tokens read from the provider's prompt cache (a part of `input_tokens`).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Input tokens written to the prompt cache (Anthropic; a part of `input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, from the agents file's price table; absent when the model has no price.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "optional_number"
    )]
    pub cost_usd: Option<f64>,
}

/// One failed attempt of a model call and the wait before the next one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRetry {
    /// What went wrong (`429 Too Many Requests`, `connection reset`, ...).
    pub reason: String,
    /// The wait before the next attempt, in milliseconds (0 after the last one).
    pub wait_ms: u64,
}

/// An optional float read through [`Value`]: with `serde_json`'s `arbitrary_precision`
/// feature (which starlark turns on for every crate of a build that has it), a float inside a
/// flattened struct such as [`Step`] reaches the deserializer as a map, which `f64` refuses.
fn optional_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("expected a number, found {v}"))),
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Step {
    /// The model call of this step, if it is one.
    pub fn as_model_call(&self) -> Option<&ModelCall> {
        match &self.kind {
            StepKind::ModelCall(call) => Some(call),
            _ => None,
        }
    }

    /// The tool call of this step, if it is one.
    pub fn as_tool_call(&self) -> Option<(&str, &Value, &ToolOutcome)> {
        match &self.kind {
            StepKind::ToolCall {
                tool,
                args,
                outcome,
            } => Some((tool, args, outcome)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn model_calls_round_trip_as_one_flat_json_line() {
        let step = Step {
            turn: 2,
            kind: StepKind::ModelCall(ModelCall {
                provider: "openai".into(),
                model: "gpt-4.1-mini".into(),
                request: json!({"model": "gpt-4.1-mini", "messages": []}),
                messages_elided: 3,
                tools_elided: true,
                response: json!({"id": "x"}),
                usage: ModelUsage {
                    input_tokens: 100,
                    cached_input_tokens: 40,
                    cache_write_tokens: 0,
                    output_tokens: 7,
                    cost_usd: Some(0.5),
                },
                retries: vec![ModelRetry {
                    reason: "429".into(),
                    wait_ms: 1000,
                }],
                error: None,
                wall_ms: Some(1234),
                budget_wait_ms: None,
            }),
        };
        let line = serde_json::to_value(&step).unwrap();
        assert_eq!(line["type"], "model_call");
        assert_eq!(line["turn"], 2);
        assert_eq!(line["provider"], "openai");
        assert_eq!(line["usage"]["cached_input_tokens"], 40);
        assert!(line.get("error").is_none());
        assert_eq!(line["wall_ms"], 1234);
        let back: Step = serde_json::from_value(line).unwrap();
        assert_eq!(back, step);
        assert_eq!(back.as_model_call().unwrap().messages_elided, 3);
    }
}
