//! A run interrupted by a signal (SIGINT, SIGTERM).
//!
//! The binary's signal handler calls [`request`]; everything that waits on something
//! outside Bureau (a harness process, a model call, the next trial) polls [`requested`] and
//! winds down: harness process groups and cgroups are killed, private directories removed,
//! the attempt in progress is recorded as interrupted (never scored), and no new trial or
//! attempt starts. A process has one interruption: once requested it stays requested.

use std::sync::atomic::{AtomicI32, Ordering};

static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Ask the process to stop because of `signal` (its number). Only the first call counts.
/// Async-signal-safe: one atomic store.
pub fn request(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal.max(1), Ordering::SeqCst, Ordering::SeqCst);
}

/// The signal the process was asked to stop by, if any.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// The signal's name for messages (`SIGINT`, `SIGTERM`, else `signal <n>`).
pub fn name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".into(),
        15 => "SIGTERM".into(),
        1 => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}
