//! Issues: code_create_issue, code_list_issues, code_comment_issue, code_update_issue,
//! code_close_issue.

use super::*;
use crate::urls::CodeRef;

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
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Issue")),
            ("body", string("Comment (markdown)")),
        ],
        &["iid", "body"]
    ),
    comment_issue
);
tool!(
    UPDATE_ISSUE,
    "code_update_issue",
    "Change a repository issue: add or remove labels, assign it, rename it, reopen it.",
    || schema(
        &[
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Issue")),
            ("add_labels", strings("Labels to add")),
            ("remove_labels", strings("Labels to remove")),
            (
                "assignee",
                string("Email or chat handle (\"\" to unassign)")
            ),
            ("title", string("New title")),
            ("reopen", boolean("Reopen a closed issue")),
        ],
        &["iid"]
    ),
    update_issue
);
tool!(
    CLOSE_ISSUE,
    "code_close_issue",
    "Close a repository issue, optionally with a closing comment.",
    || schema(
        &[
            (
                "repo",
                string("Repository name (not needed when `iid` is a URL)")
            ),
            ("iid", number_or_url("Issue")),
            ("comment", string("Closing comment")),
        ],
        &["iid"]
    ),
    close_issue
);

fn issue_index(w: &World, repo: &str, iid: u32) -> Result<usize, String> {
    repo_of(w, repo)?
        .issues
        .iter()
        .position(|i| i.iid == iid)
        .ok_or_else(|| format!("no issue #{iid} in `{repo}`; see code_list_issues"))
}

fn issue_json(w: &World, repo: &str, i: &Issue) -> Value {
    json!({
        "iid": i.iid, "url": url_of(w, CodeRef::Issue(repo.to_string(), i.iid)), "title": i.title, "body": i.body, "author": i.author, "state": i.state,
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
    let url = url_of(w, CodeRef::Issue(a.repo.clone(), iid));
    Ok(json!({"repo": a.repo, "iid": iid, "url": url, "state": "open"}))
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
        .map(|i| issue_json(w, &a.repo, i))
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
