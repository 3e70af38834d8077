//! Names of filler files.

use chrono::NaiveDate;

use super::stories::capitalise;
use crate::company::{Company, ascii_slug};
use crate::rng::Rng;
use crate::types::{Category, FileType};

const DOC_WORDS: &[&str] = &[
    "meeting_notes",
    "status_update",
    "process_guide",
    "supplier_review",
    "checklist",
    "retro",
    "summary",
    "notes",
    "draft",
    "final",
    "overview",
    "proposal",
    "minutes",
    "plan",
    "memo",
    "handover",
    "faq",
    "report",
];
const SHEET_WORDS: &[&str] = &[
    "inventory",
    "tickets",
    "timesheet",
    "measurements",
    "export",
    "tracker",
    "budget",
    "forecast",
    "data",
    "list",
    "summary",
    "kpis",
];
const CODE_WORDS: &[&str] = &[
    "export",
    "client",
    "threshold",
    "parser",
    "scheduler",
    "report",
    "sensor",
    "utils",
    "models",
    "handler",
    "loader",
    "check",
    "sync",
    "cli",
    "main",
];

pub(super) fn filler_name(ty: &FileType, c: &Company, rng: &mut Rng, d: NaiveDate) -> String {
    if ty.fixed_name {
        return ty.suffix.to_string();
    }
    let region = rng.pick(&c.regions).code;
    let product = ascii_slug(rng.pick(&c.products).name.split(' ').next().unwrap_or("x"));
    let stem = match ty.category {
        Category::Code | Category::Build => {
            let a = *rng.pick(CODE_WORDS);
            let b = *rng.pick(CODE_WORDS);
            if ty.id == "java"
                || ty.id == "kt"
                || ty.id == "scala"
                || ty.id == "cs"
                || ty.id == "swift"
            {
                format!("{}{}", capitalise(a), capitalise(b))
            } else if ty.id == "m" {
                format!("{a}_{b}")
            } else if a == b {
                a.to_string()
            } else {
                format!("{a}_{b}")
            }
        }
        Category::Config => format!(
            "{}_{}",
            product,
            rng.pick(&["settings", "config", "local", "prod", "dev"])
        ),
        Category::Spreadsheet | Category::Data => match rng.below(4) {
            0 => format!(
                "{}_{}_{}",
                rng.pick(SHEET_WORDS),
                region.to_lowercase(),
                d.format("%Y%m")
            ),
            1 => format!(
                "{} {}",
                capitalise(rng.pick::<&str>(SHEET_WORDS)),
                d.format("%Y-%m-%d")
            ),
            2 => format!("{}_{}", product, rng.pick(SHEET_WORDS)),
            _ => rng.pick(SHEET_WORDS).to_string(),
        },
        Category::Communication => format!(
            "{} {}",
            capitalise(rng.pick::<&str>(&["update", "question", "invite", "fwd", "re", "call"])),
            d.format("%Y-%m-%d")
        ),
        Category::Log => format!("{}_{}", product, d.format("%Y%m%d")),
        Category::Image => format!(
            "{}_{}",
            rng.pick(&["chart", "photo", "screenshot", "figure", "IMG"]),
            rng.below(9000) + 100
        ),
        _ => match rng.below(5) {
            0 => format!(
                "{}_{}_{}",
                rng.pick(DOC_WORDS),
                region,
                d.format("%Y-%m-%d")
            ),
            1 => format!(
                "{} - {}",
                capitalise(&rng.pick(DOC_WORDS).replace('_', " ")),
                capitalise(&product)
            ),
            2 => format!("{}_{}", product, rng.pick(DOC_WORDS)),
            3 => rng.pick(DOC_WORDS).to_string(),
            _ => format!("{}_{}", rng.pick(DOC_WORDS), d.format("%Y%m%d")),
        },
    };
    format!("{stem}{}", ty.suffix)
}
