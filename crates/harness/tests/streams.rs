//! The adapters' parsers over recorded sample streams in each harness's real format
//! (`tests/streams/<harness>/`).

use std::path::PathBuf;

use bureau_harness::stream::{Event, Format, HarnessUsage, parse_all};
use serde_json::json;

fn sample(rel: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/streams")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn messages(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Message(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// (tool, bureau) of every call, in order.
fn calls(events: &[Event]) -> Vec<(&str, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { tool, bureau, .. } => Some((tool.as_str(), *bureau)),
            _ => None,
        })
        .collect()
}

fn results(events: &[Event]) -> Vec<(&str, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { id, is_error, .. } => Some((id.as_str(), *is_error)),
            _ => None,
        })
        .collect()
}

fn last_usage(events: &[Event]) -> &HarnessUsage {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Usage(u) => Some(u),
            _ => None,
        })
        .expect("a usage event")
}

fn finals(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Final(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn sessions(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Session(s) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn claude_code_stream_json_gives_messages_native_and_bureau_calls_usage_and_cost() {
    let events = parse_all(Format::ClaudeCode, &sample("claude-code/turn1.jsonl"), "");
    assert_eq!(sessions(&events), ["9f1c2b7e-4d2a-4a59-9c1e-0b8f6d2e5a11"]);
    assert!(events.contains(&Event::Model("claude-sonnet-4-5-20250929".into())));
    assert_eq!(
        messages(&events),
        [
            "I'll check the team folder first.",
            "Done: memo.md says the meeting moved to Friday, and Bob has been told."
        ]
    );
    assert_eq!(
        calls(&events),
        [
            ("Bash", false),
            ("mcp__bureau__files_write", true),
            ("Grep", false),
            ("mcp__bureau__mail_send", true)
        ]
    );
    assert_eq!(
        results(&events),
        [
            ("toolu_01Bash", false),
            ("toolu_01Write", false),
            ("toolu_01Grep", true),
            ("toolu_01Mail", false)
        ]
    );
    let bash_result = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "toolu_01Bash" => Some(output),
            _ => None,
        })
        .unwrap();
    assert!(bash_result.as_str().unwrap().contains("readme.txt"));
    let u = last_usage(&events);
    assert_eq!(u.input_tokens, 30 + 5670 + 77500);
    assert_eq!(u.cached_input_tokens, 77500);
    assert_eq!(u.cache_write_tokens, 5670);
    assert_eq!(u.output_tokens, 281);
    assert_eq!(u.cost_usd, Some(0.0421735));
    assert_eq!(u.model_calls, Some(6));
    assert_eq!(
        finals(&events),
        ["Done: memo.md says the meeting moved to Friday, and Bob has been told."]
    );
}

#[test]
fn claude_codes_max_turns_is_a_limit_with_its_usage() {
    let events = parse_all(Format::ClaudeCode, &sample("claude-code/error.jsonl"), "");
    assert!(finals(&events).is_empty());
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Limit { limit, .. } if limit == "harness_max_turns"
    )));
    assert_eq!(last_usage(&events).cost_usd, Some(0.0031));
}

/// Claude Code reports a refused API call as `subtype: success` with `is_error: true` and
/// exits 0: a failed turn, never a final answer.
#[test]
fn a_claude_code_success_with_is_error_is_a_failed_turn() {
    let line = r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Invalid API key · Fix external API key","session_id":"s","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}"#;
    let events = parse_all(Format::ClaudeCode, line, "");
    assert!(finals(&events).is_empty());
    assert!(events.contains(&Event::Failed(
        "success Invalid API key · Fix external API key".into()
    )));
}

#[test]
fn codex_exec_json_gives_items_usage_and_the_thread_to_resume() {
    let events = parse_all(Format::Codex, &sample("codex/turn1.jsonl"), "");
    assert_eq!(sessions(&events), ["0199a213-81c0-7800-8aa1-bbab2a035a53"]);
    assert_eq!(
        calls(&events),
        [
            ("command_execution", false),
            ("mcp:bureau:files_write", true),
            ("command_execution", false),
            ("mcp:bureau:mail_send", true)
        ]
    );
    assert_eq!(
        results(&events),
        [
            ("item_1", false),
            ("item_2", false),
            ("item_3", true),
            ("item_4", false)
        ]
    );
    assert_eq!(
        messages(&events),
        ["memo.md now says the meeting moved to Friday and Bob has been mailed."]
    );
    assert_eq!(
        finals(&events),
        ["memo.md now says the meeting moved to Friday and Bob has been mailed."]
    );
    let u = last_usage(&events);
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (24763, 24448, 122)
    );
    assert_eq!(u.cost_usd, None);
    let cmd = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCall { input, .. } => Some(input),
            _ => None,
        })
        .unwrap();
    assert_eq!(cmd, &json!({"command": "bash -lc ls"}));
}

#[test]
fn a_failed_codex_turn_reports_its_errors_and_the_unfinished_command() {
    let events = parse_all(Format::Codex, &sample("codex/failed.jsonl"), "");
    let errors: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Error(_)))
        .collect();
    assert_eq!(errors.len(), 2);
    assert_eq!(calls(&events), [("command_execution", false)]);
    assert!(results(&events).is_empty(), "the command never completed");
    assert!(finals(&events).is_empty());
}

#[test]
fn openclaw_envelope_and_transcript_give_this_turns_calls_usage_and_session() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session.jsonl");
    std::fs::write(&session, sample("openclaw/session.jsonl")).unwrap();
    let stdout =
        sample("openclaw/turn1.stdout").replace("SESSION_FILE", &session.to_string_lossy());
    let events = parse_all(Format::OpenClaw, &stdout, "");
    assert_eq!(sessions(&events), ["bureau-7f3a"]);
    // Only the rows after the last user message: not "Earlier answer."
    assert_eq!(
        messages(&events),
        [
            "Let me look.",
            "memo.md now says the meeting moved to Friday; Bob has been mailed."
        ]
    );
    assert_eq!(
        calls(&events),
        [("exec", false), ("bureau__files_write", true)]
    );
    assert_eq!(results(&events), [("call_1", false), ("call_2", false)]);
    let u = last_usage(&events);
    assert_eq!(
        (
            u.input_tokens,
            u.cached_input_tokens,
            u.cache_write_tokens,
            u.output_tokens
        ),
        (1200 + 8000 + 500, 8000, 500, 310)
    );
    assert_eq!(
        finals(&events),
        ["memo.md now says the meeting moved to Friday; Bob has been mailed."]
    );
}

#[test]
fn openhands_json_events_give_actions_observations_and_metrics() {
    let events = parse_all(Format::OpenHands, &sample("openhands/turn1.jsonl"), "");
    assert_eq!(sessions(&events), ["c0ffee00b1"]);
    assert_eq!(
        calls(&events),
        [("run", false), ("call_tool_mcp", true), ("write", false)]
    );
    assert_eq!(
        results(&events),
        [
            ("openhands-1", false),
            ("openhands-2", false),
            ("openhands-3", true)
        ]
    );
    assert_eq!(messages(&events), ["The memo is written."]);
    assert_eq!(
        finals(&events),
        ["memo.md says the meeting moved to Friday."]
    );
    let u = last_usage(&events);
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (9000, 4000, 300)
    );
    assert_eq!(u.cost_usd, Some(0.0123));
}

#[test]
fn hermes_quiet_output_is_the_final_message_and_stderr_names_the_session() {
    let events = parse_all(
        Format::Hermes,
        &sample("hermes/turn1.stdout"),
        &sample("hermes/turn1.stderr"),
    );
    assert_eq!(sessions(&events), ["20260302_090000_a1b2c3"]);
    assert_eq!(
        finals(&events),
        ["I wrote memo.md (the meeting moved to Friday) and mailed Bob."]
    );
    // Plain text: the whole stdout, no session from stderr.
    let events = parse_all(Format::Text, "line one\nline two\n", "session_id: x\n");
    assert_eq!(finals(&events), ["line one\nline two"]);
    assert!(sessions(&events).is_empty());
}

#[test]
fn lines_outside_a_json_format_are_kept_as_unparsed() {
    let events = parse_all(
        Format::Codex,
        "warning: something\n\n{\"type\":\"turn.started\"}\n",
        "",
    );
    assert_eq!(events, [Event::Unparsed("warning: something".into())]);
}
