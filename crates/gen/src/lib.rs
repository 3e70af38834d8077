//! Deterministic persona workspaces (`bureau gen workspace`).
//!
//! [`generate`] writes a realistic workspace for one of five [`Persona`]s: a role-shaped
//! folder tree with noise (archives, ambiguous names, duplicates, depth up to 8), files of
//! 87 types that each open in their usual reader, and content drawn from one company model
//! so names and numbers agree across files. Storylines plant facts, version chains
//! (`_v1`, `_v2_reviewed`, `_final`) that change specific facts, and derived artefacts (a
//! report whose table comes from a spreadsheet, a deck quoting its total, a mail discussing
//! it). Everything planted is listed in `<out>/.bureau/manifest.json` ([`Manifest`]), which
//! is not part of the agent's workspace.
//!
//! The same [`GenSpec`] always gives a byte-identical tree: one ChaCha8 stream per purpose
//! and per file, dates derived from the seed, fixed archive timestamps, sorted output.
//!
//! ```no_run
//! use bureau_gen::{GenSpec, Persona, generate};
//! let spec = GenSpec { persona: Persona::Researcher, files: 500, seed: 7 };
//! let manifest = generate(&spec, std::path::Path::new("/tmp/ws"))?;
//! assert_eq!(manifest.files.len(), 500);
//! # Ok::<(), bureau_gen::GenError>(())
//! ```

mod bulk;
mod company;
mod content;
mod filler;
mod manifest;
mod plan;
mod render;
mod rng;
mod types;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use manifest::{Chain, Change, Derivation, Fact, FileEntry, Manifest, Stats};
pub use types::{Category, FileType, TYPES, by_id};

/// The folder (under the output directory) holding the manifest; not part of the workspace.
pub const MANIFEST_DIR: &str = ".bureau";
/// The manifest's file name inside [`MANIFEST_DIR`].
pub const MANIFEST_FILE: &str = "manifest.json";
/// Fewest files a workspace may have: the planted storylines need this many.
pub const MIN_FILES: usize = 40;
/// Most files one workspace may have.
pub const MAX_FILES: usize = 200_000;

/// Whose workspace it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Persona {
    OperationsManager,
    LogisticsManager,
    AiProductManager,
    BackendDeveloper,
    Researcher,
}

impl Persona {
    pub const ALL: [Persona; 5] = [
        Persona::OperationsManager,
        Persona::LogisticsManager,
        Persona::AiProductManager,
        Persona::BackendDeveloper,
        Persona::Researcher,
    ];

    /// The CLI name ("operations-manager", ...).
    pub fn name(self) -> &'static str {
        match self {
            Persona::OperationsManager => "operations-manager",
            Persona::LogisticsManager => "logistics-manager",
            Persona::AiProductManager => "ai-product-manager",
            Persona::BackendDeveloper => "backend-developer",
            Persona::Researcher => "researcher",
        }
    }
}

impl fmt::Display for Persona {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Persona {
    type Err = GenError;
    fn from_str(s: &str) -> Result<Persona, GenError> {
        Persona::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| GenError::UnknownPersona(s.to_string()))
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GenSpec {
    pub persona: Persona,
    /// Exact number of files in the workspace (the manifest not counted).
    pub files: usize,
    pub seed: u64,
}

/// Options beyond the spec. The default adds nothing: `generate_with(spec, &Default::default(),
/// out)` writes exactly what `generate(spec, out)` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct GenOptions {
    /// Grow the workspace to at least this many bytes with the large files the persona
    /// really keeps (researcher: raw recordings as `.npy`, checkpoints as `.safetensors`,
    /// metric and training logs, archived runs; others: exports, database dumps, logs,
    /// archives). They count towards `GenSpec::files`: one large file per 8 MiB asked for,
    /// at least 4, at most a tenth of the files.
    pub grow_to: Option<u64>,
}

/// Parse a size for `--grow-to`: bytes, or a number with a unit (`k`/`KB`/`KiB`, `M`/`MB`/`MiB`,
/// `G`/`GB`/`GiB`, `T`...; `KB` = 1000, `KiB` and the bare letter = 1024). `1.5GiB` works.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size; write bytes or e.g. 500MB, 1GiB"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "gb" => 1e9,
        "t" | "tib" => 1024f64.powi(4),
        "tb" => 1e12,
        other => {
            return Err(format!(
                "unknown size unit {other:?} in {s:?}; use B, KB, KiB, MB, MiB, GB, GiB, TB or TiB"
            ));
        }
    };
    Ok((n * mult).round() as u64)
}

#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error(
        "unknown persona {0:?}; use one of operations-manager, logistics-manager, ai-product-manager, backend-developer, researcher"
    )]
    UnknownPersona(String),
    #[error("--files {0} is out of range; ask for {MIN_FILES} to {MAX_FILES} files")]
    FileCount(usize),
    #[error(
        "--grow-to {asked} bytes is too small: the workspace's {files} ordinary files already take {small} bytes and its {bulk} large files need at least {min} more; ask for {need} bytes or more"
    )]
    GrowTo {
        asked: u64,
        files: usize,
        small: u64,
        bulk: usize,
        min: u64,
        need: u64,
    },
    #[error("{path}: cannot write: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot render {path}: {reason} (a generator bug; please report it with the seed)")]
    Render { path: String, reason: String },
}

/// Write the workspace for `spec` into `out` (created if missing; existing files with the same
/// names are overwritten — callers check emptiness) and its manifest into
/// `out/.bureau/manifest.json`. Returns the manifest.
pub fn generate(spec: &GenSpec, out: &Path) -> Result<Manifest, GenError> {
    generate_with(spec, &GenOptions::default(), out)
}

/// [`generate`] with [`GenOptions`]. With `grow_to`, the workspace keeps `spec.files` files
/// in all: the ordinary tree is planned for `spec.files - n` files and `n` large files fill
/// the remaining bytes (role `bulk` in the manifest). Without it, the output is exactly
/// [`generate`]'s.
pub fn generate_with(spec: &GenSpec, opts: &GenOptions, out: &Path) -> Result<Manifest, GenError> {
    if !(MIN_FILES..=MAX_FILES).contains(&spec.files) {
        return Err(GenError::FileCount(spec.files));
    }
    let company = company::Company::new(spec.seed);
    let Some(grow_to) = opts.grow_to else {
        let plan = plan::plan(spec, &company);
        let rendered = plan::render_all(spec, &company, &plan)?;
        return manifest::write(spec, opts, &company, &plan, &rendered, &[], out);
    };
    let n = bulk::count(grow_to, spec.files);
    let small_spec = GenSpec {
        files: spec.files - n,
        ..*spec
    };
    if small_spec.files < MIN_FILES {
        return Err(GenError::FileCount(spec.files));
    }
    let plan = plan::plan(&small_spec, &company);
    let rendered = plan::render_all(&small_spec, &company, &plan)?;
    let small: u64 = rendered.iter().map(|b| b.len() as u64).sum();
    let min = n as u64 * bulk::MIN_BULK_BYTES;
    if grow_to < small + min {
        return Err(GenError::GrowTo {
            asked: grow_to,
            files: small_spec.files,
            small,
            bulk: n,
            min,
            need: small + min,
        });
    }
    let mut dirs = std::collections::BTreeSet::new();
    for f in &plan.files {
        if let Some((d, _)) = f.path.rsplit_once('/') {
            dirs.insert(d.to_string());
        }
    }
    let big = bulk::plan(
        spec.persona,
        spec.seed,
        &company,
        &dirs,
        plan.taken(),
        n,
        grow_to - small,
    );
    manifest::write(spec, opts, &company, &plan, &rendered, &big, out)
}
