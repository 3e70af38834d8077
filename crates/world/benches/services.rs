//! Snapshot and restore of a world that uses every service (files, mail, calendar, chat,
//! knowledge base, sheets, tracker, code hosting), beside the obvious alternative of
//! rebuilding the world from its seed.
//!
//! The fixture combines the seeds of several `suites/intranet` tasks into one office.
//! Run: `cargo bench -p bureau-world --bench services`. Figures go to docs/BENCHMARKS.md.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const TASK: &str = r#"id = "all-services"
title = "Every service"
persona = "operations coordinator"
category = "benchmark"
difficulty = "easy"
timezone = "Europe/Amsterdam"
[user]
name = "Mara Lindqvist"
email = "mara.lindqvist@brightwater.test"
[[turn]]
at = "2026-03-09T09:00:00"
prompt = "Benchmark."
[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "x.md"
"#;

fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(from).unwrap();
        if e.file_type().is_dir() {
            std::fs::create_dir_all(to.join(rel)).unwrap();
        } else {
            std::fs::create_dir_all(to.join(rel).parent().unwrap()).unwrap();
            std::fs::copy(e.path(), to.join(rel)).unwrap();
        }
    }
}

/// A task whose world has a seed for every service, from the intranet suite's tasks.
fn fixture(dir: &Path) -> Task {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/intranet");
    let world = dir.join("world");
    for (task, part) in [
        ("aquavak-exhibitor-form", "chat"),
        ("aquavak-exhibitor-form", "files"),
        ("march-delivery-report", "files"),
        ("kb-supplier-scorecard-update", "kb"),
        ("kb-supplier-scorecard-update", "files"),
        ("ops-budget-reconcile", "sheets"),
        ("ops-budget-reconcile", "mail"),
        ("support-inbox-triage", "mail"),
        ("sprint-rollover-notify", "tracker"),
        ("calibration-mr-review", "code"),
    ] {
        copy_tree(
            &suite.join(task).join("world").join(part),
            &world.join(part),
        );
    }
    std::fs::copy(
        suite.join("aquavak-exhibitor-form/world/people.toml"),
        world.join("people.toml"),
    )
    .unwrap();
    let starter = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter");
    copy_tree(
        &starter.join("q2-planning-scheduling/world/calendar"),
        &world.join("calendar"),
    );
    std::fs::write(dir.join("task.toml"), TASK).unwrap();
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn call(w: &mut World, tool: &str, args: Value) {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { .. } => {}
        ToolOutcome::Error { message } => panic!("{tool}: {message}"),
    }
}

/// One change in every service.
fn change_everything(w: &mut World, i: u64) {
    call(
        w,
        "files_write",
        json!({"path": format!("notes/n{i}.md"), "content": "x".repeat(4096)}),
    );
    call(
        w,
        "mail_send",
        json!({"to": ["jonas.petersen@brightwater.test"], "subject": format!("note {i}"), "body": "hello"}),
    );
    call(
        w,
        "calendar_create",
        json!({"summary": format!("sync {i}"), "start": "2026-03-12T10:00:00", "end": "2026-03-12T10:30:00"}),
    );
    call(
        w,
        "chat_post",
        json!({"channel": "general", "text": format!("benchmark note {i}")}),
    );
    call(
        w,
        "kb_update_row",
        json!({"database": "Suppliers", "row": "Optisens", "values": {"Defect ppm": i}}),
    );
    call(
        w,
        "sheets_write",
        json!({"spreadsheet": "Ops Budget", "sheet": "Q1", "range": "C2", "values": [[i]]}),
    );
    call(
        w,
        "tracker_comment",
        json!({"key": "OPS-11", "text": format!("benchmark comment {i}")}),
    );
    call(
        w,
        "code_wiki_write",
        json!({"repo": "sensor-calibration", "title": "Notes", "content": format!("note {i}")}),
    );
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let task = fixture(&tmp.path().join("task"));
    let mut g = c.benchmark_group("every service");
    g.sample_size(20);
    let mut n = 0u64;

    g.bench_function("build the world from its seed", |b| {
        b.iter(|| {
            n += 1;
            let w = World::build(&task, &tmp.path().join(format!("b{n}"))).unwrap();
            std::hint::black_box(w.log().len());
        })
    });

    let mut w = World::build(&task, &tmp.path().join("live")).unwrap();
    w.begin_turn(&task.turns[0]).unwrap();
    change_everything(&mut w, 0);
    let snap = w.snapshot().unwrap();

    g.bench_function("snapshot", |b| {
        b.iter(|| std::hint::black_box(w.snapshot().unwrap().files.len()))
    });

    let w = std::cell::RefCell::new(w);
    let mut i = 1u64;
    g.bench_function("change every service, then restore the snapshot", |b| {
        b.iter_batched(
            || {
                i += 1;
                change_everything(&mut w.borrow_mut(), i);
            },
            |()| w.borrow_mut().restore(&snap).unwrap(),
            BatchSize::PerIteration,
        )
    });
    assert_eq!(
        w.borrow().snapshot().unwrap(),
        snap,
        "restore gives the snapshot back"
    );

    g.bench_function("change every service, then rebuild from the seed", |b| {
        b.iter_batched(
            || {
                i += 1;
                change_everything(&mut w.borrow_mut(), i);
                n += 1;
                tmp.path().join(format!("r{n}"))
            },
            |dir| {
                let mut fresh = World::build(&task, &dir).unwrap();
                fresh.begin_turn(&task.turns[0]).unwrap();
                std::hint::black_box(fresh.log().len());
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
