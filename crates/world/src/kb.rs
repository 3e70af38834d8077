//! The knowledge base (Notion-like): a tree of markdown pages, databases with typed
//! properties, comments on pages and rows.
//!
//! Seeded from `world/kb/` (`pages/` a directory tree of markdown files, `databases/` CSV files
//! with a `.schema.json` beside them, or `.json` files holding schema and rows); documented in
//! `docs/services/kb.md`.

use std::collections::BTreeMap;
use std::path::Path;

use bureau_core::log::Actor;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::files::to_slash;
use crate::people::People;
use crate::{World, WorldError};

/// A comment on a page or a row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KbComment {
    pub id: String,
    pub author: String,
    /// RFC 3339 in the office time zone.
    pub at: String,
    pub text: String,
}

/// One page of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    pub id: String,
    pub title: String,
    /// The parent page's id; `None` for a top-level page.
    pub parent: Option<String>,
    /// Markdown.
    pub content: String,
    pub created_by: String,
    pub created_at: String,
    pub updated_by: String,
    pub updated_at: String,
    pub comments: Vec<KbComment>,
}

/// The type of a database property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PropKind {
    Text,
    Number,
    Select,
    MultiSelect,
    Date,
    Person,
    Checkbox,
    Relation,
}

impl PropKind {
    pub fn name(self) -> &'static str {
        match self {
            PropKind::Text => "text",
            PropKind::Number => "number",
            PropKind::Select => "select",
            PropKind::MultiSelect => "multi_select",
            PropKind::Date => "date",
            PropKind::Person => "person",
            PropKind::Checkbox => "checkbox",
            PropKind::Relation => "relation",
        }
    }
}

/// One property (column) of a database schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Property {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: PropKind,
    /// Allowed values of a select / multi_select property.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The database a relation points to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// One row of a database. Values are typed JSON: text/select/person/date strings, numbers,
/// booleans, lists of strings (multi_select; relation: row ids of the target database);
/// `null` (or `[]` for lists) when empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub values: BTreeMap<String, Value>,
    pub created_by: String,
    pub created_at: String,
    pub updated_by: String,
    pub updated_at: String,
    pub comments: Vec<KbComment>,
}

/// A database: a schema and rows. The first property is the row's title.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Database {
    pub name: String,
    pub properties: Vec<Property>,
    pub rows: Vec<Row>,
    /// Counter for row ids (`<n>` → `row-<n>`).
    pub next_row: u64,
}

impl Database {
    pub fn property(&self, name: &str) -> Option<&Property> {
        self.properties
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
    }
    pub fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.id == id.trim())
    }
    /// The title of a row (its first property as text).
    pub fn row_title(&self, row: &Row) -> String {
        self.properties
            .first()
            .and_then(|p| row.values.get(&p.name))
            .map(value_text)
            .unwrap_or_default()
    }
    fn property_names(&self) -> String {
        self.properties
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Plain text of a typed value (lists joined with `, `).
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(", "),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KbState {
    /// Pages by id (`page-<n>`).
    pub pages: BTreeMap<String, Page>,
    /// Databases by name.
    pub databases: BTreeMap<String, Database>,
    pub(crate) next_page: u64,
    pub(crate) next_comment: u64,
}

impl KbState {
    /// Pages sorted by id number (creation order).
    pub fn pages(&self) -> Vec<&Page> {
        let mut v: Vec<&Page> = self.pages.values().collect();
        v.sort_by_key(|p| id_number(&p.id));
        v
    }

    /// A page by id, or by title (case-insensitive) when the title is unique.
    pub fn find_page(&self, id_or_title: &str) -> Result<&Page, String> {
        let key = id_or_title.trim();
        if let Some(p) = self.pages.get(key) {
            return Ok(p);
        }
        let matches: Vec<&Page> = self
            .pages()
            .into_iter()
            .filter(|p| p.title.eq_ignore_ascii_case(key))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(format!(
                "no page `{key}`; use kb_list_pages or kb_search to find page ids"
            )),
            many => Err(format!(
                "{} pages are titled `{key}` ({}); give the page id",
                many.len(),
                many.iter()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// A database by name (case-insensitive).
    pub fn database(&self, name: &str) -> Option<&Database> {
        let n = name.trim();
        self.databases.get(n).or_else(|| {
            self.databases
                .values()
                .find(|d| d.name.eq_ignore_ascii_case(n))
        })
    }

    pub(crate) fn database_mut(&mut self, name: &str) -> Result<&mut Database, String> {
        let key = self
            .database(name)
            .map(|d| d.name.clone())
            .ok_or_else(|| self.no_database(name))?;
        let msg = self.no_database(name);
        self.databases.get_mut(&key).ok_or(msg)
    }

    pub(crate) fn no_database(&self, name: &str) -> String {
        format!(
            "no database `{}`; the databases are: {}",
            name.trim(),
            self.databases
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    }

    /// The title path of a page (`Engineering / Onboarding`).
    pub fn page_path(&self, page: &Page) -> String {
        let mut parts = vec![page.title.clone()];
        let mut cur = page.parent.clone();
        let mut guard = 0;
        while let Some(id) = cur {
            guard += 1;
            let Some(p) = self.pages.get(&id) else { break };
            if guard > 64 {
                break;
            }
            parts.push(p.title.clone());
            cur = p.parent.clone();
        }
        parts.reverse();
        parts.join(" / ")
    }

    pub(crate) fn new_page_id(&mut self) -> String {
        self.next_page += 1;
        format!("page-{}", self.next_page)
    }

    pub(crate) fn new_comment_id(&mut self) -> String {
        self.next_comment += 1;
        format!("c{}", self.next_comment)
    }

    /// A database as CSV: a header of property names, one line per row; lists joined with
    /// `, `, relations as the titles of the rows they point to, checkboxes `true`/`false`.
    pub fn database_csv(&self, name: &str) -> Option<String> {
        let db = self.database(name)?;
        let mut w = csv::Writer::from_writer(Vec::new());
        let header: Vec<&str> = db.properties.iter().map(|p| p.name.as_str()).collect();
        w.write_record(&header).ok()?;
        for row in &db.rows {
            let rec: Vec<String> = db
                .properties
                .iter()
                .map(|p| self.cell_text(p, row.values.get(&p.name).unwrap_or(&Value::Null)))
                .collect();
            w.write_record(&rec).ok()?;
        }
        String::from_utf8(w.into_inner().ok()?).ok()
    }

    /// A value as text; relations as the titles of their rows.
    pub fn cell_text(&self, p: &Property, v: &Value) -> String {
        if p.kind == PropKind::Relation
            && let (Some(target), Value::Array(ids)) =
                (p.database.as_deref().and_then(|d| self.database(d)), v)
        {
            return ids
                .iter()
                .map(|id| {
                    let id = id.as_str().unwrap_or_default();
                    target
                        .row(id)
                        .map(|r| target.row_title(r))
                        .unwrap_or_else(|| id.to_string())
                })
                .collect::<Vec<_>>()
                .join(", ");
        }
        value_text(v)
    }

    /// A row's values with relations shown as titles (for tools and checks).
    pub fn row_view(&self, db: &Database, row: &Row) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        for p in &db.properties {
            let v = row.values.get(&p.name).cloned().unwrap_or(Value::Null);
            let shown = if p.kind == PropKind::Relation {
                let titles: Vec<Value> =
                    match (&v, p.database.as_deref().and_then(|d| self.database(d))) {
                        (Value::Array(ids), Some(t)) => ids
                            .iter()
                            .map(|id| {
                                let id = id.as_str().unwrap_or_default();
                                Value::String(
                                    t.row(id)
                                        .map(|r| t.row_title(r))
                                        .unwrap_or_else(|| id.to_string()),
                                )
                            })
                            .collect(),
                        _ => Vec::new(),
                    };
                Value::Array(titles)
            } else {
                v
            };
            m.insert(p.name.clone(), shown);
        }
        m
    }

    /// Validate and normalise `raw` for property `p` (see [`Row`] for the stored types).
    /// Errors name the property and what it accepts.
    pub fn coerce(&self, p: &Property, raw: &Value, people: &People) -> Result<Value, String> {
        coerce(self, p, raw, people)
    }

    /// What checks see as `w.kb` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict).
    pub fn check_view(&self, _tz: chrono_tz::Tz) -> Value {
        let comments = |c: &[KbComment]| -> Vec<Value> {
            c.iter()
                .map(|c| json!({"id": c.id, "author": c.author, "at": c.at, "text": c.text}))
                .collect()
        };
        let pages: Vec<Value> = self
            .pages()
            .into_iter()
            .map(|p| {
                let parent = p.parent.as_ref().and_then(|id| self.pages.get(id));
                json!({
                    "id": p.id, "title": p.title, "path": self.page_path(p),
                    "parent": parent.map(|x| x.title.clone()),
                    "parent_id": p.parent,
                    "content": p.content,
                    "created_by": p.created_by, "created_at": p.created_at,
                    "updated_by": p.updated_by, "updated_at": p.updated_at,
                    "comments": comments(&p.comments),
                })
            })
            .collect();
        let mut dbs = serde_json::Map::new();
        for db in self.databases.values() {
            let rows: Vec<Value> = db
                .rows
                .iter()
                .map(|r| {
                    json!({
                        "id": r.id, "title": db.row_title(r),
                        "values": {"$dict": self.row_view(db, r)},
                        "created_by": r.created_by, "created_at": r.created_at,
                        "updated_by": r.updated_by, "updated_at": r.updated_at,
                        "comments": comments(&r.comments),
                    })
                })
                .collect();
            let props: Vec<Value> = db
                .properties
                .iter()
                .map(|p| json!({"name": p.name, "type": p.kind.name(), "options": p.options, "database": p.database}))
                .collect();
            dbs.insert(
                db.name.clone(),
                json!({"name": db.name, "properties": props, "rows": rows}),
            );
        }
        json!({"pages": pages, "databases": {"$dict": dbs}})
    }
}

fn id_number(id: &str) -> u64 {
    id.rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

fn is_blank(raw: &Value) -> bool {
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

fn coerce(kb: &KbState, p: &Property, raw: &Value, people: &People) -> Result<Value, String> {
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

// ---------------------------------------------------------------------------------------------
// Queries

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

// ---------------------------------------------------------------------------------------------
// Seed

/// Seed the service from `dir` (`world/kb/`; absent = empty).
pub(crate) fn seed(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    let at = world.now().with_timezone(&world.timezone()).to_rfc3339();
    let by = world.user().email.clone();
    let pages_dir = dir.join("pages");
    let mut n_pages = 0;
    if pages_dir.is_dir() {
        n_pages = seed_pages(world, &pages_dir, &at, &by)?;
    }
    let db_dir = dir.join("databases");
    let mut n_dbs = 0;
    if db_dir.is_dir() {
        n_dbs = seed_databases(world, &db_dir, &at, &by)?;
    }
    for entry in std::fs::read_dir(dir)
        .map_err(|e| WorldError::io(dir, e))?
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().to_string();
        if name != "pages" && name != "databases" {
            return Err(WorldError::Seed {
                path: entry.path(),
                message: "world/kb/ holds `pages/` (markdown) and `databases/` (CSV + .schema.json, or .json); see docs/services/kb.md".into(),
            });
        }
    }
    world.record(
        Actor::Task,
        "kb",
        "seed",
        false,
        json!({"pages": n_pages, "databases": n_dbs}),
    );
    Ok(())
}

fn seed_err(path: &Path, line: Option<usize>, message: String) -> WorldError {
    let path = match line {
        Some(l) => std::path::PathBuf::from(format!("{}:{l}", path.display())),
        None => path.to_path_buf(),
    };
    WorldError::Seed { path, message }
}

/// Split optional `---` front matter (`title: ...`) from a markdown page.
fn front_matter(path: &Path, text: &str) -> Result<(Option<String>, String), WorldError> {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = t
        .strip_prefix("---\n")
        .or_else(|| t.strip_prefix("---\r\n"))
    else {
        return Ok((None, t.to_string()));
    };
    let mut title = None;
    let mut body_start = None;
    let mut offset = 0;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        let l = line.trim_end();
        if l == "---" {
            body_start = Some(offset + line.len());
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            match k.trim() {
                "title" => {
                    title = Some(v.trim().trim_matches('"').trim_matches('\'').to_string());
                }
                other => {
                    return Err(seed_err(
                        path,
                        Some(i + 2),
                        format!("unknown front matter key `{other}`; only `title` is read"),
                    ));
                }
            }
        } else if !l.is_empty() {
            return Err(seed_err(
                path,
                Some(i + 2),
                "front matter lines are `key: value`".into(),
            ));
        }
        offset += line.len();
    }
    match body_start {
        Some(s) => Ok((
            title,
            rest[s..].trim_start_matches(['\r', '\n']).to_string(),
        )),
        None => Err(seed_err(
            path,
            Some(1),
            "front matter opened with `---` is never closed".into(),
        )),
    }
}

fn seed_pages(world: &mut World, root: &Path, at: &str, by: &str) -> Result<usize, WorldError> {
    // Directory path (relative, slash) → page id, so `Engineering/Onboarding.md` finds
    // `Engineering.md` or the folder page `Engineering`.
    let mut by_path: BTreeMap<String, String> = BTreeMap::new();
    let mut count = 0;
    let mut entries: Vec<walkdir::DirEntry> = Vec::new();
    for entry in walkdir::WalkDir::new(root).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| WorldError::Seed {
            path: root.to_path_buf(),
            message: format!("cannot walk the kb pages: {e}"),
        })?;
        entries.push(entry);
    }
    // Files before folders of the same name: `Engineering.md` then `Engineering/`.
    let key = |e: &walkdir::DirEntry| -> String {
        let rel = e
            .path()
            .strip_prefix(root)
            .map(to_slash)
            .unwrap_or_default();
        rel.strip_suffix(".md").map(str::to_string).unwrap_or(rel)
    };
    entries.sort_by_key(|e| (key(e), e.file_type().is_dir()));
    for entry in entries {
        let rel = key(&entry);
        let path = entry.path();
        let parent_rel = rel.rsplit_once('/').map(|(p, _)| p.to_string());
        let parent = parent_rel.as_ref().and_then(|p| by_path.get(p).cloned());
        let stem = rel.rsplit('/').next().unwrap_or(&rel).to_string();
        if entry.file_type().is_dir() {
            if by_path.contains_key(&rel) {
                continue;
            }
            let id = world.kb.new_page_id();
            world.kb.pages.insert(
                id.clone(),
                Page {
                    id: id.clone(),
                    title: stem,
                    parent,
                    content: String::new(),
                    created_by: by.into(),
                    created_at: at.into(),
                    updated_by: by.into(),
                    updated_at: at.into(),
                    comments: Vec::new(),
                },
            );
            by_path.insert(rel, id);
            count += 1;
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            return Err(seed_err(
                path,
                None,
                "kb pages are markdown files (.md)".into(),
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|e| WorldError::io(path, e))?;
        let (title, content) = front_matter(path, &text)?;
        let id = world.kb.new_page_id();
        world.kb.pages.insert(
            id.clone(),
            Page {
                id: id.clone(),
                title: title.filter(|t| !t.is_empty()).unwrap_or(stem),
                parent,
                content,
                created_by: by.into(),
                created_at: at.into(),
                updated_by: by.into(),
                updated_at: at.into(),
                comments: Vec::new(),
            },
        );
        by_path.insert(rel, id);
        count += 1;
    }
    Ok(count)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemaFile {
    properties: Vec<Property>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonDatabase {
    properties: Vec<Property>,
    #[serde(default)]
    rows: Vec<serde_json::Map<String, Value>>,
}

/// Rows read from a seed file, with the line each came from.
struct RawDb {
    name: String,
    path: std::path::PathBuf,
    properties: Vec<Property>,
    rows: Vec<(usize, serde_json::Map<String, Value>)>,
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

fn seed_databases(world: &mut World, dir: &Path, at: &str, by: &str) -> Result<usize, WorldError> {
    let mut raws: Vec<RawDb> = Vec::new();
    let mut names: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| WorldError::io(dir, e))?
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    for path in &names {
        let fname = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if fname.ends_with(".schema.json") {
            let csv = path.with_file_name(fname.replace(".schema.json", ".csv"));
            if !csv.exists() {
                return Err(seed_err(
                    path,
                    None,
                    format!("a schema without its CSV; add {}", csv.display()),
                ));
            }
            continue;
        }
        if let Some(name) = fname.strip_suffix(".csv") {
            let schema_path = path.with_file_name(format!("{name}.schema.json"));
            let stext = std::fs::read_to_string(&schema_path).map_err(|e| {
                seed_err(
                    &schema_path,
                    None,
                    format!("cannot read the schema of {fname} ({e}); each databases/<name>.csv needs <name>.schema.json"),
                )
            })?;
            let schema: SchemaFile = serde_json::from_str(&stext)
                .map_err(|e| seed_err(&schema_path, Some(e.line()), e.to_string()))?;
            let text = std::fs::read_to_string(path).map_err(|e| WorldError::io(path, e))?;
            let mut rdr = csv::ReaderBuilder::new()
                .has_headers(true)
                .from_reader(text.as_bytes());
            let headers = rdr
                .headers()
                .map_err(|e| seed_err(path, Some(1), e.to_string()))?
                .clone();
            for h in headers.iter() {
                if !schema.properties.iter().any(|p| p.name == h.trim()) {
                    return Err(seed_err(
                        path,
                        Some(1),
                        format!(
                            "column `{h}` is not a property of {}; add it there",
                            schema_path.display()
                        ),
                    ));
                }
            }
            let mut rows = Vec::new();
            for rec in rdr.records() {
                let rec = rec.map_err(|e| {
                    let line = e.position().map(|p| p.line() as usize);
                    seed_err(path, line, e.to_string())
                })?;
                let line = rec.position().map(|p| p.line() as usize).unwrap_or(0);
                let mut m = serde_json::Map::new();
                for (h, v) in headers.iter().zip(rec.iter()) {
                    m.insert(h.trim().to_string(), Value::String(v.to_string()));
                }
                rows.push((line, m));
            }
            raws.push(RawDb {
                name: name.to_string(),
                path: path.clone(),
                properties: schema.properties,
                rows,
            });
        } else if let Some(name) = fname.strip_suffix(".json") {
            let text = std::fs::read_to_string(path).map_err(|e| WorldError::io(path, e))?;
            let db: JsonDatabase = serde_json::from_str(&text)
                .map_err(|e| seed_err(path, Some(e.line()), e.to_string()))?;
            // Each row's line: where its `{` opens inside "rows".
            let rows_at = text.find("\"rows\"").unwrap_or(0);
            let mut lines = Vec::new();
            let mut depth = 0i32;
            let mut in_str = false;
            let mut esc = false;
            let mut started = false;
            for (i, c) in text[rows_at..].char_indices() {
                if in_str {
                    if esc {
                        esc = false;
                    } else if c == '\\' {
                        esc = true;
                    } else if c == '"' {
                        in_str = false;
                    }
                    continue;
                }
                match c {
                    '"' => in_str = true,
                    '[' if !started => {
                        started = true;
                    }
                    '{' => {
                        if started && depth == 0 {
                            lines.push(line_of(&text, rows_at + i));
                        }
                        depth += 1;
                    }
                    '}' => depth -= 1,
                    ']' if started && depth == 0 => break,
                    _ => {}
                }
            }
            let rows = db
                .rows
                .into_iter()
                .enumerate()
                .map(|(i, r)| (lines.get(i).copied().unwrap_or(0), r))
                .collect();
            raws.push(RawDb {
                name: name.to_string(),
                path: path.clone(),
                properties: db.properties,
                rows,
            });
        } else {
            return Err(seed_err(
                path,
                None,
                "world/kb/databases/ holds <name>.csv with <name>.schema.json, or <name>.json"
                    .into(),
            ));
        }
    }
    // Schemas first (relations may point to any database), then rows in two passes: every
    // row gets its id, then values are validated (relations can see all rows).
    for raw in &raws {
        if raw.properties.is_empty() {
            return Err(seed_err(
                &raw.path,
                None,
                "a database needs at least one property".into(),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &raw.properties {
            if !seen.insert(p.name.to_lowercase()) {
                return Err(seed_err(
                    &raw.path,
                    None,
                    format!("property `{}` appears twice", p.name),
                ));
            }
            if matches!(p.kind, PropKind::Select | PropKind::MultiSelect) && p.options.is_empty() {
                return Err(seed_err(
                    &raw.path,
                    None,
                    format!("{} property `{}` needs `options`", p.kind.name(), p.name),
                ));
            }
            if p.kind == PropKind::Relation {
                let target = p.database.clone().unwrap_or_default();
                if !raws.iter().any(|r| r.name.eq_ignore_ascii_case(&target)) {
                    return Err(seed_err(
                        &raw.path,
                        None,
                        format!(
                            "relation `{}` points to database `{target}`, which is not seeded",
                            p.name
                        ),
                    ));
                }
            }
        }
        if world.kb.databases.contains_key(&raw.name) {
            return Err(seed_err(
                &raw.path,
                None,
                format!("database `{}` is defined twice", raw.name),
            ));
        }
        let mut db = Database {
            name: raw.name.clone(),
            properties: raw.properties.clone(),
            rows: Vec::new(),
            next_row: 0,
        };
        for (_, values) in &raw.rows {
            db.next_row += 1;
            // Titles first so relations can resolve by title; validated below.
            let mut first = BTreeMap::new();
            if let Some(p) = db.properties.first() {
                let v = values
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(&p.name))
                    .map(|(_, v)| Value::String(value_text(v)))
                    .unwrap_or(Value::Null);
                first.insert(p.name.clone(), v);
            }
            db.rows.push(Row {
                id: format!("row-{}", db.next_row),
                values: first,
                created_by: by.into(),
                created_at: at.into(),
                updated_by: by.into(),
                updated_at: at.into(),
                comments: Vec::new(),
            });
        }
        world.kb.databases.insert(raw.name.clone(), db);
    }
    for raw in &raws {
        let db = world
            .kb
            .databases
            .get(&raw.name)
            .cloned()
            .unwrap_or_else(|| Database {
                name: raw.name.clone(),
                properties: Vec::new(),
                rows: Vec::new(),
                next_row: 0,
            });
        let mut rows = Vec::new();
        for (i, (line, values)) in raw.rows.iter().enumerate() {
            let mut typed = coerce_values(&world.kb, &db, values, &world.people)
                .map_err(|m| seed_err(&raw.path, Some(*line), m))?;
            for p in &db.properties {
                typed.entry(p.name.clone()).or_insert_with(|| {
                    if matches!(p.kind, PropKind::MultiSelect | PropKind::Relation) {
                        json!([])
                    } else {
                        Value::Null
                    }
                });
            }
            let mut row = db.rows[i].clone();
            row.values = typed;
            rows.push(row);
        }
        if let Some(d) = world.kb.databases.get_mut(&raw.name) {
            d.rows = rows;
        }
    }
    Ok(raws.len())
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

    #[test]
    fn front_matter_sets_the_title() {
        let (t, body) =
            front_matter(Path::new("x.md"), "---\ntitle: Hello there\n---\n# Body\n").unwrap();
        assert_eq!(t.as_deref(), Some("Hello there"));
        assert_eq!(body, "# Body\n");
        let e = front_matter(Path::new("x.md"), "---\nauthor: me\n---\n").unwrap_err();
        assert!(e.to_string().contains("x.md:2"), "{e}");
    }
}
