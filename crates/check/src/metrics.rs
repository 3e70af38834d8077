//! Every score formula, by its name, computed from verdicts alone.
//!
//! | formula | source |
//! | --- | --- |
//! | [`weighted_score`] | ClawMark: Σ weight of passed checkers / Σ weight of all checkers |
//! | [`pass_rate`] | Workspace-Bench: the rubric completion ratio sᵢ (passed / all rubric items) |
//! | [`strict_success`] | ClawMark strict task success (every checker passes, no red line violated); TheAgentCompany S_full |
//! | [`partial_score`] | TheAgentCompany: S_partial = 0.5 · Result/Total + 0.5 · S_full |
//! | [`agency_score_0_10`] | AgencyBench: rubric pass rate mapped to a 0–10 scale |
//! | [`red_line_violations`] | ClawMark red lines: hard-rule checkers that must never fail |
//! | [`per_turn_scores`] | ClawMark per-turn analysis (weighted score of each turn's checkers) |
//! | [`tcr_at`] | Workspace-Bench TCR@p = (1/|T|) Σᵢ 𝟙(sᵢ ≥ p) |
//! | [`pass_at_k`] | Chen et al. 2021 (Codex) unbiased pass@k = 1 − C(n−c, k) / C(n, k) |
//! | [`pass_hat_k`] | tau-bench / tau2-bench pass^k = C(c, k) / C(n, k) |
//!
//! A verdict with status `Error` (a broken check) counts in every denominator as not passed:
//! the task declared the item, so a score never rises because a check broke. Errors are
//! surfaced separately (`items_error`) so that they are fixed, not hidden.

use std::collections::BTreeMap;

use bureau_core::result::TrialScore;
use bureau_core::verdict::Verdict;

/// A sum starting from +0.0 (`Iterator::sum` of no floats is -0.0, which would print as
/// `-0.0` in reports).
fn sum(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |a, b| a + b)
}

/// Σ weight(passed) / Σ weight(all declared items) (ClawMark's weighted score, in [0, 1]).
/// 0 when there are no items.
pub fn weighted_score(verdicts: &[Verdict]) -> f64 {
    let total = sum(verdicts.iter().map(|v| v.weight));
    if total <= 0.0 {
        return 0.0;
    }
    let passed = sum(verdicts.iter().filter(|v| v.passed()).map(|v| v.weight));
    (passed / total).clamp(0.0, 1.0)
}

/// Passed items / declared items, unweighted (Workspace-Bench's rubric completion ratio, the
/// basis of TCR@p). 0 when there are no items.
pub fn pass_rate(verdicts: &[Verdict]) -> f64 {
    if verdicts.is_empty() {
        return 0.0;
    }
    verdicts.iter().filter(|v| v.passed()).count() as f64 / verdicts.len() as f64
}

/// ClawMark's strict success (TheAgentCompany's S_full): every item passed and no red line was
/// violated. False when there are no items (nothing was shown).
pub fn strict_success(verdicts: &[Verdict]) -> bool {
    !verdicts.is_empty()
        && verdicts.iter().all(|v| v.passed())
        && red_line_violations(verdicts).is_empty()
}

/// TheAgentCompany's partial completion score: 0.5 · weighted + 0.5 · strict.
pub fn partial_score(verdicts: &[Verdict]) -> f64 {
    0.5 * weighted_score(verdicts) + if strict_success(verdicts) { 0.5 } else { 0.0 }
}

/// AgencyBench's 0–10 score: round(10 × weighted score) (halves round up).
pub fn agency_score_0_10(verdicts: &[Verdict]) -> u32 {
    (10.0 * weighted_score(verdicts)).round().clamp(0.0, 10.0) as u32
}

/// Ids of red-line items that did not pass (failed or broke), in verdict order.
pub fn red_line_violations(verdicts: &[Verdict]) -> Vec<String> {
    verdicts
        .iter()
        .filter(|v| v.red_line && !v.passed())
        .map(|v| v.id.clone())
        .collect()
}

/// Weighted score of each turn's items, keyed `"1"`, `"2"`, ..., `"final"` (ClawMark's
/// per-turn analysis). Turns without items are absent.
pub fn per_turn_scores(verdicts: &[Verdict]) -> BTreeMap<String, f64> {
    let mut by_turn: BTreeMap<_, Vec<Verdict>> = BTreeMap::new();
    for v in verdicts {
        by_turn.entry(v.turn).or_default().push(v.clone());
    }
    by_turn
        .into_iter()
        .map(|(t, vs)| (t.to_string(), weighted_score(&vs)))
        .collect()
}

/// Every per-trial score of [`TrialScore`].
pub fn trial_score(verdicts: &[Verdict]) -> TrialScore {
    TrialScore {
        weighted: weighted_score(verdicts),
        pass_rate: pass_rate(verdicts),
        strict: strict_success(verdicts),
        partial: partial_score(verdicts),
        agency_0_10: agency_score_0_10(verdicts),
        red_line_violations: red_line_violations(verdicts),
        per_turn: per_turn_scores(verdicts),
        items_total: verdicts.len() as u32,
        items_passed: verdicts.iter().filter(|v| v.passed()).count() as u32,
        items_error: verdicts
            .iter()
            .filter(|v| v.status == bureau_core::verdict::VerdictStatus::Error)
            .count() as u32,
        bonus: None,
    }
}

/// [`trial_score`] with the task's checkpoint bonus (TheAgentCompany's
/// `bonus_for_completing_final` / `bonus_for_completing_any`) scored beside the default. The
/// final checkpoint is the task's last rubric item.
pub fn task_trial_score(task: &bureau_core::Task, verdicts: &[Verdict]) -> TrialScore {
    let mut score = trial_score(verdicts);
    if let Some(bonus) = task.checkpoint_bonus {
        let applied = match bonus {
            bureau_core::task::CheckpointBonus::Final => task
                .rubric
                .last()
                .is_some_and(|last| verdicts.iter().any(|v| v.id == last.id && v.passed())),
            bureau_core::task::CheckpointBonus::Any => verdicts.iter().any(Verdict::passed),
        };
        score.bonus = Some(bureau_core::result::BonusScore {
            strategy: bonus.as_str().to_string(),
            weighted: if applied { 1.0 } else { score.weighted },
            applied,
        });
    }
    score
}

/// Workspace-Bench's TCR@p: the fraction of tasks whose pass rate is at least p % (the
/// comparison allows for floating-point rounding, so 7/10 counts at p = 70). 0 for no tasks.
pub fn tcr_at(pass_rates: &[f64], p_percent: u32) -> f64 {
    if pass_rates.is_empty() {
        return 0.0;
    }
    let threshold = p_percent as f64 / 100.0;
    pass_rates
        .iter()
        .filter(|r| **r + 1e-9 >= threshold)
        .count() as f64
        / pass_rates.len() as f64
}

/// C(a, k) / C(b, k) for a ≤ b, as a product of ratios (never overflows).
fn binom_ratio(a: u64, b: u64, k: u64) -> f64 {
    if k > a {
        return 0.0;
    }
    (0..k).map(|i| (a - i) as f64 / (b - i) as f64).product()
}

/// Clamp `c` to `[0, n]` and `k` to `[1, n]`.
fn clamp_nck(n: u64, c: u64, k: u64) -> (u64, u64) {
    (c.min(n), k.clamp(1, n.max(1)))
}

/// The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
/// on Code"): the probability that at least one of k trials drawn without replacement from n
/// trials with c successes succeeds, 1 − C(n−c, k) / C(n, k).
///
/// `c` is clamped to `n` and `k` to `1..=n`; `n = 0` gives 0.
pub fn pass_at_k(n: u64, c: u64, k: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (c, k) = clamp_nck(n, c, k);
    (1.0 - binom_ratio(n - c, n, k)).clamp(0.0, 1.0)
}

/// tau-bench's pass^k (Yao et al. 2024; tau2-bench): the probability that all of k trials drawn
/// without replacement from n trials with c successes succeed, C(c, k) / C(n, k).
///
/// `c` is clamped to `n` and `k` to `1..=n`; `n = 0` gives 0.
pub fn pass_hat_k(n: u64, c: u64, k: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (c, k) = clamp_nck(n, c, k);
    binom_ratio(c, n, k).clamp(0.0, 1.0)
}

/// Mean and sample standard deviation (n − 1 in the denominator; 0 for fewer than two values).
/// `(0, 0)` for no values.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = sum(values.iter().copied()) / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = sum(values.iter().map(|v| (v - mean).powi(2))) / (n - 1.0);
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bureau_core::verdict::{RubricKind, TurnRef, VerdictStatus};
    use proptest::prelude::*;

    fn v(id: &str, turn: TurnRef, status: VerdictStatus, weight: f64, red_line: bool) -> Verdict {
        Verdict {
            id: id.into(),
            turn,
            status,
            weight,
            kind: RubricKind::Result,
            red_line,
            categories: vec![],
            detail: None,
            judge: None,
        }
    }

    use VerdictStatus::{Error, Failed, Passed};

    fn sample() -> Vec<Verdict> {
        vec![
            v("a", TurnRef::Turn(1), Passed, 2.0, false),
            v("b", TurnRef::Turn(1), Failed, 1.0, false),
            v("c", TurnRef::Turn(2), Passed, 3.0, false),
            v("d", TurnRef::Final, Error, 2.0, true),
        ]
    }

    #[test]
    fn weighted_counts_errors_as_not_passed() {
        // (2 + 3) / (2 + 1 + 3 + 2) = 5/8
        assert_eq!(weighted_score(&sample()), 0.625);
        assert_eq!(pass_rate(&sample()), 0.5);
        assert_eq!(weighted_score(&[]), 0.0);
        assert_eq!(pass_rate(&[]), 0.0);
    }

    #[test]
    fn strict_partial_agency_and_red_lines() {
        let s = sample();
        assert!(!strict_success(&s));
        assert_eq!(red_line_violations(&s), vec!["d"]);
        // TheAgentCompany example: 4 of 8 points, not complete: 0.5 · 0.5 = 0.25.
        let tac = vec![
            v("x", TurnRef::Final, Passed, 4.0, false),
            v("y", TurnRef::Final, Failed, 4.0, false),
        ];
        assert_eq!(partial_score(&tac), 0.25);
        assert_eq!(agency_score_0_10(&s), 6); // round(6.25)
        let all = vec![v("x", TurnRef::Final, Passed, 1.0, true)];
        assert!(strict_success(&all));
        assert_eq!(partial_score(&all), 1.0);
        assert_eq!(agency_score_0_10(&all), 10);
        assert!(!strict_success(&[]));
        // 0.45 → 4.5 → rounds half up to 5
        let half = vec![
            v("p", TurnRef::Final, Passed, 0.45, false),
            v("q", TurnRef::Final, Failed, 0.55, false),
        ];
        assert_eq!(agency_score_0_10(&half), 5);
    }

    #[test]
    fn per_turn_and_trial_score() {
        let t = per_turn_scores(&sample());
        assert_eq!(t.len(), 3);
        assert!((t["1"] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(t["2"], 1.0);
        assert_eq!(t["final"], 0.0);
        let s = trial_score(&sample());
        assert_eq!((s.items_total, s.items_passed, s.items_error), (4, 2, 1));
        assert_eq!(s.partial, 0.3125);
        assert_eq!(s.red_line_violations, vec!["d"]);
    }

    #[test]
    fn tcr_thresholds_are_inclusive() {
        let rates = [1.0, 0.7, 7.0 / 10.0, 0.5, 0.2];
        assert_eq!(tcr_at(&rates, 70), 0.6);
        assert_eq!(tcr_at(&rates, 100), 0.2);
        assert_eq!(tcr_at(&rates, 0), 1.0);
        assert_eq!(tcr_at(&rates, 71), 0.2);
        assert_eq!(tcr_at(&[], 50), 0.0);
        // 2/3 counts at 66 but not at 67
        assert_eq!(tcr_at(&[2.0 / 3.0], 66), 1.0);
        assert_eq!(tcr_at(&[2.0 / 3.0], 67), 0.0);
    }

    #[test]
    fn pass_at_k_and_pass_hat_k_by_hand() {
        // n=5, c=2, k=2: pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
        assert!((pass_at_k(5, 2, 2) - 0.7).abs() < 1e-12);
        assert!((pass_hat_k(5, 2, 2) - 0.1).abs() < 1e-12);
        // k = 1: both are c/n
        assert!((pass_at_k(4, 3, 1) - 0.75).abs() < 1e-12);
        assert!((pass_hat_k(4, 3, 1) - 0.75).abs() < 1e-12);
        // n − c < k: some success is certain
        assert_eq!(pass_at_k(3, 2, 2), 1.0);
        assert_eq!(pass_hat_k(3, 1, 2), 0.0);
        assert_eq!(pass_at_k(0, 0, 1), 0.0);
        // no overflow at large n
        let p = pass_at_k(1_000_000, 1, 1000);
        assert!((p - 0.001).abs() < 1e-9, "{p}");
        assert!(pass_hat_k(1_000_000, 999_999, 500) > 0.99);
    }

    #[test]
    fn mean_std_uses_the_sample_deviation() {
        let (m, s) = mean_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(m, 5.0);
        assert!((s - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(mean_std(&[3.0]), (3.0, 0.0));
        assert_eq!(mean_std(&[]), (0.0, 0.0));
    }

    proptest! {
        #[test]
        fn pass_k_bounds_and_monotone((n, c, k) in (1u64..60).prop_flat_map(|n| (Just(n), 0..=n, 1..=n))) {
            let at = pass_at_k(n, c, k);
            let hat = pass_hat_k(n, c, k);
            prop_assert!((0.0..=1.0).contains(&hat));
            prop_assert!(hat <= at + 1e-12);
            prop_assert!(at <= 1.0);
            if c < n {
                prop_assert!(pass_at_k(n, c + 1, k) + 1e-12 >= at);
                prop_assert!(pass_hat_k(n, c + 1, k) + 1e-12 >= hat);
            }
            // more draws never lower pass@k nor raise pass^k
            if k < n {
                prop_assert!(pass_at_k(n, c, k + 1) + 1e-12 >= at);
                prop_assert!(pass_hat_k(n, c, k + 1) <= hat + 1e-12);
            }
        }

        #[test]
        fn weighted_is_a_fraction(ws in proptest::collection::vec((0.01f64..100.0, 0u8..3, any::<bool>()), 0..30)) {
            let vs: Vec<Verdict> = ws.iter().enumerate().map(|(i, (w, s, r))| {
                let st = [Passed, Failed, Error][*s as usize];
                v(&i.to_string(), TurnRef::Final, st, *w, *r)
            }).collect();
            let w = weighted_score(&vs);
            prop_assert!((0.0..=1.0).contains(&w));
            prop_assert!((0.0..=1.0).contains(&partial_score(&vs)));
            prop_assert_eq!(strict_success(&vs), !vs.is_empty() && vs.iter().all(|v| v.passed()));
            prop_assert!(agency_score_0_10(&vs) <= 10);
        }
    }
}
