//! The built-in predicates a rubric item can use instead of a Starlark check
//! ([`bureau_core::task::Predicate`]). Each reads typed world state and says, in its detail,
//! what matched or what was missing.

use bureau_core::task::{CalendarEventFilter, MailSentFilter, Predicate, Task};
use bureau_core::time::WorldTime;
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::VerdictStatus;
use bureau_formats::calendar::CalEvent;
use bureau_formats::text::contains_keyword;
use bureau_world::calendar::is_cancelled;
use bureau_world::mail::SENT;
use bureau_world::{StoredMail, World};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::view::iso;

mod chat;
mod code;
mod image;
mod kb;
mod sheets;
mod tracker;

/// Evaluate a built-in predicate against the world: `Passed` or `Failed` with a detail saying
/// what matched or what was missing. Predicates do not return `Error` for the agent's work: a
/// missing or binary file is an agent outcome, not a broken check; only a broken task (an
/// `image` predicate's unreadable reference picture) is an `Error`.
pub fn eval_predicate(
    task: &Task,
    p: &Predicate,
    world: &World,
    trajectory: &[Step],
) -> (VerdictStatus, String) {
    match p {
        Predicate::FileExists { path } => file_exists(world, path),
        Predicate::FileAbsent { path } => {
            if world.files().exists(path) {
                (
                    VerdictStatus::Failed,
                    format!("`{path}` exists but should not"),
                )
            } else {
                (VerdictStatus::Passed, format!("`{path}` is absent"))
            }
        }
        Predicate::FileContains { path, all, none } => file_contains(world, path, all, none),
        Predicate::MailSent(f) => mail_sent(task, world, f),
        Predicate::CalendarEvent(f) => calendar_event(task, world, f),
        Predicate::CalendarNoOverlap { user, from, to } => {
            no_overlap(task, world, user.as_deref(), from.as_ref(), to.as_ref())
        }
        Predicate::ChatPosted(f) => chat::chat_posted(task, world, f),
        Predicate::ChatChannel(f) => chat::chat_channel(world, f),
        Predicate::ColleagueAsked(f) => chat::colleague_asked(task, world, f),
        Predicate::KbPage(f) => kb::kb_page(task, world, f),
        Predicate::KbRow(f) => kb::kb_row(task, world, f),
        Predicate::SheetCell(f) => sheets::sheet_cell(task, world, f),
        Predicate::TrackerIssue(f) => tracker::tracker_issue(task, world, f),
        Predicate::MergeRequest(f) => code::merge_request(task, world, f),
        Predicate::RepoFileContains(f) => code::repo_file_contains(task, world, f),
        Predicate::FinalMessage { all, none } => final_message(world, trajectory, all, none),
        Predicate::Image(f) => image::image(task, world, f),
    }
}

/// The agent's last message of turn `turn` (its final answer when it gave one).
pub fn final_message_of(trajectory: &[Step], turn: u32) -> Option<&str> {
    trajectory
        .iter()
        .rev()
        .filter(|s| s.turn == turn)
        .find_map(|s| match &s.kind {
            StepKind::Message { text } => Some(text.as_str()),
            _ => None,
        })
}

fn final_message(
    world: &World,
    trajectory: &[Step],
    all: &[String],
    none: &[String],
) -> (VerdictStatus, String) {
    let turn = world.turn();
    let Some(text) = final_message_of(trajectory, turn) else {
        return (
            VerdictStatus::Failed,
            format!("the agent gave no final message in turn {turn}"),
        );
    };
    let missing: Vec<String> = all
        .iter()
        .filter(|k| !contains_keyword(text, k))
        .cloned()
        .collect();
    let present: Vec<String> = none
        .iter()
        .filter(|k| contains_keyword(text, k))
        .cloned()
        .collect();
    if missing.is_empty() && present.is_empty() {
        (
            VerdictStatus::Passed,
            format!("the final message of turn {turn} has {}", quoted(all)),
        )
    } else {
        let mut why = Vec::new();
        if !missing.is_empty() {
            why.push(format!("lacks {}", quoted(&missing)));
        }
        if !present.is_empty() {
            why.push(format!("has {}", quoted(&present)));
        }
        (
            VerdictStatus::Failed,
            format!("the final message of turn {turn} {}", why.join(" and ")),
        )
    }
}

pub(crate) fn status(ok: bool) -> VerdictStatus {
    if ok {
        VerdictStatus::Passed
    } else {
        VerdictStatus::Failed
    }
}

pub(crate) fn quoted(v: &[String]) -> String {
    v.iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn file_exists(world: &World, path: &str) -> (VerdictStatus, String) {
    let files = world.files();
    if files.is_dir(path) {
        (
            VerdictStatus::Failed,
            format!("`{path}` is a directory, not a file"),
        )
    } else if files.exists(path) {
        (VerdictStatus::Passed, format!("`{path}` exists"))
    } else {
        (
            VerdictStatus::Failed,
            format!("no file `{path}` in the workspace"),
        )
    }
}

fn file_contains(
    world: &World,
    path: &str,
    all: &[String],
    none: &[String],
) -> (VerdictStatus, String) {
    let files = world.files();
    if !files.exists(path) {
        return (
            VerdictStatus::Failed,
            format!("no file `{path}` in the workspace"),
        );
    }
    let bytes = match files.read_bytes(path) {
        Ok(b) => b,
        Err(e) => return (VerdictStatus::Failed, e),
    };
    // Office files (.docx, .xlsx, .pptx, .pdf, ...) are read through their text rendering,
    // the same text `files_read` shows the agent (parsed in a child process).
    use bureau_formats::office::{Format, render};
    let format = Format::detect(path, &bytes);
    let text: std::borrow::Cow<'_, str> =
        if format == Format::Sheet || bureau_world::files::is_binary(&bytes) {
            if format == Format::Text {
                return (
                    VerdictStatus::Failed,
                    format!(
                        "`{path}` is binary ({} bytes) and no document format Bureau reads",
                        bytes.len()
                    ),
                );
            }
            match render(path, &bytes) {
                Ok(r) => std::borrow::Cow::Owned(r.text),
                Err(e) => {
                    return (
                        VerdictStatus::Failed,
                        format!("`{path}` does not open as a {} file: {e}", format.name()),
                    );
                }
            }
        } else {
            String::from_utf8_lossy(&bytes)
        };
    let missing: Vec<String> = all
        .iter()
        .filter(|k| !contains_keyword(&text, k))
        .cloned()
        .collect();
    let forbidden: Vec<String> = none
        .iter()
        .filter(|k| contains_keyword(&text, k))
        .cloned()
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("lacks {}", quoted(&missing)));
    }
    if !forbidden.is_empty() {
        problems.push(format!("contains forbidden {}", quoted(&forbidden)));
    }
    if problems.is_empty() {
        let mut parts = Vec::new();
        if !all.is_empty() {
            parts.push(format!("contains {}", quoted(all)));
        }
        if !none.is_empty() {
            parts.push(format!("has none of {}", quoted(none)));
        }
        (
            VerdictStatus::Passed,
            format!("`{path}` {}", parts.join(" and ")),
        )
    } else {
        (
            VerdictStatus::Failed,
            format!("`{path}` {}", problems.join(" and ")),
        )
    }
}

pub(crate) fn count_range(min: u32, max: Option<u32>) -> String {
    match max {
        Some(max) if max == min => format!("exactly {min}"),
        Some(max) => format!("{min} to {max}"),
        None => format!("at least {min}"),
    }
}

pub(crate) fn within(count: usize, min: u32, max: Option<u32>) -> bool {
    count >= min as usize && max.is_none_or(|m| count <= m as usize)
}

fn lower(v: &[String]) -> Vec<String> {
    v.iter().map(|s| s.trim().to_lowercase()).collect()
}

fn mail_matches(m: &StoredMail, f: &MailSentFilter) -> bool {
    let p = &m.mail;
    let to_cc: Vec<&str> = p.to.iter().chain(&p.cc).map(|a| a.email.as_str()).collect();
    let cc: Vec<&str> = p.cc.iter().map(|a| a.email.as_str()).collect();
    let all = m.recipients();
    lower(&f.to).iter().all(|a| to_cc.contains(&a.as_str()))
        && lower(&f.cc).iter().all(|a| cc.contains(&a.as_str()))
        && lower(&f.not_to).iter().all(|a| !all.contains(a))
        && f.subject_contains
            .iter()
            .all(|k| contains_keyword(&p.subject, k))
        && f.body_contains.iter().all(|k| contains_keyword(&p.text, k))
        && f.body_excludes
            .iter()
            .all(|k| !contains_keyword(&p.text, k))
        && f.contains
            .iter()
            .all(|k| contains_keyword(&p.subject, k) || contains_keyword(&p.text, k))
        && f.attachments.iter().all(|name| {
            p.attachments
                .iter()
                .any(|a| a.filename.trim().eq_ignore_ascii_case(name.trim()))
        })
}

fn describe_mail_filter(f: &MailSentFilter) -> String {
    let mut parts = Vec::new();
    if !f.to.is_empty() {
        parts.push(format!("to {}", f.to.join(", ")));
    }
    if !f.cc.is_empty() {
        parts.push(format!("cc {}", f.cc.join(", ")));
    }
    if !f.not_to.is_empty() {
        parts.push(format!("not to {}", f.not_to.join(", ")));
    }
    if !f.subject_contains.is_empty() {
        parts.push(format!(
            "with subject containing {}",
            quoted(&f.subject_contains)
        ));
    }
    if !f.body_contains.is_empty() {
        parts.push(format!("with body containing {}", quoted(&f.body_contains)));
    }
    if !f.body_excludes.is_empty() {
        parts.push(format!("with body without {}", quoted(&f.body_excludes)));
    }
    if !f.contains.is_empty() {
        parts.push(format!(
            "mentioning {} in subject or body",
            quoted(&f.contains)
        ));
    }
    if !f.attachments.is_empty() {
        parts.push(format!("attaching {}", quoted(&f.attachments)));
    }
    parts.join(" ")
}

fn mail_sent(task: &Task, world: &World, f: &MailSentFilter) -> (VerdictStatus, String) {
    let sent = world.mail().messages(&task.user.email, Some(SENT));
    let matching: Vec<&StoredMail> = sent
        .iter()
        .copied()
        .filter(|m| mail_matches(m, f))
        .collect();
    let n = matching.len();
    let desc = describe_mail_filter(f);
    let noun = if n == 1 { "message" } else { "messages" };
    let mut detail = if desc.is_empty() {
        format!("{n} sent {noun}")
    } else {
        format!("{n} sent {noun} {desc}")
    };
    detail.push_str(&format!(
        " (expected {}; {} sent in total)",
        count_range(f.min, f.max),
        sent.len()
    ));
    if !matching.is_empty() {
        let subjects: Vec<String> = matching
            .iter()
            .take(5)
            .map(|m| format!("'{}'", m.mail.subject))
            .collect();
        detail.push_str(&format!("; matched: {}", subjects.join(", ")));
    }
    (status(within(n, f.min, f.max)), detail)
}

fn to_utc(t: &WorldTime) -> DateTime<Utc> {
    t.with_timezone(&Utc)
}

fn show(t: &DateTime<Utc>, tz: Tz) -> String {
    iso(&t.with_timezone(&tz).fixed_offset())
}

fn event_matches(e: &CalEvent, f: &CalendarEventFilter) -> bool {
    let attendees: Vec<String> = e.attendees.iter().map(|a| a.email.to_lowercase()).collect();
    is_cancelled(e) == f.cancelled
        && f.summary_contains
            .iter()
            .all(|k| contains_keyword(&e.summary, k))
        && f.location_contains
            .iter()
            .all(|k| contains_keyword(&e.location, k))
        && lower(&f.attendees).iter().all(|a| attendees.contains(a))
        && f.start.as_ref().is_none_or(|s| to_utc(s) == e.start)
        && f.end.as_ref().is_none_or(|t| to_utc(t) == e.end)
}

fn calendar_event(task: &Task, world: &World, f: &CalendarEventFilter) -> (VerdictStatus, String) {
    let tz = task.timezone;
    let user = f
        .user
        .clone()
        .unwrap_or_else(|| task.user.email.clone())
        .to_lowercase();
    let events = world.calendar().events(&user);
    let matching: Vec<&CalEvent> = events
        .iter()
        .copied()
        .filter(|e| event_matches(e, f))
        .collect();
    let n = matching.len();
    let mut parts = vec![if f.cancelled {
        "cancelled".to_string()
    } else {
        "live".to_string()
    }];
    let noun = if n == 1 { "event" } else { "events" };
    parts.push(format!("{noun} in {user}'s calendar"));
    if !f.summary_contains.is_empty() {
        parts.push(format!(
            "with summary containing {}",
            quoted(&f.summary_contains)
        ));
    }
    if !f.location_contains.is_empty() {
        parts.push(format!(
            "with location containing {}",
            quoted(&f.location_contains)
        ));
    }
    if !f.attendees.is_empty() {
        parts.push(format!("inviting {}", f.attendees.join(", ")));
    }
    if let Some(s) = &f.start {
        parts.push(format!("starting {}", show(&to_utc(s), tz)));
    }
    if let Some(e) = &f.end {
        parts.push(format!("ending {}", show(&to_utc(e), tz)));
    }
    let mut detail = format!(
        "{n} {} (expected {})",
        parts.join(" "),
        count_range(f.min, f.max)
    );
    if !matching.is_empty() {
        let shown: Vec<String> = matching
            .iter()
            .take(5)
            .map(|e| format!("'{}' {}", e.summary, show(&e.start, tz)))
            .collect();
        detail.push_str(&format!("; matched: {}", shown.join(", ")));
    }
    (status(within(n, f.min, f.max)), detail)
}

fn no_overlap(
    task: &Task,
    world: &World,
    user: Option<&str>,
    from: Option<&WorldTime>,
    to: Option<&WorldTime>,
) -> (VerdictStatus, String) {
    let tz = task.timezone;
    let user = user.unwrap_or(&task.user.email).to_lowercase();
    let pairs = world
        .calendar()
        .overlaps(&user, from.map(to_utc), to.map(to_utc));
    if pairs.is_empty() {
        return (
            VerdictStatus::Passed,
            format!("no overlapping live events in {user}'s calendar"),
        );
    }
    let shown: Vec<String> = pairs
        .iter()
        .take(5)
        .map(|(a, b)| {
            format!(
                "'{}' ({} – {}) overlaps '{}' ({} – {})",
                a.summary,
                show(&a.start, tz),
                show(&a.end, tz),
                b.summary,
                show(&b.start, tz),
                show(&b.end, tz)
            )
        })
        .collect();
    (
        VerdictStatus::Failed,
        format!(
            "{} overlapping pair(s) in {user}'s calendar: {}",
            pairs.len(),
            shown.join("; ")
        ),
    )
}
