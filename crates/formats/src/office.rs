//! Office documents: read .docx, .pptx, .pdf and the other office files to text for agents,
//! typed views for checks ([`read_docx`], [`read_pptx`], [`read_pdf`]), and writers for tools
//! ([`write_docx`], [`write_pdf`]). Spreadsheets are read by [`crate::sheet`].
//!
//! Every reader takes untrusted bytes and is bounded: the input size ([`MAX_INPUT_BYTES`]),
//! zip entries and inflated sizes ([`MAX_ZIP_ENTRIES`], [`MAX_ENTRY_BYTES`],
//! [`MAX_TOTAL_BYTES`], [`MAX_RATIO`]), XML nesting ([`MAX_XML_DEPTH`]), PDF pages
//! ([`MAX_PDF_PAGES`]) and extracted text ([`MAX_TEXT_CHARS`]). Third-party parsers run under a
//! panic guard, and every public reader parses in an isolated child process with a time and
//! memory budget ([`crate::isolated`]), so a file that crashes or hangs its parser (a PDF whose
//! objects form a cycle) is an error, never a crash. Every failure is
//! [`FormatError::InvalidDocument`] saying what is wrong.
//!
//! ```
//! use bureau_formats::office::{self, WriteBlock};
//!
//! let bytes = office::write_docx("memo.docx", &[
//!     WriteBlock::Heading { level: 1, text: "Q3 plan".into() },
//!     WriteBlock::Bullets { items: vec!["hire".into(), "ship".into()] },
//!     WriteBlock::Table { rows: vec![vec!["Item".into(), "Cost".into()], vec!["Desk".into(), "120".into()]] },
//! ])?;
//! let text = office::to_text("memo.docx", &bytes)?;
//! assert_eq!(text, "# Q3 plan\n\n- hire\n- ship\n\n| Item | Cost |\n|---|---|\n| Desk | 120 |\n");
//! # Ok::<(), bureau_formats::FormatError>(())
//! ```

pub(crate) mod archive;
mod docx;
pub(crate) mod docx_edit;
mod image;
mod pdf;
mod pptx;
mod vcard;

pub use docx::{Block, Docx, Paragraph, Table, WriteBlock, read_docx, write_docx};
pub use docx_edit::{
    BlockView, DocxOp, MAX_EDIT_OPS, MAX_EDIT_TEXT, blocks_to_text, docx_blocks, edit_docx,
};
pub use image::{MAX_IMAGE_PIXELS, PageImage, image_to_pdf, images_to_pdf};
pub use pdf::{Pdf, read_pdf, write_pdf};
pub use pptx::{Pptx, Slide, read_pptx, write_pptx};
pub use vcard::{Contact, contacts_to_text, parse_vcf};

use crate::FormatError;

/// Largest file any reader accepts (bytes).
pub const MAX_INPUT_BYTES: usize = 50 * 1024 * 1024;
/// Most entries a .docx/.pptx zip may have.
pub const MAX_ZIP_ENTRIES: usize = 10_000;
/// Most bytes one zip entry may inflate to (declared or actual).
pub const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;
/// Most bytes all entries read from one document may inflate to.
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Highest inflated/compressed ratio of an entry larger than 1 MiB.
pub const MAX_RATIO: u64 = 200;
/// Deepest XML element nesting accepted.
pub const MAX_XML_DEPTH: usize = 256;
/// Most pages read from a PDF.
pub const MAX_PDF_PAGES: usize = 5_000;
/// Most characters of text extracted from one document.
pub const MAX_TEXT_CHARS: usize = 20 * 1024 * 1024;

pub(crate) fn invalid(file: &str, reason: String) -> FormatError {
    FormatError::InvalidDocument {
        file: file.to_string(),
        reason,
    }
}

/// The kinds of file [`to_text`] reads.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Format {
    /// Word document.
    Docx,
    /// PowerPoint presentation.
    Pptx,
    /// PDF.
    Pdf,
    /// Spreadsheet (.xlsx, .xlsm, .csv, .tsv), read by [`crate::sheet`].
    Sheet,
    /// HTML page.
    Html,
    /// Markdown.
    Markdown,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
    /// vCard contacts.
    Vcf,
    /// E-mail message.
    Eml,
    /// iCalendar.
    Ics,
    /// Plain text (any other extension, when the bytes are text).
    Text,
}

impl Format {
    /// A short lowercase name ("docx", "pdf", "text", ...).
    pub fn name(self) -> &'static str {
        match self {
            Format::Docx => "docx",
            Format::Pptx => "pptx",
            Format::Pdf => "pdf",
            Format::Sheet => "sheet",
            Format::Html => "html",
            Format::Markdown => "markdown",
            Format::Json => "json",
            Format::Yaml => "yaml",
            Format::Vcf => "vcf",
            Format::Eml => "eml",
            Format::Ics => "ics",
            Format::Text => "text",
        }
    }

    /// The format of a file, by its contents when they say so (a PDF header, or a zip holding a
    /// Word, PowerPoint or Excel part), else by its name's extension.
    pub fn detect(name: &str, bytes: &[u8]) -> Format {
        if bytes.starts_with(b"%PDF-") {
            return Format::Pdf;
        }
        if bytes.starts_with(b"PK\x03\x04") {
            // Zip local headers carry entry names; look at the first few for the main part.
            let head = &bytes[..bytes.len().min(64 * 1024)];
            let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
            let by_ext = Format::by_extension(name);
            if matches!(by_ext, Format::Docx | Format::Pptx | Format::Sheet) {
                // Trust the extension unless the bytes clearly say another office type.
                let is_docx = has(b"word/");
                let is_pptx = has(b"ppt/");
                let is_xlsx = has(b"xl/");
                match (by_ext, is_docx, is_pptx, is_xlsx) {
                    (Format::Docx, false, true, _) => return Format::Pptx,
                    (Format::Docx, false, false, true) => return Format::Sheet,
                    (Format::Pptx, true, false, _) => return Format::Docx,
                    (Format::Pptx, false, false, true) => return Format::Sheet,
                    (Format::Sheet, true, false, false) => return Format::Docx,
                    (Format::Sheet, false, true, false) => return Format::Pptx,
                    _ => return by_ext,
                }
            }
            if has(b"word/") {
                return Format::Docx;
            }
            if has(b"ppt/") {
                return Format::Pptx;
            }
            if has(b"xl/") {
                return Format::Sheet;
            }
        }
        Format::by_extension(name)
    }

    fn by_extension(name: &str) -> Format {
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "docx" | "docm" => Format::Docx,
            "pptx" | "pptm" => Format::Pptx,
            "pdf" => Format::Pdf,
            "xlsx" | "xlsm" | "csv" | "tsv" => Format::Sheet,
            "html" | "htm" => Format::Html,
            "md" | "markdown" => Format::Markdown,
            "json" => Format::Json,
            "yaml" | "yml" => Format::Yaml,
            "vcf" | "vcard" => Format::Vcf,
            "eml" => Format::Eml,
            "ics" => Format::Ics,
            _ => Format::Text,
        }
    }
}

/// A file rendered for an agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rendered {
    /// What the file was read as.
    pub format: Format,
    /// Its text, structure kept (see [`to_text`]).
    pub text: String,
}

/// Read any office file to text for an agent, by extension (or by magic bytes when the
/// extension lies): .docx as markdown-like text (`#` headings, `- ` items, `| a | b |`
/// tables), .pptx as `## Slide N: Title` sections, .pdf as `## Page N` sections, spreadsheets
/// through [`crate::sheet`], .html as text, .json pretty-printed, .yaml validated, .vcf as
/// contact lines, .eml as headers and body, .ics as events, anything else as UTF-8 text.
pub fn to_text(name: &str, bytes: &[u8]) -> Result<String, FormatError> {
    render(name, bytes).map(|r| r.text)
}

/// [`to_text`], also saying which format the file was read as.
///
/// The file is parsed in an isolated child process (see [`crate::isolated`]): a file that
/// crashes, exhausts or hangs its parser is an [`FormatError::InvalidDocument`] naming the
/// limit, never a crash of the caller.
pub fn render(name: &str, bytes: &[u8]) -> Result<Rendered, FormatError> {
    crate::isolated::read(name, bytes, |n, b| render_in_process(n, b))
}

/// [`render`] in the calling process, without crash isolation.
pub(crate) fn render_in_process(name: &str, bytes: &[u8]) -> Result<Rendered, FormatError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(invalid(
            name,
            format!(
                "the file is {} bytes, more than the {MAX_INPUT_BYTES} that can be read",
                bytes.len()
            ),
        ));
    }
    let format = Format::detect(name, bytes);
    let text = match format {
        Format::Docx => docx::read_docx_in_process(name, bytes)?.to_text(),
        Format::Pptx => pptx::read_pptx_in_process(name, bytes)?.to_text(),
        Format::Pdf => pdf::read_pdf_in_process(name, bytes)?.to_text(),
        Format::Sheet => {
            let ext_ok = matches!(
                name.rsplit_once('.')
                    .map(|(_, e)| e.to_ascii_lowercase())
                    .as_deref(),
                Some("xlsx" | "xlsm" | "csv" | "tsv")
            );
            let sheet_name = if ext_ok {
                name.to_string()
            } else {
                format!("{name}.xlsx")
            };
            crate::sheet::read_file_in_process(&sheet_name, bytes)?.to_text()
        }
        Format::Html => crate::text::html_to_text(&utf8(name, bytes)?),
        Format::Markdown | Format::Text => {
            if is_binary(bytes) {
                return Err(invalid(
                    name,
                    "a binary file of a type that cannot be read as text (supported: .docx, .pptx, .pdf, .xlsx, .csv, .html, .md, .json, .yaml, .vcf, .eml, .ics, plain text)".into(),
                ));
            }
            utf8(name, bytes)?
        }
        Format::Json => {
            let v: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|e| invalid(name, format!("not valid JSON ({e})")))?;
            let mut s =
                serde_json::to_string_pretty(&v).map_err(|e| invalid(name, e.to_string()))?;
            s.push('\n');
            s
        }
        Format::Yaml => {
            let text = utf8(name, bytes)?;
            crate::error::guard("YAML parser", || {
                for doc in serde_yaml::Deserializer::from_str(&text) {
                    <serde_yaml::Value as serde::Deserialize>::deserialize(doc)?;
                }
                Ok::<(), serde_yaml::Error>(())
            })?
            .map_err(|e| invalid(name, format!("not valid YAML ({e})")))?;
            text
        }
        Format::Vcf => contacts_to_text(&parse_vcf(&utf8(name, bytes)?)),
        Format::Eml => mail_to_text(&crate::mail::parse_eml(bytes)?),
        Format::Ics => {
            let events = crate::calendar::parse_ics(&utf8(name, bytes)?, chrono_tz::UTC)?;
            events_to_text(&events)
        }
    };
    Ok(Rendered { format, text })
}

fn utf8(name: &str, bytes: &[u8]) -> Result<String, FormatError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => Err(invalid(
            name,
            format!("not UTF-8 text ({e}); save it as UTF-8"),
        )),
    }
}

/// True if the bytes are not text: a NUL byte in the first 8 KiB, or invalid UTF-8.
fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0) || std::str::from_utf8(bytes).is_err()
}

fn mail_to_text(m: &crate::mail::ParsedMail) -> String {
    let list =
        |v: &[crate::mail::Address]| v.iter().map(|a| a.display()).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    if let Some(f) = &m.from {
        out.push_str(&format!("From: {}\n", f.display()));
    }
    if !m.to.is_empty() {
        out.push_str(&format!("To: {}\n", list(&m.to)));
    }
    if !m.cc.is_empty() {
        out.push_str(&format!("Cc: {}\n", list(&m.cc)));
    }
    if let Some(d) = m.date {
        out.push_str(&format!("Date: {}\n", d.to_rfc3339()));
    }
    out.push_str(&format!("Subject: {}\n", m.subject));
    for a in &m.attachments {
        out.push_str(&format!(
            "Attachment: {} ({}, {} bytes)\n",
            a.filename, a.content_type, a.size
        ));
    }
    out.push('\n');
    out.push_str(&m.text);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn events_to_text(events: &[crate::calendar::CalEvent]) -> String {
    let mut out = String::new();
    for e in events {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("## {}\n", e.summary));
        if e.all_day {
            out.push_str(&format!("When: {} (all day)\n", e.start.format("%Y-%m-%d")));
        } else {
            out.push_str(&format!(
                "When: {} to {}\n",
                e.start.to_rfc3339(),
                e.end.to_rfc3339()
            ));
        }
        if !e.location.is_empty() {
            out.push_str(&format!("Where: {}\n", e.location));
        }
        if let Some(o) = &e.organizer {
            out.push_str(&format!("Organizer: {o}\n"));
        }
        for a in &e.attendees {
            out.push_str(&format!("Attendee: {} ({})\n", a.email, a.status));
        }
        if !e.description.is_empty() {
            out.push_str(&e.description);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests;
