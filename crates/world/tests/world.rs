//! The world end to end: seeds, tools (confinement, mail, calendar), task events, snapshots.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::{Value, json};

const USER: &str = "dana@northwind.test";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A two-turn task with files, mail and calendars, and events on turn 2.
fn task(dir: &Path) -> Task {
    write(
        &dir.join("task.toml"),
        r#"
id = "t"
title = "T"
persona = "ops manager"
category = "admin"
difficulty = "easy"
apps = ["files", "mail", "calendar"]
timezone = "Europe/Berlin"
[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[turn]]
at = 2026-03-03T09:00:00
prompt = "Day two: Sam sent the revised budget."
[[turn.event]]
kind = "deliver_mail"
silent = false
from = "budget.eml"
[[turn.event]]
kind = "replace_file"
silent = true
path = "data/figures.csv"
from = "figures.csv"
[[turn.event]]
kind = "update_calendar_event"
silent = true
uid = "standup-1"
start = 2026-03-03T11:00:00
end = 2026-03-03T11:30:00
[[turn.event]]
kind = "add_calendar_event"
silent = false
user = "sam@northwind.test"
uid = "sam-dentist"
summary = "Dentist"
start = 2026-03-04T14:00:00
end = 2026-03-04T15:00:00

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    );
    write(
        &dir.join("world/files/data/figures.csv"),
        "region,total\nnorth,11917\n",
    );
    write(
        &dir.join("world/files/readme.md"),
        "# Readme\nhello world\n",
    );
    write(
        &dir.join("world/mail/dana@northwind.test/welcome.eml"),
        "From: Sam Okafor <sam@northwind.test>\r\nTo: Dana Reyes <dana@northwind.test>\r\nCc: lee@northwind.test\r\nSubject: Welcome\r\nDate: Mon, 02 Mar 2026 08:00:00 +0100\r\nMessage-ID: <w1@northwind.test>\r\n\r\nWelcome aboard.\r\n",
    );
    write(
        &dir.join("world/mail/sam@northwind.test/Archive/old.eml"),
        "From: dana@northwind.test\r\nTo: sam@northwind.test\r\nSubject: Old\r\nDate: Mon, 23 Feb 2026 08:00:00 +0100\r\nMessage-ID: <o1@northwind.test>\r\n\r\nOld mail.\r\n",
    );
    write(
        &dir.join("world/calendar/dana@northwind.test.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:standup-1\r\nSUMMARY:Standup\r\nDTSTART;TZID=Europe/Berlin:20260303T100000\r\nDTEND;TZID=Europe/Berlin:20260303T103000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    );
    write(
        &dir.join("world/calendar/sam@northwind.test.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\nBEGIN:VEVENT\r\nUID:sam-review\r\nSUMMARY:Review\r\nDTSTART:20260304T080000Z\r\nDTEND:20260304T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    );
    write(
        &dir.join("turns/2/budget.eml"),
        "From: Sam Okafor <sam@northwind.test>\r\nTo: dana@northwind.test\r\nSubject: Revised budget\r\nDate: Tue, 03 Mar 2026 08:30:00 +0100\r\nMessage-ID: <b2@northwind.test>\r\n\r\nThe total is now 12,400.\r\n",
    );
    write(
        &dir.join("turns/2/figures.csv"),
        "region,total\nnorth,12400\n",
    );
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn setup() -> (tempfile::TempDir, Task, World) {
    let d = tempfile::tempdir().unwrap();
    let t = task(&d.path().join("task"));
    let w = World::build(&t, &d.path().join("trial")).unwrap();
    (d, t, w)
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => value,
        ToolOutcome::Error { message } => panic!("{tool} failed: {message}"),
    }
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => panic!("{tool} should fail, got {value}"),
        ToolOutcome::Error { message } => message,
    }
}

#[test]
fn seeds_build_the_office() {
    let (_d, _t, w) = setup();
    assert!(w.files().exists("data/figures.csv"));
    assert_eq!(w.mail().messages(USER, Some("INBOX")).len(), 1);
    assert_eq!(
        w.mail()
            .messages("sam@northwind.test", Some("Archive"))
            .len(),
        1
    );
    let ev = w.calendar().events(USER);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].start.to_rfc3339(), "2026-03-03T09:00:00+00:00");
    assert!(
        w.log()
            .iter()
            .all(|e| e.actor == Actor::Task && e.turn == 0)
    );
}

#[test]
fn every_path_taking_tool_is_confined_to_the_workspace() {
    let (d, _t, mut w) = setup();
    let outside = d.path().join("outside.txt");
    std::fs::write(&outside, "secret").unwrap();
    std::os::unix::fs::symlink(d.path(), w.workspace().join("escape")).unwrap();
    let before = w.log().len();
    for bad in [
        "../outside.txt",
        "/etc/passwd",
        "escape/outside.txt",
        "data/../../outside.txt",
    ] {
        let cases = [
            ("files_read", json!({"path": bad})),
            ("files_write", json!({"path": bad, "content": "x"})),
            (
                "files_edit",
                json!({"path": bad, "old": "secret", "new": "x"}),
            ),
            ("files_move", json!({"from": bad, "to": "stolen.txt"})),
            ("files_move", json!({"from": "readme.md", "to": bad})),
            ("files_delete", json!({"path": bad})),
            ("files_list", json!({"path": bad})),
            ("files_search", json!({"query": "secret", "path": bad})),
            (
                "mail_send",
                json!({"to": ["sam@northwind.test"], "subject": "s", "body": "b", "attachments": [bad]}),
            ),
            (
                "mail_save_attachment",
                json!({"id": "m00001", "filename": "x", "path": bad}),
            ),
        ];
        for (tool, args) in cases {
            let msg = err(&mut w, tool, args);
            assert!(!msg.is_empty(), "{tool} {bad}");
        }
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
    assert!(!w.workspace().join("stolen.txt").exists());
    assert_eq!(w.log().len(), before, "refused calls change nothing");
    // A search over the whole workspace does not follow the symlink out.
    let r = ok(&mut w, "files_search", json!({"query": "secret"}));
    assert_eq!(r["matches"].as_array().unwrap().len(), 0);
}

#[test]
fn file_tools_work_and_are_logged() {
    let (_d, _t, mut w) = setup();
    let r = ok(
        &mut w,
        "files_write",
        json!({"path": "out/notes.md", "content": "Total: 11,917\nline two\n"}),
    );
    assert_eq!(r["created"], true);
    assert_eq!(
        ok(&mut w, "files_read", json!({"path": "out/notes.md"}))["text"],
        "Total: 11,917\nline two\n"
    );
    assert!(
        err(
            &mut w,
            "files_edit",
            json!({"path": "out/notes.md", "old": "absent", "new": "x"})
        )
        .contains("does not occur")
    );
    ok(
        &mut w,
        "files_edit",
        json!({"path": "out/notes.md", "old": "line two", "new": "line 2"}),
    );
    let s = ok(&mut w, "files_search", json!({"query": "LINE 2"}));
    assert_eq!(s["matches"][0]["path"], "out/notes.md");
    assert_eq!(s["matches"][0]["line"], 2);
    let s = ok(
        &mut w,
        "files_search",
        json!({"query": "^Total: \\d", "regex": true}),
    );
    assert_eq!(s["matches"].as_array().unwrap().len(), 1);
    ok(
        &mut w,
        "files_move",
        json!({"from": "out/notes.md", "to": "notes.md"}),
    );
    assert!(err(&mut w, "files_delete", json!({"path": "data"})).contains("recursive"));
    ok(
        &mut w,
        "files_delete",
        json!({"path": "data", "recursive": true}),
    );
    let names: Vec<String> = w.files().all_files().into_iter().map(|f| f.path).collect();
    assert_eq!(names, vec!["notes.md", "readme.md"]);
    let agent: Vec<&str> = w
        .log()
        .iter()
        .filter(|e| e.actor == Actor::Agent)
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(agent, vec!["create", "edit", "move", "delete"]);
    assert!(
        err(
            &mut w,
            "files_write",
            json!({"path": "a", "content": "x", "mode": 7})
        )
        .contains("unknown field")
    );
    assert!(err(&mut w, "files_nope", json!({})).contains("unknown tool"));
    // binary
    std::fs::write(w.workspace().join("b.bin"), [0u8, 159, 146, 150]).unwrap();
    assert_eq!(
        ok(&mut w, "files_read", json!({"path": "b.bin"}))["binary"],
        true
    );
}

#[test]
fn mail_send_reply_forward_deliver_and_cannot_spoof() {
    let (_d, _t, mut w) = setup();
    ok(
        &mut w,
        "files_write",
        json!({"path": "report.csv", "content": "a,b\n1,2\n"}),
    );
    // No `from` argument exists: the agent cannot send as someone else.
    assert!(err(&mut w, "mail_send", json!({"to": ["sam@northwind.test"], "from": "ceo@northwind.test", "subject": "s", "body": "b"})).contains("unknown field"));
    let sent = ok(
        &mut w,
        "mail_send",
        json!({"to": ["Sam <sam@northwind.test>"], "bcc": ["boss@elsewhere.test"], "subject": "Report", "body": "Attached.", "attachments": ["report.csv"]}),
    );
    let id = sent["id"].as_str().unwrap();
    let mine = w.mail().get(id).unwrap();
    assert_eq!(mine.folder, "Sent");
    assert_eq!(mine.from_email(), Some(USER));
    assert_eq!(mine.mail.bcc[0].email, "boss@elsewhere.test");
    assert_eq!(mine.mail.attachments[0].filename, "report.csv");
    assert_eq!(
        mine.mail.date.unwrap().to_rfc3339(),
        "2026-03-02T09:00:00+01:00"
    );
    let sams = w.mail().messages("sam@northwind.test", Some("INBOX"));
    assert_eq!(sams.len(), 1);
    assert!(sams[0].mail.bcc.is_empty(), "recipients never see Bcc");
    assert!(!sams[0].raw.contains("boss@elsewhere.test"));

    let inbox = ok(&mut w, "mail_list", json!({}));
    let welcome = inbox["messages"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(inbox["messages"][0]["seen"], false);
    let read = ok(&mut w, "mail_read", json!({"id": welcome}));
    assert_eq!(read["subject"], "Welcome");
    assert_eq!(
        ok(&mut w, "mail_list", json!({"unread_only": true}))["messages"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let r = ok(
        &mut w,
        "mail_reply",
        json!({"id": welcome, "body": "Thanks!", "reply_all": true}),
    );
    let reply = w.mail().get(r["id"].as_str().unwrap()).unwrap();
    assert_eq!(reply.mail.subject, "Re: Welcome");
    assert_eq!(reply.mail.to[0].email, "sam@northwind.test");
    assert_eq!(reply.mail.cc[0].email, "lee@northwind.test");
    assert_eq!(reply.mail.in_reply_to.as_deref(), Some("w1@northwind.test"));
    let f = ok(
        &mut w,
        "mail_forward",
        json!({"id": welcome, "to": ["lee@northwind.test"], "body": "FYI"}),
    );
    let fwd = w.mail().get(f["id"].as_str().unwrap()).unwrap();
    assert_eq!(fwd.mail.subject, "Fwd: Welcome");
    assert!(fwd.mail.text.contains("FYI") && fwd.mail.text.contains("Welcome aboard."));
    // Another user's messages are out of reach.
    let sam_msg = w.mail().messages("sam@northwind.test", Some("Archive"))[0]
        .id
        .clone();
    assert!(err(&mut w, "mail_read", json!({"id": sam_msg})).contains("no message"));
    ok(
        &mut w,
        "mail_move",
        json!({"id": welcome, "folder": "Done"}),
    );
    assert!(
        ok(&mut w, "mail_folders", json!({}))["folders"]
            .as_array()
            .unwrap()
            .contains(&json!("Done"))
    );
    assert_eq!(
        ok(&mut w, "mail_search", json!({"query": "aboard"}))["messages"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Save an attachment from the sent message into the workspace.
    ok(
        &mut w,
        "mail_save_attachment",
        json!({"id": id, "filename": "report.csv", "path": "copy.csv"}),
    );
    assert_eq!(w.files().read_text("copy.csv").unwrap(), "a,b\n1,2\n");
}

#[test]
fn calendar_tools_invite_update_delete_and_find_free_slots() {
    let (_d, _t, mut w) = setup();
    let c = ok(
        &mut w,
        "calendar_create",
        json!({"summary": "Budget review", "start": "2026-03-04T10:00", "end": "2026-03-04T11:00", "attendees": ["sam@northwind.test", "ext@partner.test"]}),
    );
    let uid = c["uid"].as_str().unwrap().to_string();
    assert_eq!(uid, "evt-1@bureau");
    // Sam has a calendar in the world: he gets a copy.
    assert!(w.calendar().get("sam@northwind.test", &uid).is_some());
    let l = ok(
        &mut w,
        "calendar_list",
        json!({"from": "2026-03-04T00:00", "to": "2026-03-05T00:00"}),
    );
    assert_eq!(l["events"][0]["start"], "2026-03-04T10:00:00+01:00");
    ok(
        &mut w,
        "calendar_update",
        json!({"uid": uid, "start": "2026-03-04T15:00", "end": "2026-03-04T16:00"}),
    );
    assert_eq!(
        w.calendar()
            .get("sam@northwind.test", &uid)
            .unwrap()
            .start
            .to_rfc3339(),
        "2026-03-04T14:00:00+00:00"
    );
    assert!(
        err(
            &mut w,
            "calendar_create",
            json!({"summary": "x", "start": "2026-03-04T10:00", "end": "2026-03-04T09:00"})
        )
        .contains("after")
    );
    // Free slots on 4 March for Dana and Sam: Sam's review 09:00–11:00 local, the new meeting 15:00–16:00.
    let s = ok(
        &mut w,
        "calendar_free_slots",
        json!({"from": "2026-03-04T00:00", "to": "2026-03-05T00:00", "duration_minutes": 60, "attendees": ["sam@northwind.test"]}),
    );
    let slots: Vec<(String, String)> = s["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["start"].as_str().unwrap().to_string(),
                x["end"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        slots,
        vec![
            (
                "2026-03-04T11:00:00+01:00".to_string(),
                "2026-03-04T15:00:00+01:00".to_string()
            ),
            (
                "2026-03-04T16:00:00+01:00".to_string(),
                "2026-03-04T17:00:00+01:00".to_string()
            ),
        ]
    );
    ok(&mut w, "calendar_delete", json!({"uid": uid}));
    assert!(w.calendar().get(USER, &uid).is_none());
    assert_eq!(
        w.calendar().get("sam@northwind.test", &uid).unwrap().status,
        "CANCELLED"
    );
    // A weekend has no slots.
    let s = ok(
        &mut w,
        "calendar_free_slots",
        json!({"from": "2026-03-07T00:00", "to": "2026-03-09T00:00", "duration_minutes": 30}),
    );
    assert_eq!(s["slots"].as_array().unwrap().len(), 0);
}

#[test]
fn loud_and_silent_events_change_the_world_and_are_logged_as_such() {
    let (_d, t, mut w) = setup();
    w.begin_turn(&t.turns[0]).unwrap();
    assert_eq!(w.turn(), 1);
    w.begin_turn(&t.turns[1]).unwrap();
    assert_eq!(w.now().to_rfc3339(), "2026-03-03T09:00:00+01:00");
    assert_eq!(
        w.files().read_text("data/figures.csv").unwrap(),
        "region,total\nnorth,12400\n"
    );
    assert_eq!(w.mail().messages(USER, Some("INBOX")).len(), 2);
    assert_eq!(
        w.calendar()
            .get(USER, "standup-1")
            .unwrap()
            .start
            .to_rfc3339(),
        "2026-03-03T10:00:00+00:00"
    );
    assert!(
        w.calendar()
            .get("sam@northwind.test", "sam-dentist")
            .is_some()
    );
    let turn2: Vec<(String, bool)> = w
        .log()
        .iter()
        .filter(|e| e.turn == 2)
        .map(|e| (format!("{}.{}", e.service, e.action), e.silent))
        .collect();
    assert_eq!(
        turn2,
        vec![
            ("mail.deliver".to_string(), false),
            ("files.replace".to_string(), true),
            ("calendar.update".to_string(), true),
            ("calendar.create".to_string(), false),
        ]
    );
    assert!(
        w.log()
            .iter()
            .filter(|e| e.turn == 2)
            .all(|e| e.actor == Actor::Task)
    );
}

#[test]
fn snapshot_and_restore_are_exact() {
    let (_d, t, mut w) = setup();
    w.begin_turn(&t.turns[0]).unwrap();
    ok(
        &mut w,
        "files_write",
        json!({"path": "a/b/c.txt", "content": "one"}),
    );
    let snap = w.snapshot().unwrap();
    let json1 = serde_json::to_string(&snap).unwrap();
    // Change everything: files (same size, same mtime edit), dirs, permissions, symlinks, hard links, services.
    let p = w.workspace().join("a/b/c.txt");
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    std::fs::write(&p, "two").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        w.workspace().join("readme.md"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::create_dir_all(w.workspace().join("new/dir")).unwrap();
    std::os::unix::fs::symlink("readme.md", w.workspace().join("link")).unwrap();
    std::fs::hard_link(
        w.workspace().join("data/figures.csv"),
        w.workspace().join("hard.csv"),
    )
    .unwrap();
    ok(&mut w, "files_delete", json!({"path": "data/figures.csv"}));
    ok(
        &mut w,
        "mail_send",
        json!({"to": ["sam@northwind.test"], "subject": "s", "body": "b"}),
    );
    w.begin_turn(&t.turns[1]).ok();
    assert_ne!(
        serde_json::to_string(&w.snapshot().unwrap()).unwrap(),
        json1
    );
    w.restore(&snap).unwrap();
    let again = serde_json::to_string(&w.snapshot().unwrap()).unwrap();
    assert_eq!(again, json1);
    assert_eq!(w.files().read_text("a/b/c.txt").unwrap(), "one");
    assert!(!w.workspace().join("new").exists());
    assert!(!w.workspace().join("link").exists());
    assert_eq!(w.turn(), 1);
    assert!(
        w.mail()
            .messages("sam@northwind.test", Some("INBOX"))
            .is_empty()
    );
}

#[test]
fn changed_files_lists_created_modified_deleted() {
    let (_d, _t, mut w) = setup();
    ok(
        &mut w,
        "files_write",
        json!({"path": "new.md", "content": "n"}),
    );
    ok(
        &mut w,
        "files_edit",
        json!({"path": "readme.md", "old": "hello", "new": "hi"}),
    );
    ok(&mut w, "files_delete", json!({"path": "data/figures.csv"}));
    let c = w.changed_files().unwrap();
    assert_eq!(c.created, vec!["new.md"]);
    assert_eq!(c.modified, vec!["readme.md"]);
    assert_eq!(c.deleted, vec!["data/figures.csv"]);
}

#[test]
fn bad_seeds_are_clear_errors() {
    let d = tempfile::tempdir().unwrap();
    let t = task(&d.path().join("task"));
    write(
        &d.path().join("task/world/calendar/dana@northwind.test.ics"),
        "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:No uid\r\nDTSTART:20260303T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    );
    let e = World::build(&t, &d.path().join("trial"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("dana@northwind.test.ics"), "{e}");
    write(
        &d.path().join("task/world/calendar/dana@northwind.test.ics"),
        "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n",
    );
    write(
        &d.path().join("task/world/mail/notanaddress/x.eml"),
        "From: a@b.c\r\n\r\nx",
    );
    let e = World::build(&t, &d.path().join("trial2"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an email address"), "{e}");
    std::fs::remove_dir_all(d.path().join("task/world/mail/notanaddress")).unwrap();

    // Issue 14: a seeded message without a Date (or Message-ID) is refused, located, never
    // stored with `date: null`.
    let nodate = d
        .path()
        .join("task/world/mail/dana@northwind.test/nodate.eml");
    write(
        &nodate,
        "From: sam@northwind.test\r\nTo: dana@northwind.test\r\nMessage-ID: <n1@x>\r\nSubject: Hi\r\n\r\nx",
    );
    let e = World::build(&t, &d.path().join("trial3"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nodate.eml") && e.contains("no Date header"),
        "{e}"
    );
    write(
        &nodate,
        "From: sam@northwind.test\r\nTo: dana@northwind.test\r\nDate: Mon, 02 Mar 2026 09:00:00 +0100\r\nSubject: Hi\r\n\r\nx",
    );
    let e = World::build(&t, &d.path().join("trial4"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("nodate.eml") && e.contains("no Message-ID"),
        "{e}"
    );
}

#[test]
fn tool_specs_have_schemas_and_valid_names() {
    let specs = World::tool_specs();
    assert!(specs.len() >= 23);
    for s in &specs {
        assert!(
            s.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{}",
            s.name
        );
        assert_eq!(s.input_schema["type"], "object");
        assert!(!s.description.is_empty());
    }
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn restore_from_another_worlds_blobs_and_refuse_hostile_snapshots() {
    let (d, t, mut w) = setup();
    w.begin_turn(&t.turns[0]).unwrap();
    ok(
        &mut w,
        "files_write",
        json!({"path": "out/r.md", "content": "result"}),
    );
    let snap = w.snapshot().unwrap();
    // A fresh world elsewhere takes the snapshot with the first world's blobs.
    let mut fresh = World::build(&t, &d.path().join("fresh")).unwrap();
    fresh.restore_from(&snap, &w.root().join("blobs")).unwrap();
    assert_eq!(fresh.files().read_text("out/r.md").unwrap(), "result");
    assert_eq!(
        serde_json::to_string(&fresh.snapshot().unwrap().files).unwrap(),
        serde_json::to_string(&snap.files).unwrap()
    );
    // A tampered snapshot cannot write outside the workspace or read outside the blob store.
    let mut evil = snap.clone();
    let rec = evil.files.values().next().unwrap().clone();
    evil.files.insert("../escaped.txt".into(), rec.clone());
    assert!(fresh.restore_from(&evil, &w.root().join("blobs")).is_err());
    assert!(!d.path().join("fresh/escaped.txt").exists());
    let mut evil = snap.clone();
    evil.files.insert(
        "x.txt".into(),
        bureau_world::FileRecord {
            hash: "../../etc/passwd".into(),
            ..rec
        },
    );
    assert!(fresh.restore_from(&evil, &w.root().join("blobs")).is_err());
}
