//! The world's tools: what an agent can do, with JSON-schema'd arguments and JSON results.
//!
//! Names are `service_action` (OpenAI and Anthropic function names allow no dots). Unknown
//! arguments, wrong types and impossible actions come back as [`ToolOutcome::Error`] with a
//! message the agent can act on; a failed call never changes the world. Every change an
//! agent makes is appended to the world log with actor `agent`.

mod calendar;
mod chat;
mod code;
mod documents;
pub mod effects;
mod files;
mod kb;
mod mail;
pub mod memory;
mod sheets;
mod tracker;

use bureau_core::log::Actor;
use bureau_core::time::{WorldTime, parse_world_time};
use bureau_core::tool::{ToolOutcome, ToolSpec};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::World;

type ToolResult = Result<Value, String>;

struct Tool {
    name: &'static str,
    description: &'static str,
    schema: fn() -> Value,
    run: fn(&mut World, &Actor, &Value) -> ToolResult,
}

const BASE: &[Tool] = &[
    files::LIST,
    files::READ,
    files::OCR,
    files::WRITE,
    files::EDIT,
    files::MOVE,
    files::DELETE,
    files::SEARCH,
    mail::FOLDERS,
    mail::LIST,
    mail::READ,
    mail::SEARCH,
    mail::SEND,
    mail::REPLY,
    mail::FORWARD,
    mail::MOVE,
    mail::MARK_READ,
    mail::READ_ATTACHMENT,
    mail::SAVE_ATTACHMENT,
    calendar::LIST,
    calendar::CREATE,
    calendar::UPDATE,
    calendar::DELETE,
    calendar::INVITE,
    calendar::RESPOND,
    calendar::FREE_SLOTS,
];

/// Every service's tools.
const SERVICES: &[&[Tool]] = &[
    BASE,
    documents::TOOLS,
    chat::TOOLS,
    kb::TOOLS,
    sheets::TOOLS,
    tracker::TOOLS,
    code::TOOLS,
];

fn all() -> impl Iterator<Item = &'static Tool> {
    SERVICES.iter().flat_map(|s| s.iter())
}

/// Whether tool `name` belongs to one of `apps`: `files` tools always, every tool when `apps`
/// is empty — except `files_ocr`, offered only when `apps` names `ocr`.
pub fn offered(name: &str, apps: &[String]) -> bool {
    // OCR is an app of its own (OfficeBench has one): only offices that declare it offer it.
    if name == files::OCR.name {
        return apps.iter().any(|a| a == "ocr");
    }
    if apps.is_empty() {
        return true;
    }
    let service = name.split('_').next().unwrap_or("");
    service == "files" || apps.iter().any(|a| a == service)
}

/// Every tool, sorted by name.
pub fn specs() -> Vec<ToolSpec> {
    all_specs().to_vec()
}

/// Every tool's spec, built once per process (the schemas are constant; building them was
/// an eighth of a run's CPU at a thousand concurrent trials, once per turn of each).
pub(crate) fn all_specs() -> &'static [ToolSpec] {
    static SPECS: std::sync::LazyLock<Vec<ToolSpec>> = std::sync::LazyLock::new(build_specs);
    &SPECS
}

fn build_specs() -> Vec<ToolSpec> {
    let mut v: Vec<ToolSpec> = all()
        .map(|t| ToolSpec {
            name: t.name.to_string(),
            description: t.description.to_string(),
            input_schema: (t.schema)(),
            annotations: effects::effect(t.name).map(effects::Effect::annotations),
        })
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// Whether `name` is a world tool.
pub fn exists(name: &str) -> bool {
    all().any(|t| t.name == name)
}

pub(crate) fn call(world: &mut World, actor: Actor, name: &str, args: &Value) -> ToolOutcome {
    let Some(tool) = all().find(|t| t.name == name) else {
        let mut names: Vec<&str> = all().map(|t| t.name).collect();
        names.sort();
        return ToolOutcome::Error {
            message: format!("unknown tool `{name}`; the tools are: {}", names.join(", ")),
        };
    };
    let args = if args.is_null() {
        &Value::Object(Default::default())
    } else {
        args
    };
    if !args.is_object() {
        return ToolOutcome::Error {
            message: format!("arguments of `{name}` must be a JSON object"),
        };
    }
    // An object may be named by its URL wherever its id is taken.
    let read;
    let args = match crate::urls::read_url_args(name, args) {
        Ok(Some(v)) => {
            read = v;
            &read
        }
        Ok(None) => args,
        Err(message) => return ToolOutcome::Error { message },
    };
    world.media_out.clear();
    let result = (tool.run)(world, &actor, args);
    let media = std::mem::take(&mut world.media_out);
    match result {
        Ok(value) => {
            world.keep_media(&media);
            ToolOutcome::Ok { value, media }
        }
        Err(message) => ToolOutcome::Error { message },
    }
}

/// Parse arguments into a typed struct, with a message naming the tool.
fn parse<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, String> {
    serde_json::from_value(args.clone()).map_err(|e| format!("invalid arguments for `{tool}`: {e}"))
}

/// A JSON schema object with `properties` and `required`.
fn schema(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut p = serde_json::Map::new();
    for (k, v) in props {
        p.insert((*k).to_string(), v.clone());
    }
    json!({"type": "object", "properties": p, "required": required, "additionalProperties": false})
}

fn string(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}
fn boolean(desc: &str) -> Value {
    json!({"type": "boolean", "description": desc})
}
fn integer(desc: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": desc})
}
fn strings(desc: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": desc})
}

/// Parse a datetime argument in the world's time zone.
fn time_arg(world: &World, field: &str, text: &str) -> Result<WorldTime, String> {
    parse_world_time(text, world.timezone).map_err(|e| format!("`{field}`: {e}"))
}

/// Show an instant in the task's time zone.
fn show_time(world: &World, t: chrono::DateTime<chrono::Utc>) -> String {
    t.with_timezone(&world.timezone).to_rfc3339()
}

#[cfg(test)]
mod effect_tests {
    use super::*;

    #[test]
    fn every_tool_says_what_it_does_once() {
        let mut listed: Vec<&str> = effects::EFFECTS.iter().map(|(n, _)| *n).collect();
        listed.sort_unstable();
        let n = listed.len();
        listed.dedup();
        assert_eq!(listed.len(), n, "a tool is listed twice in effects.rs");
        for t in all() {
            assert!(
                effects::effect(t.name).is_some(),
                "`{}` has no effect in tools/effects.rs",
                t.name
            );
        }
        for name in &listed {
            assert!(
                exists(name) || *name == memory::SEARCH,
                "effects.rs lists `{name}`, which is no tool"
            );
        }
        for spec in specs() {
            let a = spec.annotations.expect("every spec is annotated");
            assert!(!a.open_world_hint);
            if (spec.name.ends_with("_read") && spec.name != "mail_mark_read")
                || spec.name.ends_with("_list")
            {
                assert!(a.read_only_hint, "{}", spec.name);
            }
            if spec.name.ends_with("_delete") {
                assert!(a.destructive_hint && !a.read_only_hint, "{}", spec.name);
            }
        }
    }
}
