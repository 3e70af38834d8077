//! The `image` predicate: a picture (or the image of a PDF page) the agent produced is
//! readable and matches the format, size, dominant colours and reference picture given.

use bureau_core::task::{IMAGE_MAX_DISTANCE, ImageFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_media::analyze::{self, COLOUR_TOLERANCE, ImageFacts};
use bureau_world::World;

/// Evaluate `f`. A missing or unreadable image fails (the agent's outcome); a reference
/// picture that cannot be read is an error (the task is broken, not the agent's work).
pub(crate) fn image(task: &Task, world: &World, f: &ImageFilter) -> (VerdictStatus, String) {
    let path = &f.path;
    let files = world.files();
    if !files.exists(path) {
        return (
            VerdictStatus::Failed,
            format!("no file `{path}` in the workspace"),
        );
    }
    let bytes = match files.read_bytes(path) {
        Ok(b) => b,
        Err(e) => return (VerdictStatus::Failed, e),
    };
    let what = match f.page {
        Some(p) => format!("page {p} of `{path}`"),
        None => format!("`{path}`"),
    };
    let facts = match f.page {
        Some(p) => analyze::pdf_page(path, &bytes, p as usize),
        None => analyze::analyze(path, &bytes),
    };
    let facts = match facts {
        Ok(x) => x,
        Err(e) => {
            return (
                VerdictStatus::Failed,
                format!("{what} is not a readable image: {e}"),
            );
        }
    };
    let mut good = vec![format!(
        "{what} is a {} image of {}×{}",
        facts.format, facts.width, facts.height
    )];
    let mut bad = Vec::new();
    if let Some(fmt) = &f.format
        && *fmt != facts.format
    {
        bad.push(format!("it is {}, not {fmt}", facts.format));
    }
    for (name, want, got) in [
        ("wide", f.width, facts.width),
        ("high", f.height, facts.height),
    ] {
        if let Some(want) = want
            && want != got
        {
            bad.push(format!("it is {got} pixels {name}, not {want}"));
        }
    }
    for c in &f.colours {
        match analyze::colour_match(&facts, c, COLOUR_TOLERANCE) {
            Ok(Some(m)) => good.push(format!("has {c} (as {}, {:.0}%)", m.hex, m.share * 100.0)),
            Ok(None) => bad.push(format!(
                "lacks {c} among its main colours ({})",
                colour_list(&facts)
            )),
            Err(e) => return (VerdictStatus::Error, format!("image `colours`: {e}")),
        }
    }
    if let Some(rel) = &f.reference {
        let reference = match crate::reference::read(task, rel) {
            Ok(b) => b,
            Err(e) => return (VerdictStatus::Error, format!("image `reference`: {e}")),
        };
        let expected = match analyze::analyze(&format!("reference/{rel}"), &reference) {
            Ok(x) => x,
            Err(e) => {
                return (
                    VerdictStatus::Error,
                    format!(
                        "image `reference`: {e}; the task's reference picture must be a readable image"
                    ),
                );
            }
        };
        let max = f.max_distance.unwrap_or(IMAGE_MAX_DISTANCE);
        match analyze::distance(&facts.phash, &expected.phash) {
            Ok(d) if d <= max => good.push(format!(
                "looks like reference/{rel} ({d} of 256 hash bits differ, at most {max} allowed)"
            )),
            Ok(d) => bad.push(format!(
                "does not look like reference/{rel} ({d} of 256 hash bits differ, at most {max} allowed)"
            )),
            Err(e) => return (VerdictStatus::Error, e),
        }
    }
    if bad.is_empty() {
        (VerdictStatus::Passed, good.join("; "))
    } else {
        (
            VerdictStatus::Failed,
            format!("{}: {}", good[0], bad.join("; ")),
        )
    }
}

fn colour_list(f: &ImageFacts) -> String {
    f.colours
        .iter()
        .map(|c| format!("{} {:.0}%", c.hex, c.share * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}
