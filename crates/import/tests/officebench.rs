//! `bureau import officebench` on a small checkout in OfficeBench's format written for these
//! tests (tests/fixtures/make.py; none of OfficeBench's data): what is imported, skipped and
//! refused, that the imported tasks validate with their oracles, and that the typed and the
//! `--strict-original` checks disagree exactly where OfficeBench's semantics are wrong.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
    assert_eq!(s.subtasks, 20);
    assert_eq!(s.imported.len(), 15, "{:?}", s.imported);
    assert_eq!(s.skipped_count(), 2);
    assert_eq!(s.refused_subtasks, 3);
    assert_eq!(
        s.line(),
        "imported 15 of 20, skipped 2 (1 × OCR-only input: the task's facts are only in an image; Bureau has no OCR yet; 1 × image output: OfficeBench checks an image file the agent makes; Bureau has no image tools yet), refused 3 (4 located error(s))"
    );
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
    assert_eq!(report.valid_count(), 15);
    assert_eq!(report.skipped_by_reason().values().sum::<usize>(), 2);

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
    assert_eq!(outcome.passed, 15);
    assert_eq!(outcome.skipped_tasks.len(), 2);
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
    assert_eq!(c.common, 15);
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
