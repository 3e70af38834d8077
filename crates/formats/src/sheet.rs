//! Spreadsheets: the workbook model (sheets of typed cells with formulas), A1 references,
//! the formula evaluator, and .xlsx/.xlsm/.csv/.tsv reading and writing.

use crate::FormatError;

/// A workbook: sheets in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workbook {}

impl Workbook {
    /// The workbook as text for an agent: sheet names, then `A1: value` lines.
    pub fn to_text(&self) -> String {
        String::new()
    }
}

/// Read a spreadsheet file by its name's extension (.xlsx, .xlsm, .csv, .tsv).
pub fn read_file(name: &str, _bytes: &[u8]) -> Result<Workbook, FormatError> {
    Err(FormatError::InvalidDocument {
        file: name.to_string(),
        reason: "spreadsheets cannot be read yet".into(),
    })
}
