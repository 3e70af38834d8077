//! Files attached to pages (Confluence and Notion style): what describes them lives on the
//! page, their bytes in the world's blob store ([`crate::attachments`]). Seeded from
//! `world/kb/attachments/<page path>/<file>`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{KbState, Page};
use crate::attachments::StoredFile;
use crate::files::to_slash;
use crate::{World, WorldError};

/// The most files one page may carry.
pub const MAX_ATTACHMENTS_PER_PAGE: usize = 50;

/// A file attached to a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KbAttachment {
    #[serde(flatten)]
    pub file: StoredFile,
    /// Who attached it (email) and when (RFC 3339 in the office time zone).
    pub added_by: String,
    pub added_at: String,
}

impl KbAttachment {
    /// As tools list it: name, size, MIME type, who attached it and when.
    pub fn listed(&self) -> Value {
        let mut v = self.file.listed();
        v["added_by"] = json!(self.added_by);
        v["added_at"] = json!(self.added_at);
        v
    }

    /// As checks see it: [`KbAttachment::listed`] and the digest.
    pub fn checked(&self) -> Value {
        let mut v = self.file.checked();
        v["added_by"] = json!(self.added_by);
        v["added_at"] = json!(self.added_at);
        v
    }
}

impl Page {
    /// The attachment named `name` (exactly), or an error listing the page's attachments.
    pub fn attachment(&self, name: &str) -> Result<&KbAttachment, String> {
        self.attachments
            .iter()
            .find(|a| a.file.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = self
                    .attachments
                    .iter()
                    .map(|a| a.file.name.as_str())
                    .collect();
                format!(
                    "page `{}` has no attachment `{name}`; its attachments: {}",
                    self.id,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )
            })
    }

    /// Attach `a`, replacing an attachment of the same name (a new version, as Confluence
    /// keeps one name per page); the replaced one, if any. At most
    /// [`MAX_ATTACHMENTS_PER_PAGE`].
    pub(crate) fn attach(&mut self, a: KbAttachment) -> Result<Option<KbAttachment>, String> {
        if let Some(old) = self
            .attachments
            .iter_mut()
            .find(|x| x.file.name == a.file.name)
        {
            return Ok(Some(std::mem::replace(old, a)));
        }
        if self.attachments.len() >= MAX_ATTACHMENTS_PER_PAGE {
            return Err(format!(
                "page `{}` already has {MAX_ATTACHMENTS_PER_PAGE} attachments, the most a page may carry",
                self.id
            ));
        }
        self.attachments.push(a);
        Ok(None)
    }
}

impl KbState {
    /// Every file the pages carry, for the blob store.
    pub(crate) fn stored_files(&self) -> impl Iterator<Item = &StoredFile> {
        self.pages
            .values()
            .flat_map(|p| p.attachments.iter().map(|a| &a.file))
    }
}

/// Attach the files under `dir` (`world/kb/attachments/`) to their pages: a file's folder,
/// relative to `dir`, is the page's path under `pages/` (`Engineering/Onboarding` for
/// `pages/Engineering/Onboarding.md` or the folder page `pages/Engineering/Onboarding/`).
/// Returns how many were attached.
pub(super) fn seed(
    world: &mut World,
    dir: &Path,
    by_path: &BTreeMap<String, String>,
    at: &str,
    by: &str,
) -> Result<usize, WorldError> {
    let err = |path: &Path, message: String| WorldError::Seed {
        path: path.to_path_buf(),
        message,
    };
    if !dir.is_dir() {
        return Err(err(
            dir,
            "world/kb/attachments must be a folder of <page path>/<file>".into(),
        ));
    }
    let mut count = 0;
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(|e| err(dir, format!("cannot walk the kb attachments: {e}")))?;
        let path = entry.path();
        let ft = entry.file_type();
        if ft.is_dir() {
            continue;
        }
        if let Some(kind) = crate::files::special_kind(&ft) {
            return Err(err(
                path,
                format!(
                    "attachments must be regular files; this is {kind} (copy the file instead)"
                ),
            ));
        }
        let rel = path.strip_prefix(dir).map(to_slash).unwrap_or_default();
        let Some((page_path, name)) = rel.rsplit_once('/') else {
            return Err(err(
                path,
                "an attachment lies in the folder of its page: world/kb/attachments/<page path>/<file>, e.g. attachments/Engineering/Onboarding/floor-plan.png for pages/Engineering/Onboarding.md".into(),
            ));
        };
        let Some(id) = by_path.get(page_path).cloned() else {
            return Err(err(
                path,
                format!(
                    "no page `{page_path}`: the folder of an attachment names its page as under world/kb/pages/ (pages/{page_path}.md or the folder pages/{page_path}/)"
                ),
            ));
        };
        let bytes = crate::attachments::read_file(path, &format!("world/kb/attachments/{rel}"))
            .map_err(|m| err(path, m))?;
        let file = world.store_file(name, &bytes).map_err(|m| err(path, m))?;
        let Some(page) = world.kb.pages.get_mut(&id) else {
            return Err(err(path, format!("no page `{page_path}`")));
        };
        page.attach(KbAttachment {
            file,
            added_by: by.to_string(),
            added_at: at.to_string(),
        })
        .map_err(|m| err(path, m))?;
        count += 1;
    }
    Ok(count)
}
