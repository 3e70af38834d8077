//! [`CommandAgent`]: a third-party harness run headless, one process per turn, against the
//! trial's MCP endpoint.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bureau_agents::doctor::Check;
use bureau_agents::harness::HarnessDef;
use bureau_agents::llm::{Price, cost_usd};
use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput};
use bureau_core::task::Task;
use bureau_core::trajectory::{ModelCall, ModelUsage, StepKind};
use bureau_mcp::TrialEndpoint;
use bureau_world::World;
use serde_json::{Value, json};

use crate::adapter::{self, Endpoint, Harness, Vars};
use crate::process::{self, Spawn};
use crate::stream::{Event, Format, HarnessUsage};

/// Characters of stderr quoted in an error.
const ERROR_TAIL: usize = 2000;

/// Lines of output outside the harness's format kept in the trajectory, per turn.
const UNPARSED_KEPT: usize = 20;

/// How long `<program> --version` may take (OpenHands's CLI takes 7–27 s to start: it imports
/// its whole SDK, and LiteLLM may first try to fetch a price table).
const VERSION_TIMEOUT: Duration = Duration::from_secs(45);

/// How long reading a harness's transcript after a turn may take.
const TRANSCRIPT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long checking that Hermes's Python imports `mcp` may take.
const MCP_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// A third-party harness as a Bureau agent.
///
/// On its first turn it starts a [`TrialEndpoint`] on the trial's world and writes the MCP
/// configuration for it (URL and bearer token) into a private directory outside the
/// workspace. Each turn it hands the endpoint the turn's session, runs the harness with the
/// workspace as working directory, records what the harness's output says it did, and takes
/// the session back.
pub struct CommandAgent {
    name: String,
    def: HarnessDef,
    harness: Harness,
    format: Format,
    template: Vec<String>,
    trial: Option<Trial>,
}

struct Trial {
    endpoint: TrialEndpoint,
    /// Private: the MCP configuration, prompt files, a private home. Removed on drop.
    dir: tempfile::TempDir,
    workspace: PathBuf,
    mcp_config: PathBuf,
    env: BTreeMap<String, String>,
    session: Option<String>,
    trial_session: String,
    /// The session and its running total of usage after the previous turn, for harnesses that
    /// report running totals ([`Harness::cumulative_usage`]).
    usage_total: Option<(String, HarnessUsage)>,
}

impl std::fmt::Debug for CommandAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandAgent")
            .field("name", &self.name)
            .field("harness", &self.harness.as_str())
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

impl CommandAgent {
    /// The agent `name` running the harness `def` describes.
    pub fn new(name: &str, def: HarnessDef) -> Result<CommandAgent, AgentError> {
        let harness = Harness::parse(&def.harness).ok_or_else(|| {
            AgentError::Config(format!(
                "agent `{name}`: unknown harness `{}` — use one of: {}",
                def.harness,
                bureau_agents::harness::HARNESSES.join(", ")
            ))
        })?;
        let format = match &def.format {
            Some(f) => Format::parse(f).ok_or_else(|| {
                AgentError::Config(format!(
                    "agent `{name}`: unknown output format `{f}` — use one of: {}",
                    bureau_agents::harness::FORMATS.join(", ")
                ))
            })?,
            None => harness.format(),
        };
        let template = harness.template(&def);
        if template.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(AgentError::Config(format!(
                "agent `{name}`: the command is empty — give the program and its arguments"
            )));
        }
        Ok(CommandAgent {
            name: name.to_string(),
            def,
            harness,
            format,
            template,
            trial: None,
        })
    }

    /// The command template (placeholders unexpanded; never the token).
    pub fn template(&self) -> &[String] {
        &self.template
    }

    pub fn format(&self) -> Format {
        self.format
    }

    fn program(&self) -> &str {
        self.template.first().map_or("", String::as_str)
    }

    /// Where the program is: the template's first word, as a path when it has a `/`, else
    /// looked up on the agent's `PATH` (its `env`, else Bureau's). `None` when it is not an
    /// executable file there.
    pub fn locate(&self) -> Option<PathBuf> {
        use std::os::unix::fs::PermissionsExt;
        let program = self.program();
        let runnable = |p: &std::path::Path| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        if program.contains('/') {
            let p = PathBuf::from(program);
            return runnable(&p).then_some(p);
        }
        let path = self
            .def
            .env
            .get("PATH")
            .map(std::ffi::OsString::from)
            .or_else(|| std::env::var_os("PATH"))?;
        std::env::split_paths(&path)
            .map(|d| d.join(program))
            .find(|p| runnable(p))
    }

    /// `<program> --version`, first line, when the program answers in time.
    pub fn version(&self) -> Option<String> {
        let dir = tempfile::tempdir().ok()?;
        let argv = vec![self.program().to_string(), "--version".to_string()];
        // The agent's own environment: its PATH, its Python or Node, its settings — and, for
        // Hermes and OpenHands, which run with a private home, a throwaway one (Hermes's
        // `--version` writes an update check into `~/.hermes`).
        let mut env = self.def.env.clone();
        if matches!(self.harness, Harness::Hermes | Harness::OpenHands) {
            let home = dir.path().join("home");
            for (k, v) in [
                ("HOME", home.clone()),
                ("HERMES_HOME", home.join(".hermes")),
                ("OPENHANDS_PERSISTENCE_DIR", home.join(".openhands")),
            ] {
                env.entry(k.to_string())
                    .or_insert_with(|| v.to_string_lossy().into_owned());
            }
            // As it runs (adapter::harness_env): LiteLLM's bundled price table, not a fetch.
            env.entry("LITELLM_LOCAL_MODEL_COST_MAP".into())
                .or_insert_with(|| "True".into());
        }
        let mut out = String::new();
        let done = process::run(
            &Spawn {
                argv: &argv,
                cwd: dir.path(),
                env: &env,
                deadline: VERSION_TIMEOUT,
                entry: None,
            },
            |line| {
                if out.is_empty() && !line.trim().is_empty() {
                    out = line.trim().to_string();
                }
            },
        )
        .ok()?;
        (done.status.is_some_and(|s| s.success()) && !out.is_empty()).then_some(out)
    }

    /// Whether the Hermes at `program` can load MCP servers: its Python imports `mcp` (an
    /// optional dependency; without it Hermes silently starts without Bureau's tools).
    fn hermes_mcp(&self, program: &std::path::Path) -> Result<String, String> {
        let Some(python) = adapter::hermes_python(program) else {
            // Not a pip-installed script (a wrapper of one's own): nothing to check here.
            return Ok(format!(
                "{} names no Python interpreter: not checked",
                program.display()
            ));
        };
        let dir = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
        let argv = adapter::hermes_mcp_probe(&python);
        let done = process::run(
            &Spawn {
                argv: &argv,
                cwd: dir.path(),
                env: &self.def.env,
                deadline: MCP_PROBE_TIMEOUT,
                entry: None,
            },
            |_| {},
        );
        let fix = format!(
            "install it beside Hermes with `{} -m pip install 'hermes-agent[mcp]==0.19.0'` (or `pip install mcp` into Hermes's environment)",
            python.display()
        );
        match done {
            Ok(d) if d.status.is_some_and(|s| s.success()) => Ok(format!(
                "{} imports `mcp`: Hermes loads Bureau's MCP server",
                python.display()
            )),
            Ok(d) => Err(format!(
                "Hermes's Python {} cannot import `mcp` (Hermes would run without Bureau's tools, silently){} — {fix}",
                python.display(),
                d.stderr_tail
                    .trim()
                    .lines()
                    .last()
                    .map(|l| format!(": {l}"))
                    .unwrap_or_default()
            )),
            Err(e) => Err(format!(
                "cannot run Hermes's Python {}: {e} — {fix}",
                python.display()
            )),
        }
    }

    fn start(&mut self, world: &Arc<Mutex<World>>) -> Result<&mut Trial, AgentError> {
        if self.trial.is_none() {
            let endpoint = TrialEndpoint::start(world.clone()).map_err(|e| {
                AgentError::Failed(format!("starting the trial's MCP endpoint: {e}"))
            })?;
            let (workspace, entry) = {
                let w = world.lock().unwrap_or_else(|p| p.into_inner());
                (w.workspace().to_path_buf(), w.workspace_entry().cloned())
            };
            // Owner only: it holds the bearer token (mcp.json) and the prompts.
            let dir = tempfile::Builder::new()
                .prefix("bureau-harness-")
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .tempdir()
                .map_err(|e| AgentError::Failed(format!("creating a private directory: {e}")))?;
            if dir.path().starts_with(&workspace) {
                return Err(AgentError::Failed(format!(
                    "the private directory {} is inside the workspace — set TMPDIR outside {}",
                    dir.path().display(),
                    workspace.display()
                )));
            }
            let authorization = endpoint.authorization();
            // The workspace as the harness sees it: inside a replica's namespaces, the merged
            // directory's own path (docs/replica.md).
            let workspace = entry
                .as_ref()
                .map_or(workspace, |e| e.inner_path().to_path_buf());
            let mcp_config = adapter::write_mcp_config(
                self.harness,
                dir.path(),
                &workspace,
                &Endpoint {
                    url: &endpoint.url,
                    authorization: &authorization,
                },
                &self.def,
            )?;
            let env = adapter::harness_env(
                self.harness,
                dir.path(),
                &workspace,
                &endpoint.token,
                &self.def,
            );
            let trial_session = format!(
                "bureau-{}",
                dir.path()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
                    .trim_start_matches("bureau-harness-")
            );
            self.trial = Some(Trial {
                endpoint,
                dir,
                workspace,
                mcp_config,
                env,
                session: None,
                trial_session,
                usage_total: None,
            });
        }
        self.trial
            .as_mut()
            .ok_or_else(|| AgentError::Failed("the trial did not start".into()))
    }
}

impl Agent for CommandAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn preflight(&self) -> Result<(), AgentError> {
        let Some(program) = self.locate() else {
            let where_ = if self.program().contains('/') {
                "does not exist or is not executable".to_string()
            } else {
                "is not installed (not on PATH)".to_string()
            };
            return Err(AgentError::Config(format!(
                "agent `{}`: the program `{}` {where_} — {}",
                self.name,
                self.program(),
                self.harness.install_hint()
            )));
        };
        if let Some(why) = self.harness.missing_settings(&self.def) {
            return Err(AgentError::Config(format!("agent `{}`: {why}", self.name)));
        }
        if self.harness == Harness::Hermes
            && let Err(why) = self.hermes_mcp(&program)
        {
            return Err(AgentError::Config(format!("agent `{}`: {why}", self.name)));
        }
        Ok(())
    }

    /// The program (where it is), its version, and the model endpoint it will use.
    fn diagnose(&self) -> Vec<Check> {
        let mut checks = Vec::new();
        let program = match self.locate() {
            Some(p) => {
                checks.push(Check::ok("program", p.display().to_string()));
                p
            }
            None => {
                checks.push(match self.preflight() {
                    Err(e) => Check::failed("program", e.to_string()),
                    Ok(()) => Check::failed("program", "not found"),
                });
                return checks;
            }
        };
        checks.push(match self.version() {
            Some(v) => match (self.harness.verified_version(), version_number(&v)) {
                (Some(verified), Some(found))
                    if version_key(&found) < version_key(verified) =>
                {
                    Check::failed(
                        "version",
                        format!(
                            "{v}: older than {verified}, the version Bureau's {} adapter is verified with (its output may not be read) — {}",
                            self.harness.as_str(),
                            self.harness.install_hint()
                        ),
                    )
                }
                _ => Check::ok("version", v),
            },
            None if self.harness == Harness::Command => Check::unchecked(
                "version",
                format!("`{} --version` gave no version", self.program()),
            ),
            None => Check::failed(
                "version",
                format!(
                    "`{} --version` gave no version within {} s — the installation may be broken or too old; {}",
                    self.program(),
                    VERSION_TIMEOUT.as_secs(),
                    self.harness.install_hint()
                ),
            ),
        });
        if let Some(why) = self.harness.missing_settings(&self.def) {
            checks.push(Check::failed("settings", why));
        }
        if self.harness == Harness::Hermes {
            checks.push(match self.hermes_mcp(&program) {
                Ok(detail) => Check::ok("mcp support", detail),
                Err(why) => Check::failed("mcp support", why),
            });
        }
        let (vars, default) = self.harness.endpoint_vars();
        let set = vars.iter().find_map(|v| {
            self.def
                .env
                .get(*v)
                .cloned()
                .or_else(|| std::env::var(v).ok())
                .filter(|u| !u.trim().is_empty())
                .map(|u| (*v, u))
        });
        checks.push(match (set, default) {
            (Some((var, url)), _) => bureau_agents::doctor::endpoint(&url, &format!("`{var}`")),
            (None, Some(url)) => {
                bureau_agents::doctor::endpoint(url, "the harness's default endpoint")
            }
            (None, None) if vars.is_empty() => Check::unchecked(
                "model endpoint",
                "a command harness: its model settings are its own",
            ),
            (None, None) if self.harness == Harness::OpenHands => Check::unchecked(
                "model endpoint",
                "LLM_BASE_URL is not set: LiteLLM calls the model's provider at its own endpoint",
            ),
            (None, None) => Check::failed(
                "model endpoint",
                format!(
                    "none set — give {} in the agent's `env` (or the environment)",
                    vars.join(" or ")
                ),
            ),
        });
        checks
    }

    fn start_trial(&mut self, _task: &Task) -> Result<(), AgentError> {
        self.trial = None;
        Ok(())
    }

    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        let harness = self.harness;
        let format = self.format;
        let template = self.template.clone();
        let model = self.def.model.clone();
        let recorded_model = harness.model(&self.def);
        let agent_wall = self.def.wall_seconds.map(Duration::from_secs);
        let program = self.program().to_string();
        let price = self.def.price.clone();
        let located = self.locate();
        let trial = self.start(tools.world())?;
        // Read each turn: a replica's entry belongs to the generation the world is on. The
        // harness sees the workspace at the entry's inner path, else at the world's path.
        let (view, entry, tz) = {
            let w = tools.world().lock().unwrap_or_else(|p| p.into_inner());
            (
                w.workspace().to_path_buf(),
                w.workspace_entry().cloned(),
                w.timezone(),
            )
        };
        // The office's date and time open the prompt: a harness otherwise takes the
        // machine's date for "today".
        let prompt = turn.text(tz);
        let seen = entry
            .as_ref()
            .map_or_else(|| view.clone(), |e| e.inner_path().to_path_buf());
        if seen != trial.workspace {
            return Err(AgentError::Failed(format!(
                "the workspace moved from {} to {} during the trial — the harness was configured for the first",
                trial.workspace.display(),
                seen.display()
            )));
        }

        let prompt_file = trial
            .dir
            .path()
            .join(format!("turn-{}.prompt.md", turn.index));
        adapter::write_private(&prompt_file, &prompt)?;
        let vars = Vars {
            prompt,
            prompt_file,
            mcp_config: trial.mcp_config.clone(),
            mcp_url: trial.endpoint.url.clone(),
            workspace: trial.workspace.clone(),
            turn: turn.index,
            session: trial.session.clone(),
            trial_session: trial.trial_session.clone(),
            model: model.clone(),
        };
        let argv = adapter::expand(&template, &vars);
        let mut deadline = tools.time_left();
        if let Some(w) = agent_wall {
            deadline = deadline.min(w);
        }
        if deadline.is_zero() {
            tools.stop("wall_seconds", "no time was left for the turn");
            return Ok(TurnOutput::default());
        }

        if let Some(sig) = bureau_core::interrupt::requested() {
            return Err(AgentError::Failed(format!(
                "interrupted: Bureau was asked to stop ({}) before the harness started",
                bureau_core::interrupt::name(sig)
            )));
        }
        trial
            .endpoint
            .set_session(Some(Arc::new(tools.share())))
            .map_err(|e| AgentError::Failed(format!("serving the turn over MCP: {e}")))?;
        let mut parser = format.parser();
        let mut transcript = Transcript::new(tools, harness.as_str());
        if harness.cumulative_usage() {
            transcript.usage_before = trial.usage_total.clone();
        }
        let ran = process::run(
            &Spawn {
                argv: &argv,
                cwd: &view,
                env: &trial.env,
                deadline,
                entry: entry.as_ref(),
            },
            |line| {
                for event in parser.line(line) {
                    transcript.event(event);
                }
            },
        );
        // The turn is over for the world, whatever happened to the process.
        let cleared = trial.endpoint.set_session(None);
        let finished = ran.map_err(|e| {
            AgentError::Failed(format!(
                "cannot start `{program}`: {e} — install the harness or put it on PATH (the agent runs {})",
                argv.first().map_or("", String::as_str)
            ))
        })?;
        cleared.map_err(|e| AgentError::Failed(format!("ending the turn over MCP: {e}")))?;
        for event in parser.finish(&finished.stderr_tail) {
            transcript.event(event);
        }
        // A harness stopped before it printed its session (OpenHands and Hermes print it last):
        // the one it last wrote to in the trial's private store, so that the turn's usage is
        // read and the next turn resumes it.
        if transcript.session.is_none()
            && let Some(latest) = adapter::latest_session(harness, &trial.env, located.as_deref())
        {
            let found = match latest {
                adapter::LatestSession::Known(id) => Some(id),
                adapter::LatestSession::Command(argv) => {
                    let mut id = String::new();
                    let ran = process::run(
                        &Spawn {
                            argv: &argv,
                            cwd: trial.dir.path(),
                            env: &trial.env,
                            deadline: TRANSCRIPT_TIMEOUT,
                            entry: None,
                        },
                        |line| {
                            if id.is_empty() && !line.trim().is_empty() {
                                id = line.trim().to_string();
                            }
                        },
                    );
                    ran.ok()
                        .filter(|d| d.status.is_some_and(|s| s.success()))
                        .and(Some(id))
                        .filter(|id| !id.is_empty())
                }
            };
            if let Some(id) = found {
                transcript.event(Event::Warning(format!(
                    "{} printed no session id (it was stopped before the end of its output); its latest session in the trial's private store is {id}, read for the turn's usage and resumed next turn",
                    harness.as_str()
                )));
                transcript.event(Event::Session(id));
            }
        }
        // The part of the turn the harness keeps apart from its output (OpenClaw's transcript,
        // OpenHands's usage, Hermes's messages and usage).
        if let Some(session) = transcript.session.clone()
            && let Some(source) = adapter::after_turn(
                harness,
                trial.dir.path(),
                &trial.env,
                located.as_deref(),
                &session,
            )
        {
            for event in read_transcript(&source, trial, &mut *parser, &session) {
                transcript.event(event);
            }
        }
        // A model neither the harness's output nor the agent names: where the harness keeps it.
        if transcript.model.is_none()
            && recorded_model.is_none()
            && let Some(session) = &transcript.session
        {
            transcript.model = harness.session_model(&trial.env, session);
        }
        let outcome = transcript.finish(&argv, &recorded_model, price.as_ref(), &finished);
        if let Some(session) = &outcome.session {
            trial.session = Some(session.clone());
        }
        if let (Some(session), Some(total)) = (&outcome.session, outcome.usage_total) {
            trial.usage_total = Some((session.clone(), total));
        }

        if finished.interrupted {
            // Not the agent's doing: the attempt is recorded as interrupted, never scored.
            return Err(AgentError::Failed(format!(
                "interrupted: Bureau was asked to stop ({}) and killed {} with its whole process group",
                bureau_core::interrupt::requested()
                    .map_or_else(|| "signal".to_string(), bureau_core::interrupt::name),
                harness.as_str()
            )));
        }
        if finished.timed_out {
            tools.stop(
                "wall_seconds",
                format!(
                    "the harness ran past {} s and was killed with its whole process group",
                    deadline.as_secs()
                ),
            );
            return Ok(TurnOutput {
                final_message: outcome.final_message,
            });
        }
        match finished.status {
            Some(s) if s.success() => {
                if let Some(why) = outcome.failed {
                    // Exit 0, yet the harness says the turn failed: not an answer.
                    return Err(AgentError::Failed(format!(
                        "{} (`{program}`) reported a failed turn: {why}",
                        harness.as_str()
                    )));
                }
                if let Some((limit, detail)) = outcome.limit {
                    tools.stop(limit, detail);
                }
                Ok(TurnOutput {
                    final_message: outcome.final_message,
                })
            }
            // The harness's own turn cap ends the turn with a non-zero exit too.
            Some(_) if outcome.limit.is_some() && outcome.failed.is_none() => {
                if let Some((limit, detail)) = outcome.limit {
                    tools.stop(limit, detail);
                }
                Ok(TurnOutput {
                    final_message: outcome.final_message,
                })
            }
            other => {
                let how = other.map_or("was killed".to_string(), |s| format!("exited with {s}"));
                Err(AgentError::Failed(format!(
                    "{} (`{program}`) {how}{}",
                    harness.as_str(),
                    tail_note(&finished.stderr_tail, &outcome.errors)
                )))
            }
        }
    }

    fn definition(&self) -> Option<Value> {
        Some(json!({
            "kind": "harness",
            "harness": self.harness.as_str(),
            "command": self.template,
            "format": self.format.as_str(),
            "model": self.def.model,
            "env": self.def.env.keys().collect::<Vec<_>>(),
            "wall_seconds": self.def.wall_seconds,
            "price": self.def.price,
            "version": self.version(),
        }))
    }
}

/// Read what the harness kept apart from its output after a turn — run its transcript reader
/// (its environment, the private directory as working directory), or read its file — and
/// parse it; a reader that fails or a missing file leaves a warning, never silence.
fn read_transcript(
    source: &adapter::AfterTurn,
    trial: &Trial,
    parser: &mut dyn crate::stream::StreamParser,
    session: &str,
) -> Vec<Event> {
    let reader = match source {
        adapter::AfterTurn::Command(argv) => argv,
        adapter::AfterTurn::File(path) => {
            return match std::fs::read_to_string(path) {
                Ok(text) => parser.transcript(&text),
                Err(e) => vec![Event::Warning(format!(
                    "the harness's record of session {session} ({}) could not be read: {e}",
                    path.display()
                ))],
            };
        }
    };
    if reader.is_empty() {
        return Vec::new();
    }
    let mut text = String::new();
    let ran = process::run(
        &Spawn {
            argv: reader,
            cwd: trial.dir.path(),
            env: &trial.env,
            deadline: TRANSCRIPT_TIMEOUT,
            entry: None,
        },
        |line| {
            text.push_str(line);
            text.push('\n');
        },
    );
    let failure = match ran {
        Err(e) => Some(format!("cannot start `{}`: {e}", reader[0])),
        Ok(done) if done.timed_out => {
            Some(format!("it ran past {} s", TRANSCRIPT_TIMEOUT.as_secs()))
        }
        Ok(done) if !done.status.is_some_and(|s| s.success()) => Some(format!(
            "`{}` failed: {}",
            reader[0],
            done.stderr_tail.trim()
        )),
        Ok(_) => None,
    };
    match failure {
        Some(why) => vec![Event::Warning(format!(
            "the harness's transcript of session {session} (its own tool calls) could not be read: {why}"
        ))],
        None => parser.transcript(&text),
    }
}

/// The first version number in a `--version` line (`OpenHands CLI 1.16.0`, `Hermes Agent
/// v0.19.0 (2026.7.20)`, `codex-cli 0.169.0`).
fn version_number(line: &str) -> Option<String> {
    line.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',')
        .map(|w| w.trim_start_matches('v'))
        .find(|w| {
            w.contains('.')
                && w.split('.').count() >= 2
                && w.split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// A version's numbers, for comparing.
fn version_key(v: &str) -> Vec<u64> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// The end of stderr and the harness's own error reports, for an error message.
fn tail_note(stderr: &str, errors: &[String]) -> String {
    let mut note = String::new();
    if !errors.is_empty() {
        note.push_str(&format!(" — it reported: {}", errors.join("; ")));
    }
    let stderr = stderr.trim();
    if !stderr.is_empty() {
        let start = stderr
            .char_indices()
            .rev()
            .nth(ERROR_TAIL)
            .map_or(0, |(i, _)| i);
        note.push_str(&format!(" — stderr ends: {}", &stderr[start..]));
    }
    note
}

/// What a turn's output amounted to.
struct Outcome {
    final_message: Option<String>,
    session: Option<String>,
    errors: Vec<String>,
    /// The usage as the harness reported it (a running total where the harness keeps one).
    usage_total: Option<HarnessUsage>,
    /// The harness marked the turn as failed.
    failed: Option<String>,
    /// The harness stopped the turn at a limit of its own.
    limit: Option<(String, String)>,
}

/// Records a turn's events as trajectory steps as they arrive.
///
/// * assistant text → `message` steps (the last one is held back: when it is the final
///   answer, the run loop records it from [`TurnOutput::final_message`]);
/// * the harness's own tool calls → one `note` step each, `{"harness_tool_call": {harness,
///   id, tool, input, output, is_error}}`, written when the result arrives;
/// * calls of Bureau's MCP server → nothing (the tool session recorded them as `tool_call`
///   steps; counted in the usage step's `bureau_tool_calls`);
/// * usage → one `model_call` step per turn (provider = the harness);
/// * errors the harness reports → `note` steps `{"harness_error": ...}`, problems it went on
///   after → `{"harness_warning": ...}`.
struct Transcript<'a> {
    tools: &'a ToolSession,
    harness: &'static str,
    pending_message: Option<String>,
    open_calls: Vec<(String, Value)>,
    bureau_ids: Vec<String>,
    bureau_calls: u64,
    usage: Option<HarnessUsage>,
    /// The session's running total after the previous turn, where usage is reported so.
    usage_before: Option<(String, HarnessUsage)>,
    final_message: Option<String>,
    session: Option<String>,
    model: Option<String>,
    errors: Vec<String>,
    failed: Option<String>,
    limit: Option<(String, String)>,
    /// Calls of Bureau's tools the harness reports as failed: (id, tool, input, output).
    bureau_failed: Vec<(String, String, Value, Value)>,
    bureau_calls_by_id: Vec<(String, String, Value)>,
    unparsed: Vec<String>,
    unparsed_total: usize,
}

impl<'a> Transcript<'a> {
    fn new(tools: &'a ToolSession, harness: &'static str) -> Transcript<'a> {
        Transcript {
            tools,
            harness,
            pending_message: None,
            open_calls: Vec::new(),
            bureau_ids: Vec::new(),
            bureau_calls: 0,
            usage: None,
            usage_before: None,
            final_message: None,
            session: None,
            model: None,
            errors: Vec::new(),
            failed: None,
            limit: None,
            bureau_failed: Vec::new(),
            bureau_calls_by_id: Vec::new(),
            unparsed: Vec::new(),
            unparsed_total: 0,
        }
    }

    fn flush_message(&mut self) {
        if let Some(text) = self.pending_message.take() {
            self.tools.say(text);
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Session(id) => self.session = Some(id),
            Event::Model(m) => self.model = Some(m),
            Event::Message(text) => {
                self.flush_message();
                self.pending_message = Some(text);
            }
            Event::ToolCall {
                id,
                tool,
                input,
                bureau,
            } => {
                self.flush_message();
                if bureau {
                    self.bureau_calls += 1;
                    self.bureau_ids.push(id.clone());
                    self.bureau_calls_by_id.push((id, tool, input));
                } else {
                    let call = json!({
                        "harness": self.harness,
                        "id": id,
                        "tool": tool,
                        "input": input,
                    });
                    if id.is_empty() {
                        self.record_call(call, None);
                    } else {
                        self.open_calls.push((id, call));
                    }
                }
            }
            Event::ToolResult {
                id,
                output,
                is_error,
            } => {
                if let Some(i) = self.open_calls.iter().position(|(c, _)| *c == id) {
                    let (_, call) = self.open_calls.remove(i);
                    self.record_call(call, Some((output, is_error)));
                } else if !self.bureau_ids.contains(&id) {
                    let call = json!({"harness": self.harness, "id": id});
                    self.record_call(call, Some((output, is_error)));
                } else if is_error
                    && let Some((_, tool, input)) =
                        self.bureau_calls_by_id.iter().find(|(c, _, _)| *c == id)
                {
                    self.bureau_failed
                        .push((id.clone(), tool.clone(), input.clone(), output));
                }
            }
            Event::Usage(u) => self.usage = Some(u),
            Event::Final(text) => self.final_message = Some(text),
            Event::Error(e) => {
                self.tools
                    .note(json!({"harness_error": {"harness": self.harness, "message": e}}));
                self.errors.push(e);
            }
            Event::Warning(w) => {
                self.tools
                    .note(json!({"harness_warning": {"harness": self.harness, "message": w}}));
            }
            Event::Failed(e) => {
                self.tools.note(json!({"harness_error": {
                    "harness": self.harness, "message": e, "turn_failed": true
                }}));
                self.errors.push(e.clone());
                self.failed = Some(e);
            }
            Event::Limit { limit, detail } => self.limit = Some((limit, detail)),
            Event::Unparsed(line) => {
                self.unparsed_total += 1;
                if self.unparsed.len() < UNPARSED_KEPT {
                    self.unparsed.push(line);
                }
            }
        }
    }

    fn record_call(&self, mut call: Value, result: Option<(Value, bool)>) {
        if let Some((output, is_error)) = result {
            call["output"] = output;
            call["is_error"] = Value::Bool(is_error);
        } else {
            call["output"] = Value::Null;
        }
        self.tools.note(json!({"harness_tool_call": call}));
    }

    fn finish(
        mut self,
        argv: &[String],
        model: &Option<String>,
        price: Option<&Price>,
        finished: &process::Finished,
    ) -> Outcome {
        for (_, call) in std::mem::take(&mut self.open_calls) {
            self.record_call(call, None);
        }
        match (&self.final_message, &self.pending_message) {
            (None, Some(_)) => self.final_message = self.pending_message.take(),
            (Some(f), Some(p)) if f.trim() == p.trim() => self.pending_message = None,
            _ => {}
        }
        self.flush_message();
        // Calls of Bureau's tools that the harness reports but Bureau never received (the
        // harness refused them, or failed before sending them): the session counted fewer
        // calls than the harness reports. The failed ones it reports are those calls.
        let received = u64::from(self.tools.calls_made());
        let unreached = self.bureau_calls.saturating_sub(received);
        if unreached > 0 {
            let failed = std::mem::take(&mut self.bureau_failed);
            let skip = failed.len().saturating_sub(unreached as usize);
            for (id, tool, input, output) in failed.into_iter().skip(skip) {
                self.tools.note(json!({"harness_call_not_received": {
                    "harness": self.harness,
                    "id": id,
                    "tool": tool,
                    "input": input,
                    "error": output,
                }}));
            }
            self.tools.note(json!({"harness_calls_not_received": {
                "harness": self.harness,
                "reported": self.bureau_calls,
                "received": received,
            }}));
        }
        if self.unparsed_total > 0 {
            self.tools.note(json!({"harness_output": {
                "harness": self.harness,
                "lines_outside_format": self.unparsed_total,
                "first_lines": self.unparsed,
            }}));
        }
        // A running total less the previous turn's of the same session: this turn's usage.
        let usage_total = self.usage.clone();
        let mut previous_total = Value::Null;
        if let (Some(u), Some((session, before))) = (&mut self.usage, &self.usage_before)
            && self.session.as_ref() == Some(session)
        {
            u.input_tokens = u.input_tokens.saturating_sub(before.input_tokens);
            u.cached_input_tokens = u
                .cached_input_tokens
                .saturating_sub(before.cached_input_tokens);
            u.cache_write_tokens = u
                .cache_write_tokens
                .saturating_sub(before.cache_write_tokens);
            u.output_tokens = u.output_tokens.saturating_sub(before.output_tokens);
            u.model_calls = match (u.model_calls, before.model_calls) {
                (Some(now), Some(then)) => Some(now.saturating_sub(then)),
                (now, _) => now,
            };
            u.cost_usd = match (u.cost_usd, before.cost_usd) {
                (Some(now), Some(then)) => Some((now - then).max(0.0)),
                (now, _) => now,
            };
            previous_total = before.raw.clone();
        }
        let mut response = json!({
            "session_id": self.session,
            "exit_code": finished.status.and_then(|s| s.code()),
            "timed_out": finished.timed_out,
            "leftover_processes_killed": finished.leftover_killed,
            "elapsed_seconds": (finished.elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
            "bureau_tool_calls": self.bureau_calls,
            "model_calls": self.usage.as_ref().and_then(|u| u.model_calls),
            "usage": self.usage.as_ref().map(|u| u.raw.clone()),
        });
        if !previous_total.is_null() {
            response["usage_session_total_before"] = previous_total;
        }
        let model = self
            .model
            .clone()
            .or_else(|| model.clone())
            .unwrap_or_else(|| "unknown".into());
        match &self.usage {
            Some(u) => {
                let mut usage = ModelUsage {
                    input_tokens: u.input_tokens,
                    cached_input_tokens: u.cached_input_tokens,
                    cache_write_tokens: u.cache_write_tokens,
                    output_tokens: u.output_tokens,
                    cost_usd: u.cost_usd,
                };
                let mut response = response;
                response["cost_from"] = match (u.cost_usd, price) {
                    (Some(_), _) => json!("harness"),
                    (None, Some(p)) => {
                        usage.cost_usd = Some(cost_usd(&usage, p));
                        json!("prices")
                    }
                    (None, None) => Value::Null,
                };
                self.tools.record(StepKind::ModelCall(ModelCall {
                    provider: self.harness.to_string(),
                    model,
                    request: json!({"argv": argv}),
                    messages_elided: 0,
                    tools_elided: false,
                    response,
                    usage,
                    retries: Vec::new(),
                    error: None,
                    wall_ms: Some(finished.elapsed.as_millis().try_into().unwrap_or(u64::MAX)),
                    budget_wait_ms: None,
                }))
            }
            None => self.tools.note(json!({"harness_run": {
                "harness": self.harness,
                "model": model,
                "argv": argv,
                "usage_reported": false,
                "response": response,
            }})),
        }
        Outcome {
            final_message: self.final_message,
            session: self.session,
            errors: self.errors,
            usage_total,
            failed: self.failed,
            limit: self.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{version_key, version_number};

    #[test]
    fn versions_are_read_from_each_harnesss_version_line_and_compared_numerically() {
        let found = |l: &str| version_number(l);
        assert_eq!(found("OpenHands CLI 1.16.0").as_deref(), Some("1.16.0"));
        assert_eq!(
            found("Hermes Agent v0.19.0 (2026.7.20)").as_deref(),
            Some("0.19.0")
        );
        assert_eq!(found("2.1.332 (Claude Code)").as_deref(), Some("2.1.332"));
        assert_eq!(found("codex-cli 0.169.0").as_deref(), Some("0.169.0"));
        assert_eq!(
            found("OpenClaw 2026.9.6 (eb377ac)").as_deref(),
            Some("2026.9.6")
        );
        assert_eq!(found("my-agent, development build"), None);
        assert!(version_key("0.18.2") < version_key("0.19.0"));
        assert!(version_key("1.9.0") < version_key("1.16.0"));
        assert!(version_key("2026.10.1") > version_key("2026.9.6"));
        assert!(version_key("1.16.0") >= version_key("1.16.0"));
    }
}
