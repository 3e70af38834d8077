//! Evaluating a task's rubric against a world.
//!
//! [`evaluate`] runs the items of one turn (or `final`) in rubric order. The Starlark view `w`
//! is built once per call and shared, frozen, by all its checks; each check runs in its own
//! fresh heap under [`CheckLimits`]. A check that breaks — a Starlark error, `fail()`, a limit
//! hit, a return value that is not a bool or `{"passed": bool, "detail": str}` — gives a verdict
//! with status `Error` and the message, never a silent `Failed`.
//!
//! # What a check sees
//!
//! A check is `def name(w):` in `checks.star`. It returns `True`/`False`, or
//! `{"passed": bool, "detail": str}` (`detail` optional) to say why. Lines it `print`s are
//! appended to the detail of a failed or broken verdict.
//!
//! | expression | value |
//! | --- | --- |
//! | `w.user.name`, `w.user.email` | the task's user (the agent) |
//! | `w.turn` | the world's current turn (the last turn when evaluating `final`) |
//! | `w.now` | the world clock, ISO 8601 in the task time zone (`2026-03-02T09:00:00+01:00`) |
//! | `w.timezone` | the task's IANA time zone name |
//! | `w.files.exists(path)` | whether a file or directory exists |
//! | `w.files.text(path)` | a file's text; an error if it is missing or binary (guard with `exists`) |
//! | `w.files.list(dir="")` | file paths under `dir`, recursive, sorted; `[]` if `dir` is missing |
//! | `w.files.size(path)` | a file's size in bytes |
//! | `w.mail.messages(user=None, folder=None)` | messages of a mailbox (default: the task's user), every folder unless `folder` is given, in arrival order |
//! | `w.mail.sent(user=None)` | the `Sent` folder of a mailbox |
//! | `w.mail.users()` | mailbox owners, sorted |
//! | `w.calendar.events(user=None, include_cancelled=False)` | events of a calendar, by start then uid |
//! | `w.calendar.users()` | calendar owners, sorted |
//! | `w.log` | the world event log: `seq, turn, time, actor` (`agent`, `task`, `colleague:x`), `service, action, silent, payload` (dict) |
//! | `w.trajectory` | the agent's tool calls so far: `turn, tool, args` (dict), `ok`, `result` (dict or None), `error` (str or None) |
//! | `w.outputs` | the trial's deliverables so far ([`crate::outputs`]): `path, size, reasons` (list of `named_in_message`, `output_folder`, `expected_name`, `changed`), `matched_names`; sorted by path |
//!
//! A message has `id, owner, folder, seen, sender` (address; `from` is a reserved word in
//! Starlark, so `getattr(m, "from")` is the only way to read the `from` alias), `from_name`,
//! `to, cc, bcc` (lists of lower-case addresses), `subject, date` (ISO in the task time zone,
//! or None), `text, message_id, in_reply_to` and `attachments` (each `filename, size,
//! content_type`). An event has `uid, summary, description, location, start, end` (ISO in the
//! task time zone), `all_day, organizer` (or None), `attendees` (each `email, status`) and
//! `status` (`CONFIRMED`, `TENTATIVE`, `CANCELLED`).
//!
//! Helpers: `number(s)` (the figure in `s` as a float, or None), `normalize_numbers(s)`,
//! `contains(haystack, needle)` (case- and whitespace-insensitive, numbers by value),
//! `contains_all(haystack, [needles])`, `date(iso)` (a struct `year, month, day, hour, minute,
//! weekday` (0 = Monday), `iso` in the task time zone; local times are read in that zone) and
//! `minutes_between(a, b)` (float, negative if `b` is earlier). Document and image readers:
//! `docx`, `pptx`, `pdf`, `read_text` ([`crate::documents`]), `xlsx`, `image`,
//! `pdf_page_image`, `image_distance`, `colour_distance` (`images.rs`). The standard library
//! adds `struct`, `json`, `map`, `filter`, `partial` and `set`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;

use bureau_core::task::{Evaluator as ItemEvaluator, JudgeSpec, RubricItem, Task};
use bureau_core::trajectory::Step;
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_isolate::Peer;
use bureau_world::World;
use serde::{Deserialize, Serialize};
use starlark::environment::Module;
use starlark::eval::Evaluator;
use starlark::values::Value;
use starlark::values::dict::DictRef;

use crate::env::{Env, PeerAsk};
use crate::globals::CollectPrints;
use crate::judge::{Judge, run_judge};
use crate::program::{CheckProgram, one_line};
use crate::tree::{Tree, View};
use crate::view::{Ctx, build_view};

pub use crate::predicate::eval_predicate;

/// Resource limits for one check.
///
/// Checks run in an isolated process ([`bureau_isolate::run_job`]) under `wall` and
/// `max_memory_bytes` — all the checks of one evaluation in one process, and, if that process
/// is stopped, each check again alone in its own process, so the limits hold per check: a
/// check that would abort the process (an allocation too large to make, a value nested so
/// deeply that printing it overflows the stack) or run for hours (a large string scanned again
/// and again, each scan one step) becomes an `error` verdict naming the check and the limit,
/// and the other items are still evaluated.
///
/// That process starts small (from the zygote when the program started one) and holds no
/// world: it receives the view `w` as data and asks the evaluating process for file contents,
/// mail and calendar records when a check reads them ([`crate::remote`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckLimits {
    /// Starlark steps a check may take. Counted as starlark-rust "ticks": one per function call
    /// and one per loop iteration — a deterministic measure of the statements executed.
    pub max_steps: u64,
    /// Bytes the check may allocate on its Starlark heap (checked periodically, best effort).
    pub max_heap_bytes: usize,
    /// Depth of nested Starlark calls.
    pub max_callstack: usize,
    /// Wall-clock time one check may take (its child process is killed then).
    pub wall: std::time::Duration,
    /// Memory (address space) one check's process may map beyond what the evaluating
    /// process maps: the hard bound behind `max_heap_bytes`, which Starlark checks only now
    /// and then.
    pub max_memory_bytes: u64,
}

impl Default for CheckLimits {
    fn default() -> Self {
        CheckLimits {
            max_steps: 1_000_000,
            max_heap_bytes: 64 * 1024 * 1024,
            max_callstack: 50,
            wall: std::time::Duration::from_secs(20),
            max_memory_bytes: 1 << 30,
        }
    }
}

/// The verdicts of the rubric items whose `turn` is `turn`, in rubric order.
///
/// `trajectory` is what the agent did so far (tool calls are exposed as `w.trajectory`).
/// Items with `judge = ...` need a judge: see [`evaluate_judged`]; here they are `error`.
pub fn evaluate(
    task: &Task,
    program: Option<&CheckProgram>,
    world: &World,
    trajectory: &[Step],
    turn: TurnRef,
    limits: &CheckLimits,
) -> Vec<Verdict> {
    evaluate_judged(task, program, world, trajectory, turn, limits, None)
}

/// [`evaluate`] with an LLM judge for the items written `judge = "..."`.
pub fn evaluate_judged(
    task: &Task,
    program: Option<&CheckProgram>,
    world: &World,
    trajectory: &[Step],
    turn: TurnRef,
    limits: &CheckLimits,
    judge: Option<&dyn Judge>,
) -> Vec<Verdict> {
    let items: Vec<&RubricItem> = task.rubric.iter().filter(|i| i.turn == turn).collect();
    let ctx = Ctx::new(task, world).with_trajectory(trajectory);
    let needs_view = items
        .iter()
        .any(|i| check_name(&i.evaluator, judge.is_some()).is_some());
    let view = needs_view.then(|| build_view(&ctx, trajectory));
    // All the checks of the evaluation run in one isolated child (a fork per check would cost
    // more than most checks). If that child is stopped (a crash, a limit), every check runs
    // again alone in its own child, so that only the guilty one gets the error.
    let names: Vec<&str> = items
        .iter()
        .filter_map(|i| check_name(&i.evaluator, judge.is_some()))
        .collect();
    let mut batch = match (program, view.as_ref()) {
        (Some(program), Some(view)) if names.len() > 1 => {
            run_checks(program, &ctx, view, &names, limits)
                .ok()
                .filter(|b| b.len() == names.len())
        }
        _ => None,
    }
    .map(Vec::into_iter);
    items
        .into_iter()
        .map(|item| {
            let done = match (check_name(&item.evaluator, judge.is_some()), batch.as_mut()) {
                (Some(_), Some(b)) => b.next(),
                _ => None,
            };
            run_item(
                task,
                program,
                &ctx,
                view.as_ref(),
                item,
                limits,
                trajectory,
                judge,
                done,
            )
        })
        .collect()
}

/// The verdict of one rubric item (whatever its turn).
pub fn evaluate_item(
    task: &Task,
    program: Option<&CheckProgram>,
    world: &World,
    trajectory: &[Step],
    item: &RubricItem,
    limits: &CheckLimits,
) -> Verdict {
    let ctx = Ctx::new(task, world).with_trajectory(trajectory);
    let view = check_name(&item.evaluator, false)
        .is_some()
        .then(|| build_view(&ctx, trajectory));
    run_item(
        task,
        program,
        &ctx,
        view.as_ref(),
        item,
        limits,
        trajectory,
        None,
        None,
    )
}

/// The `checks.star` function that decides an item: its check, or a judged item's twin when
/// the evaluation has no judge.
fn check_name(evaluator: &ItemEvaluator, has_judge: bool) -> Option<&str> {
    match evaluator {
        ItemEvaluator::Check(n) => Some(n),
        ItemEvaluator::Judge(JudgeSpec { twin: Some(n), .. }) if !has_judge => Some(n),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_item(
    task: &Task,
    program: Option<&CheckProgram>,
    ctx: &Ctx<'_>,
    view: Option<&Tree>,
    item: &RubricItem,
    limits: &CheckLimits,
    trajectory: &[Step],
    judge_model: Option<&dyn Judge>,
    checked: Option<(VerdictStatus, Option<String>)>,
) -> Verdict {
    let mut judge = None;
    let (status, detail) = match &item.evaluator {
        ItemEvaluator::Judge(JudgeSpec {
            twin: Some(name), ..
        }) if judge_model.is_none() => {
            let (s, d) = match (checked, program, view) {
                (Some(done), _, _) => done,
                (None, Some(program), Some(view)) => run_check(program, ctx, view, name, limits),
                _ => (
                    VerdictStatus::Error,
                    Some(format!(
                        "twin `{name}` cannot run: the task has no compiled checks.star; define `def {name}(w):` in checks.star"
                    )),
                ),
            };
            let d = d.unwrap_or_default();
            let sep = if d.is_empty() { "" } else { ": " };
            (
                s,
                Some(format!(
                    "deterministic twin `{name}` (no judge given){sep}{d}"
                )),
            )
        }
        ItemEvaluator::Judge(spec) => {
            let (s, d, record) = run_judge(task, ctx.world, trajectory, item, spec, judge_model);
            judge = record;
            (s, d)
        }
        ItemEvaluator::Predicate(p) => {
            let (s, d) = eval_predicate(task, p, ctx.world, trajectory);
            (s, Some(d))
        }
        ItemEvaluator::Check(name) => match (checked, program, view) {
            (Some(done), _, _) => done,
            (None, Some(program), Some(view)) => run_check(program, ctx, view, name, limits),
            _ => (
                VerdictStatus::Error,
                Some(format!(
                    "check `{name}` cannot run: the task has no compiled checks.star; define `def {name}(w):` in checks.star"
                )),
            ),
        },
    };
    Verdict {
        id: item.id.clone(),
        turn: item.turn,
        status,
        weight: item.weight,
        kind: item.kind,
        red_line: item.red_line,
        categories: item.categories.clone(),
        detail,
        judge,
    }
}

/// Run one check in an isolated process: see [`CheckLimits`].
fn run_check(
    program: &CheckProgram,
    ctx: &Ctx<'_>,
    view: &Tree,
    name: &str,
    limits: &CheckLimits,
) -> (VerdictStatus, Option<String>) {
    if program.function(name).is_none() {
        return unknown_function(program, name);
    }
    match run_checks(program, ctx, view, &[name], limits) {
        Ok(mut v) if v.len() == 1 => v.remove(0),
        Ok(_) => (
            VerdictStatus::Error,
            Some(format!(
                "check `{name}` gave no verdict (an internal error of Bureau)"
            )),
        ),
        Err(e) => (VerdictStatus::Error, Some(stopped_message(name, &e))),
    }
}

/// What the checks' process is given: the program, the checks to run, their limits, the view
/// and the small parts of the context. The rest of the world it asks for.
#[derive(Serialize, Deserialize)]
struct ChecksJob {
    path: PathBuf,
    source: String,
    /// The evaluating process and the address of its compiled program: when the checks'
    /// process is a fork of it (no zygote), the program is in its copy of that memory.
    caller: (u32, usize),
    names: Vec<String>,
    limits: CheckLimits,
    view: Tree,
    user_email: String,
    turn: u32,
    timezone: String,
    finals: BTreeMap<u32, String>,
}

/// Run the checks `names` in one isolated process; their verdicts in order.
fn run_checks(
    program: &CheckProgram,
    ctx: &Ctx<'_>,
    view: &Tree,
    names: &[&str],
    limits: &CheckLimits,
) -> Result<Vec<(VerdictStatus, Option<String>)>, bureau_isolate::IsolateError> {
    let job = ChecksJob {
        path: program.path().to_path_buf(),
        source: program.source().to_string(),
        caller: (std::process::id(), program as *const CheckProgram as usize),
        names: names.iter().map(|n| n.to_string()).collect(),
        limits: *limits,
        view: view.clone(),
        user_email: ctx.task.user.email.clone(),
        turn: ctx.world.turn(),
        timezone: ctx.tz.name().to_string(),
        finals: ctx.finals.clone(),
    };
    let isolation = bureau_isolate::Limits::new(limits.wall, limits.max_memory_bytes);
    let mut serve = |q: &[u8]| crate::remote::answer(ctx, q);
    bureau_isolate::run_job(&isolation, checks_job, &job, &mut serve)
}

/// The checks' process: compile the program, freeze the view, run each check.
fn checks_job(job: ChecksJob, peer: &mut Peer<'_>) -> Vec<(VerdictStatus, Option<String>)> {
    if let Some(p) = inherited(&job) {
        return run_all(p, &job, peer);
    }
    let compiled = match crate::program::prepared::get(&job.path, &job.source) {
        Some(p) => Ok(p),
        None => CheckProgram::compile_trusted(&job.path, &job.source).map(std::rc::Rc::new),
    };
    let program = match compiled {
        Ok(p) => p,
        Err(e) => {
            let why = format!("checks.star could not be compiled for the checks: {e}");
            return job
                .names
                .iter()
                .map(|_| (VerdictStatus::Error, Some(why.clone())))
                .collect();
        }
    };
    run_all(&program, &job, peer)
}

/// The caller's compiled program, when this process is a fork of the caller (its parent):
/// the caller holds the program borrowed for the whole job, so it is at the same address in
/// this copy of its memory. Never in a process forked from the zygote (whose parent is its
/// supervisor).
fn inherited(job: &ChecksJob) -> Option<&CheckProgram> {
    let (pid, address) = job.caller;
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    if address == 0 || u32::try_from(parent).ok() != Some(pid) {
        return None;
    }
    // SAFETY: this process is a fork of process `pid` (its parent), made while `pid` held a
    // `&CheckProgram` at `address` (in `run_checks`, which waits for this job to end), so the
    // copy of that program is at the same address here, alive and unchanged.
    let program = unsafe { &*(address as *const CheckProgram) };
    (program.path() == job.path && program.source() == job.source).then_some(program)
}

/// Run the job's checks with `program`.
fn run_all(
    program: &CheckProgram,
    job: &ChecksJob,
    peer: &mut Peer<'_>,
) -> Vec<(VerdictStatus, Option<String>)> {
    let tz = job.timezone.parse().unwrap_or(chrono_tz::UTC);
    let ask = PeerAsk(RefCell::new(peer));
    let env = Env::new(
        &ask,
        job.user_email.clone(),
        job.turn,
        tz,
        job.finals.clone(),
    );
    let view = View::freeze(&job.view);
    job.names
        .iter()
        .map(|n| run_check_in_process(program, &env, &view, n, &job.limits))
        .collect()
}

/// The verdict of a check `checks.star` does not define.
fn unknown_function(program: &CheckProgram, name: &str) -> (VerdictStatus, Option<String>) {
    let defined = program.functions().join(", ");
    (
        VerdictStatus::Error,
        Some(format!(
            "unknown Starlark function `{name}` — define `def {name}(w):` in checks.star (defined: {defined})"
        )),
    )
}

/// The detail of a check whose process was stopped.
fn stopped_message(name: &str, e: &bureau_isolate::IsolateError) -> String {
    use bureau_isolate::IsolateError as E;
    let what = e.to_string();
    let what = what.strip_prefix("it ").unwrap_or(&what);
    let hint = match e {
        E::TimedOut { .. } | E::CpuLimit { .. } => {
            " — make it do less work (scan large values once, stop once the answer is known)"
        }
        E::OutOfMemory { .. } => " — avoid building huge strings or lists",
        E::StackOverflow => " — avoid deeply nested values",
        _ => "",
    };
    format!("check `{name}` {what}{hint}")
}

fn run_check_in_process(
    program: &CheckProgram,
    env: &Env<'_>,
    view: &View,
    name: &str,
    limits: &CheckLimits,
) -> (VerdictStatus, Option<String>) {
    let Some(function) = program.function(name) else {
        return unknown_function(program, name);
    };
    let prints = CollectPrints::default();
    let (status, detail) = Module::with_temp_heap(|module| {
        let heap = module.heap();
        heap.add_reference(&view.heap);
        let f = heap.access_owned_frozen_value(&function);
        let mut eval = Evaluator::new(&module);
        eval.extra = Some(env);
        eval.set_print_handler(&prints);
        let set = eval
            .set_max_tick_count(limits.max_steps.max(1))
            .and_then(|_| eval.set_max_heap_size(limits.max_heap_bytes.max(1)))
            .and_then(|_| eval.set_max_callstack_size(limits.max_callstack.max(1)));
        if let Err(e) = set {
            return (
                VerdictStatus::Error,
                Some(format!("cannot set check limits: {e}")),
            );
        }
        match eval.eval_function(f, &[view.w.to_value()], &[]) {
            Ok(v) => interpret(name, v),
            Err(e) => (
                VerdictStatus::Error,
                Some(error_message(program, name, &e, limits)),
            ),
        }
    });
    let printed = prints.0.into_inner();
    if status == VerdictStatus::Passed || printed.is_empty() {
        return (status, detail);
    }
    let mut d = detail.unwrap_or_default();
    if !d.is_empty() {
        d.push_str(" | ");
    }
    d.push_str("printed: ");
    d.push_str(&printed.join(" / "));
    (status, Some(d))
}

/// A check's return value as a status: a bool, or a dict `{"passed": bool, "detail": str}`.
fn interpret(name: &str, v: Value<'_>) -> (VerdictStatus, Option<String>) {
    let pass = |b: bool| {
        if b {
            VerdictStatus::Passed
        } else {
            VerdictStatus::Failed
        }
    };
    if let Some(b) = v.unpack_bool() {
        return (pass(b), None);
    }
    let bad = |what: String| {
        (
            VerdictStatus::Error,
            Some(format!(
                "check `{name}` returned {what}; return True/False or {{\"passed\": bool, \"detail\": str}}"
            )),
        )
    };
    let Some(dict) = DictRef::from_value(v) else {
        return bad(format!("{} `{}`", v.get_type(), truncate(&v.to_repr(), 80)));
    };
    let passed = match dict.get_str("passed").map(|p| p.unpack_bool()) {
        Some(Some(b)) => b,
        Some(None) => return bad("a dict whose \"passed\" is not a bool".into()),
        None => return bad("a dict without \"passed\"".into()),
    };
    for (k, _) in dict.iter() {
        if !matches!(k.unpack_str(), Some("passed" | "detail")) {
            return bad(format!(
                "a dict with the unknown key {}",
                truncate(&k.to_repr(), 40)
            ));
        }
    }
    let detail = match dict.get_str("detail") {
        None => None,
        Some(d) if d.is_none() => None,
        Some(d) => match d.unpack_str() {
            Some(s) => Some(s.to_string()),
            None => return bad("a dict whose \"detail\" is not a string".into()),
        },
    };
    (pass(passed), detail)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// `checks.star:LINE:COL: message`, or a plain sentence for a limit that was hit.
fn error_message(
    program: &CheckProgram,
    name: &str,
    e: &starlark::Error,
    limits: &CheckLimits,
) -> String {
    let msg = one_line(&e.without_diagnostic().to_string());
    if msg.starts_with("Execution duration limit of") {
        return format!(
            "check `{name}` exceeded its limit of {} steps (function calls and loop iterations) — make it do less work, e.g. stop looping once the answer is known",
            limits.max_steps
        );
    }
    if msg.starts_with("Heap memory limit of") {
        return format!(
            "check `{name}` exceeded its memory limit of {} bytes — avoid building large lists or strings",
            limits.max_heap_bytes
        );
    }
    if msg.contains("call stack overflow") {
        return format!(
            "check `{name}` nested function calls deeper than {} — Starlark has no recursion; use a loop",
            limits.max_callstack
        );
    }
    let span = e.span().cloned().or_else(|| {
        e.call_stack()
            .frames
            .iter()
            .rev()
            .find_map(|f| f.location.clone())
    });
    match span {
        Some(s) => {
            let pos = s.resolve_span().begin;
            // The file name only: verdicts must not depend on where the task directory lives.
            let file = program
                .path()
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("{file}:{}:{}: {msg}", pos.line + 1, pos.column + 1)
        }
        None => msg,
    }
}
