//! `w.kb`, `w.tracker` in Starlark and the kb_page, kb_row and tracker_issue predicates
//! against a world built from a small task.

use std::path::Path;

use bureau_check::{
    CheckLimits, CheckProgram, eval_predicate, evaluate, evaluate_item, load_checks,
};
use bureau_core::log::Actor;
use bureau_core::task::{
    Evaluator, KbPageFilter, KbRowFilter, Predicate, Task, TrackerIssueFilter,
};
use bureau_core::tool::ToolOutcome;
use bureau_core::verdict::{TurnRef, VerdictStatus};
use bureau_world::World;
use serde_json::{Value, json};

const TASK_TOML: &str = r#"
id = "fixture"
title = "Fixture"
persona = "tester"
category = "testing"
difficulty = "easy"
apps = ["kb", "tracker"]
timezone = "Europe/Amsterdam"

[user]
name = "Mara Lindqvist"
email = "mara@bw.test"

[[turn]]
at = "2026-03-09T09:00:00"
prompt = "Day one."

[[rubric]]
id = "polder-rated"
description = "d"
kind = "result"
kb_row = { database = "Suppliers", where = { Name = "Polder PCB", Rating = 4 }, tolerance = 0.5 }

[[rubric]]
id = "oven-done"
description = "d"
kind = "result"
tracker_issue = { key = "OPS-1", state = "done", assignee = "lena" }

[[rubric]]
id = "page-written"
description = "d"
kind = "result"
kb_page = { title = "Visit notes", parent = "Engineering", contains = ["J3"] }

[[rubric]]
id = "view"
description = "d"
kind = "result"
check = "view"
"#;

const CHECKS: &str = r#"
def view(w):
    s = w.kb.databases["Suppliers"]
    polder = [r for r in s.rows if r.title == "Polder PCB"][0]
    ops1 = w.tracker.issue["OPS-1"]
    return {"passed": True, "detail": json.encode({
        "pages": [[p.title, p.parent, p.path] for p in w.kb.pages],
        "props": [[p.name, p.type] for p in s.properties],
        "polder": [polder.id, polder.values["Rating"], polder.values["Active"], polder.values["Tags"], polder.values["Contact"]],
        "orders": [r.values["Supplier"] for r in w.kb.databases["Orders"].rows],
        "projects": [[p.key, [x.name for x in p.states], [c.name for c in p.cycles]] for p in w.tracker.projects],
        "ops1": [ops1.state, ops1.state_category, ops1.assignee, ops1.cycle, ops1.labels, ops1.estimate],
        "history": [[h.field, h.old, h.new, h.by] for h in ops1.history],
        "open": [i.key for i in w.tracker.issues if i.state_category not in ["completed", "cancelled"]],
    })}

def rated(w):
    rows = [r for r in w.kb.databases["Suppliers"].rows if r.values["Rating"] != None and r.values["Rating"] >= 4]
    return len(rows) == 1
"#;

fn write(root: &Path, rel: &str, data: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    task: Task,
    program: CheckProgram,
    world: World,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("task");
        write(&t, "task.toml", TASK_TOML);
        write(&t, "checks.star", CHECKS);
        write(
            &t,
            "world/people.toml",
            "[[person]]\nname = \"Mara\"\nemail = \"mara@bw.test\"\nhandle = \"mara\"\n[[person]]\nname = \"Lena\"\nemail = \"lena@bw.test\"\nhandle = \"lena\"\n",
        );
        write(&t, "world/kb/pages/Engineering.md", "Engineering space.\n");
        write(
            &t,
            "world/kb/databases/Suppliers.csv",
            "Name,Rating,Active,Tags,Contact\nPolder PCB,3,yes,pcb,lena\nRhein Metall,2,no,,\n",
        );
        write(
            &t,
            "world/kb/databases/Suppliers.schema.json",
            r#"{"properties": [{"name": "Name", "type": "text"}, {"name": "Rating", "type": "number"}, {"name": "Active", "type": "checkbox"}, {"name": "Tags", "type": "multi_select", "options": ["pcb", "metal"]}, {"name": "Contact", "type": "person"}]}"#,
        );
        write(
            &t,
            "world/kb/databases/Orders.json",
            r#"{"properties": [{"name": "Order", "type": "text"}, {"name": "Supplier", "type": "relation", "database": "Suppliers"}], "rows": [{"Order": "PO-1", "Supplier": "Polder PCB"}]}"#,
        );
        write(
            &t,
            "world/tracker/OPS.json",
            r#"{"key": "OPS", "name": "Operations", "labels": ["supplier"],
  "cycles": [{"name": "Sprint 14", "start": "2026-03-02", "end": "2026-03-13"}],
  "issues": [{"number": 1, "title": "Order reflow oven spares", "state": "In Progress", "assignee": "mara", "cycle": "Sprint 14", "labels": ["supplier"], "estimate": 3}]}"#,
        );
        let task = Task::load(&t).unwrap_or_else(|e| panic!("{e}"));
        let program = load_checks(&task).unwrap().unwrap();
        let mut world = World::build(&task, &dir.path().join("run")).unwrap();
        world.begin_turn(&task.turns[0]).unwrap();
        Fixture {
            _dir: dir,
            task,
            program,
            world,
        }
    }

    fn ok(&mut self, tool: &str, args: Value) {
        let out = self.world.call_tool(Actor::Agent, tool, &args);
        assert!(!matches!(out, ToolOutcome::Error { .. }), "{tool}: {out:?}");
    }

    fn check(&self, name: &str) -> (VerdictStatus, String) {
        let mut item = self.task.rubric[3].clone();
        item.evaluator = Evaluator::Check(name.into());
        let v = evaluate_item(
            &self.task,
            Some(&self.program),
            &self.world,
            &[],
            &item,
            &CheckLimits::default(),
        );
        (v.status, v.detail.unwrap_or_default())
    }

    fn pred(&self, p: Predicate) -> (VerdictStatus, String) {
        eval_predicate(&self.task, &p, &self.world, &[])
    }
}

#[test]
fn starlark_sees_kb_and_tracker() {
    let mut f = Fixture::new();
    f.ok(
        "tracker_update_issue",
        json!({"key": "OPS-1", "state": "Done"}),
    );
    let (s, d) = f.check("view");
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    let v: Value = serde_json::from_str(&d).unwrap();
    assert_eq!(v["pages"], json!([["Engineering", null, "Engineering"]]));
    assert_eq!(v["props"][3], json!(["Tags", "multi_select"]));
    assert_eq!(
        v["polder"],
        json!(["row-1", 3, true, ["pcb"], "lena@bw.test"])
    );
    assert_eq!(v["orders"], json!([["Polder PCB"]]));
    assert_eq!(
        v["projects"][0][1],
        json!(["Backlog", "Todo", "In Progress", "Done", "Cancelled"])
    );
    assert_eq!(
        v["ops1"],
        json!([
            "Done",
            "completed",
            "mara@bw.test",
            "Sprint 14",
            ["supplier"],
            3.0
        ])
    );
    assert_eq!(
        v["history"],
        json!([["state", "In Progress", "Done", "mara@bw.test"]])
    );
    assert_eq!(v["open"], json!([]));
    assert_eq!(f.check("rated").0, VerdictStatus::Failed);
    f.ok(
        "kb_update_row",
        json!({"database": "Suppliers", "row": "Polder PCB", "values": {"Rating": 4}}),
    );
    assert_eq!(f.check("rated").0, VerdictStatus::Passed);
}

#[test]
fn kb_row_compares_typed_values() {
    let mut f = Fixture::new();
    let row = |w: Value, tol: f64| {
        Predicate::KbRow(KbRowFilter {
            database: "suppliers".into(),
            where_: serde_json::from_value(w).unwrap(),
            tolerance: tol,
            min: 1,
            max: None,
        })
    };
    let (s, d) = f.pred(row(json!({"Name": "polder pcb", "Rating": 3, "Active": true, "Tags": ["PCB"], "Contact": "lena"}), 0.0));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.contains("matched: 'Polder PCB'"), "{d}");
    let (s, d) = f.pred(row(json!({"Name": "Polder PCB", "Rating": 4}), 0.0));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(
        d.contains("0 rows of 'Suppliers'") && d.contains("2 rows in total"),
        "{d}"
    );
    assert_eq!(
        f.pred(row(json!({"Name": "Polder PCB", "Rating": 3.4}), 0.5))
            .0,
        VerdictStatus::Passed
    );
    assert_eq!(
        f.pred(row(json!({"Tags": null, "Contact": ""}), 0.0)).0,
        VerdictStatus::Passed
    );
    let (s, d) = f.pred(row(json!({"Colour": "red"}), 0.0));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("no property 'Colour'"), "{d}");
    let (s, d) = f.pred(Predicate::KbRow(KbRowFilter {
        database: "Vendors".into(),
        min: 1,
        ..Default::default()
    }));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("Orders, Suppliers"), "{d}");
    // The rubric item of task.toml: Rating 4 ± 0.5.
    let verdicts = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &[],
        TurnRef::Final,
        &CheckLimits::default(),
    );
    assert_eq!(verdicts[0].status, VerdictStatus::Failed);
    f.ok(
        "kb_update_row",
        json!({"database": "Suppliers", "row": "row-1", "values": {"Rating": 4.5}}),
    );
    let verdicts = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &[],
        TurnRef::Final,
        &CheckLimits::default(),
    );
    assert_eq!(
        verdicts[0].status,
        VerdictStatus::Passed,
        "{:?}",
        verdicts[0].detail
    );
}

#[test]
fn kb_page_matches_title_parent_and_content() {
    let mut f = Fixture::new();
    let page = |title: &str, contains: &[&str], excludes: &[&str]| {
        Predicate::KbPage(KbPageFilter {
            title: Some(title.into()),
            parent: Some("engineering".into()),
            contains: contains.iter().map(|s| s.to_string()).collect(),
            excludes: excludes.iter().map(|s| s.to_string()).collect(),
            min: 1,
            ..Default::default()
        })
    };
    assert_eq!(
        f.pred(page("Visit notes", &["J3"], &[])).0,
        VerdictStatus::Failed
    );
    f.ok(
        "kb_create_page",
        json!({"title": "Visit notes", "parent": "Engineering", "content": "J3 voids, lot 2,411."}),
    );
    let (s, d) = f.pred(page("visit notes", &["j3", "2411"], &[]));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.contains("'Engineering / Visit notes'"), "{d}");
    let (s, d) = f.pred(page("Visit notes", &["X-ray"], &["voids"]));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(
        d.contains("lacks 'X-ray'") && d.contains("contains 'voids'"),
        "{d}"
    );
    f.ok(
        "kb_create_page",
        json!({"title": "Visit notes", "content": "J3"}),
    );
    // The top-level copy is not under Engineering: still exactly one match.
    let mut one = page("Visit notes", &["J3"], &[]);
    if let Predicate::KbPage(p) = &mut one {
        p.max = Some(1);
    }
    assert_eq!(f.pred(one).0, VerdictStatus::Passed);
}

#[test]
fn kb_page_requires_its_attachments_and_says_which_are_missing() {
    let mut f = Fixture::new();
    let with = |names: &[&str]| {
        Predicate::KbPage(KbPageFilter {
            title: Some("Engineering".into()),
            attachments: names.iter().map(|s| s.to_string()).collect(),
            min: 1,
            ..Default::default()
        })
    };
    let (s, d) = f.pred(with(&["spec.md"]));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(
        d.contains("with the attachment(s) 'spec.md'")
            && d.contains("page 'Engineering' has no attachment 'spec.md'"),
        "{d}"
    );
    f.ok(
        "files_write",
        json!({"path": "spec.md", "content": "# Spec\n"}),
    );
    f.ok(
        "kb_attach",
        json!({"page": "Engineering", "path": "spec.md"}),
    );
    let (s, d) = f.pred(with(&["SPEC.md"]));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert_eq!(
        f.pred(with(&["spec.md", "other.png"])).0,
        VerdictStatus::Failed
    );
}

#[test]
fn tracker_issue_filters_state_assignee_cycle_labels_comments() {
    let mut f = Fixture::new();
    let issue = |f: TrackerIssueFilter| Predicate::TrackerIssue(TrackerIssueFilter { min: 1, ..f });
    let (s, d) = f.pred(issue(TrackerIssueFilter {
        key: Some("OPS-1".into()),
        state: Some("done".into()),
        ..Default::default()
    }));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("OPS-1 is state 'In Progress'"), "{d}");
    f.ok(
        "tracker_update_issue",
        json!({"key": "OPS-1", "state": "Done", "assignee": "lena@bw.test", "cycle": ""}),
    );
    f.ok(
        "tracker_comment",
        json!({"key": "OPS-1", "text": "Spares arrive on 12 March."}),
    );
    let (s, d) = f.pred(issue(TrackerIssueFilter {
        project: Some("operations".into()),
        state: Some("DONE".into()),
        assignee: Some("@lena".into()),
        cycle: Some(String::new()),
        labels: vec!["Supplier".into()],
        comment_contains: vec!["spares".into(), "12 March".into()],
        title_contains: vec!["reflow".into()],
        ..Default::default()
    }));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.contains("OPS-1 [Done]"), "{d}");
    assert_eq!(
        f.pred(issue(TrackerIssueFilter {
            assignee: Some(String::new()),
            ..Default::default()
        }))
        .0,
        VerdictStatus::Failed
    );
    assert_eq!(
        f.pred(issue(TrackerIssueFilter {
            cycle: Some("Sprint 14".into()),
            ..Default::default()
        }))
        .0,
        VerdictStatus::Failed
    );
    // max = 0 expresses "no such issue".
    let none = Predicate::TrackerIssue(TrackerIssueFilter {
        state: Some("In Progress".into()),
        min: 0,
        max: Some(0),
        ..Default::default()
    });
    assert_eq!(f.pred(none).0, VerdictStatus::Passed);
    let verdicts = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &[],
        TurnRef::Final,
        &CheckLimits::default(),
    );
    assert_eq!(
        verdicts[1].status,
        VerdictStatus::Passed,
        "{:?}",
        verdicts[1].detail
    );
}
