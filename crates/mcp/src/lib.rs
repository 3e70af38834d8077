//! The office over MCP: Bureau's world tools served to MCP clients.
//!
//! Every world tool ([`bureau_world::World::tool_specs`]) is an MCP tool with the same name,
//! description and JSON schema. A call goes through the *current*
//! [`ToolSession`](bureau_agents::ToolSession) of the trial, so it is recorded in the
//! trajectory, counted against the turn's limits and logged in the world with actor `agent` —
//! exactly as a call from a built-in agent. Results carry the
//! tool's JSON as structured content plus a readable text rendering ([`render_text`]); a tool
//! error, a limit reached or a call between turns is a tool result with `isError: true` and
//! the message, never a protocol error.
//!
//! Three ways to serve it:
//!
//! * [`TrialEndpoint`] — streamable HTTP on 127.0.0.1, one endpoint and one secret bearer
//!   token per trial. It runs its own tokio runtime on a background thread, so the rest of
//!   Bureau stays synchronous. The run loop swaps the current session in and out with
//!   [`TrialEndpoint::set_session`] at each turn.
//! * [`Office::serve_stdio`] — the same tools over the process's stdin/stdout.
//! * [`Play`] — `bureau mcp --task <dir>`: a task played by hand over stdio, with three play
//!   tools (`task_prompt`, `task_next_turn`, `task_finish`) beside the world tools.
//!
//! [`bridge_stdio`] connects a stdio-only client to a running trial's HTTP endpoint
//! (`bureau mcp --trial <url>`).
//!
//! The MCP implementation is the official Rust SDK (`rmcp`); no type of it appears in this
//! crate's public API.

mod bridge;
mod handler;
mod http;
mod jsonrpc;
mod office;
mod play;
mod render;

pub use bridge::{bridge_io, bridge_stdio};
pub use http::{TOKEN_BYTES, TrialEndpoint};
pub use jsonrpc::{INVALID_REQUEST, MAX_DEPTH, MAX_MESSAGE_BYTES, PARSE_ERROR};
pub use office::{NO_TURN, Office};
pub use play::{PLAY_TOOLS, Play, PlayOutcome};
pub use render::render_text;

/// What went wrong serving MCP. Tool errors are not `McpError`s: they go back to the client
/// as tool results.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The endpoint could not listen.
    #[error("cannot listen on {addr}: {source} — pick another port or free this one")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// The endpoint would listen on a non-loopback address.
    #[error("refusing to serve on {addr}: trial endpoints listen on loopback addresses only")]
    NotLoopback { addr: String },
    /// The async runtime or its thread could not be started.
    #[error("cannot start the MCP server's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// No randomness for the bearer token.
    #[error("cannot draw a random bearer token: {0}")]
    Random(String),
    /// A session of another world was given to an endpoint.
    #[error(
        "the tool session belongs to another world than this endpoint's — make one endpoint per trial"
    )]
    ForeignSession,
    /// The MCP connection failed (handshake, transport).
    #[error("MCP {context}: {message}")]
    Protocol { context: String, message: String },
    /// Play mode: the task is invalid (its checks do not compile, ...).
    #[error(transparent)]
    Task(#[from] bureau_core::TaskErrors),
    /// Play mode: the task's world could not be set up.
    #[error("{0}")]
    Play(String),
}

pub(crate) fn protocol_error(context: &str, e: impl std::fmt::Display) -> McpError {
    McpError::Protocol {
        context: context.to_string(),
        message: e.to_string(),
    }
}
