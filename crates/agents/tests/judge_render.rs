//! The vision judge end to end: a `judge_render` item's deliverables (a .pptx rendered by the
//! real LibreOffice, a PDF by pdftoppm, a PNG as it is) reach a fake OpenAI / Anthropic API as
//! image parts of the judge's message, and re-scoring the run is a cache hit: no request, no
//! rendering.
//!
//! Needs LibreOffice (Impress) and poppler on PATH: `apt-get install libreoffice-impress
//! poppler-utils`.

mod support;

use base64::Engine as _;
use bureau_core::verdict::{Verdict, VerdictStatus};
use bureau_run::{JudgeEntry, RescoreOptions, RunConfig, run_judged, trial_dir};
use serde_json::Value;
use support::fake::{FakeServer, Wire};
use support::script::{anthropic, openai, tokens};
use support::*;

const ITEM: &str = r#"
[[rubric]]
id = "deck-looks-right"
description = "The deck and chart show the plan"
kind = "result"
judge = "The deck's second slide shows the budget, and the chart is red."
judge_render = ["deliverables/deck.pptx", "deliverables/chart.png", "deliverables/report.pdf", "deliverables/missing.pdf"]
"#;

/// The memo task plus one judged item that renders three seeded deliverables (and names one
/// that does not exist).
fn rendered_task(dir: &std::path::Path) -> std::path::PathBuf {
    let task = write_memo_task(dir);
    let toml = read(&task.join("task.toml")) + ITEM;
    std::fs::write(task.join("task.toml"), toml).unwrap();
    let files = task.join("world/files/deliverables");
    std::fs::create_dir_all(&files).unwrap();
    let deck = bureau_formats::office::write_pptx(&[
        ("Plan".into(), "Launch in May".into(), String::new()),
        ("Budget".into(), "12,500 EUR".into(), String::new()),
    ])
    .unwrap();
    std::fs::write(files.join("deck.pptx"), deck).unwrap();
    let chart = image::RgbImage::from_fn(300, 200, |x, _| {
        if x < 150 {
            image::Rgb([220, 30, 30])
        } else {
            image::Rgb([255, 255, 255])
        }
    });
    chart.save(files.join("chart.png")).unwrap();
    std::fs::write(
        files.join("report.pdf"),
        bureau_formats::office::write_pdf("Report", "The plan holds."),
    )
    .unwrap();
    std::fs::create_dir_all(task.join("solution")).unwrap();
    std::fs::write(
        task.join("solution/1.jsonl"),
        "{\"tool\": \"files_write\", \"args\": {\"path\": \"memo.md\", \"content\": \"The meeting moved to Friday.\"}}\n",
    )
    .unwrap();
    task
}

fn verdict(out: &std::path::Path) -> Verdict {
    let all: Vec<Verdict> = serde_json::from_str(
        &read(&trial_dir(out, "memo", "oracle", 1).join("verdicts.json")).replace('\n', ""),
    )
    .unwrap();
    all.into_iter()
        .find(|v| v.id == "deck-looks-right")
        .unwrap()
}

/// The images of the judge's user message, decoded, in order: (MIME type, bytes).
fn images_sent(wire: Wire, body: &Value) -> (String, Vec<(String, Vec<u8>)>) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let message = match wire {
        Wire::OpenAi => &body["messages"][1],
        Wire::Anthropic => &body["messages"][0],
    };
    assert_eq!(message["role"], "user");
    let parts = message["content"].as_array().expect("content parts");
    assert_eq!(parts[0]["type"], "text", "the prompt comes first");
    let text = parts[0]["text"].as_str().unwrap().to_string();
    let images = parts[1..]
        .iter()
        .map(|p| match wire {
            Wire::OpenAi => {
                assert_eq!(p["type"], "image_url");
                let url = p["image_url"]["url"].as_str().unwrap();
                let (head, data) = url.split_once(";base64,").unwrap();
                let mime = head.strip_prefix("data:").unwrap().to_string();
                (mime, b64.decode(data).unwrap())
            }
            Wire::Anthropic => {
                assert_eq!(p["type"], "image");
                assert_eq!(p["source"]["type"], "base64");
                let mime = p["source"]["media_type"].as_str().unwrap().to_string();
                (
                    mime,
                    b64.decode(p["source"]["data"].as_str().unwrap()).unwrap(),
                )
            }
        })
        .collect();
    (text, images)
}

fn judged_by(wire: Wire) {
    let d = tempfile::tempdir().unwrap();
    let task = rendered_task(&d.path().join("task"));
    let (model, answer) = match wire {
        Wire::OpenAi => (
            "openai:gpt-4.1-mini",
            openai::text(
                "{\"passed\": true, \"confidence\": 0.9, \"evidence\": \"Slide 2 reads 12,500 EUR; the chart is red.\"}",
                tokens(3000, 0, 30),
            ),
        ),
        Wire::Anthropic => (
            "anthropic:claude-sonnet-4-5",
            anthropic::text(
                "{\"passed\": true, \"confidence\": 0.9, \"evidence\": \"Slide 2 reads 12,500 EUR; the chart is red.\"}",
                tokens(3000, 0, 30),
            ),
        ),
    };
    let server = FakeServer::start(wire, Some(SECRET), vec![answer]);
    let file = write_agents_file(
        d.path(),
        &format!(
            "[agents.grader]\nkind = \"llm\"\nmodel = \"{model}\"\nbase_url = \"{}\"\napi_key_env = \"{KEY_ENV}\"\n[agents.grader.retry]\ninitial_backoff_seconds = 0.01\nmax_retries = 0\n",
            server.base_url()
        ),
    );
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

    let v = verdict(&out);
    assert_eq!(v.status, VerdictStatus::Passed, "{v:?}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    let received = server.received();
    assert_eq!(received.len(), 1);
    let (text, images) = images_sent(wire, &received[0].body);
    // Two slides, one picture, one PDF page; the missing file is named, not shown.
    assert_eq!(images.len(), 4, "{text}");
    let mut sizes = Vec::new();
    for (mime, bytes) in &images {
        assert_eq!(mime, "image/png");
        let img = image::load_from_memory(bytes).expect("a decodable PNG");
        sizes.push((img.width(), img.height()));
    }
    assert!(sizes[0].0 > sizes[0].1, "slides are landscape: {sizes:?}");
    assert_eq!(sizes[2], (300, 200), "the picture is shown as it is");
    assert!(
        sizes[3].1 > sizes[3].0,
        "the PDF page is portrait: {sizes:?}"
    );
    let chart = image::load_from_memory(&images[2].1).unwrap().to_rgb8();
    assert_eq!(chart.get_pixel(10, 10).0, [220, 30, 30]);
    for line in [
        "# Rendered pages",
        "image 1: `deliverables/deck.pptx`, page 1 of 2",
        "image 2: `deliverables/deck.pptx`, page 2 of 2",
        "image 3: `deliverables/chart.png`, page 1 of 1",
        "image 4: `deliverables/report.pdf`, page 1 of 1",
        "`deliverables/missing.pdf`: does not exist",
        "The deck's second slide shows the budget",
    ] {
        assert!(text.contains(line), "`{line}` not in {text}");
    }
    let pages = out.join("judge-cache/pages");
    assert_eq!(
        std::fs::read_dir(&pages).unwrap().count(),
        3,
        "one cache entry per rendered file"
    );

    // Re-scoring: the pages come from the judge cache and so does the answer.
    let judge = JudgeEntry::make(&catalog, "grader", &out).unwrap();
    let opts = RescoreOptions {
        judge: Some(std::sync::Arc::new(judge.judge)),
        ..Default::default()
    };
    let report = bureau_run::rescore(&out, &opts).unwrap();
    assert_eq!(report.verdicts_changed, 0);
    assert_eq!(server.received().len(), 1, "re-scoring made no model call");
    let again = verdict(&out);
    assert_eq!(again.status, VerdictStatus::Passed);
    let rec = again.judge.unwrap();
    assert!(rec.cached);
    assert_eq!(rec.prompt_hash, v.judge.unwrap().prompt_hash);
}

#[test]
fn rendered_pages_reach_an_openai_judge_as_image_url_parts_and_rescoring_is_a_cache_hit() {
    judged_by(Wire::OpenAi);
}

#[test]
fn rendered_pages_reach_an_anthropic_judge_as_image_blocks_and_rescoring_is_a_cache_hit() {
    judged_by(Wire::Anthropic);
}

#[test]
fn a_judge_configured_text_only_is_not_sent_pages_and_the_item_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let task = rendered_task(&d.path().join("task"));
    let server = FakeServer::start(Wire::OpenAi, Some(SECRET), vec![]);
    let file = write_agents_file(
        d.path(),
        &format!(
            "[agents.grader]\nkind = \"llm\"\nmodel = \"openai:gpt-3.5-turbo\"\nmodalities = [\"text\"]\nbase_url = \"{}\"\napi_key_env = \"{KEY_ENV}\"\n",
            server.base_url()
        ),
    );
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
    let v = verdict(&out);
    assert_eq!(v.status, VerdictStatus::Error, "{v:?}");
    let detail = v.detail.unwrap();
    assert!(
        detail.contains("configured without image input") && detail.contains("vision model"),
        "{detail}"
    );
    assert!(server.received().is_empty(), "no request was made");
}
