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
    /// Anything else an agent kind wants to keep (raw model requests, usage, ...).
    Note { data: Value },
}

impl Step {
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
