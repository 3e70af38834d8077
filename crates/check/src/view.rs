//! The view `w` of the world, built once per (world, turn) evaluation in the evaluating
//! process, as data ([`Tree`]); the checks' process freezes it and every check of the
//! evaluation shares it.
//!
//! Cheap, small parts (`w.user`, `w.now`, `w.log`, `w.trajectory`, the service views) are
//! built up front; mail and calendar records are built when a check first asks for them
//! ([`mail_entries`], [`calendar_entries`]); file contents are never loaded ahead: `w.files.*`
//! ask for them when called (see [`crate::remote`]).

use bureau_core::task::Task;
use bureau_core::time::WorldTime;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::Step;
use bureau_world::World;
use bureau_world::calendar::is_cancelled;
use chrono::SecondsFormat;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::tree::{ApiName, Tree};

/// A datetime as ISO 8601 with seconds and offset (`2026-03-02T09:00:00+01:00`).
pub(crate) fn iso(t: &WorldTime) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// One message of some mailbox, or one event of some calendar, as a record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub owner: String,
    /// The message's folder (empty for an event).
    pub folder: String,
    /// Whether the event is cancelled (false for a message).
    pub cancelled: bool,
    pub value: Tree,
}

/// The world and task an evaluation reads, in the evaluating process.
pub(crate) struct Ctx<'w> {
    pub world: &'w World,
    pub task: &'w Task,
    pub tz: Tz,
    /// The agent's final message of each turn (its last `message` step of the turn).
    pub finals: std::collections::BTreeMap<u32, String>,
}

impl<'w> Ctx<'w> {
    pub fn new(task: &'w Task, world: &'w World) -> Ctx<'w> {
        Ctx {
            world,
            task,
            tz: task.timezone,
            finals: Default::default(),
        }
    }

    /// The context with the final messages of `trajectory` (for `w.final_message`).
    pub fn with_trajectory(mut self, trajectory: &[Step]) -> Ctx<'w> {
        for s in trajectory {
            if let bureau_core::trajectory::StepKind::Message { text } = &s.kind {
                self.finals.insert(s.turn, text.clone());
            }
        }
        self
    }
}

/// Every message of every mailbox, in arrival order, as the records checks see.
pub(crate) fn mail_entries(world: &World, tz: Tz) -> Vec<Entry> {
    let mut items = Vec::new();
    let mail = world.mail();
    for user in mail.users() {
        for m in mail.messages(&user, None) {
            let p = &m.mail;
            let attachments: Vec<Tree> = p
                .attachments
                .iter()
                .map(|a| {
                    Tree::rec(vec![
                        ("filename", Tree::s(&a.filename)),
                        ("size", Tree::int(a.size)),
                        ("content_type", Tree::s(&a.content_type)),
                    ])
                })
                .collect();
            let date = p.date.map(|d| iso(&d.with_timezone(&tz).fixed_offset()));
            let from = p.from.as_ref().map(|a| a.email.as_str()).unwrap_or("");
            let value = Tree::rec(vec![
                ("id", Tree::s(&m.id)),
                ("owner", Tree::s(&m.owner)),
                ("folder", Tree::s(&m.folder)),
                ("seen", Tree::Bool(m.seen)),
                // `from` is a reserved word in Starlark: `m.sender` reads it (`getattr(m, "from")`
                // also works).
                ("sender", Tree::s(from)),
                ("from", Tree::s(from)),
                (
                    "from_name",
                    Tree::opt(p.from.as_ref().and_then(|a| a.name.as_deref())),
                ),
                ("to", Tree::strs(p.to.iter().map(|a| a.email.as_str()))),
                ("cc", Tree::strs(p.cc.iter().map(|a| a.email.as_str()))),
                ("bcc", Tree::strs(p.bcc.iter().map(|a| a.email.as_str()))),
                ("subject", Tree::s(&p.subject)),
                ("date", Tree::opt(date.as_deref())),
                ("text", Tree::s(&p.text)),
                ("message_id", Tree::opt(p.message_id.as_deref())),
                ("in_reply_to", Tree::opt(p.in_reply_to.as_deref())),
                ("attachments", Tree::List(attachments)),
            ]);
            items.push(Entry {
                owner: m.owner.clone(),
                folder: m.folder.clone(),
                cancelled: false,
                value,
            });
        }
    }
    items
}

/// Every event of every calendar, by owner, then start, then uid, as the records checks see.
pub(crate) fn calendar_entries(world: &World, tz: Tz) -> Vec<Entry> {
    let mut items = Vec::new();
    let cal = world.calendar();
    for user in cal.users() {
        for e in cal.events(&user) {
            let attendees: Vec<Tree> = e
                .attendees
                .iter()
                .map(|a| {
                    Tree::rec(vec![
                        ("email", Tree::s(&a.email)),
                        ("status", Tree::s(&a.status)),
                    ])
                })
                .collect();
            let value = Tree::rec(vec![
                ("uid", Tree::s(&e.uid)),
                ("summary", Tree::s(&e.summary)),
                ("description", Tree::s(&e.description)),
                ("location", Tree::s(&e.location)),
                (
                    "start",
                    Tree::s(&iso(&e.start.with_timezone(&tz).fixed_offset())),
                ),
                (
                    "end",
                    Tree::s(&iso(&e.end.with_timezone(&tz).fixed_offset())),
                ),
                ("all_day", Tree::Bool(e.all_day)),
                ("organizer", Tree::opt(e.organizer.as_deref())),
                ("attendees", Tree::List(attendees)),
                ("status", Tree::s(&e.status)),
            ]);
            items.push(Entry {
                owner: user.clone(),
                folder: String::new(),
                cancelled: is_cancelled(e),
                value,
            });
        }
    }
    items
}

/// Build `w`: user, turn, now, timezone, files, mail, calendar, log, trajectory, services.
pub(crate) fn build_view(ctx: &Ctx<'_>, trajectory: &[Step]) -> Tree {
    let world = ctx.world;
    let user = Tree::rec(vec![
        ("name", Tree::s(&ctx.task.user.name)),
        ("email", Tree::s(&ctx.task.user.email)),
    ]);
    let log: Vec<Tree> = world
        .log()
        .iter()
        .map(|e| {
            Tree::rec(vec![
                ("seq", Tree::int(e.seq)),
                ("turn", Tree::int(e.turn)),
                (
                    "time",
                    Tree::s(&iso(&e.time.with_timezone(&ctx.tz).fixed_offset())),
                ),
                ("actor", Tree::s(&e.actor.to_string())),
                ("service", Tree::s(&e.service)),
                ("action", Tree::s(&e.action)),
                ("silent", Tree::Bool(e.silent)),
                ("payload", Tree::Json(e.payload.clone())),
            ])
        })
        .collect();
    let steps: Vec<Tree> = trajectory
        .iter()
        .filter_map(|s| {
            let (tool, args, outcome) = s.as_tool_call()?;
            let (ok, result, error) = match outcome {
                ToolOutcome::Ok { value, .. } => (true, Tree::Json(value.clone()), Tree::None),
                ToolOutcome::Error { message } => (false, Tree::None, Tree::s(message)),
            };
            Some(Tree::rec(vec![
                ("turn", Tree::int(s.turn)),
                ("tool", Tree::s(tool)),
                ("args", Tree::Json(args.clone())),
                ("ok", Tree::Bool(ok)),
                ("result", result),
                ("error", error),
            ]))
        })
        .collect();
    Tree::rec(vec![
        ("user", user),
        ("turn", Tree::int(world.turn())),
        (
            "now",
            Tree::s(&iso(&world.now().with_timezone(&ctx.tz).fixed_offset())),
        ),
        ("timezone", Tree::s(ctx.tz.name())),
        (
            "params",
            Tree::Json(serde_json::Value::Object(
                ctx.task
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )),
        ),
        ("files", Tree::Api(ApiName::Files)),
        ("mail", Tree::Api(ApiName::Mail)),
        ("calendar", Tree::Api(ApiName::Calendar)),
        ("final_message", Tree::Api(ApiName::FinalMessage)),
        ("reference", Tree::Api(ApiName::Reference)),
        ("log", Tree::List(log)),
        ("trajectory", Tree::List(steps)),
        ("people", Tree::Record(people_view(world))),
        ("chat", Tree::Record(world.chat().check_view(ctx.tz))),
        ("kb", Tree::Record(world.kb().check_view(ctx.tz))),
        ("sheets", Tree::Record(world.sheets().check_view(ctx.tz))),
        (
            "tracker",
            Tree::Record(
                world
                    .tracker()
                    .check_view(ctx.tz, &world.service_url("tracker")),
            ),
        ),
        (
            "code",
            Tree::Record(world.code().check_view(ctx.tz, &world.service_url("code"))),
        ),
        ("outputs", outputs_view(ctx, trajectory)),
    ])
}

/// `w.outputs`: the trial's deliverables so far ([`crate::outputs`]), each `path, size,
/// reasons` (list of strings) and `matched_names`.
fn outputs_view(ctx: &Ctx<'_>, trajectory: &[Step]) -> Tree {
    let collected = crate::outputs::collect_outputs(ctx.task, ctx.world, trajectory);
    Tree::List(
        collected
            .outputs
            .iter()
            .map(|o| {
                Tree::rec(vec![
                    ("path", Tree::s(&o.path)),
                    ("size", Tree::int(o.size)),
                    ("reasons", Tree::strs(o.reasons.iter().map(|r| r.as_str()))),
                    (
                        "matched_names",
                        Tree::strs(o.matched_names.iter().map(String::as_str)),
                    ),
                ])
            })
            .collect(),
    )
}

/// `w.people`: the roster, as a list of person records sorted by email.
fn people_view(world: &World) -> serde_json::Value {
    serde_json::Value::Array(
        world
            .people()
            .iter()
            .map(|p| serde_json::to_value(p).unwrap_or_default())
            .collect(),
    )
}
