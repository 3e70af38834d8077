//! Evaluating checks at ClawMark's scale (1,537 checkers over 100 tasks): 1,500 Starlark checks
//! against one world, the same work as 100 evaluations of a 15-item rubric (the view rebuilt
//! each time), and 1,500 built-in predicates for comparison.
//!
//! Run: `cargo bench -p bureau-check --bench checks`. Figures go to docs/BENCHMARKS.md.

use std::path::{Path, PathBuf};

use bureau_check::{CheckLimits, CheckProgram, evaluate};
use bureau_core::log::Actor;
use bureau_core::task::{Evaluator, Predicate, Task};
use bureau_core::verdict::TurnRef;
use bureau_world::World;
use criterion::{Criterion, criterion_group, criterion_main};

/// A world from a starter task with its oracle solution applied, so mail, calendar and
/// files all hold data.
fn world() -> (tempfile::TempDir, Task, World) {
    let dir: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter/q2-planning-scheduling");
    let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let mut world = World::build(&task, &tmp.path().join("w")).unwrap();
    for (turn, calls) in task.turns.iter().zip(&task.solution) {
        world.begin_turn(turn).unwrap();
        for c in calls {
            world.call_tool(Actor::Agent, &c.tool, &c.args);
        }
    }
    (tmp, task, world)
}

/// Five kinds of realistic check, cycled: file text, sent mail, calendar, log, helpers.
fn source(n: usize) -> String {
    let bodies = [
        "    files = w.files.list()\n    return len(files) > 0 and all([w.files.exists(f) for f in files[:3]])\n",
        "    sent = [m for m in w.mail.sent() if contains(m.subject, 'planning')]\n    return len(sent) >= 0\n",
        "    evs = [e for e in w.calendar.events() if not e.all_day]\n    return {\"passed\": len(evs) >= 0, \"detail\": \"%d events\" % len(evs)}\n",
        "    return len([e for e in w.log if e.actor == 'agent']) >= 0\n",
        "    return number('$11,917.50') == 11917.5 and date(w.now).year >= 2026\n",
    ];
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("def c{i}(w):\n{}\n", bodies[i % bodies.len()]));
    }
    s
}

fn bench(c: &mut Criterion) {
    let (_tmp, task, world) = world();
    let program = CheckProgram::compile(Path::new("bench/checks.star"), &source(1500)).unwrap();
    let template = task.rubric[0].clone();
    let mut star_task = task.clone();
    star_task.rubric = (0..1500)
        .map(|i| {
            let mut item = template.clone();
            item.id = format!("c{i}");
            item.turn = TurnRef::Final;
            item.evaluator = Evaluator::Check(format!("c{i}"));
            item
        })
        .collect();
    let mut small = star_task.clone();
    small.rubric.truncate(15);
    let mut pred_task = task.clone();
    let first_file = world
        .files()
        .all_files()
        .first()
        .map(|f| f.path.clone())
        .unwrap_or_default();
    pred_task.rubric = (0..1500)
        .map(|i| {
            let mut item = template.clone();
            item.id = format!("p{i}");
            item.turn = TurnRef::Final;
            item.evaluator = Evaluator::Predicate(match i % 3 {
                0 => Predicate::FileExists {
                    path: first_file.clone(),
                },
                1 => Predicate::FileContains {
                    path: first_file.clone(),
                    all: vec!["2026".into()],
                    none: vec![],
                },
                _ => Predicate::CalendarNoOverlap {
                    user: None,
                    from: None,
                    to: None,
                },
            });
            item
        })
        .collect();
    let limits = CheckLimits::default();
    let mut g = c.benchmark_group("1,500 checks against one world");
    g.sample_size(20);
    g.bench_function("starlark: one evaluation of 1,500 checks", |b| {
        b.iter(|| {
            let v = evaluate(
                &star_task,
                Some(&program),
                &world,
                &[],
                TurnRef::Final,
                &limits,
            );
            assert_eq!(v.len(), 1500);
            assert!(
                v.iter()
                    .all(|x| x.status != bureau_core::verdict::VerdictStatus::Error),
                "{:?}",
                v.iter()
                    .find(|x| x.status == bureau_core::verdict::VerdictStatus::Error)
            );
        })
    });
    g.bench_function("starlark: 100 evaluations of 15 checks", |b| {
        b.iter(|| {
            for _ in 0..100 {
                let v = evaluate(&small, Some(&program), &world, &[], TurnRef::Final, &limits);
                assert_eq!(v.len(), 15);
            }
        })
    });
    g.bench_function("built-in predicates: 1,500", |b| {
        b.iter(|| {
            let v = evaluate(&pred_task, None, &world, &[], TurnRef::Final, &limits);
            assert_eq!(v.len(), 1500);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
