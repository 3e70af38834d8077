//! Code hosting: git repositories, merge requests, repository issues, wikis.
//!
//! Seeded from `world/code/`; documented in `docs/services/code.md`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{World, WorldError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeState {}

impl CodeState {
    /// What checks see as `w.code` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        json!({})
    }
}

/// Seed the service from `dir` (`world/code/`; absent = empty).
pub(crate) fn seed(_world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    Ok(())
}

/// The code state to store in a snapshot (hosted repositories' files go to the blob store).
pub(crate) fn snapshot_state(world: &World) -> Result<CodeState, WorldError> {
    Ok(world.code.clone())
}

/// Put the code state of a snapshot back, hosted repositories included.
pub(crate) fn restore_state(
    world: &mut World,
    state: &CodeState,
    _blobs: &Path,
) -> Result<(), WorldError> {
    world.code = state.clone();
    Ok(())
}
