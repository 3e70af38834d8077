//! `act` events (a colleague acts through a world tool) and the tools a task's apps offer.

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

const PEOPLE: &str = r#"
[[person]]
name = "Sam Ortiz"
email = "Sam@Northwind.test"
handle = "@sam"
role = "Analyst"
"#;

fn task(dir: &Path, apps: &str, event: &str) -> Task {
    write(
        &dir.join("task.toml"),
        &format!(
            r#"
id = "t"
title = "T"
persona = "ops"
category = "admin"
difficulty = "easy"
apps = {apps}
timezone = "Europe/Berlin"
[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[turn]]
at = 2026-03-03T09:00:00
prompt = "Day two."
[[turn.event]]
{event}

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#
        ),
    );
    write(&dir.join("world/people.toml"), PEOPLE);
    write(&dir.join("world/files/readme.md"), "hello");
    Task::load(dir).unwrap()
}

#[test]
fn a_colleague_acts_through_a_tool_with_their_identity_and_the_silent_flag() {
    let d = tempfile::tempdir().unwrap();
    let t = task(
        d.path(),
        r#"["files"]"#,
        "kind = \"act\"\nsilent = true\nas = \"sam\"\ntool = \"files_write\"\nargs = { path = \"notes.md\", content = \"from Sam\" }",
    );
    let mut w = World::build(&t, &d.path().join("w")).unwrap();
    w.begin_turn(&t.turns[0]).unwrap();
    w.begin_turn(&t.turns[1]).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.workspace().join("notes.md")).unwrap(),
        "from Sam"
    );
    let last = w.log().last().unwrap();
    assert_eq!(last.actor, Actor::Colleague("sam@northwind.test".into()));
    assert!(last.silent, "a silent act event logs silently");
    assert_eq!(last.turn, 2);
    assert_eq!(
        w.acting_email(&Actor::Colleague("@SAM".into())).unwrap(),
        "sam@northwind.test"
    );
}

#[test]
fn an_act_event_by_a_stranger_or_a_failing_tool_is_a_world_error() {
    let d = tempfile::tempdir().unwrap();
    let t = task(
        d.path(),
        r#"["files"]"#,
        "kind = \"act\"\nsilent = false\nas = \"nobody\"\ntool = \"files_write\"\nargs = { path = \"notes.md\", content = \"x\" }",
    );
    let mut w = World::build(&t, &d.path().join("w")).unwrap();
    w.begin_turn(&t.turns[0]).unwrap();
    let e = w.begin_turn(&t.turns[1]).unwrap_err().to_string();
    assert!(
        e.contains("`nobody` is not a person of world/people.toml"),
        "{e}"
    );

    let d = tempfile::tempdir().unwrap();
    let t = task(
        d.path(),
        r#"["files"]"#,
        "kind = \"act\"\nsilent = false\nas = \"sam@northwind.test\"\ntool = \"files_read\"\nargs = { path = \"missing.md\" }",
    );
    let mut w = World::build(&t, &d.path().join("w")).unwrap();
    w.begin_turn(&t.turns[0]).unwrap();
    let e = w.begin_turn(&t.turns[1]).unwrap_err().to_string();
    assert!(e.contains("`files_read` failed"), "{e}");
    assert!(e.contains("turn 2, event `act`"), "{e}");
}

#[test]
fn the_agent_is_offered_only_the_tools_of_the_tasks_apps() {
    let d = tempfile::tempdir().unwrap();
    let t = task(
        d.path(),
        r#"["files", "mail"]"#,
        "kind = \"delete_file\"\nsilent = false\npath = \"readme.md\"",
    );
    let mut w = World::build(&t, &d.path().join("w")).unwrap();
    let names: Vec<String> = w.offered_tool_specs().into_iter().map(|s| s.name).collect();
    assert!(names.iter().any(|n| n == "files_read"));
    assert!(names.iter().any(|n| n == "mail_send"));
    assert!(
        !names.iter().any(|n| n.starts_with("calendar_")),
        "{names:?}"
    );
    assert!(names.len() < World::tool_specs().len());
    match w.call_tool(Actor::Agent, "calendar_list", &json!({})) {
        ToolOutcome::Error { message } => assert!(message.contains("not available"), "{message}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A task without `apps` offers everything but OCR, which only a task that declares the
    // `ocr` app gets.
    let all: Vec<String> = World::tool_specs().into_iter().map(|s| s.name).collect();
    let offered: Vec<String> = World::tool_specs_for(&[])
        .into_iter()
        .map(|s| s.name)
        .collect();
    let missing: Vec<&String> = all.iter().filter(|n| !offered.contains(n)).collect();
    assert_eq!(missing, ["files_ocr"]);
    assert!(
        World::tool_specs_for(&["ocr".to_string()])
            .iter()
            .any(|s| s.name == "files_ocr")
    );
}

#[test]
fn a_roster_with_a_duplicate_handle_is_a_seed_error() {
    let d = tempfile::tempdir().unwrap();
    let t = task(
        d.path(),
        r#"["files"]"#,
        "kind = \"delete_file\"\nsilent = false\npath = \"readme.md\"",
    );
    write(
        &d.path().join("world/people.toml"),
        &format!(
            "{PEOPLE}\n[[person]]\nname = \"Sam Two\"\nemail = \"sam2@northwind.test\"\nhandle = \"sam\"\n"
        ),
    );
    let e = World::build(&t, &d.path().join("w"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("handle `sam` is used by both"), "{e}");
    assert!(e.contains("people.toml"), "{e}");
}
