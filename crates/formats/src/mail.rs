//! E-mail: addresses, RFC 5322 / MIME messages and mbox files.
//!
//! Guarantees:
//!
//! * [`parse_eml`] does real MIME parsing (via `mail-parser`): RFC 2047
//!   encoded headers, quoted-printable and base64 bodies, any charset the
//!   parser knows (decoded to UTF-8), nested multiparts, attached messages.
//!   It never panics; input that is not a mail at all is a
//!   [`FormatError::NotMail`]. Line endings in [`ParsedMail::text`] are `\n`.
//! * [`build_eml`] (via `mail-builder`) returns the same bytes for the same
//!   input: MIME boundaries are derived from the Message-ID, the Date header
//!   is the given date, nothing depends on the clock or on randomness.
//!   Bcc recipients are never written.
//! * Round trip: `parse_eml(&build_eml(m)?)` gives back `m`'s from, to, cc,
//!   subject, text, date, message_id, in_reply_to, references and
//!   attachments (bytes exact), given that e-mails are lower case, the
//!   subject has no leading/trailing whitespace and no control characters,
//!   the text uses `\n` line endings (any `\r` comes back as part of `\r\n`
//!   → `\n` normalisation) and the date has whole seconds.
//! * [`split_mbox`] splits on `From ` lines and undoes mboxrd `>From `
//!   quoting; it never fails.

use crate::error::{FormatError, guard};
use crate::text::html_to_text;
use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone};
use mail_builder::MessageBuilder;
use mail_builder::headers::address::Address as BuilderAddress;
use mail_builder::headers::content_type::ContentType;
use mail_builder::headers::message_id::MessageId;
use mail_builder::headers::raw::Raw;
use mail_builder::mime::{BodyPart, MimePart};
use mail_parser::{Encoding, HeaderName, HeaderValue, MessageParser, MimeHeaders, PartType};
use serde::{Deserialize, Serialize};

/// An e-mail address with an optional display name. `email` is always lower
/// case.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Address {
    /// Display name ("Dana Reyes"), `None` if absent or empty.
    pub name: Option<String>,
    /// The address itself, lower-cased ("dana@x.test").
    pub email: String,
}

/// Characters never allowed in an (unquoted) e-mail address.
const EMAIL_FORBIDDEN: &[char] = &['<', '>', '(', ')', '[', ']', ',', ';', ':', '"', '\\'];
/// Characters that force the display name to be quoted.
const NAME_SPECIALS: &[char] = &[
    '(', ')', '<', '>', '[', ']', ':', ';', '@', '\\', ',', '.', '"',
];

impl Address {
    /// Parses `"Dana Reyes <Dana@x.test>"`, `"\"Reyes, Dana\" <dana@x.test>"`,
    /// `"<dana@x.test>"` or `"dana@x.test"`. The e-mail is lower-cased; an
    /// empty name becomes `None`.
    pub fn parse(s: &str) -> Result<Address, FormatError> {
        let err = |reason: &str| FormatError::InvalidAddress {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(err("it is empty"));
        }
        let (name, email) = match (t.rfind('<'), t.strip_suffix('>')) {
            (Some(lt), Some(inner)) => {
                let name = unquote_name(t[..lt].trim()).map_err(|r| err(&r))?;
                (name, inner[lt + 1..].trim())
            }
            (None, Some(_)) => return Err(err("it has a '>' without a matching '<'")),
            (Some(_), None) => return Err(err("it has a '<' without a closing '>' at the end")),
            (None, None) => (None, t),
        };
        validate_email(email).map_err(|r| err(&r))?;
        Ok(Address {
            name,
            email: email.to_lowercase(),
        })
    }

    /// Formats the address for a header or a person: `Dana Reyes <dana@x.test>`,
    /// `"Reyes, Dana" <dana@x.test>` when the name needs quoting, or just the
    /// e-mail when there is no name. [`Address::parse`] reads it back.
    pub fn display(&self) -> String {
        match self.name.as_deref() {
            None | Some("") => self.email.clone(),
            Some(name) => {
                let needs_quotes = name.contains(NAME_SPECIALS) || name.trim() != name;
                if needs_quotes {
                    let escaped = name.replace('\\', "\\\\").replace('"', "\\\"");
                    format!("\"{escaped}\" <{}>", self.email)
                } else {
                    format!("{name} <{}>", self.email)
                }
            }
        }
    }
}

/// Strips the quotes of a quoted display name and undoes its backslash
/// escapes; `None` for an empty name.
fn unquote_name(name: &str) -> Result<Option<String>, String> {
    let out = match name.strip_prefix('"') {
        Some(rest) => {
            let Some(inner) = rest.strip_suffix('"') else {
                return Err("the display name has an opening '\"' but no closing one".into());
            };
            let mut out = String::with_capacity(inner.len());
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    out.extend(chars.next());
                } else {
                    out.push(c);
                }
            }
            out
        }
        None => name.to_string(),
    };
    Ok(if out.is_empty() { None } else { Some(out) })
}

fn validate_email(email: &str) -> Result<(), String> {
    if email.is_empty() {
        return Err("the e-mail part is empty".into());
    }
    if email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the e-mail part contains whitespace or control characters".into());
    }
    if email.contains(EMAIL_FORBIDDEN) {
        return Err("the e-mail part contains one of < > ( ) [ ] , ; : \" \\".into());
    }
    match email.split_once('@') {
        Some((local, domain)) if !local.is_empty() && !domain.is_empty() => {
            if domain.contains('@') {
                Err("the e-mail part contains more than one '@'".into())
            } else if domain.starts_with('.') || domain.ends_with('.') || domain.contains("..") {
                Err("the domain after '@' is malformed".into())
            } else {
                Ok(())
            }
        }
        _ => Err("the e-mail part needs the form local@domain".into()),
    }
}

/// A file attached to a mail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    /// File name as given in the mail (`attachment-N` if it had none).
    pub filename: String,
    /// MIME type, lower case, without parameters ("application/pdf").
    pub content_type: String,
    /// `data.len()` when parsed; informational when building.
    pub size: u64,
    /// The decoded bytes (base64 string in JSON).
    #[serde(with = "crate::b64::serde_bytes")]
    pub data: Vec<u8>,
}

/// A mail as read from an `.eml` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedMail {
    /// Message-ID without the angle brackets.
    pub message_id: Option<String>,
    /// First From address.
    pub from: Option<Address>,
    /// All To addresses (groups flattened), in header order.
    pub to: Vec<Address>,
    /// All Cc addresses.
    pub cc: Vec<Address>,
    /// All Bcc addresses (only present in mails saved by their sender).
    pub bcc: Vec<Address>,
    /// All Reply-To addresses.
    pub reply_to: Vec<Address>,
    /// Decoded subject (RFC 2047), trimmed; "" if missing.
    pub subject: String,
    /// Date header with its original offset; `None` if missing or invalid.
    pub date: Option<DateTime<FixedOffset>>,
    /// First id of In-Reply-To, without angle brackets.
    pub in_reply_to: Option<String>,
    /// References ids in order, without angle brackets.
    pub references: Vec<String>,
    /// The text/plain body (several text parts joined with `\n`); for an
    /// HTML-only mail the HTML converted with [`html_to_text`]. `\n` line
    /// endings.
    pub text: String,
    /// Attachments in MIME order (including attached messages and inline
    /// images).
    pub attachments: Vec<Attachment>,
}

/// Parses one raw RFC 5322 message.
///
/// Errors with [`FormatError::NotMail`] when the bytes contain no header
/// lines at all (empty input, random binary, plain prose), and with
/// [`FormatError::Internal`] should the MIME parser ever panic.
pub fn parse_eml(raw: &[u8]) -> Result<ParsedMail, FormatError> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Err(FormatError::NotMail {
            reason: "the input is empty".into(),
        });
    }
    guard("mail parser", || parse_eml_inner(raw))?
}

fn parse_eml_inner(raw: &[u8]) -> Result<ParsedMail, FormatError> {
    let no_headers = || FormatError::NotMail {
        reason: "no header lines (\"Name: value\") were found at the start".into(),
    };
    let message = MessageParser::default().parse(raw).ok_or_else(no_headers)?;
    // mail-parser turns any first line into a "header"; insist on at least
    // one real field name (printable ASCII, no space or colon).
    let is_field_name =
        |name: &str| !name.is_empty() && name.bytes().all(|b| (33..=126).contains(&b) && b != b':');
    if !message.headers().iter().any(|h| is_field_name(h.name())) {
        return Err(no_headers());
    }

    let addresses = |name: HeaderName<'static>| -> Vec<Address> {
        message
            .header_values(name)
            .filter_map(HeaderValue::as_address)
            .flat_map(|a| a.iter())
            .filter_map(convert_addr)
            .collect()
    };

    let mut text_parts: Vec<String> = Vec::new();
    for part in message.text_bodies() {
        match &part.body {
            PartType::Text(t) => text_parts.push(t.to_string()),
            PartType::Html(h) => text_parts.push(html_to_text(h)),
            _ => {}
        }
    }
    if text_parts.is_empty() {
        for part in message.html_bodies() {
            match &part.body {
                PartType::Html(h) => text_parts.push(html_to_text(h)),
                PartType::Text(t) => text_parts.push(t.to_string()),
                _ => {}
            }
        }
    }
    let text = text_parts.join("\n").replace("\r\n", "\n");

    let mut attachments = Vec::new();
    for (i, part) in message.attachments().enumerate() {
        if matches!(part.body, PartType::Multipart(_)) {
            continue;
        }
        let data = attachment_bytes(message.raw_message(), part);
        let content_type = part
            .content_type()
            .map(|ct| match ct.subtype() {
                Some(sub) => format!("{}/{}", ct.ctype(), sub),
                None => ct.ctype().to_string(),
            })
            .unwrap_or_else(|| match part.body {
                PartType::Message(_) => "message/rfc822".into(),
                PartType::Text(_) => "text/plain".into(),
                PartType::Html(_) => "text/html".into(),
                _ => "application/octet-stream".into(),
            })
            .to_ascii_lowercase();
        let filename = part
            .attachment_name()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("attachment-{}", i + 1), str::to_string);
        attachments.push(Attachment {
            filename,
            content_type,
            size: data.len() as u64,
            data,
        });
    }

    let ids = |value: &HeaderValue<'_>| -> Vec<String> {
        match value {
            HeaderValue::Text(t) => vec![t.to_string()],
            HeaderValue::TextList(list) => list.iter().map(|t| t.to_string()).collect(),
            _ => Vec::new(),
        }
        .into_iter()
        .map(|id| strip_angles(&id).to_string())
        .filter(|id| !id.is_empty())
        .collect()
    };

    Ok(ParsedMail {
        message_id: message
            .message_id()
            .map(|id| strip_angles(id).to_string())
            .filter(|id| !id.is_empty()),
        from: message.from().and_then(|a| a.iter().find_map(convert_addr)),
        to: addresses(HeaderName::To),
        cc: addresses(HeaderName::Cc),
        bcc: addresses(HeaderName::Bcc),
        reply_to: addresses(HeaderName::ReplyTo),
        subject: message.subject().unwrap_or("").trim().to_string(),
        date: message.date().and_then(convert_date),
        in_reply_to: ids(message.in_reply_to()).into_iter().next(),
        references: ids(message.references()),
        text,
        attachments,
    })
}

fn strip_angles(id: &str) -> &str {
    let id = id.trim();
    id.strip_prefix('<')
        .and_then(|i| i.strip_suffix('>'))
        .unwrap_or(id)
        .trim()
}

fn convert_addr(addr: &mail_parser::Addr<'_>) -> Option<Address> {
    let email = addr.address()?.trim().to_lowercase();
    if email.is_empty() {
        return None;
    }
    let name = addr
        .name()
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    Some(Address { name, email })
}

fn convert_date(d: &mail_parser::DateTime) -> Option<DateTime<FixedOffset>> {
    let sign = if d.tz_before_gmt { -1 } else { 1 };
    let offset =
        FixedOffset::east_opt(sign * (i32::from(d.tz_hour) * 3600 + i32::from(d.tz_minute) * 60))?;
    let naive = NaiveDate::from_ymd_opt(i32::from(d.year), u32::from(d.month), u32::from(d.day))?
        .and_hms_opt(u32::from(d.hour), u32::from(d.minute), u32::from(d.second))?;
    offset.from_local_datetime(&naive).single()
}

/// The original bytes of an attachment. Binary parts come decoded from the
/// parser; text parts were charset-converted to UTF-8 (lossily, for bytes
/// not valid in their charset), so for them the transfer encoding is undone
/// here on the raw body instead: a Latin-1 CSV stays Latin-1.
fn attachment_bytes(raw: &[u8], part: &mail_parser::MessagePart<'_>) -> Vec<u8> {
    match &part.body {
        PartType::Binary(b) | PartType::InlineBinary(b) => b.to_vec(),
        PartType::Message(m) => m.raw_message().to_vec(),
        PartType::Multipart(_) => Vec::new(),
        PartType::Text(_) | PartType::Html(_) => {
            let body = raw.get(part.offset_body as usize..part.offset_end as usize);
            match (body, part.encoding, part.is_encoding_problem) {
                (Some(b), Encoding::Base64, false) => crate::b64::decode_lenient(b),
                (Some(b), Encoding::QuotedPrintable, false) => decode_quoted_printable(b),
                (Some(b), Encoding::None, false) => b.to_vec(),
                _ => part.contents().to_vec(),
            }
        }
    }
}

/// Quoted-printable decoding (RFC 2045 6.7): soft line breaks removed,
/// `=XX` decoded, anything malformed kept literally.
fn decode_quoted_printable(data: &[u8]) -> Vec<u8> {
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while let Some(&b) = data.get(i) {
        if b != b'=' {
            out.push(b);
            i += 1;
            continue;
        }
        match (data.get(i + 1), data.get(i + 2)) {
            (Some(b'\r'), Some(b'\n')) => i += 3,
            (Some(b'\n'), _) => i += 2,
            (Some(&h), Some(&l)) => match (hex(h), hex(l)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                }
                _ => {
                    out.push(b'=');
                    i += 1;
                }
            },
            _ => {
                out.push(b'=');
                i += 1;
            }
        }
    }
    out
}

/// Splits an mbox file into raw messages.
///
/// Every line starting with `From ` (at the start of the file or after a line
/// break) begins a new message; the separator line itself is dropped, as is
/// the blank line that ends each message. Lines matching `>+From ` lose one
/// `>` (mboxrd quoting, which also undoes mboxo quoting). Messages that are
/// empty or whitespace-only are skipped. Text before the first `From ` line is
/// kept as a message of its own if it is not blank, so a lone `.eml` given as
/// an mbox yields itself. CRLF and LF files both work; line endings are kept.
pub fn split_mbox(raw: &[u8]) -> Vec<Vec<u8>> {
    let mut messages = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    for line in raw.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(b"From ") {
            push_message(&mut messages, std::mem::take(&mut current));
            continue;
        }
        let quotes = line.iter().take_while(|&&b| b == b'>').count();
        if quotes > 0
            && line
                .get(quotes..)
                .is_some_and(|rest| rest.starts_with(b"From "))
        {
            current.extend_from_slice(&line[1..]);
        } else {
            current.extend_from_slice(line);
        }
    }
    push_message(&mut messages, current);
    messages
}

fn push_message(messages: &mut Vec<Vec<u8>>, mut message: Vec<u8>) {
    if message.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    // Drop the one blank line that separates messages in an mbox.
    for ending in [&b"\r\n\r\n"[..], b"\n\n"] {
        if message.ends_with(ending) {
            message.truncate(message.len() - ending.len() / 2);
            break;
        }
    }
    messages.push(message);
}

/// A mail to be written with [`build_eml`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutgoingMail {
    /// Sender.
    pub from: Address,
    /// To recipients (may be empty, e.g. for drafts).
    pub to: Vec<Address>,
    /// Cc recipients.
    pub cc: Vec<Address>,
    /// Bcc recipients: never written into the message.
    pub bcc: Vec<Address>,
    /// Subject; omitted from the message when empty.
    pub subject: String,
    /// Plain-text body.
    pub text: String,
    /// Date header, written with its offset; whole seconds only.
    pub date: DateTime<FixedOffset>,
    /// Message-ID, with or without angle brackets; required.
    pub message_id: String,
    /// In-Reply-To id, with or without angle brackets.
    pub in_reply_to: Option<String>,
    /// References ids in order.
    pub references: Vec<String>,
    /// Attachments, written base64-encoded in this order.
    pub attachments: Vec<Attachment>,
}

/// Writes `mail` as RFC 5322 bytes (CRLF line endings).
///
/// Deterministic: identical input gives identical bytes. The body is a single
/// `text/plain; charset=utf-8` part, or `multipart/mixed` with the text first
/// and then each attachment (base64) when there are attachments; the
/// boundary is derived from the Message-ID. Bcc is not written.
///
/// Errors ([`FormatError::InvalidOutgoingMail`], [`FormatError::InvalidAddress`])
/// for an empty or malformed Message-ID, malformed addresses, a date outside
/// the years 1000–9999 or with a UTC offset that is not whole minutes, and
/// attachments without a file name or with a malformed content type.
pub fn build_eml(mail: &OutgoingMail) -> Result<Vec<u8>, FormatError> {
    let invalid = |reason: String| FormatError::InvalidOutgoingMail { reason };
    for addr in std::iter::once(&mail.from)
        .chain(&mail.to)
        .chain(&mail.cc)
        .chain(&mail.bcc)
    {
        validate_email(&addr.email).map_err(|reason| FormatError::InvalidAddress {
            input: addr.email.clone(),
            reason,
        })?;
    }
    let message_id = checked_id("message_id", &mail.message_id)?.ok_or_else(|| {
        invalid(
            "message_id is empty; give every mail a unique id such as \"20240301.1@x.test\"".into(),
        )
    })?;
    let in_reply_to = match &mail.in_reply_to {
        Some(id) => checked_id("in_reply_to", id)?,
        None => None,
    };
    let mut references = Vec::with_capacity(mail.references.len());
    for id in &mail.references {
        references.extend(checked_id("references", id)?);
    }
    let year = chrono::Datelike::year(&mail.date);
    if !(1000..=9999).contains(&year) {
        return Err(invalid(format!(
            "the date {} is outside the years 1000-9999 that a Date header can carry",
            mail.date
        )));
    }
    if mail.date.offset().local_minus_utc() % 60 != 0 {
        return Err(invalid(format!(
            "the date {} has a UTC offset with seconds; use an offset of whole minutes",
            mail.date
        )));
    }
    for att in &mail.attachments {
        if att.filename.trim().is_empty() || att.filename.chars().any(char::is_control) {
            return Err(invalid(
                "an attachment has an empty file name or one with control characters; name every attachment (e.g. \"report.pdf\")".into(),
            ));
        }
        if !is_mime_type(&att.content_type) {
            return Err(invalid(format!(
                "attachment {:?} has content type {:?}; use a MIME type such as \"application/pdf\"",
                att.filename, att.content_type
            )));
        }
    }
    guard("mail builder", || {
        build_message(mail, &message_id, in_reply_to, references)
    })?
}

/// Validates a message id and strips its angle brackets; `None` if empty.
fn checked_id(field: &str, id: &str) -> Result<Option<String>, FormatError> {
    let bare = strip_angles(id);
    if bare.is_empty() {
        return Ok(None);
    }
    if bare
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '<' || c == '>')
    {
        return Err(FormatError::InvalidOutgoingMail {
            reason: format!(
                "{field} {id:?} contains whitespace, control characters or angle brackets; use an id like \"abc.123@x.test\""
            ),
        });
    }
    Ok(Some(bare.to_string()))
}

fn is_mime_type(ct: &str) -> bool {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    matches!(ct.split_once('/'), Some((t, s)) if token(t) && token(s))
}

fn builder_address(a: &Address) -> BuilderAddress<'_> {
    BuilderAddress::new_address(
        a.name.as_deref().filter(|n| !n.is_empty()),
        a.email.as_str(),
    )
}

fn builder_list(list: &[Address]) -> BuilderAddress<'_> {
    BuilderAddress::new_list(list.iter().map(builder_address).collect())
}

fn build_message(
    mail: &OutgoingMail,
    message_id: &str,
    in_reply_to: Option<String>,
    references: Vec<String>,
) -> Result<Vec<u8>, FormatError> {
    let mut builder = MessageBuilder::new()
        .from(builder_address(&mail.from))
        .header(
            "Date",
            Raw::new(mail.date.format("%a, %d %b %Y %H:%M:%S %z").to_string()),
        )
        .message_id(MessageId::new(message_id));
    if !mail.to.is_empty() {
        builder = builder.to(builder_list(&mail.to));
    }
    if !mail.cc.is_empty() {
        builder = builder.cc(builder_list(&mail.cc));
    }
    if !mail.subject.is_empty() {
        builder = builder.subject(mail.subject.as_str());
    }
    if let Some(id) = in_reply_to {
        builder = builder.in_reply_to(MessageId::new(id));
    }
    if !references.is_empty() {
        builder = builder.references(MessageId::new_list(references.into_iter()));
    }

    let text_part = MimePart::new("text/plain", BodyPart::Text(mail.text.as_str().into()));
    let body = if mail.attachments.is_empty() {
        text_part
    } else {
        let mut parts = vec![text_part];
        for att in &mail.attachments {
            parts.push(
                MimePart::new(
                    ContentType::new(att.content_type.to_ascii_lowercase())
                        .attribute("name", att.filename.as_str()),
                    BodyPart::Binary(mime_base64(&att.data).into()),
                )
                .transfer_encoding("base64")
                .attachment(att.filename.as_str()),
            );
        }
        let boundary = boundary_for(message_id, &mail.text);
        MimePart::new(
            ContentType::new("multipart/mixed").attribute("boundary", boundary),
            BodyPart::Multipart(parts),
        )
    };
    builder
        .body(body)
        .write_to_vec()
        .map_err(|e| FormatError::InvalidOutgoingMail {
            reason: format!("writing the message failed: {e}"),
        })
}

/// Base64 with CRLF line breaks every 76 characters (RFC 2045).
fn mime_base64(data: &[u8]) -> Vec<u8> {
    let coded = crate::b64::encode(data);
    let mut out = Vec::with_capacity(coded.len() + coded.len() / 76 * 2 + 2);
    for (i, chunk) in coded.as_bytes().chunks(76).enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(chunk);
    }
    out
}

/// A MIME boundary derived from the Message-ID (FNV-1a), salted until it
/// does not occur in the text (attachments are base64 and cannot contain
/// `=_`).
fn boundary_for(message_id: &str, text: &str) -> String {
    let mut salt: u64 = 0;
    loop {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for b in message_id.bytes().chain(salt.to_le_bytes()) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let boundary = format!("=_bureau_{hash:016x}");
        if !text.contains(&boundary) {
            return boundary;
        }
        salt += 1;
    }
}

#[cfg(test)]
mod tests;
