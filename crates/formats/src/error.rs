//! The one error type of this crate.
//!
//! Every variant's message says what is wrong with the input and what to do
//! about it, so it can be shown to a scenario author as is.

use thiserror::Error;

/// Everything that can go wrong while reading or writing mail, calendar or
/// text data.
///
/// It crosses from an isolated reader's process as `crate::isolated::Wire`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FormatError {
    /// The bytes given to [`crate::mail::parse_eml`] are not an e-mail message.
    #[error(
        "not an e-mail message: {reason}; give the raw RFC 5322 message (header lines such as \"From: ...\" and \"Subject: ...\", a blank line, then the body)"
    )]
    NotMail {
        /// What was found instead.
        reason: String,
    },

    /// An e-mail address could not be parsed.
    #[error(
        "invalid e-mail address {input:?}: {reason}; write it as \"name@domain\" or \"Display Name <name@domain>\""
    )]
    InvalidAddress {
        /// The text that was given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },

    /// An [`crate::mail::OutgoingMail`] cannot be turned into a message.
    #[error("cannot build the e-mail: {reason}")]
    InvalidOutgoingMail {
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// iCalendar text is malformed.
    #[error("invalid iCalendar data{}: {reason}", at_line(*line))]
    InvalidCalendar {
        /// 1-based line number in the original (folded) text; 0 when the
        /// problem is not tied to a line.
        line: usize,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// A VEVENT has no UID.
    #[error(
        "the event {summary:?} (starting at line {line}) has no UID; every VEVENT needs a unique UID line, e.g. \"UID:budget-review-1@example.test\""
    )]
    MissingUid {
        /// The SUMMARY of the event ("" if it had none).
        summary: String,
        /// 1-based line of its BEGIN:VEVENT.
        line: usize,
    },

    /// A TZID parameter names a time zone that is not in the IANA database.
    #[error(
        "unknown time zone {tzid:?} at line {line}; use an IANA time zone name such as \"America/New_York\" or \"Europe/Berlin\" (custom VTIMEZONE definitions are not supported)"
    )]
    UnknownTimezone {
        /// The TZID as written.
        tzid: String,
        /// 1-based line number of the property that used it.
        line: usize,
    },

    /// An office document (.docx, .xlsx, .pptx, .pdf, .csv, ...) cannot be read or written:
    /// corrupt, truncated, encrypted, too large, or not what its name says.
    #[error("{file}: {reason}")]
    InvalidDocument {
        /// The file's name or path as the caller knows it.
        file: String,
        /// What is wrong and what to do.
        reason: String,
    },

    /// A third-party parser or builder panicked on this input. The input is
    /// malformed in a way the library did not expect.
    #[error(
        "the {what} failed on this input ({detail}); the data is malformed: check or regenerate the file"
    )]
    Internal {
        /// Which component failed ("mail parser", "mail builder", ...).
        what: &'static str,
        /// The panic message, if any.
        detail: String,
    },
}

fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" at line {line}")
    }
}

/// Runs `f`, turning a panic into [`FormatError::Internal`].
pub(crate) fn guard<T>(what: &'static str, f: impl FnOnce() -> T) -> Result<T, FormatError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let detail = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "panic".to_string()
        };
        FormatError::Internal { what, detail }
    })
}

impl serde::Serialize for FormatError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::isolated::Wire::from(self.clone()).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for FormatError {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FormatError, D::Error> {
        crate::isolated::Wire::deserialize(d).map(FormatError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_turns_panics_into_errors() {
        let err = guard("test thing", || -> u8 { panic!("boom") }).unwrap_err();
        assert_eq!(
            err,
            FormatError::Internal {
                what: "test thing",
                detail: "boom".into()
            }
        );
        assert!(err.to_string().contains("test thing failed"));
        assert_eq!(guard("x", || 5).unwrap(), 5);
    }

    #[test]
    fn messages_say_what_to_do() {
        let e = FormatError::MissingUid {
            summary: "Budget review".into(),
            line: 3,
        };
        let msg = e.to_string();
        assert!(msg.contains("Budget review") && msg.contains("UID:"));
        let e = FormatError::UnknownTimezone {
            tzid: "Mars/Olympus".into(),
            line: 7,
        };
        assert!(e.to_string().contains("Mars/Olympus"));
        let e = FormatError::InvalidCalendar {
            line: 0,
            reason: "empty".into(),
        };
        assert_eq!(e.to_string(), "invalid iCalendar data: empty");
        let e = FormatError::InvalidCalendar {
            line: 4,
            reason: "bad".into(),
        };
        assert_eq!(e.to_string(), "invalid iCalendar data at line 4: bad");
    }
}
