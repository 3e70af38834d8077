//! The office world of one trial.
//!
//! A [`World`] is a workspace directory plus the state of each service (mail, calendar). It is
//! built from a task's `world/` ([`World::build`]), changed by task events
//! ([`World::begin_turn`]) and by the agent through tools ([`World::call_tool`]), and
//! snapshotted after every turn ([`World::snapshot`] / [`World::restore`]). Every change goes
//! through one event log ([`World::log`]) with its actor, turn and world time.
//!
//! Checks read the world through typed accessors: [`World::files`], [`World::mail`],
//! [`World::calendar`], [`World::log`].

pub mod attachments;
pub mod base;
pub mod calendar;
pub mod chat;
pub mod code;
pub mod embed;
mod error;
mod events;
pub mod files;
pub mod generated;
pub mod kb;
pub mod mail;
pub mod memory;
pub mod people;
pub mod sheets;
mod snapshot;
pub mod tools;
pub mod tracker;
pub mod trial_files;
pub mod urls;

use std::path::{Path, PathBuf};

use bureau_core::log::{Actor, LogEntry};
use bureau_core::task::{Task, Turn, User};
use bureau_core::time::WorldTime;
use bureau_core::tool::{ToolOutcome, ToolSpec};
use chrono_tz::Tz;
use serde_json::Value;

pub use base::BaseLayer;
pub use calendar::CalendarState;
pub use chat::ChatState;
pub use code::CodeState;
pub use error::WorldError;
pub use files::{FileInfo, Files};
pub use kb::KbState;
pub use mail::{MailState, StoredMail};
pub use people::{
    ChannelKind, DeterministicPolicy, Incoming, Knowledge, People, Person, Reply, ReplyPolicy,
};
pub use sheets::SheetsState;
pub use snapshot::{FileRecord, Services, Snapshot};
pub use tracker::TrackerState;

/// The live office of one trial.
#[derive(Debug)]
pub struct World {
    root: PathBuf,
    files: Files,
    mail: MailState,
    calendar: CalendarState,
    people: People,
    /// How colleagues answer the agent (not part of snapshots: it is code, not state).
    policy: Box<dyn ReplyPolicy>,
    chat: ChatState,
    kb: KbState,
    sheets: SheetsState,
    tracker: TrackerState,
    code: CodeState,
    /// Set while a silent event runs: everything it logs is silent.
    silent_scope: bool,
    /// The task's `apps`: which services' tools the agent is offered (empty = all).
    apps: Vec<String>,
    user: User,
    timezone: Tz,
    turn: u32,
    now: WorldTime,
    log: Vec<LogEntry>,
    /// The workspace manifest right after the build (turn 0), for [`World::changed_files`].
    baseline: Snapshot,
    // -- dialogue history (OdysseyBench) --
    /// The `memory` service: set by the run under `--context rag:..` for a task with a
    /// history; not state (read-only, not in snapshots), like the reply policy.
    memory: Option<memory::MemoryIndex>,
    /// Media the running tool returns beside its value (see [`World::attach_media`]); taken
    /// into the tool's outcome when it succeeds. Not state.
    media_out: Vec<bureau_core::tool::Media>,
    // -- replica namespace entry --
    /// When the workspace is an overlay replica (`bureau-replica`), the handle that lets
    /// agent subprocesses (the confined shell, harness processes) run *inside* the replica's
    /// namespaces, where `getcwd()` names the workspace correctly. Not state. Declared before
    /// `replica` so it is dropped first: it holds the lease's namespaces open.
    workspace_entry: Option<std::sync::Arc<bureau_replica::NsEntry>>,
    // -- workspace base layer and replica (issue 5) --
    /// The read-only tree the workspace started from (a `[workspace]` task's generated tree).
    base: Option<std::sync::Arc<BaseLayer>>,
    /// The replica lease the workspace lives in, when built by [`World::build_on_replica`]:
    /// its change set makes snapshots O(changes); dropping the world resets and returns it.
    replica: Option<std::sync::Mutex<bureau_replica::Lease>>,
}

impl World {
    /// Build the world of `task` in `root` (created if missing; must be empty). The workspace
    /// is `root/workspace`; blobs of snapshots go to `root/blobs`.
    pub fn build(task: &Task, root: &Path) -> Result<World, WorldError> {
        events::build(task, root, None)
    }

    /// Build the world of a `[workspace]` task on a replica of its generated tree: the
    /// workspace is the lease's directory (already holding the generated files, so nothing is
    /// copied), `base` the layer of the replica's baseline. Snapshots read only the paths the
    /// replica reports changed. The lease is reset and returned to its pool when the world is
    /// dropped. Blobs and hosted repositories stay under `root`.
    pub fn build_on_replica(
        task: &Task,
        root: &Path,
        lease: bureau_replica::Lease,
        base: std::sync::Arc<BaseLayer>,
    ) -> Result<World, WorldError> {
        events::build(task, root, Some((lease, base)))
    }

    /// The base layer the workspace started from, if any.
    pub fn base(&self) -> Option<&std::sync::Arc<BaseLayer>> {
        self.base.as_ref()
    }

    /// Whether the workspace is a replica (see [`World::build_on_replica`]).
    pub fn on_replica(&self) -> bool {
        self.replica.is_some()
    }

    /// Start turn `turn`: set the world clock and apply the turn's events (actor: task).
    pub fn begin_turn(&mut self, turn: &Turn) -> Result<(), WorldError> {
        self.turn = turn.index;
        self.now = turn.at;
        for ev in &turn.events {
            events::apply(self, ev)?;
        }
        Ok(())
    }

    /// Every tool of every service, sorted by name.
    pub fn tool_specs() -> Vec<ToolSpec> {
        tools::specs()
    }

    /// The tools of the given apps (a task's `apps`; `files` always, all apps when empty),
    /// sorted by name: what an agent of a task is offered.
    pub fn tool_specs_for(apps: &[String]) -> Vec<ToolSpec> {
        tools::all_specs()
            .iter()
            .filter(|t| tools::offered(&t.name, apps))
            .cloned()
            .collect()
    }

    /// The tools this world's agent is offered: those of the task's `apps` (see
    /// [`World::tool_specs_for`]), plus `memory_search` when the memory service is installed
    /// ([`World::set_memory`]).
    pub fn offered_tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs = Self::tool_specs_for(&self.apps);
        // -- dialogue history (OdysseyBench) --
        if let Some(m) = &self.memory {
            specs.push(tools::memory::spec(
                m.granularity().as_str(),
                m.k(),
                m.retrieval() != "bm25",
            ));
            specs.sort_by(|a, b| a.name.cmp(&b.name));
        }
        specs
    }

    // -- dialogue history (OdysseyBench) --
    /// Install (or remove) the `memory` service: a search index over the task's dialogue
    /// history. While installed, `memory_search` is offered and callable.
    pub fn set_memory(&mut self, memory: Option<memory::MemoryIndex>) {
        self.memory = memory;
    }
    pub fn memory(&self) -> Option<&memory::MemoryIndex> {
        self.memory.as_ref()
    }

    /// Call a tool as `actor`. Invalid arguments or impossible actions are tool errors with a
    /// message the agent can act on; they never panic and never change the world. The agent
    /// can only call the tools of the task's apps; colleagues (task events) can call any.
    pub fn call_tool(&mut self, actor: Actor, name: &str, args: &Value) -> ToolOutcome {
        // -- dialogue history (OdysseyBench) --
        if name == tools::memory::SEARCH {
            let args = if args.is_null() {
                &Value::Object(Default::default())
            } else {
                args
            };
            return match tools::memory::search(self, &actor, args) {
                Ok(value) => ToolOutcome::ok(value),
                Err(message) => ToolOutcome::Error { message },
            };
        }
        if actor == Actor::Agent && tools::exists(name) && !tools::offered(name, &self.apps) {
            return ToolOutcome::Error {
                message: format!(
                    "`{name}` is not available in this office (its apps are: files, {})",
                    self.apps
                        .iter()
                        .filter(|a| a.as_str() != "files")
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
        }
        tools::call(self, actor, name, args)
    }

    /// Give media (a picture, a page image, a sound) to the caller of the running tool, beside
    /// its JSON value.
    pub(crate) fn attach_media(&mut self, media: Vec<bureau_core::tool::Media>) {
        self.media_out.extend(media);
    }

    /// Keep the bytes of the media a tool returned in the world's blob store (`blobs/<blake3>`,
    /// where snapshots keep file contents), so that a trajectory, which records only their
    /// digests, can be shown with its pictures later.
    fn keep_media(&self, media: &[bureau_core::tool::Media]) {
        let blobs = self.root.join("blobs");
        for m in media {
            let Some(bytes) = bureau_media::media_bytes(m) else {
                continue;
            };
            // Best effort: a blob that cannot be written leaves the trajectory without that
            // picture, never the agent without its answer.
            let _ = std::fs::create_dir_all(&blobs);
            let _ = snapshot::store_blob(&blobs, &m.blake3, &bytes);
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The agent's workspace directory.
    pub fn workspace(&self) -> &Path {
        self.files.root()
    }
    pub fn user(&self) -> &User {
        &self.user
    }
    /// `https://<service>.<domain of the user's email>`: the base of the stable URLs of that
    /// service's objects ([`urls`]).
    pub fn service_url(&self, service: &str) -> String {
        urls::service_base(service, &self.user.email)
    }
    /// The stable URL of object `id` of `kind` ([`urls`]).
    pub fn url_of(&self, kind: urls::Kind, id: &str) -> String {
        urls::url_of(kind, id, &self.user.email)
    }
    pub fn timezone(&self) -> Tz {
        self.timezone
    }
    /// The current turn (0 before the first turn).
    pub fn turn(&self) -> u32 {
        self.turn
    }
    /// The world clock.
    pub fn now(&self) -> WorldTime {
        self.now
    }
    pub fn files(&self) -> &Files {
        &self.files
    }
    pub fn mail(&self) -> &MailState {
        &self.mail
    }
    pub fn calendar(&self) -> &CalendarState {
        &self.calendar
    }
    /// The roster of `world/people.toml`.
    pub fn people(&self) -> &People {
        &self.people
    }
    /// Replace how colleagues answer (default [`DeterministicPolicy`]).
    pub fn set_reply_policy(&mut self, policy: Box<dyn ReplyPolicy>) {
        self.policy = policy;
    }
    pub fn reply_policy(&self) -> &dyn ReplyPolicy {
        self.policy.as_ref()
    }
    pub fn chat(&self) -> &ChatState {
        &self.chat
    }
    pub fn kb(&self) -> &KbState {
        &self.kb
    }
    pub fn sheets(&self) -> &SheetsState {
        &self.sheets
    }
    pub fn tracker(&self) -> &TrackerState {
        &self.tracker
    }
    pub fn code(&self) -> &CodeState {
        &self.code
    }

    /// The email of whoever acts: the task's user for the agent (and the task), the person of
    /// the roster for a colleague. A colleague missing from `world/people.toml` is an error.
    pub fn acting_email(&self, actor: &Actor) -> Result<String, String> {
        match actor {
            Actor::Agent | Actor::Task => Ok(self.user.email.clone()),
            Actor::Colleague(who) => self
                .people
                .find(who)
                .map(|p| p.email.clone())
                .ok_or_else(|| format!("`{who}` is not a person of world/people.toml")),
        }
    }
    /// The world event log, in order.
    pub fn log(&self) -> &[LogEntry] {
        &self.log
    }

    /// Append to the event log.
    pub(crate) fn record(
        &mut self,
        actor: Actor,
        service: &str,
        action: &str,
        silent: bool,
        payload: Value,
    ) {
        let seq = self.log.len() as u64 + 1;
        self.log.push(LogEntry {
            seq,
            turn: self.turn,
            time: self.now,
            actor,
            service: service.to_string(),
            action: action.to_string(),
            silent: silent || self.silent_scope,
            payload,
        });
    }

    /// Snapshot the whole world: a manifest of the workspace with content hashes (contents
    /// stored once in `root/blobs/`), the service state as canonical JSON, the log length.
    pub fn snapshot(&self) -> Result<Snapshot, WorldError> {
        snapshot::take(self)
    }

    /// The snapshot taken right after the build (turn 0): the world as the task seeded it,
    /// before any event or agent action. The run writes it as `snapshots/turn-0.json` so a
    /// viewer can show what turn 1 changed.
    pub fn baseline(&self) -> &Snapshot {
        &self.baseline
    }

    /// Restore a snapshot taken of this world (or of a world with the same `root`): the
    /// workspace, the services, the clock and the log are exactly as they were.
    pub fn restore(&mut self, snap: &Snapshot) -> Result<(), WorldError> {
        let blobs = self.root.join("blobs");
        snapshot::restore(self, snap, &blobs)
    }

    /// Restore a snapshot whose file contents are stored in another world's `blobs` directory
    /// (e.g. a stored trial's `world/blobs`, when re-scoring it in a fresh world).
    pub fn restore_from(&mut self, snap: &Snapshot, blobs: &Path) -> Result<(), WorldError> {
        snapshot::restore(self, snap, blobs)
    }

    /// Workspace paths created or modified since the world was built, and deleted ones.
    pub fn changed_files(&self) -> Result<ChangedFiles, WorldError> {
        snapshot::changed(self)
    }

    // -- replica namespace entry --
    /// Declare that the workspace is an overlay replica reached through `entry` (from
    /// `Replica::entry()`; `None` for an ordinary directory). Agent subprocesses then enter
    /// the replica's namespaces instead of using [`World::workspace`] as their directory.
    /// Set it again (or to `None`) whenever the replica is reset: an old entry refuses to
    /// enter.
    pub fn set_workspace_entry(&mut self, entry: Option<std::sync::Arc<bureau_replica::NsEntry>>) {
        self.workspace_entry = entry;
    }

    /// The replica namespace entry of the workspace, when it is an overlay replica.
    pub fn workspace_entry(&self) -> Option<&std::sync::Arc<bureau_replica::NsEntry>> {
        self.workspace_entry.as_ref()
    }
}

/// What changed in the workspace since the build.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChangedFiles {
    pub created: Vec<String>,
    pub modified: Vec<String>,
    pub deleted: Vec<String>,
}
