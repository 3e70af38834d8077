//! Loading and validating an agents file: every problem located, all of them at once.

use super::raw::*;
use super::*;

struct Loader<'a> {
    path: &'a Path,
    source: &'a str,
    errors: Vec<TaskError>,
}

impl Loader<'_> {
    fn err(
        &mut self,
        span: std::ops::Range<usize>,
        what: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.errors.push(TaskError::new(
            Location::from_offset(self.path, self.source, span.start),
            what,
            hint,
        ));
    }

    /// A duration in seconds that must be positive and finite.
    fn seconds(&mut self, v: Option<Spanned<f64>>, key: &str, default: Duration) -> Duration {
        let Some(v) = v else { return default };
        let s = *v.get_ref();
        if !(s.is_finite() && s > 0.0 && s < 1e9) {
            self.err(
                v.span(),
                format!("`{key}` is {s}"),
                "give a positive number of seconds",
            );
            return default;
        }
        Duration::from_secs_f64(s)
    }
}

impl AgentsFile {
    /// Read and validate an agents file. Every problem is reported, located.
    pub fn load(path: &Path) -> Result<AgentsFile, TaskErrors> {
        let source = std::fs::read_to_string(path).map_err(|e| {
            TaskErrors::from(TaskError::new(
                Location::file(path),
                format!("cannot read the agents file: {e}"),
                "check the path given to --agents-file",
            ))
        })?;
        AgentsFile::parse(path, &source)
    }

    /// Validate the text of an agents file; `path` is used in error locations.
    pub fn parse(path: &Path, source: &str) -> Result<AgentsFile, TaskErrors> {
        let mut l = Loader {
            path,
            source,
            errors: Vec::new(),
        };
        let raw: RawFile = match toml::from_str(source) {
            Ok(r) => r,
            Err(e) => {
                let msg = e.message().trim().to_string();
                let hint = toml_hint(&msg);
                l.err(e.span().unwrap_or(0..0), msg, hint);
                return Err(TaskErrors(l.errors));
            }
        };

        let mut prices = BTreeMap::new();
        for (key, price) in raw.prices {
            let span = price.span();
            let p = price.into_inner();
            if let Err(msg) = ModelRef::parse(&key) {
                l.err(
                    span.clone(),
                    format!("[prices.\"{key}\"]: {msg}"),
                    "key prices by model exactly as agents name it, e.g. [prices.\"openai:gpt-4.1-mini\"]",
                );
            }
            let fields = [
                ("input_per_mtok", Some(p.input_per_mtok)),
                ("cached_input_per_mtok", p.cached_input_per_mtok),
                ("cache_write_per_mtok", p.cache_write_per_mtok),
                ("output_per_mtok", Some(p.output_per_mtok)),
            ];
            for (name, v) in fields {
                if let Some(v) = v
                    && !(v.is_finite() && v >= 0.0)
                {
                    l.err(
                        span.clone(),
                        format!("[prices.\"{key}\"] {name} is {v}"),
                        "prices are US dollars per million tokens, 0 or more",
                    );
                }
            }
            prices.insert(key, p);
        }

        let mut agents = BTreeMap::new();
        for (name, agent) in raw.agents {
            let span = agent.span();
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            {
                l.err(
                    span.clone(),
                    format!("agent name `{name}` is empty or has characters other than letters, digits, `-`, `_`, `.`"),
                    "use a short name such as `gpt-mini`; it names directories in run output",
                );
            } else if RESERVED_NAMES.contains(&name.as_str()) || name.starts_with("replay") {
                l.err(
                    span.clone(),
                    format!("agent name `{name}` is a built-in agent spec"),
                    "choose another name, e.g. `my-llm`",
                );
            }
            let agent = agent.into_inner();
            let is_harness = agent.harness.is_some()
                || agent
                    .kind
                    .as_ref()
                    .is_some_and(|k| k.get_ref() == "harness");
            if is_harness {
                if let Some(def) = harness_agent(&mut l, &name, span, agent) {
                    agents.insert(name, AgentDef::Harness(def));
                }
            } else if let Some(def) = llm_agent(&mut l, &name, span, agent, &prices) {
                agents.insert(name, AgentDef::Llm(def));
            }
        }

        if l.errors.is_empty() {
            Ok(AgentsFile {
                path: path.to_path_buf(),
                agents,
                prices,
            })
        } else {
            Err(TaskErrors(l.errors))
        }
    }

    /// The price of `model`, if the file gives one.
    pub fn price(&self, model: &ModelRef) -> Option<&Price> {
        self.prices.get(&model.to_string())
    }
}

fn llm_agent(
    l: &mut Loader<'_>,
    name: &str,
    span: std::ops::Range<usize>,
    raw: RawAgent,
    prices: &BTreeMap<String, Price>,
) -> Option<LlmDefinition> {
    let Some(kind) = &raw.kind else {
        l.err(
            span,
            format!("agent `{name}` has no `kind`"),
            "add kind = \"llm\", or harness = \"claude-code\" (codex, openhands, openclaw, hermes, command) for a third-party harness",
        );
        return None;
    };
    let kind_str = kind.get_ref().as_str();
    if !FILE_AGENT_KINDS.contains(&kind_str) {
        l.err(
            kind.span(),
            format!("agent `{name}` has unknown kind `{kind_str}`"),
            format!("use one of: {}", FILE_AGENT_KINDS.join(", ")),
        );
        return None;
    }
    let harness_keys = [
        ("command", raw.command.as_ref().map(|c| c.span())),
        ("format", raw.format.as_ref().map(|c| c.span())),
        ("args", raw.args.as_ref().map(|_| span.clone())),
        ("env", raw.env.as_ref().map(|_| span.clone())),
    ];
    for (key, at) in harness_keys {
        if let Some(at) = at {
            l.err(
                at,
                format!("agent `{name}` (kind llm) sets `{key}`, a key of harness agents"),
                "remove it, or make the agent a harness with harness = \"command\"",
            );
            return None;
        }
    }
    let model = match &raw.model {
        None => {
            l.err(
                span.clone(),
                format!("agent `{name}` (kind llm) has no `model`"),
                "add model = \"openai:gpt-4.1-mini\" (or anthropic:<model>)",
            );
            None
        }
        Some(m) => match ModelRef::parse(m.get_ref()) {
            Ok(m) => Some(m),
            Err(msg) => {
                l.err(m.span(), msg, "see docs/agents.md for model names");
                None
            }
        },
    };
    let mut ok = model.is_some();

    if let Some(url) = &raw.base_url {
        let u = url.get_ref();
        if !(u.starts_with("http://") || u.starts_with("https://")) {
            l.err(
                url.span(),
                format!("base_url `{u}` is not an http(s) URL"),
                "write e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1",
            );
            ok = false;
        }
    }
    if let Some(env) = &raw.api_key_env {
        let e = env.get_ref();
        if e.starts_with("sk-") {
            // Not echoed: it may be a real key.
            l.err(
                env.span(),
                "api_key_env looks like an API key, not a variable name",
                "put the key in an environment variable and name the variable here; keys never go in files",
            );
            ok = false;
        } else if e.is_empty() || !e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            l.err(
                env.span(),
                format!("api_key_env `{e}` is not an environment variable name"),
                "name the variable that holds the key, e.g. OPENAI_API_KEY (never the key itself)",
            );
            ok = false;
        }
    }
    if let Some(t) = &raw.temperature {
        let v = *t.get_ref();
        if !(0.0..=2.0).contains(&v) {
            l.err(
                t.span(),
                format!("temperature {v} is out of range"),
                "give a value from 0 to 2",
            );
            ok = false;
        }
    }
    if let Some(p) = &raw.top_p {
        let v = *p.get_ref();
        if !(v > 0.0 && v <= 1.0) {
            l.err(
                p.span(),
                format!("top_p {v} is out of range"),
                "give a value above 0, at most 1",
            );
            ok = false;
        }
    }
    let mut modalities = Modalities::default();
    if let Some(m) = &raw.modalities {
        modalities = Modalities {
            image: false,
            audio: false,
        };
        let mut text = false;
        for name in m.get_ref() {
            match name.as_str() {
                "text" => text = true,
                "image" => modalities.image = true,
                "audio" => modalities.audio = true,
                other => {
                    l.err(
                        m.span(),
                        format!("unknown modality `{other}`"),
                        format!("use some of: {}", Modalities::NAMES.join(", ")),
                    );
                    ok = false;
                }
            }
        }
        if !text {
            l.err(
                m.span(),
                "`modalities` leaves out \"text\"",
                "every model Bureau drives takes text: list \"text\" first, e.g. [\"text\", \"image\"]",
            );
            ok = false;
        }
    }
    if let Some(m) = &raw.max_output_tokens
        && *m.get_ref() == 0
    {
        l.err(
            m.span(),
            "max_output_tokens is 0",
            "give at least 1 (tokens per model call)",
        );
        ok = false;
    }

    let price = model
        .as_ref()
        .and_then(|m| prices.get(&m.to_string()).cloned());
    let mut limits = LlmLimits::default();
    if let Some(raw_limits) = raw.limits {
        let lspan = raw_limits.span();
        let rl = raw_limits.into_inner();
        if let Some(w) = &rl.wall_seconds {
            l.err(
                w.span(),
                "`wall_seconds` is a limit of harness agents",
                "remove it: the task's [limits] wall_seconds bounds an llm agent's turns",
            );
            ok = false;
        }
        limits.max_input_tokens = rl.max_input_tokens;
        limits.max_output_tokens = rl.max_output_tokens;
        if let Some(c) = rl.max_cost_usd {
            let v = *c.get_ref();
            if !(v.is_finite() && v > 0.0) {
                l.err(
                    c.span(),
                    format!("max_cost_usd is {v}"),
                    "give a positive number of US dollars",
                );
                ok = false;
            } else if price.is_none()
                && let Some(m) = &model
            {
                l.err(
                    c.span(),
                    format!("max_cost_usd needs a price for `{m}`, and the file gives none"),
                    format!("add [prices.\"{m}\"] with input_per_mtok and output_per_mtok"),
                );
                ok = false;
            }
            limits.max_cost_usd = Some(v);
        }
        if limits.max_input_tokens == Some(0) || limits.max_output_tokens == Some(0) {
            l.err(
                lspan,
                "a token limit is 0",
                "give at least 1, or leave the limit out",
            );
            ok = false;
        }
    }

    let mut retry = RetrySettings::default();
    if let Some(raw_retry) = raw.retry {
        let rr = raw_retry.into_inner();
        if let Some(n) = rr.max_retries {
            retry.max_retries = n;
        }
        retry.max_wait = l.seconds(rr.max_wait_seconds, "max_wait_seconds", retry.max_wait);
        retry.initial_backoff = l.seconds(
            rr.initial_backoff_seconds,
            "initial_backoff_seconds",
            retry.initial_backoff,
        );
        retry.max_backoff = l.seconds(
            rr.max_backoff_seconds,
            "max_backoff_seconds",
            retry.max_backoff,
        );
        retry.request_timeout = l.seconds(
            rr.request_timeout_seconds,
            "request_timeout_seconds",
            retry.request_timeout,
        );
    }

    let extra_body = match raw.extra_body {
        None => serde_json::Map::new(),
        Some(t) => match serde_json::to_value(&t) {
            Ok(Value::Object(m)) => m,
            _ => {
                l.err(
                    span.clone(),
                    "extra_body cannot be given as JSON",
                    "use a plain TOML table",
                );
                ok = false;
                serde_json::Map::new()
            }
        },
    };
    for key in ["model", "messages", "tools", "system"] {
        if extra_body.contains_key(key) {
            l.err(
                span.clone(),
                format!("extra_body sets `{key}`, which Bureau writes itself"),
                "remove it from extra_body",
            );
            ok = false;
        }
    }

    let mut shell = ShellSettings::default();
    if let Some(raw_shell) = raw.shell {
        let sspan = raw_shell.span();
        match raw_shell.into_inner() {
            RawShell::On(on) => shell.enabled = on,
            RawShell::Settings(rs) => {
                shell.enabled = rs.enabled.unwrap_or(true);
                let fields = [
                    ("wall_seconds", rs.wall_seconds, &mut shell.wall_seconds),
                    ("cpu_seconds", rs.cpu_seconds, &mut shell.cpu_seconds),
                    ("memory_mb", rs.memory_mb, &mut shell.memory_mb),
                    ("max_file_mb", rs.max_file_mb, &mut shell.max_file_mb),
                    ("max_processes", rs.max_processes, &mut shell.max_processes),
                ];
                for (key, v, slot) in fields {
                    match v {
                        Some(0) => {
                            l.err(
                                sspan.clone(),
                                format!("[agents.{name}.shell] {key} is 0"),
                                "give at least 1, or `shell = false` to turn the shell off",
                            );
                            ok = false;
                        }
                        Some(v) => *slot = v,
                        None => {}
                    }
                }
                match rs.output_bytes {
                    Some(0) => {
                        l.err(
                            sspan.clone(),
                            format!("[agents.{name}.shell] output_bytes is 0"),
                            "give at least 1",
                        );
                        ok = false;
                    }
                    Some(v) => shell.output_bytes = v,
                    None => {}
                }
            }
        }
    }

    if !ok {
        return None;
    }
    let mut def = LlmDefinition::for_model(model?);
    def.shell = shell;
    def.base_url = raw.base_url.map(|u| u.into_inner());
    def.api_key_env = raw.api_key_env.map(|e| e.into_inner());
    def.sampling = Sampling {
        temperature: raw.temperature.map(|t| t.into_inner()),
        top_p: raw.top_p.map(|t| t.into_inner()),
        max_output_tokens: raw.max_output_tokens.map(|t| t.into_inner()),
        seed: raw.seed,
    };
    def.limits = limits;
    def.retry = retry;
    def.price = price;
    def.extra_body = extra_body;
    def.modalities = modalities;
    Some(def)
}

/// A harness agent (`harness = "..."`): see [`crate::harness`].
fn harness_agent(
    l: &mut Loader<'_>,
    name: &str,
    span: std::ops::Range<usize>,
    raw: RawAgent,
) -> Option<crate::harness::HarnessDef> {
    use crate::harness::{FORMATS, HARNESSES, HarnessDef};
    let mut ok = true;
    let Some(harness) = &raw.harness else {
        l.err(
            span,
            format!("agent `{name}` (kind harness) has no `harness`"),
            format!("add harness = one of: {}", HARNESSES.join(", ")),
        );
        return None;
    };
    let h = harness.get_ref().as_str();
    if !HARNESSES.contains(&h) {
        l.err(
            harness.span(),
            format!("agent `{name}` has unknown harness `{h}`"),
            format!("use one of: {}", HARNESSES.join(", ")),
        );
        return None;
    }
    let llm_keys = [
        ("base_url", raw.base_url.as_ref().map(|v| v.span())),
        ("api_key_env", raw.api_key_env.as_ref().map(|v| v.span())),
        ("temperature", raw.temperature.as_ref().map(|v| v.span())),
        ("top_p", raw.top_p.as_ref().map(|v| v.span())),
        (
            "max_output_tokens",
            raw.max_output_tokens.as_ref().map(|v| v.span()),
        ),
        ("seed", raw.seed.map(|_| span.clone())),
        ("retry", raw.retry.as_ref().map(|v| v.span())),
        ("extra_body", raw.extra_body.as_ref().map(|_| span.clone())),
        ("shell", raw.shell.as_ref().map(|v| v.span())),
        ("modalities", raw.modalities.as_ref().map(|v| v.span())),
    ];
    for (key, at) in llm_keys {
        if let Some(at) = at {
            l.err(
                at,
                format!("agent `{name}` (harness {h}) sets `{key}`, which only llm agents use"),
                "configure the harness itself (its own config or environment), or pass flags with args = [...]",
            );
            ok = false;
        }
    }
    let mut def = HarnessDef::new(h);
    match (&raw.command, h) {
        (Some(c), "command") => {
            if c.get_ref().is_empty() || c.get_ref()[0].trim().is_empty() {
                l.err(
                    c.span(),
                    "`command` is empty",
                    "give the program and its arguments, e.g. [\"my-agent\", \"--prompt-file\", \"{prompt_file}\"]",
                );
                ok = false;
            }
            def.command = Some(c.get_ref().clone());
        }
        (None, "command") => {
            l.err(
                span.clone(),
                format!("agent `{name}` (harness command) has no `command`"),
                "add command = [\"my-agent\", \"--prompt-file\", \"{prompt_file}\", \"--mcp\", \"{mcp_config}\"]",
            );
            ok = false;
        }
        (Some(c), _) => {
            l.err(
                c.span(),
                format!("agent `{name}` (harness {h}) sets `command`"),
                "use harness = \"command\" for your own command, or args = [...] to add flags to this harness's invocation",
            );
            ok = false;
        }
        (None, _) => {}
    }
    if let Some(f) = &raw.format {
        let v = f.get_ref().as_str();
        if h != "command" {
            l.err(
                f.span(),
                format!("agent `{name}` (harness {h}) sets `format`"),
                "remove it: a named harness is parsed in its own format",
            );
            ok = false;
        } else if !FORMATS.contains(&v) {
            l.err(
                f.span(),
                format!("unknown output format `{v}`"),
                format!("use one of: {}", FORMATS.join(", ")),
            );
            ok = false;
        }
        def.format = Some(v.to_string());
    }
    if let Some(m) = &raw.model {
        if h == "command" {
            l.err(
                m.span(),
                "a `command` harness takes no `model`",
                "put the model in the command itself",
            );
            ok = false;
        }
        def.model = Some(m.get_ref().clone());
    }
    if let Some(args) = raw.args {
        if h == "command" {
            l.err(
                span.clone(),
                "a `command` harness takes no `args`",
                "put the arguments in `command`",
            );
            ok = false;
        }
        def.args = args;
    }
    def.env = raw.env.unwrap_or_default();
    for key in def.env.keys() {
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            l.err(
                span.clone(),
                format!("env name `{key}` is not an environment variable name"),
                "use letters, digits and `_`",
            );
            ok = false;
        }
    }
    if let Some(limits) = raw.limits {
        let lspan = limits.span();
        let rl = limits.into_inner();
        if rl.max_input_tokens.is_some()
            || rl.max_output_tokens.is_some()
            || rl.max_cost_usd.is_some()
        {
            l.err(
                lspan,
                format!("agent `{name}` (harness {h}) sets a token or cost limit"),
                "a harness reports usage only when its turn ends, so Bureau cannot stop it there: give wall_seconds, and the harness's own budget flags with args = [...]",
            );
            ok = false;
        }
        if let Some(w) = rl.wall_seconds {
            if *w.get_ref() == 0 {
                l.err(w.span(), "wall_seconds is 0", "give at least 1 second");
                ok = false;
            }
            def.wall_seconds = Some(*w.get_ref());
        }
    }
    ok.then_some(def)
}

fn toml_hint(msg: &str) -> String {
    if msg.contains("unknown field") {
        "remove the key or fix its spelling (see docs/agents.md)".into()
    } else if msg.contains("missing field") {
        "add the field (see docs/agents.md)".into()
    } else if msg.contains("invalid type") || msg.contains("invalid value") {
        "give the value the type docs/agents.md lists for this key".into()
    } else {
        "fix the TOML syntax here".into()
    }
}
