//! Dense retrieval for `memory_search` (`--context rag:<granularity>:<k> --embeddings ...`)
//! end to end: a suites/history task played through Bureau's run loop by the `llm` agent
//! against the fake OpenAI server, whose `/v1/embeddings` route embeds texts as hashed bags of
//! words. The right session ranks first, the setting and the embedding usage are recorded,
//! vectors are cached in the run directory (a rerun makes no embeddings call), API faults are
//! retried, and a spent retry budget makes the trial `error`.

mod support;

use std::path::{Path, PathBuf};

use bureau_core::result::TrialStatus;
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::StepKind;
use bureau_run::{People, RunConfig, RunError, RunOutcome, run_full, trial_dir};
use serde_json::{Value, json};
use support::fake::{FakeServer, Reply, Wire};
use support::script::{openai, tokens};
use support::*;

const TASK: &str = "team-lunch-booking";
const MODEL: &str = "openai:bow-embed-256";

fn suite_task() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites/history")
        .join(TASK)
}

fn agents_file(dir: &Path, base: &str, embed_retries: u32) -> PathBuf {
    write_agents_file(
        dir,
        &format!(
            r#"[agents.gpt]
kind = "llm"
model = "openai:gpt-4.1-mini"
base_url = "{base}"
api_key_env = "{KEY_ENV}"
temperature = 0

[agents.gpt.retry]
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
request_timeout_seconds = 5

[agents.embed]
kind = "llm"
model = "{MODEL}"
base_url = "{base}"
api_key_env = "{KEY_ENV}"

[agents.embed.retry]
max_retries = {embed_retries}
initial_backoff_seconds = 0.01
max_backoff_seconds = 0.05
request_timeout_seconds = 2
"#
        ),
    )
}

fn config(out: &Path, context: &str, embeddings: Option<&str>) -> RunConfig {
    let mut c = RunConfig::new(
        vec![suite_task().display().to_string()],
        vec!["gpt".into()],
        out.to_path_buf(),
    );
    c.quiet = true;
    c.retries = 0;
    c.context = Some(context.parse().unwrap());
    c.embeddings = embeddings.map(str::to_string);
    c
}

fn run(file: &Path, config: &RunConfig) -> Result<RunOutcome, RunError> {
    let catalog = catalog(file);
    let people = People::make(&catalog, config)?;
    run_full(config, &|spec| catalog.make(spec), None, &people)
}

/// The model's side of a good trial: search the memory, then send the booking.
fn good_trial(query: &str) -> Vec<Reply> {
    let t = tokens(800, 0, 40);
    vec![
        openai::calls(&[("call_1", "memory_search", json!({"query": query}))], t),
        openai::calls(
            &[(
                "call_2",
                "mail_send",
                json!({
                    "to": ["reservations@groenelepel.test"],
                    "subject": "Lunch reservation Thursday 19 March, 13:00, 14 people",
                    "body": "Hello,\n\nBrightwater Instruments would like to book lunch on Thursday 19 March at 13:00 for 14 people. Our budget is €32 per person, and if possible we would love the long table by the window.\n\nKind regards,\nSofie Janssen"
                }),
            )],
            t,
        ),
        openai::text("Sent the booking request.", t),
    ]
}

/// The `memory_search` outcomes of the trial, in order.
fn searches(out: &Path) -> Vec<ToolOutcome> {
    trajectory(out, TASK, "gpt")
        .into_iter()
        .filter_map(|s| match s.kind {
            StepKind::ToolCall { tool, outcome, .. } if tool == "memory_search" => Some(outcome),
            _ => None,
        })
        .collect()
}

fn units(outcome: &ToolOutcome) -> Vec<String> {
    let ToolOutcome::Ok { value, .. } = outcome else {
        panic!("memory_search failed: {outcome:?}")
    };
    value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["unit"].as_str().unwrap().to_string())
        .collect()
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

#[test]
fn embeddings_rank_the_right_session_first_and_a_rerun_reads_every_vector_from_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let query = "budget per person Willem approved";
    let mut script = good_trial(query);
    script.extend(good_trial(query));
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), script);
    let file = agents_file(tmp.path(), &server.base_url(), 3);
    let out = tmp.path().join("run");
    let c = config(&out, "rag:utterance:3", Some("embed"));
    let outcome = run(&file, &c).unwrap();
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(outcome.passed, 1, "{:?}", result(&out, TASK, "gpt").error);

    // One batch for every utterance of the history, then the query.
    let history: Value = json_file(&suite_task().join("history.json"));
    let n_units: usize = history["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["utterances"].as_array().unwrap().len())
        .sum();
    let calls = server.embedding_requests();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].body["model"], "bow-embed-256");
    assert_eq!(calls[0].body["input"].as_array().unwrap().len(), n_units);
    assert_eq!(calls[1].body["input"], json!([query]));
    assert_eq!(
        calls[0].headers["authorization"],
        format!("Bearer {SECRET}")
    );

    // The agent got the session holding the budget, best first (the fake answered the
    // vectors in reverse order: the client put them back by index).
    let found = searches(&out);
    assert_eq!(found.len(), 1);
    assert_eq!(units(&found[0]), ["d2#1", "d2#2", "d1#5"]);
    let ToolOutcome::Ok { value, .. } = &found[0] else {
        unreachable!()
    };
    assert_eq!(value["granularity"], "utterance");
    assert_eq!(value["results"][0]["session"], "d2");
    assert_eq!(value["results"][0]["role"], "user");
    assert_eq!(value["results"][0]["score"], 0.5963);
    assert!(
        value["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("€32 per person")
    );
    // The tool says how it ranks.
    let received = server.received();
    let chat = &received
        .iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap()
        .body;
    let spec = chat["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "memory_search")
        .unwrap();
    let description = spec["function"]["description"].as_str().unwrap();
    assert!(description.contains("semantic similarity"), "{description}");

    // Usage: the embeddings' own tokens, beside (not in) the agent's.
    let words = |v: &Value| -> u64 {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().split_whitespace().count() as u64)
            .sum()
    };
    let embed_tokens = words(&calls[0].body["input"]) + words(&calls[1].body["input"]);
    let r = result(&out, TASK, "gpt");
    assert_eq!(r.usage.embedding_requests, 2);
    assert_eq!(r.usage.embedding_tokens, embed_tokens);
    assert_eq!(r.usage.input_tokens, 2400);

    // The setting is recorded with the results.
    let run_json = json_file(&out.join("run.json"));
    assert_eq!(run_json["context"], "rag:utterance:3");
    assert_eq!(run_json["retrieval"]["method"], "embeddings");
    assert_eq!(run_json["retrieval"]["model"], MODEL);
    assert_eq!(run_json["retrieval"]["spec"], "embed");
    assert_eq!(
        run_json["retrieval"]["definition"]["base_url"],
        server.base_url()
    );
    let summary = json_file(&out.join("summary.json"));
    assert_eq!(summary["retrieval"], format!("embeddings {MODEL}"));
    assert_eq!(
        summary["agents"]["gpt"]["embedding_tokens_mean"],
        json!(embed_tokens as f64)
    );
    let report = read(&out.join("report.md"));
    assert!(
        report.contains(&format!(
            "Context: rag:utterance:3, retrieval: embeddings {MODEL}"
        )),
        "{report}"
    );
    // One cached vector per text; the key is never written.
    let cache = out.join("embedding-cache");
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), n_units + 1);
    assert_eq!(files_containing(&out, SECRET), Vec::<PathBuf>::new());

    // A rerun of the trial: every vector comes from the cache, no embeddings call.
    std::fs::remove_dir_all(out.join("trials")).unwrap();
    let again = run(&file, &c).unwrap();
    assert_eq!(again.passed, 1);
    assert_eq!(server.embedding_requests().len(), 2);
    assert_eq!(units(&searches(&out)[0]), ["d2#1", "d2#2", "d1#5"]);
    let r = result(&out, TASK, "gpt");
    assert_eq!(
        (r.usage.embedding_requests, r.usage.embedding_tokens),
        (0, 0)
    );
    let raw = read(&trial_dir(&out, TASK, "gpt", 1).join("result.json"));
    assert!(!raw.contains("embedding_tokens"), "{raw}");
    let summary = json_file(&out.join("summary.json"));
    assert!(
        summary["agents"]["gpt"]
            .get("embedding_tokens_mean")
            .is_none()
    );
    assert_eq!(server.unused(), 0);
}

#[test]
fn embeddings_faults_are_retried_429_with_retry_after_5xx_cut_off_bodies_and_resets() {
    let tmp = tempfile::tempdir().unwrap();
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        good_trial("budget per person Willem approved"),
    );
    server.fail_embeddings(vec![
        Reply::rate_limited(Wire::OpenAi, "0"),
        Reply::error(Wire::OpenAi, 503, "The server is overloaded"),
        Reply::Truncated {
            body: json!({"object": "list", "data": [{"index": 0, "embedding": [1.0, 2.0]}]}),
            keep: 25,
        },
        Reply::Reset,
    ]);
    let file = agents_file(tmp.path(), &server.base_url(), 4);
    let out = tmp.path().join("run");
    let outcome = run(&file, &config(&out, "rag:session:2", Some("embed"))).unwrap();
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(outcome.passed, 1, "{:?}", result(&out, TASK, "gpt").error);
    // Four faults, then the batch, then the query.
    assert_eq!(server.embedding_requests().len(), 6);
    assert_eq!(units(&searches(&out)[0])[0], "d2");
    assert_eq!(result(&out, TASK, "gpt").usage.embedding_requests, 2);
}

#[test]
fn a_spent_retry_budget_makes_the_trial_error_not_failed() {
    let tmp = tempfile::tempdir().unwrap();
    // Building the index fails: the agent is never called.
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), Vec::new());
    server.fail_embeddings(vec![
        Reply::error(Wire::OpenAi, 500, "boom"),
        Reply::error(Wire::OpenAi, 500, "boom again"),
    ]);
    let file = agents_file(tmp.path(), &server.base_url(), 1);
    let out = tmp.path().join("run");
    let c = config(&out, "rag:utterance:3", Some("embed"));
    let outcome = run(&file, &c).unwrap();
    assert_eq!((outcome.errored, outcome.failed), (1, 0));
    let r = result(&out, TASK, "gpt");
    assert_eq!(r.status, TrialStatus::Error);
    let e = r.error.unwrap();
    assert!(e.contains("building the memory index"), "{e}");
    assert!(e.contains("boom again"), "{e}");
    assert!(e.contains("gave up after 2 attempts"), "{e}");
    assert_eq!(server.received().len(), 2);

    // With the units cached, a query that fails mid-turn: the agent sees a tool error, and
    // the trial ends as error after the turn.
    let t = tokens(100, 0, 5);
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::calls(
                &[("call_1", "memory_search", json!({"query": "lunch time"}))],
                t,
            ),
            openai::text("I could not search my memory.", t),
        ],
    );
    let file = agents_file(tmp.path(), &server.base_url(), 1);
    let warm = tmp.path().join("warm");
    // Warm the cache: its embeddings request succeeds, its agent is never asked (no script
    // for it: the run directory's trials are removed before the real run).
    let catalog = catalog(&file);
    let embedder = catalog.make_embedder("embed").unwrap();
    let task = bureau_core::task::Task::load(&suite_task()).unwrap();
    let units_text: Vec<String> = bureau_world::memory::units(
        task.history.as_ref().unwrap(),
        bureau_core::history::Granularity::Utterance,
        task.timezone,
    )
    .unwrap()
    .into_iter()
    .map(|u| u.text)
    .collect();
    let cached = bureau_world::embed::CachedEmbedder::new(embedder, warm.join("embedding-cache"));
    use bureau_world::embed::Embedder;
    assert_eq!(cached.embed(&units_text).unwrap().requests, 1);
    server.fail_embeddings(vec![
        Reply::error(Wire::OpenAi, 502, "bad gateway"),
        Reply::error(Wire::OpenAi, 502, "bad gateway"),
    ]);
    let outcome = run(&file, &config(&warm, "rag:utterance:3", Some("embed"))).unwrap();
    assert_eq!(outcome.errored, 1);
    let r = result(&warm, TASK, "gpt");
    let e = r.error.unwrap();
    assert!(
        e.contains("turn 1: memory_search could not be served, the embeddings model failed"),
        "{e}"
    );
    let found = searches(&warm);
    let ToolOutcome::Error { message } = &found[0] else {
        panic!("{found:?}")
    };
    assert!(message.contains("bad gateway"), "{message}");
    assert_eq!(server.unused(), 0);
}

#[test]
fn embeddings_need_a_rag_context_an_openai_model_and_the_same_retrieval_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), Vec::new());
    let file = agents_file(tmp.path(), &server.base_url(), 1);
    let e = run(&file, &config(&tmp.path().join("a"), "long", Some("embed")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--embeddings ranks memory_search results")
            && e.contains("add e.g. --context rag:utterance:5"),
        "{e}"
    );
    let e = run(
        &file,
        &config(&tmp.path().join("b"), "rag:session:2", Some("anthropic:x")),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("has no embeddings API — use openai:<model>"),
        "{e}"
    );
    let e = run(
        &file,
        &config(
            &tmp.path().join("c"),
            "rag:session:2",
            Some("text-embedding-3-small"),
        ),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--embeddings `text-embedding-3-small`"), "{e}");
    assert!(e.contains("openai:text-embedding-3-small"), "{e}");
    // The bare model takes its key from OPENAI_API_KEY: missing here.
    let e = run(
        &file,
        &config(&tmp.path().join("d"), "rag:session:2", Some(MODEL)),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("OPENAI_API_KEY is not set"), "{e}");
    assert_eq!(server.received().len(), 0);

    // A BM25 run is resumed only under BM25.
    let out = tmp.path().join("bm25");
    let oracle = |c: &RunConfig| {
        let catalog = catalog(&file);
        let people = People::make(&catalog, c)?;
        run_full(c, &|spec| catalog.make(spec), None, &people)
    };
    let mut c = config(&out, "rag:session:2", None);
    c.agents = vec!["oracle".into()];
    assert_eq!(oracle(&c).unwrap().passed, 1);
    assert_eq!(
        json_file(&out.join("run.json"))["retrieval"]["method"],
        "bm25"
    );
    assert_eq!(json_file(&out.join("summary.json"))["retrieval"], "bm25");
    c.embeddings = Some("embed".into());
    let e = oracle(&c).unwrap_err();
    assert!(
        matches!(&e, RunError::OtherRun { what, .. } if what == &format!("retrieval bm25, not embeddings {MODEL}")),
        "{e}"
    );
}
