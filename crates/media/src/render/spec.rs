//! `media.toml`: what a task author asks to be made — pictures, charts, scans, voicemails,
//! clips and the mails that carry them — read with located errors
//! (`media.toml:12:1: what is wrong — what to do`), every problem at once where it can be.
//! Paths are relative to the spec's directory and may not leave it. See docs/media.md.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};

use bureau_core::{Location, TaskError, TaskErrors};
use serde::Deserialize;
use toml::Spanned;

use super::photo::{Encoding, Photo};
use super::{
    Chart, ChartKind, MAX_FRAMES, MAX_PAGES, MAX_POINTS, MAX_WIDTH, MIN_WIDTH, Picture, Template,
};

/// Most characters of a voicemail's text.
pub const MAX_SPEECH_CHARS: usize = 5_000;
/// Longest video, in seconds.
pub const MAX_VIDEO_SECONDS: f64 = 600.0;
/// Most outputs of one spec.
pub const MAX_OUTPUTS: usize = 500;

/// A picture file to make.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageOut {
    /// Relative to the spec's directory, `/`-separated.
    pub out: String,
    pub picture: Picture,
    pub encoding: Encoding,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChartOut {
    pub out: String,
    pub chart: Chart,
    pub encoding: Encoding,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ScanOut {
    pub out: String,
    pub pages: Vec<Picture>,
    pub jpeg_quality: u8,
}

/// A voicemail spoken by espeak-ng (authoring time).
#[derive(Debug, Clone, PartialEq)]
pub struct AudioOut {
    pub out: String,
    pub text: String,
    /// An espeak-ng voice (`en-us`, `en-gb`, `de`, `nl`, ...).
    pub voice: String,
    /// Words per minute.
    pub speed: u32,
}

/// A clip of pictures shown one after another, encoded by ffmpeg (authoring time).
#[derive(Debug, Clone, PartialEq)]
pub struct VideoOut {
    pub out: String,
    pub seconds_per_frame: f64,
    pub frames: Vec<Picture>,
    pub width: u32,
    pub height: u32,
}

/// An `.eml` mail with attachments.
#[derive(Debug, Clone, PartialEq)]
pub struct MailOut {
    pub out: String,
    pub from: bureau_formats::mail::Address,
    pub to: Vec<bureau_formats::mail::Address>,
    pub cc: Vec<bureau_formats::mail::Address>,
    pub subject: String,
    pub date: chrono::DateTime<chrono::FixedOffset>,
    pub body: String,
    /// Paths relative to the spec's directory: other outputs of the spec, or files there.
    pub attachments: Vec<String>,
    /// Without angle brackets; drawn from the seed and `out` when not given.
    pub message_id: Option<String>,
}

/// A read and checked `media.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaSpec {
    /// The spec file.
    pub path: PathBuf,
    /// Its directory: every `out` is relative to it.
    pub dir: PathBuf,
    pub seed: u64,
    pub images: Vec<ImageOut>,
    pub charts: Vec<ChartOut>,
    pub scans: Vec<ScanOut>,
    pub audio: Vec<AudioOut>,
    pub video: Vec<VideoOut>,
    pub mail: Vec<MailOut>,
}

// ---------------------------------------------------------------- raw TOML

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    seed: Option<Spanned<i64>>,
    #[serde(default)]
    image: Vec<Spanned<RawPicture>>,
    #[serde(default)]
    chart: Vec<Spanned<RawChart>>,
    #[serde(default)]
    scan: Vec<Spanned<RawScan>>,
    #[serde(default)]
    audio: Vec<Spanned<RawAudio>>,
    #[serde(default)]
    video: Vec<Spanned<RawVideo>>,
    #[serde(default)]
    mail: Vec<Spanned<RawMail>>,
}

/// An `[[image]]`, a `[[scan.page]]` or a `[[video.frame]]` (the last two without `out`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPicture {
    out: Option<Spanned<String>>,
    template: Spanned<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    lines: Option<Spanned<Vec<String>>>,
    signature: Option<Spanned<String>>,
    barcode: Option<Spanned<String>>,
    width: Option<Spanned<i64>>,
    rotate: Option<Spanned<f64>>,
    blur: Option<Spanned<f64>>,
    noise: Option<Spanned<f64>>,
    perspective: Option<Spanned<f64>>,
    lighting: Option<Spanned<f64>>,
    jpeg_quality: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChart {
    out: Spanned<String>,
    kind: Spanned<String>,
    #[serde(default)]
    title: String,
    labels: Spanned<Vec<String>>,
    values: Spanned<Vec<f64>>,
    #[serde(default)]
    x_label: String,
    #[serde(default)]
    y_label: String,
    width: Option<Spanned<i64>>,
    height: Option<Spanned<i64>>,
    jpeg_quality: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScan {
    out: Spanned<String>,
    #[serde(default)]
    page: Vec<Spanned<RawPicture>>,
    jpeg_quality: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAudio {
    out: Spanned<String>,
    text: Spanned<String>,
    voice: Option<Spanned<String>>,
    speed: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVideo {
    out: Spanned<String>,
    seconds_per_frame: Option<Spanned<f64>>,
    #[serde(default)]
    frame: Vec<Spanned<RawPicture>>,
    width: Option<Spanned<i64>>,
    height: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMail {
    out: Spanned<String>,
    from: Spanned<String>,
    to: Spanned<OneOrMany>,
    #[serde(default)]
    cc: Option<Spanned<OneOrMany>>,
    #[serde(default)]
    subject: String,
    date: Spanned<String>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    attachments: Vec<Spanned<String>>,
    message_id: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn list(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

// ---------------------------------------------------------------- loading

struct Loader {
    path: PathBuf,
    source: String,
    errors: Vec<TaskError>,
    outs: BTreeSet<String>,
}

impl Loader {
    fn err(&mut self, span: Range<usize>, what: impl Into<String>, hint: impl Into<String>) {
        let loc = Location::from_offset(&self.path, &self.source, span.start);
        self.errors.push(TaskError::new(loc, what, hint));
    }

    /// A checked output path: relative, inside the spec's directory, with one of `exts`, not
    /// used twice.
    fn out(&mut self, raw: &Spanned<String>, kind: &str, exts: &[&str]) -> Option<String> {
        let span = raw.span();
        let p = raw.get_ref().trim();
        let clean = match relative_path(p) {
            Ok(c) => c,
            Err(why) => {
                self.err(span, format!("`out = {p:?}`: {why}"), "give a path relative to the directory of media.toml, inside it (like \"world/files/receipt.jpg\")");
                return None;
            }
        };
        let lower = clean.to_ascii_lowercase();
        if !exts.iter().any(|e| lower.ends_with(e)) {
            self.err(
                span.clone(),
                format!(
                    "`out = {p:?}`: a {kind} is written as {}",
                    exts.join(" or ")
                ),
                format!("end the name with {}", exts.join(" or ")),
            );
        }
        if !self.outs.insert(clean.clone()) {
            self.err(
                span,
                format!("`{clean}` is written twice"),
                "give each output its own `out`",
            );
            return None;
        }
        Some(clean)
    }

    fn int(
        &mut self,
        v: &Option<Spanned<i64>>,
        name: &str,
        lo: i64,
        hi: i64,
        default: i64,
        hint: &str,
    ) -> i64 {
        match v {
            None => default,
            Some(s) if (lo..=hi).contains(s.get_ref()) => *s.get_ref(),
            Some(s) => {
                self.err(
                    s.span(),
                    format!("`{name} = {}` is outside {lo}..={hi}", s.get_ref()),
                    hint.to_string(),
                );
                default
            }
        }
    }

    fn picture(
        &mut self,
        raw: &Spanned<RawPicture>,
        within: Option<&str>,
        defaults: Photo,
    ) -> Option<Picture> {
        let r = raw.get_ref();
        if let (Some(w), Some(out)) = (within, &r.out) {
            self.err(
                out.span(),
                format!("a {w} has no `out` of its own"),
                format!("remove `out`; the {w} is part of the file its table names"),
            );
        }
        let template = match Template::from_name(r.template.get_ref()) {
            Some(t) => t,
            None => {
                let names: Vec<&str> = Template::ALL.iter().map(|t| t.name()).collect();
                let hint = match bureau_core::error::did_you_mean(
                    r.template.get_ref(),
                    names.iter().copied(),
                ) {
                    Some(m) => format!("did you mean \"{m}\"? (one of {})", names.join(", ")),
                    None => format!("use one of {}", names.join(", ")),
                };
                self.err(
                    r.template.span(),
                    format!("unknown template {:?}", r.template.get_ref()),
                    hint,
                );
                return None;
            }
        };
        let lines = r
            .lines
            .as_ref()
            .map(|l| l.get_ref().clone())
            .unwrap_or_default();
        let f =
            |v: &Option<Spanned<f64>>, d: f32| v.as_ref().map(|s| *s.get_ref() as f32).unwrap_or(d);
        let width = self.int(
            &r.width,
            "width",
            i64::from(MIN_WIDTH),
            i64::from(MAX_WIDTH),
            0,
            "pick a width in pixels within the range",
        );
        let pic = Picture {
            template,
            title: r.title.clone(),
            lines,
            signature: r.signature.as_ref().map(|s| s.get_ref().clone()),
            barcode: r.barcode.as_ref().map(|s| s.get_ref().clone()),
            width: (width > 0).then_some(width as u32),
            photo: Photo {
                rotate: f(&r.rotate, defaults.rotate),
                blur: f(&r.blur, defaults.blur),
                noise: f(&r.noise, defaults.noise),
                perspective: f(&r.perspective, defaults.perspective),
                lighting: f(&r.lighting, defaults.lighting),
            },
        };
        let problems = pic.problems();
        for p in &problems {
            // Point at the key the problem names when there is one.
            let span = [
                ("rotate", &r.rotate),
                ("blur", &r.blur),
                ("noise", &r.noise),
                ("perspective", &r.perspective),
                ("lighting", &r.lighting),
            ]
            .into_iter()
            .find(|(k, v)| p.starts_with(&format!("{k} =")) && v.is_some())
            .and_then(|(_, v)| v.as_ref().map(|s| s.span()))
            .or_else(|| {
                (p.contains("signature"))
                    .then(|| r.signature.as_ref().map(|s| s.span()))
                    .flatten()
            })
            .or_else(|| {
                (p.contains("barcode"))
                    .then(|| r.barcode.as_ref().map(|s| s.span()))
                    .flatten()
            })
            .or_else(|| {
                (p.contains("line"))
                    .then(|| r.lines.as_ref().map(|s| s.span()))
                    .flatten()
            })
            .unwrap_or_else(|| r.template.span());
            self.err(
                span,
                p.clone(),
                "see docs/media.md for what each template takes",
            );
        }
        problems.is_empty().then_some(pic)
    }
}

/// A path relative to a directory and inside it, `/`-separated, without `.` parts.
pub fn relative_path(p: &str) -> Result<String, String> {
    if p.is_empty() {
        return Err("the path is empty".into());
    }
    if p.contains('\\') || p.chars().any(char::is_control) {
        return Err("the path holds a backslash or a control character".into());
    }
    let path = Path::new(p);
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err("`..` would leave the spec's directory".into()),
            Component::RootDir | Component::Prefix(_) => {
                return Err("an absolute path would leave the spec's directory".into());
            }
        }
    }
    if parts.is_empty() {
        return Err("the path names no file".into());
    }
    Ok(parts.join("/"))
}

impl MediaSpec {
    /// Read and check `path` (a `media.toml`); every problem found is returned at once.
    pub fn load(path: &Path) -> Result<MediaSpec, TaskErrors> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            TaskErrors::from(TaskError::new(
                Location::whole(path),
                format!("cannot read the media spec: {e}"),
                "give the path of a media.toml",
            ))
        })?;
        MediaSpec::parse(path, &source)
    }

    /// Check `source`, the text of the spec at `path` (whose directory the outputs are in).
    pub fn parse(path: &Path, source: &str) -> Result<MediaSpec, TaskErrors> {
        let mut l = Loader {
            path: path.to_path_buf(),
            source: source.to_string(),
            errors: Vec::new(),
            outs: BTreeSet::new(),
        };
        let raw: RawSpec = match toml::from_str(source) {
            Ok(r) => r,
            Err(e) => {
                let msg = e.message().trim().to_string();
                let hint = if msg.contains("unknown field") {
                    "remove the key or fix its spelling (docs/media.md lists each table's keys)"
                } else if msg.contains("missing field") {
                    "add the key (docs/media.md)"
                } else if msg.contains("invalid type") {
                    "give the value the type docs/media.md lists for this key"
                } else {
                    "fix the TOML here"
                };
                l.err(e.span().unwrap_or(0..0), msg, hint);
                return Err(TaskErrors(l.errors));
            }
        };
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let seed = match &raw.seed {
            None => 1,
            Some(s) if *s.get_ref() >= 0 => *s.get_ref() as u64,
            Some(s) => {
                l.err(s.span(), "the seed is negative", "give a seed of 0 or more");
                1
            }
        };
        let total = raw.image.len()
            + raw.chart.len()
            + raw.scan.len()
            + raw.audio.len()
            + raw.video.len()
            + raw.mail.len();
        if total == 0 {
            l.err(0..0, "the spec makes nothing", "add an [[image]], [[chart]], [[scan]], [[audio]], [[video]] or [[mail]] table (docs/media.md)");
        }
        if total > MAX_OUTPUTS {
            l.err(
                0..0,
                format!("the spec makes {total} files, more than {MAX_OUTPUTS}"),
                "split it into several specs",
            );
        }
        let mut spec = MediaSpec {
            path: path.to_path_buf(),
            dir: dir.clone(),
            seed,
            images: Vec::new(),
            charts: Vec::new(),
            scans: Vec::new(),
            audio: Vec::new(),
            video: Vec::new(),
            mail: Vec::new(),
        };
        for raw in &raw.image {
            let r = raw.get_ref();
            let Some(out_raw) = &r.out else {
                l.err(
                    raw.span(),
                    "an [[image]] without `out`",
                    "add `out = \"world/files/<name>.jpg\"`",
                );
                continue;
            };
            let out = l.out(out_raw, "picture", &[".jpg", ".jpeg", ".png"]);
            let q = l.int(
                &r.jpeg_quality,
                "jpeg_quality",
                1,
                100,
                85,
                "80 to 90 looks like a phone photo",
            );
            let pic = l.picture(raw, None, Photo::default());
            if let (Some(out), Some(picture)) = (out, pic) {
                let encoding = Encoding::for_path(&out, q as u8).unwrap_or(Encoding::Png);
                spec.images.push(ImageOut {
                    out,
                    picture,
                    encoding,
                });
            }
        }
        for raw in &raw.chart {
            let r = raw.get_ref();
            let out = l.out(&r.out, "chart", &[".png", ".jpg", ".jpeg"]);
            let kind = match r.kind.get_ref().as_str() {
                "bar" => Some(ChartKind::Bar),
                "line" => Some(ChartKind::Line),
                other => {
                    l.err(
                        r.kind.span(),
                        format!("unknown chart kind {other:?}"),
                        "use \"bar\" or \"line\"",
                    );
                    None
                }
            };
            let width = l.int(
                &r.width,
                "width",
                i64::from(MIN_WIDTH),
                i64::from(MAX_WIDTH),
                1000,
                "pick a width in pixels within the range",
            );
            let height = l.int(
                &r.height,
                "height",
                i64::from(MIN_WIDTH),
                i64::from(MAX_WIDTH),
                640,
                "pick a height in pixels within the range",
            );
            let q = l.int(
                &r.jpeg_quality,
                "jpeg_quality",
                1,
                100,
                90,
                "charts are sharper as PNG",
            );
            if r.values.get_ref().len() > MAX_POINTS {
                l.err(
                    r.values.span(),
                    format!(
                        "{} values, more than the {MAX_POINTS} a chart shows",
                        r.values.get_ref().len()
                    ),
                    "aggregate the values",
                );
            }
            if r.labels.get_ref().len() != r.values.get_ref().len() {
                l.err(
                    r.labels.span(),
                    format!(
                        "{} labels for {} values",
                        r.labels.get_ref().len(),
                        r.values.get_ref().len()
                    ),
                    "give one label a value",
                );
            }
            let Some(kind) = kind else { continue };
            let chart = Chart {
                kind,
                title: r.title.clone(),
                labels: r.labels.get_ref().clone(),
                values: r.values.get_ref().clone(),
                x_label: r.x_label.clone(),
                y_label: r.y_label.clone(),
                width: width as u32,
                height: height as u32,
            };
            let problems = chart.problems();
            for p in &problems {
                if !p.contains("labels for") && !p.contains("legibly") {
                    l.err(r.values.span(), p.clone(), "see docs/media.md (charts)");
                }
            }
            if let (Some(out), true) = (out, problems.is_empty()) {
                let encoding = Encoding::for_path(&out, q as u8).unwrap_or(Encoding::Png);
                spec.charts.push(ChartOut {
                    out,
                    chart,
                    encoding,
                });
            }
        }
        // Scanned pages: a light scanner's look unless the page says otherwise.
        let scanner = Photo {
            blur: 0.5,
            noise: 0.03,
            ..Photo::default()
        };
        for raw in &raw.scan {
            let r = raw.get_ref();
            let out = l.out(&r.out, "scan", &[".pdf"]);
            let q = l.int(
                &r.jpeg_quality,
                "jpeg_quality",
                1,
                100,
                75,
                "70 to 85 is a scanner's",
            );
            if r.page.is_empty() || r.page.len() > MAX_PAGES {
                l.err(
                    raw.span(),
                    format!("the scan has {} pages", r.page.len()),
                    format!("give it 1 to {MAX_PAGES} [[scan.page]] tables"),
                );
            }
            let pages: Vec<Option<Picture>> = r
                .page
                .iter()
                .map(|p| l.picture(p, Some("scan page"), scanner))
                .collect();
            if let (Some(out), true) = (
                out,
                pages.iter().all(Option::is_some) && !pages.is_empty() && pages.len() <= MAX_PAGES,
            ) {
                spec.scans.push(ScanOut {
                    out,
                    pages: pages.into_iter().flatten().collect(),
                    jpeg_quality: q as u8,
                });
            }
        }
        for raw in &raw.audio {
            let r = raw.get_ref();
            let out = l.out(&r.out, "voicemail", &[".wav", ".mp3", ".ogg"]);
            let text = r.text.get_ref().trim().to_string();
            if text.is_empty() || text.chars().count() > MAX_SPEECH_CHARS {
                l.err(
                    r.text.span(),
                    format!("the text to speak has {} characters", text.chars().count()),
                    format!("give 1 to {MAX_SPEECH_CHARS} characters"),
                );
            }
            let voice = r
                .voice
                .as_ref()
                .map(|v| v.get_ref().clone())
                .unwrap_or_else(|| "en-us".into());
            if voice.is_empty()
                || !voice
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+'))
            {
                let span = r
                    .voice
                    .as_ref()
                    .map(|v| v.span())
                    .unwrap_or_else(|| raw.span());
                l.err(
                    span,
                    format!("{voice:?} is no espeak-ng voice name"),
                    "use a name `espeak-ng --voices` lists, like en-us, en-gb, de or nl",
                );
            }
            let speed = l.int(
                &r.speed,
                "speed",
                80,
                450,
                160,
                "words per minute; 140 to 180 is conversational",
            );
            if let Some(out) = out {
                spec.audio.push(AudioOut {
                    out,
                    text,
                    voice,
                    speed: speed as u32,
                });
            }
        }
        for raw in &raw.video {
            let r = raw.get_ref();
            let out = l.out(&r.out, "video", &[".mp4"]);
            let spf = match &r.seconds_per_frame {
                None => 2.0,
                Some(s) if s.get_ref().is_finite() && (0.2..=60.0).contains(s.get_ref()) => {
                    *s.get_ref()
                }
                Some(s) => {
                    l.err(
                        s.span(),
                        format!("`seconds_per_frame = {}` is outside 0.2..=60", s.get_ref()),
                        "show each frame for a few seconds",
                    );
                    2.0
                }
            };
            if r.frame.is_empty() || r.frame.len() > MAX_FRAMES {
                l.err(
                    raw.span(),
                    format!("the video has {} frames", r.frame.len()),
                    format!("give it 1 to {MAX_FRAMES} [[video.frame]] tables"),
                );
            }
            if spf * r.frame.len() as f64 > MAX_VIDEO_SECONDS {
                l.err(
                    raw.span(),
                    format!("the video would last {:.0} s", spf * r.frame.len() as f64),
                    format!(
                        "keep it under {MAX_VIDEO_SECONDS:.0} s: fewer frames or fewer seconds each"
                    ),
                );
            }
            let width = l.int(
                &r.width,
                "width",
                320,
                1920,
                1280,
                "a clip is 320 to 1920 pixels wide",
            );
            let height = l.int(
                &r.height,
                "height",
                240,
                1080,
                720,
                "a clip is 240 to 1080 pixels high",
            );
            let frames: Vec<Option<Picture>> = r
                .frame
                .iter()
                .map(|p| l.picture(p, Some("video frame"), Photo::default()))
                .collect();
            if let (Some(out), true) = (
                out,
                frames.iter().all(Option::is_some)
                    && !frames.is_empty()
                    && frames.len() <= MAX_FRAMES,
            ) {
                spec.video.push(VideoOut {
                    out,
                    seconds_per_frame: spf,
                    frames: frames.into_iter().flatten().collect(),
                    width: (width as u32) & !1,
                    height: (height as u32) & !1,
                });
            }
        }
        let made: BTreeSet<String> = l.outs.clone();
        for raw in &raw.mail {
            let r = raw.get_ref();
            let out = l.out(&r.out, "mail", &[".eml"]);
            let addr = |l: &mut Loader, s: &str, span: Range<usize>| {
                match bureau_formats::mail::Address::parse(s) {
                    Ok(a) => Some(a),
                    Err(e) => {
                        l.err(
                            span,
                            format!("{s:?} is not a mail address: {e}"),
                            "write `Name <user@example.com>` or `user@example.com`",
                        );
                        None
                    }
                }
            };
            let from = addr(&mut l, r.from.get_ref(), r.from.span());
            let to: Vec<_> =
                r.to.get_ref()
                    .list()
                    .into_iter()
                    .map(|s| addr(&mut l, s, r.to.span()))
                    .collect();
            if to.is_empty() {
                l.err(
                    r.to.span(),
                    "the mail has no recipient",
                    "give `to` one address or a list",
                );
            }
            let cc: Vec<_> =
                r.cc.as_ref()
                    .map(|c| {
                        c.get_ref()
                            .list()
                            .into_iter()
                            .map(|s| addr(&mut l, s, c.span()))
                            .collect()
                    })
                    .unwrap_or_default();
            let date = match chrono::DateTime::parse_from_rfc3339(r.date.get_ref()) {
                Ok(d) => Some(d),
                Err(e) => {
                    l.err(
                        r.date.span(),
                        format!("{:?} is not an RFC 3339 date: {e}", r.date.get_ref()),
                        "write it like 2026-03-05T09:12:00+01:00",
                    );
                    None
                }
            };
            let mut attachments = Vec::new();
            for a in &r.attachments {
                match relative_path(a.get_ref()) {
                    Ok(p) if made.contains(&p) || dir.join(&p).is_file() => attachments.push(p),
                    Ok(p) if Some(&p) == out.as_ref() => l.err(a.span(), "the mail attaches itself", "attach another file"),
                    Ok(p) => l.err(a.span(), format!("`{p}` is neither an output of this spec nor a file beside it"), "name an `out` of an [[image]], [[chart]], [[scan]], [[audio]] or [[video]] above, or a file relative to media.toml"),
                    Err(why) => l.err(a.span(), format!("attachment {:?}: {why}", a.get_ref()), "give a path relative to the directory of media.toml, inside it"),
                }
            }
            let message_id = r
                .message_id
                .as_ref()
                .map(|m| m.get_ref().trim_matches(['<', '>']).to_string());
            if let (Some(out), Some(from), Some(date), true) =
                (out, from, date, to.iter().chain(&cc).all(Option::is_some))
            {
                spec.mail.push(MailOut {
                    out,
                    from,
                    to: to.into_iter().flatten().collect(),
                    cc: cc.into_iter().flatten().collect(),
                    subject: r.subject.clone(),
                    date,
                    body: r.body.clone(),
                    attachments,
                    message_id,
                });
            }
        }
        if l.errors.is_empty() {
            Ok(spec)
        } else {
            l.errors.sort_by(|a, b| {
                (a.location.line, a.location.col).cmp(&(b.location.line, b.location.col))
            });
            Err(TaskErrors(l.errors))
        }
    }

    /// Every output, relative to [`dir`](Self::dir), in the order they are made: images,
    /// charts, scans, audio, video, mail.
    pub fn outputs(&self) -> Vec<&str> {
        self.images
            .iter()
            .map(|o| o.out.as_str())
            .chain(self.charts.iter().map(|o| o.out.as_str()))
            .chain(self.scans.iter().map(|o| o.out.as_str()))
            .chain(self.audio.iter().map(|o| o.out.as_str()))
            .chain(self.video.iter().map(|o| o.out.as_str()))
            .chain(self.mail.iter().map(|o| o.out.as_str()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(src: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("media.toml");
        match MediaSpec::parse(&path, src) {
            Ok(_) => Vec::new(),
            Err(e) => {
                e.0.iter()
                    .map(|e| {
                        // Relative to the spec, so the messages compare.
                        e.to_string()
                            .replace(&dir.path().display().to_string(), "DIR")
                    })
                    .collect()
            }
        }
    }

    #[test]
    fn a_good_spec_reads_with_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("media.toml");
        let spec = MediaSpec::parse(
            &path,
            "[[image]]\nout = \"./a/r.jpg\"\ntemplate = \"receipt\"\nlines = [\"x\"]\nrotate = 2.5\n\n[[scan]]\nout = \"s.pdf\"\n[[scan.page]]\ntemplate = \"document\"\ntitle = \"T\"\n",
        )
        .unwrap();
        assert_eq!(spec.seed, 1);
        assert_eq!(spec.dir, dir.path());
        assert_eq!(spec.images[0].out, "a/r.jpg");
        assert_eq!(spec.images[0].encoding, Encoding::Jpeg(85));
        assert_eq!(spec.images[0].picture.photo.rotate, 2.5);
        // Scan pages get a scanner's light blur and grain unless they say otherwise.
        assert_eq!(spec.scans[0].pages[0].photo.blur, 0.5);
        assert_eq!(spec.outputs(), ["a/r.jpg", "s.pdf"]);
    }

    #[test]
    fn bad_input_is_named_with_its_line_and_what_to_do() {
        let e = errors(
            "seed = 1\n\
             [[image]]\n\
             out = \"../outside.jpg\"\n\
             template = \"reciept\"\n\
             lines = [\"a\"]\n\
             [[image]]\n\
             out = \"/etc/x.png\"\n\
             template = \"note\"\n\
             lines = []\n\
             [[image]]\n\
             out = \"big.png\"\n\
             template = \"note\"\n\
             lines = [\"a\"]\n\
             width = 100000\n\
             rotate = 400\n\
             [[chart]]\n\
             out = \"c.gif\"\n\
             kind = \"pie\"\n\
             labels = [\"a\"]\n\
             values = [1.0, 2.0]\n",
        );
        let all = e.join("\n");
        assert!(all.contains("DIR/media.toml:3:7: `out = \"../outside.jpg\"`: `..` would leave the spec's directory"), "{all}");
        assert!(
            all.contains(
                "DIR/media.toml:4:12: unknown template \"reciept\" — did you mean \"receipt\"?"
            ),
            "{all}"
        );
        assert!(
            all.contains("media.toml:7:7: `out = \"/etc/x.png\"`: an absolute path"),
            "{all}"
        );
        assert!(
            all.contains("media.toml:9:9: the picture has no text: give it a `title` or `lines`"),
            "{all}"
        );
        assert!(
            all.contains("media.toml:14:9: `width = 100000` is outside 200..=4000"),
            "{all}"
        );
        assert!(
            all.contains("media.toml:15:10: rotate = 400 is outside -45..=45"),
            "{all}"
        );
        assert!(
            all.contains(
                "media.toml:17:7: `out = \"c.gif\"`: a chart is written as .png or .jpg or .jpeg"
            ),
            "{all}"
        );
        assert!(
            all.contains("media.toml:18:8: unknown chart kind \"pie\" — use \"bar\" or \"line\""),
            "{all}"
        );
        assert!(
            all.contains("media.toml:19:10: 1 labels for 2 values — give one label a value"),
            "{all}"
        );
        // Sorted by line.
        let lines: Vec<usize> = e
            .iter()
            .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
            .collect();
        assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    }

    #[test]
    fn unknown_keys_syntax_errors_and_empty_specs_are_located() {
        let e = errors("[[image]]\nout = \"a.png\"\ntemplate = \"note\"\ncolour = \"red\"\n");
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("DIR/media.toml:4:1: unknown field `colour`"),
            "{e:?}"
        );
        assert!(e[0].contains("docs/media.md"), "{e:?}");
        let e = errors("[[image]\n");
        assert!(e[0].starts_with("DIR/media.toml:1:"), "{e:?}");
        let e = errors("seed = 3\n");
        assert!(e[0].contains("the spec makes nothing"), "{e:?}");
    }

    #[test]
    fn pages_frames_and_outputs_are_capped() {
        let mut src = String::from("[[scan]]\nout = \"s.pdf\"\n");
        for _ in 0..=MAX_PAGES {
            src.push_str("[[scan.page]]\ntemplate = \"document\"\ntitle = \"x\"\n");
        }
        let e = errors(&src).join("\n");
        assert!(
            e.contains(&format!(
                "the scan has {} pages — give it 1 to {MAX_PAGES}",
                MAX_PAGES + 1
            )),
            "{e}"
        );
        let e = errors("[[video]]\nout = \"v.mp4\"\nseconds_per_frame = 60\n[[video.frame]]\ntemplate = \"note\"\ntitle = \"a\"\nout = \"x.png\"\n").join("\n");
        assert!(e.contains("a video frame has no `out` of its own"), "{e}");
        let mut src = String::from("[[video]]\nout = \"v.mp4\"\nseconds_per_frame = 60\n");
        for _ in 0..11 {
            src.push_str("[[video.frame]]\ntemplate = \"note\"\ntitle = \"a\"\n");
        }
        assert!(
            errors(&src)
                .join("\n")
                .contains("the video would last 660 s")
        );
        let e = errors("[[image]]\nout = \"a.png\"\ntemplate = \"note\"\ntitle = \"a\"\n[[image]]\nout = \"./a.png\"\ntemplate = \"note\"\ntitle = \"b\"\n").join("\n");
        assert!(
            e.contains("media.toml:6:7: `a.png` is written twice"),
            "{e}"
        );
        let long = "x".repeat(MAX_LINE_CHARS_TEST + 1);
        let e = errors(&format!(
            "[[image]]\nout = \"a.png\"\ntemplate = \"note\"\nlines = [\"{long}\"]\n"
        ))
        .join("\n");
        assert!(e.contains("line 1 is 401 characters, more than 400"), "{e}");
    }

    const MAX_LINE_CHARS_TEST: usize = super::super::MAX_LINE_CHARS;

    #[test]
    fn mail_checks_addresses_dates_and_attachments() {
        let e = errors(
            "[[mail]]\nout = \"m.eml\"\nfrom = \"not an address\"\nto = \"a@b.test\"\ndate = \"yesterday\"\nattachments = [\"nowhere.wav\", \"../x\"]\n",
        )
        .join("\n");
        assert!(
            e.contains("media.toml:3:8: \"not an address\" is not a mail address"),
            "{e}"
        );
        assert!(
            e.contains("media.toml:5:8: \"yesterday\" is not an RFC 3339 date"),
            "{e}"
        );
        assert!(
            e.contains("`nowhere.wav` is neither an output of this spec nor a file beside it"),
            "{e}"
        );
        assert!(e.contains("attachment \"../x\": `..` would leave"), "{e}");
    }

    #[test]
    fn relative_paths_stay_inside() {
        assert_eq!(relative_path("./a//b.png").unwrap(), "a/b.png");
        assert!(relative_path("a/../../b").is_err());
        assert!(relative_path("/abs").is_err());
        assert!(relative_path("").is_err());
        assert!(relative_path(".").is_err());
        assert!(relative_path("a\\b").is_err());
    }
}
