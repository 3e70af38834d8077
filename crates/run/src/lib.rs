//! Bureau's run loop.
//!
//! [`run`] plays every trial — one (task, agent, epoch) — of a run on a bounded pool of
//! worker threads and keeps everything in one resumable run directory (layout in
//! [`rundir`]). [`validate`] proves that tasks are sound: the oracle passes them, the null
//! agent does not, and the verdicts are reproducible.
//!
//! Errors are not failures: a trial whose harness broke (world build, agent error, panic) is
//! `error`, retried, and never scored. A broken check is an `error` verdict and makes its trial
//! `error` too (not retried: the same world breaks the same check). [`rescore`] recomputes the
//! verdicts of a finished run from its stored snapshots and trajectories.

mod attempts;
pub mod budget;
pub mod claim;
pub mod compare;
pub mod feedback;
pub mod lint;
mod manifest;
pub mod mutate;
pub mod replicas;
pub mod rescore;
pub mod rundir;
pub mod scratch;
pub mod shard;
pub mod status;
pub mod trial;
pub mod unpack;
mod validate;
pub mod validate_cache;
mod workers;

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bureau_agents::llm::LlmColleagues;
use bureau_agents::{Agent, AgentCatalog, AgentError, sanitize_name};
use bureau_check::summary::{Summary, summarize};
use bureau_check::{CheckLimits, CheckProgram, Judge, load_checks};
use bureau_core::history::ContextSetting;
use bureau_core::result::{TrialResult, TrialStatus};
use bureau_core::task::Task;
use bureau_core::{TaskError, TaskErrors};
use indicatif::{ProgressBar, ProgressStyle};

pub use compare::{Comparison, TrialDiff, compare_runs};
pub use feedback::{Feedback, FeedbackSettings};
pub use manifest::{
    AgentEntry, FeedbackManifest, JudgeManifest, RUN_SCHEMA, RetrievalManifest, RunManifest,
    VariantsManifest,
};
use manifest::{differs, extended, retrieval_label};
pub use replicas::{ReplicaMode, Replicas};
pub use rescore::{RescoreOptions, RescoreReport, rescore};
pub use rundir::{load_trials, trial_dir};
pub use shard::Shard;
pub use trial::{AttemptOf, AttemptOutcome, ColleagueFactory, Scoring, run_attempt};
pub use validate::{
    VALIDATE_VARIANTS, ValidateOptions, ValidationReport, ValidationRow, validate, validate_on,
    validate_task_with, validate_with,
};

/// Makes an agent from its spec (`oracle`, `null`, `replay:<path>`, ...). [`run`] uses an
/// [`AgentCatalog`] built from the config; [`run_with`] takes another (more agent kinds, tests).
pub type AgentFactory<'a> = dyn Fn(&str) -> Result<Box<dyn Agent>, AgentError> + Sync + 'a;

/// What to run and where.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// Task or suite paths (`path@subset` for a suite's subset).
    pub targets: Vec<String>,
    /// Agent specs.
    pub agents: Vec<String>,
    /// Trials per (task, agent); epochs count from 1.
    pub epochs: u32,
    /// Worker threads.
    pub concurrency: usize,
    /// The run directory.
    pub out: PathBuf,
    /// Extra attempts of a trial whose attempt was `error` (per invocation).
    pub retries: u32,
    /// No progress bar.
    pub quiet: bool,
    /// An agents file (`agents.toml`) declaring named agents the specs may name.
    pub agents_file: Option<PathBuf>,
    /// The model of the spec `llm` (`provider:model`).
    pub model: Option<String>,
    /// The LLM judge of `judge = ...` rubric items: `provider:model` or a named `llm` agent of
    /// the agents file. Answers are cached in `<out>/judge-cache/`.
    pub judge: Option<String>,
    /// The simulated user's feedback rounds (`--feedback`, `--feedback-threshold`); default
    /// none.
    pub feedback: FeedbackSettings,
    /// The model writing the feedback messages (`--feedback-model`: `provider:model` or a
    /// named `llm` agent); default the fixed template. Cached in `<out>/feedback-cache/`.
    pub feedback_model: Option<String>,
    /// The colleagues' reply policy (`--colleagues`): `deterministic` (the default) or
    /// `llm:<provider>:<model>` / a named `llm` agent. Cached in `<out>/colleague-cache/`.
    pub colleagues: Option<String>,
    // -- dialogue history (OdysseyBench) --
    /// How agents see the dialogue history of tasks that ship `history.json` (`--context`);
    /// `None` = the default, [`ContextSetting::Long`].
    pub context: Option<ContextSetting>,
    // -- workspace replicas (issue 5) --
    /// Where trials of `[workspace]` tasks work (`--replicas`): replicas of the generated
    /// tree leased from a pool per workspace (default), or a copy per trial.
    pub replicas: ReplicaMode,
    /// The embeddings model ranking `memory_search` results under `--context rag:..`
    /// (`--embeddings openai:<model>` or a named `llm` agent); `None` = BM25. Cached in
    /// `<out>/embedding-cache/`.
    pub embeddings: Option<String>,
    /// Instances per parametrised task (`--variants`, at least 1) and the run's variant seed
    /// (`--variant-seed`; `None` = each suite's public `variant_seed`, else 0). `None`: the
    /// plan recorded by the run being resumed, else one instance from the suites' seeds.
    pub variants: Option<bureau_variants::Plan>,
    /// Run only this shard of the run's trials (`--shard K/N`, docs/distributed.md).
    pub shard: Option<Shard>,
    /// A trial's claim not refreshed for this long is taken over ([`claim`]): its holder is
    /// presumed dead. Default [`claim::STALE_AFTER`].
    pub claim_stale_after: std::time::Duration,
    /// Every agent's model API limits for the whole run (`--agent-concurrency N`,
    /// `--rpm N`), split across shards ([`budget`]); `agent_budgets` overrides them for one
    /// agent (`--rpm SPEC=N`).
    pub budget: budget::AgentBudget,
    pub agent_budgets: BTreeMap<String, budget::AgentBudget>,
    /// Where trials build their trees (`--scratch`, [`scratch`]): in their own directories
    /// unless a scratch directory (a tmpfs, say) is given.
    pub scratch: scratch::Scratch,
}

impl RunConfig {
    /// One epoch, one worker, one retry, progress shown.
    pub fn new(targets: Vec<String>, agents: Vec<String>, out: PathBuf) -> RunConfig {
        RunConfig {
            targets,
            agents,
            epochs: 1,
            concurrency: 1,
            out,
            retries: 1,
            quiet: false,
            agents_file: None,
            model: None,
            judge: None,
            feedback: FeedbackSettings::default(),
            feedback_model: None,
            colleagues: None,
            context: None,
            replicas: ReplicaMode::default(),
            embeddings: None,
            variants: None,
            shard: None,
            claim_stale_after: claim::STALE_AFTER,
            budget: Default::default(),
            agent_budgets: BTreeMap::new(),
            scratch: scratch::Scratch::default(),
        }
    }
}

/// What a finished run looks like.
#[derive(Debug)]
pub struct RunOutcome {
    pub out: PathBuf,
    pub summary: Summary,
    /// Trials of the run.
    pub total: usize,
    /// Trials played by this invocation.
    pub ran: usize,
    /// Trials found finished in the run directory and skipped.
    pub skipped: usize,
    /// Trials not played because another live process holds their claim ([`claim`]): a
    /// second instance of the same shard, or another run on the same directory.
    pub held_elsewhere: usize,
    pub passed: usize,
    pub failed: usize,
    pub errored: usize,
    /// Tasks not played because of their `skip_reason`: (task id, reason), in target order.
    pub skipped_tasks: Vec<(String, String)>,
    /// Replica resets that failed in this invocation (each such replica was discarded, never
    /// reused; the trials' results stand). Also in `replicas.json`.
    pub replica_errors: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Tasks (or their checks) do not load.
    #[error("{0}")]
    Tasks(TaskErrors),
    #[error("{0}")]
    Agent(#[from] AgentError),
    /// The configuration cannot be run.
    #[error("{0}")]
    Config(String),
    /// The output directory holds another run.
    #[error(
        "{path} holds a different run ({what}) — re-run with the same targets, agents and epochs to resume it, or choose another --out"
    )]
    OtherRun { path: PathBuf, what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Json { path: PathBuf, message: String },
    /// A signal stopped the run: the attempts in progress were recorded as interrupted, and
    /// the same command resumes it.
    #[error(
        "interrupted by {}: {finished} trial(s) finished, {left} left — re-run the same command to finish the run",
        bureau_core::interrupt::name(*signal)
    )]
    Interrupted {
        signal: i32,
        finished: usize,
        left: usize,
    },
}

/// Refuse an output directory that holds files but no run: Bureau writes only into a new or
/// empty directory, or resumes its own run (`run.json`) there. The caches a run makes before
/// its `run.json` (judge, feedback, colleague, embedding) do not count, nor the engine files
/// `bureau submit` writes before any shard starts (`slurm/`, `k8s/`).
fn check_out(out: &Path) -> Result<(), RunError> {
    if out.join(rundir::RUN_JSON).is_file() {
        return Ok(());
    }
    let Ok(entries) = std::fs::read_dir(out) else {
        return Ok(());
    };
    let ours = [
        rundir::JUDGE_CACHE,
        rundir::FEEDBACK_CACHE,
        rundir::COLLEAGUE_CACHE,
        rundir::EMBEDDING_CACHE,
        "slurm",
        "k8s",
    ];
    let mut foreign: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !ours.contains(&n.as_str()))
        // Another shard creating run.json at this moment (rundir::create_json).
        .filter(|n| !(n.starts_with(".run.json.") && n.ends_with(".new")))
        .collect();
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    Err(RunError::Config(format!(
        "{} holds files but no Bureau run (no {}; it has `{}`{}) — Bureau writes only into a new or empty directory or resumes its own run: choose another --out",
        out.display(),
        rundir::RUN_JSON,
        foreign[0],
        if foreign.len() > 1 {
            format!(" and {} more", foreign.len() - 1)
        } else {
            String::new()
        }
    )))
}

/// Every task of `targets` with its compiled checks; all load errors are collected.
pub fn load_with_checks(
    targets: &[String],
    plan: &bureau_variants::Plan,
) -> Result<Vec<(Task, Option<CheckProgram>)>, TaskErrors> {
    let tasks = bureau_variants::load_tasks(targets, plan)?;
    let mut out = Vec::new();
    let mut errors: Vec<TaskError> = Vec::new();
    for task in tasks {
        match load_checks(&task) {
            Ok(p) => out.push((task, p)),
            Err(e) => errors.extend(e.0),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(TaskErrors(errors))
    }
}

/// Run with the built-in agent kinds, the named agents of `config.agents_file` and
/// `config.model` for the spec `llm`.
pub fn run(config: &RunConfig) -> Result<RunOutcome, RunError> {
    run_with_catalog(config, AgentCatalog::new())
}

/// Like [`run`], starting from `catalog` (e.g. one that can also make third-party harness
/// agents: `bureau_harness::catalog()`); the agents file and model of `config` are added to it.
pub fn run_with_catalog(
    config: &RunConfig,
    mut catalog: AgentCatalog,
) -> Result<RunOutcome, RunError> {
    let absolute = RunConfig {
        out: std::path::absolute(&config.out).map_err(rundir::io_err(&config.out))?,
        ..config.clone()
    };
    let config = &absolute;
    check_out(&config.out)?;
    if let Some(path) = &config.agents_file {
        catalog = catalog.load_agents_file(path)?;
    }
    if let Some(model) = &config.model {
        catalog = catalog.with_model(model.clone());
    }
    let judge = match &config.judge {
        Some(spec) => Some(JudgeEntry::make(&catalog, spec, &config.out)?),
        None => None,
    };
    let people = People::make(&catalog, config)?;
    run_full(config, &|spec| catalog.make(spec), judge.as_ref(), &people)
}

// ---- simulated people: the user's feedback writer and LLM colleagues (people.rs) ----
mod people;
pub use people::{ColleaguesEntry, EmbeddingsEntry, JudgeEntry, People};

/// Run, making agents with `factory`; no judge.
pub fn run_with(config: &RunConfig, factory: &AgentFactory<'_>) -> Result<RunOutcome, RunError> {
    run_judged(config, factory, None)
}

/// Run, making agents with `factory` and judging `judge = ...` items with `judge`.
pub fn run_judged(
    config: &RunConfig,
    factory: &AgentFactory<'_>,
    judge: Option<&JudgeEntry>,
) -> Result<RunOutcome, RunError> {
    run_full(config, factory, judge, &People::default())
}

/// Run, making agents with `factory`, judging with `judge`, and with the simulated people of
/// `people` (feedback rounds follow `config.feedback`).
pub fn run_full(
    config: &RunConfig,
    factory: &AgentFactory<'_>,
    judge: Option<&JudgeEntry>,
    people: &People,
) -> Result<RunOutcome, RunError> {
    if config.agents.is_empty() {
        return Err(RunError::Config(
            "no agent given — add --agent oracle (or null, replay:<path>)".into(),
        ));
    }
    if config.epochs == 0 {
        return Err(RunError::Config("epochs must be at least 1".into()));
    }
    let plan = config
        .variants
        .or_else(|| {
            let path = config.out.join(rundir::RUN_JSON);
            path.is_file()
                .then(|| rundir::read_json::<RunManifest>(&path).ok())
                .flatten()?
                .variants
                .map(|v| v.plan())
        })
        .unwrap_or_default();
    if plan.count == 0 {
        return Err(RunError::Config("--variants must be at least 1".into()));
    }
    let loaded = load_with_checks(&config.targets, &plan).map_err(RunError::Tasks)?;
    if loaded.is_empty() {
        return Err(RunError::Config(
            "the targets hold no task — give task directories or suites with tasks".into(),
        ));
    }
    // Tasks with a `skip_reason` are counted and named, never played.
    let (skipped_loaded, loaded): (Vec<_>, Vec<_>) = loaded
        .into_iter()
        .partition(|(t, _)| t.skip_reason.is_some());
    let skipped_tasks: Vec<(String, String)> = skipped_loaded
        .into_iter()
        .map(|(t, _)| (t.id, t.skip_reason.unwrap_or_default()))
        .collect();
    if loaded.is_empty() {
        return Err(RunError::Config(format!(
            "every task of the targets is skipped ({} by their skip_reason) — give tasks that can be run",
            skipped_tasks.len()
        )));
    }

    // -- dialogue history (OdysseyBench) --
    // Absent: the setting recorded by the run being resumed, else the default (long).
    let recorded = || -> Option<ContextSetting> {
        let path = config.out.join(rundir::RUN_JSON);
        if !path.is_file() {
            return None;
        }
        rundir::read_json::<RunManifest>(&path).ok()?.context
    };
    let context = config.context.or_else(recorded).unwrap_or_default();
    let has_history = loaded.iter().any(|(t, _)| t.history.is_some());
    if let ContextSetting::Rag { granularity, .. } = context {
        let missing: Vec<String> = loaded
            .iter()
            .filter_map(|(t, _)| t.history.as_ref()?.supports(granularity).err())
            .collect();
        if !missing.is_empty() {
            return Err(RunError::Config(format!(
                "--context {context} cannot be served: {}",
                missing.join("; ")
            )));
        }
    }
    if people.embeddings.is_some() && !matches!(context, ContextSetting::Rag { .. }) {
        return Err(RunError::Config(format!(
            "--embeddings ranks memory_search results, which only --context rag:<granularity>:<k> offers (this run's context is {context}) — add e.g. --context rag:utterance:5, or drop --embeddings"
        )));
    }
    let retrieval = match (&people.embeddings, context) {
        (Some(e), _) => Some(e.manifest.clone()),
        (None, ContextSetting::Rag { .. }) => Some(RetrievalManifest {
            method: "bm25".into(),
            model: None,
            spec: None,
            definition: None,
        }),
        (None, _) => None,
    };

    let mut agents: Vec<AgentEntry> = Vec::new();
    let mut dirs: BTreeMap<String, String> = BTreeMap::new();
    for spec in &config.agents {
        let agent = factory(spec)?;
        agent.preflight()?;
        let name = agent.name();
        let definition = agent.definition();
        drop(agent);
        // The name results record is the agent's folder, so a glob over result.json files
        // and the folder layout agree; the spec as given stays in run.json.
        let dir = sanitize_name(&name);
        let name = dir.clone();
        if let Some(other) = dirs.insert(dir.clone(), spec.clone()) {
            return Err(RunError::Config(format!(
                "agents `{other}` and `{spec}` would share the directory `{dir}` — give each agent once"
            )));
        }
        agents.push(AgentEntry {
            spec: spec.clone(),
            name,
            dir,
            definition,
        });
    }

    let manifest = RunManifest {
        schema: RUN_SCHEMA.into(),
        bureau_version: env!("CARGO_PKG_VERSION").into(),
        targets: config.targets.clone(),
        agents: agents.clone(),
        epochs: config.epochs,
        tasks: loaded.iter().map(|(t, _)| t.id.clone()).collect(),
        judge: judge.map(JudgeEntry::manifest),
        feedback: config.feedback.enabled().then(|| FeedbackManifest {
            rounds: config.feedback.rounds,
            threshold: config.feedback.threshold,
            model: people.feedback_writer.as_ref().map(JudgeEntry::manifest),
        }),
        colleagues: people.colleagues.as_ref().map(|c| c.manifest.clone()),
        context: has_history.then_some(context),
        replicas: loaded
            .iter()
            .any(|(t, _)| t.workspace.is_some())
            .then_some(config.replicas),
        retrieval: retrieval.filter(|_| has_history),
        variants: loaded
            .iter()
            .any(|(t, _)| t.variant.is_some())
            .then_some(VariantsManifest {
                count: plan.count,
                seed: plan.seed,
            }),
        shards: config.shard.map(|s| s.n),
        budgets: budget::resolve(config.budget, &config.agent_budgets, &config.agents),
    };
    // Every path of the run is absolute from here on: worlds run programs (git) in other
    // working directories, where a relative path would name something else.
    let out = &std::path::absolute(&config.out).map_err(rundir::io_err(&config.out))?;
    check_out(out)?;
    let run_json = out.join(rundir::RUN_JSON);
    std::fs::create_dir_all(out).map_err(rundir::io_err(out))?;
    // Shards may start together: run.json is created by whichever comes first, atomically,
    // and every other compares with it.
    let created = match config.shard {
        Some(_) if !run_json.is_file() => rundir::create_json(&run_json, &manifest)?,
        _ => false,
    };
    if !created && run_json.is_file() {
        let old: RunManifest = rundir::read_json(&run_json)?;
        if let Some(what) = differs(&old, &manifest) {
            return Err(RunError::OtherRun {
                path: out.clone(),
                what,
            });
        }
        if let Some(shard) = config.shard
            && let Some(what) = manifest::shard_differs(&old, &manifest, shard)
        {
            return Err(RunError::OtherRun {
                path: out.clone(),
                what,
            });
        }
        // An agent the run already has keeps the folder and name it was recorded under.
        for agent in agents.iter_mut() {
            if let Some(o) = old.agents.iter().find(|o| o.spec == agent.spec) {
                agent.dir = o.dir.clone();
                agent.name = o.name.clone();
            }
        }
        if let Some(extended) = extended(&old, &manifest) {
            if let Some(n) = old.shards {
                return Err(RunError::OtherRun {
                    path: out.clone(),
                    what: format!(
                        "it is split into {n} shards, so its agents and epochs are fixed: {} × {} epoch(s), not {} × {}",
                        manifest::agent_list(&old),
                        old.epochs,
                        manifest::agent_list(&extended),
                        extended.epochs
                    ),
                });
            }
            // More agents or epochs: the run grows; its finished trials are kept.
            rundir::write_json(&run_json, &extended)?;
        }
    } else if !created {
        rundir::write_json(&run_json, &manifest)?;
    }

    // Every trial of the run, in run order; a shard keeps its part of them.
    // Agents in spec order, so shards given the agents in another order agree.
    let mut by_spec: Vec<&AgentEntry> = agents.iter().collect();
    if config.shard.is_some() {
        by_spec.sort_by(|a, b| a.spec.cmp(&b.spec));
    }
    let mut all = Vec::new();
    for (task, program) in &loaded {
        for agent in &by_spec {
            for epoch in 1..=config.epochs {
                all.push((task, program, *agent, epoch));
            }
        }
    }
    let mine: Vec<bool> = match config.shard {
        Some(shard) => {
            let costs: Vec<u64> = all.iter().map(|(t, ..)| shard::trial_cost(t)).collect();
            shard::partition(&costs, shard.n)
                .into_iter()
                .map(|s| s == shard.k)
                .collect()
        }
        None => vec![true; all.len()],
    };
    let mut jobs = Vec::new();
    let mut skipped = 0;
    for ((task, program, agent, epoch), mine) in all.into_iter().zip(mine) {
        if !mine {
            continue;
        }
        let dir = trial_dir(out, &task.id, &agent.dir, epoch);
        let result = dir.join(rundir::RESULT_JSON);
        if result.is_file() && rundir::read_json::<TrialResult>(&result).is_ok() {
            skipped += 1;
            continue;
        }
        jobs.push(trial::TrialJob {
            task,
            program: program.as_ref(),
            agent_spec: &agent.spec,
            agent_name: &agent.name,
            epoch,
            dir,
        });
    }
    // The costliest trials first (longest processing time first; ties in list order): the
    // run ends soonest when its longest trials are not the last to start.
    jobs.sort_by_key(|j| std::cmp::Reverse(shard::trial_cost(j.task)));
    let total = jobs.len() + skipped;

    let progress = Progress::new(total as u64, skipped as u64, config.quiet);
    let colleague_model: Option<std::sync::Arc<dyn Judge>> =
        people.colleagues.as_ref().map(|c| c.model.clone());
    let make_colleagues = move || -> Box<dyn bureau_world::people::ReplyPolicy> {
        match &colleague_model {
            Some(model) => Box::new(LlmColleagues::new(model.clone())),
            None => Box::new(bureau_world::people::DeterministicPolicy),
        }
    };
    let workers = config.concurrency.max(1).min(jobs.len().max(1));
    // More trials at once than cores: their computing goes through the CPU gate, a core's
    // worth at a time in run order, instead of all of it sharing the cores in lockstep
    // (`bureau_core::cpu`).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let permits = std::env::var("BUREAU_CPU_PERMITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cores);
    let _gate = (workers > permits).then(|| bureau_core::cpu::Permits::set(permits));
    // -- model API limits: this process's part of each agent's budget --
    let budgets = budget::resolve(config.budget, &config.agent_budgets, &config.agents);
    let mut rate_limits = BTreeMap::new();
    let mut caps = BTreeMap::new();
    for (spec, b) in &budgets {
        let share = b.share(config.shard);
        if let Some(limit) = share
            .rpm
            .and_then(bureau_agents::budget::RateLimit::per_minute)
        {
            rate_limits.insert(spec.clone(), std::sync::Arc::new(limit));
        }
        if let Some(c) = share.concurrency {
            caps.insert(spec.clone(), c as usize);
        }
        if let (Some(c), Some(shard)) = (b.concurrency, config.shard)
            && let Some(warning) = budget::oversubscribed(spec, c, shard.n)
            && !config.quiet
        {
            eprintln!("warning: {warning}");
        }
    }
    workers::ensure_open_files(workers)?;
    // -- where the trials build their trees (issue 18) --
    let scratch_dir = scratch::prepare(&config.scratch).map_err(RunError::Config)?;
    // -- workspace replicas (issue 5) --
    // One pool per generated workspace, as many replicas as workers.
    let replicas = Replicas::new(config.replicas, workers);
    let scoring = trial::Scoring {
        replicas: Some(&replicas),
        limits: CheckLimits::default(),
        judge: judge.map(|j| &j.judge as &dyn Judge),
        feedback: Feedback {
            settings: config.feedback,
            writer: people
                .feedback_writer
                .as_ref()
                .map(|w| &w.judge as &dyn Judge),
        },
        colleagues: people
            .colleagues
            .is_some()
            .then_some(&make_colleagues as &ColleagueFactory<'_>),
        context,
        embedder: people.embeddings.as_ref().map(|e| &e.embedder),
        rate_limits: Some(&rate_limits),
        scratch: false,
        trees: scratch_dir.as_ref().map(|d| d.path()),
    };
    let scheduler = budget::Scheduler::new(
        jobs.iter().map(|j| j.agent_spec.to_string()).collect(),
        caps,
    );
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<RunError>> = Mutex::new(None);
    let done = AtomicUsize::new(0);
    // Trials another live process holds (a second instance of this shard, say).
    let elsewhere = AtomicUsize::new(0);
    // Trials another process finished after this one listed them.
    let finished_elsewhere = AtomicUsize::new(0);
    let heartbeat = claim::Heartbeat::default();
    let workers_done = AtomicBool::new(false);
    let fail = |e: RunError| {
        stop.store(true, Ordering::SeqCst);
        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    };
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for _ in 0..workers {
            handles.push(scope.spawn(|| {
                while !stop.load(Ordering::SeqCst) {
                    if bureau_core::interrupt::requested().is_some() {
                        break;
                    }
                    let Some(i) = scheduler.take(&stop) else {
                        break;
                    };
                    let Some(job) = jobs.get(i) else { break };
                    let held = match claim::claim(&job.dir, config.claim_stale_after) {
                        Ok(claim::Claimed::Mine(c)) => c,
                        Ok(claim::Claimed::Held(_)) => {
                            elsewhere.fetch_add(1, Ordering::SeqCst);
                            scheduler.finished(i);
                            continue;
                        }
                        Err(e) => {
                            scheduler.finished(i);
                            fail(e);
                            continue;
                        }
                    };
                    // Finished by another process between the listing and the claim.
                    let result = job.dir.join(rundir::RESULT_JSON);
                    if result.is_file() && rundir::read_json::<TrialResult>(&result).is_ok() {
                        held.release();
                        scheduler.finished(i);
                        finished_elsewhere.fetch_add(1, Ordering::SeqCst);
                        continue;
                    }
                    heartbeat.hold(&held);
                    // Ranked at the CPU gate by its place in the run order: a trial that
                    // started goes before the ones after it (`bureau_core::cpu::ranked`).
                    let ran = bureau_core::cpu::ranked(i as u64, || {
                        trial::run_trial(
                            job,
                            factory,
                            &scoring,
                            config.retries.saturating_add(1),
                            Some(&held),
                        )
                    });
                    heartbeat.drop_claim(&held);
                    held.release();
                    scheduler.finished(i);
                    match ran {
                        Ok(Some(result)) => {
                            progress.finished(&result);
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                        // Interrupted, or taken over: left for a resume or to its new holder.
                        Ok(None) => {}
                        Err(e) => fail(e),
                    }
                }
            }));
        }
        // Claims of running trials are refreshed while any worker runs.
        scope.spawn(|| {
            let mut since = std::time::Instant::now();
            while !workers_done.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                if since.elapsed() >= claim::HEARTBEAT {
                    heartbeat.beat();
                    since = std::time::Instant::now();
                }
            }
        });
        for h in handles {
            let _ = h.join();
        }
        workers_done.store(true, Ordering::SeqCst);
    });
    progress.done();
    let replica_errors = replicas.take_errors();
    let backends = replicas.backends();
    if !backends.is_empty() || !replica_errors.is_empty() {
        let record = serde_json::json!({
            "mode": config.replicas,
            "backends": backends.iter().map(|(k, b)| (k.clone(), b.to_string())).collect::<BTreeMap<_, _>>(),
            "reset_errors": replica_errors,
        });
        let name = match config.shard {
            Some(s) => format!("replicas.shard-{}-of-{}.json", s.k, s.n),
            None => rundir::REPLICAS_JSON.to_string(),
        };
        rundir::write_json(&out.join(name), &record)?;
    }
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if let Some(signal) = bureau_core::interrupt::requested() {
        let finished = done.load(Ordering::SeqCst);
        return Err(RunError::Interrupted {
            signal,
            finished,
            left: jobs.len() - finished,
        });
    }

    // A shard leaves summary.json and report.md to `bureau report`: other shards may be
    // writing beside it.
    let summary = match config.shard {
        Some(_) => summarize(&load_trials(out)?),
        None => write_summary(out)?,
    };
    let trials = load_trials(out)?;
    let count = |s: TrialStatus| trials.iter().filter(|(r, _)| r.status == s).count();
    Ok(RunOutcome {
        out: out.clone(),
        total,
        ran: done.load(Ordering::SeqCst),
        skipped: skipped + finished_elsewhere.load(Ordering::SeqCst),
        held_elsewhere: elsewhere.load(Ordering::SeqCst),
        passed: count(TrialStatus::Passed),
        failed: count(TrialStatus::Failed),
        errored: count(TrialStatus::Error),
        summary,
        skipped_tasks,
        replica_errors,
    })
}

/// Summarise every finished trial of the run directory `out` and (re)write `summary.json`
/// and `report.md` from the stored results alone.
pub fn write_summary(out: &Path) -> Result<Summary, RunError> {
    let trials = load_trials(out)?;
    let mut summary = summarize(&trials);
    // -- dialogue history (OdysseyBench) --
    let run_json = out.join(rundir::RUN_JSON);
    if run_json.is_file() {
        let manifest: RunManifest = rundir::read_json(&run_json)?;
        summary.context = manifest.context.map(|c| c.to_string());
        summary.retrieval = retrieval_label(&manifest);
    }
    rundir::write_json(&out.join(rundir::SUMMARY_JSON), &summary)?;
    let report = bureau_report::render_markdown(&summary, &trials);
    rundir::write_atomic(&out.join(rundir::REPORT_MD), report.as_bytes())?;
    Ok(summary)
}

/// The progress bar: trials done of all, with passed / failed / errored counts and an ETA.
/// When stderr is not a terminal (piped, CI) one plain line per finished trial instead
/// ([`progress_line`]). Nothing when quiet.
struct Progress {
    bar: ProgressBar,
    counts: Mutex<[u64; 3]>,
    lines: bool,
}

/// The line a finished trial prints when stderr is not a terminal: its place in the run,
/// task, agent, epoch, verdict, weighted score (`—` when unscored) and seconds.
fn progress_line(done: u64, total: u64, r: &TrialResult) -> String {
    let status = match r.status {
        TrialStatus::Passed => "passed",
        TrialStatus::Failed => "failed",
        TrialStatus::Error => "error",
    };
    let score = r
        .score
        .as_ref()
        .map_or_else(|| "—".to_string(), |s| format!("{:.3}", s.weighted));
    format!(
        "[{done}/{total}] {} · {} · epoch {} · {status} · score {score} · {:.1} s",
        r.task.id, r.agent, r.epoch, r.wall_seconds
    )
}

impl Progress {
    fn new(total: u64, skipped: u64, quiet: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = if quiet || !terminal {
            ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::hidden())
        } else {
            ProgressBar::new(total)
        };
        if let Ok(style) =
            ProgressStyle::with_template("{pos}/{len} trials · {msg} · ETA {eta} {wide_bar}")
        {
            bar.set_style(style);
        }
        bar.set_position(skipped);
        let p = Progress {
            bar,
            counts: Mutex::new([0; 3]),
            lines: !quiet && !terminal,
        };
        p.show(&[0; 3], skipped);
        p
    }

    fn show(&self, c: &[u64; 3], skipped: u64) {
        let resumed = if skipped > 0 {
            format!(" · {skipped} already done")
        } else {
            String::new()
        };
        self.bar.set_message(format!(
            "{} passed · {} failed · {} errored{resumed}",
            c[0], c[1], c[2]
        ));
    }

    fn finished(&self, result: &TrialResult) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        match result.status {
            TrialStatus::Passed => c[0] += 1,
            TrialStatus::Failed => c[1] += 1,
            TrialStatus::Error => c[2] += 1,
        }
        self.bar.inc(1);
        let skipped = self.bar.position().saturating_sub(c.iter().sum());
        self.show(&c, skipped);
        if self.lines {
            let total = self.bar.length().unwrap_or_default();
            eprintln!("{}", progress_line(self.bar.position(), total, result));
        }
    }

    fn done(&self) {
        self.bar.finish_and_clear();
    }
}
