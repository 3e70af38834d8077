//! Small tasks written into temporary directories.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A two-turn task: day 1 write memo.md and mail Bob; day 2 (a loud event adds
/// notes/budget.txt) put the budget total into memo.md. Three rubric items (weights 1, 1, 2);
/// the solution passes them all.
pub fn write_memo_task(dir: &Path, id: &str) {
    write_memo_task_with(dir, id, 100, MEMO_SOLUTION_1);
}

pub const MEMO_SOLUTION_1: &str = concat!(
    r#"{"tool":"files_write","args":{"path":"memo.md","content":"The meeting moved to Friday.\n"}}"#,
    "\n",
    r#"{"tool":"mail_send","args":{"to":["bob@corp.test"],"subject":"The meeting moved","body":"It is on Friday now."}}"#,
    "\n",
);

pub fn write_memo_task_with(dir: &Path, id: &str, max_steps: u32, solution_1: &str) {
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::create_dir_all(dir.join("turns/2")).unwrap();
    std::fs::create_dir_all(dir.join("solution")).unwrap();
    std::fs::write(dir.join("world/files/readme.txt"), "Team folder.\n").unwrap();
    std::fs::write(dir.join("turns/2/budget.txt"), "Total: 12,500 EUR\n").unwrap();
    std::fs::write(
        dir.join("task.toml"),
        format!(
            r#"id = "{id}"
title = "Write the meeting memo"
persona = "office manager"
category = "documents"
difficulty = "easy"
apps = ["files", "mail"]
timezone = "Europe/Berlin"

[user]
name = "Ada Admin"
email = "ada@corp.test"

[limits]
max_steps = {max_steps}

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
file_contains = {{ path = "memo.md", all = ["Friday"] }}

[[rubric]]
id = "bob-told"
description = "Bob was mailed about the meeting"
turn = 1
kind = "process"
mail_sent = {{ to = ["bob@corp.test"], subject_contains = ["meeting"] }}

[[rubric]]
id = "budget-in-memo"
description = "memo.md has the budget total"
kind = "result"
weight = 2.0
file_contains = {{ path = "memo.md", all = ["12,500"] }}
"#
        ),
    )
    .unwrap();
    std::fs::write(dir.join("solution/1.jsonl"), solution_1).unwrap();
    std::fs::write(
        dir.join("solution/2.jsonl"),
        concat!(
            r#"{"tool":"files_read","args":{"path":"notes/budget.txt"}}"#,
            "\n",
            r#"{"tool":"files_edit","args":{"path":"memo.md","old":"Friday.\n","new":"Friday.\nBudget total: 12,500 EUR.\n"}}"#,
            "\n",
        ),
    )
    .unwrap();
}

/// A suite directory with one memo task per id.
pub fn write_suite(dir: &Path, ids: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("suite.toml"),
        "id = \"test-suite\"\ntitle = \"Test suite\"\n[subsets]\nlite = [\"a\"]\n",
    )
    .unwrap();
    for id in ids {
        write_memo_task(&dir.join(id), id);
    }
    dir.to_path_buf()
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
