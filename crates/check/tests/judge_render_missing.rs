//! A `judge_render` item on a machine without the renderers it needs: the verdict is an
//! error whose one line names what to install, and the judge is not asked. (Its own test
//! binary: it empties PATH for the whole process.)

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use bureau_check::{CheckLimits, Judge, evaluate_judged};
use bureau_core::task::Task;
use bureau_core::verdict::{TurnRef, VerdictStatus};
use bureau_world::World;

const TASK: &str = r#"
id = "deck"
title = "Make the deck"
persona = "analyst"
category = "slides"
difficulty = "easy"
apps = ["files"]
[user]
name = "Mara Lindqvist"
email = "mara@x.test"

[[turn]]
at = "2026-03-09T09:00:00"
prompt = "Make deliverables/deck.pptx and deliverables/report.pdf."

[[rubric]]
id = "deck"
description = "The deck shows the plan"
kind = "result"
judge = "The deck shows the plan."
judge_render = ["deliverables/deck.pptx"]

[[rubric]]
id = "report"
description = "The report shows the plan"
kind = "result"
judge = "The report shows the plan."
judge_render = ["deliverables/report.pdf"]

[[rubric]]
id = "chart"
description = "The chart is red"
kind = "result"
judge = "The chart is red."
judge_render = ["deliverables/chart.png"]
"#;

struct Counting(AtomicUsize);

impl Judge for &Counting {
    fn model(&self) -> String {
        "openai:vision".into()
    }
    fn complete(&self, _: &str, _: &str) -> Result<String, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok("{\"passed\": true}".into())
    }
    fn complete_seeing(
        &self,
        _: &str,
        _: &str,
        images: &[bureau_core::tool::Media],
    ) -> Result<(String, bureau_core::result::ModelTokens), String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        assert_eq!(images.len(), 1, "the picture is shown without any program");
        Ok(("{\"passed\": true}".into(), Default::default()))
    }
}

fn put(p: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

#[test]
fn without_libreoffice_or_poppler_the_item_is_an_error_naming_the_package() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("bin");
    std::fs::create_dir_all(&empty).unwrap();
    // SAFETY: this binary's only test; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("PATH", &empty) };

    let t = d.path().join("task");
    put(&t.join("task.toml"), TASK.as_bytes());
    // The files exist or not: the renderer's absence decides, whatever the agent made.
    put(
        &t.join("world/files/deliverables/report.pdf"),
        b"%PDF-1.4\n",
    );
    let png = {
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(8, 8, image::Rgb([200, 0, 0])))
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    };
    put(&t.join("world/files/deliverables/chart.png"), &png);
    let task = Task::load(&t).unwrap();
    let world = World::build(&task, &d.path().join("w")).unwrap();
    let judge = Counting(AtomicUsize::new(0));
    let v = evaluate_judged(
        &task,
        None,
        &world,
        &[],
        TurnRef::Final,
        &CheckLimits::default(),
        Some(&&judge),
    );
    assert_eq!(v[0].status, VerdictStatus::Error);
    assert_eq!(
        v[0].detail.as_deref().unwrap(),
        "this item's judge_render cannot be rendered here: rendering `deliverables/deck.pptx` needs `soffice`, which is not on PATH; install it (apt-get install libreoffice-impress)"
    );
    assert_eq!(v[1].status, VerdictStatus::Error);
    assert_eq!(
        v[1].detail.as_deref().unwrap(),
        "this item's judge_render cannot be rendered here: rendering `deliverables/report.pdf` needs `pdftoppm`, which is not on PATH; install it (apt-get install poppler-utils)"
    );
    assert!(v[0].judge.is_none() && v[1].judge.is_none());
    // A picture needs no program: it is judged.
    assert_eq!(v[2].status, VerdictStatus::Passed, "{:?}", v[2]);
    assert_eq!(
        judge.0.load(Ordering::SeqCst),
        1,
        "only the picture's item asked the judge"
    );
}
