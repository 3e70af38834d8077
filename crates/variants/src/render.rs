//! Rendering one instance of a parametrised task into a task directory of its own.
//!
//! What is rendered with the parameter values:
//! * `task.toml` (prompts, events, rubric descriptions, predicate values): its `[params]`
//!   tables are blanked line for line (so every line keeps its number) and a `[variant]`
//!   table records the base task, the seed, the index and the values;
//! * under `world/`, `turns/`, `solution/` and `reference/`, and `history.json` and
//!   `media.toml`: every text file holding `{{` or `{%`, and every file named `*.j2` (the
//!   suffix is dropped). A `*.docx.j2`, `*.xlsx.j2`, `*.pptx.j2` or `*.pdf.j2` is rendered as
//!   text and then written by the office writers of bureau-formats ([`crate::office`]);
//! * `checks.star` is copied as is: checks read the values as `w.params`.
//!
//! Binary files and everything else are copied byte for byte. Symbolic links are refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bureau_core::error::{Location, TaskError, TaskErrors};
use serde_json::Value;

use crate::params::{Params, hint_for, unknown_name};
use crate::template::environment;

/// Folders (and top-level files) whose text files are templates.
const TEMPLATED_DIRS: &[&str] = &["world", "turns", "solution", "reference"];
const TEMPLATED_FILES: &[&str] = &["history.json", "media.toml"];

/// A rendered instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// Every rendered or copied file: relative path → blake3 of its bytes (the instance's
    /// content, for telling instances apart).
    pub files: BTreeMap<String, String>,
}

/// Render the task at `base` (id `base_id`, parameters `params`) with `values` into `out`
/// (created; must not exist), as instance `id` with `seed` and `index`.
pub fn render_into(
    base: &Path,
    base_id: &str,
    params: &Params,
    values: &BTreeMap<String, Value>,
    variant: (&str, u64, u32),
    out: &Path,
) -> Result<Rendered, TaskErrors> {
    let (id, seed, index) = variant;
    let env = environment();
    let ctx = crate::template::context(values);
    let mut errors = Vec::new();
    let mut files = BTreeMap::new();
    let known: std::collections::BTreeSet<&str> =
        params.specs.iter().map(|s| s.name.as_str()).collect();
    let io = |p: &Path, e: std::io::Error| {
        TaskError::new(
            Location::file(p),
            format!("cannot write the instance: {e}"),
            "check the cache directory's space and permissions",
        )
    };
    for rel in walk(base, &mut errors) {
        let src = base.join(&rel);
        let bytes = match std::fs::read(&src) {
            Ok(b) => b,
            Err(e) => {
                errors.push(TaskError::new(
                    Location::file(&src),
                    format!("cannot read: {e}"),
                    "make it a readable file",
                ));
                continue;
            }
        };
        let rel_s = rel.to_string_lossy().replace('\\', "/");
        let top = rel_s.split('/').next().unwrap_or("");
        let templated_place =
            TEMPLATED_DIRS.contains(&top) || TEMPLATED_FILES.contains(&rel_s.as_str());
        let text = std::str::from_utf8(&bytes)
            .ok()
            .filter(|t| !t.contains('\0'));
        let (dest_rel, output): (String, Vec<u8>) = if rel_s == "task.toml" {
            let Some(text) = text else {
                errors.push(TaskError::new(
                    Location::file(&src),
                    "task.toml is not UTF-8 text",
                    "save it as UTF-8",
                ));
                continue;
            };
            let blanked = blank_params(text);
            match render_text(&env, &src, &blanked, &ctx, &known) {
                Ok(mut t) => {
                    if !t.ends_with('\n') {
                        t.push('\n');
                    }
                    t.push_str(&variant_table(base, base_id, seed, index, values));
                    // The instance's own id, so that a run of several instances keeps them apart.
                    (rel_s.clone(), replace_id(&t, base_id, id).into_bytes())
                }
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            }
        } else if templated_place && rel_s.ends_with(".j2") {
            let Some(text) = text else {
                errors.push(TaskError::new(
                    Location::file(&src),
                    "a .j2 template is not UTF-8 text",
                    "save it as UTF-8",
                ));
                continue;
            };
            let dest = rel_s.trim_end_matches(".j2").to_string();
            let rendered = match render_text(&env, &src, text, &ctx, &known) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            match crate::office::write_office(&dest, &rendered) {
                Ok(Some(b)) => (dest, b),
                Ok(None) => (dest, rendered.into_bytes()),
                Err(what) => {
                    errors.push(TaskError::new(
                        Location::file(&src),
                        what,
                        "see docs/variants.md for the text forms of office templates",
                    ));
                    continue;
                }
            }
        } else if templated_place
            && let Some(t) = text
            && (t.contains("{{") || t.contains("{%"))
        {
            match render_text(&env, &src, t, &ctx, &known) {
                Ok(t) => (rel_s.clone(), t.into_bytes()),
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            }
        } else {
            (rel_s.clone(), bytes)
        };
        let dest = out.join(&dest_rel);
        if let Some(parent) = dest.parent()
            && let Err(e) = std::fs::create_dir_all(parent)
        {
            errors.push(io(parent, e));
            continue;
        }
        if let Err(e) = std::fs::write(&dest, &output) {
            errors.push(io(&dest, e));
            continue;
        }
        if rel_s != "task.toml" {
            files.insert(dest_rel, blake3::hash(&output).to_hex().to_string());
        }
    }
    if errors.is_empty() {
        Ok(Rendered { files })
    } else {
        Err(TaskErrors(errors))
    }
}

/// Regular files under `dir`, relative, sorted; symbolic links are errors.
pub(crate) fn walk(dir: &Path, errors: &mut Vec<TaskError>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let r = rel.join(e.file_name());
            match e.file_type() {
                Ok(ft) if ft.is_symlink() => errors.push(TaskError::new(
                    Location::file(&dir.join(&r)),
                    "a symbolic link in a parametrised task",
                    "replace it by the file itself",
                )),
                Ok(ft) if ft.is_dir() => stack.push(r),
                Ok(ft) if ft.is_file() => out.push(r),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

fn render_text(
    env: &minijinja::Environment<'static>,
    path: &Path,
    text: &str,
    ctx: &minijinja::Value,
    known: &std::collections::BTreeSet<&str>,
) -> Result<String, TaskError> {
    env.render_str(text, ctx.clone()).map_err(|e| {
        let line = e.line().unwrap_or(0);
        let location = if line > 0 {
            let offset: usize = text.split_inclusive('\n').take(line - 1).map(str::len).sum();
            Location::from_offset(path, text, offset)
        } else {
            Location::file(path)
        };
        let detail = e.detail().map(|d| format!(": {d}")).unwrap_or_default();
        let msg = format!("{}{detail}", e.kind());
        let what = match e.kind() {
            minijinja::ErrorKind::UndefinedError => {
                let name = template_name_at(text, line, known);
                format!("template references an unknown parameter{}", name.as_deref().map(|n| format!(" `{n}`")).unwrap_or_default())
            }
            _ => format!("template error: {msg}"),
        };
        let hint = unknown_name(&msg)
            .map(String::from)
            .or_else(|| template_name_at(text, line, known))
            .map(|n| hint_for(&n, known))
            .unwrap_or_else(|| "fix the template (minijinja syntax; write {% raw %}{{{% endraw %} for literal braces)".into());
        TaskError::new(location, what, hint)
    })
}

/// The first name inside a `{{ ... }}` on line `line` (1-based) that is not a declared
/// parameter, for "unknown parameter" messages.
fn template_name_at(
    text: &str,
    line: usize,
    known: &std::collections::BTreeSet<&str>,
) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    l.match_indices("{{").find_map(|(i, _)| {
        let name: String = l[i + 2..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        (!name.is_empty() && !known.contains(name.as_str())).then_some(name)
    })
}

/// `task.toml` with the lines of its `[params]` and `[params.*]` tables turned into comments,
/// so every other line keeps its number.
pub(crate) fn blank_params(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[') {
            let header = t.trim_start_matches('[').trim_start();
            inside = header.starts_with("params]") || header.starts_with("params.");
        }
        if inside {
            out.push('#');
            if line.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Replace the top-level `id = "<base>"` by the instance's id.
fn replace_id(text: &str, base_id: &str, id: &str) -> String {
    if base_id == id {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut done = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if !done && t.starts_with('[') {
            done = true; // past the top-level keys
        }
        if !done && t.starts_with("id") && t[2..].trim_start().starts_with('=') {
            out.push_str(&format!("id = \"{id}\"\n"));
            done = true;
            continue;
        }
        out.push_str(line);
    }
    out
}

fn variant_table(
    base: &Path,
    base_id: &str,
    seed: u64,
    index: u32,
    values: &BTreeMap<String, Value>,
) -> String {
    let values: toml::Table = values
        .iter()
        .map(|(k, v)| (k.clone(), to_toml(v)))
        .collect();
    let mut table = toml::Table::new();
    table.insert("base".into(), toml::Value::String(base_id.to_string()));
    table.insert(
        "base_dir".into(),
        toml::Value::String(base.display().to_string()),
    );
    table.insert("seed".into(), toml::Value::Integer(seed as i64));
    table.insert("index".into(), toml::Value::Integer(index.into()));
    table.insert("values".into(), toml::Value::Table(values));
    let mut root = toml::Table::new();
    root.insert("variant".into(), toml::Value::Table(table));
    let body = toml::to_string(&root).unwrap_or_default();
    format!(
        "\n# Rendered by bureau-variants from {} (seed {seed}); do not edit: render again.\n{body}",
        base.display()
    )
}

/// A JSON value as TOML (numbers as numbers; nulls, which TOML lacks, as empty strings).
fn to_toml(v: &Value) -> toml::Value {
    match v {
        Value::Null => toml::Value::String(String::new()),
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(a.iter().map(to_toml).collect()),
        Value::Object(o) => {
            toml::Value::Table(o.iter().map(|(k, v)| (k.clone(), to_toml(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_tables_are_blanked_line_for_line() {
        let t = "id = \"x\"\n[params.a]\nkind = \"int\"\nmin = 1\n\n[user]\nname = \"A\"\n[params]\nconstraints = []\n[[turn]]\n";
        let b = blank_params(t);
        assert_eq!(b.lines().count(), t.lines().count());
        assert_eq!(
            b,
            "id = \"x\"\n#\n#\n#\n#\n[user]\nname = \"A\"\n#\n#\n[[turn]]\n"
        );
    }

    #[test]
    fn the_instance_id_replaces_the_top_level_id_only() {
        let t = "id = \"q\"\ntitle = \"T\"\n[[rubric]]\nid = \"q\"\n";
        assert_eq!(
            replace_id(t, "q", "q.v2"),
            "id = \"q.v2\"\ntitle = \"T\"\n[[rubric]]\nid = \"q\"\n"
        );
    }
}
