//! Codex CLI (`codex`, npm `@openai/codex`): `codex exec --json`, the MCP server given by `-c`
//! overrides with the token in the environment, `exec resume <thread>` on later turns.

use bureau_agents::harness::HarnessDef;

use super::*;

/// The command template (placeholders as in [`expand`]).
pub(super) fn template(def: &HarnessDef) -> Vec<String> {
    let s = |a: &str| a.to_string();
    // `codex exec [OPTIONS] [PROMPT]`, and on later turns `codex exec [OPTIONS]
    // resume <ID> [PROMPT]`: exec's own flags go before `resume`, which rejects
    // most of them (`{resume}` and `{session}` are dropped on the first turn).
    let mut t = vec![
        s("codex"),
        s("exec"),
        s("--json"),
        s("--skip-git-repo-check"),
        s("-c"),
        s("mcp_servers.bureau.url=\"{mcp_url}\""),
        s("-c"),
        format!("mcp_servers.bureau.bearer_token_env_var=\"{TOKEN_ENV}\""),
    ];
    if let Some(m) = &def.model {
        t.extend([s("--model"), m.clone()]);
    }
    t.extend([s("{resume}"), s("{session}"), s("{prompt}")]);
    t
}

#[cfg(test)]
mod tests {
    use super::super::tests::vars;
    use super::super::*;
    use bureau_agents::harness::HarnessDef;

    #[test]
    fn codex_uses_exec_resume_and_config_overrides_without_the_token() {
        let t = Harness::Codex.template(&HarnessDef::new("codex"));
        let first = expand(&t, &vars(None));
        assert_eq!(&first[..3], ["codex", "exec", "--json"]);
        assert!(first.contains(&"mcp_servers.bureau.url=\"http://127.0.0.1:9/mcp\"".to_string()));
        assert!(first.contains(&format!(
            "mcp_servers.bureau.bearer_token_env_var=\"{TOKEN_ENV}\""
        )));
        assert_eq!(first.last().unwrap(), &vars(None).prompt);
        let later = expand(&t, &vars(Some("thr-9")));
        assert_eq!(&later[..3], ["codex", "exec", "--json"]);
        assert_eq!(
            &later[later.len() - 3..],
            ["resume".to_string(), "thr-9".to_string(), vars(None).prompt]
        );
    }
}
