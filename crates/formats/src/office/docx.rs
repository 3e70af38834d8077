//! .docx: read paragraphs (style, heading level, list level) and tables; write headings,
//! paragraphs, bullet lists and tables (with docx-rs).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::archive::{Archive, Xml, attr, walk_xml};
use super::invalid;
use crate::FormatError;

/// A paragraph of a .docx body (paragraphs inside tables are in [`Docx::tables`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paragraph {
    /// The style's display name ("Heading 1", "List Bullet", "Normal", ...).
    pub style: String,
    /// 1–9 for "Heading N", 0 for "Title", `None` otherwise.
    pub heading_level: Option<u8>,
    /// The paragraph's text (tabs as `\t`, line breaks as `\n`).
    pub text: String,
    /// 0-based list nesting level for list items (numbered or bulleted), `None` otherwise.
    pub list_level: Option<u8>,
}

/// A table: rows of cell texts (a cell's paragraphs joined with `\n`).
pub type Table = Vec<Vec<String>>;

/// A block of the body, in document order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Block {
    /// Index into [`Docx::paragraphs`].
    Paragraph(usize),
    /// Index into [`Docx::tables`].
    Table(usize),
}

/// A Word document's body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Docx {
    /// Body paragraphs, in order.
    pub paragraphs: Vec<Paragraph>,
    /// Top-level tables, in order.
    pub tables: Vec<Table>,
    /// The order of paragraphs and tables in the body.
    pub blocks: Vec<Block>,
}

impl Docx {
    /// Headings as (level, text), in order.
    pub fn headings(&self) -> Vec<(u8, &str)> {
        self.paragraphs
            .iter()
            .filter_map(|p| p.heading_level.map(|l| (l, p.text.as_str())))
            .collect()
    }

    /// The document as text for an agent: `#` headings, `- ` list items (indented by level),
    /// tables as `| a | b |` rows, plain paragraphs as they are, blank lines between blocks.
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        for b in &self.blocks {
            match *b {
                Block::Paragraph(i) => {
                    let Some(p) = self.paragraphs.get(i) else {
                        continue;
                    };
                    if p.text.trim().is_empty() {
                        continue;
                    }
                    let line = match (p.heading_level, p.list_level) {
                        (Some(l), _) => format!("{} {}", "#".repeat(usize::from(l.max(1))), p.text),
                        (None, Some(l)) => format!("{}- {}", "  ".repeat(usize::from(l)), p.text),
                        (None, None) => p.text.clone(),
                    };
                    out.push(line);
                }
                Block::Table(i) => {
                    let Some(t) = self.tables.get(i) else {
                        continue;
                    };
                    out.push(table_to_text(t));
                }
            }
        }
        // Consecutive list items stay together; everything else is separated by a blank line.
        let mut text = String::new();
        for (i, block) in out.iter().enumerate() {
            if i > 0 {
                let prev_list = out[i - 1].trim_start().starts_with("- ");
                let this_list = block.trim_start().starts_with("- ");
                text.push_str(if prev_list && this_list { "\n" } else { "\n\n" });
            }
            text.push_str(block);
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text
    }
}

/// A table as `| a | b |` lines, the first row followed by a `|---|` separator.
pub(crate) fn table_to_text(t: &Table) -> String {
    let mut lines = Vec::new();
    for (r, row) in t.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .map(|c| c.replace('\n', " ").replace('|', "\\|"))
            .collect();
        lines.push(format!("| {} |", cells.join(" | ")));
        if r == 0 {
            lines.push(format!("|{}|", vec!["---"; row.len().max(1)].join("|")));
        }
    }
    lines.join("\n")
}

/// Read a .docx file.
pub fn read_docx(file: &str, bytes: &[u8]) -> Result<Docx, FormatError> {
    crate::isolated::read(file, bytes, |f, b| read_docx_in_process(f, b))
}

/// [`read_docx`] in the calling process, without crash isolation.
pub(crate) fn read_docx_in_process(file: &str, bytes: &[u8]) -> Result<Docx, FormatError> {
    let mut zip = Archive::open(file, bytes, ".docx")?;
    let main = main_part(&mut zip, file)?;
    let document = zip.require(&main, ".docx")?;
    let styles = match zip.read("word/styles.xml")? {
        Some(s) => read_styles(file, &s)?,
        None => BTreeMap::new(),
    };
    parse_document(file, &main, &document, &styles)
}

/// The main document part: word/document.xml, or what [Content_Types].xml names.
pub(crate) fn main_part(zip: &mut Archive<'_>, file: &str) -> Result<String, FormatError> {
    if zip.has("word/document.xml") {
        return Ok("word/document.xml".into());
    }
    if let Some(ct) = zip.read("[Content_Types].xml")? {
        let mut found = None;
        walk_xml(file, "[Content_Types].xml", &ct, |ev| {
            if let Xml::Empty { name, attrs } | Xml::Start { name, attrs } = ev
                && name == b"Override"
                && attr(&attrs, b"ContentType")
                    .is_some_and(|c| c.contains("wordprocessingml.document.main"))
                && let Some(p) = attr(&attrs, b"PartName")
            {
                found.get_or_insert_with(|| p.trim_start_matches('/').to_string());
            }
        })?;
        if let Some(p) = found {
            return Ok(p);
        }
    }
    Err(invalid(
        file,
        "not a Word document: the archive has no word/document.xml; if it is a spreadsheet or presentation, give it the .xlsx or .pptx extension".into(),
    ))
}

pub(crate) struct StyleInfo {
    name: String,
    outline: Option<u8>,
    numbered: bool,
    ilvl: Option<u8>,
}

pub(crate) fn read_styles(
    file: &str,
    xml: &[u8],
) -> Result<BTreeMap<String, StyleInfo>, FormatError> {
    let mut styles = BTreeMap::new();
    let mut cur: Option<(String, StyleInfo)> = None;
    walk_xml(file, "word/styles.xml", xml, |ev| match ev {
        Xml::Start { name, attrs } if name == b"style" => {
            let id = attr(&attrs, b"styleId").unwrap_or_default().to_string();
            cur = Some((
                id.clone(),
                StyleInfo {
                    name: id,
                    outline: None,
                    numbered: false,
                    ilvl: None,
                },
            ));
        }
        Xml::Empty { name, attrs } | Xml::Start { name, attrs } => {
            if let Some((_, s)) = cur.as_mut() {
                match name.as_slice() {
                    b"name" => s.name = attr(&attrs, b"val").unwrap_or_default().to_string(),
                    b"outlineLvl" => s.outline = attr(&attrs, b"val").and_then(|v| v.parse().ok()),
                    b"numId" => s.numbered = attr(&attrs, b"val").is_some_and(|v| v != "0"),
                    b"ilvl" => s.ilvl = attr(&attrs, b"val").and_then(|v| v.parse().ok()),
                    _ => {}
                }
            }
        }
        Xml::End { name } if name == b"style" => {
            if let Some((id, s)) = cur.take() {
                styles.insert(id, s);
            }
        }
        _ => {}
    })?;
    Ok(styles)
}

/// Word stores some built-in style names in lower case ("heading 1", "title"); show them as
/// Word and python-docx do ("Heading 1", "Title").
pub(crate) fn display_name(name: &str) -> String {
    let builtin = [
        "heading ", "title", "subtitle", "caption", "header", "footer", "normal",
    ];
    if builtin.iter().any(|b| name.starts_with(b)) {
        let mut c = name.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    } else {
        name.to_string()
    }
}

/// The nesting of Word's numbered list styles: "List Bullet 2" → 1, "List Number 3" → 2.
fn list_style_level(style: &str) -> u8 {
    let lower = style.to_ascii_lowercase();
    if lower.starts_with("list")
        && let Some(n) = lower.rsplit(' ').next().and_then(|n| n.parse::<u8>().ok())
        && (2..=9).contains(&n)
    {
        return n - 1;
    }
    0
}

/// Heading level from a style's display name or id: "Heading 2"/"heading 2"/"Heading2" → 2,
/// "Title" → 0.
fn heading_level(name: &str, outline: Option<u8>) -> Option<u8> {
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(0);
    }
    if let Some(rest) = lower.strip_prefix("heading")
        && let Ok(n) = rest.trim().parse::<u8>()
        && (1..=9).contains(&n)
    {
        return Some(n);
    }
    outline.filter(|l| *l < 9).map(|l| l + 1)
}

#[derive(Default)]
struct ParaBuild {
    style_id: String,
    ilvl: Option<u8>,
    num_id: Option<String>,
    text: String,
}

#[derive(Default)]
struct TableBuild {
    rows: Vec<Vec<String>>,
    row: Option<Vec<String>>,
    cell: Option<String>,
}

pub(crate) fn parse_document(
    file: &str,
    part: &str,
    xml: &[u8],
    styles: &BTreeMap<String, StyleInfo>,
) -> Result<Docx, FormatError> {
    let mut doc = Docx::default();
    let mut tables: Vec<TableBuild> = Vec::new();
    let mut para: Option<ParaBuild> = None;
    let mut in_text = false;
    let mut in_ppr = false;
    let mut total = 0usize;
    walk_xml(file, part, xml, |ev| match ev {
        Xml::Start { name, attrs } => match name.as_slice() {
            b"p" => para = Some(ParaBuild::default()),
            b"pPr" => in_ppr = true,
            b"t" => in_text = true,
            b"tbl" => tables.push(TableBuild::default()),
            b"tr" => {
                if let Some(t) = tables.last_mut() {
                    t.row = Some(Vec::new());
                }
            }
            b"tc" => {
                if let Some(t) = tables.last_mut() {
                    t.cell = Some(String::new());
                }
            }
            _ => prop(&mut para, in_ppr, &name, &attrs),
        },
        Xml::Empty { name, attrs } => match name.as_slice() {
            b"tab" if !in_ppr => push(&mut para, "\t", &mut total),
            b"br" | b"cr" => push(&mut para, "\n", &mut total),
            b"p" => {
                // An empty paragraph: nothing to keep but its place.
                finish_para(ParaBuild::default(), &mut tables, &mut doc, styles);
            }
            _ => prop(&mut para, in_ppr, &name, &attrs),
        },
        Xml::Text(t) => {
            if in_text {
                push(&mut para, &t, &mut total);
            }
        }
        Xml::End { name } => match name.as_slice() {
            b"t" => in_text = false,
            b"pPr" => in_ppr = false,
            b"p" => {
                if let Some(p) = para.take() {
                    finish_para(p, &mut tables, &mut doc, styles);
                }
            }
            b"tc" => {
                if let Some(t) = tables.last_mut()
                    && let Some(c) = t.cell.take()
                    && let Some(r) = t.row.as_mut()
                {
                    r.push(c);
                }
            }
            b"tr" => {
                if let Some(t) = tables.last_mut()
                    && let Some(r) = t.row.take()
                {
                    t.rows.push(r);
                }
            }
            b"tbl" => {
                if let Some(t) = tables.pop() {
                    match tables.last_mut().and_then(|outer| outer.cell.as_mut()) {
                        // A table inside a cell becomes text of that cell.
                        Some(cell) => {
                            if !cell.is_empty() {
                                cell.push('\n');
                            }
                            cell.push_str(&table_to_text(&t.rows));
                        }
                        None => {
                            doc.blocks.push(Block::Table(doc.tables.len()));
                            doc.tables.push(t.rows);
                        }
                    }
                }
            }
            _ => {}
        },
    })?;
    if total > super::MAX_TEXT_CHARS {
        return Err(invalid(
            file,
            format!(
                "the document holds more than {} characters of text; it is too large to read",
                super::MAX_TEXT_CHARS
            ),
        ));
    }
    Ok(doc)
}

fn push(para: &mut Option<ParaBuild>, s: &str, total: &mut usize) {
    if let Some(p) = para.as_mut()
        && *total <= super::MAX_TEXT_CHARS
    {
        *total += s.len();
        p.text.push_str(s);
    }
}

fn prop(para: &mut Option<ParaBuild>, in_ppr: bool, name: &[u8], attrs: &[(Vec<u8>, String)]) {
    let Some(p) = para.as_mut() else { return };
    if !in_ppr {
        return;
    }
    match name {
        b"pStyle" => p.style_id = attr(attrs, b"val").unwrap_or_default().to_string(),
        b"ilvl" => p.ilvl = attr(attrs, b"val").and_then(|v| v.parse().ok()),
        b"numId" => p.num_id = attr(attrs, b"val").map(str::to_string),
        _ => {}
    }
}

fn finish_para(
    p: ParaBuild,
    tables: &mut [TableBuild],
    doc: &mut Docx,
    styles: &BTreeMap<String, StyleInfo>,
) {
    if let Some(t) = tables.last_mut()
        && let Some(cell) = t.cell.as_mut()
    {
        if !cell.is_empty() {
            cell.push('\n');
        }
        cell.push_str(&p.text);
        return;
    }
    if !tables.is_empty() {
        return;
    }
    let info = styles.get(&p.style_id);
    let style = match (info, p.style_id.as_str()) {
        (Some(s), _) => display_name(&s.name),
        (None, "") => "Normal".to_string(),
        (None, id) => id.to_string(),
    };
    let heading = heading_level(&style, info.and_then(|s| s.outline))
        .or_else(|| heading_level(&p.style_id, None));
    let numbered = match &p.num_id {
        Some(id) => id != "0",
        None => info.is_some_and(|s| s.numbered) || style.to_ascii_lowercase().starts_with("list "),
    };
    let list_level = if heading.is_none() && numbered {
        Some(
            p.ilvl
                .or(info.and_then(|s| s.ilvl))
                .unwrap_or_else(|| list_style_level(&style)),
        )
    } else {
        None
    };
    doc.blocks.push(Block::Paragraph(doc.paragraphs.len()));
    doc.paragraphs.push(Paragraph {
        style,
        heading_level: heading,
        text: p.text,
        list_level,
    });
}

/// A block to write into a new .docx.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WriteBlock {
    /// A heading, level 1–6 (style "Heading N").
    Heading {
        /// 1–6.
        level: u8,
        /// The heading text.
        text: String,
    },
    /// A plain paragraph (style "Normal"); `\n` becomes a line break.
    Paragraph {
        /// The paragraph text.
        text: String,
    },
    /// A bulleted list (style "List Bullet"), one item per entry.
    Bullets {
        /// The items.
        items: Vec<String>,
    },
    /// A table; the first row is the header row (bold).
    Table {
        /// Rows of cell texts.
        rows: Vec<Vec<String>>,
    },
}

/// Write a .docx with the given blocks. Deterministic: the same blocks give the same bytes.
pub fn write_docx(file: &str, blocks: &[WriteBlock]) -> Result<Vec<u8>, FormatError> {
    use docx_rs::*;
    let mut d = Docx::new();
    for level in 1..=6u8 {
        let size = [0usize, 32, 28, 26, 24, 22, 22][usize::from(level)];
        d = d.add_style(
            Style::new(format!("Heading{level}"), StyleType::Paragraph)
                .name(format!("Heading {level}"))
                .based_on("Normal")
                .next("Normal")
                .bold()
                .size(size)
                .outline_lvl(usize::from(level - 1)),
        );
    }
    d = d.add_style(
        Style::new("ListBullet", StyleType::Paragraph)
            .name("List Bullet")
            .based_on("Normal"),
    );
    d = d
        .add_abstract_numbering(
            AbstractNumbering::new(1).add_level(
                Level::new(
                    0,
                    Start::new(1),
                    NumberFormat::new("bullet"),
                    LevelText::new("•"),
                    LevelJc::new("left"),
                )
                .indent(
                    Some(720),
                    Some(SpecialIndentType::Hanging(360)),
                    None,
                    None,
                ),
            ),
        )
        .add_numbering(Numbering::new(1, 1));
    for b in blocks {
        match b {
            WriteBlock::Heading { level, text } => {
                if !(1..=6).contains(level) {
                    return Err(invalid(
                        file,
                        format!("heading level {level} is out of range; use 1 to 6"),
                    ));
                }
                d = d.add_paragraph(
                    docx_rs::Paragraph::new()
                        .style(&format!("Heading{level}"))
                        .add_run(Run::new().add_text(text)),
                );
            }
            WriteBlock::Paragraph { text } => {
                d = d
                    .add_paragraph(text_paragraph(docx_rs::Paragraph::new(), text).style("Normal"));
            }
            WriteBlock::Bullets { items } => {
                for item in items {
                    d = d.add_paragraph(
                        text_paragraph(docx_rs::Paragraph::new(), item)
                            .style("ListBullet")
                            .numbering(NumberingId::new(1), IndentLevel::new(0)),
                    );
                }
            }
            WriteBlock::Table { rows } => {
                if rows.is_empty() {
                    return Err(invalid(file, "a table needs at least one row".into()));
                }
                let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
                let trs = rows
                    .iter()
                    .enumerate()
                    .map(|(r, row)| {
                        let cells = (0..width)
                            .map(|c| {
                                let text = row.get(c).map(String::as_str).unwrap_or("");
                                let mut run = Run::new().add_text(text);
                                if r == 0 {
                                    run = run.bold();
                                }
                                TableCell::new()
                                    .add_paragraph(docx_rs::Paragraph::new().add_run(run))
                            })
                            .collect();
                        TableRow::new(cells)
                    })
                    .collect();
                d = d.add_table(docx_rs::Table::new(trs).set_grid(vec![9000 / width; width]));
            }
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    crate::error::guard("docx writer", || d.build().pack(&mut out))?
        .map_err(|e| invalid(file, format!("cannot write the .docx: {e}")))?;
    Ok(out.into_inner())
}

fn text_paragraph(mut p: docx_rs::Paragraph, text: &str) -> docx_rs::Paragraph {
    let mut run = docx_rs::Run::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            run = run.add_break(docx_rs::BreakType::TextWrapping);
        }
        run = run.add_text(line);
    }
    p = p.add_run(run);
    p
}
