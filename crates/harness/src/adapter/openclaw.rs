//! OpenClaw (`openclaw`, npm `openclaw`): `openclaw agent --local --json`, the MCP server in
//! `~/.openclaw/openclaw.json` under a private `HOME`.

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
        s("main"),
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

/// Write the harness's MCP configuration under the private `home`.
pub(super) fn write_config(
    home: &Path,
    workspace: &Path,
    ep: &Endpoint<'_>,
) -> Result<(), AgentError> {
    let cfg = json!({
        "agents": {"defaults": {"workspace": workspace}},
        "gateway": {"mode": "local"},
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
    write_private(&home.join(".openclaw/openclaw.json"), &pretty(&cfg))?;
    Ok(())
}
