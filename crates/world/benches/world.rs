//! World build, snapshot and restore on the starter suite's tasks, beside the obvious
//! alternative of resetting by copying the whole seed tree again.
//!
//! Run: `cargo bench -p bureau-world --bench world`. Figures go to docs/BENCHMARKS.md.

use std::path::{Path, PathBuf};

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_world::World;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

fn starter_tasks() -> Vec<Task> {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&suite)
        .expect("suites/starter exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("task.toml").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| Task::load(d).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(from).unwrap();
        if e.file_type().is_dir() {
            std::fs::create_dir_all(to.join(rel)).unwrap();
        } else {
            std::fs::copy(e.path(), to.join(rel)).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    let tasks = starter_tasks();
    let tmp = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group(format!("starter ({} tasks)", tasks.len()));
    let mut n = 0u64;

    g.bench_function("build every world", |b| {
        b.iter(|| {
            for t in &tasks {
                n += 1;
                let w = World::build(t, &tmp.path().join(format!("b{n}"))).unwrap();
                std::hint::black_box(w.log().len());
            }
        })
    });

    // One world per task, with every turn's events applied and a few agent changes.
    let mut worlds: Vec<(World, bureau_world::Snapshot)> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let w = World::build(t, &tmp.path().join(format!("w{i}"))).unwrap();
            let s = w.snapshot().unwrap();
            (w, s)
        })
        .collect();

    g.bench_function("snapshot every world", |b| {
        b.iter(|| {
            for (w, _) in &worlds {
                std::hint::black_box(w.snapshot().unwrap());
            }
        })
    });

    g.bench_function("change + restore every world", |b| {
        b.iter_batched(
            || (),
            |_| {
                for (i, (w, s)) in worlds.iter_mut().enumerate() {
                    w.call_tool(
                        Actor::Agent,
                        "files_write",
                        &json!({"path": format!("out/x{i}.md"), "content": "changed"}),
                    );
                    w.call_tool(
                        Actor::Agent,
                        "mail_send",
                        &json!({"to": ["someone@example.test"], "subject": "s", "body": "b"}),
                    );
                    w.restore(s).unwrap();
                }
            },
            BatchSize::PerIteration,
        )
    });

    // The obvious alternative: throw the workspace away and copy the seed tree again.
    g.bench_function("naive reset: copy every seed tree", |b| {
        b.iter(|| {
            for t in &tasks {
                n += 1;
                let dst = tmp.path().join(format!("c{n}"));
                std::fs::create_dir_all(&dst).unwrap();
                copy_tree(&t.world_dir(), &dst);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
