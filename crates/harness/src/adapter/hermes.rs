//! Hermes (`hermes`, PyPI `hermes-agent`): `hermes chat -q -Q`, the MCP server in
//! `~/.hermes/config.yaml` under a private `HOME`.

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
        s("-q"),
        s("{prompt}"),
        s("-Q"),
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
    let mut server = serde_yaml::Mapping::new();
    server.insert("url".into(), ep.url.into());
    let mut headers = serde_yaml::Mapping::new();
    headers.insert("Authorization".into(), ep.authorization.into());
    server.insert("headers".into(), headers.into());
    let mut servers = serde_yaml::Mapping::new();
    servers.insert("bureau".into(), server.into());
    let mut cfg = serde_yaml::Mapping::new();
    cfg.insert("mcp_servers".into(), servers.into());
    let text = serde_yaml::to_string(&cfg)
        .map_err(|e| AgentError::Failed(format!("writing Hermes's config: {e}")))?;
    write_private(&home.join(".hermes/config.yaml"), &text)?;
    Ok(())
}
