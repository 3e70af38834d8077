//! Where a run's trials build their trees (issue 18, `bureau run --scratch DIR`).
//!
//! A trial's world, snapshots and exports are written, read and deleted within the trial;
//! only their archive (`trial.zip`) is the run's record. On a disk that pays for every file
//! made and deleted — ext4 without a journal scans past every inode deleted in the last
//! minutes when it allocates one, and a file system mounted with `discard` trims every freed
//! block as it is deleted — building them in the run directory costs more than the trials'
//! own work (docs/BENCHMARKS.md). `--scratch DIR` builds them under `DIR` instead (a tmpfs,
//! say); the archives and records still go to the run directory.
//!
//! Not by default, and never under `/dev`, `/proc`, `/sys` or the system's tool directories:
//! an agent's confined shell may read those (Bureau's own grants `/dev` for its device
//! nodes), so another trial's world there would be in its reach, and a harness's own sandbox
//! mounts a fresh `/dev` (Codex's bubblewrap), where a workspace under `/dev/shm` is gone.

use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

/// Where the trees are built (`--scratch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scratch {
    /// In each attempt's own directory of the run.
    #[default]
    InPlace,
    /// Under this directory.
    Dir(PathBuf),
}

impl FromStr for Scratch {
    type Err = String;
    fn from_str(s: &str) -> Result<Scratch, String> {
        match s {
            "none" => Ok(Scratch::InPlace),
            "" => Err("give a directory, or `none`".into()),
            dir => Ok(Scratch::Dir(PathBuf::from(dir))),
        }
    }
}

/// Directories an agent's confined shell may read (`bureau_shell`: the tool paths, `/dev`,
/// `/proc`), and `/sys`: no scratch directory may be under them.
const REACHABLE: [&str; 11] = [
    "/dev", "/proc", "/sys", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

/// The run's scratch directory, deleted when dropped (the run's end), or `None` for in place.
/// `Err` (naming what to do) for a directory that cannot hold it or that agents could read.
pub fn prepare(setting: &Scratch) -> Result<Option<tempfile::TempDir>, String> {
    let root = match setting {
        Scratch::InPlace => return Ok(None),
        Scratch::Dir(d) => d,
    };
    let absolute =
        std::path::absolute(root).map_err(|e| format!("--scratch {}: {e}", root.display()))?;
    // Resolved, so that no link leads under a refused directory.
    let resolved = std::fs::canonicalize(&absolute).map_err(|e| {
        format!(
            "--scratch {}: {e} — give an existing directory (a tmpfs, say: `mount -t tmpfs tmpfs DIR`), or `--scratch none`",
            root.display()
        )
    })?;
    if let Some(under) = REACHABLE
        .iter()
        .find(|r| resolved.starts_with(r) || absolute.starts_with(r))
    {
        return Err(format!(
            "--scratch {}: it is under {under}, which an agent's confined shell can read (another trial's world would be in its reach) or a harness's sandbox replaces — give a directory elsewhere (a tmpfs mounted for it, say: `mount -t tmpfs tmpfs /mnt/bureau-scratch`)",
            root.display()
        ));
    }
    if resolved
        .components()
        .all(|c| matches!(c, Component::RootDir))
    {
        return Err("--scratch /: give a directory of its own".into());
    }
    remove_stale(&resolved);
    tempfile::Builder::new()
        .prefix(&format!("bureau-run-{}.", std::process::id()))
        .tempdir_in(&resolved)
        .map(Some)
        .map_err(|e| {
            format!(
                "--scratch {}: cannot make a directory there ({e}) — give a writable directory, or `--scratch none`",
                root.display()
            )
        })
}

/// Remove the scratch directories that runs of this user left under `root` when they were
/// killed: `bureau-run-<pid>.*` whose process is gone.
fn remove_stale(root: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
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
        assert_eq!("none".parse::<Scratch>(), Ok(Scratch::InPlace));
        assert_eq!(
            "/mnt/fast".parse::<Scratch>(),
            Ok(Scratch::Dir(PathBuf::from("/mnt/fast")))
        );
        assert!("".parse::<Scratch>().is_err());
        assert_eq!(Scratch::default(), Scratch::InPlace);
    }

    #[test]
    fn a_given_directory_holds_the_run_and_is_deleted_after() {
        let root = tempfile::tempdir().unwrap();
        let dir = prepare(&Scratch::Dir(root.path().into())).unwrap().unwrap();
        let canonical = std::fs::canonicalize(root.path()).unwrap();
        assert!(dir.path().starts_with(&canonical));
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists());
        assert!(prepare(&Scratch::InPlace).unwrap().is_none());
        // A directory that does not exist: an error naming the way out.
        let e = prepare(&Scratch::Dir(root.path().join("nope"))).unwrap_err();
        assert!(e.contains("--scratch none"), "{e}");
    }

    #[test]
    fn directories_an_agent_can_read_are_refused() {
        for dir in ["/dev/shm", "/proc", "/etc", "/usr/local"] {
            if !Path::new(dir).exists() {
                continue;
            }
            let e = prepare(&Scratch::Dir(dir.into())).unwrap_err();
            assert!(e.contains("confined shell can read"), "{dir}: {e}");
        }
        // Also through a link.
        let root = tempfile::tempdir().unwrap();
        let link = root.path().join("shm");
        std::os::unix::fs::symlink("/proc", &link).unwrap();
        let e = prepare(&Scratch::Dir(link)).unwrap_err();
        assert!(e.contains("under /proc"), "{e}");
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
}
