//! The Linux confinement: namespaces, capabilities, rlimits and Landlock set up in the child
//! between `fork` and `exec`; the parent watches output, a pidfd and the wall clock with `poll`.
//! See the crate docs for the design.

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bureau_replica::NsEntry;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    RestrictSelfError, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError,
    RulesetStatus, Scope,
};
use rustix::event::{PollFd, PollFlags};
use rustix::io::Errno;
use rustix::process::{Pid, Resource, Rlimit, Signal};
use rustix::thread::{CapabilitySet, CapabilitySets, UnshareFlags};

use crate::cgroup::{Cgroup, CgroupLimits, Cgroups};
use crate::mounts::{Access as Masks, Owner, SelfMap, View};
use crate::{Captured, LimitHit, ShellError, ShellLimits, ShellOutcome, ShellUnavailable};

/// As root, each command runs as uid (and gid) `UID_BASE + <its pid>`: a uid no other process
/// has, so `RLIMIT_NPROC` counts this command's processes alone and `kill(-1)` from that uid
/// reaches all of them.
pub const UID_BASE: u32 = 1_700_000_000;

const SHELL: &str = "/bin/sh";
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// The Landlock ABI below which the shell is unavailable: ABI 3 is the first that covers
/// `truncate`, without which a file outside the workspace could be emptied.
const MIN_ABI: ABI = ABI::V3;
/// The newest Landlock features used when the kernel has them (ABI 4: TCP; ABI 6: scopes).
const BEST_ABI: ABI = ABI::V6;
/// Capabilities a root caller's command keeps: writing the root-owned workspace needs
/// `CAP_DAC_OVERRIDE`; Landlock confines where it can write.
const KEEP_CAPS: CapabilitySet = CapabilitySet::DAC_OVERRIDE.union(CapabilitySet::DAC_READ_SEARCH);
/// After the shell exits, how long leftover output is drained.
const DRAIN: Duration = Duration::from_secs(2);

/// The child's setup steps, in order; the child writes the step's index to a pipe before it.
const STEPS: [&str; 25] = [
    "setsid",
    "unshare (mount, network, IPC and, for a non-root caller, user namespaces)",
    "drop capabilities from the bounding set",
    "keep capabilities across the uid change",
    "setgroups",
    "setresgid",
    "setresuid",
    "capset",
    "raise ambient capabilities",
    "setrlimit",
    "landlock_restrict_self",
    "exec /bin/sh",
    "enter the replica's user and mount namespaces (setns, chdir)",
    "close inherited descriptors (close_range)",
    "join the command's cgroup",
    "make the mounts private",
    "clone the workspace mount (open_tree)",
    "id-map the workspace (a user namespace mapping root to the command's uid, mount_setattr)",
    "mount the new root (tmpfs)",
    "bind the system's tool paths read-only and the device nodes",
    "mount the private /tmp (tmpfs)",
    "mount /proc",
    "add the Landlock rules for the new root",
    "pivot_root into the new root",
    "write the user namespace's uid and gid maps",
];

/// Step indices (see [`STEPS`]).
pub(crate) mod steps {
    pub(crate) const STEP_SETSID: u8 = 0;
    pub(crate) const STEP_UNSHARE: u8 = 1;
    pub(crate) const STEP_BOUNDING: u8 = 2;
    pub(crate) const STEP_KEEPCAPS: u8 = 3;
    pub(crate) const STEP_GROUPS: u8 = 4;
    pub(crate) const STEP_GID: u8 = 5;
    pub(crate) const STEP_UID: u8 = 6;
    pub(crate) const STEP_CAPSET: u8 = 7;
    pub(crate) const STEP_AMBIENT: u8 = 8;
    pub(crate) const STEP_RLIMIT: u8 = 9;
    pub(crate) const STEP_LANDLOCK: u8 = 10;
    pub(crate) const STEP_EXEC: u8 = 11;
    pub(crate) const STEP_ENTER: u8 = 12;
    pub(crate) const STEP_CLOSE: u8 = 13;
    pub(crate) const STEP_CGROUP: u8 = 14;
    pub(crate) const STEP_PRIVATE: u8 = 15;
    pub(crate) const STEP_WORKSPACE: u8 = 16;
    pub(crate) const STEP_IDMAP: u8 = 17;
    pub(crate) const STEP_ROOT: u8 = 18;
    pub(crate) const STEP_BINDS: u8 = 19;
    pub(crate) const STEP_TMP: u8 = 20;
    pub(crate) const STEP_PROC: u8 = 21;
    pub(crate) const STEP_LANDLOCK_RULES: u8 = 22;
    pub(crate) const STEP_PIVOT: u8 = 23;
    pub(crate) const STEP_MAPS: u8 = 24;
}
use steps::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The caller is root: network namespace directly, then an unprivileged uid of its own.
    Root,
    /// The caller is not root: a new user namespace holds the network namespace.
    User,
}

#[derive(Debug, Clone)]
pub(crate) struct Linux {
    mode: Mode,
    landlock: String,
    /// The cgroup hierarchies usable for one cgroup per command (none for most non-root
    /// callers: the limits are then per process).
    cgroups: Cgroups,
}

/// Everything the child needs, prepared in the parent (the child must not allocate).
struct Plan {
    mode: Mode,
    step_fd: RawFd,
    unshare: UnshareFlags,
    rlimits: [(Resource, Rlimit); 5],
    /// A replica's namespaces to enter first (the workspace is then its merged directory as
    /// seen inside, and the entry's `chdir` sets the working directory).
    entry: Option<Arc<NsEntry>>,
    /// The `cgroup.procs` files the child writes `0` to (its cgroup), when there is one.
    cgroup_procs: Vec<CString>,
    /// The command's own file-system view (not for a replica entry: see docs/shell.md).
    view: Option<PivotPlan>,
}

/// The mount namespace and pivot_root path: the view, the raw Landlock ruleset (rules are
/// added in the child, on the new mounts) and, for a non-root caller, its uid/gid maps.
struct PivotPlan {
    view: View,
    ruleset: OwnedFd,
    access: Masks,
    self_map: Option<SelfMap>,
}

/// The size of the command's private `/tmp` (a tmpfs; its pages count against the memory
/// cgroup too).
const TMP_BYTES: u64 = 64 << 20;

impl Linux {
    pub(crate) fn probe() -> Result<Linux, ShellUnavailable> {
        let mut missing = Vec::new();
        if !Path::new(SHELL).is_file() {
            missing.push(format!("{SHELL} does not exist"));
        }
        let landlock = match landlock_probe() {
            Ok(text) => Some(text),
            Err(e) => {
                missing.push(e);
                None
            }
        };
        let mode = if rustix::process::geteuid().is_root() {
            Mode::Root
        } else {
            Mode::User
        };
        let (Some(landlock), true) = (landlock, missing.is_empty()) else {
            return Err(ShellUnavailable { missing });
        };
        let linux = Linux {
            mode,
            landlock,
            cgroups: Cgroups::probe(),
        };
        // Set the whole confinement up once, around `exit 0`.
        let dir = tempfile::tempdir().map_err(|e| ShellUnavailable {
            missing: vec![format!("a temporary directory for the probe: {e}")],
        })?;
        let limits = ShellLimits {
            wall: Duration::from_secs(10),
            ..ShellLimits::default()
        };
        match linux.run("exit 0", dir.path(), &limits) {
            Ok(out) if out.exit_code == Some(0) => Ok(linux),
            Ok(out) => Err(ShellUnavailable {
                missing: vec![format!(
                    "a confined `exit 0` did not succeed ({}; stderr: {})",
                    out.note(),
                    out.stderr.text.trim()
                )],
            }),
            Err(ShellError::Setup { step, source }) => Err(ShellUnavailable {
                missing: vec![setup_hint(step, &source, mode)],
            }),
            Err(e) => Err(ShellUnavailable {
                missing: vec![format!("a confined `exit 0` failed: {e}")],
            }),
        }
    }

    pub(crate) fn describe(&self) -> Vec<String> {
        let who = match self.mode {
            Mode::Root => format!(
                "caller is root: the command runs as its own unprivileged uid ({UID_BASE} + pid) \
                 with no capability; the workspace is an id-mapped mount owned by that uid"
            ),
            Mode::User => "caller is not root: the command runs in new user, mount and \
                           network namespaces, as the caller's uid, with no capability"
                .to_string(),
        };
        let proc = match self.mode {
            Mode::Root => "a fresh /proc showing only the command's own processes (hidepid)",
            Mode::User => "the host's /proc (a non-root caller cannot mount a fresh one)",
        };
        let whole = if self.cgroups.limits_memory() && self.cgroups.limits_processes() {
            format!(
                "memory and processes limited for the whole command (one cgroup per command: {})",
                self.cgroups.describe()
            )
        } else {
            format!(
                "memory and processes limited per process only (rlimits): {}",
                self.cgroups.missing().join("; ")
            )
        };
        vec![
            format!("{SHELL} -c <command>, working directory = the workspace, environment cleared"),
            format!(
                "file system: a mount namespace holding only the workspace (read-write), \
                 read-only /usr, /bin, /sbin, /lib*, /etc, /dev/null|zero|full|random|urandom, \
                 a private /tmp of {} MiB and {proc} (not for an overlay replica, where the \
                 host's tree stays visible read-only)",
                TMP_BYTES >> 20
            ),
            self.landlock.clone(),
            "network: a fresh network namespace (loopback only, down)".to_string(),
            who,
            whole,
            "rlimits: CPU time, address space, file size (per file), processes; no core files"
                .to_string(),
            "no descriptor above 2 is inherited".to_string(),
            "wall time and output caps enforced by killing the whole process group and cgroup"
                .to_string(),
        ]
    }

    pub(crate) fn run(
        &self,
        command: &str,
        workspace: &Path,
        limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        let ws = workspace
            .canonicalize()
            .map_err(|source| ShellError::Workspace {
                path: workspace.to_path_buf(),
                source,
            })?;
        if !ws.is_dir() {
            return Err(ShellError::NotADirectory(ws));
        }
        self.spawn_confined(command, &ws, None, limits)
    }

    /// Runs the command inside a replica's namespaces: it enters them first (its working
    /// directory becomes the merged directory as seen inside), then confines itself as
    /// [`Linux::run`] does. The Landlock rule is on the merged directory, opened here through
    /// the entry's view (`/proc/<holder>/root/<merged>`, not canonicalised: that would name
    /// the empty mount point of this namespace): rules belong to the inode, which is the same
    /// seen from either side.
    pub(crate) fn run_entered(
        &self,
        command: &str,
        entry: &Arc<NsEntry>,
        limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        let view = entry.view();
        if !entry.is_current() {
            return Err(ShellError::StaleEntry(view.to_path_buf()));
        }
        let md = std::fs::metadata(view).map_err(|source| ShellError::Workspace {
            path: view.to_path_buf(),
            source,
        })?;
        if !md.is_dir() {
            return Err(ShellError::NotADirectory(view.to_path_buf()));
        }
        self.spawn_confined(command, view, Some(Arc::clone(entry)), limits)
    }

    /// Prepares the command's own view of the file system (see [`crate::mounts`]) and a
    /// Landlock ruleset with no rule yet (the child adds them on the new mounts).
    fn pivot_plan(&self, ws: &Path) -> Result<PivotPlan, ShellError> {
        let owner = match self.mode {
            // The command's uid (UID_BASE + its pid) is known only in the child, which
            // passes it to `View::build`.
            Mode::Root => Owner::IdMapped,
            Mode::User => Owner::Caller,
        };
        let view = View::prepare(ws, owner, TMP_BYTES).map_err(|source| ShellError::Workspace {
            path: ws.to_path_buf(),
            source,
        })?;
        let created = bare_ruleset().map_err(ShellError::Landlock)?;
        let ruleset = Option::<OwnedFd>::from(created)
            .ok_or_else(|| ShellError::Landlock("Landlock is not enforced here".to_string()))?;
        let self_map = match self.mode {
            Mode::Root => None,
            Mode::User => Some(
                SelfMap::new(
                    rustix::process::getuid().as_raw(),
                    rustix::process::getgid().as_raw(),
                )
                .map_err(|e| io_err("uid map", e))?,
            ),
        };
        Ok(PivotPlan {
            view,
            ruleset,
            access: access_masks(),
            self_map,
        })
    }

    fn spawn_confined(
        &self,
        command: &str,
        ws: &Path,
        entry: Option<Arc<NsEntry>>,
        limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        if command.contains('\0') {
            return Err(ShellError::NulByte);
        }
        let (step_r, step_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| io_err("creating the setup pipe", e.into()))?;
        // One cgroup per command, where a hierarchy is writable: memory and processes of the
        // whole command, and a kill that reaches every process of it.
        let cgroup = if self.cgroups.kills_all()
            || self.cgroups.limits_memory()
            || self.cgroups.limits_processes()
        {
            Some(self.cgroups.create(
                "shell",
                &CgroupLimits {
                    memory_bytes: Some(limits.memory_bytes),
                    max_processes: Some(limits.max_processes),
                },
            )?)
        } else {
            None
        };
        let (legacy, view) = if entry.is_some() {
            (Some(ruleset(ws).map_err(ShellError::Landlock)?), None)
        } else {
            (None, Some(self.pivot_plan(ws)?))
        };
        let mut plan = Plan {
            mode: self.mode,
            step_fd: step_w.as_raw_fd(),
            unshare: match self.mode {
                Mode::Root => UnshareFlags::NEWNET | UnshareFlags::NEWIPC,
                Mode::User => UnshareFlags::NEWUSER | UnshareFlags::NEWNET | UnshareFlags::NEWIPC,
            },
            rlimits: rlimits(limits),
            entry,
            cgroup_procs: cgroup
                .as_ref()
                .map(|g| g.procs_files().to_vec())
                .unwrap_or_default(),
            view,
        };
        if plan.view.is_some() {
            plan.unshare |= UnshareFlags::NEWNS;
        }
        let mut ruleset = legacy;
        let mut cmd = Command::new(SHELL);
        cmd.arg("-c").arg(command);
        // With an entry, std must not chdir (it would, before `pre_exec`, into this
        // namespace's view); the entry's own `chdir` sets the directory inside.
        if plan.entry.is_none() {
            cmd.current_dir(ws);
        }
        cmd.env_clear()
            .env("PATH", PATH)
            .env("LANG", "C.UTF-8")
            .env(
                "HOME",
                if plan.view.is_some() {
                    // The caller's home is not in the command's view; dot files and caches
                    // go to the private /tmp, not into the workspace.
                    "/tmp"
                } else {
                    // In a replica only the tool paths and the workspace can be read: a home
                    // that does not exist (ENOENT, which git and others take as "no dot
                    // files"), not the caller's (EACCES, which git takes as fatal).
                    "/nonexistent"
                },
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.mode == Mode::Root {
            // The command's uid is not the workspace owner's, and git refuses a repository
            // owned by another user ("dubious ownership") unless told otherwise; the command
            // may only write its own workspace anyway, so trust every repository it meets.
            cmd.env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "safe.directory")
                .env("GIT_CONFIG_VALUE_0", "*");
        }
        // SAFETY: `confine` makes only system calls through rustix (and the Landlock crate's
        // `restrict_self`, itself two system calls): no allocation, no lock, no formatting.
        unsafe {
            cmd.pre_exec(move || confine(&plan, &mut ruleset));
        }
        let start = Instant::now();
        let spawned = cmd.spawn();
        drop(step_w);
        drop(cmd);
        let mut child = match spawned {
            Ok(child) => child,
            Err(source) => {
                return Err(ShellError::Setup {
                    step: failed_step(step_r),
                    source,
                });
            }
        };
        drop(step_r);
        let pid = child.id();
        let uid = match self.mode {
            Mode::Root => Some(UID_BASE.wrapping_add(pid)),
            Mode::User => None,
        };
        let pidfd = match Pid::from_raw(pid as i32)
            .ok_or(Errno::SRCH)
            .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()))
        {
            Ok(fd) => fd,
            Err(e) => {
                kill_all(pid, uid, cgroup.as_ref());
                let _ = child.wait();
                return Err(io_err("pidfd_open", e.into()));
            }
        };
        let mut out = Stream::new(child.stdout.take(), limits.output_bytes);
        let mut err = Stream::new(child.stderr.take(), limits.output_bytes);
        let deadline = start + limits.wall;
        let mut limit = None;
        let mut killed = false;
        let mut status = None;
        while status.is_none() {
            let now = Instant::now();
            if now >= deadline && !killed {
                limit = limit.or(Some(LimitHit::Wall));
                kill_all(pid, uid, cgroup.as_ref());
                killed = true;
            }
            let wait = if killed {
                Duration::from_millis(100)
            } else {
                deadline.saturating_duration_since(now)
            };
            let exited = poll_once(Some(&pidfd), &mut out, &mut err, wait)
                .map_err(|e| io_err("poll", e.into()))?;
            if (out.over || err.over) && !killed {
                limit = limit.or(Some(LimitHit::Output));
                kill_all(pid, uid, cgroup.as_ref());
                killed = true;
            }
            if exited {
                status = Some(
                    child
                        .wait()
                        .map_err(|e| io_err("waiting for the shell", e))?,
                );
            }
        }
        // The shell is gone: kill whatever it left running, then drain the pipes.
        kill_all(pid, uid, cgroup.as_ref());
        let drain_until = Instant::now() + DRAIN;
        while out.open() || err.open() {
            let now = Instant::now();
            if now >= drain_until {
                break;
            }
            poll_once(None, &mut out, &mut err, drain_until - now)
                .map_err(|e| io_err("poll", e.into()))?;
        }
        let mut leftover_processes = reap_leftovers(pid, uid, cgroup.as_ref());
        let oom = cgroup.as_ref().is_some_and(|g| g.oom_killed());
        if let Some(group) = cgroup {
            leftover_processes = leftover_processes.max(group.pids().len());
            group.remove();
        }
        let wall = start.elapsed();
        let status = status.ok_or_else(|| io_err("waiting for the shell", Errno::CHILD.into()))?;
        let signal = status.signal();
        if limit.is_none() && signal == Some(Signal::XCPU.as_raw()) {
            limit = Some(LimitHit::Cpu);
        }
        if limit.is_none() && oom {
            limit = Some(LimitHit::Memory);
        }
        Ok(ShellOutcome {
            exit_code: status.code(),
            signal,
            stdout: out.finish(),
            stderr: err.finish(),
            timed_out: limit == Some(LimitHit::Wall),
            limit,
            wall,
            pid,
            leftover_processes,
        })
    }
}

fn io_err(what: &'static str, source: io::Error) -> ShellError {
    ShellError::Io { what, source }
}

/// Checks Landlock on a throwaway thread (Landlock restricts only the calling thread, which
/// then ends) and describes what is enforced.
fn landlock_probe() -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let path = dir.path().to_path_buf();
    let handle = std::thread::spawn(move || -> Result<(RulesetStatus, LandlockStatus), String> {
        let ruleset = ruleset(&path)?;
        let status = ruleset.restrict_self().map_err(|e| e.to_string())?;
        Ok((status.ruleset, status.landlock))
    });
    let (ruleset, status) = handle
        .join()
        .map_err(|_| "the Landlock probe thread panicked".to_string())??;
    let abi = match status {
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => kernel_abi.map_or_else(|| format!("{effective_abi:?}"), |v| format!("V{v}")),
        LandlockStatus::NotEnabled => {
            return Err(
                "Landlock is built into the kernel but not enabled (add `landlock` to \
                        the `lsm=` boot parameter)"
                    .to_string(),
            );
        }
        LandlockStatus::NotImplemented => {
            return Err("Landlock is not available (Linux 6.2 or later with \
                        CONFIG_SECURITY_LANDLOCK is needed)"
                .to_string());
        }
    };
    match ruleset {
        RulesetStatus::NotEnforced => Err(format!(
            "Landlock ABI {abi} could not enforce the ruleset (ABI 3, Linux 6.2, is the minimum)"
        )),
        RulesetStatus::FullyEnforced => Ok(format!(
            "Landlock (kernel ABI {abi}): read and execute everywhere, write only beneath the \
             workspace and /dev/null; TCP bind/connect denied; signals and abstract unix sockets \
             scoped to the command"
        )),
        RulesetStatus::PartiallyEnforced => Ok(format!(
            "Landlock (kernel ABI {abi}, partially: features past it are missing): read and \
             execute everywhere, write only beneath the workspace and /dev/null"
        )),
    }
}

/// The Landlock ruleset of a command in a replica's namespaces: read/execute on the system's
/// tool paths, `/dev` and `/proc`, everything beneath the workspace, `/dev/null` read/write. At least ABI 3 (hard requirement); TCP and scopes when the kernel has them.
fn ruleset(workspace: &Path) -> Result<RulesetCreated, String> {
    let build = || -> Result<RulesetCreated, RulesetError> {
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(MIN_ABI))?
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(BEST_ABI))?
            .handle_access(AccessNet::from_all(BEST_ABI))?
            .scope(Scope::from_all(BEST_ABI))?
            .create()?;
        Ok(ruleset)
    };
    let open = |path: &Path| {
        PathFd::new(path).map_err(|e| format!("Landlock rule for {}: {e}", path.display()))
    };
    let mut ruleset = build().map_err(|e| format!("Landlock ABI 3 or later is needed: {e}"))?;
    // Reading is limited too: the system's tool paths, /dev and /proc, and the workspace.
    // The host's other directories stay in the replica's view, but their files — the task's
    // checks.star and solution/, the run directory, other trials — cannot be opened or
    // listed (Landlock rules follow inodes, so no path through /proc/<pid>/root reaches
    // them either).
    for dir in crate::mounts::TOOL_PATHS.iter().chain(&["/dev", "/proc"]) {
        if std::fs::symlink_metadata(dir).is_err() {
            continue;
        }
        let fd = open(Path::new(dir))?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, AccessFs::from_read(BEST_ABI)))
            .map_err(|e| format!("Landlock rules: {e}"))?;
    }
    let ws = open(workspace)?;
    let null = open(Path::new("/dev/null"))?;
    ruleset
        .add_rule(PathBeneath::new(ws, AccessFs::from_all(BEST_ABI)))
        .and_then(|r| r.add_rule(PathBeneath::new(null, AccessFs::from_file(BEST_ABI))))
        .map_err(|e| format!("Landlock rules: {e}"))
}

/// A ruleset handling every file-system right (ABI 3 at least), TCP and the scopes the kernel
/// knows, with no rule: the child adds its rules on the new mounts ([`crate::mounts`]).
fn bare_ruleset() -> Result<RulesetCreated, String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(MIN_ABI))
        .and_then(|r| {
            r.set_compatibility(CompatLevel::BestEffort)
                .handle_access(AccessFs::from_all(BEST_ABI))
        })
        .and_then(|r| r.handle_access(AccessNet::from_all(BEST_ABI)))
        .and_then(|r| r.scope(Scope::from_all(BEST_ABI)))
        .and_then(|r| r.create())
        .map_err(|e| format!("Landlock ABI 3 or later is needed: {e}"))
}

/// The Landlock access masks for the kernel's ABI (capped at the newest one used), so that
/// the child's rules are subsets of what [`bare_ruleset`] handles.
fn access_masks() -> Masks {
    // SAFETY: the version query of landlock_create_ruleset takes no pointer.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let abi = ABI::from(version.clamp(0, 6) as i32);
    Masks {
        read: AccessFs::from_read(abi).bits(),
        all: AccessFs::from_all(abi).bits(),
        file: (AccessFs::from_file(abi) & !AccessFs::Execute).bits(),
    }
}

/// The rlimits, clamped to the caller's hard limits (which only a privileged process may raise).
fn rlimits(limits: &ShellLimits) -> [(Resource, Rlimit); 5] {
    let clamp = |resource: Resource, soft: u64, hard: u64| {
        let current = rustix::process::getrlimit(resource);
        let cap = current.maximum.unwrap_or(u64::MAX);
        (
            resource,
            Rlimit {
                current: Some(soft.min(cap)),
                maximum: Some(hard.min(cap)),
            },
        )
    };
    [
        clamp(Resource::Core, 0, 0),
        clamp(
            Resource::Cpu,
            limits.cpu_seconds.max(1),
            limits.cpu_seconds.max(1) + 1,
        ),
        clamp(Resource::As, limits.memory_bytes, limits.memory_bytes),
        clamp(Resource::Fsize, limits.file_bytes, limits.file_bytes),
        clamp(Resource::Nproc, limits.max_processes, limits.max_processes),
    ]
}

fn mark(plan: &Plan, step: u8) {
    // SAFETY: the write end stays open in the parent until `spawn` returns.
    let fd = unsafe { BorrowedFd::borrow_raw(plan.step_fd) };
    let _ = rustix::io::write(fd, &[step]);
}

/// Runs in the child between fork and exec: system calls only, no allocation.
fn confine(plan: &Plan, ruleset: &mut Option<RulesetCreated>) -> io::Result<()> {
    mark(plan, STEP_SETSID);
    rustix::process::setsid()?;
    // Nothing of Bureau's but stdin/stdout/stderr reaches the command: every other descriptor
    // (the setup pipe, the Landlock ruleset, whatever the caller left open without
    // close-on-exec) is closed by `exec`.
    mark(plan, STEP_CLOSE);
    // SAFETY: plain system call.
    if unsafe { libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if !plan.cgroup_procs.is_empty() {
        mark(plan, STEP_CGROUP);
        Cgroup::join_self(&plan.cgroup_procs)?;
    }
    match &plan.view {
        Some(pivot) => confine_pivot(plan, pivot),
        None => confine_entered(plan, ruleset),
    }
}

/// The command's own mount namespace, pivoted into its view; no capability at all.
fn confine_pivot(plan: &Plan, pivot: &PivotPlan) -> io::Result<()> {
    let id = UID_BASE.wrapping_add(rustix::process::getpid().as_raw_pid() as u32);
    mark(plan, STEP_UNSHARE);
    // SAFETY: the child is single-threaded and does not share its file table or fs state.
    unsafe { rustix::thread::unshare_unsafe(plan.unshare) }?;
    if let Some(map) = &pivot.self_map {
        mark(plan, STEP_MAPS);
        map.write()?;
    }
    let step = |s: u8| mark(plan, s);
    // SAFETY: a freshly forked single-threaded child with its own mount namespace.
    unsafe {
        pivot
            .view
            .build(pivot.ruleset.as_raw_fd(), pivot.access, id, &step)
    }?;
    if plan.mode == Mode::Root {
        mark(plan, STEP_BOUNDING);
        for bit in 0..64u32 {
            let cap = CapabilitySet::from_bits_retain(1u64 << bit);
            match rustix::thread::remove_capability_from_bounding_set(cap) {
                Ok(()) | Err(Errno::INVAL) => {}
                Err(e) => return Err(e.into()),
            }
        }
        mark(plan, STEP_GROUPS);
        rustix::thread::set_thread_groups(&[])?;
        mark(plan, STEP_GID);
        let gid = rustix::process::Gid::from_raw(id);
        rustix::thread::set_thread_res_gid(gid, gid, gid)?;
        // Without keep-capabilities, leaving uid 0 clears every capability.
        mark(plan, STEP_UID);
        let uid = rustix::process::Uid::from_raw(id);
        rustix::thread::set_thread_res_uid(uid, uid, uid)?;
        mark(plan, STEP_CAPSET);
        rustix::thread::set_capabilities(
            None,
            CapabilitySets {
                effective: CapabilitySet::empty(),
                permitted: CapabilitySet::empty(),
                inheritable: CapabilitySet::empty(),
            },
        )?;
    }
    mark(plan, STEP_RLIMIT);
    for (resource, limit) in &plan.rlimits {
        rustix::process::setrlimit(*resource, *limit)?;
    }
    mark(plan, STEP_LANDLOCK);
    // SAFETY: plain system calls.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(
            libc::SYS_landlock_restrict_self,
            pivot.ruleset.as_raw_fd(),
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    mark(plan, STEP_EXEC);
    Ok(())
}

/// In a replica's namespaces: the host's tree stays visible (read-only through Landlock), as
/// before the mount-namespace view; see docs/shell.md.
fn confine_entered(plan: &Plan, ruleset: &mut Option<RulesetCreated>) -> io::Result<()> {
    if let Some(entry) = &plan.entry {
        mark(plan, STEP_ENTER);
        // SAFETY: a freshly forked single-threaded child; `enter` makes raw system calls only.
        unsafe { entry.enter() }?;
    }
    mark(plan, STEP_UNSHARE);
    // SAFETY: the child is single-threaded and does not share its file table or fs state.
    unsafe { rustix::thread::unshare_unsafe(plan.unshare) }?;
    if plan.mode == Mode::Root {
        let id = UID_BASE.wrapping_add(rustix::process::getpid().as_raw_pid() as u32);
        mark(plan, STEP_BOUNDING);
        for bit in 0..64u32 {
            let cap = CapabilitySet::from_bits_retain(1u64 << bit);
            if KEEP_CAPS.contains(cap) {
                continue;
            }
            match rustix::thread::remove_capability_from_bounding_set(cap) {
                Ok(()) | Err(Errno::INVAL) => {}
                Err(e) => return Err(e.into()),
            }
        }
        mark(plan, STEP_KEEPCAPS);
        rustix::thread::set_keep_capabilities(true)?;
        mark(plan, STEP_GROUPS);
        rustix::thread::set_thread_groups(&[])?;
        mark(plan, STEP_GID);
        let gid = rustix::process::Gid::from_raw(id);
        rustix::thread::set_thread_res_gid(gid, gid, gid)?;
        mark(plan, STEP_UID);
        let uid = rustix::process::Uid::from_raw(id);
        rustix::thread::set_thread_res_uid(uid, uid, uid)?;
        mark(plan, STEP_CAPSET);
        rustix::thread::set_capabilities(
            None,
            CapabilitySets {
                effective: KEEP_CAPS,
                permitted: KEEP_CAPS,
                inheritable: KEEP_CAPS,
            },
        )?;
        mark(plan, STEP_AMBIENT);
        rustix::thread::configure_capability_in_ambient_set(CapabilitySet::DAC_OVERRIDE, true)?;
        rustix::thread::configure_capability_in_ambient_set(CapabilitySet::DAC_READ_SEARCH, true)?;
    }
    mark(plan, STEP_RLIMIT);
    for (resource, limit) in &plan.rlimits {
        rustix::process::setrlimit(*resource, *limit)?;
    }
    mark(plan, STEP_LANDLOCK);
    let Some(ruleset) = ruleset.take() else {
        return Err(io::Error::from_raw_os_error(Errno::INVAL.raw_os_error()));
    };
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced && status.no_new_privs => {}
        Ok(_) => return Err(io::Error::from_raw_os_error(Errno::NOSYS.raw_os_error())),
        Err(RulesetError::RestrictSelf(
            RestrictSelfError::RestrictSelfCall { source, .. }
            | RestrictSelfError::SetNoNewPrivsCall { source, .. },
        )) => return Err(source),
        Err(_) => return Err(io::Error::from_raw_os_error(Errno::INVAL.raw_os_error())),
    }
    mark(plan, STEP_EXEC);
    Ok(())
}

/// The last step the child reached before failing.
fn failed_step(step_r: OwnedFd) -> &'static str {
    let mut file = std::fs::File::from(step_r);
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    bytes
        .last()
        .and_then(|&b| STEPS.get(usize::from(b)).copied())
        .unwrap_or("fork")
}

fn setup_hint(step: &str, source: &io::Error, mode: Mode) -> String {
    let hint = if step.starts_with("unshare") {
        match mode {
            Mode::Root => {
                "network namespaces are needed (root without CAP_SYS_ADMIN, or a \
                           container that forbids unshare?)"
            }
            Mode::User => {
                "unprivileged user namespaces are needed: check sysctl \
                           user.max_user_namespaces, kernel.unprivileged_userns_clone and \
                           kernel.apparmor_restrict_unprivileged_userns"
            }
        }
    } else if step.starts_with("landlock") {
        "Landlock must be enabled (ABI 3 or later)"
    } else if step.starts_with("enter") {
        "the replica's holder must be alive and the entry current (ask Replica::entry again \
         after a reset)"
    } else if step.starts_with("exec") {
        "/bin/sh must be executable"
    } else {
        "the process needs to be able to drop privileges and set rlimits"
    };
    format!("confinement step `{step}` failed: {source} — {hint}")
}

/// One output stream of the child: read until EOF, keep the first `cap` bytes.
struct Stream<R> {
    reader: Option<R>,
    buf: Vec<u8>,
    cap: usize,
    bytes_read: u64,
    over: bool,
}

impl<R: Read + AsFd> Stream<R> {
    fn new(reader: Option<R>, cap: usize) -> Self {
        Stream {
            reader,
            buf: Vec::new(),
            cap,
            bytes_read: 0,
            over: false,
        }
    }

    fn open(&self) -> bool {
        self.reader.is_some()
    }

    /// Reads what is available (called after poll said so); closes on EOF or error.
    fn read_ready(&mut self) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let mut chunk = [0u8; 16 * 1024];
        match reader.read(&mut chunk) {
            Ok(0) => self.reader = None,
            Ok(n) => {
                self.bytes_read += n as u64;
                let room = self.cap.saturating_sub(self.buf.len());
                self.buf.extend_from_slice(&chunk[..n.min(room)]);
                if n > room {
                    self.over = true;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.reader = None,
        }
    }

    fn finish(self) -> Captured {
        Captured {
            text: String::from_utf8_lossy(&self.buf).into_owned(),
            truncated: self.over,
            bytes_read: self.bytes_read,
        }
    }
}

fn timespec(d: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

/// Polls both streams — and the pidfd, while the shell runs — once; reads what is ready. True
/// when the pidfd says the shell exited.
fn poll_once(
    pidfd: Option<&OwnedFd>,
    out: &mut Stream<ChildStdout>,
    err: &mut Stream<ChildStderr>,
    wait: Duration,
) -> Result<bool, Errno> {
    let ready = PollFlags::IN | PollFlags::HUP | PollFlags::ERR;
    let (exited, out_ready, err_ready) = {
        let mut fds = Vec::new();
        let pid_at = pidfd.map(|p| {
            fds.push(PollFd::new(p, PollFlags::IN));
            fds.len() - 1
        });
        let out_at = out.reader.as_ref().map(|r| {
            fds.push(PollFd::new(r, PollFlags::IN));
            fds.len() - 1
        });
        let err_at = err.reader.as_ref().map(|r| {
            fds.push(PollFd::new(r, PollFlags::IN));
            fds.len() - 1
        });
        match rustix::event::poll(&mut fds, Some(&timespec(wait))) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
        let hit = |i: Option<usize>| i.is_some_and(|i| fds[i].revents().intersects(ready));
        (hit(pid_at), hit(out_at), hit(err_at))
    };
    if out_ready {
        out.read_ready();
    }
    if err_ready {
        err.read_ready();
    }
    Ok(exited)
}

/// SIGKILL to the process group, to every process of the command's cgroup, and — as root —
/// to every process of the command's uid.
fn kill_all(pgid: u32, uid: Option<u32>, cgroup: Option<&Cgroup>) {
    if let Some(pid) = Pid::from_raw(pgid as i32) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
    if let Some(group) = cgroup {
        group.kill_all();
    }
    if let Some(uid) = uid {
        kill_uid(uid);
    }
}

/// Forks a helper that takes `uid` and sends `kill(-1, SIGKILL)`: every process of that uid,
/// whatever its process group or session, and nothing else.
fn kill_uid(uid: u32) {
    // SAFETY: the child makes only raw system calls and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let id = rustix::process::Uid::from_raw(uid);
        if rustix::thread::set_thread_res_uid(id, id, id).is_ok() {
            // SAFETY: plain system call.
            unsafe {
                libc::kill(-1, libc::SIGKILL);
            }
        }
        // SAFETY: ends the forked child without running the parent's destructors.
        unsafe { libc::_exit(0) };
    }
    if let Some(pid) = Pid::from_raw(pid) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
    }
}

/// Live (non-zombie) processes in process group `pgid` or, as root, of `uid`.
fn live_processes(pgid: u32, uid: Option<u32>) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut count = 0;
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let path = PathBuf::from("/proc").join(pid.to_string());
        let Ok(stat) = std::fs::read_to_string(path.join("stat")) else {
            continue;
        };
        // Fields after the command name in parentheses: state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        let pgrp = fields.nth(1).and_then(|s| s.parse::<u32>().ok());
        if state == "Z" || state == "X" {
            continue;
        }
        let in_group = pgrp == Some(pgid);
        let of_uid = uid.is_some_and(|uid| {
            std::fs::read_to_string(path.join("status")).is_ok_and(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Uid:"))
                    .and_then(|l| l.split_whitespace().next())
                    .and_then(|u| u.parse::<u32>().ok())
                    == Some(uid)
            })
        });
        if in_group || of_uid {
            count += 1;
        }
    }
    count
}

/// Kills again until nothing of the command is alive (at most about a second).
fn reap_leftovers(pgid: u32, uid: Option<u32>, cgroup: Option<&Cgroup>) -> usize {
    let until = Instant::now() + Duration::from_secs(1);
    loop {
        let n = live_processes(pgid, uid);
        if n == 0 || Instant::now() >= until {
            return n;
        }
        kill_all(pgid, uid, cgroup);
        std::thread::sleep(Duration::from_millis(20));
    }
}
