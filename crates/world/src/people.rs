//! The office's people: `world/people.toml`, one roster shared by mail, calendar and chat.
//!
//! ```toml
//! [[person]]
//! name = "Dana Kowalski"
//! email = "dana@brightwater.example"
//! handle = "dana"
//! role = "Finance lead"
//! department = "Finance"
//! manager = "marco@brightwater.example"
//! channels = ["general", "finance"]
//! profile = "Owns the quarterly budget."
//! unknown_reply = "No idea, sorry. Ask Marco."   # optional
//! replies_to = ["chat", "mail"]                  # optional
//!
//! [[person.knows]]
//! about = ["budget", "Q2"]
//! reply = "The Q2 budget is €48,500."
//!
//! [[person.refuse]]
//! about = ["salary"]
//! reply = "I can't share salary data."
//! ```
//!
//! A colleague answers the agent's chat messages and mails during the turn through a
//! [`ReplyPolicy`]; [`DeterministicPolicy`] (the shipped one) picks replies from the person's
//! knowledge by keyword (documented in `docs/services/people.md`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use bureau_formats::text::contains_keyword;

use crate::WorldError;

/// One person of the office (the task's user may be one too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub name: String,
    pub email: String,
    /// Chat handle, without `@`.
    pub handle: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub department: String,
    /// The manager's email.
    #[serde(default)]
    pub manager: Option<String>,
    /// Chat channels the person is a member of.
    #[serde(default)]
    pub channels: Vec<String>,
    /// What anyone in the office can know about the person.
    #[serde(default)]
    pub profile: String,
    /// How the person behaves when a language model plays them (`bureau run --colleagues
    /// llm:...`): tone, what they need before they answer, how they react to pressure. Not
    /// used by the deterministic policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// Facts the person shares when asked about them.
    #[serde(default)]
    pub knows: Vec<Knowledge>,
    /// Topics the person will not share, with the refusal they give.
    #[serde(default)]
    pub refuse: Vec<Knowledge>,
    /// The answer to a question they know nothing about (default: "Sorry, I don't know —
    /// maybe ask <manager>.").
    #[serde(default)]
    pub unknown_reply: Option<String>,
    /// The channels the person answers on (`chat`, `mail`). Default: both when the person has
    /// any knowledge, refusal or `unknown_reply`; none otherwise.
    #[serde(default)]
    pub replies_to: Option<Vec<String>>,
}

/// One entry of a colleague's knowledge: when every keyword of `about` appears in what they
/// were asked (case-insensitive, numbers normalised), they answer `reply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knowledge {
    pub about: Vec<String>,
    pub reply: String,
}

impl Person {
    /// Whether the person answers messages that reach them on `channel`.
    pub fn answers_on(&self, channel: ChannelKind) -> bool {
        match &self.replies_to {
            Some(list) => list.iter().any(|c| c == channel.name()),
            None => {
                !self.knows.is_empty() || !self.refuse.is_empty() || self.unknown_reply.is_some()
            }
        }
    }
}

/// Where a message reached a colleague.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    Chat,
    Mail,
}

impl ChannelKind {
    pub fn name(self) -> &'static str {
        match self {
            ChannelKind::Chat => "chat",
            ChannelKind::Mail => "mail",
        }
    }
}

/// A message that reached a colleague.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming<'a> {
    pub channel: ChannelKind,
    /// The message text (chat text or mail body).
    pub text: &'a str,
    /// The mail subject (None for chat).
    pub subject: Option<&'a str>,
    /// The sender's email.
    pub sender: &'a str,
}

/// A colleague's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub text: String,
}

/// How colleagues answer. The world holds one policy for all colleagues; a later one may
/// ask a language model, with the person's knowledge as its brief.
pub trait ReplyPolicy: std::fmt::Debug + Send + Sync {
    /// The reply of `person` to `incoming`, or None when they do not answer.
    fn reply(&self, person: &Person, incoming: &Incoming) -> Option<Reply>;

    /// Why the policy could not answer, when a harness failure stopped it (a model API still
    /// failing after its retries). A failed policy gives no reply; the run loop ends the trial
    /// as `error` (not `failed`) after the agent's turn. Default: never fails.
    fn failure(&self) -> Option<String> {
        None
    }

    /// Model calls and tokens the policy spent so far (a model-played policy); default none.
    fn usage(&self) -> bureau_core::result::ModelTokens {
        bureau_core::result::ModelTokens::default()
    }
}

/// The shipped policy, deterministic so that tasks are reproducible:
/// - if the message touches a refused topic (every keyword of a `refuse` entry appears), the
///   person answers with that refusal only;
/// - otherwise every `knows` entry whose keywords all appear contributes its reply, once, in
///   the order of `people.toml`;
/// - otherwise, when the message asks something (contains `?`), they answer `unknown_reply`;
/// - a statement without a question and without a matching topic gets no answer.
///
/// Keywords are matched against the subject and the text together.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeterministicPolicy;

impl ReplyPolicy for DeterministicPolicy {
    fn reply(&self, person: &Person, incoming: &Incoming) -> Option<Reply> {
        let asked = match incoming.subject {
            Some(s) => format!("{s}\n{}", incoming.text),
            None => incoming.text.to_string(),
        };
        let matches = |k: &Knowledge| {
            !k.about.is_empty() && k.about.iter().all(|a| contains_keyword(&asked, a))
        };
        if let Some(r) = person.refuse.iter().find(|k| matches(k)) {
            return Some(Reply {
                text: r.reply.clone(),
            });
        }
        let mut parts: Vec<&str> = Vec::new();
        for k in person.knows.iter().filter(|k| matches(k)) {
            if !parts.contains(&k.reply.as_str()) {
                parts.push(&k.reply);
            }
        }
        if !parts.is_empty() {
            return Some(Reply {
                text: parts.join("\n"),
            });
        }
        if asked.contains('?') {
            return Some(Reply {
                text: person
                    .unknown_reply
                    .clone()
                    .unwrap_or_else(|| "Sorry, I don't know.".to_string()),
            });
        }
        None
    }
}

/// The roster, by lower-case email.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct People {
    pub persons: BTreeMap<String, Person>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeopleFile {
    #[serde(default)]
    person: Vec<Person>,
}

impl People {
    /// Read `world/people.toml` (absent = nobody).
    pub fn load(path: &Path) -> Result<People, WorldError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(People::default()),
            Err(e) => return Err(WorldError::io(path, e)),
        };
        let file: PeopleFile = toml::from_str(&text).map_err(|e| WorldError::Seed {
            path: path.to_path_buf(),
            message: format!("{e}— see docs/services/people.md for the format"),
        })?;
        let mut people = People::default();
        let mut handles = BTreeMap::new();
        for mut p in file.person {
            p.email = p.email.trim().to_lowercase();
            p.handle = p.handle.trim().trim_start_matches('@').to_lowercase();
            if !p.email.contains('@') || p.handle.is_empty() {
                return Err(WorldError::Seed {
                    path: path.to_path_buf(),
                    message: format!(
                        "person `{}` needs an email address and a chat handle",
                        p.name
                    ),
                });
            }
            if let Some(other) = handles.insert(p.handle.clone(), p.email.clone()) {
                return Err(WorldError::Seed {
                    path: path.to_path_buf(),
                    message: format!(
                        "handle `{}` is used by both {other} and {}; handles are unique",
                        p.handle, p.email
                    ),
                });
            }
            if people.persons.contains_key(&p.email) {
                return Err(WorldError::Seed {
                    path: path.to_path_buf(),
                    message: format!("{} appears twice; list each person once", p.email),
                });
            }
            for c in p.replies_to.iter().flatten() {
                if c != "chat" && c != "mail" {
                    return Err(WorldError::Seed {
                        path: path.to_path_buf(),
                        message: format!(
                            "person `{}`: replies_to has `{c}`; use \"chat\" and/or \"mail\"",
                            p.name
                        ),
                    });
                }
            }
            for k in p.knows.iter().chain(&p.refuse) {
                if k.about.iter().all(|a| a.trim().is_empty()) {
                    return Err(WorldError::Seed {
                        path: path.to_path_buf(),
                        message: format!(
                            "person `{}`: a knows/refuse entry has no `about` keywords (reply \"{}\")",
                            p.name, k.reply
                        ),
                    });
                }
            }
            people.persons.insert(p.email.clone(), p);
        }
        // The default "don't know" names the manager.
        let managers: BTreeMap<String, String> = people
            .persons
            .values()
            .map(|p| (p.email.clone(), p.name.clone()))
            .collect();
        for p in people.persons.values_mut() {
            if p.unknown_reply.is_none() && (!p.knows.is_empty() || !p.refuse.is_empty()) {
                let who = p.manager.as_ref().map(|m| {
                    managers
                        .get(&m.to_lowercase())
                        .cloned()
                        .unwrap_or(m.clone())
                });
                p.unknown_reply = Some(match who {
                    Some(m) => format!("Sorry, I don't know — maybe ask {m}."),
                    None => "Sorry, I don't know.".to_string(),
                });
            }
        }
        Ok(people)
    }

    /// A person by email or chat handle (with or without `@`), case-insensitive.
    pub fn find(&self, who: &str) -> Option<&Person> {
        let w = who.trim().trim_start_matches('@').to_lowercase();
        self.persons
            .get(&w)
            .or_else(|| self.persons.values().find(|p| p.handle == w))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Person> {
        self.persons.values()
    }

    pub fn is_empty(&self) -> bool {
        self.persons.is_empty()
    }
}
