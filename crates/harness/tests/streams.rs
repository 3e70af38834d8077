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

fn errors(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Error(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn warnings(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Warning(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Codex 0.169.0's own output (captured against Bureau's endpoint and a scripted model).
#[test]
fn codex_exec_json_gives_bureau_calls_usage_and_the_thread_to_resume() {
    let events = parse_all(Format::Codex, &sample("codex/turn1.jsonl"), "");
    assert_eq!(sessions(&events), ["01a213e6-3c40-7000-87e1-dec28b750254"]);
    assert_eq!(
        calls(&events),
        [
            ("mcp:bureau:files_write", true),
            ("mcp:bureau:mail_send", true)
        ]
    );
    assert_eq!(results(&events), [("item_1", false), ("item_2", false)]);
    assert_eq!(messages(&events), ["Memo written and Bob told."]);
    assert_eq!(finals(&events), ["Memo written and Bob told."]);
    let u = last_usage(&events);
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (1500, 800, 90)
    );
    assert_eq!(u.cost_usd, None);
    // Codex's warning that it has no metadata for the model is an error *item*: it went on.
    assert!(errors(&events).is_empty(), "{events:?}");
    assert_eq!(warnings(&events).len(), 1);
    assert!(warnings(&events)[0].starts_with("Model metadata for `gpt-5-codex` not found"));
    // Codex never names the model.
    assert!(!events.iter().any(|e| matches!(e, Event::Model(_))));
}

#[test]
fn a_resumed_codex_turn_names_the_same_thread_and_reports_the_threads_running_total() {
    let events = parse_all(Format::Codex, &sample("codex/turn2-resumed.jsonl"), "");
    assert_eq!(sessions(&events), ["01a213e6-3c40-7000-87e1-dec28b750254"]);
    assert_eq!(
        calls(&events),
        [
            ("mcp:bureau:files_read", true),
            ("mcp:bureau:files_edit", true)
        ]
    );
    assert_eq!(finals(&events), ["Budget added."]);
    // The thread's total (turn 1's 1500 + this turn's 2400): the agent subtracts turn 1's.
    let u = last_usage(&events);
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (3900, 2600, 165)
    );
}

#[test]
fn a_bureau_call_codex_refused_is_an_error_result_with_codexs_message() {
    // Without `default_tools_approval_mode = "approve"`, Codex refuses Bureau's writing tools:
    // the call is reported with an error result (the agent notes that Bureau never got it).
    let events = parse_all(Format::Codex, &sample("codex/refused.jsonl"), "");
    assert_eq!(
        calls(&events),
        [
            ("mcp:bureau:files_write", true),
            ("mcp:bureau:mail_send", true)
        ]
    );
    assert_eq!(results(&events), [("item_1", true), ("item_2", false)]);
    let refusal = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "item_1" => Some(output),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        refusal,
        &json!({"message": "MCP tool call requires approval, but approval policy is never"})
    );
    assert!(errors(&events).is_empty());
}

#[test]
fn a_bureau_error_result_and_codexs_own_command_are_read_with_their_outcomes() {
    let events = parse_all(Format::Codex, &sample("codex/tool-error.jsonl"), "");
    assert_eq!(
        calls(&events),
        [
            ("mcp:bureau:files_read", true),
            ("command_execution", false)
        ]
    );
    // The tool answered with isError (Codex: status failed, the result kept): an error.
    assert_eq!(results(&events), [("item_1", true), ("item_2", false)]);
    let cmd = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCall { tool, input, .. } if tool == "command_execution" => Some(input),
            _ => None,
        })
        .unwrap();
    assert_eq!(cmd, &json!({"command": "/bin/bash -lc ls"}));
    assert!(errors(&events).is_empty());
    assert_eq!(finals(&events), ["Could not read it."]);
}

#[test]
fn a_failed_codex_turn_is_one_failure() {
    let events = parse_all(Format::Codex, &sample("codex/failed.jsonl"), "");
    // `error` and then `turn.failed` with the same message: the turn's failure, once.
    assert!(errors(&events).is_empty(), "{events:?}");
    let failed: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Failed(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(failed[0].contains("The scripted model refuses this request."));
    assert!(finals(&events).is_empty());
    assert!(!events.iter().any(|e| matches!(e, Event::Usage(_))));
}

#[test]
fn a_codex_error_not_followed_by_turn_failed_is_an_error() {
    let stream = concat!(
        r#"{"type":"thread.started","thread_id":"t"}"#,
        "\n",
        r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done."}}"#,
        "\n",
        r#"{"type":"error","message":"stream closed"}"#,
        "\n",
    );
    let events = parse_all(Format::Codex, stream, "");
    assert_eq!(errors(&events), ["Reconnecting... 1/5", "stream closed"]);
    assert!(!events.iter().any(|e| matches!(e, Event::Failed(_))));
}

/// OpenClaw 2026.9.6's own output (captured against Bureau's endpoint and a scripted model).
#[test]
fn openclaw_envelope_gives_session_model_per_turn_usage_cost_and_final_message() {
    let mut parser = Format::OpenClaw.parser();
    for line in sample("openclaw/turn1.stdout").lines() {
        assert!(parser.line(line).is_empty());
    }
    let events = parser.finish("");
    assert_eq!(sessions(&events), ["bureau-LZ43U1"]);
    assert!(events.contains(&Event::Model("openai/gpt-5.4".into())));
    let u = last_usage(&events);
    assert_eq!(
        (
            u.input_tokens,
            u.cached_input_tokens,
            u.cache_write_tokens,
            u.output_tokens
        ),
        (700 + 800, 800, 0, 90)
    );
    assert_eq!(u.cost_usd, Some(0.0033));
    assert_eq!(u.model_calls, Some(3));
    assert_eq!(finals(&events), ["Memo written and Bob told."]);
    // `sessionFile` is a session key now, not a transcript file: nothing read from it.
    assert!(calls(&events).is_empty());
    // Turn 2 of the same session reports its own usage, not the session's total.
    let events = parse_all(Format::OpenClaw, &sample("openclaw/turn2.stdout"), "");
    assert_eq!(sessions(&events), ["bureau-LZ43U1"]);
    let u = last_usage(&events);
    assert_eq!((u.input_tokens, u.output_tokens), (600 + 1800, 75));
    assert_eq!(finals(&events), ["Budget added."]);
}

#[test]
fn openclaws_transcript_gives_this_turns_calls_and_results() {
    // The session's rows as the agent reads them from OpenClaw's SQLite store after turn 2.
    let mut parser = Format::OpenClaw.parser();
    let events = parser.transcript(&sample("openclaw/transcript-turn2.jsonl"));
    assert_eq!(
        calls(&events),
        [("bureau__files_read", true), ("bureau__files_edit", true)]
    );
    assert_eq!(
        results(&events),
        [("call_4|fc_4", false), ("call_5|fc_5", false)]
    );
    // Only this turn's rows: not turn 1's "Memo written and Bob told."
    assert_eq!(messages(&events), ["Budget added."]);
    let input = events
        .iter()
        .find_map(|e| match e {
            Event::ToolCall { input, .. } => Some(input),
            _ => None,
        })
        .unwrap();
    assert_eq!(input, &json!({"path": "notes/budget.txt"}));
}

#[test]
fn openclaws_own_tools_and_bureau_errors_are_read_from_its_transcript() {
    let mut parser = Format::OpenClaw.parser();
    let events = parser.transcript(&sample("openclaw/transcript-tools.jsonl"));
    assert_eq!(
        calls(&events),
        [("bureau__files_read", true), ("ls", false)]
    );
    assert_eq!(
        results(&events),
        [("call_1|fc_1", true), ("call_2|fc_2", false)]
    );
    let ls = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "call_2|fc_2" => Some(output),
            _ => None,
        })
        .unwrap();
    assert_eq!(ls, &json!("\"readme.txt\""));
    assert_eq!(messages(&events), ["I could not find missing.txt."]);
}

#[test]
fn an_openclaw_failure_envelope_is_an_error() {
    let events = parse_all(
        Format::OpenClaw,
        &sample("openclaw/unknown-model.stdout"),
        "",
    );
    let errors = errors(&events);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("Unknown model: openai/gpt-5.1."),
        "{errors:?}"
    );
    assert!(finals(&events).is_empty());
}

/// Parse `stdout` and then, as the agent does after the turn, `transcript` (OpenHands's
/// `base_state.json`, Hermes's state rows).
fn parse_with_transcript(
    format: Format,
    stdout: &str,
    stderr: &str,
    transcript: &str,
) -> Vec<Event> {
    let mut parser = format.parser();
    let mut events = Vec::new();
    for line in stdout.lines() {
        events.extend(parser.line(line));
    }
    events.extend(parser.finish(stderr));
    events.extend(parser.transcript(transcript));
    events
}

fn unparsed(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Unparsed(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn failures(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Failed(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn openhands_events_give_bureau_and_own_calls_the_finish_message_and_the_conversation() {
    // Captured from OpenHands CLI 1.16.0 (`--headless --json`) in real_openhands.rs's one-turn
    // task, with the conversation's base_state.json after the turn.
    let events = parse_with_transcript(
        Format::OpenHands,
        &sample("openhands/turn1.stdout"),
        "",
        &sample("openhands/turn1.base_state.json"),
    );
    assert_eq!(sessions(&events), ["70e13d398f324f8787e24f379c52fe6c"]);
    assert_eq!(
        calls(&events),
        [
            ("files_write", true),
            ("mail_send", true),
            ("terminal", false)
        ]
    );
    // `finish` is the final answer, not a tool call with a result.
    assert_eq!(
        results(&events),
        [("call_1", false), ("call_2", false), ("call_3", false)]
    );
    let ls = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { id, output, .. } if id == "call_3" => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(ls.as_str().unwrap().contains("readme.txt"), "{ls}");
    assert_eq!(finals(&events), ["Memo written and Bob told."]);
    assert!(messages(&events).is_empty());
    // The CLI's decoration (the summary box, greetings) is dropped, not kept as output.
    assert!(unparsed(&events).is_empty(), "{:?}", unparsed(&events));
    assert!(errors(&events).is_empty());
    let models: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e, Event::Model(_)))
        .collect();
    assert!(
        models
            .iter()
            .all(|m| **m == Event::Model("openai/gpt-4o".into()))
    );
    // Usage from base_state.json: the conversation's totals, cache reads included in input.
    let u = last_usage(&events);
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (2050, 1150, 105)
    );
    assert_eq!(u.model_calls, Some(4));
    let cost = u.cost_usd.unwrap();
    assert!(
        (cost - (900.0 * 2.5 + 1150.0 * 1.25 + 105.0 * 10.0) / 1e6).abs() < 1e-9,
        "{cost}"
    );
}

#[test]
fn a_resumed_openhands_conversation_keeps_its_id_and_its_running_totals() {
    let t1 = parse_with_transcript(
        Format::OpenHands,
        &sample("openhands/resume-turn1.stdout"),
        "",
        &sample("openhands/resume-turn1.base_state.json"),
    );
    let t2 = parse_with_transcript(
        Format::OpenHands,
        &sample("openhands/resume-turn2.stdout"),
        "",
        &sample("openhands/resume-turn2.base_state.json"),
    );
    assert_eq!(sessions(&t1), sessions(&t2));
    assert_eq!(calls(&t2), [("files_read", true), ("files_edit", true)]);
    // No `finish` on turn 2: the last agent message is the answer.
    assert!(finals(&t2).is_empty());
    assert_eq!(messages(&t2), ["Budget added."]);
    // base_state.json holds the conversation's running total (the agent subtracts turn 1's).
    let (u1, u2) = (last_usage(&t1), last_usage(&t2));
    assert_eq!(
        (u1.input_tokens, u1.output_tokens, u1.model_calls),
        (1500, 90, Some(3))
    );
    assert_eq!(
        (u2.input_tokens, u2.output_tokens, u2.model_calls),
        (3900, 165, Some(6))
    );
}

#[test]
fn a_call_openhands_refused_is_an_error_result_and_a_failed_conversation_a_failure() {
    // `files_write` without the `security_risk` OpenHands requires: refused before it ran.
    let events = parse_all(Format::OpenHands, &sample("openhands/refused.stdout"), "");
    assert_eq!(calls(&events), [("files_write", true)]);
    assert_eq!(results(&events), [("call_1", true)]);
    let error = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { output, .. } => output.as_str(),
            _ => None,
        })
        .unwrap();
    assert!(error.contains("security_risk"), "{error}");
    assert_eq!(messages(&events), ["Done."]);
    assert!(failures(&events).is_empty());
    // The model server answering 400: a ConversationErrorEvent, while the CLI exits 0. The
    // summary box (the whole system prompt here) is dropped.
    let events = parse_all(Format::OpenHands, &sample("openhands/failed.stdout"), "");
    let failed = failures(&events);
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(
        failed[0].starts_with("LLMBadRequestError: ") && failed[0].contains("scripted failure"),
        "{failed:?}"
    );
    assert!(unparsed(&events).is_empty(), "{:?}", unparsed(&events));
    assert!(finals(&events).is_empty() && messages(&events).is_empty());
    // Without `--override-with-envs` the CLI reads no settings and exits 0 without a model
    // call: a failed turn, not an empty answer.
    let events = parse_all(
        Format::OpenHands,
        &sample("openhands/no-settings.stdout"),
        "",
    );
    let failed = failures(&events);
    assert_eq!(failed.len(), 1, "{events:?}");
    assert!(
        failed[0].starts_with("Headless mode requires existing settings"),
        "{failed:?}"
    );
}

#[test]
fn hermes_quiet_output_is_the_final_message_and_its_store_the_calls_and_usage() {
    // Captured from Hermes 0.19.0 (`hermes chat --query ... --quiet`) in real_hermes.rs's
    // one-turn task, with the session's rows of its state.db after the turn.
    let events = parse_with_transcript(
        Format::Hermes,
        &sample("hermes/turn1.stdout"),
        &sample("hermes/turn1.stderr"),
        &sample("hermes/turn1.state.jsonl"),
    );
    assert_eq!(sessions(&events), ["20261126_090530_5c9099"]);
    assert_eq!(finals(&events), ["Memo written and Bob told."]);
    assert_eq!(
        calls(&events),
        [
            ("mcp__bureau__files_write", true),
            ("mcp__bureau__mail_send", true),
            ("terminal", false)
        ]
    );
    assert_eq!(
        results(&events),
        [("call_1", false), ("call_2", false), ("call_3", false)]
    );
    // The untrusted-data wrapper Hermes puts around MCP results is taken off.
    let first = events
        .iter()
        .find_map(|e| match e {
            Event::ToolResult { output, .. } => output.as_str(),
            _ => None,
        })
        .unwrap();
    assert!(first.starts_with("{\"result\""), "{first}");
    // The last assistant text is the final message too (the agent records it once).
    assert_eq!(messages(&events), ["Memo written and Bob told."]);
    let u = last_usage(&events);
    assert_eq!(
        (u.input_tokens, u.cached_input_tokens, u.output_tokens),
        (2050, 1150, 105)
    );
    assert_eq!(u.model_calls, Some(4));
    let cost = u.cost_usd.unwrap();
    assert!(
        (cost - (900.0 * 2.5 + 1150.0 * 1.25 + 105.0 * 10.0) / 1e6).abs() < 1e-9,
        "{cost}"
    );
    assert!(errors(&events).is_empty());
    // Plain text: the whole stdout, no session from stderr.
    let events = parse_all(Format::Text, "line one\nline two\n", "session_id: x\n");
    assert_eq!(finals(&events), ["line one\nline two"]);
    assert!(sessions(&events).is_empty());
}

#[test]
fn a_resumed_hermes_session_reads_only_this_turns_rows_and_the_running_totals() {
    let t2 = parse_with_transcript(
        Format::Hermes,
        &sample("hermes/resume-turn2.stdout"),
        &sample("hermes/resume-turn2.stderr"),
        &sample("hermes/resume-turn2.state.jsonl"),
    );
    let t1 = parse_with_transcript(
        Format::Hermes,
        "",
        "",
        &sample("hermes/resume-turn1.state.jsonl"),
    );
    assert_eq!(sessions(&t2), ["20261126_090512_99f0cc"]);
    assert_eq!(finals(&t2), ["Budget added."]);
    // Turn 1's calls are in the store too; only this turn's are read.
    assert_eq!(
        calls(&t2),
        [
            ("mcp__bureau__files_read", true),
            ("mcp__bureau__files_edit", true)
        ]
    );
    let (u1, u2) = (last_usage(&t1), last_usage(&t2));
    assert_eq!(
        (u1.input_tokens, u1.output_tokens, u1.model_calls),
        (1500, 90, Some(3))
    );
    assert_eq!(
        (u2.input_tokens, u2.output_tokens, u2.model_calls),
        (3900, 165, Some(6))
    );
}

#[test]
fn hermess_scanner_notice_is_a_warning_not_part_of_the_final_message() {
    // Captured from Hermes 0.19.0 run without `security.tirith_enabled: false`.
    let events = parse_all(
        Format::Hermes,
        &sample("hermes/tirith-warning.stdout"),
        &sample("hermes/tirith-warning.stderr"),
    );
    assert_eq!(finals(&events), ["Hello from the script."]);
    let w = warnings(&events);
    assert_eq!(w.len(), 1, "{events:?}");
    assert!(w[0].starts_with("⚠ tirith security scanner"), "{w:?}");
}

#[test]
fn a_bureau_call_hermes_refused_is_an_error_result_with_its_message() {
    let events = parse_with_transcript(
        Format::Hermes,
        &sample("hermes/refused.stdout"),
        &sample("hermes/refused.stderr"),
        &sample("hermes/refused.state.jsonl"),
    );
    assert_eq!(
        calls(&events),
        [("mcp__bureau__zzz_quantum_teleport", true)]
    );
    assert_eq!(results(&events), [("call_1", true)]);
    assert_eq!(finals(&events), ["Done."]);
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
