//! Reading run directories for the viewer — leniently.
//!
//! A run directory may be one that is still running, one killed mid-write, or one written by
//! an older Bureau. The viewer shows what it can: every file that cannot be read becomes a
//! [`Problem`] naming the file and why, shown on the page, and never stops the rest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bureau_core::result::TrialResult;
use bureau_core::verdict::Verdict;
use bureau_world::trial_files::{TrialFiles, TrialFilesError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Files larger than this are not read by the viewer (a result or verdicts file is a few KB).
pub const MAX_JSON_BYTES: u64 = 64 * 1024 * 1024;

/// Something the viewer could not read, and why. Shown on the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, PartialOrd, Ord)]
pub struct Problem {
    /// The file or directory, relative to the run directory where possible.
    pub path: String,
    pub message: String,
}

/// One trial as the overview needs it.
#[derive(Debug, Clone, Serialize)]
pub struct TrialRow {
    /// `task/agent-dir/epoch`, the trial's path under `trials/` (and its URL).
    pub key: String,
    pub task: String,
    pub agent: String,
    pub epoch: u32,
    /// `passed`, `failed`, `error`, or `incomplete` (no readable `result.json`: running,
    /// killed, or written by another Bureau version).
    pub status: String,
    pub weighted: Option<f64>,
    pub pass_rate: Option<f64>,
    pub strict: Option<bool>,
    pub category: String,
    pub persona: String,
    pub difficulty: String,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    pub wall_seconds: f64,
    pub tool_calls: u64,
    pub per_turn: BTreeMap<String, f64>,
}

/// A run directory, as far as it could be read.
#[derive(Debug, Clone)]
pub struct RunData {
    pub dir: PathBuf,
    /// A short name for the run (its directory name; made unique when several are compared).
    pub label: String,
    /// `run.json`, if readable.
    pub manifest: Option<Value>,
    pub trials: Vec<TrialRow>,
    /// The typed results and verdicts of the trials that have them, for the summary.
    pub scored: Vec<(TrialResult, Vec<Verdict>)>,
    pub problems: Vec<Problem>,
    /// A sharded run's progress per shard (`bureau status`), computed from the partition
    /// run.json implies; `None` when the run is not sharded or its tasks could not be loaded
    /// (then a problem says why).
    pub shards: Option<bureau_run::status::RunStatus>,
}

impl RunData {
    /// Trials by key.
    pub fn trial(&self, key: &str) -> Option<&TrialRow> {
        self.trials.iter().find(|t| t.key == key)
    }

    /// Agents in the run, sorted.
    pub fn agents(&self) -> Vec<String> {
        let mut a: Vec<String> = self.trials.iter().map(|t| t.agent.clone()).collect();
        a.sort();
        a.dedup();
        a
    }

    /// Tasks in the run, sorted.
    pub fn tasks(&self) -> Vec<String> {
        let mut t: Vec<String> = self.trials.iter().map(|t| t.task.clone()).collect();
        t.sort();
        t.dedup();
        t
    }
}

/// Read a regular file of at most `max` bytes, never through a symbolic link: the one reader
/// of the viewer (run directories are written by agents' trials and are not trusted). The
/// read itself is `bureau_world::files::read_regular`'s: opened non-blocking and checked again
/// on the descriptor, so a FIFO swapped in after the check cannot block the viewer.
pub fn read_regular(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    use bureau_world::files::ReadError;
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_string(),
        _ => format!("it cannot be read ({e})"),
    })?;
    if meta.file_type().is_symlink() {
        return Err("it is a symbolic link, which the viewer does not follow".into());
    }
    bureau_world::files::read_regular(path, max).map_err(|e| match e {
        ReadError::TooLarge { size, max } => {
            format!("it is {size} bytes, more than the {max} the viewer reads")
        }
        ReadError::Io(e) => format!("it cannot be read ({e})"),
        e => e.to_string(),
    })
}

/// Why a trial's file could not be read, as the viewer says it (after the file's name).
pub(crate) fn why(e: &TrialFilesError) -> String {
    match e {
        TrialFilesError::NotFound { .. } => "it does not exist".into(),
        TrialFilesError::Refused { why, .. } => why.clone(),
        TrialFilesError::TooLarge { size, max, .. } => {
            format!("it is {size} bytes, more than the {max} the viewer reads")
        }
        TrialFilesError::Io { source, .. } => format!("it cannot be read ({source})"),
        TrialFilesError::Archive { archive, message } => format!(
            "{}: {message}",
            archive.file_name().unwrap_or_default().to_string_lossy()
        ),
    }
}

/// Read the file `rel` of a trial (from its archive, or a plain file of a trial written
/// before archives or unpacked), at most `max` bytes, never through a symbolic link.
pub fn read_trial_file(trial: &TrialFiles, rel: &str, max: u64) -> Result<Vec<u8>, String> {
    trial.read(rel, max).map_err(|e| why(&e))
}

/// The files of the trial directory `dir`; when its archive cannot be read, its plain files
/// only, and a problem saying why (naming the archive).
pub fn open_trial(dir: &Path) -> (TrialFiles, Option<String>) {
    match TrialFiles::open(dir) {
        Ok(t) => (t, None),
        Err(e) => (TrialFiles::loose(dir), Some(e.to_string())),
    }
}

fn rel(run: &Path, path: &Path) -> String {
    path.strip_prefix(run)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Subdirectories (not symlinks) of `dir`, sorted by name.
fn subdirs(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir())
                && let Some(name) = e.file_name().to_str()
            {
                if name.starts_with('.') {
                    continue;
                }
                out.push((name.to_string(), e.path()));
            }
        }
    }
    out.sort();
    out
}

/// Load a run directory. Never fails: what cannot be read is in [`RunData::problems`].
pub fn load_run(dir: &Path) -> RunData {
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let mut run = RunData {
        dir: dir.to_path_buf(),
        label,
        manifest: None,
        trials: Vec::new(),
        scored: Vec::new(),
        problems: Vec::new(),
        shards: None,
    };
    let problem = |run: &mut RunData, path: &Path, message: String| {
        run.problems.push(Problem {
            path: rel(dir, path),
            message,
        })
    };
    if !dir.is_dir() {
        problem(
            &mut run,
            dir,
            "not a directory — give the --out directory of `bureau run`".into(),
        );
        return run;
    }
    let manifest = dir.join("run.json");
    match read_regular(&manifest, MAX_JSON_BYTES) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => run.manifest = Some(v),
            Err(e) => problem(&mut run, &manifest, format!("not JSON: {e}")),
        },
        Err(e) => problem(&mut run, &manifest, format!("cannot read: {e}")),
    }
    let trials = dir.join("trials");
    if !trials.is_dir() {
        problem(
            &mut run,
            &trials,
            "missing: this is not a run directory (no trials/) — give the --out directory of \
             `bureau run`"
                .into(),
        );
        return run;
    }
    for (task, task_dir) in subdirs(&trials) {
        for (agent_dir, agent_path) in subdirs(&task_dir) {
            for (epoch, trial_dir) in subdirs(&agent_path) {
                let Ok(epoch_n) = epoch.parse::<u32>() else {
                    continue;
                };
                let key = format!("{task}/{agent_dir}/{epoch}");
                load_trial(&mut run, dir, &trial_dir, key, &task, &agent_dir, epoch_n);
            }
        }
    }
    // A sharded run: each shard's progress. It needs the tasks (for the partition), loaded
    // from the targets run.json records, relative to the current directory as the run was
    // given them.
    let sharded = run
        .manifest
        .as_ref()
        .and_then(|m| m.get("shards"))
        .and_then(Value::as_u64)
        .is_some();
    if sharded {
        match bureau_run::status::status(dir) {
            Ok(s) => run.shards = Some(s),
            Err(e) => problem(
                &mut run,
                &manifest,
                format!(
                    "cannot show the progress per shard: {e} — run the viewer from the directory the run was started in"
                ),
            ),
        }
    }
    run
}

#[derive(Deserialize)]
struct LooseResult {
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    task: Option<Value>,
}

fn load_trial(
    run: &mut RunData,
    dir: &Path,
    trial_dir: &Path,
    key: String,
    task: &str,
    agent_dir: &str,
    epoch: u32,
) {
    let mut row = TrialRow {
        key,
        task: task.to_string(),
        agent: agent_dir.to_string(),
        epoch,
        status: "incomplete".into(),
        weighted: None,
        pass_rate: None,
        strict: None,
        category: String::new(),
        persona: String::new(),
        difficulty: String::new(),
        tokens: 0,
        cost_usd: None,
        wall_seconds: 0.0,
        tool_calls: 0,
        per_turn: BTreeMap::new(),
    };
    let result_path = trial_dir.join("result.json");
    let bytes = match read_regular(&result_path, MAX_JSON_BYTES) {
        Ok(b) => b,
        Err(e) => {
            let why = if result_path.exists() {
                format!("cannot read: {e}")
            } else {
                "no result.json: the trial is running, or was stopped before it finished".into()
            };
            run.problems.push(Problem {
                path: rel(dir, &result_path),
                message: why,
            });
            run.trials.push(row);
            return;
        }
    };
    match serde_json::from_slice::<TrialResult>(&bytes) {
        Ok(result) => {
            row.agent = result.agent.clone();
            row.status = result.status.as_str().to_string();
            if let Some(s) = &result.score {
                row.weighted = Some(s.weighted);
                row.pass_rate = Some(s.pass_rate);
                row.strict = Some(s.strict);
                row.per_turn = s.per_turn.clone();
            }
            row.category = result.task.category.clone();
            row.persona = result.task.persona.clone();
            row.difficulty = result.task.difficulty.clone();
            row.tokens = result.usage.input_tokens + result.usage.output_tokens;
            row.cost_usd = result.usage.cost_usd;
            row.wall_seconds = result.wall_seconds;
            row.tool_calls = result.usage.tool_calls;
            let verdicts_path = trial_dir.join("verdicts.json");
            let verdicts = match read_regular(&verdicts_path, MAX_JSON_BYTES) {
                Ok(b) => match serde_json::from_slice::<Vec<Verdict>>(&b) {
                    Ok(v) => v,
                    Err(e) => {
                        run.problems.push(Problem {
                            path: rel(dir, &verdicts_path),
                            message: format!("verdicts not readable: {e}"),
                        });
                        Vec::new()
                    }
                },
                Err(_) => Vec::new(),
            };
            run.scored.push((result, verdicts));
        }
        Err(typed) => {
            // An older or newer Bureau: show what the loose shape gives.
            let message = match serde_json::from_slice::<LooseResult>(&bytes) {
                Ok(loose) => {
                    if let Some(a) = loose.agent {
                        row.agent = a;
                    }
                    if let Some(s) = loose.status {
                        row.status = s;
                    }
                    if let Some(t) = loose.task.as_ref() {
                        let field = |k: &str| {
                            t.get(k)
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string()
                        };
                        row.category = field("category");
                        row.persona = field("persona");
                    }
                    format!("written by another Bureau version ({typed}); shown without its score")
                }
                Err(e) => format!("not a result file: {e}"),
            };
            run.problems.push(Problem {
                path: rel(dir, &result_path),
                message,
            });
        }
    }
    run.trials.push(row);
}

/// Give runs distinct labels (`a`, `a (2)`, ...) when their directory names collide.
pub fn label_runs(runs: &mut [RunData]) {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for run in runs.iter_mut() {
        let n = seen.entry(run.label.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            run.label = format!("{} ({n})", run.label);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_that_is_not_a_run_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let run = load_run(dir.path());
        assert!(run.trials.is_empty());
        assert!(
            run.problems
                .iter()
                .any(|p| p.message.contains("not a run directory")),
            "{:?}",
            run.problems
        );
    }

    #[test]
    fn a_trial_without_result_is_incomplete_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("trials/t1/oracle/1");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(t.join("result.json"), b"{\"task\": {\"id\": \"t1\"").unwrap();
        let u = dir.path().join("trials/t2/oracle/1");
        std::fs::create_dir_all(&u).unwrap();
        let run = load_run(dir.path());
        assert_eq!(run.trials.len(), 2);
        assert!(run.trials.iter().all(|t| t.status == "incomplete"));
        let paths: Vec<&str> = run.problems.iter().map(|p| p.path.as_str()).collect();
        assert!(
            paths.contains(&"trials/t1/oracle/1/result.json"),
            "{paths:?}"
        );
        assert!(
            paths.contains(&"trials/t2/oracle/1/result.json"),
            "{paths:?}"
        );
    }

    #[test]
    fn a_result_of_another_version_keeps_its_status() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("trials/t1/agent-x/1");
        std::fs::create_dir_all(&t).unwrap();
        std::fs::write(
            t.join("result.json"),
            br#"{"task": {"id": "t1", "category": "finance"}, "agent": "agent x", "status": "passed", "score": 3}"#,
        )
        .unwrap();
        let run = load_run(dir.path());
        assert_eq!(run.trials[0].status, "passed");
        assert_eq!(run.trials[0].agent, "agent x");
        assert_eq!(run.trials[0].category, "finance");
        assert!(
            run.problems
                .iter()
                .any(|p| p.message.contains("another Bureau version"))
        );
    }

    #[test]
    fn a_fifo_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_regular(&fifo, 10).is_err());
    }
}
