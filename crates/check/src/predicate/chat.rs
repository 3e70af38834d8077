//! Built-in predicates of the chat service.

use bureau_core::task::{ChatChannelFilter, ChatPostedFilter, ColleagueAskedFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_formats::text::contains_keyword;
use bureau_world::World;
use bureau_world::chat::{ChannelRole, ChatMessage, channel_key, member_email};
use bureau_world::mail::SENT;

use super::{count_range, quoted, status, within};

/// A person of the filter (email or handle): their email, or an error detail.
fn person(world: &World, field: &str, who: &str) -> Result<String, String> {
    member_email(world, who).ok_or_else(|| {
        format!("`{field}`: `{who}` is neither the user nor a person of world/people.toml")
    })
}

fn failed(detail: String) -> (VerdictStatus, String) {
    (VerdictStatus::Failed, detail)
}

pub(crate) fn chat_posted(
    task: &Task,
    world: &World,
    f: &ChatPostedFilter,
) -> (VerdictStatus, String) {
    let by = match &f.by {
        Some(b) => match person(world, "by", b) {
            Ok(e) => e,
            Err(d) => return failed(d),
        },
        None => task.user.email.to_lowercase(),
    };
    let dm_with = match &f.dm_with {
        Some(d) => match person(world, "dm_with", d) {
            Ok(e) => Some(e),
            Err(d) => return failed(d),
        },
        None => None,
    };
    let mut mentions = Vec::new();
    for m in &f.mentions {
        match person(world, "mentions", m) {
            Ok(e) => mentions.push(e),
            Err(d) => return failed(d),
        }
    }
    let channel = f
        .channel
        .as_ref()
        .map(|c| bureau_world::chat::channel_key(c));
    let matches = |m: &&ChatMessage| {
        m.author == by
            && channel
                .as_ref()
                .is_none_or(|c| m.channel.as_ref() == Some(c))
            && dm_with
                .as_ref()
                .is_none_or(|d| m.channel.is_none() && m.dm.contains(d))
            && mentions.iter().all(|p| m.mentions.contains(p))
            && f.contains.iter().all(|k| contains_keyword(&m.text, k))
            && !f.excludes.iter().any(|k| contains_keyword(&m.text, k))
            && f.in_thread.is_none_or(|t| m.thread_of.is_some() == t)
            && f.files.iter().all(|n| {
                m.files
                    .iter()
                    .any(|x| x.name.trim().eq_ignore_ascii_case(n.trim()))
            })
    };
    let hits: Vec<&ChatMessage> = world.chat().messages().iter().filter(matches).collect();
    let n = hits.len() as u32;
    let mut what = vec![format!("by {by}")];
    if let Some(c) = &channel {
        what.push(format!("in #{c}"));
    }
    if let Some(d) = &dm_with {
        what.push(format!("in a DM with {d}"));
    }
    if !mentions.is_empty() {
        what.push(format!("mentioning {}", quoted(&mentions)));
    }
    if !f.contains.is_empty() {
        what.push(format!("containing {}", quoted(&f.contains)));
    }
    if !f.excludes.is_empty() {
        what.push(format!("without {}", quoted(&f.excludes)));
    }
    if let Some(t) = f.in_thread {
        what.push(if t { "in a thread" } else { "top-level" }.to_string());
    }
    if !f.files.is_empty() {
        what.push(format!("with the file(s) {}", quoted(&f.files)));
    }
    let ids: Vec<&str> = hits.iter().map(|m| m.id.as_str()).collect();
    let ok = within(n as usize, f.min, f.max);
    (
        status(ok),
        format!(
            "{n} chat message(s) {} ({}){}",
            what.join(", "),
            count_range(f.min, f.max),
            if ids.is_empty() {
                String::new()
            } else {
                format!(": {}", ids.join(", "))
            }
        ),
    )
}

pub(crate) fn colleague_asked(
    task: &Task,
    world: &World,
    f: &ColleagueAskedFilter,
) -> (VerdictStatus, String) {
    let who = match person(world, "who", &f.who) {
        Ok(e) => e,
        Err(d) => return failed(d),
    };
    let user = task.user.email.to_lowercase();
    let has_all = |text: &str| f.about.iter().all(|k| contains_keyword(text, k));
    let mut hits: Vec<String> = world
        .chat()
        .messages()
        .iter()
        .filter(|m| m.author == user)
        .filter(|m| match &m.channel {
            None => m.dm.contains(&who),
            Some(_) => m.mentions.contains(&who),
        })
        .filter(|m| has_all(&m.text))
        .map(|m| format!("chat {}", m.id))
        .collect();
    hits.extend(
        world
            .mail()
            .messages(&user, Some(SENT))
            .into_iter()
            .filter(|m| m.recipients().iter().any(|r| r.to_lowercase() == who))
            .filter(|m| has_all(&format!("{}\n{}", m.mail.subject, m.mail.text)))
            .map(|m| format!("mail {}", m.id)),
    );
    let n = hits.len() as u32;
    let ok = within(n as usize, f.min, f.max);
    let about = if f.about.is_empty() {
        String::new()
    } else {
        format!(" about {}", quoted(&f.about))
    };
    (
        status(ok),
        format!(
            "{who} was asked{about} {n} time(s) ({}){}",
            count_range(f.min, f.max),
            if hits.is_empty() {
                String::new()
            } else {
                format!(": {}", hits.join(", "))
            }
        ),
    )
}

pub(crate) fn chat_channel(world: &World, f: &ChatChannelFilter) -> (VerdictStatus, String) {
    let key = channel_key(&f.channel);
    let Some(ch) = world.chat().channel(&key) else {
        return failed(format!("there is no channel #{key}"));
    };
    let mut wrong = Vec::new();
    let mut right = Vec::new();
    let mut people = |field: &str, list: &[String], want: &dyn Fn(Option<ChannelRole>) -> bool| {
        for who in list {
            match person(world, field, who) {
                Ok(e) => {
                    let role = ch.role_of(&e);
                    let shown = role.map(ChannelRole::as_str).unwrap_or("not a member");
                    if want(role) {
                        right.push(format!("{e}: {shown}"));
                    } else {
                        wrong.push(format!("{field}: {e} is {shown}"));
                    }
                }
                Err(d) => wrong.push(d),
            }
        }
    };
    people("members", &f.members, &|r| r.is_some());
    people("owners", &f.owners, &|r| r == Some(ChannelRole::Owner));
    people("moderators", &f.moderators, &|r| {
        r == Some(ChannelRole::Moderator)
    });
    people("not_members", &f.not_members, &|r| r.is_none());
    if let Some(p) = f.private
        && ch.private != p
    {
        wrong.push(format!(
            "#{key} is {}",
            if ch.private { "private" } else { "public" }
        ));
    }
    let missing: Vec<String> = f
        .topic_contains
        .iter()
        .filter(|k| !contains_keyword(&ch.topic, k))
        .cloned()
        .collect();
    if !missing.is_empty() {
        wrong.push(format!(
            "its topic {:?} lacks {}",
            ch.topic,
            quoted(&missing)
        ));
    }
    if wrong.is_empty() {
        let what = if right.is_empty() {
            "exists".to_string()
        } else {
            right.join(", ")
        };
        (VerdictStatus::Passed, format!("#{key}: {what}"))
    } else {
        failed(format!("#{key}: {}", wrong.join("; ")))
    }
}
