//! Reading a trial's snapshots and blobs: regular files only, bounded, every failure a
//! sentence naming the file and why.

use bureau_world::trial_files::TrialFiles;

use serde::Deserialize;
use serde_json::Value;

/// The largest snapshot read (a generated workspace of 5,000 files is under 1 MB; mail with
/// attachments is the bulk of a large one). Parsed, JSON takes several times its size.
pub const MAX_SNAPSHOT_BYTES: u64 = 64 * 1024 * 1024;
/// The largest blob read for a rendering (the office readers' own input limit).
pub const MAX_BLOB_BYTES: u64 = bureau_formats::office::MAX_INPUT_BYTES as u64;

/// One point of a trial's history: the world after a turn, or after a feedback round of a
/// turn (`turn-<n>.round-<r>.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub enum Stage {
    /// `snapshots/turn-<n>.json`: the world at the end of turn n (after its last round).
    Turn(u32),
    /// `snapshots/turn-<n>.round-<r>.json`: the world after round r of turn n.
    Round(u32, u32),
}

impl Stage {
    /// The snapshot's file name.
    pub fn file_name(self) -> String {
        match self {
            Stage::Turn(n) => format!("turn-{n}.json"),
            Stage::Round(n, r) => format!("turn-{n}.round-{r}.json"),
        }
    }

    /// The order of the stages in time: a turn's rounds come before its final snapshot.
    fn order_key(self) -> (u32, u32, u32) {
        match self {
            Stage::Round(n, r) => (n, 0, r),
            Stage::Turn(n) => (n, 1, 0),
        }
    }

    fn parse(name: &str) -> Option<Stage> {
        let rest = name.strip_prefix("turn-")?.strip_suffix(".json")?;
        match rest.split_once(".round-") {
            None => digits(rest).map(Stage::Turn),
            Some((n, r)) => Some(Stage::Round(digits(n)?, digits(r)?)),
        }
    }
}

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Every snapshot of a trial, in time order (regular files only).
pub fn stages(trial: &TrialFiles) -> Vec<Stage> {
    let Ok(files) = trial.list("snapshots") else {
        return Vec::new();
    };
    let mut v: Vec<Stage> = files
        .keys()
        .filter_map(|rel| rel.strip_prefix("snapshots/"))
        .filter_map(Stage::parse)
        .collect();
    v.sort_by_key(|s| s.order_key());
    v
}

pub(crate) use crate::load::read_trial_file;

/// A snapshot read as JSON. `Err` says why it could not be read; `problems` gets a note when
/// it is JSON but not this Bureau's snapshot format (then it is read leniently, by field).
pub(crate) fn load_snapshot(
    trial: &TrialFiles,
    stage: Stage,
    problems: &mut Vec<String>,
) -> Result<Value, String> {
    let name = format!("snapshots/{}", stage.file_name());
    let bytes = read_trial_file(trial, &name, MAX_SNAPSHOT_BYTES)
        .map_err(|why| format!("{name}: {why}"))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        if e.is_eof() {
            format!(
                "{name}: the file ends in the middle of the JSON ({e}) — the run was probably \
                 stopped while writing it"
            )
        } else {
            format!("{name}: not valid JSON ({e})")
        }
    })?;
    if !value.is_object() {
        return Err(format!(
            "{name}: not a snapshot (a JSON {} rather than an object)",
            json_kind(&value)
        ));
    }
    if let Err(e) = bureau_world::Snapshot::deserialize(&value) {
        problems.push(format!(
            "{name}: does not match this Bureau's snapshot format ({e}) — an older or newer \
             Bureau probably wrote it; what could be read field by field is shown"
        ));
    }
    Ok(value)
}

pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// What reading a blob gave.
pub(crate) enum Blob {
    Bytes(Vec<u8>),
    /// Not in the blob store (an unchanged file of a generated base layer, or lost).
    NotStored,
    /// Present but unreadable, too large or not matching its hash: why.
    Unreadable(String),
}

/// Whether `hash` is a BLAKE3 hex digest (and so safe as a file name).
pub(crate) fn is_hash(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads `world/blobs/<hash>` and checks it against its hash.
pub(crate) fn read_blob(trial: &TrialFiles, hash: &str) -> Blob {
    if !is_hash(hash) {
        return Blob::Unreadable(format!("{hash:?} is not a content hash"));
    }
    let rel = format!("world/blobs/{hash}");
    match trial.read(&rel, MAX_BLOB_BYTES) {
        Err(e) if e.is_not_found() => Blob::NotStored,
        Err(e) => Blob::Unreadable(format!("world/blobs/{hash}: {}", crate::load::why(&e))),
        Ok(bytes) => {
            let got = blake3::hash(&bytes).to_hex().to_string();
            if got.eq_ignore_ascii_case(hash) {
                Blob::Bytes(bytes)
            } else {
                Blob::Unreadable(format!(
                    "world/blobs/{hash}: its content does not match its name (BLAKE3 {got})"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::read_regular;

    #[test]
    fn stage_names_parse_and_sort_in_time_order() {
        let mut v: Vec<Stage> = [
            "turn-2.json",
            "turn-1.round-1.json",
            "turn-10.json",
            "turn-1.json",
            "turn-1.round-0.json",
            "turn-0.json",
        ]
        .iter()
        .filter_map(|n| Stage::parse(n))
        .collect();
        v.sort_by_key(|s| s.order_key());
        assert_eq!(
            v,
            vec![
                Stage::Turn(0),
                Stage::Round(1, 0),
                Stage::Round(1, 1),
                Stage::Turn(1),
                Stage::Turn(2),
                Stage::Turn(10)
            ]
        );
        for bad in [
            "turn-.json",
            "turn-1.json.tmp",
            "turn--1.json",
            "turn-1.round-.json",
        ] {
            assert_eq!(Stage::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn read_regular_refuses_links_directories_and_large_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"hello").unwrap();
        std::os::unix::fs::symlink(&f, dir.path().join("l")).unwrap();
        assert_eq!(read_regular(&f, 10).unwrap(), b"hello");
        assert!(
            read_regular(&dir.path().join("l"), 10)
                .unwrap_err()
                .contains("symbolic")
        );
        assert!(
            read_regular(dir.path(), 10)
                .unwrap_err()
                .contains("regular")
        );
        assert!(read_regular(&f, 3).unwrap_err().contains("more than"));
        assert!(
            read_regular(&dir.path().join("nope"), 3)
                .unwrap_err()
                .contains("not exist")
        );
    }

    #[test]
    fn blobs_are_checked_against_their_hash() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = dir.path().join("world/blobs");
        std::fs::create_dir_all(&blobs).unwrap();
        let good = blake3::hash(b"abc").to_hex().to_string();
        std::fs::write(blobs.join(&good), b"abc").unwrap();
        let bad = blake3::hash(b"xyz").to_hex().to_string();
        std::fs::write(blobs.join(&bad), b"not xyz").unwrap();
        assert!(
            matches!(read_blob(&TrialFiles::loose(dir.path()), &good), Blob::Bytes(b) if b == b"abc")
        );
        assert!(
            matches!(read_blob(&TrialFiles::loose(dir.path()), &bad), Blob::Unreadable(w) if w.contains("does not match"))
        );
        let absent = blake3::hash(b"none").to_hex().to_string();
        assert!(matches!(
            read_blob(&TrialFiles::loose(dir.path()), &absent),
            Blob::NotStored
        ));
        assert!(matches!(
            read_blob(&TrialFiles::loose(dir.path()), "../../etc/passwd"),
            Blob::Unreadable(_)
        ));
    }
}
