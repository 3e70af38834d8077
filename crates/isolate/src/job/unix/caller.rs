//! The caller's side of a job: send it, answer its questions, read its outcome.

use std::time::Instant;

use serde::de::DeserializeOwned;

use super::*;
use crate::job::{GRACE, MAX_QUESTION_BYTES};
use crate::unix::{
    Fd, STUCK_AFTER, TRIES, decode, kill_and_reap, last_os_error, pipe, poll2, socketpair,
};
use crate::{IsolateError, Limits};

// -- the caller --

/// How the job's process was started, and so who has to be reaped.
pub(crate) enum Started {
    /// By the zygote's supervisor: nothing to reap here.
    Zygote,
    /// By this process: the child, and the thread that watches it.
    Here(std::thread::JoinHandle<()>),
}

/// Run the job whose process runs `entry(function, ...)` on the encoded `input`.
pub(crate) fn run_entry<O: DeserializeOwned>(
    limits: &Limits,
    entry: Entry,
    function: usize,
    bytes: &[u8],
    serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
) -> Result<O, IsolateError> {
    run_entry_raw(limits, entry, function, bytes, serve).and_then(|data| decode(&data))
}

/// [`run_entry`] before its outcome is decoded: the child's outcome frame (see
/// [`crate::unix::decode`]).
pub(crate) fn run_entry_raw(
    limits: &Limits,
    entry: Entry,
    function: usize,
    bytes: &[u8],
    serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
) -> Result<Vec<u8>, IsolateError> {
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
            Ok(r) => return r,
        }
    }
    match run_once(limits, header, bytes, serve) {
        Err(Stuck) => Err(IsolateError::Stuck {
            seconds: STUCK_AFTER.as_secs(),
            tries: TRIES,
        }),
        Ok(r) => r,
    }
}

pub(crate) struct Stuck;

pub(crate) fn run_once(
    limits: &Limits,
    mut header: Header,
    input: &[u8],
    serve: &mut dyn FnMut(&[u8]) -> Vec<u8>,
) -> Result<Result<Vec<u8>, IsolateError>, Stuck> {
    let (mine, theirs) = match socketpair(libc::SOCK_STREAM) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let (outcome_r, outcome_w) = match pipe() {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let sent = match zygote() {
        Some(z) => match send_with_fds(z.ctl, &header.encode(), [theirs.0, outcome_w.0]) {
            Ok(()) => true,
            Err(e) => {
                lost(&e);
                false
            }
        },
        None => false,
    };
    let started = if sent {
        drop(theirs);
        drop(outcome_w);
        Started::Zygote
    } else {
        // From this (multi-threaded) process: watch for a lock held at the fork. The job is
        // forked from this thread (see `start`), then watched by a thread of its own, which
        // owns the outcome pipe's write end.
        header.detect_stuck = 1;
        let h = header;
        let forked = match start(&h, theirs) {
            Ok(f) => f,
            Err(e) => return Ok(Err(e)),
        };
        let pid = forked.pid;
        let handle = std::thread::Builder::new()
            .name("isolate-watch".into())
            .spawn(move || {
                let outcome_w = outcome_w;
                let outcome = watch(&h, forked);
                let _ = write_frame(outcome_w.0, &outcome);
            });
        match handle {
            Ok(h) => Started::Here(h),
            Err(e) => {
                kill_and_reap(pid);
                return Ok(Err(IsolateError::Spawn(format!("a thread: {e}"))));
            }
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

pub(crate) enum Conversation {
    Outcome(Result<Vec<u8>, IsolateError>),
    Stuck,
}

/// Send the input, answer questions until the outcome arrives (or the budget and its grace
/// run out).
pub(crate) fn converse(
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
        let revents = match poll2(if talking { mine.0 } else { -1 }, outcome.0, wait_ms) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Conversation::Outcome(Err(last_os_error("poll"))),
        };
        if talking && revents[0] != 0 {
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
        if revents[1] != 0 {
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
pub(crate) fn complete(buf: &[u8]) -> Option<&[u8]> {
    let len: [u8; 8] = buf.get(..8)?.try_into().ok()?;
    let len = usize::try_from(u64::from_le_bytes(len)).ok()?;
    buf.get(8..8usize.checked_add(len)?)
}

/// Take one complete question off `inbox`; a question over the limit ends the talk.
pub(crate) fn take_frame(inbox: &mut Vec<u8>, talking: &mut bool) -> Option<Vec<u8>> {
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

pub(crate) fn finish(frame: &[u8]) -> Conversation {
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
