//! memory_search: BM25 retrieval over the task's dialogue history (see [`crate::memory`]).
//!
//! Not part of any app: offered only when the run setting is `rag:<granularity>:<k>` and the
//! task ships `history.json` ([`crate::World::set_memory`]).

use bureau_core::log::Actor;
use bureau_core::tool::ToolSpec;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolResult, parse, schema, string};
use crate::World;

pub const SEARCH: &str = "memory_search";

/// The spec of `memory_search` for an index returning at most `k` units, ranked by BM25 or
/// (`embeddings`) by semantic similarity.
pub fn spec(granularity: &str, k: u32, embeddings: bool) -> ToolSpec {
    let ranking = if embeddings {
        "semantic similarity of embeddings; write the query as a question or a description"
    } else {
        "BM25 keyword ranking; words are OR-ed, English stemming"
    };
    ToolSpec {
        name: SEARCH.to_string(),
        description: format!(
            "Search your memory of earlier conversations with the user (dialogue history, \
             stored as {granularity} units). Returns the best-matching units ({ranking}) with \
             their session id, time and text, best first. Use it for details the request leaves \
             out: preferences, agreed numbers, names, constraints stated on earlier days."
        ),
        input_schema: schema(
            &[
                ("query", string("Keywords to look for")),
                (
                    "k",
                    json!({"type": "integer", "minimum": 1, "maximum": k, "description": format!("How many units to return (default and at most {k})")}),
                ),
            ],
            &["query"],
        ),
        annotations: Some(super::effects::Effect::Read.annotations()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    query: String,
    k: Option<u64>,
}

pub(crate) fn search(w: &mut World, _actor: &Actor, args: &Value) -> ToolResult {
    let Some(index) = w.memory.as_ref() else {
        return Err("`memory_search` is not available in this office: the run offers it only under --context rag:<granularity>:<k> for a task with a dialogue history".into());
    };
    let a: Args = parse(SEARCH, args)?;
    if a.query.trim().is_empty() {
        return Err("`query` is empty: give keywords to look for".into());
    }
    let cap = u64::from(index.k());
    let asked = a.k.unwrap_or(cap);
    if asked == 0 {
        return Err(format!("`k` must be between 1 and {cap}"));
    }
    let hits = index
        .search(&a.query, asked.min(cap) as usize)
        .map_err(|e| e.to_string())?;
    let mut out = json!({
        "granularity": index.granularity().as_str(),
        "query": a.query,
        "results": hits,
    });
    if asked > cap {
        out["note"] = json!(format!("k is capped at {cap} by the run's context setting"));
    }
    Ok(out)
}
