//! Spreadsheets: the workbook model (sheets of typed cells with formulas), A1 references
//! ([`a1`]), the formula evaluator ([`formula`]), and .xlsx/.xlsm/.csv/.tsv reading and
//! writing ([`read_file`], [`write_xlsx`], [`write_csv`]).
//!
//! ```
//! use bureau_formats::sheet::{CellRef, CellValue, Workbook};
//!
//! let mut wb = Workbook::default();
//! let s = wb.add_sheet("Budget")?;
//! wb.set_input(s, CellRef::parse("A1").unwrap(), "100")?;
//! wb.set_input(s, CellRef::parse("A2").unwrap(), "250")?;
//! wb.set_input(s, CellRef::parse("A3").unwrap(), "=SUM(A1:A2)")?;
//! wb.recalculate();
//! assert_eq!(wb.sheets[s].value(CellRef::parse("A3").unwrap()), CellValue::Number(350.0));
//! assert!(wb.to_text().contains("A3: =SUM(A1:A2) → 350"));
//! # Ok::<(), String>(())
//! ```

pub mod a1;
mod edit;
pub mod formula;
mod io;

use std::collections::BTreeMap;

use chrono::{NaiveDate, NaiveDateTime, Timelike};
use serde::{Deserialize, Serialize};

pub use a1::{CellRef, RangeRef, col_index, col_letters};
pub use edit::{CellEdit, edit_xlsx};
pub(crate) use io::read_file_in_process;
pub use io::{MAX_CELLS, read_file, write_csv, write_xlsx, xlsx_extras};

use formula::{Cells, Expr, Val};

/// A cell's value (for a formula cell: its computed value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "type", content = "value", rename_all = "lowercase")]
pub enum CellValue {
    #[default]
    Empty,
    Number(f64),
    Text(String),
    Bool(bool),
    Date(NaiveDate),
    #[serde(rename = "datetime")]
    DateTime(NaiveDateTime),
    /// `#DIV/0!`, `#REF!`, `#NAME?`, `#VALUE!`, `#NUM!`, `#N/A`, `#CYCLE!` (a circular reference).
    Error(String),
}

impl CellValue {
    /// The type name used in JSON views: empty, number, text, bool, date, datetime, error.
    pub fn type_name(&self) -> &'static str {
        match self {
            CellValue::Empty => "empty",
            CellValue::Number(_) => "number",
            CellValue::Text(_) => "text",
            CellValue::Bool(_) => "bool",
            CellValue::Date(_) => "date",
            CellValue::DateTime(_) => "datetime",
            CellValue::Error(_) => "error",
        }
    }

    /// The value as JSON: number, string, bool, ISO date/datetime string, error text, null.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            CellValue::Empty => J::Null,
            CellValue::Number(n) => serde_json::Number::from_f64(*n).map_or(J::Null, J::Number),
            CellValue::Text(s) | CellValue::Error(s) => J::String(s.clone()),
            CellValue::Bool(b) => J::Bool(*b),
            CellValue::Date(d) => J::String(d.format("%Y-%m-%d").to_string()),
            CellValue::DateTime(d) => J::String(d.format("%Y-%m-%dT%H:%M:%S").to_string()),
        }
    }

    /// How a spreadsheet shows the value: `1250`, `0.5`, `TRUE`, `2026-03-01`, `#DIV/0!`.
    pub fn display(&self) -> String {
        match self {
            CellValue::Empty => String::new(),
            CellValue::Number(n) => formula::format_number(*n),
            CellValue::Text(s) | CellValue::Error(s) => s.clone(),
            CellValue::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            CellValue::Date(d) => d.format("%Y-%m-%d").to_string(),
            CellValue::DateTime(d) => {
                if d.second() == 0 {
                    d.format("%Y-%m-%d %H:%M").to_string()
                } else {
                    d.format("%Y-%m-%d %H:%M:%S").to_string()
                }
            }
        }
    }

    /// Infer a typed value from text the way a spreadsheet does when one types it: numbers
    /// (`1250`, `-3.5`, `1,250.00`), booleans (`TRUE`/`false`), ISO dates (`2026-03-01`) and
    /// date-times (`2026-03-01 09:30`), else text. Numbers with leading zeros (`00123`) stay
    /// text; a leading `'` forces text (`'123` → text `123`).
    pub fn infer(s: &str) -> CellValue {
        if let Some(rest) = s.strip_prefix('\'') {
            return CellValue::Text(rest.to_string());
        }
        let t = s.trim();
        if t.is_empty() {
            return if s.is_empty() {
                CellValue::Empty
            } else {
                CellValue::Text(s.to_string())
            };
        }
        match t.to_ascii_uppercase().as_str() {
            "TRUE" => return CellValue::Bool(true),
            "FALSE" => return CellValue::Bool(false),
            _ => {}
        }
        if let Some(n) = parse_plain_number(t) {
            return CellValue::Number(n);
        }
        if t.len() == 10
            && let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d")
        {
            return CellValue::Date(d);
        }
        for f in [
            "%Y-%m-%d %H:%M:%S",
            "%Y-%m-%dT%H:%M:%S",
            "%Y-%m-%d %H:%M",
            "%Y-%m-%dT%H:%M",
        ] {
            if let Ok(d) = NaiveDateTime::parse_from_str(t, f) {
                return CellValue::DateTime(d);
            }
        }
        CellValue::Text(s.to_string())
    }

    /// The Excel serial number of a date (days since 1899-12-30), for arithmetic.
    pub(crate) fn serial(&self) -> Option<f64> {
        let base = NaiveDate::from_ymd_opt(1899, 12, 30)?;
        match self {
            CellValue::Date(d) => Some((*d - base).num_days() as f64),
            CellValue::DateTime(d) => {
                let days = (d.date() - base).num_days() as f64;
                Some(days + f64::from(d.num_seconds_from_midnight()) / 86_400.0)
            }
            _ => None,
        }
    }

    fn to_val(&self) -> Val {
        match self {
            CellValue::Empty => Val::Empty,
            CellValue::Number(n) => Val::Num(*n),
            CellValue::Text(s) => Val::Text(s.clone()),
            CellValue::Bool(b) => Val::Bool(*b),
            CellValue::Error(e) => Val::Error(e.clone()),
            d => Val::Num(d.serial().unwrap_or(0.0)),
        }
    }

    fn from_val(v: Val) -> CellValue {
        match v {
            Val::Empty => CellValue::Number(0.0),
            Val::Num(n) => CellValue::Number(n),
            Val::Text(s) => CellValue::Text(s),
            Val::Bool(b) => CellValue::Bool(b),
            Val::Error(e) => CellValue::Error(e),
        }
    }
}

/// A plain number: `-12`, `3.5`, `.5`, `1e3`, `1,250.75`; not `007`, not `1.2.3`.
fn parse_plain_number(t: &str) -> Option<f64> {
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let digits_before_dot: &str = body.split(['.', 'e', 'E']).next().unwrap_or("");
    if digits_before_dot.len() > 1 && digits_before_dot.starts_with('0') {
        return None;
    }
    if body.contains(',') {
        // Thousands separators: 1,250 or 1,250.75 only.
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let groups: Vec<&str> = int.split(',').collect();
        let ok = groups[0].len() <= 3
            && !groups[0].is_empty()
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()))
            && frac.bytes().all(|b| b.is_ascii_digit());
        if !ok {
            return None;
        }
        let cleaned = t.replace(',', "");
        return cleaned.parse::<f64>().ok().filter(|n| n.is_finite());
    }
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        || !body
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.')
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// One cell: its value and, for a formula cell, the formula text (with the leading `=`).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Cell {
    #[serde(flatten)]
    pub value: CellValue,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formula: Option<String>,
}

/// `{"type", "value"?, "formula"?}` as [`Cell`] serialises it. Read by hand: serde's
/// `flatten` buffers the value, and with serde_json's `arbitrary_precision` (enabled in the
/// workspace by a dependency) a buffered number is a map, so a derived `Deserialize` refused
/// every number cell ("invalid type: map, expected f64") and snapshots with sheets could not
/// be read back (`bureau rescore` skipped those trials).
impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Cell, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(rename = "type")]
            ty: String,
            #[serde(default)]
            value: serde_json::Value,
            #[serde(default)]
            formula: Option<String>,
        }
        let raw = Raw::deserialize(d)?;
        let value = if raw.ty == "empty" {
            CellValue::Empty
        } else {
            serde_json::from_value(serde_json::json!({"type": raw.ty, "value": raw.value}))
                .map_err(serde::de::Error::custom)?
        };
        Ok(Cell {
            value,
            formula: raw.formula,
        })
    }
}

impl Cell {
    pub fn value(value: CellValue) -> Cell {
        Cell {
            value,
            formula: None,
        }
    }

    /// The cell as JSON for tools and checks: `{"type", "value", "formula"?}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), self.value.type_name().into());
        m.insert("value".into(), self.value.to_json());
        if let Some(f) = &self.formula {
            m.insert("formula".into(), f.clone().into());
        }
        serde_json::Value::Object(m)
    }
}

/// One sheet (tab): a name and its non-empty cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Sheet {
    pub name: String,
    pub cells: BTreeMap<CellRef, Cell>,
}

impl Sheet {
    pub fn new(name: impl Into<String>) -> Sheet {
        Sheet {
            name: name.into(),
            cells: BTreeMap::new(),
        }
    }

    pub fn get(&self, c: CellRef) -> Option<&Cell> {
        self.cells.get(&c)
    }

    /// The cell's value (`Empty` when there is no cell).
    pub fn value(&self, c: CellRef) -> CellValue {
        self.cells
            .get(&c)
            .map(|c| c.value.clone())
            .unwrap_or_default()
    }

    /// Put a cell; an empty value without formula removes it.
    pub fn set(&mut self, c: CellRef, cell: Cell) {
        if cell.value == CellValue::Empty && cell.formula.is_none() {
            self.cells.remove(&c);
        } else {
            self.cells.insert(c, cell);
        }
    }

    /// The smallest range holding every cell (`None` for an empty sheet).
    pub fn used_range(&self) -> Option<RangeRef> {
        let first = self.cells.keys().next()?;
        let last = self.cells.keys().next_back()?;
        let (min_col, max_col) = self
            .cells
            .keys()
            .fold((u32::MAX, 0), |(lo, hi), c| (lo.min(c.col), hi.max(c.col)));
        Some(RangeRef {
            sheet: None,
            start: CellRef::new(first.row, min_col),
            end: CellRef::new(last.row, max_col),
        })
    }

    /// Non-empty cells inside a range, row-major.
    pub fn cells_in(&self, r: &RangeRef) -> impl Iterator<Item = (&CellRef, &Cell)> {
        let (start, end) = (r.start, r.end);
        self.cells
            .range(start..=CellRef::new(end.row, a1::MAX_COL))
            .filter(move |(c, _)| c.col >= start.col && c.col <= end.col && c.row <= end.row)
    }

    /// The first row after the last non-empty row (0 for an empty sheet).
    pub fn next_row(&self) -> u32 {
        self.cells.keys().next_back().map_or(0, |c| c.row + 1)
    }
}

/// Most rows of one sheet in [`Workbook::to_layout_text`].
pub const MAX_LAYOUT_ROWS: u32 = 20_000;

/// A workbook: sheets in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Workbook {
    pub sheets: Vec<Sheet>,
}

/// Why a sheet name is not allowed, or `None` when it is.
pub fn sheet_name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        return Some("a sheet name cannot be empty".into());
    }
    if name.chars().count() > 31 {
        return Some(format!(
            "sheet name {name:?} is longer than 31 characters (the spreadsheet limit)"
        ));
    }
    if let Some(c) = name.chars().find(|c| "[]:*?/\\".contains(*c)) {
        return Some(format!(
            "sheet name {name:?} contains `{c}`; sheet names cannot contain [ ] : * ? / \\"
        ));
    }
    if name.starts_with('\'') || name.ends_with('\'') {
        return Some(format!(
            "sheet name {name:?} cannot begin or end with an apostrophe"
        ));
    }
    None
}

impl Workbook {
    /// Index of a sheet by name (case-insensitive, as spreadsheets do).
    pub fn sheet_index(&self, name: &str) -> Option<usize> {
        self.sheets
            .iter()
            .position(|s| s.name.to_lowercase() == name.to_lowercase())
    }

    pub fn sheet(&self, name: &str) -> Option<&Sheet> {
        self.sheet_index(name).map(|i| &self.sheets[i])
    }

    /// Add an empty sheet at the end; its index. Errors say why the name is refused.
    pub fn add_sheet(&mut self, name: &str) -> Result<usize, String> {
        if let Some(p) = sheet_name_problem(name) {
            return Err(p);
        }
        if self.sheet_index(name).is_some() {
            return Err(format!("a sheet named {name:?} already exists"));
        }
        self.sheets.push(Sheet::new(name));
        Ok(self.sheets.len() - 1)
    }

    /// Number of non-empty cells in all sheets.
    pub fn cell_count(&self) -> usize {
        self.sheets.iter().map(|s| s.cells.len()).sum()
    }

    /// Set a cell from typed input text: `=...` is a formula (checked now, computed by
    /// [`Workbook::recalculate`]); anything else is inferred with [`CellValue::infer`].
    /// Does not recalculate.
    pub fn set_input(&mut self, sheet: usize, at: CellRef, input: &str) -> Result<(), String> {
        let cell = if input.starts_with('=') && input.len() > 1 {
            formula::parse(input).map_err(|e| format!("{at}: {e}"))?;
            Cell {
                value: CellValue::Empty,
                formula: Some(input.to_string()),
            }
        } else {
            Cell::value(CellValue::infer(input))
        };
        let s = self
            .sheets
            .get_mut(sheet)
            .ok_or_else(|| format!("there is no sheet number {sheet}"))?;
        s.set(at, cell);
        Ok(())
    }

    /// Recompute every formula from its inputs, in dependency order, so dependents of a
    /// changed cell are up to date. Circular references give `#CYCLE!`; formulas Bureau
    /// cannot compute (unsupported functions, unparsable text) keep their current value
    /// (`#NAME?` when they have none). Never recursive over cells: no stack overflow.
    pub fn recalculate(&mut self) {
        struct F {
            sheet: usize,
            at: CellRef,
            expr: Option<Expr>,
        }
        let mut formulas: Vec<F> = Vec::new();
        let mut index: BTreeMap<(usize, CellRef), usize> = BTreeMap::new();
        for (si, s) in self.sheets.iter().enumerate() {
            for (c, cell) in &s.cells {
                if let Some(f) = &cell.formula {
                    let expr = formula::parse(f).ok().filter(|e| {
                        let mut un = Vec::new();
                        e.unsupported_functions(&mut un);
                        un.is_empty()
                    });
                    index.insert((si, *c), formulas.len());
                    formulas.push(F {
                        sheet: si,
                        at: *c,
                        expr,
                    });
                }
            }
        }
        if formulas.is_empty() {
            return;
        }
        // Dependencies: formula cells inside each referenced range.
        const MAX_EDGES: usize = 20_000_000;
        let mut edges = 0usize;
        let mut too_big = vec![false; formulas.len()];
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(formulas.len());
        for (i, f) in formulas.iter().enumerate() {
            let mut d = Vec::new();
            if let Some(e) = &f.expr {
                let mut refs = Vec::new();
                e.refs(&mut refs);
                for r in refs {
                    let si = match &r.sheet {
                        None => f.sheet,
                        Some(n) => match self.sheet_index(n) {
                            Some(i) => i,
                            None => continue,
                        },
                    };
                    let lo = (si, CellRef::new(r.start.row, 0));
                    let hi = (si, CellRef::new(r.end.row, a1::MAX_COL));
                    for ((_, c), j) in index.range(lo..=hi) {
                        if c.col >= r.start.col && c.col <= r.end.col {
                            d.push(*j);
                        }
                    }
                }
            }
            d.sort_unstable();
            d.dedup();
            edges += d.len();
            if edges > MAX_EDGES {
                too_big[i] = true;
                d.clear();
            }
            deps.push(d);
        }
        // Iterative depth-first search: evaluation order and cycles.
        let n = formulas.len();
        let mut state = vec![0u8; n];
        let mut in_cycle = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if state[root] != 0 {
                continue;
            }
            state[root] = 1;
            stack.push((root, 0));
            while let Some(top) = stack.len().checked_sub(1) {
                let (node, k) = stack[top];
                if k < deps[node].len() {
                    stack[top].1 += 1;
                    let d = deps[node][k];
                    match state[d] {
                        0 => {
                            state[d] = 1;
                            stack.push((d, 0));
                        }
                        1 => {
                            for (m, _) in stack.iter().rev() {
                                in_cycle[*m] = true;
                                if *m == d {
                                    break;
                                }
                            }
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    order.push(node);
                    stack.pop();
                }
            }
        }
        for i in order {
            let f = &formulas[i];
            let value = if in_cycle[i] {
                Some(CellValue::Error("#CYCLE!".into()))
            } else if too_big[i] {
                Some(CellValue::Error("#NUM!".into()))
            } else if let Some(e) = &f.expr {
                let view = View {
                    wb: self,
                    sheet: f.sheet,
                };
                Some(CellValue::from_val(formula::eval(e, &view)))
            } else {
                None
            };
            if let Some(cell) = self.sheets[f.sheet].cells.get_mut(&f.at) {
                match value {
                    Some(v) => cell.value = v,
                    None if cell.value == CellValue::Empty => {
                        cell.value = CellValue::Error("#NAME?".into())
                    }
                    None => {}
                }
            }
        }
    }

    /// Evaluate a formula against this workbook as if it were in `sheet` (no cell changes).
    pub fn evaluate(&self, sheet: usize, formula_text: &str) -> Result<CellValue, String> {
        let e = formula::parse(formula_text)?;
        Ok(CellValue::from_val(formula::eval(
            &e,
            &View { wb: self, sheet },
        )))
    }

    /// The workbook as a printable layout (for a PDF export): per sheet a `## Name` heading,
    /// then its used range as a table of shown values (formulas as their results), one
    /// `| a | b |` line per row with columns padded to a common width (up to 30 characters)
    /// and a `|---|` line after the first row. At most [`MAX_LAYOUT_ROWS`] rows per sheet;
    /// a note says how many more there are.
    pub fn to_layout_text(&self) -> String {
        let mut out = String::new();
        for s in &self.sheets {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&format!("## {}\n\n", s.name));
            let Some(r) = s.used_range() else {
                out.push_str("(empty sheet)\n");
                continue;
            };
            let last = r
                .end
                .row
                .min(r.start.row.saturating_add(MAX_LAYOUT_ROWS - 1));
            let rows: Vec<Vec<String>> = (r.start.row..=last)
                .map(|row| {
                    (r.start.col..=r.end.col)
                        .map(|col| {
                            s.value(CellRef::new(row, col))
                                .display()
                                .replace('\n', " ")
                                .replace('|', "\\|")
                        })
                        .collect()
                })
                .collect();
            let cols = (r.end.col - r.start.col + 1) as usize;
            let widths: Vec<usize> = (0..cols)
                .map(|c| {
                    rows.iter()
                        .map(|row| row.get(c).map_or(0, |v| v.chars().count()))
                        .max()
                        .unwrap_or(0)
                        .clamp(3, 30)
                })
                .collect();
            for (i, row) in rows.iter().enumerate() {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(v, w)| format!("{v:<w$}"))
                    .collect();
                out.push_str(&format!("| {} |\n", cells.join(" | ")));
                if i == 0 {
                    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(w + 2)).collect();
                    out.push_str(&format!("|{}|\n", dashes.join("|")));
                }
            }
            let more = r.end.row - last;
            if more > 0 {
                out.push_str(&format!("\n… {more} more rows not shown\n"));
            }
        }
        out
    }

    /// The workbook as text for an agent: `## Sheet: Name (A1:D12)`, then one line per row
    /// with each non-empty cell as `B2: value`, formulas as `D2: =SUM(B2:C2) → 300`, text
    /// that looks like a number or contains `|` in quotes. Long workbooks are cut at about
    /// 200,000 characters with a note.
    pub fn to_text(&self) -> String {
        const LIMIT: usize = 200_000;
        let mut out = String::new();
        if self.sheets.is_empty() {
            return "(a workbook without sheets)\n".into();
        }
        for s in &self.sheets {
            if !out.is_empty() {
                out.push('\n');
            }
            match s.used_range() {
                None => {
                    out.push_str(&format!("## Sheet: {} (empty)\n", s.name));
                    continue;
                }
                Some(r) => out.push_str(&format!("## Sheet: {} ({r})\n", s.name)),
            }
            let mut row: Option<u32> = None;
            let mut rows_left: BTreeMap<u32, ()> = BTreeMap::new();
            for c in s.cells.keys() {
                rows_left.insert(c.row, ());
            }
            for (c, cell) in &s.cells {
                if row != Some(c.row) {
                    if row.is_some() {
                        out.push('\n');
                    }
                    if out.len() > LIMIT {
                        let remaining = rows_left.range(c.row..).count();
                        out.push_str(&format!(
                            "… {remaining} more rows not shown; read a smaller range\n"
                        ));
                        return out;
                    }
                    row = Some(c.row);
                } else {
                    out.push_str(" | ");
                }
                out.push_str(&format!("{c}: {}", render_cell(cell)));
            }
            out.push('\n');
        }
        out
    }
}

/// One cell for [`Workbook::to_text`].
pub fn render_cell(cell: &Cell) -> String {
    let v = match &cell.value {
        CellValue::Text(t) => {
            let ambiguous = !matches!(CellValue::infer(t), CellValue::Text(_))
                || t.trim().parse::<f64>().is_ok()
                || t.contains('|')
                || t.contains('\n')
                || t.trim() != t
                || t.is_empty()
                || t.starts_with('=')
                || t.contains(" → ");
            if ambiguous {
                serde_json::to_string(t).unwrap_or_default()
            } else {
                t.clone()
            }
        }
        CellValue::Empty => "(empty)".into(),
        other => other.display(),
    };
    match &cell.formula {
        Some(f) => format!("{f} → {v}"),
        None => v,
    }
}

struct View<'a> {
    wb: &'a Workbook,
    sheet: usize,
}

impl View<'_> {
    fn sheet_of(&self, name: Option<&str>) -> Result<&Sheet, formula::NoSuchSheet> {
        match name {
            None => self.wb.sheets.get(self.sheet).ok_or(formula::NoSuchSheet),
            Some(n) => self.wb.sheet(n).ok_or(formula::NoSuchSheet),
        }
    }
}

impl Cells for View<'_> {
    fn cell(&self, sheet: Option<&str>, c: CellRef) -> Result<Val, formula::NoSuchSheet> {
        Ok(self.sheet_of(sheet)?.value(c).to_val())
    }

    fn range(&self, r: &RangeRef) -> Result<Vec<Val>, formula::NoSuchSheet> {
        let s = self.sheet_of(r.sheet.as_deref())?;
        Ok(s.cells_in(r)
            .map(|(_, cell)| cell.value.to_val())
            .filter(|v| !matches!(v, Val::Empty))
            .collect())
    }

    fn extent(&self, sheet: Option<&str>) -> Result<Option<CellRef>, formula::NoSuchSheet> {
        Ok(self.sheet_of(sheet)?.used_range().map(|r| r.end))
    }
}

#[cfg(test)]
mod tests;
