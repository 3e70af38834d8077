//! Built-in predicates of the kb service.

use bureau_core::task::{KbPageFilter, KbRowFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_formats::text::contains_keyword;
use bureau_world::World;
use bureau_world::kb::{Page, PropKind, value_text};
use serde_json::Value;

use super::{count_range, quoted, status, within};

fn page_matches(world: &World, p: &Page, f: &KbPageFilter) -> bool {
    let kb = world.kb();
    let parent = p.parent.as_ref().and_then(|id| kb.pages.get(id));
    f.title
        .as_ref()
        .is_none_or(|t| p.title.trim().eq_ignore_ascii_case(t.trim()))
        && f.title_contains
            .iter()
            .all(|k| contains_keyword(&p.title, k))
        && f.parent
            .as_ref()
            .is_none_or(|t| parent.is_some_and(|x| x.title.trim().eq_ignore_ascii_case(t.trim())))
        && f.contains.iter().all(|k| contains_keyword(&p.content, k))
        && f.excludes.iter().all(|k| !contains_keyword(&p.content, k))
        && f.attachments.iter().all(|n| {
            p.attachments
                .iter()
                .any(|a| a.file.name.trim().eq_ignore_ascii_case(n.trim()))
        })
}

pub(crate) fn kb_page(_task: &Task, world: &World, f: &KbPageFilter) -> (VerdictStatus, String) {
    let kb = world.kb();
    let pages = kb.pages();
    let matching: Vec<&Page> = pages
        .iter()
        .copied()
        .filter(|p| page_matches(world, p, f))
        .collect();
    let mut parts = Vec::new();
    if let Some(t) = &f.title {
        parts.push(format!("titled '{t}'"));
    }
    if !f.title_contains.is_empty() {
        parts.push(format!(
            "with title containing {}",
            quoted(&f.title_contains)
        ));
    }
    if let Some(t) = &f.parent {
        parts.push(format!("under '{t}'"));
    }
    if !f.contains.is_empty() {
        parts.push(format!("containing {}", quoted(&f.contains)));
    }
    if !f.excludes.is_empty() {
        parts.push(format!("without {}", quoted(&f.excludes)));
    }
    if !f.attachments.is_empty() {
        parts.push(format!("with the attachment(s) {}", quoted(&f.attachments)));
    }
    let n = matching.len();
    let mut detail = format!(
        "{n} kb page{} {} (expected {}; {} pages in total)",
        if n == 1 { "" } else { "s" },
        parts.join(" "),
        count_range(f.min, f.max),
        pages.len()
    );
    if !matching.is_empty() {
        let shown: Vec<String> = matching
            .iter()
            .take(5)
            .map(|p| format!("'{}'", kb.page_path(p)))
            .collect();
        detail.push_str(&format!("; matched: {}", shown.join(", ")));
    } else if let Some(t) = &f.title
        && let Some(p) = pages
            .iter()
            .find(|p| p.title.trim().eq_ignore_ascii_case(t.trim()))
    {
        // Say why the page with the right title does not match.
        let missing: Vec<String> = f
            .contains
            .iter()
            .filter(|k| !contains_keyword(&p.content, k))
            .cloned()
            .collect();
        let forbidden: Vec<String> = f
            .excludes
            .iter()
            .filter(|k| contains_keyword(&p.content, k))
            .cloned()
            .collect();
        if !missing.is_empty() {
            detail.push_str(&format!("; page '{}' lacks {}", p.title, quoted(&missing)));
        }
        if !forbidden.is_empty() {
            detail.push_str(&format!(
                "; page '{}' contains {}",
                p.title,
                quoted(&forbidden)
            ));
        }
        let unattached: Vec<String> = f
            .attachments
            .iter()
            .filter(|n| {
                !p.attachments
                    .iter()
                    .any(|a| a.file.name.trim().eq_ignore_ascii_case(n.trim()))
            })
            .cloned()
            .collect();
        if !unattached.is_empty() {
            detail.push_str(&format!(
                "; page '{}' has no attachment {}",
                p.title,
                quoted(&unattached)
            ));
        }
    }
    (status(within(n, f.min, f.max)), detail)
}

/// Whether a stored (check-view) value equals the expected one: strings case-insensitive after
/// trimming, numbers within `tol`, lists as sets, `null`/`""`/`[]` all mean empty; a person
/// compares through the roster (email or handle).
fn value_equals(world: &World, kind: PropKind, got: &Value, want: &Value, tol: f64) -> bool {
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if empty(want) || empty(got) {
        return empty(want) && empty(got);
    }
    let norm_str = |s: &str| -> String {
        let s = s.trim().to_lowercase();
        if kind == PropKind::Person {
            world
                .people()
                .find(&s)
                .map(|p| p.email.clone())
                .unwrap_or(s)
        } else {
            s
        }
    };
    match (got, want) {
        (Value::Array(g), _) => {
            let w: Vec<String> = match want {
                Value::Array(a) => a.iter().map(|x| norm_str(&value_text(x))).collect(),
                other => value_text(other)
                    .split(',')
                    .map(&norm_str)
                    .filter(|x| !x.is_empty())
                    .collect(),
            };
            let g: Vec<String> = g.iter().map(|x| norm_str(&value_text(x))).collect();
            g.len() == w.len() && g.iter().all(|x| w.contains(x)) && w.iter().all(|x| g.contains(x))
        }
        (Value::Number(g), _) => {
            let w = match want {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => bureau_formats::text::parse_number(s),
                _ => None,
            };
            match (g.as_f64(), w) {
                (Some(g), Some(w)) => (g - w).abs() <= tol.max(1e-9),
                _ => false,
            }
        }
        (Value::Bool(g), Value::Bool(w)) => g == w,
        (Value::Bool(g), Value::String(s)) => s.trim().eq_ignore_ascii_case(&g.to_string()),
        (Value::String(g), _) => norm_str(g) == norm_str(&value_text(want)),
        _ => got == want,
    }
}

pub(crate) fn kb_row(_task: &Task, world: &World, f: &KbRowFilter) -> (VerdictStatus, String) {
    let kb = world.kb();
    let Some(db) = kb.database(&f.database) else {
        let names: Vec<String> = kb.databases.keys().cloned().collect();
        return (
            VerdictStatus::Failed,
            format!(
                "no kb database '{}' (databases: {})",
                f.database,
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ),
        );
    };
    let mut props = Vec::new();
    for k in f.where_.keys() {
        match db.property(k) {
            Some(p) => props.push((p.clone(), f.where_[k].clone())),
            None => {
                return (
                    VerdictStatus::Failed,
                    format!("database '{}' has no property '{k}'", db.name),
                );
            }
        }
    }
    let matching: Vec<_> = db
        .rows
        .iter()
        .filter(|r| {
            let view = kb.row_view(db, r);
            props.iter().all(|(p, want)| {
                let got = view.get(&p.name).cloned().unwrap_or(Value::Null);
                value_equals(world, p.kind, &got, want, f.tolerance)
            })
        })
        .collect();
    let cond: Vec<String> = f.where_.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    let n = matching.len();
    let mut detail = format!(
        "{n} row{} of '{}'{} (expected {}; {} rows in total)",
        if n == 1 { "" } else { "s" },
        db.name,
        if cond.is_empty() {
            String::new()
        } else {
            format!(" where {}", cond.join(", "))
        },
        count_range(f.min, f.max),
        db.rows.len()
    );
    if !matching.is_empty() {
        let shown: Vec<String> = matching
            .iter()
            .take(5)
            .map(|r| format!("'{}'", db.row_title(r)))
            .collect();
        detail.push_str(&format!("; matched: {}", shown.join(", ")));
    }
    (status(within(n, f.min, f.max)), detail)
}
