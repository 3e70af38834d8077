//! Built-in predicates of the tracker service.

use bureau_core::task::{Task, TrackerIssueFilter};
use bureau_core::verdict::VerdictStatus;
use bureau_formats::text::contains_keyword;
use bureau_world::World;
use bureau_world::tracker::{Issue, Project};

use super::{count_range, quoted, status, within};

fn same(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

fn issue_matches(world: &World, p: &Project, i: &Issue, f: &TrackerIssueFilter) -> bool {
    let person = |who: &str| -> String {
        world
            .people()
            .find(who)
            .map(|x| x.email.clone())
            .unwrap_or_else(|| who.trim().to_lowercase())
    };
    f.project
        .as_ref()
        .is_none_or(|k| same(k, &p.key) || same(k, &p.name))
        && f.key.as_ref().is_none_or(|k| same(k, &i.key))
        && f.title_contains
            .iter()
            .all(|k| contains_keyword(&i.title, k))
        && f.state.as_ref().is_none_or(|s| same(s, &i.state))
        && f.priority.as_ref().is_none_or(|s| same(s, &i.priority))
        && f.assignee.as_ref().is_none_or(|a| {
            if a.trim().is_empty() {
                i.assignee.is_none()
            } else {
                i.assignee.as_deref() == Some(person(a).as_str())
            }
        })
        && f.cycle.as_ref().is_none_or(|c| match &i.cycle {
            None => c.trim().is_empty(),
            Some(x) => same(x, c),
        })
        && f.module.as_ref().is_none_or(|m| match &i.module {
            None => m.trim().is_empty(),
            Some(x) => same(x, m),
        })
        && f.labels.iter().all(|l| i.labels.iter().any(|x| same(x, l)))
        && (f.comment_contains.is_empty()
            || i.comments.iter().any(|c| {
                f.comment_contains
                    .iter()
                    .all(|k| contains_keyword(&c.text, k))
            }))
}

fn describe(f: &TrackerIssueFilter) -> String {
    let mut parts = Vec::new();
    let opt = |name: &str, v: &Option<String>, parts: &mut Vec<String>| {
        if let Some(v) = v {
            if v.trim().is_empty() {
                parts.push(format!("with no {name}"));
            } else {
                parts.push(format!("{name} '{v}'"));
            }
        }
    };
    opt("project", &f.project, &mut parts);
    opt("key", &f.key, &mut parts);
    if !f.title_contains.is_empty() {
        parts.push(format!("title containing {}", quoted(&f.title_contains)));
    }
    opt("state", &f.state, &mut parts);
    opt("priority", &f.priority, &mut parts);
    opt("assignee", &f.assignee, &mut parts);
    opt("cycle", &f.cycle, &mut parts);
    opt("module", &f.module, &mut parts);
    if !f.labels.is_empty() {
        parts.push(format!("labels {}", quoted(&f.labels)));
    }
    if !f.comment_contains.is_empty() {
        parts.push(format!(
            "a comment containing {}",
            quoted(&f.comment_contains)
        ));
    }
    parts.join(", ")
}

pub(crate) fn tracker_issue(
    _task: &Task,
    world: &World,
    f: &TrackerIssueFilter,
) -> (VerdictStatus, String) {
    let all = world.tracker().issues();
    let matching: Vec<&Issue> = all
        .iter()
        .filter(|(p, i)| issue_matches(world, p, i, f))
        .map(|(_, i)| *i)
        .collect();
    let n = matching.len();
    let desc = describe(f);
    let mut detail = format!(
        "{n} issue{}{} (expected {}; {} issues in total)",
        if n == 1 { "" } else { "s" },
        if desc.is_empty() {
            String::new()
        } else {
            format!(" with {desc}")
        },
        count_range(f.min, f.max),
        all.len()
    );
    if !matching.is_empty() {
        let shown: Vec<String> = matching
            .iter()
            .take(8)
            .map(|i| format!("{} [{}]", i.key, i.state))
            .collect();
        detail.push_str(&format!("; matched: {}", shown.join(", ")));
    } else if let Some(k) = &f.key
        && let Some(i) = world.tracker().issue(k)
    {
        detail.push_str(&format!(
            "; {} is state '{}', priority '{}', assignee {}, cycle {}, labels [{}]",
            i.key,
            i.state,
            i.priority,
            i.assignee.as_deref().unwrap_or("none"),
            i.cycle.as_deref().unwrap_or("none"),
            i.labels.join(", ")
        ));
    }
    (status(within(n, f.min, f.max)), detail)
}
