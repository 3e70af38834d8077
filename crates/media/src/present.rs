//! A file shown to an agent as media: the parts and the text that describes them.

use bureau_core::tool::{Media, MediaKind};
use serde_json::{Map, Value, json};

use crate::kind::{Family, identify};
use crate::limits::{MAX_PARTS, MAX_RESULT_BYTES, MAX_SCAN_PAGES_LOOKED_AT};
use crate::{MediaError, media_part};

/// What a tool returns for a media file: fields for its JSON value, media parts, notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Presented {
    /// `format`, `media` (`image`, `audio`, `video`, `scan`), sizes, duration, ...
    pub fields: Map<String, Value>,
    /// One paragraph saying what the media are, for a model that gets text only.
    pub description: String,
    pub media: Vec<Media>,
    /// What was cut or changed, and why.
    pub notes: Vec<String>,
}

impl Presented {
    /// The JSON value of a tool result: `fields`, plus `path`, `size`, `description` and
    /// (when there are any) `notes`.
    pub fn value(&self, path: &str, size: usize) -> Value {
        let mut v = Map::new();
        v.insert("path".into(), json!(path));
        v.insert("size".into(), json!(size));
        for (k, x) in &self.fields {
            v.insert(k.clone(), x.clone());
        }
        v.insert("description".into(), json!(self.description));
        if !self.notes.is_empty() {
            v.insert("notes".into(), json!(self.notes));
        }
        Value::Object(v)
    }
}

/// Keeps a result within [`MAX_PARTS`] and [`MAX_RESULT_BYTES`].
struct Budget {
    parts: Vec<Media>,
    bytes: usize,
    dropped: usize,
}

impl Budget {
    fn new() -> Budget {
        Budget {
            parts: Vec::new(),
            bytes: 0,
            dropped: 0,
        }
    }
    fn push(&mut self, kind: MediaKind, mime: &str, label: String, bytes: &[u8]) -> bool {
        if self.parts.len() >= MAX_PARTS || self.bytes + bytes.len() > MAX_RESULT_BYTES {
            self.dropped += 1;
            return false;
        }
        self.bytes += bytes.len();
        self.parts.push(media_part(kind, mime, label, bytes));
        true
    }
    fn note(&self, notes: &mut Vec<String>, what: &str) {
        if self.dropped > 0 {
            notes.push(format!(
                "{} more {what} not shown (at most {MAX_PARTS} media parts and {MAX_RESULT_BYTES} bytes per result)",
                self.dropped
            ));
        }
    }
}

/// Show `bytes` (named `name`) as media, if they are an image, a sound, a video, or a PDF with
/// pages that have no text (`pdf_pages`: the text of each page, when the caller has read it).
/// `Ok(None)`: not media, read it as text. An error: the file claims to be media and is not,
/// or breaks a bound that cutting cannot meet.
pub fn present(
    name: &str,
    bytes: &[u8],
    pdf_pages: Option<&[String]>,
) -> Result<Option<Presented>, MediaError> {
    let (sniffed, mut notes) = {
        let (t, n) = identify(name, bytes);
        (t, n.into_iter().collect::<Vec<_>>())
    };
    let Some(t) = sniffed else {
        if let Some(p) = crate::MediaType::from_name(name).filter(|p| p.family() != Family::Pdf) {
            return Err(crate::invalid(
                name,
                format!(
                    "the name says {} but the bytes are not {} (nor any media Bureau knows); the file is damaged or mislabelled",
                    p.name(),
                    p.name()
                ),
            ));
        }
        return Ok(None);
    };
    let mut fields = Map::new();
    fields.insert("format".into(), json!(t.name()));
    let mut budget = Budget::new();
    let file = name.rsplit('/').next().unwrap_or(name);
    let description;
    match t.family() {
        Family::Image => {
            let img = crate::picture::for_agent(name, bytes, t)?;
            fields.insert("media".into(), json!("image"));
            fields.insert("width".into(), json!(img.width));
            fields.insert("height".into(), json!(img.height));
            description = format!(
                "A {} image, {}×{} pixels, shown as an image.",
                t.name().to_uppercase(),
                img.width,
                img.height
            );
            budget.push(
                MediaKind::Image,
                &img.mime_type,
                format!("{file}, {}×{}", img.width, img.height),
                &img.bytes,
            );
            notes.extend(img.notes);
        }
        Family::Audio => {
            let a = crate::audio::for_agent(name, bytes, t)?;
            fields.insert("media".into(), json!("audio"));
            fields.insert("duration_seconds".into(), json!(a.info.duration_seconds));
            if let Some(r) = a.info.sample_rate {
                fields.insert("sample_rate".into(), json!(r));
            }
            if let Some(c) = a.info.channels {
                fields.insert("channels".into(), json!(c));
            }
            let length = a
                .info
                .duration_seconds
                .map(|d| format!(", {d:.1} s long"))
                .unwrap_or_default();
            description = match &a.bytes {
                Some(_) => format!(
                    "A {} recording{length}, given as audio (a model that cannot hear gets only this line).",
                    t.name().to_uppercase()
                ),
                None => format!(
                    "A {} recording{length}; it is not given as audio (see the notes).",
                    t.name().to_uppercase()
                ),
            };
            if let Some(b) = &a.bytes {
                budget.push(MediaKind::Audio, &a.mime_type, format!("{file}{length}"), b);
            }
            notes.extend(a.notes);
        }
        Family::Video => {
            let v = crate::video::for_agent(name, bytes, t)?;
            fields.insert("media".into(), json!("video"));
            if let Some(p) = &v.probe {
                fields.insert("duration_seconds".into(), json!(p.duration_seconds));
                fields.insert("width".into(), json!(p.width));
                fields.insert("height".into(), json!(p.height));
                fields.insert("video_codec".into(), json!(p.video_codec));
                fields.insert("audio_codec".into(), json!(p.audio_codec));
            }
            let mut times = Vec::new();
            for f in &v.frames {
                let at = crate::video::clock(f.at_seconds);
                if budget.push(
                    MediaKind::Image,
                    &f.image.mime_type,
                    format!("frame at {at} of {file}"),
                    &f.image.bytes,
                ) {
                    times.push(at);
                }
            }
            fields.insert("frames_at".into(), json!(times));
            description = format!(
                "A {} video{}; {} key frames shown as images ({}).",
                t.name().to_uppercase(),
                v.probe
                    .as_ref()
                    .and_then(|p| p.duration_seconds)
                    .map(|d| format!(", {d:.1} s long"))
                    .unwrap_or_default(),
                times.len(),
                times.join(", ")
            );
            notes.extend(v.notes);
            budget.note(&mut notes, "frames");
        }
        Family::Pdf => {
            let Some(texts) = pdf_pages else {
                return Ok(None);
            };
            let blank: Vec<usize> = texts
                .iter()
                .take(MAX_SCAN_PAGES_LOOKED_AT)
                .enumerate()
                .filter(|(_, t)| t.chars().filter(|c| !c.is_whitespace()).count() < 8)
                .map(|(i, _)| i + 1)
                .collect();
            if blank.is_empty() {
                return Ok(None);
            }
            let shown: Vec<usize> = blank.iter().copied().take(MAX_PARTS).collect();
            let pages = crate::scan::page_images(name, bytes, &shown)?;
            let mut ok = Vec::new();
            for p in &pages {
                match &p.image {
                    Ok(img) => {
                        if budget.push(
                            MediaKind::Image,
                            &img.mime_type,
                            format!("page {} of {} of {file}", p.page, texts.len()),
                            &img.bytes,
                        ) {
                            ok.push(p.page);
                        }
                    }
                    Err(why) => notes.push(format!("page {}: {why}", p.page)),
                }
            }
            fields.insert("media".into(), json!("scan"));
            fields.insert("pages".into(), json!(texts.len()));
            fields.insert("image_pages".into(), json!(ok));
            if blank.len() > shown.len() {
                notes.push(format!(
                    "{} pages have no text; the first {} are shown (at most {MAX_PARTS} per result)",
                    blank.len(),
                    shown.len()
                ));
            }
            if texts.len() > MAX_SCAN_PAGES_LOOKED_AT {
                notes.push(format!("only the first {MAX_SCAN_PAGES_LOOKED_AT} pages were looked at for missing text"));
            }
            budget.note(&mut notes, "pages");
            description = format!(
                "A PDF of {} pages; {} of them have no text layer (a scan) and are shown as images: pages {}.",
                texts.len(),
                blank.len(),
                ok.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(Some(Presented {
        fields,
        description,
        media: budget.parts,
        notes,
    }))
}
