//! Claude Code (`claude`, npm `@anthropic-ai/claude-code`): `claude -p` with stream-json output,
//! the MCP configuration file on the command line, `--resume` on later turns.

use bureau_agents::harness::HarnessDef;

/// Environment Bureau sets for Claude Code (an agent's `env` overrides it).
///
/// `ENABLE_TOOL_SEARCH=false`: Claude Code 2.1 defers MCP tools behind its `ToolSearch` tool
/// (the model sees only a placeholder and must search before its first call of each tool).
/// Bureau gives every agent the office's tools directly, so that harnesses are compared on
/// the same footing; set it back in the agent's `env` to evaluate the deferred mode.
pub(super) const ENV: &[(&str, &str)] = &[("ENABLE_TOOL_SEARCH", "false")];

/// The command template (placeholders as in [`super::expand`]).
pub(super) fn template(def: &HarnessDef) -> Vec<String> {
    let s = |a: &str| a.to_string();
    let mut t = vec![
        s("claude"),
        s("-p"),
        s("{prompt}"),
        s("--mcp-config"),
        s("{mcp_config}"),
        s("--strict-mcp-config"),
        s("--output-format"),
        s("stream-json"),
        s("--verbose"),
        s("--allowedTools"),
        s("mcp__bureau"),
        s("--resume={session}"),
    ];
    if let Some(m) = &def.model {
        t.extend([s("--model"), m.clone()]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::super::tests::vars;
    use super::super::*;
    use bureau_agents::harness::HarnessDef;

    #[test]
    fn claude_code_resumes_after_the_first_turn_and_the_prompt_is_one_argument() {
        let mut def = HarnessDef::new("claude-code");
        def.model = Some("claude-sonnet-4-5".into());
        def.args = vec!["--max-turns".into(), "30".into()];
        let t = Harness::ClaudeCode.template(&def);
        let first = expand(&t, &vars(None));
        assert_eq!(
            &first[..3],
            [
                "claude",
                "-p",
                "Write {mcp_config} into memo.md; don't run $(rm -rf /)"
            ]
        );
        assert!(first.iter().all(|a| !a.starts_with("--resume")));
        assert!(
            first
                .windows(2)
                .any(|w| w == ["--mcp-config", "/p/mcp.json"])
        );
        assert!(
            first
                .windows(2)
                .any(|w| w == ["--output-format", "stream-json"])
        );
        assert!(first.contains(&"--verbose".to_string()));
        assert_eq!(
            &first[first.len() - 4..],
            ["--model", "claude-sonnet-4-5", "--max-turns", "30"]
        );
        let later = expand(&t, &vars(Some("sess-1")));
        assert!(later.contains(&"--resume=sess-1".to_string()));
    }
}
