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

/// The outcome of one tool call: structured JSON on success (with any pictures or sounds the
/// tool returns beside it), an actionable message on error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok {
        value: Value,
        /// Images and audio the tool returns as media (MCP `image` / `audio` content), each
        /// also described in `value`. Empty for most tools.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        media: Vec<Media>,
    },
    Error {
        message: String,
    },
}

impl ToolOutcome {
    /// A success with no media.
    pub fn ok(value: Value) -> ToolOutcome {
        ToolOutcome::Ok {
            value,
            media: Vec::new(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, ToolOutcome::Error { .. })
    }

    /// The media of a success (none for an error).
    pub fn media(&self) -> &[Media] {
        match self {
            ToolOutcome::Ok { media, .. } => media,
            ToolOutcome::Error { .. } => &[],
        }
    }

    /// This outcome as a trajectory keeps it: media without their bytes (their digest and
    /// size stay, and the bytes are in the trial's blob store under that digest).
    pub fn without_media_data(&self) -> ToolOutcome {
        match self {
            ToolOutcome::Ok { value, media } => ToolOutcome::Ok {
                value: value.clone(),
                media: media
                    .iter()
                    .map(|m| Media {
                        data: String::new(),
                        ..m.clone()
                    })
                    .collect(),
            },
            e => e.clone(),
        }
    }
}

/// What a [`Media`] part is: what MCP calls `image` and `audio` content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    Image,
    Audio,
}

impl MediaKind {
    pub fn name(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Audio => "audio",
        }
    }
}

/// A picture or a sound a tool returns: a photo read with `files_read`, a page of a scanned
/// PDF, a key frame of a video, a voicemail. Always bounded (see `bureau_media`'s limits) and
/// always described in text beside it (the tool's JSON value), so an agent that cannot see or
/// hear still learns what is there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    pub kind: MediaKind,
    /// `image/png`, `image/jpeg`, `audio/wav`, ...
    pub mime_type: String,
    /// What this part shows, for people and text-only models: `photo.jpg, 1200×900`,
    /// `page 2 of 3 of scan.pdf`, `frame at 00:00:04 of clip.mp4`.
    pub label: String,
    /// The bytes, base64 (standard alphabet, padded). Empty in a stored trajectory.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub data: String,
    /// Size of the bytes.
    pub bytes: u64,
    /// blake3 of the bytes (hex): the name of their blob in the trial's `world/blobs/`.
    pub blake3: String,
}

/// The verbs of tools whose calls only read. A world tool is named `<service>_<verb>_...`.
const READ_VERBS: &[&str] = &[
    "read",
    "list",
    "search",
    "get",
    "show",
    "view",
    "diff",
    "log",
    "status",
    "history",
    "find",
    "ocr",
    "free",
    "availability",
    "info",
    "whois",
    "members",
    "query",
    "lookup",
    "describe",
    "check",
];

/// Whether a call of `tool` only reads (changes no state), by its verb: mutation testing does
/// not drop such calls, and the viewer places colleagues' acts after the calls that change
/// something.
pub fn reads_only(tool: &str) -> bool {
    tool.split('_')
        .nth(1)
        .is_some_and(|verb| READ_VERBS.contains(&verb))
}
