//! Channels: list, join, create, and manage (topic, members, roles, leaving).

use std::collections::BTreeSet;

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::{Tool, ToolResult, boolean, parse, schema, string, strings};
use super::no_channel;
use crate::World;
use crate::chat::{
    ChannelRole, ChatState, channel_key, member_email, member_handle, valid_channel_name,
};

pub(super) const LIST_CHANNELS: Tool = Tool {
    name: "chat_list_channels",
    description: "List the chat channels you can see (public ones and private ones you belong to), with topic, member count and whether you are a member; and your direct conversations.",
    schema: || schema(&[], &[]),
    run: list_channels,
};
pub(super) const JOIN: Tool = Tool {
    name: "chat_join",
    description: "Join a public channel.",
    schema: || schema(&[("channel", string("Channel name"))], &["channel"]),
    run: join,
};
pub(super) const CREATE_CHANNEL: Tool = Tool {
    name: "chat_create_channel",
    description: "Create a channel (you are its first member and its owner); optionally private, with a topic and members to add. Some names are not available (reserved words, names already in use); then choose another.",
    schema: || {
        schema(
            &[
                ("name", string("Name: lower-case letters, digits, - and _")),
                ("private", boolean("Private channel (default false)")),
                ("topic", string("Channel topic")),
                ("members", strings("People to add (handles or emails)")),
            ],
            &["name"],
        )
    },
    run: create_channel,
};
pub(super) const SET_TOPIC: Tool = Tool {
    name: "chat_set_topic",
    description: "Set (or clear, with an empty text) the topic of a channel. Only its owners and moderators may.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name")),
                ("topic", string("The new topic; empty clears it")),
            ],
            &["channel", "topic"],
        )
    },
    run: set_topic,
};
pub(super) const INVITE: Tool = Tool {
    name: "chat_invite",
    description: "Add people to a channel. Only its owners and moderators may. People already in it are reported, not added twice.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name")),
                ("members", strings("People to add (handles or emails)")),
            ],
            &["channel", "members"],
        )
    },
    run: invite,
};
pub(super) const REMOVE_MEMBER: Tool = Tool {
    name: "chat_remove_member",
    description: "Remove someone from a channel. Owners may remove anyone but themselves (use chat_leave); moderators may remove plain members only.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name")),
                ("member", string("The person to remove (handle or email)")),
            ],
            &["channel", "member"],
        )
    },
    run: remove_member,
};
pub(super) const SET_ROLE: Tool = Tool {
    name: "chat_set_role",
    description: "Give a channel member a role: `owner`, `moderator` or `member` (no role). Only the channel's owners may; a channel keeps at least one owner once it has one.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name")),
                (
                    "member",
                    string("A member of the channel (handle or email)"),
                ),
                ("role", string("owner, moderator or member")),
            ],
            &["channel", "member", "role"],
        )
    },
    run: set_role,
};
pub(super) const LEAVE: Tool = Tool {
    name: "chat_leave",
    description: "Leave a channel. Its last owner must first make another member owner (chat_set_role).",
    schema: || schema(&[("channel", string("Channel name"))], &["channel"]),
    run: leave,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

fn list_channels(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let _: Empty = parse("chat_list_channels", args)?;
    let me = w.acting_email(actor)?;
    let channels: Vec<Value> = w
        .chat
        .channels()
        .filter(|c| ChatState::can_see(c, &me))
        .map(|c| {
            let count = w
                .chat
                .messages()
                .iter()
                .filter(|m| m.channel.as_deref() == Some(&c.name))
                .count();
            json!({"name": c.name, "url": w.url_of(crate::urls::Kind::ChatChannel, &c.name),
                "private": c.private, "topic": c.topic, "member": c.members.contains(&me), "role": c.role_of(&me).map(ChannelRole::as_str),
                "members": c.members.len(), "messages": count})
        })
        .collect();
    let mut dms: Vec<Vec<String>> = w
        .chat
        .messages()
        .iter()
        .filter(|m| m.channel.is_none() && m.dm.contains(&me))
        .map(|m| m.dm.clone())
        .collect();
    dms.sort();
    dms.dedup();
    let dms: Vec<Value> = dms
        .into_iter()
        .map(|d| {
            let with: Vec<String> = d
                .iter()
                .filter(|p| **p != me)
                .map(|p| member_handle(w, p))
                .collect();
            json!({"with": with})
        })
        .collect();
    Ok(json!({"channels": channels, "direct_messages": dms}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChannelArg {
    channel: String,
}

fn join(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ChannelArg = parse("chat_join", args)?;
    let me = w.acting_email(actor)?;
    let key = channel_key(&a.channel);
    let Some(ch) = w.chat.channels.get_mut(&key) else {
        return Err(no_channel(&a.channel));
    };
    if ch.private && !ch.members.contains(&me) {
        return Err(no_channel(&a.channel));
    }
    if ch.members.insert(me.clone()) {
        w.record(
            actor.clone(),
            "chat",
            "join",
            false,
            json!({"channel": key, "member": me}),
        );
    }
    Ok(json!({"channel": key, "member": true}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    name: String,
    #[serde(default)]
    private: bool,
    #[serde(default)]
    topic: String,
    #[serde(default)]
    members: Vec<String>,
}

/// Names no new channel can take: the words of channel-wide mentions.
pub const RESERVED_CHANNEL_NAMES: &[&str] = &["all", "channel", "everyone", "here"];

/// The refusal for a name that cannot be used, whatever the reason (reserved, or held by a
/// channel the creator cannot see): one message, so that it reveals nothing.
fn name_not_available(key: &str) -> String {
    format!("the name `{key}` is not available for a new channel; choose another name")
}

fn create_channel(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateArgs = parse("chat_create_channel", args)?;
    let me = w.acting_email(actor)?;
    let key = channel_key(&a.name);
    if !valid_channel_name(&key) {
        return Err(format!(
            "channel name `{}` is invalid: use 1-80 of a-z, 0-9, - and _",
            a.name
        ));
    }
    // A name held by a channel the creator cannot see (someone else's private channel) gets
    // the same answer as a reserved name: the refusal never says that such a channel exists.
    // A channel the creator can see is named as existing, which tells them nothing new.
    match w.chat.channel(&key) {
        Some(ch) if ChatState::can_see(ch, &me) => {
            return Err(format!(
                "a channel `{key}` already exists (chat_list_channels shows it); join it with chat_join or choose another name"
            ));
        }
        Some(_) => return Err(name_not_available(&key)),
        None if RESERVED_CHANNEL_NAMES.contains(&key.as_str()) => {
            return Err(name_not_available(&key));
        }
        None => {}
    }
    let mut set = BTreeSet::new();
    set.insert(me.clone());
    for m in &a.members {
        set.insert(
            member_email(w, m)
                .ok_or_else(|| format!("`{m}` is not a workspace member; see chat_members"))?,
        );
    }
    let list: Vec<String> = set.iter().cloned().collect();
    w.chat.channels.insert(
        key.clone(),
        crate::chat::Channel {
            name: key.clone(),
            private: a.private,
            topic: a.topic.clone(),
            members: set,
            owners: BTreeSet::from([me.clone()]),
            moderators: BTreeSet::new(),
        },
    );
    w.record(
        actor.clone(),
        "chat",
        "create_channel",
        false,
        json!({"channel": key, "private": a.private, "topic": a.topic, "members": list,
            "owner": me}),
    );
    Ok(json!({"channel": key, "private": a.private, "members": list, "owner": me}))
}

/// The channel `name` as `me` may manage it: visible, `me` a member, and (when `moderate`)
/// an owner or moderator. Errors say who can.
fn managed_channel(
    w: &World,
    me: &str,
    name: &str,
    what: &str,
) -> Result<crate::chat::Channel, String> {
    let key = channel_key(name);
    let ch = w
        .chat
        .channel(&key)
        .filter(|ch| ChatState::can_see(ch, me))
        .ok_or_else(|| no_channel(name))?;
    if !ch.members.contains(me) {
        return Err(format!(
            "you are not a member of #{key}; only its owners and moderators can {what}"
        ));
    }
    if !ch.can_moderate(me) {
        return Err(format!(
            "only an owner or a moderator of #{key} can {what}; {}",
            who_manages(w, ch)
        ));
    }
    Ok(ch.clone())
}

/// "its owners: a, b; its moderators: c" (handles), or that it has none.
pub(super) fn who_manages(w: &World, ch: &crate::chat::Channel) -> String {
    let handles = |set: &BTreeSet<String>| -> Vec<String> {
        set.iter()
            .map(|e| format!("@{}", member_handle(w, e)))
            .collect()
    };
    let (owners, moderators) = (handles(&ch.owners), handles(&ch.moderators));
    match (owners.is_empty(), moderators.is_empty()) {
        (true, true) => format!("#{} has no owner or moderator", ch.name),
        (false, true) => format!("its owners: {}", owners.join(", ")),
        (true, false) => format!("its moderators: {}", moderators.join(", ")),
        (false, false) => format!(
            "its owners: {}; its moderators: {}",
            owners.join(", "),
            moderators.join(", ")
        ),
    }
}

fn person_arg(w: &World, field: &str, who: &str) -> Result<String, String> {
    member_email(w, who)
        .ok_or_else(|| format!("`{field}`: `{who}` is not a workspace member; see chat_members"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicArgs {
    channel: String,
    topic: String,
}

fn set_topic(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: TopicArgs = parse("chat_set_topic", args)?;
    let me = w.acting_email(actor)?;
    let ch = managed_channel(w, &me, &a.channel, "set its topic")?;
    let topic = a.topic.trim().to_string();
    if topic.chars().count() > 250 {
        return Err("`topic` is longer than 250 characters; shorten it".into());
    }
    let before = ch.topic.clone();
    if let Some(c) = w.chat.channels.get_mut(&ch.name) {
        c.topic = topic.clone();
    }
    if before != topic {
        w.record(
            actor.clone(),
            "chat",
            "set_topic",
            false,
            json!({"channel": ch.name, "topic": topic, "before": before, "by": me}),
        );
    }
    Ok(json!({"channel": ch.name, "topic": topic}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InviteArgs {
    channel: String,
    members: Vec<String>,
}

fn invite(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: InviteArgs = parse("chat_invite", args)?;
    let me = w.acting_email(actor)?;
    let ch = managed_channel(w, &me, &a.channel, "add members")?;
    if a.members.is_empty() {
        return Err("`members` is empty; name the people to add".into());
    }
    let mut people = BTreeSet::new();
    for m in &a.members {
        people.insert(person_arg(w, "members", m)?);
    }
    let (already, added): (Vec<String>, Vec<String>) =
        people.into_iter().partition(|p| ch.members.contains(p));
    if let Some(c) = w.chat.channels.get_mut(&ch.name) {
        c.members.extend(added.iter().cloned());
    }
    if !added.is_empty() {
        w.record(
            actor.clone(),
            "chat",
            "invite",
            false,
            json!({"channel": ch.name, "members": added, "by": me}),
        );
    }
    Ok(json!({"channel": ch.name, "added": added, "already_members": already}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MemberArgs {
    channel: String,
    member: String,
}

fn remove_member(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: MemberArgs = parse("chat_remove_member", args)?;
    let me = w.acting_email(actor)?;
    let ch = managed_channel(w, &me, &a.channel, "remove members")?;
    let who = person_arg(w, "member", &a.member)?;
    if who == me {
        return Err("to take yourself out of a channel, use chat_leave".into());
    }
    let Some(their) = ch.role_of(&who) else {
        return Err(format!("`{}` is not a member of #{}", a.member, ch.name));
    };
    if ch.role_of(&me) != Some(ChannelRole::Owner) && their != ChannelRole::Member {
        return Err(format!(
            "only an owner of #{} can remove its {}s; {}",
            ch.name,
            their.as_str(),
            who_manages(w, &ch)
        ));
    }
    if let Some(c) = w.chat.channels.get_mut(&ch.name) {
        c.remove_member(&who);
    }
    w.record(
        actor.clone(),
        "chat",
        "remove_member",
        false,
        json!({"channel": ch.name, "member": who, "role": their.as_str(), "by": me}),
    );
    Ok(json!({"channel": ch.name, "removed": who}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleArgs {
    channel: String,
    member: String,
    role: String,
}

fn set_role(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: RoleArgs = parse("chat_set_role", args)?;
    let me = w.acting_email(actor)?;
    let role = ChannelRole::parse(&a.role).ok_or_else(|| {
        format!(
            "`role` must be owner, moderator or member, not `{}`",
            a.role
        )
    })?;
    let ch = managed_channel(w, &me, &a.channel, "give roles")?;
    if ch.role_of(&me) != Some(ChannelRole::Owner) {
        return Err(format!(
            "only an owner of #{} can give roles; {}",
            ch.name,
            who_manages(w, &ch)
        ));
    }
    let who = person_arg(w, "member", &a.member)?;
    let Some(before) = ch.role_of(&who) else {
        return Err(format!(
            "`{}` is not a member of #{}; add them first with chat_invite",
            a.member, ch.name
        ));
    };
    if before == ChannelRole::Owner && role != ChannelRole::Owner && ch.owners.len() == 1 {
        return Err(format!(
            "`{}` is the last owner of #{}; make another member owner first",
            a.member, ch.name
        ));
    }
    if before != role {
        if let Some(c) = w.chat.channels.get_mut(&ch.name) {
            c.clear_role(&who);
            match role {
                ChannelRole::Owner => {
                    c.owners.insert(who.clone());
                }
                ChannelRole::Moderator => {
                    c.moderators.insert(who.clone());
                }
                ChannelRole::Member => {}
            }
        }
        w.record(
            actor.clone(),
            "chat",
            "set_role",
            false,
            json!({"channel": ch.name, "member": who, "role": role.as_str(),
                "before": before.as_str(), "by": me}),
        );
    }
    Ok(json!({"channel": ch.name, "member": who, "role": role.as_str(), "before": before.as_str()}))
}

fn leave(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ChannelArg = parse("chat_leave", args)?;
    let me = w.acting_email(actor)?;
    let key = channel_key(&a.channel);
    let ch = w
        .chat
        .channel(&key)
        .filter(|ch| ChatState::can_see(ch, &me))
        .cloned()
        .ok_or_else(|| no_channel(&a.channel))?;
    let Some(role) = ch.role_of(&me) else {
        return Err(format!("you are not a member of #{key}"));
    };
    if role == ChannelRole::Owner && ch.owners.len() == 1 && ch.members.len() > 1 {
        return Err(format!(
            "you are the last owner of #{key}; make another member owner with chat_set_role first"
        ));
    }
    if let Some(c) = w.chat.channels.get_mut(&key) {
        c.remove_member(&me);
    }
    w.record(
        actor.clone(),
        "chat",
        "leave",
        false,
        json!({"channel": key, "member": me, "role": role.as_str()}),
    );
    Ok(json!({"channel": key, "member": false}))
}
