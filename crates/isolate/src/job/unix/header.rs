//! The header of a message to the zygote, and the trampolines that run a job's function.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;
use crate::Limits;
use crate::job::{Peer, PeerInner};

/// What the caller sends the zygote for one job (with the job's socket and the outcome
/// pipe as `SCM_RIGHTS`), as little-endian u64s.
#[derive(Clone, Copy)]
pub(crate) struct Header {
    pub(crate) entry: u64,
    pub(crate) function: u64,
    pub(crate) wall_ms: u64,
    pub(crate) memory_bytes: u64,
    pub(crate) max_output_bytes: u64,
    pub(crate) detect_stuck: u64,
}

pub(crate) const MAGIC: u64 = 0x6275_7265_6175_6a31; // "bureauj1"
/// The header of a "prepare" message: `entry` is a [`PrepareEntry`].
pub(crate) const MAGIC_PREPARE: u64 = 0x6275_7265_6175_7031; // "bureaup1"
/// The largest input of a "prepare" message.
pub(crate) const MAX_PREPARE_BYTES: usize = 256 << 20;
pub(crate) const HEADER_BYTES: usize = 7 * 8;

impl Header {
    pub(crate) fn encode(&self) -> [u8; HEADER_BYTES] {
        self.encode_as(MAGIC)
    }

    pub(crate) fn encode_as(&self, magic: u64) -> [u8; HEADER_BYTES] {
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
    pub(crate) fn decode(b: &[u8]) -> Option<(u64, Header)> {
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

    pub(crate) fn limits(&self) -> Limits {
        Limits {
            wall: Duration::from_millis(self.wall_ms),
            memory_bytes: self.memory_bytes,
            max_output_bytes: usize::try_from(self.max_output_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// The function the job's process runs: the monomorphised [`trampoline`] of the job.
pub(crate) type Entry = fn(usize, &mut Peer<'_>) -> Result<Vec<u8>, String>;

/// The input frame of the job, read from the caller.
pub(crate) fn input_frame(peer: &Peer<'_>) -> Result<Vec<u8>, String> {
    let PeerInner::Socket(fd) = peer.inner else {
        return Err("the job has no socket".into());
    };
    read_frame(fd, usize::MAX).map_err(|e| format!("reading the input: {e}"))
}

pub(crate) fn encode<O: Serialize>(out: &O) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    ciborium::into_writer(out, &mut body)
        .map(|_| body)
        .map_err(|e| e.to_string())
}

/// [`trampoline`] of [`run_on_bytes`]: the input is `(A, bytes)`.
pub(crate) fn trampoline_bytes<A: DeserializeOwned, O: Serialize>(
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
pub(crate) fn trampoline<I: DeserializeOwned, O: Serialize>(
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
