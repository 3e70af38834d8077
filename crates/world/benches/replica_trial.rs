//! The workspace part of one trial of a `[workspace]` task on the 11,020-file researcher
//! workspace, three ways side by side: a copy per trial (`bureau run --replicas off`), and a
//! pooled replica (`--replicas overlay` / `portable`). One trial = build the world, change 20
//! files like an agent, take a turn snapshot, list the changed files, and tear down (copy:
//! delete the world; replica: drop the world, which resets the replica into the pool).
//!
//! Run: `cargo bench -p bureau-world --bench replica_trial`. Figures go to docs/BENCHMARKS.md.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bureau_core::task::Task;
use bureau_replica::{Backend, Baseline, Pool, PoolOptions};
use bureau_world::generated::baseline_tree;
use bureau_world::{BaseLayer, World};
use criterion::{Criterion, criterion_group, criterion_main};

const FILES: usize = 11_020;

fn task(dir: &Path) -> Task {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("task.toml"),
        format!(
            r#"
id = "bench"
title = "Bench"
persona = "researcher"
category = "workspace"
difficulty = "easy"

[workspace]
persona = "researcher"
files = {FILES}
seed = 1

[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "answer.md"
"#
        ),
    )
    .unwrap();
    Task::load(dir).unwrap()
}

/// 20 agent-like changes: 10 edits, 5 new files, 5 deletions.
fn agent_changes(w: &World, victims: &[String]) {
    let ws = w.workspace();
    std::fs::create_dir_all(ws.join("out")).unwrap();
    for (i, v) in victims.iter().enumerate() {
        let p = ws.join(v);
        match i % 4 {
            0 | 1 => std::fs::write(&p, format!("edited {i}\n")).unwrap(),
            2 => std::fs::remove_file(&p).unwrap(),
            _ => std::fs::write(ws.join(format!("out/new-{i}.md")), "new\n").unwrap(),
        }
    }
}

fn one_trial(w: World, victims: &[String]) {
    agent_changes(&w, victims);
    let snap = w.snapshot().unwrap();
    let changed = w.changed_files().unwrap();
    assert_eq!(
        changed.created.len() + changed.modified.len() + changed.deleted.len(),
        20
    );
    std::hint::black_box(snap.files.len());
    drop(w);
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    // SAFETY: single-threaded here, before anything reads it.
    unsafe { std::env::set_var("BUREAU_CACHE_DIR", tmp.path().join("cache")) };
    let t = task(&tmp.path().join("task"));
    let ws = t.workspace.clone().unwrap();
    let started = Instant::now();
    let tree = baseline_tree(&ws, &t.toml_path()).unwrap();
    eprintln!(
        "generated the {FILES}-file researcher workspace in {:.1?}",
        started.elapsed()
    );
    let baseline = Arc::new(Baseline::open(&tree).unwrap());
    let base = Arc::new(BaseLayer::from_baseline(&baseline).unwrap());
    eprintln!(
        "baseline: {} files, {:.1} MB",
        base.file_count(),
        base.bytes() as f64 / 1e6
    );
    let victims: Vec<String> = base
        .files()
        .keys()
        .step_by(FILES / 20)
        .take(20)
        .cloned()
        .collect();
    assert_eq!(victims.len(), 20);

    let mut g = c.benchmark_group(format!("one trial's workspace, researcher {FILES} files"));
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let mut n = 0u64;
    g.bench_function("copy per trial (--replicas off)", |b| {
        b.iter(|| {
            n += 1;
            let root = tmp.path().join(format!("copy{n}"));
            let w = World::build(&t, &root).unwrap();
            one_trial(w, &victims);
            std::fs::remove_dir_all(&root).unwrap();
        })
    });
    for (name, backend) in [
        ("overlay replica (--replicas overlay)", Backend::Overlay),
        ("portable replica (--replicas portable)", Backend::Portable),
    ] {
        let pool = Pool::new(
            baseline.clone(),
            PoolOptions {
                capacity: 1,
                backend,
                dir: None,
            },
        )
        .unwrap();
        pool.warm(1).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                let root = tmp.path().join(format!("rep{n}"));
                let w = World::build_on_replica(&t, &root, pool.acquire().unwrap(), base.clone())
                    .unwrap();
                one_trial(w, &victims);
                std::fs::remove_dir_all(&root).unwrap();
            })
        });
        assert!(pool.take_errors().is_empty());
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
