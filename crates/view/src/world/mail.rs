//! Mail: messages that arrived in a mailbox during the turn (sent by the user, or received),
//! and messages moved, flagged, changed or deleted.

use serde::Serialize;
use serde_json::Value;

use super::anchor::object_anchor;
use super::diff::{FieldChange, ObjectChange, Status, json_diff, obj, rest_diff, show, text};

/// A message body is cut to this many characters.
pub const MAX_BODY_CHARS: usize = 20_000;

/// One new message in one mailbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MailItem {
    pub id: String,
    pub anchor: String,
    /// The mailbox it is in.
    pub owner: String,
    pub folder: String,
    /// `sent` (in a Sent folder) or `received`.
    pub direction: &'static str,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub bcc: Vec<String>,
    pub subject: String,
    pub date: String,
    pub in_reply_to: Option<String>,
    /// `name (type, size bytes)`.
    pub attachments: Vec<String>,
    /// Attached pictures as `data:` URIs (each at most 2 MB).
    pub images: Vec<String>,
    pub body: String,
    pub body_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct MailChanges {
    /// New messages, by id.
    pub messages: Vec<MailItem>,
    /// Messages moved, flagged (read/unread) or otherwise changed, and deleted ones.
    pub changed: Vec<ObjectChange>,
    /// Anything else of the mail state (mailboxes, folders).
    pub other: Vec<FieldChange>,
}

impl MailChanges {
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.changed.is_empty() && self.other.is_empty()
    }
}

fn address(v: &Value) -> String {
    let email = text(v, "email");
    match v.get("name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => format!("{n} <{email}>"),
        _ => email,
    }
}

fn addresses(v: &Value, key: &str) -> Vec<String> {
    match v.get(key) {
        Some(Value::Array(a)) => a.iter().map(address).collect(),
        _ => Vec::new(),
    }
}

fn item(id: &str, m: &Value) -> MailItem {
    let mail = m.get("mail").cloned().unwrap_or(Value::Null);
    let folder = text(m, "folder");
    let body = text(&mail, "text");
    let (body, body_truncated) = match body.char_indices().nth(MAX_BODY_CHARS) {
        Some((i, _)) => (body[..i].to_string(), true),
        None => (body, false),
    };
    let attachments = match mail.get("attachments") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|a| {
                format!(
                    "{} ({}, {} bytes)",
                    text(a, "filename"),
                    text(a, "content_type"),
                    a.get("size").map(show).unwrap_or_default()
                )
            })
            .collect(),
        _ => Vec::new(),
    };
    let images = match mail.get("attachments") {
        Some(Value::Array(a)) => a.iter().filter_map(picture).collect(),
        _ => Vec::new(),
    };
    MailItem {
        images,
        id: id.to_string(),
        anchor: object_anchor("mail", id),
        owner: text(m, "owner"),
        direction: if folder.eq_ignore_ascii_case("sent") {
            "sent"
        } else {
            "received"
        },
        folder,
        from: mail.get("from").map(address).unwrap_or_default(),
        to: addresses(&mail, "to"),
        cc: addresses(&mail, "cc"),
        bcc: addresses(&mail, "bcc"),
        subject: text(&mail, "subject"),
        date: text(&mail, "date"),
        in_reply_to: mail
            .get("in_reply_to")
            .and_then(Value::as_str)
            .map(String::from),
        attachments,
        body,
        body_truncated,
    }
}

/// An attachment that is a picture (by its bytes), as a `data:` URI.
fn picture(a: &Value) -> Option<String> {
    use base64::Engine;
    let data = a.get("data")?.as_str()?;
    if data.len() > super::files::MAX_IMAGE_BYTES * 4 / 3 + 4 {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    let mime = super::files::image_mime(&bytes)?;
    Some(format!("data:{mime};base64,{data}"))
}

/// Compares two mail states (`services.mail`).
pub(crate) fn diff_mail(old: Option<&Value>, new: Option<&Value>) -> MailChanges {
    let (a, b) = (obj(old, "messages"), obj(new, "messages"));
    let mut out = MailChanges::default();
    for (id, m) in b {
        if !a.contains_key(id) {
            out.messages.push(item(id, m));
        }
    }
    let ids: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for id in ids {
        let (x, y) = (a.get(id), b.get(id));
        let status = match (x, y) {
            (Some(_), None) => Status::Deleted,
            (Some(p), Some(q)) if p != q => Status::Changed,
            _ => continue,
        };
        let mut fields = Vec::new();
        // The raw message repeats the parsed fields; attachment data is shown by name.
        json_diff("", x, y, &["raw", "data"], &mut fields);
        if status == Status::Deleted {
            fields.retain(|f| {
                ["folder", "mail.subject", "mail.from.email", "mail.date"]
                    .contains(&f.path.as_str())
            });
        }
        let shown = y
            .or(x)
            .map(|m| text(m.get("mail").unwrap_or(&Value::Null), "subject"));
        out.changed.push(ObjectChange {
            kind: "mail".into(),
            key: id.clone(),
            anchor: object_anchor("mail", id),
            title: shown
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| id.clone()),
            status,
            fields,
        });
    }
    out.other = rest_diff("mail", old, new, &["messages", "next_id"]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn new_sent_mail_moved_and_deleted() {
        let msg = |folder: &str, subject: &str| {
            json!({"owner": "u@x.test", "folder": folder, "seen": false, "raw": "…",
                   "mail": {"subject": subject, "from": {"name": "U", "email": "u@x.test"},
                            "to": [{"name": null, "email": "a@y.test"}], "text": "hi",
                            "attachments": [{"filename": "a.md", "content_type": "text/plain", "size": 3, "data": "YWJj"}]}})
        };
        let old = json!({"messages": {"m1": msg("INBOX", "one"), "m2": msg("INBOX", "two")}, "next_id": 3});
        let new = json!({"messages": {"m1": msg("Archive", "one"), "m3": msg("Sent", "three")}, "next_id": 4});
        let c = diff_mail(Some(&old), Some(&new));
        assert_eq!(c.messages.len(), 1);
        let m = &c.messages[0];
        assert_eq!(
            (m.id.as_str(), m.direction, m.subject.as_str()),
            ("m3", "sent", "three")
        );
        assert_eq!(m.from, "U <u@x.test>");
        assert_eq!(m.to, vec!["a@y.test"]);
        assert_eq!(m.attachments, vec!["a.md (text/plain, 3 bytes)"]);
        assert!(m.images.is_empty());
        let gif = json!({"filename": "p.gif", "data": "R0lGODlhAQABAAAAACw="});
        assert_eq!(
            picture(&gif).as_deref(),
            Some("data:image/gif;base64,R0lGODlhAQABAAAAACw=")
        );
        assert_eq!(picture(&json!({"data": "!!"})), None);
        let changed: Vec<_> = c
            .changed
            .iter()
            .map(|o| (o.key.as_str(), o.status))
            .collect();
        assert_eq!(
            changed,
            vec![("m1", Status::Changed), ("m2", Status::Deleted)]
        );
        assert_eq!(c.changed[0].fields[0].path, "folder");
        assert_eq!(c.changed[0].fields[0].new.as_deref(), Some("Archive"));
        assert!(c.other.is_empty(), "{:?}", c.other);
    }
}
