//! Built-in predicates of the code service: `merge_request` and `repo_file_contains`.

use bureau_core::task::{MergeRequestFilter, RepoFileFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_formats::text::contains_keyword;
use bureau_world::World;
use bureau_world::code::MergeRequest;

use super::{count_range, quoted, status, within};

/// An email from an email or chat handle (the roster's, else as written, lower-cased).
fn email_of(world: &World, who: &str) -> String {
    world
        .people()
        .find(who)
        .map(|p| p.email.clone())
        .unwrap_or_else(|| who.trim().to_lowercase())
}

fn matches(world: &World, m: &MergeRequest, f: &MergeRequestFilter) -> bool {
    f.source.as_ref().is_none_or(|s| &m.source == s)
        && f.target.as_ref().is_none_or(|t| &m.target == t)
        && f.state
            .as_ref()
            .is_none_or(|s| m.state.eq_ignore_ascii_case(s))
        && f.title_contains
            .iter()
            .all(|k| contains_keyword(&m.title, k))
        && (f.comment_contains.is_empty()
            || m.comments.iter().any(|c| {
                f.comment_contains
                    .iter()
                    .all(|k| contains_keyword(&c.body, k))
            }))
        && f.author
            .as_ref()
            .is_none_or(|a| m.author.eq_ignore_ascii_case(&email_of(world, a)))
}

fn describe(f: &MergeRequestFilter) -> String {
    let mut parts = Vec::new();
    if let Some(s) = &f.state {
        parts.push(format!("state {s}"));
    }
    if let Some(s) = &f.source {
        parts.push(format!("from `{s}`"));
    }
    if let Some(t) = &f.target {
        parts.push(format!("into `{t}`"));
    }
    if let Some(a) = &f.author {
        parts.push(format!("by {a}"));
    }
    if !f.title_contains.is_empty() {
        parts.push(format!("title with {}", quoted(&f.title_contains)));
    }
    if !f.comment_contains.is_empty() {
        parts.push(format!(
            "a review comment with {}",
            quoted(&f.comment_contains)
        ));
    }
    if parts.is_empty() {
        "any".into()
    } else {
        parts.join(", ")
    }
}

pub(crate) fn merge_request(
    _task: &Task,
    world: &World,
    f: &MergeRequestFilter,
) -> (VerdictStatus, String) {
    let Some(repo) = world.code().repo(&f.repo) else {
        return (
            VerdictStatus::Failed,
            format!("no repository `{}` is hosted", f.repo),
        );
    };
    let hits: Vec<&MergeRequest> = repo
        .merge_requests
        .iter()
        .filter(|m| matches(world, m, f))
        .collect();
    let ok = within(hits.len(), f.min, f.max);
    let names: Vec<String> = hits
        .iter()
        .map(|m| format!("!{} '{}' ({})", m.iid, m.title, m.state))
        .collect();
    let detail = format!(
        "{} merge request(s) of `{}` match ({}), expected {}{}",
        hits.len(),
        f.repo,
        describe(f),
        count_range(f.min, f.max),
        if names.is_empty() {
            String::new()
        } else {
            format!(": {}", names.join(", "))
        }
    );
    (status(ok), detail)
}

pub(crate) fn repo_file_contains(
    _task: &Task,
    world: &World,
    f: &RepoFileFilter,
) -> (VerdictStatus, String) {
    let Some(repo) = world.code().repo(&f.repo) else {
        return (
            VerdictStatus::Failed,
            format!("no repository `{}` is hosted", f.repo),
        );
    };
    let branch = f
        .branch
        .clone()
        .unwrap_or_else(|| repo.default_branch.clone());
    let text = match bureau_world::code::file_text(world, &f.repo, Some(&branch), &f.path) {
        Ok(Some(t)) => t,
        Ok(None) => {
            return (
                VerdictStatus::Failed,
                format!(
                    "no file `{}` at the tip of `{}` in `{}`",
                    f.path, branch, f.repo
                ),
            );
        }
        Err(e) => return (VerdictStatus::Failed, e),
    };
    let missing: Vec<String> = f
        .all
        .iter()
        .filter(|k| !contains_keyword(&text, k))
        .cloned()
        .collect();
    let forbidden: Vec<String> = f
        .none
        .iter()
        .filter(|k| contains_keyword(&text, k))
        .cloned()
        .collect();
    let at = format!("`{}` at `{}` of `{}`", f.path, branch, f.repo);
    if missing.is_empty() && forbidden.is_empty() {
        let mut parts = Vec::new();
        if !f.all.is_empty() {
            parts.push(format!("contains {}", quoted(&f.all)));
        }
        if !f.none.is_empty() {
            parts.push(format!("has none of {}", quoted(&f.none)));
        }
        if parts.is_empty() {
            parts.push("exists".into());
        }
        (
            VerdictStatus::Passed,
            format!("{at} {}", parts.join(" and ")),
        )
    } else {
        let mut problems = Vec::new();
        if !missing.is_empty() {
            problems.push(format!("lacks {}", quoted(&missing)));
        }
        if !forbidden.is_empty() {
            problems.push(format!("contains forbidden {}", quoted(&forbidden)));
        }
        (
            VerdictStatus::Failed,
            format!("{at} {}", problems.join(" and ")),
        )
    }
}
