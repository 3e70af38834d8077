//! chat_* tools: the team chat, as the acting person (the user, or a colleague in an `act`
//! event). Colleagues answer the agent's DMs and mentions right away (see
//! [`crate::people::ReplyPolicy`]).
//!
//! `channels.rs`: listing, joining, creating and managing channels (topic, members, roles);
//! `messages.rs`: reading, posting, reacting, searching and deleting messages; `members.rs`:
//! the workspace's and a channel's members; `files.rs`: the files messages carry.

mod channels;
mod files;
mod members;
mod messages;

use super::Tool;

pub(super) const TOOLS: &[Tool] = &[
    channels::LIST_CHANNELS,
    messages::READ,
    messages::POST,
    messages::REACT,
    messages::SEARCH,
    channels::JOIN,
    members::MEMBERS,
    channels::CREATE_CHANNEL,
    channels::SET_TOPIC,
    channels::INVITE,
    channels::REMOVE_MEMBER,
    channels::SET_ROLE,
    channels::LEAVE,
    messages::DELETE_MESSAGE,
    files::READ_FILE,
    files::SAVE_FILE,
];

fn no_channel(name: &str) -> String {
    format!("no channel `{name}` that you can see; chat_list_channels lists them")
}
