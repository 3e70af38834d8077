//! Files carried by chat messages and knowledge-base pages: seeded from `world/chat/files/`
//! and `world/kb/attachments/`, posted and attached from the workspace (and by colleagues in
//! `act` events), shown as files_read shows a file (pictures as images, byte for byte),
//! saved into the workspace, kept content-addressed through snapshots and restores, bounded,
//! with clear errors.

use std::io::Cursor;
use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::{MediaKind, ToolOutcome};
use bureau_world::World;
use serde_json::{Value, json};

const USER: &str = "alex.meyer@brightwater.test";
const JONAS: &str = "jonas.petersen@brightwater.test";

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const PEOPLE: &str = r#"
[[person]]
name = "Jonas Petersen"
email = "jonas.petersen@brightwater.test"
handle = "jonas"
channels = ["general", "ops"]

[[person]]
name = "Priya Natarajan"
email = "priya.natarajan@brightwater.test"
handle = "priya"
channels = ["general", "finance"]
"#;

const CHANNELS: &str = r#"[
  {"name": "general", "members": ["alex.meyer"]},
  {"name": "finance", "private": true, "members": ["priya"]}
]"#;

fn png(w: u32, h: u32, blue: u8) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, blue])
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn b64(data: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap()
}

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A task whose world has the roster, two channels, `history` as history.jsonl, `files`
/// written under the task directory (paths relative to it) and `extra_turn` after day one.
fn task(dir: &Path, history: &str, files: &[(&str, Vec<u8>)], extra_turn: &str) -> Task {
    write(
        &dir.join("task.toml"),
        format!(
            r#"
id = "t"
title = "T"
persona = "ops assistant"
category = "admin"
difficulty = "easy"
apps = ["files", "chat", "kb"]
timezone = "Europe/Amsterdam"
[user]
name = "Alex Meyer"
email = "alex.meyer@brightwater.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."
{extra_turn}

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#
        )
        .as_bytes(),
    );
    write(&dir.join("world/people.toml"), PEOPLE.as_bytes());
    write(&dir.join("world/chat/channels.json"), CHANNELS.as_bytes());
    write(&dir.join("world/chat/history.jsonl"), history.as_bytes());
    for (rel, bytes) in files {
        write(&dir.join(rel), bytes);
    }
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn build(t: &Task, root: &Path) -> World {
    let mut w = World::build(t, root).unwrap_or_else(|e| panic!("{e}"));
    w.begin_turn(&t.turns[0]).unwrap();
    w
}

fn call(w: &mut World, tool: &str, args: Value) -> ToolOutcome {
    w.call_tool(Actor::Agent, tool, &args)
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match call(w, tool, args) {
        ToolOutcome::Ok { value, .. } => value,
        ToolOutcome::Error { message } => panic!("{tool} failed: {message}"),
    }
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match call(w, tool, args) {
        ToolOutcome::Ok { value, .. } => panic!("{tool} should fail, got {value}"),
        ToolOutcome::Error { message } => message,
    }
}

/// The one image part of a tool's answer, as bytes.
fn image_of(outcome: ToolOutcome) -> (Value, Vec<u8>) {
    let ToolOutcome::Ok { value, media } = outcome else {
        panic!("expected media, got {outcome:?}")
    };
    assert_eq!(media.len(), 1, "{value}");
    assert_eq!(media[0].kind, MediaKind::Image);
    assert_eq!(media[0].mime_type, "image/png");
    (value, b64(&media[0].data))
}

#[test]
fn a_photo_a_colleague_posts_is_read_back_as_an_image_byte_for_byte() {
    let d = tempfile::tempdir().unwrap();
    let photo = png(64, 48, 200);
    let extra = r#"
[[turn]]
at = 2026-03-03T09:00:00
prompt = "Day two."
[[turn.event]]
kind = "act"
silent = true
as = "jonas"
tool = "chat_post"
args = { channel = "general", text = "Whiteboard from the planning session", files = ["boards/whiteboard.png"] }
"#;
    let t = task(
        &d.path().join("task"),
        "",
        &[("world/chat/files/boards/whiteboard.png", photo.clone())],
        extra,
    );
    let mut w = build(&t, &d.path().join("trial"));
    // Nothing is posted before the event; the file is not in the agent's workspace.
    assert!(w.chat().messages().is_empty());
    assert!(!w.files().exists("whiteboard.png") && !w.files().exists("boards/whiteboard.png"));
    w.begin_turn(&t.turns[1]).unwrap();

    let m = w.chat().messages().last().unwrap().clone();
    assert_eq!(m.author, JONAS);
    assert_eq!(m.files.len(), 1);
    let e = w.log().last().unwrap();
    assert_eq!(e.actor, Actor::Colleague(JONAS.into()));
    assert!(e.silent);
    assert_eq!(e.payload["files"][0]["blake3"], hash(&photo));

    let read = ok(&mut w, "chat_read", json!({"channel": "general"}));
    let shown = &read["messages"][0];
    assert_eq!(
        shown["files"],
        json!([{"name": "whiteboard.png", "size": photo.len(), "mime_type": "image/png"}])
    );
    // The message is named by its URL, as every chat tool takes it.
    let url = shown["url"].as_str().unwrap().to_string();
    let (value, bytes) = image_of(call(
        &mut w,
        "chat_read_file",
        json!({"id": url, "filename": "whiteboard.png"}),
    ));
    assert_eq!(bytes, photo);
    assert_eq!(value["message"], m.id);
    assert_eq!(value["filename"], "whiteboard.png");
    assert_eq!(value["media"], "image");
    assert_eq!(
        (value["width"].as_u64(), value["height"].as_u64()),
        (Some(64), Some(48))
    );
    assert!(value.get("path").is_none());
}

#[test]
fn seeded_messages_carry_files_of_world_chat_files() {
    let d = tempfile::tempdir().unwrap();
    let plan = png(40, 30, 10);
    let history = r#"{"id": "g1", "channel": "general", "author": "jonas", "ts": "2026-03-02T08:30:00", "text": "Floor plan and notes", "files": ["plan.png", "notes/minutes.txt"]}
{"dm": ["alex.meyer"], "author": "priya", "ts": "2026-03-02T08:40:00", "text": "", "files": ["plan.png"]}
"#;
    let t = task(
        &d.path().join("task"),
        history,
        &[
            ("world/chat/files/plan.png", plan.clone()),
            (
                "world/chat/files/notes/minutes.txt",
                b"Move the printer to room 2.\n".to_vec(),
            ),
        ],
        "",
    );
    let mut w = build(&t, &d.path().join("trial"));
    let names: Vec<&str> = w.chat().messages()[0]
        .files
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["plan.png", "minutes.txt"]);
    let (_, bytes) = image_of(call(
        &mut w,
        "chat_read_file",
        json!({"id": "g1", "filename": "plan.png"}),
    ));
    assert_eq!(bytes, plan);
    let text = ok(
        &mut w,
        "chat_read_file",
        json!({"id": "g1", "filename": "minutes.txt"}),
    );
    assert_eq!(text["text"], "Move the printer to room 2.\n");
    assert_eq!(text["mime_type"], "text/plain");
    // A message may carry only files.
    let dm = ok(&mut w, "chat_read", json!({"dm": ["priya"]}));
    assert_eq!(dm["messages"][0]["text"], "");
    assert_eq!(dm["messages"][0]["files"][0]["name"], "plan.png");
    // Search finds a message by a file's name too.
    let s = ok(&mut w, "chat_search", json!({"query": "minutes"}));
    assert_eq!(s["messages"][0]["id"], "g1");
}

#[test]
fn the_agent_posts_workspace_files_and_checks_see_their_digests() {
    let d = tempfile::tempdir().unwrap();
    let chart = png(30, 20, 50);
    let t = task(
        &d.path().join("task"),
        "",
        &[("world/files/reports/chart.png", chart.clone())],
        "",
    );
    let mut w = build(&t, &d.path().join("trial"));
    let r = ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "Q2 chart", "files": ["reports/chart.png"]}),
    );
    let id = r["id"].as_str().unwrap().to_string();
    // A copy at post time: changing or deleting the workspace file changes nothing posted.
    ok(&mut w, "files_delete", json!({"path": "reports/chart.png"}));
    let (_, bytes) = image_of(call(
        &mut w,
        "chat_read_file",
        json!({"id": id, "filename": "chart.png"}),
    ));
    assert_eq!(bytes, chart);

    let view = w.chat().check_view(w.timezone());
    let files = &view["messages"][0]["files"];
    assert_eq!(
        *files,
        json!([{"name": "chart.png", "size": chart.len(), "mime_type": "image/png",
            "blake3": hash(&chart)}])
    );
    assert!(!files.to_string().contains("data"));

    let saved = ok(
        &mut w,
        "chat_save_file",
        json!({"id": id, "filename": "chart.png", "path": "in/chart-copy.png"}),
    );
    assert_eq!(saved["size"], chart.len());
    assert_eq!(w.files().read_bytes("in/chart-copy.png").unwrap(), chart);
    let e = w.log().last().unwrap();
    assert_eq!((e.service.as_str(), e.action.as_str()), ("files", "create"));
    assert_eq!(e.payload["from_chat"], id);
}

#[test]
fn a_posted_file_survives_snapshot_and_restore_into_another_world() {
    let d = tempfile::tempdir().unwrap();
    let chart = png(32, 32, 7);
    let t = task(
        &d.path().join("task"),
        "",
        &[("world/files/chart.png", chart.clone())],
        "",
    );
    let mut w = build(&t, &d.path().join("trial"));
    ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "chart", "files": ["chart.png"]}),
    );
    let snap = w.snapshot().unwrap();
    // The state names the file by its digest; its bytes are a blob, not base64 in the JSON.
    let json_text = serde_json::to_string(&snap.services.chat).unwrap();
    assert!(json_text.contains(&hash(&chart)));
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&chart);
    assert!(!json_text.contains(&encoded[..64]));
    assert!(json_text.len() < 1000, "{json_text}");
    assert_eq!(
        std::fs::read(w.root().join("blobs").join(hash(&chart))).unwrap(),
        chart
    );

    // Re-scoring: a fresh world takes the snapshot, its contents from the trial's blobs.
    let mut fresh = build(&t, &d.path().join("rescore"));
    fresh.restore_from(&snap, &w.root().join("blobs")).unwrap();
    assert_eq!(fresh.chat(), w.chat());
    let (_, bytes) = image_of(call(
        &mut fresh,
        "chat_read_file",
        json!({"id": "c00001", "filename": "chart.png"}),
    ));
    assert_eq!(bytes, chart);
    assert!(fresh.root().join("blobs").join(hash(&chart)).is_file());
}

#[test]
fn a_restore_whose_blobs_lack_a_chat_file_is_an_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let t = task(&d.path().join("task"), "", &[], "");
    let mut w = build(&t, &d.path().join("trial"));
    let note = b"Only the chat keeps this.\n";
    ok(
        &mut w,
        "files_write",
        json!({"path": "note.txt", "content": "Only the chat keeps this.\n"}),
    );
    ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "note", "files": ["note.txt"]}),
    );
    // The workspace no longer holds the bytes: only the chat file names that blob.
    ok(&mut w, "files_delete", json!({"path": "note.txt"}));
    let snap = w.snapshot().unwrap();
    let partial = d.path().join("partial-blobs");
    std::fs::create_dir_all(&partial).unwrap();
    for e in std::fs::read_dir(w.root().join("blobs")).unwrap().flatten() {
        if e.file_name().to_string_lossy() != hash(note) {
            std::fs::copy(e.path(), partial.join(e.file_name())).unwrap();
        }
    }
    let mut fresh = World::build(&t, &d.path().join("rescore")).unwrap();
    let e = fresh.restore_from(&snap, &partial).unwrap_err().to_string();
    assert!(e.contains("chat file `note.txt`"), "{e}");
    // With the whole store it restores.
    let mut fresh = World::build(&t, &d.path().join("rescore2")).unwrap();
    fresh.restore_from(&snap, &w.root().join("blobs")).unwrap();
    let r = ok(
        &mut fresh,
        "chat_read_file",
        json!({"id": "c00001", "filename": "note.txt"}),
    );
    assert_eq!(r["text"], "Only the chat keeps this.\n");
}

#[test]
fn chat_file_errors_are_clear_and_change_nothing() {
    let d = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, Vec<u8>)> = (0..11)
        .map(|i| {
            (
                format!("world/files/many/f{i}.txt"),
                format!("{i}\n").into_bytes(),
            )
        })
        .collect();
    files.push((
        "world/files/big.bin".into(),
        vec![7u8; 16 * 1024 * 1024 + 1],
    ));
    files.push(("world/files/a/same.txt".into(), b"a".to_vec()));
    files.push(("world/files/b/same.txt".into(), b"b".to_vec()));
    let refs: Vec<(&str, Vec<u8>)> = files.iter().map(|(p, b)| (p.as_str(), b.clone())).collect();
    let t = task(&d.path().join("task"), "", &refs, "");
    let mut w = build(&t, &d.path().join("trial"));
    let post = |files: Value| json!({"channel": "general", "text": "x", "files": files});

    let e = err(&mut w, "chat_post", post(json!(["nope.png"])));
    assert!(e.contains("no file `nope.png` in the workspace"), "{e}");
    let many: Vec<String> = (0..11).map(|i| format!("many/f{i}.txt")).collect();
    let e = err(&mut w, "chat_post", post(json!(many)));
    assert!(e.contains("at most 10"), "{e}");
    let e = err(&mut w, "chat_post", post(json!(["big.bin"])));
    assert!(
        e.contains("`big.bin` is 16.8 MB") && e.contains("at most 16 MiB"),
        "{e}"
    );
    let e = err(&mut w, "chat_post", post(json!(["../task/task.toml"])));
    assert!(e.contains("uses `..`"), "{e}");
    let e = err(
        &mut w,
        "chat_post",
        post(json!(["a/same.txt", "b/same.txt"])),
    );
    assert!(e.contains("two files are named `same.txt`"), "{e}");
    let e = err(&mut w, "chat_post", post(json!(["many"])));
    assert!(e.contains("is a directory"), "{e}");
    let e = err(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": " "}),
    );
    assert!(e.contains("`text` is empty"), "{e}");
    assert!(w.chat().messages().is_empty());

    let r = ok(&mut w, "chat_post", post(json!(["a/same.txt"])));
    let id = r["id"].as_str().unwrap().to_string();
    let e = err(
        &mut w,
        "chat_read_file",
        json!({"id": id, "filename": "other.png"}),
    );
    assert!(
        e.contains("has no file `other.png`; its files: same.txt"),
        "{e}"
    );
    let e = err(
        &mut w,
        "chat_read_file",
        json!({"id": id, "filename": "../a/same.txt"}),
    );
    assert!(e.contains("has no file `../a/same.txt`"), "{e}");
    let e = err(
        &mut w,
        "chat_save_file",
        json!({"id": id, "filename": "same.txt", "path": "../outside.txt"}),
    );
    assert!(e.contains("uses `..`"), "{e}");
    let e = err(
        &mut w,
        "chat_read_file",
        json!({"id": "c09999", "filename": "same.txt"}),
    );
    assert!(e.contains("no message `c09999`"), "{e}");
}

#[test]
fn a_message_in_a_private_channel_keeps_its_files_private() {
    let d = tempfile::tempdir().unwrap();
    let history = r#"{"id": "f1", "channel": "finance", "author": "priya", "ts": "2026-03-02T08:30:00", "text": "Salaries", "files": ["salaries.csv"]}
"#;
    let t = task(
        &d.path().join("task"),
        history,
        &[("world/chat/files/salaries.csv", b"name,salary\n".to_vec())],
        "",
    );
    let mut w = build(&t, &d.path().join("trial"));
    let e = err(
        &mut w,
        "chat_read_file",
        json!({"id": "f1", "filename": "salaries.csv"}),
    );
    assert!(e.contains("no message `f1` that you can see"), "{e}");
    let e = err(
        &mut w,
        "chat_save_file",
        json!({"id": "f1", "filename": "salaries.csv", "path": "s.csv"}),
    );
    assert!(e.contains("no message `f1` that you can see"), "{e}");
    assert!(!w.files().exists("s.csv"));
}

#[test]
fn bad_chat_file_seeds_name_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let line = |files: &str| {
        format!(
            "{{\"channel\": \"general\", \"author\": \"jonas\", \"ts\": \"2026-03-02T08:30:00\", \"text\": \"ok\"}}\n{{\"channel\": \"general\", \"author\": \"jonas\", \"ts\": \"2026-03-02T08:31:00\", \"text\": \"x\", \"files\": {files}}}\n"
        )
    };
    let build_err = |history: String, n: u32| {
        let dir = d.path().join(format!("task{n}"));
        let t = task(
            &dir,
            &history,
            &[("world/chat/files/plan.png", png(8, 8, 1))],
            "",
        );
        World::build(&t, &d.path().join(format!("w{n}")))
            .unwrap_err()
            .to_string()
    };
    let e = build_err(line(r#"["missing.png"]"#), 1);
    assert!(
        e.contains("history.jsonl: line 2: `files`: no file `missing.png` in the task's world/chat/files/; its files: plan.png"),
        "{e}"
    );
    let e = build_err(line(r#"["../people.toml"]"#), 2);
    assert!(
        e.contains("line 2") && e.contains("`..` is not allowed"),
        "{e}"
    );
    let e = build_err(line(r#"["plan.png", "plan.png"]"#), 3);
    assert!(
        e.contains("line 2") && e.contains("two files are named `plan.png`"),
        "{e}"
    );
    // A colleague's post names a file the task does not have: the event fails, naming it.
    let extra = r#"
[[turn]]
at = 2026-03-03T09:00:00
prompt = "Day two."
[[turn.event]]
kind = "act"
silent = false
as = "jonas"
tool = "chat_post"
args = { channel = "general", text = "photo", files = ["nothere.jpg"] }
"#;
    let t = task(&d.path().join("task4"), "", &[], extra);
    let mut w = build(&t, &d.path().join("w4"));
    let e = w.begin_turn(&t.turns[1]).unwrap_err().to_string();
    assert!(
        e.contains("`files`: no file `nothere.jpg` in the task's world/chat/files/"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Knowledge base

fn kb_task(dir: &Path, extra: &[(&str, Vec<u8>)]) -> Task {
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("world/kb/pages/Engineering.md", b"# Engineering\n".to_vec()),
        (
            "world/kb/pages/Engineering/Onboarding.md",
            b"---\ntitle: Onboarding checklist\n---\nSee the floor plan.\n".to_vec(),
        ),
    ];
    files.extend(extra.iter().cloned());
    task(dir, "", &files, "")
}

#[test]
fn a_kb_attachment_is_seeded_and_read_as_media() {
    let d = tempfile::tempdir().unwrap();
    let plan = png(50, 40, 120);
    let t = kb_task(
        &d.path().join("task"),
        &[
            (
                "world/kb/attachments/Engineering/Onboarding/floor-plan.png",
                plan.clone(),
            ),
            (
                "world/kb/attachments/Engineering/rota.csv",
                b"who,day\nmara,Mon\n".to_vec(),
            ),
        ],
    );
    let mut w = build(&t, &d.path().join("trial"));
    let page = ok(
        &mut w,
        "kb_read_page",
        json!({"page": "Onboarding checklist"}),
    );
    assert_eq!(
        page["attachments"],
        json!([{"name": "floor-plan.png", "size": plan.len(), "mime_type": "image/png",
            "added_by": USER, "added_at": "2026-03-02T09:00:00+01:00"}])
    );
    let id = page["id"].as_str().unwrap().to_string();
    let url = page["url"].as_str().unwrap().to_string();
    let (value, bytes) = image_of(call(
        &mut w,
        "kb_read_attachment",
        json!({"page": url, "filename": "floor-plan.png"}),
    ));
    assert_eq!(bytes, plan);
    assert_eq!(value["page"], id);
    assert_eq!(value["filename"], "floor-plan.png");
    let csv = ok(
        &mut w,
        "kb_read_attachment",
        json!({"page": "Engineering", "filename": "rota.csv"}),
    );
    assert!(csv["text"].as_str().unwrap().contains("mara"), "{csv}");
    // Search finds a page by an attachment's name.
    let s = ok(&mut w, "kb_search", json!({"query": "floor-plan.png"}));
    assert_eq!(s["pages"][0]["id"], id);
    // Checks see name, size, type and digest.
    let view = w.kb().check_view(w.timezone());
    let onboarding = view["pages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap();
    assert_eq!(onboarding["attachments"][0]["blake3"], hash(&plan));
    assert_eq!(onboarding["attachments"][0]["name"], "floor-plan.png");
}

#[test]
fn kb_attach_copies_a_workspace_file_replaces_by_name_and_survives_a_restore() {
    let d = tempfile::tempdir().unwrap();
    let v1 = png(20, 20, 1);
    let v2 = png(20, 20, 2);
    let t = kb_task(
        &d.path().join("task"),
        &[
            ("world/files/diagrams/v1.png", v1.clone()),
            ("world/files/diagrams/v2.png", v2.clone()),
        ],
    );
    let mut w = build(&t, &d.path().join("trial"));
    let r = ok(
        &mut w,
        "kb_attach",
        json!({"page": "Engineering", "path": "diagrams/v1.png", "filename": "diagram.png"}),
    );
    assert_eq!(r["attachment"]["name"], "diagram.png");
    assert_eq!(r["replaced"], false);
    let r = ok(
        &mut w,
        "kb_attach",
        json!({"page": "Engineering", "path": "diagrams/v2.png", "filename": "diagram.png"}),
    );
    assert_eq!(r["replaced"], true);
    let e = w.log().last().unwrap();
    assert_eq!((e.service.as_str(), e.action.as_str()), ("kb", "attach"));
    assert_eq!(e.payload["replaced"]["blake3"], hash(&v1));
    assert_eq!(e.payload["attachment"]["blake3"], hash(&v2));
    let page = ok(&mut w, "kb_read_page", json!({"page": "Engineering"}));
    assert_eq!(page["attachments"].as_array().unwrap().len(), 1);

    ok(
        &mut w,
        "kb_save_attachment",
        json!({"page": "Engineering", "filename": "diagram.png", "path": "out/d.png"}),
    );
    assert_eq!(w.files().read_bytes("out/d.png").unwrap(), v2);

    let snap = w.snapshot().unwrap();
    let mut fresh = build(&t, &d.path().join("rescore"));
    fresh.restore_from(&snap, &w.root().join("blobs")).unwrap();
    let (_, bytes) = image_of(call(
        &mut fresh,
        "kb_read_attachment",
        json!({"page": "Engineering", "filename": "diagram.png"}),
    ));
    assert_eq!(bytes, v2);
}

#[test]
fn kb_attachment_errors_are_clear() {
    let d = tempfile::tempdir().unwrap();
    let t = kb_task(
        &d.path().join("task"),
        &[
            ("world/files/notes.txt", b"n\n".to_vec()),
            ("world/files/huge.bin", vec![0u8; 16 * 1024 * 1024 + 1]),
        ],
    );
    let mut w = build(&t, &d.path().join("trial"));
    let e = err(
        &mut w,
        "kb_attach",
        json!({"page": "Engineering", "path": "notes.txt", "filename": "../evil.txt"}),
    );
    assert!(
        e.contains("`filename`") && e.contains("without `/`, `\\` or `..`"),
        "{e}"
    );
    let e = err(
        &mut w,
        "kb_attach",
        json!({"page": "Engineering", "path": "../../etc/passwd"}),
    );
    assert!(e.contains("uses `..`"), "{e}");
    let e = err(
        &mut w,
        "kb_attach",
        json!({"page": "Engineering", "path": "missing.txt"}),
    );
    assert!(e.contains("no file `missing.txt` in the workspace"), "{e}");
    let e = err(
        &mut w,
        "kb_attach",
        json!({"page": "Engineering", "path": "huge.bin"}),
    );
    assert!(e.contains("at most 16 MiB"), "{e}");
    let e = err(
        &mut w,
        "kb_attach",
        json!({"page": "Nowhere", "path": "notes.txt"}),
    );
    assert!(e.contains("no page `Nowhere`"), "{e}");
    let e = err(
        &mut w,
        "kb_read_attachment",
        json!({"page": "Engineering", "filename": "notes.txt"}),
    );
    assert!(
        e.contains("has no attachment `notes.txt`; its attachments: none"),
        "{e}"
    );
    assert!(w.kb().pages().iter().all(|p| p.attachments.is_empty()));
}

#[test]
fn bad_kb_attachment_seeds_name_the_file() {
    let d = tempfile::tempdir().unwrap();
    let t = kb_task(
        &d.path().join("task1"),
        &[("world/kb/attachments/Marketing/plan.png", png(4, 4, 0))],
    );
    let e = World::build(&t, &d.path().join("w1"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("attachments/Marketing/plan.png") && e.contains("no page `Marketing`"),
        "{e}"
    );
    let t = kb_task(
        &d.path().join("task2"),
        &[("world/kb/attachments/loose.png", png(4, 4, 0))],
    );
    let e = World::build(&t, &d.path().join("w2"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("attachments/loose.png") && e.contains("<page path>/<file>"),
        "{e}"
    );
}
