//! The generated forms: every property of every tool of an office that offers every tool;
//! refused forms cost no call; uploads write text through files_write.

mod common;

use common::{Person, shape, tool_calls};
use serde_json::{Value, json};

/// A task whose office offers every tool (`apps = []`).
fn all_tools_task(dir: &std::path::Path) -> std::path::PathBuf {
    let task = dir.join("all-tools");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(
        task.join("task.toml"),
        r#"id = "all-tools"
title = "Every tool of the office"
persona = "tester"
category = "test"
difficulty = "easy"
abilities = ["forms"]
apps = []
timezone = "Europe/Amsterdam"

[user]
name = "Test User"
email = "test.user@example.test"

[limits]
max_steps = 40
wall_seconds = 900

[[turn]]
at = "2026-03-10T09:00:00"
prompt = "Look around."

[[turn]]
at = "2026-03-11T09:00:00"
prompt = "Another day."

[[rubric]]
id = "sent"
description = "Something was sent."
kind = "result"
weight = 1
mail_sent = { to = ["someone@example.test"] }
"#,
    )
    .unwrap();
    task
}

#[test]
fn every_property_of_every_tool_has_a_field() {
    let tmp = tempfile::tempdir().unwrap();
    let task = all_tools_task(tmp.path());
    let mut p = Person::start(&task, "forms");
    let specs = bureau_world::World::tool_specs_for(&[]);
    assert!(specs.len() > 60, "every service's tools: {}", specs.len());
    let index = p.get("/tools");
    let mut fields = 0;
    for spec in &specs {
        assert!(
            index.contains(&format!("id=\"tool-link-{}\"", spec.name)),
            "{} listed",
            spec.name
        );
        let page = p.get(&format!("/tools/{}", spec.name));
        assert!(page.contains(&format!("action=\"/act/{}\"", spec.name)));
        let props = spec.input_schema["properties"].as_object().unwrap();
        for name in props.keys() {
            assert!(
                page.contains(&format!("name=\"{name}\" id=\"field-{name}\"")),
                "{}: no field for `{name}`",
                spec.name
            );
            fields += 1;
        }
    }
    assert!(fields > 150, "{fields} fields");
    insta::assert_snapshot!("tool_mail_send", shape(&p.get("/tools/mail_send"), &p));
    insta::assert_snapshot!("tool_kb_query", shape(&p.get("/tools/kb_query"), &p));
    let nav = p.get("/");
    for id in [
        "nav-inbox",
        "nav-calendar",
        "nav-files",
        "nav-chat",
        "nav-tools",
    ] {
        assert!(nav.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(nav.contains("End my day"), "turn 1 of 2 is not the last");

    // A refused form costs no call and says why.
    p.post(
        "/act/files_search",
        &[
            ("_back", "/tools/files_search"),
            ("query", "x"),
            ("max_results", "many"),
        ],
    );
    let page = p.get("/tools/files_search");
    assert!(page.contains("id=\"notice\""));
    assert!(page.contains("must be a whole number"));
    p.post("/act/mail_send", &[("_back", "/inbox"), ("subject", "s")]);
    let inbox = p.get("/inbox");
    assert!(
        inbox.contains("`body`, `to` are required"),
        "{}",
        inbox
            .lines()
            .filter(|l| l.contains("notice"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    p.post("/act/no_such_tool", &[("_back", "/tools")]);
    assert!(p.get("/tools").contains("is not a tool of this office"));
    assert_eq!(p.status()["calls"], 0);

    // A generic form call: the result is shown, a tool error as an error.
    p.post(
        "/act/kb_query",
        &[("_back", "/tools/kb_query"), ("database", "nope")],
    );
    let page = p.get("/tools/kb_query");
    assert!(page.contains("class=\"error result-error\""), "{page}");

    // Upload: text through files_write; a binary file is refused without a call.
    let boundary = "XBOUNDARYX";
    let body = |back: &str, dir: &str, name: &str, bytes: &[u8]| {
        let mut b = Vec::new();
        b.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"_back\"\r\n\r\n{back}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n{dir}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
        );
        b.extend_from_slice(bytes);
        b.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        b
    };
    let upload_to = |back: &str, dir: &str, name: &str, bytes: &[u8]| {
        let r = p
            .client
            .post(format!("{}/upload", p.base))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body(back, dir, name, bytes))
            .send()
            .unwrap();
        assert_eq!(r.status(), 303);
    };
    let upload = |name: &str, bytes: &[u8]| upload_to("/files", "notes/", name, bytes);
    upload("hello.txt", "Hallo, wereld\n".as_bytes());
    upload("blob.bin", &[0xff, 0xfe, 0x00, 0x80]);
    assert!(p.get("/files").contains("is not a text file"));
    p.post(
        "/act/files_read",
        &[("_back", "/files"), ("path", "notes/hello.txt")],
    );
    assert!(p.get("/files").contains("Hallo, wereld"));
    // Upload to attach, from the inbox: the path is filled in, the mail carries the file.
    upload_to("/inbox", "uploads/", "agenda.txt", b"1. Budget\n");
    let inbox = p.get("/inbox");
    assert!(
        inbox.contains("id=\"send-attachments\" rows=\"2\">uploads&#x2f;agenda.txt</textarea>"),
        "{inbox}"
    );
    p.post(
        "/act/mail_send",
        &[
            ("_back", "/inbox"),
            ("_commas", "to,cc,bcc"),
            ("to", "someone@example.test"),
            ("subject", "Agenda"),
            ("body", "Attached."),
            ("attachments", "uploads/agenda.txt"),
        ],
    );

    // Turn 2: the end of turn 1 moves the clock; the header shows it.
    assert!(p.get("/").contains("name=\"turn\" value=\"1\""));
    p.post("/end", &[("note", ""), ("turn", "1"), ("round", "0")]);
    p.wait_for("turn_2");
    // The same form sent again (a double click) does not end turn 2.
    p.post("/end", &[("note", ""), ("turn", "1"), ("round", "0")]);
    assert!(p.get("/").contains("which is over: this is turn 2"));
    assert_eq!(p.status()["phase"], "turn");
    let home = p.get("/");
    assert!(home.contains("id=\"turn-index\">2<"));
    assert!(home.contains("Wednesday 11 March 2026"));
    assert!(home.contains("Finish the task"));
    let (_, report) = p.finish("");
    assert_eq!(
        report.view.status, "passed",
        "the mail to someone@example.test"
    );
    let calls = tool_calls(
        &p.trial_dir("all-tools", "human:forms")
            .join("trajectory.jsonl"),
    );
    let names: Vec<&str> = calls.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        names,
        [
            "kb_query",
            "files_write",
            "files_read",
            "files_write",
            "mail_send"
        ]
    );
    assert_eq!(calls[4].1["attachments"], json!(["uploads/agenda.txt"]));
    assert_eq!(
        calls[1].1,
        json!({"path": "notes/hello.txt", "content": "Hallo, wereld\n"})
    );
    let _: Value = calls[0].1.clone();
}

#[test]
fn calendar_and_chat_pages_show_their_results_over_three_days() {
    let task = common::repo().join("suites/living/itops-incident-oncall");
    let mut p = Person::start(&task, "pages");
    let page = p.get("/calendar");
    for id in [
        "cal-day",
        "cal-week",
        "cal-prev",
        "cal-next",
        "create-form",
        "slots-form",
    ] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    p.post(
        "/act/calendar_list",
        &[
            ("_back", "/calendar"),
            ("from", "2026-11-16T00:00:00"),
            ("to", "2026-11-23T00:00:00"),
        ],
    );
    let page = p.get("/calendar");
    assert!(page.contains("id=\"day-2026-11-20\""));
    assert!(page.contains("class=\"event\" data-uid=\"rhys-cab-1120@aldermoor.test\""));
    assert!(page.contains("10:00–11:00 <strong>Change advisory board</strong>"));
    insta::assert_snapshot!("calendar_week", shape(&page, &p));

    p.post("/act/chat_list_channels", &[("_back", "/chat")]);
    p.post(
        "/act/chat_read",
        &[("_back", "/chat"), ("channel", "it-ops")],
    );
    let page = p.get("/chat");
    assert!(page.contains("class=\"open-channel\" data-channel=\"it-ops\""));
    assert!(page.contains("id=\"chat-c00001\""));
    assert!(
        page.contains("value=\"it-ops\""),
        "the post form is on the open channel"
    );
    insta::assert_snapshot!("chat_channel", shape(&page, &p));
    p.post(
        "/act/chat_post",
        &[
            ("_back", "/chat"),
            ("_commas", "to"),
            ("channel", "it-ops"),
            ("to", ""),
            ("text", "Morning all."),
            ("thread_of", ""),
            ("files", ""),
        ],
    );
    for turn in [2, 3] {
        p.post("/end", &[("note", "")]);
        let s = p.wait_for("turn");
        assert_eq!(s["turn"], turn);
        assert_eq!(s["calls"], 0, "calls count per turn");
    }
    let (_, report) = p.finish("");
    assert_eq!(report.view.status, "failed");
    let calls = tool_calls(
        &p.trial_dir("itops-incident-oncall", "human:pages")
            .join("trajectory.jsonl"),
    );
    assert_eq!(calls.len(), 4);
    assert_eq!(
        calls[3],
        (
            "chat_post".to_string(),
            json!({"channel": "it-ops", "text": "Morning all."})
        )
    );
}

#[test]
fn a_turn_ends_by_itself_when_its_wall_clock_limit_runs_out() {
    let tmp = tempfile::tempdir().unwrap();
    let task = all_tools_task(tmp.path());
    let toml = std::fs::read_to_string(task.join("task.toml")).unwrap();
    std::fs::write(
        task.join("task.toml"),
        toml.replace("wall_seconds = 900", "wall_seconds = 2"),
    )
    .unwrap();
    let mut p = Person::start(&task, "slow");
    assert_eq!(p.status()["turn"], 1);
    // Nobody ends the day: turn 2 begins when turn 1's two seconds are over.
    let s = p.wait_for("turn_2");
    assert_eq!(s["turn"], 2);
    // And the last turn ends the same way: the trial is scored without a click.
    p.wait_for("finished");
    let (_, report) = p.finish_closed();
    assert_eq!(report.view.status, "failed");
    let dir = p.trial_dir("all-tools", "human:slow");
    assert!(tool_calls(&dir.join("trajectory.jsonl")).is_empty());
    assert!(
        bureau_world::trial_files::TrialFiles::open(&dir)
            .unwrap()
            .exists("snapshots/turn-2.json")
    );
}
