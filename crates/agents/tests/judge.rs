//! LLM judges end to end: `judge = ...` items judged by a model behind a fake OpenAI /
//! Anthropic API, recorded in run.json and the verdicts, cached, and re-scored without calls.

mod support;

use bureau_core::verdict::{JudgeErrorType, Verdict, VerdictStatus};
use bureau_run::{JudgeEntry, RescoreOptions, RunConfig, run_judged, trial_dir};
use serde_json::json;
use support::fake::{FakeServer, Reply, Wire};
use support::script::{anthropic, openai, tokens};
use support::*;

/// The memo task with two judged items added (and a solution that does the work).
fn judged_task(dir: &std::path::Path) -> std::path::PathBuf {
    let task = write_memo_task(dir);
    let toml = read(&task.join("task.toml"));
    let toml = toml.replace(
        "[[rubric]]\nid = \"budget-in-memo\"",
        "[[rubric]]\nid = \"tone\"\ndescription = \"Plain tone\"\nkind = \"result\"\njudge = \"memo.md is written in plain, neutral language.\"\n\n[[rubric]]\nid = \"friday-explained\"\ndescription = \"Says why\"\nkind = \"result\"\njudge = \"memo.md says why the meeting moved.\"\njudge_files = [\"memo.md\"]\n\n[[rubric]]\nid = \"budget-in-memo\"",
    );
    std::fs::write(task.join("task.toml"), toml).unwrap();
    std::fs::create_dir_all(task.join("solution")).unwrap();
    std::fs::write(
        task.join("solution/1.jsonl"),
        "{\"tool\": \"files_write\", \"args\": {\"path\": \"memo.md\", \"content\": \"The meeting moved to Friday.\"}}\n{\"tool\": \"mail_send\", \"args\": {\"to\": [\"bob@corp.test\"], \"subject\": \"meeting moved\", \"body\": \"Friday.\"}}\n",
    )
    .unwrap();
    std::fs::write(
        task.join("solution/2.jsonl"),
        "{\"tool\": \"files_write\", \"args\": {\"path\": \"memo.md\", \"content\": \"The meeting moved to Friday. Budget: 12,500 EUR.\"}}\n",
    )
    .unwrap();
    task
}

fn agents_file(dir: &std::path::Path, base: &str, model: &str) -> std::path::PathBuf {
    write_agents_file(
        dir,
        &format!(
            "[agents.grader]\nkind = \"llm\"\nmodel = \"{model}\"\nbase_url = \"{base}\"\napi_key_env = \"{KEY_ENV}\"\ntemperature = 0.7\nseed = 7\n[agents.grader.retry]\ninitial_backoff_seconds = 0.01\nmax_backoff_seconds = 0.05\nmax_retries = 1\n"
        ),
    )
}

fn verdicts(out: &std::path::Path) -> Vec<Verdict> {
    serde_json::from_str(
        &read(&trial_dir(out, "memo", "oracle", 1).join("verdicts.json")).replace('\n', ""),
    )
    .unwrap()
}

#[test]
fn judged_items_are_decided_by_the_model_cached_and_rescored_without_calls() {
    let d = tempfile::tempdir().unwrap();
    let task = judged_task(&d.path().join("task"));
    let server = FakeServer::start(
        Wire::OpenAi,
        Some(SECRET),
        vec![
            openai::text(
                "{\"passed\": true, \"confidence\": 0.92, \"evidence\": \"Short factual sentences.\", \"error_type\": null}",
                tokens(900, 0, 40),
            ),
            openai::text(
                "```json\n{\"passed\": false, \"confidence\": 0.8, \"evidence\": \"No reason is given.\", \"error_type\": \"Missing Content\"}\n```",
                tokens(700, 0, 40),
            ),
        ],
    );
    let file = agents_file(d.path(), &server.base_url(), "openai:gpt-4.1-mini");
    let catalog = catalog(&file);
    let out = d.path().join("run");
    let mut config = RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into()],
        out.clone(),
    );
    config.quiet = true;
    config.retries = 0;
    config.judge = Some("grader".into());
    let judge = JudgeEntry::make(&catalog, "grader", &out).unwrap();
    run_judged(&config, &|s| catalog.make(s), Some(&judge)).unwrap();

    let v = verdicts(&out);
    let tone = v.iter().find(|v| v.id == "tone").unwrap();
    assert_eq!(tone.status, VerdictStatus::Passed, "{tone:?}");
    let rec = tone.judge.as_ref().unwrap();
    assert_eq!(rec.model, "openai:gpt-4.1-mini");
    assert_eq!(rec.confidence, Some(0.92));
    let why = v.iter().find(|v| v.id == "friday-explained").unwrap();
    assert_eq!(why.status, VerdictStatus::Failed);
    assert_eq!(
        why.judge.as_ref().unwrap().error_type,
        Some(JudgeErrorType::MissingContent)
    );

    // What the judge received: temperature 0 (the agent's 0.7 is overridden), its seed, no
    // tools, the proposition and the memo's final text.
    let received = server.received();
    assert_eq!(received.len(), 2);
    for r in &received {
        assert_eq!(r.body["temperature"], json!(0.0));
        assert_eq!(r.body["seed"], json!(7));
        assert!(r.body.get("tools").is_none());
        assert_eq!(r.body["messages"][0]["role"], "system");
    }
    let prompt = received[1].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("memo.md says why the meeting moved."),
        "{prompt}"
    );
    assert!(prompt.contains("Budget: 12,500 EUR"), "{prompt}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());

    // run.json pins the judge; the cache holds both answers.
    let manifest: serde_json::Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(manifest["judge"]["model"], "openai:gpt-4.1-mini");
    assert_eq!(
        manifest["judge"]["definition"]["sampling"]["temperature"],
        0.0
    );
    assert_eq!(count_files(&out.join("judge-cache")), 2);
    assert!(
        files_containing(&out, SECRET).is_empty(),
        "the key is never written"
    );

    // Re-scoring with the same judge reaches the same verdicts from the cache: no new call.
    let judge = JudgeEntry::make(&catalog, "grader", &out).unwrap();
    let opts = RescoreOptions {
        judge: Some(std::sync::Arc::new(judge.judge)),
        ..Default::default()
    };
    let report = bureau_run::rescore(&out, &opts).unwrap();
    assert_eq!(report.verdicts_changed, 0);
    assert_eq!(server.received().len(), 2, "re-scoring made no model call");
    let again = verdicts(&out);
    assert!(
        again
            .iter()
            .find(|v| v.id == "tone")
            .unwrap()
            .judge
            .as_ref()
            .unwrap()
            .cached
    );
}

#[test]
fn a_judge_api_failure_is_an_error_item_and_the_trial_is_error() {
    let d = tempfile::tempdir().unwrap();
    let task = judged_task(&d.path().join("task"));
    let server = FakeServer::start(
        Wire::Anthropic,
        Some(SECRET),
        vec![
            anthropic::text(
                "{\"passed\": true, \"evidence\": \"ok\"}",
                tokens(500, 0, 20),
            ),
            Reply::error(Wire::Anthropic, 500, "overloaded"),
            Reply::error(Wire::Anthropic, 500, "overloaded"),
        ],
    );
    let file = agents_file(d.path(), &server.base_url(), "anthropic:claude-sonnet-4-5");
    let catalog = catalog(&file);
    let out = d.path().join("run");
    let mut config = RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into()],
        out.clone(),
    );
    config.quiet = true;
    config.retries = 0;
    config.judge = Some("grader".into());
    let judge = JudgeEntry::make(&catalog, "grader", &out).unwrap();
    let outcome = run_judged(&config, &|s| catalog.make(s), Some(&judge)).unwrap();
    let v = verdicts(&out);
    let why = v.iter().find(|v| v.id == "friday-explained").unwrap();
    assert_eq!(why.status, VerdictStatus::Error, "{why:?}");
    assert!(
        why.detail.as_deref().unwrap().contains("overloaded"),
        "{why:?}"
    );
    let r = result(&out, "memo", "oracle");
    assert_eq!(r.status, bureau_core::result::TrialStatus::Error);
    assert_eq!(outcome.summary.agents["oracle"].errors, 1);
    // The Anthropic request: system prompt as a field, temperature 0, no tools.
    let body = &server.received()[0].body;
    assert_eq!(body["temperature"], json!(0.0));
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("strict, fair grader")
    );
    assert!(body.get("tools").is_none());
}
