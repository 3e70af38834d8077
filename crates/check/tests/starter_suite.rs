//! Every task of the starter suite proves itself through this crate: its checks compile and
//! bind to its rubric, the oracle (the task's `solution/`) passes every item of every turn, and
//! doing nothing does not pass.

use std::path::{Path, PathBuf};

use bureau_check::{CheckLimits, evaluate, load_checks, metrics};
use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_world::World;

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter")
}

fn task_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(suite_dir())
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("task.toml").is_file())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// Run a task with the given actions per turn; every verdict of every turn and the final one.
fn run(task: &Task, root: &Path, actions: bool) -> Vec<Verdict> {
    let program = load_checks(task).unwrap_or_else(|e| panic!("{e}"));
    let mut world = World::build(task, root).unwrap_or_else(|e| panic!("{}: {e}", task.id));
    let mut trajectory = Vec::new();
    let mut verdicts = Vec::new();
    let limits = CheckLimits::default();
    for turn in &task.turns {
        world
            .begin_turn(turn)
            .unwrap_or_else(|e| panic!("{}: {e}", task.id));
        if actions {
            for call in &task.solution[turn.index as usize - 1] {
                let outcome = world.call_tool(Actor::Agent, &call.tool, &call.args);
                assert!(
                    !outcome.is_error(),
                    "{} turn {}: {} failed: {outcome:?}",
                    task.id,
                    turn.index,
                    call.tool
                );
                trajectory.push(Step {
                    turn: turn.index,
                    kind: StepKind::ToolCall {
                        tool: call.tool.clone(),
                        args: call.args.clone(),
                        outcome,
                    },
                });
            }
        }
        verdicts.extend(evaluate(
            task,
            program.as_ref(),
            &world,
            &trajectory,
            TurnRef::Turn(turn.index),
            &limits,
        ));
    }
    verdicts.extend(evaluate(
        task,
        program.as_ref(),
        &world,
        &trajectory,
        TurnRef::Final,
        &limits,
    ));
    verdicts
}

#[test]
fn the_oracle_passes_and_doing_nothing_fails_every_starter_task() {
    let dirs = task_dirs();
    assert!(!dirs.is_empty(), "no tasks under {}", suite_dir().display());
    for dir in dirs {
        let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        let tmp = tempfile::tempdir().unwrap();

        let oracle = run(&task, &tmp.path().join("oracle"), true);
        assert_eq!(oracle.len(), task.rubric.len(), "{}", task.id);
        let broken: Vec<String> = oracle
            .iter()
            .filter(|v| v.status != VerdictStatus::Passed)
            .map(|v| {
                format!(
                    "{} {:?}: {}",
                    v.id,
                    v.status,
                    v.detail.clone().unwrap_or_default()
                )
            })
            .collect();
        assert!(
            broken.is_empty(),
            "{}: the oracle does not pass:\n{}",
            task.id,
            broken.join("\n")
        );
        assert!(metrics::strict_success(&oracle));

        let null = run(&task, &tmp.path().join("null"), false);
        let errors: Vec<&Verdict> = null
            .iter()
            .filter(|v| v.status == VerdictStatus::Error)
            .collect();
        assert!(
            errors.is_empty(),
            "{}: checks break when the agent does nothing: {errors:?}",
            task.id
        );
        assert!(
            !metrics::strict_success(&null),
            "{}: doing nothing passes",
            task.id
        );
    }
}
