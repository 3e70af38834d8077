//! The workspace's members, or a channel's.

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::{Tool, ToolResult, parse, schema, string};
use super::no_channel;
use crate::World;
use crate::chat::{ChannelRole, ChatState, channel_key, member_handle, member_name, members};

pub(super) const MEMBERS: Tool = Tool {
    name: "chat_members",
    description: "List the workspace members (name, handle, email, role, department, profile), or the members of one channel.",
    schema: || schema(&[("channel", string("Only members of this channel"))], &[]),
    run: members_tool,
};

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
