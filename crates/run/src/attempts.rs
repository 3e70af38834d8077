//! A trial's directory through its attempts: each attempt played into `attempts/<k>/`, its
//! trees packed into `trial.zip`, retried while it errors, and the last one moved into place
//! under `result.json` — by the process holding the trial's claim ([`crate::claim`]).

use std::path::{Path, PathBuf};

use bureau_check::CheckProgram;
use bureau_core::result::{AttemptRecord, TrialResult, TrialStatus};
use bureau_core::task::Task;

use crate::rundir::{self, ATTEMPT_JSON, ATTEMPTS, RESULT_JSON, io_err};
use crate::trial::{AttemptOf, AttemptOutcome, Scoring, run_attempt};
use crate::{AgentFactory, RunError};

/// One trial of a run.
pub(crate) struct TrialJob<'a> {
    pub task: &'a Task,
    pub program: Option<&'a CheckProgram>,
    pub agent_spec: &'a str,
    pub agent_name: &'a str,
    pub epoch: u32,
    pub dir: PathBuf,
}

/// Run a trial to its end: attempts until one is not `error` or `max_attempts` new attempts
/// were made; then move the final attempt into the trial directory and write `result.json`
/// (last, atomically). Attempt numbers continue after those already in `attempts/`.
/// `Ok(None)` when a signal interrupted it ([`bureau_core::interrupt`]): the attempt is
/// recorded as interrupted and the trial left without a result. `Err` only when the run
/// directory itself cannot be written.
pub(crate) fn run_trial(
    job: &TrialJob<'_>,
    factory: &AgentFactory<'_>,
    scoring: &Scoring<'_>,
    max_attempts: u32,
    claim: Option<&crate::claim::Claim>,
) -> Result<Option<TrialResult>, RunError> {
    // The trial's own computing holds a CPU permit (`bureau_core::cpu`); what it waits for
    // (the model, a harness) gives it up.
    bureau_core::cpu::busy(|| trial_attempts(job, factory, scoring, max_attempts, claim))
}

fn trial_attempts(
    job: &TrialJob<'_>,
    factory: &AgentFactory<'_>,
    scoring: &Scoring<'_>,
    max_attempts: u32,
    claim: Option<&crate::claim::Claim>,
) -> Result<Option<TrialResult>, RunError> {
    let attempts_dir = job.dir.join(ATTEMPTS);
    let mut k = rundir::attempt_numbers(&job.dir)?
        .last()
        .copied()
        .unwrap_or(0);
    let mut made = 0;
    loop {
        k += 1;
        made += 1;
        let dir = attempts_dir.join(k.to_string());
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let mut outcome = run_attempt(
            job.task,
            job.program,
            factory,
            AttemptOf {
                spec: job.agent_spec,
                agent: job.agent_name,
                epoch: job.epoch,
            },
            &dir,
            scoring,
        );
        pack_attempt(&dir, &mut outcome);
        let record = AttemptRecord {
            attempt: k,
            status: outcome.status,
            error: outcome.error.clone(),
            dir: format!("{ATTEMPTS}/{k}"),
        };
        // A signal during the attempt: whatever it ended as, it is not the agent's result.
        // It stays in attempts/ marked as interrupted, without a result.json, so a resume
        // runs the trial again.
        if let Some(signal) = bureau_core::interrupt::requested() {
            let record = AttemptRecord {
                attempt: k,
                status: TrialStatus::Error,
                error: Some(format!(
                    "interrupted: the run was stopped by {} during this attempt",
                    bureau_core::interrupt::name(signal)
                )),
                dir: format!("{ATTEMPTS}/{k}"),
            };
            rundir::write_json(&dir.join(ATTEMPT_JSON), &record)?;
            return Ok(None);
        }
        let last = outcome.status != TrialStatus::Error
            || !outcome.retryable
            || made >= max_attempts.max(1);
        // Taken over by another process (this one was presumed dead): its result is the
        // trial's; this attempt stays in attempts/ with its record and writes nothing more.
        let taken_over = last && claim.is_some_and(|c| !c.still_mine());
        // The last attempt needs no record of its own: `result.json` is written in the same
        // step that moves it into place. (Killed before that, it is an attempt without a
        // record, which a resume takes for interrupted — as it was.)
        if !last || taken_over {
            rundir::write_json(&dir.join(ATTEMPT_JSON), &record)?;
        }
        if taken_over {
            return Ok(None);
        }
        if last {
            // Moving and deleting files: little CPU, and a deletion can wait on the disk (a
            // file system mounted with `discard`), so no CPU permit is held for it.
            return bureau_core::cpu::waiting(|| finalize(job, k, outcome, claim));
        }
    }
}

/// Pack the attempt's trees (snapshots, world, deliverables, mail, calendar) into its
/// archive, before `attempt.json` or the trial's `result.json` marks it done: a process killed
/// while packing leaves the trees and at most a temporary file, never an archive taken for
/// whole. A failure to pack is the attempt's error (the trees stay as they were).
fn pack_attempt(dir: &Path, outcome: &mut AttemptOutcome) {
    let packed = match &outcome.trees {
        None => bureau_world::trial_files::pack(dir),
        Some(trees) => {
            let packed = bureau_world::trial_files::pack_from(dir, trees);
            // What is left of the scratch trees (everything, when packing failed) goes: the
            // archive or nothing is the attempt's record.
            bureau_core::cpu::waiting(|| {
                let _ = std::fs::remove_dir_all(trees);
            });
            packed
        }
    };
    if let Err(e) = packed
        && outcome.error.is_none()
    {
        outcome.status = TrialStatus::Error;
        outcome.error = Some(format!("packing the trial's files: {e}"));
        outcome.score = None;
        outcome.retryable = true;
    }
}

fn finalize(
    job: &TrialJob<'_>,
    k: u32,
    outcome: AttemptOutcome,
    claim: Option<&crate::claim::Claim>,
) -> Result<Option<TrialResult>, RunError> {
    let trial = &job.dir;
    let attempt_dir = trial.join(ATTEMPTS).join(k.to_string());
    // Leftovers of an earlier finalisation that was interrupted before its result.json.
    for entry in std::fs::read_dir(trial).map_err(io_err(trial))? {
        let entry = entry.map_err(io_err(trial))?;
        if entry.file_name() == ATTEMPTS
            || entry
                .file_name()
                .to_str()
                .is_some_and(crate::claim::is_claim_file)
        {
            continue;
        }
        let p = entry.path();
        let removed = if entry.file_type().map_err(io_err(&p))?.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        removed.map_err(io_err(&p))?;
    }
    for entry in std::fs::read_dir(&attempt_dir).map_err(io_err(&attempt_dir))? {
        let entry = entry.map_err(io_err(&attempt_dir))?;
        let from = entry.path();
        if entry.file_name() == ATTEMPT_JSON {
            std::fs::remove_file(&from).map_err(io_err(&from))?;
            continue;
        }
        let to = trial.join(entry.file_name());
        std::fs::rename(&from, &to).map_err(io_err(&from))?;
    }

    let mut attempts = Vec::new();
    for j in rundir::attempt_numbers(trial)? {
        if j == k {
            continue;
        }
        let record_path = trial.join(ATTEMPTS).join(j.to_string()).join(ATTEMPT_JSON);
        let record = if record_path.is_file() {
            rundir::read_json::<AttemptRecord>(&record_path)?
        } else {
            AttemptRecord {
                attempt: j,
                status: TrialStatus::Error,
                error: Some("interrupted: the run stopped during this attempt".into()),
                dir: format!("{ATTEMPTS}/{j}"),
            }
        };
        attempts.push(record);
    }
    attempts.push(AttemptRecord {
        attempt: k,
        status: outcome.status,
        error: outcome.error.clone(),
        dir: ".".into(),
    });

    let result = TrialResult {
        task: job.task.meta(),
        agent: job.agent_name.to_string(),
        epoch: job.epoch,
        status: outcome.status,
        error: outcome.error,
        score: outcome.score,
        usage: outcome.usage,
        wall_seconds: outcome.wall_seconds,
        attempts,
        depgraph: outcome.depgraph,
        feedback: outcome.feedback,
    };
    // Taken over meanwhile (a rare race: this process was presumed dead): no second result.
    if claim.is_some_and(|c| !c.still_mine()) {
        return Ok(None);
    }
    rundir::write_json(&trial.join(RESULT_JSON), &result)?;
    // Housekeeping after the result is safe: the attempt directory is empty now.
    let _ = std::fs::remove_dir(&attempt_dir);
    let _ = std::fs::remove_dir(trial.join(ATTEMPTS));
    Ok(Some(result))
}
