//! The manifest: every file, planted fact, version chain and derivation edge, written as
//! stable JSON to `<out>/.bureau/manifest.json`.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::bulk::BulkFile;
use crate::company::Company;
use crate::plan::{Plan, Role};
use crate::{GenError, GenOptions, GenSpec, MANIFEST_DIR, MANIFEST_FILE, Persona};

/// Schema id written into every manifest.
pub const SCHEMA: &str = "bureau.gen.manifest/1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    pub schema: String,
    pub persona: Persona,
    pub seed: u64,
    /// The size the workspace was grown to (`--grow-to`), when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grow_to: Option<u64>,
    pub company: String,
    /// The persona's own name and e-mail (whose workspace this is).
    pub owner: String,
    pub stats: Stats,
    /// Sorted by path.
    pub files: Vec<FileEntry>,
    pub facts: Vec<Fact>,
    pub chains: Vec<Chain>,
    pub derivations: Vec<Derivation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub files: usize,
    /// Folders holding at least one file, directly or below.
    pub folders: usize,
    /// Distinct file types.
    pub types: usize,
    /// Deepest folder (number of path components).
    pub max_depth: usize,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEntry {
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
    /// A type id from [`crate::TYPES`].
    #[serde(rename = "type")]
    pub ty: String,
    pub size: u64,
    pub blake3: String,
    /// "storyline" (states planted facts), "filler", "duplicate" or "bulk" (a large data
    /// file added to grow the workspace to `--grow-to` bytes).
    pub role: String,
    /// For duplicates: the path whose bytes this file repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
    /// The document date (also the file's modification time), `YYYY-MM-DD`.
    pub date: String,
    /// For evidence media: what the file shows ("receipt photo", "whiteboard photo", "scan",
    /// "bar chart", ...); its facts are in `facts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<String>,
}

/// Something true in the workspace, and the files that state it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    pub id: String,
    pub statement: String,
    pub value: String,
    pub files: Vec<String>,
}

/// Versions of one document, oldest first, and what changed between them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chain {
    pub id: String,
    pub title: String,
    pub versions: Vec<String>,
    pub changes: Vec<Change>,
    /// Copies of an older version under names that suggest otherwise.
    pub stale_copies: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub from: String,
    pub to: String,
    pub what: String,
    pub before: String,
    pub after: String,
}

/// `derived` was made from `source` (relation: export, table_from, quotes, chart_of,
/// discusses, agenda_for, derived_from, reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Derivation {
    pub source: String,
    pub derived: String,
    pub relation: String,
}

impl Manifest {
    /// Stable pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// One line for people: files, folders, types, depth, bytes, facts, chains, derivations.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        format!(
            "{} files, {} folders, {} types, depth {}, {} bytes, {} facts, {} chains, {} derivations",
            s.files,
            s.folders,
            s.types,
            s.max_depth,
            s.bytes,
            self.facts.len(),
            self.chains.len(),
            self.derivations.len()
        )
    }
}

pub(crate) fn write(
    spec: &GenSpec,
    opts: &GenOptions,
    c: &Company,
    plan: &Plan,
    bytes: &[Vec<u8>],
    bulk: &[BulkFile],
    out: &Path,
) -> Result<Manifest, GenError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| GenError::Io { path: p, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    let mut files = Vec::with_capacity(plan.files.len());
    let mut types = BTreeSet::new();
    let mut total = 0u64;
    for (f, b) in plan.files.iter().zip(bytes) {
        let mut acc = String::new();
        let parts: Vec<&str> = f.path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            dirs.insert(acc.clone());
        }
        types.insert(f.ty.id);
        total += b.len() as u64;
        files.push(FileEntry {
            path: f.path.clone(),
            ty: f.ty.id.to_string(),
            size: b.len() as u64,
            blake3: blake3::hash(b).to_hex().to_string(),
            role: match f.role {
                Role::Storyline => "storyline",
                Role::Filler => "filler",
                Role::Duplicate => "duplicate",
            }
            .to_string(),
            duplicate_of: match f.body {
                crate::content::Body::CopyOf(i) => plan.files.get(i).map(|o| o.path.clone()),
                _ => None,
            },
            date: f.date.to_string(),
            media: match &f.body {
                crate::content::Body::Media(m) => Some(m.kind()),
                _ => None,
            },
        });
    }
    for f in bulk {
        let mut acc = String::new();
        let parts: Vec<&str> = f.path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            dirs.insert(acc.clone());
        }
    }
    for d in &dirs {
        let p = out.join(d);
        std::fs::create_dir_all(&p).map_err(io(&p))?;
    }
    write_files(plan, bytes, out)?;
    for f in bulk {
        types.insert(f.kind.id());
    }
    if !bulk.is_empty() {
        for e in crate::bulk::write(spec.persona, spec.seed, c, bulk, out)? {
            total += e.size;
            files.push(e);
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let mut facts = plan.facts.clone();
    facts.sort_by(|a, b| a.id.cmp(&b.id));
    let mut chains = plan.chains.clone();
    chains.sort_by(|a, b| a.id.cmp(&b.id));
    let mut derivations = plan.derivations.clone();
    derivations.sort_by(|a, b| (&a.source, &a.derived).cmp(&(&b.source, &b.derived)));
    let me = crate::plan::owner_of(spec.persona);
    let m = Manifest {
        schema: SCHEMA.into(),
        persona: spec.persona,
        seed: spec.seed,
        grow_to: opts.grow_to,
        company: c.name.into(),
        owner: format!("{} <{}>", c.person(me).name, c.person(me).email),
        stats: Stats {
            files: files.len(),
            folders: dirs.len(),
            types: types.len(),
            max_depth: dirs.iter().map(|d| d.split('/').count()).max().unwrap_or(0),
            bytes: total,
        },
        files,
        facts,
        chains,
        derivations,
    };
    let mdir = out.join(MANIFEST_DIR);
    std::fs::create_dir_all(&mdir).map_err(io(&mdir))?;
    let mp = mdir.join(MANIFEST_FILE);
    std::fs::write(&mp, m.to_json()).map_err(io(&mp))?;
    Ok(m)
}

/// Write the files (in parallel) and set each one's modification time to its date.
fn write_files(plan: &Plan, bytes: &[Vec<u8>], out: &Path) -> Result<(), GenError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let chunk = plan.files.len().div_ceil(workers).max(1);
    let pairs: Vec<(&crate::plan::Planned, &Vec<u8>)> = plan.files.iter().zip(bytes).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || -> Result<(), GenError> {
                    for (f, b) in part {
                        let p = out.join(&f.path);
                        let err = |source| GenError::Io {
                            path: p.clone(),
                            source,
                        };
                        let file = std::fs::File::create(&p).map_err(err)?;
                        let mut w = std::io::BufWriter::new(&file);
                        std::io::Write::write_all(&mut w, b).map_err(err)?;
                        std::io::Write::flush(&mut w).map_err(err)?;
                        drop(w);
                        let t = crate::render::at(f.date, 9, 0).and_utc().timestamp().max(0) as u64;
                        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t);
                        file.set_modified(when).map_err(err)?;
                    }
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(r) => r?,
                Err(_) => {
                    return Err(GenError::Render {
                        path: out.display().to_string(),
                        reason: "a writer thread panicked".into(),
                    });
                }
            }
        }
        Ok(())
    })
}
