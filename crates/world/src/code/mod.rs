//! Code hosting: real git repositories, merge requests, repository issues, wikis.
//!
//! Hosted repositories are bare git repositories in `<world root>/code/<name>.git`, outside the
//! agent's workspace; agents clone them into the workspace with `code_clone` and push back with
//! `code_push`. Every git command runs the `git` program with a clean environment (no system or
//! user configuration, hooks disabled, the world clock as author and committer date, the acting
//! person as author), so the same actions give the same commit hashes in every world.
//!
//! Seeded from `world/code/`; documented in `docs/services/code.md`. The state types live
//! here; running git in `git.rs`, seeding in `seed.rs`, snapshots in `snapshot.rs`.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::snapshot::FileRecord;

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
    /// becomes a dict), with each object's URL under `base` (`https://code.<domain>`). See
    /// docs/services/code.md.
    pub fn check_view(&self, tz: chrono_tz::Tz, base: &str) -> Value {
        use crate::urls::CodeRef;
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
                        "iid": m.iid,
                        "url": CodeRef::MergeRequest(name.clone(), m.iid).url(base),
                        "title": m.title, "description": m.description,
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
                        "iid": i.iid, "url": CodeRef::Issue(name.clone(), i.iid).url(base),
                        "title": i.title, "body": i.body, "author": i.author,
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
                    "name": r.name, "url": CodeRef::Repo(name.clone()).url(base),
                    "description": r.description,
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

mod git;
mod seed;
mod seeded;
mod snapshot;

pub(crate) use git::{
    GitOut, Ident, LOG_FORMAT, bare_git, bare_path, code_dir, commit_onto, git, ident, parse_log,
    rev, sync_repo, vet_clone,
};
pub use git::{file_text, read_file_at};
pub(crate) use seed::{seed, valid_branch_name};
pub(crate) use snapshot::{restore_state, snapshot_state};
