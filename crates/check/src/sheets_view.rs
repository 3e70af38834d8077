//! Spreadsheet readers for checks: `xlsx(path)` and `csv(path)` — typed cells and formulas of
//! workspace files (see docs/services/sheets.md). Both return the shape of one spreadsheet of
//! `w.sheets.spreadsheets`: `{name, sheet_names, sheets}` where `sheets[name].cells["B7"]`
//! is `{type, value, formula}`.

use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::dict::AllocDict;
use starlark::values::list::AllocList;
use starlark::values::structs::AllocStruct;
use starlark::values::{Heap, Value};

use crate::globals::fail;

/// JSON to Starlark on the evaluation heap, with `{"$dict": {...}}` as a dict (as in views).
fn to_starlark<'v>(heap: Heap<'v>, v: &serde_json::Value) -> Value<'v> {
    use serde_json::Value as J;
    match v {
        J::Object(m) => {
            if m.len() == 1
                && let Some(J::Object(d)) = m.get("$dict")
            {
                let items: Vec<(String, Value<'v>)> = d
                    .iter()
                    .map(|(k, x)| (k.clone(), to_starlark(heap, x)))
                    .collect();
                return heap.alloc(AllocDict(items));
            }
            let fields: Vec<(String, Value<'v>)> = m
                .iter()
                .map(|(k, x)| (k.clone(), to_starlark(heap, x)))
                .collect();
            heap.alloc(AllocStruct(fields))
        }
        J::Array(a) => heap.alloc(AllocList(a.iter().map(|x| to_starlark(heap, x)))),
        other => heap.alloc(other.clone()),
    }
}

fn read<'v>(
    func: &str,
    path: &str,
    exts: &[&str],
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Value<'v>> {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if !exts.contains(&ext.as_str()) {
        return fail(format!(
            "{func}(\"{path}\"): expected a file ending in {}",
            exts.iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    let bytes = crate::documents::bytes(func, path, eval)?;
    match bureau_formats::sheet::read_file(path, &bytes) {
        Ok(wb) => {
            let view = bureau_world::sheets::workbook_view(path, &wb);
            Ok(to_starlark(eval.heap(), &view))
        }
        Err(e) => fail(format!("{func}(\"{path}\"): {e}")),
    }
}

#[starlark_module]
pub(crate) fn sheet_functions(builder: &mut GlobalsBuilder) {
    /// A workspace .xlsx/.xlsm file: `{name, sheet_names, sheets}`; `sheets["Q1"].cells["B7"]`
    /// is `{type, value, formula}` (type: number, text, bool, date, datetime, error).
    fn xlsx<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        read("xlsx", path, &["xlsx", "xlsm"], eval)
    }

    /// A workspace .csv/.tsv file, typed like a spreadsheet (numbers, booleans, dates, text):
    /// one sheet named after the file.
    fn csv<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        read("csv", path, &["csv", "tsv"], eval)
    }
}
