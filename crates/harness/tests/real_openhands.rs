//! The real OpenHands CLI through Bureau's run loop, against a scripted model server
//! (`support/models/chat.py`, Chat Completions, OpenHands's LiteLLM `openai/` provider with
//! `LLM_BASE_URL`) and the trial's real MCP endpoint. OpenHands 1.16 needs CPython 3.12:
//! `.ci/harnesses/openhands.sh` installs the pinned version into a virtual environment and
//! prints the `PATH` to use.
//!
//! ```sh
//! PATH="$(.ci/harnesses/openhands.sh | sed -n 's/^PATH=//p'):$PATH" \
//!     cargo test -p bureau-harness --test real_openhands -- --ignored --test-threads 1
//! ```

#[path = "../../run/tests/common/mod.rs"]
mod common;
#[path = "support/real.rs"]
mod real;
mod support;

use std::path::Path;

use serde_json::{Value, json};

use real::*;
use support::ModelServer;

/// The model, as LiteLLM names it (it has gpt-4o's prices, so OpenHands reports a cost).
const MODEL: &str = "openai/gpt-4o";

fn chat_server(script: &Value) -> ModelServer {
    ModelServer::start("chat", script)
}

fn agents_file(dir: &Path, server: &ModelServer) -> std::path::PathBuf {
    let path = dir.join("agents.toml");
    std::fs::write(
        &path,
        format!(
            "[agents.oh]\nharness = \"openhands\"\nmodel = \"{MODEL}\"\n\
             env = {{ LLM_API_KEY = \"sk-scripted\", LLM_BASE_URL = {} }}\n",
            toml_str(&base_url(server)),
        ),
    )
    .unwrap();
    path
}

/// OpenHands adds `security_risk` (required) and `summary` to every tool's parameters and
/// strips them before the call: a model sends them.
fn risk(mut args: Value, level: &str) -> Value {
    args["security_risk"] = json!(level);
    args["summary"] = json!("scripted step");
    args
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn openhands_works_the_office_over_mcp_in_one_turn() {
    if harness("openhands", "openhands").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let server = ModelServer::start(
        "chat",
        &json!([
            call(
                "files_write",
                risk(
                    json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
                    "MEDIUM"
                ),
                400,
                100,
                30
            ),
            call(
                "mail_send",
                risk(
                    json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
                    "MEDIUM"
                ),
                500,
                300,
                40
            ),
            // OpenHands's own terminal: a harness tool call, not Bureau's.
            call(
                "terminal",
                risk(json!({"command": "ls"}), "LOW"),
                550,
                350,
                15
            ),
            call(
                "finish",
                json!({"message": "Memo written and Bob told."}),
                600,
                400,
                20
            ),
        ]),
    );
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "oh", &out, &agents);
    let trial = out.join("trials/memo1/oh/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));

    // The prompt reached OpenHands (with the office's time), and Bureau's tools were offered.
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 4, "{requests:#?}");
    assert_eq!(requests[0]["model"], "gpt-4o");
    let first = requests[0]["messages"].to_string();
    assert!(
        first.contains("Write memo.md saying the meeting moved to Friday"),
        "{first}"
    );
    let offered = requests[0]["tools"].to_string();
    assert!(offered.contains("\"files_write\""), "{offered}");
    // Bureau's tools, called over MCP with the token, recorded by Bureau itself.
    let tools: Vec<(&str, &str)> = of(&steps, "tool_call")
        .map(|s| (s["tool"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tools,
        [("files_write", "ok"), ("mail_send", "ok")],
        "{steps:#?}"
    );
    assert!(notes(&steps, "harness_error").is_empty(), "{steps:#?}");
    assert!(
        notes(&steps, "harness_calls_not_received").is_empty(),
        "{steps:#?}"
    );
    assert!(notes(&steps, "harness_warning").is_empty(), "{steps:#?}");
    // OpenHands's own terminal is a harness tool call, with its output.
    let native = notes(&steps, "harness_tool_call");
    assert_eq!(native.len(), 1, "{steps:#?}");
    assert_eq!(native[0]["tool"], "terminal");
    assert_eq!(native[0]["input"]["command"], "ls");
    assert!(
        native[0]["output"].as_str().unwrap().contains("readme.txt"),
        "{native:#?}"
    );
    assert_eq!(native[0]["is_error"], false);
    assert_eq!(
        trial_text(&trial, "world/workspace/memo.md"),
        "The meeting moved to Friday.\n"
    );
    // The final message (OpenHands's `finish`), once.
    let messages: Vec<&str> = of(&steps, "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Memo written and Bob told."]);
    // Usage and cost as OpenHands keeps them; the conversation id; the model.
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["model"], MODEL);
    assert_eq!(calls[0]["usage"]["input_tokens"], 400 + 500 + 550 + 600);
    assert_eq!(
        calls[0]["usage"]["cached_input_tokens"],
        100 + 300 + 350 + 400
    );
    assert_eq!(calls[0]["usage"]["output_tokens"], 30 + 40 + 15 + 20);
    assert!(
        calls[0]["usage"]["cost_usd"]
            .as_f64()
            .is_some_and(|c| c > 0.0),
        "{:#}",
        calls[0]
    );
    assert_eq!(calls[0]["response"]["cost_from"], "harness");
    assert_eq!(calls[0]["response"]["model_calls"], 4);
    assert_eq!(calls[0]["response"]["bureau_tool_calls"], 2);
    let session = calls[0]["response"]["session_id"].as_str().unwrap();
    assert!(
        session.len() == 32 && session.chars().all(|c| c.is_ascii_hexdigit()),
        "{session}"
    );
    // Nothing in the workspace the agent did not write (OpenHands's state is in the private
    // home, removed with the trial).
    assert_eq!(workspace(&trial), ["memo.md", "readme.txt"]);
    assert_eq!(deliverables(&trial), ["memo.md"]);
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn openhands_resumes_its_conversation_on_turn_two_and_usage_is_per_turn() {
    if harness("openhands", "openhands").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    common::write_memo_task(&task, "memo");
    let server = ModelServer::start(
        "chat",
        &json!([
            call(
                "files_write",
                risk(
                    json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
                    "MEDIUM"
                ),
                400,
                100,
                30
            ),
            call(
                "mail_send",
                risk(
                    json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
                    "MEDIUM"
                ),
                500,
                300,
                40
            ),
            text("Memo written and Bob told.", 600, 400, 20),
            call(
                "files_read",
                risk(json!({"path": "notes/budget.txt"}), "LOW"),
                700,
                500,
                25
            ),
            call(
                "files_edit",
                risk(
                    json!({"path": "memo.md", "old": "Friday.\n", "new": "Friday.\nBudget total: 12,500 EUR.\n"}),
                    "MEDIUM"
                ),
                800,
                600,
                35
            ),
            text("Budget added.", 900, 700, 15),
        ]),
    );
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "oh", &out, &agents);
    let trial = out.join("trials/memo/oh/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_two_turn_memo_calls(&steps);
    assert!(notes(&steps, "harness_tool_call").is_empty(), "{steps:#?}");
    assert!(notes(&steps, "harness_warning").is_empty(), "{steps:#?}");
    assert_two_turn_memo_end(&trial, &steps);

    // The same conversation both turns (`--resume <id>`), and turn 2's model request carries
    // turn 1's conversation.
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 2);
    let session = calls[0]["response"]["session_id"].as_str().unwrap();
    assert!(!session.is_empty());
    assert_eq!(calls[1]["response"]["session_id"], session);
    let argv = argv(calls[1]);
    assert!(
        argv.contains(&format!("--resume={session}").as_str()),
        "{argv:?}"
    );
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 6);
    let turn2 = requests[3]["messages"].to_string();
    assert!(
        turn2.contains("Write memo.md saying the meeting moved to Friday"),
        "{turn2}"
    );
    assert!(turn2.contains("Memo written and Bob told."), "{turn2}");
    assert!(turn2.contains("Budget notes arrived"), "{turn2}");

    // Usage per turn, not the conversation's running total OpenHands keeps.
    assert_eq!(tokens(calls[0]), (1500, 800, 90));
    assert_eq!(tokens(calls[1]), (2400, 1800, 75));
    assert_eq!(calls[0]["response"]["model_calls"], 3);
    assert_eq!(calls[1]["response"]["model_calls"], 3);
    let cost = |i: usize| calls[i]["usage"]["cost_usd"].as_f64().unwrap();
    assert!(cost(0) > 0.0 && cost(1) > 0.0);
    // gpt-4o: $2.50 / M input, $1.25 / M cached input, $10 / M output (LiteLLM's table).
    let expected = |input: f64, cached: f64, output: f64| {
        ((input - cached) * 2.5 + cached * 1.25 + output * 10.0) / 1e6
    };
    assert!(
        (cost(0) - expected(1500.0, 800.0, 90.0)).abs() < 1e-9,
        "{}",
        cost(0)
    );
    assert!(
        (cost(1) - expected(2400.0, 1800.0, 75.0)).abs() < 1e-9,
        "{}",
        cost(1)
    );
    assert_eq!(result["usage"]["input_tokens"], 1500 + 2400);
    assert_eq!(result["usage"]["output_tokens"], 90 + 75);

    assert_eq!(
        workspace(&trial),
        ["memo.md", "notes/", "notes/budget.txt", "readme.txt"]
    );
}

/// OpenHands refuses a call whose arguments miss its required `security_risk` before it runs
/// it: the call never reaches Bureau, and the trajectory says so with OpenHands's error.
#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn a_bureau_call_openhands_refuses_is_noted_with_its_error() {
    if harness("openhands", "openhands").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let server = ModelServer::start(
        "chat",
        &json!([
            call(
                "files_write",
                json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
                400,
                100,
                30
            ),
            text("Done.", 600, 400, 20),
        ]),
    );
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "oh", &out, &agents);
    assert_eq!((outcome.passed, outcome.errored), (0, 0));
    let trial = out.join("trials/memo1/oh/1");
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_eq!(
        of(&steps, "tool_call").count(),
        0,
        "Bureau never got the call"
    );
    let unreached = notes(&steps, "harness_call_not_received");
    assert_eq!(unreached.len(), 1, "{steps:#?}");
    assert_eq!(unreached[0]["tool"], "files_write");
    assert_eq!(unreached[0]["input"]["path"], "memo.md");
    assert!(
        unreached[0]["error"]
            .as_str()
            .is_some_and(|m| m.contains("security_risk")),
        "{unreached:#?}"
    );
    let counts = notes(&steps, "harness_calls_not_received");
    assert_eq!(counts.len(), 1);
    assert_eq!(
        (
            counts[0]["reported"].as_u64(),
            counts[0]["received"].as_u64()
        ),
        (Some(1), Some(0))
    );
    let messages: Vec<&str> = of(&steps, "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Done."]);
    assert_eq!(workspace(&trial), ["readme.txt"]);
}

/// The model server fails the turn: OpenHands prints a `ConversationErrorEvent` and exits 0;
/// the attempt is an error with OpenHands's message, never a scored failure.
#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn a_failed_openhands_conversation_is_a_trial_error() {
    if harness("openhands", "openhands").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let server = ModelServer::start(
        "chat",
        &json!([
            {"http_error": {"status": 400, "message": "scripted failure: bad request"}},
            {"http_error": {"status": 400, "message": "scripted failure: bad request"}},
            {"http_error": {"status": 400, "message": "scripted failure: bad request"}},
        ]),
    );
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "oh", &out, &agents);
    assert_eq!((outcome.passed, outcome.failed, outcome.errored), (0, 0, 1));
    let result = common::json(&out.join("trials/memo1/oh/1/result.json"));
    assert_eq!(result["status"], "error", "{result:#}");
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains("openhands") && error.contains("scripted failure"),
        "{error}"
    );
}

/// A turn stopped at the agent's wall-clock limit while its model call hangs: OpenHands prints its
/// session only at the end, so Bureau takes it from the trial's private store — the turn's
/// usage (as OpenHands kept it) is read and turn 2 resumes the same conversation. The limit is recorded as a limit,
/// and the trial is scored.
#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn an_openhands_turn_stopped_at_the_wall_keeps_its_conversation_and_usage() {
    if harness("openhands", "openhands").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    common::write_memo_task(&task, "memo");
    let server = chat_server(&json!([
        call(
            "files_write",
            risk(json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}), "MEDIUM"),
            400,
            100,
            30
        ),
        {"sleep": 600},
        call(
            "files_read",
            risk(json!({"path": "notes/budget.txt"}), "LOW"),
            700,
            500,
            25
        ),
        text("Budget added.", 900, 700, 15),
    ]));
    let agents = agents_file(dir.path(), &server);
    let mut toml = std::fs::read_to_string(&agents).unwrap();
    toml.push_str("[agents.oh.limits]\nwall_seconds = 60\n");
    std::fs::write(&agents, toml).unwrap();
    let out = dir.path().join("run");
    let outcome = run(&task, "oh", &out, &agents);
    let trial = out.join("trials/memo/oh/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(outcome.errored, 0, "{result:#}");
    assert_eq!(
        result["usage"]["limits_hit"],
        json!(["1:wall_seconds"]),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));
    let tools: Vec<(u64, &str)> = of(&steps, "tool_call")
        .map(|s| (s["turn"].as_u64().unwrap(), s["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(tools, [(1, "files_write"), (2, "files_read")], "{steps:#?}");
    let warnings = notes(&steps, "harness_warning");
    assert_eq!(warnings.len(), 1, "{steps:#?}");
    assert!(
        warnings[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("printed no session id")),
        "{warnings:#?}"
    );
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 2, "{steps:#?}");
    assert_eq!(calls[0]["turn"], 1);
    assert_eq!(calls[0]["response"]["timed_out"], true);
    let session = calls[0]["response"]["session_id"].as_str().unwrap();
    assert_eq!(calls[1]["response"]["session_id"], session);
    // OpenHands 1.16 writes a conversation's usage into base_state.json only when its run
    // ends: a run killed at the limit leaves it at zero, though one model call (400 tokens in)
    // was answered — OpenHands's loss, recorded as it reports it. Turn 2's is its own.
    assert_eq!(tokens(calls[0]), (0, 0, 0));
    assert_eq!(calls[0]["response"]["model_calls"], 0);
    assert_eq!(tokens(calls[1]), (1600, 1200, 40));
    // Turn 2 resumed turn 1's conversation.
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 4, "{requests:#?}");
    let turn2 = requests[2]["messages"].to_string();
    assert!(
        turn2.contains("Write memo.md saying the meeting moved to Friday"),
        "{turn2}"
    );
    assert!(turn2.contains("Budget notes arrived"), "{turn2}");
    let messages: Vec<(u64, &str)> = of(&steps, "message")
        .map(|s| (s["turn"].as_u64().unwrap(), s["text"].as_str().unwrap()))
        .collect();
    assert_eq!(messages, [(2, "Budget added.")]);
}
