//! Claiming a trial directory before running it, so that two processes never run the same
//! trial into one run directory — shards on several machines over shared storage, a shard
//! resubmitted while its first instance still runs, a resume started beside a live run.
//!
//! A claim is a file `claim.<generation>.json` in the trial directory, created atomically
//! (written beside, then hard-linked: the link fails when the name exists, also on NFS). The
//! highest generation is the claim in force. The process holding it refreshes the file's
//! modification time every [`HEARTBEAT`]; a claim is stale when its holder is known to be
//! dead (same host, no such process) or its file has not been refreshed for the run's
//! stale period ([`STALE_AFTER`] by default). A stale claim is taken over by creating the next
//! generation, which only one process can do. Before a trial's result is written its holder
//! checks that no later generation exists: a process whose claim was taken over (it was
//! presumed dead) drops its result instead of writing a second one.
//!
//! Claims are removed once the trial's `result.json` is written; a trial with a result is
//! done whatever claim files remain.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::RunError;
use crate::rundir::{self, io_err};

/// How often a live claim's file is refreshed.
pub const HEARTBEAT: Duration = Duration::from_secs(30);
/// A claim not refreshed for this long is stale (its holder is presumed dead).
pub const STALE_AFTER: Duration = Duration::from_secs(300);

const PREFIX: &str = "claim.";
const SUFFIX: &str = ".json";

/// What a claim file records about its holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRecord {
    pub host: String,
    pub pid: u32,
    pub generation: u64,
}

/// A claim this process holds.
#[derive(Debug)]
pub struct Claim {
    trial: PathBuf,
    path: PathBuf,
    generation: u64,
}

/// The outcome of trying to claim a trial.
#[derive(Debug)]
pub enum Claimed {
    Mine(Claim),
    /// Another live process holds it.
    Held(ClaimRecord),
}

/// This machine's name, as claims record it.
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

fn claim_path(trial: &Path, generation: u64) -> PathBuf {
    trial.join(format!("{PREFIX}{generation}{SUFFIX}"))
}

/// Whether `name` is a claim file's name (other code that cleans a trial directory keeps them).
pub fn is_claim_file(name: &str) -> bool {
    name.strip_prefix(PREFIX)
        .and_then(|r| r.strip_suffix(SUFFIX))
        .is_some_and(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
}

/// The generations of the claim files in `trial`, ascending.
fn generations(trial: &Path) -> Result<Vec<u64>, RunError> {
    let entries = match std::fs::read_dir(trial) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err(trial)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_err(trial))?;
        if let Some(g) = entry
            .file_name()
            .to_str()
            .filter(|n| is_claim_file(n))
            .and_then(|n| n[PREFIX.len()..n.len() - SUFFIX.len()].parse().ok())
        {
            out.push(g);
        }
    }
    out.sort_unstable();
    Ok(out)
}

/// The claim in force on `trial` and whether its holder is alive, if there is one.
pub fn current(
    trial: &Path,
    stale_after: Duration,
) -> Result<Option<(ClaimRecord, bool)>, RunError> {
    let Some(&g) = generations(trial)?.last() else {
        return Ok(None);
    };
    let path = claim_path(trial, g);
    // An unreadable claim (it can only be damaged: claims are linked whole) is stale.
    let record = rundir::read_json::<ClaimRecord>(&path).ok();
    let modified = std::fs::symlink_metadata(&path)
        .and_then(|m| m.modified())
        .ok();
    let fresh = modified.is_some_and(|m| {
        SystemTime::now()
            .duration_since(m)
            .map(|age| age < stale_after)
            // A clock behind the file's: treat as fresh.
            .unwrap_or(true)
    });
    let record = record.unwrap_or(ClaimRecord {
        host: String::new(),
        pid: 0,
        generation: g,
    });
    let alive =
        fresh && (record.host != host() || Path::new(&format!("/proc/{}", record.pid)).exists());
    Ok(Some((record, alive)))
}

/// Claim `trial` for this process: create the first claim, or take over a stale one.
pub fn claim(trial: &Path, stale_after: Duration) -> Result<Claimed, RunError> {
    std::fs::create_dir_all(trial).map_err(io_err(trial))?;
    // Each round either wins, finds a live holder, or lost a race and looks again.
    for _ in 0..8 {
        let next = match current(trial, stale_after)? {
            None => 1,
            Some((record, true)) => return Ok(Claimed::Held(record)),
            Some((record, false)) => record.generation.max(1) + 1,
        };
        let path = claim_path(trial, next);
        let record = ClaimRecord {
            host: host(),
            pid: std::process::id(),
            generation: next,
        };
        if rundir::create_json(&path, &record)? {
            // Older generations are history now.
            for g in generations(trial)?.into_iter().filter(|&g| g < next) {
                let _ = std::fs::remove_file(claim_path(trial, g));
            }
            return Ok(Claimed::Mine(Claim {
                trial: trial.to_path_buf(),
                path,
                generation: next,
            }));
        }
    }
    // Always racing: someone else is taking it right now.
    match current(trial, stale_after)? {
        Some((record, _)) => Ok(Claimed::Held(record)),
        None => Err(RunError::Io {
            path: trial.to_path_buf(),
            source: std::io::Error::other("cannot claim the trial: its claim files keep changing"),
        }),
    }
}

impl Claim {
    /// Whether the claim is still in force: no later generation took it over.
    pub fn still_mine(&self) -> bool {
        self.path.is_file()
            && generations(&self.trial)
                .map(|gs| gs.last() == Some(&self.generation))
                .unwrap_or(false)
    }

    /// Refresh the claim (its file's modification time).
    pub fn touch(&self) {
        touch(&self.path);
    }

    /// The claim file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Give the claim up (after the trial's result is written, or when not running it).
    pub fn release(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn touch(path: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().write(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// The claims a run holds, refreshed together by one heartbeat thread.
#[derive(Debug, Default)]
pub struct Heartbeat {
    held: Mutex<BTreeSet<PathBuf>>,
}

impl Heartbeat {
    pub fn hold(&self, claim: &Claim) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(claim.path.clone());
    }

    pub fn drop_claim(&self, claim: &Claim) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&claim.path);
    }

    /// Refresh every held claim.
    pub fn beat(&self) {
        let held: Vec<PathBuf> = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        for p in held {
            touch(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(path: &Path, by: Duration) {
        let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - by).unwrap();
    }

    #[test]
    fn a_live_claim_is_held_and_a_released_one_can_be_taken() {
        let dir = tempfile::tempdir().unwrap();
        let trial = dir.path().join("t");
        let Claimed::Mine(mine) = claim(&trial, STALE_AFTER).unwrap() else {
            panic!("the first claim is mine")
        };
        assert!(mine.still_mine());
        // This process is alive and the claim fresh: a second claimant is refused.
        match claim(&trial, STALE_AFTER).unwrap() {
            Claimed::Held(r) => {
                assert_eq!(r.pid, std::process::id());
                assert_eq!(r.generation, 1);
            }
            Claimed::Mine(_) => panic!("a live claim was taken"),
        }
        mine.release();
        assert!(
            matches!(claim(&trial, STALE_AFTER).unwrap(), Claimed::Mine(c) if c.generation == 1)
        );
    }

    #[test]
    fn a_stale_claim_is_taken_over_once_and_its_holder_learns_it() {
        let dir = tempfile::tempdir().unwrap();
        let trial = dir.path().join("t");
        let Claimed::Mine(old) = claim(&trial, STALE_AFTER).unwrap() else {
            panic!()
        };
        // Not refreshed for longer than the stale period: presumed dead.
        age(old.path(), Duration::from_secs(600));
        let Claimed::Mine(new) = claim(&trial, STALE_AFTER).unwrap() else {
            panic!("a stale claim is taken over")
        };
        assert_eq!(new.generation, 2);
        assert!(new.still_mine());
        // The presumed-dead holder finds out before it writes a result.
        assert!(!old.still_mine());
        // The new claim is fresh: a third claimant is refused.
        assert!(
            matches!(claim(&trial, STALE_AFTER).unwrap(), Claimed::Held(r) if r.generation == 2)
        );
        // A heartbeat keeps a claim fresh.
        let beat = Heartbeat::default();
        beat.hold(&new);
        age(new.path(), Duration::from_secs(600));
        beat.beat();
        assert!(matches!(
            claim(&trial, STALE_AFTER).unwrap(),
            Claimed::Held(_)
        ));
    }

    #[test]
    fn a_claim_of_a_dead_process_on_this_host_is_stale_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let trial = dir.path().join("t");
        std::fs::create_dir_all(&trial).unwrap();
        // A pid no process has (above the kernel's pid_max).
        let dead = ClaimRecord {
            host: host(),
            pid: 4_194_305,
            generation: 3,
        };
        rundir::write_json(&claim_path(&trial, 3), &dead).unwrap();
        match claim(&trial, STALE_AFTER).unwrap() {
            Claimed::Mine(c) => assert_eq!(c.generation, 4),
            Claimed::Held(r) => panic!("a dead holder's claim was honoured: {r:?}"),
        }
        // Only the claim in force is left.
        assert_eq!(generations(&trial).unwrap(), vec![4]);
        // On another host the same claim would be honoured while fresh.
        let elsewhere = ClaimRecord {
            host: format!("{}-other", host()),
            pid: 4_194_305,
            generation: 5,
        };
        rundir::write_json(&claim_path(&trial, 5), &elsewhere).unwrap();
        assert!(
            matches!(claim(&trial, STALE_AFTER).unwrap(), Claimed::Held(r) if r.generation == 5)
        );
    }

    #[test]
    fn only_claim_file_names_are_claims() {
        assert!(is_claim_file("claim.1.json"));
        assert!(is_claim_file("claim.12.json"));
        for n in [
            "claim..json",
            "claim.x.json",
            "claim.1.json.tmp",
            "result.json",
            ".claim.1.json.h.1.0.new",
        ] {
            assert!(!is_claim_file(n), "{n}");
        }
    }

    #[test]
    fn racing_claimants_on_one_trial_get_exactly_one_claim() {
        let dir = tempfile::tempdir().unwrap();
        let trial = dir.path().join("t");
        let wins = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    if let Claimed::Mine(_) = claim(&trial, STALE_AFTER).unwrap() {
                        wins.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(wins.into_inner(), 1);
    }
}
