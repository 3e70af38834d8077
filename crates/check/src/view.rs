//! The Starlark view `w` of the world, built once per (world, turn) evaluation and shared,
//! frozen, by every check of that evaluation.
//!
//! Cheap, small parts (`w.user`, `w.now`, `w.log`, `w.trajectory`) are built up front; mail and
//! calendar records are built on first use and cached for the evaluation; file contents are
//! never loaded ahead: `w.files.*` read through the world when called.

use std::cell::OnceCell;

use bureau_core::task::Task;
use bureau_core::time::WorldTime;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::Step;
use bureau_world::World;
use bureau_world::calendar::is_cancelled;
use chrono::SecondsFormat;
use chrono_tz::Tz;
use starlark::any::ProvidesStaticType;
use starlark::values::list::AllocList;
use starlark::values::structs::AllocStruct;
use starlark::values::{FrozenHeap, FrozenHeapRef, FrozenValue};

use crate::globals::api;

/// A datetime as ISO 8601 with seconds and offset (`2026-03-02T09:00:00+01:00`).
pub(crate) fn iso(t: &WorldTime) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, false)
}

/// One message of some mailbox, as a frozen Starlark struct.
pub(crate) struct MailEntry {
    pub owner: String,
    pub folder: String,
    pub value: FrozenValue,
}

pub(crate) struct MailCache {
    pub heap: FrozenHeapRef,
    pub items: Vec<MailEntry>,
}

/// One event of some calendar, as a frozen Starlark struct.
pub(crate) struct EventEntry {
    pub owner: String,
    pub cancelled: bool,
    pub value: FrozenValue,
}

pub(crate) struct CalendarCache {
    pub heap: FrozenHeapRef,
    pub items: Vec<EventEntry>,
}

/// What native functions see through `Evaluator::extra` during one evaluation.
#[derive(ProvidesStaticType)]
pub(crate) struct Ctx<'w> {
    pub world: &'w World,
    pub task: &'w Task,
    pub tz: Tz,
    /// The agent's final message of each turn (its last `message` step of the turn).
    pub finals: std::collections::BTreeMap<u32, String>,
    mail: OnceCell<MailCache>,
    calendar: OnceCell<CalendarCache>,
}

impl<'w> Ctx<'w> {
    pub fn new(task: &'w Task, world: &'w World) -> Ctx<'w> {
        Ctx {
            world,
            task,
            tz: task.timezone,
            finals: Default::default(),
            mail: OnceCell::new(),
            calendar: OnceCell::new(),
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

    /// Every message of every mailbox, in arrival order.
    pub fn mail(&self) -> &MailCache {
        self.mail.get_or_init(|| build_mail(self.world, self.tz))
    }

    /// Every event of every calendar, by owner, then start, then uid.
    pub fn calendar(&self) -> &CalendarCache {
        self.calendar
            .get_or_init(|| build_calendar(self.world, self.tz))
    }
}

/// Small helpers to allocate frozen values.
struct B<'h>(&'h FrozenHeap);

impl B<'_> {
    fn s(&self, x: &str) -> FrozenValue {
        self.0.alloc(x)
    }
    fn opt(&self, x: Option<&str>) -> FrozenValue {
        x.map(|x| self.s(x)).unwrap_or_else(FrozenValue::new_none)
    }
    fn list(&self, v: Vec<FrozenValue>) -> FrozenValue {
        self.0.alloc(AllocList(v))
    }
    fn strs<'a>(&self, v: impl IntoIterator<Item = &'a str>) -> FrozenValue {
        let items: Vec<FrozenValue> = v.into_iter().map(|x| self.s(x)).collect();
        self.list(items)
    }
    fn rec(&self, fields: Vec<(&'static str, FrozenValue)>) -> FrozenValue {
        self.0.alloc(AllocStruct(fields))
    }
    fn json(&self, v: &serde_json::Value) -> FrozenValue {
        self.0.alloc(v.clone())
    }
    /// A service view: JSON objects become structs (`x.field`), except `{"$dict": {...}}`,
    /// which becomes a dict (for maps keyed by data: cells, properties); arrays become lists.
    fn record(&self, v: &serde_json::Value) -> FrozenValue {
        use serde_json::Value as J;
        match v {
            J::Object(m) => {
                if m.len() == 1
                    && let Some(J::Object(d)) = m.get("$dict")
                {
                    let items: Vec<(String, FrozenValue)> =
                        d.iter().map(|(k, x)| (k.clone(), self.record(x))).collect();
                    return self.0.alloc(starlark::values::dict::AllocDict(items));
                }
                let fields: Vec<(String, FrozenValue)> =
                    m.iter().map(|(k, x)| (k.clone(), self.record(x))).collect();
                self.0.alloc(AllocStruct(fields))
            }
            J::Array(a) => self.list(a.iter().map(|x| self.record(x)).collect()),
            other => self.0.alloc(other.clone()),
        }
    }
}

fn build_mail(world: &World, tz: Tz) -> MailCache {
    let heap = FrozenHeap::new();
    let b = B(&heap);
    let mut items = Vec::new();
    let mail = world.mail();
    for user in mail.users() {
        for m in mail.messages(&user, None) {
            let p = &m.mail;
            let attachments: Vec<FrozenValue> = p
                .attachments
                .iter()
                .map(|a| {
                    b.rec(vec![
                        ("filename", b.s(&a.filename)),
                        ("size", heap.alloc(a.size)),
                        ("content_type", b.s(&a.content_type)),
                    ])
                })
                .collect();
            let date = p.date.map(|d| iso(&d.with_timezone(&tz).fixed_offset()));
            let value = b.rec(vec![
                ("id", b.s(&m.id)),
                ("owner", b.s(&m.owner)),
                ("folder", b.s(&m.folder)),
                ("seen", FrozenValue::new_bool(m.seen)),
                // `from` is a reserved word in Starlark: `m.sender` reads it (`getattr(m, "from")`
                // also works).
                (
                    "sender",
                    b.s(p.from.as_ref().map(|a| a.email.as_str()).unwrap_or("")),
                ),
                (
                    "from",
                    b.s(p.from.as_ref().map(|a| a.email.as_str()).unwrap_or("")),
                ),
                (
                    "from_name",
                    b.opt(p.from.as_ref().and_then(|a| a.name.as_deref())),
                ),
                ("to", b.strs(p.to.iter().map(|a| a.email.as_str()))),
                ("cc", b.strs(p.cc.iter().map(|a| a.email.as_str()))),
                ("bcc", b.strs(p.bcc.iter().map(|a| a.email.as_str()))),
                ("subject", b.s(&p.subject)),
                ("date", b.opt(date.as_deref())),
                ("text", b.s(&p.text)),
                ("message_id", b.opt(p.message_id.as_deref())),
                ("in_reply_to", b.opt(p.in_reply_to.as_deref())),
                ("attachments", b.list(attachments)),
            ]);
            items.push(MailEntry {
                owner: m.owner.clone(),
                folder: m.folder.clone(),
                value,
            });
        }
    }
    MailCache {
        heap: heap.into_ref(),
        items,
    }
}

fn build_calendar(world: &World, tz: Tz) -> CalendarCache {
    let heap = FrozenHeap::new();
    let b = B(&heap);
    let mut items = Vec::new();
    let cal = world.calendar();
    for user in cal.users() {
        for e in cal.events(&user) {
            let attendees: Vec<FrozenValue> = e
                .attendees
                .iter()
                .map(|a| b.rec(vec![("email", b.s(&a.email)), ("status", b.s(&a.status))]))
                .collect();
            let value = b.rec(vec![
                ("uid", b.s(&e.uid)),
                ("summary", b.s(&e.summary)),
                ("description", b.s(&e.description)),
                ("location", b.s(&e.location)),
                (
                    "start",
                    b.s(&iso(&e.start.with_timezone(&tz).fixed_offset())),
                ),
                ("end", b.s(&iso(&e.end.with_timezone(&tz).fixed_offset()))),
                ("all_day", FrozenValue::new_bool(e.all_day)),
                ("organizer", b.opt(e.organizer.as_deref())),
                ("attendees", b.list(attendees)),
                ("status", b.s(&e.status)),
            ]);
            items.push(EventEntry {
                owner: user.clone(),
                cancelled: is_cancelled(e),
                value,
            });
        }
    }
    CalendarCache {
        heap: heap.into_ref(),
        items,
    }
}

/// The frozen `w` of one evaluation.
pub(crate) struct View {
    pub heap: FrozenHeapRef,
    pub w: FrozenValue,
}

/// Build `w`: user, turn, now, timezone, files, mail, calendar, log, trajectory.
pub(crate) fn build_view(ctx: &Ctx<'_>, trajectory: &[Step]) -> View {
    let heap = FrozenHeap::new();
    let api = api();
    heap.add_reference(api.globals.heap());
    let b = B(&heap);
    let world = ctx.world;
    let user = b.rec(vec![
        ("name", b.s(&ctx.task.user.name)),
        ("email", b.s(&ctx.task.user.email)),
    ]);
    let log: Vec<FrozenValue> = world
        .log()
        .iter()
        .map(|e| {
            b.rec(vec![
                ("seq", heap.alloc(e.seq)),
                ("turn", heap.alloc(e.turn)),
                (
                    "time",
                    b.s(&iso(&e.time.with_timezone(&ctx.tz).fixed_offset())),
                ),
                ("actor", b.s(&e.actor.to_string())),
                ("service", b.s(&e.service)),
                ("action", b.s(&e.action)),
                ("silent", FrozenValue::new_bool(e.silent)),
                ("payload", b.json(&e.payload)),
            ])
        })
        .collect();
    let steps: Vec<FrozenValue> = trajectory
        .iter()
        .filter_map(|s| {
            let (tool, args, outcome) = s.as_tool_call()?;
            let (ok, result, error) = match outcome {
                ToolOutcome::Ok { value, .. } => (true, b.json(value), FrozenValue::new_none()),
                ToolOutcome::Error { message } => (false, FrozenValue::new_none(), b.s(message)),
            };
            Some(b.rec(vec![
                ("turn", heap.alloc(s.turn)),
                ("tool", b.s(tool)),
                ("args", b.json(args)),
                ("ok", FrozenValue::new_bool(ok)),
                ("result", result),
                ("error", error),
            ]))
        })
        .collect();
    let w = b.rec(vec![
        ("user", user),
        ("turn", heap.alloc(world.turn())),
        (
            "now",
            b.s(&iso(&world.now().with_timezone(&ctx.tz).fixed_offset())),
        ),
        ("timezone", b.s(ctx.tz.name())),
        (
            "params",
            b.json(&serde_json::Value::Object(
                ctx.task
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )),
        ),
        ("files", api.files),
        ("mail", api.mail),
        ("calendar", api.calendar),
        ("final_message", api.final_message),
        ("reference", api.reference),
        ("log", b.list(log)),
        ("trajectory", b.list(steps)),
        ("people", b.record(&people_view(world))),
        ("chat", b.record(&world.chat().check_view(ctx.tz))),
        ("kb", b.record(&world.kb().check_view(ctx.tz))),
        ("sheets", b.record(&world.sheets().check_view(ctx.tz))),
        (
            "tracker",
            b.record(
                &world
                    .tracker()
                    .check_view(ctx.tz, &world.service_url("tracker")),
            ),
        ),
        (
            "code",
            b.record(&world.code().check_view(ctx.tz, &world.service_url("code"))),
        ),
        ("outputs", outputs_view(&b, ctx, trajectory)),
    ]);
    View {
        heap: heap.into_ref(),
        w,
    }
}

/// `w.outputs`: the trial's deliverables so far ([`crate::outputs`]), each `path, size,
/// reasons` (list of strings) and `matched_names`.
fn outputs_view(b: &B<'_>, ctx: &Ctx<'_>, trajectory: &[Step]) -> FrozenValue {
    let collected = crate::outputs::collect_outputs(ctx.task, ctx.world, trajectory);
    let items: Vec<FrozenValue> = collected
        .outputs
        .iter()
        .map(|o| {
            b.rec(vec![
                ("path", b.s(&o.path)),
                ("size", b.0.alloc(o.size)),
                ("reasons", b.strs(o.reasons.iter().map(|r| r.as_str()))),
                (
                    "matched_names",
                    b.strs(o.matched_names.iter().map(String::as_str)),
                ),
            ])
        })
        .collect();
    b.list(items)
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
