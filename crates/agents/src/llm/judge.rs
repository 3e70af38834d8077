//! [`LlmJudge`]: the [`bureau_check::Judge`] of rubric items written `judge = "..."`, over the
//! same OpenAI / Anthropic wire formats, endpoints, keys and retries as the `llm` agent.
//!
//! The judge model is pinned by the run (`--judge provider:model`, or a named `llm` agent of
//! the agents file, whose sampling is overridden with temperature 0 and whose seed is kept).
//! One call per item: the system prompt and the item's prompt as one user message, no tools;
//! the rendered pages of a `judge_render` item follow the prompt in that message, as OpenAI
//! `image_url` parts (base64 data URIs) or Anthropic `image` blocks ([`user_seeing`]).

use std::time::{Duration, Instant};

use bureau_check::Judge;
use bureau_core::result::ModelTokens;
use bureau_core::tool::Media;
use reqwest::blocking::Client;
use serde_json::{Value, json};

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
        self.complete_seeing(system, user, &[])
    }

    fn complete_seeing(
        &self,
        system: &str,
        user: &str,
        images: &[Media],
    ) -> Result<(String, ModelTokens), String> {
        let def = &self.agent.def;
        let provider = def.model.provider;
        if !images.is_empty() && !def.modalities.image {
            return Err(format!(
                "this item's judge_render pages must be seen, and the judge {} is configured without image input (modalities = {:?}); judge it with a vision model",
                def.model,
                def.modalities.names()
            ));
        }
        let messages = match provider {
            Provider::OpenAi => {
                let mut m = openai::start(system);
                m.push(user_seeing(provider, user, images)?);
                m
            }
            Provider::Anthropic => vec![user_seeing(provider, user, images)?],
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
        let body = retry::json_bytes(&body);
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

/// The judge's user message: the prompt, then each image — an OpenAI `image_url` part with a
/// `data:` URI, or an Anthropic base64 `image` block. Without images, the plain message of
/// the wire format (a string content for OpenAI), so text-only items are sent as before.
pub(crate) fn user_seeing(
    provider: Provider,
    text: &str,
    images: &[Media],
) -> Result<Value, String> {
    if images.is_empty() {
        return Ok(match provider {
            Provider::OpenAi => openai::user(text),
            Provider::Anthropic => anthropic::user(text),
        });
    }
    let mut parts = vec![json!({"type": "text", "text": text})];
    for m in images {
        if m.data.is_empty() {
            return Err(format!("the image `{}` has no data to send", m.label));
        }
        parts.push(match provider {
            Provider::OpenAi => json!({
                "type": "image_url",
                "image_url": {"url": format!("data:{};base64,{}", m.mime_type, m.data)},
            }),
            Provider::Anthropic => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": m.mime_type, "data": m.data},
            }),
        });
    }
    Ok(json!({"role": "user", "content": parts}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bureau_core::tool::MediaKind;

    fn page() -> Media {
        Media {
            kind: MediaKind::Image,
            mime_type: "image/png".into(),
            label: "deck.pptx, page 1 of 1".into(),
            data: "iVBORw0KGgo=".into(),
            bytes: 8,
            blake3: "00".into(),
        }
    }

    #[test]
    fn pages_follow_the_prompt_in_each_wire_format() {
        let o = user_seeing(Provider::OpenAi, "judge this", &[page()]).unwrap();
        assert_eq!(o["role"], "user");
        assert_eq!(
            o["content"][0],
            json!({"type": "text", "text": "judge this"})
        );
        assert_eq!(o["content"][1]["type"], "image_url");
        assert_eq!(
            o["content"][1]["image_url"]["url"],
            "data:image/png;base64,iVBORw0KGgo="
        );
        let a = user_seeing(Provider::Anthropic, "judge this", &[page()]).unwrap();
        assert_eq!(
            a["content"][1],
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
        );
        // Without images: the messages text-only items always had.
        assert_eq!(
            user_seeing(Provider::OpenAi, "t", &[]).unwrap(),
            openai::user("t")
        );
        let mut stored = page();
        stored.data.clear();
        assert!(user_seeing(Provider::Anthropic, "t", &[stored]).is_err());
    }
}
