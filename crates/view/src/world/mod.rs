//! World state: what changed in a trial's world between two snapshots, per service, and its
//! HTML rendering for the trial page.
//!
//! - [`turns`] / [`stages`]: the snapshots a trial directory holds.
//! - [`turn_changes`]: turn n compared with turn n−1 (turn 1 with `turn-0.json`, the seeded
//!   world; a run from before Bureau kept it shows turn 1 whole, with a note saying why);
//!   [`stage_changes`] does the same for a feedback round.
//! - [`render_html`]: an HTML fragment (one `<section id="world-<service>">` per service);
//!   [`render_html_prefixed`] prefixes every id, for several turns on one page.
//! - [`file_preview`] / [`render_preview_html`]: one deliverable, its text or its picture.
//! - [`object_anchor`]: the id of a world object's entry, for links from rubric items.
//!
//! Nothing here panics or fails hard on a bad trial directory: what could not be read is
//! listed in [`WorldChanges::problems`], naming the file and why.
//!
//! CSS classes used by the fragments (styled by the viewer's stylesheet):
//! - layout: `world` (wrapper), `world-service` (each section), `world-note`,
//!   `world-problems`, `world-empty`, `other` (the `<details>` of unmodelled changes),
//!   `preview` (a deliverable);
//! - marks, on list items, table rows, articles and events: `added`, `changed`, `deleted`,
//!   `cancelled`, `moved` (where a moved event was); `mark` is the badge naming the status
//!   (`mark added`, ..., `mark sent`, `mark received` for mail);
//! - lists: `files`, `objects`, `events`, `commits` (`<ul>`), `commit`, `event`,
//!   `chat-message`, `mail` with `sent` / `received`, `mail-head`, `mail-body`;
//! - text: `path`, `meta`, `time`, `owners`, `truncated`;
//! - tables: `fields` (rows `path` / `old` / `new`), `cells` (sheet cells), `week` (a week
//!   grid; `today` on the clock's day), `diff` inside `<details class="diff-wrap">` (rows
//!   `hunk`, `ins`, `del`, `ctx`; cells `ln` for line numbers and `text`, whose whitespace
//!   should be kept: `white-space: pre-wrap`);
//! - pictures: `world-image` (an `<img src="data:...">`).

mod anchor;
mod calendar;
mod diff;
mod files;
mod load;
mod mail;
mod render;
mod services;

use bureau_world::trial_files::TrialFiles;

use serde::Serialize;
use serde_json::Value;

pub use anchor::object_anchor;
pub use calendar::{CalendarChanges, Day, EventChange, Week, WeekEvent};
pub use diff::{DiffLine, FieldChange, Hunk, ObjectChange, Status, TextDiff};
pub use files::{FileChange, FileChanges, FileMeta, Preview, Rendering, file_preview};
pub use load::{Stage, stages};
pub use mail::{MailChanges, MailItem};
pub use render::{render_html, render_html_prefixed, render_preview_html};
pub use services::{
    CellChange, ChatChanges, ChatItem, CodeChanges, CommitItem, Conversation, Group, ObjectChanges,
    SheetChanges,
};

/// What changed in the world in one turn (or feedback round), per service.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct WorldChanges {
    pub turn: u32,
    /// For a feedback round: its number.
    pub round: Option<u32>,
    /// The snapshot shown, `snapshots/turn-<n>.json`.
    pub snapshot: String,
    /// The snapshot compared with (`None`: everything is shown as added).
    pub base: Option<String>,
    /// The turn of that snapshot (0: the seeded world; for a feedback round compared with
    /// the round before it, that round's turn).
    pub since: Option<u32>,
    /// Why the comparison is not the usual one (no seeded world recorded, ...).
    pub note: Option<String>,
    /// The world clock of the turn, RFC 3339.
    pub clock: Option<String>,
    pub files: FileChanges,
    pub mail: MailChanges,
    pub calendar: CalendarChanges,
    pub chat: ChatChanges,
    pub kb: ObjectChanges,
    pub sheets: SheetChanges,
    pub tracker: ObjectChanges,
    pub code: CodeChanges,
    /// Services and snapshot fields this viewer does not model, field by field.
    pub other: Vec<FieldChange>,
    /// What could not be read, and why (file and reason).
    pub problems: Vec<String>,
}

impl WorldChanges {
    /// Nothing changed (problems aside).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.mail.is_empty()
            && self.calendar.is_empty()
            && self.chat.is_empty()
            && self.kb.is_empty()
            && self.sheets.is_empty()
            && self.tracker.is_empty()
            && self.code.is_empty()
            && self.other.is_empty()
    }
}

/// The turns whose end-of-turn snapshot (`snapshots/turn-<n>.json`) the trial holds, sorted
/// (0 is the seeded world).
pub fn turns(trial: &TrialFiles) -> Vec<u32> {
    let mut v: Vec<u32> = stages(trial)
        .into_iter()
        .filter_map(|s| match s {
            Stage::Turn(n) => Some(n),
            Stage::Round(..) => None,
        })
        .collect();
    v.sort_unstable();
    v
}

/// What changed during turn `turn`: `turn-<turn>.json` against the latest earlier turn's
/// snapshot (`turn-0.json`, the seeded world, for turn 1). Never fails: see
/// [`WorldChanges::problems`].
pub fn turn_changes(trial: &TrialFiles, turn: u32) -> WorldChanges {
    let earlier = turns(trial).into_iter().filter(|t| *t < turn).max();
    changes(trial, Stage::Turn(turn), earlier.map(Stage::Turn))
}

/// What changed during one stage: a feedback round against the stage before it (the
/// previous round, or the previous turn), a turn as [`turn_changes`] does.
pub fn stage_changes(trial: &TrialFiles, stage: Stage) -> WorldChanges {
    match stage {
        Stage::Turn(n) => turn_changes(trial, n),
        Stage::Round(..) => {
            let all = stages(trial);
            let before = all
                .iter()
                .position(|s| *s == stage)
                .and_then(|i| i.checked_sub(1))
                .map(|i| all[i]);
            changes(trial, stage, before)
        }
    }
}

fn changes(trial: &TrialFiles, stage: Stage, base: Option<Stage>) -> WorldChanges {
    let (turn, round) = match stage {
        Stage::Turn(n) => (n, None),
        Stage::Round(n, r) => (n, Some(r)),
    };
    let mut out = WorldChanges {
        turn,
        round,
        snapshot: format!("snapshots/{}", stage.file_name()),
        ..Default::default()
    };
    let mut problems = Vec::new();
    let new = match load::load_snapshot(trial, stage, &mut problems) {
        Ok(v) => v,
        Err(why) => {
            problems.push(why);
            out.problems = problems;
            return out;
        }
    };
    let old = match base {
        None => {
            out.note = Some(if turn == 0 {
                "Turn 0 is the seeded world, before the agent's first turn: all of it is shown \
                 as added."
                    .into()
            } else if turn == 1 {
                "This trial has no snapshot of the seeded world (snapshots/turn-0.json; runs \
                 before it was kept lack it), so the whole world at the end of this turn is \
                 shown as added."
                    .into()
            } else {
                format!(
                    "No earlier snapshot was found, so the whole world at the end of turn \
                     {turn} is shown as added."
                )
            });
            None
        }
        Some(b) => match load::load_snapshot(trial, b, &mut problems) {
            Ok(v) => {
                out.base = Some(format!("snapshots/{}", b.file_name()));
                out.since = Some(match b {
                    Stage::Turn(n) | Stage::Round(n, _) => n,
                });
                Some(v)
            }
            Err(why) => {
                problems.push(why);
                out.note = Some(format!(
                    "The earlier snapshot (snapshots/{}) could not be read, so the whole world \
                     at the end of this turn is shown as added.",
                    b.file_name()
                ));
                None
            }
        },
    };
    let clock = new
        .get("now")
        .and_then(Value::as_str)
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
    out.clock = clock.map(|c| c.to_rfc3339());
    let old = old.as_ref();
    out.files = files::diff_files(trial, old, &new, &mut problems);
    let svc = |v: Option<&Value>, name: &str| -> Option<Value> {
        v.and_then(|v| v.get("services"))
            .and_then(|s| s.get(name))
            .cloned()
    };
    let pair = |name: &str| (svc(old, name), svc(Some(&new), name));
    let (a, b) = pair("mail");
    out.mail = mail::diff_mail(a.as_ref(), b.as_ref());
    let (a, b) = pair("calendar");
    out.calendar = calendar::diff_calendar(a.as_ref(), b.as_ref(), clock);
    let (a, b) = pair("chat");
    out.chat = services::diff_chat(trial, a.as_ref(), b.as_ref());
    let (a, b) = pair("kb");
    out.kb = services::diff_kb(a.as_ref(), b.as_ref());
    let (a, b) = pair("sheets");
    out.sheets = services::diff_sheets(a.as_ref(), b.as_ref());
    let (a, b) = pair("tracker");
    out.tracker = services::diff_tracker(a.as_ref(), b.as_ref());
    let (a, b) = pair("code");
    out.code = services::diff_code(a.as_ref(), b.as_ref());
    const MODELLED: [&str; 7] = [
        "mail", "calendar", "chat", "kb", "sheets", "tracker", "code",
    ];
    out.other = diff::rest_diff(
        "services",
        old.and_then(|v| v.get("services")),
        new.get("services"),
        &MODELLED,
    );
    // The log is the trial page's timeline (events.jsonl); the turn number and clock are
    // shown above; files, dirs, links and specials are the files section.
    out.other.extend(diff::rest_diff(
        "",
        old,
        Some(&new),
        &[
            "turn", "now", "files", "dirs", "symlinks", "specials", "services", "log",
        ],
    ));
    out.problems = problems;
    out
}
