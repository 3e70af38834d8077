//! Human play mode: `bureau play <task>` — the same office, a person at the keyboard.
//!
//! A person is an agent of the ordinary run loop: [`HumanAgent`] (`human:<name>`) hands each
//! turn's [`bureau_agents::ToolSession`] to a small web app on 127.0.0.1 and waits until the
//! person clicks "End my day" ("Finish the task" on the last turn). Every action on the pages
//! is a tool call through that session, so the trajectory, events, turns, snapshots, scoring
//! and the run directory are exactly those of any agent ([`bureau_run::run_with`] plays the
//! trial): the human baseline, comparable with agents in `bureau report` and `bureau view`.
//!
//! The web app (`server`): every request needs the session token (`?token=` or the cookie the
//! first valid visit sets), else 401; pages are rendered on the server with minijinja
//! (templates in `templates/`, autoescaped); forms POST and redirect, so no JavaScript is
//! needed. See docs/play.md.

mod hub;
pub mod schema;
mod server;
mod views;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bureau_agents::{Agent, AgentError, sanitize_name};
use bureau_run::{RunConfig, RunError};
use serde_json::Value;

pub use hub::{FinalView, Hub, HumanAgent, Phase};

/// What to play, as whom, and where.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// The task directory.
    pub task: PathBuf,
    /// The person's name: the agent is `human:<name>`.
    pub name: String,
    /// The run directory [default: `runs/play-<task>-<name>`].
    pub out: Option<PathBuf>,
    /// The port on 127.0.0.1 [default: a free one].
    pub port: Option<u16>,
}

/// Why a play could not be held.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The options cannot be used.
    #[error("{0}")]
    Config(String),
    /// The web app could not start.
    #[error(
        "cannot serve on 127.0.0.1:{port}: {source} — give another --port, or none for a free one"
    )]
    Bind { port: u16, source: std::io::Error },
    /// The run loop failed (tasks do not load, the run directory holds another run,
    /// interrupted, ...).
    #[error(transparent)]
    Run(#[from] RunError),
}

/// How a finished play ended.
#[derive(Debug, Clone)]
pub struct PlayReport {
    pub run_dir: PathBuf,
    pub trial_dir: PathBuf,
    pub task: String,
    pub agent: String,
    pub view: FinalView,
}

impl PlayReport {
    /// One line: task, agent, status, weighted score, strict success, trial directory.
    pub fn line(&self) -> String {
        let score = self
            .view
            .weighted
            .map_or_else(|| "—".to_string(), |w| format!("{w:.3}"));
        format!(
            "{} · {} · {} · score {score} · strict {} · {}",
            self.task,
            self.agent,
            self.view.status,
            if self.view.strict { "yes" } else { "no" },
            self.trial_dir.display()
        )
    }
}

/// A play whose web app is listening; [`Play::run`] plays the trial.
pub struct Play {
    options: PlayOptions,
    out: PathBuf,
    hub: Arc<Hub>,
    server: server::Server,
}

/// A person's name as it goes into `human:<name>`: letters, digits, `.`, `_`, `-`.
pub fn check_name(name: &str) -> Result<(), PlayError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(PlayError::Config(format!(
            "--name `{name}` is not usable — give 1 to 64 letters, digits, `.`, `_` or `-` (it names the agent human:<name>)"
        )))
    }
}

/// The default run directory of a play: `runs/play-<task folder>-<name>`.
pub fn default_out(task: &Path, name: &str) -> PathBuf {
    let task = task
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| task.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "task".into());
    PathBuf::from("runs").join(sanitize_name(&format!("play-{task}-{name}")))
}

impl Play {
    /// Bind the web app on 127.0.0.1 (`options.port`, else a free port) with a fresh session
    /// token. Nothing is played until [`Play::run`].
    pub fn start(options: PlayOptions) -> Result<Play, PlayError> {
        check_name(&options.name)?;
        if !options.task.join("task.toml").is_file() {
            return Err(PlayError::Config(format!(
                "{} is not a task directory (no task.toml) — give one task, e.g. suites/starter/customer-spec-answer",
                options.task.display()
            )));
        }
        let out = options
            .out
            .clone()
            .unwrap_or_else(|| default_out(&options.task, &options.name));
        let hub = Arc::new(Hub::new());
        let server = server::Server::start(hub.clone(), options.port, out.clone())?;
        Ok(Play {
            options,
            out,
            hub,
            server,
        })
    }

    /// The URL to open, with the session token.
    pub fn url(&self) -> String {
        self.server.url()
    }

    pub fn port(&self) -> u16 {
        self.server.port()
    }

    pub fn token(&self) -> &str {
        self.server.token()
    }

    /// The run directory.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Play the trial (blocks until the person finishes the last turn, or a signal), then
    /// show the score page and wait for the person to click "Close" (or a signal). The web
    /// app stops before this returns.
    pub fn run(self) -> Result<PlayReport, PlayError> {
        let result = self.play();
        match &result {
            Ok(report) => {
                {
                    let mut s = self.hub.lock();
                    s.final_view = Some(report.view.clone());
                    s.phase = Phase::Finished;
                }
                self.hub.notify();
                self.wait_for_close();
            }
            Err(e) => {
                self.hub.lock().phase = Phase::Failed(e.to_string());
                self.hub.notify();
            }
        }
        self.server.stop();
        result
    }

    fn play(&self) -> Result<PlayReport, PlayError> {
        let spec = format!("human:{}", self.options.name);
        let config = RunConfig {
            epochs: 1,
            concurrency: 1,
            retries: 0,
            quiet: true,
            ..RunConfig::new(
                vec![self.options.task.to_string_lossy().into_owned()],
                vec![spec.clone()],
                self.out.clone(),
            )
        };
        let hub = self.hub.clone();
        let name = self.options.name.clone();
        let factory = move |s: &str| -> Result<Box<dyn Agent>, AgentError> {
            if s == spec {
                Ok(Box::new(HumanAgent::new(hub.clone(), &name)))
            } else {
                Err(AgentError::UnknownKind { spec: s.into() })
            }
        };
        let outcome = bureau_run::run_with(&config, &factory)?;
        let agent = sanitize_name(&format!("human:{}", self.options.name));
        let task = self.hub.lock().task.id.clone();
        if outcome.ran == 0 {
            return Err(PlayError::Config(format!(
                "{} already holds this play's finished trial — choose another --out to play again",
                outcome.out.display()
            )));
        }
        let trial_dir = bureau_run::trial_dir(&outcome.out, &task, &agent, 1);
        let view = final_view(&outcome.out, &trial_dir)?;
        Ok(PlayReport {
            run_dir: outcome.out,
            trial_dir,
            task,
            agent,
            view,
        })
    }

    fn wait_for_close(&self) {
        let mut s = self.hub.lock();
        while !s.closed && bureau_core::interrupt::requested().is_none() {
            s = self
                .hub
                .changed
                .wait_timeout(s, Duration::from_millis(200))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }
}

/// The score page from the trial's own files.
fn final_view(run_dir: &Path, trial_dir: &Path) -> Result<FinalView, PlayError> {
    let read = |name: &str| -> Result<Value, PlayError> {
        let path = trial_dir.join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| PlayError::Config(format!("reading {}: {e}", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| PlayError::Config(format!("reading {}: {e}", path.display())))
    };
    let result = read("result.json")?;
    let verdicts = match read("verdicts.json")? {
        Value::Array(v) => v,
        _ => Vec::new(),
    };
    let score = result.get("score").cloned().unwrap_or(Value::Null);
    let u = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(FinalView {
        status: result
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string(),
        strict: score
            .get("strict")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        weighted: score.get("weighted").and_then(Value::as_f64),
        items_passed: u(&score, "items_passed"),
        items_total: u(&score, "items_total"),
        error: result
            .get("error")
            .and_then(Value::as_str)
            .map(str::to_string),
        verdicts,
        trial_dir: trial_dir.display().to_string(),
        run_dir: run_dir.display().to_string(),
        tool_calls: result
            .get("usage")
            .map(|usage| u(usage, "tool_calls"))
            .unwrap_or(0),
        wall_seconds: result
            .get("wall_seconds")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_default_run_dirs() {
        assert!(check_name("alice").is_ok());
        assert!(check_name("a.b_c-1").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name("../x").is_err());
        assert_eq!(
            default_out(Path::new("/nonexistent/customer-spec-answer"), "bob"),
            PathBuf::from("runs/play-customer-spec-answer-bob")
        );
    }
}
