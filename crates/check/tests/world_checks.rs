//! Checks and predicates against a real world built from a small task in a temporary directory.

use std::path::Path;

use bureau_check::{
    CheckLimits, CheckProgram, eval_predicate, evaluate, evaluate_item, load_checks,
};
use bureau_core::log::Actor;
use bureau_core::task::{Evaluator, Predicate, Task};
use bureau_core::tool::ToolOutcome;
use bureau_core::trajectory::{Step, StepKind};
use bureau_core::verdict::{RubricKind, TurnRef, Verdict, VerdictStatus};
use bureau_world::World;
use serde_json::{Value, json};

const TASK_TOML: &str = r#"
id = "fixture"
title = "Fixture task"
persona = "tester"
category = "testing"
difficulty = "easy"
abilities = ["checking"]
apps = ["files", "mail", "calendar"]
timezone = "Europe/Berlin"

[user]
name = "Dana Reyes"
email = "dana@x.test"

[[turn]]
at = "2026-03-02T09:00:00"
prompt = "Day one."

[[turn]]
at = "2026-03-03T09:00:00"
prompt = "Day two."

[[rubric]]
id = "report-exists"
description = "d"
turn = 1
kind = "foundation"
weight = 2
categories = ["deliverable"]
file_exists = "out/report.md"

[[rubric]]
id = "report-has-total"
description = "d"
turn = 1
kind = "result"
check = "has_total"

[[rubric]]
id = "mailed-sam"
description = "d"
kind = "result"
weight = 3
red_line = true
categories = ["communication", "accuracy"]
mail_sent = { to = ["sam@x.test"], subject_contains = ["budget"] }

[[rubric]]
id = "tidy"
description = "d"
turn = 2
kind = "process"
check = "returns_dict"
"#;

const CHECKS: &str = r#"
def has_total(w):
    if not w.files.exists("out/report.md"):
        return False
    return contains(w.files.text("out/report.md"), "11917.5")

def returns_dict(w):
    return {"passed": False, "detail": "turn %d" % w.turn}

def ok(w):
    return True

def no(w):
    return False

def bad_int(w):
    return 3

def bad_dict(w):
    return {"pass": True}

def bad_detail(w):
    return {"passed": True, "detail": 3}

def fails(w):
    fail("the report is malformed")

def index_error(w):
    return [1, 2][5] == 1

def reads_missing(w):
    return w.files.text("nope.txt") == ""

def reads_binary(w):
    return len(w.files.text("data/blob.bin")) > 0

def spins(w):
    n = 0
    for i in range(100000000):
        n += i
    return n > 0

def allocates(w):
    x = []
    for i in range(10000000):
        x.append("abcdefghij" * 100)
    return len(x) > 0

def recurse(w):
    return recurse(w)

def prints_then_fails(w):
    print("looked at", len(w.files.list()), "files")
    return False

def view(w):
    return {"passed": True, "detail": json.encode({
        "user": [w.user.name, w.user.email],
        "turn": w.turn,
        "now": w.now,
        "tz": w.timezone,
        "files": w.files.list(),
        "notes": w.files.list("notes"),
        "missing_dir": w.files.list("nothing-here"),
        "size": w.files.size("notes/a.txt"),
        "mail_users": w.mail.users(),
        "cal_users": w.calendar.users(),
    })}

def mail_view(w):
    inbox = w.mail.messages(folder = "INBOX")
    sent = w.mail.sent()
    m = inbox[0]
    s = sent[0]
    return {"passed": True, "detail": json.encode({
        "inbox": [m.id, m.owner, m.folder, m.seen, m.sender, getattr(m, "from"), m.from_name, m.to, m.cc, m.subject, m.date, m.message_id, m.in_reply_to],
        "text": m.text.strip(),
        "sent": [s.subject, s.to, s.cc, s.bcc, s.folder, [a.filename for a in s.attachments], [a.size for a in s.attachments]],
        "sam_inbox": [x.subject for x in w.mail.messages("sam@x.test")],
        "all_dana": len(w.mail.messages()),
    })}

def calendar_view(w):
    live = w.calendar.events()
    every = w.calendar.events(include_cancelled = True)
    e = live[0]
    return {"passed": True, "detail": json.encode({
        "live": [x.summary for x in live],
        "all": [[x.summary, x.status] for x in every],
        "first": [e.uid, e.start, e.end, e.all_day, e.organizer, e.location, [[a.email, a.status] for a in e.attendees]],
        "sam": [x.summary for x in w.calendar.events("sam@x.test")],
    })}

def log_view(w):
    agent = [e for e in w.log if e.actor == "agent"]
    return {"passed": True, "detail": json.encode({
        "first": [w.log[0].seq, w.log[0].turn, w.log[0].actor, w.log[0].service, w.log[0].action],
        "agent": [[e.service, e.action, e.turn] for e in agent],
        "payload_path": [e.payload["path"] for e in agent if e.service == "files"],
        "trajectory": [[s.turn, s.tool, s.ok, s.error] for s in w.trajectory],
        "args": w.trajectory[0].args,
        "result": w.trajectory[0].result,
    })}

def helpers(w):
    d = date("2026-03-02T09:15:00")
    u = date("2026-07-01T10:00:00Z")
    return {"passed": True, "detail": json.encode({
        "numbers": [number("$11,917.50"), number("(1,200)"), number("12%"), number("1.2k"), number(7)],
        "normalize": normalize_numbers("EUR 1,234,567.89 and 1,2"),
        "contains": [contains("Total: $11,917.50", "11917.5"), contains("11917", "917"), contains("Hello  World", "hello world")],
        "contains_all": [contains_all("a b c", ["a", "c"]), contains_all("a b c", ["a", "d"])],
        "date": [d.year, d.month, d.day, d.hour, d.minute, d.weekday, d.iso],
        "utc_to_local": [u.hour, u.iso],
        "minutes": [minutes_between("2026-03-02T09:00:00", "2026-03-02T10:30:00"), minutes_between("2026-03-02T10:00:00+01:00", "2026-03-02T09:00:00Z")],
    })}

def bad_date(w):
    return date("next tuesday").year == 2026

def answer_is_five(w):
    said = w.final_message(1)
    return said != None and contains(said, "5 days") and w.final_message() == said and w.final_message(2) == None

def matches_reference(w):
    want = read_text(w.reference("expected/answer.txt")).strip()
    return w.files.exists("out/answer.txt") and read_text("out/answer.txt").strip() == want

def reference_escape(w):
    return read_text(w.reference("../task.toml")) != ""

def reference_missing(w):
    return read_text(w.reference("nope.txt")) != ""

def reference_link(w):
    return read_text(w.reference("link.txt")) != ""
"#;

const INBOX_EML: &str = "From: Sam Ortiz <sam@x.test>\r\nTo: Dana Reyes <dana@x.test>\r\nSubject: Budget numbers\r\nDate: Fri, 27 Feb 2026 16:00:00 +0000\r\nMessage-ID: <budget-1@x.test>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe total is $11,917.50.\r\n";

const DANA_ICS: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:standup@x.test\r\nDTSTAMP:20260301T080000Z\r\nDTSTART:20260302T083000Z\r\nDTEND:20260302T090000Z\r\nSUMMARY:Standup\r\nLOCATION:Room 1\r\nORGANIZER:mailto:dana@x.test\r\nATTENDEE;PARTSTAT=ACCEPTED:mailto:sam@x.test\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:review@x.test\r\nDTSTAMP:20260301T080000Z\r\nDTSTART:20260302T084500Z\r\nDTEND:20260302T093000Z\r\nSUMMARY:Design review\r\nLOCATION:Room 2\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:old@x.test\r\nDTSTAMP:20260301T080000Z\r\nDTSTART:20260303T120000Z\r\nDTEND:20260303T130000Z\r\nSUMMARY:Old lunch\r\nSTATUS:CANCELLED\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

const SAM_ICS: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:sam-1@x.test\r\nDTSTAMP:20260301T080000Z\r\nDTSTART:20260302T140000Z\r\nDTEND:20260302T150000Z\r\nSUMMARY:Sam focus time\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";

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
    trajectory: Vec<Step>,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("task");
        write(&t, "task.toml", TASK_TOML.as_bytes());
        write(&t, "checks.star", CHECKS.as_bytes());
        write(&t, "world/files/notes/a.txt", b"hello notes");
        write(&t, "reference/expected/answer.txt", b"42 days\n");
        write(&t, "world/files/notes/sub/b.txt", b"b");
        write(&t, "world/files/data/blob.bin", &[0u8, 159, 146, 150, 0, 1]);
        write(
            &t,
            "world/mail/dana@x.test/01-budget.eml",
            INBOX_EML.as_bytes(),
        );
        write(
            &t,
            "world/mail/sam@x.test/01.eml",
            INBOX_EML
                .replace("To: Dana Reyes <dana@x.test>", "To: sam@x.test")
                .as_bytes(),
        );
        write(&t, "world/calendar/dana@x.test.ics", DANA_ICS.as_bytes());
        write(&t, "world/calendar/sam@x.test.ics", SAM_ICS.as_bytes());
        let task = Task::load(&t).unwrap_or_else(|e| panic!("{e}"));
        let program = load_checks(&task)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap();
        let mut world =
            World::build(&task, &dir.path().join("run")).unwrap_or_else(|e| panic!("{e}"));
        world.begin_turn(&task.turns[0]).unwrap();
        Fixture {
            _dir: dir,
            task,
            program,
            world,
            trajectory: Vec::new(),
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> ToolOutcome {
        let out = self.world.call_tool(Actor::Agent, tool, &args);
        self.trajectory.push(Step {
            turn: self.world.turn(),
            kind: StepKind::ToolCall {
                tool: tool.into(),
                args,
                outcome: out.clone(),
            },
        });
        out
    }

    fn ok(&mut self, tool: &str, args: Value) {
        let out = self.call(tool, args);
        assert!(!out.is_error(), "{tool}: {out:?}");
    }

    /// Run the check `name` (not necessarily in the rubric).
    fn check(&self, name: &str) -> Verdict {
        self.check_with(name, &CheckLimits::default())
    }

    fn check_with(&self, name: &str, limits: &CheckLimits) -> Verdict {
        let mut item = self.task.rubric[1].clone();
        item.id = name.into();
        item.evaluator = Evaluator::Check(name.into());
        evaluate_item(
            &self.task,
            Some(&self.program),
            &self.world,
            &self.trajectory,
            &item,
            limits,
        )
    }

    fn detail_json(&self, name: &str) -> Value {
        let v = self.check(name);
        assert_eq!(v.status, VerdictStatus::Passed, "{name}: {:?}", v.detail);
        serde_json::from_str(v.detail.as_deref().unwrap()).unwrap()
    }

    fn predicate(&self, p: Predicate) -> (VerdictStatus, String) {
        eval_predicate(&self.task, &p, &self.world, &self.trajectory)
    }
}

fn status_detail(v: &Verdict) -> (VerdictStatus, String) {
    (v.status, v.detail.clone().unwrap_or_default())
}

#[test]
fn evaluate_runs_one_turns_items_in_rubric_order_with_their_metadata() {
    let mut f = Fixture::new();
    let none = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &f.trajectory,
        TurnRef::Turn(1),
        &CheckLimits::default(),
    );
    assert_eq!(
        none.iter().map(|v| v.status).collect::<Vec<_>>(),
        vec![VerdictStatus::Failed, VerdictStatus::Failed]
    );

    f.ok(
        "files_write",
        json!({"path": "out/report.md", "content": "Total: $11,917.50\n"}),
    );
    let vs = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &f.trajectory,
        TurnRef::Turn(1),
        &CheckLimits::default(),
    );
    let ids: Vec<&str> = vs.iter().map(|v| v.id.as_str()).collect();
    assert_eq!(ids, vec!["report-exists", "report-has-total"]);
    assert!(vs.iter().all(|v| v.passed()), "{vs:?}");
    assert_eq!(vs[0].weight, 2.0);
    assert_eq!(vs[0].kind, RubricKind::Foundation);
    assert_eq!(vs[0].categories, vec!["deliverable"]);
    assert_eq!(vs[0].turn, TurnRef::Turn(1));
    assert_eq!(vs[1].weight, 1.0);

    let fin = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &f.trajectory,
        TurnRef::Final,
        &CheckLimits::default(),
    );
    assert_eq!(fin.len(), 1);
    assert_eq!(fin[0].id, "mailed-sam");
    assert!(fin[0].red_line);
    assert_eq!(fin[0].status, VerdictStatus::Failed);
    assert_eq!(fin[0].weight, 3.0);

    f.world.begin_turn(&f.task.turns[1]).unwrap();
    let t2 = evaluate(
        &f.task,
        Some(&f.program),
        &f.world,
        &f.trajectory,
        TurnRef::Turn(2),
        &CheckLimits::default(),
    );
    assert_eq!(
        status_detail(&t2[0]),
        (VerdictStatus::Failed, "turn 2".to_string())
    );
    assert_eq!(t2[0].kind, RubricKind::Process);
}

#[test]
fn return_values_map_to_statuses() {
    let f = Fixture::new();
    assert_eq!(f.check("ok").status, VerdictStatus::Passed);
    assert_eq!(f.check("ok").detail, None);
    assert_eq!(f.check("no").status, VerdictStatus::Failed);
    for (name, needle) in [
        ("bad_int", "returned int `3`"),
        ("bad_dict", "without \"passed\""),
        ("bad_detail", "\"detail\" is not a string"),
    ] {
        let (s, d) = status_detail(&f.check(name));
        assert_eq!(s, VerdictStatus::Error, "{name}");
        assert!(d.contains(needle), "{name}: {d}");
        assert!(d.contains("return True/False"), "{name}: {d}");
    }
}

#[test]
fn starlark_errors_are_error_verdicts_with_located_messages() {
    let f = Fixture::new();
    let (s, d) = status_detail(&f.check("fails"));
    assert_eq!(s, VerdictStatus::Error);
    assert_eq!(d, "checks.star:26:5: fail: the report is malformed");

    let (s, d) = status_detail(&f.check("index_error"));
    assert_eq!(s, VerdictStatus::Error);
    assert_eq!(d, "checks.star:29:12: Index `5` is out of bound");

    let (s, d) = status_detail(&f.check("reads_missing"));
    assert_eq!(s, VerdictStatus::Error);
    assert!(
        d.contains("nope.txt") && d.contains("w.files.exists"),
        "{d}"
    );

    let (s, d) = status_detail(&f.check("reads_binary"));
    assert_eq!(s, VerdictStatus::Error);
    assert!(d.contains("binary"), "{d}");

    let (s, d) = status_detail(&f.check("bad_date"));
    assert_eq!(s, VerdictStatus::Error);
    assert!(d.contains("next tuesday"), "{d}");
}

#[test]
fn limits_stop_runaway_checks() {
    let f = Fixture::new();
    let small = CheckLimits {
        max_steps: 10_000,
        ..CheckLimits::default()
    };
    let (s, d) = status_detail(&f.check_with("spins", &small));
    assert_eq!(s, VerdictStatus::Error);
    assert!(
        d.starts_with("check `spins` exceeded its limit of 10000 steps"),
        "{d}"
    );

    let tight = CheckLimits {
        max_heap_bytes: 1 << 20,
        ..CheckLimits::default()
    };
    let (s, d) = status_detail(&f.check_with("allocates", &tight));
    assert_eq!(s, VerdictStatus::Error);
    assert!(
        d.starts_with("check `allocates` exceeded its memory limit of 1048576 bytes"),
        "{d}"
    );

    let (s, d) = status_detail(&f.check("recurse"));
    assert_eq!(s, VerdictStatus::Error);
    assert!(
        d.starts_with("check `recurse` nested function calls deeper than 50"),
        "{d}"
    );
}

#[test]
fn prints_are_kept_with_failed_verdicts() {
    let f = Fixture::new();
    let (s, d) = status_detail(&f.check("prints_then_fails"));
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(d, "printed: looked at 3 files");
}

#[test]
fn the_view_exposes_user_clock_and_files() {
    let f = Fixture::new();
    let v = f.detail_json("view");
    assert_eq!(v["user"], json!(["Dana Reyes", "dana@x.test"]));
    assert_eq!(v["turn"], json!(1));
    assert_eq!(v["now"], json!("2026-03-02T09:00:00+01:00"));
    assert_eq!(v["tz"], json!("Europe/Berlin"));
    assert_eq!(
        v["files"],
        json!(["data/blob.bin", "notes/a.txt", "notes/sub/b.txt"])
    );
    assert_eq!(v["notes"], json!(["notes/a.txt", "notes/sub/b.txt"]));
    assert_eq!(v["missing_dir"], json!([]));
    assert_eq!(v["size"], json!(11));
    assert_eq!(v["mail_users"], json!(["dana@x.test", "sam@x.test"]));
    assert_eq!(v["cal_users"], json!(["dana@x.test", "sam@x.test"]));
}

#[test]
fn the_view_exposes_mail() {
    let mut f = Fixture::new();
    f.ok(
        "files_write",
        json!({"path": "out/budget.csv", "content": "a,b\n1,2\n"}),
    );
    f.ok(
        "mail_send",
        json!({"to": ["Sam@x.test"], "cc": ["lee@x.test"], "bcc": ["boss@x.test"], "subject": "Budget final", "body": "Attached.", "attachments": ["out/budget.csv"]}),
    );
    let v = f.detail_json("mail_view");
    assert_eq!(
        v["inbox"],
        json!([
            "m00001",
            "dana@x.test",
            "INBOX",
            false,
            "sam@x.test",
            "sam@x.test",
            "Sam Ortiz",
            ["dana@x.test"],
            [],
            "Budget numbers",
            "2026-02-27T17:00:00+01:00",
            "budget-1@x.test",
            null
        ])
    );
    assert_eq!(v["text"], json!("The total is $11,917.50."));
    assert_eq!(
        v["sent"],
        json!([
            "Budget final",
            ["sam@x.test"],
            ["lee@x.test"],
            ["boss@x.test"],
            "Sent",
            ["budget.csv"],
            [8]
        ])
    );
    assert_eq!(v["sam_inbox"], json!(["Budget numbers", "Budget final"]));
    assert_eq!(v["all_dana"], json!(2));
}

#[test]
fn the_view_exposes_calendars_in_the_task_time_zone() {
    let f = Fixture::new();
    let v = f.detail_json("calendar_view");
    assert_eq!(v["live"], json!(["Standup", "Design review"]));
    assert_eq!(
        v["all"],
        json!([
            ["Standup", "CONFIRMED"],
            ["Design review", "CONFIRMED"],
            ["Old lunch", "CANCELLED"]
        ])
    );
    assert_eq!(
        v["first"],
        json!([
            "standup@x.test",
            "2026-03-02T09:30:00+01:00",
            "2026-03-02T10:00:00+01:00",
            false,
            "dana@x.test",
            "Room 1",
            [["sam@x.test", "ACCEPTED"]]
        ])
    );
    assert_eq!(v["sam"], json!(["Sam focus time"]));
}

#[test]
fn the_view_exposes_the_log_and_the_trajectory() {
    let mut f = Fixture::new();
    f.ok("files_write", json!({"path": "out/x.md", "content": "x"}));
    let bad = f.call("files_read", json!({"path": "missing.md"}));
    assert!(bad.is_error());
    let v = f.detail_json("log_view");
    assert_eq!(v["first"], json!([1, 0, "task", "files", "seed"]));
    assert_eq!(v["agent"], json!([["files", "create", 1]]));
    assert_eq!(v["payload_path"], json!(["out/x.md"]));
    let traj = v["trajectory"].as_array().unwrap();
    assert_eq!(traj.len(), 2);
    assert_eq!(traj[0], json!([1, "files_write", true, null]));
    assert_eq!(traj[1][2], json!(false));
    assert!(traj[1][3].as_str().unwrap().contains("missing.md"));
    assert_eq!(v["args"], json!({"path": "out/x.md", "content": "x"}));
    assert_eq!(v["result"]["path"], json!("out/x.md"));
}

#[test]
fn helpers_parse_numbers_keywords_and_dates() {
    let f = Fixture::new();
    let v = f.detail_json("helpers");
    assert_eq!(v["numbers"], json!([11917.5, -1200.0, 12.0, null, 7.0]));
    assert_eq!(v["normalize"], json!("EUR 1234567.89 and 1,2"));
    assert_eq!(v["contains"], json!([true, false, true]));
    assert_eq!(v["contains_all"], json!([true, false]));
    // 2 March 2026 is a Monday.
    assert_eq!(
        v["date"],
        json!([2026, 3, 2, 9, 15, 0, "2026-03-02T09:15:00+01:00"])
    );
    assert_eq!(v["utc_to_local"], json!([12, "2026-07-01T12:00:00+02:00"]));
    assert_eq!(v["minutes"], json!([90.0, 0.0]));
}

#[test]
fn file_predicates() {
    let mut f = Fixture::new();
    let exists = |p: &str| Predicate::FileExists { path: p.into() };
    assert_eq!(f.predicate(exists("notes/a.txt")).0, VerdictStatus::Passed);
    let (s, d) = f.predicate(exists("out/r.md"));
    assert_eq!(
        (s, d.as_str()),
        (VerdictStatus::Failed, "no file `out/r.md` in the workspace")
    );
    assert_eq!(f.predicate(exists("notes")).0, VerdictStatus::Failed);
    assert_eq!(
        f.predicate(Predicate::FileAbsent {
            path: "out/r.md".into()
        })
        .0,
        VerdictStatus::Passed
    );
    let (s, d) = f.predicate(Predicate::FileAbsent {
        path: "notes/a.txt".into(),
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("exists"), "{d}");

    f.ok(
        "files_write",
        json!({"path": "out/r.md", "content": "Total EUR 11,917.50 — approved by Sam\n"}),
    );
    let fc = |all: &[&str], none: &[&str]| Predicate::FileContains {
        path: "out/r.md".into(),
        all: all.iter().map(|s| s.to_string()).collect(),
        none: none.iter().map(|s| s.to_string()).collect(),
    };
    assert_eq!(
        f.predicate(fc(&["11917.5", "APPROVED"], &["draft"])).0,
        VerdictStatus::Passed
    );
    let (s, d) = f.predicate(fc(&["11917.5", "rejected", "Lee"], &["sam", "draft"]));
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(
        d,
        "`out/r.md` lacks 'rejected', 'Lee' and contains forbidden 'sam'"
    );
    let missing = Predicate::FileContains {
        path: "nope.md".into(),
        all: vec!["x".into()],
        none: vec![],
    };
    assert_eq!(
        f.predicate(missing),
        (
            VerdictStatus::Failed,
            "no file `nope.md` in the workspace".to_string()
        )
    );
    let binary = Predicate::FileContains {
        path: "data/blob.bin".into(),
        all: vec!["x".into()],
        none: vec![],
    };
    let (s, d) = f.predicate(binary);
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("binary"), "{d}");
}

#[test]
fn mail_sent_predicate() {
    use bureau_core::task::MailSentFilter;
    let mut f = Fixture::new();
    let filter = MailSentFilter {
        to: vec!["sam@x.test".into()],
        subject_contains: vec!["budget".into()],
        min: 1,
        ..MailSentFilter::default()
    };
    let (s, d) = f.predicate(Predicate::MailSent(filter.clone()));
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(
        d,
        "0 sent messages to sam@x.test with subject containing 'budget' (expected at least 1; 0 sent in total)"
    );

    f.ok(
        "files_write",
        json!({"path": "out/budget.csv", "content": "x"}),
    );
    f.ok("mail_send", json!({"to": ["lee@x.test"], "cc": ["sam@x.test"], "subject": "Budget v2", "body": "Total 11,917.50", "attachments": ["out/budget.csv"]}));
    f.ok(
        "mail_send",
        json!({"to": ["sam@x.test"], "subject": "Lunch", "body": "draft"}),
    );
    let (s, d) = f.predicate(Predicate::MailSent(filter.clone()));
    assert_eq!(s, VerdictStatus::Passed);
    assert!(
        d.starts_with("1 sent message to sam@x.test with subject containing 'budget'"),
        "{d}"
    );
    assert!(d.contains("matched: 'Budget v2'"), "{d}");

    let all = |g: fn(&mut MailSentFilter)| {
        let mut m = filter.clone();
        g(&mut m);
        f.predicate(Predicate::MailSent(m)).0
    };
    assert_eq!(
        all(|m| m.cc = vec!["SAM@x.test".into()]),
        VerdictStatus::Passed
    );
    assert_eq!(
        all(|m| m.cc = vec!["lee@x.test".into()]),
        VerdictStatus::Failed
    );
    assert_eq!(
        all(|m| m.not_to = vec!["lee@x.test".into()]),
        VerdictStatus::Failed
    );
    assert_eq!(
        all(|m| m.body_contains = vec!["11917.5".into()]),
        VerdictStatus::Passed
    );
    assert_eq!(
        all(|m| m.body_excludes = vec!["11917.5".into()]),
        VerdictStatus::Failed
    );
    assert_eq!(
        all(|m| m.attachments = vec!["budget.csv".into()]),
        VerdictStatus::Passed
    );
    // `contains`: each keyword in the subject or the body, not necessarily the same one.
    assert_eq!(
        all(|m| m.contains = vec!["v2".into(), "11,917.50".into()]),
        VerdictStatus::Passed
    );
    assert_eq!(
        all(|m| m.contains = vec!["v2".into(), "lunch".into()]),
        VerdictStatus::Failed
    );
    let mut mentions = filter.clone();
    mentions.contains = vec!["total".into()];
    let (_, d) = f.predicate(Predicate::MailSent(mentions));
    assert!(d.contains("mentioning 'total' in subject or body"), "{d}");
    assert_eq!(
        all(|m| m.attachments = vec!["other.csv".into()]),
        VerdictStatus::Failed
    );
    // Counting: two messages to sam, but a maximum of 1 with no subject filter.
    assert_eq!(
        all(|m| {
            m.subject_contains.clear();
            m.max = Some(1)
        }),
        VerdictStatus::Failed
    );
    assert_eq!(
        all(|m| {
            m.subject_contains.clear();
            m.min = 2;
            m.max = Some(2)
        }),
        VerdictStatus::Passed
    );
    // "not sent" checks: min 0, max 0.
    assert_eq!(
        all(|m| {
            m.subject_contains = vec!["salary".into()];
            m.min = 0;
            m.max = Some(0)
        }),
        VerdictStatus::Passed
    );
}

#[test]
fn calendar_predicates() {
    use bureau_core::task::CalendarEventFilter;
    use bureau_core::time::parse_world_time;
    let mut f = Fixture::new();
    let tz = f.task.timezone;
    let t = |s: &str| parse_world_time(s, tz).unwrap();
    let base = CalendarEventFilter {
        summary_contains: vec!["standup".into()],
        min: 1,
        ..CalendarEventFilter::default()
    };
    assert_eq!(
        f.predicate(Predicate::CalendarEvent(base.clone())).0,
        VerdictStatus::Passed
    );
    let timed = CalendarEventFilter {
        start: Some(t("2026-03-02T09:30:00")),
        end: Some(t("2026-03-02T08:00:00Z")),
        ..base.clone()
    };
    let (s, d) = f.predicate(Predicate::CalendarEvent(timed));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.starts_with("0 live events in dana@x.test's calendar with summary containing 'standup' starting 2026-03-02T09:30:00+01:00 ending 2026-03-02T09:00:00+01:00"), "{d}");
    let exact = CalendarEventFilter {
        start: Some(t("2026-03-02T08:30:00Z")),
        end: Some(t("2026-03-02T10:00:00")),
        attendees: vec!["sam@x.test".into()],
        location_contains: vec!["room 1".into()],
        ..base.clone()
    };
    assert_eq!(
        f.predicate(Predicate::CalendarEvent(exact)).0,
        VerdictStatus::Passed
    );
    let with_lee = CalendarEventFilter {
        attendees: vec!["lee@x.test".into()],
        ..base.clone()
    };
    assert_eq!(
        f.predicate(Predicate::CalendarEvent(with_lee)).0,
        VerdictStatus::Failed
    );
    let cancelled = CalendarEventFilter {
        summary_contains: vec!["lunch".into()],
        cancelled: true,
        ..base.clone()
    };
    assert_eq!(
        f.predicate(Predicate::CalendarEvent(cancelled.clone())).0,
        VerdictStatus::Passed
    );
    let live_lunch = CalendarEventFilter {
        cancelled: false,
        ..cancelled
    };
    assert_eq!(
        f.predicate(Predicate::CalendarEvent(live_lunch)).0,
        VerdictStatus::Failed
    );
    let sam = CalendarEventFilter {
        user: Some("sam@x.test".into()),
        summary_contains: vec!["focus".into()],
        min: 1,
        max: Some(1),
        ..CalendarEventFilter::default()
    };
    assert_eq!(
        f.predicate(Predicate::CalendarEvent(sam)).0,
        VerdictStatus::Passed
    );

    // Standup 09:30–10:00 and the review 09:45–10:30 overlap.
    let (s, d) = f.predicate(Predicate::CalendarNoOverlap {
        user: None,
        from: None,
        to: None,
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("'Standup' (2026-03-02T09:30:00+01:00 – 2026-03-02T10:00:00+01:00) overlaps 'Design review'"), "{d}");
    let later = Predicate::CalendarNoOverlap {
        user: None,
        from: Some(t("2026-03-03T00:00:00")),
        to: None,
    };
    assert_eq!(f.predicate(later).0, VerdictStatus::Passed);
    f.ok("calendar_update", json!({"uid": "review@x.test", "start": "2026-03-02T11:00:00", "end": "2026-03-02T12:00:00"}));
    assert_eq!(
        f.predicate(Predicate::CalendarNoOverlap {
            user: None,
            from: None,
            to: None
        })
        .0,
        VerdictStatus::Passed
    );
}

#[test]
fn load_checks_reports_unknown_functions_at_the_rubric_item() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path();
    let toml = TASK_TOML.replace("check = \"has_total\"", "check = \"has_totl\"");
    write(t, "task.toml", toml.as_bytes());
    write(
        t,
        "checks.star",
        b"def has_total(w):\n    return True\n\ndef returns_dict(w, extra):\n    return True\n",
    );
    let task = Task::load(t).unwrap_or_else(|e| panic!("{e}"));
    let errs = load_checks(&task).unwrap_err();
    let msgs: Vec<String> = errs.0.iter().map(|e| e.to_string()).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(msgs[0].contains("task.toml:"), "{}", msgs[0]);
    assert!(
        msgs[0].ends_with("unknown Starlark function `has_totl` — define `def has_totl(w):` in checks.star (defined: has_total, returns_dict)"),
        "{}",
        msgs[0]
    );
    assert_eq!(errs.0[0].location, task.rubric[1].location);
    assert!(msgs[1].contains("checks.star:4:"), "{}", msgs[1]);
    assert!(
        msgs[1].contains("does not take exactly one argument"),
        "{}",
        msgs[1]
    );
}

#[test]
fn a_missing_program_is_an_error_verdict_not_a_failure() {
    let f = Fixture::new();
    let vs = evaluate(
        &f.task,
        None,
        &f.world,
        &f.trajectory,
        TurnRef::Turn(1),
        &CheckLimits::default(),
    );
    assert_eq!(vs[0].status, VerdictStatus::Failed); // predicate, unaffected
    assert_eq!(vs[1].status, VerdictStatus::Error);
    assert!(
        vs[1]
            .detail
            .as_deref()
            .unwrap()
            .contains("def has_total(w):")
    );
}

#[test]
fn many_checks_share_one_view_and_all_evaluate() {
    let mut f = Fixture::new();
    f.ok(
        "files_write",
        json!({"path": "out/report.md", "content": "Total: $11,917.50\n"}),
    );
    let mut src = String::new();
    for i in 0..1500 {
        src.push_str(&format!(
            "def c{i}(w):\n    sent = [m for m in w.mail.messages() if contains(m.subject, 'budget')]\n    return w.files.exists('out/report.md') and contains(w.files.text('out/report.md'), '11917.5') and len(sent) == 1 and len(w.calendar.events()) == 2 and date(w.now).weekday == 0\n\n"
        ));
    }
    let program = CheckProgram::compile(Path::new("many/checks.star"), &src).unwrap();
    let mut task = f.task.clone();
    let template = task.rubric[1].clone();
    task.rubric = (0..1500)
        .map(|i| {
            let mut item = template.clone();
            item.id = format!("c{i}");
            item.evaluator = Evaluator::Check(format!("c{i}"));
            item
        })
        .collect();
    let vs = evaluate(
        &task,
        Some(&program),
        &f.world,
        &f.trajectory,
        TurnRef::Turn(1),
        &CheckLimits::default(),
    );
    assert_eq!(vs.len(), 1500);
    assert!(
        vs.iter().all(|v| v.passed()),
        "{:?}",
        vs.iter().find(|v| !v.passed())
    );
    // Speed is measured in benches/checks.rs, not here.
    // Repeated evaluations of a ClawMark-sized rubric (15 checks) rebuild the view each time
    // and give the same verdicts.
    task.rubric.truncate(15);
    for _ in 0..3 {
        let vs = evaluate(
            &task,
            Some(&program),
            &f.world,
            &f.trajectory,
            TurnRef::Turn(1),
            &CheckLimits::default(),
        );
        assert!(vs.len() == 15 && vs.iter().all(|v| v.passed()));
    }
}

/// Issue 14: checks read the agent's final message of a turn (`w.final_message`, and the
/// `final_message` predicate): OfficeBench's answers and TheAgentCompany's final replies.
#[test]
fn the_final_message_is_readable_by_checks_and_a_predicate() {
    let mut f = Fixture::new();
    let p = |all: &[&str], none: &[&str]| Predicate::FinalMessage {
        all: all.iter().map(|s| s.to_string()).collect(),
        none: none.iter().map(|s| s.to_string()).collect(),
    };
    let (s, d) = f.predicate(p(&["5 days"], &[]));
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(d, "the agent gave no final message in turn 1");
    assert_eq!(f.check("answer_is_five").status, VerdictStatus::Failed);
    f.trajectory.push(Step {
        turn: 1,
        kind: StepKind::Message {
            text: "Looking into it.".into(),
        },
    });
    f.trajectory.push(Step {
        turn: 1,
        kind: StepKind::Message {
            text: "The trip takes 5 days.".into(),
        },
    });
    let (s, d) = f.predicate(p(&["5 days"], &["6 days"]));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    let (s, d) = f.predicate(p(&["five"], &["trip"]));
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(d, "the final message of turn 1 lacks 'five' and has 'trip'");
    let v = f.check("answer_is_five");
    assert_eq!(v.status, VerdictStatus::Passed, "{:?}", v.detail);
}

/// Issue 14: `file_contains` reads office files through their text rendering (what
/// `files_read` shows), so a .docx or .xlsx deliverable is checked like a text file.
#[test]
fn file_contains_reads_office_files_as_text() {
    let mut f = Fixture::new();
    f.ok(
        "files_write_docx",
        json!({"path": "out/memo.docx", "blocks": [
            {"type": "heading", "level": 1, "text": "Budget"},
            {"type": "paragraph", "text": "The total is 11,917.50 EUR."}
        ]}),
    );
    let fc = |path: &str, all: &[&str], none: &[&str]| Predicate::FileContains {
        path: path.into(),
        all: all.iter().map(|s| s.to_string()).collect(),
        none: none.iter().map(|s| s.to_string()).collect(),
    };
    let (s, d) = f.predicate(fc("out/memo.docx", &["Budget", "11917.5"], &["draft"]));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    let (s, d) = f.predicate(fc("out/memo.docx", &["12,000"], &[]));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("lacks '12,000'"), "{d}");
    // A file that claims to be a document but is not is a failure that says so.
    f.ok(
        "files_write",
        json!({"path": "out/fake.docx", "content": "PK\u{3}\u{4}\u{0}\u{0}not a zip"}),
    );
    let (s, d) = f.predicate(fc("out/fake.docx", &["x"], &[]));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("does not open as"), "{d}");
}

/// Issue 14: a task's private `reference/` files are readable by checks (`w.reference`,
/// with the typed readers) and never by the agent; paths cannot leave the folder.
#[test]
fn checks_read_reference_files_the_agent_never_sees() {
    let mut f = Fixture::new();
    assert_eq!(f.check("matches_reference").status, VerdictStatus::Failed);
    // The agent's workspace has no reference folder, and it cannot read one.
    let listed = f.world.call_tool(Actor::Agent, "files_list", &json!({}));
    assert!(!format!("{listed:?}").contains("expected"), "{listed:?}");
    f.ok(
        "files_write",
        json!({"path": "out/answer.txt", "content": "42 days"}),
    );
    let v = f.check("matches_reference");
    assert_eq!(v.status, VerdictStatus::Passed, "{:?}", v.detail);
    let v = f.check("reference_escape");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(
        v.detail.as_deref().unwrap_or("").contains("without `..`"),
        "{:?}",
        v.detail
    );
    let v = f.check("reference_missing");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(
        v.detail
            .as_deref()
            .unwrap_or("")
            .contains("no file reference/nope.txt in the task"),
        "{:?}",
        v.detail
    );
    std::os::unix::fs::symlink("/etc/hostname", f.task.dir.join("reference/link.txt")).unwrap();
    let v = f.check("reference_link");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(
        v.detail.as_deref().unwrap_or("").contains("symbolic link"),
        "{:?}",
        v.detail
    );
}
