//! Running git for code hosting: a clean environment, the world clock, vetted clones.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use chrono::DateTime;

use super::*;
use crate::World;

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
    if r.contains('\n') || path.contains('\n') {
        return Err("refs and paths cannot hold a line break".into());
    }
    let who = ident(world, &world.user.email);
    let path = path.trim_start_matches('/');
    // One process: `--batch` names the object's type and size, then gives its content (or
    // says it is missing).
    let dir = bare_path(world, repo);
    let gd = format!("--git-dir={}", dir.display());
    let spec = format!("{r}:{path}\n");
    let out = git(
        world,
        &who,
        &dir,
        &[&gd, "cat-file", "--batch"],
        Some(spec.as_bytes()),
        &[],
    )?;
    if !out.ok() {
        return Err(format!("cannot read `{path}` at `{r}`: {}", out.message()));
    }
    Ok(parse_batch_blob(&out.raw))
}

/// The content of the one object `git cat-file --batch` printed, if it is a blob
/// (`<oid> <type> <size>\n<content>\n`; `<name> missing\n` when there is none).
fn parse_batch_blob(raw: &[u8]) -> Option<Vec<u8>> {
    let nl = raw.iter().position(|b| *b == b'\n')?;
    let head = std::str::from_utf8(&raw[..nl]).ok()?;
    let mut f = head.rsplitn(3, ' ');
    let size: usize = f.next()?.parse().ok()?;
    let kind = f.next()?;
    if kind != "blob" {
        return None;
    }
    raw.get(nl + 1..nl + 1 + size).map(<[u8]>::to_vec)
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

#[cfg(test)]
mod tests {
    use super::parse_batch_blob;

    #[test]
    fn a_batch_answer_gives_a_blob_whole_and_nothing_else() {
        let oid = "a".repeat(40);
        let raw = format!("{oid} blob 11\nline 1\nend\n\n");
        assert_eq!(
            parse_batch_blob(raw.as_bytes()),
            Some(b"line 1\nend\n".to_vec())
        );
        // Binary content, with line breaks and zero bytes, is taken by its size.
        let mut raw = format!("{oid} blob 4\n").into_bytes();
        raw.extend_from_slice(&[0, b'\n', 0xff, b' ']);
        raw.push(b'\n');
        assert_eq!(parse_batch_blob(&raw), Some(vec![0, b'\n', 0xff, b' ']));
        assert_eq!(
            parse_batch_blob(format!("{oid} tree 30\n").as_bytes()),
            None
        );
        assert_eq!(parse_batch_blob(b"main:a file.txt missing\n"), None);
        assert_eq!(parse_batch_blob(b"abc ambiguous\n"), None);
        // Cut short: not a blob of the size it names.
        assert_eq!(
            parse_batch_blob(format!("{oid} blob 99\nshort\n").as_bytes()),
            None
        );
        assert_eq!(parse_batch_blob(b""), None);
    }
}
