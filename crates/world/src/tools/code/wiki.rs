//! Wikis: code_wiki_read, code_wiki_write.

use super::*;

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
