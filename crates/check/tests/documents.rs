//! The document readers of checks.star — `docx(path)`, `pptx(path)`, `pdf(path)`,
//! `read_text(path)` — against a world whose agent wrote office files through the tools.

use std::path::Path;

use bureau_check::{CheckLimits, CheckProgram, evaluate_item, load_checks};
use bureau_core::log::Actor;
use bureau_core::task::{Evaluator, Task};
use bureau_core::verdict::{Verdict, VerdictStatus};
use bureau_formats::office;
use bureau_world::World;
use serde_json::{Value, json};

const TASK_TOML: &str = r#"
id = "docs"
title = "Docs"
persona = "tester"
category = "testing"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Berlin"

[user]
name = "Dana Reyes"
email = "dana@x.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Day one."

[[rubric]]
id = "memo"
description = "d"
kind = "result"
check = "memo_detail"
"#;

const CHECKS: &str = r#"
def memo_detail(w):
    d = docx("out/memo.docx")
    return {"passed": True, "detail": json.encode({
        "styles": [p.style for p in d.paragraphs],
        "levels": [p.heading_level for p in d.paragraphs],
        "lists": [p.list_level for p in d.paragraphs],
        "headings": [[h.level, h.text] for h in d.headings],
        "tables": d.tables,
        "text": d.text,
    })}

def memo_has_bus_cost(w):
    t = docx("out/memo.docx").tables[0]
    return [r[2] for r in t if r[0] == "Sam"] == ["1,200"]

def deck_detail(w):
    p = pptx("deck.pptx")
    return {"passed": True, "detail": json.encode({
        "titles": [s.title for s in p.slides],
        "numbers": [s.number for s in p.slides],
        "notes": p.slides[0].notes,
        "text": p.text,
    })}

def pdf_detail(w):
    p = pdf("out/memo.pdf")
    return {"passed": True, "detail": json.encode({"pages": len(p.pages), "first": "Offsite" in p.pages[0], "text": p.text[:9]})}

def rendered(w):
    return {"passed": True, "detail": read_text("out/memo.docx") + "\n---\n" + read_text("notes.md")}

def corrupt(w):
    return len(docx("broken.docx").paragraphs) > 0

def missing(w):
    return len(pdf("nope.pdf").pages) > 0

def wrong_kind(w):
    return len(pptx("out/memo.docx").slides) > 0
"#;

fn write(root: &Path, rel: &str, data: &[u8]) {
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
        write(&t, "task.toml", TASK_TOML.as_bytes());
        write(&t, "checks.star", CHECKS.as_bytes());
        write(&t, "world/files/notes.md", b"# Notes\nplain\n");
        write(
            &t,
            "world/files/broken.docx",
            b"PK\x03\x04this is not a zip",
        );
        let deck = office::write_pptx(&[
            ("Kickoff".into(), "Agenda".into(), "Welcome everyone".into()),
            ("Budget".into(), "Total 11,917".into(), String::new()),
        ])
        .unwrap();
        write(&t, "world/files/deck.pptx", &deck);
        let task = Task::load(&t).unwrap_or_else(|e| panic!("{e}"));
        let program = load_checks(&task)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap();
        let mut world =
            World::build(&task, &dir.path().join("run")).unwrap_or_else(|e| panic!("{e}"));
        world.begin_turn(&task.turns[0]).unwrap();
        let mut f = Fixture {
            _dir: dir,
            task,
            program,
            world,
        };
        f.ok(
            "files_write_docx",
            json!({"path": "out/memo.docx", "blocks": [
                {"type": "heading", "level": 1, "text": "Offsite"},
                {"type": "paragraph", "text": "We meet in Delft."},
                {"type": "bullets", "items": ["bus", "badges"]},
                {"type": "heading", "level": 2, "text": "Costs"},
                {"type": "table", "rows": [["Who", "Task", "Cost"], ["Sam", "Bus", "1,200"]]}
            ]}),
        );
        f.ok(
            "files_export_pdf",
            json!({"source": "out/memo.docx", "path": "out/memo.pdf"}),
        );
        f
    }

    fn ok(&mut self, tool: &str, args: Value) {
        let out = self.world.call_tool(Actor::Agent, tool, &args);
        assert!(!out.is_error(), "{tool}: {out:?}");
    }

    fn check(&self, name: &str) -> Verdict {
        let mut item = self.task.rubric[0].clone();
        item.id = name.into();
        item.evaluator = Evaluator::Check(name.into());
        evaluate_item(
            &self.task,
            Some(&self.program),
            &self.world,
            &[],
            &item,
            &CheckLimits::default(),
        )
    }

    fn detail(&self, name: &str) -> String {
        let v = self.check(name);
        assert_eq!(v.status, VerdictStatus::Passed, "{name}: {:?}", v.detail);
        v.detail.unwrap()
    }
}

#[test]
fn docx_gives_paragraphs_headings_and_tables() {
    let f = Fixture::new();
    let d: Value = serde_json::from_str(&f.detail("memo_detail")).unwrap();
    assert_eq!(
        d,
        json!({
            "styles": ["Heading 1", "Normal", "List Bullet", "List Bullet", "Heading 2"],
            "levels": [1, null, null, null, 2],
            "lists": [null, null, 0, 0, null],
            "headings": [[1, "Offsite"], [2, "Costs"]],
            "tables": [[["Who", "Task", "Cost"], ["Sam", "Bus", "1,200"]]],
            "text": "# Offsite\n\nWe meet in Delft.\n\n- bus\n- badges\n\n## Costs\n\n| Who | Task | Cost |\n|---|---|---|\n| Sam | Bus | 1,200 |\n",
        })
    );
    assert_eq!(f.check("memo_has_bus_cost").status, VerdictStatus::Passed);
}

#[test]
fn pptx_and_pdf_and_read_text() {
    let f = Fixture::new();
    let d: Value = serde_json::from_str(&f.detail("deck_detail")).unwrap();
    assert_eq!(d["titles"], json!(["Kickoff", "Budget"]));
    assert_eq!(d["numbers"], json!([1, 2]));
    assert_eq!(d["notes"], "Welcome everyone");
    assert!(
        d["text"]
            .as_str()
            .unwrap()
            .starts_with("## Slide 1: Kickoff\nAgenda\nNotes: Welcome everyone\n")
    );
    let d: Value = serde_json::from_str(&f.detail("pdf_detail")).unwrap();
    assert_eq!(d, json!({"pages": 1, "first": true, "text": "## Page 1"}));
    assert_eq!(
        f.detail("rendered"),
        "# Offsite\n\nWe meet in Delft.\n\n- bus\n- badges\n\n## Costs\n\n| Who | Task | Cost |\n|---|---|---|\n| Sam | Bus | 1,200 |\n\n---\n# Notes\nplain\n"
    );
}

#[test]
fn corrupt_missing_or_mistyped_files_are_check_errors_with_the_reason() {
    let f = Fixture::new();
    for (name, needles) in [
        ("corrupt", &["docx(\"broken.docx\")", "corrupt"][..]),
        (
            "missing",
            &["pdf(\"nope.pdf\")", "no such file", "w.files.exists"][..],
        ),
        (
            "wrong_kind",
            &["pptx(\"out/memo.docx\")", "ppt/presentation.xml"][..],
        ),
    ] {
        let v = f.check(name);
        assert_eq!(v.status, VerdictStatus::Error, "{name}");
        let d = v.detail.unwrap_or_default();
        for n in needles {
            assert!(d.contains(n), "{name}: {d}");
        }
    }
}
