//! OpenHands CLI (`openhands`, PyPI `openhands`): headless JSON mode, the MCP server in
//! `~/.openhands/mcp.json` under a private `HOME`.

use std::path::Path;

use bureau_agents::AgentError;
use bureau_agents::harness::HarnessDef;
use serde_json::json;

use super::*;

/// The command template (placeholders as in [`expand`]).
pub(super) fn template(def: &HarnessDef) -> Vec<String> {
    let s = |a: &str| a.to_string();
    let mut t = vec![
        s("openhands"),
        s("--headless"),
        s("--json"),
        s("-t"),
        s("{prompt}"),
        s("--resume={session}"),
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
    let _ = workspace;
    // `openhands mcp add bureau --transport http --header "Authorization: ..." <url>`
    // writes this entry to ~/.openhands/mcp.json.
    let cfg = json!({
        "mcpServers": {
            "bureau": {
                "transport": "http",
                "url": ep.url,
                "headers": {"Authorization": ep.authorization}
            }
        }
    });
    write_private(&home.join(".openhands/mcp.json"), &pretty(&cfg))?;
    Ok(())
}
