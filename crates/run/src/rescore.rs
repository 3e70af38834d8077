//! Re-scoring a finished run from what it stored, without running any agent again.
//!
//! For every finished trial, the world of each turn is restored from `snapshots/turn-<n>.json`
//! (file contents from the trial's `world/blobs/`; both read through [`TrialFiles`], from the
//! trial's archive or, in a run written before it, from plain files), and that turn's rubric items are evaluated
//! with the trajectory as it stood after the turn; `final` items run on the last turn's world
//! with the whole trajectory. The tasks and checks are loaded afresh, so a fixed or stricter
//! check applies to old runs. Verdicts, results, `summary.json` and `report.md` are rewritten;
//! each trial keeps a `rescore.json` with what changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bureau_check::summary::Summary;
use bureau_check::{CheckLimits, CheckProgram, evaluate_judged};
use bureau_core::result::{DepGraphScore, TrialResult, TrialStatus};
use bureau_core::task::Task;
use bureau_core::trajectory::Step;
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_world::trial_files::TrialFiles;
use bureau_world::{Snapshot, World};
use serde::{Deserialize, Serialize};

use crate::rundir::{
    self, RESULT_JSON, RUN_JSON, TRAJECTORY_JSONL, TRIALS, VERDICTS_JSON, read_json, sorted_dirs,
};
use crate::trial::{broken_checks, scored};
use crate::{RunError, RunManifest, load_with_checks, write_summary};

/// The file each re-scored trial gets.
pub const RESCORE_JSON: &str = "rescore.json";

/// What to re-score against.
#[derive(Clone, Default)]
pub struct RescoreOptions {
    /// Task or suite paths to load the tasks from; default: the targets in `run.json`
    /// (relative to the directory `bureau run` was started in).
    pub targets: Option<Vec<String>>,
    pub limits: CheckLimits,
    /// The judge of `judge = ...` items (use the run's judge with the run's `judge-cache` to
    /// get the run's verdicts back without model calls).
    pub judge: Option<std::sync::Arc<dyn bureau_check::Judge>>,
}

/// One item whose verdict changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedVerdict {
    pub id: String,
    /// `None` when the item did not exist before (or no longer exists).
    pub before: Option<VerdictStatus>,
    pub after: Option<VerdictStatus>,
}

/// `rescore.json`: what re-scoring changed in one trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RescoreRecord {
    pub status_before: TrialStatus,
    pub status_after: TrialStatus,
    pub changed: Vec<ChangedVerdict>,
}

#[derive(Debug)]
pub struct RescoreReport {
    /// Trials whose verdicts were recomputed.
    pub rescored: usize,
    /// Of those, trials with at least one changed verdict.
    pub trials_changed: usize,
    /// Verdicts that changed, over all trials.
    pub verdicts_changed: usize,
    /// Trials whose status changed.
    pub status_changed: usize,
    /// Trials left as they were: (trial directory, why).
    pub skipped: Vec<(PathBuf, String)>,
    pub summary: Summary,
}

/// Re-score every finished trial of the run directory `out`.
pub fn rescore(out: &Path, opts: &RescoreOptions) -> Result<RescoreReport, RunError> {
    let manifest: RunManifest = read_json(&out.join(RUN_JSON))?;
    let targets = opts
        .targets
        .clone()
        .unwrap_or_else(|| manifest.targets.clone());
    let plan = manifest.variants.map(|v| v.plan()).unwrap_or_default();
    let tasks: BTreeMap<String, (Task, Option<CheckProgram>)> = load_with_checks(&targets, &plan)
        .map_err(RunError::Tasks)?
        .into_iter()
        .map(|(t, p)| (t.id.clone(), (t, p)))
        .collect();

    let (mut rescored, mut trials_changed, mut verdicts_changed, mut status_changed) = (0, 0, 0, 0);
    let mut skipped = Vec::new();
    let trials = out.join(TRIALS);
    for task_dir in sorted_dirs(&trials)? {
        for agent_dir in sorted_dirs(&task_dir)? {
            for trial in sorted_dirs(&agent_dir)? {
                if !trial.join(RESULT_JSON).is_file() {
                    continue;
                }
                match rescore_trial(&trial, &tasks, &opts.limits, opts.judge.as_deref())? {
                    Ok(record) => {
                        rescored += 1;
                        if !record.changed.is_empty() {
                            trials_changed += 1;
                            verdicts_changed += record.changed.len();
                        }
                        if record.status_before != record.status_after {
                            status_changed += 1;
                        }
                    }
                    Err(why) => skipped.push((trial, why)),
                }
            }
        }
    }
    Ok(RescoreReport {
        rescored,
        trials_changed,
        verdicts_changed,
        status_changed,
        skipped,
        summary: write_summary(out)?,
    })
}

/// Re-score one trial. The outer error is an I/O failure writing the results; the inner one
/// says why the trial cannot be re-scored (it is then left untouched).
fn rescore_trial(
    trial: &Path,
    tasks: &BTreeMap<String, (Task, Option<CheckProgram>)>,
    limits: &CheckLimits,
    judge: Option<&dyn bureau_check::Judge>,
) -> Result<Result<RescoreRecord, String>, RunError> {
    let mut result: TrialResult = read_json(&trial.join(RESULT_JSON))?;
    let Some((task, program)) = tasks.get(&result.task.id) else {
        return Ok(Err(format!(
            "task `{}` is not among the tasks loaded for re-scoring",
            result.task.id
        )));
    };
    let old: Vec<Verdict> = if trial.join(VERDICTS_JSON).is_file() {
        read_json(&trial.join(VERDICTS_JSON))?
    } else {
        Vec::new()
    };
    let (verdicts, depgraph) = match recompute(trial, task, program.as_ref(), limits, judge) {
        Ok(v) => v,
        Err(why) => return Ok(Err(why)),
    };
    result.depgraph = depgraph;
    // ---- feedback rounds: every round's score again, from its stored world ----
    if let Some(record) = result.feedback.as_mut()
        && let Err(why) = rescore_rounds(
            trial,
            task,
            program.as_ref(),
            limits,
            judge,
            record,
            &verdicts,
        )
    {
        return Ok(Err(why));
    }

    let status_before = result.status;
    match broken_checks(&verdicts) {
        Some(reason) => {
            result.status = TrialStatus::Error;
            result.error = Some(reason);
            result.score = None;
        }
        None => {
            let (status, score) = scored(task, &verdicts);
            result.status = status;
            result.error = None;
            result.score = score;
        }
    }
    let record = RescoreRecord {
        status_before,
        status_after: result.status,
        changed: diff(&old, &verdicts),
    };
    let entries =
        bureau_core::verdict::verdict_entries(task, &result.agent, result.epoch, &verdicts);
    rundir::write_json(&trial.join(VERDICTS_JSON), &entries)?;
    rundir::write_json(&trial.join(RESCORE_JSON), &record)?;
    // result.json last: it is what marks the trial finished.
    rundir::write_json(&trial.join(RESULT_JSON), &result)?;
    Ok(Ok(record))
}

/// Every verdict of the task, recomputed from the trial's snapshots and trajectory, and the
/// dependency-graph figures (`outputs.json` and `depgraph.json` are rewritten).
fn recompute(
    trial: &Path,
    task: &Task,
    program: Option<&CheckProgram>,
    limits: &CheckLimits,
    judge: Option<&dyn bureau_check::Judge>,
) -> Result<(Vec<Verdict>, Option<DepGraphScore>), String> {
    let steps = read_trajectory(&trial.join(TRAJECTORY_JSONL))?;
    let files = TrialFiles::open(trial).map_err(|e| e.to_string())?;
    let mut snapshots = Vec::new();
    for turn in &task.turns {
        let rel = format!("snapshots/turn-{}.json", turn.index);
        if !files.exists(&rel) {
            return Err(format!(
                "turn {} has no snapshot (the trial ended before it, or the task gained turns)",
                turn.index
            ));
        }
        snapshots.push(read_snapshot(&files, &rel)?);
    }
    let scratch = tempfile::Builder::new()
        .prefix(".rescore-")
        .tempdir_in(trial)
        .map_err(|e| format!("{}: {e}", trial.display()))?;
    let blobs = blobs_dir(&files, scratch.path())?;
    let mut world = World::build(task, &scratch.path().join("world"))
        .map_err(|e| format!("building the task's world: {e}"))?;
    let mut verdicts = Vec::new();
    for (turn, snap) in task.turns.iter().zip(&snapshots) {
        world
            .restore_from(snap, &blobs)
            .map_err(|e| format!("restoring turn {}: {e}", turn.index))?;
        let so_far: Vec<Step> = steps
            .iter()
            .filter(|s| s.turn <= turn.index)
            .cloned()
            .collect();
        verdicts.extend(evaluate_judged(
            task,
            program,
            &world,
            &so_far,
            TurnRef::Turn(turn.index),
            limits,
            judge,
        ));
    }
    verdicts.extend(evaluate_judged(
        task,
        program,
        &world,
        &steps,
        TurnRef::Final,
        limits,
        judge,
    ));
    let depgraph = crate::trial::record_outputs(task, &world, &steps, trial, true)?;
    Ok((verdicts, depgraph))
}

/// Recompute the per-round scores of a trial with feedback rounds: round r < last of turn n
/// from `snapshots/turn-<n>.round-<r>.json` and the trajectory up to the turn's (r+1)-th
/// `feedback` step; the last round from the trial's (re-scored) final verdicts.
fn rescore_rounds(
    trial: &Path,
    task: &Task,
    program: Option<&CheckProgram>,
    limits: &CheckLimits,
    judge: Option<&dyn bureau_check::Judge>,
    record: &mut bureau_core::result::FeedbackRecord,
    finals: &[Verdict],
) -> Result<(), String> {
    use bureau_core::trajectory::StepKind;
    let steps = read_trajectory(&trial.join(TRAJECTORY_JSONL))?;
    let last = task.turns.last().map(|t| t.index);
    let files = TrialFiles::open(trial).map_err(|e| e.to_string())?;
    let scratch = tempfile::Builder::new()
        .prefix(".rescore-rounds-")
        .tempdir_in(trial)
        .map_err(|e| format!("{}: {e}", trial.display()))?;
    let blobs = blobs_dir(&files, scratch.path())?;
    let mut world = World::build(task, &scratch.path().join("world"))
        .map_err(|e| format!("building the task's world: {e}"))?;
    let threshold = record.threshold;
    for t in &mut record.turns {
        let n = t.turn;
        let in_unit = |v: &&Verdict| {
            v.turn == TurnRef::Turn(n) || (Some(n) == last && v.turn == TurnRef::Final)
        };
        let count = t.rounds.len();
        for (r, round) in t.rounds.iter_mut().enumerate() {
            let unit: Vec<Verdict> = if r + 1 == count {
                finals.iter().filter(in_unit).cloned().collect()
            } else {
                let snap = read_snapshot(&files, &format!("snapshots/turn-{n}.round-{r}.json"))?;
                world
                    .restore_from(&snap, &blobs)
                    .map_err(|e| format!("restoring turn {n} round {r}: {e}"))?;
                // Everything before the user's (r+1)-th message on this turn.
                let cut = steps
                    .iter()
                    .position(|s| {
                        s.turn == n
                            && matches!(s.kind, StepKind::Feedback { round, .. } if round as usize == r + 1)
                    })
                    .ok_or_else(|| {
                        format!("turn {n}: the trajectory has no feedback step for round {}", r + 1)
                    })?;
                let so_far = &steps[..cut];
                let mut unit = evaluate_judged(
                    task,
                    program,
                    &world,
                    so_far,
                    TurnRef::Turn(n),
                    limits,
                    judge,
                );
                if Some(n) == last {
                    unit.extend(evaluate_judged(
                        task,
                        program,
                        &world,
                        so_far,
                        TurnRef::Final,
                        limits,
                        judge,
                    ));
                }
                unit
            };
            *round = crate::feedback::round_score(&unit, threshold);
        }
    }
    Ok(())
}

/// The largest snapshot read (a generated workspace of 5,000 files is under 1 MB).
const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;
/// The largest blob restored.
const MAX_BLOB_BYTES: u64 = 4 << 30;

/// The snapshot `rel` of a stored trial (packed or not).
fn read_snapshot(files: &TrialFiles, rel: &str) -> Result<Snapshot, String> {
    let bytes = files
        .read(rel, MAX_SNAPSHOT_BYTES)
        .map_err(|e| format!("{}: {e}", files.dir().display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", files.dir().join(rel).display()))
}

/// The trial's `world/blobs` as a directory: copied out of its archive into `scratch` when
/// the trial is packed.
fn blobs_dir(files: &TrialFiles, scratch: &Path) -> Result<PathBuf, String> {
    if !files.is_packed() {
        return Ok(files.dir().join("world").join("blobs"));
    }
    let to = scratch.join("trial-blobs");
    files
        .copy_tree("world/blobs", &to, MAX_BLOB_BYTES)
        .map_err(|e| format!("{}: {e}", files.dir().display()))?;
    Ok(to)
}

fn read_trajectory(path: &Path) -> Result<Vec<Step>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

fn diff(old: &[Verdict], new: &[Verdict]) -> Vec<ChangedVerdict> {
    let before: BTreeMap<&str, VerdictStatus> =
        old.iter().map(|v| (v.id.as_str(), v.status)).collect();
    let after: BTreeMap<&str, VerdictStatus> =
        new.iter().map(|v| (v.id.as_str(), v.status)).collect();
    let mut ids: Vec<&str> = before.keys().chain(after.keys()).copied().collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .filter(|id| before.get(id) != after.get(id))
        .map(|id| ChangedVerdict {
            id: id.to_string(),
            before: before.get(id).copied(),
            after: after.get(id).copied(),
        })
        .collect()
}
