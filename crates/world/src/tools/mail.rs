//! mail_* tools. The acting person (the task's user for the agent, a colleague in an `act`
//! event) reads their own mailbox and sends as themselves. Colleagues answer the agent's mail
//! right away through the world's reply policy (a mail reply in the user's INBOX).

use bureau_core::log::Actor;
use bureau_formats::mail::{Address, Attachment, OutgoingMail, build_eml, parse_eml};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, boolean, integer, parse, schema, string, strings};
use crate::World;
use crate::mail::{INBOX, SENT, StoredMail};
use crate::people::{ChannelKind, Incoming};

pub(super) const FOLDERS: Tool = Tool {
    name: "mail_folders",
    description: "List the folders of your mailbox.",
    schema: || schema(&[], &[]),
    run: folders,
};
pub(super) const LIST: Tool = Tool {
    name: "mail_list",
    description: "List messages in a folder of your mailbox, newest first.",
    schema: || {
        schema(
            &[
                ("folder", string("Folder name (default INBOX)")),
                (
                    "unread_only",
                    boolean("Only unread messages (default false)"),
                ),
                ("limit", integer("At most this many (default 50)")),
            ],
            &[],
        )
    },
    run: list,
};
pub(super) const READ: Tool = Tool {
    name: "mail_read",
    description: "Read one message of your mailbox by id (marks it read).",
    schema: || {
        schema(
            &[("id", string("Message id from mail_list or mail_search"))],
            &["id"],
        )
    },
    run: read,
};
pub(super) const SEARCH: Tool = Tool {
    name: "mail_search",
    description: "Search your mailbox (subject, body, sender, recipients; case-insensitive).",
    schema: || {
        schema(
            &[
                ("query", string("Text to find")),
                ("folder", string("Only this folder (default: all folders)")),
            ],
            &["query"],
        )
    },
    run: search,
};
pub(super) const SEND: Tool = Tool {
    name: "mail_send",
    description: "Send a new message from your address. Attachments are workspace files.",
    schema: || {
        schema(
            &[
                ("to", strings("Recipient addresses")),
                ("cc", strings("Cc addresses")),
                ("bcc", strings("Bcc addresses")),
                ("subject", string("Subject line")),
                ("body", string("Plain-text body")),
                ("attachments", strings("Workspace paths of files to attach")),
            ],
            &["to", "subject", "body"],
        )
    },
    run: send,
};
pub(super) const REPLY: Tool = Tool {
    name: "mail_reply",
    description: "Reply to a message of your mailbox (to its sender; reply_all adds the other recipients).",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("body", string("Plain-text body")),
                (
                    "reply_all",
                    boolean("Also reply to the other recipients (default false)"),
                ),
                ("attachments", strings("Workspace paths of files to attach")),
            ],
            &["id", "body"],
        )
    },
    run: reply,
};
pub(super) const FORWARD: Tool = Tool {
    name: "mail_forward",
    description: "Forward a message of your mailbox, with its attachments.",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("to", strings("Recipient addresses")),
                ("cc", strings("Cc addresses")),
                ("body", string("Text above the forwarded message")),
            ],
            &["id", "to"],
        )
    },
    run: forward,
};
pub(super) const MOVE: Tool = Tool {
    name: "mail_move",
    description: "Move a message to another folder of your mailbox (created if needed).",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("folder", string("Target folder")),
            ],
            &["id", "folder"],
        )
    },
    run: move_,
};
pub(super) const MARK_READ: Tool = Tool {
    name: "mail_mark_read",
    description: "Mark a message read (or unread with read=false).",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("read", boolean("Default true")),
            ],
            &["id"],
        )
    },
    run: mark_read,
};
pub(super) const READ_ATTACHMENT: Tool = Tool {
    name: "mail_read_attachment",
    description: "Read an attachment of a message in place, as files_read reads a file: text, office files as structured text, images as images, audio as audio, scanned PDF pages as images.",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("filename", string("Attachment file name")),
            ],
            &["id", "filename"],
        )
    },
    run: read_attachment,
};
pub(super) const SAVE_ATTACHMENT: Tool = Tool {
    name: "mail_save_attachment",
    description: "Save an attachment of a message into the workspace.",
    schema: || {
        schema(
            &[
                ("id", string("Message id")),
                ("filename", string("Attachment file name")),
                ("path", string("Workspace path to write")),
            ],
            &["id", "filename", "path"],
        )
    },
    run: save_attachment,
};

fn summary(w: &World, m: &StoredMail) -> Value {
    json!({
        "id": m.id,
        "url": w.url_of(crate::urls::Kind::MailMessage, &m.id),
        "folder": m.folder,
        "from": m.mail.from.as_ref().map(|a| a.display()),
        "to": m.mail.to.iter().map(|a| a.display()).collect::<Vec<_>>(),
        "subject": m.mail.subject,
        "date": m.mail.date.map(|d| d.with_timezone(&w.timezone).to_rfc3339()),
        "seen": m.seen,
        "attachments": m.mail.attachments.len(),
    })
}

/// A message of the acting person's own mailbox.
fn own<'a>(w: &'a World, actor: &Actor, id: &str) -> Result<&'a StoredMail, String> {
    let me = w.acting_email(actor)?;
    match w.mail.get(id) {
        Some(m) if m.owner == me => Ok(m),
        _ => Err(format!(
            "no message `{id}` in your mailbox; use mail_list or mail_search to find ids"
        )),
    }
}

fn folders(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let _: Empty = parse("mail_folders", args)?;
    let me = w.acting_email(actor)?;
    Ok(json!({"folders": w.mail.folders(&me)}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default = "inbox")]
    folder: String,
    #[serde(default)]
    unread_only: bool,
    #[serde(default = "fifty")]
    limit: usize,
}
fn inbox() -> String {
    INBOX.to_string()
}
fn fifty() -> usize {
    50
}

/// Newest first: by date, then by arrival.
fn newest_first(mut v: Vec<&StoredMail>) -> Vec<&StoredMail> {
    v.sort_by(|a, b| (b.mail.date, &b.id).cmp(&(a.mail.date, &a.id)));
    v
}

fn list(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ListArgs = parse("mail_list", args)?;
    let user = w.acting_email(actor)?;
    let known = w.mail.folders(&user);
    let Some(folder) = known.iter().find(|f| f.eq_ignore_ascii_case(&a.folder)) else {
        return Err(format!(
            "no folder `{}`; your folders are: {}",
            a.folder,
            known.join(", ")
        ));
    };
    let all = newest_first(w.mail.messages(&user, Some(folder)));
    let total = all.len();
    let msgs: Vec<Value> = all
        .into_iter()
        .filter(|m| !a.unread_only || !m.seen)
        .take(a.limit.max(1))
        .map(|m| summary(w, m))
        .collect();
    Ok(json!({"folder": folder, "total": total, "messages": msgs}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdArg {
    id: String,
}

fn read(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: IdArg = parse("mail_read", args)?;
    let m = own(w, actor, &a.id)?;
    let tz = w.timezone;
    let out = json!({
        "id": m.id,
        "url": w.url_of(crate::urls::Kind::MailMessage, &m.id),
        "folder": m.folder,
        "from": m.mail.from.as_ref().map(|a| a.display()),
        "to": m.mail.to.iter().map(|a| a.display()).collect::<Vec<_>>(),
        "cc": m.mail.cc.iter().map(|a| a.display()).collect::<Vec<_>>(),
        "subject": m.mail.subject,
        "date": m.mail.date.map(|d| d.with_timezone(&tz).to_rfc3339()),
        "message_id": m.mail.message_id,
        "in_reply_to": m.mail.in_reply_to,
        "text": m.mail.text,
        "attachments": m.mail.attachments.iter().map(|x| json!({"filename": x.filename, "size": x.size, "content_type": x.content_type})).collect::<Vec<_>>(),
    });
    if !m.seen {
        if let Some(m) = w.mail.get_mut(&a.id) {
            m.seen = true;
        }
        w.record(
            actor.clone(),
            "mail",
            "mark_read",
            false,
            json!({"id": a.id, "seen": true}),
        );
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    folder: Option<String>,
}

fn search(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SearchArgs = parse("mail_search", args)?;
    let q = a.query.to_lowercase();
    if q.trim().is_empty() {
        return Err("`query` is empty".into());
    }
    let user = w.acting_email(actor)?;
    let hits: Vec<&StoredMail> = w
        .mail
        .messages(&user, a.folder.as_deref())
        .into_iter()
        .filter(|m| {
            let addrs = m
                .mail
                .from
                .iter()
                .chain(&m.mail.to)
                .chain(&m.mail.cc)
                .map(|x| x.display().to_lowercase())
                .collect::<Vec<_>>()
                .join(" ");
            m.mail.subject.to_lowercase().contains(&q)
                || m.mail.text.to_lowercase().contains(&q)
                || addrs.contains(&q)
        })
        .collect();
    let msgs: Vec<Value> = newest_first(hits)
        .into_iter()
        .take(100)
        .map(|m| summary(w, m))
        .collect();
    Ok(json!({"messages": msgs}))
}

fn addresses(field: &str, list: &[String]) -> Result<Vec<Address>, String> {
    list.iter()
        .map(|s| Address::parse(s).map_err(|e| format!("`{field}`: {e}")))
        .collect()
}

fn workspace_attachments(w: &World, paths: &[String]) -> Result<Vec<Attachment>, String> {
    paths
        .iter()
        .map(|p| {
            let data = w
                .files
                .read_bytes(p)
                .map_err(|e| format!("attachment: {e}"))?;
            let filename = p.rsplit('/').next().unwrap_or(p).to_string();
            Ok(Attachment {
                filename,
                content_type: crate::attachments::mime_by_name(p).to_string(),
                size: data.len() as u64,
                data,
            })
        })
        .collect()
}

/// Send a message as the user: a copy in Sent, one in the INBOX of every recipient with a
/// mailbox in the world. Returns the Sent copy's id and the Message-ID.
#[allow(clippy::too_many_arguments)]
fn dispatch(
    w: &mut World,
    actor: &Actor,
    action: &str,
    to: Vec<Address>,
    cc: Vec<Address>,
    bcc: Vec<Address>,
    subject: String,
    text: String,
    in_reply_to: Option<String>,
    references: Vec<String>,
    attachments: Vec<Attachment>,
) -> ToolResult {
    if to.is_empty() && cc.is_empty() && bcc.is_empty() {
        return Err("no recipients; give at least one address in `to`".into());
    }
    let me = w.acting_email(actor)?;
    let my_name = match w.people.persons.get(&me) {
        Some(p) => p.name.clone(),
        None => w.user.name.clone(),
    };
    let domain = me.rsplit('@').next().unwrap_or("bureau.test").to_string();
    let message_id = format!("{:05}.bureau@{domain}", w.mail.next_id + 1);
    let out = OutgoingMail {
        from: Address {
            name: Some(my_name),
            email: me.clone(),
        },
        to: to.clone(),
        cc: cc.clone(),
        bcc: bcc.clone(),
        subject: subject.clone(),
        text,
        date: w.now,
        message_id: message_id.clone(),
        in_reply_to,
        references,
        attachments,
    };
    let raw = build_eml(&out).map_err(|e| e.to_string())?;
    let mut parsed =
        parse_eml(&raw).map_err(|e| format!("internal: the built message does not parse: {e}"))?;
    let raw_text = String::from_utf8_lossy(&raw).into_owned();
    let user = me;
    // Recipients' copies carry no Bcc; the sender's copy keeps it.
    let mut recipients: Vec<String> = to
        .iter()
        .chain(&cc)
        .chain(&bcc)
        .map(|a| a.email.clone())
        .collect();
    recipients.sort();
    recipients.dedup();
    let delivered_copy = parsed.clone();
    parsed.bcc = bcc.clone();
    let id = w.mail.insert(&user, SENT, parsed, raw_text.clone(), true);
    let mut delivered = Vec::new();
    for r in &recipients {
        if w.mail.has_mailbox(r) {
            w.mail
                .insert(r, INBOX, delivered_copy.clone(), raw_text.clone(), false);
            delivered.push(r.clone());
        }
    }
    w.record(
        actor.clone(),
        "mail",
        action,
        false,
        json!({
            "id": id, "message_id": message_id, "subject": subject,
            "to": to.iter().map(|a| &a.email).collect::<Vec<_>>(),
            "cc": cc.iter().map(|a| &a.email).collect::<Vec<_>>(),
            "bcc": bcc.iter().map(|a| &a.email).collect::<Vec<_>>(),
            "delivered": delivered,
        }),
    );
    if *actor == Actor::Agent {
        colleague_replies(w, &id);
    }
    Ok(json!({"id": id, "message_id": message_id}))
}

/// Colleagues among the recipients of the agent's mail `sent_id` (the sender's copy) answer
/// through the world's reply policy: a reply mail to the sender (Re: subject, In-Reply-To),
/// sent as the colleague (actor `colleague:<email>`).
fn colleague_replies(w: &mut World, sent_id: &str) {
    let Some(sent) = w.mail.get(sent_id).map(|m| m.mail.clone()) else {
        return;
    };
    let Some(sender) = sent.from.clone() else {
        return;
    };
    let mut reached: Vec<String> = sent
        .to
        .iter()
        .chain(&sent.cc)
        .chain(&sent.bcc)
        .map(|a| a.email.to_lowercase())
        .filter(|e| *e != sender.email)
        .collect();
    reached.sort();
    reached.dedup();
    for email in reached {
        let Some(person) = w.people.persons.get(&email).cloned() else {
            continue;
        };
        if !person.answers_on(ChannelKind::Mail) {
            continue;
        }
        let incoming = Incoming {
            channel: ChannelKind::Mail,
            text: &sent.text,
            subject: Some(&sent.subject),
            sender: &sender.email,
        };
        let Some(reply) = w.reply_policy().reply(&person, &incoming) else {
            continue;
        };
        let mut refs = sent.references.clone();
        if let Some(mid) = &sent.message_id {
            refs.push(mid.clone());
        }
        // A reply that cannot be built (never expected) is dropped rather than failing the
        // agent's successful send.
        let _ = dispatch(
            w,
            &Actor::Colleague(email.clone()),
            "reply",
            vec![sender.clone()],
            Vec::new(),
            Vec::new(),
            prefixed("Re:", &sent.subject),
            reply.text,
            sent.message_id.clone(),
            refs,
            Vec::new(),
        );
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    to: Vec<String>,
    #[serde(default)]
    cc: Vec<String>,
    #[serde(default)]
    bcc: Vec<String>,
    subject: String,
    body: String,
    #[serde(default)]
    attachments: Vec<String>,
}

fn send(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SendArgs = parse("mail_send", args)?;
    let to = addresses("to", &a.to)?;
    let cc = addresses("cc", &a.cc)?;
    let bcc = addresses("bcc", &a.bcc)?;
    let att = workspace_attachments(w, &a.attachments)?;
    dispatch(
        w,
        actor,
        "send",
        to,
        cc,
        bcc,
        a.subject,
        a.body,
        None,
        Vec::new(),
        att,
    )
}

fn prefixed(prefix: &str, subject: &str) -> String {
    let lower = subject.trim_start().to_lowercase();
    if lower.starts_with(&prefix.to_lowercase()) {
        subject.to_string()
    } else {
        format!("{prefix} {subject}")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyArgs {
    id: String,
    body: String,
    #[serde(default)]
    reply_all: bool,
    #[serde(default)]
    attachments: Vec<String>,
}

fn reply(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ReplyArgs = parse("mail_reply", args)?;
    let orig = own(w, actor, &a.id)?.mail.clone();
    let me = w.acting_email(actor)?;
    let mut to: Vec<Address> = if !orig.reply_to.is_empty() {
        orig.reply_to.clone()
    } else {
        orig.from.clone().into_iter().collect()
    };
    // Replying to one's own sent message goes to its recipients.
    if to.iter().all(|x| x.email == me) {
        to = orig.to.clone();
    }
    let mut cc = Vec::new();
    if a.reply_all {
        for x in orig.to.iter().chain(&orig.cc) {
            if x.email != me
                && !to.iter().any(|t| t.email == x.email)
                && !cc.iter().any(|c: &Address| c.email == x.email)
            {
                cc.push(x.clone());
            }
        }
    }
    let mut refs = orig.references.clone();
    if let Some(mid) = &orig.message_id {
        refs.push(mid.clone());
    }
    let att = workspace_attachments(w, &a.attachments)?;
    dispatch(
        w,
        actor,
        "reply",
        to,
        cc,
        Vec::new(),
        prefixed("Re:", &orig.subject),
        a.body,
        orig.message_id.clone(),
        refs,
        att,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForwardArgs {
    id: String,
    to: Vec<String>,
    #[serde(default)]
    cc: Vec<String>,
    #[serde(default)]
    body: String,
}

fn forward(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ForwardArgs = parse("mail_forward", args)?;
    let orig = own(w, actor, &a.id)?.mail.clone();
    let to = addresses("to", &a.to)?;
    let cc = addresses("cc", &a.cc)?;
    let tz = w.timezone;
    let header = format!(
        "---------- Forwarded message ----------\nFrom: {}\nDate: {}\nSubject: {}\nTo: {}\n\n",
        orig.from.as_ref().map(|x| x.display()).unwrap_or_default(),
        orig.date
            .map(|d| d.with_timezone(&tz).to_rfc2822())
            .unwrap_or_default(),
        orig.subject,
        orig.to
            .iter()
            .map(|x| x.display())
            .collect::<Vec<_>>()
            .join(", "),
    );
    let body = if a.body.is_empty() {
        format!("{header}{}", orig.text)
    } else {
        format!("{}\n\n{header}{}", a.body, orig.text)
    };
    dispatch(
        w,
        actor,
        "forward",
        to,
        cc,
        Vec::new(),
        prefixed("Fwd:", &orig.subject),
        body,
        None,
        Vec::new(),
        orig.attachments.clone(),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveArgs {
    id: String,
    folder: String,
}

fn move_(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: MoveArgs = parse("mail_move", args)?;
    own(w, actor, &a.id)?;
    let folder = a.folder.trim().to_string();
    if folder.is_empty() || folder.len() > 100 || folder.contains(['/', '\\', '\0']) {
        return Err("`folder` must be a plain name of 1 to 100 characters without slashes".into());
    }
    let user = w.acting_email(actor)?;
    // Reuse an existing folder's spelling when only the case differs.
    let folder = w
        .mail
        .folders(&user)
        .into_iter()
        .find(|f| f.eq_ignore_ascii_case(&folder))
        .unwrap_or(folder);
    if let Some(f) = w.mail.mailboxes.get_mut(&user) {
        f.insert(folder.clone());
    }
    let from = match w.mail.get_mut(&a.id) {
        Some(m) => std::mem::replace(&mut m.folder, folder.clone()),
        None => return Err(format!("no message `{}`", a.id)),
    };
    w.record(
        actor.clone(),
        "mail",
        "move",
        false,
        json!({"id": a.id, "from": from, "to": folder}),
    );
    Ok(json!({"id": a.id, "folder": folder}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MarkArgs {
    id: String,
    #[serde(default = "yes")]
    read: bool,
}
fn yes() -> bool {
    true
}

fn mark_read(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: MarkArgs = parse("mail_mark_read", args)?;
    own(w, actor, &a.id)?;
    if let Some(m) = w.mail.get_mut(&a.id)
        && m.seen != a.read
    {
        m.seen = a.read;
        w.record(
            actor.clone(),
            "mail",
            "mark_read",
            false,
            json!({"id": a.id, "seen": a.read}),
        );
    }
    Ok(json!({"id": a.id, "seen": a.read}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveArgs {
    id: String,
    filename: String,
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadAttachmentArgs {
    id: String,
    filename: String,
}

fn read_attachment(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ReadAttachmentArgs = parse("mail_read_attachment", args)?;
    let data = attachment(w, actor, &a.id, &a.filename)?;
    let format = bureau_formats::office::Format::detect(&a.filename, &data);
    let mut v = super::files::show(w, &a.filename, &data, format)?;
    if let Value::Object(o) = &mut v {
        o.remove("path");
        o.insert("message".into(), json!(a.id));
        o.insert("filename".into(), json!(a.filename));
    }
    Ok(v)
}

/// The bytes of attachment `filename` of the acting person's message `id`.
fn attachment(w: &World, actor: &Actor, id: &str, filename: &str) -> Result<Vec<u8>, String> {
    let m = own(w, actor, id)?;
    let Some(att) = m.mail.attachments.iter().find(|x| x.filename == filename) else {
        let names: Vec<&str> = m
            .mail
            .attachments
            .iter()
            .map(|x| x.filename.as_str())
            .collect();
        return Err(format!(
            "message `{id}` has no attachment `{filename}`; its attachments: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    Ok(att.data.clone())
}

fn save_attachment(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SaveArgs = parse("mail_save_attachment", args)?;
    let data = attachment(w, actor, &a.id, &a.filename)?;
    let created = w.files.write(&a.path, &data)?;
    w.record(
        actor.clone(),
        "files",
        if created { "create" } else { "write" },
        false,
        json!({"path": a.path, "size": data.len(), "from_mail": a.id}),
    );
    Ok(json!({"path": a.path, "size": data.len()}))
}
