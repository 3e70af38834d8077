//! Built-in predicates of the sheets service: `sheet_cell` — one cell of a spreadsheet of the
//! service or of a workspace file (.xlsx, .xlsm, .csv, .tsv), compared by type (numbers with a
//! tolerance), optionally required to hold a formula.

use bureau_core::task::{SheetCellFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_formats::sheet::{self, Cell, CellRef, CellValue, Workbook};
use bureau_world::World;
use serde_json::Value;

use super::status;

pub(crate) fn sheet_cell(
    _task: &Task,
    world: &World,
    f: &SheetCellFilter,
) -> (VerdictStatus, String) {
    let failed = |msg: String| (VerdictStatus::Failed, msg);
    let (label, owned): (String, Option<Workbook>) = match (&f.spreadsheet, &f.file) {
        (Some(name), None) => match world.sheets().get(name) {
            Some(_) => (format!("spreadsheet '{name}'"), None),
            None => return failed(format!("there is no spreadsheet '{name}'")),
        },
        (None, Some(path)) => {
            let bytes = match world.files().read_bytes(path) {
                Ok(b) => b,
                Err(e) => return failed(format!("file `{path}`: {e}")),
            };
            match sheet::read_file(path, &bytes) {
                Ok(wb) => (format!("file `{path}`"), Some(wb)),
                Err(e) => return failed(format!("file `{path}` cannot be read: {e}")),
            }
        }
        _ => {
            return (
                VerdictStatus::Error,
                "sheet_cell needs exactly one of `spreadsheet` (a spreadsheet of the service) or `file` (a workspace .xlsx/.csv)".into(),
            );
        }
    };
    let wb = match (&owned, &f.spreadsheet) {
        (Some(wb), _) => wb,
        (None, Some(name)) => match world.sheets().get(name) {
            Some(wb) => wb,
            None => return failed(format!("there is no spreadsheet '{name}'")),
        },
        (None, None) => return failed("no spreadsheet".into()),
    };
    let Some(at) = CellRef::parse(&f.cell) else {
        return (
            VerdictStatus::Error,
            format!("sheet_cell: `{}` is not an A1 cell reference", f.cell),
        );
    };
    let s = match &f.sheet {
        Some(name) => match wb.sheet(name) {
            Some(s) => s,
            None => {
                let names: Vec<&str> = wb.sheets.iter().map(|s| s.name.as_str()).collect();
                return failed(format!(
                    "{label} has no sheet '{name}' (sheets: {})",
                    names.join(", ")
                ));
            }
        },
        None => match wb.sheets.first() {
            Some(s) => s,
            None => return failed(format!("{label} has no sheets")),
        },
    };
    let cell = s.get(at).cloned().unwrap_or_default();
    let found = describe(&cell);
    let place = format!("{label}, {}!{at}", s.name);
    if let Some(want) = &f.formula_contains {
        match &cell.formula {
            None => return failed(format!("{place} holds no formula (it is {found})")),
            Some(formula) if !formula.to_lowercase().contains(&want.to_lowercase()) => {
                return failed(format!(
                    "{place} has formula {formula} which does not contain '{want}'"
                ));
            }
            Some(_) => {}
        }
    }
    let ok = matches(&cell.value, &f.equals, f.tolerance);
    let expected = match &f.equals {
        Value::Number(n) if f.tolerance > 0.0 => format!("{n} ± {}", f.tolerance),
        other => other.to_string(),
    };
    let detail = if ok {
        format!("{place} is {found}, as expected ({expected})")
    } else {
        format!("{place} is {found}; expected {expected}")
    };
    (status(ok), detail)
}

fn describe(cell: &Cell) -> String {
    let v = match &cell.value {
        CellValue::Empty => "empty".to_string(),
        CellValue::Text(t) => format!("text {t:?}"),
        v => format!("{} {}", v.type_name(), v.display()),
    };
    match &cell.formula {
        Some(f) => format!("{v} (formula {f})"),
        None => v,
    }
}

/// Typed equality: numbers only equal numbers (within the tolerance), booleans booleans,
/// strings text (trimmed, case-insensitive), ISO dates dates, `#...` errors; null means empty.
fn matches(v: &CellValue, want: &Value, tolerance: f64) -> bool {
    match (want, v) {
        (Value::Null, CellValue::Empty) => true,
        (Value::Number(n), CellValue::Number(x)) => {
            let Some(n) = n.as_f64() else { return false };
            let tol = tolerance.abs().max(1e-9 * n.abs().max(1.0));
            (x - n).abs() <= tol
        }
        (Value::Bool(b), CellValue::Bool(x)) => b == x,
        (Value::String(s), CellValue::Text(t)) => {
            s.trim().to_lowercase() == t.trim().to_lowercase()
        }
        (Value::String(s), CellValue::Error(e)) => s.trim().eq_ignore_ascii_case(e),
        (Value::String(s), d @ (CellValue::Date(_) | CellValue::DateTime(_))) => {
            let want = CellValue::infer(s);
            match (&want, d) {
                (CellValue::Date(a), CellValue::Date(b)) => a == b,
                (CellValue::DateTime(a), CellValue::DateTime(b)) => a == b,
                (CellValue::Date(a), CellValue::DateTime(b)) => {
                    *a == b.date() && b.time() == chrono::NaiveTime::MIN
                }
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_matching() {
        let n = CellValue::Number(1250.0);
        assert!(matches(&n, &json!(1250), 0.0));
        assert!(matches(&n, &json!(1250.4), 0.5));
        assert!(!matches(&n, &json!(1251), 0.5));
        assert!(
            !matches(&n, &json!("1250"), 0.0),
            "no rendered-string matching"
        );
        assert!(!matches(&CellValue::Text("1250".into()), &json!(1250), 0.0));
        assert!(matches(
            &CellValue::Text(" North ".into()),
            &json!("north"),
            0.0
        ));
        assert!(matches(&CellValue::Bool(true), &json!(true), 0.0));
        assert!(!matches(&CellValue::Bool(true), &json!(1), 0.0));
        assert!(matches(&CellValue::Empty, &json!(null), 0.0));
        assert!(matches(
            &CellValue::Error("#DIV/0!".into()),
            &json!("#div/0!"),
            0.0
        ));
        let d = CellValue::infer("2026-03-01");
        assert!(matches(&d, &json!("2026-03-01"), 0.0));
        assert!(!matches(&d, &json!("2026-03-02"), 0.0));
    }
}
