//! Code hosting: real git repositories, merge requests, repository issues, wikis.
//!
//! Hosted repositories are bare git repositories in `<world root>/code/<name>.git`, outside the
//! agent's workspace; agents clone them into the workspace with `code_clone` and push back with
//! `code_push`. Every git command runs the `git` program with a clean environment (no system or
//! user configuration, hooks disabled, the world clock as author and committer date, the acting
//! person as author), so the same actions give the same commit hashes in every world.
//!
//! Seeded from `world/code/`; documented in `docs/services/code.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bureau_core::log::Actor;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::snapshot::FileRecord;
use crate::{World, WorldError};

/// Commits per branch kept in the state (and shown to checks), newest first.
pub const COMMITS_PER_BRANCH: usize = 200;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeState {
    pub repos: BTreeMap<String, Repo>,
    /// Only in snapshots: the files of `<world root>/code` (path → hash, size, mode), contents
    /// in the blob store. Empty in a live world.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hosted_files: BTreeMap<String, FileRecord>,
    /// Only in snapshots: the directories of `<world root>/code`.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub hosted_dirs: BTreeSet<String>,
}

/// One hosted repository.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Repo {
    pub name: String,
    pub description: String,
    pub default_branch: String,
    /// The owner's email.
    pub owner: String,
    /// Branches nobody pushes to directly (changes go through merge requests).
    #[serde(default)]
    pub protected: Vec<String>,
    /// Approvals a merge request needs before it can be merged.
    #[serde(default)]
    pub approvals_required: u32,
    /// Branch → its tip and recent history (mirrors the git repository).
    pub branches: BTreeMap<String, Branch>,
    /// Commits named by `branches`, by sha.
    pub commits: BTreeMap<String, Commit>,
    pub merge_requests: Vec<MergeRequest>,
    pub issues: Vec<Issue>,
    /// Wiki pages by title.
    pub wiki: BTreeMap<String, WikiPage>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    pub head: String,
    /// The newest [`COMMITS_PER_BRANCH`] commits reachable from the head, newest first.
    pub commits: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    pub sha: String,
    pub parents: Vec<String>,
    pub author: String,
    pub author_name: String,
    pub time: DateTime<Utc>,
    pub message: String,
    /// Paths changed against the first parent (every path for a root commit).
    pub files: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeRequest {
    pub iid: u32,
    pub title: String,
    pub description: String,
    pub source: String,
    pub target: String,
    pub author: String,
    /// `open`, `merged` or `closed`.
    pub state: String,
    pub created: DateTime<Utc>,
    pub comments: Vec<ReviewComment>,
    /// Emails of approvers, in order.
    pub approvals: Vec<String>,
    #[serde(default)]
    pub merge_sha: Option<String>,
    /// The target's tip before the merge.
    #[serde(default)]
    pub merged_target_sha: Option<String>,
    /// The source tip that was merged.
    #[serde(default)]
    pub merged_source_sha: Option<String>,
    #[serde(default)]
    pub merged_by: Option<String>,
    #[serde(default)]
    pub merged_at: Option<DateTime<Utc>>,
    /// Approvals withdrawn because new commits reached the source branch, oldest first. An
    /// approval is of the commits reviewed, as on every forge: when the source branch moves,
    /// the approvals go and the reviewers must approve again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals_reset: Vec<ApprovalReset>,
}

/// One withdrawal of a merge request's approvals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalReset {
    pub time: DateTime<Utc>,
    /// Who moved the source branch.
    pub by: String,
    /// The source branch's head the approvals were given on, and its new head.
    pub from: String,
    pub to: String,
    /// The approvals withdrawn (emails, in order).
    pub approvals: Vec<String>,
    /// Why, in words.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewComment {
    pub author: String,
    pub time: DateTime<Utc>,
    pub body: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    pub iid: u32,
    pub title: String,
    pub body: String,
    pub author: String,
    /// `open` or `closed`.
    pub state: String,
    pub labels: Vec<String>,
    #[serde(default)]
    pub assignee: Option<String>,
    pub created: DateTime<Utc>,
    pub comments: Vec<IssueComment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IssueComment {
    pub author: String,
    pub time: DateTime<Utc>,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WikiPage {
    pub content: String,
    pub author: String,
    pub updated: DateTime<Utc>,
}

impl CodeState {
    /// What checks see as `w.code` (JSON; objects become Starlark structs, `{"$dict": {...}}`
    /// becomes a dict). See docs/services/code.md.
    pub fn check_view(&self, tz: chrono_tz::Tz) -> Value {
        let t = |x: &DateTime<Utc>| x.with_timezone(&tz).to_rfc3339();
        let mut repos = serde_json::Map::new();
        for (name, r) in &self.repos {
            let commit = |sha: &String| -> Value {
                match r.commits.get(sha) {
                    Some(c) => json!({
                        "sha": c.sha, "short": short(&c.sha), "parents": c.parents,
                        "author": c.author, "author_name": c.author_name, "time": t(&c.time),
                        "message": c.message, "title": c.message.lines().next().unwrap_or(""),
                        "files": c.files,
                    }),
                    None => json!({"sha": sha}),
                }
            };
            let mut branches = serde_json::Map::new();
            for (b, br) in &r.branches {
                branches.insert(
                    b.clone(),
                    json!({
                        "name": b, "head": br.head,
                        "commits": br.commits.iter().map(commit).collect::<Vec<_>>(),
                    }),
                );
            }
            let mrs: Vec<Value> = r
                .merge_requests
                .iter()
                .map(|m| {
                    json!({
                        "iid": m.iid, "title": m.title, "description": m.description,
                        "source": m.source, "target": m.target, "author": m.author,
                        "state": m.state, "created": t(&m.created),
                        "comments": m.comments.iter().map(|c| json!({
                            "author": c.author, "time": t(&c.time), "body": c.body,
                            "file": c.file, "line": c.line,
                        })).collect::<Vec<_>>(),
                        "approvals": m.approvals,
                        "approvals_reset": m.approvals_reset.iter().map(|r| json!({
                            "time": t(&r.time), "by": r.by, "from": r.from, "to": r.to,
                            "approvals": r.approvals, "reason": r.reason,
                        })).collect::<Vec<_>>(),
                        "merge_sha": m.merge_sha, "merged_source_sha": m.merged_source_sha,
                        "merged_by": m.merged_by, "merged_at": m.merged_at.as_ref().map(t),
                    })
                })
                .collect();
            let issues: Vec<Value> = r
                .issues
                .iter()
                .map(|i| {
                    json!({
                        "iid": i.iid, "title": i.title, "body": i.body, "author": i.author,
                        "state": i.state, "labels": i.labels, "assignee": i.assignee,
                        "created": t(&i.created),
                        "comments": i.comments.iter().map(|c| json!({
                            "author": c.author, "time": t(&c.time), "body": c.body,
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let wiki: serde_json::Map<String, Value> = r
                .wiki
                .iter()
                .map(|(k, p)| {
                    (
                        k.clone(),
                        json!({"title": k, "content": p.content, "author": p.author, "updated": t(&p.updated)}),
                    )
                })
                .collect();
            repos.insert(
                name.clone(),
                json!({
                    "name": r.name, "description": r.description,
                    "default_branch": r.default_branch, "owner": r.owner,
                    "protected": r.protected, "approvals_required": r.approvals_required,
                    "branches": {"$dict": branches},
                    "merge_requests": mrs,
                    "issues": issues,
                    "wiki": {"$dict": wiki},
                }),
            );
        }
        json!({"repos": {"$dict": repos}})
    }

    pub fn repo(&self, name: &str) -> Option<&Repo> {
        self.repos.get(name)
    }
}

pub(crate) fn short(sha: &str) -> &str {
    sha.get(..8).unwrap_or(sha)
}

// ---------------------------------------------------------------------------------------------
// Running git

/// Who a git command acts as (author and committer of the commits it makes).
#[derive(Debug, Clone)]
pub(crate) struct Ident {
    pub name: String,
    pub email: String,
}

/// The name and email of `email` (the roster's name, the task user's name, or the local part).
pub(crate) fn ident(world: &World, email: &str) -> Ident {
    let name = if let Some(p) = world.people.find(email) {
        p.name.clone()
    } else if email.eq_ignore_ascii_case(&world.user.email) {
        world.user.name.clone()
    } else {
        email.split('@').next().unwrap_or(email).to_string()
    };
    Ident {
        name,
        email: email.to_string(),
    }
}

/// What a git command printed and how it ended.
#[derive(Debug)]
pub(crate) struct GitOut {
    pub code: i32,
    /// stdout as bytes.
    pub raw: Vec<u8>,
    pub stdout: String,
    pub stderr: String,
}

impl GitOut {
    pub fn ok(&self) -> bool {
        self.code == 0
    }
    /// stdout, or an error with git's own message.
    pub fn into_result(self, what: &str) -> Result<String, String> {
        if self.ok() {
            Ok(self.stdout)
        } else {
            Err(format!("{what} failed: {}", self.message()))
        }
    }
    pub fn message(&self) -> String {
        let m = self.stderr.trim();
        if m.is_empty() {
            self.stdout.trim().to_string()
        } else {
            m.to_string()
        }
    }
}

/// Where hosted repositories live.
pub(crate) fn code_dir(world: &World) -> PathBuf {
    world.root.join("code")
}

/// The bare repository of a hosted repo.
pub(crate) fn bare_path(world: &World, repo: &str) -> PathBuf {
    code_dir(world).join(format!("{repo}.git"))
}

/// Options every git command runs with: no hooks, no background work, no reflogs, no
/// conversion of line endings, no signing, plain output; no submodule is ever entered (a
/// nested repository has a configuration of its own), no protocol but local paths, and every
/// configurable program that the commands Bureau runs could start is set to nothing.
/// Command-line configuration wins over the repository's, but not for keys with a name of the
/// repository's choosing (`filter.<x>.clean`): that is why [`vet_clone`] also runs.
const GIT_OPTIONS: &[&str] = &[
    "core.autocrlf=false",
    "core.pager=cat",
    "core.editor=true",
    "core.sshCommand=false",
    "core.untrackedCache=false",
    "credential.helper=",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "push.recurseSubmodules=no",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "protocol.allow=never",
    "protocol.file.allow=always",
    "init.defaultBranch=main",
    "commit.gpgsign=false",
    "tag.gpgsign=false",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.logAllRefUpdates=false",
    "core.quotepath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "color.ui=false",
    "advice.detachedHead=false",
    "protocol.ext.allow=never",
    "merge.conflictstyle=merge",
    "safe.directory=*",
];

/// Entries of a clone's `.git` that make git read another repository's objects, references
/// or configuration. `code_clone` never makes them; any of them in a clone was put there to
/// take git somewhere Bureau did not send it (a `commondir` with a `config` of its own whose
/// filter runs a program; linked worktrees; submodule repositories; alternates).
const GIT_REDIRECTS: &[&str] = &[
    "commondir",
    "gitdir",
    "config.worktree",
    "worktrees",
    "modules",
    "objects/info/alternates",
    "objects/info/http-alternates",
];

/// Check that the clone at `dir` is a plain repository that git can be run on without
/// reading anything the agent chose as configuration: `.git` is a directory; nothing under
/// it is a symbolic link, a FIFO, a socket or a device; none of [`GIT_REDIRECTS`] exists; and
/// no directory of the work tree holds a repository of its own (`.git` below the top), which
/// git would enter with that repository's configuration. Bureau rewrites `.git/config`
/// itself, so with these refused the only configuration git reads is Bureau's.
///
/// `shown` is the clone's workspace path, for the message.
pub(crate) fn vet_clone(dir: &Path, shown: &str) -> Result<(), String> {
    let refuse = |what: &str, why: &str| {
        format!(
            "the clone `{shown}` cannot be used: `{what}` {why}; code tools run git only on clones as code_clone made them — clone the repository again into a new path"
        )
    };
    let dot_git = dir.join(".git");
    match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(refuse(".git", "is not a directory")),
        Err(_) => {
            return Err(format!(
                "`{shown}` is not a clone (no .git directory); clone a repository with code_clone first"
            ));
        }
    }
    for r in GIT_REDIRECTS {
        if std::fs::symlink_metadata(dot_git.join(r)).is_ok() {
            return Err(refuse(
                &format!(".git/{r}"),
                "makes git read another repository's files or configuration",
            ));
        }
    }
    for entry in walkdir::WalkDir::new(&dot_git).min_depth(1) {
        let entry = entry.map_err(|e| refuse(".git", &format!("cannot be read ({e})")))?;
        let t = entry.file_type();
        if !(t.is_dir() || t.is_file()) {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            let kind = if t.is_symlink() {
                "is a symbolic link"
            } else {
                "is not a regular file"
            };
            return Err(refuse(&rel.display().to_string(), kind));
        }
    }
    let tree = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !(e.depth() == 1 && e.file_name() == ".git"));
    for entry in tree {
        let Ok(entry) = entry else { continue };
        if entry.file_name() == ".git" {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            return Err(refuse(
                &rel.display().to_string(),
                "makes a repository inside the clone (git would enter it with its own configuration; submodules are not supported)",
            ));
        }
    }
    Ok(())
}

/// Run `git args` in `cwd` as `who`, at the world clock. Only a missing `git` program is an
/// `Err`; a failing command is a [`GitOut`] with its code.
pub(crate) fn git(
    world: &World,
    who: &Ident,
    cwd: &Path,
    args: &[&str],
    stdin: Option<&[u8]>,
    env: &[(&str, OsString)],
) -> Result<GitOut, String> {
    let home = world.root.join("githome");
    std::fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    let now = world.now;
    let offset = now.offset().local_minus_utc();
    let date = format!(
        "@{} {}{:02}{:02}",
        now.timestamp(),
        if offset < 0 { '-' } else { '+' },
        offset.abs() / 3600,
        (offset.abs() % 3600) / 60
    );
    let mut cmd = Command::new("git");
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.env("HOME", &home)
        .env("XDG_CONFIG_HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ADVICE", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", "true")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("GIT_AUTHOR_NAME", &who.name)
        .env("GIT_AUTHOR_EMAIL", &who.email)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_NAME", &who.name)
        .env("GIT_COMMITTER_EMAIL", &who.email)
        .env("GIT_COMMITTER_DATE", &date);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for o in GIT_OPTIONS {
        cmd.arg("-c").arg(o);
    }
    cmd.args(args).current_dir(cwd);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            "the `git` program is not installed on this machine; code hosting needs git on the PATH"
                .to_string()
        } else {
            format!("cannot run git: {e}")
        }
    })?;
    if let (Some(data), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(data)
            .map_err(|e| format!("cannot write to git: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    Ok(GitOut {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        raw: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Run git in the bare repository of `repo`.
pub(crate) fn bare_git(
    world: &World,
    who: &Ident,
    repo: &str,
    args: &[&str],
) -> Result<GitOut, String> {
    let dir = bare_path(world, repo);
    let mut full: Vec<&str> = Vec::with_capacity(args.len() + 1);
    let gd = format!("--git-dir={}", dir.display());
    full.push(&gd);
    full.extend_from_slice(args);
    git(world, who, &dir, &full, None, &[])
}

/// The commit a ref of a hosted repo points to, if any.
pub(crate) fn rev(world: &World, repo: &str, r: &str) -> Result<Option<String>, String> {
    let who = ident(world, &world.user.email);
    let spec = format!("{r}^{{commit}}");
    let out = bare_git(
        world,
        &who,
        repo,
        &["rev-parse", "--verify", "--quiet", &spec],
    )?;
    Ok(out.ok().then(|| out.stdout.trim().to_string()))
}

/// Read `path` at `r` (a branch, tag or sha) of a hosted repository: `Ok(None)` when the file
/// does not exist there.
pub fn read_file_at(
    world: &World,
    repo: &str,
    r: &str,
    path: &str,
) -> Result<Option<Vec<u8>>, String> {
    if !world.code.repos.contains_key(repo) {
        return Err(format!("no repository `{repo}`"));
    }
    if r.starts_with('-') || path.starts_with('-') {
        return Err("refs and paths cannot start with `-`".into());
    }
    let who = ident(world, &world.user.email);
    let path = path.trim_start_matches('/');
    let spec = format!("{r}:{path}");
    let kind = bare_git(world, &who, repo, &["cat-file", "-t", &spec])?;
    if !kind.ok() || kind.stdout.trim() != "blob" {
        return Ok(None);
    }
    let out = bare_git(world, &who, repo, &["cat-file", "blob", &spec])?;
    if !out.ok() {
        return Err(format!("cannot read `{path}` at `{r}`: {}", out.message()));
    }
    Ok(Some(out.raw))
}

/// Read the text of `path` at the tip of `branch` (default: the default branch) of `repo`.
pub fn file_text(
    world: &World,
    repo: &str,
    branch: Option<&str>,
    path: &str,
) -> Result<Option<String>, String> {
    let r = world
        .code
        .repos
        .get(repo)
        .ok_or_else(|| format!("no repository `{repo}`"))?;
    let branch = branch.unwrap_or(&r.default_branch);
    if !r.branches.contains_key(branch) {
        return Err(format!("repository `{repo}` has no branch `{branch}`"));
    }
    let spec = format!("refs/heads/{branch}");
    Ok(read_file_at(world, repo, &spec, path)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Re-read the branches and their commits of `repo` from its git repository into the state.
pub(crate) fn sync_repo(world: &mut World, repo: &str) -> Result<(), String> {
    let who = ident(world, &world.user.email);
    let refs = bare_git(
        world,
        &who,
        repo,
        &[
            "for-each-ref",
            "--format=%(refname:short)%00%(objectname)",
            "refs/heads/",
        ],
    )?
    .into_result("listing branches")?;
    let mut branches = BTreeMap::new();
    let mut commits = BTreeMap::new();
    for line in refs.lines() {
        let Some((name, sha)) = line.split_once('\0') else {
            continue;
        };
        let log = bare_git(
            world,
            &who,
            repo,
            &[
                "log",
                &format!("-n{COMMITS_PER_BRANCH}"),
                LOG_FORMAT,
                "--name-only",
                "--diff-merges=first-parent",
                &format!("refs/heads/{name}"),
                "--",
            ],
        )?
        .into_result("reading the history")?;
        let mut list = Vec::new();
        for c in parse_log(&log) {
            list.push(c.sha.clone());
            commits.insert(c.sha.clone(), c);
        }
        branches.insert(
            name.to_string(),
            Branch {
                head: sha.to_string(),
                commits: list,
            },
        );
    }
    if let Some(r) = world.code.repos.get_mut(repo) {
        r.branches = branches;
        r.commits = commits;
    }
    Ok(())
}

/// The `--format` of `git log` that [`parse_log`] reads (with `--name-only`).
pub(crate) const LOG_FORMAT: &str = "--format=%x1e%H%x1f%P%x1f%ae%x1f%an%x1f%at%x1f%B%x1f";

/// Parse `git log` output made with [`LOG_FORMAT`] and `--name-only`.
pub(crate) fn parse_log(log: &str) -> Vec<Commit> {
    let mut out = Vec::new();
    for rec in log.split('\x1e').skip(1) {
        let f: Vec<&str> = rec.splitn(7, '\x1f').collect();
        if f.len() < 7 {
            continue;
        }
        out.push(Commit {
            sha: f[0].trim().to_string(),
            parents: f[1].split_whitespace().map(String::from).collect(),
            author: f[2].to_string(),
            author_name: f[3].to_string(),
            time: f[4]
                .trim()
                .parse::<i64>()
                .ok()
                .and_then(|s| DateTime::from_timestamp(s, 0))
                .unwrap_or(DateTime::UNIX_EPOCH),
            message: f[5].trim_end().to_string(),
            files: f[6]
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect(),
        });
    }
    out
}

/// Make a commit on `branch` of a hosted repository without a clone: the parent's tree (or
/// `start`'s, or an empty tree) plus `files` written (path → content) minus `delete`; or, with
/// `tree_dir`, plus every file of that directory. Returns the new commit's sha. Moves the
/// branch only if it still points to `parent` (or does not exist, for a `new_branch`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn commit_onto(
    world: &World,
    who: &Ident,
    repo: &str,
    branch: &str,
    parent: Option<&str>,
    new_branch: bool,
    files: &[(String, Vec<u8>)],
    tree_dir: Option<&Path>,
    delete: &[String],
    message: &str,
) -> Result<String, String> {
    let dir = bare_path(world, repo);
    let index = world.root.join("githome").join("seed-index");
    let _ = std::fs::remove_file(&index);
    let env = [("GIT_INDEX_FILE", index.clone().into_os_string())];
    let gd = format!("--git-dir={}", dir.display());
    let run = |args: &[&str], stdin: Option<&[u8]>, cwd: &Path| -> Result<String, String> {
        let mut full = vec![gd.as_str()];
        full.extend_from_slice(args);
        git(world, who, cwd, &full, stdin, &env)?.into_result(&format!("git {}", args[0]))
    };
    match parent {
        Some(p) => run(&["read-tree", p], None, &dir)?,
        None => run(&["read-tree", "--empty"], None, &dir)?,
    };
    if let Some(src) = tree_dir {
        let src = &std::fs::canonicalize(src)
            .map_err(|e| format!("cannot read {}: {e}", src.display()))?;
        let wt = format!("--work-tree={}", src.display());
        let mut full = vec![gd.as_str(), wt.as_str()];
        full.extend_from_slice(&["add", "--force", "--no-all", "."]);
        git(world, who, src, &full, None, &env)?.into_result("adding the files")?;
    }
    for (path, data) in files {
        let sha = run(&["hash-object", "-w", "--stdin"], Some(data), &dir)?;
        let info = format!("100644,{},{}", sha.trim(), path);
        run(&["update-index", "--add", "--cacheinfo", &info], None, &dir)?;
    }
    for path in delete {
        run(&["update-index", "--force-remove", "--", path], None, &dir)?;
    }
    let tree = run(&["write-tree"], None, &dir)?;
    let tree = tree.trim();
    let mut args = vec!["commit-tree", tree];
    if let Some(p) = parent {
        args.push("-p");
        args.push(p);
    }
    args.push("-m");
    args.push(message);
    let sha = run(&args, None, &dir)?.trim().to_string();
    let _ = std::fs::remove_file(&index);
    let r = format!("refs/heads/{branch}");
    let zero = "0000000000000000000000000000000000000000";
    let old = if new_branch {
        zero
    } else {
        parent.unwrap_or(zero)
    };
    run(&["update-ref", &r, &sha, old], None, &dir)?;
    Ok(sha)
}

// ---------------------------------------------------------------------------------------------
// Seeding

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RepoFile {
    #[serde(default)]
    description: String,
    owner: Option<String>,
    default_branch: Option<String>,
    #[serde(default)]
    protected: Vec<String>,
    #[serde(default)]
    approvals_required: u32,
    #[serde(default)]
    branch: Vec<SeedBranch>,
    #[serde(default)]
    commit: Vec<SeedCommit>,
    #[serde(default)]
    merge_request: Vec<SeedMr>,
    #[serde(default)]
    issue: Vec<SeedIssue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedBranch {
    name: String,
    from: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedCommit {
    branch: Option<String>,
    author: Option<String>,
    message: String,
    /// A directory of `world/code/<repo>.commits/` whose files are written by the commit.
    dir: Option<String>,
    #[serde(default)]
    delete: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedMr {
    title: String,
    #[serde(default)]
    description: String,
    source: String,
    target: Option<String>,
    author: Option<String>,
    #[serde(default = "open")]
    state: String,
    #[serde(default)]
    approvals: Vec<String>,
    #[serde(default)]
    comment: Vec<SeedReview>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedReview {
    author: String,
    body: String,
    file: Option<String>,
    line: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedIssue {
    title: String,
    #[serde(default)]
    body: String,
    author: Option<String>,
    #[serde(default = "open")]
    state: String,
    #[serde(default)]
    labels: Vec<String>,
    assignee: Option<String>,
    #[serde(default)]
    comment: Vec<SeedIssueComment>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedIssueComment {
    author: String,
    body: String,
}

fn open() -> String {
    "open".into()
}

/// A repository name: letters, digits, `-`, `_`, `.`; not starting with `.` or `-`.
pub(crate) fn valid_repo_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && !name.ends_with(".git")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A branch name git accepts and that cannot be read as an option.
pub(crate) fn valid_branch_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| !c.is_control() && !" ~^:?*[\\".contains(c))
}

/// Seed the service from `dir` (`world/code/`; absent = empty): `<repo>/` is the initial tree
/// of the default branch; `<repo>.toml` (optional) describes the repository, more branches and
/// commits, merge requests and issues; `<repo>.commits/<dir>/` hold the files of seeded
/// commits; `<repo>.wiki/<Title>.md` are wiki pages.
pub(crate) fn seed(world: &mut World, dir: &Path) -> Result<(), WorldError> {
    if !dir.is_dir() {
        return Ok(());
    }
    let err = |path: &Path, message: String| WorldError::Seed {
        path: path.to_path_buf(),
        message,
    };
    let mut names = BTreeSet::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| WorldError::io(dir, e))?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in &entries {
        let file = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if p.is_dir() {
            if file.ends_with(".commits") || file.ends_with(".wiki") {
                let base = file.rsplit_once('.').map(|x| x.0).unwrap_or("");
                if !dir.join(base).is_dir() {
                    return Err(err(
                        p,
                        format!("there is no repository directory `{base}/` beside it"),
                    ));
                }
                continue;
            }
            if !valid_repo_name(&file) {
                return Err(err(
                    p,
                    "repository names use letters, digits, `-`, `_` and `.`".into(),
                ));
            }
            names.insert(file);
        } else if let Some(base) = file.strip_suffix(".toml") {
            if !dir.join(base).is_dir() {
                return Err(err(
                    p,
                    format!("there is no repository directory `{base}/` beside it"),
                ));
            }
        } else {
            return Err(err(
                p,
                "world/code/ holds <repo>/ directories, <repo>.toml, <repo>.commits/ and <repo>.wiki/ (see docs/services/code.md)".into(),
            ));
        }
    }
    for name in names {
        seed_repo(world, dir, &name)?;
    }
    Ok(())
}

fn seed_repo(world: &mut World, dir: &Path, name: &str) -> Result<(), WorldError> {
    let toml_path = dir.join(format!("{name}.toml"));
    let err = |message: String| WorldError::Seed {
        path: toml_path.clone(),
        message,
    };
    let meta: RepoFile = if toml_path.exists() {
        let text =
            std::fs::read_to_string(&toml_path).map_err(|e| WorldError::io(&toml_path, e))?;
        toml::from_str(&text).map_err(|e| err(format!("{e}— see docs/services/code.md")))?
    } else {
        RepoFile::default()
    };
    let people = world.people.clone();
    let user_email = world.user.email.clone();
    let person = |who: &Option<String>, default: &str| -> Result<String, WorldError> {
        match who {
            None => Ok(default.to_string()),
            Some(w) => people
                .find(w)
                .map(|p| p.email.clone())
                .or_else(|| {
                    w.eq_ignore_ascii_case(&user_email)
                        .then(|| user_email.clone())
                })
                .ok_or_else(|| {
                    err(format!(
                        "`{w}` is not a person of world/people.toml (nor the task's user)"
                    ))
                }),
        }
    };
    let owner = person(&meta.owner, &world.user.email)?;
    let default_branch = meta.default_branch.clone().unwrap_or_else(|| "main".into());
    if !valid_branch_name(&default_branch) {
        return Err(err(format!(
            "`{default_branch}` is not a valid branch name"
        )));
    }
    let bare = bare_path(world, name);
    std::fs::create_dir_all(&bare).map_err(|e| WorldError::io(&bare, e))?;
    let who = ident(world, &owner);
    let g = |world: &World, who: &Ident, args: &[&str]| -> Result<String, WorldError> {
        bare_git(world, who, name, args)
            .and_then(|o| o.into_result(&format!("git {}", args[0])))
            .map_err(&err)
    };
    // No templates (sample hooks, description): only what git needs.
    g(world, &who, &["init", "--bare", "--quiet", "--template="])?;
    let head = format!("refs/heads/{default_branch}");
    g(world, &who, &["symbolic-ref", "HEAD", &head])?;
    let tree_dir = dir.join(name);
    commit_onto(
        world,
        &who,
        name,
        &default_branch,
        None,
        true,
        &[],
        Some(&tree_dir),
        &[],
        "Initial commit",
    )
    .map_err(&err)?;
    world.code.repos.insert(
        name.to_string(),
        Repo {
            name: name.to_string(),
            description: meta.description.clone(),
            default_branch: default_branch.clone(),
            owner: owner.clone(),
            protected: meta.protected.clone(),
            approvals_required: meta.approvals_required,
            ..Default::default()
        },
    );
    for b in &meta.branch {
        if !valid_branch_name(&b.name) {
            return Err(err(format!("`{}` is not a valid branch name", b.name)));
        }
        let from = b.from.clone().unwrap_or_else(|| default_branch.clone());
        let sha = rev(world, name, &format!("refs/heads/{from}"))
            .map_err(&err)?
            .ok_or_else(|| {
                err(format!(
                    "branch `{}` starts from `{from}`, which does not exist (yet)",
                    b.name
                ))
            })?;
        let r = format!("refs/heads/{}", b.name);
        g(world, &who, &["update-ref", &r, &sha])?;
    }
    for c in &meta.commit {
        let branch = c.branch.clone().unwrap_or_else(|| default_branch.clone());
        let author = person(&c.author, &owner)?;
        let cwho = ident(world, &author);
        let parent = rev(world, name, &format!("refs/heads/{branch}"))
            .map_err(&err)?
            .ok_or_else(|| {
                err(format!(
                    "commit `{}`: no branch `{branch}`; declare it in [[branch]]",
                    c.message
                ))
            })?;
        let overlay = match &c.dir {
            Some(d) => {
                bureau_core::task::check_rel_path(d)
                    .map_err(|e| err(format!("commit dir `{d}`: {e}")))?;
                let p = dir.join(format!("{name}.commits")).join(d);
                if !p.is_dir() {
                    return Err(err(format!("commit dir `{}` does not exist", p.display())));
                }
                Some(p)
            }
            None => None,
        };
        for d in &c.delete {
            bureau_core::task::check_rel_path(d).map_err(|e| err(format!("delete `{d}`: {e}")))?;
        }
        commit_onto(
            world,
            &cwho,
            name,
            &branch,
            Some(&parent),
            false,
            &[],
            overlay.as_deref(),
            &c.delete,
            &c.message,
        )
        .map_err(&err)?;
    }
    sync_repo(world, name).map_err(&err)?;
    let now = world.now.with_timezone(&Utc);
    for (i, m) in meta.merge_request.iter().enumerate() {
        let target = m.target.clone().unwrap_or_else(|| default_branch.clone());
        let repo = &world.code.repos[name];
        for b in [&m.source, &target] {
            if !repo.branches.contains_key(b) {
                return Err(err(format!("merge request `{}`: no branch `{b}`", m.title)));
            }
        }
        if !matches!(m.state.as_str(), "open" | "closed") {
            return Err(err(format!(
                "merge request `{}`: state is `open` or `closed` (merge seeded work into the branch itself)",
                m.title
            )));
        }
        let author = person(&m.author, &owner)?;
        let mut comments = Vec::new();
        for c in &m.comment {
            comments.push(ReviewComment {
                author: person(&Some(c.author.clone()), &owner)?,
                time: now,
                body: c.body.clone(),
                file: c.file.clone(),
                line: c.line,
            });
        }
        let mut approvals = Vec::new();
        for a in &m.approvals {
            approvals.push(person(&Some(a.clone()), &owner)?);
        }
        let mr = MergeRequest {
            iid: i as u32 + 1,
            title: m.title.clone(),
            description: m.description.clone(),
            source: m.source.clone(),
            target,
            author,
            state: m.state.clone(),
            created: now,
            comments,
            approvals,
            merge_sha: None,
            merged_target_sha: None,
            merged_source_sha: None,
            merged_by: None,
            merged_at: None,
            approvals_reset: Vec::new(),
        };
        if let Some(r) = world.code.repos.get_mut(name) {
            r.merge_requests.push(mr);
        }
    }
    for (i, s) in meta.issue.iter().enumerate() {
        if !matches!(s.state.as_str(), "open" | "closed") {
            return Err(err(format!(
                "issue `{}`: state is `open` or `closed`",
                s.title
            )));
        }
        let mut comments = Vec::new();
        for c in &s.comment {
            comments.push(IssueComment {
                author: person(&Some(c.author.clone()), &owner)?,
                time: now,
                body: c.body.clone(),
            });
        }
        let issue = Issue {
            iid: i as u32 + 1,
            title: s.title.clone(),
            body: s.body.clone(),
            author: person(&s.author, &owner)?,
            state: s.state.clone(),
            labels: s.labels.clone(),
            assignee: match &s.assignee {
                Some(a) => Some(person(&Some(a.clone()), &owner)?),
                None => None,
            },
            created: now,
            comments,
        };
        if let Some(r) = world.code.repos.get_mut(name) {
            r.issues.push(issue);
        }
    }
    let wiki_dir = dir.join(format!("{name}.wiki"));
    if wiki_dir.is_dir() {
        let mut pages: Vec<PathBuf> = std::fs::read_dir(&wiki_dir)
            .map_err(|e| WorldError::io(&wiki_dir, e))?
            .flatten()
            .map(|e| e.path())
            .collect();
        pages.sort();
        for p in pages {
            let title = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".md"))
                .map(String::from)
                .ok_or_else(|| WorldError::Seed {
                    path: p.clone(),
                    message: "wiki pages are <Title>.md files".into(),
                })?;
            let content = std::fs::read_to_string(&p).map_err(|e| WorldError::io(&p, e))?;
            if let Some(r) = world.code.repos.get_mut(name) {
                r.wiki.insert(
                    title,
                    WikiPage {
                        content,
                        author: owner.clone(),
                        updated: now,
                    },
                );
            }
        }
    }
    let r = &world.code.repos[name];
    let payload = json!({
        "repo": name, "branches": r.branches.keys().collect::<Vec<_>>(),
        "merge_requests": r.merge_requests.len(), "issues": r.issues.len(), "wiki_pages": r.wiki.len(),
    });
    world.record(Actor::Task, "code", "seed", false, payload);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Snapshots

/// The code state to store in a snapshot: the state plus a manifest of `<root>/code` whose
/// contents go to the blob store (`<root>/blobs/<hash>`), like workspace files.
pub(crate) fn snapshot_state(world: &World) -> Result<CodeState, WorldError> {
    let mut state = world.code.clone();
    let dir = code_dir(world);
    if dir.is_dir() {
        let blobs = world.root.join("blobs");
        let m = crate::snapshot::walk_tree(&dir, Some(&blobs))?;
        if !m.symlinks.is_empty() {
            return Err(WorldError::Snapshot(format!(
                "{} holds symbolic links; hosted repositories cannot",
                dir.display()
            )));
        }
        state.hosted_files = m.files;
        state.hosted_dirs = m.dirs;
    }
    Ok(state)
}

/// Put the code state of a snapshot back, hosted repositories included (exactly: files the
/// snapshot does not have are removed).
pub(crate) fn restore_state(
    world: &mut World,
    state: &CodeState,
    blobs: &Path,
) -> Result<(), WorldError> {
    let dir = code_dir(world);
    if dir.exists() || !state.hosted_files.is_empty() || !state.hosted_dirs.is_empty() {
        crate::snapshot::restore_tree(
            &dir,
            &state.hosted_files,
            &state.hosted_dirs,
            &BTreeMap::new(),
            blobs,
            None,
        )
        .map_err(|e| WorldError::Snapshot(format!("hosted repositories: {e}")))?;
    }
    let mut live = state.clone();
    live.hosted_files.clear();
    live.hosted_dirs.clear();
    world.code = live;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_that_git_or_options_would_misread_are_refused() {
        for ok in ["main", "fix/units", "release-1.2", "feature_x"] {
            assert!(valid_branch_name(ok), "{ok}");
        }
        for bad in [
            "", "-f", "a..b", "a b", "x.lock", "/x", "x/", "a~1", "a:b", "@{u}", ".x",
        ] {
            assert!(!valid_branch_name(bad), "{bad}");
        }
    }

    #[test]
    fn repo_names_stay_one_path_component() {
        assert!(valid_repo_name("sensor-fw"));
        assert!(valid_repo_name("docs.site"));
        for bad in ["", "..", ".git", "a/b", "x.git", "-x", "a b"] {
            assert!(!valid_repo_name(bad), "{bad}");
        }
    }
}
