//! `run.json`: what a run is — its targets, agents, epochs, tasks and the settings a resumed
//! run must repeat — and how two manifests differ or extend each other.

use serde::{Deserialize, Serialize};

use bureau_core::history::ContextSetting;

use crate::ReplicaMode;

/// `run.json`: what the run is. A run directory is resumed only by the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    pub schema: String,
    pub bureau_version: String,
    pub targets: Vec<String>,
    pub agents: Vec<AgentEntry>,
    pub epochs: u32,
    /// Task ids, in run order.
    pub tasks: Vec<String>,
    /// The LLM judge, when the run has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeManifest>,
    /// The simulated user's feedback rounds, when the run has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackManifest>,
    /// The colleagues' reply policy, when it is not the deterministic one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colleagues: Option<JudgeManifest>,
    // -- dialogue history (OdysseyBench) --
    /// The context setting (`none`, `long`, `rag:<granularity>:<k>`), recorded when a task of
    /// the run ships a dialogue history; a run is resumed only with the same setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSetting>,
    // -- workspace replicas (issue 5) --
    /// `--replicas`, recorded when a task of the run has a `[workspace]`. Not part of what a
    /// resumed run must repeat: every mode gives the same worlds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<ReplicaMode>,
    /// How `memory_search` ranks under a `rag` context setting (absent in runs made before it
    /// was recorded: BM25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalManifest>,
    /// `--variants` and `--variant-seed`, recorded when a task of the run is parametrised; a
    /// run is resumed (and re-scored) only with the same instances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<VariantsManifest>,
    /// `N` of `--shard K/N` when the run is split into shards (docs/distributed.md): every
    /// shard must give the same tasks, agents, epochs and N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    /// Each agent's model API limits for the whole run (`--agent-concurrency`, `--rpm`), by
    /// spec; every shard must give the same (each takes its part).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub budgets: std::collections::BTreeMap<String, crate::budget::AgentBudget>,
}

/// The procedural variants of a run (docs/variants.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantsManifest {
    /// Instances per parametrised task.
    pub count: u32,
    /// The run's variant seed; absent = each suite's public `variant_seed` (else 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl VariantsManifest {
    pub fn plan(&self) -> bureau_variants::Plan {
        bureau_variants::Plan {
            count: self.count,
            seed: self.seed,
        }
    }
}

/// How a `rag` run ranks `memory_search` results, as recorded in `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievalManifest {
    /// `bm25` or `embeddings`.
    pub method: String,
    /// The embeddings model (`provider:model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `--embeddings` as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// What defines the embeddings model (endpoint, key variable, retries), never a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<serde_json::Value>,
}

impl RetrievalManifest {
    /// `bm25`, or `embeddings <provider:model>` (as in summary.json and report.md).
    pub fn label(&self) -> String {
        match &self.model {
            Some(m) => format!("{} {m}", self.method),
            None => self.method.clone(),
        }
    }
}

/// The retrieval of a recorded run: BM25 unless embeddings are recorded; none unless `rag`.
pub(crate) fn retrieval_label(m: &RunManifest) -> Option<String> {
    match m.context {
        Some(ContextSetting::Rag { .. }) => Some(
            m.retrieval
                .as_ref()
                .map_or_else(|| "bm25".to_string(), RetrievalManifest::label),
        ),
        _ => None,
    }
}

/// The feedback setting of a run, as recorded in `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackManifest {
    /// Feedback rounds per turn (`--feedback`).
    pub rounds: u32,
    /// `--feedback-threshold`.
    pub threshold: f64,
    /// The model writing the messages; absent for the fixed template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<JudgeManifest>,
}

/// The judge of a run, as recorded in `run.json` (never a secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeManifest {
    /// As given (`--judge`).
    pub spec: String,
    /// `provider:model`.
    pub model: String,
    pub definition: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentEntry {
    /// As given (`--agent`).
    pub spec: String,
    /// [`Agent::name`].
    pub name: String,
    /// Its directory under `trials/<task>/`.
    pub dir: String,
    /// [`Agent::definition`]: what defines the agent (model, endpoint, parameters, limits),
    /// never a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<serde_json::Value>,
}

pub const RUN_SCHEMA: &str = "bureau.run/1";

/// The manifest of `old` grown by what `new` adds (agents after the run's own, in the order
/// given; the larger number of epochs), or `None` when `new` adds nothing.
pub(crate) fn extended(old: &RunManifest, new: &RunManifest) -> Option<RunManifest> {
    let added: Vec<AgentEntry> = new
        .agents
        .iter()
        .filter(|n| !old.agents.iter().any(|o| o.spec == n.spec))
        .cloned()
        .collect();
    if added.is_empty() && new.epochs <= old.epochs {
        return None;
    }
    let mut m = old.clone();
    m.agents.extend(added);
    m.epochs = m.epochs.max(new.epochs);
    Some(m)
}

/// The agents of a manifest as `[a, b]`, by spec.
pub(crate) fn agent_list(m: &RunManifest) -> String {
    let specs: Vec<&str> = m.agents.iter().map(|a| a.spec.as_str()).collect();
    format!("[{}]", specs.join(", "))
}

/// What makes shard `shard` of `new` a different run from `old` (the run directory's
/// run.json), beyond [`differs`]: shards must agree on every trial, so the agents (as a set),
/// the epochs, the tasks and the number of shards must be the same.
pub(crate) fn shard_differs(
    old: &RunManifest,
    new: &RunManifest,
    shard: crate::Shard,
) -> Option<String> {
    fn set(m: &RunManifest) -> Vec<&str> {
        let mut v: Vec<&str> = m.agents.iter().map(|a| a.spec.as_str()).collect();
        v.sort();
        v
    }
    if set(old) != set(new) {
        return Some(format!(
            "agents {}, not {} (every shard of a run gives the same agents)",
            agent_list(old),
            agent_list(new)
        ));
    }
    if old.epochs != new.epochs {
        return Some(format!(
            "{} epoch(s), not {} (every shard of a run gives the same --epochs)",
            old.epochs, new.epochs
        ));
    }
    if old.tasks != new.tasks {
        return Some(format!(
            "tasks {:?}, not {:?} (every shard must load the same tasks)",
            old.tasks, new.tasks
        ));
    }
    if old.budgets != new.budgets {
        let show = |m: &RunManifest| {
            if m.budgets.is_empty() {
                return "none".to_string();
            }
            m.budgets
                .iter()
                .map(|(a, b)| {
                    let mut parts = Vec::new();
                    if let Some(c) = b.concurrency {
                        parts.push(format!("--agent-concurrency {c}"));
                    }
                    if let Some(r) = b.rpm {
                        parts.push(format!("--rpm {r}"));
                    }
                    format!("{a}: {}", parts.join(" "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        return Some(format!(
            "agent limits {}, not {} (every shard of a run gives the same --agent-concurrency and --rpm: each takes its part of them)",
            show(old),
            show(new)
        ));
    }
    match old.shards {
        Some(n) if n == shard.n => None,
        Some(n) => Some(format!("{n} shards, not {} — give --shard K/{n}", shard.n)),
        None => Some(
            "a run started without --shard — resume it without --shard, or give shards a new --out"
                .into(),
        ),
    }
}

/// What makes `new` a different run from `old`, if anything.
pub(crate) fn differs(old: &RunManifest, new: &RunManifest) -> Option<String> {
    if old.targets != new.targets {
        return Some(format!("targets {:?}, not {:?}", old.targets, new.targets));
    }
    let judge = |m: &RunManifest| m.judge.as_ref().map(|j| j.model.clone());
    if judge(old) != judge(new) {
        return Some(format!(
            "judge {}, not {}",
            judge(old).unwrap_or_else(|| "none".into()),
            judge(new).unwrap_or_else(|| "none".into())
        ));
    }
    if old.variants != new.variants {
        let show = |v: Option<VariantsManifest>| match v {
            None => "none".to_string(),
            Some(v) => format!(
                "{} per task, seed {}",
                v.count,
                v.seed
                    .map_or("of the suites".to_string(), |s| s.to_string())
            ),
        };
        return Some(format!(
            "variants {}, not {}",
            show(old.variants),
            show(new.variants)
        ));
    }
    // -- dialogue history (OdysseyBench) --
    if old.context != new.context {
        let show =
            |c: Option<ContextSetting>| c.map_or("none recorded".to_string(), |c| c.to_string());
        return Some(format!(
            "context {}, not {}",
            show(old.context),
            show(new.context)
        ));
    }
    if retrieval_label(old) != retrieval_label(new) {
        let show = |r: Option<String>| r.unwrap_or_else(|| "none".into());
        return Some(format!(
            "retrieval {}, not {}",
            show(retrieval_label(old)),
            show(retrieval_label(new))
        ));
    }
    // Agents are a set: their order on the command line is not the run's identity, and more
    // agents extend the run. Every agent of the run must still be there, defined the same.
    let missing: Vec<&str> = old
        .agents
        .iter()
        .filter(|o| !new.agents.iter().any(|n| n.spec == o.spec))
        .map(|o| o.spec.as_str())
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "agents {:?}; this command leaves out {:?} (agents can be added to a run, not removed)",
            old.agents
                .iter()
                .map(|a| a.spec.as_str())
                .collect::<Vec<_>>(),
            missing
        ));
    }
    for o in &old.agents {
        let Some(n) = new.agents.iter().find(|n| n.spec == o.spec) else {
            continue;
        };
        if o.definition.is_some() && o.definition != n.definition {
            return Some(format!(
                "agent `{}` defined as {}, not {}",
                o.spec,
                o.definition
                    .as_ref()
                    .map_or("nothing".into(), |d| d.to_string()),
                n.definition
                    .as_ref()
                    .map_or("nothing".into(), |d| d.to_string())
            ));
        }
    }
    // ---- simulated people ----
    let feedback = |m: &RunManifest| {
        m.feedback.as_ref().map_or("none".to_string(), |f| {
            format!(
                "{} round(s) at threshold {} written by {}",
                f.rounds,
                f.threshold,
                f.model
                    .as_ref()
                    .map_or("the template", |j| j.model.as_str())
            )
        })
    };
    if feedback(old) != feedback(new) {
        return Some(format!("feedback {}, not {}", feedback(old), feedback(new)));
    }
    let colleagues = |m: &RunManifest| {
        m.colleagues
            .as_ref()
            .map_or("deterministic".to_string(), |c| c.model.clone())
    };
    if colleagues(old) != colleagues(new) {
        return Some(format!(
            "colleagues {}, not {}",
            colleagues(old),
            colleagues(new)
        ));
    }
    if new.epochs < old.epochs {
        return Some(format!(
            "{} epoch(s), not {} (epochs can be added to a run, not removed)",
            old.epochs, new.epochs
        ));
    }
    if old.tasks != new.tasks {
        return Some(format!("tasks {:?}, now {:?}", old.tasks, new.tasks));
    }
    None
}
