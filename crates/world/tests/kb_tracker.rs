//! The knowledge base and the tracker end to end: seeds (and their errors with file and line),
//! tools with typed validation, queries, a colleague's `act` event, snapshot/restore.

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const PEOPLE: &str = r#"
[[person]]
name = "Mara Lindqvist"
email = "mara@bw.test"
handle = "mara"
[[person]]
name = "Jonas Petersen"
email = "jonas@bw.test"
handle = "jonas"
[[person]]
name = "Lena Vos"
email = "lena@bw.test"
handle = "lena"
"#;

const TRACKER: &str = r#"{
  "key": "OPS",
  "name": "Operations",
  "states": [
    {"name": "Backlog", "category": "backlog"},
    {"name": "Todo", "category": "unstarted"},
    {"name": "In Progress", "category": "started"},
    {"name": "Done", "category": "completed"},
    {"name": "Cancelled", "category": "cancelled"}
  ],
  "labels": ["bug", "supplier", "customer"],
  "cycles": [
    {"name": "Sprint 14", "start": "2026-03-02", "end": "2026-03-13"},
    {"name": "Sprint 15", "start": "2026-03-16", "end": "2026-03-27"}
  ],
  "modules": [{"name": "Purchasing"}],
  "issues": [
    {"number": 1, "title": "Order reflow oven spares", "state": "In Progress", "priority": "high",
     "assignee": "mara", "labels": ["supplier"], "estimate": 3, "cycle": "Sprint 14", "module": "Purchasing",
     "comments": [{"author": "jonas", "at": "2026-03-02T10:00:00+01:00", "text": "Ask Polder for the quote."}]},
    {"number": 2, "title": "Update stock list", "state": "Done", "assignee": "lena@bw.test", "cycle": "Sprint 14"}
  ]
}
"#;

/// A two-turn task: day 2 Jonas silently reassigns OPS-1 to Lena and comments on a kb page.
fn task(dir: &Path) -> Task {
    write(
        &dir.join("task.toml"),
        r#"
id = "t"
title = "T"
persona = "ops"
category = "admin"
difficulty = "easy"
apps = ["kb", "tracker"]
timezone = "Europe/Amsterdam"
[user]
name = "Mara Lindqvist"
email = "mara@bw.test"

[[turn]]
at = 2026-03-09T09:00:00
prompt = "Day one."

[[turn]]
at = 2026-03-10T09:00:00
prompt = "Day two."
[[turn.event]]
kind = "act"
silent = true
as = "jonas"
tool = "tracker_update_issue"
args = { key = "OPS-1", assignee = "lena" }
[[turn.event]]
kind = "act"
silent = false
as = "jonas@bw.test"
tool = "kb_comment"
args = { page = "Onboarding checklist", text = "Please add the badge process." }

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "notes.md"
"#,
    );
    write(&dir.join("world/people.toml"), PEOPLE);
    write(
        &dir.join("world/kb/pages/Engineering.md"),
        "# Engineering\nThe engineering space.\n",
    );
    write(
        &dir.join("world/kb/pages/Engineering/Onboarding.md"),
        "---\ntitle: Onboarding checklist\n---\n# Onboarding\nGet a laptop and a badge.\n",
    );
    write(
        &dir.join("world/kb/pages/Support/Troubleshooting/Sensor drift.md"),
        "Recalibrate the S2 sensor when readings drift by more than 2%.\n",
    );
    write(
        &dir.join("world/kb/databases/Suppliers.csv"),
        "Name,Country,Rating,Active,Contact,Since,Categories\nPolder PCB,NL,4.5,yes,jonas,2021-05-01,\"pcb, assembly\"\nRhein Metall,DE,3,no,,2019-01-10,metal\n",
    );
    write(
        &dir.join("world/kb/databases/Suppliers.schema.json"),
        r#"{"properties": [
  {"name": "Name", "type": "text"},
  {"name": "Country", "type": "select", "options": ["NL", "DE", "BE"]},
  {"name": "Rating", "type": "number"},
  {"name": "Active", "type": "checkbox"},
  {"name": "Contact", "type": "person"},
  {"name": "Since", "type": "date"},
  {"name": "Categories", "type": "multi_select", "options": ["pcb", "assembly", "metal"]}
]}"#,
    );
    write(
        &dir.join("world/kb/databases/Orders.json"),
        r#"{
  "properties": [
    {"name": "Order", "type": "text"},
    {"name": "Supplier", "type": "relation", "database": "Suppliers"},
    {"name": "Amount", "type": "number"}
  ],
  "rows": [
    {"Order": "PO-19", "Supplier": ["Polder PCB"], "Amount": 12500},
    {"Order": "PO-20", "Supplier": "Rhein Metall", "Amount": 800}
  ]
}"#,
    );
    write(&dir.join("world/tracker/OPS.json"), TRACKER);
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn setup() -> (tempfile::TempDir, Task, World) {
    let d = tempfile::tempdir().unwrap();
    let t = task(&d.path().join("task"));
    let w = World::build(&t, &d.path().join("trial")).unwrap();
    (d, t, w)
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => value,
        ToolOutcome::Error { message } => panic!("{tool} failed: {message}"),
    }
}

fn err(w: &mut World, tool: &str, args: Value) -> String {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => panic!("{tool} should fail, got {value}"),
        ToolOutcome::Error { message } => message,
    }
}

#[test]
fn kb_seed_builds_the_page_tree_and_typed_databases() {
    let (_d, _t, w) = setup();
    let kb = w.kb();
    let onboarding = kb.find_page("Onboarding checklist").unwrap();
    assert_eq!(
        kb.page_path(onboarding),
        "Engineering / Onboarding checklist"
    );
    assert!(onboarding.content.starts_with("# Onboarding"));
    // A folder without its own .md file is a page too.
    let drift = kb.find_page("Sensor drift").unwrap();
    assert_eq!(
        kb.page_path(drift),
        "Support / Troubleshooting / Sensor drift"
    );
    assert_eq!(kb.pages().len(), 5);

    let s = kb.database("suppliers").unwrap();
    let polder = &s.rows[0].values;
    assert_eq!(polder["Rating"], json!(4.5));
    assert_eq!(polder["Active"], json!(true));
    assert_eq!(polder["Contact"], json!("jonas@bw.test"));
    assert_eq!(polder["Categories"], json!(["pcb", "assembly"]));
    assert_eq!(s.rows[1].values["Contact"], Value::Null);
    let o = kb.database("Orders").unwrap();
    assert_eq!(o.rows[1].values["Supplier"], json!(["row-2"]));
    assert_eq!(o.rows[0].values["Amount"], json!(12500));
    // Export writes relations as titles and round-trips the header.
    let csv = kb.database_csv("Orders").unwrap();
    assert_eq!(
        csv,
        "Order,Supplier,Amount\nPO-19,Polder PCB,12500\nPO-20,Rhein Metall,800\n"
    );
}

#[test]
fn kb_tools_validate_values_against_the_schema() {
    let (_d, _t, mut w) = setup();
    let before = w.kb().clone();
    let e = err(
        &mut w,
        "kb_add_row",
        json!({"database": "Suppliers", "values": {"Name": "Acme", "Country": "FR"}}),
    );
    assert!(e.contains("`Country`") && e.contains("NL, DE, BE"), "{e}");
    let e = err(
        &mut w,
        "kb_add_row",
        json!({"database": "Suppliers", "values": {"Name": "Acme", "Rating": "great"}}),
    );
    assert!(e.contains("`Rating`") && e.contains("number"), "{e}");
    let e = err(
        &mut w,
        "kb_add_row",
        json!({"database": "Suppliers", "values": {"Name": "Acme", "Contact": "nobody"}}),
    );
    assert!(e.contains("mara@bw.test"), "{e}");
    let e = err(
        &mut w,
        "kb_add_row",
        json!({"database": "Suppliers", "values": {"Name": "Acme", "Colour": "red"}}),
    );
    assert!(
        e.contains("no property `Colour`") && e.contains("Categories"),
        "{e}"
    );
    let e = err(
        &mut w,
        "kb_update_row",
        json!({"database": "Orders", "row": "PO-19", "values": {"Supplier": "Nobody BV"}}),
    );
    assert!(e.contains("Polder PCB, Rhein Metall"), "{e}");
    assert_eq!(w.kb(), &before, "failed calls change nothing");

    let r = ok(
        &mut w,
        "kb_add_row",
        json!({"database": "suppliers", "values": {"Name": "Acme", "Country": "be", "Rating": "4", "Active": true, "Contact": "lena", "Categories": ["metal"]}}),
    );
    assert_eq!(r["id"], "row-3");
    let row = &w.kb().database("Suppliers").unwrap().rows[2];
    assert_eq!(row.values["Country"], "BE");
    assert_eq!(row.values["Contact"], "lena@bw.test");
    assert_eq!(row.values["Since"], Value::Null);
    ok(
        &mut w,
        "kb_update_row",
        json!({"database": "Suppliers", "row": "Rhein Metall", "values": {"Active": "yes", "Rating": 3.5}}),
    );
    let rhein = &w.kb().database("Suppliers").unwrap().rows[1];
    assert_eq!(rhein.values["Active"], json!(true));
    assert_eq!(rhein.updated_by, "mara@bw.test");
    let last = w.log().last().unwrap();
    assert_eq!(
        (last.service.as_str(), last.action.as_str()),
        ("kb", "update_row")
    );
    assert_eq!(last.payload["before"]["Active"], json!(false));
}

#[test]
fn kb_query_filters_and_sorts() {
    let (_d, _t, mut w) = setup();
    ok(
        &mut w,
        "kb_add_row",
        json!({"database": "Suppliers", "values": {"Name": "Acme", "Country": "BE", "Rating": 4, "Active": true}}),
    );
    let titles = |v: &Value| -> Vec<String> {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["values"]["Name"].as_str().unwrap().to_string())
            .collect()
    };
    let r = ok(
        &mut w,
        "kb_query",
        json!({"database": "Suppliers", "filter": [{"property": "Active", "op": "equals", "value": true}], "sort": [{"property": "Rating", "direction": "desc"}]}),
    );
    assert_eq!(titles(&r), ["Polder PCB", "Acme"]);
    let r = ok(
        &mut w,
        "kb_query",
        json!({"database": "Suppliers", "filter": [{"property": "Rating", "op": "lt", "value": 4.5}], "sort": [{"property": "Name"}]}),
    );
    assert_eq!(titles(&r), ["Acme", "Rhein Metall"]);
    let r = ok(
        &mut w,
        "kb_query",
        json!({"database": "Suppliers", "filter": [{"property": "Since", "op": "gt", "value": "2020-01-01"}]}),
    );
    assert_eq!(titles(&r), ["Polder PCB"]);
    let r = ok(
        &mut w,
        "kb_query",
        json!({"database": "Suppliers", "filter": [{"property": "Contact", "op": "is_empty"}, {"property": "Categories", "op": "equals", "value": "metal"}]}),
    );
    assert_eq!(titles(&r), ["Rhein Metall"]);
    let r = ok(
        &mut w,
        "kb_query",
        json!({"database": "Orders", "filter": [{"property": "Supplier", "op": "contains", "value": "polder"}]}),
    );
    assert_eq!(r["rows"][0]["values"]["Supplier"], json!(["Polder PCB"]));
    let e = err(
        &mut w,
        "kb_query",
        json!({"database": "Suppliers", "filter": [{"property": "Name", "op": "lt", "value": "b"}]}),
    );
    assert!(e.contains("numbers and dates"), "{e}");
    let e = err(
        &mut w,
        "kb_query",
        json!({"database": "Suppliers", "filter": [{"property": "Name", "op": "like", "value": "b"}]}),
    );
    assert!(e.contains("is_empty"), "{e}");
    let e = err(&mut w, "kb_query", json!({"database": "Vendors"}));
    assert!(e.contains("Orders, Suppliers"), "{e}");
}

#[test]
fn kb_pages_search_create_update_and_comment() {
    let (_d, _t, mut w) = setup();
    let r = ok(&mut w, "kb_search", json!({"query": "recalibrate s2"}));
    assert_eq!(r["pages"][0]["title"], "Sensor drift");
    let r = ok(&mut w, "kb_search", json!({"query": "polder"}));
    let dbs: Vec<&str> = r["databases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(dbs, ["Orders", "Suppliers"]);
    assert_eq!(r["databases"][1]["rows"][0]["title"], "Polder PCB");
    let p = ok(
        &mut w,
        "kb_create_page",
        json!({"title": "Badges", "parent": "Onboarding checklist", "content": "Ask Sofie."}),
    );
    let id = p["id"].as_str().unwrap().to_string();
    ok(
        &mut w,
        "kb_update_page",
        json!({"page": id, "content": "Bring an ID.", "mode": "append"}),
    );
    let r = ok(&mut w, "kb_read_page", json!({"page": "Badges"}));
    assert_eq!(r["content"], "Ask Sofie.\nBring an ID.");
    assert_eq!(r["path"], "Engineering / Onboarding checklist / Badges");
    ok(
        &mut w,
        "kb_update_page",
        json!({"page": "Badges", "content": "New."}),
    );
    assert_eq!(w.kb().find_page("Badges").unwrap().content, "New.");
    let r = ok(
        &mut w,
        "kb_read_page",
        json!({"page": "Onboarding checklist"}),
    );
    assert_eq!(r["children"][0]["title"], "Badges");
    ok(
        &mut w,
        "kb_comment",
        json!({"page": "Badges", "text": "Done?"}),
    );
    ok(
        &mut w,
        "kb_comment",
        json!({"database": "Orders", "row": "PO-19", "text": "Paid."}),
    );
    assert_eq!(
        w.kb().database("Orders").unwrap().rows[0].comments[0].text,
        "Paid."
    );
    let e = err(&mut w, "kb_comment", json!({"text": "x"}));
    assert!(e.contains("`page`"), "{e}");
    let e = err(&mut w, "kb_read_page", json!({"page": "Nope"}));
    assert!(e.contains("kb_list_pages"), "{e}");
    let r = ok(&mut w, "kb_list_pages", json!({"parent": "Engineering"}));
    assert_eq!(r["pages"].as_array().unwrap().len(), 1);
}

#[test]
fn tracker_seed_and_tools_keep_a_history() {
    let (_d, _t, mut w) = setup();
    let i = w.tracker().issue("OPS-1").unwrap();
    assert_eq!(i.assignee.as_deref(), Some("mara@bw.test"));
    assert_eq!(i.comments[0].author, "jonas@bw.test");
    let r = ok(
        &mut w,
        "tracker_list_issues",
        json!({"cycle": "Sprint 14", "state": "started"}),
    );
    assert_eq!(r["count"], 1);
    let r = ok(&mut w, "tracker_list_issues", json!({"assignee": "@lena"}));
    assert_eq!(r["issues"][0]["key"], "OPS-2");
    let r = ok(
        &mut w,
        "tracker_create_issue",
        json!({"project": "operations", "title": "Label printer jams", "priority": "Urgent", "labels": ["BUG"], "assignee": "jonas", "cycle": "Sprint 15"}),
    );
    assert_eq!(r["key"], "OPS-3");
    assert_eq!(r["labels"], json!(["bug"]));
    assert_eq!(r["state"], "Backlog");

    let before = w.tracker().clone();
    let e = err(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-3", "state": "Doing"}),
    );
    assert!(
        e.contains("Backlog, Todo, In Progress, Done, Cancelled"),
        "{e}"
    );
    let e = err(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-3", "labels": ["urgent"]}),
    );
    assert!(e.contains("bug, supplier, customer"), "{e}");
    let e = err(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-3", "assignee": "nobody"}),
    );
    assert!(e.contains("jonas@bw.test (@jonas)"), "{e}");
    let e = err(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-3", "cycle": "Sprint 99"}),
    );
    assert!(e.contains("Sprint 14, Sprint 15"), "{e}");
    let e = err(&mut w, "tracker_get_issue", json!({"key": "OPS-99"}));
    assert!(e.contains("tracker_list_issues"), "{e}");
    assert_eq!(w.tracker(), &before, "failed calls change nothing");

    let r = ok(
        &mut w,
        "tracker_update_issue",
        json!({"key": "ops-3", "state": "in progress", "assignee": "", "add_labels": ["customer"], "estimate": 2}),
    );
    assert_eq!(r["changed"].as_array().unwrap().len(), 4);
    ok(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-3", "state": "Done"}),
    );
    let i = w.tracker().issue("OPS-3").unwrap();
    let states: Vec<(Value, Value)> = i
        .history
        .iter()
        .filter(|c| c.field == "state")
        .map(|c| (c.old.clone(), c.new.clone()))
        .collect();
    assert_eq!(
        states,
        [
            (Value::Null, json!("Backlog")),
            (json!("Backlog"), json!("In Progress")),
            (json!("In Progress"), json!("Done"))
        ]
    );
    assert!(i.history.iter().all(|c| c.by == "mara@bw.test"));
    assert_eq!(i.assignee, None);
    ok(
        &mut w,
        "tracker_comment",
        json!({"key": "OPS-3", "text": "Fixed by reseating the roll."}),
    );
    let r = ok(&mut w, "tracker_get_issue", json!({"key": "OPS-3"}));
    assert_eq!(r["comments"][0]["author"], "mara@bw.test");
    assert_eq!(r["state_category"], "completed");

    ok(
        &mut w,
        "tracker_create_cycle",
        json!({"project": "OPS", "name": "Sprint 16", "start": "2026-03-30", "end": "2026-04-10"}),
    );
    let e = err(
        &mut w,
        "tracker_create_cycle",
        json!({"project": "OPS", "name": "sprint 16", "start": "2026-03-30", "end": "2026-04-10"}),
    );
    assert!(e.contains("already"), "{e}");
    let r = ok(&mut w, "tracker_list_cycles", json!({"project": "OPS"}));
    let cycles = r["cycles"].as_array().unwrap();
    assert_eq!(cycles.len(), 3);
    // The world clock is 9 March (before turn 1 starts it is the first turn's time).
    assert_eq!(cycles[0]["status"], "current");
    assert_eq!(cycles[0]["open_issues"], 1);
    assert_eq!(cycles[1]["status"], "upcoming");
}

#[test]
fn a_colleague_acts_silently_on_day_two_and_it_shows_in_the_history() {
    let (_d, t, mut w) = setup();
    w.begin_turn(&t.turns[0]).unwrap();
    w.begin_turn(&t.turns[1]).unwrap();
    let i = w.tracker().issue("OPS-1").unwrap();
    assert_eq!(i.assignee.as_deref(), Some("lena@bw.test"));
    let last = i.history.last().unwrap();
    assert_eq!(last.field, "assignee");
    assert_eq!(last.by, "jonas@bw.test");
    assert_eq!(last.old, json!("mara@bw.test"));
    assert!(last.at.starts_with("2026-03-10T09:00:00"));
    let entries: Vec<_> = w.log().iter().filter(|e| e.turn == 2).collect();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].actor, Actor::Colleague("jonas@bw.test".into()));
    assert!(entries[0].silent);
    assert!(!entries[1].silent);
    let page = w.kb().find_page("Onboarding checklist").unwrap();
    assert_eq!(page.comments[0].author, "jonas@bw.test");
}

#[test]
fn snapshot_restore_gives_back_kb_and_tracker_state() {
    let (_d, _t, mut w) = setup();
    ok(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-1", "state": "Done"}),
    );
    ok(&mut w, "kb_create_page", json!({"title": "Notes"}));
    let snap = w.snapshot().unwrap();
    let (kb, tracker) = (w.kb().clone(), w.tracker().clone());
    ok(
        &mut w,
        "tracker_update_issue",
        json!({"key": "OPS-1", "state": "Cancelled"}),
    );
    ok(
        &mut w,
        "kb_update_row",
        json!({"database": "Suppliers", "row": "row-1", "values": {"Rating": 1}}),
    );
    ok(&mut w, "kb_create_page", json!({"title": "More"}));
    assert_ne!(w.kb(), &kb);
    w.restore(&snap).unwrap();
    assert_eq!(w.kb(), &kb);
    assert_eq!(w.tracker(), &tracker);
    // Counters are restored too: the next page gets the same id as before.
    let p = ok(&mut w, "kb_create_page", json!({"title": "Again"}));
    assert_eq!(p["id"], "page-7");
}

fn seed_error(files: &[(&str, &str)]) -> String {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("task");
    task(&dir);
    for (p, text) in files {
        write(&dir.join(p), text);
    }
    let t = Task::load(&dir).unwrap();
    World::build(&t, &d.path().join("trial"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_seeds_name_the_file_and_line() {
    let e = seed_error(&[(
        "world/kb/databases/Suppliers.csv",
        "Name,Country\nPolder PCB,NL\nRhein Metall,DE\nAcme,FR\n",
    )]);
    assert!(
        e.contains("Suppliers.csv:4") && e.contains("NL, DE, BE"),
        "{e}"
    );
    let e = seed_error(&[(
        "world/kb/databases/Suppliers.csv",
        "Name,Colour\nPolder PCB,red\n",
    )]);
    assert!(e.contains("Suppliers.csv:1") && e.contains("Colour"), "{e}");
    let e = seed_error(&[(
        "world/kb/databases/Orders.json",
        "{\"properties\": [{\"name\": \"Order\", \"type\": \"text\"}, {\"name\": \"N\", \"type\": \"number\"}],\n \"rows\": [\n  {\"Order\": \"a\", \"N\": 1},\n  {\"Order\": \"b\",\n   \"N\": \"x\"}\n ]}\n",
    )]);
    assert!(e.contains("Orders.json:4") && e.contains("`N`"), "{e}");
    let e = seed_error(&[(
        "world/kb/databases/Orders.json",
        "{\"properties\": [{\"name\": \"Order\", \"type\": \"txt\"}]}",
    )]);
    assert!(
        e.contains("Orders.json:1") && e.contains("unknown variant"),
        "{e}"
    );
    let e = seed_error(&[(
        "world/tracker/OPS.json",
        &TRACKER.replace("\"assignee\": \"mara\"", "\"assignee\": \"mallory\""),
    )]);
    assert!(e.contains("OPS.json:19") && e.contains("mallory"), "{e}");
    let e = seed_error(&[("world/tracker/OPS.json", "{\"key\": \"OPS\",\n \"nme\": 1}")]);
    assert!(e.contains("OPS.json:2"), "{e}");
    let e = seed_error(&[("world/kb/pages/notes.txt", "hello")]);
    assert!(e.contains("notes.txt") && e.contains(".md"), "{e}");
}

mod typed_values {
    use super::*;
    use proptest::prelude::*;

    fn any_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-1.0e6..1.0e6f64).prop_map(|x| json!(x)),
            "[a-zA-Z0-9 ,.%€-]{0,12}".prop_map(Value::String),
            prop::sample::select(vec![
                "NL",
                "be",
                "yes",
                "no",
                "2026-03-02",
                "lena",
                "@jonas",
                "pcb, metal",
                "1,250",
                "Polder PCB"
            ])
            .prop_map(|s| json!(s)),
            prop::collection::vec(
                prop::sample::select(vec!["pcb", "assembly", "metal", "x"]),
                0..3
            )
            .prop_map(|v| json!(v)),
        ]
    }

    fn fits(kind: &str, v: &Value) -> bool {
        match kind {
            "text" | "select" | "date" | "person" => v.is_null() || v.is_string(),
            "number" => v.is_null() || v.is_number(),
            "checkbox" => v.is_null() || v.is_boolean(),
            _ => v
                .as_array()
                .is_some_and(|a| a.iter().all(|x| x.is_string())),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the agent sends, kb_add_row either stores values of the property's type
        /// (select values among the options) or fails without changing the knowledge base.
        #[test]
        fn add_row_stores_typed_values_or_changes_nothing(
            values in prop::collection::vec(any_value(), 6)
        ) {
            let (_d, _t, mut w) = setup();
            let names = ["Country", "Rating", "Active", "Contact", "Since", "Categories"];
            let mut obj = serde_json::Map::new();
            obj.insert("Name".into(), json!("Prop supplier"));
            for (n, v) in names.iter().zip(&values) {
                obj.insert((*n).into(), v.clone());
            }
            let before = w.kb().clone();
            match w.call_tool(Actor::Agent, "kb_add_row", &json!({"database": "Suppliers", "values": obj})) {
                ToolOutcome::Ok { .. } => {
                    let db = w.kb().database("Suppliers").unwrap();
                    let row = db.rows.last().unwrap();
                    for p in &db.properties {
                        let v = &row.values[&p.name];
                        prop_assert!(fits(p.kind.name(), v), "{} = {v}", p.name);
                        if p.kind.name() == "select" && !v.is_null() {
                            prop_assert!(p.options.iter().any(|o| v == o), "{v} not an option");
                        }
                    }
                }
                ToolOutcome::Error { message } => {
                    prop_assert_eq!(w.kb(), &before);
                    prop_assert!(names.iter().any(|n| message.contains(&format!("`{n}`"))), "{}", message);
                }
            }
        }
    }
}
