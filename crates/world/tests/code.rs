//! Code hosting end to end: seeds, clones, commits, pushes, merge requests, issues, wikis,
//! colleagues acting through events, determinism and snapshots of the hosted repositories.

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
name = "Karim Haddad"
email = "karim.haddad@brightwater.test"
handle = "karim"

[[person]]
name = "Eline de Vries"
email = "eline.devries@brightwater.test"
handle = "eline"
"#;

/// A task whose world hosts `sensor-fw` (main + an MR branch by Karim, an issue, a wiki page)
/// and whose second turn has Karim comment on the MR and push a fix.
fn task(dir: &Path) -> Task {
    write(
        &dir.join("task.toml"),
        r#"
id = "code"
title = "Code"
persona = "engineer"
category = "engineering"
difficulty = "easy"
apps = ["files", "code"]
timezone = "Europe/Amsterdam"
[user]
name = "Lena Vos"
email = "lena.vos@brightwater.test"

[[turn]]
at = 2026-03-09T09:00:00
prompt = "Day one."

[[turn]]
at = 2026-03-10T09:00:00
prompt = "Day two."
[[turn.event]]
kind = "act"
as = "karim"
silent = false
tool = "code_comment_mr"
args = { repo = "sensor-fw", iid = 1, body = "Fixed the offset, please re-review." }
[[turn.event]]
kind = "act"
as = "karim"
silent = true
tool = "code_commit_files"
args = { repo = "sensor-fw", branch = "fix/offset", message = "Use the calibrated offset", files = { "src/config.toml" = "offset = 0.25\nunits = \"mbar\"\n" } }

[[rubric]]
id = "x"
description = "x"
kind = "result"
merge_request = { repo = "sensor-fw", state = "merged" }
"#,
    );
    write(&dir.join("world/people.toml"), PEOPLE);
    write(
        &dir.join("world/code/sensor-fw/README.md"),
        "# Sensor firmware\n",
    );
    write(
        &dir.join("world/code/sensor-fw/src/config.toml"),
        "offset = 0.0\nunits = \"mbar\"\n",
    );
    write(
        &dir.join("world/code/sensor-fw.commits/offset/src/config.toml"),
        "offset = 2.5\nunits = \"mbar\"\n",
    );
    write(
        &dir.join("world/code/sensor-fw.toml"),
        r#"
description = "Firmware of the AquaSense S2"
owner = "karim"
protected = ["main"]

[[branch]]
name = "fix/offset"

[[commit]]
branch = "fix/offset"
author = "karim"
message = "Set the pressure offset"
dir = "offset"

[[merge_request]]
title = "Set the pressure offset"
description = "Calibration from the March bench test."
source = "fix/offset"
author = "karim"

[[issue]]
title = "Readings drift after 48 h"
body = "Seen on three units."
author = "eline"
labels = ["bug"]
"#,
    );
    write(
        &dir.join("world/code/sensor-fw.wiki/Home.md"),
        "# Sensor firmware wiki\n",
    );
    Task::load(dir).unwrap()
}

fn built() -> (tempfile::TempDir, Task, World) {
    let tmp = tempfile::tempdir().unwrap();
    let t = task(&tmp.path().join("task"));
    let w = World::build(&t, &tmp.path().join("world")).unwrap();
    (tmp, t, w)
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

fn head(w: &World, repo: &str, branch: &str) -> String {
    w.code().repo(repo).unwrap().branches[branch].head.clone()
}

#[test]
fn seed_builds_repos_branches_mrs_issues_wiki() {
    let (_t, _task, w) = built();
    let r = w.code().repo("sensor-fw").unwrap();
    assert_eq!(r.owner, "karim.haddad@brightwater.test");
    assert_eq!(r.default_branch, "main");
    assert_eq!(
        r.branches.keys().collect::<Vec<_>>(),
        ["fix/offset", "main"]
    );
    let fix = &r.branches["fix/offset"];
    assert_eq!(fix.commits.len(), 2, "initial commit + the fix");
    let c = &r.commits[&fix.head];
    assert_eq!(c.author, "karim.haddad@brightwater.test");
    assert_eq!(c.files, ["src/config.toml"]);
    assert_eq!(r.merge_requests[0].state, "open");
    assert_eq!(r.issues[0].labels, ["bug"]);
    assert!(r.wiki.contains_key("Home"));
    // The bare repository lives outside the workspace.
    assert!(w.root().join("code/sensor-fw.git/HEAD").exists());
    assert!(!w.workspace().join("sensor-fw").exists());
}

#[test]
fn seeded_commits_are_deterministic_across_worlds() {
    let (_a, _t1, w1) = built();
    let (_b, _t2, w2) = built();
    assert_eq!(w1.code(), w2.code());
    assert_eq!(head(&w1, "sensor-fw", "main").len(), 40);
}

/// Every file of a directory (path → content).
fn files_of(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn a_remembered_seed_is_the_repository_git_made_and_an_edited_seed_is_made_again() {
    // A seed of its own (no other test of this process seeds these files): the first world
    // seeds it with git, the second gets the remembered repository.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("task");
    let t = task(&dir);
    let readme = dir.join("world/code/sensor-fw/README.md");
    write(&readme, &format!("# Sensor firmware {:?}\n", tmp.path()));
    let w1 = World::build(&t, &tmp.path().join("w1")).unwrap();
    let w2 = World::build(&t, &tmp.path().join("w2")).unwrap();
    assert_eq!(w1.code(), w2.code());
    let bare = |w: &World| w.root().join("code/sensor-fw.git");
    assert_eq!(files_of(&bare(&w1)), files_of(&bare(&w2)));
    // git finds the repository whole, and its work goes on from it.
    let fsck = std::process::Command::new("git")
        .arg(format!("--git-dir={}", bare(&w2).display()))
        .args(["fsck", "--strict", "--no-progress"])
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    let mut w2 = w2;
    ok(&mut w2, "code_clone", json!({"repo": "sensor-fw"}));
    assert!(w2.workspace().join("sensor-fw/src/config.toml").exists());
    // The seed edited: seeded again, from the new files.
    write(&readme, "# Sensor firmware, edited\n");
    let w3 = World::build(&t, &tmp.path().join("w3")).unwrap();
    assert_ne!(
        head(&w3, "sensor-fw", "main"),
        head(&w1, "sensor-fw", "main")
    );
    assert_eq!(
        bureau_world::code::file_text(&w3, "sensor-fw", None, "README.md").unwrap(),
        Some("# Sensor firmware, edited\n".to_string())
    );
    // So is a seed whose people changed (the commits are made as someone else).
    let people = dir.join("world/people.toml");
    write(&people, &PEOPLE.replace("Karim Haddad", "Karim Haddad-Vos"));
    let t4 = Task::load(&dir).unwrap();
    let w4 = World::build(&t4, &tmp.path().join("w4")).unwrap();
    let fix = head(&w4, "sensor-fw", "fix/offset");
    assert_eq!(
        w4.code().repo("sensor-fw").unwrap().commits[&fix].author_name,
        "Karim Haddad-Vos"
    );
}

#[test]
fn clone_commit_push_mr_merge() {
    let (_t, _task, mut w) = built();
    let v = ok(
        &mut w,
        "code_clone",
        json!({"repo": "sensor-fw", "path": "work/fw"}),
    );
    assert_eq!(v["branch"], "main");
    assert!(w.files().exists("work/fw/src/config.toml"));
    // No template files (sample hooks) in the agent's workspace.
    assert!(!w.files().exists("work/fw/.git/hooks"));
    ok(
        &mut w,
        "code_branch",
        json!({"path": "work/fw", "name": "docs/readme", "create": true}),
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "work/fw/README.md", "content": "# Sensor firmware\n\nBuild with make.\n"}),
    );
    let st = ok(&mut w, "code_status", json!({"path": "work/fw"}));
    assert_eq!(st["changes"][0]["path"], "README.md");
    let c = ok(
        &mut w,
        "code_commit",
        json!({"path": "work/fw", "message": "Document the build"}),
    );
    assert_eq!(c["files"], json!(["README.md"]));
    assert!(
        err(
            &mut w,
            "code_commit",
            json!({"path": "work/fw", "message": "again"})
        )
        .contains("nothing to commit")
    );
    let p = ok(&mut w, "code_push", json!({"path": "work/fw"}));
    assert_eq!(p["new_branch"], true);
    assert_eq!(
        head(&w, "sensor-fw", "docs/readme"),
        c["sha"].as_str().unwrap()
    );
    let mr = ok(
        &mut w,
        "code_create_mr",
        json!({"repo": "sensor-fw", "source": "docs/readme", "title": "Document the build"}),
    );
    assert_eq!(mr["iid"], 2);
    let got = ok(
        &mut w,
        "code_get_mr",
        json!({"repo": "sensor-fw", "iid": 2}),
    );
    assert_eq!(got["files"][0]["path"], "README.md");
    assert_eq!(got["files"][0]["added"], 2);
    assert_eq!(got["can_merge"], true);
    assert!(got["diff"].as_str().unwrap().contains("+Build with make."));
    let before = head(&w, "sensor-fw", "main");
    let m = ok(
        &mut w,
        "code_merge_mr",
        json!({"repo": "sensor-fw", "iid": 2}),
    );
    assert_eq!(m["fast_forward"], false);
    let r = w.code().repo("sensor-fw").unwrap();
    let mr = &r.merge_requests[1];
    assert_eq!(mr.state, "merged");
    assert_eq!(
        mr.merge_sha.as_deref(),
        Some(r.branches["main"].head.as_str())
    );
    let merge = &r.commits[&r.branches["main"].head];
    assert_eq!(merge.parents.len(), 2);
    assert_eq!(merge.parents[0], before);
    assert_eq!(merge.author, "lena.vos@brightwater.test");
    assert!(
        merge
            .message
            .starts_with("Merge branch 'docs/readme' into 'main'")
    );
    // Merged: not again.
    assert!(
        err(
            &mut w,
            "code_merge_mr",
            json!({"repo": "sensor-fw", "iid": 2})
        )
        .contains("merged")
    );
    // The file is on main.
    let f = ok(
        &mut w,
        "code_show_file",
        json!({"repo": "sensor-fw", "path": "README.md"}),
    );
    assert!(f["content"].as_str().unwrap().contains("Build with make."));
    let log = ok(&mut w, "code_log", json!({"repo": "sensor-fw", "limit": 5}));
    assert_eq!(log["commits"][0]["files"], json!(["README.md"]));
    // Every change is in the log with the agent as actor.
    let actions: Vec<&str> = w
        .log()
        .iter()
        .filter(|e| e.service == "code" && e.actor == Actor::Agent)
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(
        actions,
        [
            "clone",
            "branch_create",
            "commit",
            "push",
            "mr_create",
            "mr_merge"
        ]
    );
}

#[test]
fn fast_forward_merge_and_source_removal() {
    let (_t, _task, mut w) = built();
    let src = head(&w, "sensor-fw", "fix/offset");
    let m = ok(
        &mut w,
        "code_merge_mr",
        json!({"repo": "sensor-fw", "iid": 1, "fast_forward": true, "remove_source_branch": true}),
    );
    assert_eq!(m["fast_forward"], true);
    assert_eq!(head(&w, "sensor-fw", "main"), src);
    assert!(
        !w.code()
            .repo("sensor-fw")
            .unwrap()
            .branches
            .contains_key("fix/offset")
    );
}

#[test]
fn refusals_protected_nonff_force_conflict_self_approval() {
    let (_t, _task, mut w) = built();
    ok(&mut w, "code_clone", json!({"repo": "sensor-fw"}));
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/src/config.toml", "content": "offset = 1.0\nunits = \"mbar\"\n"}),
    );
    ok(
        &mut w,
        "code_commit",
        json!({"path": "sensor-fw", "message": "Tune"}),
    );
    // main is protected.
    let e = err(&mut w, "code_push", json!({"path": "sensor-fw"}));
    assert!(e.contains("protected"), "{e}");
    assert!(
        err(
            &mut w,
            "code_commit_files",
            json!({"repo": "sensor-fw", "branch": "main", "message": "x", "files": {"a.txt": "a"}})
        )
        .contains("protected")
    );
    // A branch whose origin moved on: a plain push is rejected, force over Karim's commit too.
    ok(
        &mut w,
        "code_branch",
        json!({"path": "sensor-fw", "name": "fix/offset"}),
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/src/config.toml", "content": "offset = 9.9\nunits = \"mbar\"\n"}),
    );
    ok(
        &mut w,
        "code_commit",
        json!({"path": "sensor-fw", "message": "Mine"}),
    );
    let karim = Actor::Colleague("karim.haddad@brightwater.test".into());
    let out = w.call_tool(
        karim,
        "code_commit_files",
        &json!({"repo": "sensor-fw", "branch": "fix/offset", "message": "Karim's", "files": {"notes.txt": "n\n"}}),
    );
    assert!(matches!(out, ToolOutcome::Ok { .. }), "{out:?}");
    let before = head(&w, "sensor-fw", "fix/offset");
    let e = err(&mut w, "code_push", json!({"path": "sensor-fw"}));
    assert!(e.contains("code_pull"), "{e}");
    let e = err(
        &mut w,
        "code_push",
        json!({"path": "sensor-fw", "force": true}),
    );
    assert!(e.contains("karim.haddad@brightwater.test"), "{e}");
    assert_eq!(
        head(&w, "sensor-fw", "fix/offset"),
        before,
        "nothing pushed"
    );
    // Pull merges Karim's commit (different files), then the push goes through.
    let p = ok(&mut w, "code_pull", json!({"path": "sensor-fw"}));
    assert_eq!(p["fast_forward"], false);
    ok(&mut w, "code_push", json!({"path": "sensor-fw"}));
    assert!(w.files().exists("sensor-fw/notes.txt"));
    // A conflicting MR cannot be merged: main changes the same line through another MR.
    ok(
        &mut w,
        "code_commit_files",
        json!({"repo": "sensor-fw", "branch": "tune", "start_branch": "main", "message": "Tune", "files": {"src/config.toml": "offset = 7.0\nunits = \"mbar\"\n"}}),
    );
    ok(
        &mut w,
        "code_create_mr",
        json!({"repo": "sensor-fw", "source": "tune", "title": "Tune"}),
    );
    ok(
        &mut w,
        "code_merge_mr",
        json!({"repo": "sensor-fw", "iid": 2}),
    );
    let main_before = head(&w, "sensor-fw", "main");
    let got = ok(
        &mut w,
        "code_get_mr",
        json!({"repo": "sensor-fw", "iid": 1}),
    );
    assert_eq!(got["can_merge"], false);
    assert_eq!(got["conflicts"], json!(["src/config.toml"]));
    let e = err(
        &mut w,
        "code_merge_mr",
        json!({"repo": "sensor-fw", "iid": 1}),
    );
    assert!(
        e.contains("conflict") && e.contains("src/config.toml"),
        "{e}"
    );
    assert_eq!(head(&w, "sensor-fw", "main"), main_before);
    assert_eq!(
        w.code().repo("sensor-fw").unwrap().merge_requests[0].state,
        "open"
    );
    // Own MR: no self-approval.
    let e = err(
        &mut w,
        "code_approve_mr",
        json!({"repo": "sensor-fw", "iid": 2}),
    );
    assert!(e.contains("merged"), "{e}");
    ok(
        &mut w,
        "code_create_mr",
        json!({"repo": "sensor-fw", "source": "fix/offset", "target": "tune", "title": "x"}),
    );
    let e = err(
        &mut w,
        "code_approve_mr",
        json!({"repo": "sensor-fw", "iid": 3}),
    );
    assert!(e.contains("own"), "{e}");
    ok(
        &mut w,
        "code_approve_mr",
        json!({"repo": "sensor-fw", "iid": 1}),
    );
}

#[test]
fn hostile_clone_config_cannot_run_programs() {
    let (tmp, _task, mut w) = built();
    ok(&mut w, "code_clone", json!({"repo": "sensor-fw"}));
    let marker = tmp.path().join("pwned");
    let hook = format!("#!/bin/sh\ntouch {}\n", marker.display());
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/.git/hooks/pre-commit", "content": hook}),
    );
    std::fs::set_permissions(
        w.workspace().join("sensor-fw/.git/hooks/pre-commit"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let cfg = format!(
        "[core]\n\tfsmonitor = touch {m}\n\thooksPath = .git/hooks\n[remote \"origin\"]\n\turl = /elsewhere/sensor-fw.git\n\tuploadpack = touch {m}\n",
        m = marker.display()
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/.git/config", "content": cfg}),
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/x.txt", "content": "x\n"}),
    );
    ok(
        &mut w,
        "code_commit",
        json!({"path": "sensor-fw", "message": "x"}),
    );
    ok(&mut w, "code_status", json!({"path": "sensor-fw"}));
    assert!(!marker.exists(), "a hook or config command ran");
}

#[test]
fn issues_and_wiki() {
    let (_t, _task, mut w) = built();
    let i = ok(
        &mut w,
        "code_create_issue",
        json!({"repo": "sensor-fw", "title": "Document calibration", "labels": ["docs"], "assignee": "karim"}),
    );
    assert_eq!(i["iid"], 2);
    ok(
        &mut w,
        "code_update_issue",
        json!({"repo": "sensor-fw", "iid": 1, "add_labels": ["firmware"], "remove_labels": ["bug"]}),
    );
    ok(
        &mut w,
        "code_comment_issue",
        json!({"repo": "sensor-fw", "iid": 1, "body": "Duplicate of the drift report"}),
    );
    ok(
        &mut w,
        "code_close_issue",
        json!({"repo": "sensor-fw", "iid": 1, "comment": "Fixed in 1.4"}),
    );
    assert!(
        err(
            &mut w,
            "code_close_issue",
            json!({"repo": "sensor-fw", "iid": 1})
        )
        .contains("already closed")
    );
    let list = ok(
        &mut w,
        "code_list_issues",
        json!({"repo": "sensor-fw", "state": "open"}),
    );
    assert_eq!(list["issues"].as_array().unwrap().len(), 1);
    let r = w.code().repo("sensor-fw").unwrap();
    assert_eq!(r.issues[0].labels, ["firmware"]);
    assert_eq!(r.issues[0].comments.len(), 2);
    assert_eq!(
        r.issues[1].assignee.as_deref(),
        Some("karim.haddad@brightwater.test")
    );
    ok(
        &mut w,
        "code_wiki_write",
        json!({"repo": "sensor-fw", "title": "Releases", "content": "## 1.4\n- offset fix\n"}),
    );
    let p = ok(
        &mut w,
        "code_wiki_read",
        json!({"repo": "sensor-fw", "title": "Releases"}),
    );
    assert!(p["content"].as_str().unwrap().contains("offset fix"));
    let pages = ok(&mut w, "code_wiki_read", json!({"repo": "sensor-fw"}));
    assert_eq!(pages["pages"], json!(["Home", "Releases"]));
}

#[test]
fn act_events_let_a_colleague_comment_and_push() {
    let (_t, task, mut w) = built();
    w.begin_turn(&task.turns[0]).unwrap();
    let before = head(&w, "sensor-fw", "fix/offset");
    w.begin_turn(&task.turns[1]).unwrap();
    let r = w.code().repo("sensor-fw").unwrap();
    let c = &r.merge_requests[0].comments[0];
    assert_eq!(c.author, "karim.haddad@brightwater.test");
    assert!(c.body.contains("re-review"));
    let fix = &r.branches["fix/offset"];
    assert_ne!(fix.head, before);
    let commit = &r.commits[&fix.head];
    assert_eq!(commit.author, "karim.haddad@brightwater.test");
    assert_eq!(commit.author_name, "Karim Haddad");
    assert_eq!(commit.parents, [before]);
    assert_eq!(commit.time.to_rfc3339(), "2026-03-10T08:00:00+00:00");
    let entries: Vec<_> = w
        .log()
        .iter()
        .filter(|e| e.service == "code" && e.turn == 2)
        .collect();
    assert_eq!(entries.len(), 2);
    assert!(
        entries
            .iter()
            .all(|e| e.actor == Actor::Colleague("karim.haddad@brightwater.test".into()))
    );
    assert_eq!(entries[0].action, "mr_comment");
    assert!(!entries[0].silent);
    assert!(entries[1].silent);
    // The file at the branch tip is readable without a clone.
    let text =
        bureau_world::code::file_text(&w, "sensor-fw", Some("fix/offset"), "src/config.toml")
            .unwrap()
            .unwrap();
    assert!(text.contains("0.25"));
    assert_eq!(
        bureau_world::code::file_text(&w, "sensor-fw", None, "nope.txt").unwrap(),
        None
    );
}

/// The same actions in two worlds give the same commit hashes.
#[test]
fn same_actions_same_shas() {
    let run = || {
        let (t, task, mut w) = built();
        w.begin_turn(&task.turns[0]).unwrap();
        ok(&mut w, "code_clone", json!({"repo": "sensor-fw"}));
        ok(
            &mut w,
            "code_branch",
            json!({"path": "sensor-fw", "name": "feat", "create": true}),
        );
        ok(
            &mut w,
            "files_write",
            json!({"path": "sensor-fw/a.txt", "content": "a\n"}),
        );
        ok(
            &mut w,
            "code_commit",
            json!({"path": "sensor-fw", "message": "A"}),
        );
        ok(&mut w, "code_push", json!({"path": "sensor-fw"}));
        ok(
            &mut w,
            "code_create_mr",
            json!({"repo": "sensor-fw", "source": "feat", "title": "A"}),
        );
        ok(
            &mut w,
            "code_merge_mr",
            json!({"repo": "sensor-fw", "iid": 2}),
        );
        w.begin_turn(&task.turns[1]).unwrap();
        let state = w.code().clone();
        drop(t);
        state
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert!(a.repos["sensor-fw"].merge_requests[1].merge_sha.is_some());
}

#[test]
fn snapshot_restore_brings_back_hosted_refs() {
    let (_t, _task, mut w) = built();
    ok(&mut w, "code_clone", json!({"repo": "sensor-fw"}));
    ok(
        &mut w,
        "code_branch",
        json!({"path": "sensor-fw", "name": "feat", "create": true}),
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/a.txt", "content": "a\n"}),
    );
    ok(
        &mut w,
        "code_commit",
        json!({"path": "sensor-fw", "message": "A"}),
    );
    ok(&mut w, "code_push", json!({"path": "sensor-fw"}));
    let snap = w.snapshot().unwrap();
    let at_snap = head(&w, "sensor-fw", "feat");
    let state_at_snap = w.code().clone();
    assert!(!snap.services.code.hosted_files.is_empty());
    assert!(
        w.code().hosted_files.is_empty(),
        "the live state keeps no manifest"
    );

    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/b.txt", "content": "b\n"}),
    );
    ok(
        &mut w,
        "code_commit",
        json!({"path": "sensor-fw", "message": "B"}),
    );
    ok(&mut w, "code_push", json!({"path": "sensor-fw"}));
    ok(
        &mut w,
        "code_create_mr",
        json!({"repo": "sensor-fw", "source": "feat", "title": "B"}),
    );
    assert_ne!(head(&w, "sensor-fw", "feat"), at_snap);

    w.restore(&snap).unwrap();
    assert_eq!(w.code(), &state_at_snap);
    // The git repository itself is back: its ref is the snapshot's.
    let r = w.root().join("code/sensor-fw.git");
    let out = std::process::Command::new("git")
        .arg(format!("--git-dir={}", r.display()))
        .args(["rev-parse", "refs/heads/feat"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), at_snap);
    assert_eq!(w.snapshot().unwrap(), snap);
    // And the world keeps working: the clone pushes again.
    ok(
        &mut w,
        "files_write",
        json!({"path": "sensor-fw/c.txt", "content": "c\n"}),
    );
    ok(
        &mut w,
        "code_commit",
        json!({"path": "sensor-fw", "message": "C"}),
    );
    ok(&mut w, "code_push", json!({"path": "sensor-fw"}));
}

#[test]
fn restore_refuses_hostile_paths_and_blob_names() {
    let (_t, _task, mut w) = built();
    let snap = w.snapshot().unwrap();
    let mut bad = snap.clone();
    let rec = bad
        .services
        .code
        .hosted_files
        .values()
        .next()
        .unwrap()
        .clone();
    bad.services
        .code
        .hosted_files
        .insert("../escape".into(), rec.clone());
    assert!(w.restore(&bad).is_err());
    let mut bad = snap.clone();
    let mut rec2 = rec.clone();
    rec2.hash = "../../etc/passwd".into();
    bad.services
        .code
        .hosted_files
        .insert("sensor-fw.git/x".into(), rec2);
    assert!(w.restore(&bad).is_err());
    assert!(!w.root().join("escape").exists());
}

#[test]
fn restore_into_a_fresh_world_rewires_clones() {
    let (tmp, task, mut w) = built();
    ok(&mut w, "code_clone", json!({"repo": "sensor-fw"}));
    let snap = w.snapshot().unwrap();
    let mut fresh = World::build(&task, &tmp.path().join("fresh")).unwrap();
    fresh.restore_from(&snap, &w.root().join("blobs")).unwrap();
    ok(
        &mut fresh,
        "code_branch",
        json!({"path": "sensor-fw", "name": "x", "create": true}),
    );
    ok(
        &mut fresh,
        "files_write",
        json!({"path": "sensor-fw/x.txt", "content": "x\n"}),
    );
    ok(
        &mut fresh,
        "code_commit",
        json!({"path": "sensor-fw", "message": "X"}),
    );
    ok(&mut fresh, "code_push", json!({"path": "sensor-fw"}));
    assert!(
        fresh
            .code()
            .repo("sensor-fw")
            .unwrap()
            .branches
            .contains_key("x")
    );
    assert!(
        !w.code()
            .repo("sensor-fw")
            .unwrap()
            .branches
            .contains_key("x")
    );
}

#[test]
fn bad_seeds_are_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("task");
    task(&dir);
    write(
        &dir.join("world/code/sensor-fw.toml"),
        "[[merge_request]]\ntitle = \"x\"\nsource = \"nope\"\n",
    );
    let t = Task::load(&dir).unwrap();
    let e = World::build(&t, &tmp.path().join("w"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("sensor-fw.toml") && e.contains("nope"), "{e}");
    write(&dir.join("world/code/stray.txt"), "x");
    let e = World::build(&Task::load(&dir).unwrap(), &tmp.path().join("w2"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("stray.txt"), "{e}");
}
