//! [`EmbeddingsClient`]: an OpenAI-compatible embeddings endpoint (`POST {base}/embeddings`)
//! as a [`bureau_world::embed::Embedder`], for `memory_search` under `--context
//! rag:<granularity>:<k> --embeddings openai:<model>`.
//!
//! The endpoint, key and retry budget are resolved as for the `llm` agent: a named `llm` agent
//! of the agents file (its `model`, `base_url`, `api_key_env`, `[retry]`), or `openai:<model>`
//! with `OPENAI_BASE_URL` / `OPENAI_API_KEY`. Texts are sent in batches of at most
//! [`MAX_BATCH`] (`{"model": ..., "input": [...]}`); the response's `data[].index` puts each
//! vector back in its text's place, and `usage.prompt_tokens` is counted. Failures are retried
//! like model calls (429 with `Retry-After`, 5xx, timeouts, connection resets, cut-off or
//! malformed bodies); when the budget is spent the embedder fails and the trial is `error`.
//!
//! The run wraps the client in a [`bureau_world::embed::CachedEmbedder`] over
//! `<run>/embedding-cache/`.

use std::time::{Duration, Instant};

use bureau_world::embed::{Embedded, Embedder};
use reqwest::blocking::Client;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{LlmDefinition, ModelRef, Provider, RetrySettings, Secret, is_loopback, openai, retry};
use crate::AgentError;

/// Texts per request at most (OpenAI accepts 2048; local servers often less).
pub const MAX_BATCH: usize = 256;

/// How long one request may take, retries included.
pub const EMBEDDINGS_CALL_LIMIT: Duration = Duration::from_secs(300);

/// What defines the embeddings model (without its key): recorded in `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbeddingsDefinition {
    /// `openai:<model>`: the model name is sent as it is.
    pub model: ModelRef,
    /// The base URL; `OPENAI_BASE_URL` or OpenAI's own when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key; `OPENAI_API_KEY` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    pub retry: RetrySettings,
}

impl EmbeddingsDefinition {
    /// The embeddings model of an `llm` definition (a named agent of the agents file, or one
    /// made for `openai:<model>`): its model, endpoint, key variable and retry budget.
    pub fn from_llm(def: &LlmDefinition) -> Result<EmbeddingsDefinition, AgentError> {
        if def.model.provider != Provider::OpenAi {
            return Err(AgentError::Config(format!(
                "--embeddings `{}`: {} has no embeddings API — use openai:<model> (OpenAI, or any OpenAI-compatible server such as vLLM, Ollama, llama.cpp or LiteLLM via OPENAI_BASE_URL or an agent's base_url)",
                def.model, def.model.provider
            )));
        }
        Ok(EmbeddingsDefinition {
            model: def.model.clone(),
            base_url: def.base_url.clone(),
            api_key_env: def.api_key_env.clone(),
            retry: def.retry.clone(),
        })
    }

    fn as_llm(&self) -> LlmDefinition {
        let mut def = LlmDefinition::for_model(self.model.clone());
        def.base_url = self.base_url.clone();
        def.api_key_env = self.api_key_env.clone();
        def.retry = self.retry.clone();
        def
    }
}

/// An OpenAI-compatible embeddings endpoint. Made once per run and shared by every trial.
#[derive(Debug)]
pub struct EmbeddingsClient {
    def: EmbeddingsDefinition,
    url: String,
    key: Option<Secret>,
    client: Client,
}

impl EmbeddingsClient {
    /// A client for `def`; `env` supplies the base URL and key as for the `llm` agent. Fails
    /// when the key is missing or the HTTP client cannot be built.
    pub fn new(
        def: EmbeddingsDefinition,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<EmbeddingsClient, AgentError> {
        let (base, key) = super::resolve_endpoint(&def.as_llm(), env)
            .map_err(|e| AgentError::Config(format!("--embeddings: {e}")))?;
        let url = endpoint(&base);
        let mut builder = Client::builder()
            .timeout(None)
            .connect_timeout(Duration::from_secs(30))
            .user_agent(concat!("bureau/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&url) {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| AgentError::Failed(format!("cannot set up the HTTP client: {e}")))?;
        Ok(EmbeddingsClient {
            def,
            url,
            key,
            client,
        })
    }

    /// What defines the model (without its key).
    pub fn definition(&self) -> &EmbeddingsDefinition {
        &self.def
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.url
    }

    fn batch(&self, texts: &[String]) -> Result<(Vec<Vec<f32>>, u64), String> {
        let body = json!({"model": self.def.model.model, "input": texts});
        let key = self.key.as_ref().map(|k| k.0.as_str());
        let headers = openai::headers(key);
        let body = retry::json_bytes(&body);
        let req = retry::Request {
            url: &self.url,
            headers: &headers,
            body: &body,
            secret: key,
        };
        let mut retries = Vec::new();
        let n = texts.len();
        let outcome = retry::call(
            &self.client,
            &req,
            &self.def.retry,
            Instant::now() + EMBEDDINGS_CALL_LIMIT,
            &mut retries,
            |body| parse(body, n),
        );
        match outcome {
            Ok(answer) => Ok(answer.parsed),
            Err(retry::CallError::OutOfTime) => Err(format!(
                "no answer from {} within {} s ({} retries)",
                self.url,
                EMBEDDINGS_CALL_LIMIT.as_secs(),
                retries.len()
            )),
            Err(retry::CallError::Fatal(m) | retry::CallError::Exhausted(m)) => {
                Err(format!("{} ({}): {m}", self.def.model, self.url))
            }
        }
    }
}

impl Embedder for EmbeddingsClient {
    fn model(&self) -> String {
        self.def.model.to_string()
    }

    fn embed(&self, texts: &[String]) -> Result<Embedded, String> {
        let mut out = Embedded::default();
        for chunk in texts.chunks(MAX_BATCH) {
            let (vectors, tokens) = self.batch(chunk)?;
            out.vectors.extend(vectors);
            out.requests += 1;
            out.tokens += tokens;
        }
        Ok(out)
    }
}

/// `<base>/embeddings` (OpenAI base URLs end in `/v1`).
pub fn endpoint(base_url: &str) -> String {
    format!("{}/embeddings", base_url.trim_end_matches('/'))
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Item {
    /// The input's position; servers that leave it out answer in input order.
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

/// The vectors of a response to `n` inputs, in input order, and its input tokens. Every input
/// must have exactly one non-empty vector, all of one dimension.
pub(crate) fn parse(body: &Value, n: usize) -> Result<(Vec<Vec<f32>>, u64), String> {
    let r: Response = serde_json::from_value(body.clone())
        .map_err(|e| format!("the embeddings response does not parse: {e}"))?;
    if r.data.len() != n {
        return Err(format!(
            "the response holds {} embeddings for {n} inputs",
            r.data.len()
        ));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, item) in r.data.into_iter().enumerate() {
        let i = item.index.unwrap_or(pos);
        let Some(slot) = slots.get_mut(i) else {
            return Err(format!(
                "embedding index {i} is out of range for {n} inputs"
            ));
        };
        if slot.is_some() {
            return Err(format!("embedding index {i} appears twice"));
        }
        if item.embedding.is_empty() {
            return Err(format!("embedding {i} is empty"));
        }
        *slot = Some(item.embedding);
    }
    let vectors: Vec<Vec<f32>> = slots.into_iter().flatten().collect();
    if let Some(first) = vectors.first()
        && let Some(bad) = vectors.iter().position(|v| v.len() != first.len())
    {
        return Err(format!(
            "embedding {bad} has {} dimensions, embedding 0 has {}",
            vectors[bad].len(),
            first.len()
        ));
    }
    let tokens = r
        .usage
        .and_then(|u| u.prompt_tokens.or(u.total_tokens))
        .unwrap_or(0);
    Ok((vectors, tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_put_back_in_input_order_by_index_with_their_tokens() {
        // As OpenAI answers: object list, data[].index, usage.prompt_tokens.
        let body = json!({
            "object": "list",
            "data": [
                {"object": "embedding", "index": 1, "embedding": [0.0, 1.0]},
                {"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}
            ],
            "model": "text-embedding-3-small",
            "usage": {"prompt_tokens": 7, "total_tokens": 7}
        });
        let (v, t) = parse(&body, 2).unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        assert_eq!(t, 7);
        // No index (some local servers): input order; no usage: 0 tokens.
        let body = json!({"data": [{"embedding": [1.0]}, {"embedding": [2.0]}]});
        assert_eq!(parse(&body, 2).unwrap(), (vec![vec![1.0], vec![2.0]], 0));
    }

    #[test]
    fn malformed_responses_are_refused_with_the_reason() {
        let cases = [
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}]}),
                2,
                "1 embeddings for 2",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]}),
                2,
                "appears twice",
            ),
            (
                json!({"data": [{"index": 5, "embedding": [1.0]}]}),
                1,
                "out of range",
            ),
            (
                json!({"data": [{"index": 0, "embedding": []}]}),
                1,
                "is empty",
            ),
            (
                json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]}),
                2,
                "2 dimensions",
            ),
            (json!({"error": "x"}), 1, "does not parse"),
        ];
        for (body, n, needle) in cases {
            let e = parse(&body, n).unwrap_err();
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn only_openai_compatible_models_embed_and_a_missing_key_says_what_to_do() {
        let anthropic = LlmDefinition::for_model(ModelRef::parse("anthropic:claude").unwrap());
        let e = EmbeddingsDefinition::from_llm(&anthropic)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("has no embeddings API — use openai:<model>"),
            "{e}"
        );
        let def = EmbeddingsDefinition::from_llm(&LlmDefinition::for_model(
            ModelRef::parse("openai:text-embedding-3-small").unwrap(),
        ))
        .unwrap();
        let e = EmbeddingsClient::new(def.clone(), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("OPENAI_API_KEY is not set"), "{e}");
        let c = EmbeddingsClient::new(def, &|k| {
            (k == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:8000/v1/".to_string())
        })
        .unwrap();
        assert_eq!(c.endpoint(), "http://127.0.0.1:8000/v1/embeddings");
        assert_eq!(c.model(), "openai:text-embedding-3-small");
    }
}
