//! Output collection and dependency-graph recognition, end to end: a small task with
//! `file_deps` and `[outputs]`, run by the oracle (plus a final message naming files), with
//! every figure computed by hand.

use std::path::Path;

use bureau_agents::{Agent, AgentError, ToolSession, TurnInput, TurnOutput, make_agent};
use bureau_core::Task;
use bureau_core::result::{TrialResult, TrialStatus};
use bureau_run::{RunConfig, run_with, trial_dir};
use serde_json::Value;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Two turns. Turn 1 (oracle): read q1, an unrelated note and q2; write
/// deliverables/summary.md; read policy.md; write reports/H1_Summary_final.csv. Turn 2: the
/// task adds data/sales-q3.csv, which the agent leaves alone.
fn write_task(dir: &Path) {
    write(
        dir,
        "world/files/data/sales-q1.csv",
        "region,total\nnorth,10\n",
    );
    write(
        dir,
        "world/files/data/sales-q2.csv",
        "region,total\nnorth,12\n",
    );
    write(dir, "world/files/policy.md", "Round to whole euros.\n");
    write(dir, "world/files/notes/unrelated.txt", "Lunch on Friday.\n");
    write(
        dir,
        "world/files/archive/H1 Summary v1.xlsx",
        "not really a workbook\n",
    );
    write(dir, "turns/2/q3.csv", "region,total\nnorth,9\n");
    write(
        dir,
        "solution/1.jsonl",
        concat!(
            r#"{"tool":"files_read","args":{"path":"data/sales-q1.csv"}}"#,
            "\n",
            r#"{"tool":"files_read","args":{"path":"notes/unrelated.txt"}}"#,
            "\n",
            r#"{"tool":"files_read","args":{"path":"./data/sales-q2.csv"}}"#,
            "\n",
            r#"{"tool":"files_write","args":{"path":"deliverables/summary.md","content":"H1 north: 22\n"}}"#,
            "\n",
            r#"{"tool":"files_read","args":{"path":"policy.md"}}"#,
            "\n",
            r#"{"tool":"files_write","args":{"path":"reports/H1_Summary_final.csv","content":"region,h1\nnorth,22\n"}}"#,
            "\n",
        ),
    );
    write(
        dir,
        "solution/2.jsonl",
        concat!(r#"{"tool":"files_list","args":{"path":""}}"#, "\n"),
    );
    write(
        dir,
        "checks.star",
        r#"
def outputs_seen(w):
    by_path = {o.path: o for o in w.outputs}
    csv = by_path.get("reports/H1_Summary_final.csv")
    ok = (
        "deliverables/summary.md" in by_path
        and csv != None
        and "expected_name" in csv.reasons
        and csv.matched_names == ["h1-summary.csv"]
        and "data/sales-q3.csv" not in by_path
    )
    return {"passed": ok, "detail": ", ".join(sorted(by_path.keys()))}
"#,
    );
    write(
        dir,
        "task.toml",
        r#"id = "h1-summary"
title = "Summarise H1 sales"
persona = "analyst"
category = "reporting"
difficulty = "easy"
apps = ["files"]
file_deps = [
  { from = "data/sales-q1.csv", to = "deliverables/summary.md" },
  { from = "data/sales-q2.csv", to = "deliverables/summary.md" },
  { file = "policy.md" },
]

[outputs]
folder = "deliverables/"
names = ["h1-summary.csv"]

[user]
name = "Ada Analyst"
email = "ada@corp.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Summarise H1 sales from data/ into deliverables/ following policy.md."

[[turn]]
at = "2026-03-03T09:00:00"
prompt = "Q3 figures arrived; nothing to do yet."
[[turn.event]]
kind = "add_file"
silent = false
path = "data/sales-q3.csv"
from = "q3.csv"

[[rubric]]
id = "summary-written"
description = "the summary has the H1 total"
turn = 1
kind = "result"
file_contains = { path = "deliverables/summary.md", all = ["22"] }

[[rubric]]
id = "outputs-seen"
description = "checks see the collected outputs"
kind = "process"
check = "outputs_seen"
"#,
    );
}

/// The oracle, saying which files it wrote in its final message of turn 1.
struct Reporting(Box<dyn Agent>);

impl Agent for Reporting {
    fn name(&self) -> String {
        "oracle".into()
    }
    fn start_trial(&mut self, task: &Task) -> Result<(), AgentError> {
        self.0.start_trial(task)
    }
    fn run_turn(
        &mut self,
        turn: &TurnInput,
        tools: &ToolSession,
    ) -> Result<TurnOutput, AgentError> {
        let mut out = self.0.run_turn(turn, tools)?;
        if turn.index == 1 {
            out.final_message = Some(
                "Done: deliverables/summary.md and reports/H1_Summary_final.csv, from data/sales-q1.csv and the Q2 file."
                    .into(),
            );
        }
        Ok(out)
    }
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn outputs_and_dependency_graph_figures_match_the_hand_computation() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("h1-summary");
    write_task(&task);
    let out = tmp.path().join("run");
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into()],
        out.clone(),
    );
    c.quiet = true;
    let factory = |spec: &str| -> Result<Box<dyn Agent>, AgentError> {
        Ok(Box::new(Reporting(make_agent(spec)?)))
    };
    let outcome = run_with(&c, &factory).unwrap();
    assert_eq!(outcome.passed, 1, "{outcome:?}");
    let dir = trial_dir(&out, "h1-summary", "oracle", 1);

    // Outputs: named in the message, in the output folder, matching the expected name
    // anywhere (also the old archive copy), changed by the agent; never the file the task
    // added, nor files only read.
    let outputs = read_json(&dir.join("outputs.json"));
    let listed: Vec<(String, Vec<String>)> = outputs["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["path"].as_str().unwrap().to_string(),
                o["reasons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect();
    let want: Vec<(String, Vec<String>)> = [
        ("archive/H1 Summary v1.xlsx", vec!["expected_name"]),
        ("data/sales-q1.csv", vec!["named_in_message"]),
        (
            "deliverables/summary.md",
            vec!["named_in_message", "output_folder", "changed"],
        ),
        (
            "reports/H1_Summary_final.csv",
            vec!["named_in_message", "expected_name", "changed"],
        ),
    ]
    .into_iter()
    .map(|(p, r)| (p.to_string(), r.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(listed, want);
    assert_eq!(outputs["schema"], "bureau.outputs/1");

    // The dependency graph, by hand. Accesses in order: read q1, read unrelated, read q2,
    // write summary.md, read policy, write the csv (turn 2 lists a folder: nothing).
    // V_pred = {q1, unrelated, q2, summary.md, policy, csv} (6); V_gt = {q1, q2, summary.md,
    // policy} (4); matched 4 → NP = 4/6, NR = 1, NF1 = 0.8.
    // E_pred = {q1, unrelated, q2} → summary.md (3) + {q1, unrelated, q2, policy} → csv (4)
    // = 7; E_gt = {q1, q2} → summary.md (2); matched 2 → EP = 2/7, ER = 1, EF1 = 4/9.
    let result: TrialResult =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result.status, TrialStatus::Passed);
    let d = result.depgraph.clone().expect("the task has file_deps");
    assert_eq!(
        (d.predicted_nodes, d.truth_nodes, d.matched_nodes),
        (6, 4, 4)
    );
    assert_eq!(
        (d.predicted_edges, d.truth_edges, d.matched_edges),
        (7, 2, 2)
    );
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(d.nodes.precision, 4.0 / 6.0) && close(d.nodes.recall, 1.0));
    assert!(close(d.nodes.f1, 0.8), "{}", d.nodes.f1);
    assert!(close(d.edges.precision, 2.0 / 7.0) && close(d.edges.recall, 1.0));
    assert!(close(d.edges.f1, 4.0 / 9.0), "{}", d.edges.f1);

    let graph = read_json(&dir.join("depgraph.json"));
    assert_eq!(graph["schema"], "bureau.depgraph/1");
    assert_eq!(graph["truth"]["nodes"].as_array().unwrap().len(), 4);
    assert_eq!(graph["predicted"]["edges"].as_array().unwrap().len(), 7);
    assert_eq!(graph["accesses"].as_array().unwrap().len(), 6);

    // summary.json: the agent's mean over its one trial with file_deps.
    let summary = read_json(&out.join("summary.json"));
    insta::assert_snapshot!(
        "summary_depgraph",
        serde_json::to_string_pretty(&summary["agents"]["oracle"]["depgraph"]).unwrap()
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let section: String = report
        .split("### Dependency-graph recognition")
        .nth(1)
        .expect("the report has the section")
        .split("\n#")
        .next()
        .unwrap()
        .to_string();
    insta::assert_snapshot!("report_depgraph", section);

    // Re-scoring recomputes the same figures and files from the stored snapshots.
    let outputs_before = std::fs::read_to_string(dir.join("outputs.json")).unwrap();
    std::fs::remove_file(dir.join("depgraph.json")).unwrap();
    bureau_run::rescore(&out, &bureau_run::RescoreOptions::default()).unwrap();
    let again: TrialResult =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(again.depgraph, result.depgraph);
    assert!(dir.join("depgraph.json").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.join("outputs.json")).unwrap(),
        outputs_before
    );
}

#[test]
fn tasks_without_file_deps_have_no_figures_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("plain");
    write(&task, "world/files/a.txt", "x\n");
    write(
        &task,
        "solution/1.jsonl",
        concat!(
            r#"{"tool":"files_read","args":{"path":"a.txt"}}"#,
            "\n",
            r#"{"tool":"files_write","args":{"path":"b.txt","content":"y\n"}}"#,
            "\n"
        ),
    );
    write(
        &task,
        "task.toml",
        r#"id = "plain"
title = "Plain"
persona = "analyst"
category = "misc"
difficulty = "easy"
apps = ["files"]

[user]
name = "Ada Analyst"
email = "ada@corp.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Copy a.txt into b.txt."

[[rubric]]
id = "b"
description = "b.txt exists"
kind = "result"
file_exists = "b.txt"
"#,
    );
    let out = tmp.path().join("run");
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into()],
        out.clone(),
    );
    c.quiet = true;
    let factory = |spec: &str| make_agent(spec);
    run_with(&c, &factory).unwrap();
    let dir = trial_dir(&out, "plain", "oracle", 1);
    let result = std::fs::read_to_string(dir.join("result.json")).unwrap();
    assert!(!result.contains("depgraph"));
    assert!(!dir.join("depgraph.json").exists());
    // Outputs are still collected: the file the agent wrote.
    let outputs = read_json(&dir.join("outputs.json"));
    assert_eq!(outputs["outputs"][0]["path"], "b.txt");
    assert_eq!(outputs["outputs"].as_array().unwrap().len(), 1);
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(!summary.contains("depgraph"));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!report.contains("Dependency-graph"));
}
