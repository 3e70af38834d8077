//! In-place editing of an .xlsx: set cells in the worksheet XML and keep everything else.
//!
//! Only the edited worksheets' `sheetData` rows that change are rewritten; a cell keeps its
//! style (`s`, so fonts, fills, borders and number formats stay); every other zip entry is
//! copied raw. `xl/calcChain.xml` is removed (with its relationship and content type) so Excel
//! rebuilds it, and `fullCalcOnLoad` is set where the workbook has a `calcPr`. Text is written
//! as inline strings (the shared strings part is not touched).
//!
//! A plain date or date-time gets a copy of its cell's format with the built-in date (14) or
//! date-time (22) number format, added to `xl/styles.xml`.
//!
//! Some edits are not done in place; [`edit_xlsx`] then answers `None` and the caller
//! rewrites the workbook instead: text a worksheet cannot hold (control characters),
//! overwriting the master cell of a shared formula or an array formula, a date in a workbook
//! without a styles part, a sheet part that cannot be found.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Cell, CellRef, CellValue, a1};
use crate::FormatError;
use crate::office::archive::{Archive, Xml, attr, walk_xml};
use crate::office::docx_edit::{Node, children, escape, first_child, nodes};

/// One change to a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CellEdit {
    /// Set the cell (value and formula, the value computed); an empty cell without formula
    /// clears it.
    Set(Cell),
    /// Keep the cell's formula, store a new computed value (a dependent of a changed cell).
    Recache(CellValue),
}

/// Apply `edits` (sheet name, cell, edit) to the .xlsx `bytes`; `None` when they cannot be
/// done in place (see the module docs). Runs in an isolated child process.
pub fn edit_xlsx(
    file: &str,
    bytes: &[u8],
    edits: &[(String, CellRef, CellEdit)],
) -> Result<Option<Vec<u8>>, FormatError> {
    crate::isolated::read_with(
        file,
        &(file.to_string(), edits.to_vec()),
        bytes,
        |(f, edits): &(String, Vec<(String, CellRef, CellEdit)>), b| {
            edit_xlsx_in_process(f, b, edits)
        },
    )
}

fn bad(file: &str, why: String) -> FormatError {
    FormatError::InvalidDocument {
        file: file.to_string(),
        reason: why,
    }
}

pub(crate) fn edit_xlsx_in_process(
    file: &str,
    bytes: &[u8],
    edits: &[(String, CellRef, CellEdit)],
) -> Result<Option<Vec<u8>>, FormatError> {
    for (_, _, e) in edits {
        if let CellEdit::Set(c) = e
            && c.formula.is_none()
            && let CellValue::Text(t) = &c.value
            && !xml_safe(t)
        {
            return Ok(None);
        }
    }
    super::io::check_zip(file, bytes)?;
    let mut zip = Archive::open(file, bytes, ".xlsx")?;
    let Some(workbook) = zip.read("xl/workbook.xml")? else {
        return Ok(None);
    };
    let rels = zip.read("xl/_rels/workbook.xml.rels")?.unwrap_or_default();
    let parts = sheet_parts(file, &workbook, &rels)?;
    let mut by_part: BTreeMap<String, Vec<(CellRef, &CellEdit)>> = BTreeMap::new();
    for (sheet, at, e) in edits {
        let Some(part) = parts.get(sheet) else {
            return Ok(None);
        };
        by_part.entry(part.clone()).or_default().push((*at, e));
    }
    let needs_dates = edits.iter().any(|(_, _, e)| {
        matches!(e, CellEdit::Set(c) if c.formula.is_none()
            && matches!(c.value, CellValue::Date(_) | CellValue::DateTime(_)))
    });
    let mut dates = if needs_dates {
        let Some(styles) = zip.read("xl/styles.xml")? else {
            return Ok(None);
        };
        match DateStyles::parse(styles) {
            Some(d) => Some(d),
            None => return Ok(None),
        }
    } else {
        None
    };
    let mut replaced = BTreeMap::new();
    for (part, cells) in &by_part {
        let Some(xml) = zip.read(part)? else {
            return Ok(None);
        };
        match edit_sheet(&xml, cells, &mut dates).map_err(|e| bad(file, format!("{part}: {e}")))? {
            Some(new) => {
                replaced.insert(part.clone(), new);
            }
            None => return Ok(None),
        }
    }
    if let Some(styles) = dates.as_ref().and_then(DateStyles::finish) {
        replaced.insert("xl/styles.xml".to_string(), styles);
    }
    let mut removed = Vec::new();
    if zip.has("xl/calcChain.xml") {
        removed.push("xl/calcChain.xml");
        replaced.insert(
            "xl/_rels/workbook.xml.rels".to_string(),
            strip_element(&rels, "Relationship", "calcChain"),
        );
        if let Some(ct) = zip.read("[Content_Types].xml")? {
            replaced.insert(
                "[Content_Types].xml".to_string(),
                strip_element(&ct, "Override", "calcChain"),
            );
        }
    }
    let full_calc = full_calc_on_load(&workbook);
    if full_calc != workbook {
        replaced.insert("xl/workbook.xml".to_string(), full_calc);
    }
    crate::office::archive::rewrite_without(file, bytes, &replaced, &removed).map(Some)
}

fn xml_safe(t: &str) -> bool {
    !t.chars().any(|c| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}'
    })
}

/// Sheet name → its worksheet part ("xl/worksheets/sheet1.xml").
fn sheet_parts(
    file: &str,
    workbook: &[u8],
    rels: &[u8],
) -> Result<BTreeMap<String, String>, FormatError> {
    let mut ids: Vec<(String, String)> = Vec::new();
    walk_xml(file, "xl/workbook.xml", workbook, |ev| {
        if let Xml::Empty { name, attrs } | Xml::Start { name, attrs } = ev
            && name == b"sheet"
            && let (Some(n), Some(id)) = (attr(&attrs, b"name"), attr(&attrs, b"id"))
        {
            ids.push((n.to_string(), id.to_string()));
        }
    })?;
    let mut targets: BTreeMap<String, String> = BTreeMap::new();
    walk_xml(file, "xl/_rels/workbook.xml.rels", rels, |ev| {
        if let Xml::Empty { name, attrs } | Xml::Start { name, attrs } = ev
            && name == b"Relationship"
            && let (Some(id), Some(t)) = (attr(&attrs, b"Id"), attr(&attrs, b"Target"))
        {
            let path = match t.strip_prefix('/') {
                Some(abs) => abs.to_string(),
                None => format!("xl/{t}"),
            };
            targets.insert(id.to_string(), path);
        }
    })?;
    Ok(ids
        .into_iter()
        .filter_map(|(n, id)| targets.get(&id).map(|t| (n, t.clone())))
        .collect())
}

/// The value of attribute `key` in a start tag (`r="B2"` or `r='B2'`).
fn tag_attr(tag: &[u8], key: &str) -> Option<String> {
    let text = std::str::from_utf8(tag).ok()?;
    let mut rest = text;
    loop {
        let i = rest.find(key)?;
        let before = rest[..i].chars().last();
        let after = &rest[i + key.len()..];
        if before.is_some_and(char::is_whitespace) {
            let after = after.trim_start();
            if let Some(v) = after.strip_prefix('=') {
                let v = v.trim_start();
                let q = v.chars().next()?;
                if q == '"' || q == '\'' {
                    let end = v[1..].find(q)?;
                    return Some(v[1..1 + end].to_string());
                }
            }
        }
        rest = &rest[i + key.len()..];
    }
}

fn start_tag<'a>(xml: &'a [u8], n: &Node) -> &'a [u8] {
    &xml[n.start..n.inner_start]
}

/// `sheetData` of a worksheet with `cells` applied; `None` when an edit cannot be done in
/// place.
fn edit_sheet(
    xml: &[u8],
    cells: &[(CellRef, &CellEdit)],
    dates: &mut Option<DateStyles>,
) -> Result<Option<Vec<u8>>, String> {
    let roots = nodes(xml, 0)?;
    let ws = roots
        .iter()
        .find(|n| n.local == b"worksheet")
        .ok_or("there is no worksheet element")?;
    let kids = children(xml, ws)?;
    let Some(data) = first_child(&kids, b"sheetData") else {
        return Ok(None);
    };
    let prefix = {
        let tag = String::from_utf8_lossy(start_tag(xml, data)).into_owned();
        let name: String = tag
            .chars()
            .skip(1)
            .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
            .collect();
        name.split_once(':')
            .map(|(p, _)| format!("{p}:"))
            .unwrap_or_default()
    };
    // Existing rows by number (rows without `r` follow the previous one).
    let mut rows: BTreeMap<u32, Node> = BTreeMap::new();
    let mut next = 0u32;
    for r in children(xml, data)?
        .into_iter()
        .filter(|n| n.local == b"row")
    {
        let num = tag_attr(start_tag(xml, &r), "r")
            .and_then(|v| v.parse::<u32>().ok())
            .and_then(|v| v.checked_sub(1))
            .unwrap_or(next);
        next = num + 1;
        rows.insert(num, r);
    }
    let mut wanted: BTreeMap<u32, BTreeMap<u32, &CellEdit>> = BTreeMap::new();
    for (at, e) in cells {
        wanted.entry(at.row).or_default().insert(at.col, *e);
    }
    let all_rows: Vec<u32> = rows
        .keys()
        .chain(wanted.keys())
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut body = Vec::with_capacity(data.inner_end - data.inner_start + 256);
    for r in all_rows {
        match (rows.get(&r), wanted.get(&r)) {
            (Some(n), None) => body.extend_from_slice(&xml[n.start..n.end]),
            (existing, Some(edits)) => match edit_row(xml, existing, r, edits, &prefix, dates)? {
                Some(bytes) => body.extend_from_slice(&bytes),
                None => return Ok(None),
            },
            (None, None) => {}
        }
    }
    let mut out = xml[..data.start].to_vec();
    if data.empty {
        out.extend_from_slice(format!("<{prefix}sheetData>").as_bytes());
    } else {
        out.extend_from_slice(start_tag(xml, data));
    }
    out.extend_from_slice(&body);
    out.extend_from_slice(format!("</{prefix}sheetData>").as_bytes());
    out.extend_from_slice(&xml[data.end..]);
    Ok(Some(widen_dimension(&out, cells)))
}

fn edit_row(
    xml: &[u8],
    row: Option<&Node>,
    r: u32,
    edits: &BTreeMap<u32, &CellEdit>,
    prefix: &str,
    dates: &mut Option<DateStyles>,
) -> Result<Option<Vec<u8>>, String> {
    let mut cells: BTreeMap<u32, Node> = BTreeMap::new();
    let mut out = match row {
        Some(n) => {
            let mut next = 0u32;
            for c in children(xml, n)?.into_iter().filter(|c| c.local == b"c") {
                let col = tag_attr(start_tag(xml, &c), "r")
                    .and_then(|v| CellRef::parse(&v))
                    .map(|c| c.col)
                    .unwrap_or(next);
                next = col + 1;
                cells.insert(col, c);
            }
            // The row's own start tag, without the `spans` hint (it may no longer hold).
            let tag = String::from_utf8_lossy(&open(xml, n)).into_owned();
            remove_attr(&tag, "spans").into_bytes()
        }
        None => format!("<{prefix}row r=\"{}\">", r + 1).into_bytes(),
    };
    let cols: std::collections::BTreeSet<u32> = cells.keys().chain(edits.keys()).copied().collect();
    for col in cols {
        match (cells.get(&col), edits.get(&col)) {
            (Some(c), None) => out.extend_from_slice(&xml[c.start..c.end]),
            (existing, Some(e)) => {
                match write_cell(xml, existing, CellRef::new(r, col), e, prefix, dates)? {
                    Some(bytes) => out.extend_from_slice(&bytes),
                    None => return Ok(None),
                }
            }
            (None, None) => {}
        }
    }
    out.extend_from_slice(format!("</{prefix}row>").as_bytes());
    Ok(Some(out))
}

/// A start tag as an opening tag (`<row .../>` → `<row ...>`).
fn open(xml: &[u8], n: &Node) -> Vec<u8> {
    let mut t = start_tag(xml, n).to_vec();
    if n.empty {
        t.truncate(t.len().saturating_sub(2));
        while t.last().is_some_and(u8::is_ascii_whitespace) {
            t.pop();
        }
        t.push(b'>');
    }
    t
}

fn remove_attr(tag: &str, key: &str) -> String {
    let pat = format!(" {key}=");
    let Some(i) = tag.find(&pat) else {
        return tag.to_string();
    };
    let rest = &tag[i + pat.len()..];
    let Some(q) = rest.chars().next() else {
        return tag.to_string();
    };
    match rest[1..].find(q) {
        Some(end) => format!("{}{}", &tag[..i], &rest[end + 2..]),
        None => tag.to_string(),
    }
}

/// The new XML of one cell; `None` when it cannot be written in place.
fn write_cell(
    xml: &[u8],
    existing: Option<&Node>,
    at: CellRef,
    edit: &CellEdit,
    prefix: &str,
    dates: &mut Option<DateStyles>,
) -> Result<Option<Vec<u8>>, String> {
    let mut style = existing.and_then(|n| tag_attr(start_tag(xml, n), "s"));
    // A plain date gets the cell's format with a date number format (a new cell format).
    if let CellEdit::Set(cell) = edit
        && cell.formula.is_none()
        && let fmt @ Some(_) = match cell.value {
            CellValue::Date(_) => Some(14),
            CellValue::DateTime(_) => Some(22),
            _ => None,
        }
    {
        let base = match &style {
            Some(s) => match s.parse::<usize>() {
                Ok(b) => b,
                Err(_) => return Ok(None),
            },
            None => 0,
        };
        let Some(d) = dates.as_mut() else {
            return Ok(None);
        };
        match fmt.and_then(|f| d.style_for(base, f)) {
            Some(i) => style = Some(i.to_string()),
            None => return Ok(None),
        }
    }
    let old_f = match existing {
        Some(n) => {
            let kids = children(xml, n)?;
            first_child(&kids, b"f").map(|f| (xml[f.start..f.end].to_vec(), f.clone()))
        }
        None => None,
    };
    let s_attr = style
        .map(|s| format!(" s=\"{}\"", escape(&s)))
        .unwrap_or_default();
    let (f_xml, value) = match edit {
        CellEdit::Recache(v) => match &old_f {
            Some((bytes, _)) => (Some(bytes.clone()), v.clone()),
            None => return Ok(None),
        },
        CellEdit::Set(cell) => {
            // The master of a shared or array formula carries other cells' formulas.
            if let Some((_, f)) = &old_f {
                let tag = start_tag(xml, f);
                if tag_attr(tag, "ref").is_some() {
                    return Ok(None);
                }
            }
            let f = cell.formula.as_ref().map(|f| {
                format!(
                    "<{prefix}f>{}</{prefix}f>",
                    escape(f.strip_prefix('=').unwrap_or(f))
                )
                .into_bytes()
            });
            if f.is_none() && cell.value == CellValue::Empty {
                // Cleared: a styled cell stays as an empty styled cell.
                return Ok(Some(if s_attr.is_empty() {
                    Vec::new()
                } else {
                    format!("<{prefix}c r=\"{at}\"{s_attr}/>").into_bytes()
                }));
            }
            (f, cell.value.clone())
        }
    };
    let formula = f_xml.is_some();
    let v = |t: &str| format!("<{prefix}v>{t}</{prefix}v>");
    let (t_attr, inner) = match &value {
        CellValue::Empty => ("", String::new()),
        CellValue::Number(n) => ("", v(&number(*n))),
        CellValue::Bool(b) => (" t=\"b\"", v(if *b { "1" } else { "0" })),
        d @ (CellValue::Date(_) | CellValue::DateTime(_)) => {
            ("", v(&number(d.serial().unwrap_or(0.0))))
        }
        CellValue::Error(e) if EXCEL_ERRORS.contains(&e.as_str()) => (" t=\"e\"", v(e)),
        CellValue::Text(t) | CellValue::Error(t) if formula => {
            if !xml_safe(t) {
                return Ok(None);
            }
            (" t=\"str\"", v(&escape(t)))
        }
        CellValue::Text(t) | CellValue::Error(t) => (
            " t=\"inlineStr\"",
            format!(
                "<{prefix}is><{prefix}t xml:space=\"preserve\">{}</{prefix}t></{prefix}is>",
                escape(t)
            ),
        ),
    };
    let mut out = format!("<{prefix}c r=\"{at}\"{s_attr}{t_attr}>").into_bytes();
    if let Some(f) = f_xml {
        out.extend_from_slice(&f);
    }
    out.extend_from_slice(inner.as_bytes());
    out.extend_from_slice(format!("</{prefix}c>").as_bytes());
    Ok(Some(out))
}

/// `xl/styles.xml` and the cell formats added to it: copies of a cell's format with a date
/// number format (14, a date; 22, a date and time — the built-ins readers take for dates).
pub(crate) struct DateStyles {
    xml: Vec<u8>,
    cell_xfs: Node,
    xfs: Vec<Node>,
    added: Vec<u8>,
    made: BTreeMap<(usize, u32), usize>,
}

impl DateStyles {
    fn parse(xml: Vec<u8>) -> Option<DateStyles> {
        let roots = nodes(&xml, 0).ok()?;
        let root = roots.iter().find(|n| n.local == b"styleSheet")?;
        let kids = children(&xml, root).ok()?;
        let cell_xfs = first_child(&kids, b"cellXfs")?.clone();
        if cell_xfs.empty {
            return None;
        }
        let xfs: Vec<Node> = children(&xml, &cell_xfs)
            .ok()?
            .into_iter()
            .filter(|n| n.local == b"xf")
            .collect();
        if xfs.is_empty() {
            return None;
        }
        Some(DateStyles {
            xml,
            cell_xfs,
            xfs,
            added: Vec::new(),
            made: BTreeMap::new(),
        })
    }

    /// The index of cell format `base` with number format `fmt`.
    fn style_for(&mut self, base: usize, fmt: u32) -> Option<usize> {
        if let Some(i) = self.made.get(&(base, fmt)) {
            return Some(*i);
        }
        let xf = self.xfs.get(base)?;
        let tag = String::from_utf8_lossy(&self.xml[xf.start..xf.inner_start]).into_owned();
        let rest = String::from_utf8_lossy(&self.xml[xf.inner_start..xf.end]).into_owned();
        let mut tag = remove_attr(&remove_attr(&tag, "numFmtId"), "applyNumberFormat");
        // Insert the attributes after the element name.
        let name_end = tag
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(tag.len());
        tag.insert_str(
            name_end,
            &format!(" numFmtId=\"{fmt}\" applyNumberFormat=\"1\""),
        );
        let index = self.xfs.len() + self.made.len();
        self.added.extend_from_slice(tag.as_bytes());
        self.added.extend_from_slice(rest.as_bytes());
        self.made.insert((base, fmt), index);
        Some(index)
    }

    /// The styles part with the added formats (and `cellXfs count` updated), if any.
    fn finish(&self) -> Option<Vec<u8>> {
        if self.added.is_empty() {
            return None;
        }
        let c = &self.cell_xfs;
        let tag = String::from_utf8_lossy(&self.xml[c.start..c.inner_start]).into_owned();
        let mut tag = remove_attr(&tag, "count");
        let name_end = tag
            .find(|ch: char| ch.is_whitespace() || ch == '>' || ch == '/')
            .unwrap_or(tag.len());
        tag.insert_str(
            name_end,
            &format!(" count=\"{}\"", self.xfs.len() + self.made.len()),
        );
        let mut out = self.xml[..c.start].to_vec();
        out.extend_from_slice(tag.as_bytes());
        out.extend_from_slice(&self.xml[c.inner_start..c.inner_end]);
        out.extend_from_slice(&self.added);
        out.extend_from_slice(&self.xml[c.inner_end..]);
        Some(out)
    }
}

const EXCEL_ERRORS: &[&str] = &[
    "#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!",
];

/// A number as a worksheet stores it (shortest round-trip form, no exponent surprises).
fn number(n: f64) -> String {
    if n.is_finite() {
        format!("{n}")
    } else {
        "0".into()
    }
}

/// `<dimension ref="A1:D10"/>` widened to hold the edited cells.
fn widen_dimension(xml: &[u8], cells: &[(CellRef, &CellEdit)]) -> Vec<u8> {
    let Ok(re) = regex::bytes::Regex::new(r#"(<(?:\w+:)?dimension\s+ref=")([A-Za-z0-9:$]+)(")"#)
    else {
        return xml.to_vec();
    };
    let Some(caps) = re.captures(xml) else {
        return xml.to_vec();
    };
    let (Some(whole), Some(r)) = (caps.get(0), caps.get(2)) else {
        return xml.to_vec();
    };
    let text = String::from_utf8_lossy(r.as_bytes()).replace('$', "");
    let (mut lo, mut hi) = match a1::RangeRef::parse(&text) {
        Some(rr) => (rr.start, rr.end),
        None => match CellRef::parse(&text) {
            Some(c) => (c, c),
            None => return xml.to_vec(),
        },
    };
    for (c, _) in cells {
        lo = CellRef::new(lo.row.min(c.row), lo.col.min(c.col));
        hi = CellRef::new(hi.row.max(c.row), hi.col.max(c.col));
    }
    let new = if lo == hi {
        format!("{lo}")
    } else {
        format!("{lo}:{hi}")
    };
    let mut out = xml[..r.start()].to_vec();
    out.extend_from_slice(new.as_bytes());
    out.extend_from_slice(&xml[r.end()..]);
    let _ = whole;
    out
}

/// `xml` without the `<element .../>` entries that mention `needle` (calcChain).
fn strip_element(xml: &[u8], element: &str, needle: &str) -> Vec<u8> {
    let pattern = format!(r#"<(?:\w+:)?{element}\b[^>]*{needle}[^>]*/>"#);
    match regex::bytes::Regex::new(&pattern) {
        Ok(re) => re.replace_all(xml, &b""[..]).into_owned(),
        Err(_) => xml.to_vec(),
    }
}

/// `fullCalcOnLoad="1"` on the workbook's `calcPr`, when it has one.
fn full_calc_on_load(workbook: &[u8]) -> Vec<u8> {
    let Ok(re) = regex::bytes::Regex::new(r#"<((?:\w+:)?calcPr)\b([^>]*?)(/?)>"#) else {
        return workbook.to_vec();
    };
    let Some(caps) = re.captures(workbook) else {
        return workbook.to_vec();
    };
    let (Some(whole), Some(attrs)) = (caps.get(0), caps.get(2)) else {
        return workbook.to_vec();
    };
    if attrs.as_bytes().windows(14).any(|w| w == b"fullCalcOnLoad") {
        return workbook.to_vec();
    }
    let mut out = workbook[..attrs.end()].to_vec();
    out.extend_from_slice(b" fullCalcOnLoad=\"1\"");
    out.extend_from_slice(&workbook[attrs.end()..whole.end()]);
    out.extend_from_slice(&workbook[whole.end()..]);
    out
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Read, Write};

    use proptest::prelude::*;

    use super::*;
    use crate::sheet::{Workbook, read_file, write_xlsx};

    fn c(s: &str) -> CellRef {
        CellRef::parse(s).unwrap()
    }

    /// A hand-made workbook: a shared formula, rows and cells without `r`, a calcChain.
    fn handmade(sheet_data: &str) -> Vec<u8> {
        let sheet = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:C3"/><cols><col min="1" max="1" width="25" customWidth="1"/></cols><sheetData>{sheet_data}</sheetData><mergeCells count="1"><mergeCell ref="E1:F1"/></mergeCells></worksheet>"#
        );
        let entries: Vec<(&str, String)> = vec![
            (
                "[Content_Types].xml",
                r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/calcChain.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.calcChain+xml"/></Types>"#.into(),
            ),
            (
                "_rels/.rels",
                r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.into(),
            ),
            (
                "xl/workbook.xml",
                r#"<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Q&amp;A" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="191029"/></workbook>"#.into(),
            ),
            (
                "xl/_rels/workbook.xml.rels",
                r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/calcChain" Target="calcChain.xml"/></Relationships>"#.into(),
            ),
            ("xl/worksheets/sheet1.xml", sheet),
            (
                "xl/calcChain.xml",
                r#"<?xml version="1.0"?><calcChain xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><c r="B2" i="1"/></calcChain>"#.into(),
            ),
        ];
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, body) in entries {
            z.start_file(name, zip::write::SimpleFileOptions::default())
                .unwrap();
            z.write_all(body.as_bytes()).unwrap();
        }
        z.finish().unwrap().into_inner()
    }

    const DATA: &str = r#"<row r="1"><c r="A1" s="1" t="inlineStr"><is><t>Item</t></is></c><c r="B1"><v>10</v></c></row><row><c><v>1</v></c><c><f t="shared" ref="B2:B3" si="0">A2*2</f><v>2</v></c></row><row r="3"><c r="A3"><v>3</v></c><c r="B3"><f t="shared" si="0"/><v>6</v></c></row>"#;

    fn entry(bytes: &[u8], name: &str) -> Option<String> {
        let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
        let mut s = String::new();
        z.by_name(name).ok()?.read_to_string(&mut s).unwrap();
        Some(s)
    }

    fn set(v: CellValue, f: Option<&str>) -> CellEdit {
        CellEdit::Set(Cell {
            value: v,
            formula: f.map(str::to_string),
        })
    }

    #[test]
    fn cells_are_set_in_place_and_the_rest_is_kept() {
        let before = handmade(DATA);
        let wb = read_file("q.xlsx", &before).unwrap();
        assert_eq!(wb.sheets[0].name, "Q&A");
        let edits = vec![
            (
                "Q&A".to_string(),
                c("A1"),
                set(CellValue::Text("Name & <x>".into()), None),
            ),
            (
                "Q&A".to_string(),
                c("A3"),
                set(CellValue::Number(4.5), None),
            ),
            (
                "Q&A".to_string(),
                c("B3"),
                CellEdit::Recache(CellValue::Number(9.0)),
            ),
            ("Q&A".to_string(), c("D5"), set(CellValue::Bool(true), None)),
            (
                "Q&A".to_string(),
                c("C2"),
                set(CellValue::Number(7.0), Some("=A2+B2+4")),
            ),
            ("Q&A".to_string(), c("B1"), set(CellValue::Empty, None)),
        ];
        let after = edit_xlsx_in_process("q.xlsx", &before, &edits)
            .unwrap()
            .unwrap();
        let sheet = entry(&after, "xl/worksheets/sheet1.xml").unwrap();
        assert!(sheet.contains(r#"<dimension ref="A1:D5"/>"#), "{sheet}");
        assert!(
            sheet.contains(r#"<row r="1"><c r="A1" s="1" t="inlineStr"><is><t xml:space="preserve">Name &amp; &lt;x&gt;</t></is></c></row>"#),
            "{sheet}"
        );
        assert!(
            sheet.contains(r#"<c r="B3"><f t="shared" si="0"/><v>9</v></c>"#),
            "{sheet}"
        );
        assert!(
            sheet.contains(r#"<c r="C2"><f>A2+B2+4</f><v>7</v></c>"#),
            "{sheet}"
        );
        assert!(
            sheet.contains(
                r#"<row r="5"><c r="D5" t="b"><v>1</v></c></row></sheetData><mergeCells"#
            ),
            "{sheet}"
        );
        assert!(sheet.contains(r#"<col min="1" max="1" width="25" customWidth="1"/>"#));
        // calcChain is gone, with its relationship and content type; Excel recalculates.
        assert!(entry(&after, "xl/calcChain.xml").is_none());
        assert!(
            !entry(&after, "xl/_rels/workbook.xml.rels")
                .unwrap()
                .contains("calcChain")
        );
        assert!(
            !entry(&after, "[Content_Types].xml")
                .unwrap()
                .contains("calcChain")
        );
        assert!(
            entry(&after, "xl/workbook.xml")
                .unwrap()
                .contains(r#"<calcPr calcId="191029" fullCalcOnLoad="1"/>"#)
        );
        // It reads back.
        let wb = read_file("q.xlsx", &after).unwrap();
        let s = &wb.sheets[0];
        assert_eq!(s.value(c("A1")), CellValue::Text("Name & <x>".into()));
        assert_eq!(s.value(c("A3")), CellValue::Number(4.5));
        assert_eq!(s.value(c("B3")), CellValue::Number(9.0));
        assert_eq!(s.value(c("D5")), CellValue::Bool(true));
        assert_eq!(s.value(c("B1")), CellValue::Empty);
        assert_eq!(s.get(c("C2")).unwrap().formula.as_deref(), Some("=A2+B2+4"));
        assert_eq!(s.get(c("B3")).unwrap().formula.as_deref(), Some("=A3*2"));
    }

    #[test]
    fn what_cannot_be_done_in_place_is_refused_for_a_rewrite() {
        let before = handmade(DATA);
        let none = |e: CellEdit, at: &str| {
            edit_xlsx_in_process("q.xlsx", &before, &[("Q&A".to_string(), c(at), e)])
                .unwrap()
                .is_none()
        };
        // The master of a shared formula.
        assert!(none(set(CellValue::Number(1.0), None), "B2"));
        // A plain date in a workbook without a styles part, text a worksheet cannot hold, a
        // sheet that is not there.
        assert!(none(
            set(
                CellValue::Date(chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap()),
                None
            ),
            "A1"
        ));
        assert!(none(set(CellValue::Text("bell\u{7}".into()), None), "A1"));
        assert!(
            edit_xlsx_in_process(
                "q.xlsx",
                &before,
                &[("Nope".into(), c("A1"), set(CellValue::Number(1.0), None))]
            )
            .unwrap()
            .is_none()
        );
        // A shared formula's other cells can be overwritten.
        assert!(!none(set(CellValue::Number(1.0), None), "B3"));
        // Broken and hostile files are errors.
        assert!(edit_xlsx("q.xlsx", b"not a zip", &[]).is_err());
        let deep = handmade(&format!("{}{}", "<row>".repeat(300), "</row>".repeat(300)));
        let e = edit_xlsx_in_process(
            "q.xlsx",
            &deep,
            &[("Q&A".into(), c("A1"), set(CellValue::Number(1.0), None))],
        );
        assert!(e.is_err(), "{e:?}");
    }

    #[test]
    fn dates_get_a_copy_of_their_cells_format_with_a_date_number_format() {
        let mut wb = Workbook::default();
        let s = wb.add_sheet("Data").unwrap();
        wb.set_input(s, c("A1"), "Due").unwrap();
        wb.set_input(s, c("B1"), "2026-01-01").unwrap();
        let before = write_xlsx(&wb).unwrap();
        let d = chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
        let t = d.and_hms_opt(9, 30, 0).unwrap();
        let edits = vec![
            ("Data".to_string(), c("A2"), set(CellValue::Date(d), None)),
            ("Data".to_string(), c("A3"), set(CellValue::Date(d), None)),
            (
                "Data".to_string(),
                c("A4"),
                set(CellValue::DateTime(t), None),
            ),
            ("Data".to_string(), c("B1"), set(CellValue::Date(d), None)),
        ];
        let after = edit_xlsx_in_process("d.xlsx", &before, &edits)
            .unwrap()
            .unwrap();
        let back = read_file("d.xlsx", &after).unwrap();
        let s = &back.sheets[0];
        assert_eq!(s.value(c("A2")), CellValue::Date(d));
        assert_eq!(s.value(c("A3")), CellValue::Date(d));
        assert_eq!(s.value(c("A4")), CellValue::DateTime(t));
        assert_eq!(s.value(c("B1")), CellValue::Date(d));
        assert_eq!(s.value(c("A1")), CellValue::Text("Due".into()));
        // Two new formats for the unstyled cells (date, date-time), one copy of B1's.
        let styles = entry(&after, "xl/styles.xml").unwrap();
        let before_styles = entry(&before, "xl/styles.xml").unwrap();
        let count = |x: &str| x.matches("<xf ").count();
        assert_eq!(count(&styles), count(&before_styles) + 3, "{styles}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random sets on a Bureau workbook are done in place and read back as set.
        #[test]
        fn random_sets_read_back(cells in proptest::collection::btree_map(
            (0u32..30, 0u32..6),
            prop_oneof![
                (-1e6f64..1e6).prop_map(CellValue::Number),
                any::<bool>().prop_map(CellValue::Bool),
                "[a-zA-Z &<>]{1,8}".prop_map(CellValue::Text),
                Just(CellValue::Empty),
            ],
            1..12,
        )) {
            let mut wb = Workbook::default();
            let s = wb.add_sheet("Data").unwrap();
            for (i, v) in ["Item", "10", "=B1*2", "x", "TRUE"].iter().enumerate() {
                wb.set_input(s, CellRef::new(i as u32 * 3, 1), v).unwrap();
            }
            wb.recalculate();
            let before = write_xlsx(&wb).unwrap();
            let edits: Vec<(String, CellRef, CellEdit)> = cells
                .iter()
                .map(|((r, col), v)| ("Data".to_string(), CellRef::new(*r, *col), set(v.clone(), None)))
                .collect();
            let after = edit_xlsx_in_process("d.xlsx", &before, &edits).unwrap().unwrap();
            let back = read_file("d.xlsx", &after).unwrap();
            for ((r, col), v) in &cells {
                prop_assert_eq!(back.sheets[0].value(CellRef::new(*r, *col)), v.clone());
            }
            for (i, _) in ["Item", "10", "=B1*2", "x", "TRUE"].iter().enumerate() {
                let at = CellRef::new(i as u32 * 3, 1);
                if !cells.contains_key(&(at.row, at.col)) {
                    prop_assert_eq!(back.sheets[0].value(at), wb.sheets[0].value(at));
                }
            }
        }
    }
}
