//! Shards of one run (`bureau run … --shard K/N`): a deterministic partition of the run's
//! trials, balanced by the tasks' expected cost, identical on every machine for the same
//! arguments. Every shard writes its own trial directories into one run directory on shared
//! storage; `run.json` is written once (atomically, by whichever shard comes first) and then
//! only compared; `summary.json` and `report.md` are left to `bureau report`, so two shards
//! never write the same file. See `docs/distributed.md`.

use std::fmt;
use std::str::FromStr;

use bureau_core::task::Task;

/// Shard `k` of `n` (1 ≤ k ≤ n).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s.split_once('/').ok_or_else(|| {
            format!("`{s}` is not K/N — write the shard as e.g. 2/4 (the second of four)")
        })?;
        let parse = |x: &str, what: &str| {
            x.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{s}`: {what} `{x}` is not a whole number"))
        };
        let (k, n) = (parse(k, "K")?, parse(n, "N")?);
        if n == 0 {
            return Err(format!(
                "`{s}`: N, the number of shards, must be at least 1"
            ));
        }
        if k == 0 || k > n {
            return Err(format!(
                "`{s}`: K counts shards from 1 to N, so it must be between 1 and {n}"
            ));
        }
        Ok(Shard { k, n })
    }
}

/// The expected cost of one trial of `task`, in arbitrary units: its turns (each a wake-up, a
/// snapshot and an evaluation) and, for a generated workspace, its size.
pub fn trial_cost(task: &Task) -> u64 {
    let turns = task.turns.len().max(1) as u64;
    let workspace = task.workspace.as_ref().map_or(0, |w| w.files as u64 / 250);
    let items = task.rubric.len() as u64;
    10 * turns + workspace + items
}

/// The shard (1-based) of each trial, given each trial's cost: the longest-processing-time
/// rule — trials by cost, highest first (ties in list order), each to the shard with the
/// least cost so far (ties to the lowest shard). Deterministic: the same list and costs give
/// the same partition everywhere.
pub fn partition(costs: &[u64], n: u32) -> Vec<u32> {
    let n = n.max(1) as usize;
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| costs[b].cmp(&costs[a]).then(a.cmp(&b)));
    let mut load = vec![0u64; n];
    let mut count = vec![0usize; n];
    let mut out = vec![0u32; costs.len()];
    for i in order {
        let (s, _) = (0..n)
            .map(|s| (s, (load[s], count[s])))
            .min_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((0, (0, 0)));
        load[s] += costs[i];
        count[s] += 1;
        out[i] = s as u32 + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bad_shards_are_refused_with_what_to_write() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { k: 2, n: 4 }));
        let e = "5/4".parse::<Shard>().unwrap_err();
        assert!(e.contains("between 1 and 4"), "{e}");
        let e = "0/0".parse::<Shard>().unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = "0/3".parse::<Shard>().unwrap_err();
        assert!(e.contains("between 1 and 3"), "{e}");
        assert!("3".parse::<Shard>().unwrap_err().contains("K/N"));
        assert!("a/b".parse::<Shard>().unwrap_err().contains("whole number"));
    }

    #[test]
    fn costly_trials_are_spread() {
        // Two heavy trials never share a shard of two while light ones balance the rest.
        let p = partition(&[100, 1, 1, 100, 1, 1], 2);
        assert_ne!(p[0], p[3]);
        let load = |s| {
            p.iter()
                .zip([100u64, 1, 1, 100, 1, 1])
                .filter(|(x, _)| **x == s)
                .map(|(_, c)| c)
                .sum::<u64>()
        };
        assert_eq!(load(1), load(2));
    }

    proptest! {
        #[test]
        fn every_trial_is_in_exactly_one_shard_and_loads_are_balanced(
            costs in proptest::collection::vec(1u64..50, 0..200),
            n in 1u32..9,
        ) {
            let p = partition(&costs, n);
            prop_assert_eq!(p.len(), costs.len());
            prop_assert!(p.iter().all(|s| *s >= 1 && *s <= n));
            prop_assert_eq!(&p, &partition(&costs, n));
            // LPT: no shard exceeds the lightest by more than the largest single cost.
            let mut load = vec![0u64; n as usize];
            for (s, c) in p.iter().zip(&costs) { load[*s as usize - 1] += c; }
            let max = *load.iter().max().unwrap_or(&0);
            let min = *load.iter().min().unwrap_or(&0);
            prop_assert!(max - min <= costs.iter().copied().max().unwrap_or(0));
        }
    }
}
