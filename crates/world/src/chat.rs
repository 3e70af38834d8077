//! Team chat: members, channels, direct messages, threads, mentions, reactions.
//!
//! Seeded from `world/chat/`; documented in `docs/services/chat.md`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{World, WorldError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatState {}

impl ChatState {
    /// What checks see as `w.chat` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        json!({})
    }
}

/// Seed the service from `dir` (`world/chat/`; absent = empty).
pub(crate) fn seed(_world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    Ok(())
}
