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

#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error(
        "unknown persona {0:?}; use one of operations-manager, logistics-manager, ai-product-manager, backend-developer, researcher"
    )]
    UnknownPersona(String),
    #[error("--files {0} is out of range; ask for {MIN_FILES} to {MAX_FILES} files")]
    FileCount(usize),
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
    if !(MIN_FILES..=MAX_FILES).contains(&spec.files) {
        return Err(GenError::FileCount(spec.files));
    }
    let company = company::Company::new(spec.seed);
    let plan = plan::plan(spec, &company);
    let rendered = plan::render_all(spec, &company, &plan)?;
    manifest::write(spec, &company, &plan, &rendered, out)
}
