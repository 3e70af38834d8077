//! Property values: checked against a property's type and normalised.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Database, KbState, PropKind, Property};
use crate::people::People;

pub(super) fn is_blank(raw: &Value) -> bool {
    match raw {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Strings of a list value: a JSON array, or a comma-separated string.
fn list_items(raw: &Value) -> Option<Vec<String>> {
    match raw {
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(|s| s.trim().to_string()))
            .collect(),
        Value::String(s) => Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        ),
        _ => None,
    }
}

fn option<'a>(p: &'a Property, v: &str) -> Option<&'a String> {
    p.options.iter().find(|o| o.eq_ignore_ascii_case(v.trim()))
}

pub(super) fn coerce(
    kb: &KbState,
    p: &Property,
    raw: &Value,
    people: &People,
) -> Result<Value, String> {
    let name = &p.name;
    let list_kind = matches!(p.kind, PropKind::MultiSelect | PropKind::Relation);
    if is_blank(raw) {
        return Ok(if list_kind { json!([]) } else { Value::Null });
    }
    let bad = |expect: String| format!("property `{name}` ({}): {expect}", p.kind.name());
    match p.kind {
        PropKind::Text => match raw {
            Value::String(s) => Ok(Value::String(s.clone())),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            _ => Err(bad(format!("expects text, got {raw}"))),
        },
        PropKind::Number => {
            let n = match raw {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => bureau_formats::text::parse_number(s),
                _ => None,
            };
            n.filter(|x| x.is_finite())
                .and_then(|x| serde_json::Number::from_f64(x).map(Value::Number))
                .map(|v| {
                    // Whole numbers stay integers in JSON (3, not 3.0).
                    match v.as_f64() {
                        Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => json!(f as i64),
                        _ => v,
                    }
                })
                .ok_or_else(|| bad(format!("expects a number, got {raw}")))
        }
        PropKind::Select => {
            let s = raw
                .as_str()
                .ok_or_else(|| bad(format!("expects one option, got {raw}")))?;
            option(p, s)
                .map(|o| Value::String(o.clone()))
                .ok_or_else(|| {
                    bad(format!(
                        "`{}` is not an option; allowed: {}",
                        s.trim(),
                        p.options.join(", ")
                    ))
                })
        }
        PropKind::MultiSelect => {
            let items = list_items(raw)
                .ok_or_else(|| bad(format!("expects a list of options, got {raw}")))?;
            let mut out: Vec<Value> = Vec::new();
            for it in items {
                let o = option(p, &it).ok_or_else(|| {
                    bad(format!(
                        "`{it}` is not an option; allowed: {}",
                        p.options.join(", ")
                    ))
                })?;
                let v = Value::String(o.clone());
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Ok(Value::Array(out))
        }
        PropKind::Date => {
            let s = raw
                .as_str()
                .ok_or_else(|| bad(format!("expects a date YYYY-MM-DD, got {raw}")))?
                .trim();
            if chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() {
                return Ok(Value::String(s.to_string()));
            }
            chrono::DateTime::parse_from_rfc3339(s)
                .map(|d| Value::String(d.to_rfc3339()))
                .or_else(|_| {
                    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
                        .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M"))
                        .map(|d| Value::String(d.format("%Y-%m-%dT%H:%M:%S").to_string()))
                })
                .map_err(|_| {
                    bad(format!(
                        "`{s}` is not a date; write YYYY-MM-DD (or an ISO 8601 datetime)"
                    ))
                })
        }
        PropKind::Person => {
            let s = raw
                .as_str()
                .ok_or_else(|| bad(format!("expects a person (email or handle), got {raw}")))?
                .trim();
            if let Some(person) = people.find(s) {
                return Ok(Value::String(person.email.clone()));
            }
            if people.is_empty() && s.contains('@') {
                return Ok(Value::String(s.to_lowercase()));
            }
            let known: Vec<String> = people.iter().map(|p| p.email.clone()).collect();
            Err(bad(format!(
                "`{s}` is not a person of the office; allowed: {}",
                known.join(", ")
            )))
        }
        PropKind::Checkbox => match raw {
            Value::Bool(b) => Ok(Value::Bool(*b)),
            Value::String(s) => match s.trim().to_lowercase().as_str() {
                "true" | "yes" | "x" | "1" | "checked" => Ok(Value::Bool(true)),
                "false" | "no" | "0" | "unchecked" => Ok(Value::Bool(false)),
                _ => Err(bad(format!("expects true or false, got `{s}`"))),
            },
            _ => Err(bad(format!("expects true or false, got {raw}"))),
        },
        PropKind::Relation => {
            let target_name = p.database.clone().unwrap_or_default();
            let target = kb.database(&target_name).ok_or_else(|| {
                bad(format!(
                    "points to database `{target_name}`, which does not exist"
                ))
            })?;
            let items = list_items(raw)
                .ok_or_else(|| bad(format!("expects a list of row ids or titles, got {raw}")))?;
            let mut out: Vec<Value> = Vec::new();
            for it in items {
                let row = target.row(&it).or_else(|| {
                    target
                        .rows
                        .iter()
                        .find(|r| target.row_title(r).eq_ignore_ascii_case(&it))
                });
                let row = row.ok_or_else(|| {
                    let titles: Vec<String> =
                        target.rows.iter().map(|r| target.row_title(r)).collect();
                    bad(format!(
                        "no row `{it}` in database `{}`; allowed: {}",
                        target.name,
                        titles.join(", ")
                    ))
                })?;
                let v = Value::String(row.id.clone());
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Ok(Value::Array(out))
        }
    }
}

/// Validate a map of property values (for add/update): unknown properties are errors.
pub(crate) fn coerce_values(
    kb: &KbState,
    db: &Database,
    raw: &serde_json::Map<String, Value>,
    people: &People,
) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for (k, v) in raw {
        let p = db.property(k).ok_or_else(|| {
            format!(
                "database `{}` has no property `{k}`; its properties are: {}",
                db.name,
                db.property_names()
            )
        })?;
        out.insert(p.name.clone(), coerce(kb, p, v, people)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop(name: &str, kind: PropKind, options: &[&str]) -> Property {
        Property {
            name: name.into(),
            kind,
            options: options.iter().map(|s| s.to_string()).collect(),
            database: None,
        }
    }

    #[test]
    fn select_rejects_unknown_option_naming_the_allowed_ones() {
        let kb = KbState::default();
        let p = prop("Status", PropKind::Select, &["Active", "Paused"]);
        assert_eq!(
            kb.coerce(&p, &json!("active"), &People::default()).unwrap(),
            json!("Active")
        );
        let e = kb
            .coerce(&p, &json!("Done"), &People::default())
            .unwrap_err();
        assert!(
            e.contains("`Status`") && e.contains("Active, Paused"),
            "{e}"
        );
    }

    #[test]
    fn numbers_dates_checkboxes_and_lists_are_typed() {
        let kb = KbState::default();
        let none = People::default();
        let n = prop("Amount", PropKind::Number, &[]);
        assert_eq!(kb.coerce(&n, &json!("1,250"), &none).unwrap(), json!(1250));
        assert_eq!(kb.coerce(&n, &json!(2.5), &none).unwrap(), json!(2.5));
        assert!(kb.coerce(&n, &json!("lots"), &none).is_err());
        let d = prop("Due", PropKind::Date, &[]);
        assert_eq!(
            kb.coerce(&d, &json!("2026-03-02"), &none).unwrap(),
            json!("2026-03-02")
        );
        assert!(kb.coerce(&d, &json!("next week"), &none).is_err());
        let c = prop("Done", PropKind::Checkbox, &[]);
        assert_eq!(kb.coerce(&c, &json!("yes"), &none).unwrap(), json!(true));
        assert!(kb.coerce(&c, &json!("maybe"), &none).is_err());
        let m = prop("Tags", PropKind::MultiSelect, &["a", "b"]);
        assert_eq!(
            kb.coerce(&m, &json!("a, b, a"), &none).unwrap(),
            json!(["a", "b"])
        );
        assert_eq!(kb.coerce(&m, &json!(""), &none).unwrap(), json!([]));
    }
}
