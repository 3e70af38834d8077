//! `files_read` of spreadsheet files (.xlsx, .xlsm, .csv, .tsv): the workbook as text with
//! sheet names, cell coordinates and formulas (`bureau_formats::sheet::Workbook::to_text`).

use serde_json::{Value, json};

/// The `files_read` result for a spreadsheet file, or `None` when `path` is not one.
/// A file that cannot be read as a spreadsheet is an error the agent can act on.
pub(super) fn read(path: &str, bytes: &[u8]) -> Option<Result<Value, String>> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    if !matches!(ext.as_str(), "xlsx" | "xlsm" | "csv" | "tsv") {
        return None;
    }
    Some(match bureau_formats::sheet::read_file(path, bytes) {
        Ok(wb) => Ok(json!({
            "path": path,
            "size": bytes.len(),
            "format": ext,
            "text": wb.to_text(),
        })),
        Err(e) => Err(format!("{e} (files_read shows spreadsheets as text)")),
    })
}
