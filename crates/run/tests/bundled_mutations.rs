//! Mutation testing of a sample of the bundled tasks (each suite's `core` subset): every task's
//! rubric must notice at least one mutant of its oracle's solution (a step left out, a figure
//! changed, the wrong recipient). Survivors are printed, not failed: a figure in a courtesy
//! line may rightly go unchecked (docs/suites.md).

use std::path::PathBuf;

fn suites() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../suites")
}

#[test]
fn every_core_task_notices_some_mutant_of_its_oracle() {
    let spec = format!("{}@core", suites().display());
    let tasks = bureau_run::load_with_checks(&[spec], &bureau_variants::Plan::default()).unwrap();
    assert!(
        tasks.len() >= 10,
        "the core subsets hold {} tasks",
        tasks.len()
    );
    let mut blind = Vec::new();
    for (task, program) in &tasks {
        let r = bureau_run::mutate::mutation_test(task, program.as_ref());
        for m in &r.survivors {
            eprintln!("{}: survived: {m}", task.id);
        }
        for (m, e) in &r.errored {
            eprintln!("{}: errored: {m}: {e}", task.id);
        }
        eprintln!("{}: {} of {} mutants killed", task.id, r.killed, r.mutants);
        if r.mutants > 0 && r.killed == 0 {
            blind.push(task.id.clone());
        }
        assert!(
            r.errored.is_empty(),
            "{}: a check broke on a mutated world: {:?}",
            task.id,
            r.errored
        );
    }
    assert!(blind.is_empty(), "no mutant noticed in: {blind:?}");
}
