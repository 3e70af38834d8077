//! The pages a judge looks at: the files of an item's `judge_render`, rendered to page images
//! by [`bureau_media::pages`] (pdftoppm, LibreOffice, pictures as they are) within the item's
//! bounds, and the prompt section that lists them.
//!
//! * A renderer that is missing (no `pdftoppm`, no `soffice`) makes the item an `error` with
//!   one line naming what to install — checked for every listed file before anything is
//!   rendered, whatever the agent made, so the same run on the same machine always errs.
//! * A file the agent did not make, or one that does not render (a damaged .docx), is named
//!   in the prompt as such: the judge decides what its absence means.
//! * At most [`MAX_PAGES_PER_ITEM`] pages and [`MAX_ITEM_IMAGE_BYTES`] bytes of images per
//!   item (and [`bureau_media::pages::MAX_PAGES_PER_FILE`] per file); what is cut is said in
//!   the prompt.

use std::path::PathBuf;

use bureau_core::task::JudgeSpec;
use bureau_core::tool::{Media, MediaKind};
use bureau_media::MediaError;
use bureau_media::pages::Renderer;
use bureau_world::World;

/// Most pages shown to the judge for one item, all files together.
pub const MAX_PAGES_PER_ITEM: usize = 20;
/// Most bytes of page images shown to the judge for one item.
pub const MAX_ITEM_IMAGE_BYTES: usize = 16 * 1024 * 1024;
/// The folder of a judge cache that holds rendered pages.
pub const PAGE_CACHE: &str = "pages";

/// The images for one judged item and the prompt section that introduces them.
#[derive(Debug, Default)]
pub(crate) struct JudgePages {
    pub images: Vec<Media>,
    /// Empty when the item renders nothing.
    pub section: String,
}

/// The pages of `spec.render` in `world`, rendered (or taken from `cache`). `Err`: the one
/// line of an item that cannot be judged here (a renderer is missing).
pub(crate) fn pages_for(
    world: &World,
    spec: &JudgeSpec,
    cache: Option<PathBuf>,
) -> Result<JudgePages, String> {
    if spec.render.is_empty() {
        return Ok(JudgePages::default());
    }
    let mut renderer = Renderer::new();
    renderer.cache = cache;
    for path in &spec.render {
        if let Err(e) = renderer.check(path) {
            return Err(format!(
                "this item's judge_render cannot be rendered here: {e}"
            ));
        }
    }
    let files = world.files();
    let mut images: Vec<Media> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut bytes = 0usize;
    let mut cut = 0usize;
    for path in &spec.render {
        if !files.exists(path) {
            lines.push(format!("- `{path}`: does not exist (nothing to show)"));
            continue;
        }
        let content = match files.read_bytes(path) {
            Ok(b) => b,
            Err(e) => {
                lines.push(format!("- `{path}`: cannot be read ({e})"));
                continue;
            }
        };
        let rendered = match renderer.render(path, &content) {
            Ok(r) => r,
            Err(e @ MediaError::Missing { .. }) => {
                return Err(format!(
                    "this item's judge_render cannot be rendered here: {e}"
                ));
            }
            Err(e) => {
                lines.push(format!("- `{path}`: could not be rendered ({e})"));
                continue;
            }
        };
        notes.extend(rendered.notes);
        let total = rendered.total_pages.unwrap_or(rendered.pages.len());
        for p in rendered.pages {
            if images.len() >= MAX_PAGES_PER_ITEM || bytes + p.bytes.len() > MAX_ITEM_IMAGE_BYTES {
                cut += 1;
                continue;
            }
            bytes += p.bytes.len();
            let label = format!("{path}, page {} of {total}", p.page);
            lines.push(format!(
                "- image {}: `{path}`, page {} of {total} ({}×{})",
                images.len() + 1,
                p.page,
                p.width,
                p.height
            ));
            images.push(bureau_media::media_part(
                MediaKind::Image,
                &p.mime_type,
                label,
                &p.bytes,
            ));
        }
    }
    if cut > 0 {
        notes.push(format!(
            "{cut} more pages not shown (at most {MAX_PAGES_PER_ITEM} pages and {MAX_ITEM_IMAGE_BYTES} bytes per item)"
        ));
    }
    let mut section = format!(
        "# Rendered pages\n\nThe files below are rendered as they would print; {} attached after this message, in this order. Judge what the pages show.\n\n{}\n",
        match images.len() {
            0 => "no image is".to_string(),
            1 => "1 image is".to_string(),
            n => format!("{n} images are"),
        },
        lines.join("\n")
    );
    if !notes.is_empty() {
        section.push_str(&format!("\nNotes: {}\n", notes.join("; ")));
    }
    Ok(JudgePages { images, section })
}
