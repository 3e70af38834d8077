//! The one source of randomness: ChaCha8 seeded from the spec, split per purpose so that
//! adding a file never shifts the content of another.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng as _, SeedableRng};

/// A seeded random stream with the few helpers the generator needs.
pub(crate) struct Rng(ChaCha8Rng);

impl Rng {
    /// A stream for `(seed, purpose)`: the purpose string keeps streams independent.
    pub(crate) fn new(seed: u64, purpose: &str) -> Rng {
        let mut h = blake3::Hasher::new();
        h.update(&seed.to_le_bytes());
        h.update(purpose.as_bytes());
        Rng(ChaCha8Rng::from_seed(*h.finalize().as_bytes()))
    }

    pub(crate) fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n` > 0; 0 gives 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        lo + (self.u64() % (hi - lo + 1) as u64) as i64
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Index drawn with the given weights (all zero: index 0).
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        if total == 0 {
            return 0;
        }
        let mut x = self.u64() % total;
        for (i, w) in weights.iter().enumerate() {
            if x < u64::from(*w) {
                return i;
            }
            x -= u64::from(*w);
        }
        weights.len() - 1
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}
