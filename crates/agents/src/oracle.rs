//! The `oracle` agent: replays the task's reference solution (`solution/<n>.jsonl`) through
//! the real tools, so a task proves that its checks can be passed.
//!
//! A tool error during the replay is not an agent error: it is recorded like any tool
//! outcome, the oracle goes on with the next call, and the checks decide (so `bureau
//! validate` reports the task as failing for the oracle, which is what is wrong).

use bureau_core::task::Task;
use bureau_core::tool::ToolCall;

use crate::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};

#[derive(Debug, Clone, Default)]
pub struct OracleAgent {
    solution: Vec<Vec<ToolCall>>,
    messages: Vec<Option<String>>,
}

impl OracleAgent {
    pub fn new() -> OracleAgent {
        OracleAgent::default()
    }
}

impl Agent for OracleAgent {
    fn name(&self) -> String {
        "oracle".to_string()
    }

    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        if !task.dir.join("solution").is_dir() {
            // Scoring the empty replay would blame the task's checks (or give a 0 that looks
            // like an agent's failure); the oracle cannot play this task at all.
            return Err(AgentError::Failed(format!(
                "task `{}` has no solution/ directory ({}), so the oracle has nothing to replay — add solution/<turn>.jsonl with one {{\"tool\", \"args\"}} line per call",
                task.id,
                task.dir.join("solution").display()
            )));
        }
        self.solution = task.solution.clone();
        self.messages = task.solution_messages.clone();
        Ok(())
    }

    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        // The solution is the whole of the turn's work: nothing to add after feedback.
        if turn.round > 0 {
            return Ok(TurnOutput::default());
        }
        let calls = turn
            .index
            .checked_sub(1)
            .and_then(|i| self.solution.get(i as usize))
            .map(|c| c.as_slice())
            .unwrap_or(&[]);
        for call in calls {
            if tools.call(&call.tool, call.args.clone()).is_err() {
                // A limit ended the turn; the session recorded it.
                break;
            }
        }
        // `solution/<n>.message`: the answer in words the task asks for, as the turn's
        // final message.
        let final_message = turn
            .index
            .checked_sub(1)
            .and_then(|i| self.messages.get(i as usize))
            .cloned()
            .flatten();
        Ok(TurnOutput { final_message })
    }
}
