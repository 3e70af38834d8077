//! The supervisor: start the job's process, watch it, give the outcome.

use std::time::Instant;

use super::*;
use crate::IsolateError;
use crate::job::{Peer, PeerInner};
use crate::unix::{Fd, address_space_size, child_raw, last_os_error, parent, pipe};

// -- the supervisor: start the job's process, watch it, send the outcome --

/// Fork the job's process (its socket `conn`, closed here once the job has its copy, so
/// that the caller sees the conversation end with the job) and watch it; the outcome as
/// sent.
pub(crate) fn supervise(h: &Header, conn: Fd) -> Vec<u8> {
    match start(h, conn) {
        Ok(started) => watch(h, started),
        Err(e) => failed(e),
    }
}

/// A job's process, forked and not yet watched.
pub(crate) struct Forked {
    pub(crate) pid: libc::pid_t,
    out: Fd,
    err: Fd,
    start: Instant,
    memory_limit: u64,
}

/// The outcome of a job that could not start or was stopped.
fn failed(e: IsolateError) -> Vec<u8> {
    let mut v = vec![OUTCOME_ERROR];
    let _ = ciborium::into_writer(&Wire::from(&e), &mut v);
    v
}

/// Fork the job's process from the calling thread (whose malloc arena the job then uses: the
/// main thread's grows with `brk`, another thread's by an `mprotect` per page, thousands per
/// job); `conn` is closed here once the job has its copy.
pub(crate) fn start(h: &Header, conn: Fd) -> Result<Forked, IsolateError> {
    let limits = h.limits();
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    let memory_limit = address_space_size().saturating_add(limits.memory_bytes);
    let cpu = limits.cpu_seconds();
    let start = Instant::now();
    // SAFETY: the child runs only `child_raw` with the job's trampoline; see the crate
    // docs for what a forked child may do.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(last_os_error("fork"));
    }
    if pid == 0 {
        // SAFETY: the parent dying takes the job along.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
        // SAFETY: `entry` is the address of the job's trampoline (an `Entry`) in this
        // program, taken in `run`; see `trampoline`.
        let entry: Entry = unsafe { std::mem::transmute::<*const (), Entry>(h.entry as *const ()) };
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
    Ok(Forked {
        pid,
        out: out_r,
        err: err_r,
        start,
        memory_limit,
    })
}

/// Watch a started job until it ends or is stopped; the outcome as sent.
pub(crate) fn watch(h: &Header, s: Forked) -> Vec<u8> {
    let limits = h.limits();
    let mut stuck = false;
    let r = parent(
        &limits,
        s.pid,
        s.out,
        s.err,
        s.start,
        s.memory_limit,
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
        Err(e) => failed(e),
    }
}
