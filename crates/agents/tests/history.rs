//! Dialogue history (OdysseyBench) end to end: a task with `history.json` played through
//! Bureau's run loop by the `llm` agent against the fake model API, under `--context long`
//! and `--context rag:utterance:k`; the offered tools, the first prompt, the trajectory, and
//! the setting recorded in run.json, summary.json and report.md.

mod support;

use std::path::{Path, PathBuf};

use bureau_core::history::{ContextSetting, Granularity};
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::{Step, StepKind};
use bureau_run::trial::{apply_context, turn_prompt};
use bureau_run::{RunConfig, RunError, run_with};
use bureau_world::World;
use serde_json::{Value, json};
use support::fake::{FakeServer, Wire};
use support::script::{openai, tokens};
use support::*;

const HISTORY: &str = r#"{"sessions": [
  {"id": "d1", "started_at": "2026-02-23T10:00:00",
   "summary": "Offsite planning: 14 people, budget 4,000.",
   "chunks": [{"from": 1, "to": 2, "summary": "Offsite for 14 people with a 4,000 budget."}],
   "utterances": [
     {"role": "user", "at": "2026-02-23T10:00:00", "text": "The offsite is for 14 people, budget 4,000."},
     {"role": "assistant", "at": "2026-02-23T10:01:00", "text": "Noted: 14 people and a budget of 4,000."}
   ]},
  {"id": "d2", "started_at": "2026-02-25T15:00:00",
   "summary": "Venue: the Harbour Room; the Loft is too noisy.",
   "chunks": [{"from": 1, "to": 2, "summary": "User prefers the Harbour Room venue; the Loft is too noisy."}],
   "utterances": [
     {"role": "user", "at": "2026-02-25T15:00:00", "text": "For the offsite venue I prefer the Harbour Room; the Loft is too noisy."},
     {"role": "assistant", "at": "2026-02-25T15:00:30", "text": "Harbour Room it is."}
   ]}
]}"#;

/// A two-turn task whose decisive detail (the room) is only in the history.
fn write_room_task(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::create_dir_all(dir.join("solution")).unwrap();
    std::fs::write(dir.join("world/files/readme.txt"), "Team folder.\n").unwrap();
    std::fs::write(dir.join("history.json"), HISTORY).unwrap();
    std::fs::write(
        dir.join("solution/1.jsonl"),
        "{\"tool\": \"files_write\", \"args\": {\"path\": \"room.txt\", \"content\": \"Harbour Room\\n\"}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"id = "room"
title = "Book the room the user prefers"
persona = "office manager"
category = "events"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Amsterdam"

[user]
name = "Ada Admin"
email = "ada@corp.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Write the offsite room I prefer into room.txt."

[[turn]]
at = "2026-03-03T09:00:00"
prompt = "Anything left for the offsite?"

[[rubric]]
id = "room"
description = "room.txt names the Harbour Room"
kind = "result"
file_contains = { path = "room.txt", all = ["Harbour Room"] }
"#,
    )
    .unwrap();
    dir.to_path_buf()
}

fn gpt_agents(base: &str) -> String {
    format!(
        r#"[agents.gpt]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
temperature = 0

[agents.gpt.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
request_timeout_seconds = 5
"#
    )
}

fn config(task: &Path, agents: &[&str], out: &Path, context: Option<&str>) -> RunConfig {
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        agents.iter().map(|s| s.to_string()).collect(),
        out.to_path_buf(),
    );
    c.quiet = true;
    c.retries = 0;
    c.context = context.map(|s| s.parse().unwrap());
    c
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn prompts(steps: &[Step]) -> Vec<(u32, String)> {
    steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Prompt { text, .. } => Some((s.turn, text.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn under_rag_the_model_searches_memory_and_the_call_is_in_the_trajectory() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_room_task(&tmp.path().join("room"));
    let t = tokens(500, 0, 20);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[(
                    "call_1",
                    "memory_search",
                    json!({"query": "offsite venue preference", "k": 10}),
                )],
                t,
            ),
            openai::calls(
                &[(
                    "call_2",
                    "files_write",
                    json!({"path": "room.txt", "content": "Harbour Room\n"}),
                )],
                t,
            ),
            openai::text("Done: the Harbour Room.", t),
            openai::text("Nothing left.", t),
        ],
    );
    let agents = write_agents_file(tmp.path(), &gpt_agents(&server.base_url()));
    let catalog = catalog(&agents);
    let out = tmp.path().join("run");
    let outcome = run_with(
        &config(&task, &["gpt"], &out, Some("rag:utterance:3")),
        &|spec| catalog.make(spec),
    )
    .unwrap();
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(outcome.passed, 1, "{:?}", result(&out, "room", "gpt").error);

    let received = server.received();
    // Offered like a world tool; the history is not in the prompt.
    assert!(tool_names(&received[0].body).contains(&"memory_search".to_string()));
    let first_user = received[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(!first_user.contains("too noisy"), "{first_user}");
    // The tool result reached the model: top hit first, capped at k = 3.
    let messages = received[1].body["messages"].as_array().unwrap();
    let tool_msg = messages.last().unwrap();
    assert_eq!(tool_msg["role"], "tool");
    let content = tool_msg["content"].as_str().unwrap();
    assert!(content.contains("Harbour Room"), "{content}");
    assert!(content.contains("capped at 3"), "{content}");

    let steps = trajectory(&out, "room", "gpt");
    let call = steps
        .iter()
        .find_map(|s| match &s.kind {
            StepKind::ToolCall {
                tool,
                args,
                outcome,
            } if tool == "memory_search" => Some((args.clone(), outcome.clone())),
            _ => None,
        })
        .expect("memory_search in the trajectory");
    assert_eq!(call.0["query"], "offsite venue preference");
    let ToolOutcome::Ok { value, .. } = call.1 else {
        panic!("memory_search failed: {:?}", call.1)
    };
    assert_eq!(value["granularity"], "utterance");
    let results = value["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 3, "{value}");
    assert_eq!(results[0]["unit"], "d2#1");
    assert_eq!(results[0]["session"], "d2");
    assert_eq!(results[0]["at"], "2026-02-25T15:00:00+01:00");
    assert_eq!(results[0]["role"], "user");

    // The setting is reported with the results.
    let run_json: Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(run_json["context"], "rag:utterance:3");
    let summary: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(summary["context"], "rag:utterance:3");
    assert!(read(&out.join("report.md")).contains("Context: rag:utterance:3"));
}

#[test]
fn under_long_context_the_history_prefixes_the_first_prompt_only() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_room_task(&tmp.path().join("room"));
    let t = tokens(900, 0, 20);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[(
                    "call_1",
                    "files_write",
                    json!({"path": "room.txt", "content": "Harbour Room\n"}),
                )],
                t,
            ),
            openai::text("Done.", t),
            openai::text("Nothing left.", t),
        ],
    );
    let agents = write_agents_file(tmp.path(), &gpt_agents(&server.base_url()));
    let catalog = catalog(&agents);
    let out = tmp.path().join("run");
    // No --context: the default, long.
    let outcome = run_with(&config(&task, &["gpt"], &out, None), &|spec| {
        catalog.make(spec)
    })
    .unwrap();
    assert_eq!(outcome.passed, 1);
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert!(!tool_names(&received[0].body).contains(&"memory_search".to_string()));
    let first_user = received[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(first_user.contains("Conversation history"), "{first_user}");
    assert!(
        first_user.contains("## Session d2 — Wednesday 2026-02-25 15:00"),
        "{first_user}"
    );
    assert!(
        first_user.contains("[15:00] User: For the offsite venue I prefer the Harbour Room"),
        "{first_user}"
    );
    assert!(
        first_user.ends_with("---\n\nWrite the offsite room I prefer into room.txt."),
        "{first_user}"
    );
    // Turn 2's wake-up message is the plain prompt.
    let turn2 = received[2].body["messages"].as_array().unwrap();
    let last = turn2.last().unwrap()["content"].as_str().unwrap();
    assert!(last.ends_with("Anything left for the offsite?"), "{last}");
    assert!(!last.contains("Conversation history"), "{last}");

    let p = prompts(&trajectory(&out, "room", "gpt"));
    assert_eq!(p.len(), 2);
    assert!(p[0].1.contains("too noisy") && p[0].1.ends_with("into room.txt."));
    assert_eq!(p[1].1, "Anything left for the offsite?");
    let run_json: Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(run_json["context"], "long");
    assert!(read(&out.join("report.md")).contains("Context: long"));
}

#[test]
fn memory_search_is_offered_only_under_rag_for_a_task_with_history() {
    let tmp = tempfile::tempdir().unwrap();
    let task = Task::load(&write_room_task(&tmp.path().join("room"))).unwrap();
    assert_eq!(task.history.as_ref().unwrap().sessions.len(), 2);
    let offered = |context: ContextSetting, task: &Task, name: &str| {
        let mut w = World::build(task, &tmp.path().join(name)).unwrap();
        let prefix = apply_context(task, context, None, &mut w).unwrap();
        let names: Vec<String> = w.offered_tool_specs().into_iter().map(|s| s.name).collect();
        let call = w.call_tool(
            bureau_core::log::Actor::Agent,
            "memory_search",
            &json!({"query": "room"}),
        );
        (names.contains(&"memory_search".to_string()), prefix, call)
    };
    let rag = ContextSetting::Rag {
        granularity: Granularity::Chunk,
        k: 2,
    };
    let (yes, prefix, call) = offered(rag, &task, "rag");
    assert!(yes && prefix.is_none());
    let ToolOutcome::Ok { value, .. } = call else {
        panic!("{call:?}")
    };
    assert_eq!(value["results"][0]["unit"], "d2#1-2");
    for (i, c) in [ContextSetting::Long, ContextSetting::None]
        .into_iter()
        .enumerate()
    {
        let (yes, prefix, call) = offered(c, &task, &format!("other{i}"));
        assert!(!yes, "{c}");
        assert_eq!(prefix.is_some(), c == ContextSetting::Long);
        let ToolOutcome::Error { message } = call else {
            panic!("{call:?}")
        };
        assert!(message.contains("not available"), "{message}");
    }
    // A task without history: rag offers nothing.
    let mut plain = task.clone();
    plain.history = None;
    let (yes, prefix, _) = offered(rag, &plain, "plain");
    assert!(!yes && prefix.is_none());
    // The prefix goes before turn 1 only.
    assert_eq!(turn_prompt(1, "Go.", Some("H")), "H\n---\n\nGo.");
    assert_eq!(turn_prompt(2, "Go.", Some("H")), "Go.");
}

#[test]
fn a_run_is_resumed_only_under_its_context_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_room_task(&tmp.path().join("room"));
    let out = tmp.path().join("run");
    let factory = |spec: &str| bureau_agents::make_agent(spec);
    let first = run_with(
        &config(&task, &["oracle"], &out, Some("rag:session:2")),
        &factory,
    )
    .unwrap();
    assert_eq!(first.passed, 1);
    let err = run_with(&config(&task, &["oracle"], &out, Some("long")), &factory).unwrap_err();
    assert!(
        matches!(&err, RunError::OtherRun { what, .. } if what == "context rag:session:2, not long"),
        "{err}"
    );
    // Without --context the recorded setting is resumed.
    let again = run_with(&config(&task, &["oracle"], &out, None), &factory).unwrap();
    assert_eq!((again.ran, again.skipped), (0, 1));
    // A granularity the history cannot serve is refused before any trial.
    let mut no_chunks: Value = serde_json::from_str(HISTORY).unwrap();
    for s in no_chunks["sessions"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("chunks");
    }
    std::fs::write(task.join("history.json"), no_chunks.to_string()).unwrap();
    let err = run_with(
        &config(
            &task,
            &["oracle"],
            &tmp.path().join("run2"),
            Some("rag:chunk:5"),
        ),
        &factory,
    )
    .unwrap_err();
    assert!(err.to_string().contains("no summary chunks"), "{err}");
}

#[test]
fn a_broken_history_is_reported_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_room_task(&tmp.path().join("room"));
    let broken = HISTORY.replace(
        r#""role": "assistant", "at": "2026-02-25T15:00:30""#,
        r#""role": "boss", "at": "2026-02-25T15:00:30""#,
    );
    std::fs::write(dir.join("history.json"), broken).unwrap();
    let e = Task::load(&dir).unwrap_err().to_string();
    assert!(e.contains("history.json:14:"), "{e}");
    assert!(e.contains("`role` is `boss`"), "{e}");
    // Dated after the first turn: the history must be the past.
    let late = HISTORY.replace("2026-02-25T15:00:30", "2026-03-05T15:00:30");
    std::fs::write(dir.join("history.json"), late).unwrap();
    let e = Task::load(&dir).unwrap_err().to_string();
    assert!(e.contains("history.json:14:"), "{e}");
    assert!(e.contains("is not before turn 1"), "{e}");
    // It is never in the agent's workspace.
    std::fs::write(dir.join("history.json"), HISTORY).unwrap();
    let task = Task::load(&dir).unwrap();
    let w = World::build(&task, &tmp.path().join("w")).unwrap();
    assert!(!w.files().exists("history.json"));
}
