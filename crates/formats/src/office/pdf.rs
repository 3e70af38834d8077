//! .pdf: text per page (pdf-extract over lopdf, under a panic guard) and a small PDF writer
//! (hand-written PDF 1.4 with the standard Helvetica fonts: no font embedding, no dependency).

use serde::{Deserialize, Serialize};

use super::{MAX_PDF_PAGES, MAX_TEXT_CHARS, invalid};
use crate::FormatError;

/// A PDF's text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pdf {
    /// The text of each page, in order (page 1 first).
    pub pages: Vec<String>,
}

impl Pdf {
    /// Text for an agent: `## Page N` then the page's text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.pages.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!("## Page {}\n", i + 1));
            let t = p.trim();
            if !t.is_empty() {
                out.push_str(t);
                out.push('\n');
            }
        }
        out
    }
}

impl Pdf {
    /// The PDF's text as .docx blocks for [`super::write_docx`]: one paragraph per non-empty
    /// line, pages in order (a PDF has no paragraph structure to recover; a scan without a
    /// text layer gives no blocks).
    pub fn to_blocks(&self) -> Vec<super::WriteBlock> {
        self.pages
            .iter()
            .flat_map(|p| p.lines())
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .map(|l| super::WriteBlock::Paragraph {
                text: l
                    .chars()
                    .filter(|c| !c.is_control() || *c == '\t')
                    .collect(),
            })
            .collect()
    }
}

/// Read the text of every page of a PDF.
pub fn read_pdf(file: &str, bytes: &[u8]) -> Result<Pdf, FormatError> {
    crate::isolated::read(file, bytes, |f, b| read_pdf_in_process(f, b))
}

/// [`read_pdf`] in the calling process, without crash isolation.
pub(crate) fn read_pdf_in_process(file: &str, bytes: &[u8]) -> Result<Pdf, FormatError> {
    if !bytes.starts_with(b"%PDF-")
        && !bytes
            .get(..1024)
            .is_some_and(|h| h.windows(5).any(|w| w == b"%PDF-"))
    {
        return Err(invalid(
            file,
            "not a PDF file (no %PDF- header); check the file or its extension".into(),
        ));
    }
    let doc = crate::error::guard("PDF reader", || lopdf::Document::load_mem(bytes))
        .map_err(|e| invalid(file, format!("the PDF cannot be parsed ({e})")))?
        .map_err(|e| match e {
            lopdf::Error::Decryption(_)
            | lopdf::Error::InvalidPassword
            | lopdf::Error::AlreadyEncrypted => encrypted(file),
            e => invalid(
                file,
                format!(
                    "the PDF is corrupt or truncated ({e}); ask for a fresh copy or a text version"
                ),
            ),
        })?;
    if doc.is_encrypted() || doc.was_encrypted() {
        return Err(encrypted(file));
    }
    let pages = doc.get_pages();
    if pages.len() > MAX_PDF_PAGES {
        return Err(invalid(
            file,
            format!(
                "the PDF has {} pages, more than the {MAX_PDF_PAGES} that can be read",
                pages.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(pages.len());
    let mut total = 0usize;
    for &num in pages.keys() {
        let text = page_text(&doc, num).or_else(|why| {
            // pdf-extract gives up on some pages (a curve with no current point, as Chrome's
            // Skia writes them, makes it panic): lopdf's simpler extractor reads their text.
            crate::error::guard("PDF text extractor", || doc.extract_text(&[num]))
                .ok()
                .and_then(Result::ok)
                .ok_or_else(|| {
                    invalid(
                        file,
                        format!(
                            "page {num} cannot be read ({why}); the PDF is damaged (e.g. a broken font)"
                        ),
                    )
                })
        })?;
        total += text.len();
        if total > MAX_TEXT_CHARS {
            return Err(invalid(
                file,
                format!(
                    "the PDF holds more than {MAX_TEXT_CHARS} characters of text; it is too large to read"
                ),
            ));
        }
        out.push(text);
    }
    Ok(Pdf { pages: out })
}

/// One page's text by pdf-extract (its panics and errors as the reason).
fn page_text(doc: &lopdf::Document, num: u32) -> Result<String, String> {
    crate::error::guard("PDF text extractor", || {
        let mut s = String::new();
        let r = {
            let mut dev = pdf_extract::PlainTextOutput::new(&mut s);
            pdf_extract::output_doc_page(doc, &mut dev, num)
        };
        r.map(|()| s)
    })
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())
}

fn encrypted(file: &str) -> FormatError {
    invalid(
        file,
        "the PDF is encrypted (password-protected); ask the sender for an unprotected copy".into(),
    )
}

const PAGE_W: f32 = 595.0; // A4
const PAGE_H: f32 = 842.0;
const MARGIN: f32 = 56.0;

/// Helvetica advance widths (1/1000 em) for ASCII 32..=126, from the standard AFM.
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
/// Helvetica-Bold advance widths for ASCII 32..=126.
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667,
    611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556,
    278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

#[derive(Clone, Copy, PartialEq)]
enum Font {
    Regular,
    Bold,
    Mono,
}

impl Font {
    fn name(self) -> &'static str {
        match self {
            Font::Regular => "F1",
            Font::Bold => "F2",
            Font::Mono => "F3",
        }
    }
    fn width(self, b: u8, size: f32) -> f32 {
        let w = match self {
            Font::Mono => 600,
            Font::Regular => HELVETICA
                .get(usize::from(b).wrapping_sub(32))
                .copied()
                .unwrap_or(556),
            Font::Bold => HELVETICA_BOLD
                .get(usize::from(b).wrapping_sub(32))
                .copied()
                .unwrap_or(611),
        };
        f32::from(w) * size / 1000.0
    }
}

/// A character in WinAnsiEncoding (Latin-1 plus a few), `?` when it has no code there.
fn win_ansi(c: char) -> u8 {
    match c {
        '\u{2022}' => 0x95,
        '\u{2013}' => 0x96,
        '\u{2014}' => 0x97,
        '\u{2018}' => 0x91,
        '\u{2019}' => 0x92,
        '\u{201C}' => 0x93,
        '\u{201D}' => 0x94,
        '\u{20AC}' => 0x80,
        '\u{2026}' => 0x85,
        '\t' => b' ',
        c if (' '..='~').contains(&c) => c as u8,
        c if ('\u{A0}'..='\u{FF}').contains(&c) => c as u32 as u8,
        _ => b'?',
    }
}

/// Render markdown-like text (as produced by the readers: `#` headings, `- ` items,
/// `| a | b |` tables) into a paginated A4 PDF. Characters outside WinAnsiEncoding print as
/// `?`. `title` goes into the document information. Deterministic output.
pub fn write_pdf(title: &str, text: &str) -> Vec<u8> {
    // Lay out lines: (font, size, indent, bytes).
    let mut lines: Vec<(Font, f32, f32, Vec<u8>)> = Vec::new();
    let max_w = PAGE_W - 2.0 * MARGIN;
    for raw in text.lines() {
        let trimmed = raw.trim_end();
        let (font, size, indent, body, gap): (Font, f32, f32, String, bool) = if let Some(h) =
            heading(trimmed)
        {
            let size = match h.0 {
                1 => 18.0,
                2 => 15.0,
                3 => 13.0,
                _ => 12.0,
            };
            (Font::Bold, size, 0.0, h.1.to_string(), true)
        } else if trimmed.trim_start().starts_with("- ") || trimmed.trim_start().starts_with("* ") {
            let depth = (trimmed.len() - trimmed.trim_start().len()) as f32 / 2.0;
            (
                Font::Regular,
                11.0,
                14.0 + 14.0 * depth,
                format!("\u{2022} {}", &trimmed.trim_start()[2..]),
                false,
            )
        } else if trimmed.starts_with('|') {
            (Font::Mono, 9.0, 0.0, trimmed.to_string(), false)
        } else {
            (Font::Regular, 11.0, 0.0, trimmed.to_string(), false)
        };
        if gap && !lines.is_empty() {
            lines.push((Font::Regular, 6.0, 0.0, Vec::new()));
        }
        let bytes: Vec<u8> = body.chars().map(win_ansi).collect();
        // Greedy word wrap on spaces; words longer than a line are cut.
        let avail = max_w - indent;
        let mut cur: Vec<u8> = Vec::new();
        let mut cur_w = 0.0;
        let mut first = true;
        for word in bytes.split(|b| *b == b' ') {
            let ww: f32 = word.iter().map(|b| font.width(*b, size)).sum();
            let sp = font.width(b' ', size);
            if !cur.is_empty() && cur_w + sp + ww > avail {
                lines.push((
                    font,
                    size,
                    if first { indent } else { indent + 10.0 },
                    std::mem::take(&mut cur),
                ));
                first = false;
                cur_w = 0.0;
            }
            if !cur.is_empty() {
                cur.push(b' ');
                cur_w += sp;
            }
            for b in word {
                let bw = font.width(*b, size);
                if cur_w + bw > avail && !cur.is_empty() {
                    lines.push((
                        font,
                        size,
                        if first { indent } else { indent + 10.0 },
                        std::mem::take(&mut cur),
                    ));
                    first = false;
                    cur_w = 0.0;
                }
                cur.push(*b);
                cur_w += bw;
            }
        }
        lines.push((font, size, if first { indent } else { indent + 10.0 }, cur));
    }
    // Paginate.
    let mut pages: Vec<String> = Vec::new();
    let mut content = String::new();
    let mut y = PAGE_H - MARGIN;
    for (font, size, indent, bytes) in &lines {
        let lead = size * 1.35;
        if y - lead < MARGIN && !content.is_empty() {
            pages.push(std::mem::take(&mut content));
            y = PAGE_H - MARGIN;
        }
        y -= lead;
        if !bytes.is_empty() {
            content.push_str(&format!(
                "BT /{} {} Tf {:.2} {:.2} Td ({}) Tj ET\n",
                font.name(),
                size,
                MARGIN + indent,
                y,
                escape(bytes)
            ));
        }
    }
    if !content.is_empty() || pages.is_empty() {
        pages.push(content);
    }
    // Objects: 1 catalog, 2 pages, 3-5 fonts, 6 info, then (page, content) pairs.
    let n = pages.len();
    let mut objs: Vec<Vec<u8>> = Vec::new();
    objs.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 7 + 2 * i)).collect();
    objs.push(format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes());
    for base in ["Helvetica", "Helvetica-Bold", "Courier"] {
        objs.push(
            format!(
                "<< /Type /Font /Subtype /Type1 /BaseFont /{base} /Encoding /WinAnsiEncoding >>"
            )
            .into_bytes(),
        );
    }
    let title_bytes: Vec<u8> = title.chars().map(win_ansi).collect();
    objs.push(format!("<< /Title ({}) /Producer (Bureau) >>", escape(&title_bytes)).into_bytes());
    for (i, c) in pages.iter().enumerate() {
        objs.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_W} {PAGE_H}] /Resources << /Font << /F1 3 0 R /F2 4 0 R /F3 5 0 R >> >> /Contents {} 0 R >>",
                8 + 2 * i
            )
            .into_bytes(),
        );
        let mut stream = format!("<< /Length {} >>\nstream\n", c.len()).into_bytes();
        stream.extend_from_slice(c.as_bytes());
        stream.extend_from_slice(b"endstream");
        objs.push(stream);
    }
    assemble(&objs, 6)
}

/// A PDF file of objects `objs` (object n is `objs[n - 1]`; object 1 the catalog, `info` the
/// document information): header, bodies, cross-reference table and trailer.
pub(crate) fn assemble(objs: &[Vec<u8>], info: usize) -> Vec<u8> {
    let mut out: Vec<u8> = b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::with_capacity(objs.len());
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R /Info {info} 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let hashes = line.bytes().take_while(|b| *b == b'#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        Some((hashes, line[hashes..].trim()))
    } else {
        None
    }
}

fn escape(bytes: &[u8]) -> String {
    // Bytes ≥ 0x80 are written as octal escapes so the content stream stays ASCII.
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'(' | b')' | b'\\' => {
                s.push('\\');
                s.push(b as char);
            }
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\{b:03o}")),
        }
    }
    s
}
