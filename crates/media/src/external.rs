//! Programs Bureau may use when they are on PATH: ffprobe and ffmpeg (video), tesseract
//! (OCR), and renderers of office documents. None is required; an operation that needs one
//! that is missing fails with [`MediaError::Missing`], naming the Debian package.
//!
//! Every run is bounded and kept apart from anything an agent controls: the input is a copy
//! of the bytes in a private temporary directory (never the agent's path), that directory is
//! the working directory and `HOME`, the environment is emptied but for `PATH` and `LC_ALL`,
//! stdin is closed, the program leads a process group of its own whose every process has an
//! address-space and a CPU-time limit, the whole group is killed at a wall-clock deadline, and
//! its output is capped.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::MediaError;
use crate::limits::{MEMORY_BYTES, SECONDS};

/// Most bytes of a program's stdout kept.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// The first executable `name` on PATH.
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Whether `p` is a regular file with an execute bit.
pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A program that is needed: its path, or [`MediaError::Missing`].
pub fn need(name: &str, what: &str, install: &str) -> Result<PathBuf, MediaError> {
    find(name).ok_or_else(|| MediaError::Missing {
        what: what.to_string(),
        program: name.to_string(),
        install: install.to_string(),
    })
}

/// What a bounded run printed.
#[derive(Debug)]
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Run `program args` in `dir` under the limits above; `file` names the input in errors.
pub fn run(
    program: &Path,
    args: &[&str],
    dir: &Path,
    file: &str,
    wall: Duration,
) -> Result<Output, MediaError> {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fail = |reason: String| MediaError::Program {
        program: name.clone(),
        file: file.to_string(),
        reason,
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir)
        .env("LC_ALL", "C.UTF-8")
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let cpu = wall.as_secs().max(1) + 1;
    // SAFETY: only async-signal-safe calls (setsid, setrlimit) between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || {
            libc::setsid();
            let lim = |r: libc::__rlimit_resource_t, v: u64| {
                let l = libc::rlimit {
                    rlim_cur: v,
                    rlim_max: v,
                };
                libc::setrlimit(r, &l);
            };
            lim(libc::RLIMIT_AS, MEMORY_BYTES);
            lim(libc::RLIMIT_CPU, cpu);
            lim(libc::RLIMIT_CORE, 0);
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| fail(format!("it could not be started: {e}")))?;
    let pid = child.id() as i32;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.take(MAX_OUTPUT_BYTES as u64 + 1).read_to_end(&mut buf);
            // Drain the rest so the program is not blocked on a full pipe.
            let _ = std::io::copy(o, &mut std::io::sink());
        }
        buf
    });
    let ereader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.take(16 * 1024).read_to_end(&mut buf);
            let _ = std::io::copy(e, &mut std::io::sink());
        }
        String::from_utf8_lossy(&buf).into_owned()
    });
    let deadline = Instant::now() + wall;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() >= deadline => {
                // SAFETY: kill of the process group the child leads.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                let _ = child.wait();
                return Err(fail(format!(
                    "it did not finish within {} s and was stopped",
                    wall.as_secs()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(fail(format!("waiting for it failed: {e}"))),
        }
    };
    // Whatever the program left running in its group goes with it.
    // SAFETY: as above.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let stdout = reader.join().unwrap_or_default();
    let stderr = ereader.join().unwrap_or_default();
    if stdout.len() > MAX_OUTPUT_BYTES {
        return Err(fail(format!(
            "its output passed the limit of {MAX_OUTPUT_BYTES} bytes"
        )));
    }
    if !status.success() {
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string();
        return Err(fail(format!(
            "it exited with {status}{}",
            if last.is_empty() {
                String::new()
            } else {
                format!(": {last}")
            }
        )));
    }
    Ok(Output { stdout, stderr })
}

/// A private directory holding a copy of `bytes` as `input` (plus `ext`).
pub fn stage(bytes: &[u8], ext: &str) -> Result<(tempfile::TempDir, PathBuf), MediaError> {
    let dir = tempfile::Builder::new()
        .prefix("bureau-media-")
        .tempdir()
        .map_err(|e| MediaError::Program {
            program: "bureau".into(),
            file: String::new(),
            reason: format!("no temporary directory: {e}"),
        })?;
    let path = dir.path().join(format!("input{ext}"));
    std::fs::write(&path, bytes).map_err(|e| MediaError::Program {
        program: "bureau".into(),
        file: String::new(),
        reason: format!("writing a temporary copy failed: {e}"),
    })?;
    Ok((dir, path))
}

/// The ffmpeg demuxer for `bytes`, by their signature. ffmpeg is always told the format and
/// allowed the `file` protocol only: left to probe, it would read a playlist or a
/// concatenation list that names other files (or URLs) as the media an agent wrote.
pub fn demuxer(file: &str, bytes: &[u8]) -> Result<&'static str, MediaError> {
    use crate::MediaType::*;
    match crate::sniff(bytes) {
        Some(Mp4) => Ok("mov"),
        Some(Mkv) => Ok("matroska"),
        Some(Avi) => Ok("avi"),
        Some(Wav) => Ok("wav"),
        Some(Mp3) => Ok("mp3"),
        Some(Ogg) => Ok("ogg"),
        Some(Flac) => Ok("flac"),
        _ => Err(crate::invalid(
            file,
            "not a sound or video file Bureau reads (MP4/MOV, Matroska/WebM, AVI, WAV, MP3, Ogg, FLAC)",
        )),
    }
}

/// What ffprobe says of a file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Probe {
    pub duration_seconds: Option<f64>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub video_codec: Option<String>,
    pub audio_codec: Option<String>,
    pub sample_rate: Option<u32>,
    pub channels: Option<u16>,
}

/// Probe a sound or video with ffprobe.
pub fn probe(file: &str, bytes: &[u8]) -> Result<Probe, MediaError> {
    let ffprobe = need(
        "ffprobe",
        "reading a video's or compressed sound's duration",
        "apt-get install ffmpeg",
    )?;
    let format = demuxer(file, bytes)?;
    let (dir, input) = stage(bytes, "")?;
    let out = run(
        &ffprobe,
        &[
            "-v",
            "error",
            "-protocol_whitelist",
            "file",
            "-f",
            format,
            "-print_format",
            "json",
            "-show_format",
            "-show_streams",
            &input.to_string_lossy(),
        ],
        dir.path(),
        file,
        Duration::from_secs(SECONDS),
    )?;
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| MediaError::Program {
            program: "ffprobe".into(),
            file: file.into(),
            reason: format!("its output is not JSON: {e}"),
        })?;
    let num = |v: &serde_json::Value| -> Option<f64> {
        v.as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .or_else(|| v.as_f64())
            .filter(|d| d.is_finite() && *d >= 0.0)
    };
    let mut p = Probe {
        duration_seconds: num(&v["format"]["duration"]).map(|d| (d * 1000.0).round() / 1000.0),
        ..Probe::default()
    };
    for s in v["streams"].as_array().into_iter().flatten() {
        match s["codec_type"].as_str() {
            Some("video") if p.video_codec.is_none() => {
                p.video_codec = s["codec_name"].as_str().map(str::to_string);
                p.width = s["width"].as_u64().and_then(|w| u32::try_from(w).ok());
                p.height = s["height"].as_u64().and_then(|h| u32::try_from(h).ok());
            }
            Some("audio") if p.audio_codec.is_none() => {
                p.audio_codec = s["codec_name"].as_str().map(str::to_string);
                p.sample_rate = num(&s["sample_rate"]).map(|r| r as u32);
                p.channels = s["channels"].as_u64().and_then(|c| u16::try_from(c).ok());
            }
            _ => {}
        }
    }
    Ok(p)
}
