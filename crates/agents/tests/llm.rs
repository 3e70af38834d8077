//! The `llm` agent end to end: Bureau's run loop drives it against a fake model API on
//! 127.0.0.1 that speaks the real OpenAI and Anthropic wire formats and plays scripted
//! conversations and failures.

mod support;

use std::path::Path;
use std::time::Duration;

use bureau_agents::llm::full_requests;
use bureau_core::result::TrialStatus;
use bureau_core::trajectory::{ModelCall, Step, StepKind};
use bureau_world::World;
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, Wire};
use support::script::{anthropic, openai, tokens};
use support::*;

fn openai_agents(base: &str, extra: &str) -> String {
    format!(
        r#"[agents.gpt]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
temperature = 0
seed = 42
{extra}
[agents.gpt.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
request_timeout_seconds = 5

[prices."openai:gpt-4.1-mini"]
input_per_mtok = 0.4
cached_input_per_mtok = 0.1
output_per_mtok = 1.6
"#
    )
}

fn anthropic_agents(base: &str, extra: &str) -> String {
    format!(
        r#"[agents.claude]
kind = "llm"
model = "anthropic:claude-sonnet-4-5"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
max_output_tokens = 1024
{extra}
[agents.claude.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05

[prices."anthropic:claude-sonnet-4-5"]
input_per_mtok = 3.0
cached_input_per_mtok = 0.3
output_per_mtok = 15.0
"#
    )
}

fn model_calls(steps: &[Step]) -> Vec<&ModelCall> {
    steps.iter().filter_map(Step::as_model_call).collect()
}

fn limits(steps: &[Step]) -> Vec<(u32, String)> {
    steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::LimitReached { limit, .. } => Some((s.turn, limit.clone())),
            _ => None,
        })
        .collect()
}

/// No file of the run directory holds the key (and the search did look at files).
fn assert_key_nowhere(out: &Path) {
    assert!(count_files(out) >= 8, "the run directory is nearly empty");
    assert_eq!(
        files_containing(out, SECRET),
        Vec::<std::path::PathBuf>::new()
    );
}

fn write_hello() -> Value {
    json!({"path": "hello.txt", "content": "hi\n"})
}

#[test]
fn openai_conversation_solves_a_two_turn_task_through_tool_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_memo_task(&tmp.path().join("memo"));
    let t = [
        tokens(1000, 0, 60),
        tokens(1300, 1024, 12),
        tokens(1500, 1280, 20),
        tokens(1700, 1280, 40),
        tokens(1900, 1536, 10),
    ];
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[
                    (
                        "call_1",
                        "files_write",
                        json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
                    ),
                    (
                        "call_2",
                        "mail_send",
                        json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
                    ),
                ],
                t[0],
            ),
            openai::text("Memo written and Bob told.", t[1]),
            openai::calls(
                &[("call_3", "files_read", json!({"path": "notes/budget.txt"}))],
                t[2],
            ),
            openai::calls(
                &[(
                    "call_4",
                    "files_edit",
                    json!({"path": "memo.md", "old": "Friday.\n", "new": "Friday.\nBudget total: 12,500 EUR.\n"}),
                )],
                t[3],
            ),
            openai::text("Added the budget total.", t[4]),
        ],
    );
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    let outcome = run(&task, &["gpt"], &catalog(&agents), &out);

    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!((server.received().len(), server.unused()), (5, 0));
    let r = result(&out, "memo", "gpt");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);
    assert!(r.score.as_ref().unwrap().strict);
    assert_eq!(outcome.passed, 1);

    // The wire: key, model, sampling, the system prompt, the tools, the office time.
    let received = server.received();
    let first = &received[0];
    assert_eq!(first.headers["authorization"], format!("Bearer {SECRET}"));
    let body = &first.body;
    assert_eq!(
        (
            body["model"].clone(),
            body["temperature"].clone(),
            body["seed"].clone()
        ),
        (json!("gpt-4.1-mini"), json!(0.0), json!(42))
    );
    assert_eq!(body["messages"][0]["role"], "system");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Ada Admin <ada@corp.test>"), "{system}");
    assert!(system.contains("Europe/Berlin"), "{system}");
    let prompt = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.starts_with(
            "Office time: Monday 2 March 2026, 09:00 (Europe/Berlin, UTC+01:00)\n\nWrite memo.md"
        ),
        "{prompt}"
    );
    let tool_names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // The tools of the task's apps (files, mail), not the calendar's, and the confined shell.
    let apps = vec!["files".to_string(), "mail".to_string()];
    assert_eq!(tool_names.len(), World::tool_specs_for(&apps).len() + 1);
    assert!(tool_names.contains(&"shell_run"));
    assert!(tool_names.contains(&"mail_send"));
    assert!(!tool_names.iter().any(|n| n.starts_with("calendar_")));

    // Tool results go back with their call ids.
    let second = received[1].body["messages"].as_array().unwrap();
    assert_eq!(second.len(), 5);
    assert_eq!(second[2]["tool_calls"][1]["function"]["name"], "mail_send");
    assert_eq!(second[3]["tool_call_id"], "call_1");
    assert!(
        second[3]["content"]
            .as_str()
            .unwrap()
            .contains("\"created\":true")
    );
    assert_eq!(second[4]["tool_call_id"], "call_2");

    // One conversation across turns: turn 2 starts with everything of turn 1.
    let third = received[2].body["messages"].as_array().unwrap();
    assert_eq!(&third[..5], &second[..]);
    assert_eq!(
        third[5],
        json!({"role": "assistant", "content": "Memo written and Bob told."})
    );
    assert!(
        third[6]["content"]
            .as_str()
            .unwrap()
            .starts_with("Office time: Tuesday 3 March 2026")
    );
    assert_eq!(third.len(), 7);

    // The trajectory keeps each call; the full bodies are rebuilt exactly from the records.
    let steps = trajectory(&out, "memo", "gpt");
    let calls = model_calls(&steps);
    assert_eq!(calls.len(), 5);
    assert_eq!(calls[0].messages_elided, 0);
    assert!(!calls[0].tools_elided);
    assert_eq!((calls[1].messages_elided, calls[1].tools_elided), (2, true));
    assert_eq!(calls[2].request["messages"].as_array().unwrap().len(), 2);
    let sent: Vec<Value> = received.iter().map(|r| r.body.clone()).collect();
    assert_eq!(full_requests(&steps), sent);
    assert_eq!(
        calls[4].response["choices"][0]["message"]["content"],
        "Added the budget total."
    );
    let messages: Vec<(u32, &str)> = steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Message { text } => Some((s.turn, text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        messages,
        vec![
            (1, "Memo written and Bob told."),
            (2, "Added the budget total.")
        ]
    );

    // Accounting: tokens and cost per call and in result.json and summary.json.
    let price = |input: u64, cached: u64, output: u64| {
        ((input - cached) as f64 * 0.4 + cached as f64 * 0.1 + output as f64 * 1.6) / 1e6
    };
    let expected_cost: f64 = t.iter().map(|t| price(t.input, t.cached, t.output)).sum();
    assert!((calls[0].usage.cost_usd.unwrap() - 496e-6).abs() < 1e-12);
    let u = &r.usage;
    assert_eq!(
        (
            u.model_calls,
            u.input_tokens,
            u.cached_input_tokens,
            u.output_tokens
        ),
        (5, 7400, 5120, 142)
    );
    assert!((u.cost_usd.unwrap() - expected_cost).abs() < 1e-12);
    assert_eq!((u.tool_calls, u.tool_errors), (4, 0));
    assert_eq!(u.tool_calls_by_tool["files_edit"], 1);
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    let gpt = &summary["agents"]["gpt"];
    assert_eq!(gpt["model_calls_mean"], 5.0);
    assert_eq!(gpt["cached_input_tokens_mean"], 5120.0);
    assert!((gpt["cost_usd_mean"].as_f64().unwrap() - expected_cost).abs() < 1e-12);
    assert!((gpt["token_efficiency"].as_f64().unwrap() - 1.0 / (7542.0 / 1e6)).abs() < 1e-6);

    // run.json records the definition without the key; no file holds the key.
    let run_json: Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    let def = &run_json["agents"][0]["definition"];
    assert_eq!(def["model"], "openai:gpt-4.1-mini");
    assert_eq!(def["api_key_env"], KEY_ENV);
    assert_eq!(
        def["endpoint"],
        format!("{}/chat/completions", server.base_url())
    );
    assert_eq!(def["price"]["cached_input_per_mtok"], 0.1);
    assert_key_nowhere(&out);

    // The trial replays without the model: `replay:` reads the trajectory, model calls and all.
    let trial = bureau_run::trial_dir(&out, "memo", "gpt", 1);
    let replay = format!("replay:{}", trial.display());
    let again = tmp.path().join("replayed");
    let outcome = run(&task, &[replay.as_str()], &catalog(&agents), &again);
    assert_eq!(outcome.passed, 1);
    assert_eq!(server.received().len(), 5);
}

#[test]
fn anthropic_conversation_solves_a_two_turn_task_through_tool_uses() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_memo_task(&tmp.path().join("memo"));
    let server = FakeServer::start(
        Wire::Anthropic,
        Some(SECRET),
        vec![
            anthropic::calls(
                Some("I'll write the memo and tell Bob."),
                &[
                    (
                        "toolu_01",
                        "files_write",
                        json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
                    ),
                    (
                        "toolu_02",
                        "mail_send",
                        json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
                    ),
                ],
                tokens(2000, 0, 80),
            ),
            anthropic::text("Done.", tokens(2400, 2000, 5)),
            anthropic::calls(
                None,
                &[(
                    "toolu_03",
                    "files_read",
                    json!({"path": "notes/budget.txt"}),
                )],
                tokens(2600, 2400, 15),
            ),
            anthropic::calls(
                None,
                &[(
                    "toolu_04",
                    "files_edit",
                    json!({"path": "memo.md", "old": "Friday.\n", "new": "Friday.\nBudget total: 12,500 EUR.\n"}),
                )],
                tokens(2800, 2600, 30),
            ),
            anthropic::text("Budget added.", tokens(3000, 2800, 4)),
        ],
    );
    let agents = write_agents_file(tmp.path(), &anthropic_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["claude"], &catalog(&agents), &out);

    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!((server.received().len(), server.unused()), (5, 0));
    let r = result(&out, "memo", "claude");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);

    let received = server.received();
    assert_eq!(received[0].path, "/v1/messages");
    assert_eq!(received[0].headers["x-api-key"], SECRET);
    assert_eq!(received[0].headers["anthropic-version"], "2023-06-01");
    assert!(!received[0].headers.contains_key("authorization"));
    let body = &received[0].body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 1024);
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Ada Admin")
    );
    // The world tools of the task's apps, and the confined shell.
    assert_eq!(
        body["tools"].as_array().unwrap().len(),
        World::tool_specs_for(&["files".to_string(), "mail".to_string()]).len() + 1
    );
    assert!(body["tools"][0]["input_schema"].is_object());

    // Tool results go back in one user message, in order; turn 2 continues the conversation.
    let second = received[1].body["messages"].as_array().unwrap();
    assert_eq!(second.len(), 3);
    assert_eq!(
        second[1]["content"][0]["text"],
        "I'll write the memo and tell Bob."
    );
    let results = second[2]["content"].as_array().unwrap();
    assert_eq!(
        results
            .iter()
            .map(|b| b["tool_use_id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["toolu_01", "toolu_02"]
    );
    let third = received[2].body["messages"].as_array().unwrap();
    assert_eq!(&third[..3], &second[..]);
    assert_eq!(third[3]["role"], "assistant");
    assert!(
        third[4]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Tuesday 3 March 2026")
    );

    let steps = trajectory(&out, "memo", "claude");
    let sent: Vec<Value> = received.iter().map(|r| r.body.clone()).collect();
    assert_eq!(full_requests(&steps), sent);
    // Text said alongside tool calls is kept as a message of the turn.
    assert!(steps.iter().any(|s| matches!(&s.kind, StepKind::Message { text } if text == "I'll write the memo and tell Bob.")));

    // Anthropic reports cache reads apart from input_tokens; Bureau counts them in the input.
    let u = &r.usage;
    assert_eq!(
        (
            u.model_calls,
            u.input_tokens,
            u.cached_input_tokens,
            u.output_tokens
        ),
        (5, 12_800, 9_800, 134)
    );
    let expected = (3000.0 * 3.0 + 9800.0 * 0.3 + 134.0 * 15.0) / 1e6;
    assert!(
        (u.cost_usd.unwrap() - expected).abs() < 1e-12,
        "{:?}",
        u.cost_usd
    );
    assert_key_nowhere(&out);
}

#[test]
fn an_empty_answer_ends_the_turn_and_the_conversation_stays_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 2, 20, 600);
    let server = FakeServer::start(
        Wire::Anthropic,
        Some(SECRET),
        vec![
            anthropic::empty(tokens(300, 0, 1)),
            anthropic::calls(
                None,
                &[("toolu_w", "files_write", write_hello())],
                tokens(400, 0, 20),
            ),
            anthropic::text("Wrote it.", tokens(500, 0, 5)),
        ],
    );
    let agents = write_agents_file(tmp.path(), &anthropic_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["claude"], &catalog(&agents), &out);

    assert_eq!(server.violations(), Vec::<String>::new());
    let r = result(&out, "hello", "claude");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);
    // Turn 2 starts with both prompts and no empty assistant message between them.
    let received = server.received();
    let roles: Vec<&str> = received[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "user"]);
    let steps = trajectory(&out, "hello", "claude");
    assert!(
        !steps
            .iter()
            .any(|s| s.turn == 1 && matches!(s.kind, StepKind::Message { .. }))
    );
}

fn hello_script_openai() -> Vec<Reply> {
    vec![
        openai::calls(
            &[("call_w", "files_write", write_hello())],
            tokens(500, 0, 20),
        ),
        openai::text("Wrote hello.txt.", tokens(600, 0, 5)),
    ]
}

#[test]
fn a_rate_limit_is_waited_out_as_retry_after_asks() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let mut script = vec![Reply::rate_limited(Wire::OpenAi, "1")];
    script.extend(hello_script_openai());
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), script);
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);

    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);
    assert_eq!(server.received().len(), 3);
    let steps = trajectory(&out, "hello", "gpt");
    let calls = model_calls(&steps);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].retries.len(), 1);
    let retry = &calls[0].retries[0];
    assert!(
        retry
            .reason
            .starts_with("429 Too Many Requests: Rate limit reached"),
        "{}",
        retry.reason
    );
    // Retry-After: 1 is honoured exactly (not the 10 ms backoff of the agents file).
    assert_eq!(retry.wait_ms, 1000);
    assert!(calls[1].retries.is_empty());
    // The successful attempt is the one recorded.
    assert_eq!(
        calls[0].response["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

#[test]
fn server_errors_that_outlast_the_retry_budget_make_the_trial_error_not_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            Reply::error(
                Wire::OpenAi,
                500,
                "The server had an error while processing your request.",
            ),
            Reply::error(Wire::OpenAi, 503, "Service unavailable"),
            Reply::error(
                Wire::OpenAi,
                500,
                "The server had an error while processing your request.",
            ),
        ],
    );
    let agents = write_agents_file(
        tmp.path(),
        &openai_agents(&server.base_url(), "").replace(
            "[agents.gpt.retry]\n",
            "[agents.gpt.retry]\nmax_retries = 2\n",
        ),
    );
    let out = tmp.path().join("run");
    let outcome = run(&task, &["gpt"], &catalog(&agents), &out);

    assert_eq!((outcome.errored, outcome.failed, outcome.passed), (1, 0, 0));
    assert_eq!(server.received().len(), 3);
    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Error);
    assert!(r.score.is_none());
    let error = r.error.unwrap();
    assert!(
        error.starts_with("turn 1: agent error: model API openai:gpt-4.1-mini"),
        "{error}"
    );
    assert!(
        error.contains("500 Internal Server Error: The server had an error while processing your request. (gave up after 3 attempts"),
        "{error}"
    );
    let steps = trajectory(&out, "hello", "gpt");
    let calls = model_calls(&steps);
    assert_eq!(calls.len(), 1);
    assert!(calls[0].response.is_null());
    assert!(
        calls[0]
            .error
            .as_deref()
            .unwrap()
            .contains("gave up after 3 attempts")
    );
    let waits: Vec<u64> = calls[0].retries.iter().map(|r| r.wait_ms).collect();
    assert_eq!(waits.len(), 3);
    assert!(waits[0] >= 5 && waits[0] <= 10, "{waits:?}");
    assert!(waits[1] >= 10 && waits[1] <= 20, "{waits:?}");
    assert_eq!(waits[2], 0);
    assert!(
        calls[0].retries[1]
            .reason
            .starts_with("503 Service Unavailable")
    );
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["agents"]["gpt"]["errors"], 1);
    assert!(
        summary["agents"]["gpt"]["errored"][0]["error"]
            .as_str()
            .unwrap()
            .contains("gave up")
    );
}

#[test]
fn cut_off_bodies_closed_connections_and_slow_answers_are_retried() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let good = openai::calls(
        &[("call_w", "files_write", write_hello())],
        tokens(500, 0, 20),
    );
    let Reply::Json {
        body: good_body, ..
    } = good.clone()
    else {
        unreachable!()
    };
    let mut script = vec![
        Reply::Truncated {
            body: good_body,
            keep: 60,
        },
        Reply::Reset,
        Reply::slow(Duration::from_secs(2), good),
    ];
    script.extend(hello_script_openai());
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), script);
    let agents = write_agents_file(
        tmp.path(),
        &openai_agents(&server.base_url(), "").replace(
            "request_timeout_seconds = 5",
            "request_timeout_seconds = 0.5",
        ),
    );
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);

    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);
    assert_eq!(server.received().len(), 5);
    let steps = trajectory(&out, "hello", "gpt");
    let calls = model_calls(&steps);
    let reasons: Vec<&str> = calls[0].retries.iter().map(|r| r.reason.as_str()).collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(
        reasons[0].contains("end of file before message length reached"),
        "{reasons:?}"
    );
    assert!(
        reasons[1].contains("connection closed before message completed"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].starts_with("no complete answer within 0.5 s"),
        "{reasons:?}"
    );
    assert_eq!(r.usage.model_calls, 2);
}

#[test]
fn an_unauthorized_call_is_not_retried_and_an_echoed_key_is_redacted() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![Reply::error(
            Wire::OpenAi,
            401,
            &format!(
                "Incorrect API key provided: {SECRET}. You can find your API key at https://platform.openai.com/account/api-keys."
            ),
        )],
    );
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    let outcome = run(&task, &["gpt"], &catalog(&agents), &out);

    assert_eq!(outcome.errored, 1);
    assert_eq!(server.received().len(), 1);
    let error = result(&out, "hello", "gpt").error.unwrap();
    assert!(
        error.contains("401 Unauthorized: Incorrect API key provided: [redacted]."),
        "{error}"
    );
    assert_key_nowhere(&out);
}

#[test]
fn malformed_tool_calls_go_back_to_the_model_as_tool_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::raw_calls(
                &[
                    ("c1", "files_write", r#"{"path": "hello.txt", "content": "#),
                    ("c2", "files_shred", r#"{"path": "hello.txt"}"#),
                    ("c3", "files_write", r#"{"path": 5, "content": "hi"}"#),
                ],
                tokens(500, 0, 30),
            ),
            openai::calls(&[("c4", "files_write", write_hello())], tokens(700, 0, 20)),
            openai::text("Done.", tokens(800, 0, 2)),
        ],
    );
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);

    assert_eq!(server.violations(), Vec::<String>::new());
    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);
    assert_eq!((r.usage.tool_calls, r.usage.tool_errors), (4, 3));

    let received = server.received();
    let messages = received[1].body["messages"].as_array().unwrap();
    let answers: Vec<(&str, &str)> = messages[3..]
        .iter()
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0].0, "c1");
    assert!(
        answers[0]
            .1
            .starts_with("error: the arguments are not valid JSON"),
        "{}",
        answers[0].1
    );
    assert!(
        answers[0]
            .1
            .contains("send the arguments of `files_write` as one JSON object")
    );
    assert!(
        answers[1]
            .1
            .starts_with("error: unknown tool `files_shred`"),
        "{}",
        answers[1].1
    );
    assert!(
        answers[2]
            .1
            .starts_with("error: invalid arguments for `files_write`"),
        "{}",
        answers[2].1
    );
    // The model's own text of the bad call is sent back unchanged.
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"path": "hello.txt", "content": "#
    );

    // The trajectory records the unparsable arguments as they came.
    let steps = trajectory(&out, "hello", "gpt");
    let first = steps.iter().find_map(Step::as_tool_call).unwrap();
    assert_eq!(first.0, "files_write");
    assert_eq!(first.1, &json!(r#"{"path": "hello.txt", "content": "#));
    assert!(first.2.is_error());
}

#[test]
fn an_output_token_budget_ends_the_turn_and_every_later_one() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 2, 20, 600);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![openai::calls(
            &[("call_w", "files_write", write_hello())],
            tokens(500, 0, 150),
        )],
    );
    let agents = write_agents_file(
        tmp.path(),
        &openai_agents(
            &server.base_url(),
            "max_output_tokens = 4096\n[agents.gpt.limits]\nmax_output_tokens = 100\n",
        ),
    );
    let out = tmp.path().join("run");
    let outcome = run(&task, &["gpt"], &catalog(&agents), &out);

    // A limit is the agent's: the trial is scored (failed), not an error.
    assert_eq!((outcome.failed, outcome.errored), (1, 0));
    assert_eq!(server.violations(), Vec::<String>::new());
    let received = server.received();
    assert_eq!(received.len(), 1, "no model call after the budget is spent");
    // The call asked for no more than the budget left.
    assert_eq!(received[0].body["max_completion_tokens"], 100);
    let r = result(&out, "hello", "gpt");
    assert_eq!(
        r.usage.limits_hit,
        ["1:max_output_tokens", "2:max_output_tokens"]
    );
    // The tool call of the answer that used the budget up was not run.
    assert_eq!(r.usage.tool_calls, 0);
    let steps = trajectory(&out, "hello", "gpt");
    let detail = steps
        .iter()
        .find_map(|s| match &s.kind {
            StepKind::LimitReached { detail, .. } => Some(detail.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        detail,
        "150 output tokens used of 100 allowed for the trial"
    );
}

#[test]
fn a_cost_budget_ends_the_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let server = FakeServer::start(
        Wire::Anthropic,
        Some(SECRET),
        vec![
            anthropic::calls(
                None,
                &[("toolu_1", "files_list", json!({}))],
                tokens(1000, 0, 10),
            ),
            anthropic::calls(
                None,
                &[("toolu_2", "files_list", json!({}))],
                tokens(1000, 0, 10),
            ),
        ],
    );
    // $0.003 + $0.00015 per call; the budget of $0.005 is passed by the second call.
    let agents = write_agents_file(
        tmp.path(),
        &anthropic_agents(
            &server.base_url(),
            "[agents.claude.limits]\nmax_cost_usd = 0.005\n",
        ),
    );
    let out = tmp.path().join("run");
    run(&task, &["claude"], &catalog(&agents), &out);

    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.received().len(), 2);
    let r = result(&out, "hello", "claude");
    assert_eq!(r.status, TrialStatus::Failed);
    assert_eq!(r.usage.limits_hit, ["1:max_cost_usd"]);
    assert!((r.usage.cost_usd.unwrap() - 0.0063).abs() < 1e-12);
    assert_eq!(r.usage.tool_calls, 1);
    let steps = trajectory(&out, "hello", "claude");
    assert_eq!(limits(&steps), [(1, "max_cost_usd".to_string())]);
}

#[test]
fn a_model_slower_than_the_turns_wall_time_ends_the_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 1);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![Reply::slow(
            Duration::from_millis(1500),
            openai::calls(
                &[("call_w", "files_write", write_hello())],
                tokens(500, 0, 20),
            ),
        )],
    );
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    let outcome = run(&task, &["gpt"], &catalog(&agents), &out);

    assert_eq!((outcome.failed, outcome.errored), (1, 0));
    assert_eq!(server.received().len(), 1);
    let steps = trajectory(&out, "hello", "gpt");
    assert_eq!(limits(&steps), [(1, "wall_seconds".to_string())]);
    let calls = model_calls(&steps);
    assert_eq!(
        calls[0].error.as_deref(),
        Some("the turn's wall time ran out before the model answered")
    );
    assert!(calls[0].retries.is_empty());
}

#[test]
fn an_oversized_tool_output_is_cut_for_the_model_but_kept_whole_in_the_trajectory() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let mut script = vec![openai::calls(
        &[("call_r", "files_read", json!({"path": "big.txt"}))],
        tokens(500, 0, 20),
    )];
    script.extend(hello_script_openai());
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), script);
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);

    let received = server.received();
    let answer = received[1].body["messages"][3]["content"].as_str().unwrap();
    assert!(answer.len() <= 32 * 1024 + 200, "{}", answer.len());
    assert!(
        answer.contains("[output truncated: it was 110"),
        "{}",
        &answer[answer.len() - 200..]
    );
    let steps = trajectory(&out, "hello", "gpt");
    let (_, _, outcome) = steps.iter().find_map(Step::as_tool_call).unwrap();
    let bureau_core::tool::ToolOutcome::Ok { value, .. } = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(value["text"].as_str().unwrap().len(), 110_000);
    assert_eq!(result(&out, "hello", "gpt").status, TrialStatus::Passed);
}

#[test]
fn the_tasks_step_limit_ends_a_turn_of_endless_tool_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 2, 600);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![openai::calls(
            &[
                ("c1", "files_list", json!({})),
                ("c2", "files_list", json!({})),
                ("c3", "files_list", json!({})),
            ],
            tokens(500, 0, 20),
        )],
    );
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&agents), &out);

    assert_eq!(server.received().len(), 1);
    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Failed);
    assert_eq!(r.usage.tool_calls, 2);
    assert_eq!(r.usage.limits_hit, ["1:max_steps"]);
}

/// `bureau_run::run` with an agents file (what `bureau run --agents-file --agent a --agent b`
/// does): two agents compared in one run, each against its own server. No key is needed for
/// a base URL of one's own.
#[test]
fn an_agents_file_compares_agents_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let gpt = FakeServer::start(Wire::OpenAi, None, hello_script_openai());
    let claude = FakeServer::start(
        Wire::Anthropic,
        None,
        vec![
            anthropic::calls(
                None,
                &[("toolu_w", "files_write", write_hello())],
                tokens(400, 0, 20),
            ),
            anthropic::text("Wrote it.", tokens(500, 0, 5)),
        ],
    );
    let agents = write_agents_file(
        tmp.path(),
        &format!(
            "[agents.local-gpt]\nkind = \"llm\"\nmodel = \"openai:qwen2.5:7b\"\nbase_url = \"{}\"\n\n\
             [agents.local-claude]\nkind = \"llm\"\nmodel = \"anthropic:claude-x\"\nbase_url = \"{}\"\n",
            gpt.base_url(),
            claude.base_url()
        ),
    );
    let out = tmp.path().join("run");
    let mut config = bureau_run::RunConfig::new(
        vec![task.display().to_string()],
        vec!["local-gpt".into(), "local-claude".into()],
        out.clone(),
    );
    config.quiet = true;
    config.agents_file = Some(agents);
    let outcome = bureau_run::run(&config).unwrap();

    assert_eq!(outcome.passed, 2);
    assert_eq!(gpt.received()[0].body["model"], "qwen2.5:7b");
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    for name in ["local-gpt", "local-claude"] {
        assert_eq!(summary["agents"][name]["model_calls_mean"], 2.0, "{name}");
        assert_eq!(
            summary["agents"][name]["cost_usd_mean"],
            Value::Null,
            "{name}: no price"
        );
    }
    let run_json: Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(
        run_json["agents"][1]["definition"]["model"],
        "anthropic:claude-x"
    );
    assert_eq!(
        run_json["agents"][1]["definition"]["endpoint"],
        format!("{}/v1/messages", claude.base_url())
    );

    // Resuming with a changed definition is another run, refused.
    std::fs::write(
        config.agents_file.as_ref().unwrap(),
        read(config.agents_file.as_ref().unwrap()).replace("qwen2.5:7b", "qwen3:8b"),
    )
    .unwrap();
    let err = bureau_run::run(&config).unwrap_err().to_string();
    assert!(
        err.contains("holds a different run (agent `local-gpt` defined as"),
        "{err}"
    );
}

#[test]
fn an_rpm_budget_spaces_the_model_calls_of_concurrent_trials_and_records_the_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    // Three trials at once, one model call each (the model answers with text at once).
    let script = (0..3)
        .map(|_| openai::text("Nothing to do.", tokens(100, 0, 5)))
        .collect();
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), script);
    let agents = write_agents_file(tmp.path(), &openai_agents(&server.base_url(), ""));
    let catalog = catalog(&agents);
    let out = tmp.path().join("run");
    let mut config = bureau_run::RunConfig::new(
        vec![task.display().to_string()],
        vec!["gpt".into()],
        out.clone(),
    );
    config.quiet = true;
    config.retries = 0;
    config.epochs = 3;
    config.concurrency = 3;
    // 60 requests a minute: one a second.
    config.budget.rpm = Some(60);

    let started = std::time::Instant::now();
    bureau_run::run_with(&config, &|spec| catalog.make(spec)).unwrap();
    // Three request starts at least 1 s apart: the last at least 2 s after the first.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.received().len(), 3);
    let waits: Vec<Option<u64>> = (1..=3)
        .flat_map(|epoch| {
            let path =
                bureau_run::rundir::trial_dir(&out, "hello", "gpt", epoch).join("trajectory.jsonl");
            read(&path)
                .lines()
                .map(|l| serde_json::from_str::<Step>(l).unwrap())
                .filter_map(|s| match s.kind {
                    StepKind::ModelCall(c) => Some(c.budget_wait_ms),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(waits.len(), 3);
    // Each trial records its own wait; the trials started together, so some waited.
    assert!(
        waits.iter().any(|w| w.is_some_and(|w| w >= 500)),
        "{waits:?}"
    );
    // The budget is recorded in run.json, for every shard to take its part of.
    let manifest = read(&out.join("run.json"));
    assert!(manifest.contains("\"rpm\": 60"), "{manifest}");
}
