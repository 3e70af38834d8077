//! Importers that turn a local checkout of a public office benchmark into a Bureau suite.
//!
//! Nothing is downloaded: an importer reads the user's checkout and writes task directories
//! (docs/task-format.md). Today there is one: [`officebench`] (`bureau import officebench`),
//! documented in `docs/import-officebench.md`.
//!
//! An importer never panics on bad input: every subtask it cannot convert is one
//! [`Problem`] naming the file (and line when known), what is wrong and what to do, and the
//! rest of the checkout is still imported.

use std::fmt;
use std::path::PathBuf;

pub mod officebench;

/// One thing an importer could not convert, located in the source checkout.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Problem {
    pub path: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

impl Problem {
    pub fn new(
        path: impl Into<PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Problem {
        Problem {
            path: path.into(),
            line,
            message: message.into(),
            hint: hint.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: ", self.path.display())?,
            None => write!(f, "{}: ", self.path.display())?,
        }
        write!(f, "{} — {}", self.message, self.hint)
    }
}

/// Why an import could not start or finish at all (per-subtask trouble is a [`Problem`]).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The checkout is not the benchmark the importer reads.
    #[error("{path}: {why} — {hint}")]
    NotTheBenchmark {
        path: PathBuf,
        why: String,
        hint: String,
    },
    /// The output directory cannot be used.
    #[error("{path}: {why} — {hint}")]
    Output {
        path: PathBuf,
        why: String,
        hint: String,
    },
    #[error("{path}: {source} — check that the path is readable and writable")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ImportError + '_ {
    move |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    }
}
