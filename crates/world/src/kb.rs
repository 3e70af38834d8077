//! The knowledge base: a tree of markdown pages, databases with typed properties, comments.
//!
//! Seeded from `world/kb/`; documented in `docs/services/kb.md`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{World, WorldError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KbState {}

impl KbState {
    /// What checks see as `w.kb` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        json!({})
    }
}

/// Seed the service from `dir` (`world/kb/`; absent = empty).
pub(crate) fn seed(_world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    Ok(())
}
