//! `bureau validate`: every task proves itself.
//!
//! A task is valid when it loads cleanly (task and checks), its solution uses only world
//! tools, the oracle reaches strict success, the null agent does not and scores at most
//! [`NULL_MAX_WEIGHTED`], and the oracle's verdicts are byte-identical over [`ORACLE_RUNS`]
//! runs. Trials run under the default context setting (`long`); a dialogue history must also
//! index at every granularity it ships units for.

use std::collections::BTreeSet;
use std::path::PathBuf;

use bureau_agents::make_agent;
use bureau_check::{CheckProgram, load_checks};
use bureau_core::result::TrialStatus;
use bureau_core::suite::{Target, display_name};
use bureau_core::task::{OracleKind, Task};
use bureau_world::World;

use crate::trial::{AttemptOf, AttemptOutcome, Scoring, run_attempt};

/// How many times the oracle runs to prove its verdicts are reproducible.
pub const ORACLE_RUNS: usize = 3;
/// The most a null agent may score (weighted) on a valid task.
pub const NULL_MAX_WEIGHTED: f64 = 0.2;

/// One task and what is wrong with it (nothing when valid).
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationRow {
    /// The task id, or its directory name when it does not load.
    pub task: String,
    pub dir: PathBuf,
    pub problems: Vec<String>,
    /// The task's `skip_reason`: it was not played (and is neither valid nor invalid).
    pub skipped: Option<String>,
    /// Where the task's oracle comes from (`None` when the task does not load).
    pub oracle: Option<OracleKind>,
    /// Lint problems when the lint was not asked for: shown, not counted against the task.
    pub warnings: Vec<String>,
    /// Whether the row came from the validation cache ([`crate::validate_cache`]).
    pub cached: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidationReport {
    /// One row per task (or unresolvable target), in target order.
    pub rows: Vec<ValidationRow>,
}

impl ValidationReport {
    /// Rows with at least one problem.
    pub fn offenders(&self) -> Vec<&ValidationRow> {
        self.rows
            .iter()
            .filter(|r| !r.problems.is_empty())
            .collect()
    }

    pub fn is_valid(&self) -> bool {
        self.rows.iter().all(|r| r.problems.is_empty())
    }

    /// Tasks that loaded, were played and have no problem (skipped tasks are not counted).
    pub fn valid_count(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.problems.is_empty() && r.skipped.is_none())
            .count()
    }

    /// Rows read from the validation cache.
    pub fn cached_count(&self) -> usize {
        self.rows.iter().filter(|r| r.cached).count()
    }

    /// Valid tasks by where their oracle comes from (authored, derived, none).
    pub fn valid_by_oracle(&self) -> std::collections::BTreeMap<OracleKind, usize> {
        let mut out = std::collections::BTreeMap::new();
        for r in &self.rows {
            if r.problems.is_empty()
                && r.skipped.is_none()
                && let Some(k) = r.oracle
            {
                *out.entry(k).or_insert(0) += 1;
            }
        }
        out
    }

    /// Skipped tasks counted by reason (sorted by reason).
    pub fn skipped_by_reason(&self) -> std::collections::BTreeMap<String, usize> {
        let mut out = std::collections::BTreeMap::new();
        for r in &self.rows {
            if r.problems.is_empty()
                && let Some(why) = &r.skipped
            {
                *out.entry(why.clone()).or_insert(0) += 1;
            }
        }
        out
    }
}

/// Validate every task of `targets`. A target that is a folder of suites (or tasks), such as
/// `suites`, stands for every suite (task) in it.
/// How `bureau validate` checks.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidateOptions {
    /// Apply the task lint ([`crate::lint`]): the quality gates of the bundled suites.
    pub lint: bool,
    /// Instances validated per parametrised task (at least [`VALIDATE_VARIANTS`]).
    pub variants: u32,
    /// Their variant seed (`None`: the suite's `variant_seed`, else 0).
    pub variant_seed: Option<u64>,
    /// Also play mutants of the oracle's solution ([`crate::mutate`]): a task none of whose
    /// mutants fails an item is invalid; surviving mutants are warnings.
    pub mutations: bool,
    /// The validation cache's directory ([`crate::validate_cache`]; `None`: no cache). Rows
    /// whose inputs are unchanged are read from it instead of validated again.
    pub cache_dir: Option<PathBuf>,
}

impl Default for ValidateOptions {
    fn default() -> ValidateOptions {
        ValidateOptions {
            lint: false,
            variants: VALIDATE_VARIANTS,
            variant_seed: None,
            mutations: false,
            cache_dir: None,
        }
    }
}

/// The fewest instances of a parametrised task `bureau validate` checks.
pub const VALIDATE_VARIANTS: u32 = 5;

/// Validate with the default options (no lint).
pub fn validate(targets: &[String]) -> ValidationReport {
    validate_with(targets, &ValidateOptions::default())
}

pub fn validate_with(targets: &[String], options: &ValidateOptions) -> ValidationReport {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, MAX_WORKERS);
    validate_on(targets, options, workers)
}

/// [`validate_with`] on at most `workers` threads (tasks validated in parallel); the rows are
/// the same, in target order, whatever the number.
pub fn validate_on(
    targets: &[String],
    options: &ValidateOptions,
    workers: usize,
) -> ValidationReport {
    let units = units(targets, options);
    let workers = workers.clamp(1, units.len().max(1));
    // Trials of `[workspace]` tasks run on pooled replicas of the generated workspace, as a
    // run's do (every mode gives the same worlds), instead of a copy per trial: one replica
    // per worker.
    let replicas = crate::replicas::Replicas::new(crate::replicas::ReplicaMode::Auto, workers);
    let cache = options
        .cache_dir
        .clone()
        .map(crate::validate_cache::ValidateCache::new);
    let done = parallel_map(&units, workers, |unit| {
        validate_unit(unit, options, &replicas, cache.as_ref())
    });
    let mut rows: Vec<ValidationRow> = done.into_iter().flatten().collect();
    // Task ids must be unique over all targets: checked on the rows in target order (after
    // the cache, since it depends on the other tasks).
    let mut ids: BTreeSet<String> = BTreeSet::new();
    for row in &mut rows {
        if row.oracle.is_some() && !ids.insert(row.task.clone()) {
            row.problems.insert(
                0,
                format!(
                    "task id `{}` is used by another task of these targets — task ids must be unique",
                    row.task
                ),
            );
        }
    }
    ValidationReport { rows }
}

/// The most tasks validated at once.
const MAX_WORKERS: usize = 16;

/// What one target directory is validated as.
#[derive(Debug)]
enum Unit {
    /// A target that does not resolve: its row.
    Unresolved(ValidationRow),
    Task(PathBuf),
    /// A parametrised task and its variant seed.
    Variants(PathBuf, u64),
}

/// The targets as units in target order (folders of suites or tasks expanded).
fn units(targets: &[String], options: &ValidateOptions) -> Vec<Unit> {
    let mut out = Vec::new();
    let expanded: Vec<String> = targets
        .iter()
        .flat_map(|t| bureau_core::suite::folder_targets(t).unwrap_or_else(|| vec![t.clone()]))
        .collect();
    for spec in &expanded {
        let target = match Target::resolve(spec) {
            Ok(t) => t,
            Err(e) => {
                out.push(Unit::Unresolved(ValidationRow {
                    task: spec.clone(),
                    dir: PathBuf::from(spec),
                    problems: e.0.iter().map(|e| e.to_string()).collect(),
                    skipped: None,
                    oracle: None,
                    warnings: Vec::new(),
                    cached: false,
                }));
                continue;
            }
        };
        let seed = options
            .variant_seed
            .or_else(|| bureau_variants::suite_seed(&target));
        for dir in target.task_dirs() {
            if bureau_variants::is_parametrised(&dir) {
                out.push(Unit::Variants(dir, seed.unwrap_or(0)));
            } else {
                out.push(Unit::Task(dir));
            }
        }
    }
    out
}

/// `f` of every item on `workers` threads; the results in the items' order.
fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if workers <= 1 || items.len() <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        mine.push((i, f(item)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The rows of one unit: from the cache when its key is there, else validated (and stored,
/// unless a failure of the machine rather than of the task was involved).
fn validate_unit(
    unit: &Unit,
    options: &ValidateOptions,
    replicas: &crate::replicas::Replicas,
    cache: Option<&crate::validate_cache::ValidateCache>,
) -> Vec<ValidationRow> {
    use crate::validate_cache::UnitKind;
    let (dir, kind) = match unit {
        Unit::Unresolved(row) => return vec![row.clone()],
        Unit::Task(dir) => (dir, UnitKind::Task),
        Unit::Variants(dir, seed) => (dir, UnitKind::Variants(*seed)),
    };
    let key = cache.and_then(|c| Some((c, c.key(options, dir, kind)?)));
    if let Some((c, key)) = &key
        && let Some(rows) = c.get(key)
    {
        return rows;
    }
    let mut cacheable = true;
    let rows = match kind {
        UnitKind::Variants(seed) => validate_variants(dir, seed, options, replicas, &mut cacheable),
        UnitKind::Task => {
            let mut row = new_row(dir);
            match Task::load(dir) {
                Err(e) => row.problems.extend(e.0.iter().map(|e| e.to_string())),
                Ok(task) => validate_loaded(&task, options, replicas, &mut row, &mut cacheable),
            }
            vec![row]
        }
    };
    if let Some((c, key)) = &key
        && cacheable
    {
        c.put(key, &rows);
    }
    rows
}

fn new_row(dir: &std::path::Path) -> ValidationRow {
    ValidationRow {
        task: display_name(dir),
        dir: dir.to_path_buf(),
        problems: Vec::new(),
        skipped: None,
        oracle: None,
        warnings: Vec::new(),
        cached: false,
    }
}

/// Validate a loaded task (or instance) into `row`; `cacheable` turns false when a failure of
/// the machine may have decided a problem.
fn validate_loaded(
    task: &Task,
    options: &ValidateOptions,
    replicas: &crate::replicas::Replicas,
    row: &mut ValidationRow,
    cacheable: &mut bool,
) {
    row.task = task.id.clone();
    row.oracle = Some(task.oracle);
    match load_checks(task) {
        // A skipped task must still load (task and checks); it is not played.
        Err(e) => row.problems.extend(e.0.iter().map(|e| e.to_string())),
        Ok(_) if task.skip_reason.is_some() => {
            row.skipped = task.skip_reason.clone();
        }
        Ok(program) => {
            let lint = ValidateOptions {
                lint: true,
                ..options.clone()
            };
            let (problems, sure) =
                validate_task_inner(task, program.as_ref(), &lint, Some(replicas));
            *cacheable &= sure;
            for p in problems {
                if (options.lint || !p.starts_with("lint: ")) && !p.starts_with("note: ") {
                    row.problems.push(p);
                } else {
                    row.warnings.push(p);
                }
            }
        }
    }
}

/// A parametrised task: at least [`VALIDATE_VARIANTS`] instances, each validated like a
/// task (one row each), and they must differ in what the agent sees.
fn validate_variants(
    dir: &std::path::Path,
    seed: u64,
    options: &ValidateOptions,
    replicas: &crate::replicas::Replicas,
    cacheable: &mut bool,
) -> Vec<ValidationRow> {
    let mut rows = Vec::new();
    let count = options.variants.max(VALIDATE_VARIANTS);
    let instances = match bureau_variants::instances(dir, count, seed) {
        Ok(i) => i,
        Err(e) => {
            let mut row = new_row(dir);
            row.problems.extend(e.0.iter().map(|e| e.to_string()));
            // Rendering into the cache directory can fail for the machine's reasons.
            *cacheable = false;
            rows.push(row);
            return rows;
        }
    };
    // What the agent sees: the rendered files and the prompts.
    let seen = |i: &bureau_variants::Instance| {
        let prompts: Vec<&str> = i.task.turns.iter().map(|t| t.prompt.as_str()).collect();
        let files: Vec<(&String, &String)> = i
            .rendered
            .files
            .iter()
            .filter(|(p, _)| {
                ["world/", "turns/"].iter().any(|d| p.starts_with(d))
                    || p.as_str() == "history.json"
            })
            .collect();
        // Events as the agent meets them (their own files are among `files`; the instance's
        // directory is cut out of their paths, which differ by instance anyway).
        let dir = i.task.dir.display().to_string();
        let events: Vec<String> = i
            .task
            .turns
            .iter()
            .flat_map(|t| &t.events)
            .map(|e| format!("{:?} {:?}", e.silent, e.kind).replace(&dir, ""))
            .collect();
        serde_json::to_string(&(files, prompts, events)).unwrap_or_default()
    };
    let mut first_seen: std::collections::BTreeMap<String, String> = Default::default();
    for inst in &instances {
        let mut row = new_row(&inst.task.dir);
        validate_loaded(&inst.task, options, replicas, &mut row, cacheable);
        if let Some(other) = first_seen.insert(seen(inst), inst.task.id.clone()) {
            row.problems.push(format!(
                "variant `{}` renders the same files and prompts as `{other}` — its parameters change nothing the agent sees; use them in the prompt or the world files",
                inst.task.id
            ));
        }
        rows.push(row);
    }
    rows
}

/// The problems of one loaded task under `options`.
pub fn validate_task_with(
    task: &Task,
    program: Option<&CheckProgram>,
    options: &ValidateOptions,
    replicas: Option<&crate::replicas::Replicas>,
) -> Vec<String> {
    validate_task_inner(task, program, options, replicas).0
}

/// [`validate_task_with`], and whether the problems are the task's alone (`false` when a
/// failure of the machine — a temporary directory, a trial error that is not a broken check —
/// may have decided them: such results are not cached).
fn validate_task_inner(
    task: &Task,
    program: Option<&CheckProgram>,
    options: &ValidateOptions,
    replicas: Option<&crate::replicas::Replicas>,
) -> (Vec<String>, bool) {
    let mut sure = true;
    let mut problems = if options.lint {
        crate::lint::lint(task)
    } else {
        Vec::new()
    };
    let known: BTreeSet<String> = World::tool_specs().into_iter().map(|s| s.name).collect();
    for (i, calls) in task.solution.iter().enumerate() {
        for call in calls {
            if !known.contains(&call.tool) {
                problems.push(format!(
                    "solution/{}.jsonl calls `{}`, which is not a world tool — use one of the tools of docs/tools.md",
                    i + 1,
                    call.tool
                ));
            } else if !bureau_world::tools::offered(&call.tool, &task.apps) {
                problems.push(format!(
                    "solution/{}.jsonl calls `{}`, but the task's apps ({}) do not include its service — add it to `apps` in task.toml",
                    i + 1,
                    call.tool,
                    task.apps.join(", ")
                ));
            }
        }
    }

    // -- dialogue history (OdysseyBench) --
    // Trials run under the default setting (long); the history must also be searchable at
    // every granularity it ships units for, so that any `rag` run of it can start.
    if let Some(history) = &task.history {
        for g in bureau_core::history::Granularity::ALL {
            if history.supports(g).is_ok()
                && let Err(e) =
                    bureau_world::memory::MemoryIndex::build(history, g, 1, task.timezone)
            {
                problems.push(format!(
                    "{}: cannot index it at the {} granularity: {e}",
                    history.path.display(),
                    g.as_str()
                ));
            }
        }
    }

    let scoring = Scoring {
        replicas,
        // The attempts' files are thrown away with their temporary directory.
        scratch: true,
        ..Scoring::default()
    };
    let attempt = |spec: &str| -> Result<AttemptOutcome, String> {
        let dir = tempfile::Builder::new()
            .prefix("bureau-validate-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        Ok(run_attempt(
            task,
            program,
            &make_agent,
            AttemptOf {
                spec,
                agent: spec,
                epoch: 1,
            },
            dir.path(),
            &scoring,
        ))
    };

    let mut oracle_runs: Vec<AttemptOutcome> = Vec::new();
    let no_oracle = task.oracle == OracleKind::None;
    let has_solution = !no_oracle && task.dir.join("solution").is_dir();
    if !has_solution && !no_oracle {
        problems.push(format!(
            "no solution/ directory ({}) — add solution/<turn>.jsonl with the oracle's tool calls, one {{\"tool\", \"args\"}} line per call (docs/task-format.md)",
            task.dir.join("solution").display()
        ));
    }
    for _ in 0..if has_solution { ORACLE_RUNS } else { 0 } {
        match attempt("oracle") {
            Ok(o) if o.status == TrialStatus::Error => {
                sure &= !o.retryable;
                problems.push(format!(
                    "the oracle's trial errored: {}",
                    o.error.unwrap_or_default()
                ));
                break;
            }
            Ok(o) => oracle_runs.push(o),
            Err(e) => {
                sure = false;
                problems.push(e);
                break;
            }
        }
    }
    if options.mutations
        && oracle_runs
            .first()
            .is_some_and(|o| o.status == TrialStatus::Passed)
    {
        let r = crate::mutate::mutation_test(task, program);
        problems.push(format!(
            "note: mutation: {} of {} mutants killed",
            r.killed, r.mutants
        ));
        if r.mutants > 0 && r.killed == 0 && r.errored.is_empty() {
            problems.push(format!(
                "mutation: none of the {} mutants of the oracle's solution fails an item ({}) — the rubric does not check what the solution does",
                r.mutants,
                r.survivors.iter().map(|m| m.to_string()).collect::<Vec<_>>().join("; ")
            ));
        } else {
            for m in &r.survivors {
                problems.push(format!("note: mutation survived (no item fails): {m}"));
            }
        }
        for (m, e) in &r.errored {
            problems.push(format!(
                "mutation {m}: a check broke on the mutated world: {e}"
            ));
        }
    }
    if let Some(first) = oracle_runs.first() {
        if first.status != TrialStatus::Passed {
            let failed: Vec<String> = first
                .verdicts
                .iter()
                .filter(|v| !v.passed())
                .map(|v| match &v.detail {
                    Some(d) => format!("{} ({})", v.id, d),
                    None => v.id.clone(),
                })
                .collect();
            problems.push(format!("the oracle does not reach strict success; not passed: {} — fix solution/ or the checks", failed.join("; ")));
        }
        for (i, other) in oracle_runs.iter().enumerate().skip(1) {
            if other.verdicts_json != first.verdicts_json {
                let item = first
                    .verdicts
                    .iter()
                    .zip(&other.verdicts)
                    .find(|(a, b)| a != b)
                    .map(|(a, _)| a.id.clone())
                    .unwrap_or_else(|| "(different number of verdicts)".into());
                problems.push(format!("the oracle's verdicts differ between run 1 and run {} (first at item `{item}`) — a check is not deterministic", i + 1));
                break;
            }
        }
    }

    match attempt("null") {
        Err(e) => {
            sure = false;
            problems.push(e);
        }
        Ok(o) if o.status == TrialStatus::Error => {
            sure &= !o.retryable;
            problems.push(format!(
                "the null agent's trial errored: {}",
                o.error.unwrap_or_default()
            ));
        }
        Ok(o) => {
            if options.lint {
                problems.extend(crate::lint::null_passes(&o.verdicts));
            }
            if let Some(score) = &o.score {
                if score.strict {
                    problems.push("the null agent reaches strict success — the checks pass on a world nobody touched".into());
                } else if score.weighted > NULL_MAX_WEIGHTED {
                    let passed: Vec<&str> = o
                        .verdicts
                        .iter()
                        .filter(|v| v.passed())
                        .map(|v| v.id.as_str())
                        .collect();
                    problems.push(format!(
                        "the null agent scores {:.2} weighted (at most {NULL_MAX_WEIGHTED:.2} allowed); passed doing nothing: {} — make those checks require the agent's work",
                        score.weighted,
                        passed.join(", ")
                    ));
                }
            }
        }
    }
    (problems, sure)
}
