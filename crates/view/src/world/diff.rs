//! The generic parts of a world diff: field-level JSON diffs (`path: old → new`), bounded
//! unified text diffs with line numbers, and keyed collections of objects compared by key.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use similar::{ChangeTag, TextDiff as SimilarDiff};

use super::anchor::object_anchor;

/// At most this many lines in one text diff.
pub const MAX_DIFF_LINES: usize = 2_000;
/// At most this many bytes of text in one text diff.
pub const MAX_DIFF_BYTES: usize = 200 * 1024;
/// Texts are cut to this many bytes before diffing.
pub const MAX_DIFF_INPUT_BYTES: usize = 2 * 1024 * 1024;
/// A value shown inline (`old → new`) is cut to this many characters.
pub const MAX_VALUE_CHARS: usize = 400;
/// At most this many field changes per object.
pub const MAX_FIELDS: usize = 200;

/// Added, changed or deleted: also the CSS class of the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Added,
    Changed,
    Deleted,
}

/// One changed leaf of a JSON value: `path: old → new` (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub old: Option<String>,
    pub new: Option<String>,
    /// A line diff instead of `old → new`, for a text of several lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<TextDiff>,
}

/// A unified diff, hunk by hunk, each line with its numbers on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct TextDiff {
    pub hunks: Vec<Hunk>,
    /// Lines added and removed (over the whole text, also when truncated).
    pub added: usize,
    pub removed: usize,
    /// Cut at [`MAX_DIFF_LINES`] / [`MAX_DIFF_BYTES`] (or an input over
    /// [`MAX_DIFF_INPUT_BYTES`]).
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hunk {
    /// `@@ -a,b +c,d @@`
    pub header: String,
    pub lines: Vec<DiffLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffLine {
    /// `ins`, `del` or `ctx` (also the CSS class of its row).
    pub kind: &'static str,
    pub old_no: Option<usize>,
    pub new_no: Option<usize>,
    pub text: String,
}

fn cut(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

/// A line diff of two texts, bounded.
pub fn text_diff(old: &str, new: &str) -> TextDiff {
    let (old, cut_old) = cut(old, MAX_DIFF_INPUT_BYTES);
    let (new, cut_new) = cut(new, MAX_DIFF_INPUT_BYTES);
    let diff = SimilarDiff::configure()
        .timeout(Duration::from_secs(2))
        .diff_lines(old, new);
    let mut out = TextDiff {
        truncated: cut_old || cut_new,
        ..TextDiff::default()
    };
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => out.added += 1,
            ChangeTag::Delete => out.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let (mut lines, mut bytes) = (0usize, 0usize);
    'groups: for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (o_len, n_len) = (last.old_range().end - o, last.new_range().end - n);
        let mut hunk = Hunk {
            header: format!("@@ -{},{o_len} +{},{n_len} @@", o + 1, n + 1),
            lines: Vec::new(),
        };
        for op in &group {
            for change in diff.iter_changes(op) {
                if lines >= MAX_DIFF_LINES || bytes >= MAX_DIFF_BYTES {
                    out.truncated = true;
                    out.hunks.push(hunk);
                    break 'groups;
                }
                let raw = change.to_string_lossy();
                let t: &str = &raw;
                let t = t.strip_suffix('\n').unwrap_or(t);
                let text = t.strip_suffix('\r').unwrap_or(t).to_string();
                lines += 1;
                bytes += text.len();
                hunk.lines.push(DiffLine {
                    kind: match change.tag() {
                        ChangeTag::Insert => "ins",
                        ChangeTag::Delete => "del",
                        ChangeTag::Equal => "ctx",
                    },
                    old_no: change.old_index().map(|i| i + 1),
                    new_no: change.new_index().map(|i| i + 1),
                    text,
                });
            }
        }
        out.hunks.push(hunk);
    }
    out
}

/// A JSON value shown inline: strings as they are, anything else as compact JSON; cut.
pub fn show(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut chars = s.char_indices();
    match chars.nth(MAX_VALUE_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

fn is_long_text(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::String(s)) if s.contains('\n') || s.chars().count() > 200)
}

/// Every changed leaf between `old` and `new` under `path` (objects by key, arrays by index),
/// at most [`MAX_FIELDS`]; `skip` names keys (at any depth) left out.
pub fn json_diff(
    path: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    skip: &[&str],
    out: &mut Vec<FieldChange>,
) {
    if out.len() > MAX_FIELDS {
        return;
    }
    if out.len() == MAX_FIELDS {
        out.push(FieldChange {
            path: format!("{path}…"),
            old: None,
            new: Some(format!(
                "more than {MAX_FIELDS} fields changed; the rest are not listed"
            )),
            diff: None,
        });
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (old, new) {
        (Some(a), Some(b)) if a == b => {}
        (None, None) => {}
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                if !skip.contains(&k.as_str()) {
                    json_diff(&join(k), a.get(k), b.get(k), skip, out);
                }
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b)))
            if a.iter().chain(b).all(|v| !v.is_object() && !v.is_array()) =>
        {
            // A list of plain values (members, labels, names): what left it, what joined it.
            let name = format!("{path}[]");
            let mut rest: Vec<&Value> = b.iter().collect();
            let mut gone = Vec::new();
            for v in a {
                match rest.iter().position(|w| *w == v) {
                    Some(i) => {
                        rest.remove(i);
                    }
                    None => gone.push(v),
                }
            }
            for v in gone {
                out.push(FieldChange {
                    path: name.clone(),
                    old: Some(show(v)),
                    new: None,
                    diff: None,
                });
            }
            for v in rest {
                out.push(FieldChange {
                    path: name.clone(),
                    old: None,
                    new: Some(show(v)),
                    diff: None,
                });
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for i in 0..a.len().max(b.len()) {
                json_diff(&format!("{path}[{i}]"), a.get(i), b.get(i), skip, out);
            }
        }
        (None, Some(Value::Object(b))) if !b.is_empty() => {
            for (k, v) in b {
                if !skip.contains(&k.as_str()) {
                    json_diff(&join(k), None, Some(v), skip, out);
                }
            }
        }
        (Some(Value::Object(a)), None) if !a.is_empty() => {
            for (k, v) in a {
                if !skip.contains(&k.as_str()) {
                    json_diff(&join(k), Some(v), None, skip, out);
                }
            }
        }
        (a, b) => {
            let diff = (is_long_text(a) || is_long_text(b)).then(|| {
                let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
                text_diff(&text(a), &text(b))
            });
            out.push(FieldChange {
                path: if path.is_empty() {
                    "(value)".into()
                } else {
                    path.to_string()
                },
                old: a.map(show),
                new: b.map(show),
                diff,
            });
        }
    }
}

/// One object of a keyed collection (a page, a row, an issue, a merge request...) that was
/// added, changed or deleted, with its changed fields (all its fields when added or deleted).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObjectChange {
    /// What it is: `page`, `row`, `issue`, `mr`, `channel`, `mail`, ...
    pub kind: String,
    pub key: String,
    pub anchor: String,
    /// What to call it (a title, a subject), else its key.
    pub title: String,
    pub status: Status,
    pub fields: Vec<FieldChange>,
}

/// The objects of two keyed collections compared by key: added, changed, deleted (in key
/// order). `title` picks a display title from an object.
pub fn keyed_changes(
    kind: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    skip: &[&str],
    title: &dyn Fn(&str, &Value) -> String,
) -> Vec<ObjectChange> {
    let keys: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    let mut out = Vec::new();
    for key in keys {
        let (a, b) = (old.get(key), new.get(key));
        let status = match (a, b) {
            (None, Some(_)) => Status::Added,
            (Some(_), None) => Status::Deleted,
            (Some(x), Some(y)) if x != y => Status::Changed,
            _ => continue,
        };
        let mut fields = Vec::new();
        json_diff("", a, b, skip, &mut fields);
        if status != Status::Changed {
            // An object added or deleted whole: its empty fields say nothing.
            let blank =
                |v: &Option<String>| matches!(v.as_deref(), None | Some("" | "null" | "[]" | "{}"));
            fields.retain(|f| !(blank(&f.old) && blank(&f.new)));
        }
        if fields.is_empty() && status == Status::Changed {
            continue; // only skipped keys changed
        }
        let shown = b.or(a).map(|v| title(key, v)).unwrap_or_default();
        out.push(ObjectChange {
            kind: kind.to_string(),
            key: key.clone(),
            anchor: object_anchor(kind, key),
            title: if shown.is_empty() { key.clone() } else { shown },
            status,
            fields,
        });
    }
    out
}

/// A JSON array of objects as a map keyed by `field` (objects without it by their index).
pub fn by_field(v: Option<&Value>, field: &str) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(Value::Array(items)) = v {
        for (i, item) in items.iter().enumerate() {
            let key = match item.get(field) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => format!("#{i}"),
            };
            m.insert(key, item.clone());
        }
    }
    m
}

/// `v[key]` as an object (empty when absent or not an object).
pub fn obj<'a>(v: Option<&'a Value>, key: &str) -> &'a Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    match v.and_then(|v| v.get(key)) {
        Some(Value::Object(m)) => m,
        _ => &EMPTY,
    }
}

/// `v[key]` as a string ("" when absent; numbers and booleans as written).
pub fn text(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => show(other),
    }
}

/// The generic diff of what a modelled service part leaves out: the keys of `old`/`new`
/// (objects) other than `modelled`, compared field by field.
pub fn rest_diff(
    prefix: &str,
    old: Option<&Value>,
    new: Option<&Value>,
    modelled: &[&str],
) -> Vec<FieldChange> {
    let strip = |v: Option<&Value>| -> Option<Value> {
        match v {
            Some(Value::Object(m)) => Some(Value::Object(
                m.iter()
                    .filter(|(k, _)| !modelled.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )),
            Some(other) => Some(other.clone()),
            None => Some(Value::Object(Map::new())),
        }
    };
    let mut out = Vec::new();
    json_diff(
        prefix,
        strip(old).as_ref(),
        strip(new).as_ref(),
        &[],
        &mut out,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_diff_numbers_lines_and_counts_changes() {
        let d = text_diff("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!((d.added, d.removed, d.truncated), (2, 1, false));
        let lines: Vec<_> = d.hunks[0]
            .lines
            .iter()
            .map(|l| (l.kind, l.old_no, l.new_no, l.text.as_str()))
            .collect();
        assert_eq!(
            lines,
            vec![
                ("ctx", Some(1), Some(1), "a"),
                ("del", Some(2), None, "b"),
                ("ins", None, Some(2), "B"),
                ("ctx", Some(3), Some(3), "c"),
                ("ins", None, Some(4), "d"),
            ]
        );
        assert_eq!(d.hunks[0].header, "@@ -1,3 +1,4 @@");
    }

    #[test]
    fn text_diff_is_bounded() {
        let big: String = (0..5_000).map(|i| format!("line {i}\n")).collect();
        let d = text_diff("", &big);
        assert!(d.truncated);
        assert_eq!(d.added, 5_000);
        let shown: usize = d.hunks.iter().map(|h| h.lines.len()).sum();
        assert_eq!(shown, MAX_DIFF_LINES);
    }

    #[test]
    fn json_diff_names_paths_and_skips() {
        let mut out = Vec::new();
        json_diff(
            "",
            Some(
                &json!({"a": 1, "b": {"c": [1, 2]}, "n": 1, "s": ["x", "y", "z"], "o": [{"k": 1}]}),
            ),
            Some(
                &json!({"a": 2, "b": {"c": [1]}, "d": "x", "n": 2, "s": ["w", "x", "z"], "o": [{"k": 2}]}),
            ),
            &["n"],
            &mut out,
        );
        let got: Vec<_> = out
            .iter()
            .map(|f| (f.path.as_str(), f.old.as_deref(), f.new.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", Some("1"), Some("2")),
                ("b.c[]", Some("2"), None),
                ("d", None, Some("x")),
                ("o[0].k", Some("1"), Some("2")),
                ("s[]", Some("y"), None),
                ("s[]", None, Some("w")),
            ]
        );
    }

    #[test]
    fn keyed_changes_sorts_added_changed_deleted_by_key() {
        let old = json!({"1": {"t": "a"}, "2": {"t": "b"}});
        let new = json!({"2": {"t": "B"}, "3": {"t": "c", "none": null, "list": []}});
        let v = keyed_changes(
            "issue",
            old.as_object().unwrap(),
            new.as_object().unwrap(),
            &[],
            &|_, v| text(v, "t"),
        );
        let got: Vec<_> = v
            .iter()
            .map(|o| (o.key.as_str(), o.status, o.title.as_str()))
            .collect();
        assert_eq!(v[2].fields.len(), 1, "{:?}", v[2].fields);
        assert_eq!(
            got,
            vec![
                ("1", Status::Deleted, "a"),
                ("2", Status::Changed, "B"),
                ("3", Status::Added, "c")
            ]
        );
    }
}
