//! Run one computation over untrusted input where a crash cannot take the process down.
//!
//! [`run_isolated`] forks the process, runs the closure in the child under an address-space
//! limit (`RLIMIT_AS`) and a CPU-time limit (`RLIMIT_CPU`), and sends its result back over a
//! pipe, encoded as CBOR (exact for every value serde can describe, floats included); the child
//! then leaves with `_exit`, running no destructor and no `atexit` handler. The parent keeps a
//! wall-clock budget and kills the child (`SIGKILL`) at the deadline. Whatever happens to the
//! child — a stack overflow, an allocation failure (both abort the process and cannot be
//! caught with `catch_unwind`), a panic, an infinite loop — the parent gets an
//! [`IsolateError`] naming what happened and the limit involved, and carries on.
//!
//! ```
//! use bureau_isolate::{Limits, run_isolated};
//! let limits = Limits::new(std::time::Duration::from_secs(5), 256 << 20);
//! assert_eq!(run_isolated(&limits, || 6 * 7).unwrap(), 42);
//! fn deep(n: u64) -> u64 { if n == 0 { 0 } else { 1 + deep(std::hint::black_box(n - 1)) } }
//! let err = run_isolated(&limits, || deep(u64::MAX)).unwrap_err();
//! assert!(err.to_string().contains("stack"), "{err}");
//! ```
//!
//! # Why fork, and what the closure may do
//!
//! A subprocess is the only place where an abort is survivable. Re-executing the current
//! binary with a "worker" argument is not possible from a library (the binary may be a test
//! harness or someone else's program), and spawning a dedicated helper binary would make every
//! caller ship and locate it. `fork` needs nothing: the child starts with a copy of the
//! caller's memory, so the closure can read borrowed data (a document's bytes, a world to
//! check) without serialising it.
//!
//! Forking a multi-threaded process copies only the calling thread; any lock another thread
//! held at that moment stays locked forever in the child. glibc makes `malloc` safe to use
//! after `fork` (it takes and resets its arena locks around the fork), so pure computation
//! that allocates is fine. **The closure must touch no lock another thread may hold**: no
//! logging or tracing, no tokio (no runtime handle, no channel, no `block_on`), no
//! `std::io::stdout()`, no `Mutex` or `RwLock` shared with other threads, no lazily
//! initialised global another thread might be initialising, no new threads. A closure that
//! breaks this rule most likely deadlocks. Some such locks are out of the closure's hands: with
//! `RUST_BACKTRACE` set, an error that captures a backtrace (anyhow does) takes std's
//! backtrace lock, which another thread may hold while printing a panic. So a child that sleeps
//! with no CPU progress (itself and its descendants) for 3 s is killed and the call is tried
//! again, up to 3 times, then reported as [`IsolateError::Stuck`]; a child that keeps running
//! is stopped at the wall-clock budget ([`IsolateError::TimedOut`]). Parsing bytes already in
//! memory and evaluating a Starlark program over a read-only view are the intended uses. The
//! closure is `Fn` because it may run more than once.
//!
//! The child closes every inherited descriptor except its two pipes (its result and its
//! stderr, whose last lines the parent keeps to say why the child died), so it cannot keep
//! another isolated call's pipe open. The address-space limit is the child's size at the fork
//! plus [`Limits::memory_bytes`] (never above an existing hard limit). Isolated calls may nest:
//! a child can call [`run_isolated`] again (its own child is single-threaded, the safest case).
//!
//! On platforms other than Unix the closure runs in the calling process, unprotected.
//!
//! # Jobs: a small process instead of a copy of a large one
//!
//! Forking copies the page tables of the whole caller, and every page the caller writes
//! afterwards is copied again: in a process of a gigabyte that costs more than most
//! computations it isolates. [`run_job`] runs a plain function on input that crosses as CBOR,
//! in a process forked from a *zygote* that [`start_zygote`] forked at the start of the
//! program (a few megabytes, one thread: nothing copied, no lock held); the function can ask
//! the caller for more through its [`Peer`]. Without a zygote it forks the caller, as
//! [`run_isolated`] does. Limits and errors are the same. See `job/`.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// What an isolated computation may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget; the child is killed when it is spent. The CPU-time limit is this,
    /// rounded up to whole seconds, plus one second.
    pub wall: Duration,
    /// Bytes of address space the child may map beyond what it inherits at the fork.
    pub memory_bytes: u64,
    /// Largest encoded result accepted, in bytes.
    pub max_output_bytes: usize,
}

impl Limits {
    /// A wall-clock budget and a memory allowance, with results up to 1 GiB.
    pub fn new(wall: Duration, memory_bytes: u64) -> Limits {
        Limits {
            wall,
            memory_bytes,
            max_output_bytes: 1 << 30,
        }
    }

    pub(crate) fn cpu_seconds(&self) -> u64 {
        let s = self.wall.as_secs() + u64::from(self.wall.subsec_nanos() > 0);
        s.max(1) + 1
    }
}

/// Why an isolated computation gave no result. Every message names the limit involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsolateError {
    /// The wall-clock budget ran out; the child was killed.
    #[error("it did not finish within its time limit of {} and was stopped", seconds(*.limit))]
    TimedOut { limit: Duration },
    /// The child used up its CPU-time limit.
    #[error("it used up its CPU-time limit of {seconds} s and was stopped")]
    CpuLimit { seconds: u64 },
    /// An allocation failed under the address-space limit (the child aborted).
    #[error("it ran out of its memory limit of {} MiB{}", .limit_bytes >> 20, detail(.message))]
    OutOfMemory { limit_bytes: u64, message: String },
    /// The child overflowed its stack (runaway recursion or data nested too deeply).
    #[error("it overflowed its stack (data nested too deeply or runaway recursion) and crashed")]
    StackOverflow,
    /// The child died of another signal.
    #[error("it crashed ({name}, signal {signal}){}", detail(.message))]
    Crashed {
        signal: i32,
        name: &'static str,
        message: String,
    },
    /// The closure panicked (the panic was caught in the child).
    #[error("it failed with an internal error: {0}")]
    Panicked(String),
    /// The result was larger than [`Limits::max_output_bytes`].
    #[error("its result is larger than the limit of {limit} bytes")]
    OutputTooLarge { limit: usize },
    /// The child stopped making progress (asleep, using no CPU) on every try: most likely a
    /// lock another thread held when the process forked (see the crate docs).
    #[error("it stopped making progress (blocked for {seconds} s on each of {tries} tries)")]
    Stuck { seconds: u64, tries: u32 },
    /// The child could not be started (fork or pipe failed).
    #[error("no isolated process could be started: {0}")]
    Spawn(String),
    /// The child ended without a well-formed result.
    #[error("the isolated process ended without a result: {0}")]
    Protocol(String),
}

fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn detail(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// Run `f` in a forked child under `limits` and return its result. See the crate docs for
/// what `f` may do.
pub fn run_isolated<T, F>(limits: &Limits, f: F) -> Result<T, IsolateError>
where
    T: Serialize + DeserializeOwned,
    F: Fn() -> T,
{
    #[cfg(unix)]
    {
        unix::run(limits, f)
    }
    #[cfg(not(unix))]
    {
        let _ = limits;
        Ok(f())
    }
}

mod job;
pub use job::memo::set_memo;
pub use job::{
    MAX_QUESTION_BYTES, Peer, prepare_zygote, run_job, run_on_bytes, run_on_bytes_memo,
    start_zygote, zygote_lost, zygote_running,
};

#[cfg(unix)]
mod unix {
    use std::time::Instant;

    use super::*;

    const TAG_OK: u8 = 0;
    const TAG_PANIC: u8 = 1;
    const TAG_ENCODE: u8 = 2;
    /// Bytes of the child's stderr kept to explain its death: its start (where Rust says why
    /// it aborts, before any backtrace) and its end.
    const STDERR_HEAD: usize = 8192;
    const STDERR_TAIL: usize = 4096;

    /// The start and the end of what the child wrote to stderr.
    #[derive(Default)]
    struct Stderr {
        head: Vec<u8>,
        tail: Vec<u8>,
    }

    impl Stderr {
        fn push(&mut self, mut chunk: &[u8]) {
            if self.head.len() < STDERR_HEAD {
                let n = chunk.len().min(STDERR_HEAD - self.head.len());
                self.head.extend_from_slice(&chunk[..n]);
                chunk = &chunk[n..];
            }
            self.tail.extend_from_slice(chunk);
            if self.tail.len() > 2 * STDERR_TAIL {
                self.tail.drain(..self.tail.len() - STDERR_TAIL);
            }
        }

        fn text(&self) -> String {
            let mut all = self.head.clone();
            all.push(b'\n');
            all.extend_from_slice(&self.tail);
            String::from_utf8_lossy(&all).into_owned()
        }
    }

    pub(crate) struct Fd(pub(crate) libc::c_int);

    impl Drop for Fd {
        fn drop(&mut self) {
            // SAFETY: the descriptor is owned by this value and closed once.
            unsafe { libc::close(self.0) };
        }
    }

    pub(crate) fn last_os_error(what: &str) -> IsolateError {
        IsolateError::Spawn(format!("{what}: {}", std::io::Error::last_os_error()))
    }

    impl Fd {
        /// The descriptor, no longer closed by this value.
        pub(crate) fn into_raw(self) -> libc::c_int {
            let fd = self.0;
            std::mem::forget(self);
            fd
        }
    }

    /// A connected pair of Unix sockets of `kind` (`SOCK_STREAM`, `SOCK_SEQPACKET`),
    /// close-on-exec.
    pub(crate) fn socketpair(kind: libc::c_int) -> Result<(Fd, Fd), IsolateError> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the pair.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                kind | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        } != 0
        {
            return Err(last_os_error("socketpair"));
        }
        Ok((Fd(fds[0]), Fd(fds[1])))
    }

    /// Wait up to `wait_ms` for input on `a` and `b` (-1: not watched); their `revents`.
    pub(crate) fn poll2(
        a: libc::c_int,
        b: libc::c_int,
        wait_ms: libc::c_int,
    ) -> std::io::Result<[libc::c_short; 2]> {
        let mut fds = [a, b].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: `fds` is a valid array of two pollfd.
        if unsafe { libc::poll(fds.as_mut_ptr(), 2, wait_ms) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok([fds[0].revents, fds[1].revents])
    }

    pub(crate) fn pipe() -> Result<(Fd, Fd), IsolateError> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(last_os_error("pipe2"));
        }
        Ok((Fd(fds[0]), Fd(fds[1])))
    }

    /// The process's current address-space size in bytes (0 if unknown).
    pub(crate) fn address_space_size() -> u64 {
        let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
            return 0;
        };
        let pages: u64 = statm
            .split_whitespace()
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        pages.saturating_mul(u64::try_from(page).unwrap_or(4096))
    }

    /// A child asleep with no CPU progress (itself and its descendants) for this long is stuck.
    pub(crate) const STUCK_AFTER: Duration = Duration::from_secs(3);
    /// Tries before a stuck child is reported.
    pub(crate) const TRIES: u32 = 3;

    pub(super) fn run<T, F>(limits: &Limits, f: F) -> Result<T, IsolateError>
    where
        T: Serialize + DeserializeOwned,
        F: Fn() -> T,
    {
        // A child that forked while another thread held a lock it then needs (the backtrace
        // lock, when RUST_BACKTRACE makes errors capture backtraces) sleeps forever. That is
        // a property of the moment of the fork, not of the input: try again.
        for _ in 1..TRIES {
            match run_once(limits, &f) {
                Err(Stuck) => continue,
                Ok(r) => return r,
            }
        }
        match run_once(limits, &f) {
            Err(Stuck) => Err(IsolateError::Stuck {
                seconds: STUCK_AFTER.as_secs(),
                tries: TRIES,
            }),
            Ok(r) => r,
        }
    }

    struct Stuck;

    fn run_once<T, F>(limits: &Limits, f: &F) -> Result<Result<T, IsolateError>, Stuck>
    where
        T: Serialize + DeserializeOwned,
        F: Fn() -> T,
    {
        let (out_r, out_w) = match pipe() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let (err_r, err_w) = match pipe() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let memory_limit = address_space_size().saturating_add(limits.memory_bytes);
        let cpu = limits.cpu_seconds();
        let start = Instant::now();
        // SAFETY: the child runs only `child` (below), which touches no lock held by another
        // thread (see the crate docs) and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Ok(Err(last_os_error("fork")));
        }
        if pid == 0 {
            child(out_w.0, err_w.0, memory_limit, cpu, f);
        }
        drop(out_w);
        drop(err_w);
        let mut stuck = false;
        let r = parent(
            limits,
            pid,
            out_r,
            err_r,
            start,
            memory_limit,
            &mut stuck,
            true,
        );
        if stuck {
            Err(Stuck)
        } else {
            Ok(r.and_then(|data| decode(&data)))
        }
    }

    /// CPU ticks used by `pid` and its descendants, and whether all of them are asleep
    /// (state `S`: waiting on a lock or an event, not running, not in disk I/O).
    fn tree_cpu(pid: libc::pid_t) -> Option<(u64, bool)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name may hold spaces: fields start after its closing parenthesis.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let asleep = fields.first() == Some(&"S");
        let num = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // utime, stime, cutime, cstime are fields 14..=17 (11..=14 after the state field's 3).
        let mut ticks = num(11) + num(12) + num(13) + num(14);
        let mut all_asleep = asleep;
        let children =
            std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
        for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
            if let Some((t, a)) = tree_cpu(c) {
                ticks += t;
                all_asleep &= a;
            }
        }
        Some((ticks, all_asleep))
    }

    /// The child: set up descriptors and limits, run `f`, write the framed result, `_exit`.
    fn child<T: Serialize, F: Fn() -> T>(
        out: libc::c_int,
        err: libc::c_int,
        memory_limit: u64,
        cpu: u64,
        f: F,
    ) -> ! {
        child_raw(out, err, None, memory_limit, cpu, || {
            let value = f();
            let mut body = Vec::new();
            ciborium::into_writer(&value, &mut body)
                .map(|_| body)
                .map_err(|e| e.to_string())
        })
    }

    /// The child of any isolated call: its stderr becomes `err`, its result goes to `out`
    /// (placed at descriptor 3), `conn` (when given) is placed at descriptor 4 and every other
    /// descriptor is closed; then the limits are set and `body` runs. `body` gives the CBOR of
    /// the result, or why it cannot be encoded.
    pub(crate) fn child_raw<B: FnOnce() -> Result<Vec<u8>, String>>(
        out: libc::c_int,
        err: libc::c_int,
        conn: Option<libc::c_int>,
        memory_limit: u64,
        cpu: u64,
        body: B,
    ) -> ! {
        // SAFETY: plain system calls on descriptors this process owns; nothing here allocates
        // or takes a lock.
        unsafe {
            // Move every source out of the target range first: a source may be 2, 3 or 4.
            let err_h = libc::fcntl(err, libc::F_DUPFD, 10);
            let out_h = libc::fcntl(out, libc::F_DUPFD, 10);
            let conn_h = conn.map(|c| libc::fcntl(c, libc::F_DUPFD, 10));
            libc::dup2(err_h, 2);
            libc::dup2(out_h, 3);
            if let Some(c) = conn_h {
                libc::dup2(c, 4);
            }
            let first_closed = if conn.is_some() { 5u32 } else { 4u32 };
            if libc::syscall(libc::SYS_close_range, first_closed, u32::MAX, 0u32) != 0 {
                for fd in first_closed as libc::c_int..4096 {
                    libc::close(fd);
                }
            }
            set_limit(libc::RLIMIT_AS, memory_limit, memory_limit);
            set_limit(libc::RLIMIT_CPU, cpu, cpu + 1);
            // No core files for a crash of an isolated child.
            set_limit(libc::RLIMIT_CORE, 0, 0);
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        let mut frame = vec![0u8; 8];
        match result {
            Ok(Ok(encoded)) => {
                frame.push(TAG_OK);
                frame.extend_from_slice(&encoded);
            }
            Ok(Err(e)) => {
                frame.push(TAG_ENCODE);
                frame.extend_from_slice(e.as_bytes());
            }
            Err(payload) => {
                frame.push(TAG_PANIC);
                let msg = if let Some(s) = payload.downcast_ref::<&str>() {
                    (*s).to_string()
                } else if let Some(s) = payload.downcast_ref::<String>() {
                    s.clone()
                } else {
                    "a panic".to_string()
                };
                frame.extend_from_slice(msg.as_bytes());
            }
        }
        let len = (frame.len() - 8) as u64;
        frame[..8].copy_from_slice(&len.to_le_bytes());
        let mut sent = 0;
        while sent < frame.len() {
            // SAFETY: writes from a live buffer to our own descriptor 3.
            let n = unsafe {
                libc::write(
                    3,
                    frame[sent..].as_ptr().cast::<libc::c_void>(),
                    frame.len() - sent,
                )
            };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // SAFETY: leaving the child without running anything else.
                unsafe { libc::_exit(3) };
            }
            sent += n as usize;
        }
        // SAFETY: leaving the child without destructors or atexit handlers.
        unsafe { libc::_exit(0) }
    }

    /// # Safety
    /// A plain `setrlimit`; lowers only (a value above the hard limit is clamped to it).
    unsafe fn set_limit(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) {
        let mut old = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `old` is a valid rlimit to fill.
        if unsafe { libc::getrlimit(resource, &mut old) } != 0 {
            return;
        }
        let hard = hard.min(old.rlim_max);
        let soft = soft.min(hard);
        let new = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: `new` is a valid rlimit.
        unsafe { libc::setrlimit(resource, &new) };
    }

    /// Watch the child `pid` until it gives its result or is stopped: the complete result
    /// frame (length and body, see [`decode`]) or why there is none. With `detect_stuck`, a
    /// child asleep with no CPU progress for [`STUCK_AFTER`] is killed and `stuck_out` set.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn parent(
        limits: &Limits,
        pid: libc::pid_t,
        out: Fd,
        err: Fd,
        start: Instant,
        memory_limit: u64,
        stuck_out: &mut bool,
        detect_stuck: bool,
    ) -> Result<Vec<u8>, IsolateError> {
        let deadline = start + limits.wall;
        let mut progress = (tree_cpu(pid).map(|t| t.0), Instant::now());
        let mut last_check = Instant::now();
        let mut stuck = false;
        let mut data: Vec<u8> = Vec::new();
        let mut stderr = Stderr::default();
        let mut out_open = true;
        let mut err_open = true;
        let mut too_large = false;
        let mut timed_out = false;
        let mut buf = vec![0u8; 64 * 1024];
        while out_open || err_open {
            let now = Instant::now();
            if now >= deadline {
                timed_out = true;
                break;
            }
            if detect_stuck
                && now - last_check >= Duration::from_millis(250)
                && let Some((ticks, asleep)) = tree_cpu(pid)
            {
                last_check = now;
                if Some(ticks) != progress.0 || !asleep {
                    progress = (Some(ticks), now);
                } else if now - progress.1 >= STUCK_AFTER {
                    stuck = true;
                    break;
                }
            }
            let wait_ms = (deadline - now).as_millis().clamp(1, 250) as libc::c_int;
            let watched = [
                if out_open { out.0 } else { -1 },
                if err_open { err.0 } else { -1 },
            ];
            let revents = match poll2(watched[0], watched[1], wait_ms) {
                Ok(r) => r,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    kill_and_reap(pid);
                    return Err(last_os_error("poll"));
                }
            };
            for (i, (fd, revents)) in watched.into_iter().zip(revents).enumerate() {
                if fd < 0 || revents == 0 {
                    continue;
                }
                // SAFETY: reading into a live buffer from our own descriptor.
                let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if r < 0 {
                    if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    if i == 0 {
                        out_open = false;
                    } else {
                        err_open = false;
                    }
                    continue;
                }
                let chunk = &buf[..r as usize];
                if r == 0 {
                    if i == 0 {
                        out_open = false;
                    } else {
                        err_open = false;
                    }
                } else if i == 0 {
                    progress.1 = Instant::now();
                    data.extend_from_slice(chunk);
                    if data.len() > limits.max_output_bytes.saturating_add(9) {
                        too_large = true;
                    }
                } else {
                    stderr.push(chunk);
                }
            }
            // A complete frame needs no wait for the child's stderr to close; a closed result
            // pipe without one means the child died.
            if too_large || !out_open || frame_complete(&data) {
                break;
            }
        }
        if stuck {
            kill_and_reap(pid);
            *stuck_out = true;
            return Err(IsolateError::Protocol("stuck".into()));
        }
        if timed_out || too_large {
            kill_and_reap(pid);
            return Err(if too_large {
                IsolateError::OutputTooLarge {
                    limit: limits.max_output_bytes,
                }
            } else {
                IsolateError::TimedOut { limit: limits.wall }
            });
        }
        let status = match wait_until(pid, deadline) {
            Some(s) => s,
            None => {
                kill_and_reap(pid);
                if frame_complete(&data) {
                    // The result arrived; the child merely lingered.
                    return Ok(data);
                }
                return Err(IsolateError::TimedOut { limit: limits.wall });
            }
        };
        // Drain what the child wrote to stderr before it died.
        if err_open {
            drain(err.0, &mut stderr, &mut buf);
        }
        let message = stderr_message(&stderr);
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            return Err(classify(signal, message, memory_limit, limits));
        }
        let code = libc::WEXITSTATUS(status);
        if code == 0 && frame_complete(&data) {
            return Ok(data);
        }
        if message.contains("memory allocation of") {
            return Err(IsolateError::OutOfMemory {
                limit_bytes: limits.memory_bytes,
                message,
            });
        }
        Err(IsolateError::Protocol(format!(
            "exit status {code}{}",
            detail(&message)
        )))
    }

    fn frame_complete(data: &[u8]) -> bool {
        data.len() >= 9
            && data[..8]
                .try_into()
                .map(u64::from_le_bytes)
                .is_ok_and(|n| data.len() as u64 >= 8 + n)
    }

    pub(crate) fn decode<T: DeserializeOwned>(data: &[u8]) -> Result<T, IsolateError> {
        let body = &data[8..];
        let (tag, rest) = (body[0], &body[1..]);
        match tag {
            TAG_OK => ciborium::from_reader(rest)
                .map_err(|e| IsolateError::Protocol(format!("the result cannot be decoded: {e}"))),
            TAG_PANIC => Err(IsolateError::Panicked(
                String::from_utf8_lossy(rest).into_owned(),
            )),
            _ => Err(IsolateError::Protocol(format!(
                "the result cannot be encoded: {}",
                String::from_utf8_lossy(rest)
            ))),
        }
    }

    fn drain(fd: libc::c_int, into: &mut Stderr, buf: &mut [u8]) {
        // SAFETY: making our own descriptor non-blocking.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        loop {
            // SAFETY: reading into a live buffer from our own descriptor.
            let r = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if r <= 0 {
                break;
            }
            into.push(&buf[..r as usize]);
        }
    }

    /// The line of the child's stderr that says why it died: Rust's own line for a stack
    /// overflow or a failed allocation when there is one (a backtrace may follow it), else
    /// the last line that is not part of a backtrace.
    fn stderr_message(stderr: &Stderr) -> String {
        let text = stderr.text();
        let known = text
            .lines()
            .map(str::trim)
            .find(|l| l.contains("memory allocation of") || l.contains("overflowed its stack"));
        let line = known
            .or_else(|| {
                text.lines().map(str::trim).rev().find(|l| {
                    !l.is_empty()
                        && !l.starts_with("note:")
                        && !l.starts_with("at ")
                        && !l.starts_with("stack backtrace")
                        && l.split(':')
                            .next()
                            .is_none_or(|n| n.trim().parse::<u32>().is_err())
                })
            })
            .unwrap_or("");
        let mut s: String = line.chars().take(300).collect();
        if s.len() < line.len() {
            s.push('…');
        }
        s
    }

    fn classify(
        signal: libc::c_int,
        message: String,
        _memory_limit: u64,
        limits: &Limits,
    ) -> IsolateError {
        if message.contains("has overflowed its stack") || message.contains("stack overflow") {
            return IsolateError::StackOverflow;
        }
        if message.contains("memory allocation of") || message.contains("out of memory") {
            return IsolateError::OutOfMemory {
                limit_bytes: limits.memory_bytes,
                message,
            };
        }
        match signal {
            libc::SIGXCPU => IsolateError::CpuLimit {
                seconds: limits.cpu_seconds(),
            },
            _ => IsolateError::Crashed {
                signal,
                name: signal_name(signal),
                message,
            },
        }
    }

    /// How a child killed by `signal` is described.
    pub(crate) fn signal_name(signal: libc::c_int) -> &'static str {
        match signal {
            libc::SIGSEGV | libc::SIGBUS => {
                "a segmentation fault: a stack overflow or a bad memory access"
            }
            libc::SIGABRT => "aborted",
            libc::SIGKILL => "killed: the CPU-time limit or the system's out-of-memory killer",
            _ => "killed by a signal",
        }
    }

    /// Wait for `pid` until `deadline`; `None` if it is still running then.
    fn wait_until(pid: libc::pid_t, deadline: Instant) -> Option<libc::c_int> {
        let mut pause = Duration::from_micros(50);
        loop {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if r == pid {
                return Some(status);
            }
            if r < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // Reaped by someone else: report an abnormal end.
                return Some(0x7f00);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    pub(crate) fn kill_and_reap(pid: libc::pid_t) {
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
            }
        }
    }
}

#[cfg(test)]
mod tests;
