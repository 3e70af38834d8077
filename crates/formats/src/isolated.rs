//! Readers of untrusted documents run in an isolated child process ([`bureau_isolate`]).
//!
//! A hostile file can do what no `catch_unwind` survives: a PDF whose objects reference each
//! other in a cycle makes the text extractor recurse until the stack overflows (the process
//! aborts), a crafted archive can make a parser allocate until allocation fails (abort too),
//! another can loop. Every public reader of office documents and spreadsheets
//! ([`crate::office::read_docx`], [`crate::office::read_pptx`], [`crate::office::read_pdf`],
//! [`crate::office::to_text`], [`crate::office::render`], [`crate::sheet::read_file`]) therefore
//! parses in an isolated process ([`bureau_isolate::run_on_bytes`]: forked from the zygote
//! when the program started one, so a large caller is not copied) with [`DOCUMENT_SECONDS`] of
//! wall-clock time and
//! [`DOCUMENT_MEMORY_BYTES`] of memory; a crash, an abort or a timeout becomes
//! [`FormatError::InvalidDocument`] naming the file and the limit, and the caller carries on.
//! The readers' own bounds (zip bombs, XML depth, page and text caps, see [`crate::office`])
//! still apply inside the child, so most bad files get their precise message from there.
//!
//! The parsers touch no lock and no global state another thread could hold (see
//! [`bureau_isolate`] for why that matters after `fork`).

use std::time::Duration;

use bureau_isolate::{IsolateError, Limits, run_on_bytes_memo};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::FormatError;

/// Wall-clock seconds one document may take to read.
pub const DOCUMENT_SECONDS: u64 = 30;
/// Bytes of memory a document reader may use beyond what the calling process already maps.
pub const DOCUMENT_MEMORY_BYTES: u64 = 2 << 30;

/// [`FormatError`] as it crosses the pipe from the child.
#[derive(Serialize, Deserialize)]
pub(crate) enum Wire {
    NotMail { reason: String },
    InvalidAddress { input: String, reason: String },
    InvalidOutgoingMail { reason: String },
    InvalidCalendar { line: usize, reason: String },
    MissingUid { summary: String, line: usize },
    UnknownTimezone { tzid: String, line: usize },
    InvalidDocument { file: String, reason: String },
    Internal { what: String, detail: String },
}

impl From<FormatError> for Wire {
    fn from(e: FormatError) -> Wire {
        match e {
            FormatError::NotMail { reason } => Wire::NotMail { reason },
            FormatError::InvalidAddress { input, reason } => Wire::InvalidAddress { input, reason },
            FormatError::InvalidOutgoingMail { reason } => Wire::InvalidOutgoingMail { reason },
            FormatError::InvalidCalendar { line, reason } => Wire::InvalidCalendar { line, reason },
            FormatError::MissingUid { summary, line } => Wire::MissingUid { summary, line },
            FormatError::UnknownTimezone { tzid, line } => Wire::UnknownTimezone { tzid, line },
            FormatError::InvalidDocument { file, reason } => Wire::InvalidDocument { file, reason },
            FormatError::Internal { what, detail } => Wire::Internal {
                what: what.to_string(),
                detail,
            },
        }
    }
}

/// The components whose panics [`crate::error::guard`] names (`what` is `&'static str`).
const COMPONENTS: &[&str] = &[
    "PDF reader",
    "PDF text extractor",
    "YAML parser",
    "calendar parser",
    "docx writer",
    "mail builder",
    "mail parser",
    "spreadsheet reader",
    "zip reader",
    "zip writer",
    "PNG decoder",
];

impl From<Wire> for FormatError {
    fn from(w: Wire) -> FormatError {
        match w {
            Wire::NotMail { reason } => FormatError::NotMail { reason },
            Wire::InvalidAddress { input, reason } => FormatError::InvalidAddress { input, reason },
            Wire::InvalidOutgoingMail { reason } => FormatError::InvalidOutgoingMail { reason },
            Wire::InvalidCalendar { line, reason } => FormatError::InvalidCalendar { line, reason },
            Wire::MissingUid { summary, line } => FormatError::MissingUid { summary, line },
            Wire::UnknownTimezone { tzid, line } => FormatError::UnknownTimezone { tzid, line },
            Wire::InvalidDocument { file, reason } => FormatError::InvalidDocument { file, reason },
            Wire::Internal { what, detail } => FormatError::Internal {
                what: COMPONENTS
                    .iter()
                    .find(|c| **c == what)
                    .copied()
                    .unwrap_or("document reader"),
                detail,
            },
        }
    }
}

/// The limits documents are read under.
pub(crate) fn limits() -> Limits {
    Limits::new(Duration::from_secs(DOCUMENT_SECONDS), DOCUMENT_MEMORY_BYTES)
}

/// Run the reader `f` of the file named `file` over its `bytes` in an isolated process; see
/// the module docs. `f` gets the name and the bytes.
pub(crate) fn read<T>(
    file: &str,
    bytes: &[u8],
    f: fn(&String, &[u8]) -> Result<T, FormatError>,
) -> Result<T, FormatError>
where
    T: Serialize + DeserializeOwned,
{
    read_with(file, &file.to_string(), bytes, f)
}

/// [`read`] with other arguments than the file's name.
pub(crate) fn read_with<A, T>(
    file: &str,
    args: &A,
    bytes: &[u8],
    f: fn(&A, &[u8]) -> Result<T, FormatError>,
) -> Result<T, FormatError>
where
    A: Serialize + DeserializeOwned,
    T: Serialize + DeserializeOwned,
{
    match run_on_bytes_memo(&limits(), f, args, bytes) {
        Ok(r) => r,
        Err(e) => Err(FormatError::InvalidDocument {
            file: file.to_string(),
            reason: reason(&e),
        }),
    }
}

/// What to tell the reader of a document whose parser was stopped.
fn reason(e: &IsolateError) -> String {
    match e {
        IsolateError::Spawn(_) | IsolateError::Protocol(_) => {
            format!("the file could not be read: {e}")
        }
        _ => format!(
            "reading this file was stopped: {e}; the file is malformed or hostile (ask for a fresh copy or a text version)"
        ),
    }
}
