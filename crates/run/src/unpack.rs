//! `bureau unpack`: a packed trial's trees (its `trial.zip`) written out as files again, for a
//! person who wants to look at them with other tools. Every reader of Bureau reads both
//! layouts, so unpacking changes nothing for `rescore`, `report` or the viewer.

use std::path::{Path, PathBuf};

use bureau_world::trial_files::{self, ARCHIVE, TrialFilesError};

use crate::rundir::{ATTEMPTS, RESULT_JSON, TRIALS, sorted_dirs};

/// Why unpacking failed.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error(
        "{0} is neither a run directory (with trials/) nor a trial directory (with result.json or {ARCHIVE}) — give the --out of `bureau run` or one of its trials/<task>/<agent>/<epoch>"
    )]
    NotATrial(PathBuf),
    #[error("--to takes one trial directory, not {0} paths or a run directory")]
    ToNeedsOneTrial(usize),
    #[error(transparent)]
    Files(#[from] TrialFilesError),
    #[error(transparent)]
    Run(#[from] crate::RunError),
}

/// One trial directory unpacked: where, and how many files were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unpacked {
    pub dir: PathBuf,
    pub files: usize,
}

fn is_trial(dir: &Path) -> bool {
    dir.join(RESULT_JSON).is_file()
        || std::fs::symlink_metadata(dir.join(ARCHIVE)).is_ok()
        || dir.join(ATTEMPTS).is_dir()
}

/// The trial directories of `path` (a run directory, or one trial) and of their earlier
/// attempts, sorted.
fn trial_dirs(path: &Path) -> Result<Vec<PathBuf>, UnpackError> {
    let mut trials = Vec::new();
    if path.join(TRIALS).is_dir() {
        for task in sorted_dirs(&path.join(TRIALS))? {
            for agent in sorted_dirs(&task)? {
                trials.extend(sorted_dirs(&agent)?);
            }
        }
    } else if is_trial(path) {
        trials.push(path.to_path_buf());
    } else {
        return Err(UnpackError::NotATrial(path.to_path_buf()));
    }
    let mut out = Vec::new();
    for t in trials {
        let attempts = sorted_dirs(&t.join(ATTEMPTS))?;
        out.push(t);
        out.extend(attempts);
    }
    Ok(out)
}

/// Unpack every trial of `paths` (run directories or trial directories) in place: each
/// archive's entries become the directories they were, and the archive is deleted. With
/// `to`: copy the one trial directory in `paths` (its plain files and its archive's
/// entries, not its earlier attempts) into `to`, a new or empty directory, leaving the trial
/// as it is. Trials without an archive are left alone (0 files).
pub fn unpack(paths: &[PathBuf], to: Option<&Path>) -> Result<Vec<Unpacked>, UnpackError> {
    if let Some(to) = to {
        let [trial] = paths else {
            return Err(UnpackError::ToNeedsOneTrial(paths.len()));
        };
        if trial.join(TRIALS).is_dir() {
            return Err(UnpackError::ToNeedsOneTrial(1));
        }
        if !is_trial(trial) {
            return Err(UnpackError::NotATrial(trial.clone()));
        }
        let files = trial_files::unpack_to(trial, to)?;
        return Ok(vec![Unpacked {
            dir: to.to_path_buf(),
            files,
        }]);
    }
    let mut done = Vec::new();
    for path in paths {
        for dir in trial_dirs(path)? {
            let files = trial_files::unpack_in_place(&dir)?;
            done.push(Unpacked { dir, files });
        }
    }
    Ok(done)
}
