//! Hermes (`hermes`, PyPI `hermes-agent` with its `mcp` extra, verified with 0.19.0):
//! `hermes chat --query ... --quiet --provider custom`, its configuration (the MCP server among
//! it) in `config.yaml` of a private `HERMES_HOME` (docs/harnesses/hermes.md).
//!
//! The configuration Bureau writes: `model.provider: custom` (the endpoint is `CUSTOM_BASE_URL`;
//! without a provider Hermes refuses to start, "isn't configured yet", and without
//! `--provider custom` it goes to its default cloud provider), `security.tirith_enabled: false`
//! (else stdout begins with its security scanner's warning, which would be read as the final
//! message), and `mcp_servers.bureau` (`url`, `headers`). Hermes loads MCP servers only when
//! the `mcp` package imports beside it; without it Bureau's tools are silently absent, so the
//! agent's preflight refuses such an installation ([`mcp_probe`]).
//!
//! Quiet mode prints only the final response on stdout and `session_id: <id>` on stderr. The
//! turn's tool calls and the session's usage (a running total) are in Hermes's SQLite store,
//! `$HERMES_HOME/state.db`: after each turn [`transcript_reader`] prints this session's row and
//! messages with the Python that runs Hermes.

use std::path::Path;

use bureau_agents::AgentError;
use bureau_agents::harness::HarnessDef;

use super::*;

/// The command template (placeholders as in [`expand`]).
pub(super) fn template(def: &HarnessDef) -> Vec<String> {
    let s = |a: &str| a.to_string();
    let mut t = vec![
        s("hermes"),
        s("chat"),
        // One argument: a prompt starting with `-` is never read as an option.
        s("--query={prompt}"),
        s("--quiet"),
        s("--provider"),
        s("custom"),
        // A resumed session otherwise `cd`s to the directory it recorded and says so on stdout.
        s("--no-restore-cwd"),
        s("--resume={session}"),
    ];
    if let Some(m) = &def.model {
        t.extend([s("--model"), m.clone()]);
    }
    t
}

/// What Hermes needs that `def` lacks, with the fix: the endpoint of the `custom` provider
/// Bureau runs it on (`CUSTOM_BASE_URL`; without it Hermes falls back to OpenRouter and stops
/// for want of its key), unless `args` choose another provider.
pub(super) fn missing_settings(def: &HarnessDef) -> Option<String> {
    let set = def
        .env
        .get("CUSTOM_BASE_URL")
        .cloned()
        .or_else(|| std::env::var("CUSTOM_BASE_URL").ok())
        .is_some_and(|v| !v.trim().is_empty());
    let other_provider = def
        .args
        .iter()
        .any(|a| a == "--provider" || a.starts_with("--provider="));
    (!set && !other_provider).then(|| {
        "Hermes runs on its `custom` provider and `CUSTOM_BASE_URL` is not set — give the OpenAI-compatible endpoint as CUSTOM_BASE_URL in the agent's `env` (or the environment), or another provider with `--provider <name>` in `args`".to_string()
    })
}

/// Hermes's home (`HERMES_HOME`) under the private `home`.
pub(super) fn hermes_home(home: &Path) -> PathBuf {
    home.join(".hermes")
}

/// Write the harness's configuration (the MCP server among it) into `config.yaml` of its home
/// under the private `home`.
pub(super) fn write_config(
    home: &Path,
    _workspace: &Path,
    ep: &Endpoint<'_>,
    model: Option<&str>,
) -> Result<(), AgentError> {
    use serde_yaml::{Mapping, Value as Y};
    let map = |pairs: Vec<(&str, Y)>| -> Y {
        Y::Mapping(
            pairs
                .into_iter()
                .map(|(k, v)| (Y::from(k), v))
                .collect::<Mapping>(),
        )
    };
    let mut model_cfg = vec![("provider", Y::from("custom"))];
    if let Some(m) = model {
        model_cfg.push(("default", Y::from(m)));
    }
    let cfg = map(vec![
        ("model", map(model_cfg)),
        ("security", map(vec![("tirith_enabled", Y::Bool(false))])),
        (
            "mcp_servers",
            map(vec![(
                "bureau",
                map(vec![
                    ("url", Y::from(ep.url)),
                    (
                        "headers",
                        map(vec![("Authorization", Y::from(ep.authorization))]),
                    ),
                ]),
            )]),
        ),
    ]);
    let text = serde_yaml::to_string(&cfg)
        .map_err(|e| AgentError::Failed(format!("writing Hermes's config: {e}")))?;
    write_private(&hermes_home(home).join("config.yaml"), &text)?;
    Ok(())
}

/// The Python interpreter that runs the Hermes at `program` (its `#!` line, as pip writes it
/// into a virtual environment's `bin/hermes`), when it names one.
pub fn interpreter(program: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 512];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let first = String::from_utf8_lossy(&head[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let line = first.strip_prefix("#!")?.trim();
    let mut words = line.split_whitespace();
    let exe = words.next()?;
    // `#!/usr/bin/env python3`: the interpreter is the next word, looked up on PATH.
    let exe = if exe.ends_with("/env") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        exe
    };
    let name = Path::new(exe).file_name()?.to_string_lossy().into_owned();
    name.starts_with("python").then(|| PathBuf::from(exe))
}

/// The command checking that `python` (Hermes's) imports `mcp`, without which Hermes starts
/// no MCP server at all.
pub fn mcp_probe(python: &Path) -> Vec<String> {
    vec![
        python.to_string_lossy().into_owned(),
        "-c".into(),
        "import mcp.client.streamable_http".into(),
    ]
}

/// Prints one session of Hermes's SQLite store: `{"session": {...}}` (its row, without the
/// system prompt), then `{"message": {...}}` per message, in order.
const READ_STATE: &str = r#"
import json, os, sqlite3, sys
db, session = sys.argv[-2], sys.argv[-1]
if not os.path.exists(db):
    sys.exit(f"no Hermes state store at {db}")
c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
c.row_factory = sqlite3.Row
row = c.execute("SELECT * FROM sessions WHERE id = ?", (session,)).fetchone()
if row is None:
    sys.exit(f"no session {session} in {db}")
print(json.dumps({"session": {k: row[k] for k in row.keys() if k != "system_prompt"}}))
for m in c.execute(
    "SELECT id, role, content, tool_call_id, tool_calls, tool_name, finish_reason "
    "FROM messages WHERE session_id = ? ORDER BY id", (session,)):
    print(json.dumps({"message": {k: m[k] for k in m.keys()}}))
"#;

/// Prints the id of the session Hermes last started in its store (nothing when there is none).
const LATEST_SESSION: &str = r#"
import os, sqlite3, sys
db = sys.argv[-1]
if os.path.exists(db):
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    row = c.execute("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1").fetchone()
    if row:
        print(row[0])
"#;

/// The command printing the session Hermes last started (see [`LATEST_SESSION`]): the session
/// of a turn stopped before it printed `session_id:` (the store is the trial's own).
pub(super) fn latest_session_reader(
    python: &Path,
    env: &BTreeMap<String, String>,
) -> Option<Vec<String>> {
    let home = env.get("HERMES_HOME")?;
    Some(vec![
        python.to_string_lossy().into_owned(),
        "-c".into(),
        LATEST_SESSION.into(),
        Path::new(home)
            .join("state.db")
            .to_string_lossy()
            .into_owned(),
    ])
}

/// The command printing the state of `session` (see [`READ_STATE`]), run with `python`;
/// `env` is the harness's environment (its `HERMES_HOME`).
pub(super) fn transcript_reader(
    python: &Path,
    env: &BTreeMap<String, String>,
    session: &str,
) -> Option<Vec<String>> {
    let home = env.get("HERMES_HOME")?;
    Some(vec![
        python.to_string_lossy().into_owned(),
        "-c".into(),
        READ_STATE.into(),
        Path::new(home)
            .join("state.db")
            .to_string_lossy()
            .into_owned(),
        session.into(),
    ])
}

#[cfg(test)]
mod tests {
    use super::super::tests::vars;
    use super::super::*;
    use bureau_agents::harness::HarnessDef;

    #[test]
    fn hermes_runs_quiet_on_the_custom_provider_and_resumes_its_session() {
        let mut def = HarnessDef::new("hermes");
        def.model = Some("gpt-4o".into());
        let t = Harness::Hermes.template(&def);
        let first = expand(&t, &vars(None));
        assert_eq!(&first[..2], ["hermes", "chat"]);
        assert_eq!(first[2], format!("--query={}", vars(None).prompt));
        assert!(first.windows(2).any(|w| w == ["--provider", "custom"]));
        assert!(first.contains(&"--quiet".to_string()));
        assert!(first.contains(&"--no-restore-cwd".to_string()));
        assert!(!first.iter().any(|a| a.starts_with("--resume")));
        assert!(!first.iter().any(|a| a == "--yolo"));
        assert_eq!(&first[first.len() - 2..], ["--model", "gpt-4o"]);
        let later = expand(&t, &vars(Some("20261126_084547_5f8949")));
        assert!(later.contains(&"--resume=20261126_084547_5f8949".to_string()));
    }

    #[test]
    fn hermes_is_configured_in_a_private_home_without_the_scanner_warning() {
        let dir = tempfile::tempdir().unwrap();
        let ep = Endpoint {
            url: "http://127.0.0.1:9/mcp",
            authorization: "Bearer s3cret",
        };
        let mut def = HarnessDef::new("hermes");
        def.model = Some("gpt-4o".into());
        write_mcp_config(Harness::Hermes, dir.path(), Path::new("/w"), &ep, &def).unwrap();
        let env = harness_env(Harness::Hermes, dir.path(), Path::new("/w"), "tok", &def);
        let home = Path::new(&env["HERMES_HOME"]);
        assert!(home.starts_with(dir.path()));
        let text = std::fs::read_to_string(home.join("config.yaml")).unwrap();
        let y: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        assert_eq!(y["model"]["provider"], "custom");
        assert_eq!(y["model"]["default"], "gpt-4o");
        assert_eq!(y["security"]["tirith_enabled"], false);
        assert_eq!(
            y["mcp_servers"]["bureau"]["headers"]["Authorization"],
            "Bearer s3cret"
        );
        let reader = super::transcript_reader(Path::new("/venv/bin/python"), &env, "s-1").unwrap();
        assert_eq!(reader[0], "/venv/bin/python");
        assert_eq!(reader.last().unwrap(), "s-1");
        assert!(Path::new(&reader[reader.len() - 2]).starts_with(home));
    }

    #[test]
    fn hermes_without_an_endpoint_is_refused_unless_args_choose_a_provider() {
        let mut def = HarnessDef::new("hermes");
        def.env
            .insert("CUSTOM_BASE_URL".into(), "http://127.0.0.1:9/v1".into());
        assert_eq!(super::missing_settings(&def), None);
        def.env.insert("CUSTOM_BASE_URL".into(), "".into());
        if std::env::var("CUSTOM_BASE_URL").is_err() {
            let why = super::missing_settings(&def).unwrap();
            assert!(why.contains("CUSTOM_BASE_URL"), "{why}");
            def.args = vec!["--provider".into(), "openrouter".into()];
            assert_eq!(super::missing_settings(&def), None);
        }
    }

    #[test]
    fn hermess_python_is_read_from_its_script() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hermes");
        std::fs::write(
            &p,
            "#!/opt/h/bin/python3.11\n# -*- coding: utf-8 -*-\nimport sys\n",
        )
        .unwrap();
        assert_eq!(
            super::interpreter(&p),
            Some(PathBuf::from("/opt/h/bin/python3.11"))
        );
        std::fs::write(&p, "#!/usr/bin/env python3\n").unwrap();
        assert_eq!(super::interpreter(&p), Some(PathBuf::from("python3")));
        std::fs::write(&p, "#!/bin/sh\nexec x\n").unwrap();
        assert_eq!(super::interpreter(&p), None);
        assert_eq!(super::interpreter(&dir.path().join("none")), None);
    }
}
