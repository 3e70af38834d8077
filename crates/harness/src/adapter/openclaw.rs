//! OpenClaw (`openclaw`, npm `openclaw`, verified with 2026.9.6 on Node 24):
//! `openclaw agent --local --json`, its configuration (the MCP server among it) in a private
//! state directory (docs/harnesses/openclaw.md).
//!
//! The configuration Bureau writes keeps OpenClaw out of the task's workspace and shows the
//! model Bureau's tools: the workspace as an absolute path (a relative one is resolved against
//! OpenClaw's own directory, and it makes a nested copy), `agents.defaults.skipBootstrap`
//! (else it writes `AGENTS.md`, `SOUL.md`, `USER.md`, `IDENTITY.md`, `BOOTSTRAP.md` and a `.git`
//! into the workspace), `tools.toolSearch: false` (else the MCP tools hide behind a search
//! tool and the model never sees `bureau__*`), and `memory.search.enabled: false` (its memory
//! index calls an embeddings API of its own).
//!
//! OpenClaw keeps the session's transcript in SQLite, not in a file: after each turn
//! [`transcript_reader`] reads this session's rows with the `node` that runs OpenClaw (Node
//! ≥ 24 has `node:sqlite`).

use std::path::Path;

use bureau_agents::AgentError;
use bureau_agents::harness::HarnessDef;
use serde_json::json;

use super::*;

/// The command template (placeholders as in [`expand`]).
pub(super) fn template(def: &HarnessDef) -> Vec<String> {
    let s = |a: &str| a.to_string();
    let mut t = vec![
        s("openclaw"),
        s("agent"),
        s("--local"),
        s("--json"),
        s("--agent"),
        s(AGENT),
        s("--session-id"),
        s("{trial_session}"),
        s("--message"),
        s("{prompt}"),
    ];
    if let Some(m) = &def.model {
        t.extend([s("--model"), m.clone()]);
    }
    t
}

/// The OpenClaw agent Bureau runs.
const AGENT: &str = "main";

/// OpenClaw's state directory under the private `home`.
fn state_dir(home: &Path) -> PathBuf {
    home.join(".openclaw")
}

/// Write the harness's configuration (the MCP server among it) into its state directory under
/// the private `home`.
pub(super) fn write_config(
    home: &Path,
    workspace: &Path,
    ep: &Endpoint<'_>,
) -> Result<(), AgentError> {
    // A relative workspace would be read from OpenClaw's state directory.
    let workspace = std::path::absolute(workspace)
        .map_err(|e| AgentError::Failed(format!("{}: {e}", workspace.display())))?;
    let cfg = json!({
        "agents": {"defaults": {"workspace": workspace, "skipBootstrap": true}},
        "gateway": {"mode": "local"},
        "tools": {"toolSearch": false},
        "memory": {"search": {"enabled": false}},
        "mcp": {
            "servers": {
                "bureau": {
                    "url": ep.url,
                    "transport": "streamable-http",
                    "headers": {"Authorization": ep.authorization}
                }
            }
        }
    });
    write_private(&state_dir(home).join("openclaw.json"), &pretty(&cfg))?;
    Ok(())
}

/// Where OpenClaw finds its state and configuration: named outright, so that an
/// `OPENCLAW_STATE_DIR` or `OPENCLAW_CONFIG_PATH` of Bureau's environment does not send it
/// to the user's own.
pub(super) fn env(home: &Path, env: &mut BTreeMap<String, String>) {
    let state = state_dir(home);
    env.insert(
        "OPENCLAW_CONFIG_PATH".into(),
        state.join("openclaw.json").to_string_lossy().into_owned(),
    );
    env.insert(
        "OPENCLAW_STATE_DIR".into(),
        state.to_string_lossy().into_owned(),
    );
}

/// Prints the transcript rows of one session of OpenClaw's SQLite store, one JSON object a
/// line, in order (rows stored compressed are `event_zstd`).
const READ_TRANSCRIPT: &str = r#"
import { DatabaseSync } from "node:sqlite";
import { zstdDecompressSync } from "node:zlib";
import { existsSync } from "node:fs";
const [db, session] = process.argv.slice(-2);
if (!existsSync(db)) { console.error(`no OpenClaw session store at ${db}`); process.exit(3); }
const d = new DatabaseSync(db, { readOnly: true });
const rows = d.prepare(
  "SELECT event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq");
for (const r of rows.iterate(session)) {
  const text = r.event_json ?? (r.event_zstd ? zstdDecompressSync(r.event_zstd).toString("utf8") : null);
  if (text) process.stdout.write(text.replace(/\n/g, " ") + "\n");
}
"#;

/// The command printing the transcript of `session` (see [`READ_TRANSCRIPT`]).
pub(super) fn transcript_reader(home: &Path, session: &str) -> Vec<String> {
    let db = state_dir(home)
        .join("agents")
        .join(AGENT)
        .join("agent")
        .join("openclaw-agent.sqlite");
    vec![
        "node".into(),
        "--no-warnings".into(),
        "--input-type=module".into(),
        "-e".into(),
        READ_TRANSCRIPT.into(),
        db.to_string_lossy().into_owned(),
        session.into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use bureau_agents::harness::HarnessDef;
    use serde_json::Value;

    #[test]
    fn openclaw_is_configured_to_stay_out_of_the_workspace_and_show_bureaus_tools() {
        let dir = tempfile::tempdir().unwrap();
        let ep = Endpoint {
            url: "http://127.0.0.1:9/mcp",
            authorization: "Bearer s3cret",
        };
        // A relative workspace (a relative `--out`) is written absolute.
        let def = HarnessDef::new("openclaw");
        write_mcp_config(Harness::OpenClaw, dir.path(), Path::new("run/w"), &ep, &def).unwrap();
        let env = harness_env(
            Harness::OpenClaw,
            dir.path(),
            Path::new("run/w"),
            "tok",
            &def,
        );
        let path = &env["OPENCLAW_CONFIG_PATH"];
        assert!(path.starts_with(&env["OPENCLAW_STATE_DIR"]));
        assert!(Path::new(path).starts_with(dir.path()));
        let cfg: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let ws = cfg["agents"]["defaults"]["workspace"].as_str().unwrap();
        assert!(Path::new(ws).is_absolute(), "{ws}");
        assert!(ws.ends_with("run/w"), "{ws}");
        assert_eq!(cfg["agents"]["defaults"]["skipBootstrap"], true);
        assert_eq!(cfg["tools"]["toolSearch"], false);
        assert_eq!(
            cfg["mcp"]["servers"]["bureau"]["headers"]["Authorization"],
            "Bearer s3cret"
        );
        let Some(AfterTurn::Command(reader)) =
            after_turn(Harness::OpenClaw, dir.path(), &env, None, "bureau-x")
        else {
            panic!("OpenClaw's transcript is read with a command")
        };
        assert_eq!(reader[0], "node");
        assert_eq!(reader.last().unwrap(), "bureau-x");
        assert!(Path::new(&reader[reader.len() - 2]).starts_with(&env["OPENCLAW_STATE_DIR"]));
        assert_eq!(
            after_turn(Harness::Codex, dir.path(), &env, None, "x"),
            None
        );
    }
}
