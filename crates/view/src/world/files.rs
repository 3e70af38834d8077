//! The workspace: files added, changed and deleted (with a diff of their text rendering, or
//! the picture), directories and symbolic links; and the preview of one deliverable.

use std::path::{Component, Path};

use base64::Engine;
use bureau_formats::office::Format;
use serde::Serialize;
use serde_json::{Map, Value};

use super::anchor::object_anchor;
use super::diff::{FieldChange, Status, TextDiff, text_diff};
use super::load::{Blob, read_blob, read_trial_file};
use bureau_world::trial_files::TrialFiles;

/// A picture larger than this is described, not embedded.
pub const MAX_IMAGE_BYTES: usize = 2 * 1024 * 1024;
/// Contents are rendered for at most this many files per turn; the rest are listed.
pub const MAX_RENDERED_FILES: usize = 200;
/// A preview's text is cut to this many bytes.
pub const MAX_PREVIEW_TEXT: usize = 512 * 1024;

/// The size, hash and permissions of one side of a file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileMeta {
    pub size: u64,
    pub hash: String,
    /// Permission bits in octal (`644`).
    pub mode: String,
}

/// What one side of a file was shown as.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Rendering {
    /// Text: as is, or an office file's text rendering (`format` says which reader).
    Text { format: String },
    /// A picture, embedded as a `data:` URI (`None` when larger than [`MAX_IMAGE_BYTES`]).
    Image {
        mime: String,
        data_uri: Option<String>,
    },
    /// Neither text nor a picture: size and hash only.
    Binary,
    /// The blob store does not hold the content (an unchanged file of a generated
    /// workspace's base layer).
    NotStored,
    /// Not rendered: why (unreadable, a reader error, over the per-turn bound).
    Unavailable { reason: String },
}

/// One workspace file added, changed or deleted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileChange {
    pub path: String,
    pub anchor: String,
    pub status: Status,
    pub old: Option<FileMeta>,
    pub new: Option<FileMeta>,
    pub old_rendering: Option<Rendering>,
    pub new_rendering: Option<Rendering>,
    /// The diff of the text renderings (an absent side is empty), when both sides are text.
    pub diff: Option<TextDiff>,
    /// Only the permissions changed.
    pub mode_only: bool,
    /// The diff shows one side's text whole: the other side is not text (see its rendering).
    pub one_sided: bool,
}

/// The workspace part of a world diff.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct FileChanges {
    /// Sorted by path.
    pub files: Vec<FileChange>,
    pub dirs_added: Vec<String>,
    pub dirs_deleted: Vec<String>,
    /// Symbolic links added, retargeted or removed (`path: old target → new target`).
    pub symlinks: Vec<FieldChange>,
    /// Special files (FIFOs, sockets, devices) that appeared or went.
    pub specials: Vec<FieldChange>,
    /// Files listed without their contents (over [`MAX_RENDERED_FILES`]).
    pub unrendered: usize,
}

impl FileChanges {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.dirs_added.is_empty()
            && self.dirs_deleted.is_empty()
            && self.symlinks.is_empty()
            && self.specials.is_empty()
    }
}

fn meta(v: &Value) -> Option<FileMeta> {
    let size = v.get("size").and_then(Value::as_u64).unwrap_or(0);
    let hash = v
        .get("hash")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mode = v.get("mode").and_then(Value::as_u64).unwrap_or(0);
    Some(FileMeta {
        size,
        hash,
        mode: format!("{:o}", mode & 0o7777),
    })
}

/// Compares the workspace manifests of two snapshots.
pub(crate) fn diff_files(
    trial: &TrialFiles,
    old: Option<&Value>,
    new: &Value,
    problems: &mut Vec<String>,
) -> FileChanges {
    let empty = Map::new();
    let files = |v: Option<&Value>| match v.and_then(|v| v.get("files")) {
        Some(Value::Object(m)) => m.clone(),
        _ => empty.clone(),
    };
    let (a, b) = (files(old), files(Some(new)));
    let mut out = FileChanges::default();
    let paths: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut rendered = 0usize;
    for path in paths {
        let (x, y) = (a.get(path), b.get(path));
        let (old_meta, new_meta) = (x.and_then(meta), y.and_then(meta));
        let status = match (&old_meta, &new_meta) {
            (None, Some(_)) => Status::Added,
            (Some(_), None) => Status::Deleted,
            (Some(p), Some(q)) if p != q => Status::Changed,
            _ => continue,
        };
        let mode_only = matches!((&old_meta, &new_meta), (Some(p), Some(q)) if p.hash == q.hash);
        let mut change = FileChange {
            path: path.clone(),
            anchor: object_anchor("file", path),
            status,
            old: old_meta.clone(),
            new: new_meta.clone(),
            old_rendering: None,
            new_rendering: None,
            diff: None,
            mode_only,
            one_sided: false,
        };
        if !mode_only {
            if rendered >= MAX_RENDERED_FILES {
                out.unrendered += 1;
            } else {
                rendered += 1;
                let old_side = old_meta.as_ref().map(|m| side(trial, path, m, None));
                // Compared with an earlier snapshot, what is new was written in this turn and
                // must be stored; the seeded world (no base) may lie in a generated base layer.
                let expect = if old.is_some() {
                    Some(&mut *problems)
                } else {
                    None
                };
                let new_side = new_meta.as_ref().map(|m| side(trial, path, m, expect));
                let text_of = |s: &Option<Side>| match s {
                    None => Some(String::new()),
                    Some(Side { text: Some(t), .. }) => Some(t.clone()),
                    Some(_) => None,
                };
                match (text_of(&old_side), text_of(&new_side)) {
                    (Some(t0), Some(t1)) => change.diff = Some(text_diff(&t0, &t1)),
                    // One side cannot be read as text (not stored, binary, a reader error):
                    // the other side's text is shown whole.
                    (Some(t0), None) if !t0.is_empty() => {
                        change.diff = Some(text_diff(&t0, ""));
                        change.one_sided = true;
                    }
                    (None, Some(t1)) if !t1.is_empty() => {
                        change.diff = Some(text_diff("", &t1));
                        change.one_sided = true;
                    }
                    _ => {}
                }
                change.old_rendering = old_side.map(|s| s.rendering);
                change.new_rendering = new_side.map(|s| s.rendering);
            }
        }
        out.files.push(change);
    }
    let set = |v: Option<&Value>, key: &str| -> std::collections::BTreeSet<String> {
        match v.and_then(|v| v.get(key)) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect(),
            _ => Default::default(),
        }
    };
    let (d0, d1) = (set(old, "dirs"), set(Some(new), "dirs"));
    out.dirs_added = d1.difference(&d0).cloned().collect();
    out.dirs_deleted = d0.difference(&d1).cloned().collect();
    for (key, into) in [
        ("symlinks", &mut out.symlinks),
        ("specials", &mut out.specials),
    ] {
        let m = |v: Option<&Value>| match v.and_then(|v| v.get(key)) {
            Some(Value::Object(m)) => Some(Value::Object(m.clone())),
            _ => Some(Value::Object(Map::new())),
        };
        let mut fields = Vec::new();
        super::diff::json_diff("", m(old).as_ref(), m(Some(new)).as_ref(), &[], &mut fields);
        *into = fields;
    }
    out
}

struct Side {
    rendering: Rendering,
    text: Option<String>,
}

/// Reads and renders one side of a file. `problems` is given for the side that should be
/// stored (the new one): a missing blob there is a problem, not only a note.
fn side(trial: &TrialFiles, path: &str, m: &FileMeta, problems: Option<&mut Vec<String>>) -> Side {
    match read_blob(trial, &m.hash) {
        Blob::Bytes(bytes) => render_bytes(path, &bytes),
        Blob::NotStored => {
            if let Some(p) = problems {
                p.push(format!(
                    "{path}: its content (world/blobs/{}) is not stored in the trial directory",
                    m.hash
                ));
            }
            Side {
                rendering: Rendering::NotStored,
                text: None,
            }
        }
        Blob::Unreadable(why) => {
            if let Some(p) = problems {
                p.push(format!("{path}: {why}"));
            }
            Side {
                rendering: Rendering::Unavailable { reason: why },
                text: None,
            }
        }
    }
}

/// The MIME type of a picture the browser shows, by its bytes.
pub(crate) fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// A file's bytes shown: a picture, the text rendering of an office file, text as is, or
/// binary.
fn render_bytes(path: &str, bytes: &[u8]) -> Side {
    if let Some(mime) = image_mime(bytes) {
        let data_uri = (bytes.len() <= MAX_IMAGE_BYTES).then(|| {
            format!(
                "data:{mime};base64,{}",
                base64::engine::general_purpose::STANDARD.encode(bytes)
            )
        });
        return Side {
            rendering: Rendering::Image {
                mime: mime.to_string(),
                data_uri,
            },
            text: None,
        };
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let format = Format::detect(name, bytes);
    let office = matches!(
        format,
        Format::Docx
            | Format::Pptx
            | Format::Pdf
            | Format::Sheet
            | Format::Eml
            | Format::Ics
            | Format::Vcf
    );
    if office {
        return match bureau_formats::office::render(name, bytes) {
            Ok(r) => Side {
                rendering: Rendering::Text {
                    format: r.format.name().to_string(),
                },
                text: Some(r.text),
            },
            Err(e) => Side {
                rendering: Rendering::Unavailable {
                    reason: format!("its {} text rendering failed: {e}", format.name()),
                },
                text: None,
            },
        };
    }
    let binary = bytes.iter().take(8192).any(|b| *b == 0);
    match std::str::from_utf8(bytes) {
        Ok(s) if !binary => Side {
            rendering: Rendering::Text {
                format: "text".into(),
            },
            text: Some(s.to_string()),
        },
        _ => Side {
            rendering: Rendering::Binary,
            text: None,
        },
    }
}

/// A deliverable shown whole: its text rendering or its picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preview {
    pub path: String,
    pub anchor: String,
    /// Where it was read: `deliverables/<path>` or `snapshots/turn-<n>.json`.
    pub source: Option<String>,
    pub size: Option<u64>,
    pub rendering: Option<Rendering>,
    pub text: Option<String>,
    /// The text was cut at [`MAX_PREVIEW_TEXT`] bytes.
    pub truncated: bool,
    /// What could not be read, and why.
    pub problems: Vec<String>,
}

/// Whether `path` is a plain relative path (no `..`, no root, not empty).
fn safe_relative(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && !path.contains('\0')
        && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// The preview of a deliverable: `<trial>/deliverables/<path>`, else the file in the last
/// snapshot (its blob). Never fails: what could not be read is in `problems`.
pub fn file_preview(trial: &TrialFiles, path: &str) -> Preview {
    let mut p = Preview {
        path: path.to_string(),
        anchor: object_anchor("file", path),
        source: None,
        size: None,
        rendering: None,
        text: None,
        truncated: false,
        problems: Vec::new(),
    };
    if !safe_relative(path) {
        p.problems.push(format!(
            "{path:?} is not a relative path inside the workspace, so it is not read"
        ));
        return p;
    }
    let bytes = match read_trial_file(
        trial,
        &format!("deliverables/{path}"),
        super::load::MAX_BLOB_BYTES,
    ) {
        Ok(b) => {
            p.source = Some(format!("deliverables/{path}"));
            Some(b)
        }
        Err(why) => {
            let from_snapshot = from_last_snapshot(trial, path, &mut p.problems);
            if from_snapshot.is_none() {
                p.problems.insert(0, format!("deliverables/{path}: {why}"));
            } else {
                p.source = from_snapshot.as_ref().map(|(s, _)| s.clone());
            }
            from_snapshot.map(|(_, b)| b)
        }
    };
    let Some(bytes) = bytes else { return p };
    p.size = Some(bytes.len() as u64);
    let side = render_bytes(path, &bytes);
    p.rendering = Some(side.rendering);
    if let Some(t) = side.text {
        if t.len() > MAX_PREVIEW_TEXT {
            let mut end = MAX_PREVIEW_TEXT;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            p.text = Some(t[..end].to_string());
            p.truncated = true;
        } else {
            p.text = Some(t);
        }
    }
    p
}

fn from_last_snapshot(
    trial: &TrialFiles,
    path: &str,
    problems: &mut Vec<String>,
) -> Option<(String, Vec<u8>)> {
    let last = super::load::stages(trial).into_iter().last()?;
    let snap = match super::load::load_snapshot(trial, last, problems) {
        Ok(v) => v,
        Err(why) => {
            problems.push(why);
            return None;
        }
    };
    let hash = snap
        .get("files")?
        .get(path)?
        .get("hash")?
        .as_str()?
        .to_string();
    match read_blob(trial, &hash) {
        Blob::Bytes(b) => Some((format!("snapshots/{}", last.file_name()), b)),
        Blob::NotStored => {
            problems.push(format!(
                "{path}: content not stored (world/blobs/{hash} is absent)"
            ));
            None
        }
        Blob::Unreadable(why) => {
            problems.push(format!("{path}: {why}"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pictures_are_embedded_and_text_is_text() {
        let png = b"\x89PNG\r\n\x1a\n rest";
        match render_bytes("a.png", png).rendering {
            Rendering::Image { mime, data_uri } => {
                assert_eq!(mime, "image/png");
                assert!(data_uri.unwrap().starts_with("data:image/png;base64,"));
            }
            other => panic!("{other:?}"),
        }
        let s = render_bytes("notes.md", "# hi\n".as_bytes());
        assert_eq!(s.text.as_deref(), Some("# hi\n"));
        assert_eq!(
            render_bytes("x.bin", b"\0\x01\x02").rendering,
            Rendering::Binary
        );
        let big = [b"\xff\xd8\xff".as_slice(), &vec![0u8; MAX_IMAGE_BYTES]].concat();
        assert!(matches!(
            render_bytes("b.jpg", &big).rendering,
            Rendering::Image { data_uri: None, .. }
        ));
    }

    #[test]
    fn a_base_layer_file_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = dir.path().join("world/blobs");
        std::fs::create_dir_all(&blobs).unwrap();
        let h = |b: &[u8]| blake3::hash(b).to_hex().to_string();
        std::fs::write(blobs.join(h(b"new\n")), b"new\n").unwrap();
        let rec = |hash: String| serde_json::json!({"size": 4, "hash": hash, "mode": 420});
        let old = serde_json::json!({"files": {"a.md": rec(h(b"old\n")), "b.md": rec(h(b"gone"))}});
        let new = serde_json::json!({"files": {"a.md": rec(h(b"new\n")), "b.md": rec(h(b"lost"))}});
        let mut problems = Vec::new();
        let c = diff_files(
            &TrialFiles::loose(dir.path()),
            Some(&old),
            &new,
            &mut problems,
        );
        let a = &c.files[0];
        assert_eq!((a.status, a.one_sided), (Status::Changed, true));
        assert_eq!(a.old_rendering, Some(Rendering::NotStored));
        assert_eq!(a.diff.as_ref().map(|d| (d.added, d.removed)), Some((1, 0)));
        // What the turn wrote must be stored: its absence is a problem.
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("b.md: ") && problems[0].contains("not stored"));
        // The seeded world (no base) may lie in a generated base layer: not a problem.
        let mut problems = Vec::new();
        let c = diff_files(&TrialFiles::loose(dir.path()), None, &new, &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.files[1].new_rendering, Some(Rendering::NotStored));
        assert_eq!(c.files[1].diff, None);
    }

    #[test]
    fn a_broken_office_file_is_an_error_string() {
        let s = render_bytes("report.docx", b"PK\x03\x04 this is not a zip");
        assert!(
            matches!(s.rendering, Rendering::Unavailable { .. }),
            "{:?}",
            s.rendering
        );
    }

    #[test]
    fn preview_refuses_paths_outside_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("deliverables/sub");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("a.txt"), "hello").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), d.join("l")).unwrap();
        let ok = file_preview(&TrialFiles::loose(dir.path()), "sub/a.txt");
        assert_eq!(ok.text.as_deref(), Some("hello"));
        assert_eq!(ok.source.as_deref(), Some("deliverables/sub/a.txt"));
        for bad in ["../secret", "/etc/passwd", "sub/l", ""] {
            let p = file_preview(&TrialFiles::loose(dir.path()), bad);
            assert!(p.text.is_none() && !p.problems.is_empty(), "{bad}: {p:?}");
        }
    }
}
