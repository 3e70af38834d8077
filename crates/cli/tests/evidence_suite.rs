//! suites/evidence: every task's media are what its `media.toml` makes (`bureau media render
//! --check`), every media file of the suite comes from a spec, and the suite stays small.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/evidence")
}

/// Files under `dir`, recursively, sorted.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn on_path(program: &str) -> bool {
    Command::new(program)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The task directories of the suite that have a media.toml.
fn specs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(suite())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("task.toml").is_file())
        .collect();
    out.sort();
    out
}

const MEDIA: [&str; 8] = ["jpg", "jpeg", "png", "pdf", "wav", "mp3", "ogg", "mp4"];

#[test]
fn every_task_has_media_and_they_are_what_its_spec_makes() {
    // Audio and video are checked for a readable duration with ffprobe.
    if !on_path("ffprobe") {
        eprintln!(
            "ffprobe is not on PATH (apt-get install ffmpeg): suites/evidence media not checked"
        );
        return;
    }
    let tasks = specs();
    assert!(
        tasks.len() >= 15,
        "suites/evidence has {} tasks",
        tasks.len()
    );
    let mut made: BTreeSet<PathBuf> = BTreeSet::new();
    for task in &tasks {
        let spec = task.join("media.toml");
        assert!(spec.is_file(), "{} has no media.toml", task.display());
        let out = Command::new(env!("CARGO_BIN_EXE_bureau"))
            .args(["media", "render", "--check"])
            .arg(&spec)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{} is not what its spec makes (run `bureau media render {}` and commit):\n{stdout}{}",
            task.display(),
            spec.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // `ok       <blake3>  <path>` or `present  <blake3>  <path> (...)`.
        for line in stdout.lines() {
            let (status, rest) = line.split_once(' ').unwrap_or((line, ""));
            assert!(status == "ok" || status == "present", "{line}");
            let path = rest
                .trim_start()
                .split_once("  ")
                .map(|(_, p)| p)
                .unwrap_or_else(|| panic!("no path in {line:?}"));
            let path = path.split(" (").next().unwrap_or(path);
            made.insert(PathBuf::from(path));
        }
    }
    // No picture, scan, recording or clip in the suite that no spec makes.
    let mut files = Vec::new();
    walk(&suite(), &mut files);
    let stray: Vec<String> = files
        .iter()
        .filter(|p| {
            let ext = p
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_ascii_lowercase();
            MEDIA.contains(&ext.as_str())
        })
        .filter(|p| !made.contains(*p))
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        stray.is_empty(),
        "media files no media.toml makes (describe them in the task's media.toml): {stray:?}"
    );
}

#[test]
fn the_suite_stays_small() {
    let mut files = Vec::new();
    walk(&suite(), &mut files);
    let bytes: u64 = files
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert!(
        bytes < 5 * 1024 * 1024,
        "suites/evidence holds {bytes} bytes, more than 5 MiB: shrink pictures (width, jpeg_quality) or shorten recordings"
    );
}
