//! Image readers for checks: `image(path)`, `pdf_page_image(path, page)`,
//! `image_distance(a, b)` and `colour_distance(a, b)` (see `bureau_media::analyze`).
//!
//! | function | result |
//! |---|---|
//! | `image(path)` | `.format`, `.width`, `.height`, `.colour_type`, `.phash` (64 hex digits), `.colours` (each `.hex`, `.share`, largest first); None when the workspace file is not a readable image |
//! | `pdf_page_image(path, page)` | the same for the image of page `page` (from 1) of a PDF; None when the workspace file is no PDF or the page has no image |
//! | `image_distance(a, b)` | the Hamming distance (0–256) of the perceptual hashes of two images — each a path or a value `image()` returned; None when a workspace file is not a readable image |
//! | `colour_distance(a, b)` | the distance of two `#rrggbb` colours (Euclidean in RGB, 0–441.7) |
//!
//! Paths are workspace paths or `w.reference("...")`. A missing file is an error of the check
//! (guard with `w.files.exists`), and so is a reference file that is not a readable image (the
//! task is broken); a workspace file that is not a readable image is the agent's outcome: None.

use bureau_media::analyze::{self, ImageFacts};
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::Value;
use starlark::values::none::NoneOr;

use crate::documents::{bytes, to_value};
use crate::globals::fail;

/// The facts of the image at `path` (or of page `page` of the PDF there); `Ok(None)` when a
/// workspace file is not a readable image, an error for a missing file or a bad reference.
fn facts(
    f: &str,
    path: &str,
    page: Option<usize>,
    eval: &Evaluator<'_, '_, '_>,
) -> starlark::Result<Option<ImageFacts>> {
    let b = bytes(f, path, eval)?;
    let got = match page {
        Some(p) => analyze::pdf_page(path, &b, p),
        None => analyze::analyze(path, &b),
    };
    match got {
        Ok(x) => Ok(Some(x)),
        Err(e) if path.starts_with(crate::reference::PREFIX) => fail(format!(
            "{f}(\"{path}\"): {e}; a task's reference picture must be a readable image"
        )),
        Err(_) => Ok(None),
    }
}

fn alloc<'v>(eval: &mut Evaluator<'v, '_, '_>, f: Option<ImageFacts>) -> NoneOr<Value<'v>> {
    match f.and_then(|f| serde_json::to_value(f).ok()) {
        Some(v) => NoneOr::Other(to_value(eval.heap(), &v)),
        None => NoneOr::None,
    }
}

/// The perceptual hash of `v`: a path, or a value `image()` returned.
fn hash_of<'v>(v: Value<'v>, eval: &mut Evaluator<'v, '_, '_>) -> starlark::Result<Option<String>> {
    if let Some(path) = v.unpack_str() {
        return Ok(facts("image_distance", path, None, eval)?.map(|f| f.phash));
    }
    if let Ok(Some(h)) = v.get_attr("phash", eval.heap())
        && let Some(h) = h.unpack_str()
    {
        return Ok(Some(h.to_string()));
    }
    fail(format!(
        "image_distance(): {} is neither a path nor a value of image() or pdf_page_image()",
        v.get_type()
    ))
}

#[starlark_module]
pub(crate) fn image_functions(builder: &mut GlobalsBuilder) {
    /// An image of the workspace (or `w.reference(...)`): format, width, height, colour type,
    /// perceptual hash and dominant colours; None when the file is not a readable image.
    fn image<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneOr<Value<'v>>> {
        let f = facts("image", path, None, eval)?;
        Ok(alloc(eval, f))
    }

    /// The image of page `page` (from 1) of a PDF, as `image()` describes a picture; None when
    /// the file is no PDF or that page has no image.
    fn pdf_page_image<'v>(
        #[starlark(require = pos)] path: &str,
        #[starlark(require = pos)] page: i32,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneOr<Value<'v>>> {
        if page < 1 {
            return fail(format!(
                "pdf_page_image(\"{path}\", {page}): pages count from 1"
            ));
        }
        let f = facts("pdf_page_image", path, Some(page as usize), eval)?;
        Ok(alloc(eval, f))
    }

    /// Bits (0–256) by which the perceptual hashes of two images differ; each is a path or a
    /// value of `image()`. None when a workspace file is not a readable image.
    fn image_distance<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        #[starlark(require = pos)] b: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneOr<i32>> {
        let (Some(ha), Some(hb)) = (hash_of(a, eval)?, hash_of(b, eval)?) else {
            return Ok(NoneOr::None);
        };
        match analyze::distance(&ha, &hb) {
            Ok(d) => Ok(NoneOr::Other(d as i32)),
            Err(e) => fail(format!("image_distance(): {e}")),
        }
    }

    /// The distance of two colours written `#rrggbb` (Euclidean in RGB, 0–441.7).
    fn colour_distance(
        #[starlark(require = pos)] a: &str,
        #[starlark(require = pos)] b: &str,
    ) -> starlark::Result<f64> {
        analyze::colour_distance(a, b).or_else(|e| fail(format!("colour_distance(): {e}")))
    }
}
