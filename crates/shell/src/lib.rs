//! A confined shell: run one `/bin/sh -c <command>` with the workspace as its only writable
//! path, no network, and limits on CPU time, memory, file size, processes, output and wall time.
//!
//! ```no_run
//! use bureau_shell::{Confinement, ShellLimits};
//! let shell = Confinement::probe()?; // says precisely what is missing, never runs unconfined
//! let out = shell.run("ls -la", std::path::Path::new("/tmp/ws"), &ShellLimits::default())?;
//! println!("{} {}", out.stdout.text, out.stderr.text);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How the command is confined (Linux)
//!
//! The child is set up between `fork` and `exec` (`CommandExt::pre_exec`), not by re-executing a
//! helper binary: a re-exec design needs a binary to find at run time (the `bureau` CLI, a test
//! binary, a library user's own program), while `pre_exec` works from any program that links the
//! crate. The price is the usual `pre_exec` discipline, which this crate keeps: everything that
//! allocates or locks is prepared in the parent before the spawn — the Landlock ruleset (created
//! and filled in the parent; the child only calls `landlock_restrict_self` on its descriptor),
//! the limits, the capability sets — and the child makes only raw system calls (`rustix`), with
//! no allocation, no lock and no formatting. The child reports which step it is at through a
//! close-on-exec pipe, so a failed setup is reported by name (`unshare: EPERM`), not as a bare
//! errno.
//!
//! In order, the child:
//! 1. `setsid()` — its own session and process group, so the whole group can be killed;
//!    `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` — no descriptor of the caller's above 2
//!    survives `exec`; it joins the command's cgroup ([`cgroup`]: memory and processes of the
//!    whole command, and a kill that reaches all of it) where one is writable;
//! 2. `unshare` a mount, network (only loopback, down: nothing is reachable, not even the
//!    parent's 127.0.0.1) and IPC namespace — as root directly, otherwise together with a new
//!    user namespace mapping only the caller's uid and gid;
//! 3. builds the command's own view of the file system and `pivot_root`s into it: a read-only
//!    tmpfs root with the system's tool paths bound read-only, a few device nodes, `/proc`
//!    (as root a fresh one with `hidepid=invisible`), a private size-bounded `/tmp`, and the
//!    workspace at its usual path — as root an id-mapped mount, so the root-owned workspace
//!    appears owned by the command's uid and needs no capability to write (`mounts.rs`);
//! 4. as root only: drops every capability and switches to an unprivileged uid/gid of its own
//!    (`UID_BASE` + its pid, unique among running commands) — the kernel exempts uid 0 from
//!    `RLIMIT_NPROC`, and a uid of its own lets `kill(-1)` from that uid reach all of it;
//! 5. sets the rlimits: `RLIMIT_CPU` (soft = limit → `SIGXCPU`, hard = limit + 1 s → `SIGKILL`),
//!    `RLIMIT_AS` (memory, per process), `RLIMIT_FSIZE` (per file), `RLIMIT_NPROC` (processes;
//!    counted per uid, and the uid — or, for a non-root caller, the user namespace — is this
//!    command's alone), `RLIMIT_CORE` = 0 (no core files in the workspace);
//! 6. `no_new_privs` and Landlock: read and execute beneath the new root, every access beneath
//!    the workspace and `/tmp`, read/write on the device nodes; when the kernel offers them,
//!    TCP bind/connect are denied (ABI 4) and signals and abstract unix sockets are scoped to
//!    the sandbox (ABI 6). Landlock ABI 3 (Linux 6.2; it covers `truncate`) is the minimum.
//!
//! The environment is cleared (no API key of the parent leaks): `PATH`, `HOME` = `/tmp` (the
//! private one, so dot files and caches stay out of the workspace),
//! `LANG=C.UTF-8`. Standard input is `/dev/null`.
//!
//! The parent watches the child's stdout, stderr and a pidfd with `poll`: output beyond
//! `output_bytes` (per stream) or the wall limit kills the whole process group (`SIGKILL` to
//! `-pgid`). When the shell exits, whatever it left running (`sleep 100 &`) is killed the same
//! way. As root, a short-lived helper that takes the command's uid then sends `kill(-1,
//! SIGKILL)`, which reaches every process of that uid, including ones that left the process
//! group with `setsid`.
//!
//! In an overlay replica (`bureau-replica`), [`Confinement::run_in_replica`] first enters the
//! replica's user and mount namespaces (right after `setsid`, with [`bureau_replica::NsEntry`]),
//! so the working directory is the merged directory as seen inside and `getcwd()` names it
//! correctly; there the command gets no view of its own (the host's tree stays visible,
//! read-only through Landlock, and as root it keeps `CAP_DAC_OVERRIDE` over the replica), as
//! before the mount-namespace view. See docs/shell.md.
//!
//! Where any of this cannot be set up — not Linux, no Landlock or an ABI below 3, user or
//! network namespaces forbidden, `/bin/sh` missing — [`Confinement::probe`] returns
//! [`ShellUnavailable`] naming what is missing, and no command is ever run unconfined.
//!
//! What is not enforced: CPU time is per process (a command that runs many CPU-bound
//! processes one after another is bounded by the wall limit instead); the file-size limit is
//! per file; without a writable cgroup (most non-root callers) memory and processes are
//! limited per process only and a process that leaves the process group with `setsid` is not
//! reached; in a replica and for a non-root caller, see docs/shell.md.

use std::path::PathBuf;
use std::time::Duration;

#[cfg(target_os = "linux")]
pub mod cgroup;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(not(target_os = "linux"))]
mod other;

#[cfg(target_os = "linux")]
pub use linux::UID_BASE;

/// Limits on one command. Every field has a default ([`ShellLimits::default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLimits {
    /// Wall-clock time, after which the whole process group is killed.
    pub wall: Duration,
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Memory of the whole command in bytes (its cgroup's `memory.max`, where a cgroup is
    /// writable) and address space of each process (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Largest single file a process may write, in bytes (`RLIMIT_FSIZE`: per file, not the
    /// total the command writes).
    pub file_bytes: u64,
    /// Processes (and threads) the command may have at once (its cgroup's `pids.max`, and
    /// `RLIMIT_NPROC`).
    pub max_processes: u64,
    /// Bytes kept of stdout and of stderr each; more kills the command.
    pub output_bytes: usize,
}

impl Default for ShellLimits {
    fn default() -> Self {
        Self {
            wall: Duration::from_secs(60),
            cpu_seconds: 30,
            memory_bytes: 2 << 30,
            file_bytes: 256 << 20,
            max_processes: 128,
            output_bytes: 64 << 10,
        }
    }
}

/// One captured output stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Captured {
    /// What the command wrote, up to the limit (invalid UTF-8 replaced).
    pub text: String,
    /// The command wrote more than the limit; `text` holds the first `output_bytes`.
    pub truncated: bool,
    /// Bytes read from the stream (at least `text`'s length when truncated).
    pub bytes_read: u64,
}

/// The limit that ended a command, when Bureau observed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LimitHit {
    /// The wall-clock limit: the process group was killed.
    Wall,
    /// Stdout or stderr exceeded `output_bytes`: the process group was killed.
    Output,
    /// The shell was killed for exceeding its CPU time (`SIGXCPU`/`SIGKILL` at the limit).
    Cpu,
    /// The command's cgroup reached its memory limit and the kernel's OOM killer killed a
    /// process of it.
    Memory,
}

impl LimitHit {
    /// A stable lower-case name (`wall`, `output`, `cpu`).
    pub fn name(self) -> &'static str {
        match self {
            LimitHit::Wall => "wall",
            LimitHit::Output => "output",
            LimitHit::Cpu => "cpu",
            LimitHit::Memory => "memory",
        }
    }
}

/// What one command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutcome {
    /// The shell's exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that killed the shell, when one did.
    pub signal: Option<i32>,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The wall limit was reached and the command killed.
    pub timed_out: bool,
    /// The limit that ended the command, when Bureau observed one.
    pub limit: Option<LimitHit>,
    /// Wall time from spawn to the end of the command (leftovers killed, pipes drained).
    pub wall: Duration,
    /// The shell's pid, which is also its process group and session id.
    pub pid: u32,
    /// Processes still alive after the command ended and Bureau's kills (normally 0).
    pub leftover_processes: usize,
}

impl ShellOutcome {
    /// The command exited with code 0 and no limit was hit.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && self.limit.is_none()
    }

    /// A one-line human note on how the command ended, for tool results.
    pub fn note(&self) -> String {
        let mut parts = Vec::new();
        match (self.exit_code, self.signal) {
            (Some(code), _) => parts.push(format!("exit code {code}")),
            (None, Some(sig)) => parts.push(format!("killed by signal {sig}")),
            (None, None) => parts.push("no exit status".to_string()),
        }
        match self.limit {
            Some(LimitHit::Wall) => parts.push(format!(
                "wall-time limit reached after {:.1}s: the command and its processes were killed",
                self.wall.as_secs_f64()
            )),
            Some(LimitHit::Output) => parts.push(
                "output limit exceeded: the command and its processes were killed".to_string(),
            ),
            Some(LimitHit::Cpu) => parts.push("CPU-time limit exceeded".to_string()),
            Some(LimitHit::Memory) => parts.push(
                "memory limit of the whole command reached: the kernel killed a process of it"
                    .to_string(),
            ),
            None => {}
        }
        for (name, stream) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            if stream.truncated {
                parts.push(format!(
                    "{name} truncated to its first {} bytes ({} bytes read)",
                    stream.text.len(),
                    stream.bytes_read
                ));
            }
        }
        if self.leftover_processes > 0 {
            parts.push(format!(
                "{} process(es) could not be killed",
                self.leftover_processes
            ));
        }
        parts.join("; ")
    }
}

/// The confined shell cannot be set up on this machine. Nothing is run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the confined shell is unavailable: {}; no command is ever run unconfined",
    missing.join("; ")
)]
pub struct ShellUnavailable {
    /// Each missing piece, with what to do about it.
    pub missing: Vec<String>,
}

/// Running one command failed before it could run (its own failures are a [`ShellOutcome`]).
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    #[error("workspace {path}: {source} — the command runs with the workspace as its directory")]
    Workspace {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("workspace {0} is not a directory")]
    NotADirectory(PathBuf),
    #[error(
        "replica workspace {0}: the namespace entry is stale (the replica was reset or dropped since) — take a new one with Replica::entry"
    )]
    StaleEntry(PathBuf),
    #[error("the command contains a NUL byte")]
    NulByte,
    #[error("preparing the Landlock ruleset: {0}")]
    Landlock(String),
    #[error("confining the command failed at `{step}`: {source}")]
    Setup {
        step: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Unavailable(#[from] ShellUnavailable),
    #[cfg(target_os = "linux")]
    #[error("the command's cgroup: {0}")]
    Cgroup(#[from] cgroup::CgroupError),
}

/// What confinement this machine offers, found by [`Confinement::probe`]; runs commands.
#[derive(Debug, Clone)]
pub struct Confinement {
    #[cfg(target_os = "linux")]
    inner: linux::Linux,
    #[cfg(not(target_os = "linux"))]
    inner: other::Other,
}

impl Confinement {
    /// Checks what the kernel offers (Landlock ABI, namespaces, rlimits) by setting up the full
    /// confinement once around `exit 0`. Fails with what is missing.
    pub fn probe() -> Result<Confinement, ShellUnavailable> {
        #[cfg(target_os = "linux")]
        let inner = linux::Linux::probe()?;
        #[cfg(not(target_os = "linux"))]
        let inner = other::Other::probe()?;
        Ok(Confinement { inner })
    }

    /// Human-readable lines on what is enforced here (for run.json / agent definitions).
    pub fn describe(&self) -> Vec<String> {
        self.inner.describe()
    }

    /// Runs `/bin/sh -c command` confined to `workspace` under `limits`.
    pub fn run(
        &self,
        command: &str,
        workspace: &std::path::Path,
        limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        self.inner.run(command, workspace, limits)
    }

    /// Runs `/bin/sh -c command` inside an overlay replica's namespaces
    /// ([`bureau_replica::Replica::entry`]): the command enters the holder's user and mount
    /// namespaces first, so its working directory — and what `pwd`, git, python or node make
    /// of it — is the merged directory as seen inside; then it is confined exactly as by
    /// [`Confinement::run`], with that directory as the only writable path.
    pub fn run_in_replica(
        &self,
        command: &str,
        entry: &std::sync::Arc<bureau_replica::NsEntry>,
        limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        self.inner.run_entered(command, entry, limits)
    }

    /// [`Confinement::run_in_replica`] when `entry` is given, else [`Confinement::run`] in
    /// `workspace` (the entry's view is then the workspace).
    pub fn run_at(
        &self,
        command: &str,
        workspace: &std::path::Path,
        entry: Option<&std::sync::Arc<bureau_replica::NsEntry>>,
        limits: &ShellLimits,
    ) -> Result<ShellOutcome, ShellError> {
        match entry {
            Some(entry) => self.run_in_replica(command, entry, limits),
            None => self.run(command, workspace, limits),
        }
    }
}
