//! Harness agents through the real run loop, with no real harness: a small fake harness
//! (`support/fake_harness.py`, the official MCP Python SDK) reads the MCP configuration Bureau
//! wrote, calls world tools over MCP and prints a Claude Code stream-json stream.

#[path = "../../run/tests/common/mod.rs"]
mod common;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bureau_run::{RunConfig, run_with_catalog};
use serde_json::Value;

use common::*;

fn lines(path: &Path) -> Vec<Value> {
    read(path)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn toml_str(p: &Path) -> String {
    serde_json::to_string(&p.to_string_lossy()).unwrap()
}

fn config(task: &Path, agent: &str, out: PathBuf, agents_file: &Path) -> RunConfig {
    let mut c = RunConfig::new(
        vec![task.to_string_lossy().into_owned()],
        vec![agent.to_string()],
        out,
    );
    c.quiet = true;
    c.retries = 0;
    c.agents_file = Some(agents_file.to_path_buf());
    c
}

#[test]
fn a_command_harness_works_the_world_over_mcp_and_its_stream_lands_in_the_trajectory() {
    let python = support::python_with_sdk();
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    write_memo_task(&task, "memo");
    let log = dir.path().join("harness.log");
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        format!(
            "[agents.fake]\nharness = \"command\"\nformat = \"claude-code\"\n\
             command = [{}, {}, \"--prompt-file\", \"{{prompt_file}}\", \"--mcp\", \"{{mcp_config}}\", \
             \"--turn\", \"{{turn}}\", \"--resume={{session}}\", \"--log\", {}]\n",
            toml_str(&python),
            toml_str(&support::fake_harness()),
            toml_str(&log),
        ),
    )
    .unwrap();
    let out = dir.path().join("run");
    let outcome = run_with_catalog(
        &config(&task, "fake", out.clone(), &agents),
        bureau_harness::catalog(),
    )
    .unwrap();
    let trial = out.join("trials/memo/fake/1");
    let result = json(&trial.join("result.json"));
    assert_eq!(
        (outcome.passed, outcome.failed, outcome.errored),
        (1, 0, 0),
        "{result:#}"
    );

    // The verdicts: every item passed, from what the harness did over MCP.
    let verdicts = json(&trial.join("verdicts.json"));
    let passed: Vec<&str> = verdicts
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["status"] == "passed")
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(passed.len(), 3, "{verdicts:#}");

    let steps = lines(&trial.join("trajectory.jsonl"));
    let of = |t: &'static str| steps.iter().filter(move |s| s["type"] == t);
    // World tool calls once each (recorded by the tool session, not again from the stream).
    let tools: Vec<&str> = of("tool_call")
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        ["files_write", "mail_send", "files_read", "files_edit"]
    );
    assert!(of("tool_call").all(|s| s["outcome"] == "ok"), "{steps:#?}");
    // The harness's native tool calls, marked as such, with their results.
    let native: Vec<&Value> = of("note")
        .filter_map(|s| s["data"].get("harness_tool_call"))
        .collect();
    assert_eq!(native.len(), 2, "{steps:#?}");
    assert_eq!(native[0]["tool"], "Bash");
    assert_eq!(native[0]["harness"], "command");
    assert!(native[0]["output"].as_str().unwrap().contains("readme.txt"));
    // Messages: the intermediate text, and the final message once per turn.
    let messages: Vec<(u64, &str)> = of("message")
        .map(|s| (s["turn"].as_u64().unwrap(), s["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        messages,
        [
            (1, "Working on turn 1."),
            (1, "Turn 1 done."),
            (2, "Working on turn 2."),
            (2, "Turn 2 done.")
        ]
    );
    // Usage: one model_call step per turn, with the harness's totals and cost.
    let calls: Vec<&Value> = of("model_call").collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["provider"], "command");
    assert_eq!(calls[0]["model"], "fake-model-1");
    assert_eq!(calls[0]["response"]["session_id"], "fake-session-0001");
    assert_eq!(calls[0]["response"]["bureau_tool_calls"], 2);
    let usage = &result["usage"];
    assert_eq!(usage["tool_calls"], 4);
    assert_eq!(usage["model_calls"], 2);
    assert_eq!(usage["input_tokens"], 2 * (100 + 20 + 300));
    assert_eq!(usage["cached_input_tokens"], 2 * 300);
    assert_eq!(usage["output_tokens"], 2 * 40);
    assert_eq!(usage["cost_usd"], 0.5);
    let summary = json(&out.join("summary.json"));
    let summary_text = summary.to_string();
    assert!(
        summary_text.contains("\"cost_usd_mean\":0.5"),
        "summary.json carries the cost: {summary:#}"
    );

    // The harness ran in the workspace, resumed its session on turn 2, and was handed a
    // private config outside the workspace, which is gone after the trial.
    let log = lines(&log);
    assert_eq!(log.len(), 2);
    assert!(
        log[0]["cwd"]
            .as_str()
            .unwrap()
            .ends_with("trials/memo/fake/1/world/workspace")
            || log[0]["cwd"].as_str().unwrap().contains("/world/workspace"),
        "{log:#?}"
    );
    // The private directory holding the token is the owner's only.
    assert_eq!(log[0]["private_dir_mode"], 0o700, "{log:#?}");
    assert_eq!(log[0]["resume"], Value::Null);
    assert_eq!(log[1]["resume"], "fake-session-0001");
    // The harness is told the office's date and time, not left with the machine's.
    assert!(
        log[0]["prompt"].as_str().unwrap().starts_with(
            "Office time: Monday 2 March 2026, 09:00 (Europe/Berlin, UTC+01:00)\n\nWrite memo.md"
        ),
        "{}",
        log[0]["prompt"]
    );
    assert!(
        log[1]["prompt"]
            .as_str()
            .unwrap()
            .starts_with("Office time: Tuesday 3 March 2026, "),
        "{}",
        log[1]["prompt"]
    );
    let argv: Vec<&str> = log[0]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let config = Path::new(argv[argv.iter().position(|a| *a == "--mcp").unwrap() + 1]);
    assert!(!config.starts_with(&out), "{}", config.display());
    assert!(
        !config.exists(),
        "the private directory is removed after the trial"
    );

    // run.json: the harness and its template, never the token.
    let run = read(&out.join("run.json"));
    let manifest: Value = serde_json::from_str(&run).unwrap();
    let def = &manifest["agents"][0]["definition"];
    assert_eq!(def["harness"], "command");
    assert_eq!(def["format"], "claude-code");
    assert!(def["command"].to_string().contains("{mcp_config}"));
    assert!(def.get("version").is_some());
    assert!(!run.contains("Bearer"), "{run}");
}

/// Every process id listed in `path` (one per line) is gone (or a zombie awaiting its reaper).
fn all_dead(path: &Path) -> Vec<i32> {
    read(path)
        .lines()
        .filter_map(|l| l.trim().parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // Alive unless missing or a zombie (state `Z` after the command name).
            !stat.is_empty()
                && stat
                    .rsplit_once(')')
                    .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .collect()
}

#[test]
fn a_harness_past_its_time_is_killed_with_its_children_and_the_turn_ends_on_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    write_memo_task(&task, "memo");
    let pids = dir.path().join("pids");
    let script = dir.path().join("slow.py");
    std::fs::write(
        &script,
        format!(
            "import os, subprocess, sys, time\n\
             child = subprocess.Popen(['sleep', '300'])\n\
             with open({p}, 'a') as f:\n    f.write(f'{{os.getpid()}}\\n{{child.pid}}\\n')\n\
             print('started', flush=True)\n\
             time.sleep(300)\n",
            p = serde_json::to_string(&pids.to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        format!(
            "[agents.slow]\nharness = \"command\"\ncommand = [\"python3\", {}]\n[agents.slow.limits]\nwall_seconds = 2\n",
            toml_str(&script)
        ),
    )
    .unwrap();
    let out = dir.path().join("run");
    let started = Instant::now();
    let outcome = run_with_catalog(
        &config(&task, "slow", out.clone(), &agents),
        bureau_harness::catalog(),
    )
    .unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "the trial hung: {took:?}");
    // A timeout is the agent's limit, not a harness error: the trial is scored (and fails).
    assert_eq!((outcome.failed, outcome.errored), (1, 0));
    let trial = out.join("trials/memo/slow/1");
    let result = json(&trial.join("result.json"));
    assert_eq!(
        result["usage"]["limits_hit"],
        serde_json::json!(["1:wall_seconds", "2:wall_seconds"])
    );
    let steps = lines(&trial.join("trajectory.jsonl"));
    let limit = steps.iter().find(|s| s["type"] == "limit_reached").unwrap();
    assert!(
        limit["detail"]
            .as_str()
            .unwrap()
            .contains("killed with its whole process group"),
        "{limit}"
    );
    // Both turns' harness and its child are gone.
    assert_eq!(read(&pids).lines().count(), 4);
    assert_eq!(all_dead(&pids), Vec::<i32>::new(), "processes left behind");
}

#[test]
fn a_harness_that_fails_is_an_error_trial_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    write_memo_task(&task, "memo");
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        "[agents.broken]\nharness = \"command\"\n\
         command = [\"python3\", \"-c\", \"import sys; sys.stderr.write('boom: no API key set\\\\n'); sys.exit(2)\"]\n\
         [agents.missing]\nharness = \"command\"\ncommand = [\"/nonexistent/harness-binary\", \"{prompt}\"]\n",
    )
    .unwrap();
    let (agent, expect) = (
        "broken",
        "exited with exit status: 2 — stderr ends: boom: no API key set",
    );
    let out = dir.path().join(format!("run-{agent}"));
    let outcome = run_with_catalog(
        &config(&task, agent, out.clone(), &agents),
        bureau_harness::catalog(),
    )
    .unwrap();
    assert_eq!((outcome.failed, outcome.errored), (0, 1), "{agent}");
    let result = json(&out.join(format!("trials/memo/{agent}/1/result.json")));
    let error = result["error"].as_str().unwrap();
    assert!(error.contains(expect), "{agent}: {error}");
}

#[test]
fn a_harness_that_is_not_installed_refuses_the_run_before_any_trial() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("memo");
    write_memo_task(&task, "memo");
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        "[agents.missing]\nharness = \"command\"\ncommand = [\"/nonexistent/harness-binary\", \"{prompt}\"]\n\
         [agents.cc]\nharness = \"claude-code\"\nenv = { PATH = \"/nonexistent\" }\n",
    )
    .unwrap();
    for (agent, expect) in [
        (
            "missing",
            "agent `missing`: the program `/nonexistent/harness-binary` does not exist or is not executable",
        ),
        (
            "cc",
            "agent `cc`: the program `claude` is not installed (not on PATH) — install it with `npm install -g @anthropic-ai/claude-code`",
        ),
    ] {
        let out = dir.path().join(format!("run-{agent}"));
        let err = run_with_catalog(
            &config(&task, agent, out.clone(), &agents),
            bureau_harness::catalog(),
        )
        .unwrap_err();
        assert!(err.to_string().contains(expect), "{agent}: {err}");
        assert!(!out.join("trials").exists(), "{agent}: no trial ran");
    }
}

#[test]
fn named_adapters_and_command_specs_are_agents_with_definitions() {
    let catalog = bureau_harness::catalog();
    let cc = catalog.make("claude-code:claude-sonnet-4-5").unwrap();
    assert_eq!(cc.name(), "claude-code:claude-sonnet-4-5");
    let def = cc.definition().unwrap();
    assert_eq!(def["harness"], "claude-code");
    assert_eq!(def["format"], "claude-code");
    assert_eq!(def["command"][0], "claude");
    let cmd = catalog
        .make("command:my-agent --prompt-file {prompt_file}")
        .unwrap();
    let def = cmd.definition().unwrap();
    assert_eq!(def["format"], "text");
    assert_eq!(def["version"], Value::Null, "my-agent is not installed");
    // A price of the agents file applies to a harness that reports tokens but no cost.
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join("agents.toml");
    std::fs::write(
        &agents,
        "[prices.\"openai:gpt-5-codex\"]\ninput_per_mtok = 1.25\noutput_per_mtok = 10\n",
    )
    .unwrap();
    let priced = bureau_harness::catalog()
        .load_agents_file(&agents)
        .unwrap()
        .make("codex:gpt-5-codex")
        .unwrap();
    assert_eq!(
        priced.definition().unwrap()["price"]["input_per_mtok"],
        1.25
    );
    let err = bureau_agents::AgentCatalog::new()
        .make("codex")
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("third-party harness"), "{err}");
}
