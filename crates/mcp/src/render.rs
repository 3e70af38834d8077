//! The readable text of a tool result: the JSON as indented `key: value` lines (a YAML
//! subset), with multi-line strings as blocks, so that a person or a model reading only the
//! text content sees file and mail text as it is, not as an escaped JSON string.

use serde_json::{Map, Value};

/// Render a tool's JSON result as readable text.
///
/// Objects become `key: value` lines (keys in the JSON's order), arrays `- item` lines,
/// multi-line strings `|` blocks (`|-` without a final newline, `|+` with several), and
/// strings that would read as another type (`"42"`, `"true"`, `""`, leading spaces, ...) are
/// quoted as JSON. The structured content of the same result keeps the exact JSON.
pub fn render_text(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::String(s) => return s.clone(),
        Value::Object(map) if !map.is_empty() => render_map(map, 0, &mut out),
        Value::Array(items) if !items.is_empty() => render_seq(items, 0, &mut out),
        other => out.push_str(&scalar(other)),
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn render_map(map: &Map<String, Value>, indent: usize, out: &mut String) {
    for (key, value) in map {
        pad(out, indent);
        let key = if plain_safe(key) {
            key.clone()
        } else {
            Value::from(key.as_str()).to_string()
        };
        out.push_str(&key);
        out.push(':');
        render_value_after_key(value, indent, out);
    }
}

/// After `key:` or `-`: the value on the same line, or an indented block below.
fn render_value_after_key(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            render_map(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            render_seq(items, indent + 2, out);
        }
        Value::String(s) if is_block(s) => {
            out.push(' ');
            block(s, indent + 2, out);
        }
        other => {
            out.push(' ');
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

fn render_seq(items: &[Value], indent: usize, out: &mut String) {
    for item in items {
        match item {
            Value::Object(map) if !map.is_empty() => {
                // The first key shares the dash's line: `- path: a` / `  size: 3`.
                let mut inner = String::new();
                render_map(map, indent + 2, &mut inner);
                pad(out, indent);
                out.push_str("- ");
                out.push_str(&inner[indent + 2..]);
            }
            other => {
                pad(out, indent);
                out.push('-');
                render_value_after_key(other, indent, out);
            }
        }
    }
}

/// A multi-line string as a literal block: `|` keeps one final newline, `|-` none, `|+` all.
fn block(s: &str, indent: usize, out: &mut String) {
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    out.push_str(match trailing {
        0 => "|-",
        1 => "|",
        _ => "|+",
    });
    out.push('\n');
    for line in body.split('\n') {
        if !line.is_empty() {
            pad(out, indent);
            out.push_str(line);
        }
        out.push('\n');
    }
    for _ in 1..trailing {
        out.push('\n');
    }
}

/// Multi-line text shown as a block: it has a newline, and no other control character but tabs
/// and no line starting with a space (which a block could not show unambiguously).
fn is_block(s: &str) -> bool {
    s.contains('\n')
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && !s.split('\n').any(|l| l.starts_with(' '))
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) if plain_safe(s) => s.clone(),
        Value::Object(_) => "{}".to_string(),
        Value::Array(_) => "[]".to_string(),
        other => other.to_string(),
    }
}

/// A string shown without quotes reads back as the same string.
fn plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.trim() != s
        || "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.chars().any(|c| c.is_control())
    {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off"
    ) {
        return false;
    }
    s.parse::<f64>().is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_and_lists_read_as_indented_lines() {
        let v = json!({
            "entries": [
                {"path": "notes/a.txt", "size": 12, "kind": "file"},
                {"path": "notes", "size": 0, "kind": "dir"}
            ],
            "truncated": false
        });
        assert_eq!(
            render_text(&v),
            "entries:\n  - kind: file\n    path: notes/a.txt\n    size: 12\n  - kind: dir\n    path: notes\n    size: 0\ntruncated: false"
        );
    }

    #[test]
    fn file_text_is_shown_as_a_block_not_escaped() {
        let v = json!({"path": "memo.md", "text": "Line one\n\nLine three\n"});
        assert_eq!(
            render_text(&v),
            "path: memo.md\ntext: |\n  Line one\n\n  Line three"
        );
        let v = json!({"text": "a\nb"});
        assert_eq!(render_text(&v), "text: |-\n  a\n  b");
        let v = json!({"text": "a\n\n\n"});
        assert_eq!(render_text(&v), "text: |+\n  a\n\n");
    }

    #[test]
    fn strings_that_would_read_as_something_else_are_quoted() {
        let v = json!({
            "a": "42", "b": "true", "c": "", "d": " padded", "e": "key: value",
            "f": "bob@corp.test", "g": "2026-03-02T09:00:00+01:00", "h": null,
            "i": [], "j": {}, "k": "- dash", "l": "tab\there", "m": "  indented\nblock"
        });
        assert_eq!(
            render_text(&v),
            concat!(
                "a: \"42\"\nb: \"true\"\nc: \"\"\nd: \" padded\"\ne: \"key: value\"\n",
                "f: bob@corp.test\ng: 2026-03-02T09:00:00+01:00\nh: null\ni: []\nj: {}\n",
                "k: \"- dash\"\nl: \"tab\\there\"\nm: \"  indented\\nblock\""
            )
        );
    }

    #[test]
    fn nested_lists_and_scalars_at_the_top() {
        assert_eq!(
            render_text(&json!({"to": ["a@x.test", "b@x.test"]})),
            "to:\n  - a@x.test\n  - b@x.test"
        );
        assert_eq!(render_text(&json!([[1, 2], "x"])), "-\n  - 1\n  - 2\n- x");
        assert_eq!(render_text(&json!({})), "{}");
        assert_eq!(render_text(&json!(7)), "7");
    }
}
