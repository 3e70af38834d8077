//! Mail: one mailbox per user, with folders. Messages are real RFC 5322 messages, parsed with
//! a MIME parser; each mailbox holds its own copy of a message (its own id, folder, read flag).
//!
//! The agent acts as the task's user: it sends from that address only. Mail it sends lands in
//! its `Sent` folder and in the `INBOX` of every recipient who has a mailbox in the world.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bureau_formats::mail::{ParsedMail, parse_eml};
use serde::{Deserialize, Serialize};

pub const INBOX: &str = "INBOX";
pub const SENT: &str = "Sent";

/// One message in one user's mailbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMail {
    /// Stable id within the world (`m00001`, ...), in the order messages arrived.
    pub id: String,
    /// The mailbox owner's address.
    pub owner: String,
    pub folder: String,
    pub seen: bool,
    /// Parsed fields.
    pub mail: ParsedMail,
    /// The raw message (RFC 5322).
    pub raw: String,
}

impl StoredMail {
    /// Every recipient address (To, Cc, Bcc), lowercased.
    pub fn recipients(&self) -> Vec<String> {
        self.mail
            .to
            .iter()
            .chain(&self.mail.cc)
            .chain(&self.mail.bcc)
            .map(|a| a.email.clone())
            .collect()
    }

    pub fn from_email(&self) -> Option<&str> {
        self.mail.from.as_ref().map(|a| a.email.as_str())
    }
}

/// All mailboxes of the world.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MailState {
    /// Folders of each mailbox (every mailbox has INBOX and Sent).
    pub(crate) mailboxes: BTreeMap<String, BTreeSet<String>>,
    pub(crate) messages: BTreeMap<String, StoredMail>,
    pub(crate) next_id: u64,
}

impl MailState {
    /// Mailbox owners, sorted.
    pub fn users(&self) -> Vec<String> {
        self.mailboxes.keys().cloned().collect()
    }

    pub fn has_mailbox(&self, user: &str) -> bool {
        self.mailboxes.contains_key(&user.to_lowercase())
    }

    /// Folders of a user's mailbox, sorted.
    pub fn folders(&self, user: &str) -> Vec<String> {
        self.mailboxes
            .get(&user.to_lowercase())
            .map(|f| f.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// A message by id.
    pub fn get(&self, id: &str) -> Option<&StoredMail> {
        self.messages.get(id)
    }

    /// Messages of a user's mailbox (all folders when `folder` is None), in arrival order.
    pub fn messages(&self, user: &str, folder: Option<&str>) -> Vec<&StoredMail> {
        let user = user.to_lowercase();
        self.messages
            .values()
            .filter(|m| m.owner == user && folder.is_none_or(|f| m.folder.eq_ignore_ascii_case(f)))
            .collect()
    }

    /// Messages `user` sent (their `Sent` folder copies).
    pub fn sent_by(&self, user: &str) -> Vec<&StoredMail> {
        self.messages(user, Some(SENT))
    }

    pub(crate) fn ensure_mailbox(&mut self, user: &str) {
        let folders = self.mailboxes.entry(user.to_lowercase()).or_default();
        folders.insert(INBOX.to_string());
        folders.insert(SENT.to_string());
    }

    /// Put a raw message into `owner`'s `folder`; returns its id.
    pub(crate) fn insert_raw(
        &mut self,
        owner: &str,
        folder: &str,
        raw: &[u8],
        seen: bool,
    ) -> Result<String, String> {
        let mail = parse_eml(raw).map_err(|e| e.to_string())?;
        Ok(self.insert(
            owner,
            folder,
            mail,
            String::from_utf8_lossy(raw).into_owned(),
            seen,
        ))
    }

    pub(crate) fn insert(
        &mut self,
        owner: &str,
        folder: &str,
        mail: ParsedMail,
        raw: String,
        seen: bool,
    ) -> String {
        let owner = owner.to_lowercase();
        self.ensure_mailbox(&owner);
        if let Some(f) = self.mailboxes.get_mut(&owner) {
            f.insert(folder.to_string());
        }
        self.next_id += 1;
        let id = format!("m{:05}", self.next_id);
        self.messages.insert(
            id.clone(),
            StoredMail {
                id: id.clone(),
                owner,
                folder: folder.to_string(),
                seen,
                mail,
                raw,
            },
        );
        id
    }

    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut StoredMail> {
        self.messages.get_mut(id)
    }

    /// Write every message as `.eml` under `dir/<owner>/<folder>/<id>.eml`.
    pub fn export_eml(&self, dir: &Path) -> std::io::Result<()> {
        for m in self.messages.values() {
            let folder = dir.join(&m.owner).join(sanitize(&m.folder));
            std::fs::create_dir_all(&folder)?;
            std::fs::write(folder.join(format!("{}.eml", m.id)), m.raw.as_bytes())?;
        }
        Ok(())
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
