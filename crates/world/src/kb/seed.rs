//! Seeding the knowledge base from `world/kb/`: pages (markdown files with optional front
//! matter) and databases (CSV with a schema, or JSON).

use std::collections::BTreeMap;
use std::path::Path;

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::values::coerce_values;
use super::{Database, Page, PropKind, Property, Row, value_text};
use crate::files::to_slash;
use crate::{World, WorldError};

/// Seed the service from `dir` (`world/kb/`; absent = empty).
pub(crate) fn seed(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    let at = world.now().with_timezone(&world.timezone()).to_rfc3339();
    let by = world.user().email.clone();
    let pages_dir = dir.join("pages");
    let mut n_pages = 0;
    let mut by_path = BTreeMap::new();
    if pages_dir.is_dir() {
        (n_pages, by_path) = seed_pages(world, &pages_dir, &at, &by)?;
    }
    let att_dir = dir.join("attachments");
    let mut n_attachments = 0;
    if att_dir.exists() {
        n_attachments = super::attachments::seed(world, &att_dir, &by_path, &at, &by)?;
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
        if name != "pages" && name != "databases" && name != "attachments" {
            return Err(WorldError::Seed {
                path: entry.path(),
                message: "world/kb/ holds `pages/` (markdown), `databases/` (CSV + .schema.json, or .json) and `attachments/<page path>/<file>`; see docs/services/kb.md".into(),
            });
        }
    }
    world.record(
        Actor::Task,
        "kb",
        "seed",
        false,
        if n_attachments == 0 {
            json!({"pages": n_pages, "databases": n_dbs})
        } else {
            json!({"pages": n_pages, "databases": n_dbs, "attachments": n_attachments})
        },
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

/// The pages under `root`; how many, and each page's id by its path (relative to `root`,
/// without `.md`).
fn seed_pages(
    world: &mut World,
    root: &Path,
    at: &str,
    by: &str,
) -> Result<(usize, BTreeMap<String, String>), WorldError> {
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
                    attachments: Vec::new(),
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
                attachments: Vec::new(),
            },
        );
        by_path.insert(rel, id);
        count += 1;
    }
    Ok((count, by_path))
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
