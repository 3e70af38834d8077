//! The `llm` agent's `shell_run` tool end to end: a scripted model (the fake API on
//! 127.0.0.1) runs confined shell commands in the trial's workspace through Bureau's run loop.
//! Needs the confined shell on this machine (Linux, Landlock ABI >= 3, namespaces).

mod support;

use bureau_core::result::TrialStatus;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::StepKind;
use serde_json::{Value, json};
use support::fake::{FakeServer, Wire};
use support::script::{openai, tokens};
use support::*;

fn agents(base: &str, extra: &str) -> String {
    format!(
        r#"[agents.gpt]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
{extra}
[agents.gpt.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
request_timeout_seconds = 5
"#
    )
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn shell_run_writes_in_the_workspace_and_is_recorded() {
    bureau_agents::llm::shell::confinement()
        .unwrap_or_else(|e| panic!("this test needs the confined shell on this machine: {e}"));
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 10, 60);
    // Outside the workspace: the system paths are read-only in the command's view.
    let outside = format!("/etc/bureau-shell-agent-test-{}", std::process::id());
    let t = tokens(100, 0, 10);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[(
                    "call_1",
                    "shell_run",
                    json!({"command": "echo hi > hello.txt && cat hello.txt && pwd", "timeout_seconds": 10}),
                )],
                t,
            ),
            openai::calls(
                &[(
                    "call_2",
                    "shell_run",
                    json!({"command": format!("echo x > {outside}")}),
                )],
                t,
            ),
            openai::text("hello.txt written.", t),
        ],
    );
    let file = write_agents_file(
        tmp.path(),
        &agents(
            &server.base_url(),
            "[agents.gpt.shell]\nwall_seconds = 20\n",
        ),
    );
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&file), &out);

    assert_eq!(server.violations(), Vec::<String>::new());
    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Passed, "{:?}", r.error);
    assert!(!std::path::Path::new(&outside).exists());

    // The model was offered shell_run beside the world tools.
    let received = server.received();
    let names = tool_names(&received[0].body);
    assert!(names.contains(&"shell_run".to_string()), "{names:?}");
    assert!(names.contains(&"files_write".to_string()), "{names:?}");
    let spec = received[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "shell_run")
        .unwrap()
        .clone();
    assert!(
        spec["function"]["description"]
            .as_str()
            .unwrap()
            .contains("20 s")
    );

    // Both calls are tool_call steps with their arguments and outcomes.
    let steps = trajectory(&out, "hello", "gpt");
    let calls: Vec<(&String, &Value, &ToolOutcome)> = steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::ToolCall {
                tool,
                args,
                outcome,
            } => Some((tool, args, outcome)),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].0, "shell_run");
    assert_eq!(
        calls[0].1["command"],
        "echo hi > hello.txt && cat hello.txt && pwd"
    );
    let ToolOutcome::Ok { value, .. } = calls[0].2 else {
        panic!("{:?}", calls[0].2)
    };
    assert_eq!(value["exit_code"], 0);
    let stdout = value["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("hi\n"), "{value}");
    assert!(stdout.trim_end().ends_with("/workspace"), "{value}");
    let ToolOutcome::Ok { value, .. } = calls[1].2 else {
        panic!("{:?}", calls[1].2)
    };
    assert_ne!(value["exit_code"], 0, "{value}");
    assert!(
        value["stderr"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{value}"
    );
    // The model got the results back.
    let third = received[2].body["messages"].as_array().unwrap();
    let last = third.last().unwrap();
    assert_eq!(last["tool_call_id"], "call_2");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("Read-only file system")
    );

    // run.json says how the shell is confined.
    let run_json = read(&out.join("run.json"));
    assert!(run_json.contains("\"shell_status\""), "{run_json}");
    assert!(run_json.contains("Landlock"), "{run_json}");
}

#[test]
fn shell_false_offers_no_shell_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let task = write_hello_task(&tmp.path().join("hello"), 1, 10, 60);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[(
                    "call_1",
                    "shell_run",
                    json!({"command": "echo hi > hello.txt"}),
                )],
                tokens(100, 0, 10),
            ),
            openai::text("done", tokens(100, 0, 10)),
        ],
    );
    let file = write_agents_file(tmp.path(), &agents(&server.base_url(), "shell = false\n"));
    let out = tmp.path().join("run");
    run(&task, &["gpt"], &catalog(&file), &out);
    let received = server.received();
    assert!(!tool_names(&received[0].body).contains(&"shell_run".to_string()));
    // The call goes to the world, which has no such tool: an error, and no file.
    let r = result(&out, "hello", "gpt");
    assert_eq!(r.status, TrialStatus::Failed, "{:?}", r.error);
    let run_json = read(&out.join("run.json"));
    assert!(run_json.contains("shell = false"), "{run_json}");
}
