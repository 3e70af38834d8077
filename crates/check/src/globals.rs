//! The Starlark globals of `checks.star`: the standard library, Bureau's helpers
//! (`number`, `normalize_numbers`, `contains`, `contains_all`, `date`, `minutes_between`) and the
//! functions behind `w.files`, `w.mail` and `w.calendar`.
//!
//! Native functions reach the world through `Evaluator::extra`, which holds the evaluation's
//! [`Env`]: they ask the evaluating process ([`crate::remote`]). Everything they return is
//! deterministic: sorted, in the task time zone.

use std::cell::RefCell;
use std::sync::LazyLock;

use bureau_core::time::parse_world_time;
use bureau_formats::text::{contains_keyword, normalize_numbers as normalize, parse_number};
use chrono::{Datelike, Timelike};
use starlark::environment::{Globals, GlobalsBuilder, LibraryExtension};
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::list::{AllocList, UnpackList};
use starlark::values::none::NoneOr;
use starlark::values::structs::AllocStruct;
use starlark::values::{FrozenValue, Value};

use crate::env::Env;
use crate::remote::{Query, Size};
use crate::view::iso;

/// A message from a native function (shown as the check's error).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NativeError(pub String);

pub(crate) fn fail<T>(msg: impl Into<String>) -> starlark::Result<T> {
    Err(starlark::Error::new_native(NativeError(msg.into())))
}

/// The evaluation context of the running check, from `eval.extra`.
pub(crate) fn env<'a, 'e>(eval: &Evaluator<'_, 'a, 'e>) -> starlark::Result<&'a Env<'e>> {
    match eval.extra.and_then(|e| e.downcast_ref::<Env<'e>>()) {
        Some(c) => Ok(c),
        None => fail(
            "the world is only available inside a check function; call this from `def name(w):`, not at the top level of checks.star",
        ),
    }
}

/// Globals for running `checks.star`: standard Starlark plus Bureau's helpers.
pub(crate) fn helpers() -> &'static Globals {
    static HELPERS: LazyLock<Globals> = LazyLock::new(|| {
        GlobalsBuilder::extended_by(&[
            LibraryExtension::StructType,
            LibraryExtension::Map,
            LibraryExtension::Filter,
            LibraryExtension::Partial,
            LibraryExtension::Json,
            LibraryExtension::Print,
            LibraryExtension::Typing,
            LibraryExtension::SetType,
        ])
        .with(helper_functions)
        .with(crate::documents::document_functions)
        .with(crate::images::image_functions)
        .with(crate::sheets_view::sheet_functions)
        .with(crate::code_view::code_functions)
        .build()
    });
    &HELPERS
}

/// The `files`, `mail` and `calendar` namespaces placed into `w` (not globals of checks.star).
pub(crate) struct Api {
    pub files: FrozenValue,
    pub mail: FrozenValue,
    pub calendar: FrozenValue,
    /// `w.final_message(turn)`.
    pub final_message: FrozenValue,
    /// `w.reference(path)`.
    pub reference: FrozenValue,
    pub globals: Globals,
}

pub(crate) fn api() -> &'static Api {
    static API: LazyLock<Api> = LazyLock::new(|| {
        let globals = GlobalsBuilder::new()
            .with_namespace("files", files_functions)
            .with_namespace("mail", mail_functions)
            .with_namespace("calendar", calendar_functions)
            .with(agent_functions)
            .build();
        let get = |name: &str| {
            globals
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v)
                .unwrap_or_else(FrozenValue::new_none)
        };
        Api {
            files: get("files"),
            mail: get("mail"),
            calendar: get("calendar"),
            final_message: get("final_message"),
            reference: get("reference"),
            globals: globals.clone(),
        }
    });
    &API
}

/// Print handler used while compiling: output of top-level `print` is dropped.
pub(crate) struct DiscardPrints;

impl starlark::PrintHandler for DiscardPrints {
    fn println(&self, _text: &str) -> starlark::Result<()> {
        Ok(())
    }
}

/// Print handler used by checks: lines are kept and shown with failed or broken verdicts.
#[derive(Default)]
pub(crate) struct CollectPrints(pub RefCell<Vec<String>>);

impl starlark::PrintHandler for CollectPrints {
    fn println(&self, text: &str) -> starlark::Result<()> {
        let mut lines = self.0.borrow_mut();
        if lines.len() < 50 {
            lines.push(text.chars().take(500).collect());
        }
        Ok(())
    }
}

#[starlark_module]
fn helper_functions(builder: &mut GlobalsBuilder) {
    /// The number written in `s` ("$11,917.50" → 11917.5, "(1,200)" → -1200.0, "12%" → 12.0),
    /// or None if `s` is not exactly one figure. Ints and floats are returned as floats.
    fn number<'v>(#[starlark(require = pos)] s: Value<'v>) -> starlark::Result<NoneOr<f64>> {
        if let Some(text) = s.unpack_str() {
            return Ok(match parse_number(text) {
                Some(v) => NoneOr::Other(v),
                None => NoneOr::None,
            });
        }
        match s.get_type() {
            "int" | "float" => Ok(match s.to_repr().parse::<f64>() {
                Ok(v) if v.is_finite() => NoneOr::Other(v),
                _ => NoneOr::None,
            }),
            _ => Ok(NoneOr::None),
        }
    }

    /// `s` with thousands separators removed from well-formed grouped numbers.
    fn normalize_numbers(#[starlark(require = pos)] s: &str) -> starlark::Result<String> {
        Ok(normalize(s))
    }

    /// Whether `haystack` contains `needle`: case-insensitive, whitespace-insensitive, numbers
    /// compared by value and never matched inside a longer number.
    fn contains(
        #[starlark(require = pos)] haystack: &str,
        #[starlark(require = pos)] needle: &str,
    ) -> starlark::Result<bool> {
        Ok(contains_keyword(haystack, needle))
    }

    /// Whether `haystack` contains every needle (as `contains`).
    fn contains_all(
        #[starlark(require = pos)] haystack: &str,
        #[starlark(require = pos)] needles: UnpackList<String>,
    ) -> starlark::Result<bool> {
        Ok(needles.items.iter().all(|n| contains_keyword(haystack, n)))
    }

    /// A datetime (ISO 8601; local times are read in the task time zone) as a struct in the
    /// task time zone: year, month, day, hour, minute, weekday (0 = Monday), iso.
    fn date<'v>(
        #[starlark(require = pos)] iso_text: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let tz = env(eval)?.tz;
        let t = match parse_world_time(iso_text, tz) {
            Ok(t) => t.with_timezone(&tz),
            Err(e) => return fail(format!("date(): {e}")),
        };
        let heap = eval.heap();
        Ok(heap.alloc(AllocStruct([
            ("year", heap.alloc(t.year())),
            ("month", heap.alloc(t.month())),
            ("day", heap.alloc(t.day())),
            ("hour", heap.alloc(t.hour())),
            ("minute", heap.alloc(t.minute())),
            ("weekday", heap.alloc(t.weekday().num_days_from_monday())),
            ("iso", heap.alloc(iso(&t.fixed_offset()))),
        ])))
    }

    /// Minutes from `a` to `b` (negative if `b` is earlier), as a float.
    fn minutes_between(
        #[starlark(require = pos)] a: &str,
        #[starlark(require = pos)] b: &str,
        eval: &mut Evaluator<'_, '_, '_>,
    ) -> starlark::Result<f64> {
        let tz = env(eval)?.tz;
        let ta = match parse_world_time(a, tz) {
            Ok(t) => t,
            Err(e) => return fail(format!("minutes_between(): {e}")),
        };
        let tb = match parse_world_time(b, tz) {
            Ok(t) => t,
            Err(e) => return fail(format!("minutes_between(): {e}")),
        };
        Ok((tb - ta).num_seconds() as f64 / 60.0)
    }
}

#[starlark_module]
fn agent_functions(builder: &mut GlobalsBuilder) {
    /// A file of the task's private `reference/` folder, as a path the typed readers take
    /// (`docx(w.reference("expected.docx"))`, `read_text(...)`, `xlsx(...)`). An error when
    /// the task has no such file (a broken check, not an agent failure).
    fn reference<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let c = env(eval)?;
        match c.call::<Result<bool, String>>(&Query::ReferenceIsFile(path.to_string()))? {
            Ok(true) => Ok(eval
                .heap()
                .alloc(format!("{}{path}", crate::reference::PREFIX))),
            Ok(false) => fail(format!(
                "w.reference(\"{path}\"): reference/{path} is not a file"
            )),
            Err(e) => fail(format!("w.reference(\"{path}\"): {e}")),
        }
    }

    /// The agent's final message of turn `turn` (its last message of that turn; default:
    /// the turn being evaluated), or None when it said nothing.
    fn final_message<'v>(
        #[starlark(require = pos, default = NoneOr::None)] turn: NoneOr<i32>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneOr<Value<'v>>> {
        let c = env(eval)?;
        let turn = match turn {
            NoneOr::Other(t) if t >= 1 => t as u32,
            NoneOr::Other(t) => {
                return fail(format!("w.final_message({t}): turns count from 1"));
            }
            NoneOr::None => c.turn,
        };
        Ok(match c.finals.get(&turn) {
            Some(text) => NoneOr::Other(eval.heap().alloc(text.as_str())),
            None => NoneOr::None,
        })
    }
}

#[starlark_module]
fn files_functions(builder: &mut GlobalsBuilder) {
    /// Whether a file or directory exists at this workspace path.
    fn exists(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'_, '_, '_>,
    ) -> starlark::Result<bool> {
        env(eval)?.call(&Query::Exists(path.to_string()))
    }

    /// The text of a workspace file. An error if it is missing or binary: guard with
    /// `w.files.exists(path)`.
    fn text<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let c = env(eval)?;
        if !c.call::<bool>(&Query::Exists(path.to_string()))? {
            return fail(format!(
                "w.files.text(\"{path}\"): no such file in the workspace; guard with `if not w.files.exists(\"{path}\"): return False`"
            ));
        }
        match c.call::<Result<String, String>>(&Query::Text(path.to_string()))? {
            Ok(t) => Ok(eval.heap().alloc(t)),
            Err(e) => fail(format!("w.files.text(\"{path}\"): {e}")),
        }
    }

    /// Workspace file paths under `dir` ("" = everything), recursive, sorted; directories are
    /// not listed. A missing directory gives an empty list.
    fn list<'v>(
        #[starlark(require = pos, default = "")] dir: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let listed =
            env(eval)?.call::<Result<Vec<String>, String>>(&Query::List(dir.to_string()))?;
        let heap = eval.heap();
        match listed {
            Ok(paths) => Ok(heap.alloc(AllocList(paths.into_iter().map(|p| heap.alloc(p))))),
            Err(e) => fail(format!("w.files.list(\"{dir}\"): {e}")),
        }
    }

    /// The size of a workspace file in bytes (an error if it is missing).
    fn size(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'_, '_, '_>,
    ) -> starlark::Result<i64> {
        match env(eval)?.call::<Size>(&Query::Size(path.to_string()))? {
            Size::File(n) => Ok(n.min(i64::MAX as u64) as i64),
            Size::Dir => fail(format!("w.files.size(\"{path}\"): it is a directory")),
            Size::Special => fail(format!(
                "w.files.size(\"{path}\"): it is not a regular file (a FIFO, socket or device)"
            )),
            Size::Missing => fail(format!(
                "w.files.size(\"{path}\"): no such file in the workspace; guard with w.files.exists(\"{path}\")"
            )),
        }
    }
}

/// Messages of `user`'s mailbox (default: the task's user), in arrival order, in `folder`
/// (case-insensitive) or in every folder.
fn mailbox<'v>(
    user: Option<&str>,
    folder: Option<&str>,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Value<'v>> {
    let c = env(eval)?;
    let user = user.unwrap_or(&c.user_email).to_lowercase();
    let cache = c.mail()?;
    eval.heap().add_reference(&cache.heap);
    let found: Vec<FrozenValue> = cache
        .items
        .iter()
        .filter(|(m, _)| m.owner == user && folder.is_none_or(|f| m.folder.eq_ignore_ascii_case(f)))
        .map(|(_, v)| *v)
        .collect();
    Ok(eval.heap().alloc(AllocList(found)))
}

#[starlark_module]
fn mail_functions(builder: &mut GlobalsBuilder) {
    /// Messages of a mailbox (default: the task's user), in arrival order; `folder=None` means
    /// every folder.
    fn messages<'v>(
        #[starlark(default = NoneOr::None)] user: NoneOr<&str>,
        #[starlark(default = NoneOr::None)] folder: NoneOr<&str>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        mailbox(user.into_option(), folder.into_option(), eval)
    }

    /// Messages a user (default: the task's user) sent: their `Sent` folder.
    fn sent<'v>(
        #[starlark(default = NoneOr::None)] user: NoneOr<&str>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        mailbox(user.into_option(), Some(bureau_world::mail::SENT), eval)
    }

    /// Mailbox owners, sorted.
    fn users<'v>(eval: &mut Evaluator<'v, '_, '_>) -> starlark::Result<Value<'v>> {
        let users: Vec<String> = env(eval)?.call(&Query::MailUsers)?;
        let heap = eval.heap();
        Ok(heap.alloc(AllocList(users.into_iter().map(|u| heap.alloc(u)))))
    }
}

#[starlark_module]
fn calendar_functions(builder: &mut GlobalsBuilder) {
    /// Events of a calendar (default: the task's user), sorted by start then uid; cancelled
    /// events only with `include_cancelled=True`.
    fn events<'v>(
        #[starlark(default = NoneOr::None)] user: NoneOr<&str>,
        #[starlark(require = named, default = false)] include_cancelled: bool,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let c = env(eval)?;
        let user = user.into_option().unwrap_or(&c.user_email).to_lowercase();
        let cache = c.calendar()?;
        eval.heap().add_reference(&cache.heap);
        let found: Vec<FrozenValue> = cache
            .items
            .iter()
            .filter(|(e, _)| e.owner == user && (include_cancelled || !e.cancelled))
            .map(|(_, v)| *v)
            .collect();
        Ok(eval.heap().alloc(AllocList(found)))
    }

    /// Calendar owners, sorted.
    fn users<'v>(eval: &mut Evaluator<'v, '_, '_>) -> starlark::Result<Value<'v>> {
        let users: Vec<String> = env(eval)?.call(&Query::CalendarUsers)?;
        let heap = eval.heap();
        Ok(heap.alloc(AllocList(users.into_iter().map(|u| heap.alloc(u)))))
    }
}
