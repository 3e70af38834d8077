//! Claude Code itself (npm `@anthropic-ai/claude-code`, the version `.ci/harnesses/
//! claude-code.sh` pins) works the office through Bureau's run loop, against a scripted
//! Anthropic Messages server (`support/models/anthropic.py`, SSE as Claude Code asks).
//!
//! Ignored by default (it needs the real program): `.ci/run`'s harness step installs it and
//! runs `cargo test -p bureau-harness --test real_claude_code -- --ignored`.

#[path = "../../run/tests/common/mod.rs"]
mod common;
#[path = "support/real.rs"]
mod real;
mod support;

use std::path::{Path, PathBuf};

use bureau_run::{RunConfig, run_with_catalog};
use serde_json::{Value, json};

use common::*;
use support::ModelServer;

const KEY: &str = "sk-ant-bureau-test-key-0123456789";

fn call(name: &str, args: Value, input: u64, output: u64) -> Value {
    json!({"call": {"name": name, "arguments": args}, "usage": {"input_tokens": input, "output_tokens": output}})
}

fn text(t: &str, input: u64, output: u64) -> Value {
    json!({"text": t, "usage": {"input_tokens": input, "output_tokens": output}})
}

/// Run `task` with Claude Code against `server`; returns the trial directory.
fn run_claude(task: &Path, server: &ModelServer, tmp: &Path) -> PathBuf {
    let trial = run_claude_with(task, server, tmp, KEY, "");
    let result = json(&trial.join("result.json"));
    assert_ne!(result["status"], "error", "{result:#}");
    trial
}

/// The same with the API key and extra agent keys (`args = [...]`) given.
fn run_claude_with(
    task: &Path,
    server: &ModelServer,
    tmp: &Path,
    key: &str,
    more: &str,
) -> PathBuf {
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let agents = tmp.join("agents.toml");
    std::fs::write(
        &agents,
        format!(
            "[agents.cc]\nharness = \"claude-code\"\nmodel = \"claude-scripted\"\n{more}\n\
             env = {{ ANTHROPIC_BASE_URL = \"{}\", ANTHROPIC_API_KEY = \"{key}\", HOME = {}, \
             CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = \"1\", DISABLE_AUTOUPDATER = \"1\", CLAUDE_CODE_MAX_RETRIES = \"1\" }}\n",
            server.url(),
            serde_json::to_string(&home.to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let out = tmp.join("run");
    let mut c = RunConfig::new(
        vec![task.to_string_lossy().into_owned()],
        vec!["cc".into()],
        out.clone(),
    );
    c.quiet = true;
    c.retries = 0;
    c.agents_file = Some(agents);
    run_with_catalog(&c, bureau_harness::catalog()).unwrap();
    let id = bureau_core::Task::load(task).unwrap().id;
    bureau_run::trial_dir(&out, &id, "cc", 1)
}

fn trajectory(trial: &Path) -> Vec<Value> {
    read(&trial.join("trajectory.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The trial's final workspace (packed in its trial.zip): every file and every directory
/// holding one, relative, sorted.
fn workspace_of(trial: &Path) -> Vec<String> {
    let listed = bureau_world::trial_files::TrialFiles::open(trial)
        .unwrap()
        .list("world/workspace")
        .unwrap();
    let mut out = std::collections::BTreeSet::new();
    for k in listed.into_keys() {
        let rel = k.trim_start_matches("world/workspace/").to_string();
        let mut at = 0;
        while let Some(i) = rel[at..].find('/') {
            out.insert(rel[..at + i].to_string());
            at += i + 1;
        }
        out.insert(rel);
    }
    out.into_iter().collect()
}

/// The model calls of the agent's conversation (those offering Bureau's tools).
fn conversation(server: &ModelServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| !r["step"].is_null())
        .collect()
}

#[test]
#[ignore = "runs the real Claude Code: .ci/run's harness step installs it"]
fn claude_code_does_a_two_turn_task_and_resumes_its_conversation() {
    let Some(_claude) = support::real_harness("claude", "claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let script = json!([
        call(
            "files_write",
            json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
            100,
            10
        ),
        call(
            "mail_send",
            json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "It is on Friday now."}),
            120,
            12
        ),
        text("Memo written and Bob told.", 140, 7),
        call("files_read", json!({"path": "notes/budget.txt"}), 200, 9),
        call(
            "files_edit",
            json!({"path": "memo.md", "old": "Friday.\n", "new": "Friday.\nBudget total: 12,500 EUR.\n"}),
            220,
            11
        ),
        text("Budget added.", 240, 5),
    ]);
    let server = ModelServer::start("anthropic", &script);
    let trial = run_claude(&task, &server, tmp.path());

    let result = json(&trial.join("result.json"));
    assert_eq!(result["status"], "passed", "{result:#}");
    let steps = trajectory(&trial);
    // Every world call is a recorded tool_call of its turn.
    let calls: Vec<(u64, &str)> = steps
        .iter()
        .filter(|s| s["type"] == "tool_call")
        .map(|s| (s["turn"].as_u64().unwrap(), s["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            (1, "files_write"),
            (1, "mail_send"),
            (2, "files_read"),
            (2, "files_edit")
        ]
    );
    // The final message of each turn.
    let messages: Vec<&str> = steps
        .iter()
        .filter(|s| s["type"] == "message")
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(messages, ["Memo written and Bob told.", "Budget added."]);
    // One model_call per turn: the same session, usage per turn (never the running total).
    let runs: Vec<&Value> = steps.iter().filter(|s| s["type"] == "model_call").collect();
    assert_eq!(runs.len(), 2);
    let session = runs[0]["response"]["session_id"].as_str().unwrap();
    assert!(!session.is_empty());
    assert_eq!(runs[1]["response"]["session_id"], session);
    assert_eq!(runs[0]["usage"]["input_tokens"], 360);
    assert_eq!(runs[0]["usage"]["output_tokens"], 29);
    assert_eq!(runs[1]["usage"]["input_tokens"], 660);
    assert_eq!(runs[1]["usage"]["output_tokens"], 25);
    assert_eq!(runs[0]["model"], "claude-scripted");
    // The office's date opens each prompt the harness got.
    let argv0 = runs[0]["request"]["argv"].as_array().unwrap();
    assert!(
        argv0[2]
            .as_str()
            .unwrap()
            .starts_with("Office time: Monday 2 March 2026, 09:00 (Europe/Berlin")
    );
    assert!(
        runs[1]["request"]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str() == Some(&format!("--resume={session}")))
    );

    // Resume for real: turn 2's first request carries turn 1's conversation.
    let conv = conversation(&server);
    assert_eq!(conv.len(), 6, "{conv:#?}");
    let turn2 = serde_json::to_string(&conv[3]["body"]["messages"]).unwrap();
    assert!(turn2.contains("Memo written and Bob told."), "{turn2}");
    assert!(turn2.contains("Tuesday 3 March 2026"), "{turn2}");
    // Bureau's tools were offered directly, annotated, under Claude Code's MCP names.
    let tools: Vec<&str> = conv[0]["body"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(tools.contains(&"mcp__bureau__files_write"), "{tools:?}");
    assert_eq!(conv[0]["x-api-key"], KEY);

    // Nothing in the workspace that the agent did not write.
    assert_eq!(
        workspace_of(&trial),
        ["memo.md", "notes", "notes/budget.txt", "readme.txt"]
    );
    // The harness's version is recorded.
    let run_json = json(&trial.join("../../../../run.json"));
    let version = run_json["agents"][0]["definition"]["version"]
        .as_str()
        .unwrap_or("");
    assert!(version.contains("Claude Code"), "{run_json:#}");
}

#[test]
#[ignore = "runs the real Claude Code: .ci/run's harness step installs it"]
fn claude_code_does_a_one_turn_task() {
    let Some(_claude) = support::real_harness("claude", "claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("note");
    write_memo_task(&task, "note");
    // One turn only: cut the task after its first turn and the rubric items of that turn.
    let toml = read(&task.join("task.toml"));
    let first = toml.find("[[turn]]").unwrap();
    let second = first + 1 + toml[first + 1..].find("[[turn]]").unwrap();
    let rubric = toml.find("[[rubric]]").unwrap();
    let last = toml.rfind("[[rubric]]").unwrap();
    let one = format!("{}{}", &toml[..second], &toml[rubric..last]);
    std::fs::write(task.join("task.toml"), one).unwrap();
    std::fs::remove_file(task.join("solution/2.jsonl")).unwrap();
    let script = json!([
        call(
            "files_write",
            json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
            50,
            5
        ),
        call(
            "mail_send",
            json!({"to": ["bob@corp.test"], "subject": "The meeting moved", "body": "Friday."}),
            60,
            6
        ),
        text("Done: memo and mail.", 70, 3),
    ]);
    let server = ModelServer::start("anthropic", &script);
    let trial = run_claude(&task, &server, tmp.path());
    let result = json(&trial.join("result.json"));
    assert_eq!(result["status"], "passed", "{result:#}");
    assert_eq!(result["usage"]["input_tokens"], 180);
    assert_eq!(result["usage"]["tool_calls"], 2);
    let steps = trajectory(&trial);
    assert!(
        steps
            .iter()
            .any(|s| s["type"] == "message" && s["text"] == "Done: memo and mail.")
    );
    assert_eq!(workspace_of(&trial), ["memo.md", "readme.txt"]);
}

#[test]
#[ignore = "runs the real Claude Code: .ci/run's harness step installs it"]
fn a_refused_api_key_makes_the_trial_error_with_a_clean_message_not_a_failure() {
    let Some(_claude) = support::real_harness("claude", "claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let server = ModelServer::start_with("anthropic", &json!([]), &["--require-key", KEY]);
    let trial = run_claude_with(&task, &server, tmp.path(), "sk-ant-wrong-key-000000", "");
    let result = json(&trial.join("result.json"));
    assert_eq!(result["status"], "error", "{result:#}");
    let error = result["error"].as_str().unwrap();
    assert!(error.contains("claude-code"), "{error}");
    assert!(
        result["score"].is_null(),
        "an errored trial is never scored"
    );
}

#[test]
#[ignore = "runs the real Claude Code: .ci/run's harness step installs it"]
fn claude_codes_own_turn_cap_is_a_limit_and_the_trial_is_scored() {
    let Some(_claude) = support::real_harness("claude", "claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let script = json!([
        call(
            "files_write",
            json!({"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
            10,
            1
        ),
        call("files_read", json!({"path": "memo.md"}), 10, 1),
        call("files_read", json!({"path": "readme.txt"}), 10, 1),
        text("never reached", 10, 1),
    ]);
    let server = ModelServer::start("anthropic", &script);
    let trial = run_claude_with(
        &task,
        &server,
        tmp.path(),
        KEY,
        "args = [\"--max-turns\", \"1\"]",
    );
    let result = json(&trial.join("result.json"));
    assert_ne!(result["status"], "error", "{result:#}");
    let limits = result["usage"]["limits_hit"].to_string();
    assert!(limits.contains("harness_max_turns"), "{result:#}");
}

#[test]
#[ignore = "runs the real Claude Code: .ci/run's harness step installs it"]
fn a_call_claude_code_reports_but_bureau_never_received_is_recorded() {
    let Some(_claude) = support::real_harness("claude", "claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    // A Bureau tool name the server does not offer: Claude Code refuses it itself.
    let script = json!([
        call(
            "mcp__bureau__files_shred",
            json!({"path": "memo.md"}),
            10,
            1
        ),
        call(
            "files_write",
            json!({"path": "memo.md", "content": "Friday.\n"}),
            10,
            1
        ),
        text("Done.", 10, 1),
    ]);
    let server = ModelServer::start("anthropic", &script);
    let trial = run_claude(&task, &server, tmp.path());
    let steps = trajectory(&trial);
    let notes: Vec<&Value> = steps
        .iter()
        .filter(|s| s["type"] == "note" && s["turn"] == 1)
        .collect();
    let not_received = notes
        .iter()
        .find(|n| !n["data"]["harness_call_not_received"].is_null())
        .unwrap_or_else(|| panic!("{notes:#?}"));
    let n = &not_received["data"]["harness_call_not_received"];
    assert_eq!(n["tool"], "mcp__bureau__files_shred", "{n:#}");
    assert!(!n["error"].is_null(), "{n:#}");
    let calls: Vec<&str> = steps
        .iter()
        .filter(|s| s["type"] == "tool_call")
        .filter_map(|s| s["tool"].as_str())
        .collect();
    assert_eq!(calls, ["files_write"]);
}

#[test]
#[ignore = "runs the real Claude Code: .ci/run's harness step installs it"]
fn claude_code_sees_a_photo_it_reads_over_mcp() {
    let Some(_claude) = support::real_harness("claude", "claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    let png = real::receipt_png();
    std::fs::write(task.join("world/files/receipt.png"), &png).unwrap();
    let script = json!([
        call("files_read", json!({"path": "receipt.png"}), 100, 10),
        text("I see the receipt.", 140, 7),
        text("Nothing more.", 150, 5),
    ]);
    let server = ModelServer::start("anthropic", &script);
    let trial = run_claude(&task, &server, tmp.path());
    let steps = trajectory(&trial);
    let calls: Vec<&str> = steps
        .iter()
        .filter(|s| s["type"] == "tool_call")
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["files_read"], "{steps:#?}");
    let conv = conversation(&server);
    assert!(conv.len() >= 2, "{conv:#?}");
    assert!(!real::carries_bytes(&conv[0]["body"], &png));
    let body = &conv[1]["body"];
    assert!(
        real::carries_bytes(body, &png),
        "Claude Code did not send the picture it got over MCP to its model: {}",
        serde_json::to_string(&body["messages"])
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
