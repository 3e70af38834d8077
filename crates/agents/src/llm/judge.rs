//! [`LlmJudge`]: the [`bureau_check::Judge`] of rubric items written `judge = "..."`, over the
//! same OpenAI / Anthropic wire formats, endpoints, keys and retries as the `llm` agent.
//!
//! The judge model is pinned by the run (`--judge provider:model`, or a named `llm` agent of
//! the agents file, whose sampling is overridden with temperature 0 and whose seed is kept).
//! One call per item: the system prompt and the item's prompt as one user message, no tools.

use std::time::{Duration, Instant};

use bureau_check::Judge;
use bureau_core::result::ModelTokens;
use reqwest::blocking::Client;

use super::{CallParams, LlmAgent, LlmDefinition, Provider, anthropic, is_loopback, openai, retry};
use crate::AgentError;

/// How long one judge call may take, retries included.
pub const JUDGE_CALL_LIMIT: Duration = Duration::from_secs(300);

/// An LLM judge. Made once per run and shared by every trial.
#[derive(Debug)]
pub struct LlmJudge {
    agent: LlmAgent,
    client: Client,
}

impl LlmJudge {
    /// A judge defined by `def` (temperature forced to 0); `env` supplies the base URL and key
    /// as for the `llm` agent. Fails when the key is missing or the client cannot be built.
    pub fn new(
        mut def: LlmDefinition,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<LlmJudge, AgentError> {
        def.sampling.temperature = Some(0.0);
        let agent = LlmAgent::new("judge", def, env)?;
        let mut builder = Client::builder()
            .timeout(None)
            .connect_timeout(Duration::from_secs(30))
            .user_agent(concat!("bureau/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&agent.url) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| AgentError::Failed(format!("cannot set up the HTTP client: {e}")))?;
        Ok(LlmJudge { agent, client })
    }

    /// What defines the judge (without its key): recorded in `run.json`.
    pub fn definition(&self) -> &LlmDefinition {
        &self.agent.def
    }
}

impl Judge for LlmJudge {
    fn model(&self) -> String {
        self.agent.def.model.to_string()
    }

    fn complete(&self, system: &str, user: &str) -> Result<String, String> {
        self.complete_counted(system, user).map(|(a, _)| a)
    }

    fn complete_counted(&self, system: &str, user: &str) -> Result<(String, ModelTokens), String> {
        let def = &self.agent.def;
        let provider = def.model.provider;
        let messages = match provider {
            Provider::OpenAi => {
                let mut m = openai::start(system);
                m.push(openai::user(user));
                m
            }
            Provider::Anthropic => vec![anthropic::user(user)],
        };
        let params = CallParams {
            model: &def.model.model,
            system,
            tools: &[],
            sampling: &def.sampling,
            max_output_tokens: def.sampling.max_output_tokens.or(match provider {
                Provider::Anthropic => Some(anthropic::DEFAULT_MAX_TOKENS),
                Provider::OpenAi => None,
            }),
            extra: &def.extra_body,
        };
        let body = match provider {
            Provider::OpenAi => openai::request(&params, &messages),
            Provider::Anthropic => anthropic::request(&params, &messages),
        };
        let key = self.agent.key.as_ref().map(|k| k.0.as_str());
        let headers = match provider {
            Provider::OpenAi => openai::headers(key),
            Provider::Anthropic => anthropic::headers(key),
        };
        let req = retry::Request {
            url: &self.agent.url,
            headers: &headers,
            body: &body,
            secret: key,
        };
        let mut retries = Vec::new();
        let outcome = retry::call(
            &self.client,
            &req,
            &def.retry,
            Instant::now() + JUDGE_CALL_LIMIT,
            &mut retries,
            |body| match provider {
                Provider::OpenAi => openai::parse(body),
                Provider::Anthropic => anthropic::parse(body).map(|(r, _)| r),
            },
        );
        match outcome {
            Ok(answer) => {
                let usage = answer.parsed.usage;
                let tokens = ModelTokens {
                    calls: 1,
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                };
                Ok((answer.parsed.text.unwrap_or_default(), tokens))
            }
            Err(retry::CallError::OutOfTime) => Err(format!(
                "no answer within {} s ({} retries)",
                JUDGE_CALL_LIMIT.as_secs(),
                retries.len()
            )),
            Err(retry::CallError::Fatal(m) | retry::CallError::Exhausted(m)) => {
                Err(format!("{} ({}): {m}", def.model, self.agent.url))
            }
        }
    }
}
