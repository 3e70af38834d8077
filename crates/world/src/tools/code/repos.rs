//! Repositories and clones: code_list_repos, code_clone, code_status, code_commit, code_push,
//! code_pull, code_branch, code_log, code_diff, code_show_file, code_commit_files.

use super::*;

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
    w.record(
        actor.clone(),
        "code",
        "push",
        false,
        json!({"repo": c.repo, "branch": branch, "from": remote, "to": local, "forced": forced, "commits": count}),
    );
    let reset = after_push(w, actor, &c.repo)?;
    let mut out = json!({"repo": c.repo, "branch": branch, "pushed": true, "from": remote, "to": local,
        "forced": forced, "commits": count, "new_branch": remote.is_none()});
    if !reset.is_empty() {
        out["approvals_reset"] = json!(reset);
    }
    Ok(out)
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
    let changed: Vec<&String> = a.files.keys().chain(&a.delete).collect();
    w.record(
        actor.clone(),
        "code",
        "commit_files",
        false,
        json!({"repo": a.repo, "branch": a.branch, "sha": sha, "message": a.message, "files": changed}),
    );
    let reset = after_push(w, actor, &a.repo)?;
    let mut out = json!({"repo": a.repo, "branch": a.branch, "sha": sha, "files": changed});
    if !reset.is_empty() {
        out["approvals_reset"] = json!(reset);
    }
    Ok(out)
}
