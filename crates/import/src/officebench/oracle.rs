//! Derived oracles: a check-satisfying end state computed from the evaluations (what the
//! files, mail, calendar and final answer must hold), written as Bureau tool calls. A derived
//! oracle proves the imported checks can be passed; it does not solve the task from its
//! inputs (authored oracles, in [`super::authored`], do).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bureau_formats::sheet::{CellValue, read_file};
use chrono::{Duration, NaiveDate, NaiveDateTime, Timelike};
use serde_json::{Value, json};

use super::address;
use super::source::{Eval, Place, RawEval};

/// The oracle's turn: tool calls and the final message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Oracle {
    pub calls: Vec<Value>,
    pub message: Option<String>,
}

/// What the seeded testbed holds, for planning.
pub struct Seed<'a> {
    /// testbed/data of the checkout.
    pub data_dir: &'a Path,
    /// The task folder's reference/.
    pub reference_dir: &'a Path,
    pub data_files: &'a BTreeSet<String>,
    /// Seeded events (start, end) by lower-case calendar name.
    pub busy: &'a BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>>,
    /// The turn's clock.
    pub now: NaiveDateTime,
    pub user: &'a str,
}

type Grid = BTreeMap<(u32, u32), Value>;

#[derive(Debug, Clone)]
enum Content {
    Docx(Vec<String>),
    Text(Vec<String>),
    Pdf(Vec<String>),
    /// First sheet's cells (1-based row, col); `clear_to` = the original size to blank out.
    Xlsx {
        grid: Grid,
        seeded: bool,
        clear_to: (u32, u32),
        extra: Vec<String>,
    },
}

struct Planner<'a> {
    seed: &'a Seed<'a>,
    files: BTreeMap<String, Content>,
    deletes: BTreeSet<String>,
    moves: Vec<(String, String)>,
    mails: BTreeMap<String, (String, Vec<String>)>,
    events: Vec<EventPlan>,
    message: Vec<String>,
    forbidden_message: Vec<String>,
    forbidden: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone)]
struct EventPlan {
    start: Option<NaiveDateTime>,
    end: Option<NaiveDateTime>,
    words: Vec<String>,
    names: BTreeSet<String>,
}

/// Derive the oracle of one subtask, or say why none can be derived.
pub fn derive(
    seed: &Seed<'_>,
    evals: &[RawEval],
    resolve: &dyn Fn(&str) -> String,
) -> Result<Oracle, String> {
    let mut p = Planner {
        seed,
        files: BTreeMap::new(),
        deletes: BTreeSet::new(),
        moves: Vec::new(),
        mails: BTreeMap::new(),
        events: Vec::new(),
        message: Vec::new(),
        forbidden_message: Vec::new(),
        forbidden: BTreeMap::new(),
    };
    let mut overlap_names: BTreeSet<String> = BTreeSet::new();
    // Rewrites first (exact matches, diffs), then additions, so additions land on top.
    for r in evals {
        match &r.eval {
            Eval::ExactMatch { doc_type, .. } if doc_type != "xlsx" => {
                return Err(format!(
                    "evaluate_exact_match on a .{doc_type} cannot be derived (OfficeBench's comparison never passes)"
                ));
            }
            Eval::ExactMatch {
                doc_type,
                result: Place::Data(path),
                expected: Place::Reference(file),
            } => {
                if doc_type != "xlsx" {
                    return Err(format!(
                        "evaluate_exact_match on a .{doc_type} cannot be derived (OfficeBench's comparison never passes)"
                    ));
                }
                let path = resolve(path);
                let grid = read_grid(&seed.reference_dir.join(file))?;
                let old = p.xlsx(&path)?;
                let clear_to = size_of(&old_grid(&old)).max_pair(size_of(&grid));
                p.files.insert(
                    path,
                    Content::Xlsx {
                        grid,
                        seeded: seeded_of(&old),
                        clear_to,
                        extra: Vec::new(),
                    },
                );
            }
            Eval::DiffContain {
                doc_type,
                input: Place::Original(_),
                output: Place::Data(path),
                keywords,
            } => {
                if doc_type != "xlsx" {
                    return Err("evaluate_diff_contain_text on a .doc cannot be derived".into());
                }
                let path = resolve(path);
                let c = p.xlsx(&path)?;
                let mut grid = old_grid(&c);
                let clear_to = size_of(&grid);
                remove_rows(&mut grid, keywords);
                p.files.insert(
                    path,
                    Content::Xlsx {
                        grid,
                        seeded: seeded_of(&c),
                        clear_to,
                        extra: Vec::new(),
                    },
                );
            }
            _ => {}
        }
    }
    for r in evals {
        match &r.eval {
            Eval::ExactMatch { .. } | Eval::DiffContain { .. } => {}
            Eval::Contain {
                place,
                keywords,
                negate,
                ..
            } => match (place, negate) {
                (Place::Answer, false) => p.message.extend(keywords.iter().cloned()),
                (Place::Answer, true) => p.forbidden_message.extend(keywords.iter().cloned()),
                (Place::Data(path), false) => p.add_keywords(&resolve(path), keywords)?,
                (Place::Data(path), true) => {
                    let path = resolve(path);
                    p.forbidden
                        .entry(path.clone())
                        .or_default()
                        .extend(keywords.iter().cloned());
                    p.remove_keywords(&path, keywords)?;
                }
                (Place::Calendar(name), false) => p.add_event(name, keywords),
                (Place::Calendar(_), true) => {}
                _ => return Err(format!("{} on {place:?} cannot be derived", r.function)),
            },
            Eval::MailContain {
                username,
                keywords,
                negate,
            } => {
                if !negate {
                    let e = p.mails.entry(username.to_lowercase()).or_default();
                    if e.0.is_empty() {
                        e.0 = keywords.first().cloned().unwrap_or_default();
                    }
                    e.1.extend(keywords.iter().cloned());
                }
            }
            Eval::FileExist { place, negate } => match (place, negate) {
                (Place::Data(path), false) => {
                    let path = resolve(path);
                    if !seed.data_files.contains(&path) {
                        // a seeded file of that name elsewhere: moved there
                        let base = path.rsplit('/').next().unwrap_or(&path);
                        let moved = seed
                            .data_files
                            .iter()
                            .find(|f| {
                                f.rsplit('/').next() == Some(base) && !p.files.contains_key(*f)
                            })
                            .cloned();
                        match moved {
                            Some(from) => p.moves.push((from, path)),
                            None => p.ensure(&path)?,
                        }
                    }
                }
                (Place::Data(path), true) => {
                    let path = resolve(path);
                    if seed.data_files.contains(&path) {
                        p.deletes.insert(path);
                    }
                }
                (Place::Answer, false) => {
                    if p.message.is_empty() {
                        p.message.push("Done.".into());
                    }
                }
                (Place::Email { name, file }, false) => {
                    let subject = file.strip_suffix(".eml").unwrap_or(file).to_string();
                    let e = p.mails.entry(name.to_lowercase()).or_default();
                    if e.0.is_empty() || e.0 != subject {
                        e.0 = subject;
                    }
                }
                (Place::Calendar(name), false) => {
                    if !seed.busy.contains_key(&name.to_lowercase()) {
                        p.add_event(name, &[]);
                    }
                }
                (Place::Calendar(name), true) => {
                    if seed.busy.contains_key(&name.to_lowercase()) {
                        return Err(format!(
                            "calendar/{name}.ics is seeded and Bureau cannot delete a calendar"
                        ));
                    }
                }
                _ => return Err(format!("{} on {place:?} cannot be derived", r.function)),
            },
            Eval::CellValue { place, matches } => {
                let path = match place {
                    Some(Place::Data(path)) => resolve(path),
                    _ => match infer_xlsx(evals) {
                        Some(path) => resolve(&path),
                        None => return Err("evaluate_excel_cell_value names no file".into()),
                    },
                };
                for (row, col, v) in matches {
                    p.set_cell(&path, *row, *col, typed(v))?;
                }
            }
            Eval::CellComparator { place, matches } => {
                let Place::Data(path) = place else {
                    return Err("comparator on a non-data path".into());
                };
                let path = resolve(path);
                for (row, col, lambda) in matches {
                    let v = comparator_value(lambda).ok_or_else(|| {
                        format!("no value satisfies `{lambda}` that the importer can find")
                    })?;
                    p.set_cell(&path, *row, *col, typed(&v))?;
                }
            }
            Eval::NoOverlap { username } => {
                overlap_names.insert(username.to_lowercase());
            }
        }
    }
    for (path, words) in &p.forbidden {
        if let Some(c) = p.files.get(path) {
            let text = content_text(c).to_lowercase();
            if let Some(w) = words.iter().find(|w| text.contains(&w.to_lowercase())) {
                // `not_contain` fails only when every keyword is present
                if words.iter().all(|w| text.contains(&w.to_lowercase())) {
                    return Err(format!("{path} must both contain and not contain '{w}'"));
                }
            }
        }
    }
    if !p.forbidden_message.is_empty()
        && p.forbidden_message.iter().all(|w| {
            p.message
                .iter()
                .any(|m| m.to_lowercase().contains(&w.to_lowercase()))
        })
    {
        return Err("the final answer must both contain and not contain the same keywords".into());
    }
    Ok(p.finish(&overlap_names))
}

fn infer_xlsx(evals: &[RawEval]) -> Option<String> {
    evals.iter().find_map(|r| match &r.eval {
        Eval::FileExist {
            place: Place::Data(p),
            negate: false,
        } if p.to_lowercase().ends_with(".xlsx") => Some(p.clone()),
        _ => None,
    })
}

trait MaxPair {
    fn max_pair(self, other: Self) -> Self;
}
impl MaxPair for (u32, u32) {
    fn max_pair(self, other: Self) -> Self {
        (self.0.max(other.0), self.1.max(other.1))
    }
}

fn old_grid(c: &Content) -> Grid {
    match c {
        Content::Xlsx { grid, .. } => grid.clone(),
        _ => Grid::new(),
    }
}

fn seeded_of(c: &Content) -> bool {
    matches!(c, Content::Xlsx { seeded: true, .. })
}

fn size_of(g: &Grid) -> (u32, u32) {
    g.keys()
        .fold((0, 0), |(r, c), (gr, gc)| (r.max(*gr), c.max(*gc)))
}

/// The first sheet of an .xlsx as a grid of JSON values (as `sheets_write` takes them).
fn read_grid(path: &Path) -> Result<Grid, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("book.xlsx");
    let book = read_file(name, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut grid = Grid::new();
    if let Some(sheet) = book.sheets.first() {
        for (r, cell) in &sheet.cells {
            let v = match &cell.value {
                CellValue::Empty => continue,
                CellValue::Number(n) => json!(n),
                CellValue::Bool(b) => json!(b),
                CellValue::Text(s) => json!(force_text(s)),
                other => other.to_json(),
            };
            grid.insert((r.row + 1, r.col + 1), v);
        }
    }
    Ok(grid)
}

/// Text that `sheets_write` would type as a number, bool or date keeps its type with `'`.
fn force_text(s: &str) -> String {
    let t = s.trim();
    let looks_typed = t.parse::<f64>().is_ok()
        || t.replace(',', "").parse::<f64>().is_ok()
        || t.eq_ignore_ascii_case("true")
        || t.eq_ignore_ascii_case("false")
        || t.starts_with('=')
        || NaiveDate::parse_from_str(t, "%Y-%m-%d").is_ok();
    if looks_typed {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

/// An OfficeBench expected value as the cell a person would type.
fn typed(v: &str) -> Value {
    let t = v.trim();
    if let Ok(n) = t.replace(',', "").parse::<f64>()
        && t.chars().all(|c| c.is_ascii_digit() || ",.-".contains(c))
    {
        return json!(n);
    }
    json!(force_text(v))
}

/// A value the comparator accepts: the first element of `x in [...]`, or the literal of
/// `x == '...'`.
fn comparator_value(lambda: &str) -> Option<String> {
    let body = lambda.split_once(':')?.1.trim();
    let lit = |s: &str| -> Option<String> {
        let s = s.trim();
        let q = s.chars().next()?;
        if q != '\'' && q != '"' {
            return None;
        }
        let rest = &s[1..];
        Some(rest[..rest.find(q)?].to_string())
    };
    if let Some((_, list)) = body.split_once(" in [") {
        return lit(list);
    }
    if let Some((_, v)) = body.split_once("==") {
        return lit(v);
    }
    None
}

fn remove_rows(grid: &mut Grid, keywords: &[String]) {
    let words: Vec<String> = keywords
        .iter()
        .filter(|k| k.trim().replace(',', "").parse::<f64>().is_err())
        .map(|k| k.trim().to_lowercase())
        .collect();
    let rows: BTreeSet<u32> = grid.keys().map(|(r, _)| *r).collect();
    let mut drop: BTreeSet<u32> = BTreeSet::new();
    for r in &rows {
        let cells: Vec<String> = grid
            .iter()
            .filter(|((gr, _), _)| gr == r)
            .map(|(_, v)| value_text(v).to_lowercase())
            .collect();
        let hit = if words.is_empty() {
            keywords
                .iter()
                .all(|k| cells.iter().any(|c| c == &k.trim().to_lowercase()))
        } else {
            words
                .iter()
                .any(|w| cells.iter().any(|c| c == w || c.contains(w.as_str())))
        };
        if hit {
            drop.insert(*r);
        }
    }
    let old = std::mem::take(grid);
    for ((r, c), v) in old {
        if drop.contains(&r) {
            continue;
        }
        let shift = drop.iter().filter(|d| **d < r).count() as u32;
        grid.insert((r - shift, c), v);
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim_start_matches('\'').to_string(),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.fract() == 0.0 && f.abs() < 1e15 {
                format!("{}", f as i64)
            } else {
                f.to_string()
            }
        }
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn content_text(c: &Content) -> String {
    match c {
        Content::Docx(l) | Content::Text(l) | Content::Pdf(l) => l.join("\n"),
        Content::Xlsx { grid, extra, .. } => {
            let mut t: Vec<String> = grid.values().map(value_text).collect();
            t.extend(extra.iter().cloned());
            t.join("\n")
        }
    }
}

fn ext(path: &str) -> String {
    path.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// `DTSTART:20240517T103000Z` → 2024-05-17 10:30; a date alone → that day.
fn dt_keyword(k: &str) -> Option<(bool, NaiveDateTime, bool)> {
    let u = k.trim().to_ascii_uppercase();
    let (is_start, v) = if let Some(v) = u.strip_prefix("DTSTART:") {
        (true, v)
    } else {
        (false, u.strip_prefix("DTEND:")?)
    };
    let v = v.trim_end_matches('Z');
    let (d, t) = v.split_once('T').unwrap_or((v, ""));
    let date = NaiveDate::parse_from_str(d, "%Y%m%d").ok()?;
    let mut digits: String = t.chars().filter(|c| c.is_ascii_digit()).collect();
    let date_only = digits.is_empty();
    while digits.len() < 6 {
        digits.push('0');
    }
    let h: u32 = digits[0..2].parse().ok()?;
    let m: u32 = digits[2..4].parse().ok()?;
    let s: u32 = digits[4..6].parse().ok()?;
    Some((is_start, date.and_hms_opt(h, m, s)?, date_only))
}

impl Planner<'_> {
    /// The planned content of an .xlsx: what is planned, else the seeded file, else empty.
    fn xlsx(&mut self, path: &str) -> Result<Content, String> {
        if let Some(c @ Content::Xlsx { .. }) = self.files.get(path) {
            return Ok(c.clone());
        }
        if self.seed.data_files.contains(path) {
            let grid = read_grid(&self.seed.data_dir.join(path))?;
            let size = size_of(&grid);
            return Ok(Content::Xlsx {
                grid,
                seeded: true,
                clear_to: size,
                extra: Vec::new(),
            });
        }
        Ok(Content::Xlsx {
            grid: Grid::new(),
            seeded: false,
            clear_to: (0, 0),
            extra: Vec::new(),
        })
    }

    fn set_cell(&mut self, path: &str, row: u32, col: u32, v: Value) -> Result<(), String> {
        if ext(path) != "xlsx" {
            return Err(format!("cells of {path}, which is not an .xlsx"));
        }
        let mut c = self.xlsx(path)?;
        if let Content::Xlsx { grid, .. } = &mut c {
            grid.insert((row, col), v);
        }
        self.files.insert(path.to_string(), c);
        Ok(())
    }

    fn seeded_lines(&self, path: &str) -> Vec<String> {
        if !self.seed.data_files.contains(path) {
            return Vec::new();
        }
        let Ok(bytes) = std::fs::read(self.seed.data_dir.join(path)) else {
            return Vec::new();
        };
        match ext(path).as_str() {
            "docx" => bureau_formats::office::read_docx(path, &bytes)
                .map(|d| d.paragraphs.iter().map(|p| p.text.clone()).collect())
                .unwrap_or_default(),
            "pdf" => bureau_formats::office::to_text(path, &bytes)
                .map(|t| {
                    t.lines()
                        .filter(|l| !l.starts_with("## Page"))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            _ => String::from_utf8(bytes)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default(),
        }
    }

    fn content(&mut self, path: &str) -> Result<Content, String> {
        if let Some(c) = self.files.get(path) {
            return Ok(c.clone());
        }
        Ok(match ext(path).as_str() {
            "xlsx" => self.xlsx(path)?,
            "docx" | "doc" => Content::Docx(self.seeded_lines(path)),
            "pdf" => Content::Pdf(self.seeded_lines(path)),
            "jpg" | "jpeg" | "png" | "gif" | "bmp" => {
                return Err(format!(
                    "{path} is an image, which Bureau's tools cannot make"
                ));
            }
            _ => Content::Text(self.seeded_lines(path)),
        })
    }

    fn ensure(&mut self, path: &str) -> Result<(), String> {
        if self.files.contains_key(path) {
            return Ok(());
        }
        let mut c = self.content(path)?;
        let stem = path.rsplit('/').next().unwrap_or(path).to_string();
        match &mut c {
            Content::Docx(l) | Content::Text(l) | Content::Pdf(l) if l.is_empty() => l.push(stem),
            Content::Xlsx { grid, .. } if grid.is_empty() => {
                grid.insert((1, 1), json!(force_text(&stem)));
            }
            _ => {}
        }
        self.files.insert(path.to_string(), c);
        Ok(())
    }

    fn add_keywords(&mut self, path: &str, keywords: &[String]) -> Result<(), String> {
        let mut c = self.content(path)?;
        match &mut c {
            Content::Docx(l) | Content::Text(l) | Content::Pdf(l) => {
                l.extend(keywords.iter().cloned());
            }
            Content::Xlsx { extra, .. } => extra.extend(keywords.iter().cloned()),
        }
        self.files.insert(path.to_string(), c);
        Ok(())
    }

    fn remove_keywords(&mut self, path: &str, keywords: &[String]) -> Result<(), String> {
        if !self.seed.data_files.contains(path) && !self.files.contains_key(path) {
            return Ok(());
        }
        let mut c = self.content(path)?;
        let low: Vec<String> = keywords.iter().map(|k| k.to_lowercase()).collect();
        match &mut c {
            Content::Docx(l) | Content::Text(l) | Content::Pdf(l) => {
                l.retain(|line| !low.iter().any(|k| line.to_lowercase().contains(k)));
            }
            Content::Xlsx { grid, .. } => remove_rows(grid, keywords),
        }
        self.files.insert(path.to_string(), c);
        Ok(())
    }

    fn add_event(&mut self, name: &str, keywords: &[String]) {
        let mut start = None;
        let mut end = None;
        let mut words = Vec::new();
        for k in keywords {
            match dt_keyword(k) {
                Some((true, t, date_only)) => {
                    start = Some(if date_only {
                        t.with_hour(9).unwrap_or(t)
                    } else {
                        t
                    })
                }
                Some((false, t, date_only)) => {
                    end = Some(if date_only {
                        t.with_hour(17).unwrap_or(t)
                    } else {
                        t
                    })
                }
                None => words.push(k.clone()),
            }
        }
        let name = name.to_lowercase();
        // the same event for several people (a common meeting of Bob and Tom)
        if let Some(e) = self.events.iter_mut().find(|e| {
            e.start == start
                && e.end == end
                && e.words
                    .iter()
                    .map(|w| w.to_lowercase())
                    .collect::<BTreeSet<_>>()
                    == words
                        .iter()
                        .map(|w| w.to_lowercase())
                        .collect::<BTreeSet<_>>()
        }) {
            e.names.insert(name);
            return;
        }
        self.events.push(EventPlan {
            start,
            end,
            words,
            names: BTreeSet::from([name]),
        });
    }

    fn finish(mut self, overlap: &BTreeSet<String>) -> Oracle {
        let mut calls = Vec::new();
        let user = self.seed.user.to_lowercase();
        let mut n_sheet = 0;
        let mut tmp_used = false;
        let files = std::mem::take(&mut self.files);
        for (path, c) in files {
            match c {
                Content::Docx(lines) => calls.push(json!({"tool": "files_write_docx", "args": {
                    "path": path,
                    "blocks": lines.iter().map(|l| json!({"type": "paragraph", "text": l})).collect::<Vec<_>>(),
                }})),
                Content::Text(lines) => calls.push(json!({"tool": "files_write", "args": {
                    "path": path, "content": format!("{}\n", lines.join("\n")),
                }})),
                Content::Pdf(lines) => {
                    let src = format!(".oracle/{}.md", path.replace('/', "_"));
                    calls.push(json!({"tool": "files_write", "args": {"path": src, "content": format!("{}\n", lines.join("\n\n"))}}));
                    calls.push(json!({"tool": "files_export_pdf", "args": {"source": src, "path": path}}));
                    tmp_used = true;
                }
                Content::Xlsx {
                    mut grid,
                    seeded,
                    clear_to,
                    extra,
                } => {
                    n_sheet += 1;
                    let book = format!("oracle-{n_sheet}");
                    if !extra.is_empty() {
                        let row = size_of(&grid).0.max(clear_to.0) + 1;
                        for (i, k) in extra.iter().enumerate() {
                            grid.insert((row, i as u32 + 1), typed(k));
                        }
                    }
                    let (rows, cols) = size_of(&grid).max_pair(clear_to);
                    let values: Vec<Vec<Value>> = (1..=rows)
                        .map(|r| {
                            (1..=cols)
                                .map(|c| grid.get(&(r, c)).cloned().unwrap_or(Value::Null))
                                .collect()
                        })
                        .collect();
                    if seeded {
                        calls.push(json!({"tool": "sheets_import", "args": {"path": path, "name": book}}));
                        // the first sheet of the imported book
                        calls.push(json!({"tool": "sheets_write", "args": {"spreadsheet": book, "range": "A1", "values": values}}));
                    } else {
                        calls.push(json!({"tool": "sheets_create", "args": {"name": book}}));
                        calls.push(json!({"tool": "sheets_write", "args": {"spreadsheet": book, "range": "A1", "values": values}}));
                    }
                    calls.push(json!({"tool": "sheets_export", "args": {"spreadsheet": book, "path": path, "overwrite": true}}));
                }
            }
        }
        for (from, to) in &self.moves {
            calls.push(json!({"tool": "files_move", "args": {"from": from, "to": to}}));
        }
        if tmp_used {
            calls.push(
                json!({"tool": "files_delete", "args": {"path": ".oracle", "recursive": true}}),
            );
        }
        for path in &self.deletes {
            calls.push(json!({"tool": "files_delete", "args": {"path": path, "recursive": true}}));
        }
        for (name, (subject, words)) in &self.mails {
            let subject = if subject.is_empty() {
                "OfficeBench".to_string()
            } else {
                subject.clone()
            };
            calls.push(json!({"tool": "mail_send", "args": {
                "to": [address(name)],
                "subject": subject,
                "body": if words.is_empty() { subject.clone() } else { words.join("\n") },
            }}));
        }
        // events: fixed times first, then free slots on the day the people are busy
        let mut busy: BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>> =
            self.seed.busy.clone();
        let events = std::mem::take(&mut self.events);
        let mut planned: Vec<(NaiveDateTime, NaiveDateTime, &EventPlan)> = Vec::new();
        for e in events.iter().filter(|e| e.start.is_some()) {
            let s = e.start.unwrap_or(self.seed.now);
            let end = e.end.filter(|x| *x > s).unwrap_or(s + Duration::hours(1));
            for n in e.names.iter().chain([&user]) {
                busy.entry(n.clone()).or_default().push((s, end));
            }
            planned.push((s, end, e));
        }
        for e in events.iter().filter(|e| e.start.is_none()) {
            let people: BTreeSet<String> = e
                .names
                .iter()
                .cloned()
                .chain([user.clone()])
                .chain(overlap.iter().cloned())
                .collect();
            let s = free_slot(&busy, &people, self.seed.now);
            let end = e.end.filter(|x| *x > s).unwrap_or(s + Duration::hours(1));
            for n in &people {
                busy.entry(n.clone()).or_default().push((s, end));
            }
            planned.push((s, end, e));
        }
        for (s, end, e) in planned {
            let summary = if e.words.is_empty() {
                "Event".to_string()
            } else {
                e.words.join(" ")
            };
            let attendees: Vec<String> = e
                .names
                .iter()
                .filter(|n| **n != user)
                .map(|n| address(n))
                .collect();
            calls.push(json!({"tool": "calendar_create", "args": {
                "summary": summary,
                "start": s.format("%Y-%m-%dT%H:%M:%S").to_string(),
                "end": end.format("%Y-%m-%dT%H:%M:%S").to_string(),
                "attendees": attendees,
            }}));
        }
        let message = (!self.message.is_empty()).then(|| self.message.join("\n"));
        Oracle { calls, message }
    }
}

/// The first hour from 08:00 to 21:00 on the people's busiest day (else the turn's day) when
/// none of them is busy.
fn free_slot(
    busy: &BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>>,
    people: &BTreeSet<String>,
    now: NaiveDateTime,
) -> NaiveDateTime {
    let mut days: BTreeMap<NaiveDate, usize> = BTreeMap::new();
    for p in people {
        for (s, _) in busy.get(p).map(Vec::as_slice).unwrap_or(&[]) {
            *days.entry(s.date()).or_insert(0) += 1;
        }
    }
    let day = days
        .iter()
        .max_by_key(|(d, n)| (**n, std::cmp::Reverse(**d)))
        .map(|(d, _)| *d)
        .unwrap_or(now.date());
    for half_hours in 16..=42 {
        let Some(s) = day.and_hms_opt(half_hours / 2, (half_hours % 2) * 30, 0) else {
            continue;
        };
        let e = s + Duration::hours(1);
        let clash = people.iter().any(|p| {
            busy.get(p)
                .is_some_and(|v| v.iter().any(|(bs, be)| *bs < e && s < *be))
        });
        if !clash {
            return s;
        }
    }
    day.and_hms_opt(22, 0, 0).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_keywords_become_times() {
        let (start, t, date_only) = dt_keyword("DTSTART:20240517T103000Z").expect("a time");
        assert!(start && !date_only);
        assert_eq!(t.to_string(), "2024-05-17 10:30:00");
        let (start, t, date_only) = dt_keyword("DTEND:20240623").expect("a date");
        assert!(!start && date_only);
        assert_eq!(t.date().to_string(), "2024-06-23");
        assert!(dt_keyword("dinner").is_none());
    }

    #[test]
    fn comparator_values_are_found() {
        assert_eq!(
            comparator_value("lambda x: x in ['1', '2']").as_deref(),
            Some("1")
        );
        assert_eq!(
            comparator_value("lambda x: x == \"Y\"").as_deref(),
            Some("Y")
        );
        assert_eq!(comparator_value("lambda x: int(x) > 3"), None);
    }

    #[test]
    fn deleting_rows_shifts_the_rest_up() {
        let mut g = Grid::new();
        g.insert((1, 1), json!("Name"));
        g.insert((2, 1), json!("Alice"));
        g.insert((2, 2), json!(78.0));
        g.insert((3, 1), json!("Bob"));
        remove_rows(&mut g, &["Alice".into(), "78".into()]);
        assert_eq!(g.get(&(2, 1)), Some(&json!("Bob")));
        assert_eq!(g.len(), 2);
    }
}
