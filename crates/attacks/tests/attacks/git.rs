//! Attacks: git. An agent owns its clones' `.git` directories (the files tools and the
//! confined shell can write there); Bureau then runs git on them for `code_commit`,
//! `code_status`, `code_push`. Nothing written there may make that git run a program, read
//! another repository's configuration, or write outside the clone. See docs/security.md.

use std::path::{Path, PathBuf};

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A world hosting `fw` (one file on `main`, which is protected) with the agent's clone of it
/// at `fw/`.
fn cloned() -> (tempfile::TempDir, World, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("task");
    write(
        &dir.join("task.toml"),
        r#"
id = "git-attack"
title = "Git attack"
persona = "engineer"
category = "engineering"
difficulty = "easy"
apps = ["files", "code"]
timezone = "UTC"
[user]
name = "Lena Vos"
email = "lena.vos@corp.test"

[[turn]]
at = 2026-03-09T09:00:00
prompt = "Day one."

[[rubric]]
id = "x"
description = "x"
kind = "result"
merge_request = { repo = "fw", state = "merged" }
"#,
    );
    write(
        &dir.join("world/people.toml"),
        "[[person]]\nname = \"Karim Haddad\"\nemail = \"karim@corp.test\"\nhandle = \"karim\"\n",
    );
    write(&dir.join("world/code/fw/README.md"), "# Firmware\n");
    write(
        &dir.join("world/code/fw.toml"),
        "description = \"Firmware\"\nowner = \"karim\"\nprotected = [\"main\"]\n",
    );
    let task = Task::load(&dir).unwrap();
    let mut w = World::build(&task, &tmp.path().join("world")).unwrap();
    ok(&mut w, "code_clone", json!({"repo": "fw"}));
    let clone = w.workspace().join("fw");
    (tmp, w, clone)
}

fn ok(w: &mut World, tool: &str, args: Value) -> Value {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => value,
        ToolOutcome::Error { message } => panic!("{tool} failed: {message}"),
    }
}

fn call(w: &mut World, tool: &str, args: Value) -> Result<Value, String> {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => Ok(value),
        ToolOutcome::Error { message } => Err(message),
    }
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@x",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The issue's attack, step for step: `.git/objects`, `refs` and `packed-refs` moved into
/// `.git/cd/`, `.git/commondir` = `cd`, a `config` there defining a clean filter that runs a
/// shell command, and a `.gitattributes` applying it. Before the fix `code_commit` ran the
/// command as root, outside any confinement.
#[test]
fn commondir_with_a_filter_runs_nothing() {
    let (tmp, mut w, clone) = cloned();
    let marker = tmp.path().join("pwned-commondir");
    let g = clone.join(".git");
    std::fs::create_dir(g.join("cd")).unwrap();
    for name in ["objects", "refs", "packed-refs"] {
        if g.join(name).exists() {
            std::fs::rename(g.join(name), g.join("cd").join(name)).unwrap();
        }
    }
    std::fs::write(g.join("commondir"), "cd\n").unwrap();
    let origin = w.root().join("code/fw.git");
    write(
        &g.join("cd/config"),
        &format!(
            "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = {}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[filter \"x\"]\n\tclean = \"sh -c 'touch {}; cat'\"\n",
            origin.display(),
            marker.display()
        ),
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "fw/.gitattributes", "content": "* filter=x\n"}),
    );
    ok(
        &mut w,
        "files_write",
        json!({"path": "fw/notes.txt", "content": "notes\n"}),
    );
    let e = call(&mut w, "code_commit", json!({"path": "fw", "message": "x"})).unwrap_err();
    assert!(e.contains(".git/commondir"), "{e}");
    let e = call(&mut w, "code_status", json!({"path": "fw"})).unwrap_err();
    assert!(e.contains(".git/commondir"), "{e}");
    assert!(!marker.exists(), "the filter of the planted config ran");
}

/// A repository nested in the clone, with a filter and an fsmonitor of its own: git enters
/// it (as an embedded repository / submodule) to see whether it changed, with its own
/// configuration.
#[test]
fn a_nested_repository_runs_nothing() {
    let (tmp, mut w, clone) = cloned();
    let marker = tmp.path().join("pwned-nested");
    let sub = clone.join("vendor/lib");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "-q"]);
    write(&sub.join("a.txt"), "a\n");
    git(&sub, &["add", "a.txt"]);
    git(&sub, &["commit", "-qm", "a"]);
    let cfg = sub.join(".git/config");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&format!(
        "[core]\n\tfsmonitor = \"touch {m}; false\"\n[filter \"x\"]\n\tclean = \"sh -c 'touch {m}; cat'\"\n",
        m = marker.display()
    ));
    std::fs::write(&cfg, text).unwrap();
    write(&sub.join(".gitattributes"), "* filter=x\n");
    // Same size as before: git must read the content (through the filter) to see the change.
    write(&sub.join("a.txt"), "b\n");
    let commit = call(
        &mut w,
        "code_commit",
        json!({"path": "fw", "message": "vendor"}),
    );
    let status = call(&mut w, "code_status", json!({"path": "fw"}));
    assert!(!marker.exists(), "a program of the nested repository ran");
    let e = commit.unwrap_err();
    assert!(e.contains("vendor/lib/.git"), "{e}");
    assert!(status.unwrap_err().contains("vendor/lib/.git"));
}

/// `.git/refs` replaced by a link to the hosted repository's references (whose path the
/// clone's `origin` tells): a commit would move the hosted, protected `main` without a push
/// or a review.
#[test]
fn linked_refs_cannot_move_a_hosted_branch() {
    let (_tmp, mut w, clone) = cloned();
    let before = w.code().repo("fw").unwrap().branches["main"].head.clone();
    let hosted = w.root().join("code/fw.git");
    let refs = clone.join(".git/refs");
    std::fs::remove_dir_all(&refs).unwrap();
    std::os::unix::fs::symlink(hosted.join("refs"), &refs).unwrap();
    std::fs::remove_dir_all(clone.join(".git/objects")).unwrap();
    std::os::unix::fs::symlink(hosted.join("objects"), clone.join(".git/objects")).unwrap();
    ok(
        &mut w,
        "files_write",
        json!({"path": "fw/README.md", "content": "# Owned\n"}),
    );
    let e = call(&mut w, "code_commit", json!({"path": "fw", "message": "x"})).unwrap_err();
    assert!(e.contains("symbolic link"), "{e}");
    let out = std::process::Command::new("git")
        .arg(format!("--git-dir={}", hosted.display()))
        .args(["rev-parse", "main"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), before);
}

/// Alternates make git read objects of a repository the agent names (another trial's, the
/// hosted one's); a `.git` that is a file redirects git to any directory.
#[test]
fn alternates_and_gitdir_files_are_refused() {
    let (_tmp, mut w, clone) = cloned();
    write(
        &clone.join(".git/objects/info/alternates"),
        "/tmp/elsewhere/objects\n",
    );
    let e = call(&mut w, "code_status", json!({"path": "fw"})).unwrap_err();
    assert!(e.contains("alternates"), "{e}");
    std::fs::remove_file(clone.join(".git/objects/info/alternates")).unwrap();
    ok(&mut w, "code_status", json!({"path": "fw"}));

    let hosted = w.root().join("code/fw.git");
    std::fs::remove_dir_all(clone.join(".git")).unwrap();
    std::fs::write(
        clone.join(".git"),
        format!("gitdir: {}\n", hosted.display()),
    )
    .unwrap();
    let e = call(&mut w, "code_commit", json!({"path": "fw", "message": "x"})).unwrap_err();
    assert!(
        e.contains("not a directory") || e.contains("not a clone"),
        "{e}"
    );
}
