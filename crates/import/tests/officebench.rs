//! `bureau import officebench` on a small checkout in OfficeBench's format written for these
//! tests (tests/fixtures/make.py; none of OfficeBench's data): what is imported, skipped and
//! refused, that the imported tasks validate with their oracles, that the tasks whose facts are
//! in a picture or a scan offer `files_ocr` and tesseract reads those facts, and that the typed
//! and the `--strict-original` checks disagree exactly where OfficeBench's semantics are wrong.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::{MediaKind, ToolOutcome};
use bureau_world::World;
use serde_json::json;

use bureau_import::ImportError;
use bureau_import::officebench::{Mode, Options, Summary, import};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/officebench-mini")
}

fn import_into(dir: &Path, mode: Mode) -> Summary {
    import(&Options {
        checkout: fixture(),
        out: dir.to_path_buf(),
        mode,
    })
    .expect("the fixture imports")
}

#[test]
fn imports_skips_and_refuses_with_located_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("suite");
    let s = import_into(&out, Mode::Typed);
    assert_eq!(s.subtasks, 21);
    assert_eq!(s.imported.len(), 17, "{:?}", s.imported);
    assert_eq!(s.skipped_count(), 1);
    assert_eq!(s.refused_subtasks, 3);
    assert_eq!(
        s.line(),
        "imported 17 of 21, skipped 1 (1 × image output: OfficeBench checks an image file the agent makes; no Bureau tool makes an image file), refused 3 (4 located error(s))"
    );
    // the tasks whose facts are only in a picture or a scan are imported, and tagged
    assert_eq!(
        s.media_input,
        BTreeMap::from([
            ("reading images".to_string(), vec!["ob-2-901-1".to_string()]),
            (
                "reading scanned PDFs".to_string(),
                vec!["ob-2-902-0".to_string()]
            ),
        ])
    );
    assert_eq!(
        s.media_line().as_deref(),
        Some(
            "facts in pictures or scans: 2 task(s) (1 × reading images; 1 × reading scanned PDFs); every task offers files_ocr"
        )
    );
    let toml = std::fs::read_to_string(out.join("ob-2-902-0/task.toml")).expect("task.toml");
    assert!(
        toml.contains("abilities = [\"officebench\", \"reading scanned PDFs\"]\n"),
        "{toml}"
    );
    assert!(!toml.contains("skip_reason"), "{toml}");
    // the picture and the scan are in the workspace byte for byte, as the testbed has them
    for (task, file, source) in [
        ("ob-2-901-1", "scores.jpg", "2-901"),
        ("ob-2-902-0", "receipt.pdf", "2-902"),
    ] {
        let copied = std::fs::read(out.join(task).join("world/files").join(file)).expect(file);
        let original = std::fs::read(
            fixture()
                .join("tasks")
                .join(source)
                .join("testbed/data")
                .join(file),
        )
        .expect(file);
        assert_eq!(copied, original, "{task}/{file}");
    }
    let refused: Vec<String> = s
        .refused
        .iter()
        .map(|p| {
            format!(
                "{}:{}: {}",
                p.path.strip_prefix(fixture()).unwrap_or(&p.path).display(),
                p.line.map(|l| l.to_string()).unwrap_or_default(),
                p.message
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            "tasks/3-900/subtasks/0.json:9: evaluation 1: unknown evaluation function `evaluate_magic`",
            "tasks/3-900/subtasks/1.json:9: evaluation 1: `evaluate_contain`: `keywords` is missing or not a list",
            "tasks/3-901/subtasks/0.json:: not imported: its testbed has a file that does not parse (errors above)",
            "tasks/3-901/testbed/emails/Alice/broken.eml:: the .eml does not parse as a mail: not an e-mail message: the input is empty; give the raw RFC 5322 message (header lines such as \"From: ...\" and \"Subject: ...\", a blank line, then the body)",
        ]
    );
    // the seeded mail got a Date from its "Sent at:" line and a Message-ID
    let eml = std::fs::read_to_string(
        out.join("ob-2-900-0/world/mail/alice@example.com/mobile_bill.eml"),
    )
    .expect("the mailbox is seeded");
    assert!(
        eml.starts_with("Date: Mon, 22 Apr 2024 10:00:00 +0000\nMessage-ID: <"),
        "{eml}"
    );
    // other people's calendars are readable as files too; the reference and the original a
    // diff starts from are task-private
    assert!(
        out.join("ob-1-901-0/world/calendar/tom@example.com.ics")
            .is_file()
    );
    assert!(
        out.join("ob-1-901-0/world/files/testbed/calendar/Tom.ics")
            .is_file()
    );
    assert!(out.join("ob-1-903-4/reference/score_sorted.xlsx").is_file());
    assert!(
        out.join("ob-1-903-3/reference/original/score.xlsx")
            .is_file()
    );
    // findings about the original
    let findings: Vec<String> = s
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.task, f.what))
        .collect();
    assert!(findings.iter().any(|f| f.starts_with("ob-1-904-0: evaluate_contain reads data/house_creak.docx, but the seeded file is data/House_creak.docx")), "{findings:#?}");
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("ob-2-900-2: evaluate_excel_cell_value has no `file` argument")),
        "{findings:#?}"
    );
}

#[test]
fn the_imported_task_toml_keeps_the_original_evaluations() {
    let tmp = tempfile::tempdir().expect("tempdir");
    import_into(tmp.path(), Mode::Typed);
    let toml = std::fs::read_to_string(tmp.path().join("ob-1-901-0/task.toml")).expect("task.toml");
    insta::assert_snapshot!("ob-1-901-0-typed", toml);
    let strict = tempfile::tempdir().expect("tempdir");
    import_into(strict.path(), Mode::Strict);
    let toml =
        std::fs::read_to_string(strict.path().join("ob-1-903-2/task.toml")).expect("task.toml");
    insta::assert_snapshot!("ob-1-903-2-strict", toml);
}

#[test]
fn not_officebench_and_a_foreign_out_dir_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let e = import(&Options {
        checkout: tmp.path().to_path_buf(),
        out: tmp.path().join("out"),
        mode: Mode::Typed,
    })
    .expect_err("an empty folder is not OfficeBench");
    assert!(matches!(e, ImportError::NotTheBenchmark { .. }), "{e}");
    assert!(e.to_string().contains("no readable tasks/ folder"), "{e}");

    let out = tmp.path().join("mine");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("notes.txt"), "keep me").expect("write");
    let e = import(&Options {
        checkout: fixture(),
        out: out.clone(),
        mode: Mode::Typed,
    })
    .expect_err("a non-empty folder that is no import is left alone");
    assert!(matches!(e, ImportError::Output { .. }), "{e}");
    assert!(out.join("notes.txt").is_file());
}

fn ids(rows: &[&bureau_run::ValidationRow]) -> BTreeSet<String> {
    rows.iter().map(|r| r.task.clone()).collect()
}

#[test]
fn imported_tasks_validate_and_strict_disagrees_where_officebench_is_wrong() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let typed = tmp.path().join("officebench");
    let strict = tmp.path().join("officebench-strict");
    import_into(&typed, Mode::Typed);
    import_into(&strict, Mode::Strict);

    // typed: every imported task proves itself with its derived oracle
    let report = bureau_run::validate(&[typed.display().to_string()]);
    assert!(report.offenders().is_empty(), "{:#?}", report.offenders());
    assert_eq!(report.valid_count(), 17);
    assert_eq!(report.skipped_by_reason().values().sum::<usize>(), 1);

    // strict: OfficeBench's own semantics fail where the original is defective
    let report = bureau_run::validate(&[strict.display().to_string()]);
    let offenders = report.offenders();
    assert_eq!(
        ids(&offenders),
        BTreeSet::from(["ob-1-903-2".to_string(), "ob-2-900-2".to_string()]),
        "{offenders:#?}"
    );

    // the same trajectories scored both ways: run the oracle on the typed suite, rescore a
    // copy with the strict checks, compare
    let run_a = tmp.path().join("run-typed");
    let cfg = bureau_run::RunConfig::new(
        vec![typed.display().to_string()],
        vec!["oracle".into()],
        run_a.clone(),
    );
    let cfg = bureau_run::RunConfig { quiet: true, ..cfg };
    let outcome = bureau_run::run(&cfg).expect("the oracle runs");
    assert_eq!(outcome.passed, 17);
    assert_eq!(outcome.skipped_tasks.len(), 1);
    let run_b = tmp.path().join("run-strict");
    copy_dir(&run_a, &run_b);
    let opts = bureau_run::rescore::RescoreOptions {
        targets: Some(vec![strict.display().to_string()]),
        ..Default::default()
    };
    let r = bureau_run::rescore::rescore(&run_b, &opts).expect("rescored with the strict checks");
    // every trial is rescored, those with spreadsheets too (their snapshots read back)
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    let c = bureau_run::compare_runs(&run_a, &run_b).expect("compared");
    let differ: Vec<String> = c
        .diffs
        .iter()
        .map(|d| {
            format!(
                "{} {}→{} {}",
                d.task,
                d.status_a,
                d.status_b,
                d.items
                    .iter()
                    .map(|i| i.0.clone())
                    .collect::<Vec<_>>()
                    .join(",")
            )
        })
        .collect();
    assert_eq!(
        differ,
        [
            // "2,400" is expected as text: OfficeBench's str() of the number 2400 lacks the comma
            "ob-1-903-2 passed→failed e1-excel-cell-value",
            // the check names house_creak.docx, the seeded file is House_creak.docx
            "ob-1-904-0 passed→failed e1-contain",
            // no `file` argument: OfficeBench raises KeyError
            "ob-2-900-2 passed→failed e2-excel-cell-value",
        ]
    );
    assert_eq!(c.common, 17);
}

/// The world of imported task `id` under `root`, built in `trial`.
fn world_of(root: &Path, id: &str, trial: &Path) -> World {
    let task = Task::load(&root.join(id)).unwrap_or_else(|e| panic!("{id}: {e}"));
    World::build(&task, trial).unwrap_or_else(|e| panic!("{id}: {e}"))
}

#[test]
fn pictures_and_scans_are_shown_and_tesseract_reads_their_facts() {
    // Needs tesseract-ocr (+ eng), as CI installs it: files_ocr is a tool error without it.
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("suite");
    import_into(&out, Mode::Typed);
    for (id, file, media, facts) in [
        // a table in small print, as OfficeBench's lists: read right only because files_ocr
        // scales it up, and row by row only because it does not let tesseract find columns
        (
            "ob-2-901-1",
            "scores.jpg",
            "image",
            &["Alice A 78", "Bob B 93", "David B 250", "Rick B 330"][..],
        ),
        ("ob-2-902-0", "receipt.pdf", "scan", &["Total: 41.50"][..]),
    ] {
        let mut w = world_of(&out, id, &tmp.path().join(id));
        let offered: Vec<String> = w.offered_tool_specs().into_iter().map(|s| s.name).collect();
        assert!(
            offered.iter().any(|n| n == "files_ocr"),
            "{id}: {offered:?}"
        );
        // files_read shows the picture (the scan's page) to a model that sees
        match w.call_tool(Actor::Agent, "files_read", &json!({"path": file})) {
            ToolOutcome::Ok {
                value,
                media: parts,
            } => {
                assert_eq!(value["media"], media, "{id}: {value}");
                assert_eq!(parts.len(), 1, "{id}: {value}");
                assert_eq!(parts[0].kind, MediaKind::Image);
            }
            ToolOutcome::Error { message } => panic!("{id}: files_read: {message}"),
        }
        // files_ocr reads the facts the checks want
        match w.call_tool(Actor::Agent, "files_ocr", &json!({"path": file})) {
            ToolOutcome::Ok { value, .. } => {
                let text = value["text"].as_str().unwrap_or_default();
                for fact in facts {
                    assert!(
                        text.lines().any(|l| l.trim() == *fact),
                        "{id}: tesseract read {text:?}"
                    );
                }
            }
            ToolOutcome::Error { message } => panic!("{id}: files_ocr: {message}"),
        }
    }
    // every imported task offers OCR, as OfficeBench offers its OCR app in every task
    let w = world_of(&out, "ob-1-903-0", &tmp.path().join("plain"));
    assert!(w.offered_tool_specs().iter().any(|s| s.name == "files_ocr"));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        let t = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).expect("copy");
        }
    }
}
