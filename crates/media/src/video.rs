//! Video: metadata and a bounded set of key frames, through ffprobe and ffmpeg on PATH.
//!
//! A video is never given to an agent whole. Its duration, size and codecs come from ffprobe;
//! [`VIDEO_FRAMES`] frames, evenly spaced (at the middle of each of as many equal parts), are
//! taken with ffmpeg, scaled to fit [`VIDEO_FRAME_SIDE`], and shown as images, each labelled
//! with its time. Without ffmpeg the result says so in one line (and what to install).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::external::{Probe, need, probe, run, stage};
use crate::limits::{SECONDS, VIDEO_FRAME_SIDE, VIDEO_FRAMES};
use crate::picture::AgentImage;
use crate::{MediaError, MediaType};

/// A key frame: its time and the image an agent is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    pub at_seconds: f64,
    pub image: AgentImage,
}

/// What an agent gets of a video.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentVideo {
    pub probe: Option<Probe>,
    pub frames: Vec<Frame>,
    pub notes: Vec<String>,
}

/// `00:01:05` for 65.4 seconds.
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).floor() as u64;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Metadata and key frames of the video `bytes`.
pub fn for_agent(file: &str, bytes: &[u8], _t: MediaType) -> Result<AgentVideo, MediaError> {
    let mut notes = Vec::new();
    let p = match probe(file, bytes) {
        Ok(p) => p,
        Err(MediaError::Missing { .. }) => {
            notes.push("metadata and key frames need ffmpeg (with ffprobe) on PATH; install it (apt-get install ffmpeg) to see this video".into());
            return Ok(AgentVideo {
                probe: None,
                frames: Vec::new(),
                notes,
            });
        }
        Err(e) => return Err(e),
    };
    let Some(duration) = p.duration_seconds.filter(|d| *d > 0.0) else {
        notes.push("the video has no duration ffprobe can read; no frame was taken".into());
        return Ok(AgentVideo {
            probe: Some(p),
            frames: Vec::new(),
            notes,
        });
    };
    if p.video_codec.is_none() {
        notes.push("the file has no video stream".into());
        return Ok(AgentVideo {
            probe: Some(p),
            frames: Vec::new(),
            notes,
        });
    }
    let ffmpeg = need(
        "ffmpeg",
        "taking key frames of a video",
        "apt-get install ffmpeg",
    )?;
    let format = crate::external::demuxer(file, bytes)?;
    let (dir, input) = stage(bytes, "")?;
    let input = input.to_string_lossy().into_owned();
    // Scaled down to fit, never up.
    let scale = format!(
        "scale=w='min({VIDEO_FRAME_SIDE},iw)':h='min({VIDEO_FRAME_SIDE},ih)':force_original_aspect_ratio=decrease"
    );
    let mut frames = Vec::new();
    for i in 0..VIDEO_FRAMES {
        let at = duration * (i as f64 + 0.5) / VIDEO_FRAMES as f64;
        let at_arg = format!("{at:.3}");
        let out = run(
            &ffmpeg,
            &[
                "-nostdin",
                "-v",
                "error",
                "-threads",
                "1",
                "-ss",
                &at_arg,
                "-protocol_whitelist",
                "file",
                "-f",
                format,
                "-i",
                &input,
                "-frames:v",
                "1",
                "-vf",
                &scale,
                "-f",
                "image2pipe",
                "-vcodec",
                "png",
                "-",
            ],
            dir.path(),
            file,
            Duration::from_secs(SECONDS),
        )?;
        if out.stdout.is_empty() {
            notes.push(format!("no frame could be taken at {}", clock(at)));
            continue;
        }
        let image = crate::picture::for_agent(file, &out.stdout, MediaType::Png)?;
        frames.push(Frame {
            at_seconds: (at * 1000.0).round() / 1000.0,
            image,
        });
    }
    notes.push(format!(
        "{} key frames of {} s of video are shown, evenly spaced; the sound track is not given",
        frames.len(),
        duration.round()
    ));
    Ok(AgentVideo {
        probe: Some(p),
        frames,
        notes,
    })
}
