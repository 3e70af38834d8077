//! A requests-per-minute budget for an agent's model calls, shared by every trial of the
//! agent in one process (`bureau run --rpm`; a sharded run splits the budget across its
//! shards, docs/distributed.md).
//!
//! The budget is enforced by spacing: request starts are at least `60 s / rpm` apart, so no
//! 60-second window ever holds more than `rpm` of them (a bucket of one). The wall clock is
//! right here: this is about an API's limits, not the office's time.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Spaces one agent's model requests to stay within a requests-per-minute budget.
#[derive(Debug)]
pub struct RateLimit {
    per_minute: f64,
    interval: Duration,
    next: Mutex<Option<Instant>>,
}

impl RateLimit {
    /// At most `per_minute` requests in any minute (fractions allowed: a share of a budget
    /// split across shards). `None` when `per_minute` is not a positive finite number.
    pub fn per_minute(per_minute: f64) -> Option<RateLimit> {
        if !(per_minute.is_finite() && per_minute > 0.0) {
            return None;
        }
        Some(RateLimit {
            per_minute,
            interval: Duration::from_secs_f64(60.0 / per_minute),
            next: Mutex::new(None),
        })
    }

    /// The budget, in requests per minute.
    pub fn rpm(&self) -> f64 {
        self.per_minute
    }

    /// Wait for the next request slot. `Err(())` when the slot comes after `deadline` (no wait
    /// is made and no slot is taken); otherwise the time waited.
    #[allow(clippy::result_unit_err)]
    pub fn acquire(&self, deadline: Instant) -> Result<Duration, ()> {
        let now = Instant::now();
        let slot = {
            let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
            let slot = next.map_or(now, |n| n.max(now));
            if slot > deadline {
                return Err(());
            }
            *next = Some(slot + self.interval);
            slot
        };
        let wait = slot.saturating_duration_since(now);
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        Ok(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_spaced_to_the_budget() {
        // 1,200 per minute: one every 50 ms.
        let limit = RateLimit::per_minute(1200.0).unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        let start = Instant::now();
        let waits: Vec<Duration> = (0..5).map(|_| limit.acquire(far).unwrap()).collect();
        // The first goes at once; the fifth starts 4 intervals later.
        assert_eq!(waits[0], Duration::ZERO);
        assert!(
            start.elapsed() >= Duration::from_millis(200),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn threads_share_one_budget() {
        let limit = RateLimit::per_minute(6000.0).unwrap(); // 10 ms apart
        let far = Instant::now() + Duration::from_secs(60);
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..5 {
                        limit.acquire(far).unwrap();
                    }
                });
            }
        });
        // 20 requests, 10 ms apart: the last starts at least 190 ms after the first.
        assert!(
            start.elapsed() >= Duration::from_millis(190),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_slot_past_the_deadline_is_refused_without_waiting() {
        let limit = RateLimit::per_minute(1.0).unwrap(); // one a minute
        let soon = Instant::now() + Duration::from_secs(5);
        assert!(limit.acquire(soon).is_ok());
        let start = Instant::now();
        assert!(limit.acquire(soon).is_err());
        assert!(start.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_budget_must_be_positive() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(RateLimit::per_minute(bad).is_none(), "{bad}");
        }
        assert_eq!(RateLimit::per_minute(0.5).unwrap().rpm(), 0.5);
    }
}
