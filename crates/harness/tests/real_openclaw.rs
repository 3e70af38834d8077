//! The real OpenClaw through Bureau's run loop, against a scripted model server
//! (`support/models/responses.py`, OpenClaw's `openai` provider with `OPENAI_BASE_URL`) and
//! the trial's real MCP endpoint. OpenClaw needs Node ≥ 24.16: `.ci/harnesses/openclaw.sh`
//! installs Node 24 and the pinned OpenClaw, and prints the `PATH` to use (`openclaw` and
//! `node` of Node 24).
//!
//! ```sh
//! PATH="$(.ci/harnesses/openclaw.sh | sed -n 's/^PATH=//p'):$PATH" \
//!     cargo test -p bureau-harness --test real_openclaw -- --ignored
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

/// The model, as OpenClaw's catalog names it.
const MODEL: &str = "openai/gpt-5.4";

fn agents_file(dir: &Path, server: &ModelServer) -> std::path::PathBuf {
    let path = dir.join("agents.toml");
    std::fs::write(
        &path,
        format!(
            "[agents.oc]\nharness = \"openclaw\"\nmodel = \"{MODEL}\"\n\
             env = {{ OPENAI_API_KEY = \"sk-scripted\", OPENAI_BASE_URL = {} }}\n",
            toml_str(&base_url(server)),
        ),
    )
    .unwrap();
    path
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn openclaw_works_the_office_over_mcp_in_one_turn() {
    if harness("openclaw", "openclaw").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let server = ModelServer::start(
        "responses",
        &json!([
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
            // OpenClaw's own `ls`: a harness tool call, read from its transcript.
            call("ls", json!({"path": "."}), 550, 350, 15),
            text("Memo written and Bob told.", 600, 400, 20),
        ]),
    );
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "oc", &out, &agents);
    let trial = out.join("trials/memo1/oc/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));

    // Bureau's tools (offered to the model as `bureau__*`), recorded by Bureau itself.
    let offered = model_requests(&server)[0]["tools"].to_string();
    assert!(offered.contains("\"bureau__files_write\""), "{offered}");
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
    // OpenClaw's own tool, from the transcript in its SQLite store.
    let native = notes(&steps, "harness_tool_call");
    assert_eq!(native.len(), 1, "{steps:#?}");
    assert_eq!(native[0]["tool"], "ls");
    assert!(
        native[0]["output"].as_str().unwrap().contains("readme.txt"),
        "{native:#?}"
    );
    assert_eq!(
        trial_text(&trial, "world/workspace/memo.md"),
        "The meeting moved to Friday.\n"
    );
    let messages: Vec<&str> = of(&steps, "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Memo written and Bob told."]);
    // Usage and cost as OpenClaw reports them for the turn; the model it names.
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
            .is_some_and(|c| c > 0.0)
    );
    assert_eq!(calls[0]["response"]["cost_from"], "harness");
    assert_eq!(calls[0]["response"]["model_calls"], 4);
    assert_eq!(model_requests(&server).len(), 4);
    // Nothing in the workspace the agent did not write: no AGENTS.md, SOUL.md, .git, ...
    assert_eq!(workspace(&trial), ["memo.md", "readme.txt"]);
    assert_eq!(deliverables(&trial), ["memo.md"]);
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn openclaw_resumes_its_session_on_turn_two_and_usage_is_per_turn() {
    if harness("openclaw", "openclaw").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    common::write_memo_task(&task, "memo");
    let server = ModelServer::start(
        "responses",
        &json!([
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
        ]),
    );
    let agents = agents_file(dir.path(), &server);
    let out = dir.path().join("run");
    let outcome = run(&task, "oc", &out, &agents);
    let trial = out.join("trials/memo/oc/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_two_turn_memo_calls(&steps);
    // Bureau's calls are not recorded a second time from the transcript.
    assert!(notes(&steps, "harness_tool_call").is_empty(), "{steps:#?}");
    assert!(notes(&steps, "harness_warning").is_empty(), "{steps:#?}");
    assert_two_turn_memo_end(&trial, &steps);

    // The same session both turns, and turn 2's model request carries turn 1's conversation.
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 2);
    let session = calls[0]["response"]["session_id"].as_str().unwrap();
    assert!(!session.is_empty());
    assert_eq!(calls[1]["response"]["session_id"], session);
    let requests = model_requests(&server);
    assert_eq!(requests.len(), 6);
    let turn2 = requests[3]["input"].to_string();
    assert!(
        turn2.contains("Write memo.md saying the meeting moved to Friday"),
        "{turn2}"
    );
    assert!(turn2.contains("Memo written and Bob told."), "{turn2}");
    assert!(turn2.contains("Budget notes arrived"), "{turn2}");

    // Usage per turn.
    assert_eq!(tokens(calls[0]), (1500, 800, 90));
    assert_eq!(tokens(calls[1]), (2400, 1800, 75));
    assert_eq!(result["usage"]["input_tokens"], 1500 + 2400);

    assert_eq!(
        workspace(&trial),
        ["memo.md", "notes/", "notes/budget.txt", "readme.txt"]
    );
}
