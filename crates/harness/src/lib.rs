//! Third-party agent harnesses as Bureau agents: Claude Code, Codex CLI, OpenHands, OpenClaw,
//! Hermes, or any command.
//!
//! A harness agent ([`CommandAgent`]) serves the trial's world over MCP
//! ([`bureau_mcp::TrialEndpoint`], streamable HTTP on 127.0.0.1 behind a per-trial bearer
//! token), writes the MCP configuration into a private directory outside the workspace, and
//! runs the harness headless once per turn with the workspace as working directory
//! ([`adapter`] has each harness's invocation and configuration). The prompt is one argument
//! (or a file), never given to a shell. A turn that runs past its time limit ends with the
//! harness's whole process group killed and a `limit_reached` step; a harness that cannot be
//! started or exits non-zero is an [`bureau_agents::AgentError`] (the trial is `error`, not
//! failed), quoting the end of its stderr.
//!
//! The harness's output is parsed ([`stream`]) into the trajectory: assistant messages, its
//! own tool calls and results (`note` steps marked `harness_tool_call`; the calls it makes to
//! Bureau's MCP server are recorded by the tool session as `tool_call` steps, and not again),
//! the final message, the session id (for resuming next turn), and usage (one `model_call`
//! step per turn with the harness's token totals and cost when it reports one).
//!
//! [`Harnesses`] is the [`HarnessMaker`] the `bureau` command gives its
//! [`bureau_agents::AgentCatalog`], so that `--agent claude-code`, `--agent
//! command:<template>` and `harness = ...` agents of an agents file run.

pub mod adapter;
mod agent;
pub mod process;
pub mod stream;

use bureau_agents::harness::{HarnessDef, HarnessMaker};
use bureau_agents::{Agent, AgentError};

pub use agent::CommandAgent;

/// Makes [`CommandAgent`]s for an [`bureau_agents::AgentCatalog`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Harnesses;

impl HarnessMaker for Harnesses {
    fn make(&self, name: &str, def: &HarnessDef) -> Result<Box<dyn Agent>, AgentError> {
        Ok(Box::new(CommandAgent::new(name, def.clone())?))
    }
}

/// A catalog that also makes harness agents.
pub fn catalog() -> bureau_agents::AgentCatalog {
    bureau_agents::AgentCatalog::new().with_harnesses(std::sync::Arc::new(Harnesses))
}
