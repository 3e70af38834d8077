//! chat_* tools: the team chat, as the acting person (the user, or a colleague in an `act`
//! event). Colleagues answer the agent's DMs and mentions right away (see
//! [`crate::people::ReplyPolicy`]).

use std::collections::BTreeSet;

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, boolean, integer, parse, schema, string, strings, time_arg};
use crate::World;
use crate::chat::{
    ChannelRole, ChatMessage, ChatState, channel_key, dm_participants, member_email, member_handle,
    member_name, members, message_json, parse_mentions, valid_channel_name,
};
use crate::people::{ChannelKind, Incoming};

pub(super) const TOOLS: &[Tool] = &[
    LIST_CHANNELS,
    READ,
    POST,
    REACT,
    SEARCH,
    JOIN,
    MEMBERS,
    CREATE_CHANNEL,
    SET_TOPIC,
    INVITE,
    REMOVE_MEMBER,
    SET_ROLE,
    LEAVE,
    DELETE_MESSAGE,
];

const LIST_CHANNELS: Tool = Tool {
    name: "chat_list_channels",
    description: "List the chat channels you can see (public ones and private ones you belong to), with topic, member count and whether you are a member; and your direct conversations.",
    schema: || schema(&[], &[]),
    run: list_channels,
};
const READ: Tool = Tool {
    name: "chat_read",
    description: "Read messages of a channel or of a direct conversation, oldest first (the last `limit`). Each message has an id, author, text, time, thread_of (the thread's root id for replies), mentions and reactions.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name (with or without #)")),
                (
                    "dm",
                    strings(
                        "The other people of a direct conversation (handles or emails); instead of channel",
                    ),
                ),
                (
                    "thread",
                    string("Only this thread: the root message id and its replies"),
                ),
                (
                    "since",
                    string("Only messages at or after this datetime (ISO 8601)"),
                ),
                (
                    "limit",
                    integer("At most this many, the latest (default 50)"),
                ),
            ],
            &[],
        )
    },
    run: read,
};
const POST: Tool = Tool {
    name: "chat_post",
    description: "Post a message: to a channel you are a member of, or as a direct message `to` one or more people (handles or emails). `thread_of` replies in a message's thread. Mention people with @handle. Colleagues who answer right away are shown in `replies`.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name")),
                (
                    "to",
                    strings("People of a direct message (handles or emails); instead of channel"),
                ),
                ("text", string("Message text; @handle mentions a member")),
                (
                    "thread_of",
                    string("Reply in the thread of this message id (its conversation is used)"),
                ),
            ],
            &["text"],
        )
    },
    run: post,
};
const REACT: Tool = Tool {
    name: "chat_react",
    description: "Add an emoji reaction (a name like `thumbsup` or `white_check_mark`) to a message; remove=true takes yours away.",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("emoji", string("Emoji name, without colons")),
                (
                    "remove",
                    boolean("Remove your reaction instead (default false)"),
                ),
            ],
            &["id", "emoji"],
        )
    },
    run: react,
};
const SEARCH: Tool = Tool {
    name: "chat_search",
    description: "Search the messages you can see (case-insensitive text match), newest first.",
    schema: || {
        schema(
            &[
                ("query", string("Text to find")),
                ("channel", string("Only this channel")),
                (
                    "from",
                    string("Only messages by this person (handle or email)"),
                ),
            ],
            &["query"],
        )
    },
    run: search,
};
const JOIN: Tool = Tool {
    name: "chat_join",
    description: "Join a public channel.",
    schema: || schema(&[("channel", string("Channel name"))], &["channel"]),
    run: join,
};
const MEMBERS: Tool = Tool {
    name: "chat_members",
    description: "List the workspace members (name, handle, email, role, department, profile), or the members of one channel.",
    schema: || schema(&[("channel", string("Only members of this channel"))], &[]),
    run: members_tool,
};
const CREATE_CHANNEL: Tool = Tool {
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
const SET_TOPIC: Tool = Tool {
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
const INVITE: Tool = Tool {
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
const REMOVE_MEMBER: Tool = Tool {
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
const SET_ROLE: Tool = Tool {
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
const LEAVE: Tool = Tool {
    name: "chat_leave",
    description: "Leave a channel. Its last owner must first make another member owner (chat_set_role).",
    schema: || schema(&[("channel", string("Channel name"))], &["channel"]),
    run: leave,
};
const DELETE_MESSAGE: Tool = Tool {
    name: "chat_delete_message",
    description: "Delete a message: your own anywhere, or anyone's in a channel you own or moderate. Replies in its thread stay.",
    schema: || schema(&[("id", string("Message id"))], &["id"]),
    run: delete_message,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

fn no_channel(name: &str) -> String {
    format!("no channel `{name}` that you can see; chat_list_channels lists them")
}

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

/// A message as the agent sees it: with the author's handle and name.
fn shown(w: &World, m: &ChatMessage) -> Value {
    let mut v = message_json(m, w.timezone());
    if let Some(o) = v.as_object_mut() {
        let reactions: serde_json::Map<String, Value> = m
            .reactions
            .iter()
            .map(|(k, who)| {
                (
                    k.clone(),
                    json!(who.iter().map(|e| member_handle(w, e)).collect::<Vec<_>>()),
                )
            })
            .collect();
        o.insert("reactions".into(), Value::Object(reactions));
        o.insert(
            "url".into(),
            json!(w.url_of(crate::urls::Kind::ChatMessage, &m.id)),
        );
        o.insert("author_name".into(), json!(member_name(w, &m.author)));
        o.insert("author_handle".into(), json!(member_handle(w, &m.author)));
        if m.channel.is_none() {
            o.remove("channel");
        } else {
            o.remove("dm");
        }
    }
    v
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    channel: Option<String>,
    dm: Option<Vec<String>>,
    thread: Option<String>,
    since: Option<String>,
    #[serde(default = "fifty")]
    limit: usize,
}
fn fifty() -> usize {
    50
}

fn read(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ReadArgs = parse("chat_read", args)?;
    let me = w.acting_email(actor)?;
    let since = match &a.since {
        Some(s) => Some(time_arg(w, "since", s)?.with_timezone(&chrono::Utc)),
        None => None,
    };
    // Which conversation.
    let (channel, dm) = match (&a.channel, &a.dm, &a.thread) {
        (Some(c), None, _) => {
            let key = channel_key(c);
            match w.chat.channel(&key) {
                Some(ch) if ChatState::can_see(ch, &me) => (Some(key), Vec::new()),
                _ => return Err(no_channel(c)),
            }
        }
        (None, Some(list), _) => (None, dm_participants(w, &me, list)?),
        (None, None, Some(t)) => {
            let root = w
                .chat
                .message(t)
                .filter(|m| w.chat.visible_to(m, &me))
                .ok_or_else(|| format!("no message `{t}` that you can see"))?;
            (root.channel.clone(), root.dm.clone())
        }
        (None, None, None) => {
            return Err("give `channel` or `dm` (or a `thread` id) to read".into());
        }
        (Some(_), Some(_), _) => return Err("give either `channel` or `dm`, not both".into()),
    };
    if let Some(t) = &a.thread {
        match w.chat.message(t) {
            Some(m) if m.channel == channel && m.dm == dm => {}
            _ => return Err(format!("no message `{t}` in that conversation")),
        }
    }
    let mut msgs: Vec<&ChatMessage> = w
        .chat
        .messages()
        .iter()
        .filter(|m| m.channel == channel && m.dm == dm)
        .filter(|m| {
            a.thread
                .as_ref()
                .is_none_or(|t| m.id == *t || m.thread_of.as_ref() == Some(t))
        })
        .filter(|m| since.is_none_or(|s| m.time >= s))
        .collect();
    msgs.sort_by_key(|m| m.time);
    let total = msgs.len();
    let skip = total.saturating_sub(a.limit.max(1));
    let out: Vec<Value> = msgs.into_iter().skip(skip).map(|m| shown(w, m)).collect();
    Ok(json!({"total": total, "messages": out}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PostArgs {
    channel: Option<String>,
    to: Option<Vec<String>>,
    text: String,
    thread_of: Option<String>,
}

fn post(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: PostArgs = parse("chat_post", args)?;
    let me = w.acting_email(actor)?;
    if a.text.trim().is_empty() {
        return Err("`text` is empty".into());
    }
    let root = match &a.thread_of {
        Some(t) => {
            let m = w
                .chat
                .message(t)
                .filter(|m| w.chat.visible_to(m, &me))
                .ok_or_else(|| format!("`thread_of`: no message `{t}` that you can see"))?;
            // Threads are one level deep: a reply to a reply joins the root's thread.
            Some((
                m.thread_of.clone().unwrap_or_else(|| m.id.clone()),
                m.channel.clone(),
                m.dm.clone(),
            ))
        }
        None => None,
    };
    let (channel, dm) = match (&a.channel, &a.to) {
        (Some(_), Some(_)) => return Err("give either `channel` or `to`, not both".into()),
        (Some(c), None) => {
            let key = channel_key(c);
            let ch = w
                .chat
                .channel(&key)
                .filter(|ch| ChatState::can_see(ch, &me))
                .ok_or_else(|| no_channel(c))?;
            if !ch.members.contains(&me) {
                return Err(format!(
                    "you are not a member of #{key}; join it with chat_join first"
                ));
            }
            (Some(key), Vec::new())
        }
        (None, Some(list)) => (None, dm_participants(w, &me, list)?),
        (None, None) => match &root {
            Some((_, c, d)) => (c.clone(), d.clone()),
            None => return Err("give `channel` or `to` (people of a direct message)".into()),
        },
    };
    if let Some((_, c, d)) = &root
        && (*c != channel || *d != dm)
    {
        return Err("`thread_of` is a message of another conversation".into());
    }
    if let Some(c) = &channel
        && !w.chat.channel(c).is_some_and(|ch| ch.members.contains(&me))
    {
        return Err(format!(
            "you are not a member of #{c}; join it with chat_join first"
        ));
    }
    let thread_of = root.map(|r| r.0);
    let id = insert(
        w,
        actor,
        &me,
        channel.clone(),
        dm.clone(),
        a.text.clone(),
        thread_of.clone(),
    );
    let replies = if *actor == Actor::Agent {
        colleague_replies(w, &me, &id)
    } else {
        Vec::new()
    };
    let replies: Vec<Value> = replies
        .iter()
        .filter_map(|r| w.chat.message(r))
        .map(|m| shown(w, m))
        .collect();
    Ok(json!({"id": id, "thread_of": thread_of, "replies": replies}))
}

/// Post a message as `author` and log it; returns its id.
fn insert(
    w: &mut World,
    actor: &Actor,
    author: &str,
    channel: Option<String>,
    dm: Vec<String>,
    text: String,
    thread_of: Option<String>,
) -> String {
    let id = w.chat.fresh_id();
    let mentions = parse_mentions(w, &text);
    let msg = ChatMessage {
        id: id.clone(),
        channel: channel.clone(),
        dm: dm.clone(),
        author: author.to_string(),
        text: text.clone(),
        time: w.now().with_timezone(&chrono::Utc),
        thread_of: thread_of.clone(),
        mentions: mentions.clone(),
        reactions: Default::default(),
    };
    w.chat.messages.push(msg);
    w.record(
        actor.clone(),
        "chat",
        "post",
        false,
        json!({"id": id, "channel": channel, "dm": dm, "author": author, "text": text,
            "thread_of": thread_of, "mentions": mentions}),
    );
    id
}

/// Colleagues reached by the agent's message `id` (the other people of a DM; members
/// mentioned in a channel) answer through the world's reply policy: in the same DM (same
/// thread if any), or in the thread of the channel message. Returns the replies' ids.
fn colleague_replies(w: &mut World, me: &str, id: &str) -> Vec<String> {
    let Some(m) = w.chat.message(id).cloned() else {
        return Vec::new();
    };
    let reached: Vec<String> = match &m.channel {
        None => m.dm.iter().filter(|p| *p != me).cloned().collect(),
        Some(c) => {
            let ch = w.chat.channel(c);
            m.mentions
                .iter()
                .filter(|p| *p != me)
                .filter(|p| ch.is_some_and(|ch| !ch.private || ch.members.contains(*p)))
                .cloned()
                .collect()
        }
    };
    let mut out = Vec::new();
    for email in reached {
        let Some(person) = w.people().persons.get(&email).cloned() else {
            continue;
        };
        if !person.answers_on(ChannelKind::Chat) {
            continue;
        }
        let incoming = Incoming {
            channel: ChannelKind::Chat,
            text: &m.text,
            subject: None,
            sender: me,
        };
        let Some(reply) = w.reply_policy().reply(&person, &incoming) else {
            continue;
        };
        let thread_of = match &m.channel {
            Some(_) => Some(m.thread_of.clone().unwrap_or_else(|| m.id.clone())),
            None => m.thread_of.clone(),
        };
        let rid = insert(
            w,
            &Actor::Colleague(email.clone()),
            &email,
            m.channel.clone(),
            m.dm.clone(),
            reply.text,
            thread_of,
        );
        out.push(rid);
    }
    out
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReactArgs {
    id: String,
    emoji: String,
    #[serde(default)]
    remove: bool,
}

fn react(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ReactArgs = parse("chat_react", args)?;
    let me = w.acting_email(actor)?;
    let emoji = a.emoji.trim().trim_matches(':').to_lowercase();
    if emoji.is_empty()
        || emoji.len() > 64
        || !emoji
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '+'))
    {
        return Err(format!(
            "`emoji` must be an emoji name like thumbsup, not `{}`",
            a.emoji
        ));
    }
    let visible = w
        .chat
        .message(&a.id)
        .is_some_and(|m| w.chat.visible_to(m, &me));
    if !visible {
        return Err(format!("no message `{}` that you can see", a.id));
    }
    let Some(m) = w.chat.message_mut(&a.id) else {
        return Err(format!("no message `{}`", a.id));
    };
    let changed = if a.remove {
        let set = m.reactions.entry(emoji.clone()).or_default();
        let removed = set.remove(&me);
        if set.is_empty() {
            m.reactions.remove(&emoji);
        }
        removed
    } else {
        m.reactions
            .entry(emoji.clone())
            .or_default()
            .insert(me.clone())
    };
    let now: Vec<String> = m
        .reactions
        .get(&emoji)
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default();
    if changed {
        w.record(
            actor.clone(),
            "chat",
            if a.remove { "unreact" } else { "react" },
            false,
            json!({"id": a.id, "emoji": emoji, "by": me}),
        );
    }
    Ok(json!({"id": a.id, "emoji": emoji, "by": now}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    channel: Option<String>,
    from: Option<String>,
}

fn search(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SearchArgs = parse("chat_search", args)?;
    let me = w.acting_email(actor)?;
    let q = a.query.trim().to_lowercase();
    if q.is_empty() {
        return Err("`query` is empty".into());
    }
    let channel = match &a.channel {
        Some(c) => {
            let key = channel_key(c);
            match w.chat.channel(&key) {
                Some(ch) if ChatState::can_see(ch, &me) => Some(key),
                _ => return Err(no_channel(c)),
            }
        }
        None => None,
    };
    let from = match &a.from {
        Some(f) => Some(
            member_email(w, f).ok_or_else(|| format!("`from`: `{f}` is not a workspace member"))?,
        ),
        None => None,
    };
    let mut hits: Vec<&ChatMessage> = w
        .chat
        .messages()
        .iter()
        .filter(|m| w.chat.visible_to(m, &me))
        .filter(|m| channel.is_none() || m.channel == channel)
        .filter(|m| from.as_ref().is_none_or(|f| m.author == *f))
        .filter(|m| m.text.to_lowercase().contains(&q))
        .collect();
    hits.sort_by_key(|m| std::cmp::Reverse(m.time));
    let out: Vec<Value> = hits.into_iter().take(50).map(|m| shown(w, m)).collect();
    Ok(json!({"messages": out}))
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
struct MembersArgs {
    channel: Option<String>,
}

fn members_tool(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: MembersArgs = parse("chat_members", args)?;
    let me = w.acting_email(actor)?;
    let (list, channel): (Vec<String>, Option<&crate::chat::Channel>) = match &a.channel {
        Some(c) => {
            let key = channel_key(c);
            match w.chat.channel(&key) {
                Some(ch) if ChatState::can_see(ch, &me) => {
                    (ch.members.iter().cloned().collect(), Some(ch))
                }
                _ => return Err(no_channel(c)),
            }
        }
        None => (members(w), None),
    };
    let out: Vec<Value> = list
        .iter()
        .map(|e| {
            let mut v = match w.people().persons.get(e) {
                Some(p) => json!({"name": p.name, "handle": p.handle, "email": p.email,
                    "role": p.role, "department": p.department, "profile": p.profile}),
                None => json!({"name": member_name(w, e), "handle": member_handle(w, e),
                    "email": e, "you": true}),
            };
            if let (Some(ch), Some(o)) = (channel, v.as_object_mut()) {
                o.insert(
                    "channel_role".into(),
                    json!(ch.role_of(e).map(ChannelRole::as_str)),
                );
            }
            v
        })
        .collect();
    Ok(json!({"members": out}))
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
fn who_manages(w: &World, ch: &crate::chat::Channel) -> String {
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdArg {
    id: String,
}

fn delete_message(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: IdArg = parse("chat_delete_message", args)?;
    let me = w.acting_email(actor)?;
    let m = w
        .chat
        .message(&a.id)
        .filter(|m| w.chat.visible_to(m, &me))
        .cloned()
        .ok_or_else(|| format!("no message `{}` that you can see", a.id))?;
    if m.author != me {
        let Some(ch) = m.channel.as_ref().and_then(|c| w.chat.channel(c)) else {
            return Err("you can delete only your own messages in a direct conversation".into());
        };
        if !ch.can_moderate(&me) {
            return Err(format!(
                "you can delete only your own messages in #{}; an owner or moderator can delete others' ({})",
                ch.name,
                who_manages(w, ch)
            ));
        }
    }
    w.chat.messages.retain(|x| x.id != m.id);
    w.record(
        actor.clone(),
        "chat",
        "delete",
        false,
        json!({"id": m.id, "channel": m.channel, "dm": m.dm, "author": m.author,
            "text": m.text, "by": me}),
    );
    Ok(json!({"deleted": m.id}))
}
