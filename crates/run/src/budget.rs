//! Per-agent model API limits of a run: how many of an agent's trials run at once
//! (`--agent-concurrency`) and how many model requests it sends per minute (`--rpm`). Both
//! are figures for the whole run; a sharded run splits them across its shards, so that N
//! machines together stay within what the API allows (docs/distributed.md).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Shard;

/// One agent's limits for the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentBudget {
    /// At most this many of the agent's trials at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// At most this many model requests per minute (Bureau's own `llm` agents: a harness
    /// program calls its model itself and is not paced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
}

impl AgentBudget {
    pub fn is_empty(&self) -> bool {
        self.concurrency.is_none() && self.rpm.is_none()
    }

    /// `over` where it sets a limit, else `self`.
    pub fn overridden_by(self, over: AgentBudget) -> AgentBudget {
        AgentBudget {
            concurrency: over.concurrency.or(self.concurrency),
            rpm: over.rpm.or(self.rpm),
        }
    }

    /// This shard's part of the budget.
    pub fn share(&self, shard: Option<Shard>) -> ShardBudget {
        ShardBudget {
            concurrency: self.concurrency.map(|c| share_count(c, shard)),
            rpm: self.rpm.map(|r| share_rate(r, shard)),
        }
    }
}

/// One shard's part of an agent's budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShardBudget {
    pub concurrency: Option<u32>,
    /// Requests per minute (a fraction when the budget does not divide evenly).
    pub rpm: Option<f64>,
}

/// Shard K of N's part of `total` trials at once: `total / N`, the first `total % N` shards one
/// more; at least 1 (a shard must make progress — then the shards together may exceed the
/// total, which [`oversubscribed`] reports).
pub fn share_count(total: u32, shard: Option<Shard>) -> u32 {
    match shard {
        None => total.max(1),
        Some(s) => {
            let base = total / s.n;
            let extra = u32::from(s.k <= total % s.n);
            (base + extra).max(1)
        }
    }
}

/// Shard K of N's part of a requests-per-minute budget: an even split.
pub fn share_rate(total: u32, shard: Option<Shard>) -> f64 {
    f64::from(total) / f64::from(shard.map_or(1, |s| s.n))
}

/// When `total` trials at once cannot be split over `n` shards without giving some shard
/// none: what the user is told.
pub fn oversubscribed(agent: &str, total: u32, n: u32) -> Option<String> {
    (total < n).then(|| {
        format!(
            "agent `{agent}`: --agent-concurrency {total} over {n} shards gives each shard 1, so up to {n} of its trials may run at once — give at least {n}, or fewer shards"
        )
    })
}

/// The budgets of a run's agents: `default` for every agent, field by field overridden by
/// `per_agent` (by spec). Only agents with a limit are in the result.
pub fn resolve(
    default: AgentBudget,
    per_agent: &BTreeMap<String, AgentBudget>,
    specs: &[String],
) -> BTreeMap<String, AgentBudget> {
    specs
        .iter()
        .map(|s| {
            let b = default.overridden_by(per_agent.get(s).copied().unwrap_or_default());
            (s.clone(), b)
        })
        .filter(|(_, b)| !b.is_empty())
        .collect()
}

/// Hands a run's jobs to its workers in order, never more than an agent's concurrency of the
/// same agent at once. A worker that finds only jobs of agents at their limit waits.
pub(crate) struct Scheduler {
    /// The agent (spec) of each job, in job order.
    agents: Vec<String>,
    caps: BTreeMap<String, usize>,
    state: Mutex<SchedState>,
    freed: Condvar,
}

struct SchedState {
    taken: Vec<bool>,
    /// The first job not taken yet.
    head: usize,
    running: BTreeMap<String, usize>,
}

impl Scheduler {
    pub(crate) fn new(agents: Vec<String>, caps: BTreeMap<String, usize>) -> Scheduler {
        let n = agents.len();
        Scheduler {
            agents,
            caps,
            state: Mutex::new(SchedState {
                taken: vec![false; n],
                head: 0,
                running: BTreeMap::new(),
            }),
            freed: Condvar::new(),
        }
    }

    /// The next job a worker may run, waiting while every job left belongs to an agent at
    /// its limit; `None` when none is left or `stop` is set.
    pub(crate) fn take(&self, stop: &AtomicBool) -> Option<usize> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if stop.load(Ordering::SeqCst) || bureau_core::interrupt::requested().is_some() {
                return None;
            }
            while st.head < st.taken.len() && st.taken[st.head] {
                st.head += 1;
            }
            if st.head >= st.taken.len() {
                return None;
            }
            let free = (st.head..st.taken.len()).find(|&i| {
                !st.taken[i] && {
                    let a = &self.agents[i];
                    self.caps
                        .get(a)
                        .is_none_or(|&cap| st.running.get(a).copied().unwrap_or(0) < cap)
                }
            });
            if let Some(i) = free {
                st.taken[i] = true;
                *st.running.entry(self.agents[i].clone()).or_insert(0) += 1;
                return Some(i);
            }
            st = self
                .freed
                .wait_timeout(st, Duration::from_millis(200))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Job `i` is over: its agent has a free place again.
    pub(crate) fn finished(&self, i: usize) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = st.running.get_mut(&self.agents[i]) {
            *n = n.saturating_sub(1);
        }
        drop(st);
        self.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn shard(k: u32, n: u32) -> Option<Shard> {
        Some(Shard { k, n })
    }

    #[test]
    fn shares_add_up_to_the_budget() {
        for total in [1u32, 2, 5, 7, 10, 64, 100] {
            for n in 1..=8u32 {
                let counts: Vec<u32> = (1..=n).map(|k| share_count(total, shard(k, n))).collect();
                if total >= n {
                    assert_eq!(
                        counts.iter().sum::<u32>(),
                        total,
                        "{total} over {n}: {counts:?}"
                    );
                    assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
                } else {
                    assert!(counts.iter().all(|&c| c == 1));
                    assert!(oversubscribed("a", total, n).is_some());
                }
                let rates: f64 = (1..=n).map(|k| share_rate(total, shard(k, n))).sum();
                assert!((rates - f64::from(total)).abs() < 1e-9);
            }
        }
        assert_eq!(share_count(5, None), 5);
        assert_eq!(share_rate(90, None), 90.0);
        assert!(oversubscribed("a", 4, 4).is_none());
    }

    #[test]
    fn per_agent_budgets_override_the_default_field_by_field() {
        let default = AgentBudget {
            concurrency: Some(4),
            rpm: Some(600),
        };
        let mut per = BTreeMap::new();
        per.insert(
            "b".to_string(),
            AgentBudget {
                concurrency: None,
                rpm: Some(60),
            },
        );
        let specs = vec!["a".to_string(), "b".to_string()];
        let r = resolve(default, &per, &specs);
        assert_eq!(r["a"], default);
        assert_eq!(
            r["b"],
            AgentBudget {
                concurrency: Some(4),
                rpm: Some(60)
            }
        );
        // No limit at all: nothing recorded.
        assert!(resolve(AgentBudget::default(), &BTreeMap::new(), &specs).is_empty());
    }

    #[test]
    fn no_more_than_an_agents_cap_of_its_trials_run_at_once() {
        // 12 jobs alternating agents a and b; a may run 1 at once, b unlimited; 4 workers.
        let agents: Vec<String> = (0..12)
            .map(|i| if i % 2 == 0 { "a" } else { "b" }.to_string())
            .collect();
        let mut caps = BTreeMap::new();
        caps.insert("a".to_string(), 1);
        let sched = Scheduler::new(agents.clone(), caps);
        let stop = AtomicBool::new(false);
        let running_a = AtomicUsize::new(0);
        let max_a = AtomicUsize::new(0);
        let ran = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    while let Some(i) = sched.take(&stop) {
                        if agents[i] == "a" {
                            let now = running_a.fetch_add(1, Ordering::SeqCst) + 1;
                            max_a.fetch_max(now, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(20));
                            running_a.fetch_sub(1, Ordering::SeqCst);
                        }
                        ran.lock().unwrap().push(i);
                        sched.finished(i);
                    }
                });
            }
        });
        assert_eq!(max_a.into_inner(), 1);
        let mut ran = ran.into_inner().unwrap();
        ran.sort();
        assert_eq!(ran, (0..12).collect::<Vec<_>>(), "every job exactly once");
    }

    #[test]
    fn a_stopped_scheduler_hands_out_nothing() {
        let sched = Scheduler::new(vec!["a".into(); 3], BTreeMap::new());
        let stop = AtomicBool::new(true);
        assert_eq!(sched.take(&stop), None);
    }
}
