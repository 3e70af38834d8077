//! The task format (v1) and its validating loader. The format is documented in
//! `docs/task-format.md`; this module is its reference implementation.
//!
//! A task is a directory:
//!
//! ```text
//! task.toml          metadata, turns with their events, rubric
//! checks.star        Starlark checker functions (optional)
//! world/files/       the agent's initial workspace
//! world/mail/        <user>/*.eml or <user>.mbox
//! world/calendar/    <user>.ics
//! turns/<n>/         files injected by the events of turn n
//! solution/<n>.jsonl the oracle's tool calls for turn n
//! history.json       earlier user–assistant sessions (optional; see [`crate::history`])
//! ```
//!
//! [`Task::load`] never panics on a malformed task: it returns every problem it finds as a
//! [`TaskError`] with `path:line:col`, what is wrong and what to do.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use chrono_tz::Tz;
use serde::Deserialize;
use toml::Spanned;

use crate::error::{Location, TaskError, TaskErrors};
use crate::time::{WorldTime, parse_tz, parse_world_time};
use crate::tool::ToolCall;
use crate::verdict::{RubricKind, TurnRef};

/// The services a task may declare in `apps`.
pub const KNOWN_APPS: &[&str] = &[
    "files", "mail", "calendar", "chat", "kb", "sheets", "tracker", "code",
];

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Difficulty {
    Easy,
    Medium,
    Hard,
}

impl Difficulty {
    pub fn as_str(&self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
        }
    }
}

/// Who the agent acts as: its mailbox and calendar.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub name: String,
    pub email: String,
}

/// An edge of the task's file dependency graph (Workspace-Bench).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct FileDep {
    pub from: String,
    pub to: String,
}

// --- Outputs and the file dependency graph (issue 5, §4–5) -----------------------------------

/// Where a task expects its deliverables (`[outputs]`): a folder and/or expected file names.
/// Output collection (`bureau_check::outputs`) uses it; an empty spec still collects the files
/// the agent changed and the paths it named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputsSpec {
    /// A workspace folder for deliverables (`"deliverables/"`); every file under it is
    /// collected. Normalised without a trailing `/`.
    #[serde(default)]
    pub folder: Option<String>,
    /// Expected deliverable file names (no folders), matched fuzzily anywhere in the workspace.
    #[serde(default)]
    pub names: Vec<String>,
}

/// The task's ground-truth file dependency graph (Workspace-Bench): the files the task depends
/// on or produces (nodes) and the source → derived-file links (edges).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDepGraph {
    pub nodes: BTreeSet<String>,
    pub edges: BTreeSet<(String, String)>,
}

/// A workspace path in canonical form: `.` parts and repeated or trailing `/` removed, `a/../b`
/// folded. `None` when it is empty, absolute or leaves the workspace.
pub fn normalize_rel_path(p: &str) -> Option<String> {
    if p.starts_with('/') || p.starts_with('\\') || Path::new(p).is_absolute() {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            x => parts.push(x),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Per-turn limits on the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Tool calls per turn.
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// Wall-clock seconds per turn.
    #[serde(default = "default_wall_seconds")]
    pub wall_seconds: u64,
}

fn default_max_steps() -> u32 {
    100
}
fn default_wall_seconds() -> u64 {
    1800
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: default_max_steps(),
            wall_seconds: default_wall_seconds(),
        }
    }
}

/// `[feedback]`: the task's own settings for the simulated user's feedback rounds (see
/// `docs/feedback.md`). The run decides whether there are rounds (`bureau run --feedback
/// <n>`); `rounds` caps them for this task (0 = never for this task) and `threshold` replaces
/// the run's threshold.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFeedback {
    #[serde(default)]
    pub rounds: Option<u32>,
    /// Weighted score (0–1) of a turn's items that satisfies the user.
    #[serde(default)]
    pub threshold: Option<f64>,
}

/// A calendar event written inline in `task.toml` (or read from an `.ics` file by the world).
#[derive(Debug, Clone, PartialEq)]
pub struct InlineEvent {
    pub uid: String,
    pub summary: String,
    pub description: String,
    pub location: String,
    pub start: WorldTime,
    pub end: WorldTime,
    pub organizer: Option<String>,
    pub attendees: Vec<String>,
}

/// Changes to an existing calendar event; `None` keeps the old value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventChanges {
    pub summary: Option<String>,
    pub description: Option<String>,
    pub location: Option<String>,
    pub start: Option<WorldTime>,
    pub end: Option<WorldTime>,
    pub attendees: Option<Vec<String>>,
}

/// What a task event does. Source files are absolute paths under `turns/<n>/`.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    AddFile {
        path: String,
        source: PathBuf,
    },
    ReplaceFile {
        path: String,
        source: PathBuf,
    },
    DeleteFile {
        path: String,
    },
    DeliverMail {
        to: String,
        folder: String,
        source: PathBuf,
    },
    AddCalendarEvent {
        user: String,
        event: InlineEvent,
    },
    AddCalendarIcs {
        user: String,
        source: PathBuf,
    },
    UpdateCalendarEvent {
        user: String,
        uid: String,
        changes: EventChanges,
    },
    CancelCalendarEvent {
        user: String,
        uid: String,
    },
    /// Someone in the office acts through a world tool, as if they were the agent: a colleague
    /// posts in chat, edits a sheet, moves a tracker issue, comments on a merge request. `actor`
    /// is a person of `world/people.toml` (email or chat handle); `tool` a world tool name.
    Act {
        actor: String,
        tool: String,
        args: serde_json::Value,
    },
}

impl EventKind {
    /// The `kind = "..."` name of this event.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::AddFile { .. } => "add_file",
            EventKind::ReplaceFile { .. } => "replace_file",
            EventKind::DeleteFile { .. } => "delete_file",
            EventKind::DeliverMail { .. } => "deliver_mail",
            EventKind::AddCalendarEvent { .. } | EventKind::AddCalendarIcs { .. } => {
                "add_calendar_event"
            }
            EventKind::UpdateCalendarEvent { .. } => "update_calendar_event",
            EventKind::CancelCalendarEvent { .. } => "cancel_calendar_event",
            EventKind::Act { .. } => "act",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// A silent event changes the world without any mention in the turn's prompt.
    pub silent: bool,
    pub kind: EventKind,
    pub location: Location,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// 1-based.
    pub index: u32,
    /// The world clock during this turn.
    pub at: WorldTime,
    pub prompt: String,
    pub events: Vec<Event>,
}

/// Filters on mail the agent sent (messages in the user's `Sent` folder). All given filters
/// must hold for a message to match; the item passes when the number of matching messages is
/// within `[min, max]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MailSentFilter {
    /// Each address must be among the recipients (To or Cc).
    #[serde(default)]
    pub to: Vec<String>,
    /// Each address must be in Cc.
    #[serde(default)]
    pub cc: Vec<String>,
    /// Each address must not be a recipient (To, Cc or Bcc).
    #[serde(default)]
    pub not_to: Vec<String>,
    #[serde(default)]
    pub subject_contains: Vec<String>,
    #[serde(default)]
    pub body_contains: Vec<String>,
    #[serde(default)]
    pub body_excludes: Vec<String>,
    /// Each name must be the file name of an attachment.
    #[serde(default)]
    pub attachments: Vec<String>,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

fn one() -> u32 {
    1
}

/// Filters on calendar events of one user (default: the task's user).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CalendarEventFilter {
    pub user: Option<String>,
    pub summary_contains: Vec<String>,
    pub start: Option<WorldTime>,
    pub end: Option<WorldTime>,
    pub attendees: Vec<String>,
    pub location_contains: Vec<String>,
    /// Match cancelled events instead of live ones.
    pub cancelled: bool,
    pub min: u32,
    pub max: Option<u32>,
}

/// Chat messages posted in a channel or a direct conversation (default author: the task's
/// user). All given filters must hold; the item passes when the count is within `[min, max]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChatPostedFilter {
    /// Channel name, without `#`.
    pub channel: Option<String>,
    /// A direct conversation with this person (email or handle).
    pub dm_with: Option<String>,
    /// Author (email or handle); default the task's user.
    pub by: Option<String>,
    /// Each person (email or handle) must be mentioned.
    #[serde(default)]
    pub mentions: Vec<String>,
    /// Keywords that must all appear (case-insensitive, numbers normalised).
    #[serde(default)]
    pub contains: Vec<String>,
    /// Keywords none of which may appear.
    #[serde(default)]
    pub excludes: Vec<String>,
    /// Only replies in a thread (`true`) or only top-level messages (`false`).
    pub in_thread: Option<bool>,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

/// The user asked a colleague about something: a chat message to them (DM, or a mention) or a
/// mail to them, containing every keyword of `about`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ColleagueAskedFilter {
    /// The colleague (email or handle).
    pub who: String,
    #[serde(default)]
    pub about: Vec<String>,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

/// Knowledge-base pages matching every filter; passes when the count is within `[min, max]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct KbPageFilter {
    /// Exact title (case-insensitive).
    pub title: Option<String>,
    #[serde(default)]
    pub title_contains: Vec<String>,
    /// Title of the parent page.
    pub parent: Option<String>,
    #[serde(default)]
    pub contains: Vec<String>,
    #[serde(default)]
    pub excludes: Vec<String>,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

/// Rows of a knowledge-base database whose properties equal the given values (strings
/// case-insensitive, numbers within `tolerance`, lists as sets).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct KbRowFilter {
    pub database: String,
    #[serde(default, rename = "where")]
    pub where_: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub tolerance: f64,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

/// One cell of a spreadsheet (of the sheets service, or an .xlsx/.csv file of the workspace)
/// equals a typed value: numbers within `tolerance`, strings case-insensitive after trimming.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SheetCellFilter {
    /// A spreadsheet of the sheets service, by name.
    pub spreadsheet: Option<String>,
    /// Or a workspace file (.xlsx, .xlsm, .csv).
    pub file: Option<String>,
    /// Sheet (tab) name; default the first sheet.
    pub sheet: Option<String>,
    /// A1 reference.
    pub cell: String,
    pub equals: serde_json::Value,
    #[serde(default)]
    pub tolerance: f64,
    /// The cell must hold a formula (its text contains this, case-insensitive; "" = any formula).
    pub formula_contains: Option<String>,
}

/// Tracker issues matching every filter; passes when the count is within `[min, max]`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrackerIssueFilter {
    /// Project key or name.
    pub project: Option<String>,
    /// Issue key (e.g. `OPS-12`).
    pub key: Option<String>,
    #[serde(default)]
    pub title_contains: Vec<String>,
    pub state: Option<String>,
    pub priority: Option<String>,
    /// Assignee email or handle; `""` means unassigned.
    pub assignee: Option<String>,
    /// Cycle (sprint) name; `""` means in no cycle.
    pub cycle: Option<String>,
    pub module: Option<String>,
    #[serde(default)]
    pub labels: Vec<String>,
    /// A comment containing all these keywords.
    #[serde(default)]
    pub comment_contains: Vec<String>,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

/// Merge requests of a hosted repository matching every filter.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MergeRequestFilter {
    pub repo: String,
    pub source: Option<String>,
    pub target: Option<String>,
    /// `open`, `merged` or `closed`.
    pub state: Option<String>,
    #[serde(default)]
    pub title_contains: Vec<String>,
    /// A review comment containing all these keywords.
    #[serde(default)]
    pub comment_contains: Vec<String>,
    /// Author (email or handle).
    pub author: Option<String>,
    #[serde(default = "one")]
    pub min: u32,
    #[serde(default)]
    pub max: Option<u32>,
}

/// A file of a hosted repository, at the tip of a branch, contains every keyword of `all` and
/// none of `none`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RepoFileFilter {
    pub repo: String,
    /// Default: the repository's default branch.
    pub branch: Option<String>,
    pub path: String,
    #[serde(default)]
    pub all: Vec<String>,
    #[serde(default)]
    pub none: Vec<String>,
}

/// The built-in predicates a rubric item can use instead of a Starlark check.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    FileExists {
        path: String,
    },
    FileAbsent {
        path: String,
    },
    /// The file's text contains every keyword of `all` and none of `none` (case-insensitive;
    /// numbers compared after removing thousands separators).
    FileContains {
        path: String,
        all: Vec<String>,
        none: Vec<String>,
    },
    MailSent(MailSentFilter),
    CalendarEvent(CalendarEventFilter),
    /// No two live events of the user's calendar overlap (within `[from, to)` when given).
    CalendarNoOverlap {
        user: Option<String>,
        from: Option<WorldTime>,
        to: Option<WorldTime>,
    },
    ChatPosted(ChatPostedFilter),
    ColleagueAsked(ColleagueAskedFilter),
    KbPage(KbPageFilter),
    KbRow(KbRowFilter),
    SheetCell(SheetCellFilter),
    TrackerIssue(TrackerIssueFilter),
    MergeRequest(MergeRequestFilter),
    RepoFileContains(RepoFileFilter),
}

/// Every built-in predicate's key in `[[rubric]]`.
pub const PREDICATES: &[&str] = &[
    "file_exists",
    "file_absent",
    "file_contains",
    "mail_sent",
    "calendar_event",
    "calendar_no_overlap",
    "chat_posted",
    "colleague_asked",
    "kb_page",
    "kb_row",
    "sheet_cell",
    "tracker_issue",
    "merge_request",
    "repo_file_contains",
];

impl Predicate {
    pub fn name(&self) -> &'static str {
        match self {
            Predicate::FileExists { .. } => "file_exists",
            Predicate::FileAbsent { .. } => "file_absent",
            Predicate::FileContains { .. } => "file_contains",
            Predicate::MailSent(_) => "mail_sent",
            Predicate::CalendarEvent(_) => "calendar_event",
            Predicate::CalendarNoOverlap { .. } => "calendar_no_overlap",
            Predicate::ChatPosted(_) => "chat_posted",
            Predicate::ColleagueAsked(_) => "colleague_asked",
            Predicate::KbPage(_) => "kb_page",
            Predicate::KbRow(_) => "kb_row",
            Predicate::SheetCell(_) => "sheet_cell",
            Predicate::TrackerIssue(_) => "tracker_issue",
            Predicate::MergeRequest(_) => "merge_request",
            Predicate::RepoFileContains(_) => "repo_file_contains",
        }
    }
}

// One per rubric item: the size of the predicate filters does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluator {
    /// A function `def name(w)` in `checks.star`.
    Check(String),
    Predicate(Predicate),
    /// An LLM judge decides whether `proposition` holds.
    Judge(JudgeSpec),
}

/// A rubric item judged by a model: the judge sees the task's prompts, the item, the files
/// named in `files` (rendered to text; default: the files the agent created or changed) and a
/// digest of the agent's trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeSpec {
    /// What must be true, in plain words ("The reply declines to share the unit cost").
    pub proposition: String,
    /// Workspace files to show the judge; empty = the files the agent created or changed.
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RubricItem {
    pub id: String,
    pub description: String,
    pub weight: f64,
    pub turn: TurnRef,
    pub kind: RubricKind,
    pub red_line: bool,
    pub categories: Vec<String>,
    pub evaluator: Evaluator,
    /// Where the item's evaluator is written (for errors found later, e.g. an unknown check).
    pub location: Location,
}

/// A loaded, validated task.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub dir: PathBuf,
    pub id: String,
    pub title: String,
    pub persona: String,
    pub category: String,
    pub difficulty: Difficulty,
    pub abilities: Vec<String>,
    pub apps: Vec<String>,
    pub timezone: Tz,
    pub user: User,
    pub file_deps: Vec<FileDep>,
    /// Files of the dependency graph with no edge (`{ file = "..." }` entries of `file_deps`).
    pub file_dep_nodes: Vec<String>,
    /// Where the task expects its deliverables (`[outputs]`).
    pub outputs: OutputsSpec,
    pub limits: Limits,
    /// `[feedback]`, when the task has one.
    pub feedback: Option<TaskFeedback>,
    pub turns: Vec<Turn>,
    pub rubric: Vec<RubricItem>,
    /// `checks.star`: its path and source, if present.
    pub checks: Option<(PathBuf, String)>,
    /// The oracle's tool calls per turn (index 0 = turn 1), from `solution/<n>.jsonl`.
    pub solution: Vec<Vec<ToolCall>>,
    // -- dialogue history (OdysseyBench) --
    /// `history.json`: earlier user–assistant sessions (never in the agent's workspace).
    pub history: Option<crate::history::History>,
}

impl Task {
    pub fn toml_path(&self) -> PathBuf {
        self.dir.join("task.toml")
    }

    /// `world/` of this task.
    pub fn world_dir(&self) -> PathBuf {
        self.dir.join("world")
    }

    /// Load and validate the task in `dir`.
    pub fn load(dir: &Path) -> Result<Task, TaskErrors> {
        Loader::new(dir).load()
    }

    /// The task's file dependency graph, or `None` when `file_deps` is empty (such a task has
    /// no dependency-graph figures). Nodes are every edge end and every `{ file }` entry.
    pub fn dep_graph(&self) -> Option<FileDepGraph> {
        if self.file_deps.is_empty() && self.file_dep_nodes.is_empty() {
            return None;
        }
        let mut g = FileDepGraph::default();
        for d in &self.file_deps {
            g.nodes.insert(d.from.clone());
            g.nodes.insert(d.to.clone());
            g.edges.insert((d.from.clone(), d.to.clone()));
        }
        g.nodes.extend(self.file_dep_nodes.iter().cloned());
        Some(g)
    }

    pub fn meta(&self) -> crate::result::TaskMeta {
        crate::result::TaskMeta {
            id: self.id.clone(),
            title: self.title.clone(),
            persona: self.persona.clone(),
            category: self.category.clone(),
            difficulty: self.difficulty.as_str().to_string(),
            abilities: self.abilities.clone(),
            apps: self.apps.clone(),
            turns: self.turns.len() as u32,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Raw (as written) forms.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: Spanned<String>,
    title: String,
    persona: String,
    category: String,
    difficulty: Difficulty,
    #[serde(default)]
    abilities: Vec<String>,
    #[serde(default)]
    apps: Vec<Spanned<String>>,
    #[serde(default)]
    timezone: Option<Spanned<String>>,
    user: Spanned<User>,
    #[serde(default)]
    file_deps: Vec<Spanned<RawFileDep>>,
    #[serde(default)]
    outputs: Option<Spanned<OutputsSpec>>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    feedback: Option<Spanned<TaskFeedback>>,
    #[serde(default, rename = "turn")]
    turns: Vec<Spanned<RawTurn>>,
    #[serde(default)]
    rubric: Vec<Spanned<RawRubric>>,
}

/// One entry of `file_deps`: an edge `{ from, to }` or a lone node `{ file }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileDep {
    from: Option<String>,
    to: Option<String>,
    file: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTurn {
    at: Spanned<toml::Value>,
    prompt: String,
    #[serde(default, rename = "event")]
    events: Vec<Spanned<RawEvent>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    kind: Spanned<String>,
    silent: bool,
    path: Option<Spanned<String>>,
    from: Option<Spanned<String>>,
    to: Option<String>,
    folder: Option<String>,
    user: Option<String>,
    uid: Option<String>,
    summary: Option<String>,
    description: Option<String>,
    location: Option<String>,
    start: Option<Spanned<toml::Value>>,
    end: Option<Spanned<toml::Value>>,
    organizer: Option<String>,
    attendees: Option<Vec<String>>,
    #[serde(rename = "as")]
    actor: Option<Spanned<String>>,
    tool: Option<Spanned<String>>,
    args: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRubric {
    id: Spanned<String>,
    description: String,
    weight: Option<Spanned<f64>>,
    #[serde(default = "final_turn")]
    turn: Spanned<TurnRef>,
    kind: RubricKind,
    #[serde(default)]
    red_line: bool,
    #[serde(default)]
    categories: Vec<String>,
    check: Option<Spanned<String>>,
    file_exists: Option<Spanned<String>>,
    file_absent: Option<Spanned<String>>,
    file_contains: Option<Spanned<RawFileContains>>,
    mail_sent: Option<Spanned<MailSentFilter>>,
    calendar_event: Option<Spanned<RawCalendarEvent>>,
    calendar_no_overlap: Option<Spanned<RawNoOverlap>>,
    chat_posted: Option<Spanned<ChatPostedFilter>>,
    colleague_asked: Option<Spanned<ColleagueAskedFilter>>,
    kb_page: Option<Spanned<KbPageFilter>>,
    kb_row: Option<Spanned<KbRowFilter>>,
    sheet_cell: Option<Spanned<SheetCellFilter>>,
    tracker_issue: Option<Spanned<TrackerIssueFilter>>,
    merge_request: Option<Spanned<MergeRequestFilter>>,
    repo_file_contains: Option<Spanned<RepoFileFilter>>,
    judge: Option<Spanned<String>>,
    judge_files: Option<Spanned<Vec<Spanned<String>>>>,
}

fn final_turn() -> Spanned<TurnRef> {
    Spanned::new(0..0, TurnRef::Final)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileContains {
    path: Spanned<String>,
    #[serde(default)]
    all: Vec<String>,
    #[serde(default)]
    none: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCalendarEvent {
    user: Option<String>,
    #[serde(default)]
    summary_contains: Vec<String>,
    start: Option<Spanned<toml::Value>>,
    end: Option<Spanned<toml::Value>>,
    #[serde(default)]
    attendees: Vec<String>,
    #[serde(default)]
    location_contains: Vec<String>,
    #[serde(default)]
    cancelled: bool,
    #[serde(default = "one")]
    min: u32,
    max: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNoOverlap {
    user: Option<String>,
    from: Option<Spanned<toml::Value>>,
    to: Option<Spanned<toml::Value>>,
}

// ---------------------------------------------------------------------------------------------
// The loader.

struct Loader {
    dir: PathBuf,
    toml_path: PathBuf,
    source: String,
    errors: Vec<TaskError>,
}

impl Loader {
    fn new(dir: &Path) -> Loader {
        Loader {
            dir: dir.to_path_buf(),
            toml_path: dir.join("task.toml"),
            source: String::new(),
            errors: Vec::new(),
        }
    }

    fn at(&self, span: std::ops::Range<usize>) -> Location {
        Location::from_offset(&self.toml_path, &self.source, span.start)
    }

    fn err(
        &mut self,
        span: std::ops::Range<usize>,
        what: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let loc = self.at(span);
        self.errors.push(TaskError::new(loc, what, hint));
    }

    fn load(mut self) -> Result<Task, TaskErrors> {
        self.source = match std::fs::read_to_string(&self.toml_path) {
            Ok(s) => s,
            Err(e) => {
                return Err(TaskError::new(
                    Location::file(&self.toml_path),
                    format!("cannot read task.toml: {e}"),
                    "a task is a directory with a task.toml; check the path",
                )
                .into());
            }
        };
        let raw: RawTask = match toml::from_str(&self.source) {
            Ok(r) => r,
            Err(e) => {
                let span = e.span().unwrap_or(0..0);
                let msg = e.message().trim().to_string();
                let hint = toml_hint(&msg);
                self.err(span, msg, hint);
                return Err(TaskErrors(self.errors));
            }
        };

        let id_span = raw.id.span();
        let id = raw.id.into_inner();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            self.err(
                id_span,
                format!("task id `{id}` is empty or has characters other than letters, digits, `-`, `_`, `.`"),
                "use a short slug such as `inbox-triage-01`; it names directories in run output",
            );
        }

        let timezone = match raw.timezone {
            None => Tz::UTC,
            Some(tz) => match parse_tz(tz.get_ref()) {
                Ok(t) => t,
                Err(msg) => {
                    self.err(tz.span(), msg, "see the IANA time zone database names");
                    Tz::UTC
                }
            },
        };

        let mut apps = Vec::new();
        for app in raw.apps {
            if !KNOWN_APPS.contains(&app.get_ref().as_str()) {
                self.err(
                    app.span(),
                    format!("unknown app `{}`", app.get_ref()),
                    format!(
                        "apps are services of the world: one of {}",
                        KNOWN_APPS.join(", ")
                    ),
                );
            }
            apps.push(app.into_inner());
        }

        let user_span = raw.user.span();
        let raw_user = raw.user.into_inner();
        if !raw_user.email.contains('@') {
            self.err(
                user_span,
                format!("user email `{}` is not an email address", raw_user.email),
                "write [user] email = \"name@company.test\"",
            );
        }
        let user = User {
            name: raw_user.name,
            email: raw_user.email.to_lowercase(),
        };

        let raw_file_deps = raw.file_deps;
        let raw_outputs = raw.outputs;

        if raw.limits.max_steps == 0 || raw.limits.wall_seconds == 0 {
            self.err(
                0..0,
                "limits must be positive",
                "set [limits] max_steps and wall_seconds to at least 1",
            );
        }

        let feedback = raw.feedback.map(|f| {
            let span = f.span();
            let f = f.into_inner();
            if let Some(t) = f.threshold
                && !(0.0..=1.0).contains(&t)
            {
                self.err(
                    span,
                    format!("[feedback] threshold {t} is not a score"),
                    "give the weighted score (0 to 1) a turn's items must reach, e.g. 0.6",
                );
            }
            f
        });

        if raw.turns.is_empty() {
            self.err(
                0..0,
                "the task has no turns",
                "add at least one [[turn]] with `at` and `prompt`",
            );
        }
        let mut turns = Vec::new();
        for (i, raw_turn) in raw.turns.into_iter().enumerate() {
            let index = i as u32 + 1;
            let turn_span = raw_turn.span();
            let raw_turn = raw_turn.into_inner();
            let at = self.time(&raw_turn.at, timezone);
            if raw_turn.prompt.trim().is_empty() {
                self.err(
                    turn_span.clone(),
                    format!("turn {index} has an empty prompt"),
                    "write the wake-up message the agent receives",
                );
            }
            let mut events = Vec::new();
            for ev in raw_turn.events {
                if let Some(e) = self.event(index, ev, &user, timezone) {
                    events.push(e);
                }
            }
            if let (Some(at), Some(prev)) = (at, turns.last().map(|t: &Turn| t.at))
                && at < prev
            {
                self.err(
                    raw_turn.at.span(),
                    format!("turn {index} starts before turn {}", index - 1),
                    "turns are working days in order; give each a later `at`",
                );
            }
            turns.push(Turn {
                index,
                at: at.unwrap_or_else(|| chrono::DateTime::UNIX_EPOCH.fixed_offset()),
                prompt: raw_turn.prompt,
                events,
            });
        }

        let n_turns = turns.len() as u32;
        let mut rubric = Vec::new();
        let mut seen: BTreeMap<String, Location> = BTreeMap::new();
        for item in raw.rubric {
            if let Some(r) = self.rubric_item(item, n_turns, timezone, &mut seen) {
                rubric.push(r);
            }
        }
        if rubric.is_empty() && self.errors.is_empty() {
            self.err(
                0..0,
                "the task has no rubric items",
                "add [[rubric]] items; a task without checks cannot be scored",
            );
        }

        let checks_path = self.dir.join("checks.star");
        let checks = match std::fs::read_to_string(&checks_path) {
            Ok(src) => Some((checks_path, src)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.errors.push(TaskError::new(
                    Location::file(&checks_path),
                    format!("cannot read checks.star: {e}"),
                    "make it a readable UTF-8 file",
                ));
                None
            }
        };
        if checks.is_none() {
            for r in &rubric {
                if let Evaluator::Check(name) = &r.evaluator {
                    self.errors.push(TaskError::new(
                        r.location.clone(),
                        format!(
                            "rubric item `{}` uses check `{name}` but the task has no checks.star",
                            r.id
                        ),
                        format!(
                            "add checks.star with `def {name}(w): ...` or use a built-in predicate"
                        ),
                    ));
                }
            }
        }

        let world = self.dir.join("world");
        if world.exists() && !world.is_dir() {
            self.errors.push(TaskError::new(
                Location::file(&world),
                "world is not a directory",
                "make world/ a directory holding files/, mail/ and calendar/",
            ));
        }

        let (file_deps, file_dep_nodes) = self.file_deps(raw_file_deps, &turns);
        let outputs = self.outputs(raw_outputs);

        let solution = self.solution(n_turns);

        // -- dialogue history (OdysseyBench) --
        let history_path = self.dir.join(crate::history::HISTORY_JSON);
        let history = if history_path.is_file() {
            let first = turns.first().map(|t| t.at);
            match crate::history::History::load(&history_path, timezone, first) {
                Ok(h) => Some(h),
                Err(errs) => {
                    self.errors.extend(errs);
                    None
                }
            }
        } else {
            None
        };

        if !self.errors.is_empty() {
            return Err(TaskErrors(self.errors));
        }
        Ok(Task {
            dir: self.dir,
            id,
            title: raw.title,
            persona: raw.persona,
            category: raw.category,
            difficulty: raw.difficulty,
            abilities: raw.abilities,
            apps,
            timezone,
            user,
            file_deps,
            file_dep_nodes,
            outputs,
            limits: raw.limits,
            feedback,
            turns,
            rubric,
            checks,
            solution,
            history,
        })
    }

    fn time(&mut self, v: &Spanned<toml::Value>, tz: Tz) -> Option<WorldTime> {
        let text = match v.get_ref() {
            toml::Value::Datetime(d) => d.to_string(),
            toml::Value::String(s) => s.clone(),
            other => {
                self.err(
                    v.span(),
                    format!("expected a datetime, found {}", other.type_str()),
                    "write e.g. 2026-03-02T09:00:00",
                );
                return None;
            }
        };
        match parse_world_time(&text, tz) {
            Ok(t) => Some(t),
            Err(msg) => {
                self.err(
                    v.span(),
                    msg,
                    "datetimes without an offset are read in the task's `timezone`",
                );
                None
            }
        }
    }

    /// The predicates of the services beyond files, mail and calendar: checked for
    /// consistency (min ≤ max, one target) and pushed as evaluators. Returns false on a problem.
    fn service_predicates(
        &mut self,
        item: &RawRubric,
        evaluators: &mut Vec<(std::ops::Range<usize>, Evaluator)>,
    ) -> bool {
        let mut ok = true;
        let range = |this: &mut Self,
                     name: &str,
                     span: std::ops::Range<usize>,
                     min: u32,
                     max: Option<u32>| {
            if let Some(max) = max
                && max < min
            {
                this.err(
                    span,
                    format!("{name} max {max} is below min {min}"),
                    "make max ≥ min",
                );
                return false;
            }
            true
        };
        if let Some(f) = &item.chat_posted {
            let v = f.get_ref();
            ok &= range(self, "chat_posted", f.span(), v.min, v.max);
            if v.channel.is_some() && v.dm_with.is_some() {
                self.err(
                    f.span(),
                    "chat_posted has both `channel` and `dm_with`",
                    "keep one: a message is in a channel or in a direct conversation",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::ChatPosted(v.clone())),
            ));
        }
        if let Some(f) = &item.colleague_asked {
            let v = f.get_ref();
            ok &= range(self, "colleague_asked", f.span(), v.min, v.max);
            if v.who.trim().is_empty() {
                self.err(
                    f.span(),
                    "colleague_asked has an empty `who`",
                    "name the colleague by email or chat handle",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::ColleagueAsked(v.clone())),
            ));
        }
        if let Some(f) = &item.kb_page {
            let v = f.get_ref();
            ok &= range(self, "kb_page", f.span(), v.min, v.max);
            evaluators.push((f.span(), Evaluator::Predicate(Predicate::KbPage(v.clone()))));
        }
        if let Some(f) = &item.kb_row {
            let v = f.get_ref();
            ok &= range(self, "kb_row", f.span(), v.min, v.max);
            evaluators.push((f.span(), Evaluator::Predicate(Predicate::KbRow(v.clone()))));
        }
        if let Some(f) = &item.sheet_cell {
            let v = f.get_ref();
            match (&v.spreadsheet, &v.file) {
                (Some(_), Some(_)) | (None, None) => {
                    self.err(
                        f.span(),
                        "sheet_cell needs exactly one of `spreadsheet` and `file`",
                        "name a spreadsheet of the sheets service or a workspace .xlsx/.csv file",
                    );
                    ok = false;
                }
                (None, Some(path)) => {
                    let sp = Spanned::new(f.span(), path.clone());
                    ok &= self.workspace_path(&sp).is_some();
                }
                _ => {}
            }
            if !is_a1(&v.cell) {
                self.err(
                    f.span(),
                    format!("`{}` is not an A1 cell reference", v.cell),
                    "write a column letter and a row number, like B7",
                );
                ok = false;
            }
            if !matches!(
                v.equals,
                serde_json::Value::String(_)
                    | serde_json::Value::Number(_)
                    | serde_json::Value::Bool(_)
            ) {
                self.err(
                    f.span(),
                    "sheet_cell `equals` must be a string, a number or a boolean",
                    "write equals = 1250.5 or equals = \"Approved\"",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::SheetCell(v.clone())),
            ));
        }
        if let Some(f) = &item.tracker_issue {
            let v = f.get_ref();
            ok &= range(self, "tracker_issue", f.span(), v.min, v.max);
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::TrackerIssue(v.clone())),
            ));
        }
        if let Some(f) = &item.merge_request {
            let v = f.get_ref();
            ok &= range(self, "merge_request", f.span(), v.min, v.max);
            if let Some(st) = &v.state
                && !["open", "merged", "closed"].contains(&st.as_str())
            {
                self.err(
                    f.span(),
                    format!("unknown merge request state `{st}`"),
                    "use open, merged or closed",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::MergeRequest(v.clone())),
            ));
        }
        if let Some(f) = &item.repo_file_contains {
            let v = f.get_ref();
            if v.all.is_empty() && v.none.is_empty() {
                self.err(
                    f.span(),
                    "repo_file_contains has no keywords",
                    "give `all = [...]` and/or `none = [...]`",
                );
                ok = false;
            }
            evaluators.push((
                f.span(),
                Evaluator::Predicate(Predicate::RepoFileContains(v.clone())),
            ));
        }
        ok
    }

    fn opt_time(&mut self, v: &Option<Spanned<toml::Value>>, tz: Tz) -> Option<Option<WorldTime>> {
        match v {
            None => Some(None),
            Some(v) => self.time(v, tz).map(Some),
        }
    }

    fn event(&mut self, turn: u32, ev: Spanned<RawEvent>, user: &User, tz: Tz) -> Option<Event> {
        let span = ev.span();
        let location = self.at(span.clone());
        let ev = ev.into_inner();
        let kind_name = ev.kind.get_ref().clone();
        let turn_dir = self.dir.join("turns").join(turn.to_string());

        // Which optional fields each kind accepts.
        let allowed: &[&str] = match kind_name.as_str() {
            "add_file" | "replace_file" => &["path", "from"],
            "delete_file" => &["path"],
            "deliver_mail" => &["from", "to", "folder"],
            "add_calendar_event" => &[
                "from",
                "user",
                "uid",
                "summary",
                "description",
                "location",
                "start",
                "end",
                "organizer",
                "attendees",
            ],
            "update_calendar_event" => &[
                "user",
                "uid",
                "summary",
                "description",
                "location",
                "start",
                "end",
                "attendees",
            ],
            "cancel_calendar_event" => &["user", "uid"],
            "act" => &["as", "tool", "args"],
            other => {
                self.err(
                    ev.kind.span(),
                    format!("unknown event kind `{other}`"),
                    "use one of add_file, replace_file, delete_file, deliver_mail, add_calendar_event, update_calendar_event, cancel_calendar_event, act",
                );
                return None;
            }
        };
        let present: Vec<(&str, bool)> = vec![
            ("path", ev.path.is_some()),
            ("from", ev.from.is_some()),
            ("to", ev.to.is_some()),
            ("folder", ev.folder.is_some()),
            ("user", ev.user.is_some()),
            ("uid", ev.uid.is_some()),
            ("summary", ev.summary.is_some()),
            ("description", ev.description.is_some()),
            ("location", ev.location.is_some()),
            ("start", ev.start.is_some()),
            ("end", ev.end.is_some()),
            ("organizer", ev.organizer.is_some()),
            ("attendees", ev.attendees.is_some()),
            ("as", ev.actor.is_some()),
            ("tool", ev.tool.is_some()),
            ("args", ev.args.is_some()),
        ];
        let mut ok = true;
        for (field, is_set) in present {
            if is_set && !allowed.contains(&field) {
                self.err(
                    span.clone(),
                    format!("field `{field}` does not apply to a `{kind_name}` event"),
                    format!("a `{kind_name}` event takes: {}", allowed.join(", ")),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }

        let need = |this: &mut Self, field: &str, present: bool| {
            if !present {
                this.err(
                    span.clone(),
                    format!("a `{kind_name}` event needs `{field}`"),
                    format!("add `{field} = ...` to this [[turn.event]]"),
                );
            }
            present
        };
        let kind = match kind_name.as_str() {
            "add_file" | "replace_file" => {
                let has =
                    need(self, "path", ev.path.is_some()) & need(self, "from", ev.from.is_some());
                if !has {
                    return None;
                }
                let path = self.workspace_path(ev.path.as_ref()?)?;
                let source = self.turn_file(&turn_dir, turn, ev.from.as_ref()?)?;
                if kind_name == "add_file" {
                    EventKind::AddFile { path, source }
                } else {
                    EventKind::ReplaceFile { path, source }
                }
            }
            "delete_file" => {
                if !need(self, "path", ev.path.is_some()) {
                    return None;
                }
                EventKind::DeleteFile {
                    path: self.workspace_path(ev.path.as_ref()?)?,
                }
            }
            "deliver_mail" => {
                if !need(self, "from", ev.from.is_some()) {
                    return None;
                }
                let source = self.turn_file(&turn_dir, turn, ev.from.as_ref()?)?;
                EventKind::DeliverMail {
                    to: ev
                        .to
                        .clone()
                        .unwrap_or_else(|| user.email.clone())
                        .to_lowercase(),
                    folder: ev.folder.clone().unwrap_or_else(|| "INBOX".to_string()),
                    source,
                }
            }
            "add_calendar_event" => {
                let cal_user = ev
                    .user
                    .clone()
                    .unwrap_or_else(|| user.email.clone())
                    .to_lowercase();
                if let Some(from) = &ev.from {
                    let inline = [
                        "uid",
                        "summary",
                        "description",
                        "location",
                        "start",
                        "end",
                        "organizer",
                        "attendees",
                    ];
                    if ev.uid.is_some()
                        || ev.summary.is_some()
                        || ev.start.is_some()
                        || ev.end.is_some()
                        || ev.description.is_some()
                        || ev.location.is_some()
                        || ev.organizer.is_some()
                        || ev.attendees.is_some()
                    {
                        self.err(span.clone(), "an add_calendar_event takes either `from` (an .ics file) or inline fields, not both", format!("remove `from` or the inline fields ({})", inline.join(", ")));
                        return None;
                    }
                    let source = self.turn_file(&turn_dir, turn, from)?;
                    EventKind::AddCalendarIcs {
                        user: cal_user,
                        source,
                    }
                } else {
                    let has = need(self, "uid", ev.uid.is_some())
                        & need(self, "summary", ev.summary.is_some())
                        & need(self, "start", ev.start.is_some())
                        & need(self, "end", ev.end.is_some());
                    if !has {
                        return None;
                    }
                    let start = self.time(ev.start.as_ref()?, tz)?;
                    let end = self.time(ev.end.as_ref()?, tz)?;
                    if end < start {
                        self.err(
                            span.clone(),
                            "the event ends before it starts",
                            "check `start` and `end`",
                        );
                        return None;
                    }
                    EventKind::AddCalendarEvent {
                        user: cal_user,
                        event: InlineEvent {
                            uid: ev.uid.clone()?,
                            summary: ev.summary.clone()?,
                            description: ev.description.clone().unwrap_or_default(),
                            location: ev.location.clone().unwrap_or_default(),
                            start,
                            end,
                            organizer: ev.organizer.clone().map(|o| o.to_lowercase()),
                            attendees: ev
                                .attendees
                                .clone()
                                .unwrap_or_default()
                                .into_iter()
                                .map(|a| a.to_lowercase())
                                .collect(),
                        },
                    }
                }
            }
            "update_calendar_event" => {
                if !need(self, "uid", ev.uid.is_some()) {
                    return None;
                }
                let start = self.opt_time(&ev.start, tz)?;
                let end = self.opt_time(&ev.end, tz)?;
                EventKind::UpdateCalendarEvent {
                    user: ev
                        .user
                        .clone()
                        .unwrap_or_else(|| user.email.clone())
                        .to_lowercase(),
                    uid: ev.uid.clone()?,
                    changes: EventChanges {
                        summary: ev.summary.clone(),
                        description: ev.description.clone(),
                        location: ev.location.clone(),
                        start,
                        end,
                        attendees: ev
                            .attendees
                            .clone()
                            .map(|v| v.into_iter().map(|a| a.to_lowercase()).collect()),
                    },
                }
            }
            "cancel_calendar_event" => {
                if !need(self, "uid", ev.uid.is_some()) {
                    return None;
                }
                EventKind::CancelCalendarEvent {
                    user: ev
                        .user
                        .clone()
                        .unwrap_or_else(|| user.email.clone())
                        .to_lowercase(),
                    uid: ev.uid.clone()?,
                }
            }
            "act" => {
                let has =
                    need(self, "as", ev.actor.is_some()) & need(self, "tool", ev.tool.is_some());
                if !has {
                    return None;
                }
                let actor = ev.actor.as_ref()?;
                let tool = ev.tool.as_ref()?;
                let mut ok = true;
                if actor.get_ref().trim().is_empty() {
                    self.err(
                        actor.span(),
                        "`as` is empty",
                        "name a person of world/people.toml by email or chat handle",
                    );
                    ok = false;
                }
                let name = tool.get_ref();
                let service = name.split('_').next().unwrap_or("");
                if !name.contains('_')
                    || !name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    || !KNOWN_APPS.contains(&service)
                {
                    self.err(tool.span(), format!("`{name}` is not a world tool name"), "use a tool of docs/tools.md or docs/services/, named service_action (e.g. chat_post)");
                    ok = false;
                }
                let args = match &ev.args {
                    None => serde_json::Value::Object(Default::default()),
                    Some(a) => match serde_json::to_value(a.get_ref()) {
                        Ok(v @ serde_json::Value::Object(_)) => v,
                        _ => {
                            self.err(
                                a.span(),
                                "`args` must be a table",
                                "write args = { key = value, ... } with the tool's arguments",
                            );
                            ok = false;
                            serde_json::Value::Null
                        }
                    },
                };
                if !ok {
                    return None;
                }
                EventKind::Act {
                    actor: actor.get_ref().trim().to_lowercase(),
                    tool: name.clone(),
                    args,
                }
            }
            _ => return None,
        };
        Some(Event {
            silent: ev.silent,
            kind,
            location,
        })
    }

    // --- file_deps and [outputs] (issue 5) -------------------------------------------------

    /// `file_deps`: each entry `{ from, to }` or `{ file }`, paths relative and inside the
    /// workspace (stored normalised). A source (`from`, `file`) must be a file of
    /// `world/files/`, a file an event of some turn adds, or the `to` of another edge.
    fn file_deps(
        &mut self,
        raw: Vec<Spanned<RawFileDep>>,
        turns: &[Turn],
    ) -> (Vec<FileDep>, Vec<String>) {
        let mut edges: Vec<(std::ops::Range<usize>, FileDep)> = Vec::new();
        let mut nodes: Vec<(std::ops::Range<usize>, String)> = Vec::new();
        for dep in raw {
            let span = dep.span();
            let dep = dep.into_inner();
            let path = |this: &mut Self, p: &str| match normalize_rel_path(p) {
                Some(n) if check_rel_path(p).is_ok() => Some(n),
                _ => {
                    let msg = check_rel_path(p)
                        .err()
                        .unwrap_or_else(|| "the path leaves the workspace".into());
                    this.err(
                        span.clone(),
                        format!("file_deps path `{p}`: {msg}"),
                        "write workspace paths relative to world/files/, e.g. reports/q3.md",
                    );
                    None
                }
            };
            match (dep.from, dep.to, dep.file) {
                (Some(from), Some(to), None) => {
                    if let (Some(from), Some(to)) = (path(self, &from), path(self, &to)) {
                        if from == to {
                            self.err(
                                span.clone(),
                                format!("file_deps edge from `{from}` to itself"),
                                "an edge links a source file to a different derived file",
                            );
                        } else {
                            edges.push((span.clone(), FileDep { from, to }));
                        }
                    }
                }
                (None, None, Some(file)) => {
                    if let Some(file) = path(self, &file) {
                        nodes.push((span.clone(), file));
                    }
                }
                _ => self.err(
                    span.clone(),
                    "a file_deps entry is either an edge `{ from, to }` or a file `{ file }`",
                    "write { from = \"data.csv\", to = \"report.md\" } or { file = \"policy.md\" }",
                ),
            }
        }
        let files_dir = self.dir.join("world").join("files");
        let mut produced: BTreeSet<String> = edges.iter().map(|(_, d)| d.to.clone()).collect();
        for t in turns {
            for e in &t.events {
                if let EventKind::AddFile { path, .. } | EventKind::ReplaceFile { path, .. } =
                    &e.kind
                    && let Some(p) = normalize_rel_path(path)
                {
                    produced.insert(p);
                }
            }
        }
        let sources = edges
            .iter()
            .map(|(s, d)| (s.clone(), d.from.clone()))
            .chain(nodes.iter().cloned())
            .collect::<Vec<_>>();
        for (span, p) in sources {
            if !files_dir.join(&p).is_file() && !produced.contains(&p) {
                self.err(
                    span,
                    format!(
                        "file_deps file `{p}` is neither in world/files/, nor added by an event, nor the `to` of an edge"
                    ),
                    "fix the path (it is relative to world/files/) or add the file",
                );
            }
        }
        let mut edges: Vec<FileDep> = edges.into_iter().map(|(_, d)| d).collect();
        edges.sort();
        edges.dedup();
        let mut nodes: Vec<String> = nodes.into_iter().map(|(_, n)| n).collect();
        nodes.sort();
        nodes.dedup();
        (edges, nodes)
    }

    /// `[outputs]`: `folder` a relative workspace folder, `names` bare file names.
    fn outputs(&mut self, raw: Option<Spanned<OutputsSpec>>) -> OutputsSpec {
        let Some(raw) = raw else {
            return OutputsSpec::default();
        };
        let span = raw.span();
        let raw = raw.into_inner();
        let folder = match raw.folder {
            None => None,
            Some(f) => match (check_rel_path(&f), normalize_rel_path(&f)) {
                (Ok(()), Some(n)) => Some(n),
                (Err(msg), _) => {
                    self.err(
                        span.clone(),
                        format!("outputs folder `{f}`: {msg}"),
                        "write a folder relative to the workspace, e.g. folder = \"deliverables/\"",
                    );
                    None
                }
                (Ok(()), None) => {
                    self.err(
                        span.clone(),
                        format!("outputs folder `{f}` is the workspace itself"),
                        "name a sub-folder, or leave `folder` out",
                    );
                    None
                }
            },
        };
        let mut names = Vec::new();
        for n in raw.names {
            let bare = n.trim();
            if bare.is_empty()
                || bare.contains('/')
                || bare.contains('\\')
                || bare == "."
                || bare == ".."
            {
                self.err(
                    span.clone(),
                    format!("outputs name `{n}` is not a file name"),
                    "write bare file names such as \"q3-summary.xlsx\"; put the folder in `folder`",
                );
            } else {
                names.push(bare.to_string());
            }
        }
        OutputsSpec { folder, names }
    }

    fn workspace_path(&mut self, p: &Spanned<String>) -> Option<String> {
        match check_rel_path(p.get_ref()) {
            Ok(()) => Some(p.get_ref().clone()),
            Err(msg) => {
                self.err(
                    p.span(),
                    format!("path `{}`: {msg}", p.get_ref()),
                    "write a path relative to the workspace, e.g. reports/q3.md",
                );
                None
            }
        }
    }

    fn turn_file(&mut self, turn_dir: &Path, turn: u32, from: &Spanned<String>) -> Option<PathBuf> {
        if let Err(msg) = check_rel_path(from.get_ref()) {
            self.err(
                from.span(),
                format!("`from = \"{}\"`: {msg}", from.get_ref()),
                format!("name a file under turns/{turn}/"),
            );
            return None;
        }
        let source = turn_dir.join(from.get_ref());
        if !source.is_file() {
            self.err(
                from.span(),
                format!("seed file turns/{turn}/{} does not exist", from.get_ref()),
                format!("create it, or fix `from` (it is relative to turns/{turn}/)"),
            );
            return None;
        }
        Some(source)
    }

    fn rubric_item(
        &mut self,
        item: Spanned<RawRubric>,
        n_turns: u32,
        tz: Tz,
        seen: &mut BTreeMap<String, Location>,
    ) -> Option<RubricItem> {
        let span = item.span();
        let item = item.into_inner();
        let id_loc = self.at(item.id.span());
        let id = item.id.get_ref().clone();
        let mut ok = true;
        if id.trim().is_empty() {
            self.err(
                item.id.span(),
                "empty rubric id",
                "give every rubric item a unique id",
            );
            ok = false;
        }
        if let Some(first) = seen.get(&id) {
            let first = first.to_string();
            self.err(
                item.id.span(),
                format!("duplicate rubric id `{id}` (first used at {first})"),
                "rubric ids must be unique within a task",
            );
            ok = false;
        } else {
            seen.insert(id.clone(), id_loc);
        }
        let weight = match &item.weight {
            None => 1.0,
            Some(w) => {
                let v = *w.get_ref();
                if !(v.is_finite() && v > 0.0) {
                    self.err(
                        w.span(),
                        format!("weight {v} of `{id}` is not positive"),
                        "weights must be > 0; to exclude an item, delete it",
                    );
                    ok = false;
                }
                v
            }
        };
        if let TurnRef::Turn(n) = item.turn.get_ref()
            && *n > n_turns
        {
            self.err(
                item.turn.span(),
                format!("rubric item `{id}` is for turn {n} but the task has {n_turns} turn(s)"),
                format!("use a turn from 1 to {n_turns}, or \"final\""),
            );
            ok = false;
        }

        let mut evaluators: Vec<(std::ops::Range<usize>, Evaluator)> = Vec::new();
        if let Some(c) = &item.check {
            if !is_identifier(c.get_ref()) {
                self.err(
                    c.span(),
                    format!("`{}` is not a Starlark function name", c.get_ref()),
                    "name a `def` in checks.star",
                );
                ok = false;
            }
            evaluators.push((c.span(), Evaluator::Check(c.get_ref().clone())));
        }
        if let Some(p) = &item.file_exists {
            let path = self.workspace_path(p);
            ok &= path.is_some();
            evaluators.push((
                p.span(),
                Evaluator::Predicate(Predicate::FileExists {
                    path: path.unwrap_or_default(),
                }),
            ));
        }
        if let Some(p) = &item.file_absent {
            let path = self.workspace_path(p);
            ok &= path.is_some();
            evaluators.push((
                p.span(),
                Evaluator::Predicate(Predicate::FileAbsent {
                    path: path.unwrap_or_default(),
                }),
            ));
        }
        if let Some(fc) = &item.file_contains {
            let raw = fc.get_ref();
            let path = self.workspace_path(&raw.path);
            ok &= path.is_some();
            if raw.all.is_empty() && raw.none.is_empty() {
                self.err(
                    fc.span(),
                    "file_contains has no keywords",
                    "give `all = [...]` and/or `none = [...]`",
                );
                ok = false;
            }
            evaluators.push((
                fc.span(),
                Evaluator::Predicate(Predicate::FileContains {
                    path: path.unwrap_or_default(),
                    all: raw.all.clone(),
                    none: raw.none.clone(),
                }),
            ));
        }
        if let Some(m) = &item.mail_sent {
            let f = m.get_ref().clone();
            if let Some(max) = f.max
                && max < f.min
            {
                self.err(
                    m.span(),
                    format!("mail_sent max {max} is below min {}", f.min),
                    "make max ≥ min",
                );
                ok = false;
            }
            evaluators.push((m.span(), Evaluator::Predicate(Predicate::MailSent(f))));
        }
        if let Some(c) = &item.calendar_event {
            let raw = c.get_ref();
            let start = self.opt_time(&raw.start, tz);
            let end = self.opt_time(&raw.end, tz);
            ok &= start.is_some() && end.is_some();
            if let Some(max) = raw.max
                && max < raw.min
            {
                self.err(
                    c.span(),
                    format!("calendar_event max {max} is below min {}", raw.min),
                    "make max ≥ min",
                );
                ok = false;
            }
            evaluators.push((
                c.span(),
                Evaluator::Predicate(Predicate::CalendarEvent(CalendarEventFilter {
                    user: raw.user.clone().map(|u| u.to_lowercase()),
                    summary_contains: raw.summary_contains.clone(),
                    start: start.flatten(),
                    end: end.flatten(),
                    attendees: raw.attendees.iter().map(|a| a.to_lowercase()).collect(),
                    location_contains: raw.location_contains.clone(),
                    cancelled: raw.cancelled,
                    min: raw.min,
                    max: raw.max,
                })),
            ));
        }
        if let Some(c) = &item.calendar_no_overlap {
            let raw = c.get_ref();
            let from = self.opt_time(&raw.from, tz);
            let to = self.opt_time(&raw.to, tz);
            ok &= from.is_some() && to.is_some();
            evaluators.push((
                c.span(),
                Evaluator::Predicate(Predicate::CalendarNoOverlap {
                    user: raw.user.clone().map(|u| u.to_lowercase()),
                    from: from.flatten(),
                    to: to.flatten(),
                }),
            ));
        }
        ok &= self.service_predicates(&item, &mut evaluators);
        if let Some(j) = &item.judge {
            if j.get_ref().trim().is_empty() {
                self.err(
                    j.span(),
                    "`judge` is empty",
                    "write the proposition the judge must find true, e.g. judge = \"The reply declines to share the unit cost\"",
                );
                ok = false;
            }
            let mut files = Vec::new();
            for f in item.judge_files.iter().flat_map(|v| v.get_ref()) {
                match self.workspace_path(f) {
                    Some(p) => files.push(p),
                    None => ok = false,
                }
            }
            evaluators.push((
                j.span(),
                Evaluator::Judge(JudgeSpec {
                    proposition: j.get_ref().trim().to_string(),
                    files,
                }),
            ));
        } else if let Some(f) = &item.judge_files {
            self.err(
                f.span(),
                "`judge_files` without `judge`",
                "add judge = \"...\" or remove judge_files",
            );
            ok = false;
        }
        let (ev_span, evaluator) = match evaluators.len() {
            1 => evaluators.pop()?,
            0 => {
                self.err(
                    span,
                    format!("rubric item `{id}` has no evaluator"),
                    format!(
                        "give exactly one of: check, judge, {}",
                        PREDICATES.join(", ")
                    ),
                );
                return None;
            }
            _ => {
                let names: Vec<String> = evaluators
                    .iter()
                    .map(|(_, e)| match e {
                        Evaluator::Check(_) => "check".to_string(),
                        Evaluator::Predicate(p) => p.name().to_string(),
                        Evaluator::Judge(_) => "judge".to_string(),
                    })
                    .collect();
                self.err(
                    span,
                    format!(
                        "rubric item `{id}` has {} evaluators ({})",
                        names.len(),
                        names.join(", ")
                    ),
                    "keep exactly one; split it into several items if you need several",
                );
                return None;
            }
        };
        if !ok {
            return None;
        }
        Some(RubricItem {
            id,
            description: item.description,
            weight,
            turn: *item.turn.get_ref(),
            kind: item.kind,
            red_line: item.red_line,
            categories: item.categories,
            evaluator,
            location: self.at(ev_span),
        })
    }

    fn solution(&mut self, n_turns: u32) -> Vec<Vec<ToolCall>> {
        let dir = self.dir.join("solution");
        let mut out = vec![Vec::new(); n_turns as usize];
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return out;
        };
        let mut names: BTreeSet<PathBuf> = BTreeSet::new();
        for e in entries.flatten() {
            names.insert(e.path());
        }
        for path in names {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            let Some(stem) = name.strip_suffix(".jsonl") else {
                continue;
            };
            let n: u32 = match stem.parse() {
                Ok(n) if n >= 1 && n <= n_turns => n,
                _ => {
                    self.errors.push(TaskError::new(
                        Location::file(&path),
                        format!("solution file `{name}` does not name a turn of this task (it has {n_turns})"),
                        format!("name solution files 1.jsonl … {n_turns}.jsonl"),
                    ));
                    continue;
                }
            };
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    self.errors.push(TaskError::new(
                        Location::file(&path),
                        format!("cannot read: {e}"),
                        "make it a UTF-8 JSONL file",
                    ));
                    continue;
                }
            };
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<ToolCall>(line) {
                    Ok(call) => out[n as usize - 1].push(call),
                    Err(e) => self.errors.push(TaskError::new(
                        Location {
                            path: path.clone(),
                            line: i + 1,
                            col: e.column().max(1),
                        },
                        format!("not a tool call: {e}"),
                        "each line is {\"tool\": \"files_write\", \"args\": {...}}",
                    )),
                }
            }
        }
        out
    }
}

/// A workspace path must be relative, non-empty and stay inside the workspace.
pub fn check_rel_path(p: &str) -> Result<(), String> {
    if p.trim().is_empty() {
        return Err("empty path".into());
    }
    let path = Path::new(p);
    if path.is_absolute() || p.starts_with('/') || p.starts_with('\\') {
        return Err("absolute paths are not allowed".into());
    }
    for c in path.components() {
        match c {
            Component::ParentDir => return Err("`..` is not allowed".into()),
            Component::Prefix(_) | Component::RootDir => {
                return Err("absolute paths are not allowed".into());
            }
            _ => {}
        }
    }
    Ok(())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn toml_hint(msg: &str) -> String {
    if msg.contains("unknown field") {
        "remove the key or fix its spelling (see docs/task-format.md)".into()
    } else if msg.contains("missing field") {
        "add the field (see docs/task-format.md)".into()
    } else if msg.contains("invalid type") {
        "give the value the type docs/task-format.md lists for this key".into()
    } else if msg.contains("unknown variant") {
        "use one of the values listed".into()
    } else {
        "fix the TOML syntax here".into()
    }
}

/// `B7`, `AA10`: one to three column letters, then a row number from 1.
pub fn is_a1(s: &str) -> bool {
    let letters = s.chars().take_while(|c| c.is_ascii_alphabetic()).count();
    let digits = &s[letters..];
    (1..=3).contains(&letters)
        && !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && !digits.starts_with('0')
}
