//! Database queries: filters and sort keys over typed rows.

use serde::Deserialize;
use serde_json::{Value, json};

use super::values::{coerce, is_blank};
use super::{KbState, PropKind, Property, Row, value_text};
use crate::people::People;

/// One filter of a query.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    pub property: String,
    /// `equals`, `not_equals`, `contains`, `lt`, `gt`, `lte`, `gte`, `is_empty`,
    /// `is_not_empty`.
    pub op: String,
    #[serde(default)]
    pub value: Value,
}

/// One sort key of a query.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sort {
    pub property: String,
    /// `asc` (default) or `desc`.
    #[serde(default)]
    pub direction: Option<String>,
}

const OPS: &str = "equals, not_equals, contains, lt, gt, lte, gte, is_empty, is_not_empty";

fn cmp_values(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Greater,
        (_, Value::Null) => Ordering::Less,
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .unwrap_or(0.0)
            .partial_cmp(&y.as_f64().unwrap_or(0.0))
            .unwrap_or(Ordering::Equal),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => value_text(a)
            .to_lowercase()
            .cmp(&value_text(b).to_lowercase()),
    }
}

impl KbState {
    /// Rows of `database` matching every filter, sorted; each row as
    /// `{"id", "values"}` with relations shown as titles.
    pub fn query(
        &self,
        database: &str,
        filters: &[Filter],
        sorts: &[Sort],
        people: &People,
    ) -> Result<Vec<Value>, String> {
        let db = self
            .database(database)
            .ok_or_else(|| self.no_database(database))?;
        // Resolve filters first so a bad filter is an error even on an empty database.
        let mut resolved = Vec::new();
        for f in filters {
            let p = db.property(&f.property).ok_or_else(|| {
                format!(
                    "filter on unknown property `{}`; the properties are: {}",
                    f.property,
                    db.property_names()
                )
            })?;
            let op = f.op.trim().to_lowercase();
            let value = match op.as_str() {
                "is_empty" | "is_not_empty" => Value::Null,
                "equals" | "not_equals" | "lt" | "gt" | "lte" | "gte" => {
                    if matches!(op.as_str(), "lt" | "gt" | "lte" | "gte")
                        && !matches!(p.kind, PropKind::Number | PropKind::Date)
                    {
                        return Err(format!(
                            "`{op}` compares numbers and dates; `{}` is {}",
                            p.name,
                            p.kind.name()
                        ));
                    }
                    match p.kind {
                        // Equality on a list means "has this item".
                        PropKind::MultiSelect => {
                            let one = Property {
                                kind: PropKind::Select,
                                ..p.clone()
                            };
                            coerce(self, &one, &f.value, people)?
                        }
                        PropKind::Relation => {
                            let v = coerce(self, p, &f.value, people)?;
                            v.as_array()
                                .and_then(|a| a.first().cloned())
                                .unwrap_or(Value::Null)
                        }
                        _ => coerce(self, p, &f.value, people)?,
                    }
                }
                "contains" => Value::String(value_text(&f.value)),
                _ => {
                    return Err(format!("unknown filter op `{}`; use one of: {OPS}", f.op));
                }
            };
            resolved.push((p, op, value));
        }
        let mut keys = Vec::new();
        for s in sorts {
            let p = db.property(&s.property).ok_or_else(|| {
                format!(
                    "sort on unknown property `{}`; the properties are: {}",
                    s.property,
                    db.property_names()
                )
            })?;
            let desc = match s.direction.as_deref().map(|d| d.trim().to_lowercase()) {
                None => false,
                Some(d) if d == "asc" => false,
                Some(d) if d == "desc" => true,
                Some(d) => return Err(format!("sort direction `{d}` must be asc or desc")),
            };
            keys.push((p.name.clone(), desc));
        }
        let mut rows: Vec<&Row> = db
            .rows
            .iter()
            .filter(|r| {
                resolved.iter().all(|(p, op, want)| {
                    let v = r.values.get(&p.name).unwrap_or(&Value::Null);
                    row_matches(self, p, op, v, want)
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            for (k, desc) in &keys {
                let va = a.values.get(k).unwrap_or(&Value::Null);
                let vb = b.values.get(k).unwrap_or(&Value::Null);
                let o = cmp_values(va, vb);
                let o = if *desc { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        Ok(rows
            .into_iter()
            .map(|r| json!({"id": r.id, "values": self.row_view(db, r), "comments": r.comments.len()}))
            .collect())
    }
}

fn row_matches(kb: &KbState, p: &Property, op: &str, v: &Value, want: &Value) -> bool {
    use std::cmp::Ordering;
    match op {
        "is_empty" => is_blank(v),
        "is_not_empty" => !is_blank(v),
        "equals" | "not_equals" => {
            let eq = match (p.kind, v) {
                (PropKind::MultiSelect | PropKind::Relation, Value::Array(a)) => a.contains(want),
                (PropKind::Text, _) => value_text(v)
                    .trim()
                    .eq_ignore_ascii_case(value_text(want).trim()),
                (PropKind::Number, Value::Number(_)) => cmp_values(v, want) == Ordering::Equal,
                _ => v == want,
            };
            eq == (op == "equals")
        }
        "contains" => {
            let text = kb.cell_text(p, v).to_lowercase();
            text.contains(&value_text(want).to_lowercase())
        }
        "lt" | "gt" | "lte" | "gte" => {
            if v.is_null() {
                return false;
            }
            let o = cmp_values(v, want);
            match op {
                "lt" => o == Ordering::Less,
                "gt" => o == Ordering::Greater,
                "lte" => o != Ordering::Greater,
                _ => o != Ordering::Less,
            }
        }
        _ => false,
    }
}
