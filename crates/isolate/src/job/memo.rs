//! Remembered outcomes of pure jobs ([`crate::run_on_bytes_memo`]).
//!
//! Trials of one task decode the same files: every epoch, every agent and every validation run
//! renders the same PDF page, reads the same spreadsheet, decodes the same photo. The job that
//! does it is a plain function of its arguments and bytes, so its outcome can be kept and
//! given again instead of forking a process to compute it once more. Only an outcome the job
//! returned is kept — never a limit that stopped it, a crash or a panic, which can depend on
//! the load of the machine — and it is kept under a hash of the function, its arguments and
//! the bytes (BLAKE3, 256 bits), in a memo of at most [`MEMO_BYTES`] per process: the oldest
//! outcomes leave first. An outcome larger than [`MAX_ENTRY_BYTES`] is not kept.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Total size of the outcomes one process keeps.
pub const MEMO_BYTES: usize = 64 << 20;
/// The largest outcome kept.
pub const MAX_ENTRY_BYTES: usize = 16 << 20;

/// The key of one job: its entry, its function and its encoded input.
pub(crate) type Key = [u8; 32];

pub(crate) fn key(entry: usize, function: usize, input: &[u8]) -> Key {
    let mut h = blake3::Hasher::new();
    h.update(b"bureau-isolate memo 1\0");
    h.update(&(entry as u64).to_le_bytes());
    h.update(&(function as u64).to_le_bytes());
    h.update(&(input.len() as u64).to_le_bytes());
    h.update(input);
    *h.finalize().as_bytes()
}

#[derive(Default)]
struct Memo {
    outcomes: HashMap<Key, Arc<Vec<u8>>>,
    /// Keys in the order they were kept (the oldest first).
    order: VecDeque<Key>,
    bytes: usize,
}

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Keep and give outcomes (`true`, the default) or run every job (`false`) in this process. A
/// benchmark of the readers turns it off, so that it measures them and not the memo.
pub fn set_memo(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The outcome kept under `key`.
pub(crate) fn get(key: &Key) -> Option<Arc<Vec<u8>>> {
    let memo = MEMO.lock().unwrap_or_else(|p| p.into_inner());
    memo.as_ref()?.outcomes.get(key).cloned()
}

/// Keep `outcome` under `key` (the oldest outcomes leave to make room).
pub(crate) fn put(key: Key, outcome: Vec<u8>) {
    if outcome.len() > MAX_ENTRY_BYTES {
        return;
    }
    let mut guard = MEMO.lock().unwrap_or_else(|p| p.into_inner());
    let memo = guard.get_or_insert_with(Memo::default);
    if memo.outcomes.contains_key(&key) {
        return;
    }
    while memo.bytes + outcome.len() > MEMO_BYTES {
        let Some(old) = memo.order.pop_front() else {
            break;
        };
        if let Some(o) = memo.outcomes.remove(&old) {
            memo.bytes -= o.len();
        }
    }
    memo.bytes += outcome.len();
    memo.order.push_back(key);
    memo.outcomes.insert(key, Arc::new(outcome));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many outcomes and bytes the memo holds.
    fn memo_size() -> (usize, usize) {
        let memo = MEMO.lock().unwrap_or_else(|p| p.into_inner());
        memo.as_ref()
            .map(|m| (m.outcomes.len(), m.bytes))
            .unwrap_or((0, 0))
    }

    #[test]
    fn the_oldest_outcomes_leave_when_the_memo_is_full() {
        let big = MAX_ENTRY_BYTES;
        let keys: Vec<Key> = (0..6).map(|i| key(1, 2, &[i as u8, 0xee])).collect();
        for k in &keys {
            put(*k, vec![0u8; big]);
        }
        let (_, bytes) = memo_size();
        assert!(bytes <= MEMO_BYTES);
        // Six outcomes of 16 MiB do not fit in 64 MiB: the first two left.
        assert!(get(&keys[0]).is_none());
        assert!(get(&keys[1]).is_none());
        assert!(get(&keys[5]).is_some());
        // Too large to keep at all.
        let k = key(1, 2, b"too large");
        put(k, vec![0u8; big + 1]);
        assert!(get(&k).is_none());
    }

    #[test]
    fn the_key_tells_function_arguments_and_bytes_apart() {
        assert_ne!(key(1, 2, b"ab"), key(1, 3, b"ab"));
        assert_ne!(key(1, 2, b"ab"), key(4, 2, b"ab"));
        assert_ne!(key(1, 2, b"ab"), key(1, 2, b"abc"));
        assert_eq!(key(1, 2, b"ab"), key(1, 2, b"ab"));
    }
}
