//! tracker_* tools: projects, issues, cycles, comments.

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, parse, schema, string, strings};
use crate::World;
use crate::tracker::{
    Change, Cycle, Issue, IssueComment, issue_json, resolve_person, resolve_priority,
};

fn number(desc: &str) -> Value {
    json!({"type": "number", "minimum": 0, "description": desc})
}

pub(super) const TOOLS: &[Tool] = &[
    Tool {
        name: "tracker_list_projects",
        description: "List the tracker's projects: key, name, workflow states (with category), labels, cycles, modules, issue counts.",
        schema: || schema(&[], &[]),
        run: list_projects,
    },
    Tool {
        name: "tracker_list_issues",
        description: "List issues matching every given filter (summary per issue; tracker_get_issue for details).",
        schema: || {
            schema(
                &[
                    ("project", string("Project key or name")),
                    (
                        "state",
                        string(
                            "State name, or a category: backlog, unstarted, started, completed, cancelled",
                        ),
                    ),
                    (
                        "assignee",
                        string("Email or chat handle; \"\" = unassigned"),
                    ),
                    ("cycle", string("Cycle name; \"\" = in no cycle")),
                    ("label", string("Has this label")),
                    ("module", string("Module name")),
                    ("priority", string("none, low, medium, high, urgent")),
                    (
                        "text",
                        string("Words that must appear in the title or description"),
                    ),
                ],
                &[],
            )
        },
        run: list_issues,
    },
    Tool {
        name: "tracker_get_issue",
        description: "An issue with its description, comments and history of changes (who changed what, when).",
        schema: || {
            schema(
                &[("key", string("Issue key, e.g. OPS-12, or its URL"))],
                &["key"],
            )
        },
        run: get_issue,
    },
    Tool {
        name: "tracker_create_issue",
        description: "Create an issue in a project.",
        schema: || {
            schema(
                &[
                    ("project", string("Project key or name")),
                    ("title", string("Title")),
                    ("description", string("Description (markdown)")),
                    (
                        "state",
                        string("State name (default: the project's first state)"),
                    ),
                    (
                        "priority",
                        string("none (default), low, medium, high, urgent"),
                    ),
                    ("assignee", string("Email or chat handle of a colleague")),
                    ("labels", strings("Labels of the project")),
                    ("estimate", number("Estimate in points")),
                    ("cycle", string("Cycle name")),
                    ("module", string("Module name")),
                ],
                &["project", "title"],
            )
        },
        run: create_issue,
    },
    Tool {
        name: "tracker_update_issue",
        description: "Change an issue's fields; every change is kept in its history. Give \"\" to clear assignee, cycle or module.",
        schema: || {
            schema(
                &[
                    ("key", string("Issue key, e.g. OPS-12, or its URL")),
                    ("title", string("New title")),
                    ("description", string("New description")),
                    ("state", string("New state")),
                    ("priority", string("none, low, medium, high, urgent")),
                    (
                        "assignee",
                        string("Email or chat handle; \"\" = unassigned"),
                    ),
                    ("labels", strings("Replace the labels")),
                    ("add_labels", strings("Labels to add")),
                    ("remove_labels", strings("Labels to remove")),
                    ("estimate", number("Estimate in points")),
                    ("cycle", string("Cycle name; \"\" = none")),
                    ("module", string("Module name; \"\" = none")),
                ],
                &["key"],
            )
        },
        run: update_issue,
    },
    Tool {
        name: "tracker_comment",
        description: "Comment on an issue.",
        schema: || {
            schema(
                &[
                    ("key", string("Issue key, or its URL")),
                    ("text", string("The comment")),
                ],
                &["key", "text"],
            )
        },
        run: comment,
    },
    Tool {
        name: "tracker_list_cycles",
        description: "List a project's cycles (sprints) with dates, status (upcoming, current, completed) and issue counts.",
        schema: || schema(&[("project", string("Project key or name"))], &["project"]),
        run: list_cycles,
    },
    Tool {
        name: "tracker_create_cycle",
        description: "Create a cycle (sprint) in a project.",
        schema: || {
            schema(
                &[
                    ("project", string("Project key or name")),
                    ("name", string("Cycle name, e.g. Sprint 15")),
                    ("start", string("First day, YYYY-MM-DD")),
                    ("end", string("Last day, YYYY-MM-DD")),
                ],
                &["project", "name", "start", "end"],
            )
        },
        run: create_cycle,
    },
];

fn now(w: &World) -> String {
    w.now().with_timezone(&w.timezone()).to_rfc3339()
}

fn summary(w: &World, key: &str) -> Value {
    let Some(i) = w.tracker.issue(key) else {
        return Value::Null;
    };
    let cat = crate::tracker::split_key(key)
        .and_then(|(p, _)| w.tracker.projects.get(&p))
        .map(|p| p.category_of(&i.state))
        .unwrap_or_default();
    let url = crate::urls::tracker_issue_url(&w.service_url("tracker"), &i.key);
    json!({"key": i.key, "url": url, "title": i.title, "state": i.state, "state_category": cat, "priority": i.priority,
        "assignee": i.assignee, "labels": i.labels, "estimate": i.estimate, "cycle": i.cycle, "module": i.module})
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn list_projects(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let _: NoArgs = parse("tracker_list_projects", args)?;
    let v: Vec<Value> = w
        .tracker
        .projects
        .values()
        .map(|p| {
            json!({"key": p.key, "name": p.name, "description": p.description,
                "states": p.states.iter().map(|s| json!({"name": s.name, "category": s.category})).collect::<Vec<_>>(),
                "labels": p.labels,
                "cycles": p.cycles.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
                "modules": p.modules.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
                "issues": p.issues.len()})
        })
        .collect();
    Ok(json!({"projects": v}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    project: Option<String>,
    state: Option<String>,
    assignee: Option<String>,
    cycle: Option<String>,
    label: Option<String>,
    module: Option<String>,
    priority: Option<String>,
    text: Option<String>,
}

fn list_issues(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ListArgs = parse("tracker_list_issues", args)?;
    let project = a
        .project
        .as_deref()
        .map(|p| w.tracker.project_key(p))
        .transpose()?;
    let assignee = match &a.assignee {
        Some(s) => Some(resolve_person(&w.people, s)?),
        None => None,
    };
    let priority = a.priority.as_deref().map(resolve_priority).transpose()?;
    let words: Vec<String> = a
        .text
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .map(|s| s.to_lowercase())
        .collect();
    let mut keys = Vec::new();
    for (p, i) in w.tracker.issues() {
        if project.as_ref().is_some_and(|k| *k != p.key) {
            continue;
        }
        if let Some(s) = &a.state {
            let s = s.trim();
            let cat = p.category_of(&i.state);
            if !i.state.eq_ignore_ascii_case(s) && !cat.eq_ignore_ascii_case(s) {
                continue;
            }
        }
        if let Some(want) = &assignee
            && i.assignee != *want
        {
            continue;
        }
        if let Some(c) = &a.cycle {
            let ok = match &i.cycle {
                None => c.trim().is_empty(),
                Some(x) => x.eq_ignore_ascii_case(c.trim()),
            };
            if !ok {
                continue;
            }
        }
        if let Some(m) = &a.module
            && !i
                .module
                .as_deref()
                .is_some_and(|x| x.eq_ignore_ascii_case(m.trim()))
        {
            continue;
        }
        if let Some(l) = &a.label
            && !i.labels.iter().any(|x| x.eq_ignore_ascii_case(l.trim()))
        {
            continue;
        }
        if priority.as_ref().is_some_and(|p| *p != i.priority) {
            continue;
        }
        let hay = format!("{}\n{}", i.title, i.description).to_lowercase();
        if !words.iter().all(|x| hay.contains(x)) {
            continue;
        }
        keys.push(i.key.clone());
    }
    let issues: Vec<Value> = keys.iter().map(|k| summary(w, k)).collect();
    Ok(json!({"count": issues.len(), "issues": issues}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyArg {
    key: String,
}

fn no_issue(key: &str) -> String {
    format!(
        "no issue `{}`; use tracker_list_issues to find keys",
        key.trim()
    )
}

fn get_issue(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: KeyArg = parse("tracker_get_issue", args)?;
    let (pk, _) = crate::tracker::split_key(&a.key).ok_or_else(|| no_issue(&a.key))?;
    let p = w
        .tracker
        .projects
        .get(&pk)
        .ok_or_else(|| no_issue(&a.key))?;
    let i = w.tracker.issue(&a.key).ok_or_else(|| no_issue(&a.key))?;
    Ok(issue_json(p, i, &w.service_url("tracker")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    project: String,
    title: String,
    #[serde(default)]
    description: String,
    state: Option<String>,
    priority: Option<String>,
    assignee: Option<String>,
    #[serde(default)]
    labels: Vec<String>,
    estimate: Option<f64>,
    cycle: Option<String>,
    module: Option<String>,
}

fn check_estimate(e: Option<f64>) -> Result<Option<f64>, String> {
    match e {
        Some(x) if !x.is_finite() || x < 0.0 => {
            Err(format!("`estimate` {x} must be a number of points ≥ 0"))
        }
        other => Ok(other),
    }
}

fn create_issue(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateArgs = parse("tracker_create_issue", args)?;
    let me = w.acting_email(actor)?;
    let key = w.tracker.project_key(&a.project)?;
    let title = a.title.trim().to_string();
    if title.is_empty() {
        return Err("`title` is empty; give the issue a title".into());
    }
    let p = &w.tracker.projects[&key];
    let state = match &a.state {
        Some(s) => p.resolve_state(s)?,
        None => p.states.first().map(|s| s.name.clone()).unwrap_or_default(),
    };
    let priority = match &a.priority {
        Some(s) => resolve_priority(s)?,
        None => "none".into(),
    };
    let assignee = match &a.assignee {
        Some(s) => resolve_person(&w.people, s)?,
        None => None,
    };
    let labels = p.resolve_labels(&a.labels)?;
    let cycle = match &a.cycle {
        Some(c) => p.resolve_cycle(c)?,
        None => None,
    };
    let module = match &a.module {
        Some(m) => p.resolve_module(m)?,
        None => None,
    };
    let estimate = check_estimate(a.estimate)?;
    let at = now(w);
    let Some(p) = w.tracker.projects.get_mut(&key) else {
        return Err(format!("no project `{key}`"));
    };
    p.next_number += 1;
    let number = p.next_number;
    let ikey = format!("{key}-{number}");
    let issue = Issue {
        key: ikey.clone(),
        number,
        title: title.clone(),
        description: a.description,
        state: state.clone(),
        priority: priority.clone(),
        assignee: assignee.clone(),
        labels: labels.clone(),
        estimate,
        cycle: cycle.clone(),
        module: module.clone(),
        created_by: me.clone(),
        created_at: at.clone(),
        updated_at: at.clone(),
        comments: Vec::new(),
        history: vec![Change {
            field: "state".into(),
            old: Value::Null,
            new: json!(state),
            by: me,
            at,
        }],
    };
    p.issues.insert(number, issue);
    w.record(actor.clone(), "tracker", "create_issue", false, json!({"key": ikey, "title": title, "state": state, "priority": priority, "assignee": assignee, "labels": labels, "cycle": cycle, "module": module}));
    Ok(summary(w, &ikey))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    key: String,
    title: Option<String>,
    description: Option<String>,
    state: Option<String>,
    priority: Option<String>,
    assignee: Option<String>,
    labels: Option<Vec<String>>,
    #[serde(default)]
    add_labels: Vec<String>,
    #[serde(default)]
    remove_labels: Vec<String>,
    estimate: Option<f64>,
    cycle: Option<String>,
    module: Option<String>,
}

fn update_issue(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: UpdateArgs = parse("tracker_update_issue", args)?;
    let me = w.acting_email(actor)?;
    let (pk, _) = crate::tracker::split_key(&a.key).ok_or_else(|| no_issue(&a.key))?;
    let p = w
        .tracker
        .projects
        .get(&pk)
        .ok_or_else(|| no_issue(&a.key))?;
    let old = w
        .tracker
        .issue(&a.key)
        .ok_or_else(|| no_issue(&a.key))?
        .clone();
    // Resolve everything first: a failed call changes nothing.
    let mut changes: Vec<(&str, Value, Value)> = Vec::new();
    let mut new = old.clone();
    if let Some(t) = &a.title {
        if t.trim().is_empty() {
            return Err("`title` is empty".into());
        }
        new.title = t.trim().to_string();
    }
    if let Some(d) = &a.description {
        new.description = d.clone();
    }
    if let Some(s) = &a.state {
        new.state = p.resolve_state(s)?;
    }
    if let Some(s) = &a.priority {
        new.priority = resolve_priority(s)?;
    }
    if let Some(s) = &a.assignee {
        new.assignee = resolve_person(&w.people, s)?;
    }
    if let Some(l) = &a.labels {
        new.labels = p.resolve_labels(l)?;
    }
    if !a.add_labels.is_empty() {
        let mut all = new.labels.clone();
        all.extend(a.add_labels.iter().cloned());
        new.labels = p.resolve_labels(&all)?;
    }
    for r in &a.remove_labels {
        if !new.labels.iter().any(|x| x.eq_ignore_ascii_case(r.trim())) {
            return Err(format!(
                "{} has no label `{}`; its labels: {}",
                old.key,
                r.trim(),
                new.labels.join(", ")
            ));
        }
        new.labels.retain(|x| !x.eq_ignore_ascii_case(r.trim()));
    }
    if a.estimate.is_some() {
        new.estimate = check_estimate(a.estimate)?;
    }
    if let Some(c) = &a.cycle {
        new.cycle = p.resolve_cycle(c)?;
    }
    if let Some(m) = &a.module {
        new.module = p.resolve_module(m)?;
    }
    let fields: [(&str, Value, Value); 9] = [
        ("title", json!(old.title), json!(new.title)),
        (
            "description",
            json!(old.description),
            json!(new.description),
        ),
        ("state", json!(old.state), json!(new.state)),
        ("priority", json!(old.priority), json!(new.priority)),
        ("assignee", json!(old.assignee), json!(new.assignee)),
        ("labels", json!(old.labels), json!(new.labels)),
        ("estimate", json!(old.estimate), json!(new.estimate)),
        ("cycle", json!(old.cycle), json!(new.cycle)),
        ("module", json!(old.module), json!(new.module)),
    ];
    for (f, from, to) in fields {
        if from != to {
            changes.push((f, from, to));
        }
    }
    if changes.is_empty() {
        return Ok(json!({"key": old.key, "changed": [], "issue": summary(w, &old.key)}));
    }
    let at = now(w);
    for (f, from, to) in &changes {
        new.history.push(Change {
            field: (*f).into(),
            old: from.clone(),
            new: to.clone(),
            by: me.clone(),
            at: at.clone(),
        });
    }
    new.updated_at = at;
    let key = new.key.clone();
    if let Some(slot) = w.tracker.issue_mut(&key) {
        *slot = new;
    }
    let changed: Vec<Value> = changes
        .iter()
        .map(|(f, from, to)| json!({"field": f, "old": from, "new": to}))
        .collect();
    w.record(
        actor.clone(),
        "tracker",
        "update_issue",
        false,
        json!({"key": key, "changes": changed}),
    );
    Ok(json!({"key": key, "changed": changed, "issue": summary(w, &key)}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommentArgs {
    key: String,
    text: String,
}

fn comment(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CommentArgs = parse("tracker_comment", args)?;
    let me = w.acting_email(actor)?;
    if a.text.trim().is_empty() {
        return Err("`text` is empty".into());
    }
    let at = now(w);
    let issue = w
        .tracker
        .issue_mut(&a.key)
        .ok_or_else(|| no_issue(&a.key))?;
    issue.comments.push(IssueComment {
        author: me,
        at: at.clone(),
        text: a.text.clone(),
    });
    issue.updated_at = at;
    let key = issue.key.clone();
    let n = issue.comments.len();
    w.record(
        actor.clone(),
        "tracker",
        "comment",
        false,
        json!({"key": key, "text": a.text}),
    );
    Ok(json!({"key": key, "comments": n}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectArg {
    project: String,
}

fn list_cycles(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ProjectArg = parse("tracker_list_cycles", args)?;
    let key = w.tracker.project_key(&a.project)?;
    let p = &w.tracker.projects[&key];
    let today = w
        .now()
        .with_timezone(&w.timezone())
        .format("%Y-%m-%d")
        .to_string();
    let cycles: Vec<Value> = p
        .cycles
        .iter()
        .map(|c| {
            let status = if today < c.start {
                "upcoming"
            } else if today > c.end {
                "completed"
            } else {
                "current"
            };
            let issues: Vec<&Issue> = p
                .issues
                .values()
                .filter(|i| i.cycle.as_deref() == Some(c.name.as_str()))
                .collect();
            let open = issues
                .iter()
                .filter(|i| !matches!(p.category_of(&i.state).as_str(), "completed" | "cancelled"))
                .count();
            json!({"name": c.name, "start": c.start, "end": c.end, "status": status,
                "issues": issues.len(), "open_issues": open})
        })
        .collect();
    Ok(json!({"project": key, "today": today, "cycles": cycles}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateCycleArgs {
    project: String,
    name: String,
    start: String,
    end: String,
}

fn create_cycle(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateCycleArgs = parse("tracker_create_cycle", args)?;
    let key = w.tracker.project_key(&a.project)?;
    let name = a.name.trim().to_string();
    if name.is_empty() {
        return Err("`name` is empty".into());
    }
    let date = |f: &str, s: &str| {
        chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
            .map(|d| d.format("%Y-%m-%d").to_string())
            .map_err(|_| format!("`{f}` must be a date YYYY-MM-DD, got `{s}`"))
    };
    let start = date("start", &a.start)?;
    let end = date("end", &a.end)?;
    if end < start {
        return Err("`end` is before `start`".into());
    }
    let Some(p) = w.tracker.projects.get_mut(&key) else {
        return Err(format!("no project `{key}`"));
    };
    if p.cycle(&name).is_some() {
        return Err(format!("{key} already has a cycle `{name}`"));
    }
    p.cycles.push(Cycle {
        name: name.clone(),
        start: start.clone(),
        end: end.clone(),
    });
    w.record(
        actor.clone(),
        "tracker",
        "create_cycle",
        false,
        json!({"project": key, "name": name, "start": start, "end": end}),
    );
    Ok(json!({"project": key, "name": name, "start": start, "end": end}))
}
