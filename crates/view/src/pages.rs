//! The pages: templates (minijinja, autoescaped, compiled into the binary), and the models
//! the overview and trial pages are rendered from.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use bureau_check::summary::summarize;
use minijinja::{Environment, Value as JValue, context};
use serde::Serialize;

use crate::charts;
use crate::load::{Problem, RunData};

/// Problems listed on the overview per run; the rest are counted.
const PROBLEMS_SHOWN: usize = 50;

pub(crate) const CSS: &str = include_str!("../assets/view.css");
pub(crate) const JS: &str = include_str!("../assets/view.js");

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for (name, src) in [
            ("base.html", include_str!("../templates/base.html")),
            ("problems.html", include_str!("../templates/problems.html")),
            ("overview.html", include_str!("../templates/overview.html")),
            ("trial.html", include_str!("../templates/trial.html")),
        ] {
            // The templates are part of the binary and tested; a syntax error is a bug.
            if let Err(e) = env.add_template(name, src) {
                eprintln!("bureau-view: template {name}: {e}");
            }
        }
        env.add_function("pct", |x: f64| format!("{:.1}", x * 100.0));
        env
    })
}

/// Render `name` with `ctx`; a rendering error becomes a page that says so.
pub(crate) fn render(name: &str, ctx: JValue) -> String {
    match env().get_template(name).and_then(|t| t.render(ctx)) {
        Ok(s) => s,
        Err(e) => format!(
            "<!doctype html><meta charset=utf-8><title>Bureau viewer error</title><pre>the page \
             {} could not be rendered: {}</pre>",
            escape(name),
            escape(&format!("{e:#}"))
        ),
    }
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(crate) fn generator() -> String {
    format!("bureau {}", env!("CARGO_PKG_VERSION"))
}

fn pct(x: f64) -> String {
    format!("{:.1}", x * 100.0)
}

/// The relative link to a trial page from the overview.
pub fn trial_href(run: usize, key: &str) -> String {
    let parts: Vec<String> = key.split('/').map(url_segment).collect();
    format!("trial/{run}/{}.html", parts.join("/"))
}

/// Percent-encode one path segment (task ids and agent folders are safe names already; this
/// keeps a hostile folder name from breaking a link).
pub fn url_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~@+:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A red (0) to green (1) background for a score.
/// One row per shard of a sharded run, for the run card.
fn shard_rows(status: &bureau_run::status::RunStatus) -> Vec<minijinja::Value> {
    status
        .shards
        .iter()
        .map(|s| {
            let state = if s.done == s.trials {
                "done"
            } else if s.running > 0 {
                "running"
            } else if s.started > 0 {
                "stopped (resume it)"
            } else if s.done == 0 {
                "not started"
            } else {
                "partly done"
            };
            context! {
                shard => format!("{}/{}", s.k, s.n),
                trials => s.trials,
                done => s.done,
                started => s.started,
                running => s.running,
                errors => s.errors,
                state => state,
                percent => (s.done * 100).checked_div(s.trials).unwrap_or(100),
            }
        })
        .collect()
}

fn heat(score: Option<f64>, status: &str) -> String {
    match score {
        Some(s) => {
            let s = s.clamp(0.0, 1.0);
            // hsl: 0 = red, 120 = green.
            format!("hsl({:.0}, 70%, {:.0}%)", s * 120.0, 80.0 - s * 15.0)
        }
        None if status == "error" => "#f0d78c".into(),
        None => "#e4e6eb".into(),
    }
}

#[derive(Serialize)]
struct Column {
    name: String,
    colour: String,
}

#[derive(Serialize)]
struct HeatLink {
    href: String,
    bg: String,
    label: String,
    title: String,
}

#[derive(Serialize)]
struct CompareRow {
    task: String,
    a: String,
    b: String,
    href_a: Option<String>,
    href_b: Option<String>,
    delta: String,
    delta_raw: String,
    class: String,
}

#[derive(Serialize)]
struct Comparison {
    a: String,
    b: String,
    mean_a: String,
    mean_b: String,
    mean_delta: String,
    mean_class: String,
    better: usize,
    worse: usize,
    same: usize,
    only: usize,
    rows: Vec<CompareRow>,
}

/// One (run, agent) column of the overview.
struct Col<'a> {
    run: usize,
    run_data: &'a RunData,
    agent: String,
    name: String,
}

/// The mean weighted score per task of a column (over its scored trials), and the first
/// trial's link.
fn task_means(col: &Col<'_>) -> BTreeMap<String, (Option<f64>, String)> {
    let mut by_task: BTreeMap<String, (Vec<f64>, String)> = BTreeMap::new();
    for t in col.run_data.trials.iter().filter(|t| t.agent == col.agent) {
        let e = by_task
            .entry(t.task.clone())
            .or_insert_with(|| (Vec::new(), trial_href(col.run, &t.key)));
        if let Some(w) = t.weighted
            && t.status != "error"
        {
            e.0.push(w);
        }
    }
    by_task
        .into_iter()
        .map(|(k, (v, href))| {
            let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            (k, (mean, href))
        })
        .collect()
}

fn signed(d: f64) -> String {
    if d.abs() < 0.0005 {
        "±0.0".into()
    } else {
        format!("{:+.1}", d * 100.0)
    }
}

fn compare(a: &Col<'_>, b: &Col<'_>) -> Comparison {
    let ma = task_means(a);
    let mb = task_means(b);
    let tasks: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
    let mut rows = Vec::new();
    let (mut better, mut worse, mut same, mut only) = (0, 0, 0, 0);
    let (mut sum_a, mut sum_b, mut n) = (0.0, 0.0, 0usize);
    for task in tasks {
        let ea = ma.get(task);
        let eb = mb.get(task);
        let sa = ea.and_then(|e| e.0);
        let sb = eb.and_then(|e| e.0);
        let (delta, raw, class) = match (sa, sb) {
            (Some(x), Some(y)) => {
                let d = y - x;
                sum_a += x;
                sum_b += y;
                n += 1;
                if d > 0.0005 {
                    better += 1;
                } else if d < -0.0005 {
                    worse += 1;
                } else {
                    same += 1;
                }
                let class = if d > 0.0005 {
                    "delta-pos"
                } else if d < -0.0005 {
                    "delta-neg"
                } else {
                    ""
                };
                (signed(d), format!("{:.4}", d), class.to_string())
            }
            _ => {
                only += 1;
                ("—".into(), String::new(), String::new())
            }
        };
        rows.push(CompareRow {
            task: task.clone(),
            a: sa.map(pct).unwrap_or_else(|| "—".into()),
            b: sb.map(pct).unwrap_or_else(|| "—".into()),
            href_a: ea.map(|e| e.1.clone()),
            href_b: eb.map(|e| e.1.clone()),
            delta,
            delta_raw: raw,
            class,
        });
    }
    let (mean_a, mean_b) = if n > 0 {
        (sum_a / n as f64, sum_b / n as f64)
    } else {
        (0.0, 0.0)
    };
    let d = mean_b - mean_a;
    Comparison {
        a: a.name.clone(),
        b: b.name.clone(),
        mean_a: pct(mean_a),
        mean_b: pct(mean_b),
        mean_delta: signed(d),
        mean_class: if d > 0.0005 {
            "delta-pos".into()
        } else if d < -0.0005 {
            "delta-neg".into()
        } else {
            String::new()
        },
        better,
        worse,
        same,
        only,
        rows,
    }
}

/// The pairs compared on the overview: with several runs, each agent of the first run
/// against the same agent in every other run (or the first agents when none is shared);
/// with one run of several agents, the first agent against each other.
fn comparison_pairs(cols: &[Col<'_>], runs: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    if runs > 1 {
        for (i, a) in cols.iter().enumerate().filter(|(_, c)| c.run == 0) {
            for (j, b) in cols.iter().enumerate().filter(|(_, c)| c.run > 0) {
                if a.agent == b.agent {
                    pairs.push((i, j));
                }
            }
        }
        if pairs.is_empty() {
            let first_a = cols.iter().position(|c| c.run == 0);
            for r in 1..runs {
                if let (Some(i), Some(j)) = (first_a, cols.iter().position(|c| c.run == r)) {
                    pairs.push((i, j));
                }
            }
        }
    } else {
        for j in 1..cols.len() {
            pairs.push((0, j));
        }
    }
    pairs
}

fn manifest_str(run: &RunData, key: &str) -> Option<String> {
    let v = run.manifest.as_ref()?.get(key)?;
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The overview page of one or several runs.
pub fn overview(runs: &[RunData]) -> String {
    let mut cols: Vec<Col<'_>> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for agent in run.agents() {
            let name = if runs.len() > 1 {
                format!("{agent} · {}", run.label)
            } else {
                agent.clone()
            };
            cols.push(Col {
                run: i,
                run_data: run,
                agent,
                name,
            });
        }
    }
    // Summaries from the trials that could be read (so a run still going is shown as it is).
    let summaries: Vec<_> = runs.iter().map(|r| summarize(&r.scored)).collect();

    let mut run_cards = Vec::new();
    for run in runs {
        let count = |s: &str| run.trials.iter().filter(|t| t.status == s).count();
        let mut problems: Vec<Problem> = run.problems.clone();
        problems.sort();
        let more = problems.len().saturating_sub(PROBLEMS_SHOWN);
        problems.truncate(PROBLEMS_SHOWN);
        let mut settings = Vec::new();
        for key in ["epochs", "seed", "context", "judge", "feedback", "replicas"] {
            if let Some(v) = manifest_str(run, key)
                && v != "null"
                && !v.is_empty()
            {
                settings.push(format!("{key} {}", short_setting(&v)));
            }
        }
        run_cards.push(context! {
            label => run.label.clone(),
            dir => run.dir.display().to_string(),
            trials => run.trials.len(),
            passed => count("passed"),
            failed => count("failed"),
            errors => count("error"),
            incomplete => count("incomplete"),
            created => manifest_str(run, "created").or_else(|| manifest_str(run, "started")),
            settings => settings.join(" · "),
            problems => problems,
            more_problems => more,
            shards => run.shards.as_ref().map(shard_rows),
            shards_complete => run.shards.as_ref().map(|s| s.complete),
        });
    }

    let mut leaderboard = Vec::new();
    for (ci, col) in cols.iter().enumerate() {
        let Some(s) = summaries[col.run].agents.get(&col.agent) else {
            leaderboard.push((
                f64::NEG_INFINITY,
                context! {
                    agent => col.agent.clone(), run => col.run_data.label.clone(),
                    colour => charts::colour_css(ci),
                    trials => col.run_data.trials.iter().filter(|t| t.agent == col.agent).count(),
                    errors => 0, weighted => "—", strict => "—", pass_rate => "—", tcr50 => "—",
                    tcr100 => "—", pass_hat => "—", tool_calls => "—", tokens => "—", cost => "—",
                    red_lines => "—",
                },
            ));
            continue;
        };
        let tcr = |p: u32| s.tcr.get(&p).map(|v| pct(*v)).unwrap_or_else(|| "—".into());
        let pass_hat = s
            .pass_hat_k
            .iter()
            .next_back()
            .map(|(k, v)| format!("{} (k={k})", pct(*v)))
            .unwrap_or_else(|| "—".into());
        leaderboard.push((
            s.weighted.mean,
            context! {
                agent => col.agent.clone(),
                run => col.run_data.label.clone(),
                colour => charts::colour_css(ci),
                trials => s.trials,
                errors => s.errors,
                weighted => format!("{} ± {}", pct(s.weighted.mean), pct(s.weighted.std)),
                strict => format!("{}%", pct(s.strict_success_rate)),
                pass_rate => format!("{}%", pct(s.pass_rate_mean)),
                tcr50 => tcr(50),
                tcr100 => tcr(100),
                pass_hat => pass_hat,
                tool_calls => format!("{:.1}", s.tool_calls_mean),
                tokens => format!("{:.0}", s.input_tokens_mean + s.output_tokens_mean),
                cost => s.cost_usd_mean.map(|c| format!("{c:.4}")).unwrap_or_else(|| "—".into()),
                red_lines => s.red_line_violations.len(),
            },
        ));
    }

    // Best first, as in report.md (agents without a score last).
    leaderboard.sort_by(|a, b| b.0.total_cmp(&a.0));
    let leaderboard: Vec<JValue> = leaderboard.into_iter().map(|(_, row)| row).collect();

    // Charts.
    let names: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
    let scores: Vec<(String, Vec<f64>)> = cols
        .iter()
        .map(|c| {
            let v = c
                .run_data
                .trials
                .iter()
                .filter(|t| t.agent == c.agent && t.status != "error")
                .filter_map(|t| t.weighted)
                .collect();
            (c.name.clone(), v)
        })
        .collect();
    let mut turn_keys: BTreeSet<String> = BTreeSet::new();
    for (c, _) in cols.iter().zip(0..) {
        if let Some(s) = summaries[c.run].agents.get(&c.agent) {
            turn_keys.extend(s.per_turn.keys().cloned());
        }
    }
    let mut turn_order: Vec<String> = turn_keys
        .iter()
        .filter(|k| *k != "final")
        .cloned()
        .collect();
    turn_order.sort_by_key(|k| k.parse::<u32>().unwrap_or(u32::MAX));
    if turn_keys.contains("final") {
        turn_order.push("final".into());
    }
    let per_turn: Vec<(String, Vec<Option<f64>>)> = cols
        .iter()
        .map(|c| {
            let s = summaries[c.run].agents.get(&c.agent);
            let v = turn_order
                .iter()
                .map(|k| s.and_then(|s| s.per_turn.get(k).copied()))
                .collect();
            (c.name.clone(), v)
        })
        .collect();
    let breakdown = |pick: &dyn Fn(
        &bureau_check::summary::AgentSummary,
    ) -> &BTreeMap<String, bureau_check::summary::Breakdown>| {
        let mut groups: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
        for (ci, c) in cols.iter().enumerate() {
            if let Some(s) = summaries[c.run].agents.get(&c.agent) {
                for (g, b) in pick(s) {
                    let e = groups
                        .entry(g.clone())
                        .or_insert_with(|| vec![None; cols.len()]);
                    e[ci] = Some(b.weighted_mean);
                }
            }
        }
        groups
    };
    let by_category = breakdown(&|s| &s.by_category);
    let by_persona = breakdown(&|s| &s.by_persona);
    let any_cost = cols.iter().any(|c| {
        c.run_data
            .trials
            .iter()
            .any(|t| t.agent == c.agent && t.cost_usd.is_some())
    });
    let effort: Vec<(String, Vec<(f64, f64)>)> = cols
        .iter()
        .map(|c| {
            let v = c
                .run_data
                .trials
                .iter()
                .filter(|t| t.agent == c.agent && t.status != "error")
                .filter_map(|t| {
                    let x = if any_cost {
                        t.cost_usd.unwrap_or(0.0)
                    } else if t.tokens > 0 {
                        t.tokens as f64
                    } else {
                        t.tool_calls as f64
                    };
                    t.weighted.map(|w| (x, w))
                })
                .collect();
            (c.name.clone(), v)
        })
        .collect();
    let any_tokens = cols.iter().any(|c| {
        c.run_data
            .trials
            .iter()
            .any(|t| t.agent == c.agent && t.tokens > 0)
    });
    let effort_desc = if any_cost {
        "cost per trial (USD)"
    } else if any_tokens {
        "tokens per trial"
    } else {
        "tool calls per trial (no model tokens in this run)"
    };
    let tcr: Vec<(String, Vec<(u32, f64)>)> = cols
        .iter()
        .map(|c| {
            // Per task: the mean pass rate over its scored epochs (as the summary's TCR).
            let mut by_task: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
            for t in c
                .run_data
                .trials
                .iter()
                .filter(|t| t.agent == c.agent && t.status != "error")
            {
                if let Some(p) = t.pass_rate {
                    by_task.entry(&t.task).or_default().push(p);
                }
            }
            let rates: Vec<f64> = by_task
                .values()
                .map(|v| v.iter().sum::<f64>() / v.len() as f64)
                .collect();
            let points = (0..=20)
                .map(|i| {
                    let p = i * 5;
                    (p, bureau_check::metrics::tcr_at(&rates, p))
                })
                .collect();
            (c.name.clone(), points)
        })
        .collect();
    let mut charts_out = vec![
        context! { id => "scores", svg => charts::score_distribution(&scores) },
        context! { id => "turns", svg => charts::lines("Score per turn (%)", &turn_order, &per_turn) },
        context! { id => "tcr", svg => charts::tcr_curve(&tcr) },
        context! { id => "effort", svg => charts::scatter("Score against effort", effort_desc, &effort) },
    ];
    if !by_category.is_empty() {
        charts_out.push(context! { id => "categories", svg => charts::grouped_bars("Weighted score by category", &by_category, &names) });
    }
    if !by_persona.is_empty() {
        charts_out.push(context! { id => "personas", svg => charts::grouped_bars("Weighted score by persona", &by_persona, &names) });
    }

    // Heat map.
    let mut tasks: BTreeSet<String> = BTreeSet::new();
    for r in runs {
        tasks.extend(r.tasks());
    }
    let mut heat_rows = Vec::new();
    for task in &tasks {
        let mut cells = Vec::new();
        for c in &cols {
            let mut links = Vec::new();
            for t in c
                .run_data
                .trials
                .iter()
                .filter(|t| &t.task == task && t.agent == c.agent)
            {
                let label = match (t.weighted, t.status.as_str()) {
                    (_, "error") => "err".to_string(),
                    (Some(w), _) => format!("{:.0}", w * 100.0),
                    (None, s) => s.chars().take(4).collect(),
                };
                links.push(HeatLink {
                    href: trial_href(c.run, &t.key),
                    bg: heat(t.weighted.filter(|_| t.status != "error"), &t.status),
                    label,
                    title: format!("{} · {} · epoch {} · {}", t.task, c.name, t.epoch, t.status),
                });
            }
            cells.push(links);
        }
        heat_rows.push(context! { task => task.clone(), cells => cells });
    }

    let comparisons: Vec<Comparison> = comparison_pairs(&cols, runs.len())
        .into_iter()
        .map(|(i, j)| compare(&cols[i], &cols[j]))
        .collect();

    let columns: Vec<Column> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| Column {
            name: c.name.clone(),
            colour: charts::colour_css(i),
        })
        .collect();
    render(
        "overview.html",
        context! {
            css => CSS, js => JS, root => "", generator => generator(),
            runs => run_cards,
            multi => runs.len() > 1,
            leaderboard => leaderboard,
            columns => columns,
            charts => charts_out,
            heat => heat_rows,
            comparisons => comparisons,
        },
    )
}

fn short_setting(v: &str) -> String {
    if v.chars().count() > 80 {
        let mut s: String = v.chars().take(79).collect();
        s.push('…');
        s
    } else {
        v.to_string()
    }
}
