//! Merge requests: code_create_mr, code_list_mrs, code_get_mr, code_comment_mr, code_approve_mr,
//! code_merge_mr, code_close_mr.

use super::*;
use crate::urls::CodeRef;

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
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Merge request"))
        ],
        &["iid"]
    ),
    get_mr
);
tool!(
    COMMENT_MR,
    "code_comment_mr",
    "Add a review comment to a merge request, optionally on a file and line of the source branch.",
    || schema(
        &[
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Merge request")),
            ("body", string("Comment text (markdown)")),
            ("file", string("File path the comment is about")),
            ("line", integer("Line number in that file (source branch)")),
        ],
        &["iid", "body"]
    ),
    comment_mr
);
tool!(
    APPROVE_MR,
    "code_approve_mr",
    "Approve an open merge request (not your own).",
    || schema(
        &[
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Merge request"))
        ],
        &["iid"]
    ),
    approve_mr
);
tool!(
    MERGE_MR,
    "code_merge_mr",
    "Merge an open merge request into its target: a merge commit by default, or a fast-forward. Refused when it conflicts, lacks approvals, or is not open.",
    || schema(
        &[
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Merge request")),
            (
                "fast_forward",
                boolean("Fast-forward only, no merge commit (default false)")
            ),
            (
                "remove_source_branch",
                boolean("Delete the source branch after merging (default false)")
            ),
        ],
        &["iid"]
    ),
    merge_mr
);
tool!(
    CLOSE_MR,
    "code_close_mr",
    "Close an open merge request without merging it.",
    || schema(
        &[
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Merge request")),
            ("comment", string("Why (added as a comment)")),
        ],
        &["iid"]
    ),
    close_mr
);

fn mr_index(w: &World, repo: &str, iid: u32) -> Result<usize, String> {
    repo_of(w, repo)?
        .merge_requests
        .iter()
        .position(|m| m.iid == iid)
        .ok_or_else(|| format!("no merge request !{iid} in `{repo}`; see code_list_mrs"))
}

fn mr_summary(w: &World, repo: &str, m: &MergeRequest) -> Value {
    json!({
        "iid": m.iid, "url": url_of(w, CodeRef::MergeRequest(repo.to_string(), m.iid)), "title": m.title, "source": m.source, "target": m.target,
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
        approvals_reset: Vec::new(),
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
    let url = url_of(w, CodeRef::MergeRequest(a.repo.clone(), iid));
    Ok(
        json!({"repo": a.repo, "iid": iid, "url": url, "source": a.source, "target": target, "state": "open"}),
    )
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
        .map(|m| mr_summary(w, &a.repo, m))
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
        "iid": m.iid, "url": url_of(w, CodeRef::MergeRequest(a.repo.clone(), m.iid)),
        "title": m.title, "description": m.description, "source": m.source,
        "target": m.target, "author": m.author, "state": m.state, "created": show_time(w, m.created),
        "comments": m.comments.iter().map(|c| json!({"author": c.author, "time": show_time(w, c.time),
            "body": c.body, "file": c.file, "line": c.line})).collect::<Vec<_>>(),
        "approvals": m.approvals, "approvals_required": rp.approvals_required,
        "approvals_reset": m.approvals_reset.iter().map(|r| json!({"time": show_time(w, r.time),
            "by": r.by, "from": r.from, "to": r.to, "approvals": r.approvals, "reason": r.reason}))
            .collect::<Vec<_>>(),
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
    // The target moved: an open merge request from it loses its approvals.
    after_push(w, actor, &a.repo)?;
    Ok(
        json!({"repo": a.repo, "iid": a.iid, "state": "merged", "merge_sha": new,
        "fast_forward": fast_forward, "source_removed": a.remove_source_branch}),
    )
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

/// Withdraw the approvals of every open merge request of `repo` whose source branch moved
/// since `before` (branch → head): an approval is of the commits the reviewer saw, so new
/// commits (or a rewritten branch) need a new review, as on every forge. Each withdrawal is
/// kept on the merge request (`approvals_reset`: when, by whom, from which head to which, the
/// approvals withdrawn, why) and logged (`mr_approvals_reset`). A deleted source branch
/// withdraws nothing (there is nothing new to review). Returns the iids touched.
pub(super) fn reset_approvals(
    w: &mut World,
    actor: &Actor,
    repo: &str,
    before: &BTreeMap<String, String>,
) -> Result<Vec<u32>, String> {
    let by = w.acting_email(actor)?;
    let now = w.now.with_timezone(&Utc);
    let mut logged = Vec::new();
    if let Some(r) = w.code.repos.get_mut(repo) {
        let heads: BTreeMap<String, String> = r
            .branches
            .iter()
            .map(|(name, b)| (name.clone(), b.head.clone()))
            .collect();
        for m in r.merge_requests.iter_mut() {
            if m.state != "open" || m.approvals.is_empty() {
                continue;
            }
            let (Some(from), Some(to)) = (before.get(&m.source), heads.get(&m.source)) else {
                continue;
            };
            if from == to {
                continue;
            }
            let reason = format!(
                "new commits on `{}` ({} → {}) since the approvals; they need a new review",
                m.source,
                short(from),
                short(to)
            );
            let withdrawn = std::mem::take(&mut m.approvals);
            m.approvals_reset.push(crate::code::ApprovalReset {
                time: now,
                by: by.clone(),
                from: from.clone(),
                to: to.clone(),
                approvals: withdrawn.clone(),
                reason: reason.clone(),
            });
            logged.push((
                m.iid,
                m.source.clone(),
                withdrawn,
                from.clone(),
                to.clone(),
                reason,
            ));
        }
    }
    let mut iids = Vec::new();
    for (iid, source, withdrawn, from, to, reason) in logged {
        w.record(
            actor.clone(),
            "code",
            "mr_approvals_reset",
            false,
            json!({"repo": repo, "iid": iid, "source": source, "from": from, "to": to,
                "approvals": withdrawn, "reason": reason}),
        );
        iids.push(iid);
    }
    Ok(iids)
}
