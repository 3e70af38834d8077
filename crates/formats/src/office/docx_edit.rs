//! In-place editing of a .docx: operations on the body's top-level blocks (paragraphs and
//! tables, addressed by their index as [`docx_blocks`] lists them), applied to
//! `word/document.xml` as text, so every other byte of the document survives.
//!
//! Only the main document part changes (and `word/styles.xml`, when a paragraph asks for a
//! built-in style the document does not define yet); every other zip entry — headers,
//! footers, images, numbering, comments, custom parts — is copied byte for byte, compressed
//! data and all. Inside `word/document.xml` only the edited blocks are rewritten; everything
//! else, down to the whitespace between elements, stays as it was.
//!
//! Indices in one call refer to the document as it was before the call (as `files_read`
//! with `blocks` showed it); the operations apply in order and either all apply or none.

use std::collections::BTreeMap;

use quick_xml::events::Event;
use serde::{Deserialize, Serialize};

use super::archive::{Archive, Xml, attr, walk_xml};
use super::{MAX_INPUT_BYTES, MAX_XML_DEPTH, invalid};
use crate::FormatError;

/// Most operations in one call.
pub const MAX_EDIT_OPS: usize = 1_000;
/// Most characters of text one operation may write.
pub const MAX_EDIT_TEXT: usize = 1_000_000;

/// One edit of a .docx body. Block indices are those of [`docx_blocks`] before the call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum DocxOp {
    /// Add a paragraph at the end of the body (before the final section properties).
    Append {
        /// The paragraph's text; `\n` is a line break, `\t` a tab.
        text: String,
        /// A paragraph style by name or id ("Heading 2", "Title", "List Bullet", "Normal",
        /// or any style the document defines); default the document's default style.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        style: Option<String>,
    },
    /// Add a paragraph before or after block `index`.
    Insert {
        /// Insert before this block...
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<usize>,
        /// ... or after this one (exactly one of `before`, `after`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<usize>,
        /// The paragraph's text.
        text: String,
        /// A paragraph style, as for `append`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        style: Option<String>,
    },
    /// Replace the text of paragraph `block`, keeping its paragraph properties and the first
    /// run's character formatting (other runs, links and fields in it are replaced).
    Replace {
        /// The paragraph's block index.
        block: usize,
        /// The new text.
        text: String,
        /// A new paragraph style, if it should change.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        style: Option<String>,
    },
    /// Delete block `block` (a paragraph or a whole table).
    Delete {
        /// The block index.
        block: usize,
    },
    /// Set the text of one cell of table `block` (0-based `row` and `col`; a merged cell
    /// counts once in its row), keeping the cell's properties and its first paragraph's
    /// formatting.
    SetCell {
        /// The table's block index.
        block: usize,
        /// 0-based row.
        row: usize,
        /// 0-based column (cell of the row).
        col: usize,
        /// The new text.
        text: String,
    },
    /// Append a row to table `block`, formatted like its last row; `cells` fill it from the
    /// left (missing cells stay empty).
    AppendRow {
        /// The table's block index.
        block: usize,
        /// Cell texts.
        cells: Vec<String>,
    },
}

impl DocxOp {
    fn texts(&self) -> Vec<&str> {
        match self {
            DocxOp::Append { text, .. }
            | DocxOp::Insert { text, .. }
            | DocxOp::Replace { text, .. }
            | DocxOp::SetCell { text, .. } => vec![text.as_str()],
            DocxOp::Delete { .. } => Vec::new(),
            DocxOp::AppendRow { cells, .. } => cells.iter().map(String::as_str).collect(),
        }
    }

    /// A short description for logs and messages: `replace 3`, `set_cell 2 (1, 0)`.
    pub fn summary(&self) -> String {
        match self {
            DocxOp::Append { .. } => "append".into(),
            DocxOp::Insert { before, after, .. } => match (before, after) {
                (Some(b), _) => format!("insert before {b}"),
                (None, Some(a)) => format!("insert after {a}"),
                (None, None) => "insert".into(),
            },
            DocxOp::Replace { block, .. } => format!("replace {block}"),
            DocxOp::Delete { block } => format!("delete {block}"),
            DocxOp::SetCell {
                block, row, col, ..
            } => format!("set_cell {block} ({row}, {col})"),
            DocxOp::AppendRow { block, .. } => format!("append_row {block}"),
        }
    }
}

/// One top-level block of a .docx body as [`docx_blocks`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockView {
    /// The index edits use.
    pub index: usize,
    /// "paragraph" or "table".
    pub kind: String,
    /// The paragraph's style display name ("Heading 1", "Normal", ...); empty for a table.
    pub style: String,
    /// The block as `files_read` renders it ("" for an empty paragraph).
    pub text: String,
}

/// The body's top-level blocks (paragraphs and tables that are direct children of the body),
/// in order, with the indices [`edit_docx`] takes. Parsed in an isolated child process.
pub fn docx_blocks(file: &str, bytes: &[u8]) -> Result<Vec<BlockView>, FormatError> {
    crate::isolated::read(file, bytes, |f, b| docx_blocks_in_process(f, b))
}

/// The blocks as text for an agent: `[3] # Heading`, `[4] (empty paragraph)`,
/// `[5] table, 3 rows:` followed by the table's rows.
pub fn blocks_to_text(blocks: &[BlockView]) -> String {
    let mut out = String::new();
    for b in blocks {
        let body = if b.kind == "table" {
            let rows = b.text.lines().filter(|l| !l.starts_with("|---")).count();
            format!(
                "table, {rows} row{}:\n{}",
                if rows == 1 { "" } else { "s" },
                b.text
            )
        } else if b.text.is_empty() {
            "(empty paragraph)".to_string()
        } else {
            b.text.clone()
        };
        out.push_str(&format!("[{}] {}\n", b.index, body.trim_end()));
    }
    if out.is_empty() {
        out.push_str("(the document body has no paragraphs or tables)\n");
    }
    out
}

/// Apply `ops` to a .docx and return the new file's bytes; see the module docs. A bad
/// operation (an index out of range, a table operation on a paragraph, an unknown style)
/// changes nothing and names the operation. Runs in an isolated child process.
pub fn edit_docx(file: &str, bytes: &[u8], ops: &[DocxOp]) -> Result<Vec<u8>, FormatError> {
    crate::isolated::read_with(
        file,
        &(file.to_string(), ops.to_vec()),
        bytes,
        |(f, ops): &(String, Vec<DocxOp>), b| edit_docx_in_process(f, b, ops),
    )
}

pub(crate) fn docx_blocks_in_process(
    file: &str,
    bytes: &[u8],
) -> Result<Vec<BlockView>, FormatError> {
    let parts = Parts::open(file, bytes)?;
    let body = Body::parse(file, &parts.main, &parts.document)?;
    let styles = match &parts.styles {
        Some(s) => super::docx::read_styles(file, s)?,
        None => BTreeMap::new(),
    };
    let mut out = Vec::new();
    for (index, item) in body.blocks().enumerate() {
        let d = super::docx::parse_document(file, &parts.main, &item.bytes, &styles)?;
        let (kind, style) = match item.kind {
            Kind::Table => ("table", String::new()),
            _ => (
                "paragraph",
                d.paragraphs
                    .first()
                    .map(|p| p.style.clone())
                    .unwrap_or_default(),
            ),
        };
        out.push(BlockView {
            index,
            kind: kind.into(),
            style,
            text: d.to_text().trim_end().to_string(),
        });
    }
    Ok(out)
}

pub(crate) fn edit_docx_in_process(
    file: &str,
    bytes: &[u8],
    ops: &[DocxOp],
) -> Result<Vec<u8>, FormatError> {
    if ops.is_empty() {
        return Err(invalid(
            file,
            "no operations given; pass at least one (append, insert, replace, delete, set_cell, append_row)".into(),
        ));
    }
    if ops.len() > MAX_EDIT_OPS {
        return Err(invalid(
            file,
            format!(
                "{} operations in one call; give at most {MAX_EDIT_OPS}",
                ops.len()
            ),
        ));
    }
    for (i, op) in ops.iter().enumerate() {
        for t in op.texts() {
            check_text(file, i, op, t)?;
        }
    }
    let parts = Parts::open(file, bytes)?;
    let mut body = Body::parse(file, &parts.main, &parts.document)?;
    let mut styles = Styles::parse(file, parts.styles.as_deref())?;
    let n = body.blocks().count();
    for (i, op) in ops.iter().enumerate() {
        let fail = |why: String| invalid(file, format!("operation {i} ({}): {why}", op.summary()));
        // Where original block `b` is now.
        let block = |b: usize, body: &Body| -> Result<usize, FormatError> {
            body.position(b).ok_or_else(|| {
                fail(if n == 0 {
                    format!("there is no block {b}: the body has no paragraphs or tables")
                } else {
                    format!(
                        "there is no block {b}: the body has blocks 0 to {}; read the file with blocks=true to see them",
                        n - 1
                    )
                })
            })
        };
        // Original block `b`, which must not have been deleted.
        let live = |b: usize, body: &Body| -> Result<usize, FormatError> {
            let at = block(b, body)?;
            if body.items[at].deleted {
                Err(fail(format!(
                    "block {b} was deleted by an earlier operation of this call"
                )))
            } else {
                Ok(at)
            }
        };
        match op {
            DocxOp::Append { text, style } => {
                let p = new_paragraph(&body, &mut styles, style.as_deref(), text).map_err(&fail)?;
                let at = body.append_position();
                body.insert(at, p, None);
            }
            DocxOp::Insert {
                before,
                after,
                text,
                style,
            } => {
                let p = new_paragraph(&body, &mut styles, style.as_deref(), text).map_err(&fail)?;
                match (before, after) {
                    (Some(b), None) => {
                        let at = block(*b, &body)?;
                        body.insert(at, p, None);
                    }
                    (None, Some(a)) => {
                        // After the block and after what earlier operations inserted after it.
                        let mut at = block(*a, &body)? + 1;
                        while body
                            .items
                            .get(at)
                            .is_some_and(|it| it.inserted_after == Some(*a))
                        {
                            at += 1;
                        }
                        body.insert(at, p, Some(*a));
                    }
                    _ => {
                        return Err(fail(
                            "give exactly one of `before` and `after` (a block index)".into(),
                        ));
                    }
                }
            }
            DocxOp::Replace {
                block: b,
                text,
                style,
            } => {
                let at = live(*b, &body)?;
                if body.items[at].kind != Kind::Paragraph {
                    return Err(fail(format!(
                        "block {b} is a table, not a paragraph; use set_cell to change its cells"
                    )));
                }
                let id = match style {
                    Some(s) => Some(styles.resolve(s).map_err(&fail)?),
                    None => None,
                };
                let old = std::mem::take(&mut body.items[at].bytes);
                body.items[at].bytes =
                    replace_paragraph(&old, &body.prefix, text, id.as_deref()).map_err(&fail)?;
            }
            DocxOp::Delete { block: b } => {
                let at = live(*b, &body)?;
                body.items[at].deleted = true;
            }
            DocxOp::SetCell {
                block: b,
                row,
                col,
                text,
            } => {
                let at = live(*b, &body)?;
                if body.items[at].kind != Kind::Table {
                    return Err(fail(format!("block {b} is a paragraph, not a table")));
                }
                let old = std::mem::take(&mut body.items[at].bytes);
                body.items[at].bytes =
                    set_cell(&old, &body.prefix, *row, *col, text).map_err(&fail)?;
            }
            DocxOp::AppendRow { block: b, cells } => {
                let at = live(*b, &body)?;
                if body.items[at].kind != Kind::Table {
                    return Err(fail(format!("block {b} is a paragraph, not a table")));
                }
                let old = std::mem::take(&mut body.items[at].bytes);
                body.items[at].bytes = append_row(&old, &body.prefix, cells).map_err(&fail)?;
            }
        }
    }
    let document = body.serialize();
    // The result must still be well-formed and within the readers' bounds.
    walk_xml(file, &parts.main, &document, |_| {})?;
    let mut replaced = BTreeMap::new();
    replaced.insert(parts.main.clone(), document);
    if let Some(s) = styles.changed() {
        replaced.insert("word/styles.xml".to_string(), s);
    }
    let out = super::archive::rewrite(file, bytes, &replaced)?;
    if out.len() > MAX_INPUT_BYTES {
        return Err(invalid(
            file,
            format!(
                "the edited document would be {} bytes, more than the {MAX_INPUT_BYTES} that can be read",
                out.len()
            ),
        ));
    }
    Ok(out)
}

fn check_text(file: &str, i: usize, op: &DocxOp, t: &str) -> Result<(), FormatError> {
    if t.chars().count() > MAX_EDIT_TEXT {
        return Err(invalid(
            file,
            format!(
                "operation {i} ({}): the text is longer than {MAX_EDIT_TEXT} characters",
                op.summary()
            ),
        ));
    }
    if let Some(c) = t.chars().find(|c| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || *c == '\u{FFFE}' || *c == '\u{FFFF}'
    }) {
        return Err(invalid(
            file,
            format!(
                "operation {i} ({}): the text holds the control character U+{:04X}, which a Word document cannot store; remove it",
                op.summary(),
                u32::from(c)
            ),
        ));
    }
    Ok(())
}

/// The parts an edit reads.
struct Parts {
    main: String,
    document: Vec<u8>,
    styles: Option<Vec<u8>>,
}

impl Parts {
    fn open(file: &str, bytes: &[u8]) -> Result<Parts, FormatError> {
        if bytes.len() > MAX_INPUT_BYTES {
            return Err(invalid(
                file,
                format!(
                    "the file is {} bytes, more than the {MAX_INPUT_BYTES} that can be read",
                    bytes.len()
                ),
            ));
        }
        let mut zip = Archive::open(file, bytes, ".docx")?;
        let main = super::docx::main_part(&mut zip, file)?;
        let document = zip.require(&main, ".docx")?;
        let styles = zip.read("word/styles.xml")?;
        Ok(Parts {
            main,
            document,
            styles,
        })
    }
}

/// An element found in XML text: byte offsets into the text it was found in.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// Local name (no prefix).
    pub(crate) local: Vec<u8>,
    /// Start of `<`.
    pub(crate) start: usize,
    /// Just after the start tag's `>` (equal to `end` for an empty element).
    pub(crate) inner_start: usize,
    /// Start of the end tag (equal to `end` for an empty element).
    pub(crate) inner_end: usize,
    /// Just after the end tag.
    pub(crate) end: usize,
    pub(crate) empty: bool,
}

fn xml_error(e: &dyn std::fmt::Display) -> String {
    format!("the XML is not well-formed ({e}); the document is corrupt")
}

/// The top-level elements of `xml` (a whole part or a fragment), with their spans;
/// `base` is added to every offset. Fails on malformed XML or nesting beyond
/// [`MAX_XML_DEPTH`].
pub(crate) fn nodes(xml: &[u8], base: usize) -> Result<Vec<Node>, String> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    reader.config_mut().expand_empty_elements = false;
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut open: Option<Node> = None;
    loop {
        let before = usize::try_from(reader.buffer_position()).map_err(|e| xml_error(&e))?;
        let ev = reader.read_event().map_err(|e| xml_error(&e))?;
        let after = usize::try_from(reader.buffer_position()).map_err(|e| xml_error(&e))?;
        match ev {
            Event::Start(e) => {
                if depth == 0 {
                    open = Some(Node {
                        local: e.local_name().as_ref().to_vec(),
                        start: base + before,
                        inner_start: base + after,
                        inner_end: 0,
                        end: 0,
                        empty: false,
                    });
                }
                depth += 1;
                if depth > MAX_XML_DEPTH {
                    return Err(format!(
                        "elements nest more than {MAX_XML_DEPTH} deep; refusing it as hostile or broken"
                    ));
                }
            }
            Event::Empty(e) if depth == 0 => {
                out.push(Node {
                    local: e.local_name().as_ref().to_vec(),
                    start: base + before,
                    inner_start: base + after,
                    inner_end: base + after,
                    end: base + after,
                    empty: true,
                });
            }
            Event::End(_) => {
                if depth == 0 {
                    return Err(xml_error(&"an end tag without its start"));
                }
                depth -= 1;
                if depth == 0
                    && let Some(mut n) = open.take()
                {
                    n.inner_end = base + before;
                    n.end = base + after;
                    out.push(n);
                }
            }
            Event::Eof => {
                if depth != 0 {
                    return Err(xml_error(&"an element is not closed"));
                }
                return Ok(out);
            }
            _ => {}
        }
    }
}

/// The child elements of `node` within `xml` (absolute offsets).
pub(crate) fn children(xml: &[u8], node: &Node) -> Result<Vec<Node>, String> {
    if node.empty {
        return Ok(Vec::new());
    }
    let inner = xml
        .get(node.inner_start..node.inner_end)
        .ok_or_else(|| xml_error(&"an element's span is out of range"))?;
    nodes(inner, node.inner_start)
}

pub(crate) fn first_child<'n>(kids: &'n [Node], local: &[u8]) -> Option<&'n Node> {
    kids.iter().find(|k| k.local == local)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Paragraph,
    Table,
    /// Section properties, content controls, bookmarks, whitespace between elements, ...:
    /// kept as they are, not addressable.
    Other,
    /// The body's final `w:sectPr`: appended paragraphs go before it.
    SectPr,
}

struct Item {
    kind: Kind,
    bytes: Vec<u8>,
    deleted: bool,
    /// For a block of the document as read: its index.
    orig: Option<usize>,
    /// For a paragraph inserted after original block `b` in this call: `b`.
    inserted_after: Option<usize>,
}

impl Item {
    fn is_block(&self) -> bool {
        matches!(self.kind, Kind::Paragraph | Kind::Table)
    }
}

/// `word/document.xml` split around the body's children.
struct Body {
    head: Vec<u8>,
    items: Vec<Item>,
    tail: Vec<u8>,
    /// The WordprocessingML prefix as the document writes it (`w`), or "" for a default
    /// namespace.
    prefix: String,
}

impl Body {
    fn parse(file: &str, part: &str, xml: &[u8]) -> Result<Body, FormatError> {
        let bad = |why: String| invalid(file, format!("{part}: {why}"));
        let roots = nodes(xml, 0).map_err(bad)?;
        let root = roots
            .iter()
            .find(|n| n.local == b"document")
            .ok_or_else(|| {
                bad(
                    "there is no w:document element; the file is not a Word document or is damaged"
                        .into(),
                )
            })?;
        let kids = children(xml, root).map_err(bad)?;
        let body = first_child(&kids, b"body")
            .ok_or_else(|| bad("the document has no w:body element; the file is damaged".into()))?;
        let prefix = prefix_of(&xml[body.start..body.inner_start]);
        if body.empty {
            // `<w:body/>`: open it up so blocks can be appended.
            let mut head = xml[..body.start].to_vec();
            head.extend_from_slice(format!("<{}>", qname(&prefix, "body")).as_bytes());
            let mut tail = format!("</{}>", qname(&prefix, "body")).into_bytes();
            tail.extend_from_slice(&xml[body.end..]);
            return Ok(Body {
                head,
                items: Vec::new(),
                tail,
                prefix,
            });
        }
        let blocks = children(xml, body).map_err(bad)?;
        let mut items = Vec::new();
        let mut pos = body.inner_start;
        let last_element = blocks.len().checked_sub(1);
        let mut next = 0usize;
        for (i, b) in blocks.iter().enumerate() {
            if b.start > pos {
                items.push(Item::other(xml[pos..b.start].to_vec()));
            }
            let kind = match b.local.as_slice() {
                b"p" => Kind::Paragraph,
                b"tbl" => Kind::Table,
                b"sectPr" if Some(i) == last_element => Kind::SectPr,
                _ => Kind::Other,
            };
            let orig = if matches!(kind, Kind::Paragraph | Kind::Table) {
                next += 1;
                Some(next - 1)
            } else {
                None
            };
            items.push(Item {
                kind,
                bytes: xml[b.start..b.end].to_vec(),
                deleted: false,
                orig,
                inserted_after: None,
            });
            pos = b.end;
        }
        if body.inner_end > pos {
            items.push(Item::other(xml[pos..body.inner_end].to_vec()));
        }
        Ok(Body {
            head: xml[..body.inner_start].to_vec(),
            items,
            tail: xml[body.inner_end..].to_vec(),
            prefix,
        })
    }

    fn blocks(&self) -> impl Iterator<Item = &Item> {
        self.items.iter().filter(|i| i.is_block())
    }

    /// Where an appended paragraph goes: before the final sectPr, else at the end.
    fn append_position(&self) -> usize {
        self.items
            .iter()
            .rposition(|i| i.kind == Kind::SectPr)
            .unwrap_or(self.items.len())
    }

    /// Where original block `b` is now.
    fn position(&self, b: usize) -> Option<usize> {
        self.items.iter().position(|i| i.orig == Some(b))
    }

    fn insert(&mut self, at: usize, bytes: Vec<u8>, after: Option<usize>) {
        self.items.insert(
            at,
            Item {
                kind: Kind::Paragraph,
                bytes,
                deleted: false,
                orig: None,
                inserted_after: after,
            },
        );
    }

    fn serialize(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        for it in self.items.iter().filter(|i| !i.deleted) {
            out.extend_from_slice(&it.bytes);
        }
        out.extend_from_slice(&self.tail);
        out
    }
}

impl Item {
    fn other(bytes: Vec<u8>) -> Item {
        Item {
            kind: Kind::Other,
            bytes,
            deleted: false,
            orig: None,
            inserted_after: None,
        }
    }
}

/// The namespace prefix of a start tag (`<w:body ...>` → `w`).
fn prefix_of(tag: &[u8]) -> String {
    let name: Vec<u8> = tag
        .iter()
        .skip(1)
        .take_while(|b| !b.is_ascii_whitespace() && **b != b'>' && **b != b'/')
        .copied()
        .collect();
    let name = String::from_utf8_lossy(&name).into_owned();
    name.split_once(':')
        .map(|(p, _)| p.to_string())
        .unwrap_or_default()
}

fn qname(prefix: &str, local: &str) -> String {
    if prefix.is_empty() {
        local.to_string()
    } else {
        format!("{prefix}:{local}")
    }
}

pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// A run holding `text` (`\n` → `w:br`, `\t` → `w:tab`), with run properties `rpr`.
fn run(prefix: &str, rpr: &[u8], text: &str) -> Vec<u8> {
    let q = |l: &str| qname(prefix, l);
    let mut out = format!("<{}>", q("r")).into_bytes();
    out.extend_from_slice(rpr);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.extend_from_slice(format!("<{}/>", q("br")).as_bytes());
        }
        for (j, piece) in line.split('\t').enumerate() {
            if j > 0 {
                out.extend_from_slice(format!("<{}/>", q("tab")).as_bytes());
            }
            if !piece.is_empty() {
                out.extend_from_slice(
                    format!(
                        "<{t} xml:space=\"preserve\">{}</{t}>",
                        escape(piece),
                        t = q("t")
                    )
                    .as_bytes(),
                );
            }
        }
    }
    out.extend_from_slice(format!("</{}>", q("r")).as_bytes());
    out
}

/// A paragraph's or cell's start tag as an opening tag (`<w:p/>` → `<w:p>`).
fn open_tag(xml: &[u8], n: &Node) -> Vec<u8> {
    let tag = &xml[n.start..n.inner_start];
    if n.empty {
        let mut t = tag.to_vec();
        // Drop the `/>`, and whitespace before it.
        t.truncate(t.len().saturating_sub(2));
        while t.last().is_some_and(u8::is_ascii_whitespace) {
            t.pop();
        }
        t.push(b'>');
        t
    } else {
        tag.to_vec()
    }
}

/// The one element of a fragment that holds exactly one element.
fn only_node(xml: &[u8]) -> Result<Node, String> {
    let mut ns = nodes(xml, 0)?;
    match ns.len() {
        1 => Ok(ns.remove(0)),
        _ => Err("the block is not a single element; the document is damaged".into()),
    }
}

/// Paragraph `p` (its bytes in `xml`) rebuilt with new text: its start tag, its pPr (with
/// the style changed to `style_id` when given), one run with the first run's rPr.
fn rebuilt_paragraph(
    xml: &[u8],
    p: &Node,
    prefix: &str,
    text: &str,
    style_id: Option<&str>,
) -> Result<Vec<u8>, String> {
    let kids = children(xml, p)?;
    let mut out = open_tag(xml, p);
    let ppr = first_child(&kids, b"pPr");
    match (ppr, style_id) {
        (Some(ppr), None) => out.extend_from_slice(&xml[ppr.start..ppr.end]),
        (Some(ppr), Some(id)) => out.extend_from_slice(&with_style(xml, ppr, prefix, id)?),
        (None, Some(id)) => out.extend_from_slice(&ppr_with_style(prefix, id, &[])),
        (None, None) => {}
    }
    let rpr = first_run_rpr(xml, &kids, 0)?.unwrap_or_default();
    out.extend_from_slice(&run(prefix, &rpr, text));
    out.extend_from_slice(format!("</{}>", qname(prefix, "p")).as_bytes());
    Ok(out)
}

/// The rPr of the first run among `kids`, looking into links, insertions, smart tags and
/// simple fields (a few levels) when the paragraph starts with one.
fn first_run_rpr(xml: &[u8], kids: &[Node], level: usize) -> Result<Option<Vec<u8>>, String> {
    for k in kids {
        match k.local.as_slice() {
            b"r" => {
                let rk = children(xml, k)?;
                return Ok(Some(
                    first_child(&rk, b"rPr")
                        .map(|n| xml[n.start..n.end].to_vec())
                        .unwrap_or_default(),
                ));
            }
            b"hyperlink" | b"ins" | b"smartTag" | b"fldSimple" | b"customXml" | b"sdt"
            | b"sdtContent"
                if level < 4 =>
            {
                if let Some(r) = first_run_rpr(xml, &children(xml, k)?, level + 1)? {
                    return Ok(Some(r));
                }
            }
            _ => {}
        }
    }
    Ok(None)
}

fn replace_paragraph(
    bytes: &[u8],
    prefix: &str,
    text: &str,
    style_id: Option<&str>,
) -> Result<Vec<u8>, String> {
    let p = only_node(bytes)?;
    rebuilt_paragraph(bytes, &p, prefix, text, style_id)
}

fn ppr_with_style(prefix: &str, id: &str, rest: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "<{}><{} {}=\"{}\"/>",
        qname(prefix, "pPr"),
        qname(prefix, "pStyle"),
        qname(prefix, "val"),
        escape(id)
    )
    .into_bytes();
    out.extend_from_slice(rest);
    out.extend_from_slice(format!("</{}>", qname(prefix, "pPr")).as_bytes());
    out
}

/// pPr `ppr` with its pStyle replaced by (or set to) `id`; pStyle comes first in a pPr.
fn with_style(xml: &[u8], ppr: &Node, prefix: &str, id: &str) -> Result<Vec<u8>, String> {
    let kids = children(xml, ppr)?;
    let mut rest = Vec::new();
    let mut pos = ppr.inner_start;
    for k in kids.iter().filter(|k| k.local == b"pStyle") {
        rest.extend_from_slice(&xml[pos..k.start]);
        pos = k.end;
    }
    if !ppr.empty {
        rest.extend_from_slice(&xml[pos..ppr.inner_end]);
    }
    Ok(ppr_with_style(prefix, id, &rest))
}

/// A new paragraph with `text` in style `style` (resolved in the document's styles), its
/// list numbering copied from a body paragraph of the same style when there is one.
fn new_paragraph(
    body: &Body,
    styles: &mut Styles,
    style: Option<&str>,
    text: &str,
) -> Result<Vec<u8>, String> {
    let prefix = &body.prefix;
    let mut out = format!("<{}>", qname(prefix, "p")).into_bytes();
    if let Some(s) = style {
        let id = styles.resolve(s)?;
        let numpr = body
            .items
            .iter()
            .filter(|i| i.kind == Kind::Paragraph && !i.deleted)
            .filter(|i| contains(&i.bytes, id.as_bytes()))
            .find_map(|i| numbering_of(&i.bytes, &id));
        out.extend_from_slice(&ppr_with_style(prefix, &id, &numpr.unwrap_or_default()));
    }
    out.extend_from_slice(&run(prefix, &[], text));
    out.extend_from_slice(format!("</{}>", qname(prefix, "p")).as_bytes());
    Ok(out)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The `w:numPr` of paragraph `p` if its style is `id`.
fn numbering_of(p: &[u8], id: &str) -> Option<Vec<u8>> {
    let node = only_node(p).ok()?;
    let kids = children(p, &node).ok()?;
    let ppr = first_child(&kids, b"pPr")?;
    let pk = children(p, ppr).ok()?;
    let style = first_child(&pk, b"pStyle")?;
    let mut val = None;
    walk_xml("", "", &p[style.start..style.end], |ev| {
        if let Xml::Empty { attrs, .. } | Xml::Start { attrs, .. } = ev {
            val = attr(&attrs, b"val").map(str::to_string);
        }
    })
    .ok()?;
    if val.as_deref() != Some(id) {
        return None;
    }
    let num = first_child(&pk, b"numPr")?;
    Some(p[num.start..num.end].to_vec())
}

/// Rows (`w:tr` children) of a table and the cells (`w:tc` children) of a row.
fn rows_of(xml: &[u8], tbl: &Node) -> Result<Vec<Node>, String> {
    Ok(children(xml, tbl)?
        .into_iter()
        .filter(|n| n.local == b"tr")
        .collect())
}

fn cells_of(xml: &[u8], tr: &Node) -> Result<Vec<Node>, String> {
    Ok(children(xml, tr)?
        .into_iter()
        .filter(|n| n.local == b"tc")
        .collect())
}

/// A cell rebuilt with `text`: its tcPr (minus `drop` children), its first paragraph's
/// pPr and first run's rPr.
fn rebuilt_cell(
    xml: &[u8],
    tc: &Node,
    prefix: &str,
    text: &str,
    fresh: bool,
) -> Result<Vec<u8>, String> {
    let kids = children(xml, tc)?;
    let mut out = if fresh {
        format!("<{}>", qname(prefix, "tc")).into_bytes()
    } else {
        open_tag(xml, tc)
    };
    if let Some(pr) = first_child(&kids, b"tcPr") {
        if fresh {
            out.extend_from_slice(&without(xml, pr, &[b"vMerge"])?);
        } else {
            out.extend_from_slice(&xml[pr.start..pr.end]);
        }
    }
    match first_child(&kids, b"p") {
        Some(p) => {
            let mut para = rebuilt_paragraph(xml, p, prefix, text, None)?;
            if fresh {
                // A new paragraph: the template's start tag may carry ids that must stay
                // unique (w14:paraId), so it starts plain.
                let open = open_tag(xml, p);
                para.splice(
                    ..open.len(),
                    format!("<{}>", qname(prefix, "p")).into_bytes(),
                );
            }
            out.extend_from_slice(&para);
        }
        None => {
            out.extend_from_slice(format!("<{}>", qname(prefix, "p")).as_bytes());
            out.extend_from_slice(&run(prefix, &[], text));
            out.extend_from_slice(format!("</{}>", qname(prefix, "p")).as_bytes());
        }
    }
    out.extend_from_slice(format!("</{}>", qname(prefix, "tc")).as_bytes());
    Ok(out)
}

/// Element `n` without its children named in `drop`.
fn without(xml: &[u8], n: &Node, drop: &[&[u8]]) -> Result<Vec<u8>, String> {
    if n.empty {
        return Ok(xml[n.start..n.end].to_vec());
    }
    let kids = children(xml, n)?;
    let mut out = Vec::new();
    let mut pos = n.start;
    for k in kids.iter().filter(|k| drop.contains(&k.local.as_slice())) {
        out.extend_from_slice(&xml[pos..k.start]);
        pos = k.end;
    }
    out.extend_from_slice(&xml[pos..n.end]);
    Ok(out)
}

fn set_cell(
    bytes: &[u8],
    prefix: &str,
    row: usize,
    col: usize,
    text: &str,
) -> Result<Vec<u8>, String> {
    let tbl = only_node(bytes)?;
    let rows = rows_of(bytes, &tbl)?;
    let tr = rows.get(row).ok_or_else(|| {
        format!(
            "the table has {} row(s) (0 to {}); there is no row {row}",
            rows.len(),
            rows.len().saturating_sub(1)
        )
    })?;
    let cells = cells_of(bytes, tr)?;
    let tc = cells.get(col).ok_or_else(|| {
        format!(
            "row {row} has {} cell(s) (0 to {}); there is no column {col}",
            cells.len(),
            cells.len().saturating_sub(1)
        )
    })?;
    let cell = rebuilt_cell(bytes, tc, prefix, text, false)?;
    let mut out = bytes[..tc.start].to_vec();
    out.extend_from_slice(&cell);
    out.extend_from_slice(&bytes[tc.end..]);
    Ok(out)
}

fn append_row(bytes: &[u8], prefix: &str, values: &[String]) -> Result<Vec<u8>, String> {
    let tbl = only_node(bytes)?;
    let rows = rows_of(bytes, &tbl)?;
    let last = rows
        .last()
        .ok_or("the table has no rows to copy the format from")?;
    let cells = cells_of(bytes, last)?;
    if values.len() > cells.len() {
        return Err(format!(
            "{} values for a row of {} cells; give at most {}",
            values.len(),
            cells.len(),
            cells.len()
        ));
    }
    let mut row = format!("<{}>", qname(prefix, "tr")).into_bytes();
    let kids = children(bytes, last)?;
    if let Some(pr) = first_child(&kids, b"trPr") {
        row.extend_from_slice(&without(bytes, pr, &[b"tblHeader"])?);
    }
    for (i, tc) in cells.iter().enumerate() {
        let text = values.get(i).map(String::as_str).unwrap_or("");
        row.extend_from_slice(&rebuilt_cell(bytes, tc, prefix, text, true)?);
    }
    row.extend_from_slice(format!("</{}>", qname(prefix, "tr")).as_bytes());
    let mut out = bytes[..last.end].to_vec();
    out.extend_from_slice(&row);
    out.extend_from_slice(&bytes[last.end..]);
    Ok(out)
}

/// `word/styles.xml`: paragraph styles by id and name, and styles added by this edit.
struct Styles {
    xml: Option<Vec<u8>>,
    /// (id, name, type) of every style.
    all: Vec<(String, String, String)>,
    added: Vec<u8>,
}

impl Styles {
    fn parse(file: &str, xml: Option<&[u8]>) -> Result<Styles, FormatError> {
        let mut all = Vec::new();
        if let Some(x) = xml {
            let mut cur: Option<(String, String, String)> = None;
            walk_xml(file, "word/styles.xml", x, |ev| match ev {
                Xml::Start { name, attrs } | Xml::Empty { name, attrs } if name == b"style" => {
                    if let Some(c) = cur.take() {
                        all.push(c);
                    }
                    let id = attr(&attrs, b"styleId").unwrap_or_default().to_string();
                    let ty = attr(&attrs, b"type").unwrap_or("paragraph").to_string();
                    cur = Some((id.clone(), id, ty));
                }
                Xml::Start { name, attrs } | Xml::Empty { name, attrs } if name == b"name" => {
                    if let Some(c) = cur.as_mut() {
                        c.1 = attr(&attrs, b"val").unwrap_or_default().to_string();
                    }
                }
                Xml::End { name } if name == b"style" => {
                    if let Some(c) = cur.take() {
                        all.push(c);
                    }
                }
                _ => {}
            })?;
        }
        Ok(Styles {
            xml: xml.map(<[u8]>::to_vec),
            all,
            added: Vec::new(),
        })
    }

    /// The id of paragraph style `want` (a name or an id, any case and spacing); a built-in
    /// style the document lacks (Heading 1–9, Title, Subtitle, List Bullet, List Number,
    /// Quote, Normal) is added to the styles part.
    fn resolve(&mut self, want: &str) -> Result<String, String> {
        let norm = |s: &str| {
            s.chars()
                .filter(|c| !c.is_whitespace())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        };
        let w = norm(want);
        if w.is_empty() {
            return Err("`style` is empty; give a style name such as \"Heading 2\"".into());
        }
        let para = self.all.iter().filter(|(_, _, t)| t == "paragraph");
        if let Some((id, _, _)) = para.clone().find(|(id, _, _)| id == want) {
            return Ok(id.clone());
        }
        if let Some((id, _, _)) = para
            .clone()
            .find(|(id, name, _)| norm(name) == w || norm(id) == w)
        {
            return Ok(id.clone());
        }
        let Some((name, ppr, rpr)) = builtin(&w) else {
            let mut names: Vec<String> =
                para.map(|(_, n, _)| super::docx::display_name(n)).collect();
            names.sort();
            names.dedup();
            return Err(format!(
                "the document has no paragraph style {want:?}; use one of: {}, or a built-in Heading 1-9, Title, Subtitle, List Bullet, List Number, Quote",
                names.join(", ")
            ));
        };
        let mut id: String = super::docx::display_name(&name)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        while self.all.iter().any(|(i, _, _)| *i == id) {
            id.push('1');
        }
        if self.xml.is_some() {
            let prefix = self
                .xml
                .as_deref()
                .and_then(|x| nodes(x, 0).ok())
                .and_then(|ns| ns.into_iter().find(|n| n.local == b"styles"))
                .and_then(|n| {
                    self.xml
                        .as_deref()
                        .map(|x| prefix_of(&x[n.start..n.inner_start]))
                })
                .unwrap_or_default();
            let q = |l: &str| qname(&prefix, l);
            let def = format!(
                "<{style} {ty}=\"paragraph\" {sid}=\"{id}\"><{nm} {val}=\"{name}\"/><{qf}/>{ppr}{rpr}</{style}>",
                style = q("style"),
                ty = q("type"),
                sid = q("styleId"),
                nm = q("name"),
                val = q("val"),
                qf = q("qFormat"),
                ppr = ppr.replace(
                    "w:",
                    &if prefix.is_empty() {
                        String::new()
                    } else {
                        format!("{prefix}:")
                    }
                ),
                rpr = rpr.replace(
                    "w:",
                    &if prefix.is_empty() {
                        String::new()
                    } else {
                        format!("{prefix}:")
                    }
                ),
            );
            self.added.extend_from_slice(def.as_bytes());
        }
        self.all
            .push((id.clone(), name.to_string(), "paragraph".into()));
        Ok(id)
    }

    /// The new styles part, if styles were added.
    fn changed(&self) -> Option<Vec<u8>> {
        if self.added.is_empty() {
            return None;
        }
        let xml = self.xml.as_deref()?;
        let root = nodes(xml, 0)
            .ok()?
            .into_iter()
            .find(|n| n.local == b"styles")?;
        if root.empty {
            return None;
        }
        let mut out = xml[..root.inner_end].to_vec();
        out.extend_from_slice(&self.added);
        out.extend_from_slice(&xml[root.inner_end..]);
        Some(out)
    }
}

/// A built-in paragraph style by its normalised name: (Word's name, pPr, rPr).
fn builtin(norm: &str) -> Option<(String, String, String)> {
    if let Some(n) = norm.strip_prefix("heading")
        && let Ok(level) = n.parse::<u8>()
        && (1..=9).contains(&level)
    {
        let size = [32, 28, 26, 24, 22, 22, 22, 22, 22][usize::from(level - 1)];
        return Some((
            format!("heading {level}"),
            format!(
                "<w:pPr><w:keepNext/><w:spacing w:before=\"240\" w:after=\"60\"/><w:outlineLvl w:val=\"{}\"/></w:pPr>",
                level - 1
            ),
            format!("<w:rPr><w:b/><w:sz w:val=\"{size}\"/></w:rPr>"),
        ));
    }
    let (name, ppr, rpr) = match norm {
        "title" => ("Title", "", "<w:rPr><w:sz w:val=\"56\"/></w:rPr>"),
        "subtitle" => ("Subtitle", "", "<w:rPr><w:i/><w:sz w:val=\"30\"/></w:rPr>"),
        "listbullet" => (
            "List Bullet",
            "<w:pPr><w:ind w:left=\"720\" w:hanging=\"360\"/></w:pPr>",
            "",
        ),
        "listnumber" => (
            "List Number",
            "<w:pPr><w:ind w:left=\"720\" w:hanging=\"360\"/></w:pPr>",
            "",
        ),
        "quote" => ("Quote", "", "<w:rPr><w:i/></w:rPr>"),
        "normal" => ("Normal", "", ""),
        _ => return None,
    };
    Some((name.into(), ppr.into(), rpr.into()))
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
