//! Where a run's trials build their trees (issue 18, `bureau run --scratch`).
//!
//! A trial's world, snapshots and exports are written, read and deleted within the trial;
//! only their archive (`trial.zip`) is the run's record. On a disk that pays for every file
//! made and deleted — ext4 without a journal scans past every inode deleted in the last
//! minutes when it allocates one, and a file system mounted with `discard` trims every freed
//! block as it is deleted — building them there cost more than the trials' own work
//! (docs/BENCHMARKS.md). So by default ([`Scratch::Auto`]) the trees are built in memory,
//! in a directory of the run under `/dev/shm`, when that is a tmpfs with room for the run's
//! trials at once; the archives and records still go to the run directory.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use bureau_core::Task;

/// Where the trees are built (`--scratch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scratch {
    /// Under `/dev/shm` when it is a tmpfs with room enough ([`choose`]), else in place.
    #[default]
    Auto,
    /// In each attempt's own directory of the run.
    InPlace,
    /// Under this directory.
    Dir(PathBuf),
}

impl FromStr for Scratch {
    type Err = String;
    fn from_str(s: &str) -> Result<Scratch, String> {
        match s {
            "auto" => Ok(Scratch::Auto),
            "none" => Ok(Scratch::InPlace),
            "" => Err("give `auto`, `none` or a directory".into()),
            dir => Ok(Scratch::Dir(PathBuf::from(dir))),
        }
    }
}

/// The memory file system tried by [`Scratch::Auto`].
const SHM: &str = "/dev/shm";

/// Room kept free on the memory file system beyond the run's estimate.
const RESERVE: u64 = 256 << 20;

/// The run's scratch directory, deleted when dropped (the run's end), or `None` for in place.
/// `Err` only for a directory given with [`Scratch::Dir`] that cannot be used.
pub fn prepare(
    setting: &Scratch,
    tasks: &[&Task],
    workers: usize,
) -> Result<Option<tempfile::TempDir>, String> {
    let root = match setting {
        Scratch::InPlace => return Ok(None),
        Scratch::Dir(d) => d.clone(),
        Scratch::Auto => match choose(Path::new(SHM), tasks, workers) {
            Some(root) => root,
            None => return Ok(None),
        },
    };
    remove_stale(&root);
    match run_dir(&root) {
        Ok(dir) => Ok(Some(dir)),
        Err(e) if matches!(setting, Scratch::Dir(_)) => Err(format!(
            "--scratch {}: cannot make a directory there ({e}) — give a writable directory, or `--scratch none`",
            root.display()
        )),
        Err(_) => Ok(None),
    }
}

fn run_dir(root: &Path) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("bureau-run-{}.", std::process::id()))
        .tempdir_in(root)
}

/// `root` when it is a tmpfs with room for `workers` trials of the costliest of `tasks` at
/// once; `None` otherwise, or when a task has a generated workspace (thousands of files, on
/// replicas of their own: no estimate of their trees is safe).
pub fn choose(root: &Path, tasks: &[&Task], workers: usize) -> Option<PathBuf> {
    if tasks.iter().any(|t| t.workspace.is_some()) {
        return None;
    }
    let (is_tmpfs, free) = statfs(root)?;
    if !is_tmpfs {
        return None;
    }
    let largest = tasks.iter().map(|t| dir_bytes(&t.dir)).max().unwrap_or(0);
    // The world holds the task's files and their blobs; snapshots, mail and deliverables
    // come on top: three times the task, and a MiB.
    let per_trial = largest.saturating_mul(3).saturating_add(1 << 20);
    let need = (workers as u64)
        .saturating_mul(per_trial)
        .saturating_add(RESERVE);
    (free >= need).then(|| root.to_path_buf())
}

/// (whether `path` is on a tmpfs, its bytes free to this user).
fn statfs(path: &Path) -> Option<(bool, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` a writable statfs record.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    #[allow(clippy::unnecessary_cast)]
    let is_tmpfs = st.f_type as i64 == TMPFS_MAGIC;
    #[allow(clippy::unnecessary_cast)]
    let free = (st.f_bavail as u64).saturating_mul(st.f_bsize as u64);
    Some((is_tmpfs, free))
}

/// The bytes of the regular files under `dir` (links not followed).
fn dir_bytes(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Remove the scratch directories that runs of this user left under `root` when they were
/// killed: `bureau-run-<pid>.*` whose process is gone.
fn remove_stale(root: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let me = unsafe { libc::geteuid() };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("bureau-run-"))
            .and_then(|n| n.split_once('.'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let _ = std::fs::remove_dir_all(e.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse() {
        assert_eq!("auto".parse::<Scratch>(), Ok(Scratch::Auto));
        assert_eq!("none".parse::<Scratch>(), Ok(Scratch::InPlace));
        assert_eq!(
            "/mnt/fast".parse::<Scratch>(),
            Ok(Scratch::Dir(PathBuf::from("/mnt/fast")))
        );
        assert!("".parse::<Scratch>().is_err());
    }

    #[test]
    fn a_given_directory_holds_the_run_and_is_deleted_after() {
        let root = tempfile::tempdir().unwrap();
        let dir = prepare(&Scratch::Dir(root.path().into()), &[], 4)
            .unwrap()
            .unwrap();
        assert!(dir.path().starts_with(root.path()));
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists());
        // In place: none.
        assert!(prepare(&Scratch::InPlace, &[], 4).unwrap().is_none());
        // A directory that cannot hold it: an error naming the way out.
        let e = prepare(&Scratch::Dir("/proc/nope".into()), &[], 4).unwrap_err();
        assert!(e.contains("--scratch none"), "{e}");
    }

    #[test]
    fn what_killed_runs_left_is_removed_and_live_runs_are_kept() {
        let root = tempfile::tempdir().unwrap();
        // No process has pid 0x7ffffffe (above the kernel's pid_max).
        let dead = root.path().join("bureau-run-2147483646.abc");
        let live = root
            .path()
            .join(format!("bureau-run-{}.xyz", std::process::id()));
        let other = root.path().join("someone-else");
        for d in [&dead, &live, &other] {
            std::fs::create_dir_all(d.join("trial-1/world")).unwrap();
        }
        remove_stale(root.path());
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
    }

    #[test]
    fn auto_takes_only_a_tmpfs_with_room() {
        // The temporary directory of the tests is rarely a tmpfs; /dev/shm usually is.
        let not_tmpfs = Path::new("/proc");
        assert_eq!(choose(not_tmpfs, &[], 1), None);
        if let Some((true, free)) = statfs(Path::new(SHM)) {
            assert_eq!(choose(Path::new(SHM), &[], 1), Some(PathBuf::from(SHM)));
            // More trials at once than it has room for: in place.
            let too_many = (free / (1 << 20)) as usize + 1;
            assert_eq!(choose(Path::new(SHM), &[], too_many), None);
        }
    }
}
