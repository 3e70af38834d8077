//! One trial: its attempts, each a full pass of the run loop, and the move of the final
//! attempt into the trial directory.
//!
//! The run loop of one attempt: build the world → for each turn: begin the turn (clock,
//! events) → record the prompt → the agent works through a [`ToolSession`] → snapshot →
//! evaluate the turn's items → after the last turn evaluate the `final` items → export the
//! final state. A harness failure anywhere (world, agent error, panic) ends the attempt as
//! `error` with a reason; the verdicts of the turns already done are kept.

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bureau_agents::{Recorder, ToolSession, TurnInput, TurnLimits};
use bureau_check::eval::{CheckLimits, evaluate_judged};
use bureau_check::metrics::task_trial_score;
use bureau_check::{CheckProgram, Judge};
use bureau_core::cpu;
use bureau_core::history::ContextSetting;
use bureau_core::log::Actor;
use bureau_core::result::{
    DepGraphScore, FeedbackRecord, ModelTokens, TrialScore, TrialStatus, TurnFeedback, Usage,
};
use bureau_core::task::{Task, check_rel_path};
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_world::World;
use bureau_world::embed::Embedder;
use bureau_world::memory::MemoryIndex;
use bureau_world::people::ReplyPolicy;

use crate::AgentFactory;
use crate::feedback::{self, Feedback};
use crate::rundir::{
    self, DEPGRAPH_JSON, EVENTS_JSONL, FEEDBACK_JSON, OUTPUTS_JSON, TRAJECTORY_JSONL, VERDICTS_JSON,
};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What one attempt produced.
#[derive(Debug, Clone)]
pub struct AttemptOutcome {
    pub status: TrialStatus,
    /// Why the attempt is `error`.
    pub error: Option<String>,
    /// Absent when the attempt is `error`.
    pub score: Option<TrialScore>,
    pub usage: Usage,
    /// Every verdict reached (also those of an errored attempt, for the record).
    pub verdicts: Vec<Verdict>,
    /// `verdicts.json` exactly as written.
    pub verdicts_json: Vec<u8>,
    pub wall_seconds: f64,
    /// Whether another attempt could end differently. A broken check is deterministic: the
    /// same world gives the same error, so it is not retried.
    pub retryable: bool,
    /// Dependency-graph recognition (issue 5); `None` when the task has no `file_deps`.
    pub depgraph: Option<DepGraphScore>,
    /// The feedback rounds, when the run has a simulated user.
    pub feedback: Option<FeedbackRecord>,
    /// Where the attempt built its trees (world, snapshots, deliverables, mail, calendar)
    /// when not in its own directory: a directory of its own under [`Scoring::trees`], left
    /// for the caller to pack from ([`bureau_world::trial_files::pack_from`]) and delete.
    pub trees: Option<PathBuf>,
}

/// Makes the colleagues' reply policy of one trial (`bureau run --colleagues`).
pub type ColleagueFactory<'a> = dyn Fn() -> Box<dyn ReplyPolicy> + Sync + 'a;

/// How verdicts are reached: the check limits and the LLM judge (for `judge = ...` items);
/// and the simulated people around the agent: the user's feedback rounds and the colleagues'
/// reply policy (default: none, and the world's deterministic colleagues); and how the trial
/// is set up for the agent (the dialogue-history context setting).
#[derive(Clone, Copy, Default)]
pub struct Scoring<'a> {
    pub limits: CheckLimits,
    pub judge: Option<&'a dyn Judge>,
    pub feedback: Feedback<'a>,
    pub colleagues: Option<&'a ColleagueFactory<'a>>,
    // -- dialogue history (OdysseyBench) --
    /// How the agent sees a task's `history.json` (ignored by tasks without one).
    pub context: ContextSetting,
    // -- workspace replicas (issue 5) --
    /// Replica pools for `[workspace]` tasks; `None` builds every world by copying.
    pub replicas: Option<&'a crate::replicas::Replicas>,
    // -- dialogue history: retrieval --
    /// Under `rag`: the embeddings model ranking `memory_search` results (`--embeddings`);
    /// `None` = BM25.
    pub embedder: Option<&'a Arc<dyn Embedder>>,
    /// Each agent's requests-per-minute budget in this process (`--rpm`), by agent spec,
    /// shared by the agent's trials.
    pub rate_limits:
        Option<&'a std::collections::BTreeMap<String, Arc<bureau_agents::budget::RateLimit>>>,
    /// The attempt's files are scratch, thrown away after (`bureau validate`): written
    /// without syncing them to disk.
    pub scratch: bool,
    /// A directory where each attempt builds its trees, in a directory of its own (see
    /// [`AttemptOutcome::trees`]), such as one in memory: the trees are written, read and
    /// deleted many times over, and only their archive needs the run's storage. `None`: in
    /// the attempt's directory.
    pub trees: Option<&'a Path>,
}

// -- dialogue history (OdysseyBench) --
/// Apply the context setting to a freshly built world: under `rag` install the memory
/// service (ranked by `embedder` when given, else BM25); under `long` return the rendered
/// history that goes before turn 1's prompt.
pub fn apply_context(
    task: &Task,
    context: ContextSetting,
    embedder: Option<&Arc<dyn Embedder>>,
    world: &mut World,
) -> Result<Option<String>, String> {
    let Some(history) = &task.history else {
        return Ok(None);
    };
    match context {
        ContextSetting::None => Ok(None),
        ContextSetting::Long => Ok(Some(history.render(task.timezone))),
        ContextSetting::Rag { granularity, k } => {
            let index = match embedder {
                Some(e) => {
                    MemoryIndex::build_embedded(history, granularity, k, task.timezone, e.clone())
                }
                None => MemoryIndex::build(history, granularity, k, task.timezone),
            }
            .map_err(|e| format!("building the memory index ({context}): {e}"))?;
            world.set_memory(Some(index));
            Ok(None)
        }
    }
}

/// The prompt of turn `n` as the agent receives it: under `long`, turn 1's is the history,
/// a `---` line, then the task's prompt.
pub fn turn_prompt(n: u32, prompt: &str, history: Option<&str>) -> String {
    match history {
        Some(h) if n == 1 => format!("{h}\n---\n\n{prompt}"),
        _ => prompt.to_string(),
    }
}

/// Which agent an attempt runs, and the names its files are labelled with.
#[derive(Debug, Clone, Copy)]
pub struct AttemptOf<'a> {
    /// The agent spec the factory makes the agent from.
    pub spec: &'a str,
    /// The agent's name (its folder in the run directory), written into `verdicts.json`.
    pub agent: &'a str,
    /// The epoch, written into `verdicts.json`.
    pub epoch: u32,
}

/// Run one attempt of `task` with the agent `of.spec` in `dir` (which must exist), writing the
/// trial files there. Never panics and never fails: every failure is an `error` outcome.
pub fn run_attempt(
    task: &Task,
    program: Option<&CheckProgram>,
    factory: &AgentFactory<'_>,
    of: AttemptOf<'_>,
    dir: &Path,
    scoring: &Scoring<'_>,
) -> AttemptOutcome {
    let spec = of.spec;
    let started = Instant::now();
    // The trees in a directory of their own under `scoring.trees`, else (also when that
    // directory cannot be made) in the attempt's.
    let scratch_trees = scoring.trees.and_then(|root| {
        tempfile::Builder::new()
            .prefix("trial-")
            .tempdir_in(root)
            .ok()
            .map(tempfile::TempDir::keep)
    });
    let trees: &Path = scratch_trees.as_deref().unwrap_or(dir);
    let mut verdicts: Vec<Verdict> = Vec::new();
    let mut rounds = Rounds::new(task, &scoring.feedback);
    let mut world: Option<Arc<Mutex<World>>> = None;
    let mut error: Option<String> = None;

    let recorder = match Recorder::to_file(&dir.join(TRAJECTORY_JSONL)) {
        Ok(r) => Some(r),
        Err(e) => {
            error = Some(format!(
                "cannot create {}: {e}",
                dir.join(TRAJECTORY_JSONL).display()
            ));
            None
        }
    };
    if let Some(recorder) = &recorder {
        let body = catch_unwind(AssertUnwindSafe(|| {
            drive(
                task,
                program,
                factory,
                spec,
                trees,
                scoring,
                recorder,
                &mut world,
                &mut verdicts,
                &mut rounds,
            )
        }));
        error = match body {
            Ok(Ok(())) => None,
            Ok(Err(reason)) => Some(reason),
            Err(panic) => Some(format!(
                "panic in the harness: {}",
                panic_message(panic.as_ref())
            )),
        };
    }

    // The final state, also after an error (it is what a person debugging the trial wants).
    if let Some(world) = &world {
        let exported = catch_unwind(AssertUnwindSafe(|| {
            export(&lock(world), dir, trees, !scoring.scratch)
        }));
        let failed = match exported {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(format!("exporting the final state: {e}")),
            Err(panic) => Some(format!(
                "panic exporting the final state: {}",
                panic_message(panic.as_ref())
            )),
        };
        if error.is_none() {
            error = failed;
        }
    }
    // Outputs and the dependency graph (issue 5), from the final state and whole trajectory.
    let mut depgraph = None;
    if let (Some(world), Some(recorder)) = (&world, &recorder) {
        let recorded = catch_unwind(AssertUnwindSafe(|| {
            record_outputs(task, &lock(world), &recorder.steps(), dir, !scoring.scratch)
        }));
        match recorded {
            Ok(Ok(d)) => depgraph = d,
            Ok(Err(e)) => {
                if error.is_none() {
                    error = Some(e);
                }
            }
            Err(panic) => {
                if error.is_none() {
                    error = Some(format!(
                        "panic collecting outputs: {}",
                        panic_message(panic.as_ref())
                    ));
                }
            }
        }
    }
    if let Some(e) = recorder.as_ref().and_then(|r| r.sink_error())
        && error.is_none()
    {
        error = Some(format!("writing {TRAJECTORY_JSONL}: {e}"));
    }
    if error.is_none() {
        let evaluated: BTreeSet<&str> = verdicts.iter().map(|v| v.id.as_str()).collect();
        let missing: Vec<&str> = task
            .rubric
            .iter()
            .map(|i| i.id.as_str())
            .filter(|id| !evaluated.contains(id))
            .collect();
        if !missing.is_empty() {
            error = Some(format!(
                "{} rubric item(s) never evaluated: {}",
                missing.len(),
                missing.join(", ")
            ));
        }
    }

    // A broken check leaves the trial's score unknown: counting the item as failed would lie
    // about the agent, dropping it from the denominator would inflate the score (ClawMark's
    // bug). The trial is `error`, excluded from every rate, with the checks named.
    let mut retryable = true;
    if error.is_none() {
        error = broken_checks(&verdicts);
        retryable = error.is_none();
    }

    let entries = bureau_core::verdict::verdict_entries(task, of.agent, of.epoch, &verdicts);
    let mut verdicts_json = serde_json::to_vec_pretty(&entries).unwrap_or_default();
    verdicts_json.push(b'\n');
    if let Err(e) =
        rundir::write_atomic_as(&dir.join(VERDICTS_JSON), &verdicts_json, !scoring.scratch)
        && error.is_none()
    {
        error = Some(e.to_string());
    }
    if let Some(log) = &rounds.log
        && let Err(e) = rundir::write_json_as(&dir.join(FEEDBACK_JSON), log, !scoring.scratch)
        && error.is_none()
    {
        error = Some(e.to_string());
    }

    let mut usage = recorder
        .as_ref()
        .map(|r| usage_of(&r.steps()))
        .unwrap_or_default();
    // -- dialogue history (OdysseyBench) --
    if let Some(world) = &world
        && let Some(memory) = lock(world).memory()
    {
        let e = memory.embedding_usage();
        usage.embedding_requests = e.requests;
        usage.embedding_tokens = e.tokens;
    }
    // ---- simulated people: what their models cost ----
    if let Some(world) = &world {
        usage.colleague_tokens = lock(world).reply_policy().usage().if_any();
    }
    usage.feedback_tokens = rounds.tokens.if_any();
    let (status, score) = match &error {
        Some(_) => (TrialStatus::Error, None),
        None => scored(task, &verdicts),
    };
    AttemptOutcome {
        status,
        error,
        score,
        usage,
        verdicts,
        verdicts_json,
        wall_seconds: started.elapsed().as_secs_f64(),
        retryable,
        depgraph,
        feedback: rounds.record,
        trees: scratch_trees,
    }
}

// --- Outputs and dependency graph (issue 5) ---------------------------------------------------

/// Write `outputs.json` (the trial's collected deliverables) and, when the task has
/// `file_deps`, `depgraph.json`; return the dependency-graph figures.
pub(crate) fn record_outputs(
    task: &Task,
    world: &World,
    steps: &[Step],
    dir: &Path,
    sync: bool,
) -> Result<Option<DepGraphScore>, String> {
    let outputs = bureau_check::outputs::collect_outputs(task, world, steps);
    rundir::write_json_as(&dir.join(OUTPUTS_JSON), &outputs, sync).map_err(|e| e.to_string())?;
    let record = bureau_check::depgraph::trial_depgraph(task, world, steps);
    let path = dir.join(DEPGRAPH_JSON);
    match &record {
        Some(r) => rundir::write_json_as(&path, r, sync).map_err(|e| e.to_string())?,
        None if path.exists() => {
            std::fs::remove_file(&path).map_err(|e| format!("removing {}: {e}", path.display()))?
        }
        None => {}
    }
    Ok(record.map(|r| r.score))
}

/// Why a trial with these verdicts cannot be scored: the checks that broke, if any.
pub(crate) fn broken_checks(verdicts: &[Verdict]) -> Option<String> {
    let broken: Vec<String> = verdicts
        .iter()
        .filter(|v| v.status == VerdictStatus::Error)
        .map(|v| format!("{}: {}", v.id, v.detail.as_deref().unwrap_or("error")))
        .collect();
    (!broken.is_empty()).then(|| {
        format!(
            "{} check(s) broke, so the trial cannot be scored: {}",
            broken.len(),
            broken.join("; ")
        )
    })
}

/// The status and score of a trial whose verdicts are all `passed` or `failed`.
pub(crate) fn scored(task: &Task, verdicts: &[Verdict]) -> (TrialStatus, Option<TrialScore>) {
    let score = task_trial_score(task, verdicts);
    let status = if score.strict {
        TrialStatus::Passed
    } else {
        TrialStatus::Failed
    };
    (status, Some(score))
}

/// The trial's agent; dropped (a harness process stopped and waited for) without holding a
/// CPU permit of the trial.
struct Held(Option<Box<dyn bureau_agents::Agent>>);

impl std::ops::Deref for Held {
    type Target = Box<dyn bureau_agents::Agent>;
    fn deref(&self) -> &Self::Target {
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("the agent is taken only on drop"))
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0
            .as_mut()
            .unwrap_or_else(|| unreachable!("the agent is taken only on drop"))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let agent = self.0.take();
        cpu::waiting(|| drop(agent));
    }
}

#[allow(clippy::too_many_arguments)]
fn drive(
    task: &Task,
    program: Option<&CheckProgram>,
    factory: &AgentFactory<'_>,
    spec: &str,
    trees: &Path,
    scoring: &Scoring<'_>,
    recorder: &Recorder,
    world_slot: &mut Option<Arc<Mutex<World>>>,
    verdicts: &mut Vec<Verdict>,
    rounds: &mut Rounds,
) -> Result<(), String> {
    let mut agent = Held(Some(
        factory(spec).map_err(|e| format!("making agent `{spec}`: {e}"))?,
    ));
    if let Some(limit) = scoring.rate_limits.and_then(|l| l.get(spec)) {
        agent.set_rate_limit(limit.clone());
    }
    // -- workspace replicas (issue 5) --
    let leased = match scoring.replicas {
        // Waiting for a replica is no CPU work (`bureau_core::cpu`).
        Some(r) => cpu::waiting(|| r.lease(task))?,
        None => None,
    };
    let world = match leased {
        Some((lease, base)) => World::build_on_replica(task, &trees.join("world"), lease, base),
        None => World::build(task, &trees.join("world")),
    }
    .map_err(|e| format!("building the world: {e}"))?;
    // -- dialogue history (OdysseyBench) --
    let mut world = world;
    let history_prefix = apply_context(task, scoring.context, scoring.embedder, &mut world)?;
    let world = Arc::new(Mutex::new(world));
    *world_slot = Some(world.clone());
    // ---- simulated colleagues (`--colleagues`) ----
    if let Some(make) = scoring.colleagues {
        lock(&world).set_reply_policy(make());
    }

    // The agent's own work holds no CPU permit of the trial: a harness or a person is waited
    // for; the `llm` agent takes one itself for its computing between model calls.
    match catch_unwind(AssertUnwindSafe(|| {
        cpu::waiting(|| agent.start_trial(task))
    })) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("agent error before turn 1: {e}")),
        Err(panic) => {
            return Err(format!(
                "agent panicked before turn 1: {}",
                panic_message(panic.as_ref())
            ));
        }
    }

    let snapshots = trees.join("snapshots");
    std::fs::create_dir_all(&snapshots).map_err(|e| format!("{}: {e}", snapshots.display()))?;
    // The seeded world (turn 0), so what turn 1 changed can be shown (`bureau view`).
    // Snapshots are not synced: see a turn's, below.
    rundir::write_json_as(
        &snapshots.join("turn-0.json"),
        lock(&world).baseline(),
        false,
    )
    .map_err(|e| format!("snapshot of the seeded world: {e}"))?;
    let turn_limits = TurnLimits::from(&task.limits);
    let last = task.turns.last().map(|t| t.index);
    for turn in &task.turns {
        let n = turn.index;
        lock(&world)
            .begin_turn(turn)
            .map_err(|e| format!("turn {n}: applying the task's events: {e}"))?;
        let prompt = turn_prompt(n, &turn.prompt, history_prefix.as_deref());
        recorder.record(Step {
            turn: n,
            kind: StepKind::Prompt {
                time: turn.at,
                text: prompt.clone(),
            },
        });
        let mut input = TurnInput {
            index: n,
            prompt,
            time: turn.at,
            round: 0,
        };
        // The turn's items (the last turn's with the `final` items), after each round.
        let mut scopes = vec![TurnRef::Turn(n)];
        if Some(n) == last {
            scopes.push(TurnRef::Final);
        }
        loop {
            let session = ToolSession::new(world.clone(), recorder.clone(), n, turn_limits);
            let round = input.round;
            let output = catch_unwind(AssertUnwindSafe(|| {
                cpu::waiting(|| agent.run_turn(&input, &session))
            }));
            // A world tool call that blocked past the turn's limit still holds the world: end
            // the trial without touching it (no snapshot, no export).
            if let Some(why) = session.stalled() {
                *world_slot = None;
                return Err(format!("turn {n}: {why}"));
            }
            let output = match output {
                Ok(Ok(out)) => out,
                Ok(Err(e)) => return Err(format!("turn {n}: agent error: {e}")),
                Err(panic) => {
                    return Err(format!(
                        "turn {n}: agent panicked: {}",
                        panic_message(panic.as_ref())
                    ));
                }
            };
            if let Some(text) = output.final_message {
                recorder.record(Step {
                    turn: n,
                    kind: StepKind::Message { text },
                });
            }
            let w = lock(&world);
            if let Some(why) = w.reply_policy().failure() {
                return Err(format!("turn {n}: a simulated colleague failed: {why}"));
            }
            // -- dialogue history (OdysseyBench) --
            if let Some(why) = w.memory().and_then(|m| m.failure()) {
                return Err(format!(
                    "turn {n}: memory_search could not be served, the embeddings model failed: {why}"
                ));
            }
            let snap = w
                .snapshot()
                .map_err(|e| format!("turn {n}: snapshot: {e}"))?;
            // Not synced: a turn's snapshot only lives until the attempt is packed, and the
            // archive is synced before anything vouches for it (a crash before then leaves an
            // attempt without a result, played again; an attempt that cannot be packed is an
            // error, its trees not taken for a record). Syncing here made every turn of every
            // trial wait on the disk before its next model call.
            rundir::write_json_as(&snapshots.join(format!("turn-{n}.json")), &snap, false)
                .map_err(|e| format!("turn {n}: {e}"))?;
            let steps = recorder.steps();
            let unit: Vec<Verdict> = scopes
                .iter()
                .flat_map(|scope| {
                    evaluate_judged(
                        task,
                        program,
                        &w,
                        &steps,
                        *scope,
                        &scoring.limits,
                        scoring.judge,
                    )
                })
                .collect();
            drop(w);
            // ---- feedback rounds (the simulated user) ----
            let Some(message) = rounds.after(task, n, round, &unit, &scoring.feedback)? else {
                verdicts.extend(unit);
                break;
            };
            // The world of this round stays on record (re-scoring reads it).
            std::fs::rename(
                snapshots.join(format!("turn-{n}.json")),
                snapshots.join(format!("turn-{n}.round-{round}.json")),
            )
            .map_err(|e| format!("turn {n}: keeping the snapshot of round {round}: {e}"))?;
            recorder.record(Step {
                turn: n,
                kind: StepKind::Feedback {
                    round: round + 1,
                    text: message.clone(),
                    failed: unit
                        .iter()
                        .filter(|v| !v.passed())
                        .map(|v| v.id.clone())
                        .collect(),
                },
            });
            input = TurnInput {
                index: n,
                prompt: message,
                time: lock(&world).now(),
                round: round + 1,
            };
        }
    }
    Ok(())
}

// ---- feedback rounds: the per-trial bookkeeping ----

/// The feedback rounds of one attempt: the record for `result.json` and the full log for
/// `feedback.json` (every round's verdicts and the message that followed it).
pub(crate) struct Rounds {
    rounds: u32,
    threshold: f64,
    record: Option<FeedbackRecord>,
    log: Option<Vec<serde_json::Value>>,
    /// What the model writing the messages cost in this attempt.
    tokens: ModelTokens,
}

impl Rounds {
    fn new(task: &Task, feedback: &Feedback<'_>) -> Rounds {
        let on = feedback.settings.enabled();
        let own = feedback.settings.for_task(task);
        Rounds {
            rounds: own.rounds,
            threshold: own.threshold,
            record: on.then(|| FeedbackRecord {
                rounds: own.rounds,
                threshold: own.threshold,
                writer: feedback.writer_name(),
                turns: Vec::new(),
            }),
            log: on.then(Vec::new),
            tokens: ModelTokens::default(),
        }
    }

    /// Record round `round` of turn `n` (its items' verdicts `unit`) and decide: the user's
    /// message when the turn falls short and rounds remain, else `None` (the turn is over).
    /// `Err` when a model writing the message fails.
    fn after(
        &mut self,
        task: &Task,
        n: u32,
        round: u32,
        unit: &[Verdict],
        feedback: &Feedback<'_>,
    ) -> Result<Option<String>, String> {
        let Some(record) = self.record.as_mut() else {
            return Ok(None);
        };
        if unit.is_empty() {
            return Ok(None);
        }
        let score = feedback::round_score(unit, self.threshold);
        let met = score.met;
        if round == 0 {
            record.turns.push(TurnFeedback {
                turn: n,
                rounds: Vec::new(),
            });
        }
        if let Some(t) = record.turns.last_mut() {
            t.rounds.push(score);
        }
        // A broken check is no failure of the agent: nothing to tell it.
        let broken = unit.iter().any(|v| v.status == VerdictStatus::Error);
        let message = if met || broken || round >= self.rounds {
            None
        } else {
            Some(match feedback.writer {
                None => feedback::template_message(task, round + 1, self.rounds, unit),
                Some(w) => {
                    let (m, tokens) =
                        feedback::model_message_counted(w, task, n, unit).map_err(|e| {
                            format!(
                                "turn {n}: the simulated user could not write its feedback: {e}"
                            )
                        })?;
                    self.tokens.add(tokens);
                    m
                }
            })
        };
        if let Some(log) = self.log.as_mut() {
            log.push(serde_json::json!({
                "turn": n,
                "round": round,
                "verdicts": unit,
                "feedback": message,
            }));
        }
        Ok(message)
    }
}

/// `events.jsonl` (in `dir`), `deliverables/`, `mail/` and `calendar/` (in `trees`) of the
/// world's current state.
fn export(world: &World, dir: &Path, trees: &Path, sync: bool) -> Result<(), String> {
    let mut events = Vec::new();
    for entry in world.log() {
        serde_json::to_writer(&mut events, entry).map_err(|e| format!("{EVENTS_JSONL}: {e}"))?;
        events.push(b'\n');
    }
    rundir::write_atomic_as(&dir.join(EVENTS_JSONL), &events, sync).map_err(|e| e.to_string())?;

    let deliverables = trees.join("deliverables");
    std::fs::create_dir_all(&deliverables)
        .map_err(|e| format!("{}: {e}", deliverables.display()))?;
    let changed = world
        .changed_files()
        .map_err(|e| format!("listing changed files: {e}"))?;
    // Only the agent's work: files the task added or replaced and the agent never touched
    // through a tool are not its deliverables. Files no tool call names were written by the
    // agent's own processes (the shell, a harness's native tools): they are its work too.
    let named_by = |actor: Actor| -> Vec<&str> {
        world
            .log()
            .iter()
            .filter(|e| e.actor == actor && e.service == "files")
            .flat_map(|e| {
                ["path", "to"]
                    .into_iter()
                    .filter_map(|k| e.payload.get(k).and_then(|v| v.as_str()))
            })
            .collect()
    };
    let under = |rel: &str, t: &str| {
        rel == t
            || rel
                .strip_prefix(t)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let touched = named_by(Actor::Agent);
    let by_task = named_by(Actor::Task);
    let by_agent =
        |rel: &str| touched.iter().any(|t| under(rel, t)) || !by_task.iter().any(|t| under(rel, t));
    for rel in changed
        .created
        .iter()
        .chain(&changed.modified)
        .filter(|r| by_agent(r))
    {
        check_rel_path(rel).map_err(|e| format!("changed file `{rel}`: {e}"))?;
        let from = world.workspace().join(rel);
        let to = deliverables.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        // Only regular files are copied: a FIFO would block the copy (the manifest never
        // lists one, but the workspace is the agent's).
        match std::fs::symlink_metadata(&from) {
            Ok(m) if m.file_type().is_file() => {}
            _ => continue,
        }
        std::fs::copy(&from, &to)
            .map_err(|e| format!("copying {} to deliverables: {e}", from.display()))?;
    }

    let mail = trees.join("mail");
    std::fs::create_dir_all(&mail).map_err(|e| format!("{}: {e}", mail.display()))?;
    world
        .mail()
        .export_eml(&mail)
        .map_err(|e| format!("exporting mail: {e}"))?;
    world
        .calendar()
        .export_ics(&trees.join("calendar"))
        .map_err(|e| format!("exporting calendars: {e}"))?;
    Ok(())
}

/// Counts of what the agent did, from its trajectory.
pub fn usage_of(steps: &[Step]) -> Usage {
    let mut u = Usage::default();
    for step in steps {
        match &step.kind {
            StepKind::Prompt { .. } => {}
            StepKind::ToolCall { tool, outcome, .. } => {
                u.steps += 1;
                u.tool_calls += 1;
                if outcome.is_error() {
                    u.tool_errors += 1;
                }
                *u.tool_calls_by_tool.entry(tool.clone()).or_default() += 1;
            }
            StepKind::Message { .. } | StepKind::Note { .. } => u.steps += 1,
            // The simulated user's message, like a prompt, is not the agent's step.
            StepKind::Feedback { .. } => {}
            StepKind::LimitReached { limit, .. } => {
                u.limits_hit.push(format!("{}:{limit}", step.turn))
            }
            StepKind::ModelCall(call) => {
                u.steps += 1;
                u.model_calls += 1;
                u.input_tokens += call.usage.input_tokens;
                u.cached_input_tokens += call.usage.cached_input_tokens;
                u.output_tokens += call.usage.output_tokens;
                if let Some(cost) = call.usage.cost_usd {
                    *u.cost_usd.get_or_insert(0.0) += cost;
                }
            }
        }
    }
    u
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

pub(crate) use crate::attempts::{TrialJob, run_trial};

#[cfg(test)]
mod tests {
    use super::*;
    use bureau_core::tool::ToolOutcome;
    use serde_json::json;

    #[test]
    fn usage_counts_calls_errors_and_limits_but_not_prompts() {
        let t = chrono_now();
        let steps = vec![
            Step {
                turn: 1,
                kind: StepKind::Prompt {
                    time: t,
                    text: "p".into(),
                },
            },
            Step {
                turn: 1,
                kind: StepKind::ToolCall {
                    tool: "files_read".into(),
                    args: json!({}),
                    outcome: ToolOutcome::ok(json!({})),
                },
            },
            Step {
                turn: 1,
                kind: StepKind::ToolCall {
                    tool: "files_read".into(),
                    args: json!({}),
                    outcome: ToolOutcome::Error {
                        message: "no".into(),
                    },
                },
            },
            Step {
                turn: 1,
                kind: StepKind::Message { text: "m".into() },
            },
            Step {
                turn: 2,
                kind: StepKind::LimitReached {
                    limit: "max_steps".into(),
                    detail: "d".into(),
                },
            },
        ];
        let u = usage_of(&steps);
        assert_eq!((u.steps, u.tool_calls, u.tool_errors), (3, 2, 1));
        assert_eq!(u.tool_calls_by_tool.get("files_read"), Some(&2));
        assert_eq!(u.limits_hit, vec!["2:max_steps".to_string()]);
    }

    #[test]
    fn usage_sums_model_calls_tokens_and_known_costs() {
        use bureau_core::trajectory::{ModelCall, ModelUsage};
        let call = |input, cached, output, cost| Step {
            turn: 1,
            kind: StepKind::ModelCall(ModelCall {
                provider: "openai".into(),
                model: "m".into(),
                request: json!({}),
                messages_elided: 0,
                tools_elided: false,
                response: json!({}),
                usage: ModelUsage {
                    input_tokens: input,
                    cached_input_tokens: cached,
                    cache_write_tokens: 0,
                    output_tokens: output,
                    cost_usd: cost,
                },
                retries: vec![],
                error: None,
                wall_ms: None,
                budget_wait_ms: None,
            }),
        };
        let u = usage_of(&[call(100, 40, 10, Some(0.25)), call(200, 0, 5, None)]);
        assert_eq!(
            (
                u.steps,
                u.model_calls,
                u.input_tokens,
                u.cached_input_tokens,
                u.output_tokens
            ),
            (2, 2, 300, 40, 15)
        );
        assert_eq!(u.cost_usd, Some(0.25));
        // No priced call: no cost rather than a cost of zero.
        assert_eq!(usage_of(&[call(1, 0, 1, None)]).cost_usd, None);
        assert_eq!(usage_of(&[]).cost_usd, None);
    }

    fn chrono_now() -> bureau_core::time::WorldTime {
        bureau_core::time::parse_world_time(
            "2026-03-02T09:00:00+00:00",
            bureau_core::time::parse_tz("UTC").unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn panic_messages_are_extracted() {
        let p = catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
        assert_eq!(panic_message(p.as_ref()), "boom 1");
    }
}
