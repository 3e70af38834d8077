//! The real Codex CLI through Bureau's run loop, against a scripted model server
//! (`support/models/responses.py`) and the trial's real MCP endpoint: `.ci/harnesses/codex.sh`
//! installs the pinned version and prints the `PATH` to use.
//!
//! ```sh
//! PATH="$(.ci/harnesses/codex.sh | sed -n 's/^PATH=//p'):$PATH" \
//!     cargo test -p bureau-harness --test real_codex -- --ignored
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

/// The agents file: the scripted server as Codex's model provider, a private `CODEX_HOME`, and
/// `model` if given — else the model is only in that `CODEX_HOME`'s `config.toml`, as a user's
/// own default would be, and Bureau is not told it.
fn agents_file(dir: &Path, server: &ModelServer, model: Option<&str>) -> std::path::PathBuf {
    agents_file_with(dir, server, model, &[])
}

/// [`agents_file`] with `extra` arguments after the provider's.
fn agents_file_with(
    dir: &Path,
    server: &ModelServer,
    model: Option<&str>,
    extra: &[&str],
) -> std::path::PathBuf {
    let home = dir.join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    if model.is_none() {
        std::fs::write(home.join("config.toml"), "model = \"gpt-5-codex\"\n").unwrap();
    }
    let provider = format!(
        "model_providers.scripted={{name=\"scripted\", base_url=\"{}\", wire_api=\"responses\", env_key=\"OPENAI_API_KEY\"}}",
        base_url(server)
    );
    let path = dir.join("agents.toml");
    std::fs::write(
        &path,
        format!(
            "[agents.cx]\nharness = \"codex\"\n{}\
             env = {{ CODEX_HOME = {}, OPENAI_API_KEY = \"sk-scripted\" }}\n\
             args = [\"-c\", \"model_provider=\\\"scripted\\\"\", \"-c\", {}{}]\n",
            model.map_or(String::new(), |m| format!("model = {}\n", toml_str(m))),
            toml_str(&home.to_string_lossy()),
            toml_str(&provider),
            extra
                .iter()
                .map(|a| format!(", {}", toml_str(a)))
                .collect::<String>(),
        ),
    )
    .unwrap();
    path
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn codex_works_the_office_over_mcp_in_one_turn() {
    if harness("codex", "codex").is_none() {
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
            // Codex's own shell: a harness tool call, not Bureau's.
            call("exec_command", json!({"cmd": "ls"}), 550, 350, 15),
            text("Memo written and Bob told.", 600, 400, 20),
        ]),
    );
    let agents = agents_file(dir.path(), &server, None);
    let out = dir.path().join("run");
    let outcome = run(&task, "cx", &out, &agents);
    let trial = out.join("trials/memo1/cx/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));

    // Bureau's tools ran unattended (no approval refusal) and Bureau recorded them itself.
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
    // Codex's own shell is a harness tool call, with its output.
    let native = notes(&steps, "harness_tool_call");
    assert_eq!(native.len(), 1, "{steps:#?}");
    assert_eq!(native[0]["tool"], "command_execution");
    assert!(
        native[0]["output"]["output"]
            .as_str()
            .unwrap()
            .contains("readme.txt"),
        "{native:#?}"
    );
    // The world: memo.md written, Bob mailed.
    assert_eq!(
        trial_text(&trial, "world/workspace/memo.md"),
        "The meeting moved to Friday.\n"
    );
    // The final message, once.
    let messages: Vec<&str> = of(&steps, "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Memo written and Bob told."]);
    // Usage: this turn's four model calls; the thread id; the model Codex sent the server
    // (Bureau was not told it: read from Codex's session rollout).
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 1);
    let sent = model_requests(&server)[0]["model"].clone();
    assert_eq!(sent, "gpt-5-codex");
    assert_eq!(calls[0]["model"], sent);
    assert_eq!(calls[0]["usage"]["input_tokens"], 400 + 500 + 550 + 600);
    assert_eq!(
        calls[0]["usage"]["cached_input_tokens"],
        100 + 300 + 350 + 400
    );
    assert_eq!(calls[0]["usage"]["output_tokens"], 30 + 40 + 15 + 20);
    assert!(
        calls[0]["response"]["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    assert_eq!(calls[0]["response"]["bureau_tool_calls"], 2);
    assert_eq!(model_requests(&server).len(), 4);
    // Nothing in the workspace the agent did not write.
    assert_eq!(workspace(&trial), ["memo.md", "readme.txt"]);
    assert_eq!(deliverables(&trial), ["memo.md"]);
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn codex_resumes_its_thread_on_turn_two_and_usage_is_per_turn() {
    if harness("codex", "codex").is_none() {
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
    let agents = agents_file(dir.path(), &server, Some("gpt-5-codex"));
    let out = dir.path().join("run");
    let outcome = run(&task, "cx", &out, &agents);
    let trial = out.join("trials/memo/cx/1");
    let result = common::json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_two_turn_memo_calls(&steps);
    assert_two_turn_memo_end(&trial, &steps);

    // Turn 2 resumed turn 1's thread: the same session, and the model saw turn 1.
    let calls: Vec<&Value> = of(&steps, "model_call").collect();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c["model"] == "gpt-5-codex"));
    let session = calls[0]["response"]["session_id"].as_str().unwrap();
    assert_eq!(calls[1]["response"]["session_id"], session);
    let argv = argv(calls[1]);
    assert!(
        argv.windows(2).any(|w| w == ["resume", session]),
        "{argv:?}"
    );
    let requests = model_requests(&server);
    assert_eq!(requests.len(), 6);
    let turn2 = requests[3]["input"].to_string();
    assert!(
        turn2.contains("Write memo.md saying the meeting moved to Friday"),
        "{turn2}"
    );
    assert!(turn2.contains("Memo written and Bob told."), "{turn2}");
    assert!(turn2.contains("Budget notes arrived"), "{turn2}");

    // Usage per turn, not the thread's running total Codex reports.
    assert_eq!(tokens(calls[0]), (1500, 800, 90));
    assert_eq!(tokens(calls[1]), (2400, 1800, 75));
    assert_eq!(result["usage"]["input_tokens"], 1500 + 2400);
    assert_eq!(result["usage"]["output_tokens"], 90 + 75);

    // Nothing in the workspace the agent did not write (notes/ came with turn 2's event).
    assert_eq!(
        workspace(&trial),
        ["memo.md", "notes/", "notes/budget.txt", "readme.txt"]
    );
}

/// The user's report: with Codex's approval policy left as it is, Codex refuses Bureau's
/// writing tools and the trial used to end as an ordinary failure with no trace. The refusal
/// is now in the trajectory, with Codex's message.
#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn a_bureau_call_codex_refuses_is_noted_with_codexs_message() {
    if harness("codex", "codex").is_none() {
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
            text("Done.", 600, 400, 20),
        ]),
    );
    // A later `-c` wins: Bureau's tools back under Codex's approval prompt, which `exec` cannot ask.
    let agents = agents_file_with(
        dir.path(),
        &server,
        Some("gpt-5-codex"),
        &[
            "-c",
            "mcp_servers.bureau.default_tools_approval_mode=\"prompt\"",
        ],
    );
    let out = dir.path().join("run");
    let outcome = run(&task, "cx", &out, &agents);
    assert_eq!((outcome.passed, outcome.errored), (0, 0));
    let trial = out.join("trials/memo1/cx/1");
    let steps = lines(&trial.join("trajectory.jsonl"));
    assert_eq!(
        of(&steps, "tool_call").count(),
        0,
        "Bureau never got the call"
    );
    let unreached = notes(&steps, "harness_call_not_received");
    assert_eq!(unreached.len(), 1, "{steps:#?}");
    assert_eq!(unreached[0]["tool"], "mcp:bureau:files_write");
    assert_eq!(unreached[0]["input"]["path"], "memo.md");
    assert!(
        unreached[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("requires approval")),
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
    assert_eq!(workspace(&trial), ["readme.txt"]);
}

#[test]
#[ignore = "runs the real harness: .ci/run's harness step installs it"]
fn codex_sees_a_photo_it_reads_over_mcp() {
    if harness("codex", "codex").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo1");
    write_one_turn_memo_task(&task);
    let png = receipt_png();
    std::fs::write(task.join("world/files/receipt.png"), &png).unwrap();
    let server = ModelServer::start(
        "responses",
        &json!([
            call("files_read", json!({"path": "receipt.png"}), 400, 100, 30),
            text("I see the receipt.", 600, 400, 20),
        ]),
    );
    let agents = agents_file(dir.path(), &server, None);
    let out = dir.path().join("run");
    run(&task, "cx", &out, &agents);
    let trial = out.join("trials/memo1/cx/1");
    let steps = lines(&trial.join("trajectory.jsonl"));
    let tools: Vec<(&str, &str)> = of(&steps, "tool_call")
        .map(|s| (s["tool"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(tools, [("files_read", "ok")], "{steps:#?}");
    let requests = model_requests(&server);
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert!(!carries_bytes(&requests[0], &png));
    assert!(
        carries_bytes(&requests[1], &png),
        "Codex did not send the picture it got over MCP to its model: {}",
        serde_json::to_string(&requests[1]["input"])
            .unwrap()
            .chars()
            .rev()
            .take(3000)
            .collect::<String>()
            .chars()
            .rev()
            .collect::<String>()
    );
}
