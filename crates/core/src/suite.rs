//! Suites: a directory of task directories with a `suite.toml`.
//!
//! ```toml
//! id = "starter"
//! title = "Starter office tasks"
//! description = "..."
//! [subsets]
//! lite = ["inbox-triage", "budget-reconcile"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Location, TaskError, TaskErrors, did_you_mean};
use crate::task::Task;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteMeta {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub subsets: BTreeMap<String, Vec<String>>,
    /// The public variant seed of the suite's parametrised tasks (docs/variants.md): runs
    /// without `--variant-seed` play the instances it renders, so leaderboards compare.
    #[serde(default)]
    pub variant_seed: Option<u64>,
}

/// Whether `dir` is a task (`task.toml`) or a suite (`suite.toml`) directory.
fn is_target(dir: &Path) -> bool {
    dir.join("task.toml").is_file() || dir.join("suite.toml").is_file()
}

/// The task and suite directories directly inside `dir`, sorted (none when it cannot be
/// listed).
fn targets_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| is_target(p))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The task or suite directory beside `path` whose name is nearest to its last component
/// (for "did you mean"), if one is near enough.
fn nearest_target(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let siblings = targets_in(parent.unwrap_or(Path::new(".")));
    let names = siblings
        .iter()
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()));
    let best = did_you_mean(name, names)?;
    Some(parent.map_or_else(|| PathBuf::from(best), |p| p.join(best)))
}

/// The suites and tasks directly inside `spec` when `spec` is a folder that is neither a
/// task nor a suite (`bureau validate suites`): their paths, sorted; `None` otherwise (and
/// when the folder holds none).
pub fn folder_targets(spec: &str) -> Option<Vec<String>> {
    // `folder@subset`: that subset of every suite in the folder (e.g. `suites@core`).
    let (folder, subset) = match spec.rsplit_once('@') {
        Some((p, s)) if !s.is_empty() && !s.contains('/') => (p, Some(s)),
        _ => (spec, None),
    };
    let path = Path::new(folder);
    if !path.is_dir() || is_target(path) {
        return None;
    }
    let found: Vec<String> = targets_in(path)
        .iter()
        .filter(|p| match subset {
            // Only suites have subsets; a suite without this one is left out.
            Some(name) => std::fs::read_to_string(p.join("suite.toml"))
                .ok()
                .and_then(|t| toml::from_str::<SuiteMeta>(&t).ok())
                .is_some_and(|m| m.subsets.contains_key(name)),
            None => true,
        })
        .map(|p| match subset {
            Some(name) => format!("{}@{name}", p.display()),
            None => p.display().to_string(),
        })
        .collect();
    (!found.is_empty()).then_some(found)
}

/// What a path given on the command line names.
#[derive(Debug, Clone)]
pub enum Target {
    /// A suite directory (has `suite.toml`), with its task directories in sorted order.
    Suite {
        meta: SuiteMeta,
        dir: PathBuf,
        tasks: Vec<PathBuf>,
    },
    /// A single task directory (has `task.toml`).
    Task(PathBuf),
}

impl Target {
    /// Resolve `path` (optionally `path@subset` for a suite's named subset).
    pub fn resolve(spec: &str) -> Result<Target, TaskErrors> {
        let (path, subset) = match spec.rsplit_once('@') {
            Some((p, s)) if !s.is_empty() && !s.contains('/') => {
                (PathBuf::from(p), Some(s.to_string()))
            }
            _ => (PathBuf::from(spec), None),
        };
        if path.join("task.toml").is_file() {
            if subset.is_some() {
                return Err(TaskError::new(
                    Location::file(&path),
                    "a subset was given for a single task",
                    "use `@subset` only with a suite directory",
                )
                .into());
            }
            return Ok(Target::Task(path));
        }
        let suite_toml = path.join("suite.toml");
        if !suite_toml.is_file() {
            let near = nearest_target(&path);
            let hint = match &near {
                Some(n) => format!("did you mean `{}`?", n.display()),
                None => "give the path of a task directory or a suite directory".to_string(),
            };
            let what = if std::fs::symlink_metadata(&path).is_err() {
                "no such file or directory"
            } else {
                "neither a task (no task.toml) nor a suite (no suite.toml)"
            };
            return Err(TaskError::new(Location::whole(&path), what, hint).into());
        }
        let text = std::fs::read_to_string(&suite_toml).map_err(|e| {
            TaskError::new(
                Location::file(&suite_toml),
                format!("cannot read: {e}"),
                "make suite.toml readable",
            )
        })?;
        let meta: SuiteMeta = toml::from_str(&text).map_err(|e| {
            let loc =
                Location::from_offset(&suite_toml, &text, e.span().map(|s| s.start).unwrap_or(0));
            TaskError::new(loc, e.message().trim(), "see docs/task-format.md (suites)")
        })?;
        let mut all = Vec::new();
        let entries = std::fs::read_dir(&path).map_err(|e| {
            TaskError::new(
                Location::file(&path),
                format!("cannot list: {e}"),
                "make the suite directory readable",
            )
        })?;
        for entry in entries.flatten() {
            let p = entry.path();
            if p.join("task.toml").is_file() {
                all.push(p);
            }
        }
        all.sort();
        let tasks = match subset {
            None => all,
            Some(name) => {
                let Some(ids) = meta.subsets.get(&name) else {
                    let known: Vec<&str> = meta.subsets.keys().map(|s| s.as_str()).collect();
                    return Err(TaskError::new(
                        Location::file(&suite_toml),
                        format!("no subset `{name}`"),
                        format!(
                            "known subsets: {}",
                            if known.is_empty() {
                                "none".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    )
                    .into());
                };
                let mut chosen = Vec::new();
                for id in ids {
                    match all
                        .iter()
                        .find(|p| p.file_name().and_then(|n| n.to_str()) == Some(id.as_str()))
                    {
                        Some(p) => chosen.push(p.clone()),
                        None => {
                            return Err(TaskError::new(Location::file(&suite_toml), format!("subset `{name}` names `{id}`, which is not a task directory of this suite"), "fix the subset list").into());
                        }
                    }
                }
                chosen.sort();
                chosen
            }
        };
        Ok(Target::Suite {
            meta,
            dir: path,
            tasks,
        })
    }

    /// The task directories this target names.
    pub fn task_dirs(&self) -> Vec<PathBuf> {
        match self {
            Target::Suite { tasks, .. } => tasks.clone(),
            Target::Task(p) => vec![p.clone()],
        }
    }
}

/// Load every task of the given targets; all errors are collected.
pub fn load_tasks(specs: &[String]) -> Result<Vec<Task>, TaskErrors> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    for spec in specs {
        match Target::resolve(spec) {
            Ok(t) => {
                for dir in t.task_dirs() {
                    match Task::load(&dir) {
                        Ok(task) => tasks.push(task),
                        Err(e) => errors.extend(e.0),
                    }
                }
            }
            Err(e) => errors.extend(e.0),
        }
    }
    errors.extend(duplicate_ids(&tasks));
    if errors.is_empty() {
        Ok(tasks)
    } else {
        Err(TaskErrors(errors))
    }
}

/// An error for every task whose id an earlier task of `tasks` already has.
pub fn duplicate_ids(tasks: &[Task]) -> Vec<TaskError> {
    let mut ids: BTreeMap<&str, &Path> = BTreeMap::new();
    let mut errors = Vec::new();
    for t in tasks {
        if let Some(other) = ids.insert(&t.id, &t.dir) {
            errors.push(TaskError::new(
                Location::file(&t.toml_path()),
                format!("task id `{}` is also used by {}", t.id, other.display()),
                "task ids must be unique within a run",
            ));
        }
    }
    errors
}

/// Path of a suite's directory name, for display.
pub fn display_name(p: &Path) -> String {
    p.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string()
}
