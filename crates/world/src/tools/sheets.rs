//! sheets_* tools: a Google-Sheets-like service of spreadsheets with sheets, typed cells,
//! A1 ranges and formulas (see docs/services/sheets.md).

use bureau_core::log::Actor;
use bureau_formats::sheet::{
    self, Cell, CellRef, CellValue, RangeRef, Workbook, a1::MAX_COL, a1::MAX_ROW,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, boolean, integer, parse, schema, string, strings};
use crate::World;

/// Most cells one read returns.
const MAX_READ_CELLS: usize = 5_000;
/// Most cells one write or append may set.
pub(super) const MAX_WRITE_CELLS: usize = 50_000;
/// Most cells in one spreadsheet.
const MAX_BOOK_CELLS: usize = 1_000_000;

fn grid(desc: &str) -> Value {
    json!({
        "type": "array",
        "description": desc,
        "items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}
    })
}

pub(super) const TOOLS: &[Tool] = &[
    Tool {
        name: "sheets_list",
        description: "List the spreadsheets with their sheets (tabs), each sheet's used range and cell count.",
        schema: || schema(&[], &[]),
        run: list,
    },
    Tool {
        name: "sheets_read",
        description: "Read cells of a spreadsheet: typed values (number, text, bool, date, datetime, error) with formulas and their computed values. Without `range`, the sheet's whole used range.",
        schema: || {
            schema(
                &[
                    ("spreadsheet", string("Spreadsheet name")),
                    ("sheet", string("Sheet (tab) name; default the first sheet")),
                    (
                        "range",
                        string("A1 range such as `A1:D20`, `B7`, `B:B` or `Q1!A1:C5`"),
                    ),
                ],
                &["spreadsheet"],
            )
        },
        run: read,
    },
    Tool {
        name: "sheets_write",
        description: "Write a block of values starting at the top-left cell of `range` (row by row). Strings beginning with `=` are formulas (e.g. `=SUM(B2:B9)`); other strings are typed as a spreadsheet does when you type them (`1250` → number, `TRUE` → bool, `2026-03-01` → date; start with `'` to keep text); null clears a cell. Formulas are recomputed, with every cell depending on the change.",
        schema: || {
            schema(
                &[
                    ("spreadsheet", string("Spreadsheet name")),
                    ("sheet", string("Sheet name; default the first sheet")),
                    (
                        "range",
                        string("Top-left cell (`B2`) or a range the values must fit in (`B2:D5`)"),
                    ),
                    (
                        "values",
                        grid("Rows of values, e.g. [[\"Total\", \"=SUM(B2:B9)\"]]"),
                    ),
                ],
                &["spreadsheet", "range", "values"],
            )
        },
        run: write,
    },
    Tool {
        name: "sheets_append_rows",
        description: "Append rows after the last non-empty row of a sheet, starting in column A. Values are typed as in sheets_write.",
        schema: || {
            schema(
                &[
                    ("spreadsheet", string("Spreadsheet name")),
                    ("sheet", string("Sheet name; default the first sheet")),
                    ("rows", grid("Rows to append")),
                ],
                &["spreadsheet", "rows"],
            )
        },
        run: append_rows,
    },
    Tool {
        name: "sheets_find",
        description: "Find cells whose value contains a text (case-insensitive) or equals a number, in one spreadsheet or all.",
        schema: || {
            schema(
                &[
                    (
                        "query",
                        json!({"type": ["string", "number"], "description": "Text to find in cell values, or a number to match exactly"}),
                    ),
                    ("spreadsheet", string("Limit to this spreadsheet")),
                    ("sheet", string("Limit to this sheet")),
                    (
                        "in_formulas",
                        boolean("Also search formula text (default false)"),
                    ),
                    ("max_results", integer("Default 100")),
                ],
                &["query"],
            )
        },
        run: find,
    },
    Tool {
        name: "sheets_add_sheet",
        description: "Add an empty sheet (tab) at the end of a spreadsheet.",
        schema: || {
            schema(
                &[
                    ("spreadsheet", string("Spreadsheet name")),
                    ("sheet", string("Name of the new sheet")),
                ],
                &["spreadsheet", "sheet"],
            )
        },
        run: add_sheet,
    },
    Tool {
        name: "sheets_create",
        description: "Create a new, empty spreadsheet.",
        schema: || {
            schema(
                &[
                    ("name", string("Spreadsheet name (unique)")),
                    ("sheets", strings("Sheet names; default [\"Sheet1\"]")),
                ],
                &["name"],
            )
        },
        run: create,
    },
    Tool {
        name: "sheets_export",
        description: "Export a spreadsheet to a workspace file: .xlsx (every sheet, formulas with their values) or .csv (one sheet's values).",
        schema: || {
            schema(
                &[
                    ("spreadsheet", string("Spreadsheet name")),
                    ("path", string("Workspace path ending in .xlsx or .csv")),
                    (
                        "sheet",
                        string("For .csv: the sheet to export; default the first"),
                    ),
                    (
                        "overwrite",
                        boolean("Replace an existing file (default false)"),
                    ),
                ],
                &["spreadsheet", "path"],
            )
        },
        run: export,
    },
    Tool {
        name: "sheets_import",
        description: "Import a workspace .xlsx/.xlsm/.csv/.tsv file as a new spreadsheet (or replace one with replace=true).",
        schema: || {
            schema(
                &[
                    ("path", string("Workspace file")),
                    (
                        "name",
                        string("Spreadsheet name; default the file name without extension"),
                    ),
                    (
                        "replace",
                        boolean("Replace an existing spreadsheet of that name (default false)"),
                    ),
                ],
                &["path"],
            )
        },
        run: import,
    },
];

fn book<'a>(w: &'a World, name: &str) -> Result<(&'a str, &'a Workbook), String> {
    let key = w.sheets.resolve(name).ok_or_else(|| no_book(w, name))?;
    let wb = w
        .sheets
        .spreadsheets
        .get(key)
        .ok_or_else(|| no_book(w, name))?;
    Ok((key, wb))
}

fn no_book(w: &World, name: &str) -> String {
    let names: Vec<&str> = w.sheets.spreadsheets.keys().map(String::as_str).collect();
    if names.is_empty() {
        format!("no spreadsheet {name:?}; there are no spreadsheets yet (sheets_create makes one)")
    } else {
        format!(
            "no spreadsheet {name:?}; the spreadsheets are: {}",
            names.join(", ")
        )
    }
}

fn sheet_idx(wb: &Workbook, book: &str, sheet: Option<&str>) -> Result<usize, String> {
    match sheet {
        None | Some("") => {
            if wb.sheets.is_empty() {
                Err(format!(
                    "spreadsheet {book:?} has no sheets; add one with sheets_add_sheet"
                ))
            } else {
                Ok(0)
            }
        }
        Some(name) => wb.sheet_index(name).ok_or_else(|| {
            let names: Vec<&str> = wb.sheets.iter().map(|s| s.name.as_str()).collect();
            format!(
                "spreadsheet {book:?} has no sheet {name:?}; its sheets are: {}",
                names.join(", ")
            )
        }),
    }
}

/// A range argument, maybe with `Sheet!`; the sheet of the range wins over `sheet`.
fn range_arg(text: &str, sheet: Option<String>) -> Result<(RangeRef, Option<String>), String> {
    let r = RangeRef::parse(text).ok_or_else(|| {
        format!("`{text}` is not an A1 range; write a cell like `B7` or a range like `A1:C10`")
    })?;
    let sheet = r.sheet.clone().or(sheet);
    Ok((r, sheet))
}

pub(super) fn cell_json(at: CellRef, cell: &Cell) -> Value {
    let mut v = cell.to_json();
    if let Some(o) = v.as_object_mut() {
        o.insert("cell".into(), at.to_string().into());
    }
    v
}

fn list(w: &mut World, _a: &Actor, _args: &Value) -> ToolResult {
    let books: Vec<Value> = w
        .sheets
        .spreadsheets
        .iter()
        .map(|(name, wb)| {
            let sheets: Vec<Value> = wb
                .sheets
                .iter()
                .map(|s| {
                    json!({
                        "name": s.name,
                        "used_range": s.used_range().map(|r| r.to_string()),
                        "cells": s.cells.len(),
                    })
                })
                .collect();
            json!({"name": name, "sheets": sheets})
        })
        .collect();
    Ok(json!({"spreadsheets": books}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    spreadsheet: String,
    sheet: Option<String>,
    range: Option<String>,
}

fn read(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ReadArgs = parse("sheets_read", args)?;
    let (name, wb) = book(w, &a.spreadsheet)?;
    let (range, sheet) = match &a.range {
        Some(r) if !r.trim().is_empty() => {
            let (r, s) = range_arg(r, a.sheet.clone())?;
            (Some(r), s)
        }
        _ => (None, a.sheet.clone()),
    };
    let si = sheet_idx(wb, name, sheet.as_deref())?;
    let s = &wb.sheets[si];
    let range = match range.or_else(|| s.used_range()) {
        Some(r) => r,
        None => {
            return Ok(
                json!({"spreadsheet": name, "sheet": s.name, "range": null, "cells": [], "truncated": false}),
            );
        }
    };
    let mut cells = Vec::new();
    let mut truncated = false;
    for (at, cell) in s.cells_in(&range) {
        if cells.len() >= MAX_READ_CELLS {
            truncated = true;
            break;
        }
        cells.push(cell_json(*at, cell));
    }
    let shown = RangeRef {
        sheet: None,
        ..range
    };
    Ok(json!({
        "spreadsheet": name,
        "sheet": s.name,
        "range": shown.to_string(),
        "cells": cells,
        "truncated": truncated,
    }))
}

/// A JSON value from an agent as a cell: null clears, numbers/bools typed, `=` formulas,
/// other strings inferred.
pub(super) fn input_cell(v: &Value, at: CellRef) -> Result<Cell, String> {
    Ok(match v {
        Value::Null => Cell::default(),
        Value::Bool(b) => Cell::value(CellValue::Bool(*b)),
        Value::Number(n) => Cell::value(CellValue::Number(
            n.as_f64()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{at}: {n} is not a usable number"))?,
        )),
        Value::String(s) if s.starts_with('=') && s.len() > 1 => {
            sheet::formula::parse(s).map_err(|e| format!("{at}: {e}"))?;
            Cell {
                value: CellValue::Empty,
                formula: Some(s.clone()),
            }
        }
        Value::String(s) => Cell::value(CellValue::infer(s)),
        other => {
            return Err(format!(
                "{at}: a cell value must be a string, number, boolean or null, not {other}"
            ));
        }
    })
}

/// Where a block of values goes: sheet `si` of spreadsheet `book`, from `origin`, within
/// `bound` when the agent gave a range.
struct Target<'a> {
    book: &'a str,
    si: usize,
    origin: CellRef,
    bound: Option<&'a RangeRef>,
}

/// Write `rows` at `target`; recalc; log. Returns the written and recalculated cells.
fn apply(
    w: &mut World,
    actor: &Actor,
    action: &str,
    target: Target<'_>,
    rows: &[Vec<Value>],
) -> ToolResult {
    let Target {
        book: book_name,
        si,
        origin,
        bound,
    } = target;
    let by = w.acting_email(actor)?;
    if rows.is_empty() || rows.iter().all(|r| r.is_empty()) {
        return Err("no values given: pass rows of values, e.g. [[\"Total\", 1250]]".into());
    }
    let count: usize = rows.iter().map(Vec::len).sum();
    if count > MAX_WRITE_CELLS {
        return Err(format!(
            "{count} cells in one call; write at most {MAX_WRITE_CELLS} at a time"
        ));
    }
    let width = rows.iter().map(Vec::len).max().unwrap_or(0) as u32;
    let height = rows.len() as u32;
    let end = CellRef::new(
        origin.row.saturating_add(height - 1),
        origin.col.saturating_add(width.saturating_sub(1)),
    );
    if end.row > MAX_ROW || end.col > MAX_COL {
        return Err(format!(
            "the values do not fit: they would reach row {} / column {}, beyond the sheet's limits",
            u64::from(end.row) + 1,
            u64::from(end.col) + 1
        ));
    }
    if let Some(b) = bound
        && b.start != b.end
        && (end.row > b.end.row || end.col > b.end.col)
    {
        return Err(format!(
            "{height} row(s) × {width} column(s) of values do not fit in {}; give a larger range or just its top-left cell",
            RangeRef {
                sheet: None,
                ..b.clone()
            }
        ));
    }
    // Build every cell first: a bad formula changes nothing.
    let mut cells = Vec::with_capacity(count);
    for (dr, row) in rows.iter().enumerate() {
        for (dc, v) in row.iter().enumerate() {
            let at = CellRef::new(origin.row + dr as u32, origin.col + dc as u32);
            cells.push((at, input_cell(v, at)?));
        }
    }
    let wb = w
        .sheets
        .get_mut(book_name)
        .ok_or_else(|| format!("no spreadsheet {book_name:?}"))?;
    let new_cells = cells
        .iter()
        .filter(|(at, _)| !wb.sheets[si].cells.contains_key(at))
        .count();
    if wb.cell_count() + new_cells > MAX_BOOK_CELLS {
        return Err(format!(
            "the spreadsheet would hold more than {MAX_BOOK_CELLS} cells"
        ));
    }
    let before: Vec<(CellRef, Cell)> = cells
        .iter()
        .map(|(at, _)| (*at, wb.sheets[si].get(*at).cloned().unwrap_or_default()))
        .collect();
    // Values of every formula before, to report dependents that changed.
    let formulas_before: Vec<(usize, CellRef, CellValue)> = wb
        .sheets
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.cells
                .iter()
                .filter(|(_, c)| c.formula.is_some())
                .map(move |(at, c)| (i, *at, c.value.clone()))
        })
        .collect();
    for (at, cell) in cells {
        wb.sheets[si].set(at, cell);
    }
    wb.recalculate();
    let sheet_name = wb.sheets[si].name.clone();
    let written: Vec<Value> = before
        .iter()
        .map(|(at, _)| {
            let cell = wb.sheets[si].get(*at).cloned().unwrap_or_default();
            cell_json(*at, &cell)
        })
        .collect();
    let mut recalculated = Vec::new();
    for (i, at, old) in formulas_before {
        if i == si && before.iter().any(|(b, _)| *b == at) {
            continue;
        }
        if let Some(c) = wb.sheets[i].get(at)
            && c.value != old
        {
            let mut v = cell_json(at, c);
            if let Some(o) = v.as_object_mut() {
                o.insert("sheet".into(), wb.sheets[i].name.clone().into());
            }
            recalculated.push(v);
        }
    }
    let range = RangeRef {
        sheet: None,
        start: origin,
        end,
    }
    .to_string();
    let changes: Vec<Value> = before
        .iter()
        .take(200)
        .map(|(at, old)| {
            let new = wb.sheets[si].get(*at).cloned().unwrap_or_default();
            json!({"cell": at.to_string(), "before": old.to_json(), "after": new.to_json()})
        })
        .collect();
    w.record(
        actor.clone(),
        "sheets",
        action,
        false,
        json!({
            "spreadsheet": book_name,
            "sheet": sheet_name,
            "range": range,
            "by": by,
            "cells": count,
            "changes": changes,
        }),
    );
    Ok(json!({
        "spreadsheet": book_name,
        "sheet": sheet_name,
        "range": range,
        "cells": written,
        "recalculated": recalculated,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    spreadsheet: String,
    sheet: Option<String>,
    range: String,
    values: Vec<Vec<Value>>,
}

fn write(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: WriteArgs = parse("sheets_write", args)?;
    let (name, wb) = book(w, &a.spreadsheet)?;
    let name = name.to_string();
    let (range, sheet) = range_arg(&a.range, a.sheet.clone())?;
    let si = sheet_idx(wb, &name, sheet.as_deref())?;
    let target = Target {
        book: &name,
        si,
        origin: range.start,
        bound: Some(&range),
    };
    apply(w, actor, "write", target, &a.values)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AppendArgs {
    spreadsheet: String,
    sheet: Option<String>,
    rows: Vec<Vec<Value>>,
}

fn append_rows(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: AppendArgs = parse("sheets_append_rows", args)?;
    let (name, wb) = book(w, &a.spreadsheet)?;
    let name = name.to_string();
    let si = sheet_idx(wb, &name, a.sheet.as_deref())?;
    let origin = CellRef::new(wb.sheets[si].next_row(), 0);
    let target = Target {
        book: &name,
        si,
        origin,
        bound: None,
    };
    apply(w, actor, "append_rows", target, &a.rows)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    query: Value,
    spreadsheet: Option<String>,
    sheet: Option<String>,
    #[serde(default)]
    in_formulas: bool,
    #[serde(default = "hundred")]
    max_results: usize,
}
fn hundred() -> usize {
    100
}

fn find(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: FindArgs = parse("sheets_find", args)?;
    enum Q {
        Text(String),
        Num(f64),
    }
    let q = match &a.query {
        Value::String(s) if s.trim().is_empty() => {
            return Err("`query` is empty; give a text or a number".into());
        }
        Value::String(s) => Q::Text(s.to_lowercase()),
        Value::Number(n) => Q::Num(n.as_f64().unwrap_or(f64::NAN)),
        _ => return Err("`query` must be a text or a number".into()),
    };
    let books: Vec<(&String, &Workbook)> = match &a.spreadsheet {
        Some(n) => {
            let (k, _) = book(w, n)?;
            w.sheets
                .spreadsheets
                .iter()
                .filter(|(name, _)| name.as_str() == k)
                .collect()
        }
        None => w.sheets.spreadsheets.iter().collect(),
    };
    let max = a.max_results.clamp(1, 1000);
    let mut matches = Vec::new();
    let mut truncated = false;
    'outer: for (bname, wb) in books {
        for s in &wb.sheets {
            if let Some(only) = &a.sheet
                && !s.name.eq_ignore_ascii_case(only)
            {
                continue;
            }
            for (at, cell) in &s.cells {
                let hit = match &q {
                    Q::Num(n) => {
                        matches!(cell.value, CellValue::Number(x) if (x - n).abs() <= 1e-9 * n.abs().max(1.0))
                    }
                    Q::Text(t) => {
                        cell.value.display().to_lowercase().contains(t.as_str())
                            || (a.in_formulas
                                && cell
                                    .formula
                                    .as_ref()
                                    .is_some_and(|f| f.to_lowercase().contains(t.as_str())))
                    }
                };
                if hit {
                    if matches.len() >= max {
                        truncated = true;
                        break 'outer;
                    }
                    let mut v = cell_json(*at, cell);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("spreadsheet".into(), bname.clone().into());
                        o.insert("sheet".into(), s.name.clone().into());
                    }
                    matches.push(v);
                }
            }
        }
    }
    Ok(json!({"matches": matches, "truncated": truncated}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddSheetArgs {
    spreadsheet: String,
    sheet: String,
}

fn add_sheet(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: AddSheetArgs = parse("sheets_add_sheet", args)?;
    let by = w.acting_email(actor)?;
    let (name, _) = book(w, &a.spreadsheet)?;
    let name = name.to_string();
    let wb = w
        .sheets
        .get_mut(&name)
        .ok_or_else(|| format!("no spreadsheet {name:?}"))?;
    let idx = wb.add_sheet(&a.sheet)?;
    let sheets: Vec<String> = wb.sheets.iter().map(|s| s.name.clone()).collect();
    w.record(
        actor.clone(),
        "sheets",
        "add_sheet",
        false,
        json!({"spreadsheet": name, "sheet": a.sheet, "by": by}),
    );
    Ok(json!({"spreadsheet": name, "sheet": a.sheet, "index": idx, "sheets": sheets}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    name: String,
    sheets: Option<Vec<String>>,
}

fn create(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateArgs = parse("sheets_create", args)?;
    let by = w.acting_email(actor)?;
    let name = a.name.trim().to_string();
    if name.is_empty() || name.len() > 200 || name.contains(['/', '\\']) {
        return Err("give the spreadsheet a name (at most 200 characters, no `/`)".into());
    }
    if let Some(existing) = w.sheets.resolve(&name) {
        return Err(format!(
            "a spreadsheet named {existing:?} already exists; choose another name"
        ));
    }
    let names = a.sheets.unwrap_or_else(|| vec!["Sheet1".into()]);
    if names.is_empty() {
        return Err("a spreadsheet needs at least one sheet".into());
    }
    let mut wb = Workbook::default();
    for s in &names {
        wb.add_sheet(s)?;
    }
    w.sheets.spreadsheets.insert(name.clone(), wb);
    w.record(
        actor.clone(),
        "sheets",
        "create",
        false,
        json!({"spreadsheet": name, "sheets": names, "by": by}),
    );
    Ok(json!({"spreadsheet": name, "sheets": names}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportArgs {
    spreadsheet: String,
    path: String,
    sheet: Option<String>,
    #[serde(default)]
    overwrite: bool,
}

fn export(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ExportArgs = parse("sheets_export", args)?;
    let by = w.acting_email(actor)?;
    let (name, wb) = book(w, &a.spreadsheet)?;
    let name = name.to_string();
    let ext = a
        .path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let (bytes, sheet_name) = match ext.as_str() {
        "xlsx" => (sheet::write_xlsx(wb).map_err(|e| e.to_string())?, None),
        "csv" => {
            let si = sheet_idx(wb, &name, a.sheet.as_deref())?;
            (
                sheet::write_csv(&wb.sheets[si]).map_err(|e| e.to_string())?,
                Some(wb.sheets[si].name.clone()),
            )
        }
        _ => {
            return Err(format!(
                "`{}`: export to a path ending in .xlsx (the whole spreadsheet) or .csv (one sheet)",
                a.path
            ));
        }
    };
    if w.files.exists(&a.path) && !a.overwrite {
        return Err(format!(
            "`{}` already exists; pass overwrite=true to replace it or choose another path",
            a.path
        ));
    }
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "sheets",
        "export",
        false,
        json!({"spreadsheet": name, "path": a.path, "sheet": sheet_name, "size": bytes.len(), "by": by}),
    );
    w.record(
        actor.clone(),
        "files",
        if created { "create" } else { "write" },
        false,
        json!({"path": a.path, "size": bytes.len()}),
    );
    Ok(json!({"spreadsheet": name, "path": a.path, "size": bytes.len(), "sheet": sheet_name}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportArgs {
    path: String,
    name: Option<String>,
    #[serde(default)]
    replace: bool,
}

fn import(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ImportArgs = parse("sheets_import", args)?;
    let by = w.acting_email(actor)?;
    let bytes = w.files.read_bytes(&a.path)?;
    let wb = sheet::read_file(&a.path, &bytes).map_err(|e| e.to_string())?;
    let stem = a
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&a.path)
        .rsplit_once('.')
        .map_or(a.path.as_str(), |(s, _)| s)
        .to_string();
    let name = a.name.map(|n| n.trim().to_string()).unwrap_or(stem);
    if name.is_empty() || name.contains(['/', '\\']) {
        return Err("give the spreadsheet a name without `/`".into());
    }
    let existing = w.sheets.resolve(&name).map(str::to_string);
    if let Some(old) = &existing {
        if !a.replace {
            return Err(format!(
                "a spreadsheet named {old:?} already exists; pass replace=true or another name"
            ));
        }
        w.sheets.spreadsheets.remove(old);
    }
    let sheets: Vec<String> = wb.sheets.iter().map(|s| s.name.clone()).collect();
    let cells = wb.cell_count();
    w.sheets.spreadsheets.insert(name.clone(), wb);
    w.record(
        actor.clone(),
        "sheets",
        "import",
        false,
        json!({"spreadsheet": name, "path": a.path, "replaced": existing.is_some(), "by": by}),
    );
    Ok(
        json!({"spreadsheet": name, "sheets": sheets, "cells": cells, "replaced": existing.is_some()}),
    )
}
