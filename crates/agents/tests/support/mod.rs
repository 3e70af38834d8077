//! Test support for the `llm` agent: a fake model API ([`fake`]), scripted answers
//! ([`script`]), small tasks, and a runner that plays them through Bureau's real run loop.
#![allow(dead_code)]

pub mod fake;
pub mod script;

use std::path::{Path, PathBuf};

use bureau_agents::AgentCatalog;
use bureau_core::result::TrialResult;
use bureau_core::trajectory::Step;
use bureau_run::{RunConfig, RunOutcome, run_with, trial_dir};

/// The API key the tests use; it must never reach a file.
pub const SECRET: &str = "sk-bureau-test-7f3a9c1e-SECRET";

/// The environment variable the tests' agents files name for the key.
pub const KEY_ENV: &str = "BUREAU_TEST_KEY";

/// A two-turn task: day 1 write memo.md and mail Bob; day 2 (a loud event adds
/// notes/budget.txt) put the budget total into memo.md. Three rubric items.
pub fn write_memo_task(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::create_dir_all(dir.join("turns/2")).unwrap();
    std::fs::write(dir.join("world/files/readme.txt"), "Team folder.\n").unwrap();
    std::fs::write(dir.join("turns/2/budget.txt"), "Total: 12,500 EUR\n").unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"id = "memo"
title = "Write the meeting memo"
persona = "office manager"
category = "documents"
difficulty = "easy"
apps = ["files", "mail"]
timezone = "Europe/Berlin"

[user]
name = "Ada Admin"
email = "ada@corp.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Write memo.md saying the meeting moved to Friday, and tell bob@corp.test."

[[turn]]
at = "2026-03-03T09:00:00"
prompt = "Budget notes arrived in notes/budget.txt; add the budget total to memo.md."
[[turn.event]]
kind = "add_file"
silent = false
path = "notes/budget.txt"
from = "budget.txt"

[[rubric]]
id = "memo-written"
description = "memo.md says Friday after day 1"
turn = 1
kind = "result"
file_contains = { path = "memo.md", all = ["Friday"] }

[[rubric]]
id = "bob-told"
description = "Bob was mailed about the meeting"
turn = 1
kind = "process"
mail_sent = { to = ["bob@corp.test"], subject_contains = ["meeting"] }

[[rubric]]
id = "budget-in-memo"
description = "memo.md has the budget total"
kind = "result"
weight = 2.0
file_contains = { path = "memo.md", all = ["12,500"] }
"#,
    )
    .unwrap();
    dir.to_path_buf()
}

/// A one-turn task with `turns` turns of the same prompt: write hello.txt containing "hi".
/// Its limits are `max_steps` tool calls and `wall_seconds` per turn; `big` bytes of text
/// are in big.txt.
pub fn write_hello_task(dir: &Path, turns: u32, max_steps: u32, wall_seconds: u64) -> PathBuf {
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::write(
        dir.join("world/files/big.txt"),
        "All work and no play. ".repeat(5000),
    )
    .unwrap();
    let mut toml = format!(
        r#"id = "hello"
title = "Say hello"
persona = "tester"
category = "files"
difficulty = "easy"
apps = ["files"]

[user]
name = "Ada Admin"
email = "ada@corp.test"

[limits]
max_steps = {max_steps}
wall_seconds = {wall_seconds}
"#
    );
    for day in 0..turns {
        toml.push_str(&format!(
            "\n[[turn]]\nat = \"2026-03-0{}T09:00:00\"\nprompt = \"Write hello.txt containing hi.\"\n",
            day + 2
        ));
    }
    toml.push_str(
        r#"
[[rubric]]
id = "hello"
description = "hello.txt says hi"
kind = "result"
file_contains = { path = "hello.txt", all = ["hi"] }
"#,
    );
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    dir.to_path_buf()
}

/// Write `agents.toml` (with `{base}` replaced by each server's base URL, in order of
/// `bases`) into `dir`.
pub fn write_agents_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("agents.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A catalog over `agents_file` whose environment holds only the test key.
pub fn catalog(agents_file: &Path) -> AgentCatalog {
    AgentCatalog::new()
        .load_agents_file(agents_file)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_env(|k| (k == KEY_ENV).then(|| SECRET.to_string()))
}

/// Run `task` with `agents` (names of `catalog`) through Bureau's run loop into `out`.
pub fn run(task: &Path, agents: &[&str], catalog: &AgentCatalog, out: &Path) -> RunOutcome {
    let mut config = RunConfig::new(
        vec![task.display().to_string()],
        agents.iter().map(|s| s.to_string()).collect(),
        out.to_path_buf(),
    );
    config.quiet = true;
    config.retries = 0;
    run_with(&config, &|spec| catalog.make(spec)).unwrap_or_else(|e| panic!("{e}"))
}

pub fn result(out: &Path, task: &str, agent: &str) -> TrialResult {
    let path = trial_dir(out, task, agent, 1).join("result.json");
    serde_json::from_str(&read(&path)).unwrap()
}

pub fn trajectory(out: &Path, task: &str, agent: &str) -> Vec<Step> {
    let path = trial_dir(out, task, agent, 1).join("trajectory.jsonl");
    read(&path)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` whose bytes contain `needle`.
pub fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                    found.push(p);
                }
            }
        }
    }
    found
}

/// Number of files under `dir`.
pub fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                n += 1;
            }
        }
    }
    n
}
