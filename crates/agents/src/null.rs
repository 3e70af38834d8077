//! The `null` agent: does nothing. A task that the null agent passes does not test anything.

use bureau_core::task::Task;

use crate::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};

/// Makes no tool call and says nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullAgent;

impl Agent for NullAgent {
    fn name(&self) -> String {
        "null".to_string()
    }

    fn start_trial(&mut self, _task: &Task) -> Result<(), AgentError> {
        Ok(())
    }

    fn run_turn(
        &mut self,
        _turn: &TurnInput,
        _tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        Ok(TurnOutput::default())
    }
}
