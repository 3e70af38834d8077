//! Seeding code hosting from `world/code/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bureau_core::log::Actor;
use chrono::Utc;
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::{World, WorldError};

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
    /// Its number (`!n`); default: one more than the highest so far.
    iid: Option<u32>,
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
    /// Its number (`#n`); default: one more than the highest so far.
    iid: Option<u32>,
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

/// Numbers given to seeded issues or merge requests: as written (unique, at least 1), or one
/// more than the highest so far, as a forge numbers them.
#[derive(Default)]
struct Numbers {
    used: BTreeSet<u32>,
}

impl Numbers {
    fn take(&mut self, wanted: Option<u32>) -> Result<u32, String> {
        let n = match wanted {
            Some(0) => return Err("`iid` starts at 1".into()),
            Some(n) => n,
            None => self.used.last().copied().unwrap_or(0).saturating_add(1),
        };
        if !self.used.insert(n) {
            return Err(format!("number {n} is used twice; give each its own `iid`"));
        }
        Ok(n)
    }
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

/// The email of `who` (a person of the roster or the task's user), or `default`.
fn person_email(
    people: &crate::People,
    user_email: &str,
    who: &Option<String>,
    default: &str,
) -> Result<String, String> {
    let Some(w) = who else {
        return Ok(default.to_string());
    };
    if let Some(p) = people.find(w) {
        Ok(p.email.clone())
    } else if w.eq_ignore_ascii_case(user_email) {
        Ok(user_email.to_string())
    } else {
        Err(format!(
            "`{w}` is not a person of world/people.toml (nor the task's user)"
        ))
    }
}

fn seed_repo(world: &mut World, dir: &Path, name: &str) -> Result<(), WorldError> {
    let toml_path = dir.join(format!("{name}.toml"));
    let err = |message: String| WorldError::Seed {
        path: toml_path.clone(),
        message,
    };
    let toml_text = if toml_path.exists() {
        std::fs::read_to_string(&toml_path).map_err(|e| WorldError::io(&toml_path, e))?
    } else {
        String::new()
    };
    // Without a `.toml` the text is empty, which is every field's default.
    let meta: RepoFile =
        toml::from_str(&toml_text).map_err(|e| err(format!("{e}— see docs/services/code.md")))?;
    let people = world.people.clone();
    let user_email = world.user.email.clone();
    let person = |who: &Option<String>, default: &str| -> Result<String, WorldError> {
        person_email(&people, &user_email, who, default).map_err(&err)
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
    let mut commit_idents = Vec::new();
    for c in &meta.commit {
        commit_idents.push(ident(world, &person(&c.author, &owner)?));
    }
    let tree_dir = dir.join(name);
    let key = seeded::key(&seeded::KeyParts {
        name,
        default_branch: &default_branch,
        now: (world.now.timestamp(), world.now.offset().local_minus_utc()),
        toml: &toml_text,
        idents: std::iter::once(&who)
            .chain(&commit_idents)
            .map(|i| (i.name.as_str(), i.email.as_str()))
            .collect(),
        trees: vec![&tree_dir, &dir.join(format!("{name}.commits"))],
    });
    let repo = Repo {
        name: name.to_string(),
        description: meta.description.clone(),
        default_branch: default_branch.clone(),
        owner: owner.clone(),
        protected: meta.protected.clone(),
        approvals_required: meta.approvals_required,
        ..Default::default()
    };
    if let Some(kept) = key.as_ref().and_then(seeded::get) {
        // Seeded before in this process from the same inputs: the same files.
        kept.restore(&bare).map_err(|e| WorldError::io(&bare, e))?;
        world.code.repos.insert(
            name.to_string(),
            Repo {
                branches: kept.branches.clone(),
                commits: kept.commits.clone(),
                ..repo
            },
        );
    } else {
        seed_git(world, dir, name, &meta, &who, &commit_idents, repo)?;
        if let Some(k) = key
            && let Some(r) = world.code.repos.get(name)
            && let Some(s) = seeded::Seeded::capture(&bare, &r.branches, &r.commits)
        {
            seeded::put(k, s);
        }
    }
    finish_repo(world, dir, name, &meta, &owner, &default_branch, &toml_path)
}

/// The git part of seeding `name`: the bare repository, its branches and commits, and the
/// state read back from it (`repo` with its branches and commits).
fn seed_git(
    world: &mut World,
    dir: &Path,
    name: &str,
    meta: &RepoFile,
    who: &Ident,
    commit_idents: &[Ident],
    repo: Repo,
) -> Result<(), WorldError> {
    let toml_path = dir.join(format!("{name}.toml"));
    let err = |message: String| WorldError::Seed {
        path: toml_path.clone(),
        message,
    };
    let default_branch = repo.default_branch.clone();
    let g = |world: &World, who: &Ident, args: &[&str]| -> Result<String, WorldError> {
        bare_git(world, who, name, args)
            .and_then(|o| o.into_result(&format!("git {}", args[0])))
            .map_err(&err)
    };
    // No templates (sample hooks, description): only what git needs.
    g(world, who, &["init", "--bare", "--quiet", "--template="])?;
    let head = format!("refs/heads/{default_branch}");
    g(world, who, &["symbolic-ref", "HEAD", &head])?;
    let tree_dir = dir.join(name);
    commit_onto(
        world,
        who,
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
    world.code.repos.insert(name.to_string(), repo);
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
        g(world, who, &["update-ref", &r, &sha])?;
    }
    for (c, cwho) in meta.commit.iter().zip(commit_idents) {
        let branch = c.branch.clone().unwrap_or_else(|| default_branch.clone());
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
            cwho,
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
    sync_repo(world, name).map_err(&err)
}

/// The rest of seeding `name`, in the state only: merge requests, issues, wiki pages.
fn finish_repo(
    world: &mut World,
    dir: &Path,
    name: &str,
    meta: &RepoFile,
    owner: &str,
    default_branch: &str,
    toml_path: &Path,
) -> Result<(), WorldError> {
    let err = |message: String| WorldError::Seed {
        path: toml_path.to_path_buf(),
        message,
    };
    let people = world.people.clone();
    let user_email = world.user.email.clone();
    let person = |who: &Option<String>, default: &str| -> Result<String, WorldError> {
        person_email(&people, &user_email, who, default).map_err(&err)
    };
    let now = world.now.with_timezone(&Utc);
    let mut mr_numbers = Numbers::default();
    for m in &meta.merge_request {
        let iid = mr_numbers
            .take(m.iid)
            .map_err(|e| err(format!("merge request `{}`: {e}", m.title)))?;
        let target = m
            .target
            .clone()
            .unwrap_or_else(|| default_branch.to_string());
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
        let author = person(&m.author, owner)?;
        let mut comments = Vec::new();
        for c in &m.comment {
            comments.push(ReviewComment {
                author: person(&Some(c.author.clone()), owner)?,
                time: now,
                body: c.body.clone(),
                file: c.file.clone(),
                line: c.line,
            });
        }
        let mut approvals = Vec::new();
        for a in &m.approvals {
            approvals.push(person(&Some(a.clone()), owner)?);
        }
        let mr = MergeRequest {
            iid,
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
    let mut issue_numbers = Numbers::default();
    for s in &meta.issue {
        let iid = issue_numbers
            .take(s.iid)
            .map_err(|e| err(format!("issue `{}`: {e}", s.title)))?;
        if !matches!(s.state.as_str(), "open" | "closed") {
            return Err(err(format!(
                "issue `{}`: state is `open` or `closed`",
                s.title
            )));
        }
        let mut comments = Vec::new();
        for c in &s.comment {
            comments.push(IssueComment {
                author: person(&Some(c.author.clone()), owner)?,
                time: now,
                body: c.body.clone(),
            });
        }
        let issue = Issue {
            iid,
            title: s.title.clone(),
            body: s.body.clone(),
            author: person(&s.author, owner)?,
            state: s.state.clone(),
            labels: s.labels.clone(),
            assignee: match &s.assignee {
                Some(a) => Some(person(&Some(a.clone()), owner)?),
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
                        author: owner.to_string(),
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
