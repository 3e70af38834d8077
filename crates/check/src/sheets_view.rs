//! Spreadsheet readers for checks: `xlsx(path)` and `csv(path)` — typed cells and formulas of
//! workspace files (see docs/services/sheets.md).

use starlark::environment::GlobalsBuilder;
use starlark::starlark_module;

#[starlark_module]
pub(crate) fn sheet_functions(builder: &mut GlobalsBuilder) {}
