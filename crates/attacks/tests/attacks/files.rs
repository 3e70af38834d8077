//! Attacks: files. An agent making paths that escape the workspace or hang their reader (a
//! FIFO), and Bureau's own code blocking past the turn's wall-clock limit. See
//! docs/security.md.
//!
//! Calls that could hang run on a helper thread with a bounded wait, so a hang fails the test
//! instead of hanging the suite.

use std::ffi::CString;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};
use bureau_core::log::Actor;
use bureau_core::result::TrialStatus;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_run::{AttemptOf, Scoring, run_attempt};
use serde_json::json;

use crate::documents::{bounded, world_with};

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

fn error_of(outcome: ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Error { message } => message,
        ToolOutcome::Ok { value, .. } => panic!("expected a refusal, got {value}"),
    }
}

#[test]
fn files_read_of_a_fifo_is_refused_without_blocking() {
    let out = bounded(Duration::from_secs(20), "files_read of a FIFO", || {
        let (d, mut w) = world_with(&[]);
        mkfifo(&w.workspace().join("answer.md"));
        let read = w.call_tool(Actor::Agent, "files_read", &json!({"path": "answer.md"}));
        let search = w.call_tool(
            Actor::Agent,
            "files_search",
            &json!({"query": "notes", "path": ""}),
        );
        let listed = w.call_tool(Actor::Agent, "files_list", &json!({"path": ""}));
        drop(d);
        (read, search, listed)
    });
    let msg = error_of(out.0);
    assert_eq!(
        msg,
        "`answer.md` cannot be read: it is a FIFO (named pipe), not a regular file; only regular files can be read"
    );
    // files_search skips it and still finds the real file.
    match out.1 {
        ToolOutcome::Ok { value, .. } => assert!(value.to_string().contains("notes.md"), "{value}"),
        ToolOutcome::Error { message } => panic!("files_search failed: {message}"),
    }
    // files_list shows it for what it is.
    match out.2 {
        ToolOutcome::Ok { value, .. } => {
            let s = value.to_string();
            assert!(s.contains("answer.md") && s.contains("special"), "{s}");
        }
        ToolOutcome::Error { message } => panic!("files_list failed: {message}"),
    }
}

#[test]
fn the_end_of_turn_snapshot_records_a_fifo_without_opening_it() {
    let (snap, changed, text) = bounded(Duration::from_secs(20), "snapshot with a FIFO", || {
        let (d, w) = world_with(&[]);
        mkfifo(&w.workspace().join("answer.md"));
        let snap = w.snapshot().map_err(|e| e.to_string());
        let changed = w.changed_files().map_err(|e| e.to_string());
        let text = w.files().read_text("answer.md");
        drop(d);
        (snap, changed, text)
    });
    let snap = snap.unwrap();
    assert!(!snap.files.contains_key("answer.md"));
    assert_eq!(
        snap.specials.get("answer.md").map(String::as_str),
        Some("a FIFO (named pipe)")
    );
    let changed = changed.unwrap();
    assert!(
        !changed.created.iter().any(|p| p == "answer.md"),
        "{changed:?}"
    );
    // The check readers (`w.files.text`, `docx()`, ...) go through the same refusal.
    assert!(text.unwrap_err().contains("FIFO"));
}

/// An agent that reproduces Bureau's own code blocking while it holds the world (as reading a
/// FIFO did): a thread takes the world and never lets go; then the agent calls a tool.
struct Blocker;

impl Agent for Blocker {
    fn name(&self) -> String {
        "blocker".into()
    }

    fn start_trial(&mut self, _task: &Task) -> Result<(), AgentError> {
        Ok(())
    }

    fn run_turn(
        &mut self,
        _turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        let world = tools.world().clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _held = world.lock();
            let _ = tx.send(());
            loop {
                std::thread::park();
            }
        });
        let _ = rx.recv();
        let r = tools.call("files_list", json!({"path": ""}));
        Ok(TurnOutput {
            final_message: Some(format!("{r:?}")),
        })
    }
}

#[test]
fn a_tool_call_that_blocks_cannot_hold_the_trial_past_wall_seconds() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"
id = "blocker"
title = "Blocker"
persona = "ops manager"
category = "admin"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Berlin"
[user]
name = "Dana Reyes"
email = "dana@northwind.test"
[limits]
wall_seconds = 2

[[turn]]
at = 2026-03-02T09:00:00
prompt = "List the files."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    )
    .unwrap();
    std::fs::write(dir.join("world/files/notes.md"), "notes\n").unwrap();
    let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let trial = d.path().join("trial");
    std::fs::create_dir_all(&trial).unwrap();
    let started = Instant::now();
    let outcome = bounded(Duration::from_secs(60), "the trial", move || {
        let scoring = Scoring {
            limits: Default::default(),
            judge: None,
            feedback: Default::default(),
            colleagues: None,
            context: Default::default(),
            replicas: None,
            embedder: None,
            rate_limits: None,
            scratch: false,
            trees: None,
        };
        let factory = |_: &str| -> Result<Box<dyn Agent>, AgentError> { Ok(Box::new(Blocker)) };
        let o = run_attempt(
            &task,
            None,
            &factory,
            AttemptOf {
                spec: "blocker",
                agent: "blocker",
                epoch: 1,
            },
            &trial,
            &scoring,
        );
        (o.status, o.error)
    });
    // 2 s of turn plus 1 s of grace, and some slack for a loaded machine.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.0, TrialStatus::Error);
    let error = outcome.1.unwrap_or_default();
    assert_eq!(
        error,
        "turn 1: the tool call `files_list` blocked past the turn's wall_seconds limit of 2 s (plus 1 s of grace) and was abandoned"
    );
}

// ---- held: these refusals already held before issue 11; they must keep holding ----

#[test]
fn held_paths_escaping_the_workspace_are_refused() {
    let (_d, mut w) = world_with(&[]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "the answer key").unwrap();
    std::os::unix::fs::symlink(outside.path(), w.workspace().join("link")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        w.workspace().join("secret.md"),
    )
    .unwrap();
    let mut read = |p: &str| error_of(w.call_tool(Actor::Agent, "files_read", &json!({"path": p})));
    assert_eq!(
        read("../task/task.toml"),
        "`../task/task.toml` uses `..`; paths must stay inside the workspace"
    );
    assert_eq!(
        read("/etc/passwd"),
        "`/etc/passwd` is an absolute path; give a path relative to the workspace"
    );
    assert_eq!(
        read("link/secret.txt"),
        "`link/secret.txt` leads outside the workspace through a symbolic link; only paths inside the workspace can be used"
    );
    assert_eq!(
        read("secret.md"),
        "`secret.md` leads outside the workspace through a symbolic link; only paths inside the workspace can be used"
    );
    // Writing through the link is refused too, and nothing appears outside.
    let write = w.call_tool(
        Actor::Agent,
        "files_write",
        &json!({"path": "link/planted.txt", "content": "x"}),
    );
    assert!(error_of(write).contains("leads outside the workspace"));
    assert!(!outside.path().join("planted.txt").exists());
}

/// A world with a channel the user is in and a knowledge-base page, for the attacks on the
/// files messages and pages carry.
fn chat_and_kb_world() -> (tempfile::TempDir, bureau_world::World) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    let put = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    put(
        "task.toml",
        r#"
id = "attack"
title = "Attack"
persona = "ops manager"
category = "admin"
difficulty = "easy"
apps = ["files", "chat", "kb"]
[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Post the notes."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    );
    put(
        "world/chat/channels.json",
        r#"[{"name": "ops", "members": ["dana"]}]"#,
    );
    put("world/kb/pages/Ops.md", "# Ops\n");
    let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let w = bureau_world::World::build(&task, &d.path().join("trial")).unwrap();
    (d, w)
}

#[test]
fn posting_or_attaching_a_fifo_or_a_file_outside_is_refused_without_blocking() {
    let out = bounded(
        Duration::from_secs(20),
        "chat_post / kb_attach of a FIFO",
        || {
            let (d, mut w) = chat_and_kb_world();
            mkfifo(&w.workspace().join("pipe.png"));
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("secret.txt"), "the answer key").unwrap();
            std::os::unix::fs::symlink(
                outside.path().join("secret.txt"),
                w.workspace().join("secret.txt"),
            )
            .unwrap();
            let mut call = |tool: &str, args: serde_json::Value| {
                error_of(w.call_tool(Actor::Agent, tool, &args))
            };
            let post = |f: &str| json!({"channel": "ops", "text": "x", "files": [f]});
            let msgs = [
                call("chat_post", post("pipe.png")),
                call("kb_attach", json!({"page": "Ops", "path": "pipe.png"})),
                call("chat_post", post("secret.txt")),
                call("kb_attach", json!({"page": "Ops", "path": "secret.txt"})),
                call("chat_post", post("/etc/passwd")),
            ];
            let untouched = w.chat().messages().is_empty()
                && w.kb().pages().iter().all(|p| p.attachments.is_empty());
            drop(d);
            (msgs, untouched)
        },
    );
    let (msgs, untouched) = out;
    assert!(
        msgs[0].contains("it is a FIFO (named pipe), not a regular file"),
        "{}",
        msgs[0]
    );
    assert!(msgs[1].contains("it is a FIFO"), "{}", msgs[1]);
    for m in &msgs[2..4] {
        assert!(m.contains("leads outside the workspace"), "{m}");
    }
    assert!(msgs[4].contains("is an absolute path"), "{}", msgs[4]);
    assert!(
        untouched,
        "a refused call changed the chat or the knowledge base"
    );
}
