use std::path::PathBuf;

/// Failures building, changing or snapshotting a world. These are harness or task errors,
/// never agent failures (an agent's mistakes are tool errors, see [`crate::tools`]).
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    #[error("{path}: {message}")]
    Seed { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("turn {turn}, event `{kind}` ({location}): {message}")]
    Event {
        turn: u32,
        kind: String,
        location: String,
        message: String,
    },
    #[error("snapshot: {0}")]
    Snapshot(String),
}

impl WorldError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        WorldError::Io {
            path: path.into(),
            source,
        }
    }
}
