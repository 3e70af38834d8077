//! The spreadsheets service: spreadsheets of sheets with typed cells and formulas.
//!
//! Seeded from `world/sheets/`; documented in `docs/services/sheets.md`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{World, WorldError};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SheetsState {}

impl SheetsState {
    /// What checks see as `w.sheets` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        json!({})
    }
}

/// Seed the service from `dir` (`world/sheets/`; absent = empty).
pub(crate) fn seed(_world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    Ok(())
}
