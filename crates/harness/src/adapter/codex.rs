//! Codex CLI (`codex`, npm `@openai/codex`, verified with 0.169.0): `codex exec --json`, the MCP
//! server given by `-c` overrides with the token in the environment, `exec resume <thread>` on
//! later turns (docs/harnesses/codex.md).
//!
//! `codex exec` runs with the approval policy `never`, under which Codex refuses every MCP
//! tool call that its tool annotations say needs approval ("MCP tool call requires approval,
//! but approval policy is never") — Bureau's writing tools among them. The server's
//! `default_tools_approval_mode = "approve"` lets Bureau's tools run unattended; Codex's own
//! tools (its shell, patches) keep Codex's default policy and sandbox.

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
        s("-c"),
        s("mcp_servers.bureau.default_tools_approval_mode=\"approve\""),
    ];
    if let Some(m) = &def.model {
        t.extend([s("--model"), m.clone()]);
    }
    t.extend([s("{resume}"), s("{session}"), s("{prompt}")]);
    t
}

/// The model Codex runs when the agent names none: the one its extra arguments set (`-m M`,
/// `--model M`, `--model=M`, `-c model="M"`). Codex never names it in its output.
pub(super) fn model_in_args(args: &[String]) -> Option<String> {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        let next = args.get(i + 1);
        if a == "-m" || a == "--model" {
            found = next.cloned();
        } else if let Some(m) = a.strip_prefix("--model=") {
            found = Some(m.to_string());
        } else if (a == "-c" || a == "--config")
            && let Some(kv) = next
            && let Some((k, v)) = kv.split_once('=')
            && k.trim() == "model"
        {
            found = Some(v.trim().trim_matches(|c| c == '"' || c == '\'').to_string());
        }
    }
    found.filter(|m| !m.is_empty())
}

/// The model Codex ran the thread `thread` with, from its session rollout
/// (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`, `CODEX_HOME` defaulting
/// to `~/.codex`; the last `turn_context` row's `model`) — what it sent the model server, when
/// neither the agent nor its arguments name it. `env` is the harness's extra environment.
pub(super) fn rollout_model(env: &BTreeMap<String, String>, thread: &str) -> Option<String> {
    let home = env
        .get("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("CODEX_HOME").map(PathBuf::from))
        .or_else(|| {
            env.get("HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
                .map(|h| h.join(".codex"))
        })?;
    let suffix = format!("-{thread}.jsonl");
    // Newest first: sessions/<year>/<month>/<day>/.
    let sorted_desc = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        v.sort_by(|a, b| b.cmp(a));
        v
    };
    let file = sorted_desc(&home.join("sessions"))
        .iter()
        .flat_map(|y| sorted_desc(y))
        .flat_map(|m| sorted_desc(&m))
        .flat_map(|d| sorted_desc(&d))
        .find(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&suffix))
        })?;
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .rev()
        .filter(|l| l.contains("\"turn_context\""))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|row| row.get("type").and_then(Value::as_str) == Some("turn_context"))
        .and_then(|row| {
            row.get("payload")?
                .get("model")?
                .as_str()
                .map(str::to_string)
        })
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
        // Bureau's tools run unattended; Codex's own keep its default approval policy.
        assert!(first.windows(2).any(|w| w
            == [
                "-c",
                "mcp_servers.bureau.default_tools_approval_mode=\"approve\""
            ]));
        assert!(!first.iter().any(|a| a.contains("dangerously")
            || a.starts_with("approval_policy")
            || a == "--full-auto"));
        assert_eq!(first.last().unwrap(), &vars(None).prompt);
        let later = expand(&t, &vars(Some("thr-9")));
        assert_eq!(&later[..3], ["codex", "exec", "--json"]);
        assert_eq!(
            &later[later.len() - 3..],
            ["resume".to_string(), "thr-9".to_string(), vars(None).prompt]
        );
    }

    #[test]
    fn the_model_codex_runs_is_read_from_its_arguments() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::model_in_args(&args(&["-m", "gpt-5-codex"])).as_deref(),
            Some("gpt-5-codex")
        );
        assert_eq!(
            super::model_in_args(&args(&["--model=o3"])).as_deref(),
            Some("o3")
        );
        assert_eq!(
            super::model_in_args(&args(&[
                "-c",
                "model_provider=\"x\"",
                "-c",
                "model=\"gpt-5.4\""
            ]))
            .as_deref(),
            Some("gpt-5.4")
        );
        assert_eq!(
            super::model_in_args(&args(&["-c", "model_provider=\"x\""])),
            None
        );
        let mut def = HarnessDef::new("codex");
        def.args = args(&["-c", "model=\"gpt-5.4\""]);
        assert_eq!(Harness::Codex.model(&def).as_deref(), Some("gpt-5.4"));
        def.model = Some("gpt-5-codex".into());
        assert_eq!(Harness::Codex.model(&def).as_deref(), Some("gpt-5-codex"));
        assert!(Harness::Codex.cumulative_usage());
        assert!(!Harness::OpenClaw.cumulative_usage());
    }

    #[test]
    fn the_model_of_a_thread_is_read_from_codexs_rollout() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("sessions/2026/11/25");
        std::fs::create_dir_all(&day).unwrap();
        // Rows as Codex 0.169.0 writes them (trimmed).
        std::fs::write(
            day.join("rollout-2026-11-25T18-09-45-thr-1.jsonl"),
            concat!(
                r#"{"timestamp":"2026-11-25T18:09:45.538Z","type":"session_meta","payload":{"id":"thr-1"}}"#,
                "\n",
                r#"{"timestamp":"2026-11-25T18:09:45.691Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"t1","approval_policy":"never","model":"gpt-5-codex"}}"#,
                "\n",
                r#"{"timestamp":"2026-11-25T18:09:46.835Z","ordinal":26,"type":"turn_context","payload":{"turn_id":"t2","approval_policy":"never","model":"gpt-5.4"}}"#,
                "\n",
            ),
        )
        .unwrap();
        let env: BTreeMap<String, String> = [(
            "CODEX_HOME".to_string(),
            home.path().to_string_lossy().into_owned(),
        )]
        .into();
        assert_eq!(
            Harness::Codex.session_model(&env, "thr-1").as_deref(),
            Some("gpt-5.4")
        );
        assert_eq!(Harness::Codex.session_model(&env, "thr-2"), None);
        assert_eq!(Harness::OpenClaw.session_model(&env, "thr-1"), None);
    }
}
