//! The task lint of `bureau validate`: rules every bundled task keeps, because the anchors'
//! tasks are known to break them (Workspace-Bench and TheAgentCompany both ship checkers a
//! do-nothing agent passes, expected values nobody could derive, numbers matched inside other
//! numbers).
//!
//! Static rules (this module, from the task's files):
//! * every `result` item names the source of its expected value (`source = [...]`), and a
//!   named file, mail or media file exists in the task's folders (or, for a `[workspace]` task,
//!   may be generated);
//! * `checks.star` matches no number as a raw substring (`"250" in text`, `.find("250")`);
//!   the number-aware `contains()` and `number()` are the way;
//! * every turn's items weigh more than nothing (a turn nobody checks is a turn nothing
//!   depends on).
//!
//! Rules that need a run are applied by [`crate::validate`] with the null agent's verdicts:
//! [`null_passes`].

use std::path::Path;

use bureau_core::task::Task;
use bureau_core::verdict::{RubricKind, TurnRef, Verdict};

/// Every static lint problem of `task`, each naming the file, the line or item, and the fix.
pub fn lint(task: &Task) -> Vec<String> {
    let mut problems = Vec::new();
    sources(task, &mut problems);
    raw_numbers(task, &mut problems);
    turn_weights(task, &mut problems);
    problems
}

/// Problems from the null agent's verdicts: an item a do-nothing agent passes checks nothing
/// the agent did. A red line passed doing nothing does not first require the object it
/// protects to exist (ClawMark's reverse checks do), so it is reported too.
pub fn null_passes(verdicts: &[Verdict]) -> Vec<String> {
    verdicts
        .iter()
        .filter(|v| v.passed())
        .map(|v| {
            if v.red_line {
                format!(
                    "lint: red line `{}` passes for the null agent — make it first require the object it protects (the reply, the file, the run) to exist, and fail when it does not",
                    v.id
                )
            } else {
                format!(
                    "lint: item `{}` passes for the null agent, who does nothing — make it require the agent's work (or, if it guards against damage, make it a red line that first requires the deliverable to exist)",
                    v.id
                )
            }
        })
        .collect()
}

fn sources(task: &Task, problems: &mut Vec<String>) {
    let names = task_file_names(&task.dir);
    for item in &task.rubric {
        if item.kind == RubricKind::Result && item.sources.is_empty() {
            problems.push(format!(
                "lint: {}: result item `{}` does not name the source of its expected value — add source = [\"prompt\" | \"turn:<n>\" | \"file:<path>\" | \"mail:<file>\" | ...] (docs/task-format.md#rubric)",
                item.location, item.id
            ));
        }
        for s in &item.sources {
            let Some((kind, reference)) = s.split_once(':') else {
                if s.trim() == "history" && task.history.is_none() {
                    problems.push(format!(
                        "lint: {}: item `{}` names source `history` but the task has no history.json",
                        item.location, item.id
                    ));
                }
                continue;
            };
            let reference = reference.trim().trim_start_matches("./");
            let found = match kind.trim() {
                "file" | "media" => {
                    task.workspace.is_some()
                        || task.dir.join("world/files").join(reference).is_file()
                        || task
                            .turns
                            .iter()
                            .flat_map(|t| &t.events)
                            .any(|e| event_path(&e.kind).is_some_and(|p| p == reference))
                        || names.iter().any(|n| n.ends_with(reference))
                }
                "mail" => names.iter().any(|n| {
                    n.rsplit('/').next().is_some_and(|base| base == reference)
                        || n.ends_with(reference)
                }),
                _ => true,
            };
            if !found {
                problems.push(format!(
                    "lint: {}: item `{}` names source `{s}`, which is no file of the task's world/ or turns/ folders — name an existing file (workspace path, or the .eml file's name)",
                    item.location, item.id
                ));
            }
        }
    }
}

fn event_path(kind: &bureau_core::task::EventKind) -> Option<&str> {
    use bureau_core::task::EventKind as K;
    match kind {
        K::AddFile { path, .. } | K::ReplaceFile { path, .. } => Some(path),
        _ => None,
    }
}

/// The relative paths of the regular files under the task's `world/`, `turns/` and
/// `reference/` folders (symbolic links are not followed).
fn task_file_names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["world", "turns", "reference"] {
        let root = dir.join(sub);
        let mut stack = vec![root.clone()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(ft) = e.file_type() else { continue };
                let p = e.path();
                if ft.is_dir() {
                    stack.push(p);
                } else if ft.is_file()
                    && let Ok(rel) = p.strip_prefix(&root)
                {
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    out.sort();
    out
}

/// `"250" in text`, `text.find("250")` and the like: a figure matched as a raw substring
/// also matches inside `1,250` or `2500`.
fn raw_numbers(task: &Task, problems: &mut Vec<String>) {
    let Some((path, source)) = &task.checks else {
        return;
    };
    for (i, line) in source.lines().enumerate() {
        for lit in raw_figures(strip_comment(line)) {
            problems.push(format!(
                "lint: {}:{}: the figure \"{lit}\" is matched as a raw substring (it also matches inside longer numbers) — use contains(text, \"{lit}\") or compare number(...) values",
                path.display(),
                i + 1
            ));
        }
    }
}

/// The figures of one line of code (comment removed) that are matched as raw substrings:
/// the left side of `in` / `not in`, or the argument of a string method.
fn raw_figures(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (end, lit) in string_literals(code) {
        if !is_figure(&lit) {
            continue;
        }
        let after = code[end..].trim_start();
        let before = code[..end - lit.len() - 2].trim_end();
        let raw_in = after.starts_with("in ") || after.starts_with("not in ");
        let raw_call = [
            ".find(",
            ".rfind(",
            ".index(",
            ".count(",
            ".startswith(",
            ".endswith(",
            ".replace(",
            ".split(",
        ]
        .iter()
        .any(|m| before.ends_with(m));
        if raw_in || raw_call {
            out.push(lit);
        }
    }
    out
}

/// The line without a `#` comment (a `#` inside a string literal is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
    }
    line
}

/// The one-line string literals of `code`: (byte offset just after the closing quote, text).
fn string_literals(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut quote: Option<(char, usize)> = None;
    let mut escaped = false;
    for (i, c) in code.char_indices() {
        match quote {
            Some((q, start)) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    out.push((i + 1, code[start..i].to_string()));
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => quote = Some((c, i + 1)),
            None => {}
        }
    }
    out
}

/// A literal that is a figure: digits with optional sign, grouping, decimals, currency or %.
fn is_figure(s: &str) -> bool {
    let t = s.trim();
    let core = t
        .trim_start_matches(['€', '$', '£', '-', '+', '−'])
        .trim_end_matches('%')
        .trim();
    !core.is_empty()
        && core.chars().next().is_some_and(|c| c.is_ascii_digit())
        && core
            .chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.')
        && core.matches('.').count() <= 1
        && core.chars().filter(|c| c.is_ascii_digit()).count() >= 2
}

fn turn_weights(task: &Task, problems: &mut Vec<String>) {
    let n = task.turns.len() as u32;
    for t in 1..=n {
        let weight: f64 = task
            .rubric
            .iter()
            .filter(|i| i.turn == TurnRef::Turn(t) || (t == n && i.turn == TurnRef::Final))
            .map(|i| i.weight)
            .sum();
        if weight <= 0.0 && n > 1 {
            problems.push(format!(
                "lint: turn {t} has no rubric item (its items weigh {weight}) — check what the agent must have done by the end of that day with `turn = {t}`"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_matched_raw_are_found_and_number_aware_calls_are_not() {
        let found = raw_figures;
        assert_eq!(found("ok = \"250\" in text"), ["250"]);
        assert_eq!(found("ok = '1,250.00' not in m.text"), ["1,250.00"]);
        assert_eq!(found("i = t.find(\"€4,080\")"), ["€4,080"]);
        assert!(found("ok = contains(text, \"250\")").is_empty());
        assert!(found("ok = \"NK-5531\" in text").is_empty());
        assert!(found("ok = \"Q2\" in text").is_empty());
        assert!(is_figure("12%") && is_figure("-1,200") && !is_figure("7") && !is_figure("v2"));
        assert!(!is_figure("2.3.0"), "a version is not a figure");
        assert_eq!(strip_comment("x = 1  # \"250\" in t"), "x = 1  ");
        assert_eq!(strip_comment("x = \"#250\" in t"), "x = \"#250\" in t");
    }
}
