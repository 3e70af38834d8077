//! kb_* tools: the knowledge base (pages, databases, comments; the files attached to pages
//! in `attachments.rs`).

mod attachments;

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, parse, schema, string};
use crate::World;
use crate::kb::{Filter, KbComment, Page, Row, Sort, coerce_values};

pub(super) const TOOLS: &[Tool] = &[
    Tool {
        name: "kb_search",
        description: "Search the knowledge base: page titles, contents and attachment names, and database names. Every word of the query must appear.",
        schema: || {
            schema(
                &[("query", string("Words to look for (case-insensitive)"))],
                &["query"],
            )
        },
        run: search,
    },
    Tool {
        name: "kb_list_pages",
        description: "List the page tree: id, title, parent, path.",
        schema: || {
            schema(
                &[(
                    "parent",
                    string("Only the children of this page (id or title)"),
                )],
                &[],
            )
        },
        run: list_pages,
    },
    Tool {
        name: "kb_read_page",
        description: "Read a page (markdown), with its children, comments and attachments (name, size, mime_type; kb_read_attachment shows one).",
        schema: || {
            schema(
                &[("page", string("Page id (e.g. page-3) or unique title"))],
                &["page"],
            )
        },
        run: read_page,
    },
    Tool {
        name: "kb_create_page",
        description: "Create a page, optionally under a parent page.",
        schema: || {
            schema(
                &[
                    ("title", string("Title")),
                    ("content", string("Markdown content")),
                    (
                        "parent",
                        string("Parent page id or title (default: top level)"),
                    ),
                ],
                &["title"],
            )
        },
        run: create_page,
    },
    Tool {
        name: "kb_update_page",
        description: "Change a page: replace or append to its content, or rename it.",
        schema: || {
            schema(
                &[
                    ("page", string("Page id or unique title")),
                    ("content", string("Markdown")),
                    (
                        "mode",
                        json!({"type": "string", "enum": ["replace", "append"], "description": "replace (default) or append to the content"}),
                    ),
                    ("title", string("New title")),
                ],
                &["page"],
            )
        },
        run: update_page,
    },
    Tool {
        name: "kb_list_databases",
        description: "List the databases with their properties (name, type, select options, relation target) and row counts.",
        schema: || schema(&[], &[]),
        run: list_databases,
    },
    Tool {
        name: "kb_query",
        description: "Query a database's rows with filters (all must hold) and sort keys. Ops: equals, not_equals, contains, lt, gt, lte, gte (numbers, dates), is_empty, is_not_empty. Equals on a multi_select or relation means 'has this item'; on a checkbox give true/false.",
        schema: || {
            schema(
                &[
                    ("database", string("Database name")),
                    (
                        "filter",
                        json!({"type": "array", "description": "Filters, all must hold", "items": {"type": "object", "properties": {"property": {"type": "string"}, "op": {"type": "string"}, "value": {}}, "required": ["property", "op"]}}),
                    ),
                    (
                        "sort",
                        json!({"type": "array", "description": "Sort keys, first first", "items": {"type": "object", "properties": {"property": {"type": "string"}, "direction": {"type": "string", "enum": ["asc", "desc"]}}, "required": ["property"]}}),
                    ),
                ],
                &["database"],
            )
        },
        run: query,
    },
    Tool {
        name: "kb_add_row",
        description: "Add a row to a database. Values are checked against the schema: numbers, select options, multi_select lists, dates YYYY-MM-DD, people (email or handle), checkboxes true/false, relations (row ids or titles of the target database).",
        schema: || {
            schema(
                &[
                    ("database", string("Database name")),
                    (
                        "values",
                        json!({"type": "object", "description": "Property name → value"}),
                    ),
                ],
                &["database", "values"],
            )
        },
        run: add_row,
    },
    Tool {
        name: "kb_update_row",
        description: "Change some properties of a database row (null or \"\" clears a value); values are checked against the schema.",
        schema: || {
            schema(
                &[
                    ("database", string("Database name")),
                    ("row", string("Row id (e.g. row-4) or the row's title")),
                    (
                        "values",
                        json!({"type": "object", "description": "Property name → new value"}),
                    ),
                ],
                &["database", "row", "values"],
            )
        },
        run: update_row,
    },
    Tool {
        name: "kb_comment",
        description: "Comment on a page, or on a database row (give database and row).",
        schema: || {
            schema(
                &[
                    ("text", string("The comment")),
                    ("page", string("Page id or unique title")),
                    ("database", string("Database name (to comment on a row)")),
                    ("row", string("Row id or title")),
                ],
                &["text"],
            )
        },
        run: comment,
    },
    attachments::READ_ATTACHMENT,
    attachments::ATTACH,
    attachments::SAVE_ATTACHMENT,
];

pub(super) fn now(w: &World) -> String {
    w.now().with_timezone(&w.timezone()).to_rfc3339()
}

fn page_summary(w: &World, p: &Page) -> Value {
    let parent = p.parent.as_ref().and_then(|id| w.kb.pages.get(id));
    json!({"id": p.id, "url": w.url_of(crate::urls::Kind::KbPage, &p.id), "title": p.title, "parent": parent.map(|x| x.title.clone()), "parent_id": p.parent, "path": w.kb.page_path(p)})
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
}

fn snippet(text: &str, word: &str) -> String {
    let lower = text.to_lowercase();
    let Some(pos) = lower.find(word) else {
        return text.chars().take(160).collect();
    };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let idx = chars.iter().position(|(b, _)| *b >= pos).unwrap_or(0);
    let start = idx.saturating_sub(60);
    let end = (idx + 100).min(chars.len());
    let s: String = chars[start..end].iter().map(|(_, c)| *c).collect();
    s.replace('\n', " ")
}

fn search(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: SearchArgs = parse("kb_search", args)?;
    let words: Vec<String> = a
        .query
        .split_whitespace()
        .map(|s| s.to_lowercase())
        .collect();
    if words.is_empty() {
        return Err("`query` is empty; give a word to look for".into());
    }
    let mut pages = Vec::new();
    for p in w.kb.pages() {
        let names: Vec<&str> = p.attachments.iter().map(|a| a.file.name.as_str()).collect();
        let hay = format!("{}\n{}\n{}", p.title, p.content, names.join("\n")).to_lowercase();
        if words.iter().all(|x| hay.contains(x)) {
            let mut v = page_summary(w, p);
            v["snippet"] = Value::String(snippet(&p.content, &words[0]));
            pages.push(v);
        }
    }
    let mut databases = Vec::new();
    for db in w.kb.databases.values() {
        let hay = db.name.to_lowercase();
        let mut rows = Vec::new();
        for r in &db.rows {
            let text =
                w.kb.row_view(db, r)
                    .values()
                    .map(crate::kb::value_text)
                    .collect::<Vec<_>>()
                    .join(" ")
                    .to_lowercase();
            if words.iter().all(|x| text.contains(x) || hay.contains(x)) {
                rows.push(json!({"id": r.id, "title": db.row_title(r)}));
            }
        }
        if words.iter().all(|x| hay.contains(x)) || !rows.is_empty() {
            rows.truncate(20);
            databases.push(json!({"name": db.name, "rows": rows}));
        }
    }
    Ok(json!({"pages": pages, "databases": databases}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListPagesArgs {
    parent: Option<String>,
}

fn list_pages(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ListPagesArgs = parse("kb_list_pages", args)?;
    let parent = match &a.parent {
        Some(p) => Some(w.kb.find_page(p)?.id.clone()),
        None => None,
    };
    let mut pages: Vec<Value> =
        w.kb.pages()
            .into_iter()
            .filter(|p| parent.is_none() || p.parent == parent)
            .map(|p| page_summary(w, p))
            .collect();
    pages.sort_by(|x, y| x["path"].as_str().cmp(&y["path"].as_str()));
    Ok(json!({"pages": pages}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PageArg {
    page: String,
}

fn comments(c: &[KbComment]) -> Vec<Value> {
    c.iter()
        .map(|c| json!({"id": c.id, "author": c.author, "at": c.at, "text": c.text}))
        .collect()
}

fn read_page(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: PageArg = parse("kb_read_page", args)?;
    let p = w.kb.find_page(&a.page)?;
    let children: Vec<Value> =
        w.kb.pages()
            .into_iter()
            .filter(|c| c.parent.as_deref() == Some(p.id.as_str()))
            .map(|c| json!({"id": c.id, "title": c.title}))
            .collect();
    let mut v = page_summary(w, p);
    v["content"] = Value::String(p.content.clone());
    v["children"] = Value::Array(children);
    v["comments"] = Value::Array(comments(&p.comments));
    v["attachments"] = p.attachments.iter().map(|a| a.listed()).collect();
    v["created_by"] = json!(p.created_by);
    v["created_at"] = json!(p.created_at);
    v["updated_by"] = json!(p.updated_by);
    v["updated_at"] = json!(p.updated_at);
    Ok(v)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreatePageArgs {
    title: String,
    #[serde(default)]
    content: String,
    parent: Option<String>,
}

fn create_page(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreatePageArgs = parse("kb_create_page", args)?;
    let me = w.acting_email(actor)?;
    let title = a.title.trim().to_string();
    if title.is_empty() {
        return Err("`title` is empty; give the page a title".into());
    }
    let parent = match &a.parent {
        Some(p) if !p.trim().is_empty() => Some(w.kb.find_page(p)?.id.clone()),
        _ => None,
    };
    let at = now(w);
    let id = w.kb.new_page_id();
    let page = Page {
        id: id.clone(),
        title: title.clone(),
        parent: parent.clone(),
        content: a.content,
        created_by: me.clone(),
        created_at: at.clone(),
        updated_by: me,
        updated_at: at,
        comments: Vec::new(),
        attachments: Vec::new(),
    };
    w.kb.pages.insert(id.clone(), page);
    w.record(
        actor.clone(),
        "kb",
        "create_page",
        false,
        json!({"id": id, "title": title, "parent": parent}),
    );
    let url = w.url_of(crate::urls::Kind::KbPage, &id);
    Ok(json!({"id": id, "url": url, "title": title}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdatePageArgs {
    page: String,
    content: Option<String>,
    mode: Option<String>,
    title: Option<String>,
}

fn update_page(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: UpdatePageArgs = parse("kb_update_page", args)?;
    let me = w.acting_email(actor)?;
    let id = w.kb.find_page(&a.page)?.id.clone();
    let append = match a.mode.as_deref().map(|m| m.trim().to_lowercase()) {
        None => false,
        Some(m) if m == "replace" => false,
        Some(m) if m == "append" => true,
        Some(m) => return Err(format!("`mode` is `{m}`; use replace or append")),
    };
    if a.content.is_none() && a.title.is_none() {
        return Err("nothing to change; give `content` and/or `title`".into());
    }
    if let Some(t) = &a.title
        && t.trim().is_empty()
    {
        return Err("`title` is empty".into());
    }
    let at = now(w);
    let Some(p) = w.kb.pages.get_mut(&id) else {
        return Err(format!("no page `{id}`"));
    };
    if let Some(c) = &a.content {
        if append {
            if !p.content.is_empty() && !p.content.ends_with('\n') {
                p.content.push('\n');
            }
            p.content.push_str(c);
        } else {
            p.content = c.clone();
        }
    }
    if let Some(t) = &a.title {
        p.title = t.trim().to_string();
    }
    p.updated_by = me;
    p.updated_at = at;
    let title = p.title.clone();
    let len = p.content.len();
    w.record(actor.clone(), "kb", "update_page", false, json!({"id": id, "title": title, "mode": if append {"append"} else {"replace"}, "content_bytes": len}));
    Ok(json!({"id": id, "title": title}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn list_databases(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let _: NoArgs = parse("kb_list_databases", args)?;
    let dbs: Vec<Value> =
        w.kb.databases
            .values()
            .map(|d| {
                json!({
                    "name": d.name,
                    "rows": d.rows.len(),
                    "properties": d.properties.iter().map(|p| {
                        let mut v = json!({"name": p.name, "type": p.kind.name()});
                        if !p.options.is_empty() { v["options"] = json!(p.options); }
                        if let Some(t) = &p.database { v["database"] = json!(t); }
                        v
                    }).collect::<Vec<_>>(),
                })
            })
            .collect();
    Ok(json!({"databases": dbs}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    database: String,
    #[serde(default)]
    filter: Vec<Filter>,
    #[serde(default)]
    sort: Vec<Sort>,
}

fn query(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: QueryArgs = parse("kb_query", args)?;
    let rows = w.kb.query(&a.database, &a.filter, &a.sort, &w.people)?;
    let name =
        w.kb.database(&a.database)
            .map(|d| d.name.clone())
            .unwrap_or_default();
    Ok(json!({"database": name, "count": rows.len(), "rows": rows}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddRowArgs {
    database: String,
    values: serde_json::Map<String, Value>,
}

fn add_row(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: AddRowArgs = parse("kb_add_row", args)?;
    let me = w.acting_email(actor)?;
    let db =
        w.kb.database(&a.database)
            .ok_or_else(|| w.kb.no_database(&a.database))?;
    let mut values = coerce_values(&w.kb, db, &a.values, &w.people)?;
    let title_prop = db
        .properties
        .first()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    if values.get(&title_prop).is_none_or(|v| v.is_null()) {
        return Err(format!("give the row's title property `{title_prop}`"));
    }
    for p in &db.properties {
        values.entry(p.name.clone()).or_insert_with(|| {
            if matches!(
                p.kind,
                crate::kb::PropKind::MultiSelect | crate::kb::PropKind::Relation
            ) {
                json!([])
            } else {
                Value::Null
            }
        });
    }
    let at = now(w);
    let db = w.kb.database_mut(&a.database)?;
    db.next_row += 1;
    let id = format!("row-{}", db.next_row);
    db.rows.push(Row {
        id: id.clone(),
        values: values.clone(),
        created_by: me.clone(),
        created_at: at.clone(),
        updated_by: me,
        updated_at: at,
        comments: Vec::new(),
    });
    let name = db.name.clone();
    w.record(
        actor.clone(),
        "kb",
        "add_row",
        false,
        json!({"database": name, "id": id, "values": values}),
    );
    Ok(json!({"database": name, "id": id}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateRowArgs {
    database: String,
    row: String,
    values: serde_json::Map<String, Value>,
}

fn find_row_id(w: &World, database: &str, row: &str) -> Result<String, String> {
    let db =
        w.kb.database(database)
            .ok_or_else(|| w.kb.no_database(database))?;
    if let Some(r) = db.row(row) {
        return Ok(r.id.clone());
    }
    let matches: Vec<&Row> = db
        .rows
        .iter()
        .filter(|r| db.row_title(r).trim().eq_ignore_ascii_case(row.trim()))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(format!(
            "no row `{row}` in `{}`; use kb_query to find row ids",
            db.name
        )),
        many => Err(format!(
            "{} rows of `{}` are titled `{row}` ({}); give the row id",
            many.len(),
            db.name,
            many.iter()
                .map(|r| r.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn update_row(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: UpdateRowArgs = parse("kb_update_row", args)?;
    let me = w.acting_email(actor)?;
    if a.values.is_empty() {
        return Err("`values` is empty; give the properties to change".into());
    }
    let id = find_row_id(w, &a.database, &a.row)?;
    let db =
        w.kb.database(&a.database)
            .ok_or_else(|| w.kb.no_database(&a.database))?;
    let values = coerce_values(&w.kb, db, &a.values, &w.people)?;
    let title_prop = db
        .properties
        .first()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    if values.get(&title_prop).is_some_and(|v| v.is_null()) {
        return Err(format!(
            "the title property `{title_prop}` cannot be cleared"
        ));
    }
    let at = now(w);
    let db = w.kb.database_mut(&a.database)?;
    let name = db.name.clone();
    let Some(row) = db.rows.iter_mut().find(|r| r.id == id) else {
        return Err(format!("no row `{id}`"));
    };
    let mut before = serde_json::Map::new();
    for (k, v) in &values {
        before.insert(k.clone(), row.values.get(k).cloned().unwrap_or(Value::Null));
        row.values.insert(k.clone(), v.clone());
    }
    row.updated_by = me;
    row.updated_at = at;
    w.record(
        actor.clone(),
        "kb",
        "update_row",
        false,
        json!({"database": name, "id": id, "before": before, "after": values}),
    );
    Ok(json!({"database": name, "id": id, "values": values}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommentArgs {
    text: String,
    page: Option<String>,
    database: Option<String>,
    row: Option<String>,
}

fn comment(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CommentArgs = parse("kb_comment", args)?;
    let me = w.acting_email(actor)?;
    if a.text.trim().is_empty() {
        return Err("`text` is empty".into());
    }
    let at = now(w);
    match (&a.page, &a.database, &a.row) {
        (Some(page), None, None) => {
            let id = w.kb.find_page(page)?.id.clone();
            let cid = w.kb.new_comment_id();
            if let Some(p) = w.kb.pages.get_mut(&id) {
                p.comments.push(KbComment {
                    id: cid.clone(),
                    author: me,
                    at,
                    text: a.text.clone(),
                });
            }
            w.record(
                actor.clone(),
                "kb",
                "comment",
                false,
                json!({"page": id, "comment": cid, "text": a.text}),
            );
            Ok(json!({"page": id, "comment": cid}))
        }
        (None, Some(database), Some(row)) => {
            let id = find_row_id(w, database, row)?;
            let cid = w.kb.new_comment_id();
            let db = w.kb.database_mut(database)?;
            let name = db.name.clone();
            if let Some(r) = db.rows.iter_mut().find(|r| r.id == id) {
                r.comments.push(KbComment {
                    id: cid.clone(),
                    author: me,
                    at,
                    text: a.text.clone(),
                });
            }
            w.record(
                actor.clone(),
                "kb",
                "comment",
                false,
                json!({"database": name, "row": id, "comment": cid, "text": a.text}),
            );
            Ok(json!({"database": name, "row": id, "comment": cid}))
        }
        _ => Err("give either `page`, or `database` and `row`".into()),
    }
}
