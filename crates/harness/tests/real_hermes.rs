//! The real Hermes through Bureau's run loop, against a scripted model server
//! (`support/models/chat.py`, Chat Completions with SSE, Hermes's `custom` provider with
//! `CUSTOM_BASE_URL`) and the trial's real MCP endpoint. `.ci/harnesses/hermes.sh` installs the
//! pinned `hermes-agent` with its `mcp` extra into a virtual environment and prints the `PATH`
//! to use.
//!
//! ```sh
//! PATH="$(.ci/harnesses/hermes.sh | sed -n 's/^PATH=//p'):$PATH" \
//!     cargo test -p bureau-harness --test real_hermes -- --ignored --test-threads 1
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

const MODEL: &str = "gpt-4o";

/// gpt-4o's prices, per token, as the scripted server's `/models` lists them: Hermes prices a
/// custom endpoint's usage from its models listing.
const PRICING: &str =
    r#"{"prompt": "0.0000025", "completion": "0.00001", "cache_read": "0.00000125"}"#;

fn server(script: &Value) -> ModelServer {
    ModelServer::start_with("chat", script, &["--model", MODEL, "--pricing", PRICING])
}

fn agents_file(dir: &Path, server: &ModelServer) -> std::path::PathBuf {
    let path = dir.join("agents.toml");
    std::fs::write(
        &path,
        format!(
            "[agents.hm]\nharness = \"hermes\"\nmodel = \"{MODEL}\"\n\
             env = {{ CUSTOM_BASE_URL = {} }}\n",
            toml_str(&base_url(server)),
        ),
    )
    .unwrap();
    path
}

/// US dollars for `input` tokens (`cached` of them read from the cache) and `output` tokens
/// at [`PRICING`].
fn cost(input: f64, cached: f64, output: f64) -> f64 {
    ((input - cached) * 2.5 + cached * 1.25 + output * 10.0) / 1e6
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn hermes_works_the_office_over_mcp_in_one_turn() {
    if harness("hermes", "hermes").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let server = server(&json!([
        call(
            "files_write",
            json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
            400,
            100,
            30
        ),
        call(
            "mail_send",
            json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
            500,
            300,
            40
        ),
        // Hermes's own terminal: a harness tool call, not Bureau's.
        call("terminal", json!({"command": "ls"}), 550, 350, 15),
        text("Memo written and Bob told.", 600, 400, 20),
    ]));
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "hm", &out, &agents);
    let trial = out.join("trials/memo1/hm/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));

    // The prompt reached Hermes, and Bureau's tools were offered (`mcp__bureau__*`).
    let requests = chat_requests(&server);
    assert_eq!(requests.len(), 4, "{requests:#?}");
    assert_eq!(requests[0]["model"], MODEL);
    assert_eq!(requests[0]["stream"], true);
    let first = requests[0]["messages"].to_string();
    assert!(
        first.contains("Write memo.md saying the meeting moved to Friday"),
        "{first}"
    );
    let offered = requests[0]["tools"].to_string();
    assert!(
        offered.contains("\"mcp__bureau__files_write\""),
        "{offered}"
    );
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
    assert!(notes(&steps, "harness_output").is_empty(), "{steps:#?}");
    // Hermes's own terminal, read from its state store, with its output.
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
    // The final message: Hermes's stdout, alone (no scanner warning before it).
    let messages: Vec<&str> = of(&steps, "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Memo written and Bob told."]);
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["model"], MODEL);
    assert_eq!(calls[0]["usage"]["input_tokens"], 400 + 500 + 550 + 600);
    assert_eq!(
        calls[0]["usage"]["cached_input_tokens"],
        100 + 300 + 350 + 400
    );
    assert_eq!(calls[0]["usage"]["output_tokens"], 30 + 40 + 15 + 20);
    let c = calls[0]["usage"]["cost_usd"].as_f64().unwrap();
    assert!((c - cost(2050.0, 1150.0, 105.0)).abs() < 1e-9, "{c}");
    assert_eq!(calls[0]["response"]["cost_from"], "harness");
    assert_eq!(calls[0]["response"]["model_calls"], 4);
    assert_eq!(calls[0]["response"]["bureau_tool_calls"], 2);
    assert!(
        calls[0]["response"]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    // Nothing in the workspace the agent did not write (Hermes's home is private).
    assert_eq!(workspace(&trial), ["memo.md", "readme.txt"]);
    assert_eq!(deliverables(&trial), ["memo.md"]);
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn hermes_resumes_its_session_on_turn_two_and_usage_is_per_turn() {
    if harness("hermes", "hermes").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    common::write_memo_task(&task, "memo");
    let server = server(&json!([
        call(
            "files_write",
            json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
            400,
            100,
            30
        ),
        call(
            "mail_send",
            json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
            500,
            300,
            40
        ),
        text("Memo written and Bob told.", 600, 400, 20),
        call(
            "files_read",
            json!({"path": "notes/budget.txt"}),
            700,
            500,
            25
        ),
        call(
            "files_edit",
            json!({"path": "memo.md", "old": "Friday.\n", "new": "Friday.\nBudget total: 12,500 EUR.\n"}),
            800,
            600,
            35
        ),
        text("Budget added.", 900, 700, 15),
    ]));
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "hm", &out, &agents);
    let trial = out.join("trials/memo/hm/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_two_turn_memo_calls(&steps);
    // Bureau's calls are not recorded a second time from Hermes's store.
    assert!(notes(&steps, "harness_tool_call").is_empty(), "{steps:#?}");
    assert!(notes(&steps, "harness_warning").is_empty(), "{steps:#?}");
    assert_two_turn_memo_end(&trial, &steps);

    // The same session both turns (`--resume <id>`), and turn 2's model request carries turn
    // 1's conversation.
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

    // Usage and cost per turn, not the session's running total Hermes keeps.
    assert_eq!(tokens(calls[0]), (1500, 800, 90));
    assert_eq!(tokens(calls[1]), (2400, 1800, 75));
    assert_eq!(calls[0]["response"]["model_calls"], 3);
    assert_eq!(calls[1]["response"]["model_calls"], 3);
    let c = |i: usize| calls[i]["usage"]["cost_usd"].as_f64().unwrap();
    assert!((c(0) - cost(1500.0, 800.0, 90.0)).abs() < 1e-9, "{}", c(0));
    assert!((c(1) - cost(2400.0, 1800.0, 75.0)).abs() < 1e-9, "{}", c(1));
    assert_eq!(result["usage"]["input_tokens"], 1500 + 2400);
    assert_eq!(result["usage"]["output_tokens"], 90 + 75);

    assert_eq!(
        workspace(&trial),
        ["memo.md", "notes/", "notes/budget.txt", "readme.txt"]
    );
}

/// The model calls a Bureau tool that does not exist: Hermes answers it itself ("Tool '...'
/// does not exist") and it never reaches Bureau; the trajectory says so with Hermes's error.
/// (A name close to a real one — `files_shred` — Hermes "repairs" to the closest tool and
/// runs that.)
#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn a_bureau_call_hermes_never_sends_is_noted_with_its_error() {
    if harness("hermes", "hermes").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let server = server(&json!([
        call(
            "mcp__bureau__zzz_quantum_teleport",
            json!({"path": "readme.txt"}),
            400,
            100,
            30
        ),
        text("Done.", 600, 400, 20),
    ]));
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "hm", &out, &agents);
    assert_eq!((outcome.passed, outcome.errored), (0, 0));
    let trial = out.join("trials/memo1/hm/1");
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_eq!(
        of(&steps, "tool_call").count(),
        0,
        "Bureau never got the call"
    );
    let unreached = notes(&steps, "harness_call_not_received");
    assert_eq!(unreached.len(), 1, "{steps:#?}");
    assert_eq!(unreached[0]["tool"], "mcp__bureau__zzz_quantum_teleport");
    assert_eq!(unreached[0]["input"]["path"], "readme.txt");
    assert!(
        unreached[0]["error"]
            .as_str()
            .is_some_and(|m| m.contains("does not exist")),
        "{unreached:#?}"
    );
    let messages: Vec<&str> = of(&steps, "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Done."]);
    assert_eq!(workspace(&trial), ["readme.txt"]);
}

/// A turn stopped at the agent's wall-clock limit while its model call hangs: Hermes prints its
/// session only at the end, so Bureau takes it from the trial's private store — the turn's
/// usage is read and turn 2 resumes the same conversation. The limit is recorded as a limit,
/// and the trial is scored.
#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn a_hermes_turn_stopped_at_the_wall_keeps_its_session_and_usage() {
    if harness("hermes", "hermes").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    common::write_memo_task(&task, "memo");
    let server = server(&json!([
        call(
            "files_write",
            json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
            400,
            100,
            30
        ),
        {"sleep": 600},
        call(
            "files_read",
            json!({"path": "notes/budget.txt"}),
            700,
            500,
            25
        ),
        text("Budget added.", 900, 700, 15),
    ]));
    let agents = agents_file(dir.path(), &server);
    let mut toml = std::fs::read_to_string(&agents).unwrap();
    toml.push_str("[agents.hm.limits]\nwall_seconds = 30\n");
    std::fs::write(&agents, toml).unwrap();
    let out = dir.path().join("run");
    let outcome = run(&task, "hm", &out, &agents);
    let trial = out.join("trials/memo/hm/1");
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
    // Turn 1's usage is its one answered model call; turn 2's its own.
    assert_eq!(tokens(calls[0]), (400, 100, 30));
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
