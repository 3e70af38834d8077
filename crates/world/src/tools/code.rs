//! code_* tools: hosted git repositories, workspace clones, merge requests, issues, wikis.
//!
//! Clones are ordinary workspace directories (made by `code_clone`); their `.git/config` is
//! rewritten by every tool to a fixed content whose only remote is the hosted repository, and
//! git runs with hooks disabled, so nothing written into a clone can make git run a program.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bureau_core::log::Actor;
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, boolean, integer, parse, schema, show_time, string, strings};
use crate::World;
use crate::code::{
    GitOut, Ident, Issue, IssueComment, LOG_FORMAT, MergeRequest, ReviewComment, WikiPage,
    bare_git, bare_path, commit_onto, git, ident, parse_log, read_file_at, rev, short, sync_repo,
    valid_branch_name,
};

/// Patches longer than this are cut (the file list stays complete).
const MAX_PATCH: usize = 60_000;
/// Files longer than this are cut by `code_show_file`.
const MAX_FILE: usize = 200_000;

macro_rules! tool {
    ($c:ident, $name:literal, $desc:literal, $schema:expr, $run:ident) => {
        const $c: Tool = Tool {
            name: $name,
            description: $desc,
            schema: $schema,
            run: $run,
        };
    };
}

tool!(
    LIST_REPOS,
    "code_list_repos",
    "List the hosted git repositories: description, default branch, branches, open merge requests and issues.",
    || schema(&[], &[]),
    list_repos
);
tool!(
    CLONE,
    "code_clone",
    "Clone a hosted repository into a workspace directory (remote `origin` = the hosted repository); then edit its files with files_* tools and use code_commit / code_push.",
    || schema(
        &[
            ("repo", string("Repository name (see code_list_repos)")),
            (
                "path",
                string(
                    "Workspace directory to clone into (default: the repository name); must not exist"
                )
            ),
            (
                "branch",
                string("Branch to check out (default: the default branch)")
            ),
        ],
        &["repo"]
    ),
    clone
);
tool!(
    STATUS,
    "code_status",
    "Status of a workspace clone: current branch, commits ahead of / behind origin, changed and untracked files.",
    || schema(
        &[("path", string("Workspace directory of the clone"))],
        &["path"]
    ),
    status
);
tool!(
    COMMIT,
    "code_commit",
    "Commit changes in a workspace clone (all changes, or only the given paths) on the current branch, as you.",
    || schema(
        &[
            ("path", string("Workspace directory of the clone")),
            ("message", string("Commit message (first line = title)")),
            (
                "paths",
                strings(
                    "Only these paths (relative to the clone); default: every change, new files included"
                )
            ),
        ],
        &["path", "message"]
    ),
    commit
);
tool!(
    PUSH,
    "code_push",
    "Push a branch of a workspace clone to origin. Refused when origin has commits you do not have (code_pull first) and for protected branches (open a merge request). force=true may only discard your own commits.",
    || schema(
        &[
            ("path", string("Workspace directory of the clone")),
            (
                "branch",
                string("Branch to push (default: the current branch)")
            ),
            (
                "force",
                boolean(
                    "Overwrite origin's branch even if it is not an ancestor (only over your own commits)"
                )
            ),
        ],
        &["path"]
    ),
    push
);
tool!(
    PULL,
    "code_pull",
    "Fetch origin and merge origin's version of the current branch into it (fast-forward when possible). Refused on conflicts (nothing is changed then).",
    || schema(
        &[("path", string("Workspace directory of the clone"))],
        &["path"]
    ),
    pull
);
tool!(
    BRANCH,
    "code_branch",
    "In a workspace clone: without `name`, list local and origin branches; with `name`, switch to it (create=true makes a new branch from the current commit or `from`).",
    || schema(
        &[
            ("path", string("Workspace directory of the clone")),
            ("name", string("Branch to switch to or create")),
            ("create", boolean("Create the branch (default false)")),
            (
                "from",
                string("Start point of a new branch, e.g. `origin/main` (default: current commit)")
            ),
        ],
        &["path"]
    ),
    branch
);
tool!(
    LOG,
    "code_log",
    "Commit history, newest first: of a workspace clone (`path`) or of a hosted repository (`repo`), at a ref.",
    || schema(
        &[
            ("path", string("Workspace directory of a clone")),
            ("repo", string("Hosted repository (instead of path)")),
            (
                "ref",
                string("Branch, tag or sha (default: current branch / default branch)")
            ),
            (
                "limit",
                integer("At most this many commits (default 20, at most 200)")
            ),
        ],
        &[]
    ),
    log
);
tool!(
    DIFF,
    "code_diff",
    "A diff with per-file line counts. In a clone (`path`): uncommitted changes against HEAD, or the working tree against `from`, or `from` against `to`. In a hosted repository (`repo`): `from` against `to` (e.g. main and a feature branch).",
    || schema(
        &[
            ("path", string("Workspace directory of a clone")),
            ("repo", string("Hosted repository (instead of path)")),
            ("from", string("Old side: branch, tag or sha")),
            ("to", string("New side: branch, tag or sha")),
        ],
        &[]
    ),
    diff
);
tool!(
    SHOW_FILE,
    "code_show_file",
    "Read a file of a hosted repository at a ref without cloning; a directory path (or \"\") lists its entries.",
    || schema(
        &[
            ("repo", string("Repository name")),
            (
                "path",
                string("File or directory path in the repository (\"\" = root)")
            ),
            (
                "ref",
                string("Branch, tag or sha (default: the default branch)")
            ),
        ],
        &["repo", "path"]
    ),
    show_file
);
tool!(
    COMMIT_FILES,
    "code_commit_files",
    "Commit file changes straight to a branch of a hosted repository (like a web editor), without a clone. Refused on protected branches.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("branch", string("Branch to commit on")),
            ("message", string("Commit message")),
            (
                "files",
                json!({"type": "object", "additionalProperties": {"type": "string"}, "description": "Path → new full text of the file"})
            ),
            ("delete", strings("Paths to delete")),
            (
                "start_branch",
                string("Create `branch` from this branch first (it must not exist yet)")
            ),
        ],
        &["repo", "branch", "message"]
    ),
    commit_files
);
tool!(
    CREATE_MR,
    "code_create_mr",
    "Open a merge request from a pushed source branch into a target branch.",
    || schema(
        &[
            ("repo", string("Repository name")),
            (
                "source",
                string("Source branch (pushed to the hosted repository)")
            ),
            (
                "target",
                string("Target branch (default: the default branch)")
            ),
            ("title", string("Title")),
            ("description", string("What and why")),
        ],
        &["repo", "source", "title"]
    ),
    create_mr
);
tool!(
    LIST_MRS,
    "code_list_mrs",
    "List merge requests of a repository.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("state", string("open, merged, closed or all (default all)")),
        ],
        &["repo"]
    ),
    list_mrs
);
tool!(
    GET_MR,
    "code_get_mr",
    "A merge request with its review comments, approvals, commits, changed files with line counts, the diff, and whether it can be merged.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Merge request number"))
        ],
        &["repo", "iid"]
    ),
    get_mr
);
tool!(
    COMMENT_MR,
    "code_comment_mr",
    "Add a review comment to a merge request, optionally on a file and line of the source branch.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Merge request number")),
            ("body", string("Comment text (markdown)")),
            ("file", string("File path the comment is about")),
            ("line", integer("Line number in that file (source branch)")),
        ],
        &["repo", "iid", "body"]
    ),
    comment_mr
);
tool!(
    APPROVE_MR,
    "code_approve_mr",
    "Approve an open merge request (not your own).",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Merge request number"))
        ],
        &["repo", "iid"]
    ),
    approve_mr
);
tool!(
    MERGE_MR,
    "code_merge_mr",
    "Merge an open merge request into its target: a merge commit by default, or a fast-forward. Refused when it conflicts, lacks approvals, or is not open.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Merge request number")),
            (
                "fast_forward",
                boolean("Fast-forward only, no merge commit (default false)")
            ),
            (
                "remove_source_branch",
                boolean("Delete the source branch after merging (default false)")
            ),
        ],
        &["repo", "iid"]
    ),
    merge_mr
);
tool!(
    CLOSE_MR,
    "code_close_mr",
    "Close an open merge request without merging it.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Merge request number")),
            ("comment", string("Why (added as a comment)")),
        ],
        &["repo", "iid"]
    ),
    close_mr
);
tool!(
    CREATE_ISSUE,
    "code_create_issue",
    "Open an issue in a repository's issue list.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("title", string("Title")),
            ("body", string("Description (markdown)")),
            ("labels", strings("Labels")),
            ("assignee", string("Email or chat handle of the assignee")),
        ],
        &["repo", "title"]
    ),
    create_issue
);
tool!(
    LIST_ISSUES,
    "code_list_issues",
    "List a repository's issues with their labels and comments.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("state", string("open, closed or all (default all)")),
            ("label", string("Only issues with this label")),
        ],
        &["repo"]
    ),
    list_issues
);
tool!(
    COMMENT_ISSUE,
    "code_comment_issue",
    "Comment on a repository issue.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Issue number")),
            ("body", string("Comment (markdown)")),
        ],
        &["repo", "iid", "body"]
    ),
    comment_issue
);
tool!(
    UPDATE_ISSUE,
    "code_update_issue",
    "Change a repository issue: add or remove labels, assign it, rename it, reopen it.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Issue number")),
            ("add_labels", strings("Labels to add")),
            ("remove_labels", strings("Labels to remove")),
            (
                "assignee",
                string("Email or chat handle (\"\" to unassign)")
            ),
            ("title", string("New title")),
            ("reopen", boolean("Reopen a closed issue")),
        ],
        &["repo", "iid"]
    ),
    update_issue
);
tool!(
    CLOSE_ISSUE,
    "code_close_issue",
    "Close a repository issue, optionally with a closing comment.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("iid", integer("Issue number")),
            ("comment", string("Closing comment")),
        ],
        &["repo", "iid"]
    ),
    close_issue
);
tool!(
    WIKI_READ,
    "code_wiki_read",
    "Read a wiki page of a repository; without `title`, list the pages.",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("title", string("Page title"))
        ],
        &["repo"]
    ),
    wiki_read
);
tool!(
    WIKI_WRITE,
    "code_wiki_write",
    "Create or replace a wiki page of a repository (markdown).",
    || schema(
        &[
            ("repo", string("Repository name")),
            ("title", string("Page title")),
            ("content", string("Full markdown content")),
        ],
        &["repo", "title", "content"]
    ),
    wiki_write
);

pub(super) const TOOLS: &[Tool] = &[
    LIST_REPOS,
    CLONE,
    STATUS,
    COMMIT,
    PUSH,
    PULL,
    BRANCH,
    LOG,
    DIFF,
    SHOW_FILE,
    COMMIT_FILES,
    CREATE_MR,
    LIST_MRS,
    GET_MR,
    COMMENT_MR,
    APPROVE_MR,
    MERGE_MR,
    CLOSE_MR,
    CREATE_ISSUE,
    LIST_ISSUES,
    COMMENT_ISSUE,
    UPDATE_ISSUE,
    CLOSE_ISSUE,
    WIKI_READ,
    WIKI_WRITE,
];

// ---------------------------------------------------------------------------------------------
// Helpers

fn me(w: &World, actor: &Actor) -> Result<Ident, String> {
    let email = w.acting_email(actor)?;
    Ok(ident(w, &email))
}

fn repo_of<'a>(w: &'a World, name: &str) -> Result<&'a crate::code::Repo, String> {
    w.code.repos.get(name).ok_or_else(|| {
        let names: Vec<&str> = w.code.repos.keys().map(String::as_str).collect();
        if names.is_empty() {
            "there are no hosted repositories in this office".to_string()
        } else {
            format!(
                "no repository `{name}`; the repositories are: {}",
                names.join(", ")
            )
        }
    })
}

/// A ref argument: not empty, not an option.
fn check_ref(field: &str, r: &str) -> Result<(), String> {
    if r.trim().is_empty() || r.starts_with('-') || r.contains(['\0', '\n']) {
        Err(format!("`{field}` is not a valid ref: `{r}`"))
    } else {
        Ok(())
    }
}

fn check_branch(b: &str) -> Result<(), String> {
    if valid_branch_name(b) {
        Ok(())
    } else {
        Err(format!(
            "`{b}` is not a valid branch name (letters, digits, `-`, `_`, `/`, `.`; no spaces or `..`)"
        ))
    }
}

/// An email from an email or chat handle of the roster (or the task's user).
fn person(w: &World, who: &str) -> Result<String, String> {
    if let Some(p) = w.people.find(who) {
        return Ok(p.email.clone());
    }
    if who.trim().eq_ignore_ascii_case(&w.user.email) {
        return Ok(w.user.email.clone());
    }
    Err(format!(
        "`{who}` is not a person of the office; give an email address or chat handle of a colleague"
    ))
}

/// A workspace clone made by code_clone.
struct Clone {
    dir: PathBuf,
    repo: String,
}

/// Open the clone at workspace path `path`: find its repository from origin's URL and reset
/// `.git/config` to Bureau's fixed content.
fn open_clone(w: &World, path: &str) -> Result<Clone, String> {
    let dir = w.files.resolve(path)?;
    let dot_git = w
        .files
        .resolve(&format!("{}/.git", path.trim_end_matches('/')))?;
    let meta = std::fs::symlink_metadata(&dot_git);
    if !meta.is_ok_and(|m| m.is_dir()) {
        return Err(format!(
            "`{path}` is not a clone (no .git directory); clone a repository with code_clone first"
        ));
    }
    let config = w
        .files
        .resolve(&format!("{}/.git/config", path.trim_end_matches('/')))?;
    // Agent-writable: read only a regular file (a FIFO here would block the call).
    let text = crate::files::read_regular(&config, 1 << 20)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default();
    let url = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("url = "))
        .unwrap_or("");
    let repo = Path::new(url)
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".git"))
        .filter(|n| w.code.repos.contains_key(*n))
        .ok_or_else(|| {
            format!("`{path}` is not a clone of a hosted repository (its origin is unknown); clone again with code_clone")
        })?
        .to_string();
    write_config(w, &config, &repo)?;
    Ok(Clone { dir, repo })
}

fn write_config(w: &World, config: &Path, repo: &str) -> Result<(), String> {
    let text = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote \"origin\"]\n\turl = {}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        bare_path(w, repo).display()
    );
    // A fresh file: never write through a link.
    let _ = std::fs::remove_file(config);
    std::fs::write(config, text).map_err(|e| format!("cannot write the clone's git config: {e}"))
}

/// Run git in a clone.
fn cgit(w: &World, who: &Ident, c: &Clone, args: &[&str]) -> Result<GitOut, String> {
    let gd = format!("--git-dir={}", c.dir.join(".git").display());
    let wt = format!("--work-tree={}", c.dir.display());
    let mut full = vec![gd.as_str(), wt.as_str()];
    full.extend_from_slice(args);
    git(w, who, &c.dir, &full, None, &[])
}

fn cgit_ok(w: &World, who: &Ident, c: &Clone, args: &[&str]) -> Result<String, String> {
    cgit(w, who, c, args)?.into_result(&format!("git {}", args[0]))
}

fn current_branch(w: &World, who: &Ident, c: &Clone) -> Result<String, String> {
    let out = cgit(w, who, c, &["symbolic-ref", "--short", "-q", "HEAD"])?;
    if out.ok() {
        Ok(out.stdout.trim().to_string())
    } else {
        Err(
            "the clone is not on a branch (detached HEAD); switch to a branch with code_branch"
                .into(),
        )
    }
}

fn clone_rev(w: &World, who: &Ident, c: &Clone, r: &str) -> Result<Option<String>, String> {
    let spec = format!("{r}^{{commit}}");
    let out = cgit(w, who, c, &["rev-parse", "--verify", "--quiet", &spec])?;
    Ok(out.ok().then(|| out.stdout.trim().to_string()))
}

fn fetch(w: &World, who: &Ident, c: &Clone) -> Result<(), String> {
    cgit_ok(w, who, c, &["fetch", "--quiet", "--prune", "origin"]).map(|_| ())
}

fn commit_json(w: &World, c: &crate::code::Commit) -> Value {
    json!({
        "sha": c.sha, "short": short(&c.sha), "author": c.author, "author_name": c.author_name,
        "time": show_time(w, c.time), "message": c.message, "parents": c.parents, "files": c.files,
    })
}

/// Per-file line counts of `git diff --numstat`.
fn numstat(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            let (a, d, p) = (f.next()?, f.next()?, f.next()?);
            Some(json!({
                "path": p,
                "added": a.parse::<u64>().ok(),
                "deleted": d.parse::<u64>().ok(),
                "binary": a == "-",
            }))
        })
        .collect()
}

fn cut(mut s: String, max: usize) -> (String, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    (s, true)
}

fn after_push(w: &mut World, repo: &str) -> Result<(), String> {
    sync_repo(w, repo)
}

// ---------------------------------------------------------------------------------------------
// Repositories and clones

fn list_repos(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let _: Empty = parse("code_list_repos", args)?;
    let repos: Vec<Value> = w
        .code
        .repos
        .values()
        .map(|r| {
            json!({
                "name": r.name, "description": r.description, "default_branch": r.default_branch,
                "owner": r.owner, "branches": r.branches.keys().collect::<Vec<_>>(),
                "protected": r.protected,
                "open_merge_requests": r.merge_requests.iter().filter(|m| m.state == "open").count(),
                "open_issues": r.issues.iter().filter(|i| i.state == "open").count(),
                "wiki_pages": r.wiki.keys().collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({"repos": repos}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CloneArgs {
    repo: String,
    path: Option<String>,
    branch: Option<String>,
}

fn clone(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CloneArgs = parse("code_clone", args)?;
    let who = me(w, actor)?;
    let r = repo_of(w, &a.repo)?;
    let branch = a.branch.clone().unwrap_or_else(|| r.default_branch.clone());
    if !r.branches.contains_key(&branch) {
        return Err(format!(
            "repository `{}` has no branch `{branch}`; its branches are: {}",
            a.repo,
            r.branches.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let path = a.path.clone().unwrap_or_else(|| a.repo.clone());
    let path = path.trim().trim_end_matches('/').to_string();
    if path.is_empty() {
        return Err("`path` is empty; give a workspace directory to clone into".into());
    }
    let dir = w.files.resolve(&path)?;
    if std::fs::symlink_metadata(&dir).is_ok() {
        return Err(format!(
            "`{path}` already exists in the workspace; choose another path or use code_pull in an existing clone"
        ));
    }
    let bare = bare_path(w, &a.repo);
    let parent = dir.parent().unwrap_or(w.files.root()).to_path_buf();
    std::fs::create_dir_all(&parent).map_err(|e| format!("cannot create `{path}`: {e}"))?;
    let bare_s = bare.display().to_string();
    let dir_s = dir.display().to_string();
    let out = git(
        w,
        &who,
        &parent,
        &[
            "clone",
            "--quiet",
            "--no-hardlinks",
            "--template=",
            "--branch",
            &branch,
            "--",
            &bare_s,
            &dir_s,
        ],
        None,
        &[],
    )?;
    if !out.ok() {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(format!("cloning failed: {}", out.message()));
    }
    let c = open_clone(w, &path)?;
    let head = clone_rev(w, &who, &c, "HEAD")?.unwrap_or_default();
    w.record(
        actor.clone(),
        "code",
        "clone",
        false,
        json!({"repo": a.repo, "path": path, "branch": branch}),
    );
    Ok(json!({"repo": a.repo, "path": path, "branch": branch, "head": head}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    path: String,
}

fn status(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: PathArgs = parse("code_status", args)?;
    let who = me(w, actor)?;
    let c = open_clone(w, &a.path)?;
    fetch(w, &who, &c)?;
    let out = cgit_ok(
        w,
        &who,
        &c,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    )?;
    let mut changes = Vec::new();
    let mut parts = out.split('\0');
    while let Some(e) = parts.next() {
        if e.len() < 4 {
            continue;
        }
        let (xy, path) = (&e[..2], &e[3..]);
        let status = match xy {
            "??" => "untracked",
            _ if xy.contains('U') || xy == "AA" || xy == "DD" => "conflict",
            _ if xy.contains('R') => "renamed",
            _ if xy.contains('A') => "added",
            _ if xy.contains('D') => "deleted",
            _ => "modified",
        };
        if xy.contains(['R', 'C']) {
            parts.next();
        }
        changes
            .push(json!({"path": path, "status": status, "staged": !xy.starts_with([' ', '?'])}));
    }
    let branch = current_branch(w, &who, &c).ok();
    let head = clone_rev(w, &who, &c, "HEAD")?;
    let (mut ahead, mut behind, mut on_origin) = (0u64, 0u64, false);
    if let Some(b) = &branch {
        let remote = format!("refs/remotes/origin/{b}");
        if clone_rev(w, &who, &c, &remote)?.is_some() {
            on_origin = true;
            let spec = format!("HEAD...{remote}");
            let counts = cgit_ok(w, &who, &c, &["rev-list", "--left-right", "--count", &spec])?;
            let mut it = counts.split_whitespace();
            ahead = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            behind = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
        }
    }
    Ok(json!({
        "repo": c.repo, "path": a.path, "branch": branch, "head": head,
        "on_origin": on_origin, "ahead": ahead, "behind": behind,
        "clean": changes.is_empty(), "changes": changes,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommitArgs {
    path: String,
    message: String,
    #[serde(default)]
    paths: Vec<String>,
}

fn commit(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CommitArgs = parse("code_commit", args)?;
    if a.message.trim().is_empty() {
        return Err("`message` is empty; say what the commit changes".into());
    }
    let who = me(w, actor)?;
    let c = open_clone(w, &a.path)?;
    let branch = current_branch(w, &who, &c)?;
    if a.paths.is_empty() {
        cgit_ok(w, &who, &c, &["add", "--all"])?;
    } else {
        for p in &a.paths {
            bureau_core::task::check_rel_path(p).map_err(|e| format!("`paths`: `{p}`: {e}"))?;
        }
        let mut args = vec!["add", "--all", "--"];
        args.extend(a.paths.iter().map(String::as_str));
        cgit_ok(w, &who, &c, &args)?;
    }
    let staged = cgit(w, &who, &c, &["diff", "--cached", "--quiet"])?;
    if staged.ok() {
        return Err(format!(
            "nothing to commit in `{}`: no file differs from the last commit; edit files first",
            a.path
        ));
    }
    cgit_ok(
        w,
        &who,
        &c,
        &["commit", "--quiet", "--no-verify", "-m", &a.message],
    )?;
    let sha = clone_rev(w, &who, &c, "HEAD")?.unwrap_or_default();
    let files = cgit_ok(
        w,
        &who,
        &c,
        &[
            "diff-tree",
            "--no-commit-id",
            "--name-only",
            "-r",
            "--root",
            "HEAD",
        ],
    )?;
    let files: Vec<&str> = files.lines().collect();
    w.record(
        actor.clone(),
        "code",
        "commit",
        false,
        json!({"repo": c.repo, "path": a.path, "branch": branch, "sha": sha, "message": a.message, "files": files}),
    );
    Ok(
        json!({"sha": sha, "branch": branch, "files": files, "pushed": false,
        "next": "code_push to publish the commit"}),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PushArgs {
    path: String,
    branch: Option<String>,
    #[serde(default)]
    force: bool,
}

fn push(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: PushArgs = parse("code_push", args)?;
    let who = me(w, actor)?;
    let c = open_clone(w, &a.path)?;
    let branch = match &a.branch {
        Some(b) => b.clone(),
        None => current_branch(w, &who, &c)?,
    };
    check_branch(&branch)?;
    let local = clone_rev(w, &who, &c, &format!("refs/heads/{branch}"))?
        .ok_or_else(|| format!("the clone has no branch `{branch}`"))?;
    let repo = repo_of(w, &c.repo)?;
    if repo.protected.contains(&branch) {
        return Err(format!(
            "`{branch}` is a protected branch of `{}`: nobody pushes to it directly. Push your work to a new branch (code_branch with create=true, then code_push) and open a merge request (code_create_mr)",
            c.repo
        ));
    }
    let remote = rev(w, &c.repo, &format!("refs/heads/{branch}"))?;
    if remote.as_deref() == Some(local.as_str()) {
        return Ok(json!({"branch": branch, "pushed": false, "head": local,
            "message": format!("origin/{branch} is already at {}", short(&local))}));
    }
    fetch(w, &who, &c)?;
    let mut forced = false;
    if let Some(rsha) = &remote {
        let ff = cgit(w, &who, &c, &["merge-base", "--is-ancestor", rsha, &local])?.ok();
        if !ff {
            if !a.force {
                return Err(format!(
                    "rejected: origin/{branch} has commits your branch does not have; run code_pull to merge them, then push again"
                ));
            }
            let range = format!("{local}..{rsha}");
            let authors = cgit_ok(w, &who, &c, &["log", "--format=%ae", &range])?;
            let others: BTreeSet<&str> = authors
                .lines()
                .filter(|e| !e.eq_ignore_ascii_case(&who.email))
                .collect();
            if !others.is_empty() {
                return Err(format!(
                    "refusing to force-push: it would discard commits by {} on origin/{branch}; run code_pull to merge them instead",
                    others.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
            forced = true;
        }
    }
    let spec = format!(
        "{}refs/heads/{branch}:refs/heads/{branch}",
        if forced { "+" } else { "" }
    );
    let out = cgit(
        w,
        &who,
        &c,
        &["push", "--quiet", "--no-verify", "origin", &spec],
    )?;
    if !out.ok() {
        return Err(format!("push failed: {}", out.message()));
    }
    let count = match &remote {
        Some(r) if !forced => {
            let range = format!("{r}..{local}");
            cgit_ok(w, &who, &c, &["rev-list", "--count", &range])?
        }
        _ => cgit_ok(w, &who, &c, &["rev-list", "--count", &local])?,
    };
    let count: u64 = count.trim().parse().unwrap_or(0);
    after_push(w, &c.repo)?;
    w.record(
        actor.clone(),
        "code",
        "push",
        false,
        json!({"repo": c.repo, "branch": branch, "from": remote, "to": local, "forced": forced, "commits": count}),
    );
    Ok(
        json!({"repo": c.repo, "branch": branch, "pushed": true, "from": remote, "to": local,
        "forced": forced, "commits": count, "new_branch": remote.is_none()}),
    )
}

fn pull(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: PathArgs = parse("code_pull", args)?;
    let who = me(w, actor)?;
    let c = open_clone(w, &a.path)?;
    let branch = current_branch(w, &who, &c)?;
    fetch(w, &who, &c)?;
    let remote = format!("refs/remotes/origin/{branch}");
    let Some(rsha) = clone_rev(w, &who, &c, &remote)? else {
        return Err(format!(
            "origin has no branch `{branch}` yet; push it with code_push"
        ));
    };
    let before = clone_rev(w, &who, &c, "HEAD")?.unwrap_or_default();
    if cgit(w, &who, &c, &["merge-base", "--is-ancestor", &rsha, "HEAD"])?.ok() {
        return Ok(json!({"branch": branch, "head": before, "updated": false,
            "message": "already up to date"}));
    }
    let out = cgit(
        w,
        &who,
        &c,
        &[
            "merge",
            "--no-edit",
            "--no-stat",
            "--no-verify",
            &format!("origin/{branch}"),
        ],
    )?;
    if !out.ok() {
        let conflicts = cgit(w, &who, &c, &["diff", "--name-only", "--diff-filter=U"])?.stdout;
        let conflicts: Vec<&str> = conflicts.lines().collect();
        let _ = cgit(w, &who, &c, &["merge", "--abort"]);
        if conflicts.is_empty() {
            return Err(format!("pull failed: {}", out.message()));
        }
        return Err(format!(
            "pull stopped: your changes conflict with origin/{branch} in {}; nothing was changed. Edit those files to match origin's version or reconcile them, commit, and pull again",
            conflicts.join(", ")
        ));
    }
    let after = clone_rev(w, &who, &c, "HEAD")?.unwrap_or_default();
    let fast_forward = after == rsha;
    w.record(
        actor.clone(),
        "code",
        "pull",
        false,
        json!({"repo": c.repo, "path": a.path, "branch": branch, "from": before, "to": after}),
    );
    Ok(json!({"branch": branch, "head": after, "updated": true, "fast_forward": fast_forward}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BranchArgs {
    path: String,
    name: Option<String>,
    #[serde(default)]
    create: bool,
    from: Option<String>,
}

fn branch(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: BranchArgs = parse("code_branch", args)?;
    let who = me(w, actor)?;
    let c = open_clone(w, &a.path)?;
    fetch(w, &who, &c)?;
    let Some(name) = &a.name else {
        let list = |prefix: &str| -> Result<Vec<String>, String> {
            Ok(cgit_ok(
                w,
                &who,
                &c,
                &["for-each-ref", "--format=%(refname:short)", prefix],
            )?
            .lines()
            .map(String::from)
            .collect())
        };
        return Ok(json!({
            "current": current_branch(w, &who, &c).ok(),
            "local": list("refs/heads/")?,
            "origin": list("refs/remotes/origin/")?,
        }));
    };
    check_branch(name)?;
    let out = if a.create {
        let mut args = vec!["switch", "--quiet", "--no-track", "-c", name.as_str()];
        if let Some(f) = &a.from {
            check_ref("from", f)?;
            args.push(f);
        }
        cgit(w, &who, &c, &args)?
    } else {
        if a.from.is_some() {
            return Err("`from` is only used with create=true".into());
        }
        cgit(w, &who, &c, &["switch", "--quiet", name])?
    };
    if !out.ok() {
        return Err(format!("cannot switch to `{name}`: {}", out.message()));
    }
    let head = clone_rev(w, &who, &c, "HEAD")?.unwrap_or_default();
    w.record(
        actor.clone(),
        "code",
        if a.create {
            "branch_create"
        } else {
            "branch_switch"
        },
        false,
        json!({"repo": c.repo, "path": a.path, "branch": name}),
    );
    Ok(json!({"branch": name, "head": head, "created": a.create}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogArgs {
    path: Option<String>,
    repo: Option<String>,
    #[serde(rename = "ref")]
    r#ref: Option<String>,
    limit: Option<u32>,
}

fn log(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: LogArgs = parse("code_log", args)?;
    let who = me(w, actor)?;
    let limit = a.limit.unwrap_or(20).clamp(1, 200);
    let n = format!("-n{limit}");
    let text = match (&a.path, &a.repo) {
        (Some(p), None) => {
            let c = open_clone(w, p)?;
            let r = a.r#ref.clone().unwrap_or_else(|| "HEAD".into());
            check_ref("ref", &r)?;
            cgit_ok(
                w,
                &who,
                &c,
                &[
                    "log",
                    &n,
                    LOG_FORMAT,
                    "--name-only",
                    "--diff-merges=first-parent",
                    &r,
                    "--",
                ],
            )?
        }
        (None, Some(repo)) => {
            let rp = repo_of(w, repo)?;
            let r = a.r#ref.clone().unwrap_or_else(|| rp.default_branch.clone());
            check_ref("ref", &r)?;
            bare_git(
                w,
                &who,
                repo,
                &[
                    "log",
                    &n,
                    LOG_FORMAT,
                    "--name-only",
                    "--diff-merges=first-parent",
                    &r,
                    "--",
                ],
            )?
            .into_result(&format!("reading the history of `{r}`"))?
        }
        _ => {
            return Err(
                "give either `path` (a workspace clone) or `repo` (a hosted repository)".into(),
            );
        }
    };
    let commits: Vec<Value> = parse_log(&text).iter().map(|c| commit_json(w, c)).collect();
    Ok(json!({"commits": commits}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiffArgs {
    path: Option<String>,
    repo: Option<String>,
    from: Option<String>,
    to: Option<String>,
}

fn diff(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: DiffArgs = parse("code_diff", args)?;
    let who = me(w, actor)?;
    for (f, v) in [("from", &a.from), ("to", &a.to)] {
        if let Some(v) = v {
            check_ref(f, v)?;
        }
    }
    let (stat, patch, untracked) = match (&a.path, &a.repo) {
        (Some(p), None) => {
            let c = open_clone(w, p)?;
            let range: Vec<&str> = match (&a.from, &a.to) {
                (None, None) => vec!["HEAD"],
                (Some(f), None) => vec![f.as_str()],
                (Some(f), Some(t)) => vec![f.as_str(), t.as_str()],
                (None, Some(_)) => return Err("`to` needs `from`".into()),
            };
            let mut s = vec!["diff", "--numstat"];
            s.extend(&range);
            s.push("--");
            let mut d = vec!["diff"];
            d.extend(&range);
            d.push("--");
            let untracked = if a.to.is_none() {
                cgit_ok(w, &who, &c, &["ls-files", "--others", "--exclude-standard"])?
                    .lines()
                    .map(String::from)
                    .collect()
            } else {
                Vec::new()
            };
            (
                cgit_ok(w, &who, &c, &s)?,
                cgit_ok(w, &who, &c, &d)?,
                untracked,
            )
        }
        (None, Some(repo)) => {
            let rp = repo_of(w, repo)?;
            let from = a.from.clone().unwrap_or_else(|| rp.default_branch.clone());
            let Some(to) = a.to.clone() else {
                return Err("give `to` (and `from`, default the default branch) to compare two refs of a hosted repository".into());
            };
            let s = bare_git(w, &who, repo, &["diff", "--numstat", &from, &to, "--"])?
                .into_result("diff")?;
            let d = bare_git(w, &who, repo, &["diff", &from, &to, "--"])?.into_result("diff")?;
            (s, d, Vec::new())
        }
        _ => {
            return Err(
                "give either `path` (a workspace clone) or `repo` (a hosted repository)".into(),
            );
        }
    };
    let (patch, truncated) = cut(patch, MAX_PATCH);
    Ok(
        json!({"files": numstat(&stat), "untracked": untracked, "patch": patch, "truncated": truncated}),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShowArgs {
    repo: String,
    path: String,
    #[serde(rename = "ref")]
    r#ref: Option<String>,
}

fn show_file(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ShowArgs = parse("code_show_file", args)?;
    let who = me(w, actor)?;
    let rp = repo_of(w, &a.repo)?;
    let r = a.r#ref.clone().unwrap_or_else(|| rp.default_branch.clone());
    check_ref("ref", &r)?;
    if rev(w, &a.repo, &r)?.is_none() {
        return Err(format!(
            "`{r}` is not a branch, tag or commit of `{}`; branches: {}",
            a.repo,
            rp.branches.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let path = a.path.trim().trim_matches('/').to_string();
    let spec = format!("{r}:{path}");
    let kind = bare_git(w, &who, &a.repo, &["cat-file", "-t", &spec])?;
    match kind.stdout.trim() {
        "tree" => {
            let list = bare_git(w, &who, &a.repo, &["ls-tree", &spec])?.into_result("listing")?;
            let entries: Vec<Value> = list
                .lines()
                .filter_map(|l| {
                    let (meta, name) = l.split_once('\t')?;
                    let kind = meta.split_whitespace().nth(1)?;
                    Some(json!({"name": name, "type": if kind == "tree" { "dir" } else { "file" }}))
                })
                .collect();
            Ok(json!({"repo": a.repo, "ref": r, "path": path, "entries": entries}))
        }
        "blob" => {
            let data = read_file_at(w, &a.repo, &r, &path)?.unwrap_or_default();
            if crate::files::is_binary(&data) {
                return Ok(
                    json!({"repo": a.repo, "ref": r, "path": path, "binary": true, "size": data.len()}),
                );
            }
            let (content, truncated) = cut(String::from_utf8_lossy(&data).into_owned(), MAX_FILE);
            Ok(
                json!({"repo": a.repo, "ref": r, "path": path, "content": content, "truncated": truncated}),
            )
        }
        _ => Err(format!(
            "no `{path}` at `{r}` of `{}`; list the repository with path \"\"",
            a.repo
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommitFilesArgs {
    repo: String,
    branch: String,
    message: String,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    delete: Vec<String>,
    start_branch: Option<String>,
}

fn commit_files(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CommitFilesArgs = parse("code_commit_files", args)?;
    let who = me(w, actor)?;
    let rp = repo_of(w, &a.repo)?;
    check_branch(&a.branch)?;
    if a.message.trim().is_empty() {
        return Err("`message` is empty; say what the commit changes".into());
    }
    if a.files.is_empty() && a.delete.is_empty() {
        return Err("nothing to commit: give `files` to write or `delete`".into());
    }
    if rp.protected.contains(&a.branch) {
        return Err(format!(
            "`{}` is a protected branch of `{}`; commit to a new branch (start_branch) and open a merge request",
            a.branch, a.repo
        ));
    }
    let parent = match &a.start_branch {
        Some(s) => {
            if rp.branches.contains_key(&a.branch) {
                return Err(format!(
                    "branch `{}` already exists; drop start_branch to commit on it",
                    a.branch
                ));
            }
            rp.branches
                .get(s)
                .map(|b| b.head.clone())
                .ok_or_else(|| format!("`start_branch`: no branch `{s}` in `{}`", a.repo))?
        }
        None => rp
            .branches
            .get(&a.branch)
            .map(|b| b.head.clone())
            .ok_or_else(|| {
                format!(
                    "no branch `{}` in `{}`; give start_branch to create it",
                    a.branch, a.repo
                )
            })?,
    };
    for p in a.files.keys().chain(&a.delete) {
        bureau_core::task::check_rel_path(p).map_err(|e| format!("`{p}`: {e}"))?;
        if p.split('/').any(|c| c == ".git") {
            return Err(format!("`{p}`: paths cannot contain a `.git` component"));
        }
    }
    for p in &a.delete {
        if read_file_at(w, &a.repo, &parent, p)?.is_none() {
            return Err(format!("cannot delete `{p}`: it is not in `{}`", a.branch));
        }
    }
    let files: Vec<(String, Vec<u8>)> = a
        .files
        .iter()
        .map(|(p, c)| (p.clone(), c.as_bytes().to_vec()))
        .collect();
    let sha = commit_onto(
        w,
        &who,
        &a.repo,
        &a.branch,
        Some(&parent),
        a.start_branch.is_some(),
        &files,
        None,
        &a.delete,
        &a.message,
    )?;
    sync_repo(w, &a.repo)?;
    let changed: Vec<&String> = a.files.keys().chain(&a.delete).collect();
    w.record(
        actor.clone(),
        "code",
        "commit_files",
        false,
        json!({"repo": a.repo, "branch": a.branch, "sha": sha, "message": a.message, "files": changed}),
    );
    Ok(json!({"repo": a.repo, "branch": a.branch, "sha": sha, "files": changed}))
}

// ---------------------------------------------------------------------------------------------
// Merge requests

fn mr_index(w: &World, repo: &str, iid: u32) -> Result<usize, String> {
    repo_of(w, repo)?
        .merge_requests
        .iter()
        .position(|m| m.iid == iid)
        .ok_or_else(|| format!("no merge request !{iid} in `{repo}`; see code_list_mrs"))
}

fn mr_summary(w: &World, m: &MergeRequest) -> Value {
    json!({
        "iid": m.iid, "title": m.title, "source": m.source, "target": m.target,
        "author": m.author, "state": m.state, "created": show_time(w, m.created),
        "comments": m.comments.len(), "approvals": m.approvals,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateMrArgs {
    repo: String,
    source: String,
    target: Option<String>,
    title: String,
    #[serde(default)]
    description: String,
}

fn create_mr(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateMrArgs = parse("code_create_mr", args)?;
    let who = me(w, actor)?;
    let rp = repo_of(w, &a.repo)?;
    let target = a
        .target
        .clone()
        .unwrap_or_else(|| rp.default_branch.clone());
    if a.title.trim().is_empty() {
        return Err("`title` is empty".into());
    }
    if !rp.branches.contains_key(&a.source) {
        return Err(format!(
            "`{}` has no branch `{}`; push it first (code_push)",
            a.repo, a.source
        ));
    }
    if !rp.branches.contains_key(&target) {
        return Err(format!("`{}` has no target branch `{target}`", a.repo));
    }
    if a.source == target {
        return Err("source and target are the same branch".into());
    }
    if let Some(m) = rp
        .merge_requests
        .iter()
        .find(|m| m.state == "open" && m.source == a.source && m.target == target)
    {
        return Err(format!(
            "merge request !{} from `{}` into `{target}` is already open",
            m.iid, a.source
        ));
    }
    let iid = rp.merge_requests.iter().map(|m| m.iid).max().unwrap_or(0) + 1;
    let mr = MergeRequest {
        iid,
        title: a.title.clone(),
        description: a.description.clone(),
        source: a.source.clone(),
        target: target.clone(),
        author: who.email.clone(),
        state: "open".into(),
        created: w.now.with_timezone(&Utc),
        comments: Vec::new(),
        approvals: Vec::new(),
        merge_sha: None,
        merged_target_sha: None,
        merged_source_sha: None,
        merged_by: None,
        merged_at: None,
    };
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.merge_requests.push(mr);
    }
    w.record(
        actor.clone(),
        "code",
        "mr_create",
        false,
        json!({"repo": a.repo, "iid": iid, "title": a.title, "source": a.source, "target": target}),
    );
    Ok(json!({"repo": a.repo, "iid": iid, "source": a.source, "target": target, "state": "open"}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    repo: String,
    state: Option<String>,
    label: Option<String>,
}

fn state_filter(state: &Option<String>, allowed: &[&str]) -> Result<Option<String>, String> {
    match state.as_deref() {
        None | Some("all") => Ok(None),
        Some(s) if allowed.contains(&s) => Ok(Some(s.to_string())),
        Some(s) => Err(format!(
            "`state` is one of {}, all; not `{s}`",
            allowed.join(", ")
        )),
    }
}

fn list_mrs(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ListArgs = parse("code_list_mrs", args)?;
    if a.label.is_some() {
        return Err("merge requests have no labels here; drop `label`".into());
    }
    let want = state_filter(&a.state, &["open", "merged", "closed"])?;
    let rp = repo_of(w, &a.repo)?;
    let list: Vec<Value> = rp
        .merge_requests
        .iter()
        .filter(|m| want.as_ref().is_none_or(|s| &m.state == s))
        .map(|m| mr_summary(w, m))
        .collect();
    Ok(json!({"repo": a.repo, "merge_requests": list}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IidArgs {
    repo: String,
    iid: u32,
}

/// Conflicting paths of merging `source` into `target` (empty = clean) and the merged tree.
fn try_merge(
    w: &World,
    who: &Ident,
    repo: &str,
    target: &str,
    source: &str,
) -> Result<(String, Vec<String>), String> {
    let out = bare_git(
        w,
        who,
        repo,
        &[
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            target,
            source,
        ],
    )?;
    let mut lines = out.stdout.lines();
    let tree = lines.next().unwrap_or("").trim().to_string();
    match out.code {
        0 => Ok((tree, Vec::new())),
        1 => Ok((
            tree,
            lines.filter(|l| !l.is_empty()).map(String::from).collect(),
        )),
        _ => Err(format!("cannot compute the merge: {}", out.message())),
    }
}

fn get_mr(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: IidArgs = parse("code_get_mr", args)?;
    let who = me(w, actor)?;
    let i = mr_index(w, &a.repo, a.iid)?;
    let rp = repo_of(w, &a.repo)?;
    let m = rp.merge_requests[i].clone();
    let (base_side, source_side) = match (&m.merged_target_sha, &m.merged_source_sha) {
        (Some(t), Some(s)) => (Some(t.clone()), Some(s.clone())),
        _ => (
            rp.branches.get(&m.target).map(|b| b.head.clone()),
            rp.branches.get(&m.source).map(|b| b.head.clone()),
        ),
    };
    let mut out = json!({
        "iid": m.iid, "title": m.title, "description": m.description, "source": m.source,
        "target": m.target, "author": m.author, "state": m.state, "created": show_time(w, m.created),
        "comments": m.comments.iter().map(|c| json!({"author": c.author, "time": show_time(w, c.time),
            "body": c.body, "file": c.file, "line": c.line})).collect::<Vec<_>>(),
        "approvals": m.approvals, "approvals_required": rp.approvals_required,
        "merge_sha": m.merge_sha, "merged_by": m.merged_by,
        "merged_at": m.merged_at.map(|t| show_time(w, t)),
    });
    if let (Some(t), Some(s)) = (base_side, source_side) {
        let range = format!("{t}...{s}");
        let stat = bare_git(w, &who, &a.repo, &["diff", "--numstat", &range, "--"])?
            .into_result("diff")?;
        let patch = bare_git(w, &who, &a.repo, &["diff", &range, "--"])?.into_result("diff")?;
        let (patch, truncated) = cut(patch, MAX_PATCH);
        let commits_range = format!("{t}..{s}");
        let log = bare_git(
            w,
            &who,
            &a.repo,
            &[
                "log",
                LOG_FORMAT,
                "--name-only",
                "--diff-merges=first-parent",
                &commits_range,
                "--",
            ],
        )?
        .into_result("log")?;
        let commits: Vec<Value> = parse_log(&log).iter().map(|c| commit_json(w, c)).collect();
        out["source_head"] = json!(s);
        out["files"] = json!(numstat(&stat));
        out["commits"] = json!(commits);
        out["diff"] = json!(patch);
        out["diff_truncated"] = json!(truncated);
        if m.state == "open" {
            let (_, conflicts) = try_merge(w, &who, &a.repo, &t, &s)?;
            out["can_merge"] = json!(conflicts.is_empty());
            out["conflicts"] = json!(conflicts);
        }
    } else {
        out["note"] = json!("the source or target branch no longer exists");
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommentMrArgs {
    repo: String,
    iid: u32,
    body: String,
    file: Option<String>,
    line: Option<u32>,
}

fn comment_mr(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CommentMrArgs = parse("code_comment_mr", args)?;
    let who = me(w, actor)?;
    if a.body.trim().is_empty() {
        return Err("`body` is empty".into());
    }
    let i = mr_index(w, &a.repo, a.iid)?;
    let m = &repo_of(w, &a.repo)?.merge_requests[i];
    if a.line.is_some() && a.file.is_none() {
        return Err("`line` needs `file`".into());
    }
    if let Some(f) = &a.file {
        let at = m
            .merged_source_sha
            .clone()
            .unwrap_or_else(|| format!("refs/heads/{}", m.source));
        match read_file_at(w, &a.repo, &at, f)? {
            None => {
                return Err(format!(
                    "`{f}` is not a file of the source branch `{}`",
                    m.source
                ));
            }
            Some(data) => {
                let lines = String::from_utf8_lossy(&data).lines().count() as u32;
                if let Some(l) = a.line
                    && (l == 0 || l > lines)
                {
                    return Err(format!(
                        "`{f}` has {lines} lines; `line` {l} is not one of them"
                    ));
                }
            }
        }
    }
    let c = ReviewComment {
        author: who.email.clone(),
        time: w.now.with_timezone(&Utc),
        body: a.body.clone(),
        file: a.file.clone(),
        line: a.line,
    };
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.merge_requests[i].comments.push(c);
    }
    w.record(
        actor.clone(),
        "code",
        "mr_comment",
        false,
        json!({"repo": a.repo, "iid": a.iid, "body": a.body, "file": a.file, "line": a.line}),
    );
    Ok(json!({"repo": a.repo, "iid": a.iid, "commented": true}))
}

fn approve_mr(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: IidArgs = parse("code_approve_mr", args)?;
    let who = me(w, actor)?;
    let i = mr_index(w, &a.repo, a.iid)?;
    let m = &repo_of(w, &a.repo)?.merge_requests[i];
    if m.state != "open" {
        return Err(format!(
            "merge request !{} is {}; only open ones can be approved",
            a.iid, m.state
        ));
    }
    if m.author.eq_ignore_ascii_case(&who.email) {
        return Err(
            "you cannot approve your own merge request; ask a colleague to review it".into(),
        );
    }
    if m.approvals.contains(&who.email) {
        return Err(format!("you already approved !{}", a.iid));
    }
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.merge_requests[i].approvals.push(who.email.clone());
    }
    w.record(
        actor.clone(),
        "code",
        "mr_approve",
        false,
        json!({"repo": a.repo, "iid": a.iid}),
    );
    Ok(json!({"repo": a.repo, "iid": a.iid, "approved": true}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MergeArgs {
    repo: String,
    iid: u32,
    #[serde(default)]
    fast_forward: bool,
    #[serde(default)]
    remove_source_branch: bool,
}

fn merge_mr(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: MergeArgs = parse("code_merge_mr", args)?;
    let who = me(w, actor)?;
    let i = mr_index(w, &a.repo, a.iid)?;
    let rp = repo_of(w, &a.repo)?;
    let m = rp.merge_requests[i].clone();
    if m.state != "open" {
        return Err(format!(
            "merge request !{} is {}; only open ones can be merged",
            a.iid, m.state
        ));
    }
    if (m.approvals.len() as u32) < rp.approvals_required {
        return Err(format!(
            "!{} needs {} approval(s) and has {}; ask a reviewer to approve it (code_approve_mr)",
            a.iid,
            rp.approvals_required,
            m.approvals.len()
        ));
    }
    let source = rp
        .branches
        .get(&m.source)
        .map(|b| b.head.clone())
        .ok_or_else(|| {
            format!(
                "the source branch `{}` no longer exists; close the merge request",
                m.source
            )
        })?;
    let target = rp
        .branches
        .get(&m.target)
        .map(|b| b.head.clone())
        .ok_or_else(|| format!("the target branch `{}` no longer exists", m.target))?;
    let is_ancestor = |x: &str, y: &str| -> Result<bool, String> {
        Ok(bare_git(w, &who, &a.repo, &["merge-base", "--is-ancestor", x, y])?.ok())
    };
    if is_ancestor(&source, &target)? {
        return Err(format!(
            "nothing to merge: `{}` is already contained in `{}`; close the merge request (code_close_mr)",
            m.source, m.target
        ));
    }
    let ff_possible = is_ancestor(&target, &source)?;
    let new = if a.fast_forward {
        if !ff_possible {
            return Err(format!(
                "cannot fast-forward: `{}` has commits that `{}` lacks; merge with a merge commit (fast_forward=false) or update the source branch",
                m.target, m.source
            ));
        }
        source.clone()
    } else {
        let (tree, conflicts) = try_merge(w, &who, &a.repo, &target, &source)?;
        if !conflicts.is_empty() {
            return Err(format!(
                "!{} cannot be merged: `{}` and `{}` conflict in {}; the author must merge `{}` into `{}` and resolve them first",
                a.iid,
                m.source,
                m.target,
                conflicts.join(", "),
                m.target,
                m.source
            ));
        }
        let msg = format!(
            "Merge branch '{}' into '{}'\n\n{}\n\nSee merge request {}!{}",
            m.source, m.target, m.title, a.repo, a.iid
        );
        bare_git(
            w,
            &who,
            &a.repo,
            &[
                "commit-tree",
                &tree,
                "-p",
                &target,
                "-p",
                &source,
                "-m",
                &msg,
            ],
        )?
        .into_result("making the merge commit")?
        .trim()
        .to_string()
    };
    let r = format!("refs/heads/{}", m.target);
    bare_git(w, &who, &a.repo, &["update-ref", &r, &new, &target])?
        .into_result("updating the target")?;
    if a.remove_source_branch {
        let s = format!("refs/heads/{}", m.source);
        bare_git(w, &who, &a.repo, &["update-ref", "-d", &s, &source])?
            .into_result("removing the source branch")?;
    }
    sync_repo(w, &a.repo)?;
    let now = w.now.with_timezone(&Utc);
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        let mr = &mut r.merge_requests[i];
        mr.state = "merged".into();
        mr.merge_sha = Some(new.clone());
        mr.merged_target_sha = Some(target.clone());
        mr.merged_source_sha = Some(source.clone());
        mr.merged_by = Some(who.email.clone());
        mr.merged_at = Some(now);
    }
    let fast_forward = new == source;
    w.record(
        actor.clone(),
        "code",
        "mr_merge",
        false,
        json!({"repo": a.repo, "iid": a.iid, "target": m.target, "merge_sha": new, "fast_forward": fast_forward}),
    );
    Ok(
        json!({"repo": a.repo, "iid": a.iid, "state": "merged", "merge_sha": new,
        "fast_forward": fast_forward, "source_removed": a.remove_source_branch}),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CloseArgs {
    repo: String,
    iid: u32,
    comment: Option<String>,
}

fn close_mr(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CloseArgs = parse("code_close_mr", args)?;
    let who = me(w, actor)?;
    let i = mr_index(w, &a.repo, a.iid)?;
    let m = &repo_of(w, &a.repo)?.merge_requests[i];
    if m.state != "open" {
        return Err(format!("merge request !{} is already {}", a.iid, m.state));
    }
    let now = w.now.with_timezone(&Utc);
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        let mr = &mut r.merge_requests[i];
        mr.state = "closed".into();
        if let Some(c) = a.comment.as_ref().filter(|c| !c.trim().is_empty()) {
            mr.comments.push(ReviewComment {
                author: who.email.clone(),
                time: now,
                body: c.clone(),
                file: None,
                line: None,
            });
        }
    }
    w.record(
        actor.clone(),
        "code",
        "mr_close",
        false,
        json!({"repo": a.repo, "iid": a.iid, "comment": a.comment}),
    );
    Ok(json!({"repo": a.repo, "iid": a.iid, "state": "closed"}))
}

// ---------------------------------------------------------------------------------------------
// Issues

fn issue_index(w: &World, repo: &str, iid: u32) -> Result<usize, String> {
    repo_of(w, repo)?
        .issues
        .iter()
        .position(|i| i.iid == iid)
        .ok_or_else(|| format!("no issue #{iid} in `{repo}`; see code_list_issues"))
}

fn issue_json(w: &World, i: &Issue) -> Value {
    json!({
        "iid": i.iid, "title": i.title, "body": i.body, "author": i.author, "state": i.state,
        "labels": i.labels, "assignee": i.assignee, "created": show_time(w, i.created),
        "comments": i.comments.iter().map(|c| json!({"author": c.author, "time": show_time(w, c.time), "body": c.body})).collect::<Vec<_>>(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateIssueArgs {
    repo: String,
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    labels: Vec<String>,
    assignee: Option<String>,
}

fn clean_labels(labels: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for l in labels {
        let l = l.trim();
        if l.is_empty() {
            return Err("labels cannot be empty".into());
        }
        if !out.iter().any(|x| x == l) {
            out.push(l.to_string());
        }
    }
    Ok(out)
}

fn create_issue(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateIssueArgs = parse("code_create_issue", args)?;
    let who = me(w, actor)?;
    if a.title.trim().is_empty() {
        return Err("`title` is empty".into());
    }
    let rp = repo_of(w, &a.repo)?;
    let iid = rp.issues.iter().map(|i| i.iid).max().unwrap_or(0) + 1;
    let assignee = a.assignee.as_deref().map(|x| person(w, x)).transpose()?;
    let issue = Issue {
        iid,
        title: a.title.clone(),
        body: a.body.clone(),
        author: who.email.clone(),
        state: "open".into(),
        labels: clean_labels(&a.labels)?,
        assignee,
        created: w.now.with_timezone(&Utc),
        comments: Vec::new(),
    };
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.issues.push(issue);
    }
    w.record(
        actor.clone(),
        "code",
        "issue_create",
        false,
        json!({"repo": a.repo, "iid": iid, "title": a.title}),
    );
    Ok(json!({"repo": a.repo, "iid": iid, "state": "open"}))
}

fn list_issues(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ListArgs = parse("code_list_issues", args)?;
    let want = state_filter(&a.state, &["open", "closed"])?;
    let rp = repo_of(w, &a.repo)?;
    let list: Vec<Value> = rp
        .issues
        .iter()
        .filter(|i| want.as_ref().is_none_or(|s| &i.state == s))
        .filter(|i| {
            a.label
                .as_ref()
                .is_none_or(|l| i.labels.iter().any(|x| x.eq_ignore_ascii_case(l)))
        })
        .map(|i| issue_json(w, i))
        .collect();
    Ok(json!({"repo": a.repo, "issues": list}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommentIssueArgs {
    repo: String,
    iid: u32,
    body: String,
}

fn comment_issue(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CommentIssueArgs = parse("code_comment_issue", args)?;
    let who = me(w, actor)?;
    if a.body.trim().is_empty() {
        return Err("`body` is empty".into());
    }
    let i = issue_index(w, &a.repo, a.iid)?;
    let now = w.now.with_timezone(&Utc);
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.issues[i].comments.push(IssueComment {
            author: who.email.clone(),
            time: now,
            body: a.body.clone(),
        });
    }
    w.record(
        actor.clone(),
        "code",
        "issue_comment",
        false,
        json!({"repo": a.repo, "iid": a.iid, "body": a.body}),
    );
    Ok(json!({"repo": a.repo, "iid": a.iid, "commented": true}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateIssueArgs {
    repo: String,
    iid: u32,
    #[serde(default)]
    add_labels: Vec<String>,
    #[serde(default)]
    remove_labels: Vec<String>,
    assignee: Option<String>,
    title: Option<String>,
    #[serde(default)]
    reopen: bool,
}

fn update_issue(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: UpdateIssueArgs = parse("code_update_issue", args)?;
    let i = issue_index(w, &a.repo, a.iid)?;
    let mut issue = repo_of(w, &a.repo)?.issues[i].clone();
    let add = clean_labels(&a.add_labels)?;
    for l in &a.remove_labels {
        if !issue
            .labels
            .iter()
            .any(|x| x.eq_ignore_ascii_case(l.trim()))
        {
            return Err(format!(
                "issue #{} has no label `{l}`; its labels: {}",
                a.iid,
                issue.labels.join(", ")
            ));
        }
        issue.labels.retain(|x| !x.eq_ignore_ascii_case(l.trim()));
    }
    for l in add {
        if !issue.labels.iter().any(|x| x.eq_ignore_ascii_case(&l)) {
            issue.labels.push(l);
        }
    }
    if let Some(x) = &a.assignee {
        issue.assignee = if x.trim().is_empty() {
            None
        } else {
            Some(person(w, x)?)
        };
    }
    if let Some(t) = &a.title {
        if t.trim().is_empty() {
            return Err("`title` is empty".into());
        }
        issue.title = t.clone();
    }
    if a.reopen {
        if issue.state == "open" {
            return Err(format!("issue #{} is already open", a.iid));
        }
        issue.state = "open".into();
    }
    let payload = json!({"repo": a.repo, "iid": a.iid, "labels": issue.labels, "assignee": issue.assignee,
        "title": issue.title, "state": issue.state});
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.issues[i] = issue;
    }
    w.record(
        actor.clone(),
        "code",
        "issue_update",
        false,
        payload.clone(),
    );
    Ok(payload)
}

fn close_issue(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CloseArgs = parse("code_close_issue", args)?;
    let who = me(w, actor)?;
    let i = issue_index(w, &a.repo, a.iid)?;
    if repo_of(w, &a.repo)?.issues[i].state == "closed" {
        return Err(format!("issue #{} is already closed", a.iid));
    }
    let now = w.now.with_timezone(&Utc);
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        let issue = &mut r.issues[i];
        issue.state = "closed".into();
        if let Some(c) = a.comment.as_ref().filter(|c| !c.trim().is_empty()) {
            issue.comments.push(IssueComment {
                author: who.email.clone(),
                time: now,
                body: c.clone(),
            });
        }
    }
    w.record(
        actor.clone(),
        "code",
        "issue_close",
        false,
        json!({"repo": a.repo, "iid": a.iid, "comment": a.comment}),
    );
    Ok(json!({"repo": a.repo, "iid": a.iid, "state": "closed"}))
}

// ---------------------------------------------------------------------------------------------
// Wiki

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WikiReadArgs {
    repo: String,
    title: Option<String>,
}

fn wiki_read(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: WikiReadArgs = parse("code_wiki_read", args)?;
    let rp = repo_of(w, &a.repo)?;
    match &a.title {
        None => Ok(json!({"repo": a.repo, "pages": rp.wiki.keys().collect::<Vec<_>>()})),
        Some(t) => {
            let p = rp.wiki.get(t).ok_or_else(|| {
                format!(
                    "no wiki page `{t}` in `{}`; pages: {}",
                    a.repo,
                    rp.wiki.keys().cloned().collect::<Vec<_>>().join(", ")
                )
            })?;
            Ok(
                json!({"repo": a.repo, "title": t, "content": p.content, "author": p.author,
                "updated": show_time(w, p.updated)}),
            )
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WikiWriteArgs {
    repo: String,
    title: String,
    content: String,
}

fn wiki_write(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: WikiWriteArgs = parse("code_wiki_write", args)?;
    let who = me(w, actor)?;
    repo_of(w, &a.repo)?;
    let title = a.title.trim().to_string();
    if title.is_empty() || title.contains(['/', '\n']) {
        return Err("`title` must be a non-empty single line without `/`".into());
    }
    let now = w.now.with_timezone(&Utc);
    let created = !w.code.repos[&a.repo].wiki.contains_key(&title);
    if let Some(r) = w.code.repos.get_mut(&a.repo) {
        r.wiki.insert(
            title.clone(),
            WikiPage {
                content: a.content.clone(),
                author: who.email.clone(),
                updated: now,
            },
        );
    }
    w.record(
        actor.clone(),
        "code",
        "wiki_write",
        false,
        json!({"repo": a.repo, "title": title, "created": created, "size": a.content.len()}),
    );
    Ok(json!({"repo": a.repo, "title": title, "created": created}))
}
