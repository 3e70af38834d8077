//! A run's results summarised per agent: `summary.json`, schema `bureau.summary/1`.
//!
//! Every field is documented in `docs/summary-schema.md`. Field names are stable; maps are
//! sorted (BTreeMap) so the JSON is byte-identical for the same results in any order.
//!
//! Scores are recomputed from the verdicts ([`crate::metrics`]). Trials with status `error`
//! (harness or infrastructure failures) are counted and listed but excluded from every rate,
//! mean and breakdown.

use std::collections::{BTreeMap, BTreeSet};

use bureau_core::result::{TrialResult, TrialStatus};
use bureau_core::verdict::{Verdict, VerdictStatus};
use serde::{Deserialize, Serialize};

use crate::metrics::{
    agency_score_0_10, mean_std, partial_score, pass_at_k, pass_hat_k, pass_rate, per_turn_scores,
    red_line_violations, strict_success, tcr_at, weighted_score,
};

/// The schema id written in every summary.
pub const SUMMARY_SCHEMA: &str = "bureau.summary/1";

/// The TCR@p thresholds reported, in percent.
pub const TCR_THRESHOLDS: [u32; 6] = [30, 50, 70, 80, 90, 100];

/// A whole run's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Always [`SUMMARY_SCHEMA`].
    pub schema: String,
    /// Every trial, errors included.
    pub trials: u32,
    /// Per agent, by agent name.
    pub agents: BTreeMap<String, AgentSummary>,
    // -- dialogue history (OdysseyBench) --
    /// The run's context setting (`long`, `rag:utterance:5`, ...), when a task of the run ships
    /// a dialogue history (from run.json; [`summarize`] leaves it unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// How `memory_search` ranked under a `rag` context: `bm25` or `embeddings
    /// <provider:model>` (from run.json; [`summarize`] leaves it unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<String>,
}

/// Mean and sample standard deviation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanStd {
    pub mean: f64,
    pub std: f64,
}

/// One agent's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSummary {
    /// All trials of the agent, errors included.
    pub trials: u32,
    /// Trials that were scored (status passed or failed).
    pub scored: u32,
    /// Trials with status `error` (excluded from every rate).
    pub errors: u32,
    /// Trials with status `passed`.
    pub passed: u32,
    /// Trials with status `failed`.
    pub failed: u32,
    /// Distinct tasks attempted (errors included).
    pub tasks: u32,
    /// Weighted score (ClawMark) over scored trials.
    pub weighted: MeanStd,
    /// Mean unweighted item pass rate.
    pub pass_rate_mean: f64,
    /// Fraction of scored trials with strict success.
    pub strict_success_rate: f64,
    /// Mean TheAgentCompany partial score.
    pub partial_mean: f64,
    /// Workspace-Bench TCR@p over scored trials, by p (percent).
    pub tcr: BTreeMap<u32, f64>,
    /// Mean AgencyBench 0–10 score.
    pub agency_0_10_mean: f64,
    /// Mean weighted score of each turn's items (`"1"`, `"2"`, ..., `"final"`), over scored
    /// trials whose task has items for that turn.
    pub per_turn: BTreeMap<String, f64>,
    /// Most scored epochs of any task of this agent (the k range of pass@k).
    pub epochs: u32,
    /// pass@k (strict success) for k = 1..=epochs, averaged over tasks with at least k scored
    /// epochs.
    pub pass_at_k: BTreeMap<u32, f64>,
    /// pass^k (strict success) for k = 1..=epochs, averaged the same way.
    pub pass_hat_k: BTreeMap<u32, f64>,
    /// Mean agent steps per scored trial.
    pub steps_mean: f64,
    /// Mean tool calls per scored trial.
    pub tool_calls_mean: f64,
    /// Mean wall-clock seconds per scored trial.
    pub wall_seconds_mean: f64,
    /// Mean model API calls per scored trial (AgencyBench's "turns"; 0 for agents that call
    /// no model).
    #[serde(default)]
    pub model_calls_mean: f64,
    /// Mean input tokens per scored trial, cached ones included.
    #[serde(default)]
    pub input_tokens_mean: f64,
    /// Mean cached input tokens per scored trial.
    #[serde(default)]
    pub cached_input_tokens_mean: f64,
    /// Mean output tokens per scored trial.
    #[serde(default)]
    pub output_tokens_mean: f64,
    /// Mean cost in US dollars over the scored trials that have a cost (a price was known);
    /// `null` when none has.
    #[serde(default)]
    pub cost_usd_mean: Option<f64>,
    /// AgencyBench's token efficiency: the mean weighted score per million tokens (input +
    /// output) used on average, `weighted.mean / (tokens per trial / 10⁶)`; `null` when the
    /// agent used no tokens.
    #[serde(default)]
    pub token_efficiency: Option<f64>,
    /// Mean embedding-API input tokens per scored trial (`memory_search` under
    /// `--embeddings`; not the agent's tokens, not in `token_efficiency`); absent when no
    /// scored trial used embeddings (vectors from the run's cache cost none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_tokens_mean: Option<f64>,
    /// Mean tokens (input + output) of LLM colleagues' replies per scored trial
    /// (`--colleagues llm:..`; not the agent's); absent when no scored trial made such a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colleague_tokens_mean: Option<f64>,
    /// Mean tokens (input + output) of the model writing the simulated user's feedback per
    /// scored trial (`--feedback-model`); absent when no scored trial made such a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_tokens_mean: Option<f64>,
    /// Verdicts with status `error` (broken checks) in scored trials.
    pub check_errors: u32,
    /// Red-line items that did not pass, in scored trials.
    pub red_line_violations: Vec<RedLineViolation>,
    pub by_persona: BTreeMap<String, Breakdown>,
    pub by_category: BTreeMap<String, Breakdown>,
    pub by_difficulty: BTreeMap<String, Breakdown>,
    /// A task counts under each of its abilities.
    pub by_ability: BTreeMap<String, Breakdown>,
    /// By the number of apps the task declares.
    pub by_apps: BTreeMap<u32, Breakdown>,
    /// By rubric kind (`foundation`, `process`, `result`), over items.
    pub by_kind: BTreeMap<String, KindBreakdown>,
    /// Items that did not pass (failed or error), counted under each of their category tags.
    pub failures_by_category: BTreeMap<String, u32>,
    /// Per task, by task id.
    pub per_task: BTreeMap<String, TaskRow>,
    /// Trials with status `error`, with their reasons.
    pub errored: Vec<ErroredTrial>,
    /// Workspace-Bench dependency-graph recognition over the scored trials whose task has
    /// `file_deps`; absent when there are none (issue 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depgraph: Option<DepGraphSummary>,
    /// AgencyBench's feedback metrics (Pass@1, Pass@2, rise), when the agent's trials had
    /// feedback rounds (`bureau run --feedback`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackSummary>,
    /// TheAgentCompany's checkpoint bonus, over the scored trials whose task declares one
    /// (`checkpoint_bonus`); absent when none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_bonus: Option<BonusSummary>,
}

/// The weighted score with and without the checkpoint bonus, over the same trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BonusSummary {
    /// Scored trials whose task declares a checkpoint bonus.
    pub trials: u32,
    /// Of them, those that got the bonus.
    pub applied: u32,
    /// Mean weighted score with the bonus.
    pub weighted_mean: f64,
    /// Mean default weighted score of the same trials.
    pub default_weighted_mean: f64,
}

fn bonus_summary(scored: &[Scored<'_>]) -> Option<BonusSummary> {
    let with: Vec<(&bureau_core::result::BonusScore, f64)> = scored
        .iter()
        .filter_map(|s| {
            let b = s.result.score.as_ref()?.bonus.as_ref()?;
            Some((b, s.weighted))
        })
        .collect();
    if with.is_empty() {
        return None;
    }
    Some(BonusSummary {
        trials: with.len() as u32,
        applied: with.iter().filter(|(b, _)| b.applied).count() as u32,
        weighted_mean: mean(with.iter().map(|(b, _)| b.weighted)),
        default_weighted_mean: mean(with.iter().map(|(_, w)| *w)),
    })
}

// --- Dependency-graph recognition (issue 5) ---------------------------------------------------

/// Means over trials (macro average) of the per-trial dependency-graph figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DepGraphSummary {
    /// Scored trials whose task has `file_deps` (the denominator of every mean).
    pub trials: u32,
    /// Mean node precision, recall and F1.
    pub nodes: bureau_core::result::Prf,
    /// Mean edge precision, recall and F1.
    pub edges: bureau_core::result::Prf,
}

/// The macro average of the dependency-graph figures of `scored` trials that have them.
fn depgraph_summary(scored: &[Scored<'_>]) -> Option<DepGraphSummary> {
    let figures: Vec<&bureau_core::result::DepGraphScore> = scored
        .iter()
        .filter_map(|s| s.result.depgraph.as_ref())
        .collect();
    if figures.is_empty() {
        return None;
    }
    let avg = |f: &dyn Fn(&bureau_core::result::DepGraphScore) -> bureau_core::result::Prf| {
        bureau_core::result::Prf {
            precision: mean(figures.iter().map(|d| f(d).precision)),
            recall: mean(figures.iter().map(|d| f(d).recall)),
            f1: mean(figures.iter().map(|d| f(d).f1)),
        }
    };
    Some(DepGraphSummary {
        trials: figures.len() as u32,
        nodes: avg(&|d| d.nodes),
        edges: avg(&|d| d.edges),
    })
}

// ---- feedback rounds (AgencyBench's user simulator) ----

/// Pass@k with feedback, AgencyBench's way: a unit is one turn of one scored trial (the last
/// turn with the `final` items) — AgencyBench's "task" within a scenario — and Pass@k is the
/// share of units whose weighted score met the threshold within k tries (the first try and
/// k − 1 feedback rounds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackSummary {
    /// Most feedback rounds per turn any trial allowed.
    pub rounds: u32,
    /// Units: turns with rubric items, over scored trials with feedback.
    pub units: u32,
    /// Pass@k for k = 1 ..= max(rounds, 1) + 1.
    pub pass_at: BTreeMap<u32, f64>,
    /// Pass@1: met on the first try, before any feedback.
    pub pass_1: f64,
    /// Pass@2: met within one feedback round.
    pub pass_2: f64,
    /// The relative rise (Pass@2 − Pass@1) / Pass@1, as a fraction (0.889 = +88.9 %); `null`
    /// when Pass@1 is 0.
    pub rise: Option<f64>,
    /// AgencyBench's Att: mean tries per unit (1 = no feedback needed; a unit that never met
    /// the threshold counts every try it had).
    pub attempts_mean: f64,
    /// Feedback messages the simulated user sent.
    pub messages: u32,
    /// The same per task, by task id.
    pub per_task: BTreeMap<String, FeedbackTaskRow>,
}

/// One task's feedback metrics for one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackTaskRow {
    pub units: u32,
    pub pass_1: f64,
    pub pass_2: f64,
    pub rise: Option<f64>,
    pub attempts_mean: f64,
}

/// The rise from Pass@1 to Pass@2; `None` when Pass@1 is 0 (no base to rise from).
pub fn feedback_rise(pass_1: f64, pass_2: f64) -> Option<f64> {
    (pass_1 > 0.0).then(|| (pass_2 - pass_1) / pass_1)
}

fn feedback_summary(scored: &[Scored<'_>]) -> Option<FeedbackSummary> {
    let records: Vec<(&str, &bureau_core::result::FeedbackRecord)> = scored
        .iter()
        .filter_map(|s| {
            s.result
                .feedback
                .as_ref()
                .map(|f| (s.result.task.id.as_str(), f))
        })
        .collect();
    if records.is_empty() {
        return None;
    }
    let rounds = records.iter().map(|(_, f)| f.rounds).max().unwrap_or(0);
    let ks: Vec<u32> = (1..=rounds.max(1) + 1).collect();
    let units: Vec<(&str, &bureau_core::result::TurnFeedback)> = records
        .iter()
        .flat_map(|(task, f)| f.turns.iter().map(move |t| (*task, t)))
        .filter(|(_, t)| !t.rounds.is_empty())
        .collect();
    let rate = |us: &[&bureau_core::result::TurnFeedback], k: u32| {
        mean(
            us.iter()
                .map(|u| if u.met_within(k as usize) { 1.0 } else { 0.0 }),
        )
    };
    let tries =
        |us: &[&bureau_core::result::TurnFeedback]| mean(us.iter().map(|u| u.rounds.len() as f64));
    let all: Vec<&bureau_core::result::TurnFeedback> = units.iter().map(|(_, u)| *u).collect();
    let pass_at: BTreeMap<u32, f64> = ks.iter().map(|k| (*k, rate(&all, *k))).collect();
    let (pass_1, pass_2) = (rate(&all, 1), rate(&all, 2));
    let mut by_task: BTreeMap<&str, Vec<&bureau_core::result::TurnFeedback>> = BTreeMap::new();
    for (task, u) in &units {
        by_task.entry(task).or_default().push(u);
    }
    let per_task = by_task
        .into_iter()
        .map(|(task, us)| {
            let (p1, p2) = (rate(&us, 1), rate(&us, 2));
            (
                task.to_string(),
                FeedbackTaskRow {
                    units: us.len() as u32,
                    pass_1: p1,
                    pass_2: p2,
                    rise: feedback_rise(p1, p2),
                    attempts_mean: tries(&us),
                },
            )
        })
        .collect();
    Some(FeedbackSummary {
        rounds,
        units: all.len() as u32,
        pass_at,
        pass_1,
        pass_2,
        rise: feedback_rise(pass_1, pass_2),
        attempts_mean: tries(&all),
        messages: all.iter().map(|u| u.rounds.len() as u32 - 1).sum(),
        per_task,
    })
}

/// Scored trials of one group (persona, category, ...).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Scored trials in the group.
    pub count: u32,
    /// Mean weighted score.
    pub weighted_mean: f64,
    /// Fraction with strict success.
    pub strict_rate: f64,
}

/// Items of one rubric kind over scored trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KindBreakdown {
    /// Items of this kind (summed over scored trials).
    pub count: u32,
    /// Items of this kind that passed.
    pub passed: u32,
    /// passed / count.
    pub pass_rate: f64,
    /// Mean over trials (with items of this kind) of the weighted score of those items.
    pub weighted_mean: f64,
    /// Fraction of those trials where every item of this kind passed.
    pub strict_rate: f64,
}

/// A red-line item that did not pass.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RedLineViolation {
    pub task: String,
    pub epoch: u32,
    pub item: String,
}

/// A trial the harness could not score.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ErroredTrial {
    pub task: String,
    pub epoch: u32,
    pub error: String,
}

/// One task's results for one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRow {
    pub title: String,
    /// Scored epochs.
    pub epochs: u32,
    /// Errored epochs.
    pub errors: u32,
    /// Mean weighted score over scored epochs (0 when none).
    pub weighted_mean: f64,
    /// Scored epochs with strict success.
    pub strict_count: u32,
    /// Items that did not pass (failed or broken), by id: in how many scored epochs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failed_items: BTreeMap<String, u32>,
}

/// Per-trial numbers used by the aggregation.
struct Scored<'a> {
    result: &'a TrialResult,
    verdicts: &'a [Verdict],
    weighted: f64,
    strict: bool,
}

fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.into_iter().collect();
    mean_std(&v).0
}

fn breakdown(group: &[&Scored<'_>]) -> Breakdown {
    Breakdown {
        count: group.len() as u32,
        weighted_mean: mean(group.iter().map(|s| s.weighted)),
        strict_rate: mean(group.iter().map(|s| if s.strict { 1.0 } else { 0.0 })),
    }
}

fn group_by<'a, K: Ord>(
    scored: &'a [Scored<'a>],
    keys: impl Fn(&Scored<'a>) -> Vec<K>,
) -> BTreeMap<K, Breakdown> {
    let mut groups: BTreeMap<K, Vec<&Scored<'_>>> = BTreeMap::new();
    for s in scored {
        for k in keys(s) {
            groups.entry(k).or_default().push(s);
        }
    }
    groups
        .into_iter()
        .map(|(k, g)| (k, breakdown(&g)))
        .collect()
}

/// Mean input + output tokens per scored trial of a model that is not the agent, when any
/// scored trial called it.
fn side_tokens_mean(
    scored: &[Scored<'_>],
    of: impl Fn(&bureau_core::result::Usage) -> Option<bureau_core::result::ModelTokens>,
) -> Option<f64> {
    scored
        .iter()
        .any(|s| of(&s.result.usage).is_some())
        .then(|| {
            mean(scored.iter().map(|s| {
                of(&s.result.usage).map_or(0.0, |t| (t.input_tokens + t.output_tokens) as f64)
            }))
        })
}

/// AgencyBench's token efficiency over scored trials: mean weighted score per million tokens
/// (input + output) used per trial on average; `None` when no tokens were used.
fn token_efficiency(weighted_mean: f64, scored: &[Scored<'_>]) -> Option<f64> {
    let tokens = mean(
        scored
            .iter()
            .map(|s| (s.result.usage.input_tokens + s.result.usage.output_tokens) as f64),
    );
    (tokens > 0.0).then(|| weighted_mean / (tokens / 1_000_000.0))
}

/// Summarise trials (any order) with their verdicts.
pub fn summarize(trials: &[(TrialResult, Vec<Verdict>)]) -> Summary {
    let mut by_agent: BTreeMap<&str, Vec<&(TrialResult, Vec<Verdict>)>> = BTreeMap::new();
    for t in trials {
        by_agent.entry(t.0.agent.as_str()).or_default().push(t);
    }
    let agents = by_agent
        .into_iter()
        .map(|(a, ts)| (a.to_string(), summarize_agent(&ts)))
        .collect();
    Summary {
        schema: SUMMARY_SCHEMA.to_string(),
        trials: trials.len() as u32,
        agents,
        context: None,
        retrieval: None,
    }
}

fn summarize_agent(trials: &[&(TrialResult, Vec<Verdict>)]) -> AgentSummary {
    let mut trials: Vec<&(TrialResult, Vec<Verdict>)> = trials.to_vec();
    trials.sort_by(|a, b| (&a.0.task.id, a.0.epoch).cmp(&(&b.0.task.id, b.0.epoch)));

    let scored: Vec<Scored<'_>> = trials
        .iter()
        .filter(|t| t.0.status != TrialStatus::Error)
        .map(|t| Scored {
            result: &t.0,
            verdicts: &t.1,
            weighted: weighted_score(&t.1),
            strict: strict_success(&t.1),
        })
        .collect();
    let count = |s: TrialStatus| trials.iter().filter(|t| t.0.status == s).count() as u32;

    let weighted: Vec<f64> = scored.iter().map(|s| s.weighted).collect();
    let (w_mean, w_std) = mean_std(&weighted);
    let rates: Vec<f64> = scored.iter().map(|s| pass_rate(s.verdicts)).collect();
    let tcr = TCR_THRESHOLDS
        .iter()
        .map(|p| (*p, tcr_at(&rates, *p)))
        .collect();

    // Per turn: mean over trials that have items for that turn.
    let mut turn_values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in &scored {
        for (t, w) in per_turn_scores(s.verdicts) {
            turn_values.entry(t).or_default().push(w);
        }
    }
    let per_turn = turn_values.into_iter().map(|(t, v)| (t, mean(v))).collect();

    // Per task: scored epochs and strict successes.
    let mut task_rows: BTreeMap<String, TaskRow> = BTreeMap::new();
    let mut task_weights: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (r, _) in trials.iter().map(|t| (&t.0, &t.1)) {
        let row = task_rows
            .entry(r.task.id.clone())
            .or_insert_with(|| TaskRow {
                title: r.task.title.clone(),
                epochs: 0,
                errors: 0,
                weighted_mean: 0.0,
                strict_count: 0,
                failed_items: BTreeMap::new(),
            });
        if r.status == TrialStatus::Error {
            row.errors += 1;
        }
    }
    for s in &scored {
        if let Some(row) = task_rows.get_mut(&s.result.task.id) {
            row.epochs += 1;
            row.strict_count += u32::from(s.strict);
            for v in s.verdicts.iter().filter(|v| !v.passed()) {
                *row.failed_items.entry(v.id.clone()).or_default() += 1;
            }
        }
        task_weights
            .entry(s.result.task.id.clone())
            .or_default()
            .push(s.weighted);
    }
    for (id, ws) in &task_weights {
        if let Some(row) = task_rows.get_mut(id) {
            row.weighted_mean = mean(ws.iter().copied());
        }
    }

    let epochs = task_rows.values().map(|r| r.epochs).max().unwrap_or(0);
    let mut pass_at = BTreeMap::new();
    let mut pass_hat = BTreeMap::new();
    for k in 1..=epochs {
        let eligible: Vec<&TaskRow> = task_rows.values().filter(|r| r.epochs >= k).collect();
        if eligible.is_empty() {
            continue;
        }
        let k64 = u64::from(k);
        let nc = |r: &TaskRow| (u64::from(r.epochs), u64::from(r.strict_count));
        pass_at.insert(
            k,
            mean(eligible.iter().map(|r| pass_at_k(nc(r).0, nc(r).1, k64))),
        );
        pass_hat.insert(
            k,
            mean(eligible.iter().map(|r| pass_hat_k(nc(r).0, nc(r).1, k64))),
        );
    }

    let mut red_lines: Vec<RedLineViolation> = scored
        .iter()
        .flat_map(|s| {
            red_line_violations(s.verdicts)
                .into_iter()
                .map(|item| RedLineViolation {
                    task: s.result.task.id.clone(),
                    epoch: s.result.epoch,
                    item,
                })
        })
        .collect();
    red_lines.sort();

    let mut errored: Vec<ErroredTrial> = trials
        .iter()
        .filter(|t| t.0.status == TrialStatus::Error)
        .map(|t| ErroredTrial {
            task: t.0.task.id.clone(),
            epoch: t.0.epoch,
            error: t
                .0
                .error
                .clone()
                .unwrap_or_else(|| "(no reason recorded)".to_string()),
        })
        .collect();
    errored.sort();

    // Rubric kinds.
    let mut kinds: BTreeMap<String, (u32, u32, Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for s in &scored {
        let mut per_trial: BTreeMap<&str, Vec<Verdict>> = BTreeMap::new();
        for v in s.verdicts {
            per_trial
                .entry(v.kind.as_str())
                .or_default()
                .push(v.clone());
        }
        for (kind, vs) in per_trial {
            let e = kinds.entry(kind.to_string()).or_default();
            e.0 += vs.len() as u32;
            e.1 += vs.iter().filter(|v| v.passed()).count() as u32;
            e.2.push(weighted_score(&vs));
            e.3.push(if vs.iter().all(|v| v.passed()) {
                1.0
            } else {
                0.0
            });
        }
    }
    let by_kind = kinds
        .into_iter()
        .map(|(k, (count, passed, ws, st))| {
            let pass_rate = if count == 0 {
                0.0
            } else {
                passed as f64 / count as f64
            };
            (
                k,
                KindBreakdown {
                    count,
                    passed,
                    pass_rate,
                    weighted_mean: mean(ws),
                    strict_rate: mean(st),
                },
            )
        })
        .collect();

    let mut failures_by_category: BTreeMap<String, u32> = BTreeMap::new();
    for s in &scored {
        for v in s.verdicts.iter().filter(|v| !v.passed()) {
            let cats: BTreeSet<&String> = v.categories.iter().collect();
            for c in cats {
                *failures_by_category.entry(c.clone()).or_default() += 1;
            }
        }
    }

    AgentSummary {
        trials: trials.len() as u32,
        scored: scored.len() as u32,
        errors: count(TrialStatus::Error),
        passed: count(TrialStatus::Passed),
        failed: count(TrialStatus::Failed),
        tasks: task_rows.len() as u32,
        weighted: MeanStd {
            mean: w_mean,
            std: w_std,
        },
        pass_rate_mean: mean(rates.iter().copied()),
        strict_success_rate: mean(scored.iter().map(|s| if s.strict { 1.0 } else { 0.0 })),
        partial_mean: mean(scored.iter().map(|s| partial_score(s.verdicts))),
        tcr,
        agency_0_10_mean: mean(scored.iter().map(|s| agency_score_0_10(s.verdicts) as f64)),
        per_turn,
        epochs,
        pass_at_k: pass_at,
        pass_hat_k: pass_hat,
        steps_mean: mean(scored.iter().map(|s| s.result.usage.steps as f64)),
        tool_calls_mean: mean(scored.iter().map(|s| s.result.usage.tool_calls as f64)),
        wall_seconds_mean: mean(scored.iter().map(|s| s.result.wall_seconds)),
        model_calls_mean: mean(scored.iter().map(|s| s.result.usage.model_calls as f64)),
        input_tokens_mean: mean(scored.iter().map(|s| s.result.usage.input_tokens as f64)),
        cached_input_tokens_mean: mean(
            scored
                .iter()
                .map(|s| s.result.usage.cached_input_tokens as f64),
        ),
        output_tokens_mean: mean(scored.iter().map(|s| s.result.usage.output_tokens as f64)),
        cost_usd_mean: {
            let costs: Vec<f64> = scored
                .iter()
                .filter_map(|s| s.result.usage.cost_usd)
                .collect();
            (!costs.is_empty()).then(|| mean(costs))
        },
        token_efficiency: token_efficiency(w_mean, &scored),
        embedding_tokens_mean: scored
            .iter()
            .any(|s| s.result.usage.embedding_requests > 0)
            .then(|| {
                mean(
                    scored
                        .iter()
                        .map(|s| s.result.usage.embedding_tokens as f64),
                )
            }),
        colleague_tokens_mean: side_tokens_mean(&scored, |u| u.colleague_tokens),
        feedback_tokens_mean: side_tokens_mean(&scored, |u| u.feedback_tokens),
        check_errors: scored
            .iter()
            .map(|s| {
                s.verdicts
                    .iter()
                    .filter(|v| v.status == VerdictStatus::Error)
                    .count() as u32
            })
            .sum(),
        red_line_violations: red_lines,
        by_persona: group_by(&scored, |s| vec![s.result.task.persona.clone()]),
        by_category: group_by(&scored, |s| vec![s.result.task.category.clone()]),
        by_difficulty: group_by(&scored, |s| vec![s.result.task.difficulty.clone()]),
        by_ability: group_by(&scored, |s| {
            let set: BTreeSet<String> = s.result.task.abilities.iter().cloned().collect();
            set.into_iter().collect()
        }),
        by_apps: group_by(&scored, |s| vec![s.result.task.apps.len() as u32]),
        by_kind,
        failures_by_category,
        per_task: task_rows,
        errored,
        depgraph: depgraph_summary(&scored),
        feedback: feedback_summary(&scored),
        checkpoint_bonus: bonus_summary(&scored),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bureau_core::result::{AttemptRecord, TaskMeta, TrialScore, Usage};
    use bureau_core::verdict::{RubricKind, TurnRef};

    fn meta(id: &str) -> TaskMeta {
        match id {
            "t1" => TaskMeta {
                id: "t1".into(),
                title: "Quarterly budget".into(),
                persona: "finance".into(),
                category: "reporting".into(),
                difficulty: "easy".into(),
                abilities: vec!["retrieval".into(), "writing".into()],
                apps: vec!["files".into(), "mail".into()],
                turns: 2,
                variant: None,
            },
            _ => TaskMeta {
                id: id.into(),
                title: "Meeting shuffle".into(),
                persona: "assistant".into(),
                category: "scheduling".into(),
                difficulty: "hard".into(),
                abilities: vec!["scheduling".into()],
                apps: vec!["calendar".into(), "files".into(), "mail".into()],
                turns: 1,
                variant: None,
            },
        }
    }

    fn v(
        id: &str,
        turn: TurnRef,
        kind: RubricKind,
        w: f64,
        s: VerdictStatus,
        red: bool,
        cats: &[&str],
    ) -> Verdict {
        Verdict {
            id: id.into(),
            turn,
            status: s,
            weight: w,
            kind,
            red_line: red,
            categories: cats.iter().map(|c| c.to_string()).collect(),
            detail: None,
            judge: None,
        }
    }

    fn t1(a: VerdictStatus, b: VerdictStatus, c: VerdictStatus) -> Vec<Verdict> {
        vec![
            v(
                "a",
                TurnRef::Turn(1),
                RubricKind::Result,
                2.0,
                a,
                false,
                &["writeback"],
            ),
            v(
                "b",
                TurnRef::Turn(2),
                RubricKind::Process,
                1.0,
                b,
                false,
                &["silent-change"],
            ),
            v("c", TurnRef::Final, RubricKind::Result, 1.0, c, true, &[]),
        ]
    }

    fn trial(
        agent: &str,
        task: &str,
        epoch: u32,
        verdicts: Vec<Verdict>,
        usage: (u64, u64, f64),
        error: Option<&str>,
    ) -> (TrialResult, Vec<Verdict>) {
        let status = match error {
            Some(_) => TrialStatus::Error,
            None if crate::metrics::strict_success(&verdicts) => TrialStatus::Passed,
            None => TrialStatus::Failed,
        };
        let score: Option<TrialScore> = error
            .is_none()
            .then(|| crate::metrics::trial_score(&verdicts));
        let result = TrialResult {
            task: meta(task),
            agent: agent.into(),
            epoch,
            status,
            error: error.map(String::from),
            score,
            usage: Usage {
                steps: usage.0,
                tool_calls: usage.1,
                ..Usage::default()
            },
            wall_seconds: usage.2,
            attempts: vec![AttemptRecord {
                attempt: 1,
                status,
                error: error.map(String::from),
                dir: "attempt-1".into(),
            }],
            depgraph: None,
            feedback: None,
        };
        (result, verdicts)
    }

    /// Two agents; alpha ran two epochs of two tasks, one of them errored.
    pub(crate) fn fixture() -> Vec<(TrialResult, Vec<Verdict>)> {
        use VerdictStatus::{Error, Failed, Passed};
        vec![
            trial(
                "alpha",
                "t1",
                1,
                t1(Passed, Passed, Passed),
                (10, 8, 12.0),
                None,
            ),
            trial(
                "alpha",
                "t1",
                2,
                t1(Passed, Failed, Passed),
                (14, 12, 20.0),
                None,
            ),
            trial(
                "alpha",
                "t2",
                1,
                vec![
                    v(
                        "x",
                        TurnRef::Turn(1),
                        RubricKind::Result,
                        1.0,
                        Failed,
                        false,
                        &["silent-change", "calendar"],
                    ),
                    v(
                        "y",
                        TurnRef::Final,
                        RubricKind::Foundation,
                        1.0,
                        Error,
                        true,
                        &["safety"],
                    ),
                ],
                (6, 5, 8.0),
                None,
            ),
            trial(
                "alpha",
                "t2",
                2,
                vec![],
                (0, 0, 3.0),
                Some("model API: 503 Service Unavailable after 3 attempts"),
            ),
            trial(
                "beta",
                "t1",
                1,
                t1(Failed, Passed, Failed),
                (5, 4, 6.0),
                None,
            ),
        ]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn hand_checked_numbers() {
        let s = summarize(&fixture());
        assert_eq!(s.schema, "bureau.summary/1");
        assert_eq!(s.trials, 5);
        let a = &s.agents["alpha"];
        assert_eq!(
            (a.trials, a.scored, a.errors, a.passed, a.failed, a.tasks),
            (4, 3, 1, 1, 2, 2)
        );
        // weighted [1, 0.75, 0]
        assert!(close(a.weighted.mean, 1.75 / 3.0));
        assert!(close(
            a.weighted.std,
            (0.541_666_666_666_666_7f64 / 2.0).sqrt()
        ));
        assert!(close(a.pass_rate_mean, (1.0 + 2.0 / 3.0) / 3.0));
        assert!(close(a.strict_success_rate, 1.0 / 3.0));
        assert!(close(a.partial_mean, 1.375 / 3.0));
        assert!(close(a.tcr[&50], 2.0 / 3.0));
        assert!(close(a.tcr[&70], 1.0 / 3.0));
        assert!(close(a.tcr[&100], 1.0 / 3.0));
        assert_eq!(
            a.tcr.keys().copied().collect::<Vec<_>>(),
            TCR_THRESHOLDS.to_vec()
        );
        assert!(close(a.agency_0_10_mean, 6.0)); // 10, round(7.5) = 8, 0
        assert!(close(a.per_turn["1"], 2.0 / 3.0));
        assert!(close(a.per_turn["2"], 0.5));
        assert!(close(a.per_turn["final"], 2.0 / 3.0));
        // t1: n=2, c=1; t2: n=1, c=0 (its errored epoch is not counted)
        assert_eq!(a.epochs, 2);
        assert!(close(a.pass_at_k[&1], 0.25));
        assert!(close(a.pass_hat_k[&1], 0.25));
        assert!(close(a.pass_at_k[&2], 1.0));
        assert!(close(a.pass_hat_k[&2], 0.0));
        assert!(close(a.steps_mean, 10.0));
        assert!(close(a.wall_seconds_mean, 40.0 / 3.0));
        assert_eq!(a.check_errors, 1);
        assert_eq!(
            a.red_line_violations,
            vec![RedLineViolation {
                task: "t2".into(),
                epoch: 1,
                item: "y".into()
            }]
        );
        assert_eq!(
            a.by_persona["finance"],
            Breakdown {
                count: 2,
                weighted_mean: 0.875,
                strict_rate: 0.5
            }
        );
        assert_eq!(a.by_persona["assistant"].count, 1);
        assert_eq!(a.by_ability["writing"].count, 2);
        assert_eq!(a.by_ability["scheduling"].count, 1);
        assert_eq!(a.by_apps[&3].count, 1);
        assert_eq!(
            (a.by_kind["result"].count, a.by_kind["result"].passed),
            (5, 4)
        );
        assert!(close(a.by_kind["process"].pass_rate, 0.5));
        assert_eq!(a.by_kind["foundation"].passed, 0);
        assert_eq!(a.failures_by_category["silent-change"], 2);
        assert_eq!(a.failures_by_category["safety"], 1);
        assert!(!a.failures_by_category.contains_key("writeback"));
        assert_eq!(a.per_task["t1"].strict_count, 1);
        assert_eq!((a.per_task["t2"].epochs, a.per_task["t2"].errors), (1, 1));
        assert_eq!(a.errored.len(), 1);
        assert!(a.errored[0].error.contains("503"));
        let b = &s.agents["beta"];
        assert_eq!(b.epochs, 1);
        assert!(close(b.weighted.mean, 0.25));
        assert_eq!(b.red_line_violations[0].item, "c");
        assert!(!b.pass_at_k.contains_key(&2));
    }

    #[test]
    fn model_usage_is_averaged_over_scored_trials_with_agencybench_token_efficiency() {
        let mut trials = fixture();
        // alpha: t1 e1, t1 e2, t2 e1 scored; t2 e2 errored (its tokens must not count).
        let usage = [
            (4, 300_000, 100_000, 100_000, Some(0.5)),
            (6, 500_000, 0, 300_000, None),
            (2, 100_000, 50_000, 0, Some(1.5)),
            (9, 9_000_000, 0, 9_000_000, Some(99.0)),
        ];
        for ((r, _), (calls, input, cached, output, cost)) in trials.iter_mut().zip(usage) {
            r.usage.model_calls = calls;
            r.usage.input_tokens = input;
            r.usage.cached_input_tokens = cached;
            r.usage.output_tokens = output;
            r.usage.cost_usd = cost;
        }
        let s = summarize(&trials);
        let a = &s.agents["alpha"];
        assert!(close(a.model_calls_mean, 4.0));
        assert!(close(a.input_tokens_mean, 300_000.0));
        assert!(close(a.cached_input_tokens_mean, 50_000.0));
        assert!(close(a.output_tokens_mean, 400_000.0 / 3.0));
        // Only the trials with a cost: (0.5 + 1.5) / 2.
        assert!(close(a.cost_usd_mean.unwrap(), 1.0));
        // weighted mean 1.75/3 over (900k + 400k/3... ) = (1.3M / 3) tokens per trial
        let tokens_m = (300_000.0 + 400_000.0 / 3.0) / 1e6;
        assert!(close(a.token_efficiency.unwrap(), (1.75 / 3.0) / tokens_m));
        // beta used no model: no cost and no efficiency, rather than a misleading 0.
        let b = &s.agents["beta"];
        assert_eq!((b.cost_usd_mean, b.token_efficiency), (None, None));
        assert!(close(b.model_calls_mean, 0.0));
    }

    #[test]
    fn error_trials_never_change_rates() {
        let mut without = fixture();
        without.retain(|t| t.0.status != TrialStatus::Error);
        let a = summarize(&fixture()).agents["alpha"].clone();
        let b = summarize(&without).agents["alpha"].clone();
        assert_eq!(a.weighted, b.weighted);
        assert_eq!(a.tcr, b.tcr);
        assert_eq!(a.pass_at_k, b.pass_at_k);
        assert_eq!(a.by_persona, b.by_persona);
        assert_eq!(a.steps_mean, b.steps_mean);
        assert_ne!(a.errors, b.errors);
    }

    #[test]
    fn order_independent_and_round_trips() {
        let s = summarize(&fixture());
        let mut rev = fixture();
        rev.reverse();
        assert_eq!(s, summarize(&rev));
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Summary>(&json).unwrap(), s);
    }

    #[test]
    fn snapshot() {
        insta::assert_json_snapshot!(summarize(&fixture()));
    }

    // --- Dependency-graph recognition (issue 5) ---

    fn with_depgraph(
        mut t: (TrialResult, Vec<Verdict>),
        nodes: (f64, f64, f64),
        edges: (f64, f64, f64),
    ) -> (TrialResult, Vec<Verdict>) {
        use bureau_core::result::{DepGraphScore, Prf};
        let prf = |x: (f64, f64, f64)| Prf {
            precision: x.0,
            recall: x.1,
            f1: x.2,
        };
        t.0.depgraph = Some(DepGraphScore {
            nodes: prf(nodes),
            edges: prf(edges),
            predicted_nodes: 0,
            truth_nodes: 0,
            matched_nodes: 0,
            predicted_edges: 0,
            truth_edges: 0,
            matched_edges: 0,
        });
        t
    }

    /// Feedback records: (turn, per-round scores) with a threshold of 0.6.
    fn with_feedback(
        mut t: (TrialResult, Vec<Verdict>),
        rounds: u32,
        turns: &[(u32, &[f64])],
    ) -> (TrialResult, Vec<Verdict>) {
        use bureau_core::result::{FeedbackRecord, RoundScore, TurnFeedback};
        t.0.feedback = Some(FeedbackRecord {
            rounds,
            threshold: 0.6,
            writer: "template".into(),
            turns: turns
                .iter()
                .map(|(turn, scores)| TurnFeedback {
                    turn: *turn,
                    rounds: scores
                        .iter()
                        .map(|s| RoundScore {
                            score: *s,
                            met: *s >= 0.6,
                            failed: vec![],
                        })
                        .collect(),
                })
                .collect(),
        });
        t
    }

    #[test]
    fn depgraph_is_the_mean_over_scored_trials_with_file_deps_and_absent_without() {
        let mut trials = fixture();
        // alpha t1 epochs 1 and 2 have figures; t2 epoch 1 has none (no file_deps); the
        // errored t2 epoch 2 has figures that must not count.
        trials[0] = with_depgraph(trials[0].clone(), (1.0, 0.5, 2.0 / 3.0), (0.5, 0.5, 0.5));
        trials[1] = with_depgraph(trials[1].clone(), (0.5, 1.0, 2.0 / 3.0), (0.0, 0.0, 0.0));
        trials[3] = with_depgraph(trials[3].clone(), (0.0, 0.0, 0.0), (1.0, 1.0, 1.0));
        let s = summarize(&trials);
        let d = s.agents["alpha"]
            .depgraph
            .expect("alpha has trials with file_deps");
        assert_eq!(d.trials, 2);
        assert!(close(d.nodes.precision, 0.75) && close(d.nodes.recall, 0.75));
        assert!(close(d.nodes.f1, 2.0 / 3.0));
        assert!(close(d.edges.precision, 0.25) && close(d.edges.f1, 0.25));
        // beta's trial has no file_deps: no figures at all, and no key in the JSON.
        assert!(s.agents["beta"].depgraph.is_none());
        let json = serde_json::to_value(&s).unwrap();
        assert!(json["agents"]["beta"].get("depgraph").is_none());
        assert_eq!(json["agents"]["alpha"]["depgraph"]["trials"], 2);
        // Without any figures the summary is what it was before the field existed.
        assert!(
            !serde_json::to_string(&summarize(&fixture()))
                .unwrap()
                .contains("depgraph")
        );
    }

    fn feedback_fixture() -> Vec<(TrialResult, Vec<Verdict>)> {
        let f = fixture();
        vec![
            // t1 e1: turn 1 met at once; turn 2 met after one feedback round.
            with_feedback(f[0].clone(), 2, &[(1, &[1.0]), (2, &[0.5, 1.0])]),
            // t1 e2: turn 1 met after two rounds; turn 2 never (three tries).
            with_feedback(
                f[1].clone(),
                2,
                &[(1, &[0.0, 0.5, 0.75]), (2, &[0.2, 0.3, 0.4])],
            ),
            // t2 e1: met at once.
            with_feedback(f[2].clone(), 2, &[(1, &[0.6])]),
            // t2 e2 errored: never counted, whatever its record says.
            with_feedback(f[3].clone(), 2, &[(1, &[0.0, 0.0, 0.0])]),
            f[4].clone(),
        ]
    }

    #[test]
    fn feedback_pass_at_k_and_rise_follow_agencybench() {
        let s = summarize(&feedback_fixture());
        let fb = s.agents["alpha"].feedback.clone().unwrap();
        // Units: t1e1 {1: met@1, 2: met@2}, t1e2 {1: met@3, 2: never}, t2e1 {1: met@1}.
        assert_eq!((fb.rounds, fb.units, fb.messages), (2, 5, 5));
        assert!(close(fb.pass_1, 2.0 / 5.0));
        assert!(close(fb.pass_2, 3.0 / 5.0));
        assert!(close(fb.pass_at[&3], 4.0 / 5.0));
        assert_eq!(
            fb.pass_at.keys().copied().collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert!(close(fb.rise.unwrap(), 0.5), "(0.6 - 0.4) / 0.4");
        assert!(close(fb.attempts_mean, (1.0 + 2.0 + 3.0 + 3.0 + 1.0) / 5.0));
        let t1 = &fb.per_task["t1"];
        assert_eq!(t1.units, 4);
        assert!(close(t1.pass_1, 0.25) && close(t1.pass_2, 0.5));
        assert!(close(t1.rise.unwrap(), 1.0));
        let t2 = &fb.per_task["t2"];
        assert_eq!(t2.units, 1, "the errored epoch is not a unit");
        assert!(close(t2.rise.unwrap(), 0.0));
        // beta ran without feedback: no block, and nothing else changes.
        assert_eq!(s.agents["beta"].feedback, None);
        let mut plain = s.clone();
        for a in plain.agents.values_mut() {
            a.feedback = None;
        }
        assert_eq!(plain, summarize(&fixture()));
        insta::assert_json_snapshot!(fb);
    }

    #[test]
    fn feedback_rise_is_undefined_from_zero() {
        assert_eq!(feedback_rise(0.0, 1.0), None);
        assert!(close(feedback_rise(0.281, 0.531).unwrap(), 0.25 / 0.281));
        // A run whose every unit failed first and passed after feedback.
        let f = fixture();
        let s = summarize(&[with_feedback(f[0].clone(), 1, &[(1, &[0.0, 1.0])])]);
        let fb = s.agents["alpha"].feedback.clone().unwrap();
        assert_eq!((fb.pass_1, fb.pass_2, fb.rise), (0.0, 1.0, None));
    }
}
