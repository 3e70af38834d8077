//! Attacks: checks. A task author's `checks.star` built to abort or hang the process that
//! evaluates it. See docs/security.md.
//!
//! Each check is evaluated with the other items of its turn; the attack is that it aborts the
//! process (an allocation failure, a stack overflow), which fails the test binary, or hangs,
//! which the bounded helper turns into a failure. After issue 11 the guilty check is an `error`
//! verdict naming the check and the limit, and the other items still get their verdicts.

use std::time::{Duration, Instant};

use bureau_check::eval::{CheckLimits, evaluate};
use bureau_check::load_checks;
use bureau_core::task::Task;
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_world::World;

use crate::documents::{bounded, self_referencing_pdf};

const TASK: &str = r#"
id = "hostile-checks"
title = "Hostile checks"
persona = "ops manager"
category = "admin"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Berlin"
[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Do nothing."
"#;

/// Evaluate `checks` (a checks.star) with one rubric item per function named in `items`, in
/// order, against a fresh world whose workspace holds `files`.
fn evaluate_checks(
    checks: &'static str,
    items: &'static [&'static str],
    files: &'static [(&'static str, &'static [u8])],
    limits: CheckLimits,
) -> Vec<Verdict> {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    std::fs::create_dir_all(dir.join("world/files")).unwrap();
    let mut toml = TASK.to_string();
    for name in items {
        toml.push_str(&format!(
            "\n[[rubric]]\nid = \"{name}\"\ndescription = \"{name}\"\nkind = \"result\"\nturn = 1\ncheck = \"{name}\"\n"
        ));
    }
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    std::fs::write(dir.join("checks.star"), checks).unwrap();
    std::fs::write(dir.join("world/files/notes.md"), "notes\n").unwrap();
    let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let program = load_checks(&task).unwrap_or_else(|e| panic!("{e}"));
    let mut world = World::build(&task, &d.path().join("trial")).unwrap();
    for (path, bytes) in files {
        std::fs::write(world.workspace().join(path), bytes).unwrap();
    }
    world.begin_turn(&task.turns[0]).unwrap();
    evaluate(
        &task,
        program.as_ref(),
        &world,
        &[],
        TurnRef::Turn(1),
        &limits,
    )
}

fn verdict<'a>(vs: &'a [Verdict], id: &str) -> &'a Verdict {
    vs.iter().find(|v| v.id == id).unwrap()
}

fn detail(v: &Verdict) -> &str {
    v.detail.as_deref().unwrap_or("")
}

#[test]
fn a_check_allocating_200_terabytes_is_an_error_verdict_and_the_others_run() {
    const CHECKS: &str = concat!(
        r#"
def huge(w):
    return len(("x" * 100000) * 2000000000) > 0
"#,
        r#"
def before(w):
    return w.files.exists("notes.md")

def after(w):
    return "notes" in w.files.text("notes.md")
"#
    );
    let vs = bounded(Duration::from_secs(120), "evaluate", || {
        evaluate_checks(
            CHECKS,
            &["before", "huge", "after"],
            &[],
            CheckLimits::default(),
        )
    });
    assert_eq!(verdict(&vs, "before").status, VerdictStatus::Passed);
    assert_eq!(verdict(&vs, "after").status, VerdictStatus::Passed);
    let v = verdict(&vs, "huge");
    assert_eq!(v.status, VerdictStatus::Error);
    // Either Starlark's own heap limit refuses it, or the process's memory limit stops it.
    let d = detail(v);
    assert!(
        d.starts_with("check `huge` ran out of its memory limit of 1024 MiB")
            || d.starts_with("check `huge` exceeded its memory limit of"),
        "{d}"
    );
}

#[test]
fn str_of_400000_nested_lists_is_an_error_verdict_not_a_stack_overflow() {
    const CHECKS: &str = r#"
def nested(w):
    x = []
    for i in range(400000):
        x = [x]
    return len(str(x)) > 0

def before(w):
    return w.files.exists("notes.md")
"#;
    let vs = bounded(Duration::from_secs(120), "evaluate", || {
        evaluate_checks(CHECKS, &["nested", "before"], &[], CheckLimits::default())
    });
    assert_eq!(verdict(&vs, "before").status, VerdictStatus::Passed);
    let v = verdict(&vs, "nested");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(
        detail(v).starts_with("check `nested` overflowed its stack"),
        "{}",
        detail(v)
    );
}

#[test]
fn a_check_scanning_50_mb_900000_times_is_stopped_at_its_time_limit() {
    const CHECKS: &str = r#"
def scan(w):
    s = "a" * 50000000
    n = 0
    for i in range(900000):
        if "b" in s:
            n += 1
    return n == 0

def before(w):
    return w.files.exists("notes.md")
"#;
    let limits = CheckLimits {
        wall: Duration::from_secs(3),
        ..CheckLimits::default()
    };
    let started = Instant::now();
    let vs = bounded(Duration::from_secs(60), "evaluate", move || {
        evaluate_checks(CHECKS, &["scan", "before"], &[], limits)
    });
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(verdict(&vs, "before").status, VerdictStatus::Passed);
    let v = verdict(&vs, "scan");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(
        detail(v).starts_with("check `scan` did not finish within its time limit of 3 s"),
        "{}",
        detail(v)
    );
}

#[test]
fn a_check_reading_a_self_referencing_pdf_is_an_error_verdict() {
    const CHECKS: &str = r#"
def reads_pdf(w):
    return "x" in pdf("loop.pdf").text

def before(w):
    return w.files.exists("notes.md")
"#;
    let pdf: &'static [u8] = self_referencing_pdf().leak();
    let files: &'static [(&'static str, &'static [u8])] = vec![("loop.pdf", pdf)].leak();
    let vs = bounded(Duration::from_secs(120), "evaluate", move || {
        evaluate_checks(
            CHECKS,
            &["reads_pdf", "before"],
            files,
            CheckLimits::default(),
        )
    });
    assert_eq!(verdict(&vs, "before").status, VerdictStatus::Passed);
    let v = verdict(&vs, "reads_pdf");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(detail(v).contains("pdf(\"loop.pdf\")"), "{}", detail(v));
    assert!(detail(v).contains("overflowed its stack"), "{}", detail(v));
}

#[test]
fn a_checks_star_whose_top_level_aborts_is_a_task_error() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    std::fs::create_dir_all(&dir).unwrap();
    let toml = format!(
        "{TASK}\n[[rubric]]\nid = \"a\"\ndescription = \"a\"\nkind = \"result\"\ncheck = \"a\"\n"
    );
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    std::fs::write(
        dir.join("checks.star"),
        "X = len((\"x\" * 100000) * 2000000000)\n\ndef a(w):\n    return True\n",
    )
    .unwrap();
    let task = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let err = bounded(Duration::from_secs(120), "load_checks", move || {
        load_checks(&task).map(|_| ()).map_err(|e| e.to_string())
    })
    .unwrap_err();
    assert!(
        err.contains("checks.star:1:1: loading checks.star was stopped: its top level ran out of its memory limit")
            || err.contains("Heap memory limit"),
        "{err}"
    );
}
