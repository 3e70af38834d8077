//! Chat, knowledge base, sheets, tracker and code hosting: what changed, object by object.

use bureau_world::trial_files::TrialFiles;

use serde::Serialize;
use serde_json::{Map, Value};

use super::anchor::object_anchor;
use super::diff::{
    FieldChange, ObjectChange, Status, by_field, json_diff, keyed_changes, obj, rest_diff, show,
    text,
};

/// A chat message's text is cut to this many characters.
pub const MAX_CHAT_CHARS: usize = 4_000;
/// At most this many cells listed per turn.
pub const MAX_CELLS: usize = 2_000;

/// A titled list of changed objects (one database, one project, one repository...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub title: String,
    pub anchor: String,
    pub objects: Vec<ObjectChange>,
}

/// A service compared object by object.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ObjectChanges {
    pub groups: Vec<Group>,
    /// What no group models, field by field.
    pub other: Vec<FieldChange>,
}

impl ObjectChanges {
    pub fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.objects.is_empty()) && self.other.is_empty()
    }
}

// ---- chat ----

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatItem {
    pub id: String,
    pub anchor: String,
    pub author: String,
    pub time: String,
    pub text: String,
    pub truncated: bool,
    /// The message it answers in a thread.
    pub thread_of: Option<String>,
    /// Names of the files it carries.
    pub files: Vec<String>,
    /// The pictures among them, as `data:` URIs (read from the blob store, each ≤ 2 MB).
    pub images: Vec<String>,
}

/// New messages of one channel or direct conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversation {
    /// `#channel` or `DM: a, b`.
    pub title: String,
    pub messages: Vec<ChatItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ChatChanges {
    pub conversations: Vec<Conversation>,
    /// Messages edited, reacted to or deleted; channels created or changed.
    pub changed: Vec<ObjectChange>,
    pub other: Vec<FieldChange>,
}

impl ChatChanges {
    pub fn is_empty(&self) -> bool {
        self.conversations.is_empty() && self.changed.is_empty() && self.other.is_empty()
    }
}

fn conversation_title(m: &Value) -> String {
    match m.get("channel").and_then(Value::as_str) {
        Some(c) => format!("#{c}"),
        None => {
            let dm: Vec<String> = match m.get("dm") {
                Some(Value::Array(a)) => a.iter().map(show).collect(),
                _ => Vec::new(),
            };
            format!("DM: {}", dm.join(", "))
        }
    }
}

/// A file a service object carries (`{name, size, mime_type, blake3}`), when it is a
/// picture in the trial's blob store, as a `data:` URI.
fn stored_picture(trial: &TrialFiles, f: &Value) -> Option<String> {
    use base64::Engine;
    let hash = f.get("blake3")?.as_str()?;
    let size = f.get("size").and_then(Value::as_u64).unwrap_or(u64::MAX);
    if size > super::files::MAX_IMAGE_BYTES as u64 {
        return None;
    }
    let super::load::Blob::Bytes(bytes) = super::load::read_blob(trial, hash) else {
        return None;
    };
    let mime = super::files::image_mime(&bytes)?;
    (bytes.len() <= super::files::MAX_IMAGE_BYTES).then(|| {
        format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        )
    })
}

pub(crate) fn diff_chat(
    trial: &TrialFiles,
    old: Option<&Value>,
    new: Option<&Value>,
) -> ChatChanges {
    let a = by_field(old.and_then(|v| v.get("messages")), "id");
    let b = by_field(new.and_then(|v| v.get("messages")), "id");
    let mut out = ChatChanges::default();
    let mut convs: Vec<Conversation> = Vec::new();
    // New messages in the order they were posted.
    if let Some(Value::Array(items)) = new.and_then(|v| v.get("messages")) {
        for (i, m) in items.iter().enumerate() {
            let id = match m.get("id") {
                Some(Value::String(s)) => s.clone(),
                _ => format!("#{i}"),
            };
            if a.contains_key(&id) {
                continue;
            }
            let title = conversation_title(m);
            let full = text(m, "text");
            let (body, truncated) = match full.char_indices().nth(MAX_CHAT_CHARS) {
                Some((i, _)) => (full[..i].to_string(), true),
                None => (full, false),
            };
            let (files, images) = match m.get("files") {
                Some(Value::Array(f)) => (
                    f.iter().map(|f| text(f, "name")).collect(),
                    f.iter().filter_map(|f| stored_picture(trial, f)).collect(),
                ),
                _ => (Vec::new(), Vec::new()),
            };
            let item = ChatItem {
                anchor: object_anchor("chat", &id),
                id,
                author: text(m, "author"),
                time: text(m, "time"),
                text: body,
                truncated,
                thread_of: m.get("thread_of").and_then(Value::as_str).map(String::from),
                files,
                images,
            };
            match convs.iter_mut().find(|c| c.title == title) {
                Some(c) => c.messages.push(item),
                None => convs.push(Conversation {
                    title,
                    messages: vec![item],
                }),
            }
        }
    }
    convs.sort_by(|x, y| x.title.cmp(&y.title));
    out.conversations = convs;
    let mut changed = keyed_changes("chat", &a, &b, &[], &|_, m| {
        format!("{} in {}", text(m, "author"), conversation_title(m))
    });
    changed.retain(|o| o.status != Status::Added);
    out.changed = changed;
    out.changed.extend(keyed_changes(
        "channel",
        obj(old, "channels"),
        obj(new, "channels"),
        &[],
        &|k, _| format!("#{k}"),
    ));
    out.other = rest_diff("chat", old, new, &["messages", "channels", "next_id"]);
    out
}

// ---- knowledge base ----

fn row_title(row: &Value) -> String {
    // The first text value of the row (databases title rows by their first property).
    match row.get("values") {
        Some(Value::Object(m)) => m
            .values()
            .find_map(|v| v.as_str().filter(|s| !s.is_empty()).map(String::from))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

pub(crate) fn diff_kb(old: Option<&Value>, new: Option<&Value>) -> ObjectChanges {
    let mut out = ObjectChanges::default();
    out.groups.push(Group {
        title: "Pages".into(),
        anchor: object_anchor("kb", "pages"),
        objects: keyed_changes(
            "page",
            obj(old, "pages"),
            obj(new, "pages"),
            &[],
            &|_, p| text(p, "title"),
        ),
    });
    let (a, b) = (obj(old, "databases"), obj(new, "databases"));
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names {
        let (x, y) = (a.get(name), b.get(name));
        if x == y {
            continue;
        }
        let mut objects = Vec::new();
        let rows = |v: Option<&Value>| by_field(v.and_then(|d| d.get("rows")), "id");
        let (ra, rb) = (rows(x), rows(y));
        let mut db = Vec::new();
        json_diff("", x, y, &["rows", "next_row"], &mut db);
        if !db.is_empty() {
            objects.push(ObjectChange {
                kind: "database".into(),
                key: name.clone(),
                anchor: object_anchor("database", name),
                title: format!("database {name}"),
                status: match (x, y) {
                    (None, _) => Status::Added,
                    (_, None) => Status::Deleted,
                    _ => Status::Changed,
                },
                fields: db,
            });
        }
        for mut o in keyed_changes("row", &ra, &rb, &[], &|_, r| row_title(r)) {
            o.anchor = object_anchor("row", &format!("{name}/{}", o.key));
            objects.push(o);
        }
        out.groups.push(Group {
            title: format!("Database {name}"),
            anchor: object_anchor("database", name),
            objects,
        });
    }
    out.groups.retain(|g| !g.objects.is_empty());
    out.other = rest_diff(
        "kb",
        old,
        new,
        &["pages", "databases", "next_page", "next_comment"],
    );
    out
}

// ---- sheets ----

/// One cell that changed: `Sheet!A1: old → new` (values as shown, formulas as `=...`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellChange {
    pub spreadsheet: String,
    pub sheet: String,
    pub cell: String,
    pub anchor: String,
    pub status: Status,
    pub old: Option<String>,
    pub new: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SheetChanges {
    pub cells: Vec<CellChange>,
    /// Spreadsheets or sheets added or removed, as `name: added/removed`.
    pub structure: Vec<FieldChange>,
    /// Cells not listed (over [`MAX_CELLS`]).
    pub omitted: usize,
    pub other: Vec<FieldChange>,
}

impl SheetChanges {
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty() && self.structure.is_empty() && self.other.is_empty()
    }
}

fn cell_text(c: &Value) -> String {
    let value = match c.get("value") {
        Some(v) => show(v),
        None => String::new(),
    };
    match c.get("formula").and_then(Value::as_str) {
        Some(f) => format!("={} → {value}", f.trim_start_matches('=')),
        None => value,
    }
}

/// The sheets of a workbook value by name, in order.
fn sheets(wb: Option<&Value>) -> Vec<(String, Map<String, Value>)> {
    match wb.and_then(|w| w.get("sheets")) {
        Some(Value::Array(a)) => a
            .iter()
            .map(|s| {
                let cells = match s.get("cells") {
                    Some(Value::Object(m)) => m.clone(),
                    _ => Map::new(),
                };
                (text(s, "name"), cells)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Orders `B10` after `B9`: by column letters' length, letters, then row number.
fn cell_order(r: &str) -> (usize, String, u64, String) {
    let letters: String = r.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let row = r[letters.len()..].parse().unwrap_or(u64::MAX);
    (letters.len(), letters, row, r.to_string())
}

pub(crate) fn diff_sheets(old: Option<&Value>, new: Option<&Value>) -> SheetChanges {
    let (a, b) = (obj(old, "spreadsheets"), obj(new, "spreadsheets"));
    let mut out = SheetChanges::default();
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names {
        let (x, y) = (a.get(name), b.get(name));
        if x == y {
            continue;
        }
        match (x, y) {
            (None, Some(_)) => out.structure.push(FieldChange {
                path: name.clone(),
                old: None,
                new: Some("spreadsheet added".into()),
                diff: None,
            }),
            (Some(_), None) => out.structure.push(FieldChange {
                path: name.clone(),
                old: Some("spreadsheet removed".into()),
                new: None,
                diff: None,
            }),
            _ => {}
        }
        let (sa, sb) = (sheets(x), sheets(y));
        let mut sheet_names: Vec<&String> = sb.iter().map(|(n, _)| n).collect();
        for (n, _) in &sa {
            if !sheet_names.contains(&n) {
                sheet_names.push(n);
            }
        }
        let empty = Map::new();
        for sheet in sheet_names {
            let ca = sa.iter().find(|(n, _)| n == sheet).map(|(_, c)| c);
            let cb = sb.iter().find(|(n, _)| n == sheet).map(|(_, c)| c);
            if x.is_some() && y.is_some() {
                match (ca, cb) {
                    (None, Some(_)) => out.structure.push(FieldChange {
                        path: format!("{name} / {sheet}"),
                        old: None,
                        new: Some("sheet added".into()),
                        diff: None,
                    }),
                    (Some(_), None) => out.structure.push(FieldChange {
                        path: format!("{name} / {sheet}"),
                        old: Some("sheet removed".into()),
                        new: None,
                        diff: None,
                    }),
                    _ => {}
                }
            }
            let (ca, cb) = (ca.unwrap_or(&empty), cb.unwrap_or(&empty));
            let mut refs: Vec<&String> = ca.keys().chain(cb.keys()).collect();
            refs.sort_by_key(|r| cell_order(r));
            refs.dedup();
            for r in refs {
                let (p, q) = (ca.get(r), cb.get(r));
                let status = match (p, q) {
                    (None, Some(_)) => Status::Added,
                    (Some(_), None) => Status::Deleted,
                    (Some(u), Some(v)) if u != v => Status::Changed,
                    _ => continue,
                };
                if out.cells.len() >= MAX_CELLS {
                    out.omitted += 1;
                    continue;
                }
                out.cells.push(CellChange {
                    spreadsheet: name.clone(),
                    sheet: sheet.clone(),
                    cell: r.clone(),
                    anchor: object_anchor("cell", &format!("{name}/{sheet}!{r}")),
                    status,
                    old: p.map(cell_text),
                    new: q.map(cell_text),
                });
            }
        }
        let mut rest = Vec::new();
        let strip = |v: Option<&Value>| {
            v.and_then(Value::as_object).map(|m| {
                Value::Object(
                    m.iter()
                        .filter(|(k, _)| *k != "sheets")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            })
        };
        json_diff(name, strip(x).as_ref(), strip(y).as_ref(), &[], &mut rest);
        out.other.extend(rest);
    }
    out.other
        .extend(rest_diff("sheets", old, new, &["spreadsheets"]));
    out
}

// ---- tracker ----

pub(crate) fn diff_tracker(old: Option<&Value>, new: Option<&Value>) -> ObjectChanges {
    let (a, b) = (obj(old, "projects"), obj(new, "projects"));
    let mut out = ObjectChanges::default();
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for key in keys {
        let (x, y) = (a.get(key), b.get(key));
        if x == y {
            continue;
        }
        let mut objects = Vec::new();
        let mut proj = Vec::new();
        json_diff("", x, y, &["issues", "next_number"], &mut proj);
        if !proj.is_empty() {
            objects.push(ObjectChange {
                kind: "project".into(),
                key: key.clone(),
                anchor: object_anchor("project", key),
                title: format!("project {key}"),
                status: match (x, y) {
                    (None, _) => Status::Added,
                    (_, None) => Status::Deleted,
                    _ => Status::Changed,
                },
                fields: proj,
            });
        }
        let issues = |v: Option<&Value>| -> Map<String, Value> {
            obj(v, "issues")
                .iter()
                .map(|(n, i)| {
                    let k = match i.get("key").and_then(Value::as_str) {
                        Some(k) => k.to_string(),
                        None => format!("{key}-{n}"),
                    };
                    (k, i.clone())
                })
                .collect()
        };
        // The history repeats every field change; it is shown in the fields themselves.
        objects.extend(keyed_changes(
            "issue",
            &issues(x),
            &issues(y),
            &["history"],
            &|k, i| format!("{k} {}", text(i, "title")),
        ));
        let name = y.or(x).map(|p| text(p, "name")).unwrap_or_default();
        out.groups.push(Group {
            title: format!("{key} {name}").trim().to_string(),
            anchor: object_anchor("project", key),
            objects,
        });
    }
    out.other = rest_diff("tracker", old, new, &["projects"]);
    out
}

// ---- code hosting ----

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommitItem {
    pub repo: String,
    pub sha: String,
    pub short: String,
    pub anchor: String,
    pub author: String,
    pub time: String,
    /// The first line of the message.
    pub subject: String,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CodeChanges {
    /// Commits new in this turn, per repository by time.
    pub commits: Vec<CommitItem>,
    /// Per repository: branches, merge requests, issues and wiki pages changed.
    pub groups: Vec<Group>,
    pub other: Vec<FieldChange>,
}

impl CodeChanges {
    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
            && self.groups.iter().all(|g| g.objects.is_empty())
            && self.other.is_empty()
    }
}

pub(crate) fn diff_code(old: Option<&Value>, new: Option<&Value>) -> CodeChanges {
    let (a, b) = (obj(old, "repos"), obj(new, "repos"));
    let mut out = CodeChanges::default();
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for name in names {
        let (x, y) = (a.get(name), b.get(name));
        if x == y {
            continue;
        }
        let (ca, cb) = (obj(x, "commits"), obj(y, "commits"));
        let mut commits: Vec<CommitItem> = cb
            .iter()
            .filter(|(sha, _)| !ca.contains_key(*sha))
            .map(|(sha, c)| CommitItem {
                repo: name.clone(),
                sha: sha.clone(),
                short: sha.chars().take(10).collect(),
                anchor: object_anchor("commit", sha),
                author: text(c, "author"),
                time: text(c, "time"),
                subject: text(c, "message").lines().next().unwrap_or("").to_string(),
                files: match c.get("files") {
                    Some(Value::Array(f)) => f.iter().map(show).collect(),
                    _ => Vec::new(),
                },
            })
            .collect();
        commits.sort_by(|p, q| (&p.time, &p.sha).cmp(&(&q.time, &q.sha)));
        out.commits.extend(commits);
        let mut objects = Vec::new();
        let mut repo = Vec::new();
        json_diff(
            "",
            x,
            y,
            &["branches", "commits", "merge_requests", "issues", "wiki"],
            &mut repo,
        );
        if !repo.is_empty() {
            objects.push(ObjectChange {
                kind: "repo".into(),
                key: name.clone(),
                anchor: object_anchor("repo", name),
                title: format!("repository {name}"),
                status: match (x, y) {
                    (None, _) => Status::Added,
                    (_, None) => Status::Deleted,
                    _ => Status::Changed,
                },
                fields: repo,
            });
        }
        let scoped = |kind: &str, mut v: Vec<ObjectChange>| {
            for o in &mut v {
                o.anchor = object_anchor(kind, &format!("{name}/{}", o.key));
            }
            v
        };
        // A branch's commit list follows from its head; the head says where it moved.
        objects.extend(scoped(
            "branch",
            keyed_changes(
                "branch",
                obj(x, "branches"),
                obj(y, "branches"),
                &["commits"],
                &|k, _| format!("branch {k}"),
            ),
        ));
        let list = |v: Option<&Value>, key: &str| by_field(v.and_then(|r| r.get(key)), "iid");
        objects.extend(scoped(
            "mr",
            keyed_changes(
                "mr",
                &list(x, "merge_requests"),
                &list(y, "merge_requests"),
                &[],
                &|k, m| format!("!{k} {}", text(m, "title")),
            ),
        ));
        objects.extend(scoped(
            "code-issue",
            keyed_changes(
                "code-issue",
                &list(x, "issues"),
                &list(y, "issues"),
                &[],
                &|k, i| format!("#{k} {}", text(i, "title")),
            ),
        ));
        objects.extend(scoped(
            "wiki",
            keyed_changes("wiki", obj(x, "wiki"), obj(y, "wiki"), &[], &|k, _| {
                format!("wiki {k}")
            }),
        ));
        out.groups.push(Group {
            title: format!("Repository {name}"),
            anchor: object_anchor("repo", name),
            objects,
        });
    }
    out.groups.retain(|g| !g.objects.is_empty());
    out.other = rest_diff("code", old, new, &["repos", "hosted_files", "hosted_dirs"]);
    // The hosted repositories' storage (git objects and refs) is what the commits and
    // branches above show: counted, not listed.
    let (fa, fb) = (obj(old, "hosted_files"), obj(new, "hosted_files"));
    let added = fb.keys().filter(|k| !fa.contains_key(*k)).count();
    let removed = fa.keys().filter(|k| !fb.contains_key(*k)).count();
    let changed = fb
        .iter()
        .filter(|(k, v)| fa.get(*k).is_some_and(|o| o != *v))
        .count();
    if added + removed + changed > 0 {
        out.other.push(FieldChange {
            path: "code.hosted_files".into(),
            old: None,
            new: Some(format!(
                "git storage of the hosted repositories: {added} files added, {changed} changed, \
                 {removed} removed"
            )),
            diff: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chat_groups_new_messages_by_conversation() {
        let old = json!({"channels": {"ops": {"name": "ops", "members": []}}, "messages": [
            {"id": "c1", "channel": "ops", "author": "a", "text": "old", "time": "t0"}], "next_id": 1});
        let new = json!({"channels": {"ops": {"name": "ops", "members": ["b"]}}, "messages": [
            {"id": "c1", "channel": "ops", "author": "a", "text": "edited", "time": "t0"},
            {"id": "c2", "channel": "ops", "author": "b", "text": "hi", "time": "t1"},
            {"id": "c3", "channel": null, "dm": ["a", "b"], "author": "a", "text": "psst", "time": "t2"}], "next_id": 3});
        let c = diff_chat(
            &TrialFiles::loose(std::path::Path::new("/nonexistent")),
            Some(&old),
            Some(&new),
        );
        let convs: Vec<_> = c
            .conversations
            .iter()
            .map(|c| (c.title.as_str(), c.messages.len()))
            .collect();
        assert_eq!(convs, vec![("#ops", 1), ("DM: a, b", 1)]);
        let changed: Vec<_> = c
            .changed
            .iter()
            .map(|o| (o.kind.as_str(), o.key.as_str(), o.status))
            .collect();
        assert_eq!(
            changed,
            vec![
                ("chat", "c1", Status::Changed),
                ("channel", "ops", Status::Changed)
            ]
        );
        assert!(c.other.is_empty());
    }

    #[test]
    fn sheet_cells_in_reading_order() {
        let wb = |cells: Value| json!({"spreadsheets": {"Budget": {"sheets": [{"name": "S", "cells": cells}]}}});
        let old = wb(
            json!({"A1": {"type": "text", "value": "x"}, "B9": {"type": "number", "value": 1.0}}),
        );
        let new = wb(
            json!({"A1": {"type": "text", "value": "x"}, "B9": {"type": "number", "value": 2.0},
                            "B10": {"type": "number", "value": 3.0, "formula": "=B9+1"}}),
        );
        let c = diff_sheets(Some(&old), Some(&new));
        let got: Vec<_> = c
            .cells
            .iter()
            .map(|c| (c.cell.as_str(), c.old.as_deref(), c.new.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("B9", Some("1.0"), Some("2.0")),
                ("B10", None, Some("=B9+1 → 3.0"))
            ]
        );
        assert!(c.structure.is_empty() && c.other.is_empty());
    }

    #[test]
    fn tracker_issue_fields_without_history() {
        let issue = |state: &str| json!({"key": "CO-7", "title": "Canopy", "state": state, "history": [state]});
        let old = json!({"projects": {"CO": {"name": "Changes", "issues": {"7": issue("Priced")}, "next_number": 8}}});
        let new = json!({"projects": {"CO": {"name": "Changes", "issues": {"7": issue("Approved"), "8": {"key": "CO-8", "title": "New"}}, "next_number": 9}}});
        let t = diff_tracker(Some(&old), Some(&new));
        let g = &t.groups[0];
        assert_eq!(g.title, "CO Changes");
        let got: Vec<_> = g
            .objects
            .iter()
            .map(|o| (o.key.as_str(), o.status, o.fields.len()))
            .collect();
        assert_eq!(
            got,
            vec![("CO-7", Status::Changed, 1), ("CO-8", Status::Added, 2)]
        );
        assert_eq!(g.objects[0].fields[0].new.as_deref(), Some("Approved"));
    }

    #[test]
    fn code_commits_branches_and_merge_requests() {
        let old = json!({"repos": {"r": {"branches": {"main": {"head": "a1", "commits": ["a1"]}},
            "commits": {"a1": {"message": "init", "time": "t0"}},
            "merge_requests": [{"iid": 1, "title": "Fix", "state": "open"}], "issues": [], "wiki": {}}}});
        let new = json!({"repos": {"r": {"branches": {"main": {"head": "b2", "commits": ["b2", "a1"]}},
            "commits": {"a1": {"message": "init", "time": "t0"}, "b2": {"message": "Merge fix\n\nbody", "time": "t1", "author": "me", "files": ["x.py"]}},
            "merge_requests": [{"iid": 1, "title": "Fix", "state": "merged"}], "issues": [], "wiki": {}}}});
        let mut new = new;
        new["hosted_files"] = json!({"r.git/objects/b2": {"size": 1, "hash": "h", "mode": 420}});
        let c = diff_code(Some(&old), Some(&new));
        assert_eq!(c.other.len(), 1, "{:?}", c.other);
        assert!(c.other[0].new.as_deref().unwrap().contains("1 files added"));
        assert_eq!(c.commits.len(), 1);
        assert_eq!(
            (c.commits[0].subject.as_str(), c.commits[0].files.clone()),
            ("Merge fix", vec!["x.py".to_string()])
        );
        let got: Vec<_> = c.groups[0]
            .objects
            .iter()
            .map(|o| (o.kind.as_str(), o.title.as_str()))
            .collect();
        assert_eq!(got, vec![("branch", "branch main"), ("mr", "!1 Fix")]);
    }
}
