//! Two scorings of the same trajectories, side by side: every trial whose status or item
//! verdicts differ between two run directories (e.g. a run scored with an import's typed
//! checks and a copy rescored with its `--strict-original` checks).

use std::collections::BTreeMap;
use std::path::Path;

use bureau_core::verdict::VerdictStatus;

use crate::RunError;
use crate::rundir::load_trials;

/// One trial that two run directories score differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialDiff {
    pub task: String,
    pub agent: String,
    pub epoch: u32,
    pub status_a: String,
    pub status_b: String,
    /// (item id, verdict in a, verdict in b or "absent").
    pub items: Vec<(String, String, String)>,
}

/// What [`compare_runs`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comparison {
    /// Trials in both run directories.
    pub common: usize,
    /// Trials in only one of them.
    pub unmatched: usize,
    pub diffs: Vec<TrialDiff>,
}

fn status(s: VerdictStatus) -> &'static str {
    match s {
        VerdictStatus::Passed => "passed",
        VerdictStatus::Failed => "failed",
        VerdictStatus::Error => "error",
    }
}

type Scored = BTreeMap<(String, String, u32), (String, BTreeMap<String, String>)>;

fn scored(dir: &Path) -> Result<Scored, RunError> {
    let mut out = BTreeMap::new();
    for (result, verdicts) in load_trials(dir)? {
        let items = verdicts
            .iter()
            .map(|v| (v.id.clone(), status(v.status).to_string()))
            .collect();
        out.insert(
            (result.task.id.clone(), result.agent.clone(), result.epoch),
            (result.status.as_str().to_string(), items),
        );
    }
    Ok(out)
}

/// Compare the stored verdicts of run directories `a` and `b`, trial by trial (task, agent,
/// epoch), in sorted order.
pub fn compare_runs(a: &Path, b: &Path) -> Result<Comparison, RunError> {
    let ra = scored(a)?;
    let rb = scored(b)?;
    let mut c = Comparison::default();
    for (key, (status_a, items_a)) in &ra {
        let Some((status_b, items_b)) = rb.get(key) else {
            c.unmatched += 1;
            continue;
        };
        c.common += 1;
        let mut items: Vec<(String, String, String)> = items_a
            .iter()
            .filter(|(id, s)| items_b.get(*id) != Some(*s))
            .map(|(id, s)| {
                let other = items_b.get(id).cloned().unwrap_or_else(|| "absent".into());
                (id.clone(), s.clone(), other)
            })
            .collect();
        items.extend(
            items_b
                .iter()
                .filter(|(id, _)| !items_a.contains_key(*id))
                .map(|(id, s)| (id.clone(), "absent".to_string(), s.clone())),
        );
        if status_a != status_b || !items.is_empty() {
            c.diffs.push(TrialDiff {
                task: key.0.clone(),
                agent: key.1.clone(),
                epoch: key.2,
                status_a: status_a.clone(),
                status_b: status_b.clone(),
                items,
            });
        }
    }
    c.unmatched += rb.keys().filter(|k| !ra.contains_key(*k)).count();
    Ok(c)
}
