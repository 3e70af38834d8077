//! The knowledge base (Notion-like): a tree of markdown pages, databases with typed
//! properties, comments on pages and rows, files attached to pages.
//!
//! Seeded from `world/kb/` (`pages/` a directory tree of markdown files, `databases/` CSV files
//! with a `.schema.json` beside them, or `.json` files holding schema and rows,
//! `attachments/<page path>/<file>`); documented in `docs/services/kb.md`.
//!
//! `values.rs`: property values checked against the schema; `query.rs`: database queries;
//! `seed.rs`: seeding from `world/kb/`; `attachments.rs`: the files attached to pages.

mod attachments;
mod query;
mod seed;
mod values;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::people::People;

pub use attachments::{KbAttachment, MAX_ATTACHMENTS_PER_PAGE};
pub use query::{Filter, Sort};
pub(crate) use seed::seed;
use values::coerce;
pub(crate) use values::coerce_values;

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
    /// Files attached to the page, in the order attached (names unique).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<KbAttachment>,
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
                    "attachments": p.attachments.iter().map(KbAttachment::checked).collect::<Vec<_>>(),
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
