//! Jobs: isolated computations that start from a small process and ask their caller for data.
//!
//! [`crate::run_isolated`] forks the calling process, so the child starts with all of it. That
//! is what makes it convenient (the closure reads borrowed data) and what makes it expensive
//! in a large process: `fork` copies the page tables of everything the process maps, and every
//! page the parent writes afterwards is copied once more. A run with a thousand live trials is
//! a process of most of a gigabyte, and every check evaluation forked it.
//!
//! A job is a plain function `fn(I, &mut Peer) -> O` and its input `I`, which crosses to the
//! child as CBOR. The child may ask its caller questions through the [`Peer`] (bytes in, bytes
//! out); the caller answers them in the calling thread with the `serve` function it gave to
//! [`run_job`], which may read borrowed data. The child is under the same limits as in
//! [`crate::run_isolated`], with the same errors.
//!
//! Where the child comes from:
//! - **From the zygote**, when [`start_zygote`] ran at the start of the program, while the
//!   process was small and had one thread. The zygote is a fork of that moment; for each job
//!   it forks a supervisor, which forks the job's process, watches it (wall clock, limits,
//!   how it ended) and sends the outcome back. Both forks copy a process of a few megabytes,
//!   whatever the size of the caller, and no lock of another thread can be held in them.
//! - **From the calling process** otherwise (a library user, a test): it forks itself as
//!   [`crate::run_isolated`] does, and a thread of the caller watches the child.
//!
//! The zygote knows the job by the address of its function: it is a fork of the same program,
//! so the address is the same in it. Only the calling process holds the zygote's socket (the
//! descriptor is close-on-exec, and isolated children close it), so nothing else can send it
//! an address. The zygote leaves when the calling process does.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{IsolateError, Limits};

/// Largest question a job may ask, in bytes; a larger one ends the conversation (the job then
/// gets an error from [`Peer::ask`]).
pub const MAX_QUESTION_BYTES: usize = 16 << 20;

/// Extra time the caller waits beyond the job's wall-clock budget for the outcome, before it
/// gives up on the supervisor.
const GRACE: Duration = Duration::from_secs(10);

/// The job's end of the conversation with its caller.
pub struct Peer<'a> {
    inner: PeerInner<'a>,
}

enum PeerInner<'a> {
    /// A socket to the caller (descriptor 4 in the job's process).
    #[cfg_attr(not(unix), allow(dead_code))]
    Socket(i32),
    /// The caller itself (no isolation on this platform).
    #[cfg_attr(unix, allow(dead_code))]
    Local(&'a mut dyn FnMut(&[u8]) -> Vec<u8>),
}

impl Peer<'_> {
    /// Ask the caller; its answer. An error when the caller is gone or the question is larger
    /// than [`MAX_QUESTION_BYTES`].
    pub fn ask(&mut self, question: &[u8]) -> std::io::Result<Vec<u8>> {
        if question.len() > MAX_QUESTION_BYTES {
            return Err(std::io::Error::other(format!(
                "a question of {} bytes is over the limit of {MAX_QUESTION_BYTES}",
                question.len()
            )));
        }
        match &mut self.inner {
            #[cfg(unix)]
            PeerInner::Socket(fd) => {
                unix::write_frame(*fd, question)?;
                unix::read_frame(*fd, usize::MAX)
            }
            #[cfg(not(unix))]
            PeerInner::Socket(_) => Err(std::io::Error::other("no socket on this platform")),
            PeerInner::Local(serve) => Ok(serve(question)),
        }
    }
}

/// Run `f(input, peer)` isolated under `limits` and return its result; `serve` answers the
/// questions `f` asks through its [`Peer`], in the calling thread. See the module docs.
pub fn run_job<I, O>(
    limits: &Limits,
    f: fn(I, &mut Peer<'_>) -> O,
    input: &I,
    serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
) -> Result<O, IsolateError>
where
    I: Serialize + DeserializeOwned,
    O: Serialize + DeserializeOwned,
{
    #[cfg(unix)]
    {
        unix::run(limits, f, input, serve)
    }
    #[cfg(not(unix))]
    {
        let _ = limits;
        let mut peer = Peer {
            inner: PeerInner::Local(serve),
        };
        let mut bytes = Vec::new();
        ciborium::into_writer(input, &mut bytes)
            .map_err(|e| IsolateError::Protocol(format!("the input cannot be encoded: {e}")))?;
        let input: I = ciborium::from_reader(bytes.as_slice())
            .map_err(|e| IsolateError::Protocol(format!("the input cannot be decoded: {e}")))?;
        Ok(f(input, &mut peer))
    }
}

/// Run `f(&a, bytes)` isolated under `limits`: [`run_job`] for the common case of a function
/// over a buffer (a document, an image) that asks nothing. The bytes cross as one CBOR byte
/// string.
pub fn run_on_bytes<A, O>(
    limits: &Limits,
    f: fn(&A, &[u8]) -> O,
    a: &A,
    bytes: &[u8],
) -> Result<O, IsolateError>
where
    A: Serialize + DeserializeOwned,
    O: Serialize + DeserializeOwned,
{
    #[cfg(unix)]
    {
        let mut input = Vec::with_capacity(bytes.len() + 64);
        ciborium::into_writer(&(a, serde_bytes::Bytes::new(bytes)), &mut input)
            .map_err(|e| IsolateError::Protocol(format!("the input cannot be encoded: {e}")))?;
        let entry: unix::Entry = unix::trampoline_bytes::<A, O>;
        unix::run_entry(limits, entry, f as usize, &input, &mut |_| Vec::new())
    }
    #[cfg(not(unix))]
    {
        let _ = limits;
        Ok(f(a, bytes))
    }
}

/// Start the zygote (see the module docs). Call it first thing in `main`, before any thread
/// is started; `warm` runs once in the zygote, to initialise what every job would otherwise
/// initialise again (global tables). Returns whether the zygote runs: not when the process
/// already has more than one thread, when it already runs, or on platforms without `fork`.
pub fn start_zygote(warm: fn()) -> bool {
    #[cfg(unix)]
    {
        unix::start_zygote(warm)
    }
    #[cfg(not(unix))]
    {
        let _ = warm;
        false
    }
}

/// Run `f(input)` in the zygote itself, once, so that every job forked after it inherits what
/// `f` leaves in the process (a table of compiled programs, say, that jobs would otherwise
/// build again each). Returns whether it was sent: not when no zygote runs. `f` runs after
/// every job asked for before it and before every job asked for after it; a panic in it is
/// caught and leaves the zygote as it was. `f` must keep to what a single-threaded process may
/// do (no threads), and what it leaves must be small: every job's fork copies it.
pub fn prepare_zygote<I>(f: fn(I), input: &I) -> bool
where
    I: Serialize + DeserializeOwned,
{
    #[cfg(unix)]
    {
        unix::prepare(f, input)
    }
    #[cfg(not(unix))]
    {
        let _ = (f, input);
        false
    }
}

/// Whether jobs start from the zygote.
pub fn zygote_running() -> bool {
    #[cfg(unix)]
    {
        unix::zygote().is_some()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

#[cfg(unix)]
mod unix {
    use std::sync::OnceLock;
    use std::time::Instant;

    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::unix::{
        Fd, STUCK_AFTER, TRIES, address_space_size, child_raw, decode, last_os_error, parent, pipe,
    };

    /// What the caller sends the zygote for one job (with the job's socket and the outcome
    /// pipe as `SCM_RIGHTS`), as little-endian u64s.
    #[derive(Clone, Copy)]
    struct Header {
        entry: u64,
        function: u64,
        wall_ms: u64,
        memory_bytes: u64,
        max_output_bytes: u64,
        detect_stuck: u64,
    }

    const MAGIC: u64 = 0x6275_7265_6175_6a31; // "bureauj1"
    /// The header of a "prepare" message: `entry` is a [`PrepareEntry`].
    const MAGIC_PREPARE: u64 = 0x6275_7265_6175_7031; // "bureaup1"
    /// The largest input of a "prepare" message.
    const MAX_PREPARE_BYTES: usize = 256 << 20;
    const HEADER_BYTES: usize = 7 * 8;

    impl Header {
        fn encode(&self) -> [u8; HEADER_BYTES] {
            self.encode_as(MAGIC)
        }

        fn encode_as(&self, magic: u64) -> [u8; HEADER_BYTES] {
            let mut b = [0u8; HEADER_BYTES];
            let fields = [
                magic,
                self.entry,
                self.function,
                self.wall_ms,
                self.memory_bytes,
                self.max_output_bytes,
                self.detect_stuck,
            ];
            for (i, f) in fields.iter().enumerate() {
                b[i * 8..i * 8 + 8].copy_from_slice(&f.to_le_bytes());
            }
            b
        }

        /// The header and its magic (a job's or a "prepare" message's).
        fn decode(b: &[u8]) -> Option<(u64, Header)> {
            if b.len() != HEADER_BYTES {
                return None;
            }
            let f = |i: usize| {
                let mut x = [0u8; 8];
                x.copy_from_slice(&b[i * 8..i * 8 + 8]);
                u64::from_le_bytes(x)
            };
            [MAGIC, MAGIC_PREPARE].contains(&f(0)).then(|| {
                (
                    f(0),
                    Header {
                        entry: f(1),
                        function: f(2),
                        wall_ms: f(3),
                        memory_bytes: f(4),
                        max_output_bytes: f(5),
                        detect_stuck: f(6),
                    },
                )
            })
        }

        fn limits(&self) -> Limits {
            Limits {
                wall: Duration::from_millis(self.wall_ms),
                memory_bytes: self.memory_bytes,
                max_output_bytes: usize::try_from(self.max_output_bytes).unwrap_or(usize::MAX),
            }
        }
    }

    /// The function the job's process runs: the monomorphised [`trampoline`] of the job.
    pub(super) type Entry = fn(usize, &mut Peer<'_>) -> Result<Vec<u8>, String>;

    /// What the zygote runs for a "prepare" message: the monomorphised
    /// [`trampoline_prepare`].
    type PrepareEntry = fn(usize, &[u8]);

    fn trampoline_prepare<I: DeserializeOwned>(function: usize, bytes: &[u8]) {
        let Ok(input) = ciborium::from_reader::<I, _>(bytes) else {
            return;
        };
        // SAFETY: `function` is the address of a `fn(I)` taken in `prepare` in this program
        // (the zygote is a fork of it), and this trampoline is the one monomorphised for `I`.
        let f: fn(I) = unsafe { std::mem::transmute::<*const (), fn(I)>(function as *const ()) };
        f(input);
    }

    pub(super) fn prepare<I: Serialize + DeserializeOwned>(f: fn(I), input: &I) -> bool {
        let Some(z) = zygote() else {
            return false;
        };
        let mut bytes = Vec::new();
        if ciborium::into_writer(input, &mut bytes).is_err() || bytes.len() > MAX_PREPARE_BYTES {
            return false;
        }
        let Ok((r, w)) = pipe() else {
            return false;
        };
        let entry: PrepareEntry = trampoline_prepare::<I>;
        let header = Header {
            entry: entry as usize as u64,
            function: f as usize as u64,
            wall_ms: 0,
            memory_bytes: 0,
            max_output_bytes: 0,
            detect_stuck: 0,
        };
        if send_with_fds(z.ctl, &header.encode_as(MAGIC_PREPARE), [r.0, r.0]).is_err() {
            return false;
        }
        drop(r);
        // The zygote reads the input right away; a zygote gone makes this fail.
        write_frame(w.0, &bytes).is_ok()
    }

    /// In the zygote: read the input of a "prepare" message and run it.
    fn run_prepare(h: &Header, input: i32) {
        let Ok(bytes) = read_frame(input, MAX_PREPARE_BYTES) else {
            return;
        };
        // SAFETY: `entry` is the address of a `PrepareEntry` in this program, taken in
        // `prepare`; see `trampoline_prepare`.
        let entry: PrepareEntry =
            unsafe { std::mem::transmute::<*const (), PrepareEntry>(h.entry as *const ()) };
        let function = h.function as usize;
        let _ = std::panic::catch_unwind(move || entry(function, &bytes));
    }

    /// The input frame of the job, read from the caller.
    fn input_frame(peer: &Peer<'_>) -> Result<Vec<u8>, String> {
        let PeerInner::Socket(fd) = peer.inner else {
            return Err("the job has no socket".into());
        };
        read_frame(fd, usize::MAX).map_err(|e| format!("reading the input: {e}"))
    }

    fn encode<O: Serialize>(out: &O) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        ciborium::into_writer(out, &mut body)
            .map(|_| body)
            .map_err(|e| e.to_string())
    }

    /// [`trampoline`] of [`run_on_bytes`]: the input is `(A, bytes)`.
    pub(super) fn trampoline_bytes<A: DeserializeOwned, O: Serialize>(
        function: usize,
        peer: &mut Peer<'_>,
    ) -> Result<Vec<u8>, String> {
        let bytes = input_frame(peer)?;
        let (a, buf): (A, serde_bytes::ByteBuf) = ciborium::from_reader(bytes.as_slice())
            .map_err(|e| format!("the input cannot be decoded: {e}"))?;
        drop(bytes);
        // SAFETY: `function` is the address of a `fn(&A, &[u8]) -> O` taken in
        // `run_on_bytes` in this program (the job's process is a fork of it), and this
        // trampoline is the one monomorphised for that `A` and `O`.
        let f: fn(&A, &[u8]) -> O =
            unsafe { std::mem::transmute::<*const (), fn(&A, &[u8]) -> O>(function as *const ()) };
        encode(&f(&a, &buf))
    }

    /// Read the job's input from the caller, run the job function, encode its result.
    fn trampoline<I: DeserializeOwned, O: Serialize>(
        function: usize,
        peer: &mut Peer<'_>,
    ) -> Result<Vec<u8>, String> {
        let bytes = input_frame(peer)?;
        let input: I = ciborium::from_reader(bytes.as_slice())
            .map_err(|e| format!("the input cannot be decoded: {e}"))?;
        drop(bytes);
        // SAFETY: `function` is the address of a `fn(I, &mut Peer) -> O` taken in `run` (in
        // this program: the job's process is a fork of it, so the address is the same), and
        // this trampoline is the one monomorphised for that `I` and `O`.
        let f: fn(I, &mut Peer<'_>) -> O = unsafe {
            std::mem::transmute::<*const (), fn(I, &mut Peer<'_>) -> O>(function as *const ())
        };
        encode(&f(input, peer))
    }

    // -- frames: a little-endian u64 length, then the bytes --

    pub(super) fn write_frame(fd: i32, payload: &[u8]) -> std::io::Result<()> {
        let mut frame = Vec::with_capacity(8 + payload.len());
        frame.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        frame.extend_from_slice(payload);
        write_all(fd, &frame)
    }

    fn write_all(fd: i32, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            // SAFETY: sending from a live buffer on a descriptor this process owns;
            // MSG_NOSIGNAL: a closed peer is an error, not a SIGPIPE. A pipe is not a socket:
            // then `write` (SIGPIPE is ignored by Rust programs).
            let mut n =
                unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTSOCK) {
                // SAFETY: as above.
                n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
            }
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            bytes = &bytes[n as usize..];
        }
        Ok(())
    }

    pub(super) fn read_frame(fd: i32, max: usize) -> std::io::Result<Vec<u8>> {
        let mut len = [0u8; 8];
        read_exact(fd, &mut len)?;
        let len = u64::from_le_bytes(len);
        let len = usize::try_from(len)
            .ok()
            .filter(|l| *l <= max)
            .ok_or_else(|| std::io::Error::other(format!("a frame of {len} bytes is too large")))?;
        let mut body = vec![0u8; len];
        read_exact(fd, &mut body)?;
        Ok(body)
    }

    fn read_exact(fd: i32, mut buf: &mut [u8]) -> std::io::Result<()> {
        while !buf.is_empty() {
            // SAFETY: reading into a live buffer from a descriptor this process owns.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            buf = &mut std::mem::take(&mut buf)[n as usize..];
        }
        Ok(())
    }

    // -- the outcome the supervisor sends: tag, then data --

    const OUTCOME_DATA: u8 = 0;
    const OUTCOME_ERROR: u8 = 1;
    const OUTCOME_STUCK: u8 = 2;

    /// [`IsolateError`] as it crosses from the supervisor.
    #[derive(Serialize, Deserialize)]
    enum Wire {
        TimedOut { ms: u64 },
        CpuLimit { seconds: u64 },
        OutOfMemory { limit_bytes: u64, message: String },
        StackOverflow,
        Crashed { signal: i32, message: String },
        Panicked(String),
        OutputTooLarge { limit: u64 },
        Stuck { seconds: u64, tries: u32 },
        Spawn(String),
        Protocol(String),
    }

    impl From<&IsolateError> for Wire {
        fn from(e: &IsolateError) -> Wire {
            match e.clone() {
                IsolateError::TimedOut { limit } => Wire::TimedOut {
                    ms: limit.as_millis() as u64,
                },
                IsolateError::CpuLimit { seconds } => Wire::CpuLimit { seconds },
                IsolateError::OutOfMemory {
                    limit_bytes,
                    message,
                } => Wire::OutOfMemory {
                    limit_bytes,
                    message,
                },
                IsolateError::StackOverflow => Wire::StackOverflow,
                IsolateError::Crashed {
                    signal, message, ..
                } => Wire::Crashed { signal, message },
                IsolateError::Panicked(m) => Wire::Panicked(m),
                IsolateError::OutputTooLarge { limit } => Wire::OutputTooLarge {
                    limit: limit as u64,
                },
                IsolateError::Stuck { seconds, tries } => Wire::Stuck { seconds, tries },
                IsolateError::Spawn(m) => Wire::Spawn(m),
                IsolateError::Protocol(m) => Wire::Protocol(m),
            }
        }
    }

    impl From<Wire> for IsolateError {
        fn from(w: Wire) -> IsolateError {
            match w {
                Wire::TimedOut { ms } => IsolateError::TimedOut {
                    limit: Duration::from_millis(ms),
                },
                Wire::CpuLimit { seconds } => IsolateError::CpuLimit { seconds },
                Wire::OutOfMemory {
                    limit_bytes,
                    message,
                } => IsolateError::OutOfMemory {
                    limit_bytes,
                    message,
                },
                Wire::StackOverflow => IsolateError::StackOverflow,
                Wire::Crashed { signal, message } => IsolateError::Crashed {
                    signal,
                    name: crate::unix::signal_name(signal),
                    message,
                },
                Wire::Panicked(m) => IsolateError::Panicked(m),
                Wire::OutputTooLarge { limit } => IsolateError::OutputTooLarge {
                    limit: usize::try_from(limit).unwrap_or(usize::MAX),
                },
                Wire::Stuck { seconds, tries } => IsolateError::Stuck { seconds, tries },
                Wire::Spawn(m) => IsolateError::Spawn(m),
                Wire::Protocol(m) => IsolateError::Protocol(m),
            }
        }
    }

    // -- the supervisor: start the job's process, watch it, send the outcome --

    /// Fork the job's process (its socket `conn`, closed here once the job has its copy, so
    /// that the caller sees the conversation end with the job) and watch it; the outcome as
    /// sent.
    fn supervise(h: &Header, conn: Fd) -> Vec<u8> {
        let limits = h.limits();
        let fail = |e: IsolateError| {
            let mut v = vec![OUTCOME_ERROR];
            let _ = ciborium::into_writer(&Wire::from(&e), &mut v);
            v
        };
        let (out_r, out_w) = match pipe() {
            Ok(p) => p,
            Err(e) => return fail(e),
        };
        let (err_r, err_w) = match pipe() {
            Ok(p) => p,
            Err(e) => return fail(e),
        };
        let memory_limit = address_space_size().saturating_add(limits.memory_bytes);
        let cpu = limits.cpu_seconds();
        let start = Instant::now();
        // SAFETY: the child runs only `child_raw` with the job's trampoline; see the crate
        // docs for what a forked child may do.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return fail(last_os_error("fork"));
        }
        if pid == 0 {
            // SAFETY: the parent dying takes the job along.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            // SAFETY: `entry` is the address of the job's trampoline (an `Entry`) in this
            // program, taken in `run`; see `trampoline`.
            let entry: Entry =
                unsafe { std::mem::transmute::<*const (), Entry>(h.entry as *const ()) };
            let function = h.function as usize;
            child_raw(
                out_w.0,
                err_w.0,
                Some(conn.0),
                memory_limit,
                cpu,
                move || {
                    let mut peer = Peer {
                        inner: PeerInner::Socket(4),
                    };
                    entry(function, &mut peer)
                },
            );
        }
        drop(conn);
        drop(out_w);
        drop(err_w);
        let mut stuck = false;
        let r = parent(
            &limits,
            pid,
            out_r,
            err_r,
            start,
            memory_limit,
            &mut stuck,
            h.detect_stuck != 0,
        );
        if stuck {
            return vec![OUTCOME_STUCK];
        }
        match r {
            Ok(data) => {
                let mut v = Vec::with_capacity(1 + data.len());
                v.push(OUTCOME_DATA);
                v.extend_from_slice(&data);
                v
            }
            Err(e) => fail(e),
        }
    }

    // -- the zygote --

    pub(super) struct Zygote {
        ctl: i32,
    }

    static ZYGOTE: OnceLock<Option<Zygote>> = OnceLock::new();

    pub(super) fn zygote() -> Option<&'static Zygote> {
        ZYGOTE.get().and_then(Option::as_ref)
    }

    fn threads() -> usize {
        std::fs::read_dir("/proc/self/task")
            .map(|d| d.count())
            .unwrap_or(usize::MAX)
    }

    pub(super) fn start_zygote(warm: fn()) -> bool {
        if ZYGOTE.get().is_some() || threads() != 1 {
            return zygote().is_some();
        }
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the pair.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        } != 0
        {
            let _ = ZYGOTE.set(None);
            return false;
        }
        // SAFETY: the process has one thread (checked above), so the child is a complete copy.
        let parent_pid = unsafe { libc::getpid() };
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            // SAFETY: closing our own descriptors.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            let _ = ZYGOTE.set(None);
            return false;
        }
        if pid == 0 {
            // SAFETY: closing the caller's end in the zygote.
            unsafe { libc::close(fds[0]) };
            zygote_main(fds[1], parent_pid, warm);
        }
        // SAFETY: closing the zygote's end in the caller.
        unsafe { libc::close(fds[1]) };
        let _ = ZYGOTE.set(Some(Zygote { ctl: fds[0] }));
        true
    }

    fn zygote_main(ctl: i32, parent_pid: libc::pid_t, warm: fn()) -> ! {
        // SAFETY: plain system calls on this process's own state.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent_pid {
                libc::_exit(0);
            }
            // Keep stderr (a supervisor's own failure is worth seeing); nothing else.
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                libc::dup2(null, 0);
                libc::dup2(null, 1);
            }
            let ctl_h = libc::fcntl(ctl, libc::F_DUPFD_CLOEXEC, 3);
            if ctl_h != 3 {
                libc::dup2(ctl_h, 3);
                libc::fcntl(3, libc::F_SETFD, libc::FD_CLOEXEC);
            }
            if libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) != 0 {
                for fd in 4..4096 {
                    libc::close(fd);
                }
            }
            // Supervisors are reaped by the kernel; Ctrl-C is for the caller to handle.
            libc::signal(libc::SIGCHLD, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
        }
        warm();
        let ctl = 3;
        loop {
            let mut header = [0u8; HEADER_BYTES + 8];
            let mut fds = [-1i32; 2];
            let n = match recv_with_fds(ctl, &mut header, &mut fds) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // SAFETY: leaving the zygote.
                Err(_) => unsafe { libc::_exit(1) },
            };
            if n == 0 {
                // The caller is gone.
                // SAFETY: leaving the zygote.
                unsafe { libc::_exit(0) };
            }
            let parsed = Header::decode(&header[..n]);
            if let (Some((MAGIC_PREPARE, h)), true) = (parsed, fds[0] >= 0) {
                run_prepare(&h, fds[0]);
            } else if let (Some((MAGIC, h)), true) = (parsed, fds[0] >= 0 && fds[1] >= 0) {
                // SAFETY: the zygote has one thread; the supervisor runs `supervise` only.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    // SAFETY: plain system calls on this process's own state.
                    unsafe {
                        libc::close(ctl);
                        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
                        libc::signal(libc::SIGINT, libc::SIG_DFL);
                        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    }
                    let outcome = supervise(&h, Fd(fds[0]));
                    let _ = write_frame(fds[1], &outcome);
                    // SAFETY: leaving the supervisor.
                    unsafe { libc::_exit(0) };
                }
            }
            for fd in fds {
                if fd >= 0 {
                    // SAFETY: closing descriptors received with this message.
                    unsafe { libc::close(fd) };
                }
            }
        }
    }

    /// `recvmsg` of one message and up to two descriptors.
    fn recv_with_fds(ctl: i32, buf: &mut [u8], fds: &mut [i32; 2]) -> std::io::Result<usize> {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // Room for a control message of two descriptors, aligned as cmsghdr needs.
        let mut cbuf = [0u64; 8];
        // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE is a pure computation.
        msg.msg_controllen = unsafe { libc::CMSG_SPACE(8) } as usize;
        // SAFETY: `msg` points at live buffers of the stated sizes.
        let n = unsafe { libc::recvmsg(ctl, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: walking the control messages the kernel wrote into `cbuf`.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            let mut k = 0;
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(c).cast::<i32>();
                    let count =
                        ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / size_of::<i32>();
                    for i in 0..count {
                        let fd = std::ptr::read_unaligned(data.add(i));
                        if k < 2 {
                            fds[k] = fd;
                            k += 1;
                        } else {
                            libc::close(fd);
                        }
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        Ok(n as usize)
    }

    /// Send the header and two descriptors to the zygote.
    fn send_with_fds(ctl: i32, header: &[u8], fds: [i32; 2]) -> std::io::Result<()> {
        let mut iov = libc::iovec {
            iov_base: header.as_ptr() as *mut libc::c_void,
            iov_len: header.len(),
        };
        let mut cbuf = [0u64; 8];
        // SAFETY: a zeroed msghdr is valid; its pointers are set to live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        // SAFETY: CMSG_SPACE is a pure computation; the header is filled in below.
        unsafe {
            msg.msg_controllen = libc::CMSG_SPACE(8) as usize;
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(8) as usize;
            let data = libc::CMSG_DATA(c).cast::<i32>();
            std::ptr::write_unaligned(data, fds[0]);
            std::ptr::write_unaligned(data.add(1), fds[1]);
        }
        loop {
            // SAFETY: `msg` points at live buffers of the stated sizes.
            let n = unsafe { libc::sendmsg(ctl, &msg, libc::MSG_NOSIGNAL) };
            if n >= 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    // -- the caller --

    /// How the job's process was started, and so who has to be reaped.
    enum Started {
        /// By the zygote's supervisor: nothing to reap here.
        Zygote,
        /// By this process: the child, and the thread that watches it.
        Here(std::thread::JoinHandle<()>),
    }

    pub(super) fn run<I, O>(
        limits: &Limits,
        f: fn(I, &mut Peer<'_>) -> O,
        input: &I,
        serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
    ) -> Result<O, IsolateError>
    where
        I: Serialize + DeserializeOwned,
        O: Serialize + DeserializeOwned,
    {
        let mut bytes = Vec::new();
        ciborium::into_writer(input, &mut bytes)
            .map_err(|e| IsolateError::Protocol(format!("the input cannot be encoded: {e}")))?;
        let entry: Entry = trampoline::<I, O>;
        run_entry(limits, entry, f as usize, &bytes, serve)
    }

    /// Run the job whose process runs `entry(function, ...)` on the encoded `input`.
    pub(super) fn run_entry<O: DeserializeOwned>(
        limits: &Limits,
        entry: Entry,
        function: usize,
        bytes: &[u8],
        serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
    ) -> Result<O, IsolateError> {
        let header = Header {
            entry: entry as usize as u64,
            function: function as u64,
            wall_ms: limits.wall.as_millis().min(u64::MAX as u128) as u64,
            memory_bytes: limits.memory_bytes,
            max_output_bytes: limits.max_output_bytes as u64,
            detect_stuck: 0,
        };
        for _ in 1..TRIES {
            match run_once(limits, header, bytes, serve) {
                Err(Stuck) => continue,
                Ok(r) => return r.and_then(|data| decode(&data)),
            }
        }
        match run_once(limits, header, bytes, serve) {
            Err(Stuck) => Err(IsolateError::Stuck {
                seconds: STUCK_AFTER.as_secs(),
                tries: TRIES,
            }),
            Ok(r) => r.and_then(|data| decode(&data)),
        }
    }

    struct Stuck;

    fn socketpair() -> Result<(Fd, Fd), IsolateError> {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the pair.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        } != 0
        {
            return Err(last_os_error("socketpair"));
        }
        Ok((Fd(fds[0]), Fd(fds[1])))
    }

    fn run_once(
        limits: &Limits,
        mut header: Header,
        input: &[u8],
        serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
    ) -> Result<Result<Vec<u8>, IsolateError>, Stuck> {
        let (mine, theirs) = match socketpair() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let (outcome_r, outcome_w) = match pipe() {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
        let sent = zygote()
            .map(|z| send_with_fds(z.ctl, &header.encode(), [theirs.0, outcome_w.0]).is_ok())
            .unwrap_or(false);
        let started = if sent {
            drop(theirs);
            drop(outcome_w);
            Started::Zygote
        } else {
            // From this (multi-threaded) process: watch for a lock held at the fork.
            header.detect_stuck = 1;
            let h = header;
            // The watching thread owns the outcome pipe's write end and the job's socket
            // (closed once the job's process has it).
            let handle = std::thread::Builder::new()
                .name("isolate-watch".into())
                .spawn(move || {
                    let outcome_w = outcome_w;
                    let outcome = supervise(&h, theirs);
                    let _ = write_frame(outcome_w.0, &outcome);
                });
            match handle {
                Ok(h) => Started::Here(h),
                Err(e) => return Ok(Err(IsolateError::Spawn(format!("a thread: {e}")))),
            }
        };
        let r = converse(limits, &mine, &outcome_r, input, serve);
        drop(mine);
        if let Started::Here(h) = started {
            let _ = h.join();
        }
        match r {
            Conversation::Outcome(o) => Ok(o),
            Conversation::Stuck => Err(Stuck),
        }
    }

    enum Conversation {
        Outcome(Result<Vec<u8>, IsolateError>),
        Stuck,
    }

    /// Send the input, answer questions until the outcome arrives (or the budget and its grace
    /// run out).
    fn converse(
        limits: &Limits,
        mine: &Fd,
        outcome: &Fd,
        input: &[u8],
        serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
    ) -> Conversation {
        let deadline = Instant::now() + limits.wall + GRACE;
        // The input goes first; a job that died before reading it makes this fail, and the
        // outcome then says why.
        let mut talking = write_frame(mine.0, input).is_ok();
        let mut inbox: Vec<u8> = Vec::new();
        let mut got: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Conversation::Outcome(Err(IsolateError::TimedOut { limit: limits.wall }));
            }
            let wait_ms = (deadline - now).as_millis().clamp(1, 1000) as libc::c_int;
            let mut fds = [
                libc::pollfd {
                    fd: if talking { mine.0 } else { -1 },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: outcome.0,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: `fds` is a valid array of two pollfd.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait_ms) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Conversation::Outcome(Err(last_os_error("poll")));
            }
            if talking && fds[0].revents != 0 {
                // SAFETY: reading into a live buffer from our own descriptor.
                let r = unsafe { libc::read(mine.0, buf.as_mut_ptr().cast(), buf.len()) };
                if r <= 0 {
                    talking = false;
                } else {
                    inbox.extend_from_slice(&buf[..r as usize]);
                    while let Some(q) = take_frame(&mut inbox, &mut talking) {
                        let answer = serve(&q);
                        if write_frame(mine.0, &answer).is_err() {
                            talking = false;
                            break;
                        }
                    }
                }
            }
            if fds[1].revents != 0 {
                // SAFETY: reading into a live buffer from our own descriptor.
                let r = unsafe { libc::read(outcome.0, buf.as_mut_ptr().cast(), buf.len()) };
                if r > 0 {
                    got.extend_from_slice(&buf[..r as usize]);
                    if let Some(frame) = complete(&got) {
                        return finish(frame);
                    }
                } else if !(r < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted)
                {
                    return match complete(&got) {
                        Some(frame) => finish(frame),
                        None => Conversation::Outcome(Err(IsolateError::Protocol(
                            "its supervisor ended without an outcome".into(),
                        ))),
                    };
                }
            }
        }
    }

    /// The body of a complete frame at the start of `buf`.
    fn complete(buf: &[u8]) -> Option<&[u8]> {
        let len: [u8; 8] = buf.get(..8)?.try_into().ok()?;
        let len = usize::try_from(u64::from_le_bytes(len)).ok()?;
        buf.get(8..8usize.checked_add(len)?)
    }

    /// Take one complete question off `inbox`; a question over the limit ends the talk.
    fn take_frame(inbox: &mut Vec<u8>, talking: &mut bool) -> Option<Vec<u8>> {
        let len: [u8; 8] = inbox.get(..8)?.try_into().ok()?;
        let len = u64::from_le_bytes(len);
        if len > MAX_QUESTION_BYTES as u64 {
            *talking = false;
            inbox.clear();
            return None;
        }
        let end = 8 + len as usize;
        if inbox.len() < end {
            return None;
        }
        let q = inbox[8..end].to_vec();
        inbox.drain(..end);
        Some(q)
    }

    fn finish(frame: &[u8]) -> Conversation {
        match frame.split_first() {
            Some((&OUTCOME_DATA, data)) => Conversation::Outcome(Ok(data.to_vec())),
            Some((&OUTCOME_STUCK, _)) => Conversation::Stuck,
            Some((&OUTCOME_ERROR, wire)) => {
                Conversation::Outcome(Err(match ciborium::from_reader::<Wire, _>(wire) {
                    Ok(w) => w.into(),
                    Err(e) => IsolateError::Protocol(format!("an unreadable outcome: {e}")),
                }))
            }
            _ => Conversation::Outcome(Err(IsolateError::Protocol("an unknown outcome".into()))),
        }
    }
}
