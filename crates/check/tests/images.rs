//! Checks that see images: the `image` predicate and the Starlark image functions, on real
//! generated pictures — a red square, the same square with noise, a blue circle — and a PDF
//! whose page is that picture.

use std::io::Cursor;
use std::path::Path;

use bureau_check::{CheckLimits, evaluate, load_checks};
use bureau_core::task::Task;
use bureau_core::verdict::{TurnRef, Verdict, VerdictStatus};
use bureau_world::World;

const TASK: &str = r##"
id = "pictures"
title = "Make the logo"
persona = "designer"
category = "design"
difficulty = "easy"
apps = ["files"]
[user]
name = "Mara Lindqvist"
email = "mara@x.test"

[[turn]]
at = "2026-03-09T09:00:00"
prompt = "Make out/logo.png like the brand sheet."

[[rubric]]
id = "like-reference"
description = "The logo is the reference square, in red"
kind = "result"
image = { path = "out/logo.png", reference = "logo.png", max_distance = 8, format = "png", width = 256, height = 256, colours = ["#dc1e1e", "#ffffff"] }

[[rubric]]
id = "circle-is-not-the-square"
description = "The circle is not the logo"
kind = "result"
image = { path = "out/circle.png", reference = "logo.png", colours = ["#dc1e1e"] }

[[rubric]]
id = "wrong-size"
description = "Size and format"
kind = "result"
image = { path = "out/logo.png", width = 512, format = "jpeg" }

[[rubric]]
id = "text-is-no-image"
description = "notes.png is no picture"
kind = "result"
image = { path = "out/notes.png" }

[[rubric]]
id = "missing"
description = "nothing there"
kind = "result"
image = { path = "out/nothing.png" }

[[rubric]]
id = "scan-page"
description = "The scan's first page is the logo"
kind = "result"
image = { path = "out/scan.pdf", page = 1, reference = "logo.png", colours = ["#dc1e1e"] }

[[rubric]]
id = "starlark"
description = "Starlark sees the same"
kind = "result"
check = "facts"

[[rubric]]
id = "missing-file-is-an-error"
description = "guard your paths"
kind = "result"
check = "unguarded"

[[rubric]]
id = "bad-reference-is-an-error"
description = "a reference that is no picture"
kind = "result"
check = "bad_reference"
"##;

const CHECKS: &str = r##"
def facts(w):
    logo = image("out/logo.png")
    ref = image(w.reference("logo.png"))
    if logo == None or ref == None:
        return {"passed": False, "detail": "no image"}
    if (logo.format, logo.width, logo.height, logo.colour_type) != ("png", 256, 256, "rgb8"):
        return {"passed": False, "detail": "facts %r" % logo}
    if len(logo.phash) != 64:
        return {"passed": False, "detail": "hash %s" % logo.phash}
    near = image_distance("out/logo.png", w.reference("logo.png"))
    far = image_distance(logo, "out/circle.png")
    if near > 4 or far < 16 or image_distance(ref, ref) != 0:
        return {"passed": False, "detail": "distances %d %d" % (near, far)}
    if image("out/notes.png") != None or image_distance("out/notes.png", logo) != None:
        return {"passed": False, "detail": "a text file read as an image"}
    top = [c for c in logo.colours if colour_distance(c.hex, "#dc1e1e") < 20]
    if not top or top[0].share < 0.2:
        return {"passed": False, "detail": "colours %r" % logo.colours}
    page = pdf_page_image("out/scan.pdf", 1)
    if page == None or (page.width, page.height) != (256, 256):
        return {"passed": False, "detail": "page %r" % page}
    if image_distance(page, ref) > 4 or pdf_page_image("out/notes.png", 1) != None:
        return {"passed": False, "detail": "page hash"}
    return {"passed": True, "detail": "near %d, far %d" % (near, far)}

def unguarded(w):
    return image("out/nothing.png") != None

def bad_reference(w):
    return image(w.reference("notes.txt")) != None
"##;

/// A 256×256 white picture with a shape in `colour`, noised by ±`noise` (fixed sequence).
fn picture(colour: [u8; 3], inside: impl Fn(u32, u32) -> bool, noise: i32) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let img = image::RgbImage::from_fn(256, 256, |x, y| {
        let base = if inside(x, y) {
            colour
        } else {
            [255, 255, 255]
        };
        image::Rgb(base.map(|c| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = if noise == 0 {
                0
            } else {
                ((state >> 33) % (2 * noise as u64 + 1)) as i32 - noise
            };
            (i32::from(c) + n).clamp(0, 255) as u8
        }))
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn square(x: u32, y: u32) -> bool {
    (64..192).contains(&x) && (64..192).contains(&y)
}

fn circle(x: u32, y: u32) -> bool {
    let (dx, dy) = (x as i32 - 128, y as i32 - 128);
    dx * dx + dy * dy <= 80 * 80
}

fn put(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn verdicts(dir: &Path) -> Vec<Verdict> {
    let t = dir.join("task");
    put(&t.join("task.toml"), TASK.as_bytes());
    put(&t.join("checks.star"), CHECKS.as_bytes());
    let red = picture([220, 30, 30], square, 0);
    put(&t.join("reference/logo.png"), &red);
    put(&t.join("reference/notes.txt"), b"not a picture");
    // What the agent made: the square with noise, a blue circle, a text file named .png,
    // and a scan of the square.
    put(
        &t.join("world/files/out/logo.png"),
        &picture([220, 30, 30], square, 12),
    );
    put(
        &t.join("world/files/out/circle.png"),
        &picture([30, 60, 200], circle, 0),
    );
    put(
        &t.join("world/files/out/notes.png"),
        b"meeting notes, not a picture",
    );
    put(
        &t.join("world/files/out/scan.pdf"),
        &bureau_formats::office::image_to_pdf("scan.png", &red).unwrap(),
    );
    let task = Task::load(&t).unwrap();
    let program = load_checks(&task).unwrap();
    let world = World::build(&task, &dir.join("w")).unwrap();
    evaluate(
        &task,
        program.as_ref(),
        &world,
        &[],
        TurnRef::Final,
        &CheckLimits::default(),
    )
}

fn find<'a>(v: &'a [Verdict], id: &str) -> &'a Verdict {
    v.iter().find(|x| x.id == id).unwrap()
}

#[test]
fn the_image_predicate_compares_format_size_colours_and_likeness() {
    let d = tempfile::tempdir().unwrap();
    let v = verdicts(d.path());
    let detail = |id: &str| find(&v, id).detail.clone().unwrap_or_default();
    let status = |id: &str| find(&v, id).status;

    assert_eq!(
        status("like-reference"),
        VerdictStatus::Passed,
        "{}",
        detail("like-reference")
    );
    let d1 = detail("like-reference");
    assert!(
        d1.contains("`out/logo.png` is a png image of 256×256"),
        "{d1}"
    );
    assert!(d1.contains("looks like reference/logo.png"), "{d1}");
    assert!(d1.contains("has #dc1e1e"), "{d1}");

    assert_eq!(status("circle-is-not-the-square"), VerdictStatus::Failed);
    let d2 = detail("circle-is-not-the-square");
    assert!(d2.contains("does not look like reference/logo.png"), "{d2}");
    assert!(d2.contains("lacks #dc1e1e among its main colours"), "{d2}");

    assert_eq!(status("wrong-size"), VerdictStatus::Failed);
    let d3 = detail("wrong-size");
    assert!(
        d3.contains("it is png, not jpeg") && d3.contains("256 pixels wide, not 512"),
        "{d3}"
    );

    assert_eq!(status("text-is-no-image"), VerdictStatus::Failed);
    assert!(detail("text-is-no-image").contains("`out/notes.png` is not a readable image"));
    assert_eq!(status("missing"), VerdictStatus::Failed);
    assert!(detail("missing").contains("no file `out/nothing.png`"));

    assert_eq!(
        status("scan-page"),
        VerdictStatus::Passed,
        "{}",
        detail("scan-page")
    );
    assert!(detail("scan-page").starts_with("page 1 of `out/scan.pdf` is a"));
}

#[test]
fn starlark_checks_read_images_pages_and_distances() {
    let d = tempfile::tempdir().unwrap();
    let v = verdicts(d.path());
    let s = find(&v, "starlark");
    assert_eq!(s.status, VerdictStatus::Passed, "{s:?}");
    let e = find(&v, "missing-file-is-an-error");
    assert_eq!(e.status, VerdictStatus::Error);
    assert!(
        e.detail
            .as_deref()
            .unwrap()
            .contains("image(\"out/nothing.png\"): no such file"),
        "{e:?}"
    );
    let b = find(&v, "bad-reference-is-an-error");
    assert_eq!(b.status, VerdictStatus::Error);
    let bd = b.detail.as_deref().unwrap();
    assert!(
        bd.contains("reference:notes.txt") && bd.contains("must be a readable image"),
        "{bd}"
    );
}
