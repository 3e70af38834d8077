//! vCard (.vcf): one block per contact with name, e-mail, phone, organisation and title.

use serde::{Deserialize, Serialize};

/// One contact.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contact {
    /// FN, or N assembled as "Given Family".
    pub name: String,
    /// EMAIL values, in order.
    pub emails: Vec<String>,
    /// TEL values, in order.
    pub phones: Vec<String>,
    /// ORG (components joined with ", ").
    pub org: String,
    /// TITLE.
    pub title: String,
}

/// Parse the contacts of a vCard file (versions 2.1, 3.0 and 4.0; unknown properties ignored).
pub fn parse_vcf(text: &str) -> Vec<Contact> {
    // Unfold: a line starting with a space or tab continues the previous one.
    let mut lines: Vec<String> = Vec::new();
    for raw in text.lines() {
        if (raw.starts_with(' ') || raw.starts_with('\t')) && !lines.is_empty() {
            if let Some(last) = lines.last_mut() {
                last.push_str(&raw[1..]);
            }
        } else {
            lines.push(raw.to_string());
        }
    }
    let mut out = Vec::new();
    let mut cur: Option<Contact> = None;
    for line in lines {
        let Some((head, value)) = line.split_once(':') else {
            continue;
        };
        let prop = head
            .split(';')
            .next()
            .unwrap_or("")
            .rsplit('.')
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let value = unescape(value.trim());
        match prop.as_str() {
            "BEGIN" if value.eq_ignore_ascii_case("VCARD") => cur = Some(Contact::default()),
            "END" if value.eq_ignore_ascii_case("VCARD") => {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
            }
            _ => {
                let Some(c) = cur.as_mut() else { continue };
                match prop.as_str() {
                    "FN" => c.name = value,
                    "N" if c.name.is_empty() => {
                        let parts: Vec<&str> = value.split(';').collect();
                        let given = parts.get(1).copied().unwrap_or("");
                        let family = parts.first().copied().unwrap_or("");
                        c.name = format!("{given} {family}").trim().to_string();
                    }
                    "EMAIL" => c
                        .emails
                        .push(value.trim_start_matches("mailto:").to_string()),
                    "TEL" => c.phones.push(value.trim_start_matches("tel:").to_string()),
                    "ORG" => {
                        c.org = value
                            .split(';')
                            .filter(|s| !s.is_empty())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                    "TITLE" => c.title = value,
                    _ => {}
                }
            }
        }
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("\\n", "\n")
        .replace("\\N", "\n")
        .replace("\\,", ",")
        .replace("\\;", ";")
        .replace("\\\\", "\\")
}

/// Contacts as text: one block per contact, `name:`, `email:`, `phone:`, `org:`, `title:` lines.
pub fn contacts_to_text(contacts: &[Contact]) -> String {
    let mut out = String::new();
    for c in contacts {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("name: {}\n", c.name));
        for e in &c.emails {
            out.push_str(&format!("email: {e}\n"));
        }
        for p in &c.phones {
            out.push_str(&format!("phone: {p}\n"));
        }
        if !c.org.is_empty() {
            out.push_str(&format!("org: {}\n", c.org));
        }
        if !c.title.is_empty() {
            out.push_str(&format!("title: {}\n", c.title));
        }
    }
    out
}
