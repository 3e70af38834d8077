//! Every class of malformed task is reported as `path:line:col: what — what to do`, never a panic.

use std::path::Path;

use bureau_core::task::{Evaluator, EventKind, Predicate, Task};
use bureau_core::verdict::TurnRef;
use proptest::prelude::*;

const GOOD: &str = r#"id = "demo"
title = "Demo"
persona = "office manager"
category = "admin"
difficulty = "medium"
abilities = ["scheduling"]
apps = ["files", "mail", "calendar"]
timezone = "Europe/Berlin"
file_deps = [{ from = "a.md", to = "b.md" }]

[user]
name = "Dana Reyes"
email = "Dana@Northwind.test"

[limits]
max_steps = 30

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[turn]]
at = "2026-03-03 09:00"
prompt = "Day two."
[[turn.event]]
kind = "add_file"
silent = true
path = "notes/new.md"
from = "new.md"

[[rubric]]
id = "has-file"
description = "the file exists"
weight = 2
turn = 1
kind = "result"
red_line = true
categories = ["files"]
file_exists = "b.md"

[[rubric]]
id = "mail"
description = "mail sent"
kind = "process"
[rubric.mail_sent]
to = ["sam@northwind.test"]
subject_contains = ["budget"]

[[rubric]]
id = "star"
description = "starlark"
kind = "foundation"
check = "my_check"
"#;

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn good_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "task.toml", GOOD);
    write(
        d.path(),
        "checks.star",
        "def my_check(w):\n    return True\n",
    );
    write(d.path(), "turns/2/new.md", "new");
    write(d.path(), "world/files/a.md", "a");
    write(
        d.path(),
        "solution/1.jsonl",
        "{\"tool\": \"files_write\", \"args\": {\"path\": \"b.md\", \"content\": \"x\"}}\n\n",
    );
    d
}

/// Load `GOOD` with `from` replaced by `to`; return the error text.
fn error_for(from: &str, to: &str) -> String {
    let d = good_dir();
    assert!(GOOD.contains(from), "test bug: {from:?} not in GOOD");
    write(d.path(), "task.toml", &GOOD.replacen(from, to, 1));
    match Task::load(d.path()) {
        Ok(_) => panic!("expected an error after replacing {from:?} with {to:?}"),
        Err(e) => e.to_string(),
    }
}

/// The line (1-based) of the first occurrence of `needle` in the modified source.
fn line_of(src: &str, needle: &str) -> usize {
    src[..src.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn a_good_task_loads_with_every_field() {
    let d = good_dir();
    let t = Task::load(d.path()).unwrap();
    assert_eq!(t.id, "demo");
    assert_eq!(t.user.email, "dana@northwind.test");
    assert_eq!(t.limits.max_steps, 30);
    assert_eq!(t.limits.wall_seconds, 1800);
    assert_eq!(t.turns.len(), 2);
    assert_eq!(t.turns[0].at.to_rfc3339(), "2026-03-02T09:00:00+01:00");
    assert_eq!(t.turns[1].at.to_rfc3339(), "2026-03-03T09:00:00+01:00");
    assert!(t.turns[1].events[0].silent);
    assert!(
        matches!(&t.turns[1].events[0].kind, EventKind::AddFile { path, .. } if path == "notes/new.md")
    );
    assert_eq!(t.rubric.len(), 3);
    assert_eq!(t.rubric[0].weight, 2.0);
    assert_eq!(t.rubric[0].turn, TurnRef::Turn(1));
    assert!(t.rubric[0].red_line);
    assert_eq!(t.rubric[1].weight, 1.0);
    assert_eq!(t.rubric[1].turn, TurnRef::Final);
    assert!(
        matches!(&t.rubric[1].evaluator, Evaluator::Predicate(Predicate::MailSent(f)) if f.min == 1 && f.to == vec!["sam@northwind.test"])
    );
    assert_eq!(t.rubric[2].evaluator, Evaluator::Check("my_check".into()));
    assert_eq!(t.solution[0].len(), 1);
    assert!(t.solution[1].is_empty());
    assert!(t.checks.is_some());
}

#[test]
fn unknown_key_names_its_line() {
    let e = error_for("persona = ", "colour = \"red\"\npersona = ");
    assert!(e.contains("task.toml:3:1: unknown field `colour`"), "{e}");
    assert!(e.contains(" — "), "{e}");
}

#[test]
fn wrong_type_is_located() {
    let e = error_for("weight = 2", "weight = \"heavy\"");
    let line = line_of(
        &GOOD.replacen("weight = 2", "weight = \"heavy\"", 1),
        "weight = \"heavy\"",
    );
    assert!(e.contains(&format!("task.toml:{line}:")), "{e}");
    assert!(e.contains("invalid type"), "{e}");
}

#[test]
fn weight_must_be_positive() {
    for w in ["0", "-1.5"] {
        let src = GOOD.replacen("weight = 2", &format!("weight = {w}"), 1);
        let e = error_for("weight = 2", &format!("weight = {w}"));
        let line = line_of(&src, &format!("weight = {w}"));
        assert!(e.contains(&format!("task.toml:{line}:10: weight")), "{e}");
        assert!(e.contains("not positive"), "{e}");
    }
}

#[test]
fn duplicate_rubric_ids_point_at_both() {
    let e = error_for("id = \"mail\"", "id = \"has-file\"");
    assert!(
        e.contains("duplicate rubric id `has-file` (first used at"),
        "{e}"
    );
}

#[test]
fn turn_index_out_of_range() {
    let e = error_for("turn = 1", "turn = 3");
    assert!(
        e.contains("is for turn 3 but the task has 2 turn(s)"),
        "{e}"
    );
    let e = error_for("turn = 1", "turn = 0");
    assert!(e.contains("turns count from 1"), "{e}");
    let e = error_for("turn = 1", "turn = \"last\"");
    assert!(e.contains("neither a turn number nor \"final\""), "{e}");
}

#[test]
fn missing_seed_file_is_reported_at_from() {
    let src = GOOD.replacen("from = \"new.md\"", "from = \"missing.md\"", 1);
    let e = error_for("from = \"new.md\"", "from = \"missing.md\"");
    let line = line_of(&src, "from = \"missing.md\"");
    assert!(
        e.contains(&format!(
            "task.toml:{line}:8: seed file turns/2/missing.md does not exist"
        )),
        "{e}"
    );
}

#[test]
fn event_fields_are_checked_per_kind() {
    let e = error_for("kind = \"add_file\"", "kind = \"explode\"");
    assert!(e.contains("unknown event kind `explode`"), "{e}");
    let e = error_for("kind = \"add_file\"", "kind = \"delete_file\"");
    assert!(
        e.contains("field `from` does not apply to a `delete_file` event"),
        "{e}"
    );
    let e = error_for("path = \"notes/new.md\"\n", "");
    assert!(e.contains("a `add_file` event needs `path`"), "{e}");
    let e = error_for("silent = true\n", "");
    assert!(e.contains("missing field `silent`"), "{e}");
    let e = error_for("path = \"notes/new.md\"", "path = \"../escape.md\"");
    assert!(e.contains("`..` is not allowed"), "{e}");
}

#[test]
fn evaluators_must_be_exactly_one() {
    let e = error_for("file_exists = \"b.md\"\n", "");
    assert!(e.contains("rubric item `has-file` has no evaluator"), "{e}");
    let e = error_for(
        "file_exists = \"b.md\"",
        "file_exists = \"b.md\"\nfile_absent = \"c.md\"",
    );
    assert!(
        e.contains("has 2 evaluators (file_exists, file_absent)"),
        "{e}"
    );
}

#[test]
fn check_needs_checks_star() {
    let d = good_dir();
    std::fs::remove_file(d.path().join("checks.star")).unwrap();
    let e = Task::load(d.path()).unwrap_err().to_string();
    assert!(
        e.contains("uses check `my_check` but the task has no checks.star"),
        "{e}"
    );
}

#[test]
fn bad_times_zones_and_order() {
    let e = error_for("timezone = \"Europe/Berlin\"", "timezone = \"Mars/Base\"");
    assert!(e.contains("not an IANA time zone"), "{e}");
    let e = error_for("at = \"2026-03-03 09:00\"", "at = \"2026-03-01 09:00\"");
    assert!(e.contains("turn 2 starts before turn 1"), "{e}");
    let e = error_for("at = \"2026-03-03 09:00\"", "at = \"next tuesday\"");
    assert!(e.contains("is not a datetime"), "{e}");
}

#[test]
fn bad_solution_lines_are_located() {
    let d = good_dir();
    write(
        d.path(),
        "solution/1.jsonl",
        "{\"tool\": \"files_write\", \"args\": {}}\nnot json\n",
    );
    write(d.path(), "solution/7.jsonl", "");
    let e = Task::load(d.path()).unwrap_err().to_string();
    assert!(e.contains("solution/1.jsonl:2:"), "{e}");
    assert!(e.contains("`7.jsonl` does not name a turn"), "{e}");
}

#[test]
fn several_problems_are_all_reported() {
    let d = good_dir();
    let src = GOOD
        .replacen("weight = 2", "weight = 0", 1)
        .replacen("turn = 1", "turn = 9", 1)
        .replacen(
            "apps = [\"files\", \"mail\", \"calendar\"]",
            "apps = [\"fax\"]",
            1,
        );
    write(d.path(), "task.toml", &src);
    let e = Task::load(d.path()).unwrap_err();
    assert!(e.0.len() >= 3, "{e}");
    assert!(e.to_string().contains("unknown app `fax`"));
}

#[test]
fn missing_task_toml_and_syntax_errors() {
    let d = tempfile::tempdir().unwrap();
    let e = Task::load(d.path()).unwrap_err().to_string();
    assert!(e.contains("cannot read task.toml"), "{e}");
    write(d.path(), "task.toml", "id = \"x\"\ntitle = [unclosed\n");
    let e = Task::load(d.path()).unwrap_err().to_string();
    assert!(e.contains("task.toml:2:"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Whatever bytes task.toml holds, loading returns (never panics).
    #[test]
    fn loader_never_panics_on_garbage(src in ".{0,400}") {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "task.toml", &src);
        let _ = Task::load(d.path());
    }

    /// Cutting a valid task anywhere gives an error or a task, never a panic.
    #[test]
    fn loader_never_panics_on_truncation(cut in 0usize..GOOD.len()) {
        let d = good_dir();
        let mut end = cut;
        while !GOOD.is_char_boundary(end) { end -= 1; }
        write(d.path(), "task.toml", &GOOD[..end]);
        let _ = Task::load(d.path());
    }
}

const ADD_FILE_EVENT: &str =
    "kind = \"add_file\"\nsilent = true\npath = \"notes/new.md\"\nfrom = \"new.md\"";

#[test]
fn act_events_load_with_their_arguments() {
    let d = good_dir();
    let src = GOOD.replacen(
        ADD_FILE_EVENT,
        "kind = \"act\"\nsilent = true\nas = \"@Priya\"\ntool = \"sheets_write\"\nargs = { spreadsheet = \"Budget\", range = \"C7\", values = [[14250, \"ok\"]] }",
        1,
    );
    write(d.path(), "task.toml", &src);
    let t = Task::load(d.path()).unwrap();
    match &t.turns[1].events[0].kind {
        EventKind::Act { actor, tool, args } => {
            assert_eq!(actor, "@priya");
            assert_eq!(tool, "sheets_write");
            assert_eq!(args["range"], "C7");
            assert_eq!(args["values"][0][0], 14250);
            assert_eq!(args["values"][0][1], "ok");
        }
        other => panic!("expected an act event, got {other:?}"),
    }
}

#[test]
fn act_events_need_a_person_and_a_service_tool() {
    let e = error_for(
        ADD_FILE_EVENT,
        "kind = \"act\"\nsilent = false\ntool = \"chat_post\"",
    );
    assert!(e.contains("a `act` event needs `as`"), "{e}");
    let e = error_for(
        ADD_FILE_EVENT,
        "kind = \"act\"\nsilent = false\nas = \"priya\"\ntool = \"rocket_launch\"",
    );
    assert!(
        e.contains("`rocket_launch` is not a world tool name"),
        "{e}"
    );
    let src = GOOD.replacen(
        ADD_FILE_EVENT,
        "kind = \"act\"\nsilent = false\nas = \"priya\"\ntool = \"chat_post\"\nargs = 5",
        1,
    );
    let e = error_for(
        ADD_FILE_EVENT,
        "kind = \"act\"\nsilent = false\nas = \"priya\"\ntool = \"chat_post\"\nargs = 5",
    );
    assert!(e.contains("`args` must be a table"), "{e}");
    assert!(
        e.contains(&format!("task.toml:{}:", line_of(&src, "args = 5"))),
        "{e}"
    );
    let e = error_for(
        ADD_FILE_EVENT,
        "kind = \"act\"\nsilent = false\nas = \"priya\"\ntool = \"chat_post\"\npath = \"x.md\"",
    );
    assert!(
        e.contains("field `path` does not apply to a `act` event"),
        "{e}"
    );
}

#[test]
fn service_predicates_load_and_are_checked() {
    let d = good_dir();
    let src = GOOD.replacen(
        "file_exists = \"b.md\"",
        "sheet_cell = { spreadsheet = \"Budget\", sheet = \"Q2\", cell = \"C7\", equals = 14250.5, tolerance = 0.01 }",
        1,
    );
    write(d.path(), "task.toml", &src);
    let t = Task::load(d.path()).unwrap();
    match &t.rubric[0].evaluator {
        Evaluator::Predicate(Predicate::SheetCell(f)) => {
            assert_eq!(f.cell, "C7");
            assert_eq!(f.equals, serde_json::json!(14250.5));
            assert_eq!(f.tolerance, 0.01);
        }
        other => panic!("expected sheet_cell, got {other:?}"),
    }
    let e = error_for(
        "file_exists = \"b.md\"",
        "sheet_cell = { cell = \"C7\", equals = 1 }",
    );
    assert!(
        e.contains("sheet_cell needs exactly one of `spreadsheet` and `file`"),
        "{e}"
    );
    let e = error_for(
        "file_exists = \"b.md\"",
        "sheet_cell = { file = \"b.xlsx\", cell = \"7C\", equals = 1 }",
    );
    assert!(e.contains("`7C` is not an A1 cell reference"), "{e}");
    let e = error_for(
        "file_exists = \"b.md\"",
        "chat_posted = { channel = \"ops\", dm_with = \"jonas\" }",
    );
    assert!(e.contains("has both `channel` and `dm_with`"), "{e}");
    let e = error_for(
        "file_exists = \"b.md\"",
        "tracker_issue = { state = \"Done\", min = 3, max = 1 }",
    );
    assert!(e.contains("tracker_issue max 1 is below min 3"), "{e}");
    let e = error_for(
        "file_exists = \"b.md\"",
        "merge_request = { repo = \"fw\", state = \"shipped\" }",
    );
    assert!(e.contains("unknown merge request state `shipped`"), "{e}");
    let e = error_for(
        "file_exists = \"b.md\"",
        "kb_row = { database = \"Vendors\", colour = \"red\" }",
    );
    assert!(e.contains("unknown field `colour`"), "{e}");
    let e = error_for(
        "file_exists = \"b.md\"",
        "repo_file_contains = { repo = \"fw\", path = \"a.c\" }",
    );
    assert!(e.contains("repo_file_contains has no keywords"), "{e}");
    let e = error_for("file_exists = \"b.md\"\n", "");
    assert!(
        e.contains("chat_posted") && e.contains("repo_file_contains"),
        "the hint lists every predicate: {e}"
    );
}

#[test]
fn the_image_predicate_loads_and_is_checked() {
    let d = good_dir();
    write(d.path(), "reference/logo.png", "a picture");
    let src = GOOD.replacen(
        "file_exists = \"b.md\"",
        "image = { path = \"out/logo.png\", reference = \"logo.png\", max_distance = 10, width = 200, colours = [\"#d62728\", \"#fff\"] }",
        1,
    );
    write(d.path(), "task.toml", &src);
    let t = Task::load(d.path()).unwrap();
    match &t.rubric[0].evaluator {
        Evaluator::Predicate(Predicate::Image(f)) => {
            assert_eq!(f.path, "out/logo.png");
            assert_eq!(f.reference.as_deref(), Some("logo.png"));
            assert_eq!(
                (f.max_distance, f.width, f.height),
                (Some(10), Some(200), None)
            );
            assert_eq!(f.colours, ["#d62728", "#fff"]);
        }
        other => panic!("expected image, got {other:?}"),
    }
    let cases = [
        (
            "image = { path = \"a.png\", reference = \"missing.png\" }",
            "reference file reference/missing.png does not exist",
        ),
        (
            "image = { path = \"a.png\", max_distance = 4 }",
            "`max_distance` but no `reference`",
        ),
        (
            "image = { path = \"a.png\", format = \"svg\" }",
            "unknown image format `svg`",
        ),
        (
            "image = { path = \"a.png\", page = 2 }",
            "`a.png` is not a .pdf",
        ),
        ("image = { path = \"a.pdf\", page = 0 }", "`page` is 0"),
        (
            "image = { path = \"a.png\", colours = [\"red\"] }",
            "`red` is not a colour",
        ),
        ("image = { path = \"../a.png\" }", "path `../a.png`"),
        (
            "image = { path = \"a.png\", colors = [\"#fff\"] }",
            "did you mean `colours`",
        ),
    ];
    for (to, want) in cases {
        let e = error_for("file_exists = \"b.md\"", to);
        assert!(e.contains(want), "{to}: {e}");
        let line = line_of(&GOOD.replacen("file_exists = \"b.md\"", to, 1), to);
        assert!(e.contains(&format!("task.toml:{line}:")), "{to}: {e}");
    }
}

#[test]
fn judge_render_takes_renderable_workspace_files() {
    let d = good_dir();
    let src = GOOD.replacen(
        "file_exists = \"b.md\"",
        "judge = \"The deck's title slide names the client.\"\njudge_render = [\"deliverables/deck.pptx\", \"out/report.PDF\", \"chart.png\"]",
        1,
    );
    write(d.path(), "task.toml", &src);
    let t = Task::load(d.path()).unwrap();
    match &t.rubric[0].evaluator {
        Evaluator::Judge(spec) => {
            assert_eq!(
                spec.render,
                ["deliverables/deck.pptx", "out/report.PDF", "chart.png"]
            );
            assert!(spec.files.is_empty());
        }
        other => panic!("expected a judge, got {other:?}"),
    }
    let cases = [
        (
            "judge = \"x\"\njudge_render = [\"notes.md\"]",
            "`notes.md` cannot be rendered to pages",
        ),
        (
            "judge = \"x\"\njudge_render = []",
            "`judge_render` is empty",
        ),
        (
            "judge = \"x\"\njudge_render = [\"/etc/passwd.pdf\"]",
            "path `/etc/passwd.pdf`",
        ),
        (
            "file_exists = \"b.md\"\njudge_render = [\"a.pdf\"]",
            "`judge_render` without `judge`",
        ),
    ];
    for (to, want) in cases {
        let e = error_for("file_exists = \"b.md\"", to);
        assert!(e.contains(want), "{to}: {e}");
    }
}

// --- file_deps and [outputs] (issue 5) ------------------------------------------------------

#[test]
fn file_deps_take_edges_and_lone_files_and_outputs_load_normalised() {
    let d = good_dir();
    let src = GOOD
        .replace(
            "file_deps = [{ from = \"a.md\", to = \"b.md\" }]",
            "file_deps = [\n  { from = \"./a.md\", to = \"out//b.md\" },\n  { from = \"notes/new.md\", to = \"out/b.md\" },\n  { file = \"a.md\" },\n  { file = \"c.md\" },\n]\n\n[outputs]\nfolder = \"./deliverables/\"\nnames = [\"Q3 summary.xlsx\"]",
        );
    write(d.path(), "task.toml", &src);
    write(d.path(), "world/files/c.md", "c");
    let t = Task::load(d.path()).unwrap();
    assert_eq!(t.file_deps.len(), 2);
    assert_eq!(t.file_deps[0].from, "a.md");
    assert_eq!(t.file_deps[0].to, "out/b.md");
    // A file an event adds is a valid source.
    assert_eq!(t.file_deps[1].from, "notes/new.md");
    assert_eq!(t.file_dep_nodes, vec!["a.md", "c.md"]);
    let g = t.dep_graph().unwrap();
    assert_eq!(
        g.nodes.iter().map(String::as_str).collect::<Vec<_>>(),
        ["a.md", "c.md", "notes/new.md", "out/b.md"]
    );
    assert_eq!(g.edges.len(), 2);
    assert_eq!(t.outputs.folder.as_deref(), Some("deliverables"));
    assert_eq!(t.outputs.names, vec!["Q3 summary.xlsx"]);
}

#[test]
fn a_task_without_file_deps_has_no_graph() {
    let d = good_dir();
    write(
        d.path(),
        "task.toml",
        &GOOD.replace(
            "file_deps = [{ from = \"a.md\", to = \"b.md\" }]",
            "file_deps = []",
        ),
    );
    let t = Task::load(d.path()).unwrap();
    assert!(t.dep_graph().is_none());
    assert_eq!(t.outputs, Default::default());
}

#[test]
fn bad_file_deps_and_outputs_are_located() {
    let deps = "file_deps = [{ from = \"a.md\", to = \"b.md\" }]";
    let cases: &[(&str, &str)] = &[
        (
            "file_deps = [{ from = \"a.md\" }]",
            "either an edge `{ from, to }` or a file `{ file }`",
        ),
        (
            "file_deps = [{ from = \"a.md\", to = \"b.md\", file = \"c.md\" }]",
            "either an edge",
        ),
        (
            "file_deps = [{ from = \"/etc/a.md\", to = \"b.md\" }]",
            "absolute paths are not allowed",
        ),
        (
            "file_deps = [{ from = \"a.md\", to = \"../b.md\" }]",
            "`..` is not allowed",
        ),
        (
            "file_deps = [{ from = \"a.md\", to = \"./a.md\" }]",
            "edge from `a.md` to itself",
        ),
        (
            "file_deps = [{ from = \"missing.md\", to = \"b.md\" }]",
            "file_deps file `missing.md` is neither in world/files/",
        ),
        (
            "file_deps = [{ file = \"gone.md\" }]",
            "file_deps file `gone.md`",
        ),
        (
            "file_deps = [{ form = \"a.md\", to = \"b.md\" }]",
            "unknown field `form`",
        ),
    ];
    for (to, want) in cases {
        let e = error_for(deps, to);
        assert!(e.contains(want), "{to}: {e}");
        assert!(
            e.contains("task.toml:9:"),
            "{to}: not located on line 9: {e}"
        );
    }
    let outputs_cases: &[(&str, &str)] = &[
        (
            "[outputs]\nnames = [\"reports/q3.xlsx\"]",
            "outputs name `reports/q3.xlsx` is not a file name",
        ),
        (
            "[outputs]\nfolder = \"../out\"",
            "outputs folder `../out`: `..` is not allowed",
        ),
        ("[outputs]\nfolder = \"./\"", "is the workspace itself"),
        ("[outputs]\nfolders = \"out\"", "unknown field `folders`"),
    ];
    for (block, want) in outputs_cases {
        let e = error_for(deps, &format!("{deps}\n\n{block}"));
        assert!(e.contains(want), "{block}: {e}");
        assert!(e.contains("task.toml:1"), "{block}: not located: {e}");
    }
}

// --- [workspace] (generated persona workspaces) ---------------------------------------------

#[test]
fn workspace_section_loads_and_lets_deps_name_generated_files() {
    let d = good_dir();
    let src = GOOD.replace(
        "file_deps = [{ from = \"a.md\", to = \"b.md\" }]",
        "file_deps = [{ from = \"finance/revenue/q3.xlsx\", to = \"b.md\" }]\n\n[workspace]\npersona = \"researcher\"\nfiles = 200\nseed = 7",
    );
    write(d.path(), "task.toml", &src);
    let t = Task::load(d.path()).unwrap();
    let ws = t.workspace.unwrap();
    assert_eq!(
        (ws.persona.as_str(), ws.files, ws.seed),
        ("researcher", 200, 7)
    );
    // Without [workspace] the same source is an error.
    let e = error_for(
        "file_deps = [{ from = \"a.md\", to = \"b.md\" }]",
        "file_deps = [{ from = \"finance/revenue/q3.xlsx\", to = \"b.md\" }]",
    );
    assert!(e.contains("is neither in world/files/"), "{e}");
    assert!(Task::load(good_dir().path()).unwrap().workspace.is_none());
}

#[test]
fn bad_workspace_sections_are_located_and_name_the_personas() {
    let deps = "file_deps = [{ from = \"a.md\", to = \"b.md\" }]";
    // (body, message, line of the error: [workspace] is line 11)
    let cases: &[(&str, &str, u32)] = &[
        (
            "persona = \"chef\"\nfiles = 200\nseed = 1",
            "unknown workspace persona `chef` — use one of operations-manager, logistics-manager, ai-product-manager, backend-developer, researcher",
            11,
        ),
        (
            "persona = \"researcher\"\nfiles = 3\nseed = 1",
            "workspace files = 3 is out of range",
            11,
        ),
        (
            "persona = \"researcher\"\nseed = 1",
            "missing field `files`",
            11,
        ),
        (
            "persona = \"researcher\"\nfiles = 200\nseed = 1\nsize = 2",
            "unknown field `size`",
            15,
        ),
    ];
    for (body, want, line) in cases {
        let e = error_for(deps, &format!("{deps}\n\n[workspace]\n{body}"));
        assert!(e.contains(want), "{body}: {e}");
        assert!(
            e.contains(&format!("task.toml:{line}:")),
            "{body}: not located on line {line}: {e}"
        );
    }
}

/// Issue 12: every unknown key in one run, each at its own line:col, with a suggestion.
#[test]
fn every_misspelt_key_is_reported_in_one_run() {
    let d = good_dir();
    let src = GOOD
        .replacen("difficulty = ", "dificulty = ", 1)
        .replacen("weight = 2", "wieght = 2", 1)
        .replacen("kind = \"process\"", "kind = \"process\"\nwieght = 1", 1)
        .replacen(
            "kind = \"foundation\"",
            "kind = \"foundation\"\n  wieght = 3",
            1,
        );
    write(d.path(), "task.toml", &src);
    let e = Task::load(d.path()).unwrap_err();
    assert_eq!(e.0.len(), 4, "{e}");
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    let dif = line_of(&src, "dificulty");
    assert!(
        lines[0].ends_with(&format!(
            "task.toml:{dif}:1: unknown field `dificulty` at the top level — did you mean `difficulty`?"
        )),
        "{text}"
    );
    // the three weights, in the order of the file, each at its own position
    let mut at = 0;
    for (i, col) in [(1, 1), (2, 1), (3, 3)] {
        let off = at + src[at..].find("wieght").unwrap();
        let line = src[..off].matches('\n').count() + 1;
        at = off + 1;
        assert!(
            lines[i].ends_with(&format!(
                "task.toml:{line}:{col}: unknown field `wieght` in [[rubric]] — did you mean `weight`?"
            )),
            "{text}"
        );
    }
}

#[test]
fn an_unknown_key_in_a_nested_table_is_located() {
    let src = GOOD.replacen(
        "subject_contains = [\"budget\"]",
        "subject_contains = [\"budget\"]\nsubjet_contains = [\"x\"]",
        1,
    );
    let e = error_for(
        "subject_contains = [\"budget\"]",
        "subject_contains = [\"budget\"]\nsubjet_contains = [\"x\"]",
    );
    let line = line_of(&src, "subjet_contains");
    assert!(
        e.contains(&format!(
            "task.toml:{line}:1: unknown field `subjet_contains` in `mail_sent` of a [[rubric]] item — did you mean `subject_contains`?"
        )),
        "{e}"
    );
    // in [[turn.event]] and [limits] too
    let e = error_for("silent = true", "silent = true\nslient = true");
    assert!(
        e.contains("unknown field `slient` in [[turn.event]]"),
        "{e}"
    );
    assert!(e.contains("did you mean `silent`?"), "{e}");
    let e = error_for("max_steps = 30", "max_steps = 30\nmax_step = 3");
    assert!(e.contains("unknown field `max_step` in [limits]"), "{e}");
}

#[test]
fn a_far_miss_lists_the_known_keys() {
    let e = error_for("persona = ", "colour = \"red\"\npersona = ");
    assert!(
        e.contains("task.toml:3:1: unknown field `colour` at the top level — remove it, or use a known key: abilities, apps, category, checkpoint_bonus, difficulty,"),
        "{e}"
    );
    assert!(!e.contains("did you mean"), "{e}");
    let e = error_for("[user]\n", "[user]\nphone = \"1\"\n");
    assert!(
        e.contains("unknown field `phone` in [user] — remove it, or use a known key: email, name"),
        "{e}"
    );
}

#[test]
fn other_problems_are_still_reported_beside_unknown_keys() {
    let d = good_dir();
    let src = GOOD
        .replacen("difficulty = ", "dificulty = ", 1)
        .replacen(
            "apps = [\"files\", \"mail\", \"calendar\"]",
            "apps = [\"fax\"]",
            1,
        )
        .replacen("weight = 2", "weight = 0", 1);
    write(d.path(), "task.toml", &src);
    let e = Task::load(d.path()).unwrap_err().to_string();
    assert!(e.contains("unknown field `dificulty`"), "{e}");
    assert!(e.contains("unknown app `fax`"), "{e}");
    assert!(e.contains("not positive"), "{e}");
    assert!(!e.contains("missing field"), "{e}");
}

/// Issue 12: wrong types and missing fields are all reported in one run too, each at its
/// place, and the removals the loader makes to find them never add errors of their own.
#[test]
fn every_wrong_type_and_missing_field_is_reported_in_one_run() {
    let d = good_dir();
    let src = GOOD
        .replacen("weight = 2", "weight = \"two\"", 1)
        .replacen("max_steps = 30", "max_steps = \"thirty\"", 1)
        .replacen("description = \"mail sent\"\n", "", 1)
        .replacen("silent = true", "silent = \"yes\"", 1)
        .replacen("red_line = true", "red_line = true\nunknwn = 1", 1);
    write(d.path(), "task.toml", &src);
    let e = Task::load(d.path()).unwrap_err();
    let text = e.to_string();
    assert_eq!(e.0.len(), 5, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let want = [
        (
            line_of(&src, "max_steps"),
            "invalid type: string \"thirty\"",
        ),
        (line_of(&src, "silent = "), "invalid type: string \"yes\""),
        (line_of(&src, "weight = "), "invalid type: string \"two\""),
        (line_of(&src, "unknwn"), "unknown field `unknwn`"),
        (
            line_of(&src, "id = \"mail\"") - 1,
            "missing field `description`",
        ),
    ];
    for (i, (line, what)) in want.iter().enumerate() {
        assert!(
            lines[i].contains(&format!("task.toml:{line}:")) && lines[i].contains(what),
            "line {i}: want {what} at {line}:\n{text}"
        );
    }
    assert!(!text.contains("missing field `weight`"), "{text}");
    assert!(!text.contains("missing field `silent`"), "{text}");
}

#[test]
fn a_missing_required_top_level_field_is_reported_once() {
    let d = good_dir();
    let src = GOOD.replacen("[user]\nname = \"Dana Reyes\"\n", "[user]\nname = 7\n", 1);
    write(d.path(), "task.toml", &src);
    let text = Task::load(d.path()).unwrap_err().to_string();
    assert!(text.contains("invalid type: integer `7`"), "{text}");
    assert!(!text.contains("missing field `name`"), "{text}");
    assert!(!text.contains("missing field `user`"), "{text}");
}

#[test]
fn sources_name_where_expected_values_come_from() {
    let d = good_dir();
    let src = GOOD.replacen(
        "file_exists = \"b.md\"",
        "file_exists = \"b.md\"\nsource = [\"prompt\", \"turn:2\", \"file:a.md\", \"colleague:sam@northwind.test\"]",
        1,
    );
    write(d.path(), "task.toml", &src);
    let t = Task::load(d.path()).unwrap();
    assert_eq!(
        t.rubric[0].sources,
        [
            "prompt",
            "turn:2",
            "file:a.md",
            "colleague:sam@northwind.test"
        ]
    );
    // A lone string is a list of one.
    let src = GOOD.replacen(
        "file_exists = \"b.md\"",
        "file_exists = \"b.md\"\nsource = \"prompt\"",
        1,
    );
    write(d.path(), "task.toml", &src);
    assert_eq!(Task::load(d.path()).unwrap().rubric[0].sources, ["prompt"]);

    for (bad, what) in [
        ("source = [\"wiki:x\"]", "unknown source kind `wiki`"),
        (
            "source = [\"turn:3\"]",
            "names no turn of this task (it has 2)",
        ),
        ("source = [\"prompt:x\"]", "takes no reference"),
        ("source = [\"file\"]", "needs a reference"),
        ("source = []", "`source` is empty"),
    ] {
        let src = GOOD.replacen(
            "file_exists = \"b.md\"",
            &format!("file_exists = \"b.md\"\n{bad}"),
            1,
        );
        write(d.path(), "task.toml", &src);
        let e = Task::load(d.path()).unwrap_err().to_string();
        assert!(
            e.contains(what) && e.contains(&format!("task.toml:{}:", line_of(&src, "source ="))),
            "{bad}: {e}"
        );
    }
}
