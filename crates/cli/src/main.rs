//! `bureau`: run agents on office tasks, validate tasks, write reports.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use bureau_core::TaskErrors;
use bureau_run::{RunConfig, RunError};
use clap::{Args, Parser, Subcommand};

mod import;
mod limits;
mod media;
mod play;
mod submit;
mod tasks;
mod view;

/// Bureau: a workplace simulator and evaluation harness for AI coworker agents.
#[derive(Debug, Parser)]
#[command(name = "bureau", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run agents on tasks and score them (resumable: re-run with the same --out).
    Run(RunArgs),
    /// Check that tasks prove themselves: the oracle passes, the null agent fails, verdicts are reproducible.
    Validate {
        /// Suite or task directories (`suite@subset` for a named subset).
        #[arg(required = true, value_name = "SUITE_OR_TASK")]
        targets: Vec<String>,
        /// Instances validated per parametrised task (at least 5 are always checked to differ).
        #[arg(long, value_name = "N", default_value_t = bureau_run::VALIDATE_VARIANTS, value_parser = clap::value_parser!(u32).range(1..))]
        variants: u32,
        /// The variant seed of the validated instances [default: the suite's variant_seed, else 0].
        #[arg(long, value_name = "SEED")]
        variant_seed: Option<u64>,
        /// Also play mutants of each oracle solution (a step left out, a figure changed, the wrong recipient): a task none of whose mutants fails an item is invalid; survivors are listed.
        #[arg(long)]
        mutations: bool,
        /// Also apply the task lint (the bundled suites' quality gates, docs/suites.md): every
        /// result item names its source, no item passes for the null agent, no figure is
        /// matched as a raw substring in checks.star, every turn is checked.
        #[arg(long)]
        lint: bool,
        /// Validate every task again instead of reusing the rows of tasks whose inputs (the
        /// task's files, its suite.toml, the options, this binary) are unchanged since they were
        /// last validated (the cache is under $BUREAU_CACHE_DIR/validate, else
        /// ~/.cache/bureau/validate).
        #[arg(long)]
        no_cache: bool,
    },
    /// Rewrite report.md and summary.json of a run directory from its stored results.
    Report {
        /// A run directory (the --out of `bureau run`).
        #[arg(value_name = "RUN_DIR")]
        run_dir: PathBuf,
        /// Also write the viewer's pages as self-contained HTML files (every style, chart and picture inline; nothing fetched) into <RUN_DIR>/html, or --html-out.
        #[arg(long)]
        html: bool,
        /// Where --html writes (index.html and one page per trial).
        #[arg(long, value_name = "DIR", requires = "html")]
        html_out: Option<PathBuf>,
    },
    /// How far a run is: its trials done, begun and left, per shard (--shard), and whether its summary is final.
    Status {
        /// A run directory (the --out of `bureau run`).
        #[arg(value_name = "RUN_DIR")]
        run_dir: PathBuf,
    },
    /// Look at runs in the browser: leaderboard, charts, a task × agent heat map, every trial's timeline, verdicts and world changes. Several run directories are compared side by side. Serves 127.0.0.1 only and prints the URL.
    View {
        /// Run directories (the --out of `bureau run`).
        #[arg(required = true, value_name = "RUN_DIR")]
        run_dirs: Vec<PathBuf>,
        /// The port [default: a free one].
        #[arg(long, value_name = "PORT")]
        port: Option<u16>,
    },
    /// Recompute every verdict of a finished run from its stored snapshots and trajectories, without re-running agents.
    Rescore {
        /// A run directory (the --out of `bureau run`).
        #[arg(value_name = "RUN_DIR")]
        run_dir: PathBuf,
        /// Load the tasks from these suites or tasks instead of the targets recorded in run.json.
        #[arg(long = "tasks", value_name = "SUITE_OR_TASK")]
        tasks: Vec<String>,
        /// The LLM judge of `judge = ...` items [default: the run's judge, from run.json]. Answers cached in the run's judge-cache/ are reused.
        #[arg(long, value_name = "PROVIDER:MODEL")]
        judge: Option<String>,
        /// Agents file, when the judge is a named agent of it.
        #[arg(long, value_name = "FILE")]
        agents_file: Option<PathBuf>,
    },
    /// Write packed trials' trees (their trial.zip: snapshots, world, deliverables, mail, calendar) out as plain files again, in place or --to a directory. Every Bureau command reads both layouts.
    Unpack {
        /// Run directories (every trial) or trial directories (trials/<task>/<agent>/<epoch>).
        #[arg(value_name = "DIR", required = true)]
        paths: Vec<PathBuf>,
        /// Copy the one trial given, its files and its archive's entries, into this new or empty directory instead; the trial stays packed.
        #[arg(long, value_name = "DIR")]
        to: Option<PathBuf>,
    },
    /// Play a task yourself in the browser (127.0.0.1, session token): recorded as a trial of agent human:<name>, the human baseline (docs/play.md).
    Play(play::PlayArgs),
    /// Serve an office over MCP on stdio: play a task by hand (--task), or bridge to a running trial's endpoint (--trial).
    Mcp(McpArgs),
    /// List tasks: id, difficulty, category, turns, rubric items, apps.
    Tasks {
        /// Suite or task directories (`suite@subset` for a named subset).
        #[arg(required = true, value_name = "SUITE_OR_TASK")]
        targets: Vec<String>,
        /// Render the instance with this instance seed of one parametrised task into --out, for inspection, and print its parameter values.
        #[arg(long, value_name = "SEED")]
        variant: Option<u64>,
        /// Where --variant renders the instance (a new directory).
        #[arg(long, value_name = "DIR", requires = "variant")]
        out: Option<std::path::PathBuf>,
    },
    /// Generate things: `bureau gen workspace` writes a deterministic persona workspace.
    #[command(subcommand)]
    Gen(GenCommand),
    /// Agents: `bureau agents check <agent>...` checks what each needs before a run.
    #[command(subcommand)]
    Agents(AgentsCommand),
    /// Media for tasks: `bureau media render <media.toml> [--check]` makes pictures, charts, scans, voicemails, clips and mails from a spec (docs/media.md).
    #[command(subcommand)]
    Media(media::MediaCommand),
    /// Import a public benchmark from a local checkout: `bureau import officebench <checkout>`; `bureau import compare` lists the verdicts two scorings of one run disagree on.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Spread one run over a cluster through its own engine: `bureau submit slurm` (an sbatch job array, one shard per element, and a report job) or `bureau submit k8s` (an Indexed Job manifest). See docs/distributed.md.
    #[command(subcommand)]
    Submit(submit::SubmitCommand),
}

#[derive(Debug, Subcommand)]
enum ImportCommand {
    /// Write a Bureau suite from a checkout of OfficeBench (nothing is downloaded): one task per subtask. Exit 0: all imported; 3: some were skipped (skip_reason) or refused (located errors); 2: not an OfficeBench checkout.
    Officebench {
        /// The root of an OfficeBench checkout (it holds tasks/<apps>-<n>/subtasks/<k>.json).
        #[arg(value_name = "CHECKOUT")]
        checkout: PathBuf,
        /// Output suite directory (new, empty, or an earlier import to replace) [default: officebench, or officebench-strict].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Reproduce OfficeBench's own semantics (substring matching) instead of Bureau's typed comparisons, so published numbers compare.
        #[arg(long)]
        strict_original: bool,
    },
    /// List every trial whose verdicts differ between two run directories of the same trajectories (e.g. a run and a copy rescored with `bureau rescore --tasks <strict suite>`). Exit 0 when none differ, 1 when some do.
    Compare {
        /// The first run directory (e.g. scored with the typed import).
        #[arg(value_name = "RUN_A")]
        a: PathBuf,
        /// The second run directory (e.g. rescored with the --strict-original import).
        #[arg(value_name = "RUN_B")]
        b: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
enum AgentsCommand {
    /// Check agents before a run: the agent can be made (agents file, model, key), its
    /// program is installed and answers --version, and its model endpoint accepts
    /// connections. Exits 2 when one cannot work, naming the fix.
    Check {
        /// Agent specs, as for `bureau run --agent` (e.g. claude-code, codex:gpt-5, llm:openai:gpt-4.1-mini, a name of --agents-file).
        #[arg(required = true)]
        agents: Vec<String>,
        /// Agents file declaring named agents.
        #[arg(long)]
        agents_file: Option<PathBuf>,
        /// The model of `llm` (provider:model).
        #[arg(long)]
        model: Option<String>,
    },
}

// ---- bureau gen (issue 5) ----
#[derive(Debug, Subcommand)]
enum GenCommand {
    /// Write a realistic, deterministic persona workspace with its manifest (.bureau/manifest.json: files, planted facts, version chains, derivations).
    Workspace(GenWorkspaceArgs),
}

#[derive(Debug, Args)]
struct GenWorkspaceArgs {
    /// operations-manager, logistics-manager, ai-product-manager, backend-developer or researcher.
    #[arg(long, value_name = "NAME")]
    persona: String,
    /// Exact number of files (the manifest not counted).
    #[arg(long, value_name = "N")]
    files: usize,
    /// Seed: the same persona, files and seed give a byte-identical tree.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory (created; must be empty unless --force).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write into a non-empty --out (same-named files are overwritten, others kept).
    #[arg(long)]
    force: bool,
    /// Grow the workspace to at least this size with the large files the persona keeps
    /// (.npy recordings, .safetensors checkpoints, logs, dumps, archives); they count towards
    /// --files. Bytes, or with a unit: 500MB, 1GiB, 2G.
    #[arg(long, value_name = "SIZE", value_parser = bureau_gen::parse_size)]
    grow_to: Option<u64>,
}

fn cmd_gen(cmd: GenCommand) -> anyhow::Result<ExitCode> {
    let GenCommand::Workspace(a) = cmd;
    let persona: bureau_gen::Persona = match a.persona.parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    if !(bureau_gen::MIN_FILES..=bureau_gen::MAX_FILES).contains(&a.files) {
        eprintln!("error: {}", bureau_gen::GenError::FileCount(a.files));
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    if !a.force
        && let Ok(mut entries) = std::fs::read_dir(&a.out)
        && entries.next().is_some()
    {
        eprintln!(
            "error: {} is not empty; choose an empty or new directory, or pass --force",
            a.out.display()
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let spec = bureau_gen::GenSpec {
        persona,
        files: a.files,
        seed: a.seed,
    };
    let started = std::time::Instant::now();
    let opts = bureau_gen::GenOptions { grow_to: a.grow_to };
    let m = match bureau_gen::generate_with(&spec, &opts, &a.out) {
        Ok(m) => m,
        Err(e @ bureau_gen::GenError::GrowTo { .. }) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(e) => return Err(e.into()),
    };
    println!(
        "{}: {}, {:.1}s",
        a.out.display(),
        m.summary(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
// ---- end bureau gen ----

#[derive(Debug, Args)]
struct RunArgs {
    /// Suite or task directories (`suite@subset` for a named subset).
    #[arg(required = true, value_name = "SUITE_OR_TASK")]
    targets: Vec<String>,
    /// Agent to run: oracle, null, replay:<trajectory.jsonl or trial dir>, llm (with --model), llm:<provider>:<model>, a third-party harness (claude-code, codex, openhands, openclaw, hermes, optionally :<model>; command:'<template>' with {prompt}, {prompt_file}, {mcp_config}, {workspace}, {turn}, {session}), or a name from --agents-file. Repeatable (agents are compared in one run).
    #[arg(long = "agent", required = true, value_name = "KIND")]
    agents: Vec<String>,
    /// Agents file (agents.toml) declaring named agents: model, endpoint, sampling, limits, prices (see docs/agents.md).
    #[arg(long, value_name = "FILE")]
    agents_file: Option<PathBuf>,
    /// Model of `--agent llm`, as provider:model (openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5); keys and base URLs come from OPENAI_API_KEY / OPENAI_BASE_URL, ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL.
    #[arg(long, value_name = "PROVIDER:MODEL")]
    model: Option<String>,
    /// LLM judge of rubric items written `judge = "..."`: provider:model or a named llm agent of --agents-file (temperature 0; answers cached in <out>/judge-cache/).
    #[arg(long, value_name = "PROVIDER:MODEL")]
    judge: Option<String>,
    // ---- simulated people (docs/feedback.md, docs/services/people.md) ----
    /// Feedback rounds per turn: when a turn's weighted score is below --feedback-threshold, the simulated user replies with the items still failed and the agent goes on (AgencyBench; Pass@1, Pass@2 and the rise in summary.json). 0 = off.
    #[arg(long, default_value_t = 0, value_name = "N")]
    feedback: u32,
    /// Weighted score (0–1) of a turn's items that satisfies the simulated user (a task's [feedback] threshold replaces it).
    #[arg(long, default_value_t = bureau_run::feedback::DEFAULT_THRESHOLD, value_name = "SCORE")]
    feedback_threshold: f64,
    /// Model writing the feedback messages: provider:model or a named llm agent of --agents-file (temperature 0; cached in <out>/feedback-cache/) [default: a fixed template].
    #[arg(long, value_name = "MODEL")]
    feedback_model: Option<String>,
    /// How colleagues answer the agent: deterministic (keyword rules of people.toml), or llm:<provider>:<model> / a named llm agent of --agents-file (temperature 0; replies cached in <out>/colleague-cache/).
    #[arg(long, value_name = "POLICY", default_value = "deterministic")]
    colleagues: String,
    /// How agents see the dialogue history of tasks that ship history.json (OdysseyBench): none, long (whole history before the first prompt), or rag:<session|utterance|summary|chunk>:<k> (a memory_search tool, BM25 top-k) [default: long, or the resumed run's setting]. See docs/history.md.
    #[arg(long, value_name = "SETTING", value_parser = parse_context)]
    context: Option<bureau_core::history::ContextSetting>,
    /// Where trials of [workspace] tasks work: auto (overlay replicas of the generated workspace where this machine allows them, else portable ones), overlay, portable, or off (a copy per trial). A pool per workspace holds up to --concurrency replicas, reset after each trial. See docs/replica.md.
    #[arg(long, value_name = "MODE", default_value = "auto")]
    replicas: bureau_run::ReplicaMode,
    /// Where trials build their worlds, snapshots and exports before they are packed into trial.zip: none (each in its own directory of the run), or a directory such as a tmpfs mounted for it — not under /dev, /proc, /sys or /usr, /etc and the like, which an agent's confined shell can read. The run directory gets the archives and records either way. See docs/run-directory.md.
    #[arg(long, value_name = "DIR", default_value = "none")]
    scratch: bureau_run::scratch::Scratch,
    /// Rank memory_search results (--context rag:..) by an OpenAI-compatible embeddings endpoint instead of BM25: openai:<model> (OPENAI_API_KEY / OPENAI_BASE_URL, e.g. openai:text-embedding-3-small) or a named llm agent of --agents-file (its base_url, api_key_env, retry). Vectors cached in <out>/embedding-cache/.
    #[arg(long, value_name = "MODEL")]
    embeddings: Option<String>,
    /// Instances per parametrised task ([params], docs/variants.md), each a distinct rendered task `<id>.v<i>` [default: 1, or the resumed run's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    variants: Option<u32>,
    /// The variant seed the instances are drawn from [default: each suite's public variant_seed, else 0]. Keep a private seed for held-out evaluation.
    #[arg(long, value_name = "SEED")]
    variant_seed: Option<u64>,
    /// Trials per task and agent.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    epochs: u32,
    /// Run only shard K of N of the run's trials (a deterministic partition balanced by the tasks' cost, the same on every machine): every shard writes into the same --out on shared storage; `bureau report` then writes the summary (docs/distributed.md).
    #[arg(long, value_name = "K/N")]
    shard: Option<bureau_run::Shard>,
    /// Trials run at the same time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// At most N trials of one agent at once, for the whole run: N, or SPEC=N for one agent (repeatable). A sharded run splits it across its shards (docs/distributed.md).
    #[arg(long, value_name = "[SPEC=]N", value_parser = limits::parse_agent_limit)]
    agent_concurrency: Vec<(Option<String>, u32)>,
    /// At most N model requests per minute from one agent, for the whole run: N, or SPEC=N for one agent (repeatable). Paces Bureau's own llm agents (each call waits for its slot; the wait is recorded as budget_wait_ms); a sharded run splits it across its shards.
    #[arg(long, value_name = "[SPEC=]N", value_parser = limits::parse_agent_limit)]
    rpm: Vec<(Option<String>, u32)>,
    /// Run directory [default: runs/<timestamp>]. An existing run directory is resumed.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Extra attempts for a trial whose harness failed.
    #[arg(long, default_value_t = 1)]
    retries: u32,
    /// Print summary.json instead of the table.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

#[derive(Debug, Args)]
struct McpArgs {
    /// Play this task by hand: its world's tools plus task_prompt, task_next_turn and task_finish.
    #[arg(
        long,
        value_name = "TASK_DIR",
        required_unless_present = "trial",
        conflicts_with = "trial"
    )]
    task: Option<PathBuf>,
    /// With --task: build the world in this new or empty directory and keep it [default: a temporary directory].
    #[arg(long, value_name = "DIR", requires = "task")]
    world_dir: Option<PathBuf>,
    /// Bridge stdio to a running trial's MCP endpoint (its http://127.0.0.1:<port>/mcp URL).
    #[arg(long, value_name = "URL")]
    trial: Option<String>,
    /// With --trial: the environment variable holding the endpoint's bearer token.
    #[arg(long, value_name = "NAME", default_value = "BUREAU_MCP_TOKEN")]
    token_env: String,
}

/// Exit codes: 0 success, 1 failure (offenders, harness or I/O failure), 2 bad input.
pub(crate) const EXIT_FAILURE: u8 = 1;
pub(crate) const EXIT_BAD_INPUT: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Isolated computations (check evaluations above all) start from a copy of the process as
    // it is now, small and with one thread, however large the run grows (bureau_isolate::job).
    bureau_isolate::start_zygote(bureau_check::warm_up);
    let result = match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Validate {
            targets,
            lint,
            variants,
            variant_seed,
            mutations,
            no_cache,
        } => cmd_validate(
            &targets,
            bureau_run::ValidateOptions {
                lint,
                variants,
                variant_seed,
                mutations,
                cache_dir: (!no_cache).then(bureau_run::validate_cache::ValidateCache::default_dir),
            },
        ),
        Command::Report {
            run_dir,
            html,
            html_out,
        } => cmd_report(&run_dir).and_then(|code| {
            if html {
                view::write_html(&run_dir, html_out)?;
            }
            Ok(code)
        }),
        Command::View { run_dirs, port } => view::cmd_view(run_dirs, port),
        Command::Status { run_dir } => view::cmd_status(&run_dir),
        Command::Rescore {
            run_dir,
            tasks,
            judge,
            agents_file,
        } => cmd_rescore(&run_dir, tasks, judge, agents_file),
        Command::Unpack { paths, to } => view::cmd_unpack(&paths, to.as_deref()),
        Command::Mcp(args) => cmd_mcp(args),
        Command::Play(args) => play::cmd_play(args),
        Command::Tasks {
            targets,
            variant: Some(seed),
            out,
        } => tasks::cmd_render_variant(&targets, seed, out),
        Command::Tasks { targets, .. } => tasks::cmd_tasks(&targets),
        Command::Gen(cmd) => cmd_gen(cmd),
        Command::Media(cmd) => media::cmd_media(cmd),
        Command::Submit(cmd) => submit::cmd_submit(cmd),
        Command::Import(ImportCommand::Officebench {
            checkout,
            out,
            strict_original,
        }) => import::cmd_import_officebench(&checkout, out, strict_original),
        Command::Import(ImportCommand::Compare { a, b }) => import::cmd_import_compare(&a, &b),
        Command::Agents(AgentsCommand::Check {
            agents,
            agents_file,
            model,
        }) => cmd_agents_check(&agents, agents_file.as_deref(), model),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if let Some(errors) = e.downcast_ref::<TaskErrors>() {
                print_task_errors(errors);
                return ExitCode::from(EXIT_BAD_INPUT);
            }
            if let Some(run_error) = e.downcast_ref::<RunError>() {
                match run_error {
                    RunError::Tasks(errors) => {
                        print_task_errors(errors);
                        return ExitCode::from(EXIT_BAD_INPUT);
                    }
                    RunError::Agent(_) | RunError::Config(_) | RunError::OtherRun { .. } => {
                        eprintln!("error: {run_error}");
                        return ExitCode::from(EXIT_BAD_INPUT);
                    }
                    RunError::Interrupted { signal, .. } => {
                        eprintln!("{run_error}");
                        return ExitCode::from(128u8.saturating_add(*signal as u8));
                    }
                    RunError::Io { .. } | RunError::Json { .. } => {}
                }
            }
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// `bureau agents check`: one line per check, `ok`, `FAIL` or `--` (not checkable here).
fn cmd_agents_check(
    specs: &[String],
    agents_file: Option<&Path>,
    model: Option<String>,
) -> anyhow::Result<ExitCode> {
    let mut catalog = bureau_harness::catalog();
    if let Some(path) = agents_file {
        catalog = catalog.load_agents_file(path)?;
    }
    if let Some(m) = model {
        catalog = catalog.with_model(m);
    }
    let mut broken = 0;
    for spec in specs {
        let agent = match catalog.make(spec) {
            Ok(a) => a,
            Err(e) => {
                println!("{spec}\n  FAIL  agent: {e}");
                broken += 1;
                continue;
            }
        };
        println!("{spec}");
        let checks = agent.diagnose();
        for c in &checks {
            let mark = match c.ok {
                Some(true) => "ok  ",
                Some(false) => "FAIL",
                None => "--  ",
            };
            println!("  {mark}  {}: {}", c.what, c.detail);
        }
        if checks.iter().any(|c| c.ok == Some(false)) {
            broken += 1;
        }
    }
    if broken > 0 {
        eprintln!(
            "{broken} of {} agent(s) cannot work as configured — fix what FAIL names",
            specs.len()
        );
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_task_errors(errors: &TaskErrors) {
    let mut err = std::io::stderr().lock();
    for e in &errors.0 {
        let _ = writeln!(err, "{e}");
    }
}

fn parse_context(s: &str) -> Result<bureau_core::history::ContextSetting, String> {
    s.parse()
}

/// How long a run may take to wind down after SIGINT/SIGTERM (harnesses are killed at once;
/// a model call in flight may still be answered) before Bureau exits anyway.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(20);

/// SIGINT, SIGTERM and SIGHUP stop a run cleanly ([`bureau_core::interrupt`]): every harness
/// process group and cgroup is killed, private directories are removed, the attempts in
/// progress are recorded as interrupted and the process exits with 128 + the signal. A second
/// signal, or a run still busy after [`INTERRUPT_GRACE`], exits at once.
pub(crate) fn stop_cleanly_on_signals() {
    extern "C" fn on_signal(signal: libc::c_int) {
        if bureau_core::interrupt::requested().is_some() {
            // SAFETY: `_exit` is async-signal-safe.
            unsafe { libc::_exit(128 + signal) };
        }
        bureau_core::interrupt::request(signal);
    }
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only does async-signal-safe work (an atomic store,
        // or `_exit`).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
    std::thread::spawn(|| {
        loop {
            if let Some(signal) = bureau_core::interrupt::requested() {
                eprintln!(
                    "{} received: stopping harnesses and recording the trials in progress as interrupted…",
                    bureau_core::interrupt::name(signal)
                );
                std::thread::sleep(INTERRUPT_GRACE);
                eprintln!(
                    "the run did not stop within {} s; exiting",
                    INTERRUPT_GRACE.as_secs()
                );
                std::process::exit(128 + signal);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
}

fn cmd_run(args: RunArgs) -> anyhow::Result<ExitCode> {
    stop_cleanly_on_signals();
    let out = match args.out {
        Some(out) => out,
        None => {
            let out = default_run_dir(Path::new("runs"));
            if !args.quiet {
                eprintln!("run directory: {}", out.display());
            }
            out
        }
    };
    let config = RunConfig {
        targets: args.targets,
        agents: args.agents,
        epochs: args.epochs,
        concurrency: args.concurrency as usize,
        out,
        retries: args.retries,
        quiet: args.quiet,
        agents_file: args.agents_file,
        model: args.model,
        judge: args.judge,
        feedback: bureau_run::FeedbackSettings {
            rounds: args.feedback,
            threshold: args.feedback_threshold,
        },
        feedback_model: args.feedback_model,
        colleagues: Some(args.colleagues),
        context: args.context,
        replicas: args.replicas,
        embeddings: args.embeddings,
        variants: (args.variants.is_some() || args.variant_seed.is_some()).then(|| {
            bureau_variants::Plan {
                count: args.variants.unwrap_or(1),
                seed: args.variant_seed,
            }
        }),
        shard: args.shard,
        claim_stale_after: bureau_run::claim::STALE_AFTER,
        budget: Default::default(),
        agent_budgets: Default::default(),
        scratch: args.scratch,
    };
    let mut config = config;
    limits::apply_agent_limits(&mut config, &args.agent_concurrency, &args.rpm);
    // Third-party harnesses (claude-code, codex, command:..., harness agents of the agents
    // file) are made by bureau-harness, which the run crate does not depend on.
    let outcome = bureau_run::run_with_catalog(&config, bureau_harness::catalog())?;
    if let Some(shard) = args.shard {
        eprintln!(
            "shard {shard}: {} of its trial(s) run now, {} already done; when every shard is \
             done, `bureau report {}` writes the run's summary (`bureau status` shows the shards)",
            outcome.ran,
            outcome.skipped,
            outcome.out.display()
        );
    }
    if args.json && args.shard.is_some() {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if args.json {
        let path = outcome.out.join(bureau_run::rundir::SUMMARY_JSON);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        print!("{text}");
    } else {
        print!("{}", bureau_report::render_table(&outcome.summary));
    }
    eprintln!(
        "{} trial(s): {} passed, {} failed, {} errored ({} run now, {} already done) — {}",
        outcome.total,
        outcome.passed,
        outcome.failed,
        outcome.errored,
        outcome.ran,
        outcome.skipped,
        outcome.out.display()
    );
    if outcome.held_elsewhere > 0 {
        eprintln!(
            "{} trial(s) not played: another live process holds them (a claim file in the trial \
             directory, refreshed every {} s) — it is running them; a claim not refreshed for {} s is taken over",
            outcome.held_elsewhere,
            bureau_run::claim::HEARTBEAT.as_secs(),
            config.claim_stale_after.as_secs()
        );
    }
    if !outcome.skipped_tasks.is_empty() {
        let mut by_reason: std::collections::BTreeMap<&str, usize> = Default::default();
        for (_, why) in &outcome.skipped_tasks {
            *by_reason.entry(why.as_str()).or_insert(0) += 1;
        }
        eprintln!(
            "{} task(s) skipped by their skip_reason, not played:",
            outcome.skipped_tasks.len()
        );
        for (why, n) in by_reason {
            eprintln!("  {n} × {why}");
        }
    }
    for e in &outcome.replica_errors {
        eprintln!("warning: a replica reset failed and the replica was discarded: {e}");
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_validate(
    targets: &[String],
    options: bureau_run::ValidateOptions,
) -> anyhow::Result<ExitCode> {
    let report = bureau_run::validate_with(targets, &options);
    let offenders = report.offenders();
    let oracles: Vec<String> = report
        .valid_by_oracle()
        .iter()
        .map(|(k, n)| match k {
            bureau_core::task::OracleKind::None => format!("{n} without an oracle"),
            k => format!("{n} with {} oracle", k.as_str()),
        })
        .collect();
    let skipped = report.skipped_by_reason();
    let skipped_total: usize = skipped.values().sum();
    let tail = if skipped_total == 0 {
        String::new()
    } else {
        let reasons: Vec<String> = skipped.iter().map(|(w, n)| format!("{n} × {w}")).collect();
        format!(
            "; {skipped_total} skipped by their skip_reason ({})",
            reasons.join("; ")
        )
    };
    let mut oracles = oracles;
    let cached = report.cached_count();
    if cached > 0 {
        oracles.push(format!("{cached} from cache"));
    }
    let by_oracle = if oracles.is_empty() {
        String::new()
    } else {
        format!(" ({})", oracles.join(", "))
    };
    let warnings: Vec<(&str, &String)> = report
        .rows
        .iter()
        .flat_map(|r| r.warnings.iter().map(|w| (r.task.as_str(), w)))
        .collect();
    for (task, w) in &warnings {
        eprintln!("warning: {task}: {w}");
    }
    if !warnings.is_empty() {
        eprintln!(
            "warning: {} lint problem(s) above; `bureau validate --lint` makes them errors (the bundled suites are validated so)",
            warnings.len()
        );
    }
    if offenders.is_empty() {
        println!("{} tasks valid{by_oracle}{tail}", report.valid_count());
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![vec!["TASK".to_string(), "PROBLEM".to_string()]];
    for row in &offenders {
        for p in &row.problems {
            rows.push(vec![row.task.clone(), p.clone()]);
        }
    }
    print!("{}", table(&rows));
    println!(
        "{} of {} tasks invalid; {} valid{by_oracle}{tail}",
        offenders.len(),
        report.rows.len(),
        report.valid_count(),
    );
    Ok(ExitCode::from(EXIT_FAILURE))
}

fn cmd_report(dir: &Path) -> anyhow::Result<ExitCode> {
    if !dir.join(bureau_run::rundir::TRIALS).is_dir() {
        bail!(
            "{} is not a run directory (it has no trials/) — give the --out directory of `bureau run`",
            dir.display()
        );
    }
    let summary = bureau_run::write_summary(dir)?;
    print!("{}", bureau_report::render_table(&summary));
    // A run whose shards are still going: say how far it is.
    if let Ok(status) = bureau_run::status::status(dir)
        && !status.complete
    {
        eprint!("{}", status.render());
    }
    eprintln!(
        "wrote {}",
        dir.join(bureau_run::rundir::REPORT_MD).display()
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_rescore(
    dir: &Path,
    tasks: Vec<String>,
    judge: Option<String>,
    agents_file: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let run_json = dir.join(bureau_run::rundir::RUN_JSON);
    if !run_json.is_file() {
        bail!(
            "{} is not a run directory (it has no run.json) — give the --out directory of `bureau run`",
            dir.display()
        );
    }
    let manifest: bureau_run::RunManifest = bureau_run::rundir::read_json(&run_json)?;
    let judge_spec = judge.or_else(|| manifest.judge.as_ref().map(|j| j.spec.clone()));
    let judge = match judge_spec {
        Some(spec) => {
            let mut catalog = bureau_agents::AgentCatalog::new();
            if let Some(path) = &agents_file {
                catalog = catalog.load_agents_file(path)?;
            }
            let entry = bureau_run::JudgeEntry::make(&catalog, &spec, dir)?;
            Some(std::sync::Arc::new(entry.judge) as std::sync::Arc<dyn bureau_check::Judge>)
        }
        None => None,
    };
    let opts = bureau_run::RescoreOptions {
        targets: (!tasks.is_empty()).then_some(tasks),
        judge,
        ..Default::default()
    };
    let report = bureau_run::rescore(dir, &opts)?;
    print!("{}", bureau_report::render_table(&report.summary));
    for (trial, why) in &report.skipped {
        eprintln!("skipped {}: {why}", trial.display());
    }
    eprintln!(
        "{} trial(s) re-scored: {} verdict(s) changed in {} trial(s), {} status change(s), {} skipped — wrote {}",
        report.rescored,
        report.verdicts_changed,
        report.trials_changed,
        report.status_changed,
        report.skipped.len(),
        dir.join(bureau_run::rundir::REPORT_MD).display()
    );
    Ok(ExitCode::SUCCESS)
}

fn cmd_mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = args.trial {
        let token = std::env::var(&args.token_env).map_err(|_| {
            anyhow::anyhow!(
                "${} is not set — put the trial endpoint's bearer token in it, or name another variable with --token-env",
                args.token_env
            )
        })?;
        bureau_mcp::bridge_stdio(&url, token.trim())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(dir) = args.task else {
        bail!("give --task <TASK_DIR> to play a task, or --trial <URL> to bridge to a trial");
    };
    // A parametrised task is played as its first instance under its suite's public seed.
    let seed = bureau_variants::suite_seed(&bureau_core::suite::Target::Task(dir.clone()));
    let task = bureau_variants::load_dir(&dir, 1, seed.unwrap_or(0))?
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("{} holds no task", dir.display()))?;
    let id = task.id.clone();
    let play = match bureau_mcp::Play::start(task, args.world_dir.as_deref()) {
        Ok(play) => play,
        Err(bureau_mcp::McpError::Task(errors)) => return Err(errors.into()),
        Err(e) => return Err(e.into()),
    };
    // stdout carries the protocol: everything for people goes to stderr.
    let kept = match &args.world_dir {
        Some(_) => format!("world in {}", play.root().display()),
        None => "world in a temporary directory (--world-dir keeps it)".to_string(),
    };
    eprintln!(
        "bureau mcp: task `{id}` over stdio — {} tools ({}); {kept}",
        play.office().tool_specs().len(),
        bureau_mcp::PLAY_TOOLS.join(", "),
    );
    play.serve_stdio()?;
    match play.outcome() {
        Some(o) => eprintln!(
            "bureau mcp: `{id}` {}: {}/{} items passed, weighted score {:.2}",
            o.status.as_str(),
            o.score.items_passed,
            o.score.items_total,
            o.score.weighted
        ),
        None => eprintln!("bureau mcp: `{id}` was not finished (task_finish was not called)"),
    }
    Ok(ExitCode::SUCCESS)
}

/// Left-aligned columns separated by two spaces; the last column is not padded.
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A new run directory under `parent`: `<%Y%m%d-%H%M%S>-<4 hex digits>`, the suffix drawn
/// until the name is free, so two runs started in the same second never share a directory.
fn default_run_dir(parent: &Path) -> PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S").to_string();
    let mut rng = fastrand::Rng::new();
    loop {
        let dir = parent.join(format!("{stamp}-{:04x}", rng.u16(..)));
        if std::fs::symlink_metadata(&dir).is_err() {
            return dir;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn tables_align_columns() {
        let rows = vec![
            vec!["ID".to_string(), "N".to_string()],
            vec!["long-id".to_string(), "3".to_string()],
        ];
        assert_eq!(table(&rows), "ID       N\nlong-id  3\n");
    }

    #[test]
    fn default_run_dirs_started_in_the_same_second_differ() {
        let tmp = tempfile::tempdir().unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let d = default_run_dir(tmp.path());
            std::fs::create_dir(&d).unwrap();
            assert!(seen.insert(d));
        }
    }
}
