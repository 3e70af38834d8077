//! The issue tracker (Plane/Jira-like): projects with ordered workflow states, issues, cycles
//! (sprints), modules, comments and a history of every change with its actor and time.
//!
//! Seeded from `world/tracker/<KEY>.json` (one file per project); documented in
//! `docs/services/tracker.md`.

use std::collections::BTreeMap;
use std::path::Path;

use bureau_core::log::Actor;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::people::People;
use crate::{World, WorldError};

pub const CATEGORIES: &[&str] = &["backlog", "unstarted", "started", "completed", "cancelled"];
pub const PRIORITIES: &[&str] = &["none", "low", "medium", "high", "urgent"];

/// A workflow state and its category (`backlog`, `unstarted`, `started`, `completed`,
/// `cancelled`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDef {
    pub name: String,
    pub category: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cycle {
    pub name: String,
    /// `YYYY-MM-DD`, inclusive.
    pub start: String,
    /// `YYYY-MM-DD`, inclusive.
    pub end: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssueComment {
    pub author: String,
    /// RFC 3339 in the office time zone.
    pub at: String,
    pub text: String,
}

/// One change of an issue field: `field` is `state`, `assignee`, `priority`, `labels`,
/// `estimate`, `cycle`, `module`, `title` or `description`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub field: String,
    pub old: Value,
    pub new: Value,
    pub by: String,
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// `OPS-12`.
    pub key: String,
    pub number: u64,
    pub title: String,
    pub description: String,
    pub state: String,
    pub priority: String,
    /// Email of a person of the roster.
    pub assignee: Option<String>,
    pub labels: Vec<String>,
    pub estimate: Option<f64>,
    pub cycle: Option<String>,
    pub module: Option<String>,
    pub created_by: String,
    pub created_at: String,
    pub updated_at: String,
    pub comments: Vec<IssueComment>,
    /// Every change, in order (state changes included).
    pub history: Vec<Change>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Project {
    pub key: String,
    pub name: String,
    pub description: String,
    pub states: Vec<StateDef>,
    /// Allowed labels (empty = any label).
    pub labels: Vec<String>,
    pub cycles: Vec<Cycle>,
    pub modules: Vec<Module>,
    /// Issues by number.
    pub issues: BTreeMap<u64, Issue>,
    pub next_number: u64,
}

impl Project {
    pub fn state(&self, name: &str) -> Option<&StateDef> {
        self.states
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name.trim()))
    }
    pub fn category_of(&self, state: &str) -> String {
        self.state(state)
            .map(|s| s.category.clone())
            .unwrap_or_default()
    }
    pub fn cycle(&self, name: &str) -> Option<&Cycle> {
        self.cycles
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name.trim()))
    }
    pub fn module(&self, name: &str) -> Option<&Module> {
        self.modules
            .iter()
            .find(|m| m.name.eq_ignore_ascii_case(name.trim()))
    }
    /// Resolve a state name (case-insensitive) or explain the allowed ones.
    pub fn resolve_state(&self, name: &str) -> Result<String, String> {
        self.state(name).map(|s| s.name.clone()).ok_or_else(|| {
            format!(
                "`{}` is not a state of {}; states: {}",
                name.trim(),
                self.key,
                self.states
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
    pub fn resolve_cycle(&self, name: &str) -> Result<Option<String>, String> {
        if name.trim().is_empty() {
            return Ok(None);
        }
        self.cycle(name).map(|c| Some(c.name.clone())).ok_or_else(|| {
            format!(
                "`{}` is not a cycle of {}; cycles: {} (or \"\" for none; tracker_create_cycle adds one)",
                name.trim(),
                self.key,
                self.cycles
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
    pub fn resolve_module(&self, name: &str) -> Result<Option<String>, String> {
        if name.trim().is_empty() {
            return Ok(None);
        }
        self.module(name)
            .map(|m| Some(m.name.clone()))
            .ok_or_else(|| {
                format!(
                    "`{}` is not a module of {}; modules: {} (or \"\" for none)",
                    name.trim(),
                    self.key,
                    self.modules
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
    pub fn resolve_labels(&self, labels: &[String]) -> Result<Vec<String>, String> {
        let mut out: Vec<String> = Vec::new();
        for l in labels {
            let l = l.trim();
            if l.is_empty() {
                continue;
            }
            let name = if self.labels.is_empty() {
                l.to_string()
            } else {
                self.labels
                    .iter()
                    .find(|x| x.eq_ignore_ascii_case(l))
                    .cloned()
                    .ok_or_else(|| {
                        format!(
                            "`{l}` is not a label of {}; labels: {}",
                            self.key,
                            self.labels.join(", ")
                        )
                    })?
            };
            if !out.iter().any(|x| x.eq_ignore_ascii_case(&name)) {
                out.push(name);
            }
        }
        Ok(out)
    }
}

/// A priority name, or the allowed ones.
pub fn resolve_priority(p: &str) -> Result<String, String> {
    let l = p.trim().to_lowercase();
    if PRIORITIES.contains(&l.as_str()) {
        Ok(l)
    } else {
        Err(format!(
            "`{}` is not a priority; priorities: {}",
            p.trim(),
            PRIORITIES.join(", ")
        ))
    }
}

/// An assignee (email or chat handle of the roster), or the allowed ones. `""` = unassigned.
pub fn resolve_person(people: &People, who: &str) -> Result<Option<String>, String> {
    if who.trim().is_empty() {
        return Ok(None);
    }
    if let Some(p) = people.find(who) {
        return Ok(Some(p.email.clone()));
    }
    if people.is_empty() && who.contains('@') {
        return Ok(Some(who.trim().to_lowercase()));
    }
    Err(format!(
        "`{}` is not a person of the office; give an email or chat handle of: {}",
        who.trim(),
        people
            .iter()
            .map(|p| format!("{} (@{})", p.email, p.handle))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrackerState {
    /// Projects by key.
    pub projects: BTreeMap<String, Project>,
}

/// Split `OPS-12` into (`OPS`, 12).
pub fn split_key(key: &str) -> Option<(String, u64)> {
    let (p, n) = key.trim().rsplit_once('-')?;
    Some((p.to_uppercase(), n.parse().ok()?))
}

impl TrackerState {
    /// A project by key or name (case-insensitive).
    pub fn project(&self, key_or_name: &str) -> Option<&Project> {
        let k = key_or_name.trim();
        self.projects.get(&k.to_uppercase()).or_else(|| {
            self.projects
                .values()
                .find(|p| p.name.eq_ignore_ascii_case(k) || p.key.eq_ignore_ascii_case(k))
        })
    }

    pub(crate) fn project_key(&self, key_or_name: &str) -> Result<String, String> {
        self.project(key_or_name)
            .map(|p| p.key.clone())
            .ok_or_else(|| {
                format!(
                    "no project `{}`; projects: {}",
                    key_or_name.trim(),
                    self.projects.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            })
    }

    pub fn issue(&self, key: &str) -> Option<&Issue> {
        let (p, n) = split_key(key)?;
        self.projects.get(&p)?.issues.get(&n)
    }

    pub(crate) fn issue_mut(&mut self, key: &str) -> Option<&mut Issue> {
        let (p, n) = split_key(key)?;
        self.projects.get_mut(&p)?.issues.get_mut(&n)
    }

    /// Every issue, by project key then number.
    pub fn issues(&self) -> Vec<(&Project, &Issue)> {
        self.projects
            .values()
            .flat_map(|p| p.issues.values().map(move |i| (p, i)))
            .collect()
    }

    /// What checks see as `w.tracker` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict), with each issue's URL under `base` (`https://tracker.<domain>`).
    pub fn check_view(&self, _tz: chrono_tz::Tz, base: &str) -> Value {
        let projects: Vec<Value> = self
            .projects
            .values()
            .map(|p| {
                json!({
                    "key": p.key, "name": p.name, "description": p.description,
                    "states": p.states.iter().map(|s| json!({"name": s.name, "category": s.category})).collect::<Vec<_>>(),
                    "labels": p.labels,
                    "cycles": p.cycles.iter().map(|c| json!({"name": c.name, "start": c.start, "end": c.end})).collect::<Vec<_>>(),
                    "modules": p.modules.iter().map(|m| json!({"name": m.name, "description": m.description})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut by_key = serde_json::Map::new();
        let issues: Vec<Value> = self
            .issues()
            .into_iter()
            .map(|(p, i)| {
                let v = issue_json(p, i, base);
                by_key.insert(i.key.clone(), v.clone());
                v
            })
            .collect();
        json!({"projects": projects, "issues": issues, "issue": {"$dict": by_key}})
    }
}

/// An issue as JSON (tools and checks), with its URL under `base`.
pub fn issue_json(p: &Project, i: &Issue, base: &str) -> Value {
    json!({
        "key": i.key, "url": crate::urls::tracker_issue_url(base, &i.key), "project": p.key, "number": i.number, "title": i.title,
        "description": i.description, "state": i.state, "state_category": p.category_of(&i.state),
        "priority": i.priority, "assignee": i.assignee, "labels": i.labels,
        "estimate": i.estimate, "cycle": i.cycle, "module": i.module,
        "created_by": i.created_by, "created_at": i.created_at, "updated_at": i.updated_at,
        "comments": i.comments.iter().map(|c| json!({"author": c.author, "at": c.at, "text": c.text})).collect::<Vec<_>>(),
        "history": i.history.iter().map(|c| json!({"field": c.field, "old": c.old, "new": c.new, "by": c.by, "at": c.at})).collect::<Vec<_>>(),
    })
}

// ---------------------------------------------------------------------------------------------
// Seed

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    key: String,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    states: Vec<StateDef>,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    cycles: Vec<Cycle>,
    #[serde(default)]
    modules: Vec<Module>,
    #[serde(default)]
    issues: Vec<IssueFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IssueFile {
    number: u64,
    title: String,
    #[serde(default)]
    description: String,
    state: Option<String>,
    #[serde(default)]
    priority: Option<String>,
    #[serde(default)]
    assignee: Option<String>,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    estimate: Option<f64>,
    #[serde(default)]
    cycle: Option<String>,
    #[serde(default)]
    module: Option<String>,
    #[serde(default)]
    created_by: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    comments: Vec<IssueComment>,
}

/// The default workflow when a project file lists no states.
pub fn default_states() -> Vec<StateDef> {
    [
        ("Backlog", "backlog"),
        ("Todo", "unstarted"),
        ("In Progress", "started"),
        ("Done", "completed"),
        ("Cancelled", "cancelled"),
    ]
    .iter()
    .map(|(n, c)| StateDef {
        name: (*n).into(),
        category: (*c).into(),
    })
    .collect()
}

/// Seed the service from `dir` (`world/tracker/`; absent = empty).
pub(crate) fn seed(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.exists() {
        return Ok(());
    }
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| WorldError::io(dir, e))?
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    let at = world.now().with_timezone(&world.timezone()).to_rfc3339();
    for path in paths {
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            return Err(WorldError::Seed {
                path,
                message: "world/tracker/ holds one <KEY>.json file per project; see docs/services/tracker.md".into(),
            });
        }
        let text = std::fs::read_to_string(&path).map_err(|e| WorldError::io(&path, e))?;
        let project = parse_project(&text, &world.people, &world.user().email, &at).map_err(
            |(line, message)| WorldError::Seed {
                path: match line {
                    Some(l) => std::path::PathBuf::from(format!("{}:{l}", path.display())),
                    None => path.clone(),
                },
                message,
            },
        )?;
        if world.tracker.projects.contains_key(&project.key) {
            return Err(WorldError::Seed {
                path,
                message: format!("project key `{}` is used twice", project.key),
            });
        }
        let payload = json!({"project": project.key, "issues": project.issues.len()});
        world.tracker.projects.insert(project.key.clone(), project);
        world.record(Actor::Task, "tracker", "seed", false, payload);
    }
    Ok(())
}

/// The line of the first occurrence of `needle` at or after byte `from` (1-based).
fn line_at(text: &str, from: usize, needle: &str) -> Option<usize> {
    let start = from.min(text.len());
    let pos = text[start..].find(needle).map(|p| p + start)?;
    Some(text[..pos].matches('\n').count() + 1)
}

fn parse_project(
    text: &str,
    people: &People,
    user: &str,
    at: &str,
) -> Result<Project, (Option<usize>, String)> {
    let f: ProjectFile = serde_json::from_str(text).map_err(|e| (Some(e.line()), e.to_string()))?;
    let key = f.key.trim().to_uppercase();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err((
            line_at(text, 0, "\"key\""),
            format!(
                "project key `{}` must be letters and digits, e.g. OPS",
                f.key
            ),
        ));
    }
    let states = if f.states.is_empty() {
        default_states()
    } else {
        f.states
    };
    for s in &states {
        if !CATEGORIES.contains(&s.category.as_str()) {
            return Err((
                line_at(text, 0, &format!("\"{}\"", s.category)),
                format!(
                    "state `{}` has category `{}`; categories: {}",
                    s.name,
                    s.category,
                    CATEGORIES.join(", ")
                ),
            ));
        }
    }
    for c in &f.cycles {
        for d in [&c.start, &c.end] {
            if chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_err() {
                return Err((
                    line_at(text, 0, &format!("\"{d}\"")),
                    format!("cycle `{}`: `{d}` is not a date YYYY-MM-DD", c.name),
                ));
            }
        }
        if c.end < c.start {
            return Err((
                line_at(text, 0, &format!("\"{}\"", c.name)),
                format!("cycle `{}` ends before it starts", c.name),
            ));
        }
    }
    let mut project = Project {
        key: key.clone(),
        name: f.name,
        description: f.description,
        states,
        labels: f.labels,
        cycles: f.cycles,
        modules: f.modules,
        issues: BTreeMap::new(),
        next_number: 0,
    };
    let issues_at = text.find("\"issues\"").unwrap_or(0);
    for i in f.issues {
        // Locate the issue by its number, then each offending value after it.
        let here = text[issues_at..]
            .find(&format!("\"number\": {}", i.number))
            .or_else(|| text[issues_at..].find(&format!("\"number\":{}", i.number)))
            .map(|p| p + issues_at)
            .unwrap_or(issues_at);
        let line = |needle: &str| line_at(text, here, needle).or(line_at(text, here, "{"));
        let ikey = format!("{key}-{}", i.number);
        let err = |needle: &str, m: String| (line(needle), format!("issue {ikey}: {m}"));
        if i.number == 0 || project.issues.contains_key(&i.number) {
            return Err(err(
                "\"number\"",
                "issue numbers are unique and start at 1".into(),
            ));
        }
        let state = match &i.state {
            Some(s) => project
                .resolve_state(s)
                .map_err(|m| err(&format!("\"{s}\""), m))?,
            None => project.states[0].name.clone(),
        };
        let priority = match &i.priority {
            Some(p) => resolve_priority(p).map_err(|m| err(&format!("\"{p}\""), m))?,
            None => "none".into(),
        };
        let assignee = match &i.assignee {
            Some(a) => resolve_person(people, a).map_err(|m| err(&format!("\"{a}\""), m))?,
            None => None,
        };
        let labels = project
            .resolve_labels(&i.labels)
            .map_err(|m| err("\"labels\"", m))?;
        let cycle = match &i.cycle {
            Some(c) => project
                .resolve_cycle(c)
                .map_err(|m| err(&format!("\"{c}\""), m))?,
            None => None,
        };
        let module = match &i.module {
            Some(m) => project
                .resolve_module(m)
                .map_err(|e| err(&format!("\"{m}\""), e))?,
            None => None,
        };
        let created_by = match &i.created_by {
            Some(c) => resolve_person(people, c)
                .map_err(|m| err(&format!("\"{c}\""), m))?
                .unwrap_or_else(|| user.to_string()),
            None => user.to_string(),
        };
        let mut comments = Vec::new();
        for c in i.comments {
            let author = resolve_person(people, &c.author)
                .map_err(|m| err(&format!("\"{}\"", c.author), m))?
                .unwrap_or_else(|| user.to_string());
            comments.push(IssueComment { author, ..c });
        }
        let created_at = i.created_at.unwrap_or_else(|| at.to_string());
        project.next_number = project.next_number.max(i.number);
        project.issues.insert(
            i.number,
            Issue {
                key: ikey,
                number: i.number,
                title: i.title,
                description: i.description,
                state,
                priority,
                assignee,
                labels,
                estimate: i.estimate,
                cycle,
                module,
                created_by,
                updated_at: created_at.clone(),
                created_at,
                comments,
                history: Vec::new(),
            },
        );
    }
    Ok(project)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_with_unknown_state_names_its_line_and_the_states() {
        let text = "{\n  \"key\": \"OPS\",\n  \"name\": \"Ops\",\n  \"issues\": [\n    {\"number\": 1, \"title\": \"a\"},\n    {\"number\": 2,\n     \"title\": \"b\",\n     \"state\": \"Doing\"}\n  ]\n}\n";
        let (line, msg) = parse_project(text, &People::default(), "me@x.test", "t").unwrap_err();
        assert_eq!(line, Some(8));
        assert!(
            msg.contains("OPS-2") && msg.contains("Backlog, Todo"),
            "{msg}"
        );
    }

    #[test]
    fn keys_split_and_priorities_resolve() {
        assert_eq!(split_key("ops-12"), Some(("OPS".into(), 12)));
        assert_eq!(split_key("OPS"), None);
        assert_eq!(resolve_priority("High").unwrap(), "high");
        assert!(resolve_priority("asap").unwrap_err().contains("urgent"));
    }
}
