//! Every type error of `task.toml` at once.
//!
//! serde stops at the first value of the wrong type or the first missing field. To report all
//! of them, [`deserialize_all`] reads the document, and on an error removes the smallest part
//! of the document that holds it (the key whose value is wrong, or the array element that
//! lacks a field) and reads again, until the document reads or nothing more can be removed.
//! An error caused by a removal of ours (the key we removed is now "missing") is not
//! reported; the element holding it is removed instead.

use std::ops::Range;

use serde::de::DeserializeOwned;
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

/// One serde error: where, and serde's message.
pub(super) struct TypeError {
    pub(super) span: Range<usize>,
    pub(super) message: String,
}

/// How many errors one document may produce before the rest is left unreported.
const MAX_ERRORS: usize = 64;

/// Reads `doc` as `T`, or gives every error found, sorted by position.
pub(super) fn deserialize_all<T: DeserializeOwned>(
    mut doc: Spanned<DeTable<'_>>,
) -> Result<T, Vec<TypeError>> {
    let mut errors: Vec<TypeError> = Vec::new();
    // keys we removed: (span of the table that held it, key name)
    let mut removed: Vec<(Range<usize>, String)> = Vec::new();
    for _ in 0..=MAX_ERRORS * 2 {
        let e = match T::deserialize(toml::de::Deserializer::from(doc.clone())) {
            Ok(t) if errors.is_empty() => return Ok(t),
            Ok(_) => break,
            Err(e) => e,
        };
        let span = e.span().unwrap_or(0..0);
        let message = e.message().trim().to_string();
        let ours = missing_field(&message)
            .is_some_and(|f| removed.iter().any(|(s, k)| *s == span && k == f));
        if !ours {
            errors.push(TypeError {
                span: span.clone(),
                message,
            });
        }
        if errors.len() >= MAX_ERRORS {
            break;
        }
        if span.is_empty() && span.start == 0 {
            break;
        }
        let whole = doc.span();
        let table = doc.get_mut();
        // A missing field of a table is fixed by removing the table (its array element or
        // its key), never a key inside it.
        let inside = missing_field(e.message()).is_none();
        if !remove_in_table(table, whole, &span, inside, &mut removed) {
            break;
        }
    }
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    Err(errors)
}

/// The field named by serde's "missing field `x`" message.
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next()
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end && outer != &(0..0)
}

/// The bytes a value covers in the source: its own span (for a table, only its header) and
/// those of everything in it.
fn extent(value: &Spanned<DeValue<'_>>) -> Range<usize> {
    let mut r = value.span();
    let mut grow = |o: Range<usize>| {
        if o != (0..0) {
            r.start = r.start.min(o.start);
            r.end = r.end.max(o.end);
        }
    };
    match value.get_ref() {
        DeValue::Table(t) => {
            for (k, v) in t.iter() {
                grow(k.span());
                grow(extent(v));
            }
        }
        DeValue::Array(items) => {
            for v in items.iter() {
                grow(extent(v));
            }
        }
        _ => {}
    }
    r
}

/// Removes the smallest part of `table` (whose own span is `own`) that holds `span`: a key or
/// an array element. With `inside` false, a part whose span is exactly `span` is removed
/// whole rather than searched. Records removed keys in `removed`.
fn remove_in_table(
    table: &mut DeTable<'_>,
    own: Range<usize>,
    span: &Range<usize>,
    inside: bool,
    removed: &mut Vec<(Range<usize>, String)>,
) -> bool {
    let hit = table
        .iter()
        .find(|(k, v)| contains(&extent(v), span) || contains(&k.span(), span))
        .map(|(k, _)| k.clone());
    let Some(key) = hit else {
        return false;
    };
    let Some(value) = table.get_mut(&key) else {
        return false;
    };
    let vspan = value.span();
    let search = inside || vspan != *span;
    if search && remove_in_value(value.get_mut(), vspan, span, inside, removed) {
        return true;
    }
    removed.push((own, key.get_ref().to_string()));
    table.remove(&key);
    true
}

fn remove_in_value(
    value: &mut DeValue<'_>,
    own: Range<usize>,
    span: &Range<usize>,
    inside: bool,
    removed: &mut Vec<(Range<usize>, String)>,
) -> bool {
    match value {
        DeValue::Table(t) => remove_in_table(t, own, span, inside, removed),
        DeValue::Array(items) => {
            let Some(i) = items.iter().position(|v| contains(&extent(v), span)) else {
                return false;
            };
            let ispan = items[i].span();
            let search = inside || ispan != *span;
            if search && remove_in_value((**items)[i].get_mut(), ispan, span, inside, removed) {
                return true;
            }
            let rest: DeArray<'_> = std::mem::replace(items, DeArray::new())
                .into_iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, v)| v)
                .collect();
            *items = rest;
            true
        }
        _ => false,
    }
}
