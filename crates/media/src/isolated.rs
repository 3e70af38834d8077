//! Decoders of untrusted media run in an isolated child process ([`bureau_isolate`]): a
//! decoder that panics, overflows its stack, allocates without end or loops becomes a
//! [`MediaError`] naming the file and the limit, never a crash or a hang of Bureau.

use std::time::Duration;

use bureau_isolate::{Limits, run_isolated};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::MediaError;
use crate::limits::{MEMORY_BYTES, SECONDS};

/// Run `f` (a decoder of `file`) in an isolated child under the media limits.
pub fn decode<T, F>(file: &str, f: F) -> Result<T, MediaError>
where
    T: Serialize + DeserializeOwned,
    F: Fn() -> Result<T, MediaError>,
{
    let limits = Limits::new(Duration::from_secs(SECONDS), MEMORY_BYTES);
    match run_isolated(&limits, f) {
        Ok(r) => r,
        Err(e) => Err(MediaError::Invalid {
            file: file.to_string(),
            reason: format!("decoding it was stopped: {e}; the file is damaged or hostile"),
        }),
    }
}
