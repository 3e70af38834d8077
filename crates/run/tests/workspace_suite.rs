//! suites/workspace: every task on a generated persona workspace proves itself (oracle strict
//! success, null fails, repeatable), and the lite subset is stratified as README.md says.

use std::collections::BTreeSet;
use std::path::Path;

use bureau_core::suite::load_tasks;
use bureau_run::validate;

fn suite() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites/workspace")
        .display()
        .to_string()
}

#[test]
fn every_workspace_task_validates() {
    let report = validate(&[suite()]);
    assert!(report.is_valid(), "{:#?}", report.offenders());
    assert_eq!(report.valid_count(), 15);
}

#[test]
fn the_suite_covers_personas_by_difficulty_and_lite_is_stratified() {
    let all = load_tasks(&[suite()]).unwrap();
    let cells: BTreeSet<(String, String)> = all
        .iter()
        .map(|t| {
            let ws = t.workspace.as_ref().expect("every task has [workspace]");
            assert!(t.dep_graph().is_some(), "{} has no file_deps", t.id);
            assert!(t.outputs.folder.is_some(), "{} has no [outputs]", t.id);
            let kinds: BTreeSet<String> =
                t.rubric.iter().map(|r| format!("{:?}", r.kind)).collect();
            assert_eq!(kinds.len(), 3, "{}: rubric kinds {kinds:?}", t.id);
            (ws.persona.clone(), t.difficulty.as_str().to_string())
        })
        .collect();
    assert_eq!(cells.len(), 15, "5 personas x 3 difficulties: {cells:?}");

    let lite = load_tasks(&[format!("{}@lite", suite())]).unwrap();
    let personas: BTreeSet<&str> = lite
        .iter()
        .map(|t| t.workspace.as_ref().unwrap().persona.as_str())
        .collect();
    let difficulties: BTreeSet<&str> = lite.iter().map(|t| t.difficulty.as_str()).collect();
    assert_eq!((lite.len(), personas.len(), difficulties.len()), (5, 5, 3));
}
