//! .pptx: slides in presentation order, each with its title, text and speaker notes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::archive::{Archive, Xml, attr, walk_xml};
use super::{MAX_TEXT_CHARS, invalid};
use crate::FormatError;

/// One slide.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slide {
    /// 1-based position in the presentation.
    pub number: usize,
    /// The title placeholder's text ("" if the slide has none).
    pub title: String,
    /// The other text of the slide, one line per paragraph (tables: one line per cell).
    pub text: String,
    /// The speaker notes ("" if none).
    pub notes: String,
}

/// A presentation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pptx {
    /// The slides in order.
    pub slides: Vec<Slide>,
}

impl Pptx {
    /// Text for an agent: `## Slide 3: Title`, the slide text, then `Notes: ...`.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for s in &self.slides {
            if !out.is_empty() {
                out.push('\n');
            }
            if s.title.is_empty() {
                out.push_str(&format!("## Slide {}\n", s.number));
            } else {
                out.push_str(&format!(
                    "## Slide {}: {}\n",
                    s.number,
                    s.title.replace('\n', " ")
                ));
            }
            if !s.text.is_empty() {
                out.push_str(&s.text);
                out.push('\n');
            }
            if !s.notes.is_empty() {
                out.push_str("Notes: ");
                out.push_str(&s.notes);
                out.push('\n');
            }
        }
        out
    }
}

/// Read a .pptx file.
pub fn read_pptx(file: &str, bytes: &[u8]) -> Result<Pptx, FormatError> {
    crate::isolated::read(file, bytes, |f, b| read_pptx_in_process(f, b))
}

/// [`read_pptx`] in the calling process, without crash isolation.
pub(crate) fn read_pptx_in_process(file: &str, bytes: &[u8]) -> Result<Pptx, FormatError> {
    let mut zip = Archive::open(file, bytes, ".pptx")?;
    let order = slide_order(&mut zip, file)?;
    let mut slides = Vec::new();
    let mut total = 0usize;
    for (i, part) in order.iter().enumerate() {
        let xml = zip.require(part, ".pptx")?;
        let (title, text) = shapes_text(file, part, &xml, false)?;
        let notes = match notes_part(&mut zip, file, part)? {
            Some(n) => match zip.read(&n)? {
                Some(x) => shapes_text(file, &n, &x, true)?.1,
                None => String::new(),
            },
            None => String::new(),
        };
        total += title.len() + text.len() + notes.len();
        if total > MAX_TEXT_CHARS {
            return Err(invalid(
                file,
                format!(
                    "the presentation holds more than {MAX_TEXT_CHARS} characters of text; it is too large to read"
                ),
            ));
        }
        slides.push(Slide {
            number: i + 1,
            title,
            text,
            notes,
        });
    }
    Ok(Pptx { slides })
}

/// Relationship id → target, from a .rels part.
fn rels(
    file: &str,
    part: &str,
    xml: &[u8],
) -> Result<BTreeMap<String, (String, String)>, FormatError> {
    let mut map = BTreeMap::new();
    walk_xml(file, part, xml, |ev| {
        if let Xml::Empty { name, attrs } | Xml::Start { name, attrs } = ev
            && name == b"Relationship"
            && let (Some(id), Some(target)) = (attr(&attrs, b"Id"), attr(&attrs, b"Target"))
        {
            let ty = attr(&attrs, b"Type").unwrap_or_default().to_string();
            map.insert(id.to_string(), (target.to_string(), ty));
        }
    })?;
    Ok(map)
}

/// Resolve a relationship target relative to the folder of `base` ("ppt/slides/slide1.xml").
fn resolve(base: &str, target: &str) -> String {
    if let Some(abs) = target.strip_prefix('/') {
        return abs.to_string();
    }
    let mut parts: Vec<&str> = base.split('/').collect();
    parts.pop();
    for seg in target.split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

fn slide_order(zip: &mut Archive<'_>, file: &str) -> Result<Vec<String>, FormatError> {
    let Some(pres) = zip.read("ppt/presentation.xml")? else {
        return Err(invalid(
            file,
            "not a PowerPoint presentation: the archive has no ppt/presentation.xml; if it is a document or spreadsheet, give it the .docx or .xlsx extension".into(),
        ));
    };
    let mut ids = Vec::new();
    walk_xml(file, "ppt/presentation.xml", &pres, |ev| {
        if let Xml::Empty { name, attrs } | Xml::Start { name, attrs } = ev
            && name == b"sldId"
            // Both `id` (a number) and `r:id` have the local name "id"; the relationship id
            // is the one that does not start with a digit.
            && let Some(rid) = attrs
                .iter()
                .filter(|(k, _)| k == b"id")
                .map(|(_, v)| v.as_str())
                .find(|v| !v.starts_with(|c: char| c.is_ascii_digit()))
        {
            ids.push(rid.to_string());
        }
    })?;
    let rel_map = match zip.read("ppt/_rels/presentation.xml.rels")? {
        Some(x) => rels(file, "ppt/_rels/presentation.xml.rels", &x)?,
        None => BTreeMap::new(),
    };
    let mut order: Vec<String> = ids
        .iter()
        .filter_map(|id| rel_map.get(id))
        .map(|(t, _)| resolve("ppt/presentation.xml", t))
        .filter(|p| zip.has(p))
        .collect();
    if order.is_empty() {
        // No usable order: the slide parts by number.
        let mut found: Vec<(u64, String)> = zip
            .names()
            .into_iter()
            .filter_map(|n| {
                let num = n
                    .strip_prefix("ppt/slides/slide")?
                    .strip_suffix(".xml")?
                    .parse()
                    .ok()?;
                Some((num, n))
            })
            .collect();
        found.sort();
        order = found.into_iter().map(|(_, n)| n).collect();
    }
    Ok(order)
}

fn notes_part(
    zip: &mut Archive<'_>,
    file: &str,
    slide: &str,
) -> Result<Option<String>, FormatError> {
    let (dir, name) = slide.rsplit_once('/').unwrap_or(("", slide));
    let rels_part = format!("{dir}/_rels/{name}.rels");
    let Some(x) = zip.read(&rels_part)? else {
        return Ok(None);
    };
    let map = rels(file, &rels_part, &x)?;
    Ok(map
        .values()
        .find(|(_, ty)| ty.ends_with("/notesSlide"))
        .map(|(t, _)| resolve(slide, t)))
}

/// (title, other text) of the shapes of a slide; for notes, only the body placeholder's text.
fn shapes_text(
    file: &str,
    part: &str,
    xml: &[u8],
    notes: bool,
) -> Result<(String, String), FormatError> {
    let mut title = Vec::new();
    let mut text = Vec::new();
    let mut shape_kind: Option<String> = None; // placeholder type of the current shape
    let mut para: Option<String> = None;
    let mut in_t = false;
    walk_xml(file, part, xml, |ev| match ev {
        Xml::Start { name, .. } => match name.as_slice() {
            b"sp" | b"graphicFrame" => shape_kind = None,
            b"p" => para = Some(String::new()),
            b"t" => in_t = true,
            _ => {}
        },
        Xml::Empty { name, attrs } => match name.as_slice() {
            b"ph" => shape_kind = Some(attr(&attrs, b"type").unwrap_or("body").to_string()),
            b"br" => {
                if let Some(p) = para.as_mut() {
                    p.push('\n');
                }
            }
            _ => {}
        },
        Xml::Text(t) => {
            if in_t && let Some(p) = para.as_mut() {
                p.push_str(&t);
            }
        }
        Xml::End { name } => match name.as_slice() {
            b"t" => in_t = false,
            b"p" => {
                if let Some(p) = para.take()
                    && !p.trim().is_empty()
                {
                    let kind = shape_kind.as_deref();
                    if notes {
                        if matches!(kind, Some("body")) {
                            text.push(p);
                        }
                    } else if matches!(kind, Some("title" | "ctrTitle")) {
                        title.push(p);
                    } else if !matches!(kind, Some("sldNum" | "dt" | "ftr")) {
                        text.push(p);
                    }
                }
            }
            b"sp" | b"graphicFrame" => shape_kind = None,
            _ => {}
        },
    })?;
    Ok((title.join(" "), text.join("\n")))
}

/// Write a minimal .pptx (title + body text per slide, optional notes). Used to build test
/// fixtures and benchmark inputs; the result opens in PowerPoint-compatible readers.
pub fn write_pptx(slides: &[(String, String, String)]) -> Result<Vec<u8>, FormatError> {
    use std::io::Write;
    use zip::write::SimpleFileOptions;
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let err = |e: &dyn std::fmt::Display| {
        invalid("presentation.pptx", format!("cannot write the .pptx: {e}"))
    };
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opt = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    let mut files: Vec<(String, String)> = Vec::new();
    let mut ct = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>"#,
    );
    let mut pres_rels = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    );
    let mut ids = String::new();
    let p_ns = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
    let shape = |id: usize, ph: &str, text: &str| {
        let paras: String = text
            .split('\n')
            .map(|l| format!("<a:p><a:r><a:t>{}</a:t></a:r></a:p>", esc(l)))
            .collect();
        format!(
            r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="Shape {id}"/><p:cNvSpPr/><p:nvPr><p:ph type="{ph}"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>{paras}</p:txBody></p:sp>"#
        )
    };
    for (i, (title, body, notes)) in slides.iter().enumerate() {
        let n = i + 1;
        ct.push_str(&format!(r#"<Override PartName="/ppt/slides/slide{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>"#));
        pres_rels.push_str(&format!(r#"<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide{n}.xml"/>"#));
        ids.push_str(&format!(r#"<p:sldId id="{}" r:id="rId{n}"/>"#, 255 + n));
        files.push((
            format!("ppt/slides/slide{n}.xml"),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:sld {p_ns}><p:cSld><p:spTree>{}{}</p:spTree></p:cSld></p:sld>"#,
                shape(2, "title", title),
                shape(3, "body", body)
            ),
        ));
        if !notes.is_empty() {
            ct.push_str(&format!(r#"<Override PartName="/ppt/notesSlides/notesSlide{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml"/>"#));
            files.push((
                format!("ppt/slides/_rels/slide{n}.xml.rels"),
                format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide" Target="../notesSlides/notesSlide{n}.xml"/></Relationships>"#),
            ));
            files.push((
                format!("ppt/notesSlides/notesSlide{n}.xml"),
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:notes {p_ns}><p:cSld><p:spTree>{}{}</p:spTree></p:cSld></p:notes>"#,
                    shape(2, "sldImg", ""),
                    shape(3, "body", notes)
                ),
            ));
        }
    }
    ct.push_str("</Types>");
    pres_rels.push_str("</Relationships>");
    files.insert(0, ("[Content_Types].xml".into(), ct));
    files.push((
        "_rels/.rels".into(),
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="ppt/presentation.xml"/></Relationships>"#.into(),
    ));
    files.push((
        "ppt/presentation.xml".into(),
        format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><p:presentation {p_ns}><p:sldIdLst>{ids}</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>"#),
    ));
    files.push(("ppt/_rels/presentation.xml.rels".into(), pres_rels));
    for (name, body) in files {
        z.start_file(name, opt).map_err(|e| err(&e))?;
        z.write_all(body.as_bytes()).map_err(|e| err(&e))?;
    }
    let cursor = z.finish().map_err(|e| err(&e))?;
    Ok(cursor.into_inner())
}
