//! A world built under a relative root (the README's default `--out runs/<stamp>` is
//! relative) must host code: git ran with a relative `--git-dir` inside another directory and
//! failed with `fatal: Invalid path`. This binary holds one test because it changes the
//! process's working directory.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::json;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_world_under_a_relative_root_hosts_code() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("task");
    write(
        &dir.join("task.toml"),
        r#"
id = "rel"
title = "Relative"
persona = "engineer"
category = "engineering"
difficulty = "easy"
apps = ["files", "code"]
timezone = "UTC"
[user]
name = "Lena Vos"
email = "lena.vos@corp.test"

[[turn]]
at = 2026-03-09T09:00:00
prompt = "Day one."

[[rubric]]
id = "x"
description = "x"
kind = "result"
merge_request = { repo = "fw", state = "merged" }
"#,
    );
    write(
        &dir.join("world/people.toml"),
        "[[person]]\nname = \"Karim Haddad\"\nemail = \"karim@corp.test\"\nhandle = \"karim\"\n",
    );
    write(&dir.join("world/code/fw/README.md"), "# Firmware\n");
    write(
        &dir.join("world/code/fw.toml"),
        "description = \"Firmware\"\nowner = \"karim\"\n",
    );
    let task = Task::load(&dir).unwrap();
    std::env::set_current_dir(tmp.path()).unwrap();
    let mut w = World::build(&task, Path::new("runs/x/world")).unwrap();
    assert!(w.root().is_absolute(), "{}", w.root().display());
    for (tool, args) in [
        ("code_clone", json!({"repo": "fw"})),
        ("files_write", json!({"path": "fw/a.txt", "content": "a\n"})),
        ("code_commit", json!({"path": "fw", "message": "a"})),
        ("code_status", json!({"path": "fw"})),
    ] {
        if let ToolOutcome::Error { message } = w.call_tool(Actor::Agent, tool, &args) {
            panic!("{tool}: {message}");
        }
    }
}
