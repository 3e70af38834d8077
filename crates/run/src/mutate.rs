//! Mutation testing of a task's rubric: the oracle's solution is perturbed the way a careless
//! agent errs — a step left out, a figure changed, a message sent to the wrong person — and
//! each mutant is played. A mutant is **killed** when some item fails (the trial is not a
//! strict success); a rubric that lets every mutant through checks less than it claims.
//!
//! Mutants are chosen deterministically from the solution (at most [`MAX_PER_KIND`] of each
//! kind, spread over the solution), so a report is the same twice.

use std::path::Path;

use bureau_agents::make_agent;
use bureau_check::CheckProgram;
use bureau_core::result::TrialStatus;
use bureau_core::task::Task;
use bureau_core::tool::ToolCall;
use bureau_core::tool::reads_only;
use serde_json::Value;

use crate::trial::{AttemptOf, Scoring, run_attempt};

/// The most mutants of one kind per task.
pub const MAX_PER_KIND: usize = 3;

/// One perturbation of the solution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutation {
    /// `drop`, `number` or `recipient`.
    pub kind: &'static str,
    /// Turn (from 1) and step (from 1) of the solution it changes.
    pub turn: usize,
    pub step: usize,
    /// What changed, for the report.
    pub what: String,
}

impl std::fmt::Display for Mutation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at solution/{}.jsonl step {}: {}",
            self.kind, self.turn, self.step, self.what
        )
    }
}

/// What mutation testing found for one task.
#[derive(Debug, Clone, PartialEq)]
pub struct MutationReport {
    pub task: String,
    pub mutants: usize,
    pub killed: usize,
    /// Mutants every item let through.
    pub survivors: Vec<Mutation>,
    /// Mutants whose trial errored (a check broke on the mutated world): not counted as killed.
    pub errored: Vec<(Mutation, String)>,
}

/// The keys of tool arguments that hold what an agent writes (figures live there).
const CONTENT_KEYS: &[&str] = &[
    "content",
    "body",
    "text",
    "value",
    "values",
    "cells",
    "message",
    "description",
    "rows",
    "new",
    "markdown",
    "summary",
    "amount",
    "quantity",
    "equals",
];
/// The keys that name recipients.
const RECIPIENT_KEYS: &[&str] = &["to", "cc", "attendees", "assignee", "user", "who", "member"];

/// The mutants of `task`'s solution, each with the task carrying the mutated solution.
pub fn mutants(task: &Task) -> Vec<(Mutation, Task)> {
    let steps: Vec<(usize, usize)> = task
        .solution
        .iter()
        .enumerate()
        .flat_map(|(t, calls)| (0..calls.len()).map(move |s| (t, s)))
        .collect();
    let mut out = Vec::new();
    let spread = |candidates: Vec<(usize, usize)>| -> Vec<(usize, usize)> {
        if candidates.len() <= MAX_PER_KIND {
            return candidates;
        }
        (0..MAX_PER_KIND)
            .map(|i| candidates[i * (candidates.len() - 1) / (MAX_PER_KIND - 1).max(1)])
            .collect()
    };
    // -- a step left out --
    let writes: Vec<(usize, usize)> = steps
        .iter()
        .copied()
        .filter(|&(t, s)| !reads_only(&task.solution[t][s].tool))
        .collect();
    for (t, s) in spread(writes) {
        let mut m = task.clone();
        let call = m.solution[t].remove(s);
        out.push((
            Mutation {
                kind: "drop",
                turn: t + 1,
                step: s + 1,
                what: format!("`{}` left out", call.tool),
            },
            m,
        ));
    }
    // -- a figure changed --
    let numbered: Vec<(usize, usize)> = steps
        .iter()
        .copied()
        .filter(|&(t, s)| {
            !reads_only(&task.solution[t][s].tool)
                && bump_number(&task.solution[t][s].args).is_some()
        })
        .collect();
    for (t, s) in spread(numbered) {
        let mut m = task.clone();
        if let Some((args, what)) = bump_number(&m.solution[t][s].args) {
            m.solution[t][s] = ToolCall {
                tool: m.solution[t][s].tool.clone(),
                args,
            };
            out.push((
                Mutation {
                    kind: "number",
                    turn: t + 1,
                    step: s + 1,
                    what,
                },
                m,
            ));
        }
    }
    // -- the wrong person --
    let addressed: Vec<(usize, usize)> = steps
        .iter()
        .copied()
        .filter(|&(t, s)| wrong_recipient(&task.solution[t][s].args).is_some())
        .collect();
    for (t, s) in spread(addressed) {
        let mut m = task.clone();
        if let Some((args, what)) = wrong_recipient(&m.solution[t][s].args) {
            m.solution[t][s] = ToolCall {
                tool: m.solution[t][s].tool.clone(),
                args,
            };
            out.push((
                Mutation {
                    kind: "recipient",
                    turn: t + 1,
                    step: s + 1,
                    what,
                },
                m,
            ));
        }
    }
    out
}

/// `args` with the first figure of two or more digits in a content field raised by one (the
/// last digit turned: `4,080.00` → `4,081.00`, `1250` → `1251`), and what changed.
fn bump_number(args: &Value) -> Option<(Value, String)> {
    fn walk(v: &mut Value, in_content: bool) -> Option<String> {
        match v {
            Value::String(s) if in_content => {
                let (start, end) = first_figure(s)?;
                let old = s[start..end].to_string();
                let new = turn_last_digit(&old);
                s.replace_range(start..end, &new);
                Some(format!("{old} → {new}"))
            }
            Value::Number(n) if in_content => {
                let old = n.to_string();
                let new = n.as_f64()? + 1.0;
                *v = bureau_variants::params::number(new);
                Some(format!("{old} → {new}"))
            }
            Value::Array(a) => a.iter_mut().find_map(|x| walk(x, in_content)),
            Value::Object(o) => o
                .iter_mut()
                .find_map(|(k, x)| walk(x, in_content || CONTENT_KEYS.contains(&k.as_str()))),
            _ => None,
        }
    }
    let mut a = args.clone();
    let what = walk(&mut a, false)?;
    Some((a, what))
}

/// The byte range of the first figure with at least two digits that is not part of a date,
/// a time, an identifier or a path (`2026-03-12`, `10:30`, `NK-5531`, `v2`).
fn first_figure(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric()
                    || b[i - 1] == b'-'
                    || b[i - 1] == b'_'
                    || b[i - 1] == b'/'
                    || b[i - 1] == b':'
                    || b[i - 1] == b'.'))
        {
            let start = i;
            while i < b.len()
                && (b[i].is_ascii_digit()
                    || ((b[i] == b',' || b[i] == b'.')
                        && i + 1 < b.len()
                        && b[i + 1].is_ascii_digit()))
            {
                i += 1;
            }
            let next = b.get(i).copied().unwrap_or(b' ');
            let digits = s[start..i].bytes().filter(u8::is_ascii_digit).count();
            let glued = next.is_ascii_alphabetic()
                || next == b'-'
                || next == b'_'
                || next == b'/'
                || next == b':';
            // A year is rarely the figure a check is about (and dates elsewhere name it).
            let year = digits == 4
                && i - start == 4
                && s[start..i]
                    .parse::<u32>()
                    .is_ok_and(|y| (1990..=2100).contains(&y));
            if digits >= 2 && !glued && !year {
                return Some((start, i));
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The figure with its last digit turned (9 → 8, else +1), so its length and format stay.
fn turn_last_digit(fig: &str) -> String {
    let mut chars: Vec<char> = fig.chars().collect();
    if let Some(pos) = chars.iter().rposition(|c| c.is_ascii_digit()) {
        let d = chars[pos].to_digit(10).unwrap_or(0);
        let nd = if d == 9 { 8 } else { d + 1 };
        chars[pos] = char::from_digit(nd, 10).unwrap_or('1');
    }
    chars.into_iter().collect()
}

/// `args` with the first e-mail address (or handle) of a recipient field replaced by someone
/// else's at the same domain, and what changed.
fn wrong_recipient(args: &Value) -> Option<(Value, String)> {
    fn swap(s: &mut String) -> Option<String> {
        let old = s.clone();
        let new = match old.split_once('@') {
            Some((_, domain)) if !domain.is_empty() && !domain.contains(' ') => {
                format!("someone.else@{domain}")
            }
            // A chat handle: a bare word, not a time or a number.
            None if !old.is_empty()
                && old.len() <= 40
                && old
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c))
                && old.chars().any(|c| c.is_ascii_alphabetic())
                && !old.chars().next().is_some_and(|c| c.is_ascii_digit()) =>
            {
                "someone-else".to_string()
            }
            _ => return None,
        };
        *s = new.clone();
        Some(format!("{old} → {new}"))
    }
    let mut a = args.clone();
    let o = a.as_object_mut()?;
    for key in RECIPIENT_KEYS {
        let what = match o.get_mut(*key) {
            Some(Value::String(s)) => swap(s),
            Some(Value::Array(list)) => list.iter_mut().find_map(|x| match x {
                Value::String(s) => swap(s),
                Value::Object(m) => match m.get_mut("email") {
                    Some(Value::String(s)) => swap(s),
                    _ => None,
                },
                _ => None,
            }),
            _ => None,
        };
        if let Some(w) = what {
            return Some((a, w));
        }
    }
    None
}

/// Play every mutant of `task` with the oracle and report which ones no item noticed.
pub fn mutation_test(task: &Task, program: Option<&CheckProgram>) -> MutationReport {
    // Every mutant's attempt is thrown away with its temporary directory.
    let scoring = Scoring {
        scratch: true,
        ..Scoring::default()
    };
    let mut report = MutationReport {
        task: task.id.clone(),
        mutants: 0,
        killed: 0,
        survivors: Vec::new(),
        errored: Vec::new(),
    };
    for (m, mutant) in mutants(task) {
        report.mutants += 1;
        let Ok(dir) = tempfile::Builder::new().prefix("bureau-mutant-").tempdir() else {
            report
                .errored
                .push((m, "cannot create a temporary directory".into()));
            continue;
        };
        let o = play(&mutant, program, dir.path(), &scoring);
        match o {
            Ok(true) => report.killed += 1,
            Ok(false) => report.survivors.push(m),
            Err(e) => report.errored.push((m, e)),
        }
    }
    report
}

/// Whether the mutant's trial has a failed item (`Ok(true)`), passes everything
/// (`Ok(false)`) or errors.
fn play(
    task: &Task,
    program: Option<&CheckProgram>,
    dir: &Path,
    scoring: &Scoring,
) -> Result<bool, String> {
    let o = run_attempt(
        task,
        program,
        &make_agent,
        AttemptOf {
            spec: "oracle",
            agent: "oracle",
            epoch: 1,
        },
        dir,
        scoring,
    );
    match o.status {
        TrialStatus::Error => Err(o.error.unwrap_or_default()),
        _ => Ok(!o.score.is_some_and(|s| s.strict)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn figures_are_found_outside_dates_ids_and_paths() {
        let f = |s: &str| first_figure(s).map(|(a, b)| s[a..b].to_string());
        assert_eq!(
            f("Total: €23,230.00 on 2026-03-12").as_deref(),
            Some("23,230.00")
        );
        assert_eq!(f("NK-5531 is €250 over").as_deref(), Some("250"));
        assert_eq!(f("see report_v2.csv at 10:30").as_deref(), None);
        assert_eq!(f("2026-03-12").as_deref(), None);
        assert_eq!(f("the 2026 plan has 13 items").as_deref(), Some("13"));
        assert_eq!(turn_last_digit("23,230.00"), "23,230.01");
        assert_eq!(turn_last_digit("59"), "58");
    }

    #[test]
    fn read_tools_are_known_by_their_verb() {
        for t in [
            "files_read",
            "mail_read_attachment",
            "code_list_mrs",
            "code_get_mr",
            "calendar_free_slots",
            "kb_search",
        ] {
            assert!(reads_only(t), "{t}");
        }
        for t in [
            "files_write",
            "code_comment_mr",
            "code_merge_mr",
            "mail_send",
            "chat_post",
        ] {
            assert!(!reads_only(t), "{t}");
        }
    }

    #[test]
    fn content_figures_and_recipients_are_mutated_paths_are_not() {
        let args =
            json!({"path": "finance/run-2026.csv", "content": "Kessler,4080.00\nTOTAL,23230.00"});
        let (m, what) = bump_number(&args).unwrap();
        assert_eq!(m["path"], "finance/run-2026.csv");
        assert_eq!(m["content"], "Kessler,4080.01\nTOTAL,23230.00");
        assert_eq!(what, "4080.00 → 4080.01");
        let (m, what) = wrong_recipient(&json!({"to": ["jonas@bw.test"], "subject": "x"})).unwrap();
        assert_eq!(m["to"], json!(["someone.else@bw.test"]));
        assert!(what.starts_with("jonas@bw.test"));
        assert!(wrong_recipient(&json!({"path": "a.md"})).is_none());
        assert!(wrong_recipient(&json!({"to": "2026-03-16T17:00:00"})).is_none());
        assert_eq!(
            wrong_recipient(&json!({"who": "jonas"})).unwrap().0["who"],
            "someone-else"
        );
        assert!(
            reads_only("files_read")
                && reads_only("mail_read_attachment")
                && !reads_only("files_write")
        );
    }
}
