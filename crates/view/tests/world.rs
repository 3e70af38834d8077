//! The world view over real trials (the oracle of bundled tasks, run here) and over broken
//! trial directories.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bureau_run::{RunConfig, run, trial_dir};
use bureau_view::world::{
    Stage, Status, WorldChanges, file_preview, object_anchor, render_html, render_preview_html,
    stage_changes, turn_changes, turns,
};
use bureau_world::trial_files::TrialFiles;
use proptest::prelude::*;

const TASKS: [&str; 4] = [
    "starter/polder-visit-reschedule",
    "living/build-safety-change-order",
    "living/build-subcontractor-invoices",
    "intranet/calibration-mr-review",
];

/// One oracle run over [`TASKS`], shared by the tests of this file.
fn run_dir() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, out) = DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let suites = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites");
        let mut c = RunConfig::new(
            TASKS
                .iter()
                .map(|t| suites.join(t).display().to_string())
                .collect(),
            vec!["oracle".into()],
            out.clone(),
        );
        c.quiet = true;
        c.retries = 0;
        let outcome = run(&c).unwrap();
        assert_eq!((outcome.total, outcome.passed), (TASKS.len(), TASKS.len()));
        (tmp, out)
    });
    out
}

fn trial(task: &str) -> PathBuf {
    trial_dir(run_dir(), task, "oracle", 1)
}

/// The files of a trial directory, packed or not.
fn files(dir: &Path) -> TrialFiles {
    TrialFiles::open(dir).unwrap()
}

/// A copy of a trial directory to break, unpacked: its files are those of a trial written
/// before trials were packed, which read the same.
fn copy_trial(task: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", trial(task).display()))
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(bureau_world::trial_files::unpack_in_place(tmp.path()).unwrap() > 0);
    tmp
}

#[test]
fn polder_turn_1_adds_the_agenda_and_mails_anouk() {
    let dir = trial("polder-visit-reschedule");
    assert_eq!(turns(&files(&dir)), vec![0, 1, 2]);
    let w = turn_changes(&files(&dir), 1);
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    assert_eq!(w.base.as_deref(), Some("snapshots/turn-0.json"));
    assert_eq!(w.since, Some(0));
    assert_eq!(w.note, None);
    let files: Vec<_> = w
        .files
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert_eq!(
        files,
        vec![("visits/2026-03-12-polder-agenda.md", Status::Added)]
    );
    let diff = w.files.files[0].diff.as_ref().unwrap();
    assert!(diff.added > 5 && diff.removed == 0, "{diff:?}");
    assert!(
        diff.hunks[0]
            .lines
            .iter()
            .any(|l| l.text.contains("Polder"))
    );
    // The agenda to Anouk and the visitors' note to reception, both sent by the user.
    assert!(
        w.mail.messages.iter().all(|m| m.direction == "sent"),
        "{:?}",
        w.mail.messages
    );
    let to: Vec<_> = w.mail.messages.iter().map(|m| m.to.join(",")).collect();
    assert_eq!(
        to,
        vec![
            "anouk.visser@polderpcb.test",
            "sofie.janssen@brightwater.test"
        ]
    );
    assert!(w.mail.messages[0].attachments[0].starts_with("2026-03-12-polder-agenda.md"));
    // Reading the two mails in the inbox is a flag change.
    let seen: Vec<_> = w
        .mail
        .changed
        .iter()
        .map(|o| (o.key.as_str(), o.fields[0].path.as_str()))
        .collect();
    assert_eq!(seen, vec![("m00001", "seen"), ("m00002", "seen")]);
    assert!(w.calendar.events.is_empty(), "{:?}", w.calendar.events);
    assert!(w.chat.is_empty() && w.kb.is_empty() && w.sheets.is_empty());
    assert!(
        w.tracker.is_empty() && w.code.is_empty() && w.other.is_empty(),
        "{:?}",
        w.other
    );
}

#[test]
fn polder_turn_2_moves_the_visit() {
    let dir = trial("polder-visit-reschedule");
    let w = turn_changes(&files(&dir), 2);
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    let visit: Vec<_> = w
        .calendar
        .events
        .iter()
        .filter(|e| e.uid == "polder-visit-20260312@brightwater.test")
        .collect();
    // One change, seen in the three calendars holding the event.
    assert_eq!(visit.len(), 1, "{:?}", w.calendar.events);
    assert_eq!(visit[0].status, "changed");
    assert_eq!(visit[0].owners.len(), 3, "{:?}", visit[0].owners);
    assert_eq!(visit[0].was.as_deref(), Some("Thu 12 Mar 2026 10:00–12:00"));
    assert_eq!(visit[0].when, "Wed 18 Mar 2026 09:30–11:30");
    assert_eq!(
        visit[0].anchor,
        object_anchor("event", "polder-visit-20260312@brightwater.test")
    );
    let paths: Vec<_> = visit[0].fields.iter().map(|f| f.path.as_str()).collect();
    assert!(
        paths.contains(&"start") && paths.contains(&"end"),
        "{paths:?}"
    );
    // The week of the clock shows where it was; the next week where it went.
    let marks: Vec<_> = w
        .calendar
        .weeks
        .iter()
        .flat_map(|wk| wk.days.iter())
        .flat_map(|d| {
            d.events
                .iter()
                .map(move |e| (d.date.as_str(), e.mark, e.moved, e.summary.as_str()))
        })
        .filter(|e| e.3.starts_with("Polder PCB visit"))
        .collect();
    assert!(
        marks.contains(&(
            "2026-03-12",
            "deleted",
            true,
            "Polder PCB visit - line audit S2 boards"
        )),
        "{marks:?}"
    );
    assert!(
        marks
            .iter()
            .any(|m| m.1 == "changed" && m.0 == "2026-03-18"),
        "{marks:?}"
    );
    let html = render_html(&w);
    assert!(html.contains("<table class=\"week\">"));
    assert!(html.contains(&format!("id=\"{}\"", visit[0].anchor)));
}

#[test]
fn other_services_chat_tracker_sheets_code() {
    let w = turn_changes(&files(&trial("build-safety-change-order")), 1);
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    assert_eq!(w.chat.conversations[0].title, "#bv2417-riverside");
    assert!(
        w.chat.conversations[0].messages[0]
            .text
            .contains("CI-07 is priced")
    );
    // Turn 2: a colleague posts a site photo; it is shown from the blob store.
    let w2 = turn_changes(&files(&trial("build-safety-change-order")), 2);
    let photo = w2
        .chat
        .conversations
        .iter()
        .flat_map(|c| &c.messages)
        .find(|m| m.files == ["IMG_4471.jpg"])
        .unwrap();
    assert!(photo.images[0].starts_with("data:image/jpeg;base64,/9j/"));
    assert!(
        render_html(&w2).contains("<img class=\"world-image\" src=\"data:image&#x2f;jpeg;base64,")
    );
    let issues: Vec<_> = w.tracker.groups[0]
        .objects
        .iter()
        .map(|o| (o.key.as_str(), o.status))
        .collect();
    assert_eq!(issues, vec![("CO-7", Status::Added)]);

    let w = turn_changes(&files(&trial("build-subcontractor-invoices")), 1);
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    let cells: Vec<_> = w
        .sheets
        .cells
        .iter()
        .map(|c| (c.cell.as_str(), c.new.as_deref()))
        .collect();
    assert!(cells.contains(&("B3", Some("KS-2291"))), "{cells:?}");
    assert!(cells.iter().all(|c| c.0.ends_with('3')), "{cells:?}");

    let dir = trial("calibration-mr-review");
    let w = turn_changes(&files(&dir), 2);
    assert!(w.problems.is_empty(), "{:?}", w.problems);
    let subjects: Vec<_> = w.code.commits.iter().map(|c| c.subject.as_str()).collect();
    assert!(
        subjects.contains(&"Fix the sign of the temperature term"),
        "{subjects:?}"
    );
    let mr = w.code.groups[0]
        .objects
        .iter()
        .find(|o| o.kind == "mr")
        .unwrap();
    let state = mr.fields.iter().find(|f| f.path == "state").unwrap();
    assert_eq!(
        (state.old.as_deref(), state.new.as_deref()),
        (Some("open"), Some("merged"))
    );
}

#[test]
fn render_html_snapshot_of_polder_turn_1() {
    let w = turn_changes(&files(&trial("polder-visit-reschedule")), 1);
    insta::assert_snapshot!("polder_turn_1", render_html(&w));
}

#[test]
fn deliverables_preview() {
    let dir = trial("polder-visit-reschedule");
    let p = file_preview(&files(&dir), "visits/2026-03-12-polder-agenda.md");
    assert!(p.problems.is_empty(), "{:?}", p.problems);
    assert_eq!(
        p.source.as_deref(),
        Some("deliverables/visits/2026-03-12-polder-agenda.md")
    );
    assert!(p.text.as_deref().unwrap().contains("Polder"));
    assert!(render_preview_html(&p).contains("<pre>"));
    // A workspace file that is not a deliverable comes from the last snapshot.
    let p = file_preview(&files(&dir), "visits/visitor-policy.md");
    assert_eq!(
        p.source.as_deref(),
        Some("snapshots/turn-2.json"),
        "{:?}",
        p.problems
    );
    let p = file_preview(&files(&dir), "no/such/file.md");
    assert!(p.text.is_none() && !p.problems.is_empty());
}

#[test]
fn without_turn_0_turn_1_is_shown_whole_with_a_note() {
    let t = copy_trial("polder-visit-reschedule");
    std::fs::remove_file(t.path().join("snapshots/turn-0.json")).unwrap();
    let w = turn_changes(&files(t.path()), 1);
    assert!(w.note.as_deref().unwrap().contains("turn-0.json"));
    assert_eq!(w.base, None);
    assert!(w.files.files.iter().all(|f| f.status == Status::Added));
    assert_eq!(w.files.files.len(), 4);
    assert!(w.mail.messages.len() >= 3);
    assert!(render_html(&w).contains("turn-0.json"));
}

fn truncate(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

#[test]
fn bad_input_is_listed_never_a_panic() {
    let t = copy_trial("polder-visit-reschedule");
    let snaps = t.path().join("snapshots");
    // A run killed while writing turn 2.
    truncate(&snaps.join("turn-2.json"));
    let w = turn_changes(&files(t.path()), 2);
    assert_eq!(w.problems.len(), 1, "{:?}", w.problems);
    assert!(
        w.problems[0].contains("snapshots/turn-2.json")
            && w.problems[0].contains("stopped while writing")
    );
    assert!(w.is_empty());
    assert!(render_html(&w).contains("stopped while writing"));
    // Garbage as the earlier snapshot: turn 2 whole... of turn 1, with the reason.
    std::fs::write(snaps.join("turn-0.json"), b"\x00\xffgarbage").unwrap();
    let w = turn_changes(&files(t.path()), 1);
    assert!(
        w.problems[0].contains("turn-0.json: not valid JSON"),
        "{:?}",
        w.problems
    );
    assert!(w.note.is_some());
    assert_eq!(w.files.files.len(), 4);
    // A missing blob of a file the agent wrote (compared with the seeded world again).
    std::fs::write(
        snaps.join("turn-0.json"),
        files(&trial("polder-visit-reschedule"))
            .read("snapshots/turn-0.json", 1 << 26)
            .unwrap(),
    )
    .unwrap();
    let agenda = w
        .files
        .files
        .iter()
        .find(|f| f.path.ends_with("polder-agenda.md"))
        .unwrap();
    let hash = agenda.new.as_ref().unwrap().hash.clone();
    std::fs::remove_file(t.path().join("world/blobs").join(&hash)).unwrap();
    let w = turn_changes(&files(t.path()), 1);
    assert!(
        w.problems
            .iter()
            .any(|p| p.contains(&hash) && p.contains("not stored")),
        "{:?}",
        w.problems
    );
    assert!(render_html(&w).contains("content not stored"));
    // A snapshot of another Bureau version: unknown fields, a service missing a field.
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(snaps.join("turn-1.json")).unwrap()).unwrap();
    v["services"]["calendar"]
        .as_object_mut()
        .unwrap()
        .remove("calendars");
    v["services"]["weather"] = serde_json::json!({"forecast": "rain"});
    v["future_field"] = serde_json::json!(1);
    std::fs::write(snaps.join("turn-1.json"), serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::write(snaps.join("turn-0.json"), b"{}").unwrap();
    let w = turn_changes(&files(t.path()), 1);
    assert!(
        w.problems
            .iter()
            .any(|p| p.contains("turn-1.json: does not match this Bureau's snapshot format")),
        "{:?}",
        w.problems
    );
    let other: Vec<_> = w.other.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(other, vec!["services.weather.forecast", "future_field"]);
    assert!(!w.mail.messages.is_empty());
    // Turns that do not exist, a trial directory that is not one.
    assert!(turn_changes(&files(t.path()), 9).problems[0].contains("does not exist"));
    assert!(turns(&files(Path::new("/nonexistent"))).is_empty());
    assert!(
        !turn_changes(&files(Path::new("/nonexistent")), 1)
            .problems
            .is_empty()
    );
}

#[test]
fn a_snapshot_that_is_a_symlink_is_not_followed() {
    let t = copy_trial("polder-visit-reschedule");
    let snaps = t.path().join("snapshots");
    std::fs::remove_file(snaps.join("turn-1.json")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", snaps.join("turn-1.json")).unwrap();
    assert_eq!(turns(&files(t.path())), vec![0, 2]);
    let w = turn_changes(&files(t.path()), 1);
    assert!(w.problems[0].contains("symbolic link"), "{:?}", w.problems);
}

#[test]
fn feedback_rounds_compare_with_the_stage_before() {
    let t = copy_trial("polder-visit-reschedule");
    let snaps = t.path().join("snapshots");
    std::fs::copy(snaps.join("turn-1.json"), snaps.join("turn-2.round-0.json")).unwrap();
    let w = stage_changes(&files(t.path()), Stage::Round(2, 0));
    assert_eq!(w.base.as_deref(), Some("snapshots/turn-1.json"));
    assert_eq!((w.turn, w.round), (2, Some(0)));
    assert!(w.is_empty() && w.problems.is_empty(), "{w:?}");
    assert_eq!(turns(&files(t.path())), vec![0, 1, 2]);
    let w: WorldChanges = stage_changes(&files(t.path()), Stage::Turn(2));
    assert!(!w.calendar.events.is_empty());
}

#[test]
fn a_real_feedback_run_has_rounds_in_time_order() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let task =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/starter/polder-visit-reschedule");
    let mut c = RunConfig::new(
        vec![task.display().to_string()],
        vec!["null".into()],
        out.clone(),
    );
    c.quiet = true;
    c.retries = 0;
    c.feedback = bureau_run::FeedbackSettings {
        rounds: 1,
        threshold: 0.6,
    };
    run(&c).unwrap();
    let dir = trial_dir(&out, "polder-visit-reschedule", "null", 1);
    assert_eq!(
        bureau_view::world::stages(&files(&dir)),
        vec![
            Stage::Turn(0),
            Stage::Round(1, 0),
            Stage::Turn(1),
            Stage::Round(2, 0),
            Stage::Turn(2)
        ]
    );
    assert_eq!(turns(&files(&dir)), vec![0, 1, 2]);
    let r = stage_changes(&files(&dir), Stage::Round(2, 0));
    assert_eq!(
        (r.base.as_deref(), r.round),
        (Some("snapshots/turn-1.json"), Some(0))
    );
    let t = turn_changes(&files(&dir), 2);
    assert_eq!(
        (t.base.as_deref(), t.since),
        (Some("snapshots/turn-1.json"), Some(1))
    );
    let last = stage_changes(&files(&dir), Stage::Round(1, 0));
    assert_eq!(last.base.as_deref(), Some("snapshots/turn-0.json"));
    for w in [r, t, last] {
        assert!(w.problems.is_empty(), "{:?}", w.problems);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_bytes_as_a_snapshot_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048),
                                             json in "\\{(\"[a-z]{1,6}\": ?(\\{\\}|\\[\\]|1|\"x\"|null), ?){0,5}\"files\": ?\\{\"a\": ?\\{\"hash\": ?\"[0-9a-f./]{0,70}\"\\}\\}\\}") {
        let t = tempfile::tempdir().unwrap();
        let snaps = t.path().join("snapshots");
        std::fs::create_dir_all(&snaps).unwrap();
        std::fs::write(snaps.join("turn-0.json"), &bytes).unwrap();
        std::fs::write(snaps.join("turn-1.json"), json.as_bytes()).unwrap();
        let w = turn_changes(&files(t.path()), 1);
        let _ = render_html(&w);
        std::fs::write(snaps.join("turn-1.json"), &bytes).unwrap();
        let w = turn_changes(&files(t.path()), 1);
        prop_assert!(!w.problems.is_empty() || serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
        let _ = render_html(&w);
    }
}

/// Any JSON, with the keys the world view looks for, so that every service's reader meets
/// values of the wrong type in the right places.
fn any_json() -> impl Strategy<Value = serde_json::Value> {
    const KEYS: &[&str] = &[
        "files",
        "services",
        "mail",
        "messages",
        "mail",
        "folder",
        "attachments",
        "data",
        "calendar",
        "calendars",
        "start",
        "end",
        "status",
        "chat",
        "channel",
        "dm",
        "kb",
        "pages",
        "databases",
        "rows",
        "values",
        "sheets",
        "spreadsheets",
        "cells",
        "formula",
        "tracker",
        "projects",
        "issues",
        "key",
        "code",
        "repos",
        "commits",
        "branches",
        "merge_requests",
        "wiki",
        "hosted_files",
        "hash",
        "blake3",
        "size",
        "now",
        "dirs",
        "symlinks",
        "id",
        "iid",
        "name",
    ];
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-zA-Z0-9 :./-]{0,30}".prop_map(serde_json::Value::from),
        Just(serde_json::Value::from("2026-03-12T09:00:00Z")),
    ];
    leaf.prop_recursive(5, 200, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..8).prop_map(
                |kv| {
                    serde_json::Value::Object(
                        kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    )
                }
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn any_json_as_snapshots_never_panics(
        old in any_json(), new in any_json(), services in any_json(), files in any_json()
    ) {
        // Whole random values, and random services and files in a snapshot's shape.
        let shaped = serde_json::json!({"now": "2026-03-11T09:00:00+01:00", "files": files, "services": services});
        let (old, new) = if old.is_object() && new.is_object() { (old, shaped) } else { (shaped, new) };
        let t = tempfile::tempdir().unwrap();
        let snaps = t.path().join("snapshots");
        std::fs::create_dir_all(&snaps).unwrap();
        std::fs::write(snaps.join("turn-0.json"), serde_json::to_vec(&old).unwrap()).unwrap();
        std::fs::write(snaps.join("turn-1.json"), serde_json::to_vec(&new).unwrap()).unwrap();
        let w = turn_changes(&TrialFiles::open(t.path()).unwrap(), 1);
        let html = render_html(&w);
        prop_assert!(!html.contains("could not be drawn"), "{}", html);
        let _ = file_preview(&TrialFiles::open(t.path()).unwrap(), "a");
    }
}

#[test]
fn a_packed_trial_shows_what_its_unpacked_copy_shows() {
    let packed = trial("polder-visit-reschedule");
    assert!(packed.join("trial.zip").is_file());
    assert!(!packed.join("snapshots").exists() && !packed.join("deliverables").exists());
    let unpacked = copy_trial("polder-visit-reschedule");
    assert!(!unpacked.path().join("trial.zip").exists());
    assert!(unpacked.path().join("snapshots/turn-1.json").is_file());
    let (p, u) = (files(&packed), files(unpacked.path()));
    assert!(p.is_packed() && !u.is_packed());
    assert_eq!(turns(&p), turns(&u));
    for n in [1, 2] {
        let (a, b) = (turn_changes(&p, n), turn_changes(&u, n));
        assert!(a.problems.is_empty(), "{:?}", a.problems);
        assert_eq!(a, b);
    }
    let path = "visits/2026-03-12-polder-agenda.md";
    assert_eq!(file_preview(&p, path), file_preview(&u, path));
}

#[test]
fn a_truncated_archive_is_named_and_the_plain_files_still_read() {
    let tmp = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", trial("polder-visit-reschedule").display()))
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(status.success());
    let archive = tmp.path().join("trial.zip");
    truncate(&archive);
    let e = TrialFiles::open(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains(&archive.display().to_string()) && e.contains("truncated or corrupt"),
        "{e}"
    );
    let (loose, problem) = bureau_view::load::open_trial(tmp.path());
    assert!(problem.unwrap().contains("trial.zip"));
    assert!(turns(&loose).is_empty());
    assert!(loose.read("result.json", 1 << 20).is_ok());
}
