//! A trial's timeline: the trajectory's steps turn by turn, with the world's events (task
//! events, loud or silent, and colleagues' acts) placed among them.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use bureau_core::tool::reads_only;

use crate::load::{Problem, read_regular};

/// The trajectory and event log are read up to this size.
pub const MAX_LOG_BYTES: u64 = 512 * 1024 * 1024;
/// A tool result longer than this is shown shortened, with "show all".
pub const SHORT_RESULT: usize = 2_000;
/// A tool result longer than this is not shown whole in the page.
pub const MAX_RESULT: usize = 200_000;

/// One entry of the timeline, ready for the page.
#[derive(Debug, Clone, Serialize, Default)]
pub struct StepView {
    /// The anchor: `step-<n>` (the n-th line of trajectory.jsonl) or `event-<seq>`.
    pub id: String,
    /// CSS class: the step kind (`prompt`, `tool_call`, `model_call`, `message`, `note`,
    /// `feedback`, `limit_reached`, `event`, `colleague`), plus `tool-error`.
    pub class: String,
    pub label: String,
    pub meta: String,
    pub badges: Vec<String>,
    pub text: String,
    pub args: String,
    /// The arguments on one line, shortened (shown without opening the step).
    pub summary: String,
    pub result_label: String,
    pub result: String,
    pub result_full: String,
    pub result_size: String,
    pub open: bool,
    pub error: String,
    /// The tool's name, for evidence search.
    #[serde(skip)]
    pub tool: String,
    /// Everything searchable about the step (arguments and result, as JSON text).
    #[serde(skip)]
    pub haystack: String,
}

/// One turn of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TurnView {
    pub n: u32,
    pub time: String,
    pub score: Option<f64>,
    pub steps: Vec<StepView>,
}

fn lines(path: &Path, what: &str, problems: &mut Vec<Problem>, rel: &str) -> Vec<(usize, Value)> {
    let bytes = match read_regular(path, MAX_LOG_BYTES) {
        Ok(b) => b,
        Err(e) => {
            if path.exists() {
                problems.push(Problem {
                    path: rel.to_string(),
                    message: format!("{what} not readable: {e}"),
                });
            }
            return Vec::new();
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let mut out = Vec::new();
    let all: Vec<&str> = text.split('\n').collect();
    for (i, line) in all.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => out.push((i + 1, v)),
            Err(e) => {
                let last = all[i + 1..].iter().all(|l| l.trim().is_empty());
                let message = if last {
                    format!(
                        "line {}: cut short ({e}) — the run was stopped while writing it; the \
                         lines before it are shown",
                        i + 1
                    )
                } else {
                    format!("line {}: not JSON ({e}); skipped", i + 1)
                };
                problems.push(Problem {
                    path: rel.to_string(),
                    message,
                });
            }
        }
    }
    out
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn cut(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn size(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1} KB", n as f64 / 1e3)
    } else {
        format!("{n} B")
    }
}

/// `key: value, …` of an arguments object on one line, at most `n` characters.
fn one_line(args: &Value, n: usize) -> String {
    let text = match args.as_object() {
        Some(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {}", s.replace('\n', " ")),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        None if args.is_null() => String::new(),
        None => args.to_string(),
    };
    if text.chars().count() > n {
        let mut t: String = text.chars().take(n - 1).collect();
        t.push('…');
        t
    } else {
        text
    }
}

fn str_of<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

fn result_into(step: &mut StepView, label: &str, text: String) {
    step.result_label = label.to_string();
    step.result_size = size(text.len());
    if text.len() > SHORT_RESULT {
        step.result = cut(&text, SHORT_RESULT);
        step.result_full = if text.len() > MAX_RESULT {
            format!(
                "{}\n\n[the viewer shows the first {} of {}; the whole result is in trajectory.jsonl]",
                cut(&text, MAX_RESULT),
                size(MAX_RESULT),
                size(text.len())
            )
        } else {
            text
        };
    } else {
        step.result = text;
    }
}

fn step_view(line: usize, v: &Value) -> StepView {
    let kind = str_of(v, "type").to_string();
    let mut s = StepView {
        id: format!("step-{line}"),
        class: kind.clone(),
        label: kind.replace('_', " "),
        ..StepView::default()
    };
    match kind.as_str() {
        "prompt" => {
            s.label = "prompt".into();
            s.text = str_of(v, "text").to_string();
            s.meta = str_of(v, "time").to_string();
        }
        "tool_call" => {
            let tool = str_of(v, "tool").to_string();
            s.label = tool.clone();
            s.tool = tool;
            let args = v.get("args").cloned().unwrap_or(Value::Null);
            s.args = pretty(&args);
            s.summary = one_line(&args, 160);
            let outcome = str_of(v, "outcome");
            let mut haystack = serde_json::to_string(&args).unwrap_or_default();
            if outcome == "error" {
                s.class.push_str(" tool-error");
                s.error = str_of(v, "message").to_string();
                haystack.push_str(&s.error);
            } else {
                let value = v.get("value").cloned().unwrap_or(Value::Null);
                let text = pretty(&value);
                haystack.push_str(&text);
                result_into(&mut s, "result", text);
                if let Some(media) = v.get("media").and_then(Value::as_array)
                    && !media.is_empty()
                {
                    s.badges.push(format!("{} media part(s)", media.len()));
                }
            }
            s.haystack = haystack;
        }
        "message" => {
            s.label = "agent says".into();
            s.text = str_of(v, "text").to_string();
        }
        "limit_reached" => {
            s.label = format!("limit reached: {}", str_of(v, "limit"));
            s.text = str_of(v, "detail").to_string();
        }
        "note" => {
            s.label = "note".into();
            s.text = pretty(v.get("data").unwrap_or(&Value::Null));
        }
        "feedback" => {
            let round = v.get("round").and_then(Value::as_u64).unwrap_or(0);
            s.label = format!("feedback round {round} (the simulated user)");
            s.text = str_of(v, "text").to_string();
            if let Some(f) = v.get("failed").and_then(Value::as_array) {
                let ids: Vec<&str> = f.iter().filter_map(Value::as_str).collect();
                if !ids.is_empty() {
                    s.meta = format!("failed items: {}", ids.join(", "));
                }
            }
        }
        "model_call" => {
            let provider = str_of(v, "provider");
            let model = str_of(v, "model");
            s.label = format!("model call · {provider}:{model}");
            let usage = v.get("usage").cloned().unwrap_or(Value::Null);
            let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            let mut meta = format!(
                "{} in ({} cached) · {} out tokens",
                n("input_tokens"),
                n("cached_input_tokens"),
                n("output_tokens")
            );
            if let Some(c) = usage.get("cost_usd").and_then(Value::as_f64) {
                meta.push_str(&format!(" · ${c:.4}"));
            }
            if let Some(ms) = v.get("wall_ms").and_then(Value::as_u64) {
                meta.push_str(&format!(" · {:.1} s", ms as f64 / 1000.0));
            }
            if let Some(r) = v.get("retries").and_then(Value::as_array)
                && !r.is_empty()
            {
                meta.push_str(&format!(
                    " · {} retr{}",
                    r.len(),
                    if r.len() == 1 { "y" } else { "ies" }
                ));
                s.badges.push("retried".into());
            }
            s.meta = meta;
            if let Some(e) = v.get("error").and_then(Value::as_str) {
                s.error = e.to_string();
            }
            s.args = pretty(v.get("request").unwrap_or(&Value::Null));
            result_into(
                &mut s,
                "response",
                pretty(v.get("response").unwrap_or(&Value::Null)),
            );
        }
        other => {
            s.label = if other.is_empty() {
                "step".into()
            } else {
                other.to_string()
            };
            s.text = pretty(v);
        }
    }
    s
}

fn event_view(v: &Value) -> StepView {
    let seq = v.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let actor = str_of(v, "actor");
    let service = str_of(v, "service");
    let action = str_of(v, "action");
    let silent = v.get("silent").and_then(Value::as_bool).unwrap_or(false);
    let colleague = actor.starts_with("colleague:");
    let mut s = StepView {
        id: format!("event-{seq}"),
        class: if colleague {
            "colleague".into()
        } else {
            "event".into()
        },
        label: if colleague {
            format!(
                "{} · {service} {action}",
                actor.trim_start_matches("colleague:")
            )
        } else {
            format!("event · {service} {action}")
        },
        meta: str_of(v, "time").to_string(),
        text: pretty(v.get("payload").unwrap_or(&Value::Null)),
        ..StepView::default()
    };
    if !colleague {
        s.badges.push(if silent {
            "silent".into()
        } else {
            "loud".into()
        });
        if silent {
            s.class.push_str(" silent");
        }
    }
    s
}

/// The timeline of the trial in `dir`: turns in order, each with the task's events of the
/// turn first (they happen when the turn begins), then the steps; a colleague's act is placed
/// after the agent's call that led to it (the agent's log entries are matched, in order, to
/// its successful calls of tools that change something).
pub fn timeline(dir: &Path, problems: &mut Vec<Problem>) -> Vec<TurnView> {
    let steps = lines(
        &dir.join("trajectory.jsonl"),
        "trajectory",
        problems,
        "trajectory.jsonl",
    );
    let events = lines(
        &dir.join("events.jsonl"),
        "event log",
        problems,
        "events.jsonl",
    );
    let mut turns: Vec<TurnView> = Vec::new();
    let turn_of = |v: &Value| v.get("turn").and_then(Value::as_u64).unwrap_or(0) as u32;
    let mut numbers: Vec<u32> = steps
        .iter()
        .map(|(_, v)| turn_of(v))
        .chain(events.iter().map(|(_, v)| turn_of(v)).filter(|t| *t > 0))
        .collect();
    numbers.sort();
    numbers.dedup();
    for n in numbers {
        let mut out: Vec<StepView> = Vec::new();
        let turn_events: Vec<&Value> = events
            .iter()
            .map(|(_, v)| v)
            .filter(|v| turn_of(v) == n)
            .collect();
        // The task's events come first: they are applied as the turn begins.
        let mut rest: Vec<&Value> = Vec::new();
        let mut seen_agent = false;
        for e in &turn_events {
            let actor = str_of(e, "actor");
            if actor == "agent" {
                seen_agent = true;
            }
            if actor == "task" && !seen_agent {
                out.push(event_view(e));
            } else {
                rest.push(e);
            }
        }
        let time = steps
            .iter()
            .find(|(_, v)| turn_of(v) == n && str_of(v, "type") == "prompt")
            .map(|(_, v)| str_of(v, "time").to_string())
            .unwrap_or_default();
        // Walk the steps; after each state-changing successful call, consume the next agent
        // log entry (that call's) and the entries of others that follow it (a colleague's
        // answer), up to the next agent entry.
        let mut queue = rest.into_iter().peekable();
        for (line, v) in steps.iter().filter(|(_, v)| turn_of(v) == n) {
            let view = step_view(*line, v);
            let changes = str_of(v, "type") == "tool_call"
                && str_of(v, "outcome") != "error"
                && !reads_only(&view.tool);
            out.push(view);
            if !changes {
                continue;
            }
            while let Some(e) = queue.next_if(|e| str_of(e, "actor") != "agent") {
                out.push(event_view(e));
            }
            queue.next_if(|e| str_of(e, "actor") == "agent");
            while let Some(e) = queue.next_if(|e| str_of(e, "actor") != "agent") {
                out.push(event_view(e));
            }
        }
        for e in queue {
            if str_of(e, "actor") != "agent" {
                out.push(event_view(e));
            }
        }
        turns.push(TurnView {
            n,
            time,
            score: None,
            steps: out,
        });
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_last_line_is_named_and_the_rest_shown() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("trajectory.jsonl"),
            "{\"turn\":1,\"type\":\"prompt\",\"time\":\"t\",\"text\":\"hello\"}\n{\"turn\":1,\"type\":\"tool_call\",\"tool\":\"mail_li",
        )
        .unwrap();
        let mut problems = Vec::new();
        let turns = timeline(dir.path(), &mut problems);
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].steps.len(), 1);
        assert!(problems[0].message.contains("cut short"), "{problems:?}");
    }

    #[test]
    fn long_results_are_shortened_with_the_whole_behind_show_all() {
        let big = "x".repeat(5_000);
        let v = serde_json::json!({"turn":1,"type":"tool_call","tool":"files_read","args":{"path":"a"},"outcome":"ok","value":{"text":big}});
        let s = step_view(2, &v);
        assert!(s.result.len() < 2_100);
        assert!(s.result_full.contains(&big));
    }

    #[test]
    fn events_are_marked_loud_or_silent_and_colleagues_follow_the_call() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("trajectory.jsonl"),
            [
                r#"{"turn":1,"type":"prompt","time":"t","text":"go"}"#,
                r#"{"turn":1,"type":"tool_call","tool":"chat_list","args":{},"outcome":"ok","value":[]}"#,
                r#"{"turn":1,"type":"tool_call","tool":"chat_post","args":{"text":"hi"},"outcome":"ok","value":{}}"#,
                r#"{"turn":1,"type":"message","text":"done"}"#,
            ]
            .join("\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("events.jsonl"),
            [
                r#"{"seq":1,"turn":0,"time":"t","actor":"task","service":"files","action":"seed","payload":{}}"#,
                r#"{"seq":2,"turn":1,"time":"t","actor":"task","service":"mail","action":"deliver","silent":true,"payload":{}}"#,
                r#"{"seq":3,"turn":1,"time":"t","actor":"agent","service":"chat","action":"post","payload":{}}"#,
                r#"{"seq":4,"turn":1,"time":"t","actor":"colleague:ana@x.test","service":"chat","action":"post","payload":{}}"#,
            ]
            .join("\n"),
        )
        .unwrap();
        let mut problems = Vec::new();
        let turns = timeline(dir.path(), &mut problems);
        let ids: Vec<&str> = turns[0].steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids,
            ["event-2", "step-1", "step-2", "step-3", "event-4", "step-4"]
        );
        assert!(turns[0].steps[0].badges.contains(&"silent".to_string()));
        assert!(problems.is_empty(), "{problems:?}");
    }
}
