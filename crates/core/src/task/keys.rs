//! Unknown keys of `task.toml`, all of them at once.
//!
//! The raw structs reject unknown keys (`deny_unknown_fields`), but serde stops at the first
//! one. Before deserialising, [`check_keys`] walks the parsed document and reports every key
//! the schema does not know, at every level it knows, each at the key's position, with a
//! "did you mean" when a known key is near. The known keys are never written down twice: they
//! are the field lists serde derives for the raw structs ([`fields_of`]).

use std::ops::Range;

use serde::Deserialize;
use serde::de::{self, Visitor};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::raw::*;
use super::*;
use crate::error::did_you_mean;

/// The names serde accepts for the fields of struct `T` (its derived `FIELDS`, renames
/// applied), read by asking `T` to deserialise itself from a deserializer that only records
/// them. Empty for a type that is not a struct.
pub(crate) fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The deserializer always fails once it has the field list: the error is expected.
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only struct field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("only struct field names are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// Reads the field names of one raw struct.
type FieldList = fn() -> &'static [&'static str];

/// Every table of the schema whose keys are checked: its path (keys from the document's root,
/// array indices left out) and the struct that reads it. Values of other keys (`args` of an
/// event, `where` of `kb_row`, …) are free-form and not checked.
pub(super) const TABLES: &[(&str, FieldList)] = &[
    ("", fields_of::<RawTask>),
    ("user", fields_of::<User>),
    ("file_deps", fields_of::<RawFileDep>),
    ("outputs", fields_of::<OutputsSpec>),
    ("workspace", fields_of::<WorkspaceSpec>),
    ("limits", fields_of::<Limits>),
    ("feedback", fields_of::<TaskFeedback>),
    ("turn", fields_of::<RawTurn>),
    ("turn.event", fields_of::<RawEvent>),
    ("rubric", fields_of::<RawRubric>),
    ("rubric.file_contains", fields_of::<RawFileContains>),
    ("rubric.mail_sent", fields_of::<MailSentFilter>),
    ("rubric.calendar_event", fields_of::<RawCalendarEvent>),
    ("rubric.calendar_no_overlap", fields_of::<RawNoOverlap>),
    ("rubric.chat_posted", fields_of::<ChatPostedFilter>),
    ("rubric.chat_channel", fields_of::<ChatChannelFilter>),
    ("rubric.colleague_asked", fields_of::<ColleagueAskedFilter>),
    ("rubric.kb_page", fields_of::<KbPageFilter>),
    ("rubric.kb_row", fields_of::<KbRowFilter>),
    ("rubric.sheet_cell", fields_of::<SheetCellFilter>),
    ("rubric.tracker_issue", fields_of::<TrackerIssueFilter>),
    ("rubric.merge_request", fields_of::<MergeRequestFilter>),
    ("rubric.repo_file_contains", fields_of::<RepoFileFilter>),
    ("rubric.final_message", fields_of::<RawFinalMessage>),
    ("rubric.image", fields_of::<ImageFilter>),
];

fn known_keys(path: &str) -> Option<&'static [&'static str]> {
    TABLES.iter().find(|(p, _)| *p == path).map(|(_, f)| f())
}

/// How a message names the table at `path`.
fn table_name(path: &str) -> String {
    match path {
        "" => "at the top level".into(),
        "turn" | "turn.event" | "rubric" => format!("in [[{path}]]"),
        "file_deps" => "in an entry of `file_deps`".into(),
        _ => match path.strip_prefix("rubric.") {
            Some(pred) => format!("in `{pred}` of a [[rubric]] item"),
            None => format!("in [{path}]"),
        },
    }
}

/// One unknown key: where it is, what is wrong, what to do.
pub(super) struct UnknownKey {
    pub(super) span: Range<usize>,
    pub(super) what: String,
    pub(super) hint: String,
}

/// Report every unknown key of the document `doc` and remove it, so that serde then reads the
/// rest. A key with a near known key that the table lacks is read as that key (the error
/// stays), so the value is still validated. The result is sorted by position.
pub(super) fn check_keys(doc: &mut DeTable<'_>) -> Vec<UnknownKey> {
    let mut out = Vec::new();
    check_table(doc, "", &mut out);
    out.sort_by_key(|u| (u.span.start, u.span.end));
    out
}

fn check_table(table: &mut DeTable<'_>, path: &str, out: &mut Vec<UnknownKey>) {
    let Some(known) = known_keys(path) else {
        return;
    };
    let old = std::mem::take(table);
    let present: Vec<String> = old.keys().map(|k| k.get_ref().to_string()).collect();
    for (key, mut value) in old {
        let name = key.get_ref().to_string();
        let kept_as = if known.contains(&name.as_str()) {
            Some(name.clone())
        } else {
            let near = did_you_mean(&name, known.iter().copied());
            let hint = match near {
                Some(k) => format!("did you mean `{k}`?"),
                None => {
                    let mut all: Vec<&str> = known.to_vec();
                    all.sort_unstable();
                    format!(
                        "remove it, or use a known key: {} (see docs/task-format.md)",
                        all.join(", ")
                    )
                }
            };
            out.push(UnknownKey {
                span: key.span(),
                what: format!("unknown field `{name}` {}", table_name(path)),
                hint,
            });
            near.filter(|k| !present.iter().any(|p| p == k))
                .map(str::to_string)
        };
        let Some(kept_as) = kept_as else {
            continue;
        };
        let child = if path.is_empty() {
            kept_as.clone()
        } else {
            format!("{path}.{kept_as}")
        };
        if known_keys(&child).is_some() {
            check_value(value.get_mut(), &child, out);
        }
        let key = Spanned::new(key.span(), std::borrow::Cow::Owned(kept_as));
        table.insert(key, value);
    }
}

fn check_value(value: &mut DeValue<'_>, path: &str, out: &mut Vec<UnknownKey>) {
    match value {
        DeValue::Table(t) => check_table(t, path, out),
        DeValue::Array(items) => {
            for item in items.iter_mut() {
                if let DeValue::Table(t) = item.get_mut() {
                    check_table(t, path, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_checked_table_has_the_fields_serde_accepts() {
        for (path, fields) in TABLES {
            let fields = fields();
            assert!(!fields.is_empty(), "no fields read for `{path}`");
            if path.is_empty() {
                continue;
            }
            let (parent, last) = path.rsplit_once('.').unwrap_or(("", path));
            let parent_fields = known_keys(parent).unwrap_or(&[]);
            assert!(
                parent_fields.contains(&last),
                "`{path}`: `{last}` is not a key of `{parent}` ({parent_fields:?})"
            );
        }
        assert!(fields_of::<RawTask>().contains(&"difficulty"));
        assert!(fields_of::<RawTask>().contains(&"turn"));
        assert!(fields_of::<RawEvent>().contains(&"as"));
        assert!(fields_of::<KbRowFilter>().contains(&"where"));
    }

    /// Each listed key alone in a table: serde may reject its placeholder value or miss
    /// other fields, but never calls it an unknown field.
    fn accepts_every_listed_key<T: serde::de::DeserializeOwned>(path: &str) {
        let fields = known_keys(path).unwrap_or(&[]);
        for f in fields {
            if let Err(e) = toml::from_str::<T>(&format!("\"{f}\" = 0\n")) {
                assert!(
                    !e.message().contains("unknown field"),
                    "`{path}`.`{f}`: {}",
                    e.message()
                );
            }
        }
    }

    #[test]
    fn every_listed_key_is_accepted_by_serde() {
        accepts_every_listed_key::<RawTask>("");
        accepts_every_listed_key::<User>("user");
        accepts_every_listed_key::<RawFileDep>("file_deps");
        accepts_every_listed_key::<OutputsSpec>("outputs");
        accepts_every_listed_key::<WorkspaceSpec>("workspace");
        accepts_every_listed_key::<Limits>("limits");
        accepts_every_listed_key::<TaskFeedback>("feedback");
        accepts_every_listed_key::<RawTurn>("turn");
        accepts_every_listed_key::<RawEvent>("turn.event");
        accepts_every_listed_key::<RawRubric>("rubric");
        accepts_every_listed_key::<RawFileContains>("rubric.file_contains");
        accepts_every_listed_key::<MailSentFilter>("rubric.mail_sent");
        accepts_every_listed_key::<RawCalendarEvent>("rubric.calendar_event");
        accepts_every_listed_key::<RawNoOverlap>("rubric.calendar_no_overlap");
        accepts_every_listed_key::<ChatPostedFilter>("rubric.chat_posted");
        accepts_every_listed_key::<ChatChannelFilter>("rubric.chat_channel");
        accepts_every_listed_key::<ColleagueAskedFilter>("rubric.colleague_asked");
        accepts_every_listed_key::<KbPageFilter>("rubric.kb_page");
        accepts_every_listed_key::<KbRowFilter>("rubric.kb_row");
        accepts_every_listed_key::<SheetCellFilter>("rubric.sheet_cell");
        accepts_every_listed_key::<TrackerIssueFilter>("rubric.tracker_issue");
        accepts_every_listed_key::<MergeRequestFilter>("rubric.merge_request");
        accepts_every_listed_key::<RepoFileFilter>("rubric.repo_file_contains");
        accepts_every_listed_key::<RawFinalMessage>("rubric.final_message");
        accepts_every_listed_key::<ImageFilter>("rubric.image");
        assert_eq!(TABLES.len(), 25, "check a new table here too");
        // and a key not listed is refused by serde too (the lists are not too short)
        let e = toml::from_str::<User>("nmae = 0\n")
            .err()
            .map(|e| e.message().to_string());
        assert!(e.unwrap_or_default().contains("unknown field"));
    }

    #[test]
    fn unknown_keys_are_all_reported_sorted_with_suggestions() {
        let src = "dificulty = \"easy\"\nid = \"x\"\n[user]\nnmae = \"a\"\n\n[[rubric]]\nwieght = 1\nzzz = 2\n[rubric.file_contains]\npaht = \"a\"\n";
        let mut doc = DeTable::parse(src).unwrap().into_inner();
        let found = check_keys(&mut doc);
        let got: Vec<(usize, &str, &str)> = found
            .iter()
            .map(|u| (u.span.start, u.what.as_str(), u.hint.as_str()))
            .collect();
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got[0].1, "unknown field `dificulty` at the top level");
        assert_eq!(got[0].2, "did you mean `difficulty`?");
        assert_eq!(got[1].1, "unknown field `nmae` in [user]");
        assert_eq!(got[2].1, "unknown field `wieght` in [[rubric]]");
        assert_eq!(got[2].2, "did you mean `weight`?");
        assert_eq!(got[3].1, "unknown field `zzz` in [[rubric]]");
        assert!(got[3].2.contains("known key: "), "{}", got[3].2);
        assert_eq!(
            got[4].1,
            "unknown field `paht` in `file_contains` of a [[rubric]] item"
        );
        // near misses are read as the key they were meant to be; far misses are dropped
        assert!(doc.get("difficulty").is_some());
        assert!(doc.get("dificulty").is_none());
    }
}
