//! The shape of `history.json`, checked before it is read, so that every unknown key, missing
//! field and wrong type is reported in one go, each at its line and column (serde stops at the
//! first, and serde_json keeps no positions for a second pass).

use serde_json::Value;

use crate::error::did_you_mean;

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// A problem with the document's shape: where (the path to the key or value it is about),
/// what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Problem {
    pub(super) path: Vec<Step>,
    pub(super) what: String,
    pub(super) hint: String,
}

/// What a field holds.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    OptionalText,
    Count,
    Role,
    List(&'static [Field]),
}

/// One field of an object: its key, whether it must be there, and what it holds.
struct Field {
    key: &'static str,
    required: bool,
    kind: Kind,
}

const UTTERANCE: &[Field] = &[
    Field {
        key: "role",
        required: true,
        kind: Kind::Role,
    },
    Field {
        key: "at",
        required: true,
        kind: Kind::Text,
    },
    Field {
        key: "text",
        required: true,
        kind: Kind::Text,
    },
];

const CHUNK: &[Field] = &[
    Field {
        key: "from",
        required: true,
        kind: Kind::Count,
    },
    Field {
        key: "to",
        required: true,
        kind: Kind::Count,
    },
    Field {
        key: "summary",
        required: true,
        kind: Kind::Text,
    },
];

const SESSION: &[Field] = &[
    Field {
        key: "id",
        required: true,
        kind: Kind::Text,
    },
    Field {
        key: "started_at",
        required: true,
        kind: Kind::Text,
    },
    Field {
        key: "summary",
        required: false,
        kind: Kind::OptionalText,
    },
    Field {
        key: "chunks",
        required: false,
        kind: Kind::List(CHUNK),
    },
    Field {
        key: "utterances",
        required: true,
        kind: Kind::List(UTTERANCE),
    },
];

const ROOT: &[Field] = &[Field {
    key: "sessions",
    required: true,
    kind: Kind::List(SESSION),
}];

/// What each object is called in messages.
fn object_name(fields: &[Field]) -> &'static str {
    match fields.first().map(|f| f.key) {
        Some("sessions") => "the history",
        Some("id") => "a session",
        Some("role") => "an utterance",
        Some("from") => "a chunk",
        _ => "an object",
    }
}

/// Every shape problem of `doc`, in document order of the paths' objects.
pub(super) fn problems(doc: &Value) -> Vec<Problem> {
    let mut out = Vec::new();
    object(doc, ROOT, &mut Vec::new(), &mut out);
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn object(v: &Value, fields: &'static [Field], path: &mut Vec<Step>, out: &mut Vec<Problem>) {
    let name = object_name(fields);
    let keys: Vec<&str> = fields.iter().map(|f| f.key).collect();
    let Some(map) = v.as_object() else {
        out.push(Problem {
            path: path.clone(),
            what: format!("{name} must be a JSON object, not {}", type_name(v)),
            hint: format!("write {{{}}}", keys.join(", ")),
        });
        return;
    };
    for (k, _) in map {
        if !keys.contains(&k.as_str()) {
            let hint = match did_you_mean(k, keys.iter().copied()) {
                Some(m) => format!("did you mean `{m}`?"),
                None => format!("remove it, or use a known key: {}", keys.join(", ")),
            };
            path.push(Step::Key(k.clone()));
            out.push(Problem {
                path: path.clone(),
                what: format!("unknown field `{k}` in {name}"),
                hint,
            });
            path.pop();
        }
    }
    for f in fields {
        match map.get(f.key) {
            None if f.required => out.push(Problem {
                path: path.clone(),
                what: format!("{name} lacks its `{}`", f.key),
                hint: "add the field; see docs/task-format.md (history.json)".into(),
            }),
            None => {}
            Some(value) => {
                path.push(Step::Key(f.key.to_string()));
                field(value, f, path, out);
                path.pop();
            }
        }
    }
}

fn field(v: &Value, f: &Field, path: &mut Vec<Step>, out: &mut Vec<Problem>) {
    let wrong = |want: &str, hint: &str| Problem {
        path: path.clone(),
        what: format!("`{}` must be {want}, not {}", f.key, type_name(v)),
        hint: hint.to_string(),
    };
    match f.kind {
        Kind::Text if !v.is_string() => out.push(wrong("a string", "write it in double quotes")),
        Kind::OptionalText if !(v.is_string() || v.is_null()) => out.push(wrong(
            "a string",
            "write it in double quotes, or leave it out",
        )),
        Kind::Count if !v.is_u64() => out.push(wrong(
            "a whole number",
            "count utterances from 1, e.g. \"from\": 1",
        )),
        Kind::Role => match v.as_str() {
            Some("user" | "assistant") => {}
            Some(other) => out.push(Problem {
                path: path.clone(),
                what: format!("`role` is `{other}`"),
                hint: "`role` is \"user\" or \"assistant\"".into(),
            }),
            None => out.push(wrong("a string", "`role` is \"user\" or \"assistant\"")),
        },
        Kind::List(items) => match v.as_array() {
            Some(list) => {
                for (i, item) in list.iter().enumerate() {
                    path.push(Step::Index(i));
                    object(item, items, path, out);
                    path.pop();
                }
            }
            None => out.push(wrong("a list", "write [ ... ]")),
        },
        _ => {}
    }
}

/// The byte offset in `source` (valid JSON) of what `path` names: the key of a `Key` step's
/// member (so an error about a field points at its name), the start of an `Index` step's
/// element; the start of the document for the empty path. The position reached so far when
/// the path leads nowhere.
pub(super) fn locate(source: &str, path: &[Step]) -> usize {
    locate_unclamped(source, path).min(source.len())
}

fn locate_unclamped(source: &str, path: &[Step]) -> usize {
    let b = source.as_bytes();
    let mut pos = skip_ws(b, 0);
    let mut at = pos;
    for step in path {
        match step {
            Step::Key(k) => {
                if b.get(pos) != Some(&b'{') {
                    return at;
                }
                pos = skip_ws(b, pos + 1);
                let mut found = None;
                while b.get(pos) == Some(&b'"') {
                    let key_start = pos;
                    let key_end = skip_string(b, pos);
                    let key: Option<String> = source
                        .get(key_start..key_end)
                        .and_then(|raw| serde_json::from_str(raw).ok());
                    pos = skip_ws(b, key_end);
                    if b.get(pos) == Some(&b':') {
                        pos = skip_ws(b, pos + 1);
                    }
                    if key.as_deref() == Some(k.as_str()) {
                        found = Some((key_start, pos));
                        break;
                    }
                    pos = skip_ws(b, skip_value(b, pos));
                    if b.get(pos) == Some(&b',') {
                        pos = skip_ws(b, pos + 1);
                    }
                }
                let Some((key_start, value_start)) = found else {
                    return at;
                };
                at = key_start;
                pos = value_start;
            }
            Step::Index(i) => {
                if b.get(pos) != Some(&b'[') {
                    return at;
                }
                pos = skip_ws(b, pos + 1);
                for _ in 0..*i {
                    if b.get(pos).is_none_or(|c| *c == b']') {
                        return at;
                    }
                    pos = skip_ws(b, skip_value(b, pos));
                    if b.get(pos) == Some(&b',') {
                        pos = skip_ws(b, pos + 1);
                    }
                }
                at = pos;
            }
        }
    }
    at
}

fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while b.get(pos).is_some_and(|c| c.is_ascii_whitespace()) {
        pos += 1;
    }
    pos
}

/// Past the string starting at `pos` (its opening quote).
fn skip_string(b: &[u8], mut pos: usize) -> usize {
    pos += 1;
    while let Some(c) = b.get(pos) {
        match c {
            b'\\' => pos += 2,
            b'"' => return pos + 1,
            _ => pos += 1,
        }
    }
    pos
}

/// Past the value starting at `pos`.
fn skip_value(b: &[u8], pos: usize) -> usize {
    match b.get(pos) {
        Some(b'"') => skip_string(b, pos),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut p = pos;
            while let Some(c) = b.get(p) {
                match c {
                    b'"' => {
                        p = skip_string(b, p);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return p + 1;
                        }
                    }
                    _ => {}
                }
                p += 1;
            }
            p
        }
        Some(_) => {
            let mut p = pos;
            while b
                .get(p)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
            {
                p += 1;
            }
            p
        }
        None => pos,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn locate_finds_keys_and_elements() {
        let src = "{\"a\": [1, {\"b\": \"x\\\"}\", \"c\": 2}], \"d\": {}}";
        let at = |p: &[Step]| &src[locate(src, p)..];
        assert!(at(&[Step::Key("d".into())]).starts_with("\"d\""));
        assert!(at(&[Step::Key("a".into()), Step::Index(1)]).starts_with("{\"b\""));
        assert!(
            at(&[Step::Key("a".into()), Step::Index(1), Step::Key("c".into())])
                .starts_with("\"c\": 2")
        );
        // A path that leads nowhere stops at the last place it reached.
        assert!(at(&[Step::Key("a".into()), Step::Index(7)]).starts_with("\"a\""));
        assert_eq!(locate(src, &[]), 0);
    }

    /// The shape knows exactly the keys serde reads (so the two cannot drift apart).
    #[test]
    fn the_shape_has_exactly_the_fields_serde_reads() {
        use crate::task::keys::fields_of;
        let keys = |f: &[Field]| {
            let mut k: Vec<&str> = f.iter().map(|f| f.key).collect();
            k.sort_unstable();
            k
        };
        let serde = |mut k: Vec<&'static str>| {
            k.sort_unstable();
            k
        };
        assert_eq!(
            keys(ROOT),
            serde(fields_of::<super::super::RawHistory>().to_vec())
        );
        assert_eq!(
            keys(SESSION),
            serde(fields_of::<super::super::RawSession>().to_vec())
        );
        assert_eq!(
            keys(UTTERANCE),
            serde(fields_of::<super::super::RawUtterance>().to_vec())
        );
        assert_eq!(
            keys(CHUNK),
            serde(fields_of::<super::super::RawChunk>().to_vec())
        );
    }

    proptest! {
        /// Any path into any JSON text gives an offset inside it, without panicking.
        #[test]
        fn locate_stays_in_bounds(src in "[\\[\\]{}\",:a-c0-9 \\\\]{0,40}", keys in proptest::collection::vec("[a-c]", 0..4)) {
            let path: Vec<Step> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| if i % 2 == 0 { Step::Key(k.clone()) } else { Step::Index(i) })
                .collect();
            prop_assert!(locate(&src, &path) <= src.len());
        }
    }
}
