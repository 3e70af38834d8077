//! What a file says, before it has a format: a document (headings, paragraphs, lists,
//! tables), a table of records, a mail, calendar events or contacts. One body renders into
//! many formats, so a report, its PDF export and the mail quoting it state the same facts.

use chrono::{NaiveDate, NaiveDateTime};

/// A block of a document.
#[derive(Debug, Clone)]
pub(crate) enum Block {
    H(u8, String),
    P(String),
    Bullets(Vec<String>),
    /// First row is the header.
    Table(Vec<Vec<String>>),
}

#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub title: String,
    pub blocks: Vec<Block>,
}

/// A cell of a record table.
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Num(f64),
    Text(String),
}

impl Val {
    pub(crate) fn show(&self) -> String {
        match self {
            Val::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", *n as i64),
            Val::Num(n) => format!("{n:.2}"),
            Val::Text(t) => t.clone(),
        }
    }
}

/// Records with a header; `total_cols` get a SUM row in spreadsheets.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub name: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Val>>,
    pub total_cols: Vec<usize>,
}

impl Table {
    pub(crate) fn text_rows(&self) -> Vec<Vec<String>> {
        let mut out = vec![self.header.clone()];
        out.extend(
            self.rows
                .iter()
                .map(|r| r.iter().map(Val::show).collect::<Vec<_>>()),
        );
        out
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Mail {
    pub from: usize,
    pub to: Vec<usize>,
    pub cc: Vec<usize>,
    pub subject: String,
    pub body: String,
    pub at: NaiveDateTime,
    pub id: String,
    pub in_reply_to: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub uid: String,
    pub summary: String,
    pub description: String,
    pub location: String,
    pub start: NaiveDateTime,
    pub minutes: i64,
    pub organizer: usize,
    pub attendees: Vec<usize>,
}

/// The content of one planned file.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Doc(Doc),
    Table(Table),
    Mail(Vec<Mail>),
    Events(Vec<Event>),
    /// Indices into the company's people.
    Contacts(Vec<usize>),
    /// Exact text (code, config, notes written by a storyline).
    Text(String),
    /// A byte-identical copy of an earlier planned file (by index).
    CopyOf(usize),
    /// Type-specific filler drawn from the file's own random stream.
    Filler,
    /// A picture, chart or scan drawn by `bureau_media::render`.
    Media(Box<Evidence>),
}

/// What a media file shows.
#[derive(Debug, Clone)]
pub(crate) enum Evidence {
    /// A picture; a `.jpg` is photographed (its `photo`), a `.png` kept flat.
    Picture(bureau_media::render::Picture),
    Chart(bureau_media::render::Chart),
    /// Pages scanned into an image-only PDF.
    Scan(Vec<bureau_media::render::Picture>),
}

impl Evidence {
    /// What the manifest says the file is (`media`).
    pub(crate) fn kind(&self) -> String {
        match self {
            Evidence::Picture(p) if p.photo.is_flat() => p.template.name().to_string(),
            Evidence::Picture(p) => format!("{} photo", p.template.name()),
            Evidence::Chart(c) => match c.kind {
                bureau_media::render::ChartKind::Bar => "bar chart".into(),
                bureau_media::render::ChartKind::Line => "line chart".into(),
            },
            Evidence::Scan(_) => "scan".into(),
        }
    }
}

impl Doc {
    /// Markdown: `#` headings, `- ` lists, `| a | b |` tables (what the PDF writer lays out).
    pub(crate) fn to_markdown(&self) -> String {
        let mut s = format!("# {}\n", self.title);
        for b in &self.blocks {
            s.push('\n');
            match b {
                Block::H(l, t) => {
                    s.push_str(&"#".repeat(usize::from((*l).clamp(1, 5)) + 1));
                    s.push(' ');
                    s.push_str(t);
                    s.push('\n');
                }
                Block::P(t) => {
                    s.push_str(t);
                    s.push('\n');
                }
                Block::Bullets(items) => {
                    for i in items {
                        s.push_str("- ");
                        s.push_str(i);
                        s.push('\n');
                    }
                }
                Block::Table(rows) => s.push_str(&md_table(rows)),
            }
        }
        s
    }

    /// Plain text: underlined headings, `* ` lists, aligned tables.
    pub(crate) fn to_plain(&self) -> String {
        let mut s = format!(
            "{}\n{}\n",
            self.title,
            "=".repeat(self.title.chars().count())
        );
        for b in &self.blocks {
            s.push('\n');
            match b {
                Block::H(_, t) => {
                    s.push_str(&format!("{t}\n{}\n", "-".repeat(t.chars().count())));
                }
                Block::P(t) => {
                    s.push_str(t);
                    s.push('\n');
                }
                Block::Bullets(items) => {
                    for i in items {
                        s.push_str(&format!("  * {i}\n"));
                    }
                }
                Block::Table(rows) => {
                    let w = col_widths(rows);
                    for r in rows {
                        let cells: Vec<String> = r
                            .iter()
                            .enumerate()
                            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
                            .collect();
                        s.push_str(cells.join("  ").trim_end());
                        s.push('\n');
                    }
                }
            }
        }
        s
    }
}

pub(crate) fn md_table(rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        s.push_str("| ");
        s.push_str(
            &r.iter()
                .map(|c| c.replace('|', "/"))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        s.push_str(" |\n");
        if i == 0 {
            s.push('|');
            s.push_str(&"---|".repeat(r.len()));
            s.push('\n');
        }
    }
    s
}

fn col_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..n)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// `2025-03-04` → `4 March 2025`.
pub(crate) fn long_date(d: NaiveDate) -> String {
    d.format("%-d %B %Y").to_string()
}
