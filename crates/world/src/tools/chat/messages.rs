//! Messages: read, post (with colleagues' replies), react, search, delete.

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::{Tool, ToolResult, boolean, integer, parse, schema, string, strings, time_arg};
use super::channels::who_manages;
use super::no_channel;
use crate::World;
use crate::chat::{
    ChatMessage, ChatState, channel_key, dm_participants, member_email, member_handle, member_name,
    message_json, parse_mentions,
};
use crate::people::{ChannelKind, Incoming};

pub(super) const READ: Tool = Tool {
    name: "chat_read",
    description: "Read messages of a channel or of a direct conversation, oldest first (the last `limit`). Each message has an id, author, text, time, thread_of (the thread's root id for replies), mentions, reactions and its files, if any (name, size, mime_type; chat_read_file shows one).",
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
pub(super) const POST: Tool = Tool {
    name: "chat_post",
    description: "Post a message: to a channel you are a member of, or as a direct message `to` one or more people (handles or emails). `thread_of` replies in a message's thread. Mention people with @handle. `files` attaches workspace files (a copy of each, as it is now; at most 10, 16 MiB each, 32 MiB together). Colleagues who answer right away are shown in `replies`.",
    schema: || {
        schema(
            &[
                ("channel", string("Channel name")),
                (
                    "to",
                    strings("People of a direct message (handles or emails); instead of channel"),
                ),
                (
                    "text",
                    string(
                        "Message text; @handle mentions a member (may be empty when files are posted)",
                    ),
                ),
                (
                    "files",
                    strings("Workspace paths of files to post with the message"),
                ),
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
pub(super) const REACT: Tool = Tool {
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
pub(super) const SEARCH: Tool = Tool {
    name: "chat_search",
    description: "Search the messages you can see (case-insensitive match of the text or of a file name), newest first.",
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
pub(super) const DELETE_MESSAGE: Tool = Tool {
    name: "chat_delete_message",
    description: "Delete a message: your own anywhere, or anyone's in a channel you own or moderate. Replies in its thread stay.",
    schema: || schema(&[("id", string("Message id"))], &["id"]),
    run: delete_message,
};

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
    #[serde(default)]
    files: Vec<String>,
}

fn post(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: PostArgs = parse("chat_post", args)?;
    let me = w.acting_email(actor)?;
    if a.text.trim().is_empty() && a.files.is_empty() {
        return Err("`text` is empty; write a message or post `files`".into());
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
    let files = super::files::files_to_post(w, actor, &a.files)?;
    let id = insert(
        w,
        actor,
        &me,
        Draft {
            channel: channel.clone(),
            dm: dm.clone(),
            text: a.text.clone(),
            thread_of: thread_of.clone(),
            files,
        },
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

/// A message about to be posted.
struct Draft {
    channel: Option<String>,
    dm: Vec<String>,
    text: String,
    thread_of: Option<String>,
    files: Vec<crate::attachments::StoredFile>,
}

/// Post a message as `author` and log it; returns its id.
fn insert(w: &mut World, actor: &Actor, author: &str, draft: Draft) -> String {
    let Draft {
        channel,
        dm,
        text,
        thread_of,
        files,
    } = draft;
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
        files: files.clone(),
    };
    w.chat.messages.push(msg);
    let mut payload = json!({"id": id, "channel": channel, "dm": dm, "author": author,
        "text": text, "thread_of": thread_of, "mentions": mentions});
    if !files.is_empty() {
        payload["files"] = json!(files.iter().map(|f| f.checked()).collect::<Vec<_>>());
    }
    w.record(actor.clone(), "chat", "post", false, payload);
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
            Draft {
                channel: m.channel.clone(),
                dm: m.dm.clone(),
                text: reply.text,
                thread_of,
                files: Vec::new(),
            },
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
        .filter(|m| {
            m.text.to_lowercase().contains(&q)
                || m.files.iter().any(|f| f.name.to_lowercase().contains(&q))
        })
        .collect();
    hits.sort_by_key(|m| std::cmp::Reverse(m.time));
    let out: Vec<Value> = hits.into_iter().take(50).map(|m| shown(w, m)).collect();
    Ok(json!({"messages": out}))
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
    w.record(actor.clone(), "chat", "delete", false, {
        let mut v = json!({"id": m.id, "channel": m.channel, "dm": m.dm, "author": m.author,
                "text": m.text, "by": me});
        if !m.files.is_empty() {
            v["files"] = json!(m.files.iter().map(|f| f.checked()).collect::<Vec<_>>());
        }
        v
    });
    Ok(json!({"deleted": m.id}))
}
