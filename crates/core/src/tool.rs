//! Tool calls and tool descriptions.
//!
//! Tool names use `service_action` (`files_read`, `mail_send`): letters, digits and `_` only,
//! because the OpenAI and Anthropic function-calling APIs reject dots in names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call of a world tool, as an agent (or `solution/`) makes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub args: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// What a tool is, for agents and MCP clients: name, description, JSON schema of its
/// arguments, and what it does to the office (MCP tool annotations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// MCP's tool annotations (hints, as the protocol calls them, for clients' approval policies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool changes nothing.
    pub read_only_hint: bool,
    /// The tool may overwrite or remove (else it only adds); meaningful when not read-only.
    pub destructive_hint: bool,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent_hint: bool,
    /// The tool reaches outside the (simulated) office.
    pub open_world_hint: bool,
}

/// The outcome of one tool call: structured JSON on success, an actionable message on error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok { value: Value },
    Error { message: String },
}

impl ToolOutcome {
    pub fn is_error(&self) -> bool {
        matches!(self, ToolOutcome::Error { .. })
    }
}
