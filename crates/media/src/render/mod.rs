//! Media made deterministically: evidence pictures, charts and scans for tasks and generated
//! workspaces, drawn with `imageproc` and the embedded DejaVu fonts ([`font`]).
//!
//! - [`Picture`]: one of six [`Template`]s (a till receipt, a whiteboard, a label, a sticky
//!   note, a screenshot with an error dialog, a document page) filled with a title and lines,
//!   then photographed ([`Photo`]: rotation, perspective, a lighting gradient, blur, noise —
//!   every random choice from a ChaCha8 stream keyed by the seed and the output's name).
//! - [`Chart`]: a bar or line chart with a title, labelled axes and values.
//! - [`scan_pdf`]: pictures as the pages of an image-only PDF (one JPEG a page, no text).
//! - [`spec`]: the `media.toml` an author writes, with located errors; [`build`] renders all
//!   of it (and, at authoring time, audio and video with espeak-ng and ffmpeg, and mail).
//!
//! The same input and seed give byte-identical output: no clock, no threads, no hash order.

pub mod build;
pub mod chart;
pub mod font;
pub mod photo;
pub mod scan;
pub mod spec;
mod templates;

use serde::{Deserialize, Serialize};

pub use chart::{Chart, ChartKind, render_chart};
pub use photo::{Encoding, Photo, encode};
pub use scan::scan_pdf;

/// Narrowest picture, in pixels.
pub const MIN_WIDTH: u32 = 200;
/// Widest picture, in pixels.
pub const MAX_WIDTH: u32 = 4000;
/// Most pixels a picture's page may have (before a photo's margin).
pub const MAX_PIXELS: u64 = 12_000_000;
/// Most lines of text in one picture.
pub const MAX_LINES: usize = 200;
/// Most characters in one line (or a title).
pub const MAX_LINE_CHARS: usize = 400;
/// Most pages of one scan.
pub const MAX_PAGES: usize = 50;
/// Most frames of one video.
pub const MAX_FRAMES: usize = 120;
/// Most bars or points of one chart.
pub const MAX_POINTS: usize = 60;
/// Most degrees a picture may be turned, either way.
pub const MAX_ROTATE: f32 = 45.0;
/// Largest blur (gaussian sigma, pixels).
pub const MAX_BLUR: f32 = 10.0;

/// What went wrong making media.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// The input asks for something that cannot be drawn; the message says what to change.
    #[error("{0}")]
    Input(String),
    /// Encoding or a built-in resource failed (a bug).
    #[error("internal error while rendering: {0}")]
    Internal(String),
}

/// What a picture shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Template {
    /// A narrow till receipt (32 columns of a monospaced font: pad with spaces to line
    /// amounts up, `"2 x Pasta     25.00"`); lines starting with TOTAL are bold.
    Receipt,
    /// A whiteboard in marker colours, the title boxed, an arrow down to the list.
    Whiteboard,
    /// A shipping or product label with a Code 39 barcode.
    Label,
    /// A yellow sticky note.
    Note,
    /// An application window (the title in its title bar) with an error dialog (the lines).
    Screenshot,
    /// An A4 page of text with a title; `# ` starts a heading, an empty line a paragraph; an
    /// optional signature (a scribble over a line and the printed name).
    Document,
}

impl Template {
    pub const ALL: [Template; 6] = [
        Template::Receipt,
        Template::Whiteboard,
        Template::Label,
        Template::Note,
        Template::Screenshot,
        Template::Document,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Template::Receipt => "receipt",
            Template::Whiteboard => "whiteboard",
            Template::Label => "label",
            Template::Note => "note",
            Template::Screenshot => "screenshot",
            Template::Document => "document",
        }
    }

    pub fn from_name(s: &str) -> Option<Template> {
        Template::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The picture's width when none is given.
    pub fn default_width(self) -> u32 {
        match self {
            Template::Receipt => 576,
            Template::Whiteboard => 1280,
            Template::Label => 900,
            Template::Note => 640,
            Template::Screenshot => 1280,
            Template::Document => 1240,
        }
    }
}

/// A picture to draw: a template, its text, and how it is photographed.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    pub template: Template,
    /// Heading (receipt: the shop; screenshot: the window title); may be empty.
    pub title: String,
    pub lines: Vec<String>,
    /// Document only: the printed name under a signature scribble.
    pub signature: Option<String>,
    /// Label only: the text the barcode encodes (A–Z, 0–9, space and `-.$/+%`); drawn from
    /// the label's text when absent.
    pub barcode: Option<String>,
    /// Width in pixels ([`Template::default_width`] when absent).
    pub width: Option<u32>,
    pub photo: Photo,
}

impl Picture {
    pub fn new(template: Template, title: &str, lines: &[&str]) -> Picture {
        Picture {
            template,
            title: title.to_string(),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            signature: None,
            barcode: None,
            width: None,
            photo: Photo::default(),
        }
    }

    /// Why this picture cannot be drawn, if it cannot: each problem says what to change.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.lines.iter().all(|l| l.trim().is_empty()) && self.title.trim().is_empty() {
            out.push("the picture has no text: give it a `title` or `lines`".to_string());
        }
        if self.lines.len() > MAX_LINES {
            out.push(format!(
                "{} lines is more than the {MAX_LINES} one picture holds; split them over several pictures or pages",
                self.lines.len()
            ));
        }
        for (i, l) in std::iter::once(&self.title).chain(&self.lines).enumerate() {
            let n = l.chars().count();
            if n > MAX_LINE_CHARS {
                out.push(format!(
                    "{} is {n} characters, more than {MAX_LINE_CHARS}; break it into lines",
                    if i == 0 {
                        "the title".to_string()
                    } else {
                        format!("line {i}")
                    }
                ));
            }
            if l.chars().any(|c| c.is_control()) {
                out.push(format!(
                    "{} holds a control character (a tab or newline); use one entry of `lines` per line",
                    if i == 0 {
                        "the title".to_string()
                    } else {
                        format!("line {i}")
                    }
                ));
            }
        }
        if let Some(w) = self.width
            && !(MIN_WIDTH..=MAX_WIDTH).contains(&w)
        {
            out.push(format!(
                "width {w} is outside {MIN_WIDTH}..={MAX_WIDTH} pixels; pick a width in that range"
            ));
        }
        if self.signature.is_some() && self.template != Template::Document {
            out.push(format!(
                "`signature` is drawn on a document page only, not on a {}; remove it or use template = \"document\"",
                self.template.name()
            ));
        }
        if let Some(b) = &self.barcode {
            if self.template != Template::Label {
                out.push(format!(
                    "`barcode` is drawn on a label only, not on a {}; remove it or use template = \"label\"",
                    self.template.name()
                ));
            }
            if let Some(c) = b.chars().find(|c| templates::code39(*c).is_none()) {
                out.push(format!(
                    "the barcode {b:?} holds {c:?}, which Code 39 cannot encode; use A-Z, 0-9, space and - . $ / + %"
                ));
            }
            if b.is_empty() || b.chars().count() > 40 {
                out.push("a barcode holds 1 to 40 characters".to_string());
            }
        }
        out.extend(self.photo.problems());
        out
    }

    /// Draw the picture and photograph it: the same picture, seed and key always give the
    /// same pixels. `key` names the output (its path), so two pictures of one seed differ.
    pub fn render(&self, seed: u64, key: &str) -> Result<image::RgbImage, RenderError> {
        let problems = self.problems();
        if !problems.is_empty() {
            return Err(RenderError::Input(problems.join("; ")));
        }
        let mut rng = Rng::new(seed, key);
        let (page, surround) = templates::draw(self, &mut rng)?;
        Ok(photo::photograph(page, surround, &self.photo, &mut rng))
    }

    /// [`render`](Self::render), then encoded.
    pub fn render_bytes(
        &self,
        seed: u64,
        key: &str,
        encoding: Encoding,
    ) -> Result<Vec<u8>, RenderError> {
        let img = self.render(seed, key)?;
        encode(&image::DynamicImage::ImageRgb8(img), encoding)
    }
}

/// The one source of randomness: ChaCha8 keyed by (seed, key).
pub struct Rng(rand_chacha::ChaCha8Rng);

impl Rng {
    pub fn new(seed: u64, key: &str) -> Rng {
        use rand_chacha::rand_core::SeedableRng;
        let mut h = blake3::Hasher::new();
        h.update(b"bureau-media render\0");
        h.update(&seed.to_le_bytes());
        h.update(key.as_bytes());
        Rng(rand_chacha::ChaCha8Rng::from_seed(*h.finalize().as_bytes()))
    }

    pub fn u64(&mut self) -> u64 {
        use rand_chacha::rand_core::Rng as _;
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
}
