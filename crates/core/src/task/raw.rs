//! The raw (as written) forms of `task.toml`, deserialised by serde before validation.

use serde::Deserialize;
use toml::Spanned;

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTask {
    pub(super) id: Spanned<String>,
    pub(super) title: String,
    pub(super) persona: String,
    pub(super) category: String,
    pub(super) difficulty: Difficulty,
    #[serde(default)]
    pub(super) abilities: Vec<String>,
    #[serde(default)]
    pub(super) apps: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) timezone: Option<Spanned<String>>,
    pub(super) user: Spanned<User>,
    #[serde(default)]
    pub(super) file_deps: Vec<Spanned<RawFileDep>>,
    #[serde(default)]
    pub(super) outputs: Option<Spanned<OutputsSpec>>,
    #[serde(default)]
    pub(super) workspace: Option<Spanned<WorkspaceSpec>>,
    #[serde(default)]
    pub(super) limits: Limits,
    #[serde(default)]
    pub(super) feedback: Option<Spanned<TaskFeedback>>,
    /// Why this task cannot be run (an imported task Bureau cannot express yet).
    #[serde(default)]
    pub(super) skip_reason: Option<Spanned<String>>,
    /// Where `solution/` comes from: authored (default) or derived from the checks.
    #[serde(default)]
    pub(super) oracle: Option<Spanned<String>>,
    #[serde(default, rename = "turn")]
    pub(super) turns: Vec<Spanned<RawTurn>>,
    #[serde(default)]
    pub(super) rubric: Vec<Spanned<RawRubric>>,
    #[serde(default)]
    pub(super) checkpoint_bonus: Option<CheckpointBonus>,
    /// The parameters of a parametrised task (read by bureau-variants; a task with `[params]`
    /// is played as rendered instances).
    #[serde(default)]
    pub(super) params: Option<Spanned<toml::Value>>,
    /// What a rendered instance of a parametrised task was made from.
    #[serde(default)]
    pub(super) variant: Option<Spanned<RawVariant>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawVariant {
    pub(super) base: String,
    pub(super) base_dir: String,
    pub(super) seed: u64,
    #[serde(default)]
    pub(super) index: u32,
    #[serde(default)]
    pub(super) values: toml::Table,
}

/// One entry of `file_deps`: an edge `{ from, to }` or a lone node `{ file }`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFileDep {
    pub(super) from: Option<String>,
    pub(super) to: Option<String>,
    pub(super) file: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTurn {
    pub(super) at: Spanned<toml::Value>,
    pub(super) prompt: String,
    #[serde(default, rename = "event")]
    pub(super) events: Vec<Spanned<RawEvent>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvent {
    pub(super) kind: Spanned<String>,
    pub(super) silent: bool,
    pub(super) path: Option<Spanned<String>>,
    pub(super) from: Option<Spanned<String>>,
    pub(super) to: Option<String>,
    pub(super) folder: Option<String>,
    pub(super) user: Option<String>,
    pub(super) uid: Option<String>,
    pub(super) summary: Option<String>,
    pub(super) description: Option<String>,
    pub(super) location: Option<String>,
    pub(super) start: Option<Spanned<toml::Value>>,
    pub(super) end: Option<Spanned<toml::Value>>,
    pub(super) organizer: Option<String>,
    pub(super) attendees: Option<Vec<String>>,
    #[serde(rename = "as")]
    pub(super) actor: Option<Spanned<String>>,
    pub(super) tool: Option<Spanned<String>>,
    pub(super) args: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRubric {
    pub(super) id: Spanned<String>,
    pub(super) description: String,
    pub(super) weight: Option<Spanned<f64>>,
    #[serde(default = "final_turn")]
    pub(super) turn: Spanned<TurnRef>,
    pub(super) kind: RubricKind,
    #[serde(default)]
    pub(super) red_line: bool,
    #[serde(default)]
    pub(super) categories: Vec<String>,
    pub(super) check: Option<Spanned<String>>,
    pub(super) file_exists: Option<Spanned<String>>,
    pub(super) file_absent: Option<Spanned<String>>,
    pub(super) file_contains: Option<Spanned<RawFileContains>>,
    pub(super) mail_sent: Option<Spanned<MailSentFilter>>,
    pub(super) calendar_event: Option<Spanned<RawCalendarEvent>>,
    pub(super) calendar_no_overlap: Option<Spanned<RawNoOverlap>>,
    pub(super) chat_posted: Option<Spanned<ChatPostedFilter>>,
    pub(super) chat_channel: Option<Spanned<ChatChannelFilter>>,
    pub(super) colleague_asked: Option<Spanned<ColleagueAskedFilter>>,
    pub(super) kb_page: Option<Spanned<KbPageFilter>>,
    pub(super) kb_row: Option<Spanned<KbRowFilter>>,
    pub(super) sheet_cell: Option<Spanned<SheetCellFilter>>,
    pub(super) tracker_issue: Option<Spanned<TrackerIssueFilter>>,
    pub(super) merge_request: Option<Spanned<MergeRequestFilter>>,
    pub(super) repo_file_contains: Option<Spanned<RepoFileFilter>>,
    pub(super) final_message: Option<Spanned<RawFinalMessage>>,
    pub(super) judge: Option<Spanned<String>>,
    pub(super) judge_files: Option<Spanned<Vec<Spanned<String>>>>,
    pub(super) judge_render: Option<Spanned<Vec<Spanned<String>>>>,
    pub(super) image: Option<Spanned<ImageFilter>>,
    /// With `judge`: a `checks.star` function that decides the item when no judge is given.
    pub(super) twin: Option<Spanned<String>>,
    /// Where the item's expected value comes from (`"prompt"`, `"file:<path>"`, ...).
    pub(super) source: Option<Spanned<OneOrMany>>,
}

/// A string or a list of strings.
#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub(super) fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

pub(super) fn final_turn() -> Spanned<TurnRef> {
    Spanned::new(0..0, TurnRef::Final)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFileContains {
    pub(super) path: Spanned<String>,
    #[serde(default)]
    pub(super) all: Vec<String>,
    #[serde(default)]
    pub(super) none: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFinalMessage {
    #[serde(default)]
    pub(super) all: Vec<String>,
    #[serde(default)]
    pub(super) none: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCalendarEvent {
    pub(super) user: Option<String>,
    #[serde(default)]
    pub(super) summary_contains: Vec<String>,
    pub(super) start: Option<Spanned<toml::Value>>,
    pub(super) end: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub(super) attendees: Vec<String>,
    #[serde(default)]
    pub(super) location_contains: Vec<String>,
    #[serde(default)]
    pub(super) cancelled: bool,
    #[serde(default = "one")]
    pub(super) min: u32,
    pub(super) max: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNoOverlap {
    pub(super) user: Option<String>,
    pub(super) from: Option<Spanned<toml::Value>>,
    pub(super) to: Option<Spanned<toml::Value>>,
}
