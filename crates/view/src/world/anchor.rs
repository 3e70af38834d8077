//! Anchor ids of world objects, so a rubric item can link to the object it concerns.

/// The HTML id of a world object: `<kind>-<slug>` where the slug keeps ASCII letters, digits,
/// `-` and `_` (lower-cased) and turns anything else into `-`; when that loses information
/// (the key was not already such a slug) eight hex digits of the key's BLAKE3 are appended,
/// so different keys never share an anchor. Kinds used by the world view: `file`, `mail`,
/// `event`, `chat`, `channel`, `page`, `row`, `database`, `cell`, `issue`, `project`, `mr`,
/// `branch`, `commit`, `repo`, `wiki`, `code-issue`.
///
/// `object_anchor("file", "visits/agenda.md")` → `file-visits-agenda-md-1a2b3c4d`;
/// `object_anchor("mail", "m00003")` → `mail-m00003`.
pub fn object_anchor(kind: &str, key: &str) -> String {
    let mut slug = String::with_capacity(key.len());
    let mut last_dash = false;
    for c in key.chars().take(80) {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '_' {
            slug.push(c);
            last_dash = false;
        } else if !last_dash {
            slug.push('-');
            last_dash = true;
        }
    }
    let slug = slug.trim_matches('-');
    let kind: String = kind
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if slug == key && !slug.is_empty() {
        format!("{kind}-{slug}")
    } else {
        let h = blake3::hash(key.as_bytes()).to_hex();
        if slug.is_empty() {
            format!("{kind}-{}", &h[..8])
        } else {
            format!("{kind}-{slug}-{}", &h[..8])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_slugs_and_distinct() {
        assert_eq!(object_anchor("mail", "m00003"), "mail-m00003");
        let a = object_anchor("file", "visits/a.md");
        assert!(a.starts_with("file-visits-a-md-"), "{a}");
        assert_ne!(a, object_anchor("file", "visits-a.md"));
        assert_ne!(object_anchor("file", "A"), object_anchor("file", "a"));
        let weird = object_anchor("event", "\"><script>");
        assert!(
            weird.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{weird}"
        );
        assert_eq!(object_anchor("file", "x/y"), object_anchor("file", "x/y"));
    }
}
