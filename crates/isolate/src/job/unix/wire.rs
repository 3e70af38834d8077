//! The outcome a supervisor sends the caller, and [`IsolateError`] as it crosses.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::IsolateError;

// -- the outcome the supervisor sends: tag, then data --

pub(crate) const OUTCOME_DATA: u8 = 0;
pub(crate) const OUTCOME_ERROR: u8 = 1;
pub(crate) const OUTCOME_STUCK: u8 = 2;

/// [`IsolateError`] as it crosses from the supervisor.
#[derive(Serialize, Deserialize)]
pub(crate) enum Wire {
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
