//! One control group per command: the limits of the whole command (memory, processes) and a
//! kill that reaches every process in it, including ones that left the process group with
//! `setsid`. Used by the confined shell and by `bureau-harness` for harness processes.
//!
//! Both layouts are handled:
//! - cgroup v2 (a `cgroup2` mount, `/sys/fs/cgroup` on current distributions): Bureau makes
//!   `<mount>/bureau/<name>`; `memory.max` and `pids.max` when the `memory` and `pids`
//!   controllers can be enabled there, and `cgroup.kill` (Linux 5.14) to kill all of it;
//! - cgroup v1 (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup/pids`, `/sys/fs/cgroup/freezer`):
//!   `memory.limit_in_bytes` (and `memory.memsw.limit_in_bytes` when swap is accounted),
//!   `pids.max`, and the freezer to kill without a race against `fork` (freeze, `SIGKILL`
//!   every member, thaw).
//!
//! On a hybrid machine (v1 controllers plus a v2 hierarchy without controllers) the v1
//! controllers give the limits and the v2 hierarchy the kill. [`Cgroups::probe`] says what is
//! available and what is missing; nothing here is required: a caller without a writable
//! hierarchy (not root, or a read-only `/sys/fs/cgroup`) falls back to per-process limits.
//!
//! A process joins a cgroup by writing `0` to each `cgroup.procs` file
//! ([`Cgroup::procs_files`]) — from a `pre_exec` closure, before it can fork — or is added
//! from outside with [`Cgroup::add`]. Dropping a [`Cgroup`] kills what is left and removes it.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The directory made under each hierarchy's mount point for Bureau's cgroups.
const BASE: &str = "bureau";
/// How long [`Cgroup::kill_all`] waits for the killed processes to leave the cgroup.
const KILL_WAIT: Duration = Duration::from_secs(3);

/// A cgroup could not be made or set up.
#[derive(Debug, thiserror::Error)]
#[error("cgroup {path}: {what}: {source}")]
pub struct CgroupError {
    pub what: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

fn err(what: &'static str, path: &Path) -> impl FnOnce(io::Error) -> CgroupError {
    let path = path.to_path_buf();
    move |source| CgroupError { what, path, source }
}

/// Limits for one cgroup; `None` leaves the resource unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CgroupLimits {
    /// Memory of all processes together, in bytes (page cache included, as the kernel counts).
    pub memory_bytes: Option<u64>,
    /// Processes and threads together.
    pub max_processes: Option<u64>,
}

#[derive(Debug, Clone)]
struct V2 {
    base: PathBuf,
    memory: bool,
    pids: bool,
    kill: bool,
}

/// The cgroup hierarchies this process can use, found by [`Cgroups::probe`].
#[derive(Debug, Clone, Default)]
pub struct Cgroups {
    v2: Option<V2>,
    v1_memory: Option<PathBuf>,
    v1_pids: Option<PathBuf>,
    v1_freezer: Option<PathBuf>,
    missing: Vec<String>,
}

/// Mount points of the cgroup hierarchies, from `/proc/self/mounts`: the first `cgroup2`
/// mount, and the v1 mounts by controller.
fn mounts() -> (Option<PathBuf>, Vec<(PathBuf, Vec<String>)>) {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut v2 = None;
    let mut v1 = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, point, kind, options, ..] = f.as_slice() else {
            continue;
        };
        if point.contains('\\') {
            continue; // an escaped (unusual) mount point: not one of the standard ones
        }
        match *kind {
            "cgroup2" if v2.is_none() => v2 = Some(PathBuf::from(point)),
            "cgroup" => v1.push((
                PathBuf::from(point),
                options.split(',').map(str::to_string).collect(),
            )),
            _ => {}
        }
    }
    (v2, v1)
}

/// Makes `base` if needed and checks that a cgroup can be made in it (a non-root caller may
/// find it made by root, and unwritable).
fn usable(base: &Path) -> io::Result<()> {
    std::fs::create_dir_all(base)?;
    // Probes of one process may run at once (each `Confinement::probe`): a name of its own.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let probe = base.join(format!(
        "probe-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&probe)?;
    std::fs::remove_dir(&probe)
}

fn has_word(path: &Path, word: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s.split_whitespace().any(|w| w == word))
}

impl Cgroups {
    /// Finds the writable hierarchies (making `<mount>/bureau` in each) and what they offer.
    pub fn probe() -> Cgroups {
        let (v2_mount, v1_mounts) = mounts();
        let mut found = Cgroups::default();
        if let Some(mount) = v2_mount {
            let base = mount.join(BASE);
            match usable(&base) {
                Ok(()) => {
                    let available = mount.join("cgroup.controllers");
                    let mut v2 = V2 {
                        base: base.clone(),
                        memory: false,
                        pids: false,
                        kill: false,
                    };
                    for (name, flag) in [("memory", &mut v2.memory), ("pids", &mut v2.pids)] {
                        if !has_word(&available, name) {
                            continue;
                        }
                        // Enable the controller for the base's parent (the mount) and the base.
                        let on = format!("+{name}");
                        let _ = std::fs::write(mount.join("cgroup.subtree_control"), &on);
                        *flag = std::fs::write(base.join("cgroup.subtree_control"), &on).is_ok()
                            && has_word(&base.join("cgroup.subtree_control"), name);
                    }
                    // `cgroup.kill` exists in every non-root cgroup from Linux 5.14 on.
                    v2.kill = base.join("cgroup.kill").exists();
                    found.v2 = Some(v2);
                }
                Err(e) => found
                    .missing
                    .push(format!("cgroup v2 at {}: {e}", mount.display())),
            }
        }
        for (controller, slot) in [
            ("memory", &mut found.v1_memory),
            ("pids", &mut found.v1_pids),
            ("freezer", &mut found.v1_freezer),
        ] {
            let Some((point, _)) = v1_mounts
                .iter()
                .find(|(_, opts)| opts.iter().any(|o| o == controller))
            else {
                continue;
            };
            let base = point.join(BASE);
            match usable(&base) {
                Ok(()) => *slot = Some(base),
                Err(e) => found.missing.push(format!(
                    "cgroup v1 {controller} at {}: {e}",
                    point.display()
                )),
            }
        }
        // What a v2 hierarchy offers, v1 need not.
        if found.v2.as_ref().is_some_and(|v| v.memory) {
            found.v1_memory = None;
        }
        if found.v2.as_ref().is_some_and(|v| v.pids) {
            found.v1_pids = None;
        }
        if found.v2.as_ref().is_some_and(|v| v.kill) {
            found.v1_freezer = None;
        }
        if !found.limits_memory() {
            found
                .missing
                .push("no writable memory controller (cgroup v2 memory or v1 memory)".into());
        }
        if !found.limits_processes() {
            found
                .missing
                .push("no writable pids controller (cgroup v2 pids or v1 pids)".into());
        }
        if !found.kills_all() {
            found.missing.push(
                "no writable cgroup to gather a command's processes (cgroup v2 or v1 freezer)"
                    .into(),
            );
        }
        found
    }

    /// A memory limit for all processes together can be set.
    pub fn limits_memory(&self) -> bool {
        self.v2.as_ref().is_some_and(|v| v.memory) || self.v1_memory.is_some()
    }

    /// A process-count limit for all processes together can be set.
    pub fn limits_processes(&self) -> bool {
        self.v2.as_ref().is_some_and(|v| v.pids) || self.v1_pids.is_some()
    }

    /// Every process of a cgroup can be found and killed (v2 hierarchy or v1 freezer).
    pub fn kills_all(&self) -> bool {
        self.v2.is_some() || self.v1_freezer.is_some()
    }

    /// What is missing, one line each (empty when memory, processes and kill are all covered).
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// One line on what is used.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(v2) = &self.v2 {
            let mut what = vec![];
            if v2.memory {
                what.push("memory.max");
            }
            if v2.pids {
                what.push("pids.max");
            }
            if v2.kill {
                what.push("cgroup.kill");
            }
            parts.push(format!(
                "cgroup v2 {} ({})",
                v2.base.display(),
                if what.is_empty() {
                    "membership only".to_string()
                } else {
                    what.join(", ")
                }
            ));
        }
        for (name, dir) in [
            ("memory.limit_in_bytes", &self.v1_memory),
            ("pids.max", &self.v1_pids),
            ("freezer", &self.v1_freezer),
        ] {
            if let Some(dir) = dir {
                parts.push(format!("cgroup v1 {} ({name})", dir.display()));
            }
        }
        if parts.is_empty() {
            "no writable cgroup".to_string()
        } else {
            parts.join("; ")
        }
    }

    /// Makes a new cgroup named `<prefix>-<pid>-<n>` in every usable hierarchy, with `limits`
    /// where a controller allows. Fails when a directory or a limit cannot be written.
    pub fn create(&self, prefix: &str, limits: &CgroupLimits) -> Result<Cgroup, CgroupError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{prefix}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut group = Cgroup {
            dirs: Vec::new(),
            v2: None,
            v2_kill: false,
            memory: None,
            freezer: None,
            procs: Vec::new(),
        };
        let mut make = |base: &Path| -> Result<PathBuf, CgroupError> {
            let dir = base.join(&name);
            std::fs::create_dir(&dir).map_err(err("mkdir", &dir))?;
            group.dirs.push(dir.clone());
            let procs = dir.join("cgroup.procs");
            let c = CString::new(procs.as_os_str().as_bytes())
                .map_err(|e| err("path", &procs)(io::Error::other(e)))?;
            group.procs.push(c);
            Ok(dir)
        };
        if let Some(v2) = &self.v2 {
            let dir = make(&v2.base)?;
            if v2.memory
                && let Some(bytes) = limits.memory_bytes
            {
                write(&dir.join("memory.max"), &bytes.to_string())?;
                // No swapping around the limit.
                let _ = std::fs::write(dir.join("memory.swap.max"), "0");
                group.memory = Some((dir.clone(), false));
            }
            if v2.pids
                && let Some(n) = limits.max_processes
            {
                write(&dir.join("pids.max"), &n.to_string())?;
            }
            group.v2_kill = v2.kill;
            group.v2 = Some(dir);
        }
        if let Some(base) = &self.v1_memory
            && let Some(bytes) = limits.memory_bytes
        {
            let dir = make(base)?;
            write(&dir.join("memory.limit_in_bytes"), &bytes.to_string())?;
            let memsw = dir.join("memory.memsw.limit_in_bytes");
            if memsw.exists() {
                write(&memsw, &bytes.to_string())?;
            }
            group.memory = Some((dir, true));
        }
        if let Some(base) = &self.v1_pids
            && let Some(n) = limits.max_processes
        {
            let dir = make(base)?;
            write(&dir.join("pids.max"), &n.to_string())?;
        }
        if let Some(base) = &self.v1_freezer {
            group.freezer = Some(make(base)?);
        }
        Ok(group)
    }
}

fn write(path: &Path, value: &str) -> Result<(), CgroupError> {
    std::fs::write(path, value).map_err(err("write", path))
}

/// One command's cgroup, in every usable hierarchy. Dropping it kills what is left and
/// removes it.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    v2: Option<PathBuf>,
    v2_kill: bool,
    /// The directory with the memory controller; `true` for v1.
    memory: Option<(PathBuf, bool)>,
    freezer: Option<PathBuf>,
    procs: Vec<CString>,
}

impl Cgroup {
    /// The `cgroup.procs` files to write `0` to (a process joins with that): prepared here so
    /// that a `pre_exec` closure can join with raw system calls ([`Cgroup::join_self`]).
    pub fn procs_files(&self) -> &[CString] {
        &self.procs
    }

    /// Moves the calling process into every hierarchy of this cgroup with raw `open`/`write`
    /// system calls and no allocation, for a `pre_exec` closure (before the process forks).
    pub fn join_self(procs: &[CString]) -> io::Result<()> {
        for path in procs {
            // SAFETY: raw system calls on a C string that outlives them.
            unsafe {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                let e = io::Error::last_os_error();
                libc::close(fd);
                if n != 1 {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Adds a running process (all its threads) to every hierarchy of this cgroup.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        for dir in &self.dirs {
            write(&dir.join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// The processes in the cgroup (sorted, without duplicates).
    pub fn pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .dirs
            .iter()
            .filter_map(|d| std::fs::read_to_string(d.join("cgroup.procs")).ok())
            .flat_map(|s| {
                s.split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect();
        pids.sort_unstable();
        pids.dedup();
        pids
    }

    /// The memory controller's OOM killer killed a process of this cgroup.
    pub fn oom_killed(&self) -> bool {
        let Some((dir, v1)) = &self.memory else {
            return false;
        };
        let (file, key) = if *v1 {
            ("memory.oom_control", "oom_kill")
        } else {
            ("memory.events", "oom_kill")
        };
        std::fs::read_to_string(dir.join(file)).is_ok_and(|s| {
            s.lines().any(|l| {
                let mut f = l.split_whitespace();
                f.next() == Some(key) && f.next().and_then(|n| n.parse::<u64>().ok()) > Some(0)
            })
        })
    }

    /// `SIGKILL` to every process in the cgroup, whatever its session or process group;
    /// waits (up to a few seconds) until they are gone. Returns how many there were.
    pub fn kill_all(&self) -> usize {
        let found = self.pids().len();
        if found == 0 {
            return 0;
        }
        if let Some(dir) = self.v2.as_ref().filter(|_| self.v2_kill) {
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        } else if let Some(dir) = &self.freezer {
            // Frozen processes cannot fork, so the list read is complete; SIGKILL is
            // delivered once they are thawed.
            let state = dir.join("freezer.state");
            let _ = std::fs::write(&state, "FROZEN");
            let until = Instant::now() + Duration::from_secs(1);
            while Instant::now() < until
                && std::fs::read_to_string(&state).is_ok_and(|s| s.trim() != "FROZEN")
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            kill_each(&self.pids());
            let _ = std::fs::write(&state, "THAWED");
        }
        let until = Instant::now() + KILL_WAIT;
        loop {
            let left = self.pids();
            if left.is_empty() || Instant::now() >= until {
                break;
            }
            kill_each(&left);
            std::thread::sleep(Duration::from_millis(10));
        }
        found
    }

    /// Kills what is left and removes the cgroup's directories. Returns how many processes
    /// were killed.
    pub fn remove(mut self) -> usize {
        self.cleanup()
    }

    fn cleanup(&mut self) -> usize {
        let killed = self.kill_all();
        for dir in self.dirs.drain(..) {
            let until = Instant::now() + Duration::from_secs(1);
            while std::fs::remove_dir(&dir).is_err() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        killed
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.cleanup();
    }
}

fn kill_each(pids: &[u32]) {
    for &pid in pids {
        if let Ok(pid) = i32::try_from(pid)
            && pid > 0
        {
            // SAFETY: plain system call.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_left_its_session_is_killed_with_the_cgroup() {
        let cgroups = Cgroups::probe();
        if !rustix::process::geteuid().is_root() {
            assert!(!cgroups.missing().is_empty() || cgroups.kills_all());
            return;
        }
        assert!(cgroups.kills_all(), "{:?}", cgroups.missing());
        let group = cgroups.create("test", &CgroupLimits::default()).unwrap();
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 0.3; setsid -f sleep 47; sleep 30"])
            .spawn()
            .unwrap();
        group.add(child.id()).unwrap();
        std::thread::sleep(Duration::from_millis(800));
        let pids = group.pids();
        assert!(pids.len() >= 3, "sh, sleep 47 and sleep 30: {pids:?}");
        let killed = group.remove();
        assert!(killed >= 3, "{killed}");
        let _ = child.wait();
        for pid in pids {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rsplit_once(')')
                .map(|(_, r)| r.trim_start().to_string());
            assert!(
                state.is_none_or(|s| s.starts_with('Z')),
                "{pid} still runs: {stat}"
            );
        }
    }
}
