//! Output collection (issue 5, §4): a trial's deliverables.
//!
//! Agents store their results in unpredictable places. Like Workspace-Bench's multi-strategy
//! file extraction, a trial's outputs are the union of
//!
//! 1. `named_in_message` — workspace files whose path the agent wrote in its final message of
//!    a turn (relative, or absolute under the workspace root);
//! 2. `output_folder` — every file under the task's `[outputs] folder`;
//! 3. `expected_name` — every workspace file whose name matches one of `[outputs] names`
//!    fuzzily ([`name_key`]);
//! 4. `changed` — every file created or modified during the trial, except files only the task's
//!    events or colleagues touched (they are not the agent's work).
//!
//! Deduplicated by path, sorted, each with every reason it was collected. The list is a pure
//! function of (task, world, trajectory): checks (`w.outputs`) and judges see the list as of
//! the turn being evaluated, and the run writes the final one to `outputs.json`.

use std::collections::{BTreeMap, BTreeSet};

use bureau_core::log::Actor;
use bureau_core::task::{Task, normalize_rel_path};
use bureau_core::trajectory::{Step, StepKind};
use bureau_world::World;
use serde::{Deserialize, Serialize};

/// The schema id of `outputs.json`.
pub const OUTPUTS_SCHEMA: &str = "bureau.outputs/1";

/// Why a file was collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputReason {
    NamedInMessage,
    OutputFolder,
    ExpectedName,
    Changed,
}

impl OutputReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            OutputReason::NamedInMessage => "named_in_message",
            OutputReason::OutputFolder => "output_folder",
            OutputReason::ExpectedName => "expected_name",
            OutputReason::Changed => "changed",
        }
    }
}

/// One collected file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectedOutput {
    /// Workspace path, `/`-separated.
    pub path: String,
    pub size: u64,
    /// Every reason it was collected, sorted.
    pub reasons: Vec<OutputReason>,
    /// The expected names (`[outputs] names`) it matched, when `expected_name` is a reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matched_names: Vec<String>,
}

/// `outputs.json`: the trial's deliverables, sorted by path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outputs {
    pub schema: String,
    pub outputs: Vec<CollectedOutput>,
}

impl Outputs {
    pub fn paths(&self) -> Vec<String> {
        self.outputs.iter().map(|o| o.path.clone()).collect()
    }
}

/// Version and status words dropped from the end of a file name by [`name_key`].
const VERSION_WORDS: &[&str] = &[
    "final", "draft", "rev", "revised", "reviewed", "updated", "update", "latest", "new", "copy",
    "edited", "clean", "old", "version", "ver", "wip",
];

/// Families of extensions that count as the same deliverable type.
const EXTENSION_FAMILIES: &[&[&str]] = &[
    &["xlsx", "xlsm", "xls", "ods", "csv", "tsv"],
    &["docx", "doc", "odt", "rtf"],
    &["pptx", "ppt", "odp"],
    &["md", "markdown", "txt", "text"],
    &["html", "htm"],
    &["yaml", "yml"],
    &["jpg", "jpeg"],
    &["tif", "tiff"],
];

/// Whether `token` is a version or status marker: a [`VERSION_WORDS`] word, `v2`, `v1.3`,
/// `rev3`, `r2`, `ver2`.
fn is_version_token(token: &str) -> bool {
    if VERSION_WORDS.contains(&token) {
        return true;
    }
    for prefix in ["version", "ver", "rev", "v", "r"] {
        if let Some(rest) = token.strip_prefix(prefix)
            && !rest.is_empty()
            && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
            && rest.starts_with(|c: char| c.is_ascii_digit())
        {
            return true;
        }
    }
    false
}

/// The fuzzy identity of a file name, used to match expected output names:
///
/// * only the last path component counts, case-insensitively;
/// * the extension is replaced by its family ([`EXTENSION_FAMILIES`]: `.xlsx` = `.xls` =
///   `.csv`, `.docx` = `.doc`, `.md` = `.txt`, ...); other extensions stand for themselves;
/// * the stem is split into words at separators (space `-` `_` `.` `(` `)` `[` `]`) and at
///   lower-to-upper case changes (`Q3Summary` → `q3 summary`);
/// * a copy counter `(1)` and trailing version or status words (`v2`, `v1.3`, `rev3`, `final`,
///   `draft`, `reviewed`, `copy`, ...) are dropped, as long as one word remains;
/// * the words are joined without separators.
///
/// `Q3 Summary_v2 (1).XLS`, `q3-summary_final.xlsx` and `q3_summary.csv` all have the key
/// `q3summary.sheet:xlsx`.
pub fn name_key(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    let (stem, ext) = match base.rfind('.') {
        Some(i) if i > 0 && i + 1 < base.len() => (&base[..i], base[i + 1..].to_lowercase()),
        _ => (base, String::new()),
    };
    let family = EXTENSION_FAMILIES
        .iter()
        .find(|f| f.contains(&ext.as_str()))
        .map(|f| format!("family:{}", f[0]))
        .unwrap_or(ext);

    // Words: split at separators and at lower→upper case changes. A `.` between digits is
    // part of a number (`v1.3`).
    let chars: Vec<char> = stem.chars().collect();
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for (i, &c) in chars.iter().enumerate() {
        let decimal_point = c == '.'
            && i > 0
            && chars[i - 1].is_ascii_digit()
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        let sep = !decimal_point
            && (c.is_whitespace() || matches!(c, '-' | '_' | '.' | '(' | ')' | '[' | ']'));
        if sep || (prev_lower && c.is_uppercase()) {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            if sep {
                continue;
            }
        }
        // Only a lower-case letter starts a camelCase boundary: after a digit an upper-case
        // letter is the same word in any case (`0R0` = `0r0`, found by proptest).
        prev_lower = c.is_lowercase();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    let mut parenthesised_number = false;
    // A trailing "(n)" copy counter.
    let trimmed = stem.trim_end();
    if let Some(open) = trimmed.rfind('(')
        && trimmed.ends_with(')')
        && open + 2 < trimmed.len()
        && trimmed[open + 1..trimmed.len() - 1]
            .chars()
            .all(|c| c.is_ascii_digit())
    {
        parenthesised_number = true;
    }
    if parenthesised_number && words.len() > 1 {
        words.pop();
    }
    while words.len() > 1 && words.last().is_some_and(|w| is_version_token(w)) {
        words.pop();
    }
    format!("{}.{}", words.concat(), family)
}

/// Whether two file names are the same deliverable under [`name_key`].
pub fn names_match(a: &str, b: &str) -> bool {
    name_key(a) == name_key(b)
}

/// The last message the agent sent in each turn.
fn final_messages(trajectory: &[Step]) -> Vec<&str> {
    let mut last: BTreeMap<u32, &str> = BTreeMap::new();
    for s in trajectory {
        if let StepKind::Message { text } = &s.kind {
            last.insert(s.turn, text);
        }
    }
    last.into_values().collect()
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.' | '~')
}

/// Workspace files (of `files`) whose relative path appears in `text` as a whole path: not
/// preceded by a path character and not followed by one (a final `.` of a sentence is fine).
/// Absolute paths under `root` count as their relative path.
pub fn paths_named_in(text: &str, files: &BTreeSet<String>, roots: &[String]) -> Vec<String> {
    let mut text = text.to_string();
    for root in roots {
        let prefix = format!("{}/", root.trim_end_matches('/'));
        if !root.is_empty() {
            text = text.replace(&prefix, " ");
        }
    }
    // `./reports/x.md` names reports/x.md.
    let text = text.replace(" ./", "  ").replace("`./", "` ");
    let mut out = Vec::new();
    for path in files {
        let mut from = 0;
        while let Some(i) = text[from..].find(path.as_str()) {
            let start = from + i;
            let end = start + path.len();
            let before_ok = text[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !is_path_char(c));
            let mut after = text[end..].chars();
            let after_ok = match after.next() {
                None => true,
                Some('.') => after.next().is_none_or(|c| !is_path_char(c) || c == '.'),
                Some(c) => !is_path_char(c),
            };
            if before_ok && after_ok {
                out.push(path.clone());
                break;
            }
            from = start + path.len().max(1);
            while !text.is_char_boundary(from) {
                from += 1;
            }
        }
    }
    out
}

/// Files created or modified during the trial that the agent may have made: every changed file
/// except those that only the task's events or colleagues touched (by the world log).
pub fn changed_by_agent(world: &World) -> Vec<String> {
    let Ok(changed) = world.changed_files() else {
        return Vec::new();
    };
    let mut by_agent: BTreeSet<&str> = BTreeSet::new();
    let mut by_others: BTreeSet<&str> = BTreeSet::new();
    for e in world.log().iter().filter(|e| e.service == "files") {
        for k in ["path", "to"] {
            if let Some(p) = e.payload.get(k).and_then(|v| v.as_str()) {
                if e.actor == Actor::Agent {
                    by_agent.insert(p);
                } else {
                    by_others.insert(p);
                }
            }
        }
    }
    let covered = |set: &BTreeSet<&str>, rel: &str| {
        set.iter().any(|t| {
            rel == *t
                || rel
                    .strip_prefix(t)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    };
    changed
        .created
        .into_iter()
        .chain(changed.modified)
        .filter(|p| covered(&by_agent, p) || !covered(&by_others, p))
        .collect()
}

/// The trial's deliverables as of now (see the module documentation).
pub fn collect_outputs(task: &Task, world: &World, trajectory: &[Step]) -> Outputs {
    let all = world.files().all_files();
    let sizes: BTreeMap<String, u64> = all.iter().map(|f| (f.path.clone(), f.size)).collect();
    let files: BTreeSet<String> = sizes.keys().cloned().collect();
    let mut found: BTreeMap<String, (BTreeSet<OutputReason>, BTreeSet<String>)> = BTreeMap::new();
    let mut add = |path: &str, reason: OutputReason, name: Option<&str>| {
        if sizes.contains_key(path) {
            let e = found.entry(path.to_string()).or_default();
            e.0.insert(reason);
            if let Some(n) = name {
                e.1.insert(n.to_string());
            }
        }
    };

    let roots = workspace_roots(world);
    for text in final_messages(trajectory) {
        for p in paths_named_in(text, &files, &roots) {
            add(&p, OutputReason::NamedInMessage, None);
        }
    }
    if let Some(folder) = task.outputs.folder.as_deref().and_then(normalize_rel_path) {
        let prefix = format!("{folder}/");
        for p in files.iter().filter(|p| p.starts_with(&prefix)) {
            add(p, OutputReason::OutputFolder, None);
        }
    }
    if !task.outputs.names.is_empty() {
        let keys: Vec<(String, &str)> = task
            .outputs
            .names
            .iter()
            .map(|n| (name_key(n), n.as_str()))
            .collect();
        for p in &files {
            let k = name_key(p);
            for (key, name) in &keys {
                if *key == k {
                    add(p, OutputReason::ExpectedName, Some(name));
                }
            }
        }
    }
    for p in changed_by_agent(world) {
        add(&p, OutputReason::Changed, None);
    }

    Outputs {
        schema: OUTPUTS_SCHEMA.to_string(),
        outputs: found
            .into_iter()
            .map(|(path, (reasons, names))| CollectedOutput {
                size: sizes.get(&path).copied().unwrap_or(0),
                path,
                reasons: reasons.into_iter().collect(),
                matched_names: names.into_iter().collect(),
            })
            .collect(),
    }
}

/// The workspace root as the agent may write it in absolute paths (as given and canonical).
pub(crate) fn workspace_roots(world: &World) -> Vec<String> {
    let mut roots = vec![world.workspace().to_string_lossy().into_owned()];
    if let Ok(c) = world.workspace().canonicalize() {
        let c = c.to_string_lossy().into_owned();
        if !roots.contains(&c) {
            roots.push(c);
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzzy-name rule, as a table: (expected, candidate, match?).
    #[test]
    fn fuzzy_name_table() {
        let table: &[(&str, &str, bool)] = &[
            ("q3-summary.xlsx", "q3-summary.xlsx", true),
            ("q3-summary.xlsx", "Q3-Summary.XLSX", true),
            ("q3-summary.xlsx", "q3_summary.xlsx", true),
            ("q3-summary.xlsx", "q3 summary.xlsx", true),
            ("q3-summary.xlsx", "Q3Summary.xlsx", true),
            ("q3-summary.xlsx", "q3.summary.xlsx", true),
            ("q3-summary.xlsx", "reports/2026/q3-summary.xlsx", true),
            ("q3-summary.xlsx", "q3-summary_v2.xlsx", true),
            ("q3-summary.xlsx", "q3-summary-v1.3.xlsx", true),
            ("q3-summary.xlsx", "q3-summary_final.xlsx", true),
            ("q3-summary.xlsx", "q3-summary_final_v3.xlsx", true),
            ("q3-summary.xlsx", "q3-summary-reviewed.xlsx", true),
            ("q3-summary.xlsx", "q3-summary (1).xlsx", true),
            ("q3-summary.xlsx", "q3-summary_rev2.xlsx", true),
            ("q3-summary.xlsx", "q3-summary.xls", true),
            ("q3-summary.xlsx", "q3-summary.csv", true),
            ("memo.docx", "Memo_FINAL.doc", true),
            ("notes.md", "notes.txt", true),
            ("page.html", "page.htm", true),
            // Different words, types or missing parts do not match.
            ("q3-summary.xlsx", "q4-summary.xlsx", false),
            ("q3-summary.xlsx", "q3-summary.docx", false),
            ("q3-summary.xlsx", "q3-summary.pdf", false),
            ("q3-summary.xlsx", "q3-summary-notes.xlsx", false),
            ("q3-summary.xlsx", "summary.xlsx", false),
            ("q3-summary.xlsx", "q3summary-draft-notes.xlsx", false),
            ("memo.docx", "memo", false),
            ("report.pdf", "report.pdf.bak", false),
            // Version words are only dropped at the end, and one word always remains.
            ("final.docx", "final.docx", true),
            ("final.docx", "draft.docx", false),
            ("v2-plan.md", "plan.md", false),
            // A year or a number that is part of the name is kept.
            ("budget-2026.xlsx", "budget-2025.xlsx", false),
            ("budget-2026.xlsx", "budget_2026_v2.xlsx", true),
        ];
        for (expected, candidate, want) in table {
            assert_eq!(
                names_match(expected, candidate),
                *want,
                "{expected} vs {candidate}: keys {} / {}",
                name_key(expected),
                name_key(candidate)
            );
        }
    }

    #[test]
    fn name_keys_are_readable() {
        assert_eq!(name_key("Q3 Summary_v2 (1).XLS"), "q3summary.family:xlsx");
        assert_eq!(name_key("data.parquet"), "data.parquet");
        assert_eq!(name_key("README"), "readme.");
        assert_eq!(name_key(".env"), "env.");
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn paths_in_messages_must_be_whole_paths() {
        let files = set(&[
            "reports/q3.md",
            "q3.md",
            "data/in.csv",
            "old-reports/q3.md",
            "a b/c.txt",
        ]);
        let roots = vec!["/tmp/trial/world/workspace".to_string()];
        let named = |t: &str| paths_named_in(t, &files, &roots);
        assert_eq!(named("I saved it to reports/q3.md."), vec!["reports/q3.md"]);
        assert_eq!(named("See `reports/q3.md`"), vec!["reports/q3.md"]);
        assert_eq!(
            named("See [the report](reports/q3.md)"),
            vec!["reports/q3.md"]
        );
        assert_eq!(named("at ./reports/q3.md"), vec!["reports/q3.md"]);
        assert_eq!(
            named("at /tmp/trial/world/workspace/reports/q3.md"),
            vec!["reports/q3.md"]
        );
        // q3.md inside reports/q3.md is not a separate mention; old-reports/ is another file.
        assert_eq!(named("wrote old-reports/q3.md"), vec!["old-reports/q3.md"]);
        assert_eq!(named("q3.md and data/in.csv"), vec!["data/in.csv", "q3.md"]);
        assert_eq!(named("see reports/q3.md.bak"), Vec::<String>::new());
        assert_eq!(named("file \"a b/c.txt\" done"), vec!["a b/c.txt"]);
        assert_eq!(named("nothing here"), Vec::<String>::new());
    }

    proptest::proptest! {
        /// Case does not matter (for names in one case; a lower-to-upper change splits words).
        #[test]
        fn name_keys_ignore_ascii_case(name in "[a-z0-9 ._()-]{0,40}") {
            proptest::prop_assert_eq!(name_key(&name), name_key(&name.to_ascii_uppercase()));
        }

        #[test]
        fn name_keys_never_panic(name in "\\PC{0,40}") {
            let _ = name_key(&name);
        }
    }
}
