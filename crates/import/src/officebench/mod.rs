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

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime};

use crate::{ImportError, Problem, io_err};

pub mod authored;
mod oracle;
pub mod rubric;
pub mod source;
mod star;
mod toml;

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

/// Skip reasons (a short, fixed set so that counts group).
pub const SKIP_IMAGE_OUTPUT: &str =
    "image output: OfficeBench checks an image file the agent makes; Bureau has no image tools yet";
pub const SKIP_OCR_INPUT: &str =
    "OCR-only input: the task's facts are only in an image; Bureau has no OCR yet";
pub const SKIP_SCANNED_PDF: &str =
    "OCR-only input: a scanned PDF without a text layer; Bureau has no OCR yet";

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

/// The testbed of one task folder, read once for all its subtasks.
struct Testbed {
    data_dir: PathBuf,
    data_files: BTreeSet<String>,
    /// Mailbox folder name (as written) → fixed .eml files (name, bytes).
    mail: BTreeMap<String, Vec<(String, Vec<u8>)>>,
    /// Lower-case folder name → .eml file names.
    mail_files: BTreeMap<String, BTreeSet<String>>,
    /// .eml files directly in emails/ (no owner).
    loose_mail: Vec<(String, Vec<u8>)>,
    /// Calendar name (as written) → .ics text.
    calendars: BTreeMap<String, String>,
    /// Lower-case calendar name → seeded events.
    busy: BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>>,
    /// Calendars whose events lacked a UID and got one.
    fixed_uids: Vec<String>,
    reference_dir: PathBuf,
}

fn read_testbed(folder: &str, dir: &Path, clock: NaiveDateTime) -> Result<Testbed, Vec<Problem>> {
    let tb = dir.join("testbed");
    let data_dir = tb.join("data");
    let data_files: BTreeSet<String> = list_files(&data_dir)
        .into_iter()
        .filter(|f| f != "answer.txt")
        .collect();
    let mut problems = Vec::new();
    let mut mail: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    let mut loose_mail = Vec::new();
    let emails = tb.join("emails");
    let mut n = 0;
    for rel in list_files(&emails) {
        if !rel.to_lowercase().ends_with(".eml") {
            continue;
        }
        let path = emails.join(&rel);
        n += 1;
        let fixed = std::fs::read(&path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|raw| fix_eml(&raw, clock, &format!("ob.{folder}.{n}@officebench.invalid")));
        match fixed {
            Err(why) => problems.push(Problem::new(
                &path,
                None,
                format!("the .eml does not parse as a mail: {why}"),
                "repair or remove the file (an RFC 5322 message: header lines, a blank line, the body)",
            )),
            Ok(bytes) => match rel.split_once('/') {
                Some((owner, file)) if !file.contains('/') => mail
                    .entry(owner.to_string())
                    .or_default()
                    .push((file.to_string(), bytes)),
                None => loose_mail.push((rel.clone(), bytes)),
                Some(_) => problems.push(Problem::new(
                    &path,
                    None,
                    "a mail nested deeper than emails/<Name>/",
                    "OfficeBench's email app reads emails/<Name>/*.eml only; move the file there",
                )),
            },
        }
    }
    let mail_files = mail
        .iter()
        .map(|(k, v)| (k.to_lowercase(), v.iter().map(|(f, _)| f.clone()).collect()))
        .collect();
    let mut calendars = BTreeMap::new();
    let mut fixed_uids = Vec::new();
    let mut busy: BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>> = BTreeMap::new();
    let cal_dir = tb.join("calendar");
    for rel in list_files(&cal_dir) {
        let Some(name) = rel.strip_suffix(".ics") else {
            continue;
        };
        if name.contains('/') {
            continue;
        }
        let path = cal_dir.join(&rel);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                problems.push(Problem::new(
                    &path,
                    None,
                    format!("cannot read: {e}"),
                    "make it a UTF-8 .ics file",
                ));
                continue;
            }
        };
        let (text, fixed) = add_uids(&text, &format!("ob.{folder}.{}", name.to_lowercase()));
        if fixed {
            fixed_uids.push(name.to_string());
        }
        match bureau_formats::calendar::parse_ics(&text, chrono_tz::UTC) {
            Err(e) => problems.push(Problem::new(
                &path,
                None,
                format!("the calendar does not parse: {e}"),
                "repair the .ics (a VCALENDAR of VEVENTs with DTSTART and UID)",
            )),
            Ok(events) => {
                busy.insert(
                    name.to_lowercase(),
                    events
                        .iter()
                        .map(|e| (e.start.naive_utc(), e.end.naive_utc()))
                        .collect(),
                );
                calendars.insert(name.to_string(), text);
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Testbed {
        data_dir,
        data_files,
        mail,
        mail_files,
        loose_mail,
        calendars,
        busy,
        fixed_uids,
        reference_dir: dir.join("reference"),
    })
}

/// Give every VEVENT without a UID one (`<n>.<prefix>@officebench.invalid`).
fn add_uids(text: &str, prefix: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut block: Vec<&str> = Vec::new();
    let mut inside = false;
    let mut n = 0;
    let mut fixed = false;
    for line in text.lines() {
        let t = line.trim_end_matches('\r');
        if t.eq_ignore_ascii_case("BEGIN:VEVENT") {
            inside = true;
            block.clear();
        }
        if inside {
            block.push(t);
            if t.eq_ignore_ascii_case("END:VEVENT") {
                inside = false;
                n += 1;
                let has_uid = block
                    .iter()
                    .any(|l| l.to_ascii_uppercase().starts_with("UID"));
                for (i, l) in block.iter().enumerate() {
                    out.push_str(l);
                    out.push_str("\r\n");
                    if i == 0 && !has_uid {
                        out.push_str(&format!("UID:{n}.{prefix}@officebench.invalid\r\n"));
                        fixed = true;
                    }
                }
            }
            continue;
        }
        out.push_str(t);
        out.push_str("\r\n");
    }
    for l in block.iter().filter(|_| inside) {
        out.push_str(l);
        out.push_str("\r\n");
    }
    (out, fixed)
}

/// Give a seeded .eml a `Date` (from its "Sent at: YYYY-MM-DD HH:MM:SS" line, else a day
/// before the turn) and a `Message-ID` when it has none.
fn fix_eml(raw: &[u8], clock: NaiveDateTime, message_id: &str) -> Result<Vec<u8>, String> {
    let parsed = bureau_formats::mail::parse_eml(raw).map_err(|e| e.to_string())?;
    if parsed.from.is_none() {
        return Err("it has no From header".into());
    }
    let crlf = raw.windows(2).any(|w| w == b"\r\n");
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut head = String::new();
    if parsed.date.is_none() {
        let sent = parsed.text.lines().find_map(|l| {
            let v = l.trim().strip_prefix("Sent at:")?.trim();
            NaiveDateTime::parse_from_str(v, "%Y-%m-%d %H:%M:%S").ok()
        });
        let when = sent.unwrap_or(clock - chrono::Duration::days(1));
        head.push_str(&format!(
            "Date: {}{nl}",
            when.format("%a, %d %b %Y %H:%M:%S +0000")
        ));
    }
    if parsed.message_id.is_none() {
        head.push_str(&format!("Message-ID: <{message_id}>{nl}"));
    }
    let mut out = head.into_bytes();
    out.extend_from_slice(raw);
    let check = bureau_formats::mail::parse_eml(&out).map_err(|e| e.to_string())?;
    if check.date.is_none() || check.message_id.is_none() {
        return Err("a Date or Message-ID header could not be added".into());
    }
    Ok(out)
}

/// "2020-05-01" + "10:00 AM" → the turn's clock.
fn clock(date: &str, time: &str) -> Option<NaiveDateTime> {
    let d = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").ok()?;
    let t = time.trim();
    let t = ["%I:%M %p", "%I:%M%p", "%H:%M", "%H:%M:%S", "%I:%M:%S %p"]
        .iter()
        .find_map(|f| NaiveTime::parse_from_str(t, f).ok())?;
    Some(d.and_time(t))
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

/// Facts that make a task inexpressible in Bureau today, as a skip reason.
fn skip_reason(sub: &Subtask, tb: &Testbed) -> Option<&'static str> {
    let image = |p: &str| {
        let l = p.to_lowercase();
        [".jpg", ".jpeg", ".png", ".gif", ".bmp"]
            .iter()
            .any(|e| l.ends_with(e))
    };
    for r in &sub.evals {
        if let Eval::FileExist {
            place: Place::Data(p),
            negate: false,
        } = &r.eval
            && image(p)
            && !tb.data_files.contains(p)
            && !tb
                .data_files
                .iter()
                .any(|f| f.rsplit('/').next() == p.rsplit('/').next())
        {
            return Some(SKIP_IMAGE_OUTPUT);
        }
    }
    let content_checked = sub
        .evals
        .iter()
        .any(|r| !matches!(r.eval, Eval::FileExist { .. }));
    if !content_checked {
        return None;
    }
    let task = sub.task.to_lowercase();
    let images: Vec<&String> = tb.data_files.iter().filter(|f| image(f)).collect();
    if !images.is_empty() {
        let named = images.iter().any(|f| {
            let stem = f.rsplit('/').next().unwrap_or(f);
            let stem = stem
                .rsplit_once('.')
                .map(|(s, _)| s)
                .unwrap_or(stem)
                .to_lowercase();
            task.contains(&stem) || task.contains(&stem.replace('_', " "))
        });
        if named
            || [
                "image", "picture", "photo", "scan", "ocr", ".jpg", ".png", "jpg", "png",
            ]
            .iter()
            .any(|w| task.contains(w))
        {
            return Some(SKIP_OCR_INPUT);
        }
    }
    for f in &tb.data_files {
        if !f.to_lowercase().ends_with(".pdf") {
            continue;
        }
        let stem = f.rsplit('/').next().unwrap_or(f).to_lowercase();
        let stem = stem.trim_end_matches(".pdf");
        if !(task.contains("pdf") || task.contains(stem) || task.contains(&stem.replace('_', " ")))
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(tb.data_dir.join(f)) else {
            continue;
        };
        let text = bureau_formats::office::to_text(f, &bytes).unwrap_or_default();
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with("## Page"))
            .collect::<Vec<_>>()
            .join("");
        if body.trim().is_empty() {
            return Some(SKIP_SCANNED_PDF);
        }
    }
    None
}

/// The people a subtask's evaluations name (lower case), for empty calendars.
fn calendar_people(sub: &Subtask) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for r in &sub.evals {
        match &r.eval {
            Eval::Contain {
                place: Place::Calendar(n),
                ..
            }
            | Eval::FileExist {
                place: Place::Calendar(n),
                ..
            } => {
                out.insert(n.to_lowercase());
            }
            Eval::NoOverlap { username } => {
                out.insert(username.to_lowercase());
            }
            _ => {}
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn write_task(
    opts: &Options,
    folder: &str,
    id: &str,
    path: &Path,
    sub: &Subtask,
    at: NaiveDateTime,
    tb: &Testbed,
    summary: &mut Summary,
) -> Result<Result<(), Problem>, ImportError> {
    let user = sub.username.trim();
    let calendars: BTreeSet<String> = tb.calendars.keys().map(|k| k.to_lowercase()).collect();
    let missing_references: BTreeSet<String> = sub
        .evals
        .iter()
        .filter_map(|r| match &r.eval {
            Eval::ExactMatch {
                expected: Place::Reference(f),
                ..
            } if !tb.reference_dir.join(f).is_file() => Some(f.clone()),
            _ => None,
        })
        .collect();
    let ctx = rubric::Ctx {
        mode: opts.mode,
        user,
        data_files: &tb.data_files,
        mail_files: &tb.mail_files,
        all: &sub.evals,
        calendars: &calendars,
        missing_references: &missing_references,
    };
    let mut items = Vec::new();
    let mut problems = Vec::new();
    for (i, r) in sub.evals.iter().enumerate() {
        match rubric::item(&ctx, i, r) {
            Ok(it) => items.push(it),
            Err((m, h)) => problems.push(format!("evaluation {}: {m} — {h}", i + 1)),
        }
        if let Eval::DiffContain {
            input: Place::Original(f),
            ..
        } = &r.eval
            && !tb.data_files.contains(&ctx.resolve(f))
        {
            problems.push(format!(
                "evaluation {}: the original testbed/data/{f} the diff starts from does not exist — add it",
                i + 1
            ));
        }
    }
    if !problems.is_empty() {
        let line = sub.evals.first().and_then(|r| r.line);
        return Ok(Err(Problem::new(
            path,
            line,
            problems.join("; "),
            "fix the subtask's evaluation, or leave the subtask out",
        )));
    }
    findings(id, sub, tb, &ctx, at, summary);
    for f in &missing_references {
        summary.findings.push(Finding {
            task: id.to_string(),
            what: format!("evaluate_exact_match expects reference/{f}, which the task folder lacks: the subtask can never pass"),
        });
    }
    for name in &tb.fixed_uids {
        summary.findings.push(Finding {
            task: id.to_string(),
            what: format!("calendar/{name}.ics has events without a UID (RFC 5545 requires one); the import gives them one"),
        });
    }

    let task_dir = opts.out.join(id);
    let world = task_dir.join("world");
    // files: the workspace is testbed/data
    for f in &tb.data_files {
        let from = tb.data_dir.join(f);
        let bytes = std::fs::read(&from).map_err(io_err(&from))?;
        write(&world.join("files").join(f), &bytes)?;
    }
    let me = user.to_lowercase();
    // mailboxes; others' mail and every calendar are also readable as files, as
    // OfficeBench's apps read any user's mail and calendar
    for (owner, msgs) in &tb.mail {
        for (file, bytes) in msgs {
            write(&world.join("mail").join(address(owner)).join(file), bytes)?;
            if owner.to_lowercase() != me {
                write(
                    &world.join("files/testbed/emails").join(owner).join(file),
                    bytes,
                )?;
            }
        }
    }
    for (file, bytes) in &tb.loose_mail {
        write(&world.join("mail").join(address(user)).join(file), bytes)?;
    }
    for (name, text) in &tb.calendars {
        write(
            &world
                .join("calendar")
                .join(format!("{}.ics", address(name))),
            text.as_bytes(),
        )?;
        if name.to_lowercase() != me {
            write(
                &world
                    .join("files/testbed/calendar")
                    .join(format!("{name}.ics")),
                text.as_bytes(),
            )?;
        }
    }
    let seeded_cals: BTreeSet<String> = tb.calendars.keys().map(|k| k.to_lowercase()).collect();
    for name in calendar_people(sub) {
        if !seeded_cals.contains(&name) {
            write(
                &world.join("calendar").join(format!("{}.ics", address(&name))),
                b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bureau import officebench//EN\r\nEND:VCALENDAR\r\n",
            )?;
        }
    }
    // reference/: the task folder's reference files and the originals diffs start from
    let mut reference_files = BTreeSet::new();
    for r in &sub.evals {
        match &r.eval {
            Eval::ExactMatch {
                expected: Place::Reference(f),
                ..
            } if !missing_references.contains(f) => {
                reference_files.insert((tb.reference_dir.join(f), f.clone()));
            }
            Eval::DiffContain {
                input: Place::Original(f),
                ..
            } => {
                let f = ctx.resolve(f);
                reference_files.insert((tb.data_dir.join(&f), format!("original/{f}")));
            }
            _ => {}
        }
    }
    for (from, to) in &reference_files {
        let bytes = std::fs::read(from).map_err(io_err(from))?;
        write(&task_dir.join("reference").join(to), &bytes)?;
    }

    // the oracle: authored when the table has one, else derived, else none
    let resolve = |p: &str| ctx.resolve(p);
    let (oracle, kind) = match authored::oracle(id) {
        Some(o) => (Some(o), "authored"),
        None => {
            let seed = oracle::Seed {
                data_dir: &tb.data_dir,
                reference_dir: &tb.reference_dir,
                data_files: &tb.data_files,
                busy: &tb.busy,
                now: at,
                user,
            };
            match oracle::derive(&seed, &sub.evals, &resolve) {
                Ok(o) => (Some(o), "derived"),
                Err(why) => {
                    summary.no_oracle.insert(id.to_string(), why);
                    (None, "none")
                }
            }
        }
    };
    if let Some(o) = &oracle {
        let mut lines = String::new();
        for c in &o.calls {
            lines.push_str(&serde_json::to_string(c).unwrap_or_default());
            lines.push('\n');
        }
        write(&task_dir.join("solution/1.jsonl"), lines.as_bytes())?;
        if let Some(m) = &o.message {
            write(
                &task_dir.join("solution/1.message"),
                format!("{m}\n").as_bytes(),
            )?;
        }
    }

    let skip = skip_reason(sub, tb);
    let copies = tb.mail.keys().any(|o| o.to_lowercase() != me)
        || tb.calendars.keys().any(|n| n.to_lowercase() != me);
    let toml = task_toml(
        id,
        folder,
        path,
        sub,
        at,
        (kind, skip, copies),
        &items,
        opts,
    );
    write(&task_dir.join("task.toml"), toml.as_bytes())?;
    let checks: Vec<&String> = items.iter().filter_map(|i| i.check.as_ref()).collect();
    if !checks.is_empty() {
        let mut star = String::from(star::PRELUDE);
        for c in checks {
            star.push('\n');
            star.push_str(c);
        }
        write(&task_dir.join("checks.star"), star.as_bytes())?;
    }
    match skip {
        Some(reason) => summary
            .skipped
            .entry(reason.to_string())
            .or_default()
            .push(id.to_string()),
        None => {
            summary.imported.push(id.to_string());
            *summary.oracles.entry(kind.to_string()).or_insert(0) += 1;
        }
    }
    Ok(Ok(()))
}

/// Defects of the original the import can see without running anything.
fn findings(
    id: &str,
    sub: &Subtask,
    tb: &Testbed,
    ctx: &rubric::Ctx<'_>,
    at: NaiveDateTime,
    summary: &mut Summary,
) {
    let mut add = |what: String| {
        summary.findings.push(Finding {
            task: id.to_string(),
            what,
        })
    };
    let weekday = at.weekday();
    let full = match weekday {
        chrono::Weekday::Mon => "Monday",
        chrono::Weekday::Tue => "Tuesday",
        chrono::Weekday::Wed => "Wednesday",
        chrono::Weekday::Thu => "Thursday",
        chrono::Weekday::Fri => "Friday",
        chrono::Weekday::Sat => "Saturday",
        chrono::Weekday::Sun => "Sunday",
    };
    if !sub.weekday.trim().eq_ignore_ascii_case(full) {
        add(format!(
            "weekday \"{}\" does not match date {} (a {full}); the prompt gives the true weekday",
            sub.weekday, sub.date
        ));
    }
    for (owner, _) in &tb.loose_mail {
        add(format!(
            "emails/{owner} is in no person's folder, so OfficeBench's email app never lists it; imported into {}'s mailbox",
            sub.username
        ));
    }
    for r in &sub.evals {
        let mut paths = Vec::new();
        match &r.eval {
            Eval::CellValue { place: None, .. } => add(format!(
                "{} has no `file` argument: utils/evaluate.py raises KeyError, so the subtask can never pass{}",
                r.function,
                match ctx.inferred_xlsx() {
                    Some(p) if ctx.mode == Mode::Typed => format!(" (typed import checks {p})"),
                    _ => String::new(),
                }
            )),
            Eval::ExactMatch { doc_type, .. } if doc_type != "xlsx" => add(format!(
                "evaluate_exact_match on .{doc_type} compares two lists of PyPDF2/python-docx objects by identity, so it never passes"
            )),
            Eval::Contain {
                place: Place::Data(p),
                doc_type,
                ..
            } if (doc_type == "xlsx" && !p.to_lowercase().ends_with(".xlsx"))
                || (doc_type == "pdf" && !p.to_lowercase().ends_with(".pdf")) =>
            {
                add(format!(
                    "{} reads data/{p} as {doc_type}, whose reader raises on it: the subtask can never pass",
                    r.function
                ))
            }
            Eval::DiffContain { doc_type, .. } if doc_type == "doc" => add(
                "evaluate_diff_contain_text on doc calls .split on a list, so it never passes"
                    .into(),
            ),
            Eval::Contain {
                place: Place::Calendar(n),
                keywords,
                negate: false,
                ..
            } => {
                for k in keywords {
                    let u = k.to_ascii_uppercase();
                    if (u.starts_with("DTSTART:") || u.starts_with("DTEND:")) && u.ends_with('Z') {
                        let seeded = tb
                            .calendars
                            .iter()
                            .any(|(c, t)| c.eq_ignore_ascii_case(n) && t.contains(k.as_str()));
                        add(format!(
                            "keyword \"{k}\" on calendar/{n}.ics ends in Z, which OfficeBench's calendar app never writes (it stores naive times){}",
                            if seeded {
                                "; the seeded calendar already has it, so doing nothing passes"
                            } else {
                                ": no event made with its calendar app matches (Bureau's typed import compares the time)"
                            }
                        ));
                    }
                }
            }
            _ => {}
        }
        match &r.eval {
            Eval::Contain {
                place: Place::Data(p),
                ..
            }
            | Eval::CellValue {
                place: Some(Place::Data(p)),
                ..
            }
            | Eval::CellComparator {
                place: Place::Data(p),
                ..
            }
            | Eval::FileExist {
                place: Place::Data(p),
                ..
            }
            | Eval::ExactMatch {
                result: Place::Data(p),
                ..
            }
            | Eval::DiffContain {
                output: Place::Data(p),
                ..
            } => paths.push(p.clone()),
            _ => {}
        }
        for p in paths {
            if !tb.data_files.contains(&p) {
                let lower = p.to_lowercase();
                if let Some(real) = tb.data_files.iter().find(|f| f.to_lowercase() == lower) {
                    add(format!(
                        "{} reads data/{p}, but the seeded file is data/{real}: only a new file passes{}",
                        r.function,
                        if ctx.mode == Mode::Typed {
                            " (typed import reads the seeded file)"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn task_toml(
    id: &str,
    folder: &str,
    path: &Path,
    sub: &Subtask,
    at: NaiveDateTime,
    (oracle, skip, copies): (&str, Option<&str>, bool),
    items: &[rubric::Item],
    opts: &Options,
) -> String {
    let apps: usize = folder
        .split('-')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let user = sub.username.trim();
    let weekday = at.format("%A");
    let title: String = {
        let t = sub.task.split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > 100 {
            format!("{}…", t.chars().take(99).collect::<String>())
        } else {
            t
        }
    };
    let rel = path
        .strip_prefix(&opts.checkout)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string());
    let mut notes = vec![
        format!("{user}'s files are the workspace (OfficeBench's /testbed/data)."),
        format!(
            "Everyone's mail address is their name in lower case at {DOMAIN} ({user}: {}).",
            address(user)
        ),
        "To put an event on someone else's calendar, invite them to an event you create.".into(),
    ];
    if copies {
        notes.push("Other people's calendars and mailboxes, which OfficeBench's apps can read, are copied under testbed/ in the workspace.".into());
    }
    notes.push("If the task asks a question, give the answer in your final message.".into());
    let prompt = format!(
        "Today is {} ({weekday}). The current time is {}. You are an AI assistant for user {user}.\n\n{}\n\nNotes on this office:\n{}",
        sub.date.trim(),
        sub.time.trim(),
        sub.task.trim(),
        notes
            .iter()
            .map(|n| format!("- {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let mut s = format!(
        "# Imported from OfficeBench {rel} by `bureau import officebench`{}.\n# Do not edit: import again. See docs/import-officebench.md.\n",
        if opts.mode == Mode::Strict {
            " --strict-original"
        } else {
            ""
        }
    );
    s.push_str(&format!("id = {}\n", q(id)));
    s.push_str(&format!("title = {}\n", q(&title)));
    s.push_str(&format!("persona = {}\n", q(user)));
    s.push_str(&format!("category = {}\n", q(&format!("{apps}-app"))));
    s.push_str(&format!(
        "difficulty = {}\n",
        q(match apps {
            1 => "easy",
            2 => "medium",
            _ => "hard",
        })
    ));
    s.push_str("abilities = [\"officebench\"]\n");
    s.push_str("apps = [\"files\", \"mail\", \"calendar\", \"sheets\"]\n");
    s.push_str("timezone = \"UTC\"\n");
    s.push_str(&format!("oracle = {}\n", q(oracle)));
    if let Some(why) = skip {
        s.push_str(&format!("skip_reason = {}\n", q(why)));
    }
    s.push_str(&format!(
        "\n[user]\nname = {}\nemail = {}\n",
        q(user),
        q(&address(user))
    ));
    s.push_str(&format!(
        "\n[[turn]]\nat = {}\nprompt = {}\n",
        q(&at.format("%Y-%m-%dT%H:%M:%S").to_string()),
        q_multiline(&prompt)
    ));
    for it in items {
        s.push_str(&format!(
            "\n[[rubric]]\nid = {}\ndescription = {}\nkind = {}\nweight = {}\n{}\n",
            q(&it.id),
            q(&it.description),
            q(it.kind),
            it.weight,
            it.evaluator
        ));
    }
    s
}

#[cfg(test)]
mod tests {
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
