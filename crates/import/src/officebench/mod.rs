//! `bureau import officebench <checkout>`: OfficeBench (Wang et al., 2024) as a Bureau suite.
//!
//! One task per subtask (`tasks/<apps>-<n>/subtasks/<k>.json` → task `ob-<apps>-<n>-<k>`):
//! the user is `username` (`<name>@example.com`), the turn's clock is `date` + `time` (UTC),
//! `testbed/data` is the workspace, `testbed/emails/<Name>/*.eml` are mailboxes (with a real
//! `Date` from their "Sent at:" line and a Message-ID when missing), `testbed/calendar/<Name>.ics`
//! calendars, `reference/` the task's private reference files, and each evaluation one rubric
//! item (see [`rubric`]). The mapping and its reasons are in `docs/import-officebench.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::{ImportError, Problem, io_err};

pub mod authored;
mod findings;
mod oracle;
pub mod rubric;
pub mod source;
mod star;
mod task;
mod testbed;
mod toml;

use findings::findings;
use task::write_task;
use testbed::{Testbed, clock, read_testbed};

use source::{Eval, Place, Subtask};
use toml::{q, q_list, q_multiline};

/// Which semantics the generated checks have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Bureau's typed comparisons (the default).
    Typed,
    /// OfficeBench's own semantics (`--strict-original`), so published numbers compare.
    Strict,
}

/// The mail domain of every OfficeBench person (its email app writes `<name>@example.com`).
pub const DOMAIN: &str = "example.com";

/// `Alice` → `alice@example.com`.
pub fn address(name: &str) -> String {
    format!("{}@{DOMAIN}", name.trim().to_lowercase())
}

/// The one skip reason (a short, fixed text so that counts group): OfficeBench checks for an
/// image file the agent makes, and no Bureau tool makes one (agents see pictures — `files_read`
/// returns them as images, `files_ocr` reads their text — but cannot draw or render one).
pub const SKIP_IMAGE_OUTPUT: &str = "image output: OfficeBench checks an image file the agent makes; no Bureau tool makes an image file";

/// The ability an imported task is tagged with when its facts are in a picture.
pub const ABILITY_IMAGE: &str = "reading images";
/// The ability an imported task is tagged with when its facts are in a PDF without a text layer.
pub const ABILITY_SCAN: &str = "reading scanned PDFs";

#[derive(Debug, Clone, serde::Serialize)]
pub struct Options {
    pub checkout: PathBuf,
    pub out: PathBuf,
    pub mode: Mode,
}

/// Something about the original task the import noticed (a defect or a change made).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Finding {
    pub task: String,
    pub what: String,
}

/// What an import did; also written to `<out>/import.json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    pub mode: Mode,
    /// Subtask files found.
    pub subtasks: usize,
    /// Tasks written that can be run.
    pub imported: Vec<String>,
    /// Tasks written with a `skip_reason`, by reason.
    pub skipped: BTreeMap<String, Vec<String>>,
    /// Subtasks not written.
    pub refused_subtasks: usize,
    /// Why: one located problem each (several for one subtask are joined).
    pub refused: Vec<Problem>,
    /// Runnable tasks by oracle kind (authored, derived, none).
    pub oracles: BTreeMap<String, usize>,
    /// Why a task got no derived oracle.
    pub no_oracle: BTreeMap<String, String>,
    /// Imported tasks whose facts are in a picture or a scan, by the ability they are tagged
    /// with ([`ABILITY_IMAGE`], [`ABILITY_SCAN`]).
    pub media_input: BTreeMap<String, Vec<String>>,
    pub findings: Vec<Finding>,
}

impl Summary {
    pub fn skipped_count(&self) -> usize {
        self.skipped.values().map(Vec::len).sum()
    }

    /// "imported N of 300, skipped M (reasons)", and the refused count.
    pub fn line(&self) -> String {
        let reasons: Vec<String> = self
            .skipped
            .iter()
            .map(|(r, ids)| format!("{} × {r}", ids.len()))
            .collect();
        let mut s = format!(
            "imported {} of {}, skipped {}",
            self.imported.len(),
            self.subtasks,
            self.skipped_count()
        );
        if !reasons.is_empty() {
            s.push_str(&format!(" ({})", reasons.join("; ")));
        }
        if !self.refused.is_empty() {
            s.push_str(&format!(
                ", refused {} ({} located error(s))",
                self.refused_subtasks,
                self.refused.len()
            ));
        }
        s
    }

    /// "facts in pictures or scans: N (n × reading images; m × reading scanned PDFs); every
    /// task offers files_ocr", or None when no imported task reads media.
    pub fn media_line(&self) -> Option<String> {
        let n: usize = self.media_input.values().map(Vec::len).sum();
        if n == 0 {
            return None;
        }
        let by: Vec<String> = self
            .media_input
            .iter()
            .map(|(a, ids)| format!("{} × {a}", ids.len()))
            .collect();
        Some(format!(
            "facts in pictures or scans: {n} task(s) ({}); every task offers files_ocr",
            by.join("; ")
        ))
    }
}

/// Import the checkout. Fails only when the checkout is not OfficeBench or the output
/// cannot be written; every subtask that cannot be converted is a problem in the summary.
pub fn import(opts: &Options) -> Result<Summary, ImportError> {
    let tasks_dir = opts.checkout.join("tasks");
    let folders = task_folders(&tasks_dir).map_err(|why| ImportError::NotTheBenchmark {
        path: opts.checkout.clone(),
        why,
        hint: "give the root of an OfficeBench checkout (git clone https://github.com/zlwang-cs/OfficeBench): it holds tasks/<apps>-<n>/subtasks/<k>.json".into(),
    })?;
    prepare_out(&opts.out)?;
    let mut summary = Summary {
        mode: opts.mode,
        subtasks: 0,
        imported: Vec::new(),
        skipped: BTreeMap::new(),
        refused_subtasks: 0,
        refused: Vec::new(),
        oracles: BTreeMap::new(),
        no_oracle: BTreeMap::new(),
        media_input: BTreeMap::new(),
        findings: Vec::new(),
    };
    let mut ids = Vec::new();
    for (name, dir) in &folders {
        import_folder(opts, name, dir, &mut summary, &mut ids)?;
    }
    summary.refused.sort();
    summary.findings.sort();
    let (id, title) = match opts.mode {
        Mode::Typed => (
            "officebench",
            "OfficeBench, imported with Bureau's typed checks",
        ),
        Mode::Strict => (
            "officebench-strict",
            "OfficeBench, imported with OfficeBench's own (substring) checks",
        ),
    };
    let mut suite = format!(
        "# Written by `bureau import officebench`; see import.json and docs/import-officebench.md.\nid = {}\ntitle = {}\ndescription = {}\n",
        q(id),
        q(title),
        q(&format!(
            "{} of {} OfficeBench subtasks from {}",
            summary.imported.len() + summary.skipped_count(),
            summary.subtasks,
            opts.checkout.display()
        ))
    );
    let mut by_apps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in &summary.imported {
        let apps = t.split('-').nth(1).unwrap_or("0").to_string();
        by_apps
            .entry(format!("apps{apps}"))
            .or_default()
            .push(t.clone());
    }
    if !by_apps.is_empty() {
        suite.push_str("\n[subsets]\n");
        for (k, v) in &by_apps {
            suite.push_str(&format!("{k} = {}\n", q_list(v)));
        }
    }
    write(&opts.out.join("suite.toml"), suite.as_bytes())?;
    let json = serde_json::to_string_pretty(&summary).unwrap_or_default();
    write(
        &opts.out.join("import.json"),
        format!("{json}\n").as_bytes(),
    )?;
    Ok(summary)
}

/// `tasks/<a>-<n>/` folders that have `subtasks/`, in OfficeBench's order (numeric).
fn task_folders(tasks: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let entries = std::fs::read_dir(tasks).map_err(|e| {
        format!(
            "there is no readable tasks/ folder ({}: {e})",
            tasks.display()
        )
    })?;
    let mut out: Vec<((u32, u32), String, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let path = e.path();
        if !path.join("subtasks").is_dir() {
            continue;
        }
        let key = name
            .split_once('-')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .unwrap_or((u32::MAX, u32::MAX));
        out.push((key, name, path));
    }
    out.sort();
    if out.is_empty() {
        return Err("tasks/ holds no <apps>-<n>/subtasks/ folder".into());
    }
    Ok(out.into_iter().map(|(_, n, p)| (n, p)).collect())
}

fn prepare_out(out: &Path) -> Result<(), ImportError> {
    if out.exists() {
        let empty = std::fs::read_dir(out)
            .map_err(io_err(out))?
            .next()
            .is_none();
        if !empty {
            if !out.join("import.json").is_file() {
                return Err(ImportError::Output {
                    path: out.to_path_buf(),
                    why: "exists, is not empty and is not an earlier import (no import.json)".into(),
                    hint: "give --out a new or empty directory, or the directory of an earlier import to replace it".into(),
                });
            }
            std::fs::remove_dir_all(out).map_err(io_err(out))?;
        }
    }
    std::fs::create_dir_all(out).map_err(io_err(out))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ImportError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    std::fs::write(path, bytes).map_err(io_err(path))
}

/// Files under `dir`, relative, sorted (symbolic links are left out).
fn list_files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file()
                && let Ok(rel) = p.strip_prefix(dir)
            {
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

fn import_folder(
    opts: &Options,
    folder: &str,
    dir: &Path,
    summary: &mut Summary,
    ids: &mut Vec<String>,
) -> Result<(), ImportError> {
    let sub_dir = dir.join("subtasks");
    let mut files: Vec<(u32, PathBuf)> = std::fs::read_dir(&sub_dir)
        .map_err(io_err(&sub_dir))?
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let n = p.file_stem()?.to_str()?.parse().ok()?;
            (p.extension()? == "json").then_some((n, p))
        })
        .collect();
    files.sort();
    summary.subtasks += files.len();
    let mut testbed: Option<Result<Testbed, ()>> = None;
    for (k, path) in files {
        let id = format!("ob-{folder}-{k}");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                summary.refused.push(Problem::new(
                    &path,
                    None,
                    format!("cannot read: {e}"),
                    "make it a readable UTF-8 JSON file",
                ));
                summary.refused_subtasks += 1;
                continue;
            }
        };
        let sub = match source::parse_subtask(&path, &text) {
            Ok(s) => s,
            Err(problems) => {
                summary.refused.extend(problems);
                summary.refused_subtasks += 1;
                continue;
            }
        };
        let Some(at) = clock(&sub.date, &sub.time) else {
            summary.refused.push(Problem::new(
                &path,
                None,
                format!(
                    "`date` {:?} / `time` {:?} is not a date and a time",
                    sub.date, sub.time
                ),
                "write date as 2020-05-01 and time as 10:00 AM",
            ));
            summary.refused_subtasks += 1;
            continue;
        };
        if testbed.is_none() {
            testbed = Some(read_testbed(folder, dir, at).map_err(|p| {
                summary.refused.extend(p);
            }));
        }
        let Some(Ok(tb)) = &testbed else {
            summary.refused.push(Problem::new(
                &path,
                None,
                "not imported: its testbed has a file that does not parse (errors above)",
                "repair the testbed file, then import again",
            ));
            summary.refused_subtasks += 1;
            continue;
        };
        match write_task(opts, folder, &id, &path, &sub, at, tb, summary)? {
            Ok(()) => ids.push(id),
            Err(p) => {
                summary.refused.push(p);
                summary.refused_subtasks += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::testbed::fix_eml;
    use super::*;

    #[test]
    fn officebench_clock_and_addresses() {
        assert_eq!(
            clock("2020-05-01", "10:00 AM")
                .map(|c| c.to_string())
                .as_deref(),
            Some("2020-05-01 10:00:00")
        );
        assert_eq!(
            clock("2020-05-01", "1:30 PM")
                .map(|c| c.to_string())
                .as_deref(),
            Some("2020-05-01 13:30:00")
        );
        assert!(clock("May 1", "10:00 AM").is_none());
        assert_eq!(address("Bob"), "bob@example.com");
    }

    #[test]
    fn sent_at_lines_become_dates() {
        let raw = b"From: a@gmail.com\nTo: Alice@gmail.com\nSubject: bill\n\npay 28.90$.\n\nSent at: 2024-04-22 10:00:00\n";
        let base = clock("2020-05-01", "10:00 AM").expect("clock");
        let out = fix_eml(raw, base, "x@officebench.invalid").expect("fixed");
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.starts_with(
                "Date: Mon, 22 Apr 2024 10:00:00 +0000\nMessage-ID: <x@officebench.invalid>\n"
            ),
            "{text}"
        );
        assert!(fix_eml(b"\x00\x01 not mail", base, "x").is_err());
    }
}
