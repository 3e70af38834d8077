//! From an agent spec (`--agent`) to an agent: built-in kinds, `llm` with a model, and the
//! named agents of an agents file.

use std::path::Path;
use std::sync::Arc;

use crate::harness::{HarnessDef, HarnessMaker};
use crate::llm::{
    AgentDef, AgentsFile, EmbeddingsClient, EmbeddingsDefinition, LlmAgent, LlmDefinition,
    LlmJudge, ModelRef,
};
use crate::{Agent, AgentError, null, oracle, replay};

/// Looks up an environment variable (the process environment, or a map in tests).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Everything needed to make agents from specs.
///
/// Specs, in the order they are tried:
///
/// * a name declared in the agents file ([`AgentCatalog::with_agents_file`]);
/// * `oracle`, `null`, `replay:<path>`;
/// * `llm` — the model given with [`AgentCatalog::with_model`] (`--model`);
/// * `llm:<provider>:<model>`, e.g. `llm:openai:gpt-4.1-mini`;
/// * a third-party harness: `claude-code`, `codex`, `openhands`, `openclaw`, `hermes`
///   (optionally `:<model>`) or `command:<template>` — made by the [`HarnessMaker`] given with
///   [`AgentCatalog::with_harnesses`] (as are harness agents of the agents file).
///
/// An `llm` agent made from a bare model takes its base URL and key from the environment
/// (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`) and its
/// price from the agents file's `[prices]`, if a file is given.
#[derive(Clone)]
pub struct AgentCatalog {
    file: Option<AgentsFile>,
    model: Option<String>,
    env: EnvLookup,
    harnesses: Option<Arc<dyn HarnessMaker>>,
}

impl std::fmt::Debug for AgentCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentCatalog")
            .field("file", &self.file.as_ref().map(|f| &f.path))
            .field("model", &self.model)
            .field("harnesses", &self.harnesses.is_some())
            .finish()
    }
}

impl Default for AgentCatalog {
    fn default() -> Self {
        AgentCatalog::new()
    }
}

impl AgentCatalog {
    /// Built-in kinds only, reading the process environment.
    pub fn new() -> AgentCatalog {
        AgentCatalog {
            file: None,
            model: None,
            env: Arc::new(|k| std::env::var(k).ok()),
            harnesses: None,
        }
    }

    /// Make third-party harness agents (specs and agents-file entries) with `maker`.
    pub fn with_harnesses(mut self, maker: Arc<dyn HarnessMaker>) -> AgentCatalog {
        self.harnesses = Some(maker);
        self
    }

    /// Also the named agents (and prices) of the agents file at `path`.
    pub fn load_agents_file(self, path: &Path) -> Result<AgentCatalog, AgentError> {
        let file = AgentsFile::load(path).map_err(AgentError::AgentsFile)?;
        Ok(self.with_agents_file(file))
    }

    pub fn with_agents_file(mut self, file: AgentsFile) -> AgentCatalog {
        self.file = Some(file);
        self
    }

    /// The model of the spec `llm` (`--model provider:model`).
    pub fn with_model(mut self, model: impl Into<String>) -> AgentCatalog {
        self.model = Some(model.into());
        self
    }

    /// Look environment variables up with `env` instead of the process environment.
    pub fn with_env(
        mut self,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> AgentCatalog {
        self.env = Arc::new(env);
        self
    }

    pub fn agents_file(&self) -> Option<&AgentsFile> {
        self.file.as_ref()
    }

    /// Make the agent `spec` names.
    pub fn make(&self, spec: &str) -> Result<Box<dyn Agent>, AgentError> {
        if let Some(def) = self.file.as_ref().and_then(|f| f.agents.get(spec)) {
            return match def {
                AgentDef::Llm(def) => Ok(Box::new(LlmAgent::new(spec, def.clone(), &*self.env)?)),
                AgentDef::Harness(def) => self.harness(spec, def),
            };
        }
        match spec {
            "oracle" => return Ok(Box::new(oracle::OracleAgent::new())),
            "null" => return Ok(Box::new(null::NullAgent)),
            "llm" => {
                let Some(model) = &self.model else {
                    return Err(AgentError::Config(
                        "`--agent llm` needs a model — add --model openai:gpt-4.1-mini (or anthropic:<model>), write --agent llm:<provider>:<model>, or name an agent of an --agents-file".into(),
                    ));
                };
                return self.llm(model);
            }
            _ => {}
        }
        if let Some(path) = spec.strip_prefix("replay:")
            && !path.is_empty()
        {
            return Ok(Box::new(replay::ReplayAgent::load(Path::new(path))?));
        }
        if let Some(model) = spec.strip_prefix("llm:") {
            return self.llm(model);
        }
        if let Some(def) = HarnessDef::from_spec(spec) {
            return self.harness(spec, &def?);
        }
        Err(AgentError::UnknownKind {
            spec: spec.to_string(),
        })
    }

    /// The LLM judge `spec` names: a named `llm` agent of the agents file (its endpoint, key,
    /// retries and seed; temperature forced to 0) or `provider:model` (with `llm:` optional).
    pub fn make_judge(&self, spec: &str) -> Result<LlmJudge, AgentError> {
        if let Some(AgentDef::Llm(def)) = self.file.as_ref().and_then(|f| f.agents.get(spec)) {
            return LlmJudge::new(def.clone(), &*self.env);
        }
        let model = ModelRef::parse(spec.strip_prefix("llm:").unwrap_or(spec)).map_err(|e| {
            AgentError::Config(format!(
                "--judge `{spec}`: {e} (name an llm agent of the agents file, or give provider:model)"
            ))
        })?;
        let mut def = LlmDefinition::for_model(model.clone());
        def.price = self.file.as_ref().and_then(|f| f.price(&model)).cloned();
        LlmJudge::new(def, &*self.env)
    }

    /// The embeddings model `spec` names (`--embeddings`): a named `llm` agent of the agents
    /// file whose model is `openai:<embedding model>` (its endpoint, key variable and
    /// retries), or `openai:<model>` (base URL and key from `OPENAI_BASE_URL`,
    /// `OPENAI_API_KEY`).
    pub fn make_embedder(&self, spec: &str) -> Result<EmbeddingsClient, AgentError> {
        let def = match self.file.as_ref().and_then(|f| f.agents.get(spec)) {
            Some(AgentDef::Llm(def)) => def.clone(),
            Some(AgentDef::Harness(_)) => {
                return Err(AgentError::Config(format!(
                    "--embeddings `{spec}` is a third-party harness in the agents file — name an llm agent whose model is openai:<embedding model>, or give openai:<model>"
                )));
            }
            None => LlmDefinition::for_model(ModelRef::parse(spec).map_err(|e| {
                AgentError::Config(format!(
                    "--embeddings `{spec}`: {e} (give openai:<model>, e.g. openai:text-embedding-3-small, or name an llm agent of the agents file)"
                ))
            })?),
        };
        EmbeddingsClient::new(EmbeddingsDefinition::from_llm(&def)?, &*self.env)
    }

    fn harness(&self, name: &str, def: &HarnessDef) -> Result<Box<dyn Agent>, AgentError> {
        let mut def = def.clone();
        if def.price.is_none()
            && let Some(key) = def.price_key()
        {
            def.price = self.file.as_ref().and_then(|f| f.prices.get(&key)).cloned();
        }
        match &self.harnesses {
            Some(maker) => maker.make(name, &def),
            None => Err(AgentError::Config(format!(
                "agent `{name}` is a third-party harness ({}), and this build of Bureau was not given a way to run harnesses — use the `bureau` command (bureau-cli), which can",
                def.harness
            ))),
        }
    }

    fn llm(&self, model: &str) -> Result<Box<dyn Agent>, AgentError> {
        let model = ModelRef::parse(model).map_err(AgentError::Config)?;
        let mut def = LlmDefinition::for_model(model.clone());
        def.price = self.file.as_ref().and_then(|f| f.price(&model)).cloned();
        Ok(Box::new(LlmAgent::new(
            format!("llm:{model}"),
            def,
            &*self.env,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + Send + Sync + 'static {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| vars.get(k).cloned()
    }

    #[test]
    fn llm_specs_name_their_model() {
        let c = AgentCatalog::new()
            .with_env(env(&[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")]));
        assert_eq!(
            c.make("llm:openai:gpt-4.1-mini").unwrap().name(),
            "llm:openai:gpt-4.1-mini"
        );
        let err = c.make("llm").err().unwrap().to_string();
        assert!(
            err.contains("`--agent llm` needs a model — add --model"),
            "{err}"
        );
        let c = c.with_model("anthropic:claude-sonnet-4-5");
        assert_eq!(
            c.make("llm").unwrap().name(),
            "llm:anthropic:claude-sonnet-4-5"
        );
        let err = c.make("llm:gpt-4").err().unwrap().to_string();
        assert!(err.contains("names no provider"), "{err}");
        assert!(c.make("oracle").is_ok());
        assert!(matches!(
            c.make("gpt-9"),
            Err(AgentError::UnknownKind { .. })
        ));
    }

    #[test]
    fn named_agents_come_from_the_file_and_prices_apply_to_bare_models() {
        let file = AgentsFile::parse(
            Path::new("agents.toml"),
            "[agents.mini]\nkind = \"llm\"\nmodel = \"openai:gpt-4.1-mini\"\ntemperature = 0\n\
             [prices.\"openai:gpt-4.1-mini\"]\ninput_per_mtok = 0.4\noutput_per_mtok = 1.6\n",
        )
        .unwrap();
        let c = AgentCatalog::new()
            .with_agents_file(file)
            .with_env(env(&[("OPENAI_API_KEY", "sk-x")]));
        let mini = c.make("mini").unwrap();
        assert_eq!(mini.name(), "mini");
        let d = mini.definition().unwrap();
        assert_eq!(d["sampling"]["temperature"], 0.0);
        assert_eq!(d["price"]["input_per_mtok"], 0.4);
        let bare = c
            .make("llm:openai:gpt-4.1-mini")
            .unwrap()
            .definition()
            .unwrap();
        assert_eq!(bare["price"]["output_per_mtok"], 1.6);
        // The key is needed when the agent is made, so a missing one stops the run up front.
        let no_key = AgentCatalog::new()
            .with_agents_file(c.agents_file().unwrap().clone())
            .with_env(env(&[]));
        let err = no_key.make("mini").err().unwrap().to_string();
        assert!(err.starts_with("OPENAI_API_KEY is not set"), "{err}");
    }

    #[test]
    fn a_missing_agents_file_is_a_located_error() {
        let err = AgentCatalog::new()
            .load_agents_file(Path::new("/does/not/agents.toml"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("/does/not/agents.toml:1:1: cannot read the agents file"),
            "{err}"
        );
    }
}
