//! The code service seen by checks: `w.code`, `code_file(...)`, and the `merge_request` and
//! `repo_file_contains` predicates, against a real world with hosted git repositories.

use std::path::Path;

use bureau_check::{CheckLimits, eval_predicate, evaluate_item, load_checks};
use bureau_core::log::Actor;
use bureau_core::task::{Evaluator, MergeRequestFilter, Predicate, RepoFileFilter, Task};
use bureau_core::tool::ToolOutcome;
use bureau_core::verdict::{Verdict, VerdictStatus};
use bureau_world::World;
use serde_json::{Value, json};

const TASK_TOML: &str = r#"
id = "code-fixture"
title = "Code fixture"
persona = "tester"
category = "testing"
difficulty = "easy"
apps = ["files", "code"]
timezone = "Europe/Amsterdam"

[user]
name = "Lena Vos"
email = "lena.vos@brightwater.test"

[[turn]]
at = "2026-03-09T09:00:00"
prompt = "Day one."

[[rubric]]
id = "view"
description = "d"
kind = "result"
check = "view"
"#;

const CHECKS: &str = r#"
def view(w):
    r = w.code.repos["fw"]
    main = r.branches["main"]
    feat = r.branches["feat"]
    mr = r.merge_requests[0]
    return {"passed": True, "detail": json.encode({
        "default": r.default_branch,
        "owner": r.owner,
        "main_commits": [c.title for c in main.commits],
        "feat_head_is_first": feat.head == feat.commits[0].sha,
        "feat_files": feat.commits[0].files,
        "feat_author": feat.commits[0].author,
        "feat_time": feat.commits[0].time,
        "mr": [mr.iid, mr.state, mr.source, mr.target],
        "comments": [[c.author, c.body, c.file, c.line] for c in mr.comments],
        "issues": [[i.iid, i.title, i.state, i.labels] for i in r.issues],
        "wiki": sorted(r.wiki.keys()),
        "home": r.wiki["Home"].content,
    })}

def files_at(w):
    return {"passed": True, "detail": json.encode([
        code_file("fw", "feat", "a.txt"),
        code_file("fw", None, "README.md"),
        code_file("fw", None, "a.txt"),
        code_file("fw", "no-such-branch", "a.txt"),
    ])}

def unknown_repo(w):
    return code_file("nope", None, "x") == None
"#;

fn write(root: &Path, rel: &str, data: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    task: Task,
    program: bureau_check::CheckProgram,
    world: World,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("task");
        write(&t, "task.toml", TASK_TOML);
        write(&t, "checks.star", CHECKS);
        write(
            &t,
            "world/people.toml",
            "[[person]]\nname = \"Karim Haddad\"\nemail = \"karim.haddad@brightwater.test\"\nhandle = \"karim\"\n",
        );
        write(&t, "world/code/fw/README.md", "# Firmware\nregion: EU686\n");
        write(&t, "world/code/fw.wiki/Home.md", "# Home\n");
        write(
            &t,
            "world/code/fw.toml",
            r#"
description = "Firmware"
owner = "karim"

[[issue]]
title = "Typo in region"
labels = ["bug"]
"#,
        );
        let task = Task::load(&t).unwrap_or_else(|e| panic!("{e}"));
        let program = load_checks(&task).unwrap().unwrap();
        let mut world = World::build(&task, &dir.path().join("run")).unwrap();
        world.begin_turn(&task.turns[0]).unwrap();
        let mut f = Fixture {
            _dir: dir,
            task,
            program,
            world,
        };
        // Lena fixes the typo on a branch and opens a merge request; Karim reviews it.
        f.ok(
            Actor::Agent,
            "code_commit_files",
            json!({"repo": "fw", "branch": "feat", "start_branch": "main", "message": "Fix the region\n\nEU868 is the European plan.",
                "files": {"README.md": "# Firmware\nregion: EU868\n", "a.txt": "a\n"}}),
        );
        f.ok(
            Actor::Agent,
            "code_create_mr",
            json!({"repo": "fw", "source": "feat", "title": "Fix the region typo"}),
        );
        f.ok(
            Actor::Colleague("karim.haddad@brightwater.test".into()),
            "code_comment_mr",
            json!({"repo": "fw", "iid": 1, "body": "Looks good, merging after CI", "file": "README.md", "line": 2}),
        );
        f
    }

    fn ok(&mut self, actor: Actor, tool: &str, args: Value) {
        let out = self.world.call_tool(actor, tool, &args);
        assert!(!matches!(out, ToolOutcome::Error { .. }), "{tool}: {out:?}");
    }

    fn check(&self, name: &str) -> Verdict {
        let mut item = self.task.rubric[0].clone();
        item.id = name.into();
        item.evaluator = Evaluator::Check(name.into());
        evaluate_item(
            &self.task,
            Some(&self.program),
            &self.world,
            &[],
            &item,
            &CheckLimits::default(),
        )
    }

    fn detail(&self, name: &str) -> Value {
        let v = self.check(name);
        assert_eq!(v.status, VerdictStatus::Passed, "{name}: {:?}", v.detail);
        serde_json::from_str(v.detail.as_deref().unwrap()).unwrap()
    }

    fn mr(&self, f: MergeRequestFilter) -> (VerdictStatus, String) {
        eval_predicate(&self.task, &Predicate::MergeRequest(f), &self.world, &[])
    }

    fn file(&self, f: RepoFileFilter) -> (VerdictStatus, String) {
        eval_predicate(
            &self.task,
            &Predicate::RepoFileContains(f),
            &self.world,
            &[],
        )
    }
}

fn mr_filter() -> MergeRequestFilter {
    MergeRequestFilter {
        repo: "fw".into(),
        min: 1,
        ..Default::default()
    }
}

#[test]
fn the_view_exposes_branches_commits_mrs_issues_wiki() {
    let f = Fixture::new();
    let d = f.detail("view");
    assert_eq!(
        d,
        json!({
            "default": "main",
            "owner": "karim.haddad@brightwater.test",
            "main_commits": ["Initial commit"],
            "feat_head_is_first": true,
            "feat_files": ["README.md", "a.txt"],
            "feat_author": "lena.vos@brightwater.test",
            "feat_time": "2026-03-09T09:00:00+01:00",
            "mr": [1, "open", "feat", "main"],
            "comments": [["karim.haddad@brightwater.test", "Looks good, merging after CI", "README.md", 2]],
            "issues": [[1, "Typo in region", "open", ["bug"]]],
            "wiki": ["Home"],
            "home": "# Home\n",
        })
    );
}

#[test]
fn code_file_reads_a_branch_tip_and_none_when_missing() {
    let f = Fixture::new();
    assert_eq!(
        f.detail("files_at"),
        json!(["a\n", "# Firmware\nregion: EU686\n", null, null])
    );
    let v = f.check("unknown_repo");
    assert_eq!(v.status, VerdictStatus::Error);
    assert!(v.detail.unwrap().contains("no hosted repository `nope`"));
}

#[test]
fn merge_request_predicate_filters_and_counts() {
    let mut f = Fixture::new();
    let (s, d) = f.mr(MergeRequestFilter {
        state: Some("open".into()),
        source: Some("feat".into()),
        title_contains: vec!["region".into()],
        comment_contains: vec!["looks good".into()],
        author: Some("lena.vos@brightwater.test".into()),
        ..mr_filter()
    });
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert!(d.contains("!1 'Fix the region typo' (open)"), "{d}");
    // Author by handle: Karim authored nothing.
    let (s, d) = f.mr(MergeRequestFilter {
        author: Some("karim".into()),
        ..mr_filter()
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(
        d.starts_with("0 merge request(s) of `fw` match (by karim)"),
        "{d}"
    );
    assert_eq!(
        f.mr(MergeRequestFilter {
            state: Some("merged".into()),
            ..mr_filter()
        })
        .0,
        VerdictStatus::Failed
    );
    assert_eq!(
        f.mr(MergeRequestFilter {
            comment_contains: vec!["reject".into()],
            ..mr_filter()
        })
        .0,
        VerdictStatus::Failed
    );
    // max: at most zero open merge requests fails while one is open.
    assert_eq!(
        f.mr(MergeRequestFilter {
            min: 0,
            max: Some(0),
            ..mr_filter()
        })
        .0,
        VerdictStatus::Failed
    );
    let (s, d) = f.mr(MergeRequestFilter {
        repo: "nope".into(),
        ..mr_filter()
    });
    assert_eq!(
        (s, d.as_str()),
        (VerdictStatus::Failed, "no repository `nope` is hosted")
    );
    f.ok(
        Actor::Agent,
        "code_merge_mr",
        json!({"repo": "fw", "iid": 1}),
    );
    assert_eq!(
        f.mr(MergeRequestFilter {
            state: Some("merged".into()),
            target: Some("main".into()),
            ..mr_filter()
        })
        .0,
        VerdictStatus::Passed
    );
}

#[test]
fn repo_file_contains_reads_the_branch_tip() {
    let mut f = Fixture::new();
    let filter = |branch: Option<&str>, all: &[&str], none: &[&str]| RepoFileFilter {
        repo: "fw".into(),
        branch: branch.map(String::from),
        path: "README.md".into(),
        all: all.iter().map(|s| s.to_string()).collect(),
        none: none.iter().map(|s| s.to_string()).collect(),
    };
    let (s, d) = f.file(filter(Some("feat"), &["EU868"], &["EU686"]));
    assert_eq!(s, VerdictStatus::Passed, "{d}");
    assert_eq!(
        d,
        "`README.md` at `feat` of `fw` contains 'EU868' and has none of 'EU686'"
    );
    // The default branch still has the typo.
    let (s, d) = f.file(filter(None, &["EU868"], &["EU686"]));
    assert_eq!(s, VerdictStatus::Failed);
    assert_eq!(
        d,
        "`README.md` at `main` of `fw` lacks 'EU868' and contains forbidden 'EU686'"
    );
    let (s, d) = f.file(RepoFileFilter {
        path: "missing.md".into(),
        ..filter(None, &[], &[])
    });
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("no file `missing.md`"), "{d}");
    let (s, d) = f.file(filter(Some("gone"), &[], &[]));
    assert_eq!(s, VerdictStatus::Failed);
    assert!(d.contains("no branch `gone`"), "{d}");
    f.ok(
        Actor::Agent,
        "code_merge_mr",
        json!({"repo": "fw", "iid": 1}),
    );
    assert_eq!(
        f.file(filter(None, &["EU868"], &["EU686"])).0,
        VerdictStatus::Passed
    );
}
