//! Bureau's reports, rendered from a run's [`Summary`] (and, for details, its trials).
//!
//! * [`render_markdown`] — `report.md`: leaderboard, per-turn scores, breakdowns, red-line
//!   violations, failures by category, per-task results, broken checks and errored trials;
//! * [`render_table`] — the plain-text table printed at the end of `bureau run`.
//!
//! Both are deterministic: the same summary gives the same bytes. Scores are shown as
//! percentages with one decimal; rows are sorted by weighted score (best first), then name.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use bureau_check::summary::{AgentSummary, Breakdown, Summary};
use bureau_core::result::{TrialResult, TrialStatus};
use bureau_core::verdict::{Verdict, VerdictStatus};

/// A fraction as a percentage with one decimal (`0.5833` → `58.3`).
fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

/// A token count, compact: `950`, `12.3k`, `4.56M`.
fn tokens(n: f64) -> String {
    if n >= 1_000_000.0 {
        format!("{:.2}M", n / 1_000_000.0)
    } else if n >= 1_000.0 {
        format!("{:.1}k", n / 1_000.0)
    } else {
        format!("{n:.0}")
    }
}

/// Agents sorted by weighted mean (best first), then by name.
fn ranked(summary: &Summary) -> Vec<(&String, &AgentSummary)> {
    let mut v: Vec<(&String, &AgentSummary)> = summary.agents.iter().collect();
    v.sort_by(|a, b| {
        b.1.weighted
            .mean
            .partial_cmp(&a.1.weighted.mean)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(b.0))
    });
    v
}

/// The largest epoch count of any agent (pass@k columns are shown when it is above 1).
fn max_epochs(summary: &Summary) -> u32 {
    summary.agents.values().map(|a| a.epochs).max().unwrap_or(0)
}

/// Turn keys in turn order: 1, 2, ..., 10, ..., final.
fn turn_order(keys: &BTreeSet<&String>) -> Vec<String> {
    let mut v: Vec<&String> = keys.iter().copied().collect();
    v.sort_by_key(|k| match k.parse::<u32>() {
        Ok(n) => (0, n),
        Err(_) => (1, 0),
    });
    v.into_iter().cloned().collect()
}

/// Text safe inside a Markdown table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// Text for a list item: one line.
fn inline(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `n thing` or `n things`.
fn plural(n: u32, thing: &str) -> String {
    if n == 1 {
        format!("{n} {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// A Markdown table; the first `text_cols` columns are left-aligned, the others (numbers)
/// right-aligned.
fn table(out: &mut String, header: &[&str], text_cols: usize, rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let seps: Vec<&str> = (0..header.len())
        .map(|i| if i < text_cols { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", seps.join(" | "));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
}

// ---- feedback rounds (AgencyBench's user simulator) ----

/// `## Feedback rounds`: Pass@1, Pass@2 and the rise, when some agent ran with feedback.
fn feedback_section(out: &mut String, agents: &[(&String, &AgentSummary)]) {
    let with: Vec<(&String, &bureau_check::summary::FeedbackSummary)> = agents
        .iter()
        .filter_map(|(name, a)| a.feedback.as_ref().map(|f| (*name, f)))
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str("## Feedback rounds

A simulated user answered each turn whose weighted score fell below the threshold with the items still failed, and the agent went on (AgencyBench). A unit is one turn of one scored trial. Pass@k: share of units meeting the threshold within k tries (Pass@1 before any feedback). Rise: (Pass@2 − Pass@1) / Pass@1. Tries: mean tries per unit (AgencyBench's Att).\n\n");
    let rise = |r: Option<f64>| r.map_or_else(|| "—".to_string(), |r| format!("{:+.1}", r * 100.0));
    let rows: Vec<Vec<String>> = with
        .iter()
        .map(|(name, f)| {
            vec![
                cell(name),
                f.rounds.to_string(),
                f.units.to_string(),
                pct(f.pass_1),
                pct(f.pass_2),
                rise(f.rise),
                format!("{:.2}", f.attempts_mean),
                f.messages.to_string(),
            ]
        })
        .collect();
    table(
        out,
        &[
            "Agent", "Rounds", "Units", "Pass@1", "Pass@2", "Rise %", "Tries", "Messages",
        ],
        1,
        &rows,
    );
    let rows: Vec<Vec<String>> = with
        .iter()
        .flat_map(|(name, f)| {
            f.per_task.iter().map(move |(task, t)| {
                vec![
                    cell(name),
                    cell(task),
                    t.units.to_string(),
                    pct(t.pass_1),
                    pct(t.pass_2),
                    rise(t.rise),
                    format!("{:.2}", t.attempts_mean),
                ]
            })
        })
        .collect();
    table(
        out,
        &[
            "Agent", "Task", "Units", "Pass@1", "Pass@2", "Rise %", "Tries",
        ],
        2,
        &rows,
    );
}

/// "Checkpoint bonus": TheAgentCompany's scoring strategies beside the default, over the
/// scored trials whose task declares `checkpoint_bonus`; nothing when none does.
fn bonus_section(out: &mut String, agents: &[(&String, &AgentSummary)]) {
    if agents.iter().all(|(_, a)| a.checkpoint_bonus.is_none()) {
        return;
    }
    out.push_str("### Checkpoint bonus

TheAgentCompany's scoring strategies, for the tasks that declare one (`checkpoint_bonus = \"final\"`: full marks when the task's last item passes; `\"any\"`: when any item passes), beside the default weighted score of the same trials.\n\n");
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|(name, a)| match &a.checkpoint_bonus {
            Some(b) => vec![
                cell(name),
                b.trials.to_string(),
                b.applied.to_string(),
                pct(b.weighted_mean),
                pct(b.default_weighted_mean),
            ],
            None => vec![cell(name), "0".into(), "0".into(), "—".into(), "—".into()],
        })
        .collect();
    table(
        out,
        &["Agent", "Trials", "Bonus applied", "With bonus", "Default"],
        1,
        &rows,
    );
}

/// `report.md` for a run.
/// "Dependency-graph recognition": node and edge precision / recall / F1 per agent, over the
/// scored trials whose task has `file_deps`; nothing when no agent has such trials.
fn depgraph_section(out: &mut String, agents: &[(&String, &AgentSummary)]) {
    if agents.iter().all(|(_, a)| a.depgraph.is_none()) {
        return;
    }
    out.push_str("### Dependency-graph recognition

Workspace-Bench's node and edge precision, recall and F1 of the file dependency graph derived from each trajectory (files read before a write → the written file) against the task's `file_deps`, averaged over the scored trials whose task has `file_deps` (see docs/outputs.md).\n\n");
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|(name, a)| match &a.depgraph {
            Some(d) => vec![
                cell(name),
                d.trials.to_string(),
                pct(d.nodes.precision),
                pct(d.nodes.recall),
                pct(d.nodes.f1),
                pct(d.edges.precision),
                pct(d.edges.recall),
                pct(d.edges.f1),
            ],
            None => {
                let mut r = vec![cell(name), "0".to_string()];
                r.extend(std::iter::repeat_n("—".to_string(), 6));
                r
            }
        })
        .collect();
    table(
        out,
        &[
            "Agent", "Trials", "Node P", "Node R", "Node F1", "Edge P", "Edge R", "Edge F1",
        ],
        1,
        &rows,
    );
}

pub fn render_markdown(summary: &Summary, trials: &[(TrialResult, Vec<Verdict>)]) -> String {
    let mut out = String::new();
    let agents = ranked(summary);
    let scored: u32 = summary.agents.values().map(|a| a.scored).sum();
    let errors: u32 = summary.agents.values().map(|a| a.errors).sum();
    let tasks: BTreeSet<&String> = summary
        .agents
        .values()
        .flat_map(|a| a.per_task.keys())
        .collect();
    let epochs = max_epochs(summary);

    let _ = writeln!(out, "# Bureau run report\n");
    let _ = writeln!(
        out,
        "{} of {} by {}: {} scored, {} (harness failures, excluded from every score).\n",
        plural(summary.trials, "trial"),
        plural(tasks.len() as u32, "task"),
        plural(summary.agents.len() as u32, "agent"),
        scored,
        plural(errors, "error")
    );
    // -- dialogue history (OdysseyBench) --
    if let Some(context) = &summary.context {
        let retrieval = summary
            .retrieval
            .as_ref()
            .map(|r| format!(", retrieval: {r}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "Context: {context}{retrieval} (how agents saw the dialogue history of tasks that ship one; see docs/history.md).\n"
        );
    }
    out.push_str("Scores are percentages. Weighted: Σ weight of passed items / Σ weight of all items (mean ± sample std over trials). Strict: every item passed and no red line violated. Partial: 0.5·weighted + 0.5·strict (TheAgentCompany). TCR@p: share of trials passing at least p % of their items (Workspace-Bench).");
    if epochs > 1 {
        let _ = write!(
            out,
            " pass@{epochs} / pass^{epochs}: chance that at least one / all of {epochs} epochs succeed strictly, averaged over tasks."
        );
    }
    out.push_str("\n\n## Leaderboard\n\n");
    let mut header = vec![
        "Agent", "Trials", "Weighted", "Strict", "Partial", "TCR@50", "TCR@80", "TCR@100", "0–10",
    ];
    let pass_at = format!("pass@{epochs}");
    let pass_hat = format!("pass^{epochs}");
    if epochs > 1 {
        header.push(&pass_at);
        header.push(&pass_hat);
    }
    header.extend(["Red lines", "Check errors", "Errors"]);
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|(name, a)| {
            let mut r = vec![
                cell(name),
                a.trials.to_string(),
                format!("{} ± {}", pct(a.weighted.mean), pct(a.weighted.std)),
                pct(a.strict_success_rate),
                pct(a.partial_mean),
                pct(a.tcr.get(&50).copied().unwrap_or(0.0)),
                pct(a.tcr.get(&80).copied().unwrap_or(0.0)),
                pct(a.tcr.get(&100).copied().unwrap_or(0.0)),
                format!("{:.1}", a.agency_0_10_mean),
            ];
            if a.scored == 0 {
                // No trial was scored: every rate is unknown, never 0.
                r[2..].iter_mut().for_each(|c| *c = "—".into());
            }
            if epochs > 1 && a.scored == 0 {
                r.extend(["—".to_string(), "—".to_string()]);
            } else if epochs > 1 {
                r.push(
                    a.pass_at_k
                        .get(&epochs)
                        .map(|v| pct(*v))
                        .unwrap_or_else(|| "—".into()),
                );
                r.push(
                    a.pass_hat_k
                        .get(&epochs)
                        .map(|v| pct(*v))
                        .unwrap_or_else(|| "—".into()),
                );
            }
            r.push(a.red_line_violations.len().to_string());
            r.push(a.check_errors.to_string());
            r.push(a.errors.to_string());
            r
        })
        .collect();
    table(&mut out, &header, 1, &rows);

    if epochs > 1 {
        out.push_str("### pass@k and pass^k\n\n");
        let ks: Vec<String> = (1..=epochs)
            .flat_map(|k| [format!("pass@{k}"), format!("pass^{k}")])
            .collect();
        let mut header = vec!["Agent"];
        header.extend(ks.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = agents
            .iter()
            .map(|(name, a)| {
                let mut r = vec![cell(name)];
                for k in 1..=epochs {
                    r.push(
                        a.pass_at_k
                            .get(&k)
                            .map(|v| pct(*v))
                            .unwrap_or_else(|| "—".into()),
                    );
                    r.push(
                        a.pass_hat_k
                            .get(&k)
                            .map(|v| pct(*v))
                            .unwrap_or_else(|| "—".into()),
                    );
                }
                r
            })
            .collect();
        table(&mut out, &header, 1, &rows);
    }

    out.push_str("### Effort and cost\n\nMeans per scored trial. Tokens are the model's own counts (input includes cached input); cost is computed from the prices in the agents file, \"—\" when no price was known. Weighted per M tokens: AgencyBench's token efficiency, the mean weighted score (in points) per million tokens (input + output) used per trial.\n\n");
    let rows: Vec<Vec<String>> = agents
        .iter()
        .map(|(name, a)| {
            vec![
                cell(name),
                format!("{:.1}", a.steps_mean),
                format!("{:.1}", a.tool_calls_mean),
                format!("{:.1}", a.model_calls_mean),
                tokens(a.input_tokens_mean),
                tokens(a.cached_input_tokens_mean),
                tokens(a.output_tokens_mean),
                a.cost_usd_mean
                    .map(|c| format!("${c:.4}"))
                    .unwrap_or_else(|| "—".into()),
                a.token_efficiency
                    .map(|e| format!("{:.2}", e * 100.0))
                    .unwrap_or_else(|| "—".into()),
                format!("{:.1}", a.wall_seconds_mean),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "Agent",
            "Steps",
            "Tool calls",
            "Model calls",
            "Input tokens",
            "Cached input",
            "Output tokens",
            "Cost",
            "Weighted per M tokens",
            "Wall seconds",
        ],
        1,
        &rows,
    );

    // --- Dependency-graph recognition (issue 5) ---
    depgraph_section(&mut out, &agents);
    feedback_section(&mut out, &agents);
    bonus_section(&mut out, &agents);

    // Per turn.
    let turn_keys: BTreeSet<&String> = summary
        .agents
        .values()
        .flat_map(|a| a.per_turn.keys())
        .collect();
    if !turn_keys.is_empty() {
        out.push_str("## Per turn\n\nWeighted score of each turn's items.\n\n");
        let turns = turn_order(&turn_keys);
        let labels: Vec<String> = turns
            .iter()
            .map(|t| {
                if t == "final" {
                    "Final".to_string()
                } else {
                    format!("Turn {t}")
                }
            })
            .collect();
        let mut header = vec!["Agent"];
        header.extend(labels.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = agents
            .iter()
            .map(|(name, a)| {
                let mut r = vec![cell(name)];
                r.extend(turns.iter().map(|t| {
                    a.per_turn
                        .get(t)
                        .map(|v| pct(*v))
                        .unwrap_or_else(|| "—".into())
                }));
                r
            })
            .collect();
        table(&mut out, &header, 1, &rows);
    }

    // Breakdowns.
    out.push_str("## Breakdowns\n\n");
    type Pick = fn(&AgentSummary) -> BTreeMap<String, Breakdown>;
    let dims: [(&str, Pick); 5] = [
        ("Persona", |a| a.by_persona.clone()),
        ("Category", |a| a.by_category.clone()),
        ("Difficulty", |a| a.by_difficulty.clone()),
        ("Ability", |a| a.by_ability.clone()),
        ("Apps", |a| {
            a.by_apps.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        }),
    ];
    for (dim, pick) in dims {
        let _ = writeln!(out, "### By {}\n", dim.to_lowercase());
        let mut rows = Vec::new();
        let mut groups: BTreeMap<String, Vec<(String, Breakdown)>> = BTreeMap::new();
        for (name, a) in &agents {
            for (g, b) in pick(a) {
                groups.entry(g).or_default().push(((*name).clone(), b));
            }
        }
        for (g, list) in groups {
            for (name, b) in list {
                rows.push(vec![
                    cell(&g),
                    cell(&name),
                    b.count.to_string(),
                    pct(b.weighted_mean),
                    pct(b.strict_rate),
                ]);
            }
        }
        table(
            &mut out,
            &[dim, "Agent", "Trials", "Weighted", "Strict"],
            2,
            &rows,
        );
    }
    out.push_str("### By rubric kind\n\n");
    let mut rows = Vec::new();
    let kinds: BTreeSet<&String> = summary
        .agents
        .values()
        .flat_map(|a| a.by_kind.keys())
        .collect();
    for k in kinds {
        for (name, a) in &agents {
            if let Some(b) = a.by_kind.get(k) {
                rows.push(vec![
                    cell(k),
                    cell(name),
                    b.count.to_string(),
                    b.passed.to_string(),
                    pct(b.pass_rate),
                    pct(b.weighted_mean),
                    pct(b.strict_rate),
                ]);
            }
        }
    }
    table(
        &mut out,
        &[
            "Kind",
            "Agent",
            "Items",
            "Passed",
            "Pass rate",
            "Weighted",
            "All passed",
        ],
        2,
        &rows,
    );

    // Red lines.
    out.push_str("## Red-line violations\n\n");
    let details = verdict_details(trials);
    let mut any = false;
    for (name, a) in &agents {
        for r in &a.red_line_violations {
            any = true;
            let detail = details.get(&((*name).clone(), r.task.clone(), r.epoch, r.item.clone()));
            let _ = write!(
                out,
                "- **{}** — `{}` epoch {}: `{}`",
                inline(name),
                r.task,
                r.epoch,
                r.item
            );
            match detail {
                Some(d) if !d.is_empty() => {
                    let _ = writeln!(out, " — {}", inline(d));
                }
                _ => out.push('\n'),
            }
        }
    }
    if !any {
        out.push_str("None.\n");
    }
    out.push('\n');

    // Failures by category.
    out.push_str("## Failures by category\n\nItems that did not pass (failed or broken), counted under each of their categories.\n\n");
    let cats: BTreeSet<&String> = summary
        .agents
        .values()
        .flat_map(|a| a.failures_by_category.keys())
        .collect();
    if cats.is_empty() {
        out.push_str("None.\n\n");
    } else {
        let names: Vec<String> = agents.iter().map(|(n, _)| cell(n)).collect();
        let mut header = vec!["Category"];
        header.extend(names.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = cats
            .iter()
            .map(|c| {
                let mut r = vec![cell(c)];
                r.extend(agents.iter().map(|(_, a)| {
                    a.failures_by_category
                        .get(*c)
                        .copied()
                        .unwrap_or(0)
                        .to_string()
                }));
                r
            })
            .collect();
        table(&mut out, &header, 1, &rows);
    }

    // Per task.
    out.push_str("## Per task\n\n");
    let mut rows = Vec::new();
    for t in &tasks {
        for (name, a) in &agents {
            if let Some(row) = a.per_task.get(*t) {
                rows.push(vec![
                    format!("`{}`", cell(t)),
                    cell(&row.title),
                    cell(name),
                    row.epochs.to_string(),
                    if row.epochs == 0 {
                        "—".into()
                    } else {
                        pct(row.weighted_mean)
                    },
                    format!("{}/{}", row.strict_count, row.epochs),
                    row.errors.to_string(),
                ]);
            }
        }
    }
    table(
        &mut out,
        &[
            "Task", "Title", "Agent", "Epochs", "Weighted", "Strict", "Errors",
        ],
        3,
        &rows,
    );

    failed_items_section(&mut out, &agents, trials);

    // Broken checks.
    out.push_str("## Broken checks\n\nItems whose check itself failed (scored as not passed; fix the check).\n\n");
    let mut broken: Vec<(String, String, u32, String, String)> = trials
        .iter()
        .filter(|(r, _)| r.status != TrialStatus::Error)
        .flat_map(|(r, vs)| {
            vs.iter()
                .filter(|v| v.status == VerdictStatus::Error)
                .map(move |v| {
                    (
                        r.agent.clone(),
                        r.task.id.clone(),
                        r.epoch,
                        v.id.clone(),
                        v.detail.clone().unwrap_or_default(),
                    )
                })
        })
        .collect();
    broken.sort();
    if broken.is_empty() {
        out.push_str("None.\n\n");
    } else {
        for (agent, task, epoch, item, detail) in broken {
            let _ = writeln!(
                out,
                "- **{}** — `{task}` epoch {epoch}: `{item}` — {}",
                inline(&agent),
                inline(&detail)
            );
        }
        out.push('\n');
    }

    // Errored trials.
    out.push_str(
        "## Errored trials\n\nHarness or infrastructure failures; excluded from every score.\n\n",
    );
    let mut errored: Vec<(String, String, u32, String, usize)> = trials
        .iter()
        .filter(|(r, _)| r.status == TrialStatus::Error)
        .map(|(r, _)| {
            (
                r.agent.clone(),
                r.task.id.clone(),
                r.epoch,
                r.error
                    .clone()
                    .unwrap_or_else(|| "(no reason recorded)".into()),
                r.attempts.len(),
            )
        })
        .collect();
    errored.sort();
    if errored.is_empty() {
        out.push_str("None.\n");
    } else {
        for (agent, task, epoch, error, attempts) in errored {
            let s = if attempts == 1 { "" } else { "s" };
            let _ = writeln!(
                out,
                "- **{}** — `{task}` epoch {epoch} ({attempts} attempt{s}): {}",
                inline(&agent),
                inline(&error)
            );
        }
    }
    out
}

/// `## Failed items`: per task and agent, each item that did not pass in a scored trial, how
/// often, whether it is a red line, and why (the detail of the first epoch that failed it).
fn failed_items_section(
    out: &mut String,
    agents: &[(&String, &AgentSummary)],
    trials: &[(TrialResult, Vec<Verdict>)],
) {
    // (task, agent, item) → (failed epochs, red line, first failing epoch, its detail).
    type Key = (String, String, String);
    let mut items: BTreeMap<Key, (u32, bool, u32, String)> = BTreeMap::new();
    for (r, vs) in trials
        .iter()
        .filter(|(r, _)| r.status != TrialStatus::Error)
    {
        for v in vs.iter().filter(|v| !v.passed()) {
            let e = items
                .entry((r.task.id.clone(), r.agent.clone(), v.id.clone()))
                .or_insert((0, v.red_line, u32::MAX, String::new()));
            e.0 += 1;
            if r.epoch < e.2 {
                e.2 = r.epoch;
                e.3 = v.detail.clone().unwrap_or_default();
            }
        }
    }
    if items.is_empty() {
        return;
    }
    out.push_str("## Failed items

Per task and agent, the rubric items that did not pass in a scored trial (failed or broken): in how many scored epochs, whether the item is a red line, and why (the detail of the first epoch that failed it).

");
    let rows: Vec<Vec<String>> = items
        .into_iter()
        .map(|((task, agent, item), (n, red, _, why))| {
            let scored = agents
                .iter()
                .find(|(name, _)| **name == agent)
                .and_then(|(_, a)| a.per_task.get(&task))
                .map_or(0, |row| row.epochs);
            vec![
                format!("`{}`", cell(&task)),
                cell(&agent),
                format!("`{}`", cell(&item)),
                format!("{n}/{scored}"),
                if red { "yes".into() } else { String::new() },
                inline(&why),
            ]
        })
        .collect();
    table(
        out,
        &["Task", "Agent", "Item", "Failed", "Red line", "Why"],
        3,
        &rows,
    );
}

/// The items that failed most often over the whole run, most first (ties by task, then
/// item): `(task, item, failed epochs, scored epochs)`, at most `n`.
pub fn most_failed(summary: &Summary, n: usize) -> Vec<(String, String, u32, u32)> {
    let mut all: BTreeMap<(String, String), (u32, u32)> = BTreeMap::new();
    for a in summary.agents.values() {
        for (task, row) in &a.per_task {
            for (item, failed) in &row.failed_items {
                let e = all.entry((task.clone(), item.clone())).or_default();
                e.0 += failed;
                e.1 += row.epochs;
            }
        }
    }
    let mut v: Vec<(String, String, u32, u32)> = all
        .into_iter()
        .map(|((t, i), (f, s))| (t, i, f, s))
        .collect();
    v.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1))));
    v.truncate(n);
    v
}

/// (agent, task, epoch, item) → the verdict's detail.
fn verdict_details(
    trials: &[(TrialResult, Vec<Verdict>)],
) -> BTreeMap<(String, String, u32, String), String> {
    let mut m = BTreeMap::new();
    for (r, vs) in trials {
        for v in vs {
            m.insert(
                (r.agent.clone(), r.task.id.clone(), r.epoch, v.id.clone()),
                v.detail.clone().unwrap_or_default(),
            );
        }
    }
    m
}

/// The plain-text summary table printed at the end of `bureau run`: one row per agent, columns
/// aligned (names left, numbers right).
pub fn render_table(summary: &Summary) -> String {
    let epochs = max_epochs(summary);
    let mut header: Vec<String> = [
        "agent", "trials", "errors", "weighted", "strict", "partial", "TCR@50", "TCR@80", "TCR@100",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if epochs > 1 {
        header.push(format!("pass@{epochs}"));
        header.push(format!("pass^{epochs}"));
    }
    header.push("red lines".into());
    // Token and cost columns only when some agent used a model.
    let models = summary
        .agents
        .values()
        .any(|a| a.input_tokens_mean + a.output_tokens_mean > 0.0);
    if models {
        header.push("tokens/trial".into());
        header.push("$/trial".into());
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (name, a) in ranked(summary) {
        let mut r = vec![
            name.clone(),
            a.trials.to_string(),
            a.errors.to_string(),
            format!("{} ± {}", pct(a.weighted.mean), pct(a.weighted.std)),
            format!("{}%", pct(a.strict_success_rate)),
            pct(a.partial_mean),
            format!("{}%", pct(a.tcr.get(&50).copied().unwrap_or(0.0))),
            format!("{}%", pct(a.tcr.get(&80).copied().unwrap_or(0.0))),
            format!("{}%", pct(a.tcr.get(&100).copied().unwrap_or(0.0))),
        ];
        if a.scored == 0 {
            // No trial was scored: every rate is unknown, never 0.
            r[3..].iter_mut().for_each(|c| *c = "—".into());
        }
        if epochs > 1 && a.scored == 0 {
            r.extend(["—".to_string(), "—".to_string()]);
        } else if epochs > 1 {
            r.push(
                a.pass_at_k
                    .get(&epochs)
                    .map(|v| format!("{}%", pct(*v)))
                    .unwrap_or_else(|| "-".into()),
            );
            r.push(
                a.pass_hat_k
                    .get(&epochs)
                    .map(|v| format!("{}%", pct(*v)))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        r.push(a.red_line_violations.len().to_string());
        if models {
            r.push(tokens(a.input_tokens_mean + a.output_tokens_mean));
            r.push(
                a.cost_usd_mean
                    .map(|c| format!("{c:.4}"))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        rows.push(r);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = widths[i].saturating_sub(c.chars().count());
                if i == 0 {
                    format!("{c}{}", " ".repeat(pad))
                } else {
                    format!("{}{c}", " ".repeat(pad))
                }
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    };
    let mut out = String::new();
    out.push_str(&line(&header));
    out.push('\n');
    let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
    out.push_str(&"-".repeat(total));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    let scored: u32 = summary.agents.values().map(|a| a.scored).sum();
    let errors: u32 = summary.agents.values().map(|a| a.errors).sum();
    let _ = writeln!(
        out,
        "{}: {scored} scored, {} (excluded). weighted = mean ± std of Σw(passed)/Σw(all); strict = all items passed, no red line.",
        plural(summary.trials, "trial"),
        plural(errors, "error")
    );
    let worst = most_failed(summary, 3);
    if !worst.is_empty() {
        let list: Vec<String> = worst
            .iter()
            .map(|(task, item, f, s)| format!("{item} ({task}) {f}/{s}"))
            .collect();
        let _ = writeln!(
            out,
            "Most failed: {} — report.md lists every failed item and why.",
            list.join(", ")
        );
    }
    out
}
