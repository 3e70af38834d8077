//! Procedural variants of Bureau tasks (docs/variants.md).
//!
//! A task may declare `[params]` ([`params`]): typed generators seeded per instance. Its
//! prompts, world files, office files, events, rubric text and solution are templates
//! ([`template`], minijinja), and its checks read the values as `w.params`, so the oracle is
//! right for every instance. An **instance** is a rendered task directory ([`render`]) in the
//! cache, loaded like any task; its `[variant]` table records the base task, the seed and
//! the values, and the same seed renders the same instance byte for byte.
//!
//! A run's instances of a task come from the run's variant seed (`--variant-seed`, else the
//! suite's public `variant_seed`, else 0): instance `i` has the seed
//! [`instance_seed`]`(run seed, task id, i)`, so `bureau rescore` and a resumed run find the
//! same instances, and another run seed gives unseen ones.

pub mod office;
pub mod params;
pub mod render;
pub mod template;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bureau_core::Task;
use bureau_core::error::{Location, TaskError, TaskErrors};
use bureau_core::suite::Target;
use serde_json::Value;

pub use params::{Kind, ParamSpec, Params};
pub use render::Rendered;

/// Tries per instance index to find parameter values no earlier instance of the run has.
const COLLISION_TRIES: u32 = 50;

/// How many instances of each parametrised task to play, and from which seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Instances per parametrised task (at least 1). Tasks without `[params]` play once.
    pub count: u32,
    /// The run's variant seed; `None` = the suite's `variant_seed`, else 0.
    pub seed: Option<u64>,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            count: 1,
            seed: None,
        }
    }
}

/// One rendered instance: the loaded task and what was rendered.
#[derive(Debug, Clone)]
pub struct Instance {
    pub task: Task,
    pub rendered: Rendered,
}

/// Where instances are cached: `$BUREAU_CACHE_DIR/variants`, else
/// `$XDG_CACHE_HOME/bureau/variants`, else `$HOME/.cache/bureau/variants`, else the temp dir.
pub fn cache_root() -> PathBuf {
    bureau_core::cache::cache_dir("variants")
}

/// The seed of instance `index` of task `task_id` in a run seeded `run_seed` (53 bits, so it
/// survives JSON). `attempt` > 0 only when an earlier seed gave values another instance has.
pub fn instance_seed(run_seed: u64, task_id: &str, index: u32, attempt: u32) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(b"bureau-variant\0");
    h.update(&run_seed.to_le_bytes());
    h.update(task_id.as_bytes());
    h.update(&[0]);
    h.update(&index.to_le_bytes());
    h.update(&attempt.to_le_bytes());
    let b = h.finalize();
    let mut eight = [0u8; 8];
    eight.copy_from_slice(&b.as_bytes()[..8]);
    u64::from_le_bytes(eight) & ((1u64 << 53) - 1)
}

/// Whether the task directory declares `[params]`.
pub fn is_parametrised(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("task.toml"))
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .is_some_and(|t| t.contains_key("params"))
}

/// The base task's id, its parameters and its task.toml text.
fn base_of(dir: &Path) -> Result<(String, Params), TaskErrors> {
    let path = dir.join("task.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        TaskError::new(
            Location::file(&path),
            format!("cannot read task.toml: {e}"),
            "a task is a directory with a task.toml",
        )
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        TaskError::new(
            Location::from_offset(&path, &text, e.span().map_or(0, |s| s.start)),
            e.message().trim().to_string(),
            "templates belong inside TOML strings (prompt = \"... {{ amount | money }} ...\"), so task.toml stays TOML",
        )
    })?;
    let id = table
        .get("id")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string();
    let Some(p) = table.get("params") else {
        return Err(TaskError::new(
            Location::file(&path),
            "the task has no [params]",
            "load it as a plain task",
        )
        .into());
    };
    Ok((id, Params::parse(&path, &text, p, dir)?))
}

/// blake3 over the task directory's files (paths and bytes), for the cache key.
fn tree_digest(dir: &Path) -> String {
    let mut h = blake3::Hasher::new();
    // Symbolic links are refused when the instance is rendered; here they are left out.
    for f in render::walk(dir, &mut Vec::new()) {
        h.update(f.to_string_lossy().as_bytes());
        h.update(&[0]);
        if let Ok(b) = std::fs::read(dir.join(&f)) {
            h.update(&(b.len() as u64).to_le_bytes());
            h.update(&b);
        }
    }
    h.finalize().to_hex().to_string()
}

const RENDERED_JSON: &str = ".bureau-instance.json";

/// Render (or take from the cache) the instance of `dir` with instance seed `seed`, index
/// `index`, id `id`, and load it.
pub fn instance(dir: &Path, seed: u64, index: u32, id: &str) -> Result<Instance, TaskErrors> {
    let (base_id, params) = base_of(dir)?;
    let values = params.generate(&base_id, seed)?;
    render_cached(dir, &base_id, &params, &values, seed, index, id)
}

fn render_cached(
    dir: &Path,
    base_id: &str,
    params: &Params,
    values: &BTreeMap<String, Value>,
    seed: u64,
    index: u32,
    id: &str,
) -> Result<Instance, TaskErrors> {
    let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let key = blake3::hash(
        format!(
            "{}\0{}\0{seed}\0{index}\0{id}\0{}",
            tree_digest(&base),
            base.display(),
            env!("CARGO_PKG_VERSION")
        )
        .as_bytes(),
    )
    .to_hex();
    let out = cache_root().join(format!("{id}-{}", &key[..16]));
    let marker = out.join(RENDERED_JSON);
    let io = |p: &Path, e: std::io::Error| {
        TaskErrors::from(TaskError::new(
            Location::file(p),
            format!("cannot write the instance: {e}"),
            "check the cache directory (BUREAU_CACHE_DIR)",
        ))
    };
    let rendered = match std::fs::read(&marker)
        .ok()
        .and_then(|b| serde_json::from_slice::<BTreeMap<String, String>>(&b).ok())
    {
        Some(files) => Rendered { files },
        None => {
            let root = cache_root();
            std::fs::create_dir_all(&root).map_err(|e| io(&root, e))?;
            let tmp = root.join(format!(".tmp-{id}-{}-{}", &key[..16], std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            let rendered = match render::render_into(
                &base,
                base_id,
                params,
                values,
                (id, seed, index),
                &tmp,
            ) {
                Ok(r) => r,
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&tmp);
                    return Err(e);
                }
            };
            let json = serde_json::to_vec_pretty(&rendered.files).unwrap_or_default();
            std::fs::write(tmp.join(RENDERED_JSON), json).map_err(|e| io(&tmp, e))?;
            // Another process may have rendered the same instance meanwhile: same bytes.
            if std::fs::rename(&tmp, &out).is_err() {
                let _ = std::fs::remove_dir_all(&tmp);
                if !marker.is_file() {
                    return Err(io(
                        &out,
                        std::io::Error::other(
                            "the rendered instance could not be moved into place",
                        ),
                    ));
                }
            }
            rendered
        }
    };
    let task = Task::load(&out)?;
    Ok(Instance { task, rendered })
}

/// `count` distinct instances of the parametrised task at `dir` for the run seed `run_seed`.
/// Two instances with the same values are a collision: the next seed is tried, and a task
/// whose parameters have fewer than `count` distinct value sets is an error naming them.
pub fn instances(dir: &Path, count: u32, run_seed: u64) -> Result<Vec<Instance>, TaskErrors> {
    let (base_id, params) = base_of(dir)?;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for index in 0..count.max(1) {
        let id = if count <= 1 {
            base_id.clone()
        } else {
            format!("{base_id}.v{index}")
        };
        let mut found = None;
        for attempt in 0..COLLISION_TRIES {
            let seed = instance_seed(run_seed, &base_id, index, attempt);
            let values = params.generate(&base_id, seed)?;
            let key = serde_json::to_string(&values).unwrap_or_default();
            if seen.insert(key) {
                found = Some((seed, values));
                break;
            }
        }
        let Some((seed, values)) = found else {
            let names: Vec<&str> = params.specs.iter().map(|s| s.name.as_str()).collect();
            return Err(TaskError::new(
                locate_params(dir),
                format!(
                    "task `{base_id}`: variant {index} collides with an earlier one — parameters ({}) give only {} distinct instances, {count} were asked for",
                    names.join(", "),
                    seen.len()
                ),
                "widen a parameter (a larger range, more choices) or ask for fewer variants",
            )
            .into());
        };
        out.push(render_cached(
            dir, &base_id, &params, &values, seed, index, &id,
        )?);
    }
    Ok(out)
}

fn locate_params(dir: &Path) -> Location {
    let path = dir.join("task.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    params::locate(&path, &text, "[params")
}

/// Load every task of `specs`: plain tasks as they are, parametrised ones as `plan.count`
/// instances each. All errors are collected; task ids must be unique.
pub fn load_tasks(specs: &[String], plan: &Plan) -> Result<Vec<Task>, TaskErrors> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    // A folder of suites (`suites`, `suites@core`) stands for each suite in it.
    let expanded: Vec<String> = specs
        .iter()
        .flat_map(|t| bureau_core::suite::folder_targets(t).unwrap_or_else(|| vec![t.clone()]))
        .collect();
    for spec in &expanded {
        match Target::resolve(spec) {
            Ok(t) => {
                let seed = plan.seed.or_else(|| suite_seed(&t));
                for dir in t.task_dirs() {
                    match load_dir(&dir, plan.count, seed.unwrap_or(0)) {
                        Ok(mut ts) => tasks.append(&mut ts),
                        Err(e) => errors.extend(e.0),
                    }
                }
            }
            Err(e) => errors.extend(e.0),
        }
    }
    errors.extend(bureau_core::suite::duplicate_ids(&tasks));
    if errors.is_empty() {
        Ok(tasks)
    } else {
        Err(TaskErrors(errors))
    }
}

/// The public variant seed that applies to a target: its suite's `variant_seed`, or for a
/// single task directory, that of the suite it sits in (its parent's `suite.toml`).
pub fn suite_seed(target: &Target) -> Option<u64> {
    match target {
        Target::Suite { meta, .. } => meta.variant_seed,
        Target::Task(dir) => {
            let parent = std::fs::canonicalize(dir).ok()?.parent()?.to_path_buf();
            let text = std::fs::read_to_string(parent.join("suite.toml")).ok()?;
            toml::from_str::<bureau_core::suite::SuiteMeta>(&text)
                .ok()?
                .variant_seed
        }
    }
}

/// The task at `dir`, or `count` instances of it when it is parametrised.
pub fn load_dir(dir: &Path, count: u32, run_seed: u64) -> Result<Vec<Task>, TaskErrors> {
    if is_parametrised(dir) {
        Ok(instances(dir, count, run_seed)?
            .into_iter()
            .map(|i| i.task)
            .collect())
    } else {
        Ok(vec![Task::load(dir)?])
    }
}

/// Render the instance with instance seed `seed` of the task at `dir` into `out` (for
/// inspection: `bureau tasks --variant <seed> <task> --out <dir>`). Returns the values.
pub fn render_to(dir: &Path, seed: u64, out: &Path) -> Result<BTreeMap<String, Value>, TaskErrors> {
    let (base_id, params) = base_of(dir)?;
    let values = params.generate(&base_id, seed)?;
    let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    render::render_into(&base, &base_id, &params, &values, (&base_id, seed, 0), out)?;
    Task::load(out)?;
    Ok(values)
}
