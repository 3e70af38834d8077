//! The overview of a 1,000-trial run (20 tasks × 5 agents × 10 epochs, 10 verdicts each):
//! reading the run directory and rendering the page, as `bureau view` does on every visit.
//! `cargo bench -p bureau-view --bench overview`.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};

fn result_json(task: &str, agent: &str, epoch: u32, score: f64) -> String {
    format!(
        r#"{{"task":{{"id":"{task}","title":"Task {task}","persona":"persona {p}","category":"category {c}","difficulty":"medium","abilities":["email"],"apps":["files","mail"],"turns":2}},
"agent":"{agent}","epoch":{epoch},"status":"{status}",
"score":{{"weighted":{score},"pass_rate":{score},"strict":{strict},"partial":{score},"agency_0_10":5,"red_line_violations":[],"per_turn":{{"1":{score},"2":{score},"final":{score}}},"items_total":10,"items_passed":5,"items_error":0}},
"usage":{{"steps":20,"tool_calls":18,"tool_errors":1,"tool_calls_by_tool":{{"mail_send":2}},"limits_hit":[],"model_calls":9,"input_tokens":{it},"cached_input_tokens":0,"output_tokens":900,"cost_usd":{cost}}},
"wall_seconds":12.5,"attempts":[{{"attempt":1,"status":"{status}","dir":"."}}]}}"#,
        p = task.len() % 4,
        c = task.len() % 6,
        status = if score >= 1.0 { "passed" } else { "failed" },
        strict = score >= 1.0,
        it = 10_000 + epoch * 100,
        cost = 0.01 * score + 0.002,
    )
}

fn verdicts_json(task: &str, agent: &str, epoch: u32, passed: usize) -> String {
    let items: Vec<String> = (0..10)
        .map(|i| {
            format!(
                r#"{{"task":"{task}","agent":"{agent}","epoch":{epoch},"description":"item {i}","id":"item-{i}","turn":{turn},"status":"{s}","weight":1.0,"kind":"result","red_line":false,"categories":["accuracy"],"detail":"checked"}}"#,
                turn = if i < 5 { "1".to_string() } else { "\"final\"".to_string() },
                s = if i < passed { "passed" } else { "failed" },
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn make_run(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        r#"{"schema":"bureau.run/1","epochs":10}"#,
    )
    .unwrap();
    for t in 0..20 {
        let task = format!("task-{t:02}");
        for a in 0..5 {
            let agent = format!("agent-{a}");
            for e in 1..=10u32 {
                let passed = (t * 7 + a * 3 + e as usize) % 11;
                let passed = passed.min(10);
                let score = passed as f64 / 10.0;
                let d = dir
                    .join("trials")
                    .join(&task)
                    .join(&agent)
                    .join(e.to_string());
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("result.json"), result_json(&task, &agent, e, score))
                    .unwrap();
                std::fs::write(
                    d.join("verdicts.json"),
                    verdicts_json(&task, &agent, e, passed),
                )
                .unwrap();
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    make_run(&run);
    let loaded = bureau_view::load::load_run(&run);
    assert_eq!(loaded.trials.len(), 1000);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems.first());
    let mut g = c.benchmark_group("overview_1000_trials");
    g.sample_size(10);
    g.bench_function("load", |b| b.iter(|| bureau_view::load::load_run(&run)));
    g.bench_function("render", |b| {
        let runs = vec![loaded.clone()];
        b.iter(|| bureau_view::pages::overview(&runs))
    });
    g.bench_function("load_and_render", |b| {
        b.iter(|| bureau_view::pages::overview(&[bureau_view::load::load_run(&run)]))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
