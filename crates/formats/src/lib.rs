//! File formats of the Bureau workplace: e-mail ([`mail`]), calendars
//! ([`calendar`]) and text normalisation for robust comparisons ([`text`]).
//!
//! Every parser here takes untrusted input: none of them panics (third-party
//! parsers run under `catch_unwind`), and every failure is a [`FormatError`]
//! whose message says what is wrong and what to do. Every writer is
//! deterministic: the same input gives the same bytes, with no clock and no
//! randomness involved.

mod b64;
pub mod calendar;
mod error;
pub mod mail;
pub mod text;

pub use error::FormatError;
