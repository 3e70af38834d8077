//! Chat channel roles (owner, moderator, member) and the tools they govern: topic, invite,
//! remove, roles, leave, deleting messages (issue 14, gap 9: TheAgentCompany has tasks on
//! them). Seeded from `channels.json` (`owners`, `moderators`); a created channel's creator
//! is its owner. Colleagues acting through `act` events are held to the same rules.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use bureau_world::chat::ChannelRole;
use serde_json::{Value, json};

const USER: &str = "alex@bw.test";
const PRIYA: &str = "priya@bw.test";
const JONAS: &str = "jonas@bw.test";
const MARA: &str = "mara@bw.test";

const PEOPLE: &str = r#"
[[person]]
name = "Priya Natarajan"
email = "priya@bw.test"
handle = "priya"
channels = ["general"]

[[person]]
name = "Jonas Petersen"
email = "jonas@bw.test"
handle = "jonas"
channels = ["general"]

[[person]]
name = "Mara Lindqvist"
email = "mara@bw.test"
handle = "mara"
channels = ["general"]
"#;

const CHANNELS: &str = r#"[
  {"name": "general", "members": ["alex"]},
  {"name": "ops", "members": ["mara"], "owners": ["alex"], "moderators": ["jonas"], "topic": "Operations"},
  {"name": "board", "private": true, "owners": ["priya"], "members": ["jonas"]}
]"#;

const HISTORY: &str = r#"{"id": "o1", "channel": "ops", "author": "mara", "ts": "2026-03-02T08:00:00", "text": "spam spam"}
{"id": "o2", "channel": "ops", "author": "jonas", "ts": "2026-03-02T08:01:00", "text": "please stop", "thread_of": "o1"}
{"id": "g1", "channel": "general", "author": "priya", "ts": "2026-03-02T08:02:00", "text": "hello all"}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn setup_with(channels: &str) -> Result<(tempfile::TempDir, World), String> {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    write(
        &dir.join("task.toml"),
        r#"
id = "roles"
title = "Roles"
persona = "assistant"
category = "admin"
difficulty = "easy"
apps = ["chat"]
[user]
name = "Alex Meyer"
email = "alex@bw.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    );
    write(&dir.join("world/people.toml"), PEOPLE);
    write(&dir.join("world/chat/channels.json"), channels);
    write(&dir.join("world/chat/history.jsonl"), HISTORY);
    let t = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::build(&t, &d.path().join("trial")).map_err(|e| e.to_string())?;
    w.begin_turn(&t.turns[0]).unwrap();
    Ok((d, w))
}

fn setup() -> (tempfile::TempDir, World) {
    setup_with(CHANNELS).unwrap_or_else(|e| panic!("{e}"))
}

fn call(w: &mut World, who: &Actor, tool: &str, args: Value) -> Result<Value, String> {
    match w.call_tool(who.clone(), tool, &args) {
        ToolOutcome::Ok { value, .. } => Ok(value),
        ToolOutcome::Error { message } => Err(message),
    }
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    call(w, &Actor::Agent, tool, args).unwrap_or_else(|e| panic!("{tool} failed: {e}"))
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match call(w, &Actor::Agent, tool, args) {
        Ok(v) => panic!("{tool} should fail, got {v}"),
        Err(e) => e,
    }
}

fn colleague(email: &str) -> Actor {
    Actor::Colleague(email.to_string())
}

fn role(w: &World, channel: &str, email: &str) -> Option<ChannelRole> {
    w.chat().channel(channel).and_then(|c| c.role_of(email))
}

#[test]
fn seeded_roles_are_members_shown_to_tools_and_checks() {
    let (_d, w) = setup();
    let ops = w.chat().channel("ops").unwrap();
    // Owners and moderators listed only under their role are members too.
    assert!(ops.members.contains(USER) && ops.members.contains(JONAS));
    assert_eq!(role(&w, "ops", USER), Some(ChannelRole::Owner));
    assert_eq!(role(&w, "ops", JONAS), Some(ChannelRole::Moderator));
    assert_eq!(role(&w, "ops", MARA), Some(ChannelRole::Member));
    assert_eq!(role(&w, "ops", PRIYA), None);
    // Channels of the roster have no owner.
    assert!(w.chat().channel("general").unwrap().owners.is_empty());
    let view = w.chat().check_view(chrono_tz::UTC);
    let ops = view["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ops")
        .unwrap();
    assert_eq!(ops["owners"], json!([USER]));
    assert_eq!(ops["moderators"], json!([JONAS]));

    let (_d, mut w) = setup();
    let list = ok(&mut w, "chat_list_channels", json!({}));
    let roles: Vec<(String, Value)> = list["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["role"].clone()))
        .collect();
    assert_eq!(
        roles,
        vec![
            ("general".to_string(), json!("member")),
            ("ops".to_string(), json!("owner"))
        ]
    );
    let members = ok(&mut w, "chat_members", json!({"channel": "ops"}));
    let by: Vec<(String, Value)> = members["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["email"].as_str().unwrap().to_string(),
                m["channel_role"].clone(),
            )
        })
        .collect();
    assert_eq!(
        by,
        vec![
            (USER.to_string(), json!("owner")),
            (JONAS.to_string(), json!("moderator")),
            (MARA.to_string(), json!("member")),
        ]
    );
}

#[test]
fn bad_role_seeds_name_the_file_and_the_fix() {
    let e = setup_with(r#"[{"name": "ops", "owners": ["ghost"]}]"#).unwrap_err();
    assert!(
        e.contains("channels.json") && e.contains("owner `ghost`"),
        "{e}"
    );
    let e =
        setup_with(r#"[{"name": "ops", "owners": ["alex"], "moderators": ["alex"]}]"#).unwrap_err();
    assert!(e.contains("both owner and moderator"), "{e}");
    let e = setup_with(r#"[{"name": "ops", "admins": ["alex"]}]"#).unwrap_err();
    assert!(e.contains("admins") && e.contains("owners"), "{e}");
}

#[test]
fn only_owners_and_moderators_manage_a_channel() {
    let (_d, mut w) = setup();
    // The agent owns #ops: topic, invite, remove, roles.
    ok(
        &mut w,
        "chat_set_topic",
        json!({"channel": "#ops", "topic": "Ops and on-call"}),
    );
    assert_eq!(w.chat().channel("ops").unwrap().topic, "Ops and on-call");
    let r = ok(
        &mut w,
        "chat_invite",
        json!({"channel": "ops", "members": ["priya", "mara"]}),
    );
    assert_eq!(r["added"], json!([PRIYA]));
    assert_eq!(r["already_members"], json!([MARA]));
    ok(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "priya", "role": "moderator"}),
    );
    assert_eq!(role(&w, "ops", PRIYA), Some(ChannelRole::Moderator));
    ok(
        &mut w,
        "chat_remove_member",
        json!({"channel": "ops", "member": "@priya"}),
    );
    assert_eq!(role(&w, "ops", PRIYA), None);

    // In #general (no owner) the agent is a plain member: refused, and told who can.
    let e = err(
        &mut w,
        "chat_set_topic",
        json!({"channel": "general", "topic": "x"}),
    );
    assert!(
        e.contains("only an owner or a moderator of #general") && e.contains("no owner"),
        "{e}"
    );
    let e = err(
        &mut w,
        "chat_invite",
        json!({"channel": "general", "members": ["priya"]}),
    );
    assert!(e.contains("only an owner or a moderator"), "{e}");

    // A moderator may manage members but not give roles, nor remove an owner.
    let jonas = colleague(JONAS);
    call(
        &mut w,
        &jonas,
        "chat_invite",
        json!({"channel": "ops", "members": ["priya"]}),
    )
    .unwrap();
    call(
        &mut w,
        &jonas,
        "chat_remove_member",
        json!({"channel": "ops", "member": "priya"}),
    )
    .unwrap();
    let e = call(
        &mut w,
        &jonas,
        "chat_set_role",
        json!({"channel": "ops", "member": "mara", "role": "moderator"}),
    )
    .unwrap_err();
    assert!(
        e.contains("only an owner of #ops can give roles") && e.contains("@alex"),
        "{e}"
    );
    let e = call(
        &mut w,
        &jonas,
        "chat_remove_member",
        json!({"channel": "ops", "member": "alex"}),
    )
    .unwrap_err();
    assert!(
        e.contains("only an owner of #ops can remove its owners"),
        "{e}"
    );
    // A plain member cannot.
    let e = call(
        &mut w,
        &colleague(MARA),
        "chat_set_topic",
        json!({"channel": "ops", "topic": "mine"}),
    )
    .unwrap_err();
    assert!(
        e.contains("its owners: @alex; its moderators: @jonas"),
        "{e}"
    );
    // A private channel stays invisible to non-members, managers or not.
    let e = err(
        &mut w,
        "chat_invite",
        json!({"channel": "board", "members": ["mara"]}),
    );
    assert!(e.contains("no channel `board` that you can see"), "{e}");

    // Every change is in the log with its actor.
    let ops: Vec<(String, String)> = w
        .log()
        .iter()
        .filter(|e| e.service == "chat")
        .map(|e| (e.action.clone(), e.actor.to_string()))
        .collect();
    for action in ["set_topic", "invite", "set_role", "remove_member"] {
        assert!(ops.iter().any(|(a, _)| a == action), "{action}: {ops:?}");
    }
    assert!(ops.contains(&("invite".to_string(), format!("colleague:{JONAS}"))));
}

#[test]
fn a_channel_keeps_an_owner_and_creators_own_their_channels() {
    let (_d, mut w) = setup();
    let e = err(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "alex", "role": "member"}),
    );
    assert!(e.contains("last owner of #ops"), "{e}");
    let e = err(&mut w, "chat_leave", json!({"channel": "ops"}));
    assert!(
        e.contains("last owner of #ops") && e.contains("chat_set_role"),
        "{e}"
    );
    let e = err(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "priya", "role": "owner"}),
    );
    assert!(
        e.contains("not a member of #ops") && e.contains("chat_invite"),
        "{e}"
    );
    let e = err(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "mara", "role": "admin"}),
    );
    assert!(e.contains("owner, moderator or member"), "{e}");
    ok(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "mara", "role": "owner"}),
    );
    // Now the agent can step down and leave; Mara owns #ops.
    ok(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "alex", "role": "member"}),
    );
    ok(&mut w, "chat_leave", json!({"channel": "ops"}));
    assert_eq!(role(&w, "ops", USER), None);
    assert_eq!(role(&w, "ops", MARA), Some(ChannelRole::Owner));
    let e = err(&mut w, "chat_leave", json!({"channel": "ops"}));
    assert!(e.contains("not a member of #ops"), "{e}");

    let r = ok(&mut w, "chat_create_channel", json!({"name": "launch"}));
    assert_eq!(r["owner"], json!(USER));
    assert_eq!(role(&w, "launch", USER), Some(ChannelRole::Owner));
    // The sole member and owner may leave an otherwise empty channel.
    ok(&mut w, "chat_leave", json!({"channel": "launch"}));
}

#[test]
fn messages_are_deleted_by_their_author_or_a_channel_manager() {
    let (_d, mut w) = setup();
    // The agent owns #ops: it deletes Mara's spam; the reply in its thread stays.
    ok(&mut w, "chat_delete_message", json!({"id": "o1"}));
    assert!(w.chat().message("o1").is_none());
    assert!(w.chat().message("o2").is_some());
    // Not someone else's message in #general, where the agent has no role.
    let e = err(&mut w, "chat_delete_message", json!({"id": "g1"}));
    assert!(e.contains("only your own messages in #general"), "{e}");
    // Its own message, anywhere.
    let r = ok(
        &mut w,
        "chat_post",
        json!({"channel": "general", "text": "oops"}),
    );
    let id = r["id"].as_str().unwrap().to_string();
    ok(&mut w, "chat_delete_message", json!({"id": id}));
    assert!(w.chat().message(&id).is_none());
    // Not a message it cannot see.
    let e = err(&mut w, "chat_delete_message", json!({"id": "nope"}));
    assert!(e.contains("no message `nope`"), "{e}");
    // The log keeps what was deleted.
    let deleted: Vec<&Value> = w
        .log()
        .iter()
        .filter(|e| e.service == "chat" && e.action == "delete")
        .map(|e| &e.payload)
        .collect();
    assert_eq!(deleted.len(), 2);
    assert_eq!(deleted[0]["text"], "spam spam");
}

#[test]
fn roles_survive_snapshot_and_restore() {
    let (_d, mut w) = setup();
    let snap = w.snapshot().unwrap();
    let before = w.chat().clone();
    ok(
        &mut w,
        "chat_set_role",
        json!({"channel": "ops", "member": "mara", "role": "moderator"}),
    );
    assert_ne!(*w.chat(), before);
    w.restore(&snap).unwrap();
    assert_eq!(*w.chat(), before);
    assert_eq!(role(&w, "ops", JONAS), Some(ChannelRole::Moderator));
}
