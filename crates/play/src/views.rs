//! What each page shows, from the shared state: the template contexts, and the templates.

use std::collections::BTreeMap;

use bureau_core::tool::ToolOutcome;
use chrono::{Datelike, Duration as Days, NaiveDate};
use minijinja::{AutoEscape, Environment};
use serde::Serialize;
use serde_json::{Value, json};

use crate::hub::{Called, HubState, Phase};
use crate::schema;

/// The pages' templates, autoescaped.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.add_filter("urlencode", |s: String| -> String {
        form_urlencoded::byte_serialize(s.as_bytes()).collect()
    });
    let templates: &[(&str, &str)] = &[
        ("base.html", include_str!("../templates/base.html")),
        ("result.html", include_str!("../templates/result.html")),
        ("home.html", include_str!("../templates/home.html")),
        ("inbox.html", include_str!("../templates/inbox.html")),
        ("calendar.html", include_str!("../templates/calendar.html")),
        ("files.html", include_str!("../templates/files.html")),
        ("chat.html", include_str!("../templates/chat.html")),
        ("tools.html", include_str!("../templates/tools.html")),
        ("tool.html", include_str!("../templates/tool.html")),
        ("waiting.html", include_str!("../templates/waiting.html")),
        ("final.html", include_str!("../templates/final.html")),
        ("closed.html", include_str!("../templates/closed.html")),
    ];
    for (name, text) in templates {
        // The templates are ours and tested; a broken one shows as a render error.
        if let Err(e) = env.add_template(name, text) {
            eprintln!("bureau play: template {name}: {e}");
        }
    }
    env
}

/// A JSON value as a template value. Numbers are converted by hand: the workspace's
/// serde_json keeps arbitrary-precision numbers, which would reach templates as objects.
pub fn to_template(v: &Value) -> minijinja::Value {
    match v {
        Value::Null => minijinja::Value::from(()),
        Value::Bool(b) => minijinja::Value::from(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                minijinja::Value::from(i)
            } else if let Some(u) = n.as_u64() {
                minijinja::Value::from(u)
            } else {
                minijinja::Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => minijinja::Value::from(s.as_str()),
        Value::Array(a) => minijinja::Value::from(a.iter().map(to_template).collect::<Vec<_>>()),
        Value::Object(o) => minijinja::Value::from(
            o.iter()
                .map(|(k, v)| (k.clone(), to_template(v)))
                .collect::<BTreeMap<String, minijinja::Value>>(),
        ),
    }
}

/// A call as a page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CalledView {
    pub seq: u64,
    pub turn: u32,
    pub tool: String,
    pub args: Value,
    pub args_json: String,
    pub ok: bool,
    pub value: Value,
    pub json: String,
    pub error: Option<String>,
    pub media: Vec<MediaView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MediaView {
    pub kind: String,
    pub mime_type: String,
    pub label: String,
    pub data: String,
}

/// At most this much of a result's JSON is shown (the whole value stays in the trajectory).
const JSON_SHOWN: usize = 200_000;

pub fn called_view(c: &Called) -> CalledView {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let (ok, value, error, media) = match &c.outcome {
        ToolOutcome::Ok { value, media } => (
            true,
            value.clone(),
            None,
            media
                .iter()
                .map(|m| MediaView {
                    kind: m.kind.name().to_string(),
                    mime_type: m.mime_type.clone(),
                    label: m.label.clone(),
                    data: m.data.clone(),
                })
                .collect(),
        ),
        ToolOutcome::Error { message } => (false, Value::Null, Some(message.clone()), Vec::new()),
    };
    let mut json = pretty(&value);
    if json.len() > JSON_SHOWN {
        let mut cut = JSON_SHOWN;
        while !json.is_char_boundary(cut) {
            cut -= 1;
        }
        json.truncate(cut);
        json.push_str("\n… (cut here for the page; the trajectory keeps all of it)");
    }
    CalledView {
        seq: c.seq,
        turn: c.turn,
        tool: c.tool.clone(),
        args: c.args.clone(),
        args_json: serde_json::to_string(&c.args).unwrap_or_default(),
        ok,
        value,
        json,
        error,
        media,
    }
}

/// The service pages the offered tools call for, in the navigation's order.
fn services(s: &HubState) -> Vec<&'static str> {
    let has = |prefix: &str| s.specs.iter().any(|t| t.name.starts_with(prefix));
    let mut v = Vec::new();
    for (page, prefix) in [
        ("inbox", "mail_"),
        ("calendar", "calendar_"),
        ("files", "files_"),
        ("chat", "chat_"),
    ] {
        if has(prefix) {
            v.push(page);
        }
    }
    v
}

fn clock(d: std::time::Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}", s / 60, s % 60)
}

/// What every page has: the task, the turn, the calls used and left, the time left, the
/// navigation, the last action and a one-shot notice (taken).
pub fn base(s: &mut HubState, page: &str) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    m.insert("page".into(), json!(page));
    m.insert("task".into(), json!(s.task));
    m.insert("turn".into(), json!(s.turn));
    let phase = match &s.phase {
        Phase::Waiting => "waiting",
        Phase::Turn => "turn",
        Phase::Finished => "finished",
        Phase::Failed(_) => "failed",
    };
    m.insert("phase".into(), json!(phase));
    if let Phase::Failed(why) = &s.phase {
        m.insert("failure".into(), json!(why));
    }
    if let Some(session) = &s.session {
        let used = session.calls_made();
        let max = session.limits().max_steps;
        let left = session.time_left();
        m.insert(
            "calls".into(),
            json!({"used": used, "left": max.saturating_sub(used), "max": max}),
        );
        m.insert(
            "time_left".into(),
            json!({"text": clock(left), "seconds": left.as_secs()}),
        );
        if let Some(limit) = session.limit_reached() {
            m.insert("limit".into(), json!(limit.to_string()));
        }
    }
    m.insert("ending".into(), json!(s.end.is_some()));
    m.insert("services".into(), json!(services(s)));
    m.insert("last".into(), json!(s.last.as_ref().map(called_view)));
    m.insert("notice".into(), json!(s.notice.take()));
    m
}

fn result(s: &HubState, tool: &str) -> Value {
    json!(s.results.get(tool).map(called_view))
}

/// The extra context of `page`; `None` for a page that does not exist.
pub fn page(s: &HubState, page: &str, tool: Option<&str>) -> Option<BTreeMap<String, Value>> {
    let mut m = BTreeMap::new();
    match page {
        "home" => {
            m.insert("history".into(), json!(s.history));
        }
        "inbox" => {
            for t in [
                "mail_list",
                "mail_read",
                "mail_read_attachment",
                "mail_search",
                "mail_folders",
            ] {
                m.insert(t.into(), result(s, t));
            }
        }
        "files" => {
            for t in ["files_list", "files_read", "files_search"] {
                m.insert(t.into(), result(s, t));
            }
        }
        "chat" => {
            for t in [
                "chat_list_channels",
                "chat_read",
                "chat_post",
                "chat_members",
            ] {
                m.insert(t.into(), result(s, t));
            }
        }
        "calendar" => {
            let date = s
                .turn
                .as_ref()
                .and_then(|t| NaiveDate::parse_from_str(&t.date, "%Y-%m-%d").ok());
            let listed = s.results.get("calendar_list");
            let shown = listed
                .and_then(|c| c.args.get("from").and_then(Value::as_str))
                .and_then(|f| NaiveDate::parse_from_str(f.get(..10)?, "%Y-%m-%d").ok())
                .or(date);
            let monday_of =
                |d: NaiveDate| d - Days::days(d.weekday().num_days_from_monday() as i64);
            let week = |d: NaiveDate| json!({"from": format!("{d}T00:00:00"), "to": format!("{}T00:00:00", d + Days::days(7)), "label": format!("week of {}", d.format("%a %-d %b %Y"))});
            // "Week" is the office's week; previous and next move from the week shown.
            if let Some(day) = date {
                m.insert("this_week".into(), week(monday_of(day)));
            }
            if let Some(day) = shown {
                let monday = monday_of(day);
                m.insert("prev_week".into(), week(monday - Days::days(7)));
                m.insert("next_week".into(), week(monday + Days::days(7)));
            }
            if let Some(d) = date {
                m.insert(
                    "today".into(),
                    json!({"from": format!("{d}T00:00:00"), "to": format!("{}T00:00:00", d + Days::days(1)), "label": d.format("%A %-d %B %Y").to_string()}),
                );
            }
            m.insert("days".into(), json!(listed.map(days_of)));
            for t in ["calendar_list", "calendar_free_slots"] {
                m.insert(t.into(), result(s, t));
            }
        }
        "tools" => {
            let mut groups: BTreeMap<String, Vec<Value>> = BTreeMap::new();
            for spec in &s.specs {
                let service = spec.name.split('_').next().unwrap_or("other").to_string();
                groups.entry(service).or_default().push(json!({
                    "name": spec.name,
                    "description": spec.description,
                    "read_only": spec.annotations.map(|a| a.read_only_hint),
                }));
            }
            m.insert("groups".into(), json!(groups));
        }
        "tool" => {
            let name = tool?;
            let spec = s.specs.iter().find(|t| t.name == name)?;
            m.insert(
                "tool".into(),
                json!({"name": spec.name, "description": spec.description}),
            );
            m.insert("fields".into(), json!(schema::fields(&spec.input_schema)));
            m.insert("result".into(), result(s, name));
        }
        _ => return None,
    }
    Some(m)
}

/// The events of a `calendar_list` result by day (`YYYY-MM-DD` of their start), in order.
fn days_of(c: &Called) -> Vec<Value> {
    let ToolOutcome::Ok { value, .. } = &c.outcome else {
        return Vec::new();
    };
    let mut days: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    if let Some(events) = value.get("events").and_then(Value::as_array) {
        for e in events {
            let start = e.get("start").and_then(Value::as_str).unwrap_or_default();
            let day = start.get(..10).unwrap_or("undated").to_string();
            let mut e = e.clone();
            if let Some(o) = e.as_object_mut() {
                let hm = |k: &str| {
                    o.get(k)
                        .and_then(Value::as_str)
                        .and_then(|t| t.get(11..16))
                        .unwrap_or_default()
                        .to_string()
                };
                let (from, to) = (hm("start"), hm("end"));
                o.insert("from_hm".into(), json!(from));
                o.insert("to_hm".into(), json!(to));
            }
            days.entry(day).or_default().push(e);
        }
    }
    days.into_iter()
        .map(|(day, mut events)| {
            events.sort_by(|a, b| {
                let k = |v: &Value| {
                    v.get("start")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                k(a).cmp(&k(b))
            });
            let label = NaiveDate::parse_from_str(&day, "%Y-%m-%d")
                .map(|d| d.format("%A %-d %B").to_string())
                .unwrap_or_else(|_| day.clone());
            json!({"date": day, "label": label, "events": events})
        })
        .collect()
}
