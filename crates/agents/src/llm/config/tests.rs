use super::*;

fn parse(src: &str) -> Result<AgentsFile, String> {
    AgentsFile::parse(Path::new("agents.toml"), src).map_err(|e| e.to_string())
}

const EXAMPLE: &str = r#"
[agents.gpt-mini]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
temperature = 0
max_output_tokens = 4096
seed = 7
[agents.gpt-mini.limits]
max_input_tokens = 2000000
max_output_tokens = 200000
max_cost_usd = 5.0
[agents.gpt-mini.retry]
max_retries = 3
initial_backoff_seconds = 0.25

[agents.claude]
kind = "llm"
model = "anthropic:claude-sonnet-4-5"
extra_body = { metadata = { user_id = "bureau" } }

[prices."openai:gpt-4.1-mini"]
input_per_mtok = 0.4
cached_input_per_mtok = 0.1
output_per_mtok = 1.6
"#;

#[test]
fn shell_settings_load_from_a_table_or_a_bool() {
    let base = "[agents.a]\nkind = \"llm\"\nmodel = \"openai:m\"\n";
    let get = |extra: &str| {
        let f = parse(&format!("{base}{extra}")).unwrap();
        let AgentDef::Llm(d) = &f.agents["a"] else {
            panic!("`a` is an llm agent")
        };
        d.shell.clone()
    };
    assert_eq!(get(""), ShellSettings::default());
    assert!(get("").enabled);
    assert!(!get("shell = false\n").enabled);
    let s = get(
        "[agents.a.shell]\nwall_seconds = 5\nmemory_mb = 512\nmax_processes = 16\noutput_bytes = 1000\n",
    );
    assert!(s.enabled);
    assert_eq!(
        (s.wall_seconds, s.memory_mb, s.max_processes, s.output_bytes),
        (5, 512, 16, 1000)
    );
    assert_eq!(s.cpu_seconds, ShellSettings::default().cpu_seconds);
    // The per-file size limit, under its name and its older one.
    assert_eq!(get("[agents.a.shell]\nmax_file_mb = 3\n").max_file_mb, 3);
    assert_eq!(get("[agents.a.shell]\nfile_mb = 4\n").max_file_mb, 4);
    assert!(!get("[agents.a.shell]\nenabled = false\n").enabled);
    let err = parse(&format!("{base}[agents.a.shell]\nwall_seconds = 0\n")).unwrap_err();
    assert!(err.contains("[agents.a.shell] wall_seconds is 0"), "{err}");
    assert!(parse(&format!("{base}[agents.a.shell]\nwal_seconds = 5\n")).is_err());
}

#[test]
fn the_documented_example_loads() {
    let f = parse(EXAMPLE).unwrap();
    let AgentDef::Llm(g) = &f.agents["gpt-mini"] else {
        panic!("gpt-mini is an llm agent")
    };
    assert_eq!(g.model.to_string(), "openai:gpt-4.1-mini");
    assert_eq!(g.sampling.temperature, Some(0.0));
    assert_eq!(g.sampling.max_output_tokens, Some(4096));
    assert_eq!(g.sampling.seed, Some(7));
    assert_eq!(g.limits.max_cost_usd, Some(5.0));
    assert_eq!(g.limits.max_input_tokens, Some(2_000_000));
    assert_eq!(g.retry.max_retries, 3);
    assert_eq!(g.retry.initial_backoff, Duration::from_millis(250));
    assert_eq!(g.retry.max_wait, RetrySettings::default().max_wait);
    assert_eq!(g.price.as_ref().unwrap().cached_input_per_mtok, Some(0.1));
    let AgentDef::Llm(c) = &f.agents["claude"] else {
        panic!("claude is an llm agent")
    };
    assert_eq!(c.model.provider, Provider::Anthropic);
    assert!(c.price.is_none());
    assert_eq!(c.extra_body["metadata"]["user_id"], "bureau");
}

#[test]
fn errors_are_located_and_all_reported() {
    let src = r#"[agents.a]
kind = "llm"
model = "gpt-4"

[agents.b]
kind = "llm"
model = "openai:gpt-4.1"
temperature = 3
[agents.b.limits]
max_cost_usd = 1.0

[agents.c]
kind = "harness"
"#;
    let err = parse(src).unwrap_err();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(
        lines[0].starts_with("agents.toml:3:9: model `gpt-4` names no provider"),
        "{err}"
    );
    assert!(lines[0].contains(" — "), "{err}");
    assert!(
        lines[1].starts_with("agents.toml:8:15: temperature 3 is out of range"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("agents.toml:10:16: max_cost_usd needs a price for `openai:gpt-4.1`"),
        "{err}"
    );
    assert!(lines[2].contains("[prices.\"openai:gpt-4.1\"]"), "{err}");
    assert!(
        lines[3].starts_with("agents.toml:12:1: agent `c` (kind harness) has no `harness`"),
        "{err}"
    );
}

#[test]
fn unknown_keys_and_bad_types_are_toml_errors_with_a_hint() {
    let err =
        parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\ntemprature = 0\n").unwrap_err();
    assert!(
        err.starts_with("agents.toml:4:1: unknown field `temprature`"),
        "{err}"
    );
    assert!(err.contains("remove the key or fix its spelling"), "{err}");
    let err =
        parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\nmax_output_tokens = \"many\"\n")
            .unwrap_err();
    assert!(err.starts_with("agents.toml:4:"), "{err}");
    assert!(err.contains("give the value the type"), "{err}");
    let err = parse("[agents.a\n").unwrap_err();
    assert!(err.starts_with("agents.toml:1:"), "{err}");
}

#[test]
fn names_keys_and_urls_are_checked() {
    let err = parse("[agents.oracle]\nkind = \"llm\"\nmodel = \"openai:x\"\n").unwrap_err();
    assert!(
        err.contains("agent name `oracle` is a built-in agent spec"),
        "{err}"
    );
    let err = parse("[agents.\"a b\"]\nkind = \"llm\"\nmodel = \"openai:x\"\n").unwrap_err();
    assert!(err.contains("agent name `a b`"), "{err}");
    let err =
        parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\napi_key_env = \"sk-abc123\"\n")
            .unwrap_err();
    assert!(err.contains("looks like an API key"), "{err}");
    assert!(!err.contains("abc123"), "{err}");
    let err =
        parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\nbase_url = \"localhost:8000\"\n")
            .unwrap_err();
    assert!(
        err.starts_with("agents.toml:4:12: base_url `localhost:8000`"),
        "{err}"
    );
    let err = parse("[agents.a]\nkind = \"llm\"\n").unwrap_err();
    assert!(
        err.starts_with("agents.toml:1:1: agent `a` (kind llm) has no `model`"),
        "{err}"
    );
    let err = parse("[agents.a]\nkind = \"llm\"\nmodel = \"openai:x\"\n[agents.a.retry]\nmax_wait_seconds = -1\n")
        .unwrap_err();
    assert!(
        err.starts_with("agents.toml:5:20: `max_wait_seconds` is -1"),
        "{err}"
    );
    let err = parse("[prices.\"gpt\"]\ninput_per_mtok = 1\noutput_per_mtok = -2\n").unwrap_err();
    assert!(err.contains("names no provider"), "{err}");
    assert!(err.contains("output_per_mtok is -2"), "{err}");
}

#[test]
fn harness_agents_load_with_their_command_format_and_limits() {
    let f = parse(
        r#"
[agents.cc]
harness = "claude-code"
model = "claude-sonnet-4-5"
args = ["--max-turns", "40"]
[agents.cc.limits]
wall_seconds = 600

[agents.mine]
harness = "command"
command = ["my-agent", "--prompt-file", "{prompt_file}", "--mcp", "{mcp_config}"]
format = "codex"
env = { MY_AGENT_QUIET = "1" }
"#,
    )
    .unwrap();
    let AgentDef::Harness(cc) = &f.agents["cc"] else {
        panic!("cc is a harness agent")
    };
    assert_eq!(cc.harness, "claude-code");
    assert_eq!(cc.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(cc.args, vec!["--max-turns", "40"]);
    assert_eq!(cc.wall_seconds, Some(600));
    let AgentDef::Harness(mine) = &f.agents["mine"] else {
        panic!("mine is a harness agent")
    };
    assert_eq!(mine.command.as_ref().unwrap()[2], "{prompt_file}");
    assert_eq!(mine.format.as_deref(), Some("codex"));
    assert_eq!(mine.env["MY_AGENT_QUIET"], "1");
    let v = serde_json::to_value(mine).unwrap();
    assert_eq!(v["kind"], "harness");
    assert_eq!(v["harness"], "command");
}

#[test]
fn harness_agents_refuse_keys_they_cannot_use() {
    let err = parse(
        r#"[agents.a]
harness = "codex"
temperature = 0
command = ["x"]
[agents.a.limits]
max_cost_usd = 1.0

[agents.b]
harness = "command"
format = "yaml"

[agents.c]
harness = "aider"

[agents.d]
kind = "llm"
model = "openai:x"
format = "codex"
"#,
    )
    .unwrap_err();
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].contains("(harness codex) sets `temperature`"),
        "{err}"
    );
    assert!(lines[1].contains("(harness codex) sets `command`"), "{err}");
    assert!(lines[2].contains("sets a token or cost limit"), "{err}");
    assert!(
        lines[3].contains("(harness command) has no `command`"),
        "{err}"
    );
    assert!(lines[4].contains("unknown output format `yaml`"), "{err}");
    assert!(lines[5].contains("unknown harness `aider`"), "{err}");
    assert!(lines[6].contains("(kind llm) sets `format`"), "{err}");
    assert_eq!(lines.len(), 7, "{err}");
    let err = parse("[agents.a]\nmodel = \"openai:x\"\n").unwrap_err();
    assert!(err.contains("agent `a` has no `kind`"), "{err}");
}

#[test]
fn model_refs_parse_and_print() {
    let m = ModelRef::parse("openai:qwen2.5:7b").unwrap();
    assert_eq!(
        (m.provider, m.model.as_str()),
        (Provider::OpenAi, "qwen2.5:7b")
    );
    assert_eq!(m.to_string(), "openai:qwen2.5:7b");
    assert!(
        ModelRef::parse("gemini:x")
            .unwrap_err()
            .contains("unknown model provider `gemini`")
    );
    assert!(
        ModelRef::parse("openai:")
            .unwrap_err()
            .contains("empty model name")
    );
}

#[test]
fn endpoints_follow_each_providers_base_url_convention() {
    assert_eq!(
        Provider::OpenAi.endpoint("http://127.0.0.1:11434/v1/"),
        "http://127.0.0.1:11434/v1/chat/completions"
    );
    assert_eq!(
        Provider::Anthropic.endpoint("https://api.anthropic.com"),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        Provider::Anthropic.endpoint("http://proxy/v1"),
        "http://proxy/v1/messages"
    );
}

#[test]
fn definitions_serialise_without_secrets_and_with_their_settings() {
    let f = parse(EXAMPLE).unwrap();
    let AgentDef::Llm(g) = &f.agents["gpt-mini"] else {
        panic!("gpt-mini is an llm agent")
    };
    let v = serde_json::to_value(g).unwrap();
    assert_eq!(v["kind"], "llm");
    assert_eq!(v["model"], "openai:gpt-4.1-mini");
    assert_eq!(v["api_key_env"], "OPENAI_API_KEY");
    assert_eq!(v["retry"]["initial_backoff_seconds"], 0.25);
    assert_eq!(v["price"]["output_per_mtok"], 1.6);
}
