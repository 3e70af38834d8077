//! Decoders of untrusted media run in an isolated process ([`bureau_isolate::run_on_bytes`]:
//! forked from the zygote when the program started one, so a large caller is not copied): a
//! decoder that panics, overflows its stack, allocates without end or loops becomes a
//! [`MediaError`] naming the file and the limit, never a crash or a hang of Bureau.

use std::time::Duration;

use bureau_isolate::{Limits, run_on_bytes_memo};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::MediaError;
use crate::limits::{MEMORY_BYTES, SECONDS};

/// Run `f` (a decoder of the file named `file`) over `args` and the file's `bytes` in an
/// isolated process under the media limits.
pub fn decode<A, T>(
    file: &str,
    args: &A,
    bytes: &[u8],
    f: fn(&A, &[u8]) -> Result<T, MediaError>,
) -> Result<T, MediaError>
where
    A: Serialize + DeserializeOwned,
    T: Serialize + DeserializeOwned,
{
    let limits = Limits::new(Duration::from_secs(SECONDS), MEMORY_BYTES);
    match run_on_bytes_memo(&limits, f, args, bytes) {
        Ok(r) => r,
        Err(e) => Err(MediaError::Invalid {
            file: file.to_string(),
            reason: format!("decoding it was stopped: {e}; the file is damaged or hostile"),
        }),
    }
}
