//! OpenHands CLI (`openhands`, PyPI `openhands`, verified with 1.16.0 on CPython 3.12):
//! `openhands --headless --json --override-with-envs`, the MCP server in `mcp.json` of its
//! persistence directory under a private `HOME` (docs/harnesses/openhands.md).
//!
//! OpenHands 1.16 has no `--model`: the model, endpoint and key come from `LLM_MODEL`,
//! `LLM_BASE_URL` and `LLM_API_KEY`, read only with `--override-with-envs` (without it the CLI
//! prints "Headless mode requires existing settings" and exits 0 without a model call). The
//! conversation id is printed only as a plain line `Conversation ID: <hex>`; the usage only in
//! `<conversations>/<hex>/base_state.json` (the conversation's running total), read after each
//! turn ([`usage_file`]).

use std::path::Path;

use bureau_agents::AgentError;
use bureau_agents::harness::HarnessDef;
use serde_json::json;

use super::*;

/// The command template (placeholders as in [`expand`]). The model is not an argument: it is
/// `LLM_MODEL` in the environment ([`env`]).
pub(super) fn template(_def: &HarnessDef) -> Vec<String> {
    let s = |a: &str| a.to_string();
    vec![
        s("openhands"),
        s("--headless"),
        s("--json"),
        s("--override-with-envs"),
        // One argument: a prompt starting with `-` is never read as an option.
        s("--task={prompt}"),
        s("--resume={session}"),
    ]
}

/// OpenHands's persistence directory under the private `home`.
fn persistence_dir(home: &Path) -> PathBuf {
    home.join(".openhands")
}

/// Write the harness's MCP configuration under the private `home` (the entry `openhands mcp
/// add bureau --transport http --header "Authorization: ..." <url>` writes).
pub(super) fn write_config(
    home: &Path,
    _workspace: &Path,
    ep: &Endpoint<'_>,
) -> Result<(), AgentError> {
    let cfg = json!({
        "mcpServers": {
            "bureau": {
                "transport": "http",
                "url": ep.url,
                "headers": {"Authorization": ep.authorization},
                "enabled": true
            }
        }
    });
    write_private(&persistence_dir(home).join("mcp.json"), &pretty(&cfg))?;
    Ok(())
}

/// The environment OpenHands runs with (before the agent's `env`): its persistence and
/// conversations directories named outright (an `OPENHANDS_PERSISTENCE_DIR` of Bureau's
/// environment would send it to the user's own), the workspace as its work directory, no
/// banner, and LiteLLM's bundled price table (else it fetches one from GitHub on every start).
pub(super) fn env(home: &Path, workspace: &Path, env: &mut BTreeMap<String, String>) {
    let dir = persistence_dir(home);
    env.insert(
        "OPENHANDS_PERSISTENCE_DIR".into(),
        dir.to_string_lossy().into_owned(),
    );
    env.insert(
        "OPENHANDS_CONVERSATIONS_DIR".into(),
        dir.join("conversations").to_string_lossy().into_owned(),
    );
    env.insert(
        "OPENHANDS_WORK_DIR".into(),
        workspace.to_string_lossy().into_owned(),
    );
    env.insert("OPENHANDS_SUPPRESS_BANNER".into(), "1".into());
    env.insert("LITELLM_LOCAL_MODEL_COST_MAP".into(), "True".into());
}

/// The model OpenHands runs: the agent's `model`, else `LLM_MODEL` of its `env` or of
/// Bureau's environment.
pub(super) fn model(def: &HarnessDef) -> Option<String> {
    def.model
        .clone()
        .or_else(|| def.env.get("LLM_MODEL").cloned())
        .or_else(|| std::env::var("LLM_MODEL").ok())
        .filter(|m| !m.trim().is_empty())
}

/// What OpenHands needs to run headless that is missing, with the fix (`None`: nothing).
pub(super) fn missing_settings(def: &HarnessDef) -> Option<String> {
    let set = |var: &str| {
        def.env
            .get(var)
            .cloned()
            .or_else(|| std::env::var(var).ok())
            .is_some_and(|v| !v.trim().is_empty())
    };
    let mut missing = Vec::new();
    if model(def).is_none() {
        missing.push("a model (the agent's `model`, or `LLM_MODEL` in its `env`)");
    }
    if !set("LLM_API_KEY") {
        missing.push("`LLM_API_KEY` (in the agent's `env` or the environment; any non-empty value for a server that takes none)");
    }
    (!missing.is_empty()).then(|| {
        format!(
            "OpenHands runs headless only with its settings from the environment, and it lacks {}",
            missing.join(" and ")
        )
    })
}

/// The conversations directory of the harness's environment `env`.
fn conversations_dir(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    env.get("OPENHANDS_CONVERSATIONS_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            env.get("OPENHANDS_PERSISTENCE_DIR")
                .map(|p| Path::new(p).join("conversations"))
        })
}

/// The conversation OpenHands last wrote to in the private conversations directory: the
/// session of a turn stopped before it printed its `Conversation ID` (the directory is the
/// trial's own, so its newest conversation is this turn's).
pub(super) fn latest_conversation(env: &BTreeMap<String, String>) -> Option<String> {
    let dir = conversations_dir(env)?;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("base_state.json").is_file())
        .filter_map(|e| {
            let modified = std::fs::metadata(e.path().join("base_state.json"))
                .and_then(|m| m.modified())
                .ok()?;
            Some((modified, e.file_name().to_string_lossy().into_owned()))
        })
        .max()
        .map(|(_, id)| id)
}

/// The file holding the usage of conversation `session` (its running total): the
/// conversations directory of the harness's environment `env`.
pub(super) fn usage_file(env: &BTreeMap<String, String>, session: &str) -> Option<PathBuf> {
    // The id as printed (hex); refuse anything that could leave the directory.
    if session.is_empty()
        || !session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return None;
    }
    Some(
        conversations_dir(env)?
            .join(session.replace('-', ""))
            .join("base_state.json"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::vars;
    use super::super::*;
    use bureau_agents::harness::HarnessDef;

    #[test]
    fn openhands_reads_its_settings_from_the_environment_and_resumes_by_conversation_id() {
        let mut def = HarnessDef::new("openhands");
        def.model = Some("openai/gpt-4o".into());
        let t = Harness::OpenHands.template(&def);
        let first = expand(&t, &vars(None));
        assert_eq!(
            &first[..4],
            ["openhands", "--headless", "--json", "--override-with-envs"]
        );
        assert!(!first.iter().any(|a| a.starts_with("--model")));
        assert!(!first.iter().any(|a| a.starts_with("--resume")));
        assert_eq!(first[4], format!("--task={}", vars(None).prompt));
        let later = expand(&t, &vars(Some("abc123")));
        assert!(later.contains(&"--resume=abc123".to_string()));

        let dir = tempfile::tempdir().unwrap();
        let env = harness_env(Harness::OpenHands, dir.path(), Path::new("/w"), "tok", &def);
        assert_eq!(env["LLM_MODEL"], "openai/gpt-4o");
        assert_eq!(env["OPENHANDS_WORK_DIR"], "/w");
        assert!(Path::new(&env["OPENHANDS_PERSISTENCE_DIR"]).starts_with(dir.path()));
        assert!(Path::new(&env["HOME"]).starts_with(dir.path()));
        let file = super::usage_file(&env, "08ea1fa0-0f90-4c93-936a-e9a881cc1f54").unwrap();
        assert!(file.starts_with(&env["OPENHANDS_CONVERSATIONS_DIR"]));
        assert!(file.ends_with("08ea1fa00f904c93936ae9a881cc1f54/base_state.json"));
        assert_eq!(super::usage_file(&env, "../x"), None);
        // The agent's `model` wins over an `LLM_MODEL` in its env.
        def.env.insert("LLM_MODEL".into(), "openai/other".into());
        let env = harness_env(Harness::OpenHands, dir.path(), Path::new("/w"), "tok", &def);
        assert_eq!(env["LLM_MODEL"], "openai/gpt-4o");
    }

    #[test]
    fn the_conversation_openhands_last_wrote_is_found_in_the_private_store() {
        let dir = tempfile::tempdir().unwrap();
        let env = harness_env(
            Harness::OpenHands,
            dir.path(),
            Path::new("/w"),
            "tok",
            &HarnessDef::new("openhands"),
        );
        assert_eq!(super::latest_conversation(&env), None);
        let conversations = Path::new(&env["OPENHANDS_CONVERSATIONS_DIR"]);
        for id in ["aaa111", "bbb222"] {
            std::fs::create_dir_all(conversations.join(id)).unwrap();
            std::fs::write(conversations.join(id).join("base_state.json"), "{}").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // A directory without a state is not a conversation.
        std::fs::create_dir_all(conversations.join("ccc333")).unwrap();
        assert_eq!(super::latest_conversation(&env).as_deref(), Some("bbb222"));
        assert_eq!(
            latest_session(Harness::OpenHands, &env, None),
            Some(LatestSession::Known("bbb222".into()))
        );
        assert_eq!(latest_session(Harness::Codex, &env, None), None);
    }

    #[test]
    fn openhands_without_a_key_or_model_is_refused_naming_the_fix() {
        let mut def = HarnessDef::new("openhands");
        def.env.insert("LLM_MODEL".into(), "openai/gpt-4o".into());
        def.env.insert("LLM_API_KEY".into(), "sk-x".into());
        assert_eq!(super::missing_settings(&def), None);
        def.env.insert("LLM_API_KEY".into(), " ".into());
        if std::env::var("LLM_API_KEY").is_err() {
            let why = super::missing_settings(&def).unwrap();
            assert!(why.contains("LLM_API_KEY"), "{why}");
        }
    }
}
