//! Making everything a [`MediaSpec`] asks for (`bureau media render`), or checking that what
//! is committed is what it would make (`--check`).
//!
//! Pictures, charts, scans and mails are deterministic and are rendered in memory. Voicemails
//! (espeak-ng) and clips (ffmpeg) are made at authoring time by programs whose output may
//! differ between their versions, and committed as task data: `--check` only verifies that
//! each exists and has a readable duration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bureau_formats::mail::{Attachment, OutgoingMail, build_eml};
use image::DynamicImage;

use super::spec::{AudioOut, MailOut, MediaSpec, VideoOut};
use super::{RenderError, render_chart, scan_pdf};
use crate::MediaError;
use crate::external::{need, run};

/// What kind of output a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Image,
    Chart,
    Scan,
    Audio,
    Video,
    Mail,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Chart => "chart",
            Kind::Scan => "scan",
            Kind::Audio => "audio",
            Kind::Video => "video",
            Kind::Mail => "mail",
        }
    }

    /// Made the same, byte for byte, for the same spec.
    pub fn deterministic(self) -> bool {
        !matches!(self, Kind::Audio | Kind::Video)
    }
}

/// A file made (or found, when checking).
#[derive(Debug, Clone, PartialEq)]
pub struct Made {
    /// Relative to the spec's directory.
    pub out: String,
    pub kind: Kind,
    pub blake3: String,
    pub bytes: u64,
}

/// Why making or checking an output failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{out}: {error}")]
    Render { out: String, error: RenderError },
    /// A program (espeak-ng, ffmpeg) is missing or failed.
    #[error("{out}: {error}")]
    Program { out: String, error: MediaError },
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{out}: {reason}")]
    Mail { out: String, reason: String },
}

impl BuildError {
    /// The missing program's error, if that is what this is (the CLI says it in one line).
    pub fn missing_program(&self) -> Option<&MediaError> {
        match self {
            BuildError::Program {
                error: e @ MediaError::Missing { .. },
                ..
            } => Some(e),
            _ => None,
        }
    }
}

fn made(out: &str, kind: Kind, bytes: &[u8]) -> Made {
    Made {
        out: out.to_string(),
        kind,
        blake3: blake3::hash(bytes).to_hex().to_string(),
        bytes: bytes.len() as u64,
    }
}

fn render_err(out: &str) -> impl Fn(RenderError) -> BuildError + '_ {
    move |error| BuildError::Render {
        out: out.to_string(),
        error,
    }
}

/// The deterministic outputs but mail (images, charts, scans), in memory, in order.
pub fn render_pictures(spec: &MediaSpec) -> Result<Vec<(Made, Vec<u8>)>, BuildError> {
    let mut out = Vec::new();
    for o in &spec.images {
        let bytes = o
            .picture
            .render_bytes(spec.seed, &o.out, o.encoding)
            .map_err(render_err(&o.out))?;
        out.push((made(&o.out, Kind::Image, &bytes), bytes));
    }
    for o in &spec.charts {
        let img = render_chart(&o.chart).map_err(render_err(&o.out))?;
        let bytes =
            super::encode(&DynamicImage::ImageRgb8(img), o.encoding).map_err(render_err(&o.out))?;
        out.push((made(&o.out, Kind::Chart, &bytes), bytes));
    }
    for o in &spec.scans {
        let bytes =
            scan_pdf(&o.pages, spec.seed, &o.out, o.jpeg_quality).map_err(render_err(&o.out))?;
        out.push((made(&o.out, Kind::Scan, &bytes), bytes));
    }
    Ok(out)
}

/// Build the mail `m`; its attachments come from `made` (this run's outputs) or the disk.
pub fn render_mail(
    spec: &MediaSpec,
    m: &MailOut,
    made: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<u8>, BuildError> {
    let mut attachments = Vec::new();
    for a in &m.attachments {
        let data = match made.get(a) {
            Some(b) => b.clone(),
            None => {
                let path = spec.dir.join(a);
                std::fs::read(&path).map_err(|error| BuildError::Io { path, error })?
            }
        };
        let filename = a.rsplit('/').next().unwrap_or(a).to_string();
        let content_type = crate::sniff(&data)
            .map(|t| t.mime().to_string())
            .unwrap_or_else(|| "application/octet-stream".into());
        attachments.push(Attachment {
            filename,
            content_type,
            size: data.len() as u64,
            data,
        });
    }
    let message_id = m.message_id.clone().unwrap_or_else(|| {
        let mut h = blake3::Hasher::new();
        h.update(&spec.seed.to_le_bytes());
        h.update(m.out.as_bytes());
        let domain = m.from.email.rsplit('@').next().unwrap_or("media.invalid");
        format!("{}@{domain}", &h.finalize().to_hex()[..20])
    });
    let mail = OutgoingMail {
        from: m.from.clone(),
        to: m.to.clone(),
        cc: m.cc.clone(),
        bcc: Vec::new(),
        subject: m.subject.clone(),
        text: m.body.clone(),
        date: m.date,
        message_id,
        in_reply_to: None,
        references: Vec::new(),
        attachments,
    };
    build_eml(&mail).map_err(|e| BuildError::Mail {
        out: m.out.clone(),
        reason: format!("{e}; fix the [[mail]] table"),
    })
}

/// Write `bytes` to `dir/out`, creating folders, through a temporary file (never half a file).
fn write(dir: &Path, out: &str, bytes: &[u8]) -> Result<(), BuildError> {
    let path = dir.join(out);
    let io = |error| BuildError::Io {
        path: path.clone(),
        error,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let tmp = path.with_extension("bureau-tmp");
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)
}

/// Make every output of `spec` and write it under its directory; `progress` is told of each
/// file as it is written (images, charts, scans, audio, video, then mail).
pub fn render_all(
    spec: &MediaSpec,
    mut progress: impl FnMut(&Made),
) -> Result<Vec<Made>, BuildError> {
    let mut all = Vec::new();
    let mut memory: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (m, bytes) in render_pictures(spec)? {
        write(&spec.dir, &m.out, &bytes)?;
        progress(&m);
        memory.insert(m.out.clone(), bytes);
        all.push(m);
    }
    for a in &spec.audio {
        let bytes = speak(a)?;
        write(&spec.dir, &a.out, &bytes)?;
        let m = made(&a.out, Kind::Audio, &bytes);
        progress(&m);
        memory.insert(a.out.clone(), bytes);
        all.push(m);
    }
    for v in &spec.video {
        let bytes = film(spec, v)?;
        write(&spec.dir, &v.out, &bytes)?;
        let m = made(&v.out, Kind::Video, &bytes);
        progress(&m);
        memory.insert(v.out.clone(), bytes);
        all.push(m);
    }
    for mail in &spec.mail {
        let bytes = render_mail(spec, mail, &memory)?;
        write(&spec.dir, &mail.out, &bytes)?;
        let m = made(&mail.out, Kind::Mail, &bytes);
        progress(&m);
        memory.insert(mail.out.clone(), bytes);
        all.push(m);
    }
    Ok(all)
}

/// What `--check` found for one output.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    /// Byte-identical to what the spec makes.
    Same(Made),
    /// Present but different: the committed digest and the rendered one.
    Differs {
        out: String,
        committed: String,
        rendered: String,
    },
    Missing {
        out: String,
    },
    /// Audio or video: present with a readable duration (not compared byte for byte).
    Playable {
        made: Made,
        seconds: f64,
    },
    /// Audio or video that cannot be read.
    Unreadable {
        out: String,
        reason: String,
    },
}

impl Checked {
    pub fn ok(&self) -> bool {
        matches!(self, Checked::Same(_) | Checked::Playable { .. })
    }
}

/// Compare every committed output with what `spec` makes, without writing anything.
pub fn check_all(spec: &MediaSpec) -> Result<Vec<Checked>, BuildError> {
    let mut out = Vec::new();
    let mut memory: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let compare = |m: Made, dir: &Path| -> Checked {
        match std::fs::read(dir.join(&m.out)) {
            Err(_) => Checked::Missing { out: m.out },
            Ok(disk) => {
                let committed = blake3::hash(&disk).to_hex().to_string();
                if committed == m.blake3 {
                    Checked::Same(m)
                } else {
                    Checked::Differs {
                        out: m.out,
                        committed,
                        rendered: m.blake3,
                    }
                }
            }
        }
    };
    for (m, bytes) in render_pictures(spec)? {
        memory.insert(m.out.clone(), bytes);
        out.push(compare(m, &spec.dir));
    }
    for (o, kind) in spec
        .audio
        .iter()
        .map(|a| (&a.out, Kind::Audio))
        .chain(spec.video.iter().map(|v| (&v.out, Kind::Video)))
    {
        let path = spec.dir.join(o);
        let Ok(bytes) = std::fs::read(&path) else {
            out.push(Checked::Missing { out: o.clone() });
            continue;
        };
        match duration(o, &bytes) {
            Ok(seconds) => out.push(Checked::Playable {
                made: made(o, kind, &bytes),
                seconds,
            }),
            Err(e) => out.push(Checked::Unreadable {
                out: o.clone(),
                reason: e.to_string(),
            }),
        }
        memory.insert(o.clone(), bytes);
    }
    for mail in &spec.mail {
        let bytes = render_mail(spec, mail, &memory)?;
        out.push(compare(made(&mail.out, Kind::Mail, &bytes), &spec.dir));
        memory.insert(mail.out.clone(), bytes);
    }
    Ok(out)
}

/// The duration of a committed sound or clip: WAV from its header, the rest by ffprobe.
fn duration(file: &str, bytes: &[u8]) -> Result<f64, MediaError> {
    let t = crate::sniff(bytes).ok_or_else(|| crate::invalid(file, "not a sound or video file"))?;
    let secs = if t == crate::MediaType::Wav {
        crate::audio::for_agent(file, bytes, t)?
            .info
            .duration_seconds
    } else {
        crate::external::probe(file, bytes)?.duration_seconds
    };
    match secs {
        Some(s) if s > 0.0 => Ok(s),
        _ => Err(crate::invalid(file, "it has no duration")),
    }
}

const TOOL_SECONDS: u64 = 120;

fn program_err(out: &str) -> impl Fn(MediaError) -> BuildError + '_ {
    move |error| BuildError::Program {
        out: out.to_string(),
        error,
    }
}

/// Speak the voicemail with espeak-ng (WAV), converting with ffmpeg for .mp3 / .ogg.
fn speak(a: &AudioOut) -> Result<Vec<u8>, BuildError> {
    let espeak = need(
        "espeak-ng",
        "making a voicemail",
        "apt-get install espeak-ng",
    )
    .map_err(program_err(&a.out))?;
    let (dir, text) =
        crate::external::stage(a.text.as_bytes(), ".txt").map_err(program_err(&a.out))?;
    let wav = dir.path().join("voice.wav");
    let speed = a.speed.to_string();
    run(
        &espeak,
        &[
            "-v",
            &a.voice,
            "-s",
            &speed,
            "-f",
            &text.to_string_lossy(),
            "-w",
            &wav.to_string_lossy(),
        ],
        dir.path(),
        &a.out,
        Duration::from_secs(TOOL_SECONDS),
    )
    .map_err(program_err(&a.out))?;
    let lower = a.out.to_ascii_lowercase();
    let target = if lower.ends_with(".wav") {
        wav
    } else {
        let ffmpeg = need(
            "ffmpeg",
            "encoding a voicemail as .mp3 or .ogg",
            "apt-get install ffmpeg",
        )
        .map_err(program_err(&a.out))?;
        let ext = if lower.ends_with(".mp3") {
            "mp3"
        } else {
            "ogg"
        };
        let target = dir.path().join(format!("voice.{ext}"));
        run(
            &ffmpeg,
            &[
                "-nostdin",
                "-loglevel",
                "error",
                "-y",
                "-i",
                &wav.to_string_lossy(),
                "-threads",
                "1",
                "-map_metadata",
                "-1",
                "-fflags",
                "+bitexact",
                "-flags",
                "+bitexact",
                &target.to_string_lossy(),
            ],
            dir.path(),
            &a.out,
            Duration::from_secs(TOOL_SECONDS),
        )
        .map_err(program_err(&a.out))?;
        target
    };
    std::fs::read(&target).map_err(|error| BuildError::Io {
        path: target,
        error,
    })
}

/// Render the frames and encode them with ffmpeg (H.264, one thread, bit-exact flags).
fn film(spec: &MediaSpec, v: &VideoOut) -> Result<Vec<u8>, BuildError> {
    let ffmpeg =
        need("ffmpeg", "making a video", "apt-get install ffmpeg").map_err(program_err(&v.out))?;
    let dir = tempfile::Builder::new()
        .prefix("bureau-video-")
        .tempdir()
        .map_err(|error| BuildError::Io {
            path: std::env::temp_dir(),
            error,
        })?;
    let (w, h) = (v.width, v.height);
    for (i, f) in v.frames.iter().enumerate() {
        let img = f
            .render(spec.seed, &format!("{}#{}", v.out, i + 1))
            .map_err(render_err(&v.out))?;
        // Every frame the clip's size (ffmpeg drops frames whose size changes mid-stream):
        // fitted and centred on black.
        let scale = (w as f32 / img.width() as f32).min(h as f32 / img.height() as f32);
        let (fw, fh) = (
            ((img.width() as f32 * scale).round() as u32).clamp(1, w),
            ((img.height() as f32 * scale).round() as u32).clamp(1, h),
        );
        let fitted = image::imageops::resize(&img, fw, fh, image::imageops::FilterType::Triangle);
        let mut frame = image::RgbImage::new(w, h);
        image::imageops::replace(
            &mut frame,
            &fitted,
            i64::from((w - fw) / 2),
            i64::from((h - fh) / 2),
        );
        let png = super::encode(&DynamicImage::ImageRgb8(frame), super::Encoding::Png)
            .map_err(render_err(&v.out))?;
        let path = dir.path().join(format!("frame{:04}.png", i + 1));
        std::fs::write(&path, png).map_err(|error| BuildError::Io { path, error })?;
    }
    let out_path = dir.path().join("video.mp4");
    let rate = format!("1/{}", v.seconds_per_frame);
    let pattern = dir.path().join("frame%04d.png");
    run(
        &ffmpeg,
        &[
            "-nostdin",
            "-loglevel",
            "error",
            "-y",
            "-framerate",
            &rate,
            "-i",
            &pattern.to_string_lossy(),
            "-vf",
            "fps=5,format=yuv420p",
            "-c:v",
            "libx264",
            "-preset",
            "medium",
            "-crf",
            "23",
            "-threads",
            "1",
            "-x264-params",
            "threads=1",
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            "-flags:v",
            "+bitexact",
            "-movflags",
            "+faststart",
            &out_path.to_string_lossy(),
        ],
        dir.path(),
        &v.out,
        Duration::from_secs(TOOL_SECONDS * 3),
    )
    .map_err(program_err(&v.out))?;
    std::fs::read(&out_path).map_err(|error| BuildError::Io {
        path: out_path,
        error,
    })
}
