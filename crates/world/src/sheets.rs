//! The spreadsheets service: spreadsheets (by name) of sheets with typed cells and formulas.
//!
//! Seeded from `world/sheets/` (`*.xlsx`, `*.xlsm`, `*.csv`, `*.tsv`; the file stem is the
//! spreadsheet's name); documented in `docs/services/sheets.md`.

use std::collections::BTreeMap;
use std::path::Path;

use bureau_formats::sheet::{self, Workbook};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{World, WorldError};

/// Every spreadsheet of the office, by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SheetsState {
    pub spreadsheets: BTreeMap<String, Workbook>,
}

impl SheetsState {
    /// The stored name of a spreadsheet (case-insensitive lookup).
    pub fn resolve(&self, name: &str) -> Option<&str> {
        let wanted = name.trim().to_lowercase();
        self.spreadsheets
            .keys()
            .find(|k| k.to_lowercase() == wanted)
            .map(String::as_str)
    }

    /// A spreadsheet by name (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&Workbook> {
        self.resolve(name).and_then(|k| self.spreadsheets.get(k))
    }

    pub(crate) fn get_mut(&mut self, name: &str) -> Option<&mut Workbook> {
        let key = self.resolve(name)?.to_string();
        self.spreadsheets.get_mut(&key)
    }

    /// What checks see as `w.sheets`:
    /// `spreadsheets` = dict name → `{name, sheet_names, sheets}`, `sheets` = dict sheet name
    /// → `{name, cells}`, `cells` = dict A1 → `{type, value, formula}` (`formula` None for a
    /// plain value).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        let mut books = serde_json::Map::new();
        for (name, wb) in &self.spreadsheets {
            books.insert(name.clone(), workbook_view(name, wb));
        }
        json!({"spreadsheets": {"$dict": books}})
    }
}

/// The check view of one workbook (also used for workspace files by `xlsx(path)`).
pub fn workbook_view(name: &str, wb: &Workbook) -> Value {
    let mut sheets = serde_json::Map::new();
    for s in &wb.sheets {
        let mut cells = serde_json::Map::new();
        for (c, cell) in &s.cells {
            let mut v = cell.to_json();
            if let Some(o) = v.as_object_mut() {
                o.entry("formula").or_insert(Value::Null);
            }
            cells.insert(c.to_string(), v);
        }
        sheets.insert(
            s.name.clone(),
            json!({"name": s.name, "cells": {"$dict": cells}}),
        );
    }
    json!({
        "name": name,
        "sheet_names": wb.sheets.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        "sheets": {"$dict": sheets},
    })
}

/// Seed the service from `dir` (`world/sheets/`; absent = empty): every .xlsx/.xlsm/.csv/.tsv
/// file becomes a spreadsheet named after its file stem.
pub(crate) fn seed(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| WorldError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if !matches!(ext.as_str(), "xlsx" | "xlsm" | "csv" | "tsv") {
            return Err(WorldError::Seed {
                path: path.clone(),
                message: "world/sheets/ holds spreadsheets only: .xlsx, .xlsm, .csv or .tsv files (the file stem is the spreadsheet's name)".into(),
            });
        }
        let bytes = std::fs::read(&path).map_err(|e| WorldError::io(&path, e))?;
        let wb = sheet::read_file(&file_name, &bytes).map_err(|e| WorldError::Seed {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if world.sheets.resolve(&name).is_some() {
            return Err(WorldError::Seed {
                path: path.clone(),
                message: format!(
                    "two files in world/sheets/ are named {name:?}; spreadsheet names must be unique"
                ),
            });
        }
        world.sheets.spreadsheets.insert(name, wb);
    }
    Ok(())
}
