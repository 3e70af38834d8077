//! Procedural variants end to end: a parametrised task renders distinct instances whose
//! oracle stays correct, validate checks five of them, a run records and rescore reproduces
//! them, and bad parameters are located errors.

use std::path::{Path, PathBuf};

use bureau_run::{RunConfig, ValidateOptions, validate_with};

const TASK: &str = r#"id = "claim"
title = "File an expense claim"
persona = "office manager"
category = "finance"
difficulty = "easy"
apps = ["files", "mail"]
timezone = "Europe/Amsterdam"

[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[params.approver]
kind = "person"
department = "Finance"

[params.amount]
kind = "amount"
min = 100
max = 900
step = 0.5

[params.nights]
kind = "int"
min = 1
max = 4

[params.city]
kind = "choice"
values = ["Ghent", "Lyon", "Porto", "Bremen"]

[params.trip]
kind = "date"
from = "2026-03-02"
to = "2026-03-27"

[params.total]
kind = "derived"
expr = "amount * nights"

[params]
constraints = ["total >= 150"]

[[turn]]
at = "2026-03-30T09:00:00"
prompt = "Please file my {{ city }} hotel claim (receipt in receipts/) and send it to {{ approver.name }}."

[[rubric]]
id = "claim-file"
description = "claims/{{ city | lower }}.md states the total {{ total | money }}."
kind = "result"
weight = 2
source = ["file:receipts/hotel.txt"]
check = "claim_total"

[[rubric]]
id = "sent"
description = "The claim went to {{ approver.name }}."
kind = "result"
source = ["file:receipts/hotel.txt"]
[rubric.mail_sent]
to = ["{{ approver.email }}"]
subject_contains = ["claim"]
"#;

const CHECKS: &str = r#"
def claim_total(w):
    p = "claims/" + w.params["city"].lower() + ".md"
    if not w.files.exists(p):
        return {"passed": False, "detail": p + " is missing"}
    want = w.params["total"]
    for line in w.files.text(p).split("\n"):
        if line.startswith("Total:"):
            got = number(line[len("Total:"):].strip())
            return {"passed": got != None and abs(got - want) < 0.005, "detail": "total %s, want %s" % (got, want)}
    return {"passed": False, "detail": "no Total: line"}
"#;

const PEOPLE: &str = r#"
[[person]]
name = "Ana Silva"
email = "ana.silva@northwind.test"
handle = "ana"
role = "Controller"
department = "Finance"

[[person]]
name = "Ben Okafor"
email = "ben.okafor@northwind.test"
handle = "ben"
role = "Accountant"
department = "Finance"

[[person]]
name = "Cleo Brandt"
email = "cleo.brandt@northwind.test"
handle = "cleo"
role = "Engineer"
department = "Engineering"
"#;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The parametrised task; `task_toml` lets a test break it.
fn write_task(dir: &Path, task_toml: &str) -> PathBuf {
    write(&dir.join("task.toml"), task_toml);
    write(&dir.join("checks.star"), CHECKS);
    write(&dir.join("world/people.toml"), PEOPLE);
    write(
        &dir.join("world/files/receipts/hotel.txt.j2"),
        "Hotel {{ city }}, arrival {{ trip | long_date }}\n{{ nights }} night(s) at {{ amount | money }}\n",
    );
    write(
        &dir.join("world/files/receipts/summary.docx.j2"),
        "# Receipt summary\n\n| City | Nights |\n|---|---|\n| {{ city }} | {{ nights }} |\n",
    );
    write(
        &dir.join("solution/1.jsonl"),
        concat!(
            r#"{"tool": "files_write", "args": {"path": "claims/{{ city | lower }}.md", "content": "Claim {{ city }}\nTotal: {{ total | money }}\n"}}"#,
            "\n",
            r#"{"tool": "mail_send", "args": {"to": ["{{ approver.email }}"], "subject": "Hotel claim {{ city }}", "body": "Total {{ total | money }}"}}"#,
            "\n"
        ),
    );
    dir.to_path_buf()
}

fn cache(tmp: &Path) {
    // SAFETY: tests of this binary set the same value; nothing reads it concurrently before.
    unsafe { std::env::set_var("BUREAU_CACHE_DIR", tmp.join("cache")) };
}

#[test]
fn instances_differ_keep_a_correct_oracle_and_render_the_same_twice() {
    let tmp = tempfile::tempdir().unwrap();
    cache(tmp.path());
    let dir = write_task(&tmp.path().join("claim"), TASK);
    let a = bureau_variants::instances(&dir, 5, 2026).unwrap();
    let ids: Vec<&str> = a.iter().map(|i| i.task.id.as_str()).collect();
    assert_eq!(
        ids,
        ["claim.v0", "claim.v1", "claim.v2", "claim.v3", "claim.v4"]
    );
    let prompts: std::collections::BTreeSet<&str> =
        a.iter().map(|i| i.task.turns[0].prompt.as_str()).collect();
    assert!(prompts.len() >= 2, "{prompts:?}");
    let values: std::collections::BTreeSet<String> = a
        .iter()
        .map(|i| serde_json::to_string(&i.task.params).unwrap())
        .collect();
    assert_eq!(values.len(), 5, "no two instances share their values");
    for i in &a {
        let p = &i.task.params;
        assert_eq!(p["approver"]["department"], "Finance");
        let total = p["amount"].as_f64().unwrap() * p["nights"].as_f64().unwrap();
        assert!((p["total"].as_f64().unwrap() - total).abs() < 1e-9);
        assert!(total >= 150.0, "the constraint holds");
        let v = i.task.variant.as_ref().unwrap();
        assert_eq!(v.base, "claim");
        // The receipt is rendered, its .j2 dropped; the .docx is a real .docx.
        let receipt =
            std::fs::read_to_string(i.task.dir.join("world/files/receipts/hotel.txt")).unwrap();
        assert!(receipt.contains(p["city"].as_str().unwrap()), "{receipt}");
        let docx = std::fs::read(i.task.dir.join("world/files/receipts/summary.docx")).unwrap();
        let text = bureau_formats::office::to_text("summary.docx", &docx).unwrap();
        assert!(text.contains(p["city"].as_str().unwrap()), "{text}");
        // The rubric text and predicates are rendered too.
        assert!(!i.task.rubric[1].description.contains("{{"));
    }
    // The same seed renders the same instances; another seed others.
    let b = bureau_variants::instances(&dir, 5, 2026).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.task.params, y.task.params);
        assert_eq!(x.rendered, y.rendered);
    }
    let c = bureau_variants::instances(&dir, 5, 7).unwrap();
    assert_ne!(
        a.iter().map(|i| &i.task.params).collect::<Vec<_>>(),
        c.iter().map(|i| &i.task.params).collect::<Vec<_>>()
    );
}

#[test]
fn validate_checks_five_instances_and_a_run_records_what_rescore_reproduces() {
    let tmp = tempfile::tempdir().unwrap();
    cache(tmp.path());
    let dir = write_task(&tmp.path().join("claim"), TASK);
    let report = validate_with(
        &[dir.display().to_string()],
        &ValidateOptions {
            lint: true,
            ..ValidateOptions::default()
        },
    );
    assert!(report.is_valid(), "{report:#?}");
    assert_eq!(report.valid_count(), 5);

    let mut c = RunConfig::new(
        vec![dir.display().to_string()],
        vec!["oracle".into()],
        tmp.path().join("run"),
    );
    c.quiet = true;
    c.variants = Some(bureau_variants::Plan {
        count: 3,
        seed: Some(99),
    });
    let out = bureau_run::run(&c).unwrap();
    assert_eq!(out.passed, 3);
    let run_json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("run/run.json")).unwrap()).unwrap();
    assert_eq!(
        run_json["variants"],
        serde_json::json!({"count": 3, "seed": 99})
    );
    let result: serde_json::Value = serde_json::from_slice(
        &std::fs::read(tmp.path().join("run/trials/claim.v1/oracle/1/result.json")).unwrap(),
    )
    .unwrap();
    let v = &result["task"]["variant"];
    assert_eq!(v["base"], "claim");
    assert_eq!(v["index"], 1);
    assert!(v["params"]["city"].is_string());
    assert_eq!(
        v["seed"].as_u64().unwrap(),
        bureau_variants::instance_seed(99, "claim", 1, 0)
    );

    // A resumed run with another seed is another run.
    let mut other = c.clone();
    other.variants = Some(bureau_variants::Plan {
        count: 3,
        seed: Some(100),
    });
    let e = bureau_run::run(&other).unwrap_err().to_string();
    assert!(e.contains("variants"), "{e}");

    // Rescore renders the same instances from run.json and reaches the same verdicts.
    let r = bureau_run::rescore::rescore(
        &tmp.path().join("run"),
        &bureau_run::rescore::RescoreOptions::default(),
    )
    .unwrap();
    assert_eq!((r.rescored, r.verdicts_changed), (3, 0));
}

#[test]
fn bad_parameters_are_located_errors_naming_task_and_parameter() {
    let tmp = tempfile::tempdir().unwrap();
    cache(tmp.path());
    let cases = [
        (
            TASK.replace("{{ approver.name }}.\"", "{{ aprover.name }}.\""),
            "unknown parameter `aprover`",
            "did you mean `approver`",
        ),
        (
            TASK.replace(
                "constraints = [\"total >= 150\"]",
                "constraints = [\"total > 99999\"]",
            ),
            "task `claim`: the parameters cannot be satisfied: constraint `total > 99999`",
            "widen",
        ),
        (
            TASK.replace("expr = \"amount * nights\"", "expr = \"amount * nigths\""),
            "derived parameter `total` cannot be computed",
            "did you mean `nights`",
        ),
        (
            TASK.replace("department = \"Finance\"", "department = \"Legal\""),
            "parameter `approver` has no value left to draw",
            "widen",
        ),
    ];
    for (i, (toml, what, hint)) in cases.iter().enumerate() {
        let dir = write_task(&tmp.path().join(format!("bad{i}")), toml);
        let e = bureau_variants::instances(&dir, 1, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains(what) && e.contains(hint), "case {i}: {e}");
        assert!(e.contains("task.toml:"), "case {i} is located: {e}");
    }
    // Two variants that collide: a choice of two for five instances.
    let two = TASK
        .replace("min = 100\nmax = 900\nstep = 0.5", "min = 200\nmax = 200")
        .replace("min = 1\nmax = 4", "min = 1\nmax = 1")
        .replace(
            "[\"Ghent\", \"Lyon\", \"Porto\", \"Bremen\"]",
            "[\"Ghent\", \"Lyon\"]",
        )
        .replace(
            "from = \"2026-03-02\"\nto = \"2026-03-27\"",
            "from = \"2026-03-02\"\nto = \"2026-03-02\"",
        )
        .replace("department = \"Finance\"", "department = \"Engineering\"");
    let dir = write_task(&tmp.path().join("two"), &two);
    let e = bureau_variants::instances(&dir, 5, 0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("task `claim`: variant 2 collides") && e.contains("only 2 distinct instances"),
        "{e}"
    );
    // A parametrised task is not loaded as a plain task.
    let e = bureau_core::Task::load(&dir).unwrap_err().to_string();
    assert!(e.contains("is parametrised"), "{e}");
}

#[test]
fn a_task_whose_parameters_change_nothing_visible_is_invalid() {
    let tmp = tempfile::tempdir().unwrap();
    cache(tmp.path());
    // `nights` is drawn but used nowhere the agent looks (only the hidden total would differ).
    let dull = TASK
        .replace("{{ city }} hotel claim", "Ghent hotel claim")
        .replace("{{ approver.name }}.\"", "Ana Silva.\"");
    let dir = write_task(&tmp.path().join("dull"), &dull);
    write(
        &dir.join("world/files/receipts/hotel.txt.j2"),
        "Hotel receipt\n",
    );
    write(
        &dir.join("world/files/receipts/summary.docx.j2"),
        "# Receipt\n",
    );
    let report = validate_with(&[dir.display().to_string()], &ValidateOptions::default());
    let all: Vec<String> = report
        .rows
        .iter()
        .flat_map(|r| r.problems.clone())
        .collect();
    assert!(
        all.iter()
            .any(|p| p.contains("renders the same files and prompts")),
        "{all:#?}"
    );
}
