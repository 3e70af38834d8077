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
    valid_branch_name, vet_clone,
};

/// Patches longer than this are cut (the file list stays complete).
const MAX_PATCH: usize = 60_000;
/// Files longer than this are cut by `code_show_file`.
const MAX_FILE: usize = 200_000;

macro_rules! tool {
    ($c:ident, $name:literal, $desc:literal, $schema:expr, $run:ident) => {
        pub(super) const $c: Tool = Tool {
            name: $name,
            description: $desc,
            schema: $schema,
            run: $run,
        };
    };
}

mod issues;
mod merge_requests;
mod repos;
mod wiki;

pub(super) const TOOLS: &[Tool] = &[
    repos::LIST_REPOS,
    repos::CLONE,
    repos::STATUS,
    repos::COMMIT,
    repos::PUSH,
    repos::PULL,
    repos::BRANCH,
    repos::LOG,
    repos::DIFF,
    repos::SHOW_FILE,
    repos::COMMIT_FILES,
    merge_requests::CREATE_MR,
    merge_requests::LIST_MRS,
    merge_requests::GET_MR,
    merge_requests::COMMENT_MR,
    merge_requests::APPROVE_MR,
    merge_requests::MERGE_MR,
    merge_requests::CLOSE_MR,
    issues::CREATE_ISSUE,
    issues::LIST_ISSUES,
    issues::COMMENT_ISSUE,
    issues::UPDATE_ISSUE,
    issues::CLOSE_ISSUE,
    wiki::WIKI_READ,
    wiki::WIKI_WRITE,
];

// ---------------------------------------------------------------------------------------------
// Helpers

/// `https://code.<domain>`: the base of code-hosting URLs.
fn base(w: &World) -> String {
    w.service_url("code")
}

/// The schema of an `iid` argument: the number, or the object's URL.
fn number_or_url(what: &str) -> Value {
    json!({"type": ["integer", "string"],
        "description": format!("{what} number, or its URL (https://code.<domain>/<repo>/-/…)")})
}

/// The URL of an object of a repository.
fn url_of(w: &World, r: crate::urls::CodeRef) -> String {
    r.url(&base(w))
}

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
    vet_clone(&dir, path)?;
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

/// After a branch of hosted `repo` may have moved (a push, commits made on the host, a
/// merge): re-read its branches, and withdraw the approvals of every open merge request whose
/// source branch moved ([`merge_requests::reset_approvals`]). Returns the iids of the merge
/// requests whose approvals were withdrawn.
fn after_push(w: &mut World, actor: &Actor, repo: &str) -> Result<Vec<u32>, String> {
    let before: BTreeMap<String, String> = repo_of(w, repo)?
        .branches
        .iter()
        .map(|(name, b)| (name.clone(), b.head.clone()))
        .collect();
    sync_repo(w, repo)?;
    merge_requests::reset_approvals(w, actor, repo, &before)
}

// Arguments shared by merge requests and issues.

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CloseArgs {
    repo: String,
    iid: u32,
    comment: Option<String>,
}
