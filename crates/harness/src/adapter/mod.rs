//! The adapters: for each harness, how it is invoked headless, where its MCP configuration
//! goes, and how its output is read. What is particular to one harness is in its own file.

mod claude_code;
mod codex;
mod hermes;
mod openclaw;
mod openhands;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bureau_agents::AgentError;
use bureau_agents::harness::HarnessDef;
use serde_json::{Value, json};

use crate::stream::Format;

/// The environment variable the bearer token is handed in to harnesses that read it from
/// the environment (Codex's `bearer_token_env_var`).
pub const TOKEN_ENV: &str = "BUREAU_MCP_TOKEN";

/// Which harness an agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    Command,
    ClaudeCode,
    Codex,
    OpenHands,
    OpenClaw,
    Hermes,
}

impl Harness {
    pub fn parse(name: &str) -> Option<Harness> {
        Some(match name {
            "command" => Harness::Command,
            "claude-code" => Harness::ClaudeCode,
            "codex" => Harness::Codex,
            "openhands" => Harness::OpenHands,
            "openclaw" => Harness::OpenClaw,
            "hermes" => Harness::Hermes,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Harness::Command => "command",
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::OpenHands => "openhands",
            Harness::OpenClaw => "openclaw",
            Harness::Hermes => "hermes",
        }
    }

    /// The program a named adapter runs.
    pub fn program(&self) -> Option<&'static str> {
        match self {
            Harness::Command => None,
            Harness::ClaudeCode => Some("claude"),
            Harness::Codex => Some("codex"),
            Harness::OpenHands => Some("openhands"),
            Harness::OpenClaw => Some("openclaw"),
            Harness::Hermes => Some("hermes"),
        }
    }

    /// How to install the program of a named adapter (from its package registry).
    pub fn install_hint(&self) -> &'static str {
        match self {
            Harness::Command => "install it, or give its full path in the agents file's `command`",
            Harness::ClaudeCode => "install it with `npm install -g @anthropic-ai/claude-code`",
            Harness::Codex => "install it with `npm install -g @openai/codex`",
            Harness::OpenHands => {
                "install it with `pip install openhands==1.16.0` under CPython 3.12 (docs/harnesses/openhands.md)"
            }
            Harness::OpenClaw => {
                "install it with `npm install -g openclaw@2026.9.6` under Node >= 24.16 (docs/harnesses/openclaw.md)"
            }
            Harness::Hermes => {
                "install it with `pip install 'hermes-agent[mcp]==0.19.0'` (docs/harnesses/hermes.md)"
            }
        }
    }

    /// The environment variables a harness reads its model endpoint from, first found wins,
    /// and the endpoint it uses when none is set (`None`: no default).
    pub fn endpoint_vars(&self) -> (&'static [&'static str], Option<&'static str>) {
        match self {
            Harness::Command => (&[], None),
            Harness::ClaudeCode => (&["ANTHROPIC_BASE_URL"], Some("https://api.anthropic.com")),
            Harness::Codex | Harness::OpenClaw => {
                (&["OPENAI_BASE_URL"], Some("https://api.openai.com/v1"))
            }
            Harness::OpenHands => (&["LLM_BASE_URL"], None),
            // Hermes 0.19 no longer reads OPENAI_BASE_URL.
            Harness::Hermes => (&["CUSTOM_BASE_URL"], None),
        }
    }

    /// The output format of a named adapter.
    pub fn format(&self) -> Format {
        match self {
            Harness::Command => Format::Text,
            Harness::Hermes => Format::Hermes,
            Harness::ClaudeCode => Format::ClaudeCode,
            Harness::Codex => Format::Codex,
            Harness::OpenHands => Format::OpenHands,
            Harness::OpenClaw => Format::OpenClaw,
        }
    }

    /// Whether the harness reads its MCP servers only from a file under the home directory,
    /// so that it runs with `HOME` set to a private per-trial directory holding that file.
    pub fn private_home(&self) -> bool {
        matches!(
            self,
            Harness::OpenHands | Harness::OpenClaw | Harness::Hermes
        )
    }

    /// Whether the harness reports a session's running total of tokens on each turn (Codex's
    /// `turn.completed` on a resumed thread, OpenHands's `base_state.json`, Hermes's `sessions`
    /// row), so that a turn's usage is its total less the previous turn's of the same session.
    pub fn cumulative_usage(&self) -> bool {
        matches!(self, Harness::Codex | Harness::OpenHands | Harness::Hermes)
    }

    /// The version Bureau's adapter was verified against (docs/harnesses/), as `--version`
    /// prints it; an older one is refused by `bureau agents check`.
    pub fn verified_version(&self) -> Option<&'static str> {
        match self {
            Harness::Command => None,
            Harness::ClaudeCode => Some("2.1.332"),
            Harness::Codex => Some("0.169.0"),
            Harness::OpenHands => Some("1.16.0"),
            Harness::OpenClaw => Some("2026.9.6"),
            Harness::Hermes => Some("0.19.0"),
        }
    }

    /// The model the agent runs, as recorded: the agent's `model`, else (Codex, which never
    /// names it) the one its extra arguments set, else (OpenHands) its `LLM_MODEL`.
    pub fn model(&self, def: &HarnessDef) -> Option<String> {
        def.model.clone().or_else(|| match self {
            Harness::Codex => codex::model_in_args(&def.args),
            Harness::OpenHands => openhands::model(def),
            _ => None,
        })
    }

    /// What the harness needs configured that `def` lacks, with the fix (`None`: nothing
    /// missing that Bureau can see): OpenHands's model and key, Hermes's endpoint.
    pub fn missing_settings(&self, def: &HarnessDef) -> Option<String> {
        match self {
            Harness::OpenHands => openhands::missing_settings(def),
            Harness::Hermes => hermes::missing_settings(def),
            _ => None,
        }
    }

    /// The model a harness that never names it ran the session `session` with, where the
    /// harness keeps that apart (Codex's session rollout); `env` is its extra environment.
    pub fn session_model(&self, env: &BTreeMap<String, String>, session: &str) -> Option<String> {
        match self {
            Harness::Codex => codex::rollout_model(env, session),
            _ => None,
        }
    }

    /// The command template of a named adapter (placeholders as in [`expand`]); arguments
    /// holding `{session}` are dropped on the first turn.
    pub fn template(&self, def: &HarnessDef) -> Vec<String> {
        let mut t: Vec<String> = match self {
            Harness::Command => def.command.clone().unwrap_or_default(),
            Harness::ClaudeCode => claude_code::template(def),
            Harness::Codex => codex::template(def),
            Harness::OpenHands => openhands::template(def),
            Harness::OpenClaw => openclaw::template(def),
            Harness::Hermes => hermes::template(def),
        };
        if *self != Harness::Command {
            // Extra flags go before Codex's `resume <id> <prompt>`, else at the end.
            let at = if *self == Harness::Codex {
                t.len() - 3
            } else {
                t.len()
            };
            t.splice(at..at, def.args.iter().cloned());
        }
        t
    }
}

/// The values placeholders expand to in one turn.
#[derive(Debug, Clone)]
pub struct Vars {
    pub prompt: String,
    pub prompt_file: PathBuf,
    pub mcp_config: PathBuf,
    pub mcp_url: String,
    pub workspace: PathBuf,
    pub turn: u32,
    /// The harness's session from the previous turn.
    pub session: Option<String>,
    /// A session id Bureau chose for this trial (for harnesses that take one).
    pub trial_session: String,
    pub model: Option<String>,
}

/// The placeholders a template may use.
pub const PLACEHOLDERS: &[&str] = &[
    "{prompt}",
    "{prompt_file}",
    "{mcp_config}",
    "{mcp_url}",
    "{workspace}",
    "{turn}",
    "{session}",
    "{resume}",
    "{trial_session}",
    "{model}",
];

/// Expand a template into argv. Each argument is substituted on its own (never re-split, never
/// given to a shell). On the first turn (no session yet) an argument holding `{session}` or
/// `{resume}` is dropped; `{resume}` is the word `resume` once a session exists (Codex's
/// `exec resume`). An argument holding `{model}` is dropped when no model is set.
pub fn expand(template: &[String], v: &Vars) -> Vec<String> {
    template
        .iter()
        .filter(|a| {
            !((a.contains("{session}") || a.contains("{resume}")) && v.session.is_none()
                || a.contains("{model}") && v.model.is_none())
        })
        .map(|a| {
            a.replace("{prompt_file}", &v.prompt_file.to_string_lossy())
                .replace("{mcp_config}", &v.mcp_config.to_string_lossy())
                .replace("{mcp_url}", &v.mcp_url)
                .replace("{workspace}", &v.workspace.to_string_lossy())
                .replace("{turn}", &v.turn.to_string())
                .replace("{session}", v.session.as_deref().unwrap_or(""))
                .replace("{resume}", "resume")
                .replace("{trial_session}", &v.trial_session)
                .replace("{model}", v.model.as_deref().unwrap_or(""))
                // Last: the prompt's own text is never scanned for placeholders.
                .replace("{prompt}", &v.prompt)
        })
        .collect()
}

/// The endpoint a harness is pointed at.
pub struct Endpoint<'a> {
    pub url: &'a str,
    pub authorization: &'a str,
}

/// Write the MCP configuration files of `harness` into `dir` (private, outside the
/// workspace) and return the path `{mcp_config}` names. Every harness gets `mcp.json` (the
/// usual `mcpServers` JSON: Claude Code, Cursor, ...); harnesses that read a file under their
/// home get it under `dir/home` too.
pub fn write_mcp_config(
    harness: Harness,
    dir: &Path,
    workspace: &Path,
    ep: &Endpoint<'_>,
    def: &HarnessDef,
) -> Result<PathBuf, AgentError> {
    let mcp_json = json!({
        "mcpServers": {
            "bureau": {
                "type": "http",
                "url": ep.url,
                "headers": {"Authorization": ep.authorization}
            }
        }
    });
    let path = dir.join("mcp.json");
    write_private(&path, &pretty(&mcp_json))?;
    let home = dir.join("home");
    match harness {
        Harness::OpenHands => openhands::write_config(&home, workspace, ep)?,
        Harness::OpenClaw => openclaw::write_config(&home, workspace, ep)?,
        Harness::Hermes => hermes::write_config(&home, workspace, ep, def.model.as_deref())?,
        Harness::Command | Harness::ClaudeCode | Harness::Codex => {}
    }
    Ok(path)
}

/// Where the part of a turn the harness keeps apart from its output is read after the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterTurn {
    /// A command printing it, one JSON row a line (OpenClaw's and Hermes's SQLite stores),
    /// run with the harness's environment, the private directory as working directory.
    Command(Vec<String>),
    /// A file holding it (OpenHands's `base_state.json`).
    File(PathBuf),
}

/// What to read, after a turn, of `session` that the harness keeps apart from its output
/// (OpenClaw's transcript, OpenHands's usage, Hermes's messages and usage); `dir` is the
/// trial's private directory, `env` the harness's environment, `program` the harness's
/// program where it was found. The text goes to [`crate::stream::StreamParser::transcript`].
pub fn after_turn(
    harness: Harness,
    dir: &Path,
    env: &BTreeMap<String, String>,
    program: Option<&Path>,
    session: &str,
) -> Option<AfterTurn> {
    match harness {
        Harness::OpenClaw => Some(AfterTurn::Command(openclaw::transcript_reader(
            &dir.join("home"),
            session,
        ))),
        Harness::OpenHands => openhands::usage_file(env, session).map(AfterTurn::File),
        Harness::Hermes => {
            let python = program
                .and_then(hermes::interpreter)
                .unwrap_or_else(|| PathBuf::from("python3"));
            hermes::transcript_reader(&python, env, session).map(AfterTurn::Command)
        }
        _ => None,
    }
}

/// Where to find the session of a turn whose output named none (the harness was stopped
/// before printing it: OpenHands and Hermes print it last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LatestSession {
    /// Found in the harness's private store (OpenHands's newest conversation).
    Known(String),
    /// A command printing it (Hermes's newest session in its SQLite store), run like an
    /// [`AfterTurn::Command`].
    Command(Vec<String>),
}

/// The session `harness` last wrote to in the trial's private store, for a turn whose output
/// named none; `env` is the harness's environment, `program` the harness's program.
pub fn latest_session(
    harness: Harness,
    env: &BTreeMap<String, String>,
    program: Option<&Path>,
) -> Option<LatestSession> {
    match harness {
        Harness::OpenHands => openhands::latest_conversation(env).map(LatestSession::Known),
        Harness::Hermes => {
            let python = program
                .and_then(hermes::interpreter)
                .unwrap_or_else(|| PathBuf::from("python3"));
            hermes::latest_session_reader(&python, env).map(LatestSession::Command)
        }
        _ => None,
    }
}

/// The Python interpreter that runs the Hermes at `program`, when its script names one.
pub fn hermes_python(program: &Path) -> Option<PathBuf> {
    hermes::interpreter(program)
}

/// The command checking that Hermes's `python` imports `mcp` (exit 0: it does).
pub fn hermes_mcp_probe(python: &Path) -> Vec<String> {
    hermes::mcp_probe(python)
}

/// The environment a harness runs with, beyond what it inherits: the token (for Codex), a
/// private `HOME` for harnesses that read their MCP servers from it, the harness's own
/// settings Bureau makes, and the agent's `env` (`def`). `workspace` is the workspace as the
/// harness sees it.
pub fn harness_env(
    harness: Harness,
    dir: &Path,
    workspace: &Path,
    token: &str,
    def: &HarnessDef,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert(TOKEN_ENV.to_string(), token.to_string());
    // The harness's own defaults Bureau changes (the agent's `env` still overrides them).
    if harness == Harness::ClaudeCode {
        env.extend(
            claude_code::ENV
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
    }
    if harness.private_home() {
        let home = dir.join("home");
        env.insert("HOME".into(), home.to_string_lossy().into_owned());
        if harness == Harness::Hermes {
            env.insert(
                "HERMES_HOME".into(),
                hermes::hermes_home(&home).to_string_lossy().into_owned(),
            );
        }
        if harness == Harness::OpenClaw {
            openclaw::env(&home, &mut env);
        }
        if harness == Harness::OpenHands {
            openhands::env(&home, workspace, &mut env);
        }
    }
    env.extend(def.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    // OpenHands has no `--model`: the agent's `model` is its `LLM_MODEL`.
    if harness == Harness::OpenHands
        && let Some(m) = &def.model
    {
        env.insert("LLM_MODEL".into(), m.clone());
    }
    env
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// Write a file readable by its owner only (it may hold the bearer token).
pub fn write_private(path: &Path, text: &str) -> Result<(), AgentError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| AgentError::Failed(format!("{}: {e}", parent.display())))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| AgentError::Failed(format!("{}: {e}", path.display())))?;
    f.write_all(text.as_bytes())
        .map_err(|e| AgentError::Failed(format!("{}: {e}", path.display())))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(super) fn vars(session: Option<&str>) -> Vars {
        Vars {
            prompt: "Write {mcp_config} into memo.md; don't run $(rm -rf /)".into(),
            prompt_file: "/p/turn-2.prompt.md".into(),
            mcp_config: "/p/mcp.json".into(),
            mcp_url: "http://127.0.0.1:9/mcp".into(),
            workspace: "/w".into(),
            turn: 2,
            session: session.map(str::to_string),
            trial_session: "bureau-abc".into(),
            model: None,
        }
    }

    #[test]
    fn placeholders_expand_per_argument() {
        let t: Vec<String> = [
            "a",
            "--p={prompt_file}",
            "{workspace}/x",
            "t{turn}",
            "--m={model}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            expand(&t, &vars(None)),
            ["a", "--p=/p/turn-2.prompt.md", "/w/x", "t2"]
        );
    }

    #[test]
    fn config_files_go_where_each_harness_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let ep = Endpoint {
            url: "http://127.0.0.1:9/mcp",
            authorization: "Bearer s3cret",
        };
        for h in [Harness::OpenHands, Harness::OpenClaw, Harness::Hermes] {
            let p = write_mcp_config(
                h,
                dir.path(),
                Path::new("/w"),
                &ep,
                &HarnessDef::new(h.as_str()),
            )
            .unwrap();
            let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            assert_eq!(
                v["mcpServers"]["bureau"]["headers"]["Authorization"],
                "Bearer s3cret"
            );
        }
        let oh: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("home/.openhands/mcp.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(oh["mcpServers"]["bureau"]["url"], "http://127.0.0.1:9/mcp");
        let oc: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("home/.openclaw/openclaw.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            oc["mcp"]["servers"]["bureau"]["transport"],
            "streamable-http"
        );
        let hermes = std::fs::read_to_string(dir.path().join("home/.hermes/config.yaml")).unwrap();
        let y: serde_yaml::Value = serde_yaml::from_str(&hermes).unwrap();
        assert_eq!(
            y["mcp_servers"]["bureau"]["headers"]["Authorization"],
            "Bearer s3cret"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("mcp.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the config holds the token: owner only");
        let env = harness_env(
            Harness::Hermes,
            dir.path(),
            Path::new("/w"),
            "tok",
            &HarnessDef::new("hermes"),
        );
        assert!(env["HOME"].ends_with("/home"));
        assert!(env["HERMES_HOME"].ends_with("/home/.hermes"));
        let env = harness_env(
            Harness::ClaudeCode,
            dir.path(),
            Path::new("/w"),
            "tok",
            &HarnessDef::new("claude-code"),
        );
        assert!(!env.contains_key("HOME"));
        assert_eq!(env[TOKEN_ENV], "tok");
    }
}
