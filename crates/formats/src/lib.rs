//! File formats of the Bureau workplace: e-mail ([`mail`]), calendars
//! ([`calendar`]) and text normalisation for robust comparisons ([`text`]).
//!
//! Every parser here takes untrusted input: none of them panics (third-party
//! parsers run under `catch_unwind`), and every failure is a [`FormatError`]
//! whose message says what is wrong and what to do. Every writer is
//! deterministic: the same input gives the same bytes, with no clock and no
//! randomness involved.
//!
//! ```
//! use bureau_formats::{calendar, mail, text};
//!
//! let m = mail::parse_eml(b"From: Dana <Dana@x.test>\r\nSubject: =?utf-8?q?Caf=C3=A9?=\r\n\r\nTotal: $11,917.00\r\n")?;
//! assert_eq!(m.from.unwrap().email, "dana@x.test");
//! assert_eq!(m.subject, "Café");
//! assert!(text::contains_keyword(&m.text, "11917"));
//! assert!(!text::contains_keyword(&m.text, "917"));
//! assert_eq!(text::parse_number("(1,200)"), Some(-1200.0));
//!
//! let ics = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1@x.test\r\nSUMMARY:Review\r\n\
//!            DTSTART;TZID=America/New_York:20240701T090000\r\nDURATION:PT1H\r\n\
//!            END:VEVENT\r\nEND:VCALENDAR\r\n";
//! let events = calendar::parse_ics(ics, chrono_tz::UTC)?;
//! assert_eq!(events[0].start.to_rfc3339(), "2024-07-01T13:00:00+00:00");
//! # Ok::<(), bureau_formats::FormatError>(())
//! ```

mod b64;
pub mod calendar;
mod error;
pub mod isolated;
pub mod mail;
pub mod office;
pub mod sheet;
pub mod text;

pub use error::FormatError;
