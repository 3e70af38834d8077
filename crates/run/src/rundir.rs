//! The run directory: its layout, atomic writes, and reading stored results back.
//!
//! ```text
//! DIR/run.json                         the run's configuration (targets, agents, epochs, version)
//! DIR/summary.json                     the summary of every trial (bureau.summary schema)
//! DIR/report.md                        the Markdown report
//! DIR/replicas.json                    with [workspace] tasks on replicas: the backend of each
//!                                      workspace's pool and any failed reset
//! DIR/trials/<task>/<agent>/<epoch>/   one trial (agent name sanitised; epochs count from 1)
//!     result.json                      TrialResult with status and every attempt; written last
//!     verdicts.json                    the verdicts, byte-identical for identical agent actions
//!     trajectory.jsonl                 the agent's steps
//!     events.jsonl                     the world event log
//!     outputs.json, depgraph.json      the collected deliverables; the file dependency graph
//!     feedback.json                    with feedback rounds: each round's verdicts and message
//!     trial.zip                        every tree below, one zip archive (zstd entries, paths
//!                                      as listed); read with bureau_world::trial_files
//!                                      (`bureau unpack` writes the trees out again):
//!       snapshots/turn-<n>.json          the world after turn n (content blobs in world/blobs)
//!       snapshots/turn-<n>.round-<r>.json  with feedback rounds: the world after round r of
//!                                        turn n, before the user's (r+1)-th message
//!       deliverables/                    workspace files the agent created or changed (final
//!                                        state; files only the task added or replaced are
//!                                        left out)
//!       mail/<owner>/<folder>/<id>.eml   every mailbox, final state
//!       calendar/<owner>.ics             every calendar, final state
//!       world/                           the world root: workspace/, blobs/, code/ (on a
//!                                        replica the workspace was the replica, reset after
//!                                        the trial; generated contents are never in blobs/)
//!     attempts/<k>/                    earlier attempts (errored or interrupted), same layout
//!     claim.<g>.json                   while the trial runs: the claim of the process playing
//!                                      it (crate::claim); removed once result.json is written
//! ```
//!
//! Runs written before `trial.zip` have its trees as plain directories; every reader takes
//! both.

use std::io::Write;
use std::path::{Path, PathBuf};

use bureau_core::result::TrialResult;
use bureau_core::verdict::Verdict;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::RunError;

pub const RUN_JSON: &str = "run.json";
/// The replica pools a run used (`--replicas`): mode, backend per workspace, failed resets.
pub const REPLICAS_JSON: &str = "replicas.json";
/// Cached answers of the run's LLM judge, one file per (model, prompt) hash.
pub const JUDGE_CACHE: &str = "judge-cache";
pub const SUMMARY_JSON: &str = "summary.json";
pub const REPORT_MD: &str = "report.md";
pub const TRIALS: &str = "trials";
pub const RESULT_JSON: &str = "result.json";
pub const VERDICTS_JSON: &str = "verdicts.json";
/// Every feedback round of a trial: the verdicts of the turn's items and the user's message.
pub const FEEDBACK_JSON: &str = "feedback.json";
/// Cached messages of a model writing the simulated user's feedback.
pub const FEEDBACK_CACHE: &str = "feedback-cache";
/// Cached replies of LLM colleagues, one file per (model, prompt) hash.
pub const COLLEAGUE_CACHE: &str = "colleague-cache";
/// Cached embeddings of `--embeddings` retrieval, one file per (model, text) hash.
pub const EMBEDDING_CACHE: &str = "embedding-cache";
pub const TRAJECTORY_JSONL: &str = "trajectory.jsonl";
pub const EVENTS_JSONL: &str = "events.jsonl";
pub const ATTEMPT_JSON: &str = "attempt.json";
pub const ATTEMPTS: &str = "attempts";
/// A trial's collected deliverables (issue 5).
pub const OUTPUTS_JSON: &str = "outputs.json";
/// A trial's predicted and true file dependency graphs (issue 5; only for tasks with file_deps).
pub const DEPGRAPH_JSON: &str = "depgraph.json";

/// The directory of one trial.
pub fn trial_dir(out: &Path, task_id: &str, agent_dir: &str, epoch: u32) -> PathBuf {
    out.join(TRIALS)
        .join(task_id)
        .join(agent_dir)
        .join(epoch.to_string())
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Write `bytes` to `path` atomically: a temporary file beside it, synced, then renamed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    write_atomic_as(path, bytes, true)
}

/// [`write_atomic`]; with `sync` false the temporary file is not synced to disk first (for
/// scratch files nobody reads after a crash, such as the trials of `bureau validate`).
pub fn write_atomic_as(path: &Path, bytes: &[u8], sync: bool) -> Result<(), RunError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            // Waiting on the disk is no CPU work (`bureau_core::cpu`).
            bureau_core::cpu::waiting(|| f.sync_all())?;
        }
        std::fs::rename(&tmp, path)
    };
    write().map_err(io_err(path))
}

/// Serialise `value` as pretty JSON with a final newline and write it atomically.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), RunError> {
    write_json_as(path, value, true)
}

/// [`write_json`], synced only when `sync` (see [`write_atomic_as`]).
pub fn write_json_as<T: Serialize + ?Sized>(
    path: &Path,
    value: &T,
    sync: bool,
) -> Result<(), RunError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| RunError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    write_atomic_as(path, &bytes, sync)
}

/// Create `path` with `value` as pretty JSON only if it does not exist, atomically even on a
/// shared file system (a temporary file beside it, then a hard link, which fails when the
/// name exists). `Ok(false)`: another process created it first; nothing was written.
pub fn create_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<bool, RunError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| RunError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    bytes.push(b'\n');
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    // Unique per host, process and call: shards may be threads of one process too.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let tmp = path.with_file_name(format!(
        ".{name}.{}.{}.{call}.new",
        host.trim(),
        std::process::id()
    ));
    let write = || -> std::io::Result<bool> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        bureau_core::cpu::waiting(|| f.sync_all())?;
        let linked = match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        };
        let _ = std::fs::remove_file(&tmp);
        linked
    };
    write().map_err(io_err(path))
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, RunError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    serde_json::from_slice(&bytes).map_err(|e| RunError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Every finished trial under `out/trials` (those with a `result.json`), with its verdicts,
/// sorted by task, agent and epoch.
pub fn load_trials(out: &Path) -> Result<Vec<(TrialResult, Vec<Verdict>)>, RunError> {
    let mut found = Vec::new();
    let trials = out.join(TRIALS);
    for task in sorted_dirs(&trials)? {
        for agent in sorted_dirs(&task)? {
            for epoch in sorted_dirs(&agent)? {
                let result_path = epoch.join(RESULT_JSON);
                if !result_path.is_file() {
                    continue;
                }
                let result: TrialResult = read_json(&result_path)?;
                let verdicts_path = epoch.join(VERDICTS_JSON);
                let verdicts: Vec<Verdict> = if verdicts_path.is_file() {
                    read_json(&verdicts_path)?
                } else {
                    Vec::new()
                };
                found.push((result, verdicts));
            }
        }
    }
    found.sort_by(|a, b| {
        (&a.0.task.id, &a.0.agent, a.0.epoch).cmp(&(&b.0.task.id, &b.0.agent, b.0.epoch))
    });
    Ok(found)
}

/// Subdirectories of `dir`, sorted; none if `dir` does not exist.
pub(crate) fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>, RunError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(RunError::Io {
                path: dir.to_path_buf(),
                source: e,
            });
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        if entry.file_type().map_err(io_err(dir))?.is_dir() {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

/// Numbers of the attempt directories of a trial (`attempts/<k>`), ascending.
pub(crate) fn attempt_numbers(trial: &Path) -> Result<Vec<u32>, RunError> {
    let mut ks: Vec<u32> = sorted_dirs(&trial.join(ATTEMPTS))?
        .iter()
        .filter_map(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse().ok())
        })
        .collect();
    ks.sort_unstable();
    Ok(ks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_leave_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        write_json(&p, &serde_json::json!({"b": 1, "a": [1, 2]})).unwrap();
        write_json(&p, &serde_json::json!({"c": true})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\n  \"c\": true\n}\n"
        );
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["x.json".to_string()]);
    }

    #[test]
    fn attempt_numbers_sort_numerically_and_ignore_other_names() {
        let dir = tempfile::tempdir().unwrap();
        for k in ["1", "10", "2", "notes"] {
            std::fs::create_dir_all(dir.path().join(ATTEMPTS).join(k)).unwrap();
        }
        assert_eq!(attempt_numbers(dir.path()).unwrap(), vec![1, 2, 10]);
        assert_eq!(
            attempt_numbers(&dir.path().join("none")).unwrap(),
            Vec::<u32>::new()
        );
    }
}
