//! Simulated people played by a model behind the fake OpenAI API: the user writing feedback
//! (`--feedback-model`) to the `llm` agent, and LLM colleagues (`--colleagues`).

mod support;

use std::path::{Path, PathBuf};

use bureau_core::result::TrialStatus;
use bureau_core::trajectory::StepKind;
use bureau_run::{FeedbackSettings, People, RunConfig, RunOutcome, run_full, trial_dir};
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, Wire};
use support::script::{openai, tokens};
use support::*;

fn agents_file(dir: &Path, base: &str) -> PathBuf {
    write_agents_file(
        dir,
        &format!(
            r#"[agents.gpt]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
temperature = 0

[agents.gpt.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
max_retries = 1

[agents.people]
kind = "llm"
model = "openai:gpt-4.1-nano"
base_url = "{base}"
api_key_env = "{KEY_ENV}"

[agents.people.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
max_retries = 1
"#
        ),
    )
}

fn run_people(
    task: &Path,
    agent: &str,
    file: &Path,
    out: &Path,
    edit: impl Fn(&mut RunConfig),
) -> RunOutcome {
    let catalog = catalog(file);
    let mut config = RunConfig::new(
        vec![task.display().to_string()],
        vec![agent.to_string()],
        out.to_path_buf(),
    );
    config.quiet = true;
    config.retries = 0;
    edit(&mut config);
    let people = People::make(&catalog, &config).unwrap_or_else(|e| panic!("{e}"));
    run_full(&config, &|spec| catalog.make(spec), None, &people).unwrap_or_else(|e| panic!("{e}"))
}

/// The text of the last message of a request body.
fn last_message(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_model_written_feedback_message_continues_the_llm_agents_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 20, 600);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            // The agent's first try: the wrong text.
            openai::calls(
                &[(
                    "c1",
                    "files_write",
                    json!({"path": "hello.txt", "content": "hello"}),
                )],
                tokens(500, 0, 20),
            ),
            openai::text("Done.", tokens(520, 0, 5)),
            // The user's feedback, written by the `people` model.
            openai::text("hello.txt must say hi — please fix it.", tokens(300, 0, 15)),
            // The agent's second try.
            openai::calls(
                &[(
                    "c2",
                    "files_write",
                    json!({"path": "hello.txt", "content": "hi"}),
                )],
                tokens(560, 0, 20),
            ),
            openai::text("Fixed.", tokens(580, 0, 5)),
        ],
    );
    let file = agents_file(tmp.path(), &server.base_url());
    let out = tmp.path().join("run");
    let feedback = |c: &mut RunConfig| {
        c.feedback = FeedbackSettings {
            rounds: 1,
            threshold: 1.0,
        };
        c.feedback_model = Some("people".into());
    };
    let outcome = run_people(&task, "gpt", &file, &out, feedback);
    assert_eq!((outcome.passed, outcome.errored), (1, 0));
    assert_eq!(server.unused(), 0);
    assert!(server.violations().is_empty(), "{:?}", server.violations());

    let got = server.received();
    // The writer saw the task and the failed item, at temperature 0, never the check.
    let writer = &got[2].body;
    assert_eq!(writer["model"], "gpt-4.1-nano");
    assert_eq!(writer["temperature"], 0.0);
    let asked = last_message(writer);
    assert!(asked.contains("Write hello.txt containing hi."), "{asked}");
    assert!(asked.contains("hello.txt says hi (hello)"), "{asked}");
    assert!(!asked.contains("file_contains"), "{asked}");
    // The agent got the message as a new user message of the same conversation.
    let third = &got[3].body;
    assert_eq!(
        last_message(third),
        "hello.txt must say hi — please fix it."
    );
    let roles: Vec<&str> = third["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );

    let r = result(&out, "hello", "gpt");
    // The writer's tokens are its own, not the agent's.
    let writer = r.usage.feedback_tokens.unwrap();
    assert_eq!(
        (writer.calls, writer.input_tokens, writer.output_tokens),
        (1, 300, 15)
    );
    assert_eq!(r.usage.input_tokens, 500 + 520 + 560 + 580);
    assert_eq!(r.usage.colleague_tokens, None);
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["agents"]["gpt"]["feedback_tokens_mean"], 315.0);
    let fb = r.feedback.unwrap();
    assert_eq!(fb.writer, "openai:gpt-4.1-nano");
    assert_eq!(
        fb.turns[0].rounds.iter().map(|r| r.met).collect::<Vec<_>>(),
        [false, true]
    );
    let feedback_steps: Vec<String> = trajectory(&out, "hello", "gpt")
        .into_iter()
        .filter_map(|s| match s.kind {
            StepKind::Feedback { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(feedback_steps, ["hello.txt must say hi — please fix it."]);
    let manifest: Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(
        manifest["feedback"]["model"]["model"],
        "openai:gpt-4.1-nano"
    );
    assert_eq!(count_files(&out.join("feedback-cache")), 1);
    assert!(files_containing(&out, SECRET).is_empty());
}

const PEOPLE: &str = r#"
[[person]]
name = "Priya Natarajan"
email = "priya@corp.test"
handle = "priya"
role = "Finance Controller"
department = "Finance"
profile = "Owns the quarterly budgets."
strategy = "Terse. Gives figures only to people who name the quarter."

[[person.knows]]
about = ["budget", "Q2"]
reply = "The Q2 budget is €48,500."

[[person.refuse]]
about = ["salary"]
reply = "I can't share salary data."
"#;

/// One turn: ask Priya (by chat DM) for the Q2 budget; the oracle asks.
fn write_ask_task(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("world")).unwrap();
    std::fs::create_dir_all(dir.join("solution")).unwrap();
    std::fs::write(dir.join("world/people.toml"), PEOPLE).unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"id = "ask"
title = "Ask for the budget"
persona = "assistant"
category = "chat"
difficulty = "easy"
apps = ["chat"]

[user]
name = "Ada Admin"
email = "ada@corp.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Ask Priya for the Q2 budget."

[[rubric]]
id = "asked"
description = "Priya was asked"
kind = "process"
colleague_asked = { who = "priya" }
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("solution/1.jsonl"),
        r#"{"tool":"chat_post","args":{"to":["priya"],"text":"Hi Priya, what is the Q2 budget?"}}"#,
    )
    .unwrap();
    dir.to_path_buf()
}

fn colleague_replies(out: &Path) -> Vec<Value> {
    let steps = trajectory(out, "ask", "oracle");
    steps
        .into_iter()
        .filter_map(|s| match s.kind {
            StepKind::ToolCall { tool, outcome, .. } if tool == "chat_post" => {
                Some(serde_json::to_value(&outcome).unwrap())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_llm_colleague_answers_a_dm_from_its_brief_and_replays_from_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_ask_task(&tmp.path().join("ask"));
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![openai::text("Q2? €48,500.", tokens(400, 0, 8))],
    );
    let file = agents_file(tmp.path(), &server.base_url());
    let out = tmp.path().join("run");
    let llm = |c: &mut RunConfig| c.colleagues = Some("people".into());
    let outcome = run_people(&task, "oracle", &file, &out, llm);
    assert_eq!((outcome.passed, outcome.errored), (1, 0));

    let got = server.received();
    assert_eq!(got.len(), 1);
    let body = &got[0].body;
    assert_eq!(body["temperature"], 0.0);
    let system = body["messages"][0]["content"].as_str().unwrap();
    for needle in [
        "You are Priya Natarajan",
        "Finance Controller",
        "Owns the quarterly budgets.",
        "Gives figures only to people who name the quarter.",
        "about budget, Q2: The Q2 budget is €48,500.",
        "about salary: I can't share salary data.",
    ] {
        assert!(system.contains(needle), "{needle} missing: {system}");
    }
    assert!(
        last_message(body)
            .contains("New message from ada@corp.test (chat):\nHi Priya, what is the Q2 budget?"),
        "{}",
        last_message(body)
    );
    let replies = colleague_replies(&out);
    assert_eq!(replies[0]["value"]["replies"][0]["text"], "Q2? €48,500.");
    let events = read(&trial_dir(&out, "ask", "oracle", 1).join("events.jsonl"));
    assert!(events.contains("colleague:priya@corp.test"), "{events}");
    let manifest: Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(manifest["colleagues"]["model"], "openai:gpt-4.1-nano");
    // The colleague's tokens are in the trial's usage, apart from the agent's (none here).
    let usage = result(&out, "ask", "oracle").usage;
    let c = usage.colleague_tokens.unwrap();
    assert_eq!((c.calls, c.input_tokens, c.output_tokens), (1, 400, 8));
    assert_eq!((usage.input_tokens, usage.feedback_tokens), (0, None));
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["agents"]["oracle"]["colleague_tokens_mean"], 408.0);

    // Run the trial again in the same run directory: the reply comes from the cache.
    std::fs::remove_dir_all(out.join("trials")).unwrap();
    run_people(&task, "oracle", &file, &out, llm);
    assert_eq!(server.received().len(), 1, "no second request");
    // A cached reply costs nothing.
    assert_eq!(result(&out, "ask", "oracle").usage.colleague_tokens, None);
    assert_eq!(
        colleague_replies(&out)[0]["value"]["replies"][0]["text"],
        "Q2? €48,500."
    );

    // Another colleague policy is another run.
    let catalog = catalog(&file);
    let mut config = RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into()],
        out.clone(),
    );
    config.quiet = true;
    let people = People::make(&catalog, &config).unwrap();
    let err = run_full(&config, &|s| catalog.make(s), None, &people).unwrap_err();
    assert!(
        err.to_string()
            .contains("colleagues openai:gpt-4.1-nano, not deterministic"),
        "{err}"
    );
}

#[test]
fn a_colleague_model_that_keeps_failing_makes_the_trial_error() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_ask_task(&tmp.path().join("ask"));
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        (0..4)
            .map(|_| Reply::error(Wire::OpenAi, 500, "The server had an error."))
            .collect(),
    );
    let file = agents_file(tmp.path(), &server.base_url());
    let out = tmp.path().join("run");
    let outcome = run_people(&task, "oracle", &file, &out, |c| {
        c.colleagues = Some("people".into())
    });
    assert_eq!((outcome.errored, outcome.failed, outcome.passed), (1, 0, 0));
    assert_eq!(server.received().len(), 2, "one call and its one retry");
    let r = result(&out, "ask", "oracle");
    assert_eq!(r.status, TrialStatus::Error);
    let error = r.error.unwrap();
    assert!(
        error.starts_with("turn 1: a simulated colleague failed: Priya Natarajan (openai:gpt-4.1-nano) could not answer"),
        "{error}"
    );
    assert!(error.contains("500"), "{error}");
    assert!(
        !out.join("colleague-cache").exists(),
        "failures are not cached"
    );
}
