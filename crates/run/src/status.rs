//! `bureau status <run>`: how far a run is, per shard — the trials present, running or left,
//! computed from the run directory and the partition `run.json` implies.

use std::path::Path;

use serde::Serialize;

use crate::manifest::RunManifest;
use crate::rundir::{self, trial_dir};
use crate::shard;
use crate::{RunError, load_with_checks};

/// One shard's progress (the whole run is shard 1 of 1 when it is not sharded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShardStatus {
    pub k: u32,
    pub n: u32,
    /// Its trials.
    pub trials: usize,
    /// Trials with a readable result.json.
    pub done: usize,
    /// Trials begun (an attempt directory or a claim) without a result: running, or stopped.
    pub started: usize,
    /// Of those, the trials a live process holds a claim on ([`crate::claim`]): running now.
    pub running: usize,
    /// Of the done trials, those with status error.
    pub errors: usize,
}

/// A run's progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunStatus {
    pub trials: usize,
    pub done: usize,
    pub shards: Vec<ShardStatus>,
    /// Whether every trial has its result: the summary is final.
    pub complete: bool,
}

/// The progress of the run in `out`. The tasks are loaded from the targets recorded in
/// run.json (relative to the current directory, as the run was given them).
pub fn status(out: &Path) -> Result<RunStatus, RunError> {
    let manifest: RunManifest = rundir::read_json(&out.join(rundir::RUN_JSON))?;
    let plan = manifest.variants.map(|v| v.plan()).unwrap_or_default();
    let loaded = load_with_checks(&manifest.targets, &plan).map_err(RunError::Tasks)?;
    let mut agents: Vec<_> = manifest.agents.iter().collect();
    agents.sort_by(|a, b| a.spec.cmp(&b.spec));
    let mut trials = Vec::new();
    for (task, _) in loaded.iter().filter(|(t, _)| t.skip_reason.is_none()) {
        for agent in &agents {
            for epoch in 1..=manifest.epochs {
                trials.push((task, trial_dir(out, &task.id, &agent.dir, epoch)));
            }
        }
    }
    let n = manifest.shards.unwrap_or(1);
    let costs: Vec<u64> = trials.iter().map(|(t, _)| shard::trial_cost(t)).collect();
    let part = shard::partition(&costs, n);
    let mut shards: Vec<ShardStatus> = (1..=n)
        .map(|k| ShardStatus {
            k,
            n,
            trials: 0,
            done: 0,
            started: 0,
            running: 0,
            errors: 0,
        })
        .collect();
    for ((_, dir), s) in trials.iter().zip(part) {
        let st = &mut shards[s as usize - 1];
        st.trials += 1;
        let result = dir.join(rundir::RESULT_JSON);
        match rundir::read_json::<bureau_core::result::TrialResult>(&result) {
            Ok(r) => {
                st.done += 1;
                if r.status == bureau_core::result::TrialStatus::Error {
                    st.errors += 1;
                }
            }
            Err(_) => {
                let claim = crate::claim::current(dir, crate::claim::STALE_AFTER)
                    .ok()
                    .flatten();
                if claim.as_ref().is_some_and(|(_, alive)| *alive) {
                    st.running += 1;
                    st.started += 1;
                } else if claim.is_some() || dir.join("attempts").is_dir() {
                    st.started += 1;
                }
            }
        }
    }
    let total = trials.len();
    let done = shards.iter().map(|s| s.done).sum();
    Ok(RunStatus {
        trials: total,
        done,
        complete: done == total,
        shards,
    })
}

impl RunStatus {
    /// One line per shard and a closing line, for the terminal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for s in &self.shards {
            let state = if s.done == s.trials {
                "done".to_string()
            } else if s.started > 0 {
                let stopped = s.started - s.running;
                match (s.running, stopped) {
                    (r, 0) => format!("{r} running"),
                    (0, st) => {
                        format!("{st} begun and stopped without a result (resume the shard)")
                    }
                    (r, st) => format!("{r} running, {st} begun and stopped without a result"),
                }
            } else if s.done == 0 {
                "not started".to_string()
            } else {
                "partly done".to_string()
            };
            out.push_str(&format!(
                "shard {}/{}: {}/{} trials done{} — {state}\n",
                s.k,
                s.n,
                s.done,
                s.trials,
                if s.errors > 0 {
                    format!(" ({} error)", s.errors)
                } else {
                    String::new()
                }
            ));
        }
        out.push_str(&format!(
            "{}/{} trials done — {}\n",
            self.done,
            self.trials,
            if self.complete {
                "complete: the summary is final"
            } else {
                "not complete: a summary now is provisional"
            }
        ));
        out
    }
}
