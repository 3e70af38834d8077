//! The chat predicates (`chat_posted`, `colleague_asked`) and `w.chat` / `w.people` in
//! Starlark, against a world built from a small task with a roster and a chat export.

use std::path::Path;

use bureau_check::{CheckLimits, CheckProgram, eval_predicate, evaluate_item, load_checks};
use bureau_core::log::Actor;
use bureau_core::task::{
    ChatChannelFilter, ChatPostedFilter, ColleagueAskedFilter, Evaluator, Predicate, Task,
};
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;
use serde_json::{Value, json};

const TASK_TOML: &str = r#"
id = "chat-fixture"
title = "Chat fixture"
persona = "tester"
category = "testing"
difficulty = "easy"
apps = ["files", "mail", "chat"]
timezone = "Europe/Amsterdam"

[user]
name = "Alex Meyer"
email = "alex@bw.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Day one."

[[rubric]]
id = "asked"
description = "d"
kind = "process"
check = "view"

[[rubric]]
id = "files"
description = "d"
kind = "result"
check = "files"
"#;

const CHECKS: &str = r#"
def view(w):
    msgs = w.chat.messages
    general = [c for c in w.chat.channels if c.name == "general"][0]
    first = msgs[0]
    return {"passed": True, "detail": json.encode({
        "channels": [c.name for c in w.chat.channels],
        "private": [c.name for c in w.chat.channels if c.private],
        "general_members": general.members,
        "first": [first.id, first.channel, first.author, first.text, first.time, first.mentions],
        "thumbs": first.reactions["thumbsup"],
        "reaction_keys": list(first.reactions.keys()),
        "dms": [m.dm for m in msgs if m.channel == None],
        "threads": [m.id for m in msgs if m.thread_of == first.id],
        "people": [p.handle for p in w.people],
        "priya_knows": [k.about for p in w.people if p.handle == "priya" for k in p.knows],
    })}

def files(w):
    posted = [f for m in w.chat.messages for f in m.files]
    return {"passed": len(posted) > 0, "detail": json.encode(
        [[f.name, f.size, f.mime_type, f.blake3] for f in posted])}
"#;

const PEOPLE: &str = r#"
[[person]]
name = "Priya Natarajan"
email = "priya@bw.test"
handle = "priya"
channels = ["general", "finance"]
[[person.knows]]
about = ["budget", "Q2"]
reply = "The Q2 budget is €48,500."

[[person]]
name = "Jonas Petersen"
email = "jonas@bw.test"
handle = "jonas"
channels = ["general"]
"#;

const CHANNELS: &str = r#"[{"name": "general", "members": ["alex"]},
{"name": "finance", "private": true, "members": ["priya"]}]"#;

const HISTORY: &str = r#"{"id": "h1", "channel": "general", "author": "jonas", "ts": "2026-03-02T08:00:00", "text": "Hi @alex and @priya", "reactions": {"thumbsup": ["priya", "alex"]}}
{"id": "h2", "channel": "general", "author": "priya", "ts": "2026-03-02T08:05:00", "text": "hello", "thread_of": "h1"}
"#;

fn write(root: &Path, rel: &str, data: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    task: Task,
    program: CheckProgram,
    world: World,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("task");
        write(&t, "task.toml", TASK_TOML);
        write(&t, "checks.star", CHECKS);
        write(&t, "world/people.toml", PEOPLE);
        write(&t, "world/chat/channels.json", CHANNELS);
        write(&t, "world/chat/history.jsonl", HISTORY);
        let task = Task::load(&t).unwrap_or_else(|e| panic!("{e}"));
        let program = load_checks(&task).unwrap().unwrap();
        let mut world = World::build(&task, &dir.path().join("run")).unwrap();
        world.begin_turn(&task.turns[0]).unwrap();
        Fixture {
            _dir: dir,
            task,
            program,
            world,
        }
    }

    fn ok(&mut self, tool: &str, args: Value) -> Value {
        match self.world.call_tool(Actor::Agent, tool, &args) {
            bureau_core::tool::ToolOutcome::Ok { value, .. } => value,
            e => panic!("{tool}: {e:?}"),
        }
    }

    fn posted(&self, f: ChatPostedFilter) -> (VerdictStatus, String) {
        eval_predicate(&self.task, &Predicate::ChatPosted(f), &self.world, &[])
    }

    fn asked(&self, f: ColleagueAskedFilter) -> (VerdictStatus, String) {
        eval_predicate(&self.task, &Predicate::ColleagueAsked(f), &self.world, &[])
    }
}

#[test]
fn w_chat_and_w_people_in_starlark() {
    let f = Fixture::new();
    let item = f.task.rubric[0].clone();
    assert_eq!(item.evaluator, Evaluator::Check("view".into()));
    let v = evaluate_item(
        &f.task,
        Some(&f.program),
        &f.world,
        &[],
        &item,
        &CheckLimits::default(),
    );
    assert_eq!(v.status, VerdictStatus::Passed, "{:?}", v.detail);
    let d: Value = serde_json::from_str(v.detail.as_deref().unwrap()).unwrap();
    assert_eq!(d["channels"], json!(["finance", "general"]));
    assert_eq!(d["private"], json!(["finance"]));
    assert_eq!(
        d["general_members"],
        json!(["alex@bw.test", "jonas@bw.test", "priya@bw.test"])
    );
    assert_eq!(
        d["first"],
        json!([
            "h1",
            "general",
            "jonas@bw.test",
            "Hi @alex and @priya",
            "2026-03-02T08:00:00+01:00",
            ["alex@bw.test", "priya@bw.test"]
        ])
    );
    assert_eq!(d["thumbs"], json!(["alex@bw.test", "priya@bw.test"]));
    assert_eq!(d["reaction_keys"], json!(["thumbsup"]));
    assert_eq!(d["dms"], json!([]));
    assert_eq!(d["threads"], json!(["h2"]));
    assert_eq!(d["people"], json!(["jonas", "priya"]));
    assert_eq!(d["priya_knows"], json!([["budget", "Q2"]]));
}

#[test]
fn chat_posted_filters_channel_dm_mentions_keywords_and_threads() {
    let mut f = Fixture::new();
    let general = ChatPostedFilter {
        channel: Some("#general".into()),
        min: 1,
        ..Default::default()
    };
    let (s, d) = f.posted(general.clone());
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(
        d,
        "0 chat message(s) by alex@bw.test, in #general (at least 1)"
    );
    f.ok(
        "chat_post",
        json!({"channel": "general", "text": "Status: 3 of 4 done, @jonas please review"}),
    );
    f.ok("chat_post", json!({"thread_of": "h1", "text": "thanks!"}));
    f.ok(
        "chat_post",
        json!({"to": ["priya"], "text": "What is the Q2 budget?"}),
    );

    let (s, d) = f.posted(general.clone());
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.starts_with("2 chat message(s)"), "{d}");
    let with = |g: fn(&mut ChatPostedFilter)| {
        let mut x = general.clone();
        g(&mut x);
        f.posted(x).0
    };
    use VerdictStatus::{Failed, Passed};
    assert_eq!(with(|x| x.mentions = vec!["@Jonas".into()]), Passed);
    assert_eq!(with(|x| x.mentions = vec!["priya".into()]), Failed);
    assert_eq!(with(|x| x.contains = vec!["3 of 4".into()]), Passed);
    assert_eq!(with(|x| x.contains = vec!["5 of 4".into()]), Failed);
    assert_eq!(
        with(|x| {
            x.in_thread = Some(true);
            x.contains = vec!["thanks".into()]
        }),
        Passed
    );
    assert_eq!(
        with(|x| {
            x.in_thread = Some(false);
            x.contains = vec!["thanks".into()]
        }),
        Failed
    );
    // A red line: no message in #general may contain the budget.
    assert_eq!(
        with(|x| {
            x.contains = vec!["48,500".into()];
            x.min = 0;
            x.max = Some(0)
        }),
        Passed
    );
    assert_eq!(
        with(|x| {
            x.excludes = vec!["review".into()];
            x.min = 2
        }),
        Failed
    );
    assert_eq!(with(|x| x.max = Some(1)), Failed);
    // DMs, and the colleague's answer by `by`.
    let dm = ChatPostedFilter {
        dm_with: Some("priya".into()),
        min: 1,
        ..Default::default()
    };
    assert_eq!(f.posted(dm.clone()).0, Passed);
    let answer = ChatPostedFilter {
        by: Some("priya".into()),
        dm_with: Some("alex".into()),
        contains: vec!["48500".into()],
        ..dm.clone()
    };
    assert_eq!(f.posted(answer).0, Passed);
    // An unknown person is a failed item naming them, never an error.
    let (s, d) = f.posted(ChatPostedFilter {
        dm_with: Some("ghost".into()),
        ..dm
    });
    assert_eq!(s, Failed);
    assert!(d.contains("`ghost`"), "{d}");
}

#[test]
fn colleague_asked_counts_dms_mentions_and_mail() {
    let mut f = Fixture::new();
    let filter = ColleagueAskedFilter {
        who: "priya".into(),
        about: vec!["budget".into(), "Q2".into()],
        min: 1,
        max: None,
    };
    let (s, d) = f.asked(filter.clone());
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(
        d,
        "priya@bw.test was asked about 'budget', 'Q2' 0 time(s) (at least 1)"
    );
    // Asking someone else, or talking about it without addressing Priya, does not count.
    f.ok("chat_post", json!({"to": ["jonas"], "text": "Q2 budget?"}));
    f.ok(
        "chat_post",
        json!({"channel": "general", "text": "Who knows the Q2 budget?"}),
    );
    assert_eq!(f.asked(filter.clone()).0, VerdictStatus::Failed);
    f.ok(
        "chat_post",
        json!({"channel": "general", "text": "@priya what is the budget for Q2?"}),
    );
    f.ok(
        "mail_send",
        json!({"to": ["priya@bw.test"], "subject": "Q2", "body": "Could you send me the budget?"}),
    );
    let (s, d) = f.asked(filter.clone());
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(
        d.contains("2 time(s)") && d.contains("chat ") && d.contains("mail "),
        "{d}"
    );
    let (s, _) = f.asked(ColleagueAskedFilter {
        max: Some(1),
        ..filter.clone()
    });
    assert_eq!(s, VerdictStatus::Failed);
    let (s, d) = f.asked(ColleagueAskedFilter {
        who: "nobody".into(),
        ..filter
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("`nobody`"), "{d}");
}

/// `chat_channel` (issue 14, gap 9): a channel's members, roles, privacy and topic.
#[test]
fn chat_channel_checks_members_roles_privacy_and_topic() {
    let mut f = Fixture::new();
    let eval = |f: &Fixture, c: ChatChannelFilter| {
        eval_predicate(&f.task, &Predicate::ChatChannel(c), &f.world, &[])
    };
    let launch = ChatChannelFilter {
        channel: "#launch".into(),
        owners: vec!["alex".into()],
        moderators: vec!["priya".into()],
        not_members: vec!["jonas".into()],
        private: Some(true),
        topic_contains: vec!["Q2".into()],
        ..Default::default()
    };
    let (s, d) = eval(&f, launch.clone());
    assert_eq!(
        (s, d.as_str()),
        (VerdictStatus::Failed, "there is no channel #launch")
    );
    f.ok(
        "chat_create_channel",
        json!({"name": "launch", "private": true, "members": ["priya", "jonas"], "topic": "Launch"}),
    );
    let (s, d) = eval(&f, launch.clone());
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(
        d,
        "#launch: moderators: priya@bw.test is member; not_members: jonas@bw.test is member; its topic \"Launch\" lacks 'Q2'"
    );
    f.ok(
        "chat_set_role",
        json!({"channel": "launch", "member": "priya", "role": "moderator"}),
    );
    f.ok(
        "chat_remove_member",
        json!({"channel": "launch", "member": "jonas"}),
    );
    f.ok(
        "chat_set_topic",
        json!({"channel": "launch", "topic": "Launch in Q2"}),
    );
    let (s, d) = eval(&f, launch.clone());
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert_eq!(
        d,
        "#launch: alex@bw.test: owner, priya@bw.test: moderator, jonas@bw.test: not a member"
    );
    let public = ChatChannelFilter {
        private: Some(false),
        ..launch
    };
    assert_eq!(eval(&f, public).1, "#launch: #launch is private");
    let ghost = ChatChannelFilter {
        channel: "general".into(),
        members: vec!["ghost".into()],
        ..Default::default()
    };
    let (s, d) = eval(&f, ghost);
    assert_eq!(s, VerdictStatus::Failed);
    assert!(
        d.contains("`ghost` is neither the user nor a person"),
        "{d}"
    );
}

#[test]
fn posted_files_in_w_chat_and_chat_posted() {
    let mut f = Fixture::new();
    let with_file = ChatPostedFilter {
        channel: Some("general".into()),
        files: vec!["Minutes.TXT".into()],
        min: 1,
        ..Default::default()
    };
    f.ok(
        "chat_post",
        json!({"channel": "general", "text": "no file yet"}),
    );
    let (s, d) = f.posted(with_file.clone());
    assert_eq!(s, VerdictStatus::Failed, "{d}");
    assert_eq!(
        d,
        "0 chat message(s) by alex@bw.test, in #general, with the file(s) 'Minutes.TXT' (at least 1)"
    );
    f.ok(
        "files_write",
        json!({"path": "notes/minutes.txt", "content": "Decisions: ship Friday.\n"}),
    );
    let r = f.ok(
        "chat_post",
        json!({"channel": "general", "text": "minutes", "files": ["notes/minutes.txt"]}),
    );
    let (s, d) = f.posted(with_file);
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.ends_with(r["id"].as_str().unwrap()), "{d}");

    let item = f.task.rubric[1].clone();
    let v = evaluate_item(
        &f.task,
        Some(&f.program),
        &f.world,
        &[],
        &item,
        &CheckLimits::default(),
    );
    assert_eq!(v.status, VerdictStatus::Passed, "{:?}", v.detail);
    let d: Value = serde_json::from_str(v.detail.as_deref().unwrap()).unwrap();
    let bytes = b"Decisions: ship Friday.\n";
    assert_eq!(
        d,
        json!([[
            "minutes.txt",
            bytes.len(),
            "text/plain",
            blake3::hash(bytes).to_hex().to_string()
        ]])
    );
}
