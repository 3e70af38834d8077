//! Writing TOML (and Starlark) string literals.

/// A double-quoted string literal, valid in TOML and in Starlark.
pub fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML array of strings.
pub fn q_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
    )
}

/// A TOML multi-line literal-free prompt: a basic multi-line string.
pub fn q_multiline(s: &str) -> String {
    let mut out = String::from("\"\"\"\n");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push('\n'),
            '\t' => out.push_str("\\t"),
            '\r' => {}
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push_str("\"\"\"");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_through_toml() {
        let nasty = "a \"quote\", a \\ and\na line\u{1}";
        let doc = format!("x = {}\ny = {}\n", q(nasty), q_multiline(nasty));
        let v: toml::Table = toml::from_str(&doc).expect("valid TOML");
        assert_eq!(v["x"].as_str(), Some(nasty));
        assert_eq!(v["y"].as_str(), Some(nasty));
    }
}
