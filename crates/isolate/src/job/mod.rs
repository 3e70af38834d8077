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

pub mod memo;

/// Largest question a job may ask, in bytes; a larger one ends the conversation (the job then
/// gets an error from [`Peer::ask`]).
pub const MAX_QUESTION_BYTES: usize = 16 << 20;

/// Extra time the caller waits beyond the job's wall-clock budget for the outcome, before it
/// gives up on the supervisor.
pub(crate) const GRACE: Duration = Duration::from_secs(10);

/// The job's end of the conversation with its caller.
pub struct Peer<'a> {
    pub(crate) inner: PeerInner<'a>,
}

pub(crate) enum PeerInner<'a> {
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
        let mut bytes = Vec::new();
        ciborium::into_writer(input, &mut bytes)
            .map_err(|e| IsolateError::Protocol(format!("the input cannot be encoded: {e}")))?;
        let entry: unix::Entry = unix::trampoline::<I, O>;
        unix::run_entry(limits, entry, f as usize, &bytes, serve)
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

/// The input of a job over bytes: `a` and the bytes as one CBOR byte string.
#[cfg(unix)]
fn bytes_input<A: Serialize>(a: &A, bytes: &[u8]) -> Result<Vec<u8>, IsolateError> {
    let mut input = Vec::with_capacity(bytes.len() + 64);
    ciborium::into_writer(&(a, serde_bytes::Bytes::new(bytes)), &mut input)
        .map_err(|e| IsolateError::Protocol(format!("the input cannot be encoded: {e}")))?;
    Ok(input)
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
        let input = bytes_input(a, bytes)?;
        let entry: unix::Entry = unix::trampoline_bytes::<A, O>;
        unix::run_entry(limits, entry, f as usize, &input, &mut |_| Vec::new())
    }
    #[cfg(not(unix))]
    {
        let _ = limits;
        Ok(f(a, bytes))
    }
}

/// [`run_on_bytes`] for a pure `f` — one whose result depends on nothing but `a` and `bytes`
/// (a decoder, a renderer): the result is remembered for the life of the process and given
/// again, without a process, to the next call with the same function, arguments and bytes
/// (see [`memo`]). Only a result `f` returned is remembered, never an error of the isolation
/// (a limit, a crash), which the next call meets afresh.
pub fn run_on_bytes_memo<A, O>(
    limits: &Limits,
    f: fn(&A, &[u8]) -> O,
    a: &A,
    bytes: &[u8],
) -> Result<O, IsolateError>
where
    A: Serialize + DeserializeOwned,
    O: Serialize + DeserializeOwned,
{
    if !memo::enabled() {
        return run_on_bytes(limits, f, a, bytes);
    }
    #[cfg(unix)]
    {
        let input = bytes_input(a, bytes)?;
        let entry: unix::Entry = unix::trampoline_bytes::<A, O>;
        let key = memo::key(entry as usize, f as usize, &input);
        if let Some(kept) = memo::get(&key) {
            return crate::unix::decode(&kept);
        }
        let data = unix::run_entry_raw(limits, entry, f as usize, &input, &mut |_| Vec::new())?;
        let out = crate::unix::decode(&data)?;
        memo::put(key, data);
        Ok(out)
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

/// Why the zygote is gone, when it was started and a job or a "prepare" could then not be sent
/// to it (killed by the OOM killer, say): from then on jobs fork the calling process, and the
/// first such failure was said once on stderr.
pub fn zygote_lost() -> Option<String> {
    #[cfg(unix)]
    {
        unix::lost_reason()
    }
    #[cfg(not(unix))]
    {
        None
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
mod unix;
