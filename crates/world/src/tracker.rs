//! The issue tracker: projects, issues, cycles, modules, comments, state history.
//!
//! Seeded from `world/tracker/`; documented in `docs/services/tracker.md`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{World, WorldError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrackerState {}

impl TrackerState {
    /// What checks see as `w.tracker` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        json!({})
    }
}

/// Seed the service from `dir` (`world/tracker/`; absent = empty).
pub(crate) fn seed(_world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    Ok(())
}
