//! `validate`: every task proves itself.

mod common;

use bureau_run::validate;
use common::*;

fn problems_of(report: &bureau_run::ValidationReport, task: &str) -> Vec<String> {
    report
        .rows
        .iter()
        .find(|r| r.task == task)
        .map(|r| r.problems.clone())
        .unwrap_or_else(|| panic!("no row for {task}: {report:?}"))
}

#[test]
fn a_sound_suite_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = write_suite(&tmp.path().join("suite"), &["a", "b"]);
    let report = validate(&[suite.display().to_string()]);
    assert!(report.is_valid(), "{report:?}");
    assert_eq!(report.valid_count(), 2);
    assert!(report.offenders().is_empty());
}

#[test]
fn a_folder_of_suites_validates_every_suite_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("suites");
    write_suite(&folder.join("one"), &["a", "b"]);
    write_suite(&folder.join("two"), &["c"]);
    std::fs::create_dir_all(folder.join("notes")).unwrap();
    let report = validate(&[folder.display().to_string()]);
    assert!(report.is_valid(), "{report:?}");
    let tasks: Vec<&str> = report.rows.iter().map(|r| r.task.as_str()).collect();
    assert_eq!(tasks, ["a", "b", "c"]);
}

#[test]
fn a_folder_with_a_subset_names_that_subset_of_each_suite_that_has_it() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("suites");
    write_suite(&folder.join("one"), &["a", "b"]);
    write_suite(&folder.join("two"), &["c"]);
    // `two` has a `lite` naming `a`, which it lacks: a suite without the subset is left out
    // only when it has no such subset at all, so give it none.
    std::fs::write(
        folder.join("two/suite.toml"),
        "id = \"two\"\ntitle = \"Two\"\n",
    )
    .unwrap();
    let spec = format!("{}@lite", folder.display());
    let report = validate(std::slice::from_ref(&spec));
    let tasks: Vec<&str> = report.rows.iter().map(|r| r.task.as_str()).collect();
    assert_eq!(tasks, ["a"]);
    let loaded = bureau_variants::load_tasks(&[spec], &bureau_variants::Plan::default()).unwrap();
    assert_eq!(
        loaded.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
}

#[test]
fn a_task_without_solution_is_named_as_such_and_the_oracle_errors_on_it() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("memo");
    write_memo_task(&task, "memo");
    std::fs::remove_dir_all(task.join("solution")).unwrap();
    let report = validate(&[task.display().to_string()]);
    let p = problems_of(&report, "memo").join("\n");
    assert!(p.contains("no solution/ directory"), "{p}");
    assert!(!p.contains("does not reach strict success"), "{p}");
    // `run --agent oracle` does not score it 0: the trial is an error naming solution/.
    let mut c = bureau_run::RunConfig::new(
        vec![task.display().to_string()],
        vec!["oracle".into()],
        tmp.path().join("run"),
    );
    c.quiet = true;
    c.retries = 0;
    let out = bureau_run::run(&c).unwrap();
    assert_eq!((out.errored, out.passed, out.failed), (1, 0, 0));
    let result = read(
        &bureau_run::trial_dir(&tmp.path().join("run"), "memo", "oracle", 1).join("result.json"),
    );
    assert!(result.contains("no solution/ directory"), "{result}");
}

#[test]
fn each_kind_of_unsound_task_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    write_suite(&suite, &["good"]);

    // The oracle's solution misses the mail (and calls a tool that does not exist).
    write_memo_task_with(
        &suite.join("wrong-solution"),
        "wrong-solution",
        100,
        concat!(
            r#"{"tool":"files_write","args":{"path":"memo.md","content":"The meeting moved to Friday.\n"}}"#,
            "\n",
            r#"{"tool":"mail_teleport","args":{}}"#,
            "\n"
        ),
    );

    // An item that passes on the untouched world, weighing most of the rubric.
    let free = suite.join("free-points");
    write_memo_task(&free, "free-points");
    let toml = read(&free.join("task.toml"));
    std::fs::write(
        free.join("task.toml"),
        format!("{toml}\n[[rubric]]\nid = \"readme-kept\"\ndescription = \"the readme is still there\"\nkind = \"foundation\"\nweight = 4.0\nfile_exists = \"readme.txt\"\n"),
    )
    .unwrap();

    // A malformed task.
    let bad = suite.join("malformed");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("task.toml"),
        "id = \"malformed\"\ntitle = \"x\"\ncolour = \"blue\"\n",
    )
    .unwrap();

    let report = validate(&[suite.display().to_string()]);
    assert!(!report.is_valid());
    assert_eq!(report.valid_count(), 1);
    assert!(problems_of(&report, "good").is_empty());

    let wrong = problems_of(&report, "wrong-solution").join("\n");
    assert!(
        wrong.contains("solution/1.jsonl calls `mail_teleport`, which is not a world tool"),
        "{wrong}"
    );
    assert!(
        wrong.contains("the oracle does not reach strict success"),
        "{wrong}"
    );
    assert!(
        wrong.contains("bob-told"),
        "names the item the oracle misses: {wrong}"
    );

    let free = problems_of(&report, "free-points").join("\n");
    assert!(
        free.contains("the null agent scores 0.50 weighted"),
        "{free}"
    );
    assert!(free.contains("readme-kept"), "{free}");

    let bad = problems_of(&report, "malformed").join("\n");
    assert!(
        bad.contains("task.toml:3:1:"),
        "a located load error: {bad}"
    );
    assert_eq!(report.offenders().len(), 3);
}

#[test]
fn a_task_the_null_agent_passes_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("trivial");
    write_memo_task(&task, "trivial");
    let toml = read(&task.join("task.toml"));
    // Keep only an item that holds on the seed world.
    let head = toml.split("[[rubric]]").next().unwrap();
    std::fs::write(task.join("task.toml"), format!("{head}[[rubric]]\nid = \"readme\"\ndescription = \"seeded\"\nkind = \"result\"\nfile_exists = \"readme.txt\"\n")).unwrap();
    let report = validate(&[task.display().to_string()]);
    let p = problems_of(&report, "trivial").join("\n");
    assert!(p.contains("the null agent reaches strict success"), "{p}");
}

#[test]
fn an_unresolvable_target_is_a_row_with_its_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nowhere").display().to_string();
    let report = validate(std::slice::from_ref(&missing));
    assert_eq!(report.rows.len(), 1);
    let p = &report.rows[0].problems[0];
    assert!(
        p.contains("nowhere: no such file or directory"),
        "{report:?}"
    );
    assert!(!p.contains(":1:1"), "no made-up position: {p}");
    // A directory that is neither, beside a suite with a near name: "did you mean".
    let suite = tmp.path().join("starter");
    std::fs::create_dir(&suite).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        "id = \"starter\"\ntitle = \"S\"\n",
    )
    .unwrap();
    let stater = tmp.path().join("stater");
    std::fs::create_dir(&stater).unwrap();
    let report = validate(&[stater.display().to_string()]);
    let p = &report.rows[0].problems[0];
    assert!(p.contains("neither a task"), "{p}");
    assert!(
        p.contains(&format!("did you mean `{}`?", suite.display())),
        "{p}"
    );
}

// ---- the validation cache and parallel validation ----

/// A suite of memo tasks `ids`, each with a `checks.star` item that the oracle passes.
fn suite_with_checks(dir: &std::path::Path, ids: &[&str]) -> std::path::PathBuf {
    let suite = write_suite(dir, ids);
    for id in ids {
        let t = suite.join(id);
        let toml = read(&t.join("task.toml"));
        std::fs::write(
            t.join("task.toml"),
            format!("{toml}\n[[rubric]]\nid = \"memo-exists\"\ndescription = \"memo.md exists\"\nkind = \"result\"\ncheck = \"memo_exists\"\n"),
        )
        .unwrap();
        std::fs::write(
            t.join("checks.star"),
            "def memo_exists(w):\n    return w.files.exists(\"memo.md\")\n",
        )
        .unwrap();
    }
    suite
}

fn cached_options(cache: &std::path::Path) -> bureau_run::ValidateOptions {
    bureau_run::ValidateOptions {
        cache_dir: Some(cache.to_path_buf()),
        ..Default::default()
    }
}

#[test]
fn a_second_validate_reads_the_cache_and_an_edit_revalidates_only_that_task() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite_with_checks(&tmp.path().join("suite"), &["a", "b", "c"]);
    let cache = tmp.path().join("cache");
    let targets = [suite.display().to_string()];
    let first = bureau_run::validate_with(&targets, &cached_options(&cache));
    assert!(first.is_valid(), "{first:?}");
    assert_eq!(first.cached_count(), 0);

    let second = bureau_run::validate_with(&targets, &cached_options(&cache));
    assert_eq!(second.cached_count(), 3, "{second:?}");
    let uncached = |r: &bureau_run::ValidationReport| {
        r.rows
            .iter()
            .map(|r| bureau_run::ValidationRow {
                cached: false,
                ..r.clone()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(uncached(&second), uncached(&first));

    // A check that no longer passes for the oracle: only `b` is validated again.
    std::fs::write(
        suite.join("b/checks.star"),
        "def memo_exists(w):\n    return w.files.exists(\"memo-final.md\")\n",
    )
    .unwrap();
    let third = bureau_run::validate_with(&targets, &cached_options(&cache));
    let fresh: Vec<&str> = third
        .rows
        .iter()
        .filter(|r| !r.cached)
        .map(|r| r.task.as_str())
        .collect();
    assert_eq!(fresh, ["b"]);
    let problems = problems_of(&third, "b");
    assert!(
        problems
            .iter()
            .any(|p| p.contains("the oracle does not reach strict success")
                && p.contains("memo-exists")),
        "{problems:?}"
    );
    // The invalid row is cached too (it is the task's problem, not the machine's) and still
    // reported from there.
    let fourth = bureau_run::validate_with(&targets, &cached_options(&cache));
    assert_eq!(fourth.cached_count(), 3);
    assert_eq!(problems_of(&fourth, "b"), problems);

    // Without the cache, every task is validated again.
    let none = bureau_run::validate_with(&targets, &bureau_run::ValidateOptions::default());
    assert_eq!(none.cached_count(), 0);
    assert_eq!(uncached(&none), uncached(&fourth));

    // A corrupt entry is a miss, not an error.
    for e in std::fs::read_dir(&cache).unwrap() {
        std::fs::write(e.unwrap().path(), "{").unwrap();
    }
    let again = bureau_run::validate_with(&targets, &cached_options(&cache));
    assert_eq!(again.cached_count(), 0);
    assert_eq!(uncached(&again), uncached(&fourth));
}

#[test]
fn duplicate_ids_are_found_across_cached_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let one = suite_with_checks(&tmp.path().join("one"), &["a"]);
    let two = suite_with_checks(&tmp.path().join("two"), &["a"]);
    let cache = tmp.path().join("cache");
    let targets = [one.display().to_string(), two.display().to_string()];
    for round in 0..2 {
        let r = bureau_run::validate_with(&targets, &cached_options(&cache));
        assert_eq!(r.cached_count(), round * 2);
        assert!(r.rows[0].problems.is_empty(), "{r:?}");
        assert!(
            r.rows[1].problems[0].contains("task id `a` is used by another task"),
            "{r:?}"
        );
    }
    // Alone, the second suite's task is valid (the problem was not stored with it).
    let alone = bureau_run::validate_with(&[two.display().to_string()], &cached_options(&cache));
    assert!(alone.is_valid(), "{alone:?}");
    assert_eq!(alone.cached_count(), 1);
}

#[test]
fn parallel_validation_gives_the_rows_of_serial_validation_in_target_order() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("suites");
    let one = suite_with_checks(&folder.join("one"), &["d", "a", "c"]);
    suite_with_checks(&folder.join("two"), &["b", "e"]);
    // Some invalid rows too: a check the oracle fails, a task that does not load.
    std::fs::write(
        one.join("c/checks.star"),
        "def memo_exists(w):\n    return False\n",
    )
    .unwrap();
    std::fs::create_dir_all(one.join("z-broken")).unwrap();
    std::fs::write(one.join("z-broken/task.toml"), "id = \n").unwrap();
    let targets = [folder.display().to_string()];
    let serial = bureau_run::validate_on(&targets, &Default::default(), 1);
    let parallel = bureau_run::validate_on(&targets, &Default::default(), 4);
    assert_eq!(parallel, serial);
    let tasks: Vec<&str> = parallel.rows.iter().map(|r| r.task.as_str()).collect();
    assert_eq!(tasks, ["a", "c", "d", "z-broken", "b", "e"]);
    assert!(!parallel.rows[1].problems.is_empty());
    assert!(!parallel.rows[3].problems.is_empty());
}
