//! The trial page: the verdicts beside their evidence, the timeline turn by turn, and what
//! each turn changed in the world.

use minijinja::context;
use serde::Serialize;
use serde_json::Value;

use bureau_world::trial_files::TrialFiles;

use crate::load::{MAX_JSON_BYTES, Problem, RunData, read_regular};
use crate::pages::{CSS, JS, generator, render};
use crate::timeline::{TurnView, timeline};

/// At most this many steps are linked as one verdict's evidence.
const MAX_EVIDENCE: usize = 12;

#[derive(Debug, Serialize)]
struct EvidenceLink {
    id: String,
    label: String,
}

#[derive(Debug, Serialize)]
struct VerdictView {
    id: String,
    description: String,
    source: Vec<String>,
    turn: String,
    weight: String,
    kind: String,
    red_line: bool,
    status: String,
    detail: String,
    judge: String,
    evidence: Vec<String>,
    evidence_links: Vec<EvidenceLink>,
    /// World objects the item names (anchor, name), linked once the world views are drawn.
    #[serde(skip)]
    world_targets: Vec<(String, String)>,
}

#[derive(Debug, Serialize)]
struct WorldView {
    id: String,
    label: String,
    since: String,
    html: String,
}

#[derive(Debug, Serialize)]
struct Deliverable {
    path: String,
    size: String,
    anchor: String,
    html: String,
}

fn str_of(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// What a verdict concerns, as strings to look for in steps: the `backticked` parts of its
/// detail, e-mail addresses in it, and the paths or ids its sources name.
fn needles(detail: &str, sources: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = detail;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        let s = after[..end].trim();
        if s.len() >= 3 {
            out.push(s.to_string());
        }
        rest = &after[end + 1..];
    }
    for word in detail.split(|c: char| c.is_whitespace() || ",;()<>\"'".contains(c)) {
        if word.contains('@') && word.contains('.') && word.len() >= 5 {
            out.push(word.trim_end_matches('.').to_string());
        }
    }
    for s in sources {
        if let Some((kind, what)) = s.split_once(':')
            && matches!(
                kind,
                "file" | "sheet" | "kb" | "repo" | "calendar" | "tracker"
            )
            && what.len() >= 3
        {
            out.push(what.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn verdict_views(verdicts: &[Value], turns: &[TurnView]) -> Vec<VerdictView> {
    verdicts
        .iter()
        .map(|v| {
            let sources: Vec<String> = v
                .get("source")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            let detail = str_of(v, "detail");
            let turn = str_of(v, "turn");
            let wanted = needles(&detail, &sources);
            let turn_n: Option<u32> = turn.parse().ok();
            let mut evidence = Vec::new();
            let mut links = Vec::new();
            if !wanted.is_empty() {
                for t in turns.iter().filter(|t| turn_n.is_none_or(|n| t.n <= n)) {
                    for s in &t.steps {
                        if s.haystack.is_empty() {
                            continue;
                        }
                        if let Some(w) = wanted.iter().find(|w| s.haystack.contains(w.as_str())) {
                            evidence.push(s.id.clone());
                            links.push(EvidenceLink {
                                id: s.id.clone(),
                                label: format!("turn {} · {} · {}", t.n, s.label, w),
                            });
                        }
                    }
                }
            }
            // The latest steps are the likeliest evidence (the write, the send).
            if evidence.len() > MAX_EVIDENCE {
                let skip = evidence.len() - MAX_EVIDENCE;
                evidence.drain(..skip);
                links.drain(..skip);
            }
            let world_targets = wanted
                .iter()
                .filter(|w| !w.contains('@'))
                .map(|w| (crate::world::object_anchor("file", w), w.clone()))
                .collect();
            let judge = v
                .get("judge")
                .filter(|j| !j.is_null())
                .map(|j| serde_json::to_string_pretty(j).unwrap_or_default())
                .unwrap_or_default();
            VerdictView {
                id: str_of(v, "id"),
                description: str_of(v, "description"),
                source: sources,
                turn,
                weight: str_of(v, "weight"),
                kind: str_of(v, "kind"),
                red_line: v.get("red_line").and_then(Value::as_bool).unwrap_or(false),
                status: str_of(v, "status"),
                detail,
                judge,
                evidence,
                evidence_links: links,
                world_targets,
            }
        })
        .collect()
}

fn size(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1} KB", n as f64 / 1e3)
    } else {
        format!("{n} B")
    }
}

/// The deliverables of a trial (regular files only, sorted): their paths below
/// `deliverables/` and sizes. At most 10,000.
fn deliverable_files(trial: &TrialFiles) -> Vec<(String, u64)> {
    trial
        .list("deliverables")
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(rel, len)| Some((rel.strip_prefix("deliverables/")?.to_string(), len)))
        .take(10_000)
        .collect()
}

/// The trial page for the trial `key` (`task/agent-dir/epoch`) of `run`; `root` is the
/// relative path back to the site root (`../../../../`).
pub fn trial_page(run: &RunData, key: &str, root: &str) -> Option<String> {
    let row = run.trial(key)?;
    let dir = run.dir.join("trials").join(key);
    let mut problems: Vec<Problem> = Vec::new();
    let mut turns = timeline(&dir, &mut problems);
    let (files, unreadable) = crate::load::open_trial(&dir);
    if let Some(message) = unreadable {
        problems.push(Problem {
            path: bureau_world::trial_files::ARCHIVE.into(),
            message,
        });
    }

    let result: Option<Value> = read_regular(&dir.join("result.json"), MAX_JSON_BYTES)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let verdicts: Vec<Value> = match read_regular(&dir.join("verdicts.json"), MAX_JSON_BYTES) {
        Ok(b) => match serde_json::from_slice::<Vec<Value>>(&b) {
            Ok(v) => v,
            Err(e) => {
                problems.push(Problem {
                    path: "verdicts.json".into(),
                    message: format!("not readable: {e}"),
                });
                Vec::new()
            }
        },
        Err(e) => {
            if dir.join("verdicts.json").exists() {
                problems.push(Problem {
                    path: "verdicts.json".into(),
                    message: e,
                });
            }
            Vec::new()
        }
    };
    if result.is_none() {
        problems.push(Problem {
            path: "result.json".into(),
            message: if dir.join("result.json").exists() {
                "not readable: the score and status are unknown".into()
            } else {
                "missing: the trial is running or was stopped; what was written so far is shown"
                    .into()
            },
        });
    }
    if let Some(per_turn) = result
        .as_ref()
        .and_then(|r| r.get("score"))
        .and_then(|s| s.get("per_turn"))
    {
        for t in &mut turns {
            t.score = per_turn.get(t.n.to_string()).and_then(Value::as_f64);
        }
    }
    let mut facts = Vec::new();
    let mut title = row.task.clone();
    let mut error = String::new();
    if let Some(r) = &result {
        if let Some(task) = r.get("task") {
            let t = str_of(task, "title");
            if !t.is_empty() {
                title = t;
            }
            for (k, label) in [
                ("persona", "persona"),
                ("category", "category"),
                ("difficulty", "difficulty"),
            ] {
                let v = str_of(task, k);
                if !v.is_empty() {
                    facts.push(format!("{label} {v}"));
                }
            }
            if let Some(variant) = task.get("variant").filter(|v| !v.is_null()) {
                facts.push(format!(
                    "variant {} of {} (seed {})",
                    str_of(variant, "index"),
                    str_of(variant, "base"),
                    str_of(variant, "seed")
                ));
            }
        }
        if let Some(a) = r.get("attempts").and_then(Value::as_array)
            && a.len() > 1
        {
            facts.push(format!("{} attempts (earlier ones errored)", a.len()));
        }
        if let Some(limits) = r
            .get("usage")
            .and_then(|u| u.get("limits_hit"))
            .and_then(Value::as_array)
            && !limits.is_empty()
        {
            let l: Vec<String> = limits
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect();
            facts.push(format!("limits hit: {}", l.join(", ")));
        }
        error = str_of(r, "error");
    }
    let mut verdicts = verdict_views(&verdicts, &turns);

    let mut worlds = Vec::new();
    for stage in crate::world::stages(&files) {
        let (changes, prefix, label) = match stage {
            crate::world::Stage::Turn(0) => continue,
            crate::world::Stage::Turn(n) => (
                crate::world::turn_changes(&files, n),
                format!("t{n}-"),
                format!("turn {n}"),
            ),
            crate::world::Stage::Round(n, r) => (
                crate::world::stage_changes(&files, stage),
                format!("t{n}r{r}-"),
                format!("turn {n}, before feedback round {r}"),
            ),
        };
        let since = changes_since(&changes, &label);
        worlds.push(WorldView {
            id: format!("world-{}", prefix.trim_end_matches('-')),
            label,
            since,
            html: crate::world::render_html_prefixed(&changes, &prefix),
        });
    }
    let deliverables: Vec<Deliverable> = deliverable_files(&files)
        .into_iter()
        .map(|(path, len)| {
            let preview = crate::world::file_preview(&files, &path);
            Deliverable {
                anchor: preview.anchor.clone(),
                html: crate::world::render_preview_html(&preview),
                path,
                size: size(len),
            }
        })
        .collect();
    // World objects a verdict names: linked in the last world view that shows them.
    for v in &mut verdicts {
        let mut links = Vec::new();
        for (anchor, label) in v.world_targets.drain(..) {
            let target = worlds
                .iter()
                .rev()
                .find_map(|w| {
                    let prefix = w.id.trim_start_matches("world-");
                    let id = format!("{prefix}-{anchor}");
                    w.html
                        .contains(&format!("id=\"{id}\""))
                        .then_some((id, w.label.clone()))
                })
                .or_else(|| {
                    deliverables
                        .iter()
                        .any(|d| d.anchor == anchor)
                        .then(|| (anchor.clone(), "deliverable".to_string()))
                });
            if let Some((id, place)) = target {
                v.evidence.push(id.clone());
                links.push(EvidenceLink {
                    id,
                    label: format!("world after {place}: {label}"),
                });
            }
        }
        v.evidence_links.extend(links);
    }

    Some(render(
        "trial.html",
        context! {
            css => CSS, js => JS, root => root, generator => generator(),
            run_label => run.label.clone(),
            t => row,
            title => title,
            facts => facts,
            error => error,
            problems => problems,
            verdicts => verdicts,
            turns => turns,
            worlds => worlds,
            deliverables => deliverables,
        },
    ))
}

fn changes_since(changes: &crate::world::WorldChanges, label: &str) -> String {
    match (changes.since, &changes.base) {
        (Some(0), _) => "the seeded world".into(),
        (Some(p), _) => format!("turn {p}"),
        (None, Some(base)) => base.clone(),
        (None, None) => format!("nothing before {label}: no earlier snapshot could be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needles_come_from_backticks_addresses_and_sources() {
        let n = needles(
            "`visits/agenda.md` contains 'J3'; sent to anouk@polder.test.",
            &["file:engineering/points.md".into(), "mail:01.eml".into()],
        );
        assert_eq!(
            n,
            [
                "anouk@polder.test",
                "engineering/points.md",
                "visits/agenda.md"
            ]
        );
    }
}
