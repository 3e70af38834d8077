//! The chat service and simulated colleagues: seeds, tools, private channels, colleague
//! replies on chat and mail, `act` events by a colleague, snapshot/restore.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::{Value, json};

const USER: &str = "alex.meyer@brightwater.test";
const PRIYA: &str = "priya.natarajan@brightwater.test";
const JONAS: &str = "jonas.petersen@brightwater.test";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const PEOPLE: &str = r#"
[[person]]
name = "Jonas Petersen"
email = "jonas.petersen@brightwater.test"
handle = "jonas"
role = "Head of Operations"
channels = ["general", "ops"]

[[person]]
name = "Priya Natarajan"
email = "priya.natarajan@brightwater.test"
handle = "priya"
role = "Finance Controller"
manager = "jonas.petersen@brightwater.test"
channels = ["general", "finance"]

[[person.knows]]
about = ["budget", "Q2"]
reply = "The Q2 budget is €48,500."

[[person.knows]]
about = ["cost centre"]
reply = "Use cost centre 4410."

[[person.refuse]]
about = ["salary"]
reply = "I can't share salary data."

[[person]]
name = "Mara Lindqvist"
email = "mara.lindqvist@brightwater.test"
handle = "mara"
channels = ["general", "ops"]
replies_to = ["chat"]
unknown_reply = "No idea, ask Jonas."
"#;

const CHANNELS: &str = r#"[
  {"name": "general", "members": ["alex.meyer"], "topic": "Company-wide"},
  {"name": "finance", "private": true, "members": ["priya", "jonas"], "topic": "Finance only"},
  {"name": "random", "members": ["mara"]}
]"#;

const HISTORY: &str = r#"{"id": "g1", "channel": "general", "author": "jonas", "ts": "2026-03-02T08:30:00", "text": "Morning all, @alex.meyer please check the ops board", "reactions": {"thumbsup": ["mara"]}}
{"channel": "general", "author": "mara", "ts": "2026-03-02T08:35:00", "text": "Done on my side", "thread_of": "g1"}
{"channel": "finance", "author": "priya", "ts": "2026-03-02T08:40:00", "text": "Salary review numbers are in the vault"}
{"dm": ["alex.meyer"], "author": "priya", "ts": "2026-03-02T08:45:00", "text": "Hi Alex, welcome!"}
"#;

fn task(dir: &Path, extra_turn: &str) -> Task {
    write(
        &dir.join("task.toml"),
        &format!(
            r#"
id = "t"
title = "T"
persona = "ops assistant"
category = "admin"
difficulty = "easy"
apps = ["files", "mail", "chat"]
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
        ),
    );
    write(&dir.join("world/people.toml"), PEOPLE);
    write(&dir.join("world/chat/channels.json"), CHANNELS);
    write(&dir.join("world/chat/history.jsonl"), HISTORY);
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn setup_with(extra: &str) -> (tempfile::TempDir, Task, World) {
    let d = tempfile::tempdir().unwrap();
    let t = task(&d.path().join("task"), extra);
    let mut w = World::build(&t, &d.path().join("trial")).unwrap();
    w.begin_turn(&t.turns[0]).unwrap();
    (d, t, w)
}

fn setup() -> (tempfile::TempDir, Task, World) {
    setup_with("")
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

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn seed_builds_channels_history_mentions_threads_and_reactions() {
    let (_d, _t, w) = setup();
    let chat = w.chat();
    let general = chat.channel("#General").unwrap();
    assert!(!general.private);
    assert_eq!(general.topic, "Company-wide");
    // Roster channels and channels.json members are merged.
    assert!(general.members.contains(USER) && general.members.contains(PRIYA));
    assert!(chat.channel("ops").is_some(), "roster channels exist");
    let m = chat.message("g1").unwrap();
    assert_eq!(m.author, JONAS);
    assert_eq!(m.mentions, vec![USER.to_string()]);
    assert_eq!(m.time.to_rfc3339(), "2026-03-02T07:30:00+00:00");
    assert!(m.reactions["thumbsup"].contains("mara.lindqvist@brightwater.test"));
    // Ids without one in the export are deterministic counters.
    let reply = &chat.messages()[1];
    assert_eq!(reply.id, "c00001");
    assert_eq!(reply.thread_of.as_deref(), Some("g1"));
    assert_eq!(
        chat.messages()[3].dm,
        vec![USER.to_string(), PRIYA.to_string()]
    );
}

#[test]
fn private_channels_are_invisible_and_unwritable_to_non_members() {
    let (_d, _t, mut w) = setup();
    let r = ok(&mut w, "chat_list_channels", json!({}));
    let seen = names(&r["channels"]);
    assert!(seen.contains(&"general".to_string()));
    assert!(!seen.contains(&"finance".to_string()), "{seen:?}");
    let before = w.log().len();
    for (tool, args) in [
        ("chat_read", json!({"channel": "finance"})),
        ("chat_post", json!({"channel": "finance", "text": "hi"})),
        ("chat_join", json!({"channel": "finance"})),
        ("chat_members", json!({"channel": "finance"})),
        (
            "chat_search",
            json!({"query": "salary", "channel": "finance"}),
        ),
    ] {
        let e = err(&mut w, tool, args);
        assert!(e.contains("no channel `finance`"), "{tool}: {e}");
    }
    // Search never leaks a private message either.
    let r = ok(&mut w, "chat_search", json!({"query": "salary"}));
    assert_eq!(r["messages"].as_array().unwrap().len(), 0);
    // The private message's id is not reactable.
    let id = w.chat().messages()[2].id.clone();
    err(&mut w, "chat_react", json!({"id": id, "emoji": "eyes"}));
    assert_eq!(w.log().len(), before, "refused calls change nothing");
    // A member sees it.
    let r = w.call_tool(
        Actor::Colleague(PRIYA.into()),
        "chat_list_channels",
        &json!({}),
    );
    let ToolOutcome::Ok { value, .. } = r else {
        panic!("{r:?}")
    };
    assert!(names(&value["channels"]).contains(&"finance".to_string()));
}

#[test]
fn read_post_thread_react_search_join_create() {
    let (_d, _t, mut w) = setup();
    let r = ok(&mut w, "chat_read", json!({"channel": "general"}));
    assert_eq!(r["total"], 2);
    assert_eq!(r["messages"][0]["author_handle"], "jonas");
    assert_eq!(r["messages"][0]["reactions"]["thumbsup"][0], "mara");
    assert_eq!(r["messages"][0]["time"], "2026-03-02T08:30:00+01:00");
    let r = ok(&mut w, "chat_read", json!({"thread": "g1"}));
    assert_eq!(r["total"], 2);
    let r = ok(
        &mut w,
        "chat_read",
        json!({"channel": "general", "since": "2026-03-02T08:31:00", "limit": 5}),
    );
    assert_eq!(r["total"], 1);

    // Posting in a public channel needs membership.
    let e = err(
        &mut w,
        "chat_post",
        json!({"channel": "random", "text": "hi"}),
    );
    assert!(e.contains("chat_join"), "{e}");
    ok(&mut w, "chat_join", json!({"channel": "random"}));
    let r = ok(
        &mut w,
        "chat_post",
        json!({"channel": "random", "text": "hi all"}),
    );
    assert_eq!(r["id"], "c00004");

    // A reply to a reply joins the root's thread.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"thread_of": "c00001", "text": "Thanks, checked."}),
    );
    assert_eq!(r["thread_of"], "g1");
    let m = w.chat().message(r["id"].as_str().unwrap()).unwrap();
    assert_eq!(m.channel.as_deref(), Some("general"));

    ok(&mut w, "chat_react", json!({"id": "g1", "emoji": ":eyes:"}));
    assert!(w.chat().message("g1").unwrap().reactions["eyes"].contains(USER));
    ok(
        &mut w,
        "chat_react",
        json!({"id": "g1", "emoji": "eyes", "remove": true}),
    );
    assert!(
        !w.chat()
            .message("g1")
            .unwrap()
            .reactions
            .contains_key("eyes")
    );

    let r = ok(&mut w, "chat_search", json!({"query": "OPS BOARD"}));
    assert_eq!(r["messages"][0]["id"], "g1");
    let r = ok(
        &mut w,
        "chat_search",
        json!({"query": "welcome", "from": "priya"}),
    );
    assert_eq!(r["messages"].as_array().unwrap().len(), 1);

    let r = ok(
        &mut w,
        "chat_create_channel",
        json!({"name": "launch-team", "private": true, "members": ["mara"]}),
    );
    assert_eq!(
        r["members"],
        json!([
            "alex.meyer@brightwater.test",
            "mara.lindqvist@brightwater.test"
        ])
    );
    let e = err(
        &mut w,
        "chat_create_channel",
        json!({"name": "Launch Team"}),
    );
    assert!(e.contains("invalid"), "{e}");
    let e = err(&mut w, "chat_create_channel", json!({"name": "general"}));
    assert!(e.contains("already exists"), "{e}");
    // A private channel the user cannot see: the same answer as a reserved name.
    let hidden = err(&mut w, "chat_create_channel", json!({"name": "finance"}));
    let reserved = err(&mut w, "chat_create_channel", json!({"name": "here"}));
    assert_eq!(
        hidden.replace("finance", "NAME"),
        reserved.replace("here", "NAME")
    );
    assert!(
        !hidden.contains("exists") && !hidden.contains("private"),
        "{hidden}"
    );

    let r = ok(&mut w, "chat_members", json!({}));
    let handles: Vec<&str> = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["handle"].as_str().unwrap())
        .collect();
    assert!(
        handles.contains(&"alex.meyer") && handles.contains(&"priya"),
        "{handles:?}"
    );

    let e = err(&mut w, "chat_post", json!({"to": ["nobody"], "text": "hi"}));
    assert!(e.contains("not a workspace member"), "{e}");
    let e = err(
        &mut w,
        "chat_post",
        json!({"channel": "general", "to": ["priya"], "text": "x"}),
    );
    assert!(e.contains("not both"), "{e}");
    let e = err(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "  "}),
    );
    assert!(e.contains("empty"), "{e}");

    let actions: Vec<&str> = w
        .log()
        .iter()
        .filter(|e| e.service == "chat" && e.actor == Actor::Agent)
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(
        actions,
        ["join", "post", "post", "react", "unreact", "create_channel"]
    );
}

#[test]
fn a_colleague_answers_a_dm_from_their_knowledge_once_per_question() {
    let (_d, _t, mut w) = setup();
    let r = ok(
        &mut w,
        "chat_post",
        json!({"to": ["@priya"], "text": "Hi Priya, what is the Q2 budget and which cost centre do I use? Also the budget for Q2 again?"}),
    );
    let replies = r["replies"].as_array().unwrap();
    assert_eq!(replies.len(), 1);
    assert_eq!(
        replies[0]["text"],
        "The Q2 budget is €48,500.\nUse cost centre 4410."
    );
    assert_eq!(replies[0]["author"], PRIYA);
    let last = w.log().last().unwrap();
    assert_eq!(last.actor, Actor::Colleague(PRIYA.into()));
    assert_eq!(last.action, "post");
    // Refusals win over knowledge.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"to": ["priya"], "text": "What is Jonas's salary in the Q2 budget?"}),
    );
    assert_eq!(r["replies"][0]["text"], "I can't share salary data.");
    // Unknown questions get the default naming the manager; statements get nothing.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"to": ["priya"], "text": "Where is the printer?"}),
    );
    assert_eq!(
        r["replies"][0]["text"],
        "Sorry, I don't know — maybe ask Jonas Petersen."
    );
    let r = ok(
        &mut w,
        "chat_post",
        json!({"to": ["priya"], "text": "Thanks!"}),
    );
    assert_eq!(r["replies"], json!([]));
    // A person without knowledge does not answer.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"to": ["jonas"], "text": "What is the Q2 budget?"}),
    );
    assert_eq!(r["replies"], json!([]));
}

#[test]
fn a_mentioned_colleague_answers_in_the_thread() {
    let (_d, _t, mut w) = setup();
    let r = ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "@priya which cost centre for the fair? @mara do you know where the banner is?"}),
    );
    let id = r["id"].as_str().unwrap().to_string();
    let replies = r["replies"].as_array().unwrap();
    assert_eq!(replies.len(), 2, "{r}");
    for rep in replies {
        assert_eq!(rep["thread_of"], id.as_str());
        assert_eq!(rep["channel"], "general");
    }
    let texts: Vec<&str> = replies
        .iter()
        .map(|x| x["text"].as_str().unwrap())
        .collect();
    assert!(texts.contains(&"Use cost centre 4410."));
    assert!(texts.contains(&"No idea, ask Jonas."));
    assert_eq!(
        w.chat().message(&id).unwrap().mentions,
        vec![
            "mara.lindqvist@brightwater.test".to_string(),
            PRIYA.to_string()
        ]
    );
    // An email address is not a mention.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "mail priya.natarajan@brightwater.test about it"}),
    );
    assert_eq!(r["replies"], json!([]));
    let id = r["id"].as_str().unwrap();
    assert!(w.chat().message(id).unwrap().mentions.is_empty());
}

#[test]
fn a_colleague_answers_mail_with_a_reply_mail() {
    let (_d, _t, mut w) = setup();
    let r = ok(
        &mut w,
        "mail_send",
        json!({"to": [PRIYA], "cc": ["mara.lindqvist@brightwater.test"], "subject": "Q2 budget", "body": "Hi Priya, what is it?"}),
    );
    let mid = r["message_id"].as_str().unwrap().to_string();
    let inbox = w.mail().messages(USER, Some("INBOX"));
    // Priya answers (subject keyword matches); Mara only answers on chat.
    assert_eq!(inbox.len(), 1, "{inbox:?}");
    let m = &inbox[0];
    assert_eq!(m.from_email(), Some(PRIYA));
    assert_eq!(m.mail.subject, "Re: Q2 budget");
    assert_eq!(m.mail.in_reply_to.as_deref(), Some(mid.as_str()));
    assert!(m.mail.text.contains("€48,500"));
    assert!(!m.seen);
    let last = w.log().last().unwrap();
    assert_eq!(last.actor, Actor::Colleague(PRIYA.into()));
    assert_eq!(
        (last.service.as_str(), last.action.as_str()),
        ("mail", "reply")
    );
    // The agent reads it in its own mailbox and can reply to it.
    let id = m.id.clone();
    let r = ok(&mut w, "mail_read", json!({"id": id}));
    assert!(r["text"].as_str().unwrap().contains("48,500"));
}

#[test]
fn a_colleague_acts_through_an_act_event() {
    let extra = r#"
[[turn]]
at = 2026-03-03T09:00:00
prompt = "Day two."
[[turn.event]]
kind = "act"
silent = true
as = "priya"
tool = "chat_post"
args = { channel = "general", text = "Correction: the Q2 budget is now €46,000 @alex.meyer" }
"#;
    let (_d, t, mut w) = setup_with(extra);
    w.begin_turn(&t.turns[1]).unwrap();
    let m = w.chat().messages().last().unwrap();
    assert_eq!(m.author, PRIYA);
    assert_eq!(m.mentions, vec![USER.to_string()]);
    assert_eq!(m.time.to_rfc3339(), "2026-03-03T08:00:00+00:00");
    let e = w.log().last().unwrap();
    assert_eq!(e.actor, Actor::Colleague(PRIYA.into()));
    assert!(e.silent);
    // A colleague's post does not trigger colleague replies.
    assert_eq!(w.chat().messages().len(), 5);
}

#[test]
fn bad_seeds_name_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    let t = task(&dir, "");
    write(
        &dir.join("world/chat/history.jsonl"),
        "{\"channel\": \"general\", \"author\": \"jonas\", \"ts\": \"2026-03-02T08:30:00\", \"text\": \"ok\"}\n{\"channel\": \"general\", \"author\": \"nobody\", \"ts\": \"2026-03-02T08:31:00\", \"text\": \"x\"}\n",
    );
    let e = World::build(&t, &d.path().join("w1"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("history.jsonl") && e.contains("line 2") && e.contains("nobody"),
        "{e}"
    );
    write(&dir.join("world/chat/history.jsonl"), "not json\n");
    let e = World::build(&t, &d.path().join("w2"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("history.jsonl: line 1"), "{e}");
    write(
        &dir.join("world/chat/history.jsonl"),
        "{\"channel\": \"nowhere\", \"author\": \"jonas\", \"ts\": \"2026-03-02T08:30:00\", \"text\": \"x\"}\n",
    );
    let e = World::build(&t, &d.path().join("w3"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no channel `nowhere`"), "{e}");
    write(&dir.join("world/chat/history.jsonl"), "");
    write(
        &dir.join("world/chat/channels.json"),
        "[{\"name\": \"x\", \"members\": [\"ghost\"]}]",
    );
    let e = World::build(&t, &d.path().join("w4"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("channels.json") && e.contains("ghost"), "{e}");
    write(&dir.join("world/chat/channels.json"), "[]");
    write(
        &dir.join("world/people.toml"),
        "[[person]]\nname = \"P\"\nemail = \"p@x.test\"\nhandle = \"p\"\nreplies_to = [\"fax\"]\n",
    );
    let e = World::build(&t, &d.path().join("w5"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("people.toml") && e.contains("fax"), "{e}");
}

#[test]
fn snapshot_and_restore_give_back_the_chat_state() {
    let (_d, _t, mut w) = setup();
    ok(
        &mut w,
        "chat_post",
        json!({"to": ["priya"], "text": "Q2 budget?"}),
    );
    let snap = w.snapshot().unwrap();
    let state = w.chat().clone();
    ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "later"}),
    );
    ok(&mut w, "chat_create_channel", json!({"name": "later"}));
    ok(&mut w, "chat_react", json!({"id": "g1", "emoji": "tada"}));
    assert_ne!(*w.chat(), state);
    w.restore(&snap).unwrap();
    assert_eq!(*w.chat(), state);
    // Ids continue from the snapshot's counter.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "again"}),
    );
    assert_eq!(r["id"], "c00006");
}
