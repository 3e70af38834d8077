//! Dialogue history (`history.json`, OdysseyBench): earlier user–assistant sessions of a task,
//! and the run setting that decides how an agent sees them ([`ContextSetting`]).
//!
//! A task may ship `history.json` beside `task.toml`: multi-day sessions between the user and
//! an assistant, with timestamps, holding details the task's prompts leave out. It is never
//! copied into the agent's workspace. The format is documented in `docs/task-format.md` and the
//! settings in `docs/history.md`:
//!
//! ```json
//! {"sessions": [{"id": "s1", "started_at": "2026-03-02T09:00:00",
//!                "summary": "…", "chunks": [{"from": 1, "to": 4, "summary": "…"}],
//!                "utterances": [{"role": "user", "at": "2026-03-02T09:00:00", "text": "…"}]}]}
//! ```
//!
//! Session summaries and chunk summaries are written by the task's author (making them needs a
//! model) and shipped in the file; Bureau never summarises.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chrono_tz::Tz;
use serde::Deserialize;

mod shape;

use crate::error::{Location, TaskError};
use crate::time::{WorldTime, parse_world_time};

/// The file name of a task's dialogue history.
pub const HISTORY_JSON: &str = "history.json";

/// Who speaks an utterance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

impl Role {
    pub fn as_str(&self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
    /// `User` / `Assistant`, for rendering.
    pub fn label(&self) -> &'static str {
        match self {
            Role::User => "User",
            Role::Assistant => "Assistant",
        }
    }
}

/// One message of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Utterance {
    pub role: Role,
    pub at: WorldTime,
    pub text: String,
}

/// The author's summary of utterances `from..=to` (1-based) of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryChunk {
    pub from: usize,
    pub to: usize,
    pub summary: String,
}

/// One session (typically one working day) of the history.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub started_at: WorldTime,
    /// The author's summary of the whole session.
    pub summary: Option<String>,
    /// The author's summaries of consecutive segments of the session; when present they cover
    /// every utterance exactly once, in order.
    pub chunks: Vec<SummaryChunk>,
    pub utterances: Vec<Utterance>,
}

/// A task's dialogue history, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub path: PathBuf,
    pub sessions: Vec<Session>,
}

impl History {
    /// Whether every session has a summary (the `summary` granularity needs it).
    pub fn has_summaries(&self) -> bool {
        self.sessions.iter().all(|s| s.summary.is_some())
    }
    /// Whether every session has summary chunks (the `chunk` granularity needs them).
    pub fn has_chunks(&self) -> bool {
        self.sessions.iter().all(|s| !s.chunks.is_empty())
    }
    /// Whether `granularity` can be served from this history (summaries and chunks must be
    /// shipped); `Err` says what is missing.
    pub fn supports(&self, granularity: Granularity) -> Result<(), String> {
        match granularity {
            Granularity::Session | Granularity::Utterance => Ok(()),
            Granularity::Summary if self.has_summaries() => Ok(()),
            Granularity::Chunk if self.has_chunks() => Ok(()),
            Granularity::Summary => Err(format!(
                "{} has no session summaries, which `rag:summary:<k>` retrieves — add a `summary` to every session or choose another granularity",
                self.path.display()
            )),
            Granularity::Chunk => Err(format!(
                "{} has no summary chunks, which `rag:chunk:<k>` retrieves — add `chunks` to every session or choose another granularity",
                self.path.display()
            )),
        }
    }

    /// The whole history as readable text with dates, in `tz`: what `--context long` puts
    /// before the first turn's prompt.
    pub fn render(&self, tz: Tz) -> String {
        let mut out = String::from(
            "Conversation history — your earlier sessions with the user, oldest first. \
             Details the request below leaves out may be here.\n",
        );
        for s in &self.sessions {
            let start = s.started_at.with_timezone(&tz);
            out.push_str(&format!(
                "\n## Session {} — {}\n",
                s.id,
                start.format("%A %Y-%m-%d %H:%M")
            ));
            let mut day = start.date_naive();
            for u in &s.utterances {
                let at = u.at.with_timezone(&tz);
                let stamp = if at.date_naive() == day {
                    at.format("%H:%M").to_string()
                } else {
                    day = at.date_naive();
                    at.format("%Y-%m-%d %H:%M").to_string()
                };
                out.push_str(&format!(
                    "[{stamp}] {}: {}\n",
                    u.role.label(),
                    u.text.trim()
                ));
            }
        }
        out
    }

    /// Load and validate `path`. Datetimes without an offset are read in `tz`; every datetime
    /// must be before `before` (the first turn: the history is the past). All problems are
    /// returned, each located `history.json:line:col`.
    pub fn load(path: &Path, tz: Tz, before: Option<WorldTime>) -> Result<History, Vec<TaskError>> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            vec![TaskError::new(
                Location::file(path),
                format!("cannot read {HISTORY_JSON}: {e}"),
                "make it a readable UTF-8 JSON file",
            )]
        })?;
        Self::parse(path, &source, tz, before)
    }

    /// [`History::load`] of a source already read.
    pub fn parse(
        path: &Path,
        source: &str,
        tz: Tz,
        before: Option<WorldTime>,
    ) -> Result<History, Vec<TaskError>> {
        // Syntax first (one error: nothing after it can be read), then every problem of shape
        // at once, then the typed read (which then cannot fail on shape).
        let doc: serde_json::Value =
            serde_json::from_str(source).map_err(|e| json_error(path, &e))?;
        let problems = shape::problems(&doc);
        if !problems.is_empty() {
            let mut errors: Vec<TaskError> = problems
                .into_iter()
                .map(|p| {
                    let at = shape::locate(source, &p.path);
                    TaskError::new(Location::from_offset(path, source, at), p.what, p.hint)
                })
                .collect();
            errors.sort_by_key(|e| (e.location.line, e.location.col));
            return Err(errors);
        }
        let raw: RawHistory = serde_json::from_value(doc).map_err(|e| json_error(path, &e))?;
        Checker {
            path,
            source,
            tz,
            before,
            cursor: 0,
            errors: Vec::new(),
        }
        .check(raw)
    }
}

/// A serde_json error as a located task error.
fn json_error(path: &Path, e: &serde_json::Error) -> Vec<TaskError> {
    let loc = Location {
        path: path.to_path_buf(),
        line: e.line().max(1),
        col: e.column().max(1),
    };
    let msg = e.to_string();
    // serde_json appends " at line L column C"; the location says it already.
    let what = msg
        .rsplit_once(" at line ")
        .map(|(w, _)| w.to_string())
        .unwrap_or(msg);
    vec![TaskError::new(loc, what, json_hint(e))]
}

fn json_hint(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    if msg.contains("unknown field") {
        "a history is {\"sessions\": [...]}; a session has id, started_at, summary, chunks, utterances; an utterance has role, at, text; a chunk has from, to, summary".into()
    } else if msg.contains("unknown variant") {
        "`role` is \"user\" or \"assistant\"".into()
    } else if msg.contains("missing field") {
        "add the field; see docs/task-format.md (history.json)".into()
    } else {
        "history.json must be valid JSON in the shape of docs/task-format.md (history.json)".into()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHistory {
    sessions: Vec<RawSession>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSession {
    id: String,
    started_at: String,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    chunks: Vec<RawChunk>,
    utterances: Vec<RawUtterance>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUtterance {
    role: Role,
    at: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChunk {
    from: usize,
    to: usize,
    summary: String,
}

/// The semantic checks, with positions found by scanning the source forward (serde_json keeps
/// no spans): each session is located at its `"id"` value, each later thing after it.
struct Checker<'a> {
    path: &'a Path,
    source: &'a str,
    tz: Tz,
    before: Option<WorldTime>,
    cursor: usize,
    errors: Vec<TaskError>,
}

impl Checker<'_> {
    /// The offset of the JSON string `value` at or after the cursor (the cursor if not found).
    fn find(&self, value: &str) -> usize {
        let quoted = serde_json::to_string(value).unwrap_or_default();
        self.source
            .get(self.cursor..)
            .and_then(|rest| rest.find(&quoted))
            .map(|i| self.cursor + i)
            .unwrap_or(self.cursor)
    }

    fn err_at(&mut self, offset: usize, what: impl Into<String>, hint: impl Into<String>) {
        let loc = Location::from_offset(self.path, self.source, offset);
        self.errors.push(TaskError::new(loc, what, hint));
    }

    fn time(&mut self, text: &str, field: &str) -> Option<WorldTime> {
        let at = self.find(text);
        match parse_world_time(text, self.tz) {
            Ok(t) => {
                if let Some(first) = self.before
                    && t >= first
                {
                    self.err_at(
                        at,
                        format!("{field} {text} is not before turn 1 ({first})"),
                        "the history is the past: every session must end before the task's first turn",
                    );
                }
                Some(t)
            }
            Err(msg) => {
                self.err_at(
                    at,
                    format!("{field}: {msg}"),
                    "write e.g. 2026-03-02T09:00:00; without an offset it is read in the task's `timezone`",
                );
                None
            }
        }
    }

    fn check(mut self, raw: RawHistory) -> Result<History, Vec<TaskError>> {
        if raw.sessions.is_empty() {
            self.err_at(
                0,
                "the history has no sessions",
                "add at least one session, or remove history.json",
            );
        }
        let epoch = chrono::DateTime::UNIX_EPOCH.fixed_offset();
        let mut sessions: Vec<Session> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let n_sessions = raw.sessions.len();
        let with_summary = raw.sessions.iter().filter(|s| s.summary.is_some()).count();
        let with_chunks = raw.sessions.iter().filter(|s| !s.chunks.is_empty()).count();
        for s in raw.sessions {
            let pos = self.find(&s.id);
            self.cursor = pos + 1;
            let id_ok = !s.id.is_empty()
                && s.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
            if !id_ok {
                self.err_at(
                    pos,
                    format!("session id `{}` is empty or has characters other than letters, digits, `-`, `_`, `.`", s.id),
                    "use a short id such as `s1` or `2026-03-02`; retrieved units are named after it",
                );
            }
            if ids.contains(&s.id) {
                self.err_at(
                    pos,
                    format!("session id `{}` is used twice", s.id),
                    "give every session its own id",
                );
            }
            ids.push(s.id.clone());
            let started = self.time(&s.started_at, &format!("session `{}` started_at", s.id));
            if let (Some(t), Some(prev)) = (started, sessions.last().map(|p| p.started_at))
                && t < prev
            {
                self.err_at(
                    pos,
                    format!(
                        "session `{}` starts before the session listed above it",
                        s.id
                    ),
                    "list sessions oldest first",
                );
            }
            if s.summary.as_deref().is_some_and(|t| t.trim().is_empty()) {
                self.err_at(
                    pos,
                    format!("session `{}` has an empty summary", s.id),
                    "write the summary or leave the field out",
                );
            }
            if s.utterances.is_empty() {
                self.err_at(
                    pos,
                    format!("session `{}` has no utterances", s.id),
                    "a session is a conversation: add its utterances",
                );
            }
            let mut utterances = Vec::new();
            let mut last = started;
            for (i, u) in s.utterances.into_iter().enumerate() {
                let n = i + 1;
                let at = self.time(&u.at, &format!("session `{}` utterance {n} at", s.id));
                let here = self.find(&u.at);
                if let (Some(t), Some(l)) = (at, last)
                    && t < l
                {
                    self.err_at(
                        here,
                        format!(
                            "session `{}` utterance {n} is earlier than the session's start or the utterance before it",
                            s.id
                        ),
                        "utterances are in time order, from the session's started_at on",
                    );
                }
                if u.text.trim().is_empty() {
                    self.err_at(
                        here,
                        format!("session `{}` utterance {n} has an empty text", s.id),
                        "write what was said or remove the utterance",
                    );
                }
                last = at.or(last);
                self.cursor = here + 1;
                utterances.push(Utterance {
                    role: u.role,
                    at: at.unwrap_or(epoch),
                    text: u.text,
                });
            }
            let mut expected = 1;
            let mut chunk_error = false;
            for c in &s.chunks {
                if c.from != expected || c.to < c.from || c.to > utterances.len() {
                    self.err_at(
                        pos,
                        format!(
                            "session `{}`: chunk {}–{} does not continue at utterance {expected} within the session's {} utterance(s)",
                            s.id,
                            c.from,
                            c.to,
                            utterances.len()
                        ),
                        "chunks are consecutive, 1-based, inclusive ranges that cover every utterance once: from 1, each from = previous to + 1, the last to = the number of utterances",
                    );
                    chunk_error = true;
                    break;
                }
                if c.summary.trim().is_empty() {
                    self.err_at(
                        pos,
                        format!(
                            "session `{}`: chunk {}–{} has an empty summary",
                            s.id, c.from, c.to
                        ),
                        "write the chunk's summary",
                    );
                }
                expected = c.to + 1;
            }
            if !s.chunks.is_empty() && !chunk_error && expected != utterances.len() + 1 {
                self.err_at(
                    pos,
                    format!(
                        "session `{}`: the chunks end at utterance {} of {}",
                        s.id,
                        expected - 1,
                        utterances.len()
                    ),
                    "the chunks must cover every utterance of the session",
                );
            }
            sessions.push(Session {
                id: s.id,
                started_at: started.unwrap_or(epoch),
                summary: s.summary,
                chunks: s
                    .chunks
                    .into_iter()
                    .map(|c| SummaryChunk {
                        from: c.from,
                        to: c.to,
                        summary: c.summary,
                    })
                    .collect(),
                utterances,
            });
        }
        if with_summary != 0 && with_summary != n_sessions {
            self.err_at(
                0,
                format!("{with_summary} of {n_sessions} sessions have a summary"),
                "give every session a `summary` or none (the summary granularity retrieves them all)",
            );
        }
        if with_chunks != 0 && with_chunks != n_sessions {
            self.err_at(
                0,
                format!("{with_chunks} of {n_sessions} sessions have summary chunks"),
                "give every session `chunks` or none (the chunk granularity retrieves them all)",
            );
        }
        if self.errors.is_empty() {
            Ok(History {
                path: self.path.to_path_buf(),
                sessions,
            })
        } else {
            Err(self.errors)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The run setting.

/// What a retrieved unit is (OdysseyBench §4): raw `session`s or `utterance`s, or the author's
/// session `summary`s or summary `chunk`s.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    Session,
    Utterance,
    Summary,
    Chunk,
}

impl Granularity {
    pub const ALL: [Granularity; 4] = [
        Granularity::Session,
        Granularity::Utterance,
        Granularity::Summary,
        Granularity::Chunk,
    ];
    pub fn as_str(&self) -> &'static str {
        match self {
            Granularity::Session => "session",
            Granularity::Utterance => "utterance",
            Granularity::Summary => "summary",
            Granularity::Chunk => "chunk",
        }
    }
}

/// The most units a `rag` setting may retrieve per search.
pub const MAX_K: u32 = 100;

/// How an agent sees a task's dialogue history (`--context`). Tasks without a history ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextSetting {
    /// The agent never sees the history.
    None,
    /// The whole history, rendered, before the first turn's prompt (OdysseyBench's main
    /// setting, and the default).
    #[default]
    Long,
    /// A `memory_search` tool over the history's units of `granularity`, returning at most `k`.
    Rag { granularity: Granularity, k: u32 },
}

impl fmt::Display for ContextSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContextSetting::None => f.write_str("none"),
            ContextSetting::Long => f.write_str("long"),
            ContextSetting::Rag { granularity, k } => {
                write!(f, "rag:{}:{k}", granularity.as_str())
            }
        }
    }
}

impl FromStr for ContextSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        const HINT: &str = "write none, long, or rag:<granularity>:<k> with granularity session, utterance, summary or chunk (e.g. rag:utterance:5)";
        match s {
            "none" => return Ok(ContextSetting::None),
            "long" => return Ok(ContextSetting::Long),
            _ => {}
        }
        let mut parts = s.split(':');
        let (Some("rag"), Some(g), Some(k), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("unknown context setting `{s}` — {HINT}"));
        };
        let granularity = Granularity::ALL
            .into_iter()
            .find(|x| x.as_str() == g)
            .ok_or_else(|| format!("unknown granularity `{g}` in `{s}` — {HINT}"))?;
        let k: u32 = k
            .parse()
            .map_err(|_| format!("top-k `{k}` in `{s}` is not a number — {HINT}"))?;
        if k == 0 || k > MAX_K {
            return Err(format!(
                "top-k {k} in `{s}` is out of range — use 1 to {MAX_K}"
            ));
        }
        Ok(ContextSetting::Rag { granularity, k })
    }
}

impl serde::Serialize for ContextSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ContextSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TZ: Tz = chrono_tz::Europe::London;

    fn parse(src: &str) -> Result<History, Vec<String>> {
        History::parse(Path::new("t/history.json"), src, TZ, None)
            .map_err(|e| e.iter().map(|e| e.to_string()).collect())
    }

    const GOOD: &str = r#"{"sessions": [
  {"id": "s1", "started_at": "2026-03-02T09:00:00", "summary": "Budget talk.",
   "chunks": [{"from": 1, "to": 2, "summary": "Budget is 4,000."}],
   "utterances": [
     {"role": "user", "at": "2026-03-02T09:00:00", "text": "The budget is 4,000."},
     {"role": "assistant", "at": "2026-03-02T09:01:00", "text": "Noted."}
   ]},
  {"id": "s2", "started_at": "2026-03-03T10:00:00", "summary": "Venue.",
   "chunks": [{"from": 1, "to": 1, "summary": "Prefers the Harbour Room."}],
   "utterances": [{"role": "user", "at": "2026-03-03T10:00:00", "text": "Book the Harbour Room."}]}
]}"#;

    #[test]
    fn a_good_history_loads_and_renders_with_dates() {
        let h = parse(GOOD).unwrap();
        assert_eq!(h.sessions.len(), 2);
        assert!(h.has_summaries() && h.has_chunks());
        let text = h.render(TZ);
        assert!(
            text.contains("## Session s1 — Monday 2026-03-02 09:00"),
            "{text}"
        );
        assert!(text.contains("[09:01] Assistant: Noted."), "{text}");
        assert!(
            text.contains("## Session s2 — Tuesday 2026-03-03 10:00"),
            "{text}"
        );
    }

    #[test]
    fn json_errors_are_located() {
        let e = parse("{\"sessions\": [\n  {\"id\": \"s1\", \"started_at\": \"2026-03-02T09:00:00\", \"utterances\": [{\"role\": \"boss\", \"at\": \"x\", \"text\": \"y\"}]}]}").unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("t/history.json:2:"), "{e:?}");
        assert!(e[0].contains("`role` is `boss`"), "{e:?}");
        assert!(e[0].contains("\"user\" or \"assistant\""), "{e:?}");
        let e = parse("{\"sessions\": [], \"notes\": 1}").unwrap_err();
        assert!(e[0].starts_with("t/history.json:1:"), "{e:?}");
        assert!(e[0].contains("unknown field `notes`"), "{e:?}");
    }

    /// Issue 12, item 5: every problem of shape in one go, each at its line and column, with
    /// "did you mean" for near misses (serde alone stops at the first).
    #[test]
    fn every_shape_problem_is_reported_at_once() {
        let src = r#"{"sessions": [
  {"id": "s1", "started_at": "2026-03-02T09:00:00",
   "chunks": [{"from": "1", "to": 2, "sumary": "x"}],
   "utterances": [
     {"rol": "user", "at": "2026-03-02T09:00:00", "text": "hi"},
     {"role": "user", "txet": "there", "at": 5}
   ]},
  {"id": 7, "started_at": "2026-03-03T10:00:00", "utterances": {}}
], "notes": 1}"#;
        let e = parse(src).unwrap_err();
        let want = [
            "t/history.json:3:16: `from` must be a whole number, not a string",
            "t/history.json:3:15: a chunk lacks its `summary`",
            "t/history.json:3:38: unknown field `sumary` in a chunk — did you mean `summary`?",
            "t/history.json:5:6: an utterance lacks its `role`",
            "t/history.json:5:7: unknown field `rol` in an utterance — did you mean `role`?",
            "t/history.json:6:6: an utterance lacks its `text`",
            "t/history.json:6:23: unknown field `txet` in an utterance — remove it, or use a known key: role, at, text",
            "t/history.json:6:40: `at` must be a string, not a number",
            "t/history.json:8:4: `id` must be a string, not a number",
            "t/history.json:8:50: `utterances` must be a list, not an object",
            "t/history.json:9:4: unknown field `notes` in the history — remove it, or use a known key: sessions",
        ];
        assert_eq!(e.len(), want.len(), "{e:#?}");
        for w in want {
            assert!(
                e.iter().any(|x| x.starts_with(w)),
                "missing {w:?} in {e:#?}"
            );
        }
    }

    #[test]
    fn semantic_errors_are_located_at_their_session() {
        let src = r#"{"sessions": [
  {"id": "a", "started_at": "2026-03-02T09:00:00",
   "utterances": [{"role": "user", "at": "2026-03-02T09:00:00", "text": "hi"}]},
  {"id": "a", "started_at": "2026-03-01T09:00:00",
   "utterances": [{"role": "user", "at": "2026-03-01T08:00:00", "text": " "}]},
  {"id": "c", "started_at": "yesterday", "utterances": []}
]}"#;
        let e = parse(src).unwrap_err();
        let has = |line: usize, what: &str| {
            assert!(
                e.iter()
                    .any(|m| m.starts_with(&format!("t/history.json:{line}:")) && m.contains(what)),
                "no `{what}` at line {line}: {e:#?}"
            )
        };
        has(4, "session id `a` is used twice");
        has(4, "starts before the session listed above it");
        has(5, "utterance 1 is earlier than the session's start");
        has(5, "utterance 1 has an empty text");
        has(6, "session `c` started_at");
        has(6, "session `c` has no utterances");
        assert!(e.iter().all(|m| m.contains(" — ")), "{e:#?}");
    }

    #[test]
    fn chunks_must_partition_the_session_and_summaries_be_all_or_none() {
        let bad = GOOD.replace(r#""from": 1, "to": 2"#, r#""from": 1, "to": 1"#);
        let e = parse(&bad).unwrap_err();
        assert!(
            e.iter()
                .any(|m| m.contains("the chunks end at utterance 1 of 2")),
            "{e:?}"
        );
        let bad = GOOD.replace(r#""from": 1, "to": 2"#, r#""from": 2, "to": 2"#);
        let e = parse(&bad).unwrap_err();
        assert!(
            e.iter()
                .any(|m| m.contains("does not continue at utterance 1")),
            "{e:?}"
        );
        let bad = GOOD.replace(r#", "summary": "Venue.""#, "");
        let e = parse(&bad).unwrap_err();
        assert!(
            e.iter()
                .any(|m| m.contains("1 of 2 sessions have a summary")),
            "{e:?}"
        );
    }

    #[test]
    fn the_history_must_precede_the_first_turn() {
        let first = parse_world_time("2026-03-03T09:30:00", TZ).unwrap();
        let e = History::parse(Path::new("h.json"), GOOD, TZ, Some(first)).unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].what.contains("is not before turn 1"), "{e:?}");
    }

    #[test]
    fn missing_summaries_are_named_for_the_granularities_that_need_them() {
        let plain = GOOD
            .replace(r#", "summary": "Budget talk.""#, "")
            .replace(r#", "summary": "Venue.""#, "");
        let h = parse(&plain).unwrap();
        assert!(h.supports(Granularity::Utterance).is_ok());
        let e = h.supports(Granularity::Summary).unwrap_err();
        assert!(e.contains("no session summaries"), "{e}");
    }

    #[test]
    fn context_settings_parse_and_print_round_trip() {
        for s in [
            "none",
            "long",
            "rag:utterance:5",
            "rag:chunk:25",
            "rag:session:1",
            "rag:summary:100",
        ] {
            let c: ContextSetting = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{s}\""));
        }
        assert_eq!(
            "rag:utterance:5".parse::<ContextSetting>().unwrap(),
            ContextSetting::Rag {
                granularity: Granularity::Utterance,
                k: 5
            }
        );
        for bad in [
            "",
            "rag",
            "rag:utterance",
            "rag:word:5",
            "rag:session:0",
            "rag:session:x",
            "rag:session:101",
            "rag:session:5:1",
            "short",
        ] {
            let e = bad.parse::<ContextSetting>().unwrap_err();
            assert!(e.contains(bad) || e.contains("out of range"), "{bad}: {e}");
        }
        assert_eq!(ContextSetting::default(), ContextSetting::Long);
    }
}
