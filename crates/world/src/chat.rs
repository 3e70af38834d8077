//! Team chat: members, channels, direct messages, threads, mentions, reactions.
//!
//! The workspace members are the people of `world/people.toml` plus the task's user. Channels
//! are public (anyone can read and join) or private (invisible to non-members). A direct
//! conversation (DM) is identified by its sorted participant list (1:1 or group). A message
//! may reply in the thread of another (`thread_of`), mention members (`@handle`), carry
//! reactions and carry files (a photo posted in a channel; bytes in the world's blob store,
//! see [`crate::attachments`]).
//!
//! Seeded from `world/chat/channels.json`, `world/chat/history.jsonl` and the files of
//! `world/chat/files/`; documented in `docs/services/chat.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::time::parse_world_time;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::attachments::{MAX_FILE_BYTES, StoredFile};
use crate::{World, WorldError};

/// The most files one message may carry.
pub const MAX_FILES_PER_MESSAGE: usize = 10;
/// The most bytes the files of one message may hold together.
pub const MAX_MESSAGE_FILE_BYTES: u64 = 2 * MAX_FILE_BYTES;

/// One channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    /// Name without `#`, lower-case.
    pub name: String,
    pub private: bool,
    #[serde(default)]
    pub topic: String,
    /// Member emails.
    pub members: BTreeSet<String>,
    /// Owners' emails (members too): they may do everything a moderator may, and give or
    /// take roles.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub owners: BTreeSet<String>,
    /// Moderators' emails (members too): they may set the topic, add and remove members and
    /// delete others' messages.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub moderators: BTreeSet<String>,
}

/// A member's role in a channel, highest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelRole {
    Owner,
    Moderator,
    Member,
}

impl ChannelRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelRole::Owner => "owner",
            ChannelRole::Moderator => "moderator",
            ChannelRole::Member => "member",
        }
    }

    /// `owner`, `moderator` or `member` (case-insensitive).
    pub fn parse(s: &str) -> Option<ChannelRole> {
        match s.trim().to_ascii_lowercase().as_str() {
            "owner" => Some(ChannelRole::Owner),
            "moderator" => Some(ChannelRole::Moderator),
            "member" => Some(ChannelRole::Member),
            _ => None,
        }
    }
}

impl Channel {
    /// `email`'s role in the channel, `None` for a non-member.
    pub fn role_of(&self, email: &str) -> Option<ChannelRole> {
        if !self.members.contains(email) {
            None
        } else if self.owners.contains(email) {
            Some(ChannelRole::Owner)
        } else if self.moderators.contains(email) {
            Some(ChannelRole::Moderator)
        } else {
            Some(ChannelRole::Member)
        }
    }

    /// Whether `email` may manage the channel (topic, members, others' messages): an owner
    /// or a moderator.
    pub fn can_moderate(&self, email: &str) -> bool {
        matches!(
            self.role_of(email),
            Some(ChannelRole::Owner | ChannelRole::Moderator)
        )
    }

    /// Make `email` a plain member again (no role), keeping membership.
    pub(crate) fn clear_role(&mut self, email: &str) {
        self.owners.remove(email);
        self.moderators.remove(email);
    }

    /// Take `email` out of the channel, role and all.
    pub(crate) fn remove_member(&mut self, email: &str) {
        self.clear_role(email);
        self.members.remove(email);
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Stable id (`c00001`, ... or the id of the seed export).
    pub id: String,
    /// The channel, for a channel message.
    pub channel: Option<String>,
    /// The participants' emails (sorted), for a direct message; empty for a channel message.
    #[serde(default)]
    pub dm: Vec<String>,
    /// Author email.
    pub author: String,
    pub text: String,
    pub time: DateTime<Utc>,
    /// The id of the thread's root message, for a reply in a thread.
    pub thread_of: Option<String>,
    /// Emails of the members mentioned with `@handle`.
    #[serde(default)]
    pub mentions: Vec<String>,
    /// Emoji name → emails of who reacted.
    #[serde(default)]
    pub reactions: BTreeMap<String, BTreeSet<String>>,
    /// The files posted with the message, in the order given (names unique).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<StoredFile>,
}

/// Where a message is: a channel or a DM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conversation {
    Channel(String),
    Dm(Vec<String>),
}

impl ChatMessage {
    pub fn conversation(&self) -> Conversation {
        match &self.channel {
            Some(c) => Conversation::Channel(c.clone()),
            None => Conversation::Dm(self.dm.clone()),
        }
    }

    /// The file named `name` (exactly), or an error listing the message's files.
    pub fn file(&self, name: &str) -> Result<&StoredFile, String> {
        self.files.iter().find(|f| f.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
            format!(
                "message `{}` has no file `{name}`; its files: {}",
                self.id,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatState {
    pub(crate) channels: BTreeMap<String, Channel>,
    /// In the order they were posted.
    pub(crate) messages: Vec<ChatMessage>,
    pub(crate) next_id: u64,
    /// The files of the task's `world/chat/files/`, by path relative to it: what seeded
    /// messages carry, and what colleagues post (an `act` event's `chat_post` names them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) library: BTreeMap<String, StoredFile>,
}

impl ChatState {
    pub fn channels(&self) -> impl Iterator<Item = &Channel> {
        self.channels.values()
    }
    pub fn channel(&self, name: &str) -> Option<&Channel> {
        self.channels.get(&channel_key(name))
    }
    /// Every message, in posting order.
    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }
    pub fn message(&self, id: &str) -> Option<&ChatMessage> {
        self.messages.iter().find(|m| m.id == id)
    }
    pub(crate) fn message_mut(&mut self, id: &str) -> Option<&mut ChatMessage> {
        self.messages.iter_mut().find(|m| m.id == id)
    }

    /// Whether `email` can see channel `c`: it is public or they are a member.
    pub fn can_see(c: &Channel, email: &str) -> bool {
        !c.private || c.members.contains(email)
    }

    /// Whether `email` can see message `m`.
    pub fn visible_to(&self, m: &ChatMessage, email: &str) -> bool {
        match &m.channel {
            Some(c) => self
                .channels
                .get(c)
                .is_some_and(|c| ChatState::can_see(c, email)),
            None => m.dm.iter().any(|p| p == email),
        }
    }

    /// Every file the state names (messages' and the library's), for the blob store.
    pub(crate) fn stored_files(&self) -> impl Iterator<Item = &StoredFile> {
        self.messages
            .iter()
            .flat_map(|m| m.files.iter())
            .chain(self.library.values())
    }

    /// A file of the task's `world/chat/files/` by its path there, or an error naming them.
    pub(crate) fn library_file(&self, rel: &str) -> Result<&StoredFile, String> {
        bureau_core::task::check_rel_path(rel).map_err(|e| {
            format!("`{rel}`: {e}; name a file of world/chat/files/ by its path there")
        })?;
        let key = rel.trim().trim_start_matches("./");
        self.library.get(key).ok_or_else(|| {
            let names: Vec<&str> = self.library.keys().map(String::as_str).collect();
            format!(
                "no file `{rel}` in the task's world/chat/files/; its files: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        })
    }

    /// A fresh message id not used yet.
    pub(crate) fn fresh_id(&mut self) -> String {
        loop {
            self.next_id += 1;
            let id = format!("c{:05}", self.next_id);
            if self.message(&id).is_none() {
                return id;
            }
        }
    }

    /// What checks see as `w.chat`: channels, messages (times in `tz`) and members.
    pub fn check_view(&self, tz: chrono_tz::Tz) -> Value {
        let channels: Vec<Value> = self
            .channels
            .values()
            .map(|c| {
                json!({"name": c.name, "private": c.private, "topic": c.topic,
                    "members": c.members.iter().collect::<Vec<_>>(),
                    "owners": c.owners.iter().collect::<Vec<_>>(),
                    "moderators": c.moderators.iter().collect::<Vec<_>>()})
            })
            .collect();
        let messages: Vec<Value> = self
            .messages
            .iter()
            .map(|m| {
                let mut v = message_json(m, tz);
                v["files"] = json!(m.files.iter().map(StoredFile::checked).collect::<Vec<_>>());
                v
            })
            .collect();
        json!({"channels": channels, "messages": messages})
    }
}

/// A message as JSON (tools and checks): time ISO 8601 in `tz`; its files (name, size, MIME
/// type) when it has any.
pub fn message_json(m: &ChatMessage, tz: chrono_tz::Tz) -> Value {
    let reactions: serde_json::Map<String, Value> = m
        .reactions
        .iter()
        .map(|(k, v)| (k.clone(), json!(v.iter().collect::<Vec<_>>())))
        .collect();
    let mut v = json!({
        "id": m.id,
        "channel": m.channel,
        "dm": m.dm,
        "author": m.author,
        "text": m.text,
        "time": m.time.with_timezone(&tz).to_rfc3339(),
        "thread_of": m.thread_of,
        "mentions": m.mentions,
        "reactions": {"$dict": reactions},
    });
    if !m.files.is_empty()
        && let Some(o) = v.as_object_mut()
    {
        o.insert(
            "files".into(),
            json!(m.files.iter().map(StoredFile::listed).collect::<Vec<_>>()),
        );
    }
    v
}

/// A channel name as stored: without `#`, trimmed, lower-case.
pub fn channel_key(name: &str) -> String {
    name.trim().trim_start_matches('#').to_lowercase()
}

/// Whether `name` is a valid channel name: 1–80 of `a-z 0-9 - _`.
pub fn valid_channel_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 80
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// The user's chat handle: their roster handle, else the local part of their email.
pub fn user_handle(world: &World) -> String {
    let email = world.user().email.to_lowercase();
    match world.people().persons.get(&email) {
        Some(p) => p.handle.clone(),
        None => email.split('@').next().unwrap_or(&email).to_string(),
    }
}

/// A workspace member's email by email or handle (with or without `@`), case-insensitive.
pub fn member_email(world: &World, who: &str) -> Option<String> {
    if let Some(p) = world.people().find(who) {
        return Some(p.email.clone());
    }
    let w = who.trim().trim_start_matches('@').to_lowercase();
    let user = world.user().email.to_lowercase();
    (w == user || w == user_handle(world)).then_some(user)
}

/// A member's display name (roster name, the user's name, else the email).
pub fn member_name(world: &World, email: &str) -> String {
    if let Some(p) = world.people().persons.get(email) {
        return p.name.clone();
    }
    if email == world.user().email.to_lowercase() {
        return world.user().name.clone();
    }
    email.to_string()
}

/// A member's handle.
pub fn member_handle(world: &World, email: &str) -> String {
    match world.people().persons.get(email) {
        Some(p) => p.handle.clone(),
        None => user_handle(world),
    }
}

/// Every workspace member's email, sorted: the roster and the user.
pub fn members(world: &World) -> Vec<String> {
    let mut v: BTreeSet<String> = world.people().persons.keys().cloned().collect();
    v.insert(world.user().email.to_lowercase());
    v.into_iter().collect()
}

/// The members mentioned in `text` with `@handle` (or `@email`), sorted, without repeats.
/// `@` inside a word (an email address) is not a mention; unknown handles are ignored.
pub fn parse_mentions(world: &World, text: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let prev_ok = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.');
        if chars[i] == '@' && prev_ok {
            let mut j = i + 1;
            while j < chars.len()
                && (chars[j].is_alphanumeric() || matches!(chars[j], '.' | '_' | '-' | '@'))
            {
                j += 1;
            }
            let token: String = chars[i + 1..j].iter().collect();
            let token = token.trim_end_matches(['.', '-', '_']);
            if let Some(email) = member_email(world, token) {
                out.insert(email);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// A seed line of `channels.json`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedChannel {
    name: String,
    #[serde(default)]
    private: bool,
    #[serde(default)]
    members: Vec<String>,
    #[serde(default)]
    topic: String,
    /// Owners (members too; added to `members`).
    #[serde(default)]
    owners: Vec<String>,
    /// Moderators (members too; added to `members`).
    #[serde(default)]
    moderators: Vec<String>,
}

/// A line of `history.jsonl`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedMessage {
    id: Option<String>,
    channel: Option<String>,
    /// The other participants (email or handle); the author is added.
    dm: Option<Vec<String>>,
    author: String,
    ts: String,
    text: String,
    thread_of: Option<String>,
    #[serde(default)]
    reactions: BTreeMap<String, Vec<String>>,
    /// Files of `world/chat/files/` (paths relative to it) the message carries.
    #[serde(default)]
    files: Vec<String>,
}

fn seed_err(path: &Path, message: String) -> WorldError {
    WorldError::Seed {
        path: path.to_path_buf(),
        message,
    }
}

/// Seed the service: channels of the roster (`channels = [...]` of each person, public),
/// then `dir/channels.json`, the files of `dir/files/` and `dir/history.jsonl`
/// (`world/chat/`; absent = none).
pub(crate) fn seed(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    let mut channels: BTreeMap<String, Channel> = BTreeMap::new();
    for p in world.people().iter() {
        for c in &p.channels {
            let key = channel_key(c);
            channels
                .entry(key.clone())
                .or_insert_with(|| Channel {
                    name: key,
                    private: false,
                    topic: String::new(),
                    members: BTreeSet::new(),
                    owners: BTreeSet::new(),
                    moderators: BTreeSet::new(),
                })
                .members
                .insert(p.email.clone());
        }
    }
    let chan_path = dir.join("channels.json");
    if chan_path.exists() {
        let text =
            std::fs::read_to_string(&chan_path).map_err(|e| WorldError::io(&chan_path, e))?;
        let list: Vec<SeedChannel> = serde_json::from_str(&text).map_err(|e| {
            seed_err(
                &chan_path,
                format!("{e}; expected a JSON array of {{name, private, members, owners, moderators, topic}}"),
            )
        })?;
        for sc in list {
            let key = channel_key(&sc.name);
            if !valid_channel_name(&key) {
                return Err(seed_err(
                    &chan_path,
                    format!(
                        "channel name `{}` is invalid: use 1-80 of a-z, 0-9, - and _",
                        sc.name
                    ),
                ));
            }
            let resolve = |field: &str, list: &[String]| -> Result<BTreeSet<String>, WorldError> {
                list.iter()
                    .map(|m| {
                        member_email(world, m).ok_or_else(|| {
                            seed_err(
                                &chan_path,
                                format!(
                                    "channel `{key}`: {field} `{m}` is neither the user nor a person of world/people.toml"
                                ),
                            )
                        })
                    })
                    .collect()
            };
            let members = resolve("member", &sc.members)?;
            let owners = resolve("owner", &sc.owners)?;
            let moderators = resolve("moderator", &sc.moderators)?;
            if let Some(both) = owners.intersection(&moderators).next() {
                return Err(seed_err(
                    &chan_path,
                    format!(
                        "channel `{key}`: `{both}` is listed as both owner and moderator; keep one role (an owner may do everything a moderator may)"
                    ),
                ));
            }
            let c = channels.entry(key.clone()).or_insert_with(|| Channel {
                name: key,
                private: false,
                topic: String::new(),
                members: BTreeSet::new(),
                owners: BTreeSet::new(),
                moderators: BTreeSet::new(),
            });
            c.private = sc.private;
            c.topic = sc.topic;
            c.members.extend(members);
            c.members.extend(owners.iter().cloned());
            c.members.extend(moderators.iter().cloned());
            c.owners = owners;
            c.moderators = moderators;
        }
    }
    world.chat.channels = channels;
    world.chat.library = seed_library(world, &dir.join("files"))?;

    let hist_path = dir.join("history.jsonl");
    let mut count = 0u64;
    if hist_path.exists() {
        let text =
            std::fs::read_to_string(&hist_path).map_err(|e| WorldError::io(&hist_path, e))?;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |message: String| seed_err(&hist_path, format!("line {}: {message}", n + 1));
            let sm: SeedMessage = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
            let m = seed_message(world, sm).map_err(at)?;
            world.chat.messages.push(m);
            count += 1;
        }
    }
    if !world.chat.channels.is_empty() || count > 0 {
        world.record(
            Actor::Task,
            "chat",
            "seed",
            false,
            if world.chat.library.is_empty() {
                json!({"channels": world.chat.channels.len(), "messages": count})
            } else {
                json!({"channels": world.chat.channels.len(), "messages": count,
                    "files": world.chat.library.len()})
            },
        );
    }
    Ok(())
}

/// The files under `dir` (`world/chat/files/`), stored in the blob store, by path relative
/// to `dir`. Regular files only; each at most [`MAX_FILE_BYTES`].
fn seed_library(world: &World, dir: &Path) -> Result<BTreeMap<String, StoredFile>, WorldError> {
    let mut out = BTreeMap::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| seed_err(dir, format!("cannot walk the chat files: {e}")))?;
        let path = entry.path();
        let ft = entry.file_type();
        if ft.is_dir() {
            continue;
        }
        if let Some(kind) = crate::files::special_kind(&ft) {
            return Err(seed_err(
                path,
                format!("chat files must be regular files; this is {kind} (copy the file instead)"),
            ));
        }
        let rel = path
            .strip_prefix(dir)
            .map(crate::files::to_slash)
            .unwrap_or_default();
        let name = rel.rsplit('/').next().unwrap_or(&rel).to_string();
        let bytes = crate::attachments::read_file(path, &format!("world/chat/files/{rel}"))
            .map_err(|m| seed_err(path, m))?;
        let f = world
            .store_file(&name, &bytes)
            .map_err(|m| seed_err(path, m))?;
        out.insert(rel, f);
    }
    Ok(out)
}

/// The files of `world/chat/files/` named by `names` (paths relative to it), checked against
/// the bounds of one message.
pub(crate) fn library_files(world: &World, names: &[String]) -> Result<Vec<StoredFile>, String> {
    let files = names
        .iter()
        .map(|n| world.chat.library_file(n).cloned())
        .collect::<Result<Vec<_>, _>>()?;
    check_message_files(&files)?;
    Ok(files)
}

/// The bounds of one message's files: at most [`MAX_FILES_PER_MESSAGE`], together at most
/// [`MAX_MESSAGE_FILE_BYTES`], no two with the same name.
pub(crate) fn check_message_files(files: &[StoredFile]) -> Result<(), String> {
    if files.len() > MAX_FILES_PER_MESSAGE {
        return Err(format!(
            "{} files; a message may carry at most {MAX_FILES_PER_MESSAGE} (post the rest in another message)",
            files.len()
        ));
    }
    let total: u64 = files.iter().map(|f| f.size).sum();
    if total > MAX_MESSAGE_FILE_BYTES {
        return Err(format!(
            "the files hold {} together; a message may carry at most {} MiB",
            crate::attachments::human_size(total),
            MAX_MESSAGE_FILE_BYTES / (1024 * 1024)
        ));
    }
    let mut seen = BTreeSet::new();
    for f in files {
        if !seen.insert(f.name.as_str()) {
            return Err(format!(
                "two files are named `{}`; a message's file names must differ (rename one)",
                f.name
            ));
        }
    }
    Ok(())
}

fn seed_message(world: &mut World, sm: SeedMessage) -> Result<ChatMessage, String> {
    let author = member_email(world, &sm.author).ok_or_else(|| {
        format!(
            "author `{}` is neither the user nor a person of world/people.toml",
            sm.author
        )
    })?;
    let time = parse_world_time(&sm.ts, world.timezone())
        .map_err(|e| format!("`ts`: {e}"))?
        .with_timezone(&Utc);
    let (channel, dm) = match (&sm.channel, &sm.dm) {
        (Some(c), None) => {
            let key = channel_key(c);
            if !world.chat.channels.contains_key(&key) {
                return Err(format!(
                    "no channel `{key}`; list it in channels.json or in someone's channels"
                ));
            }
            (Some(key), Vec::new())
        }
        (None, Some(list)) => (None, dm_participants(world, &author, list)?),
        _ => return Err("give exactly one of `channel` and `dm`".into()),
    };
    if let Some(t) = &sm.thread_of {
        let root = world
            .chat
            .message(t)
            .ok_or_else(|| format!("`thread_of`: no earlier message `{t}`"))?;
        if root.channel != channel || root.dm != dm {
            return Err(format!(
                "`thread_of`: message `{t}` is in another conversation"
            ));
        }
    }
    let id = match sm.id {
        Some(id) => {
            if id.trim().is_empty() || world.chat.message(&id).is_some() {
                return Err(format!("message id `{id}` is empty or used twice"));
            }
            id
        }
        None => world.chat.fresh_id(),
    };
    let mut reactions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (emoji, who) in sm.reactions {
        for w in who {
            let e = member_email(world, &w)
                .ok_or_else(|| format!("reaction `{emoji}`: `{w}` is not a member"))?;
            reactions.entry(emoji.clone()).or_default().insert(e);
        }
    }
    let files = library_files(world, &sm.files).map_err(|e| format!("`files`: {e}"))?;
    Ok(ChatMessage {
        id,
        channel,
        dm,
        mentions: parse_mentions(world, &sm.text),
        author,
        text: sm.text,
        time,
        thread_of: sm.thread_of,
        reactions,
        files,
    })
}

/// The sorted participants of a DM between `me` and `others` (emails or handles).
pub(crate) fn dm_participants(
    world: &World,
    me: &str,
    others: &[String],
) -> Result<Vec<String>, String> {
    let mut set = BTreeSet::new();
    set.insert(me.to_string());
    for o in others {
        let e = member_email(world, o)
            .ok_or_else(|| format!("`{o}` is not a workspace member; chat_members lists who is"))?;
        set.insert(e);
    }
    if set.len() < 2 {
        return Err("a direct message needs at least one other person".into());
    }
    Ok(set.into_iter().collect())
}
