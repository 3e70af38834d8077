//! What the checks' process asks the evaluating process: the world's data a check reads when
//! it calls `w.files.*`, `w.mail.*`, `w.calendar.*`, `w.reference`, `code_file` or a document
//! reader. Everything else of `w` crosses up front ([`crate::view::build_view`]).
//!
//! The questions are the [`Query`] values, as CBOR; the answers are CBOR of the type each
//! question names, except file contents, which cross as raw bytes after a tag byte. The
//! evaluating process answers with [`answer`], from the world it holds: the checks' process
//! has no other way to the world, the file system or the task directory.

use serde::{Deserialize, Serialize};

use crate::view::{Ctx, Entry, calendar_entries, mail_entries};

/// A question of the checks' process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Query {
    /// Whether a workspace path exists → `bool`.
    Exists(String),
    /// A workspace file's text → `Result<String, String>`.
    Text(String),
    /// A workspace file's bytes → raw (see [`encode_bytes`]).
    Bytes(String),
    /// Workspace file paths under a directory → `Result<Vec<String>, String>`.
    List(String),
    /// What is at a workspace path → [`Size`].
    Size(String),
    /// Whether `reference/<path>` is a file → `Result<bool, String>`.
    ReferenceIsFile(String),
    /// The bytes of `reference/<path>` → raw.
    ReferenceBytes(String),
    /// Every message → `Vec<Entry>`.
    Mail,
    /// Mailbox owners → `Vec<String>`.
    MailUsers,
    /// Every event → `Vec<Entry>`.
    Calendar,
    /// Calendar owners → `Vec<String>`.
    CalendarUsers,
    /// A file of a hosted repository → [`Code`].
    CodeFile {
        repo: String,
        branch: Option<String>,
        path: String,
    },
}

/// What is at a workspace path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Size {
    File(u64),
    Dir,
    /// A FIFO, socket or device.
    Special,
    Missing,
}

/// A file of a hosted repository at the tip of a branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Code {
    NoRepo,
    NoBranch,
    /// The branch's file, or None when it has no such file.
    Text(Option<String>),
    Failed {
        branch: String,
        message: String,
    },
}

const BYTES_OK: u8 = 0;
const BYTES_ERR: u8 = 1;

/// File contents (or why there are none) as an answer.
fn encode_bytes(r: Result<Vec<u8>, String>) -> Vec<u8> {
    match r {
        Ok(mut b) => {
            b.insert(0, BYTES_OK);
            b
        }
        Err(e) => {
            let mut v = vec![BYTES_ERR];
            v.extend_from_slice(e.as_bytes());
            v
        }
    }
}

/// The file contents an answer carries, or why there are none.
pub(crate) fn decode_bytes(mut a: Vec<u8>) -> Result<Vec<u8>, String> {
    match a.first() {
        Some(&BYTES_OK) => {
            a.remove(0);
            Ok(a)
        }
        Some(_) => Err(String::from_utf8_lossy(&a[1..]).into_owned()),
        None => Err("an empty answer".into()),
    }
}

fn cbor<T: Serialize>(v: &T) -> Vec<u8> {
    let mut out = Vec::new();
    // Encoding plain data into a Vec cannot fail; an empty answer is refused by the asker.
    let _ = ciborium::into_writer(v, &mut out);
    out
}

/// The answer to the question `q` (CBOR of a [`Query`]) from the world of `ctx`. A question
/// that cannot be read gets an empty answer, which the asker reports.
pub(crate) fn answer(ctx: &Ctx<'_>, q: &[u8]) -> Vec<u8> {
    let Ok(q) = ciborium::from_reader::<Query, _>(q) else {
        return Vec::new();
    };
    let files = ctx.world.files();
    match q {
        Query::Exists(p) => cbor(&files.exists(&p)),
        Query::Text(p) => cbor(&files.read_text(&p).map_err(|e| e.to_string())),
        Query::Bytes(p) => encode_bytes(files.read_bytes(&p).map_err(|e| e.to_string())),
        Query::List(dir) => cbor(&list(ctx, &dir)),
        Query::Size(p) => cbor(&size(ctx, &p)),
        Query::ReferenceIsFile(rel) => {
            cbor(&crate::reference::locate(ctx.task, &rel).map(|p| p.is_file()))
        }
        Query::ReferenceBytes(rel) => encode_bytes(crate::reference::read(ctx.task, &rel)),
        Query::Mail => cbor::<Vec<Entry>>(&mail_entries(ctx.world, ctx.tz)),
        Query::MailUsers => cbor(&ctx.world.mail().users()),
        Query::Calendar => cbor::<Vec<Entry>>(&calendar_entries(ctx.world, ctx.tz)),
        Query::CalendarUsers => cbor(&ctx.world.calendar().users()),
        Query::CodeFile { repo, branch, path } => {
            cbor(&code_file(ctx, &repo, branch.as_deref(), &path))
        }
    }
}

/// Workspace file paths under `dir` ("" = everything), recursive, sorted; a directory that
/// does not exist has none. An error for a path outside the workspace.
fn list(ctx: &Ctx<'_>, dir: &str) -> Result<Vec<String>, String> {
    let files = ctx.world.files();
    let d = dir.trim().trim_end_matches('/');
    if !d.is_empty() && d != "." {
        files.resolve(d).map_err(|e| e.to_string())?;
        if !files.is_dir(d) {
            return Ok(Vec::new());
        }
    }
    files
        .list(d, true)
        .map(|entries| {
            entries
                .into_iter()
                .filter(|e| e.kind == "file")
                .map(|e| e.path)
                .collect()
        })
        .map_err(|e| e.to_string())
}

fn size(ctx: &Ctx<'_>, path: &str) -> Size {
    let meta = ctx
        .world
        .files()
        .resolve(path)
        .ok()
        .and_then(|p| std::fs::metadata(p).ok());
    match meta {
        Some(m) if m.is_file() => Size::File(m.len()),
        Some(m) if m.is_dir() => Size::Dir,
        Some(_) => Size::Special,
        None => Size::Missing,
    }
}

fn code_file(ctx: &Ctx<'_>, repo: &str, branch: Option<&str>, path: &str) -> Code {
    let world = ctx.world;
    let Some(r) = world.code().repo(repo) else {
        return Code::NoRepo;
    };
    let branch = branch.unwrap_or(&r.default_branch).to_string();
    if !r.branches.contains_key(&branch) {
        return Code::NoBranch;
    }
    match bureau_world::code::file_text(world, repo, Some(&branch), path) {
        Ok(t) => Code::Text(t),
        Err(e) => Code::Failed {
            branch,
            message: e.to_string(),
        },
    }
}
