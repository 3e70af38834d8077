//! The plan of a workspace: folders, storylines (planted facts, version chains, derived
//! artefacts), filler files and noise, then rendering (in parallel, deterministically).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Duration, NaiveDate};

use crate::company::{Company, ascii_slug, thousands};
use crate::content::{Block, Body, Doc, Event, Mail, Table, Val, long_date};
use crate::manifest::{Chain, Change, Derivation, Fact};
use crate::render::{self, FileCtx, at};
use crate::rng::Rng;
use crate::types::{Category, FileType, TYPES, ty};
use crate::{GenError, GenSpec, Persona};

/// Why a file exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Storyline,
    Filler,
    Duplicate,
}

pub(crate) struct Planned {
    pub path: String,
    pub ty: &'static FileType,
    pub body: Body,
    pub date: NaiveDate,
    pub role: Role,
}

#[derive(Default)]
pub(crate) struct Plan {
    pub files: Vec<Planned>,
    pub facts: Vec<Fact>,
    pub chains: Vec<Chain>,
    pub derivations: Vec<Derivation>,
    taken: BTreeSet<String>,
}

impl Plan {
    /// Every path the plan holds.
    pub(crate) fn taken(&self) -> &BTreeSet<String> {
        &self.taken
    }
}

impl Plan {
    /// Add a file; a taken path gets " (2)", " (3)"... before the suffix. Returns its path.
    fn add(
        &mut self,
        path: String,
        ty: &'static FileType,
        body: Body,
        date: NaiveDate,
        role: Role,
    ) -> String {
        let mut p = path;
        if self.taken.contains(&p) {
            let (dir, name) = match p.rsplit_once('/') {
                Some((d, n)) => (format!("{d}/"), n.to_string()),
                None => (String::new(), p.clone()),
            };
            let (stem, suffix) = if ty.fixed_name || !name.ends_with(ty.suffix) {
                // Fixed names cannot take a counter; the copy goes to a sibling folder.
                (name.clone(), String::new())
            } else {
                (
                    name[..name.len() - ty.suffix.len()].to_string(),
                    ty.suffix.to_string(),
                )
            };
            let mut n = 2;
            loop {
                let cand = if suffix.is_empty() {
                    format!("{}-{n}/{stem}", dir.trim_end_matches('/'))
                } else if ty.category == Category::Code {
                    // Code keeps identifier-safe names.
                    format!("{dir}{stem}_{n}{suffix}")
                } else {
                    format!("{dir}{stem} ({n}){suffix}")
                };
                if !self.taken.contains(&cand) {
                    p = cand;
                    break;
                }
                n += 1;
            }
        }
        self.taken.insert(p.clone());
        self.files.push(Planned {
            path: p.clone(),
            ty,
            body,
            date,
            role,
        });
        p
    }

    fn derive(&mut self, source: &str, derived: &str, relation: &str) {
        self.derivations.push(Derivation {
            source: source.to_string(),
            derived: derived.to_string(),
            relation: relation.to_string(),
        });
    }

    fn fact(&mut self, id: String, statement: String, value: String, files: Vec<String>) {
        let mut files = files;
        files.sort();
        self.facts.push(Fact {
            id,
            statement,
            value,
            files,
        });
    }
}

// ---------------------------------------------------------------- personas

/// A top-level folder: its name, the categories it holds (empty = anything) and the words
/// its subfolders are named from.
struct Root {
    name: &'static str,
    cats: &'static [Category],
    words: &'static [&'static str],
}

use Category::*;

const fn root(
    name: &'static str,
    cats: &'static [Category],
    words: &'static [&'static str],
) -> Root {
    Root { name, cats, words }
}

/// Where a persona's storylines put things (each a root-relative folder).
struct Places {
    data: &'static str,
    exports: &'static str,
    reports: &'static str,
    decks: &'static str,
    mail: &'static str,
    meetings: &'static str,
    team: &'static str,
    chains: &'static str,
    analysis: &'static str,
    archive: &'static str,
    /// Metric of the numbers storyline, its slug and range per region-month.
    metric: (&'static str, &'static str, i64, i64),
    /// The kind of document whose versions form chains, and what its number means.
    chain_doc: (&'static str, &'static str),
    /// Variants compared in the analysis storyline and the score's name.
    variants: (&'static [&'static str], &'static str),
}

struct Layout {
    roots: &'static [Root],
    places: Places,
    /// Relative weight of each category for fillers.
    weights: &'static [(Category, u32)],
}

const SHEETS: &[Category] = &[Spreadsheet, Data, Image];
const COMMS: &[Category] = &[Communication];
const CODE: &[Category] = &[Code, Build, Config, Notebook, Log, Data];
const ANY: &[Category] = &[];

const OPS: Layout = Layout {
    roots: &[
        root(
            "regions",
            &[Document, Spreadsheet, Data, Image],
            &[
                "North America",
                "EMEA",
                "APAC",
                "LATAM",
                "Nordics",
                "sites",
                "kpis",
                "weekly",
                "monthly",
            ],
        ),
        root(
            "campaigns",
            &[Document, Presentation, Spreadsheet, Image],
            &[
                "spring-launch",
                "trade-fair",
                "webinar-series",
                "partner-push",
                "assets",
                "briefs",
                "budget",
            ],
        ),
        root(
            "reports",
            &[Document, Spreadsheet, Presentation, Image],
            &["weekly", "monthly", "quarterly", "board", "kpi"],
        ),
        root(
            "finance",
            &[Spreadsheet, Document, Data],
            &["revenue", "budgets", "invoices", "forecasts", "expenses"],
        ),
        root(
            "vendors",
            &[Document, Spreadsheet, Communication],
            &["contracts", "quotes", "audits", "onboarding"],
        ),
        root(
            "presentations",
            &[Presentation, Document, Image],
            &["all-hands", "board", "customers"],
        ),
        root(
            "team",
            &[Document, Spreadsheet, Communication],
            &["hiring", "onboarding", "reviews", "rota"],
        ),
        root(
            "meetings",
            &[Communication, Document],
            &["1-1s", "staff", "reviews", "agendas", "minutes"],
        ),
        root("mail", COMMS, &["inbox", "sent", "saved", "threads"]),
        root("exports", SHEETS, &["crm", "erp", "bi"]),
        root(
            "tools",
            CODE,
            &["scripts", "macros", "dashboards", "configs"],
        ),
        root("archive", ANY, &["old", "backup", "2023", "misc"]),
        root("downloads", ANY, &["attachments", "tmp", "to-sort"]),
    ],
    places: Places {
        data: "finance/revenue",
        exports: "exports/erp",
        reports: "reports/quarterly",
        decks: "presentations/board",
        mail: "mail/inbox",
        meetings: "meetings/reviews",
        team: "team",
        chains: "campaigns/briefs",
        analysis: "regions/kpis",
        archive: "archive/old",
        metric: ("Revenue (EUR)", "revenue", 80_000, 900_000),
        chain_doc: ("Campaign plan", "budget"),
        variants: (
            &[
                "Email nurture",
                "Trade fair",
                "Webinar",
                "Partner referral",
                "Paid search",
            ],
            "Leads per 1,000 EUR",
        ),
    },
    weights: &[
        (Document, 34),
        (Spreadsheet, 38),
        (Presentation, 5),
        (Communication, 8),
        (Data, 4),
        (Config, 1),
        (Code, 2),
        (Build, 1),
        (Notebook, 1),
        (Image, 4),
        (Archive, 2),
        (Diagram, 1),
        (Log, 1),
    ],
};

const LOGISTICS: Layout = Layout {
    roots: &[
        root(
            "shipments",
            &[Spreadsheet, Data, Document],
            &["inbound", "outbound", "returns", "claims", "weekly"],
        ),
        root(
            "warehouses",
            &[Spreadsheet, Document, Image, Data],
            &[
                "Rotterdam",
                "Toronto",
                "Singapore",
                "São Paulo",
                "Gothenburg",
                "cycle-counts",
                "layouts",
            ],
        ),
        root(
            "carriers",
            &[Document, Spreadsheet, Communication],
            &["contracts", "rates", "scorecards", "tenders"],
        ),
        root(
            "routes",
            &[Data, Image, Spreadsheet, Diagram],
            &["planned", "actual", "maps"],
        ),
        root(
            "inventory",
            &[Spreadsheet, Data],
            &["snapshots", "forecasts", "reorders"],
        ),
        root(
            "customs",
            &[Document, Spreadsheet],
            &["declarations", "certificates", "hs-codes"],
        ),
        root(
            "reports",
            &[Document, Spreadsheet, Presentation, Image],
            &["weekly", "monthly", "quarterly", "on-time"],
        ),
        root(
            "team",
            &[Document, Spreadsheet, Communication],
            &["rota", "training", "safety"],
        ),
        root(
            "meetings",
            &[Communication, Document],
            &["carrier-reviews", "ops-sync", "minutes"],
        ),
        root("mail", COMMS, &["inbox", "sent", "carriers", "customers"]),
        root("scripts", CODE, &["etl", "labels", "edi", "config"]),
        root("archive", ANY, &["old", "backup", "2023", "closed-claims"]),
        root(
            "downloads",
            ANY,
            &["attachments", "portal-exports", "to-sort"],
        ),
    ],
    places: Places {
        data: "shipments/weekly",
        exports: "inventory/snapshots",
        reports: "reports/quarterly",
        decks: "reports/monthly",
        mail: "mail/inbox",
        meetings: "meetings/carrier-reviews",
        team: "team",
        chains: "carriers/contracts",
        analysis: "carriers/scorecards",
        archive: "archive/old",
        metric: ("Shipments delivered", "shipments_delivered", 400, 5_000),
        chain_doc: ("Carrier contract", "rate per pallet (EUR)"),
        variants: (
            &[
                "NordFreight",
                "Maas Logistics",
                "PacificLine",
                "Andes Cargo",
                "Baltic Express",
            ],
            "On-time rate (%)",
        ),
    },
    weights: &[
        (Document, 30),
        (Spreadsheet, 42),
        (Presentation, 3),
        (Communication, 9),
        (Data, 6),
        (Config, 1),
        (Code, 2),
        (Build, 1),
        (Notebook, 1),
        (Image, 3),
        (Archive, 2),
        (Diagram, 1),
        (Log, 1),
    ],
};

const AIPM: Layout = Layout {
    roots: &[
        root(
            "product",
            &[Document, Presentation, Diagram],
            &[
                "smart-alerts",
                "forecasting",
                "assistant",
                "onboarding",
                "pricing",
            ],
        ),
        root(
            "specs",
            &[Document, Diagram, Data],
            &["prds", "one-pagers", "api", "ux"],
        ),
        root(
            "roadmap",
            &[Document, Spreadsheet, Presentation],
            &["2024", "2025", "2026", "okrs"],
        ),
        root(
            "experiments",
            &[Data, Spreadsheet, Notebook, Code, Config, Log],
            &["evals", "ab-tests", "prompts", "datasets"],
        ),
        root(
            "research",
            &[Document, Spreadsheet, Communication],
            &["interviews", "surveys", "competitors"],
        ),
        root(
            "analytics",
            &[Spreadsheet, Data, Image],
            &["dashboards", "funnels", "retention", "usage"],
        ),
        root(
            "design",
            &[Image, Document, Diagram],
            &["mockups", "flows", "assets"],
        ),
        root(
            "presentations",
            &[Presentation, Document],
            &["reviews", "all-hands"],
        ),
        root(
            "meetings",
            &[Communication, Document],
            &["standups", "reviews", "1-1s"],
        ),
        root("mail", COMMS, &["inbox", "sent"]),
        root("prototypes", CODE, &["notebooks", "demo-app", "scripts"]),
        root("archive", ANY, &["old", "backup", "deprecated"]),
        root("downloads", ANY, &["attachments", "papers", "to-sort"]),
    ],
    places: Places {
        data: "analytics/usage",
        exports: "analytics/dashboards",
        reports: "product/smart-alerts",
        decks: "presentations/reviews",
        mail: "mail/inbox",
        meetings: "meetings/reviews",
        team: "research/interviews",
        chains: "specs/prds",
        analysis: "experiments/evals",
        archive: "archive/old",
        metric: ("New sign-ups", "signups", 300, 9_000),
        chain_doc: ("PRD", "launch budget (EUR)"),
        variants: (
            &[
                "baseline-rules",
                "gbm-v2",
                "transformer-small",
                "transformer-base",
                "ensemble",
            ],
            "F1 score (%)",
        ),
    },
    weights: &[
        (Document, 36),
        (Spreadsheet, 26),
        (Presentation, 8),
        (Communication, 8),
        (Data, 8),
        (Config, 2),
        (Code, 3),
        (Build, 1),
        (Notebook, 2),
        (Image, 4),
        (Archive, 1),
        (Diagram, 3),
        (Log, 1),
    ],
};

const DEV: Layout = Layout {
    roots: &[
        root(
            "src",
            &[Code, Config],
            &[
                "api",
                "core",
                "ingest",
                "billing",
                "telemetry",
                "handlers",
                "models",
                "utils",
                "internal",
                "storage",
            ],
        ),
        root(
            "tests",
            &[Code, Data, Config],
            &["unit", "integration", "fixtures", "e2e"],
        ),
        root(
            "docs",
            &[Document, Diagram, Image],
            &["design", "runbooks", "adr", "api"],
        ),
        root("config", &[Config, Data], &["dev", "staging", "prod"]),
        root(
            "deploy",
            &[Config, Build, Code],
            &["k8s", "terraform", "docker", "ci"],
        ),
        root("scripts", &[Code, Build], &["ops", "data", "release"]),
        root("migrations", &[Data, Code], &["2024", "2025", "2026"]),
        root(
            "benchmarks",
            &[Spreadsheet, Data, Image, Log],
            &["latency", "load", "profiles"],
        ),
        root("logs", &[Log, Archive], &["api", "ingest", "worker"]),
        root(
            "notes",
            &[Document, Spreadsheet],
            &["oncall", "postmortems", "interviews"],
        ),
        root("mail", COMMS, &["inbox", "alerts"]),
        root(
            "meetings",
            &[Communication, Document],
            &["sprint", "design-review"],
        ),
        root("archive", ANY, &["old", "legacy", "backup"]),
        root("downloads", ANY, &["attachments", "vendor-sdks", "to-sort"]),
    ],
    places: Places {
        data: "benchmarks/load",
        exports: "benchmarks/latency",
        reports: "docs/runbooks",
        decks: "docs/design",
        mail: "mail/inbox",
        meetings: "meetings/design-review",
        team: "notes/oncall",
        chains: "docs/design",
        analysis: "benchmarks/profiles",
        archive: "archive/old",
        metric: ("API requests (thousands)", "api_requests", 1_000, 40_000),
        chain_doc: ("Design doc", "monthly infrastructure budget (EUR)"),
        variants: (
            &[
                "postgres-15",
                "postgres-16",
                "cockroach",
                "sqlite-wal",
                "redis-cache",
            ],
            "Throughput (req/s)",
        ),
    },
    weights: &[
        (Document, 14),
        (Spreadsheet, 8),
        (Presentation, 1),
        (Communication, 4),
        (Data, 10),
        (Config, 14),
        (Code, 36),
        (Build, 3),
        (Notebook, 1),
        (Image, 2),
        (Archive, 2),
        (Diagram, 2),
        (Log, 4),
    ],
};

const RESEARCH: Layout = Layout {
    roots: &[
        root(
            "literature",
            &[Document, Data],
            &[
                "drift",
                "calibration",
                "hydrology",
                "methods",
                "to-read",
                "read",
            ],
        ),
        root(
            "experiments",
            &[Code, Config, Notebook, Log, Data, Spreadsheet],
            &[
                "exp-01-baseline",
                "exp-02-drift",
                "exp-03-temp",
                "runs",
                "configs",
                "raw",
                "processed",
            ],
        ),
        root(
            "results",
            &[Spreadsheet, Data, Image],
            &["tables", "figures", "summaries", "raw"],
        ),
        root(
            "data",
            &[Spreadsheet, Data, Archive],
            &["field", "lab", "public", "raw", "clean"],
        ),
        root(
            "papers",
            &[Document, Data, Image],
            &[
                "drift-paper",
                "calibration-note",
                "thesis-chapter",
                "figures",
            ],
        ),
        root(
            "code",
            &[Code, Build, Config, Notebook],
            &["analysis", "models", "plotting", "utils"],
        ),
        root(
            "talks",
            &[Presentation, Document, Image],
            &["group-meeting", "conference", "seminar"],
        ),
        root(
            "admin",
            &[Document, Spreadsheet, Communication],
            &["grants", "travel", "ethics", "purchases"],
        ),
        root("reviews", &[Document], &["received", "given"]),
        root("notes", &[Document], &["lab-book", "ideas", "reading"]),
        root("mail", COMMS, &["inbox", "collaborators"]),
        root(
            "meetings",
            &[Communication, Document],
            &["group", "supervision"],
        ),
        root("archive", ANY, &["old", "backup", "2023"]),
        root("downloads", ANY, &["papers", "datasets", "to-sort"]),
    ],
    places: Places {
        data: "data/field",
        exports: "results/tables",
        reports: "results/summaries",
        decks: "talks/group-meeting",
        mail: "mail/collaborators",
        meetings: "meetings/group",
        team: "admin/grants",
        chains: "papers/drift-paper",
        analysis: "experiments/exp-02-drift",
        archive: "archive/old",
        metric: ("Samples analysed", "samples_analysed", 40, 900),
        chain_doc: ("Study protocol", "sample budget (EUR)"),
        variants: (
            &[
                "linear-baseline",
                "kalman",
                "gp-regression",
                "lstm",
                "temporal-cnn",
            ],
            "Accuracy (%)",
        ),
    },
    weights: &[
        (Document, 30),
        (Spreadsheet, 36),
        (Presentation, 3),
        (Communication, 4),
        (Data, 8),
        (Config, 3),
        (Code, 7),
        (Build, 1),
        (Notebook, 2),
        (Image, 4),
        (Archive, 1),
        (Diagram, 1),
        (Log, 1),
    ],
};

fn layout(p: Persona) -> &'static Layout {
    match p {
        Persona::OperationsManager => &OPS,
        Persona::LogisticsManager => &LOGISTICS,
        Persona::AiProductManager => &AIPM,
        Persona::BackendDeveloper => &DEV,
        Persona::Researcher => &RESEARCH,
    }
}

/// The persona's own person (index into the company's people).
pub(crate) fn owner_of(p: Persona) -> usize {
    match p {
        Persona::OperationsManager => 1,
        Persona::LogisticsManager => 2,
        Persona::AiProductManager => 5,
        Persona::BackendDeveloper => 6,
        Persona::Researcher => 11,
    }
}

// ---------------------------------------------------------------- folders

const GENERIC: &[&str] = &[
    "drafts",
    "final",
    "old",
    "misc",
    "shared",
    "review",
    "backup",
    "working",
    "templates",
    "exports",
    "raw",
    "processed",
    "New folder",
    "to sort",
    "v2",
    "handover",
    "notes",
    "temp",
];

/// Folders: every path (no trailing slash), with the index of its root.
struct Folders {
    all: Vec<(String, usize)>,
    by_root: Vec<Vec<usize>>,
}

fn depth(p: &str) -> usize {
    p.split('/').count()
}

fn grow_folders(spec: &GenSpec, c: &Company, lay: &Layout, rng: &mut Rng) -> Folders {
    let target = (spec.files / 5).clamp(lay.roots.len() * 2, 40_000);
    let mut set: BTreeSet<String> = BTreeSet::new();
    let mut all: Vec<(String, usize)> = Vec::new();
    let push = |p: String, r: usize, set: &mut BTreeSet<String>, all: &mut Vec<(String, usize)>| {
        if set.insert(p.clone()) {
            all.push((p, r));
        }
    };
    for (i, r) in lay.roots.iter().enumerate() {
        push(r.name.to_string(), i, &mut set, &mut all);
    }
    // The storyline places, and one deep trail (depth 8) in the archive.
    let pl = &lay.places;
    for place in [
        pl.data,
        pl.exports,
        pl.reports,
        pl.decks,
        pl.mail,
        pl.meetings,
        pl.team,
        pl.chains,
        pl.analysis,
        pl.archive,
    ] {
        let r = lay
            .roots
            .iter()
            .position(|r| place.starts_with(r.name))
            .unwrap_or(0);
        let mut acc = String::new();
        for part in place.split('/') {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(part);
            push(acc.clone(), r, &mut set, &mut all);
        }
    }
    let arch = lay
        .roots
        .iter()
        .position(|r| r.name == "archive")
        .unwrap_or(0);
    let region = c.regions[rng.below(c.regions.len())].code;
    let trail = format!(
        "archive/{}/Q{}/{region}/projects/old/backup/misc",
        c.year - 1,
        1 + rng.below(4)
    );
    let mut acc = String::new();
    for part in trail.split('/') {
        if !acc.is_empty() {
            acc.push('/');
        }
        acc.push_str(part);
        push(acc.clone(), arch, &mut set, &mut all);
    }
    let years: Vec<String> = (0..3).map(|i| (c.year - i).to_string()).collect();
    let mut guard = 0;
    while all.len() < target && guard < target * 20 {
        guard += 1;
        let (parent, r) = all[rng.below(all.len())].clone();
        let d = depth(&parent);
        // Shallow folders branch more; nothing below depth 8.
        if d >= 8 || !rng.chance(1.0 / d as f64) {
            continue;
        }
        let words = lay.roots[r].words;
        let name = match rng.below(10) {
            0..=4 => rng.pick(words).to_string(),
            5 => rng.pick(&years).clone(),
            6 => format!("Q{}", 1 + rng.below(4)),
            7 => format!("{}-{:02}", rng.pick(&years), 1 + rng.below(12)),
            8 => rng.pick(GENERIC).to_string(),
            _ => format!(
                "{}-{:03}",
                rng.pick(&["run", "batch", "case", "week", "lot"]),
                rng.below(200)
            ),
        };
        if parent.ends_with(&format!("/{name}")) || parent == name {
            continue;
        }
        push(format!("{parent}/{name}"), r, &mut set, &mut all);
    }
    let mut by_root = vec![Vec::new(); lay.roots.len()];
    for (i, (_, r)) in all.iter().enumerate() {
        by_root[*r].push(i);
    }
    Folders { all, by_root }
}

// ---------------------------------------------------------------- storylines

fn t(s: &str) -> Val {
    Val::Text(s.to_string())
}

/// The numbers storyline: a spreadsheet of a metric by region and month, its CSV export,
/// a report quoting its table, a deck quoting the total, a chart and a mail discussing it.
fn numbers(plan: &mut Plan, c: &Company, lay: &Layout, k: usize, rng: &mut Rng, me: usize) {
    let pl = &lay.places;
    let (metric, slug, lo, hi) = pl.metric;
    let q = 1 + (k % 4) as u32;
    let year = c.year - (k / 4) as i32;
    let months: Vec<String> = (0..3)
        .map(|m| {
            NaiveDate::from_ymd_opt(year, (q - 1) * 3 + m + 1, 1)
                .map_or_else(String::new, |d| d.format("%b").to_string())
        })
        .collect();
    let mut rows = Vec::new();
    let mut totals = Vec::new();
    for r in &c.regions {
        let vals: Vec<i64> = (0..3).map(|_| rng.range(lo, hi)).collect();
        let total: i64 = vals.iter().sum();
        totals.push((r.name, total));
        let mut row = vec![t(r.name), t(&c.person(r.lead).name)];
        row.extend(vals.iter().map(|v| Val::Num(*v as f64)));
        row.push(Val::Num(total as f64));
        rows.push(row);
    }
    let grand: i64 = totals.iter().map(|x| x.1).sum();
    let best = totals.iter().max_by_key(|x| x.1).map_or(("", 0), |x| *x);
    let mut header = vec!["Region".to_string(), "Lead".to_string()];
    header.extend(months.iter().cloned());
    header.push("Total".into());
    let table = Table {
        name: format!("Q{q} {year}"),
        header,
        rows,
        total_cols: vec![2, 3, 4, 5],
    };
    // Dates: the quarter closes, the data lands, the report follows.
    let qend = NaiveDate::from_ymd_opt(
        if q == 4 { year + 1 } else { year },
        if q == 4 { 1 } else { q * 3 + 1 },
        1,
    )
    .unwrap_or(c.start);
    let d0 = c.day((qend - c.start).num_days() + 3);
    let base = format!("{slug}_by_region_Q{q}_{year}");
    let src = plan.add(
        format!("{}/{year}/{base}.xlsx", pl.data),
        ty("xlsx"),
        Body::Table(table.clone()),
        d0,
        Role::Storyline,
    );
    let csv = plan.add(
        format!("{}/{slug}_Q{q}_{year}.csv", pl.exports),
        ty("csv"),
        Body::Table(table.clone()),
        d0,
        Role::Storyline,
    );
    plan.derive(&src, &csv, "export");
    let fig = |n: i64| thousands(n);
    let report_doc = Doc {
        title: format!("Q{q} {year} {metric} by region"),
        blocks: vec![
            Block::P(format!(
                "Prepared by {} from {} on {}.",
                c.person(me).name,
                src.rsplit('/').next().unwrap_or(&src),
                long_date(d0 + Duration::days(2))
            )),
            Block::H(1, "Summary".into()),
            Block::P(format!(
                "Total {} for Q{q} {year} was {} across {} regions. {} led with {}.",
                metric.to_lowercase(),
                fig(grand),
                c.regions.len(),
                best.0,
                fig(best.1)
            )),
            Block::H(1, "By region".into()),
            Block::Table({
                let mut rows = vec![vec![
                    "Region".to_string(),
                    "Lead".to_string(),
                    "Total".to_string(),
                ]];
                for (r, row) in c.regions.iter().zip(&table.rows) {
                    rows.push(vec![
                        r.name.to_string(),
                        c.person(r.lead).name.clone(),
                        row.last()
                            .map(Val::show)
                            .map(|s| fig(s.parse().unwrap_or(0)))
                            .unwrap_or_default(),
                    ]);
                }
                rows
            }),
        ],
    };
    let report = plan.add(
        format!("{}/Q{q}_{year}_{slug}_report.docx", pl.reports),
        ty("docx"),
        Body::Doc(report_doc),
        d0 + Duration::days(2),
        Role::Storyline,
    );
    plan.derive(&src, &report, "table_from");
    let deck_doc = Doc {
        title: format!("Q{q} {year} review"),
        blocks: vec![
            Block::H(1, "Headline".into()),
            Block::Bullets(vec![
                format!("{metric}: {} in Q{q} {year}", fig(grand)),
                format!("Strongest region: {} ({})", best.0, fig(best.1)),
            ]),
            Block::H(1, "Next quarter".into()),
            Block::Bullets(vec![
                format!("Owner: {}", c.person(me).name),
                "Targets to be agreed with finance".into(),
            ]),
        ],
    };
    let deck = plan.add(
        format!("{}/Q{q}_{year}_review.pptx", pl.decks),
        ty("pptx"),
        Body::Doc(deck_doc),
        d0 + Duration::days(4),
        Role::Storyline,
    );
    plan.derive(&report, &deck, "quotes");
    let chart = plan.add(
        format!("{}/charts/{slug}_Q{q}_{year}.svg", pl.reports),
        ty("svg"),
        Body::Table(Table {
            name: format!("{metric} by region, Q{q} {year}"),
            header: vec!["Region".into(), "Total".into()],
            rows: totals
                .iter()
                .map(|(r, v)| vec![t(r), Val::Num(*v as f64)])
                .collect(),
            total_cols: vec![],
        }),
        d0 + Duration::days(2),
        Role::Storyline,
    );
    plan.derive(&src, &chart, "chart_of");
    let lead = c
        .regions
        .iter()
        .find(|r| r.name == best.0)
        .map_or(0, |r| r.lead);
    let mail = Mail {
        from: lead,
        to: vec![me],
        cc: vec![0],
        subject: format!("Re: Q{q} {year} {metric} report"),
        body: format!(
            "Hi {},\n\nThanks for the Q{q} report ({}). Good to see {} at the top with {}; the total of {} matches what finance has.\n\nBest,\n{}\n",
            c.person(me).first,
            report.rsplit('/').next().unwrap_or(&report),
            best.0,
            fig(best.1),
            fig(grand),
            c.person(lead).first
        ),
        at: at(d0 + Duration::days(3), 10, 12),
        id: format!("q{q}-{year}-{slug}-{k}@{}", c.domain),
        in_reply_to: None,
    };
    let m = plan.add(
        format!("{}/Re_ Q{q} {year} {slug} report.eml", pl.mail),
        ty("eml"),
        Body::Mail(vec![mail]),
        d0 + Duration::days(3),
        Role::Storyline,
    );
    plan.derive(&report, &m, "discusses");
    plan.fact(
        format!("{slug}_q{q}_{year}_total"),
        format!("Total {} in Q{q} {year}", metric.to_lowercase()),
        fig(grand),
        vec![src.clone(), report.clone(), deck.clone(), m.clone()],
    );
    plan.fact(
        format!("{slug}_q{q}_{year}_top_region"),
        format!(
            "Region with the highest {} in Q{q} {year}, and its total",
            metric.to_lowercase()
        ),
        format!("{} ({})", best.0, fig(best.1)),
        vec![src, csv, report, chart, m],
    );
}

/// The version-chain storyline: v1 → v2_reviewed (a number changes) → final (a date
/// changes), the final's PDF export, the approval mail, a review meeting with its agenda, and
/// a stale copy of v1 with a misleading name in the archive.
fn chain(plan: &mut Plan, c: &Company, lay: &Layout, k: usize, rng: &mut Rng, me: usize) {
    let pl = &lay.places;
    let (kind, number) = pl.chain_doc;
    let subject = c.products[k % c.products.len()].name.clone();
    let title = format!("{kind}: {subject}");
    let slug = format!(
        "{}_{}",
        ascii_slug(kind),
        ascii_slug(subject.split(' ').next().unwrap_or("x"))
    );
    let slug = if k >= c.products.len() {
        format!("{slug}_{}", k / c.products.len() + 1)
    } else {
        slug
    };
    let d0 = c.day(20 + (k as i64 * 23) % 300);
    let b1 = rng.range(20, 90) * 1_000;
    let b2 = b1 + rng.range(2, 15) * 1_000 * if rng.chance(0.5) { 1 } else { -1 };
    let dl1 = c.day((d0 - c.start).num_days() + 60);
    let dl2 = c.day((dl1 - c.start).num_days() + rng.range(10, 30));
    let reviewer = 3; // finance controller
    let approver = 0; // CEO
    let body = |budget: i64, deadline: NaiveDate, stage: &str, notes: Option<String>| {
        let mut blocks = vec![
            Block::P(format!("Owner: {}. Status: {stage}.", c.person(me).name)),
            Block::H(1, "Goal".into()),
            Block::P(format!(
                "Bring the {subject} to customers in all {} regions with one coordinated plan.",
                c.regions.len()
            )),
            Block::H(1, "Key figures".into()),
            Block::Table(vec![
                vec!["Item".into(), "Value".into()],
                vec![capitalise(number), thousands(budget)],
                vec!["Go-live date".into(), deadline.to_string()],
                vec!["Owner".into(), c.person(me).name.clone()],
            ]),
            Block::H(1, "Risks".into()),
            Block::Bullets(vec![
                "Supplier lead times".into(),
                format!("Staffing in {}", c.regions[k % c.regions.len()].name),
            ]),
        ];
        if let Some(n) = notes {
            blocks.push(Block::H(1, "Review notes".into()));
            blocks.push(Block::P(n));
        }
        Doc {
            title: title.clone(),
            blocks,
        }
    };
    let dir = format!("{}/{slug}", pl.chains);
    let v1 = plan.add(
        format!("{dir}/{slug}_v1.docx"),
        ty("docx"),
        Body::Doc(body(b1, dl1, "draft", None)),
        d0,
        Role::Storyline,
    );
    let v2 = plan.add(
        format!("{dir}/{slug}_v2_reviewed.docx"),
        ty("docx"),
        Body::Doc(body(
            b2,
            dl1,
            "reviewed",
            Some(format!(
                "{} revised the {number} from {} to {}.",
                c.person(reviewer).name,
                thousands(b1),
                thousands(b2)
            )),
        )),
        d0 + Duration::days(7),
        Role::Storyline,
    );
    let fin_doc = body(
        b2,
        dl2,
        "final",
        Some(format!(
            "Go-live moved from {dl1} to {dl2} after the review meeting."
        )),
    );
    let fin = plan.add(
        format!("{dir}/{slug}_final.docx"),
        ty("docx"),
        Body::Doc(fin_doc.clone()),
        d0 + Duration::days(14),
        Role::Storyline,
    );
    let pdf = plan.add(
        format!("{dir}/{slug}_final.pdf"),
        ty("pdf"),
        Body::Doc(fin_doc),
        d0 + Duration::days(14),
        Role::Storyline,
    );
    plan.derive(&fin, &pdf, "export");
    let review_at = at(d0 + Duration::days(10), 14, 0);
    let ev = Event {
        uid: format!("{slug}-review-{k}@{}", c.domain),
        summary: format!("Review: {title}"),
        description: format!(
            "Walk through {} and agree the go-live date.",
            v2.rsplit('/').next().unwrap_or(&v2)
        ),
        location: format!("{} office, room 2", c.regions[1].city),
        start: review_at,
        minutes: 60,
        organizer: me,
        attendees: vec![me, reviewer, approver],
    };
    let ics = plan.add(
        format!("{}/{slug}_review.ics", pl.meetings),
        ty("ics"),
        Body::Events(vec![ev]),
        d0 + Duration::days(8),
        Role::Storyline,
    );
    let agenda = Doc {
        title: format!("Agenda — review of {title}"),
        blocks: vec![
            Block::P(format!(
                "{} {} UTC, organised by {}.",
                review_at.date(),
                review_at.format("%H:%M"),
                c.person(me).name
            )),
            Block::Bullets(vec![
                format!(
                    "Read {} before the meeting",
                    v2.rsplit('/').next().unwrap_or(&v2)
                ),
                format!("Confirm the {number} ({})", thousands(b2)),
                "Agree the go-live date".into(),
            ]),
        ],
    };
    let ag = plan.add(
        format!(
            "{}/{}_{slug}_review_agenda.md",
            pl.meetings,
            review_at.date()
        ),
        ty("md"),
        Body::Doc(agenda),
        d0 + Duration::days(8),
        Role::Storyline,
    );
    plan.derive(&v2, &ag, "agenda_for");
    let mail = Mail {
        from: approver,
        to: vec![me],
        cc: vec![reviewer],
        subject: format!("Approved: {title}"),
        body: format!(
            "{},\n\nI have read {} and approve it: {} {} with go-live on {}.\n\nWillem\n",
            c.person(me).first,
            fin.rsplit('/').next().unwrap_or(&fin),
            number,
            thousands(b2),
            dl2
        ),
        at: at(d0 + Duration::days(15), 8, 41),
        id: format!("approval-{slug}-{k}@{}", c.domain),
        in_reply_to: None,
    };
    let m = plan.add(
        format!("{}/Approved - {slug}.eml", pl.mail),
        ty("eml"),
        Body::Mail(vec![mail]),
        d0 + Duration::days(15),
        Role::Storyline,
    );
    plan.derive(&fin, &m, "discusses");
    // Noise: the v1 draft again, under a name that suggests it is final.
    let stale = plan.add(
        format!("{}/{slug} FINAL.docx", pl.archive),
        ty("docx"),
        Body::CopyOf(plan.files.iter().position(|f| f.path == v1).unwrap_or(0)),
        d0 + Duration::days(1),
        Role::Duplicate,
    );
    plan.chains.push(Chain {
        id: slug.clone(),
        title: title.clone(),
        versions: vec![v1.clone(), v2.clone(), fin.clone()],
        changes: vec![
            Change {
                from: v1.clone(),
                to: v2.clone(),
                what: number.to_string(),
                before: thousands(b1),
                after: thousands(b2),
            },
            Change {
                from: v2.clone(),
                to: fin.clone(),
                what: "go-live date".into(),
                before: dl1.to_string(),
                after: dl2.to_string(),
            },
        ],
        stale_copies: vec![stale.clone()],
    });
    plan.fact(
        format!("{slug}_{}", ascii_slug(number)),
        format!("{} of the {title} (final)", capitalise(number)),
        thousands(b2),
        vec![v2, fin.clone(), pdf.clone(), m.clone()],
    );
    plan.fact(
        format!("{slug}_go_live"),
        format!("Go-live date of the {title} (final)"),
        dl2.to_string(),
        vec![fin, pdf, m],
    );
    plan.fact(
        format!("{slug}_review_meeting"),
        format!("When the {title} review meeting takes place (UTC)"),
        format!("{} {}", review_at.date(), review_at.format("%H:%M")),
        vec![ics, ag],
    );
}

fn capitalise(s: &str) -> String {
    let mut ch = s.chars();
    ch.next()
        .map(|f| f.to_uppercase().collect::<String>() + ch.as_str())
        .unwrap_or_default()
}

/// The people storyline: a roster, the contacts file and an org chart derived from the roster.
fn people(plan: &mut Plan, c: &Company, lay: &Layout) {
    let dir = lay.places.team;
    let d = c.day(5);
    let lead_of = |i: usize| {
        c.regions
            .iter()
            .find(|r| r.lead == i)
            .map_or("", |r| r.name)
    };
    let roster = Table {
        name: "Roster".into(),
        header: vec![
            "Name".into(),
            "Email".into(),
            "Title".into(),
            "Department".into(),
            "Phone".into(),
            "Leads region".into(),
        ],
        rows: c
            .people
            .iter()
            .enumerate()
            .map(|(i, p)| {
                vec![
                    t(&p.name),
                    t(&p.email),
                    t(&p.title),
                    t(&p.department),
                    t(&p.phone),
                    t(lead_of(i)),
                ]
            })
            .collect(),
        total_cols: vec![],
    };
    let r = plan.add(
        format!("{dir}/roster.csv"),
        ty("csv"),
        Body::Table(roster),
        d,
        Role::Storyline,
    );
    let v = plan.add(
        format!("{dir}/contacts.vcf"),
        ty("vcf"),
        Body::Contacts((0..c.people.len()).collect()),
        d,
        Role::Storyline,
    );
    plan.derive(&r, &v, "export");
    let mut org = serde_json::Map::new();
    org.insert("company".into(), c.name.into());
    org.insert("ceo".into(), c.people[0].email.clone().into());
    let regions: Vec<serde_json::Value> = c.regions.iter().map(|rg| serde_json::json!({"region": rg.name, "code": rg.code, "office": rg.city, "lead": c.person(rg.lead).name, "lead_email": c.person(rg.lead).email})).collect();
    org.insert("regions".into(), regions.into());
    let mut json =
        serde_json::to_string_pretty(&serde_json::Value::Object(org)).unwrap_or_default();
    json.push('\n');
    let o = plan.add(
        format!("{dir}/org_chart.json"),
        ty("json"),
        Body::Text(json),
        d + Duration::days(1),
        Role::Storyline,
    );
    plan.derive(&r, &o, "derived_from");
    for rg in &c.regions {
        let p = c.person(rg.lead);
        plan.fact(
            format!("lead_{}", rg.code.to_lowercase()),
            format!("Who leads the {} region", rg.name),
            format!("{} <{}>", p.name, p.email),
            vec![r.clone(), o.clone()],
        );
    }
}

/// The analysis storyline: a comparison of variants (CSV) and the note, chart and
/// persona-specific artefacts derived from it (a LaTeX table and a notebook for researchers).
fn analysis(
    plan: &mut Plan,
    c: &Company,
    lay: &Layout,
    persona: Persona,
    k: usize,
    rng: &mut Rng,
    me: usize,
) {
    let pl = &lay.places;
    let (variants, score) = pl.variants;
    let d = c.day(90 + k as i64 * 31);
    let rows: Vec<(String, f64, i64)> = variants
        .iter()
        .map(|v| {
            (
                v.to_string(),
                rng.range(550, 990) as f64 / 10.0,
                rng.range(20, 400),
            )
        })
        .collect();
    let best = rows
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .cloned()
        .unwrap_or_default();
    let table = Table {
        name: format!("Comparison {}", k + 1),
        header: vec!["Variant".into(), score.into(), "Cost (EUR)".into()],
        rows: rows
            .iter()
            .map(|(v, s, cst)| vec![t(v), Val::Num(*s), Val::Num(*cst as f64)])
            .collect(),
        total_cols: vec![],
    };
    let dir = format!("{}/comparison_{:02}", pl.analysis, k + 1);
    let src = plan.add(
        format!("{dir}/comparison.csv"),
        ty("csv"),
        Body::Table(table.clone()),
        d,
        Role::Storyline,
    );
    let note = Doc {
        title: format!("Comparison {}: which variant to keep", k + 1),
        blocks: vec![
            Block::P(format!("Data: {}. Written by {}.", src, c.person(me).name)),
            Block::P(format!(
                "{} scores best with {} = {:.1}; we keep it.",
                best.0, score, best.1
            )),
            Block::Table(table.text_rows()),
        ],
    };
    let n = plan.add(
        format!("{dir}/decision.md"),
        ty("md"),
        Body::Doc(note),
        d + Duration::days(1),
        Role::Storyline,
    );
    plan.derive(&src, &n, "table_from");
    let png = plan.add(
        format!("{dir}/comparison.png"),
        ty("png"),
        Body::Table(table.clone()),
        d,
        Role::Storyline,
    );
    plan.derive(&src, &png, "chart_of");
    let mut files = vec![src.clone(), n];
    if persona == Persona::Researcher {
        let tex = format!(
            "% generated from {src}\n\\documentclass{{article}}\n\\usepackage{{booktabs}}\n\\begin{{document}}\n{}\\end{{document}}\n",
            render::tex_table(&table.text_rows())
        );
        let tx = plan.add(
            format!("papers/drift-paper/tables/comparison_{:02}.tex", k + 1),
            ty("tex"),
            Body::Text(tex),
            d + Duration::days(2),
            Role::Storyline,
        );
        plan.derive(&src, &tx, "table_from");
        let nb = crate::filler::notebook(
            &format!("Comparison {}", k + 1),
            &[
                "import pandas as pd".to_string(),
                format!(
                    "df = pd.read_csv('{src}')\ndf.sort_values('{score}', ascending=False).head()"
                ),
            ],
        );
        let ipynb = plan.add(
            format!("{dir}/analysis.ipynb"),
            ty("ipynb"),
            Body::Text(nb),
            d,
            Role::Storyline,
        );
        plan.derive(&src, &ipynb, "reads");
        files.push(tx);
    }
    plan.fact(
        format!("comparison_{:02}_best", k + 1),
        format!("Best variant in comparison {} by {score}", k + 1),
        format!("{} ({:.1})", best.0, best.1),
        files,
    );
}

// ---------------------------------------------------------------- fillers

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

fn filler_name(ty: &FileType, c: &Company, rng: &mut Rng, d: NaiveDate) -> String {
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

pub(crate) fn plan(spec: &GenSpec, c: &Company) -> Plan {
    let lay = layout(spec.persona);
    let me = owner_of(spec.persona);
    let mut rng = Rng::new(spec.seed, "plan");
    let folders = grow_folders(spec, c, lay, &mut rng);
    let mut plan = Plan::default();
    // Storylines scale with the workspace: one of each per ~400 files.
    let reps = (spec.files / 400).max(1);
    people(&mut plan, c, lay);
    for k in 0..reps {
        let mut r = Rng::new(spec.seed, &format!("numbers/{k}"));
        numbers(&mut plan, c, lay, k, &mut r, me);
        let mut r = Rng::new(spec.seed, &format!("chain/{k}"));
        chain(&mut plan, c, lay, k, &mut r, me);
        let mut r = Rng::new(spec.seed, &format!("analysis/{k}"));
        analysis(&mut plan, c, lay, spec.persona, k, &mut r, me);
        if plan.files.len() + 12 > spec.files {
            break;
        }
    }
    // Fillers: one of every type first (coverage), then by the persona's weights.
    let remaining = spec.files.saturating_sub(plan.files.len());
    let dupes = remaining / 50;
    let n_fill = remaining - dupes;
    let cat_w: BTreeMap<Category, u32> = lay.weights.iter().copied().collect();
    let type_w: Vec<u32> = TYPES
        .iter()
        .map(|t| {
            cat_w.get(&t.category).copied().unwrap_or(1) * t.weight * 100 / cat_total(t.category)
        })
        .collect();
    let mut order: Vec<usize> = (0..TYPES.len()).collect();
    rng.shuffle(&mut order);
    let days_span = 365 * 2;
    for i in 0..n_fill {
        let ti = if i < order.len() {
            order[i]
        } else {
            rng.weighted(&type_w)
        };
        let ft = &TYPES[ti];
        // Folder: the first pass gives every folder a file; then roots that hold the category.
        let fi = if i >= order.len() && i - order.len() < folders.all.len() {
            i - order.len()
        } else {
            let roots: Vec<usize> = lay
                .roots
                .iter()
                .enumerate()
                .filter(|(_, r)| r.cats.is_empty() || r.cats.contains(&ft.category))
                .map(|(j, _)| j)
                .collect();
            let r = if roots.is_empty() {
                rng.below(lay.roots.len())
            } else {
                *rng.pick(&roots)
            };
            let list = &folders.by_root[r];
            if list.is_empty() {
                0
            } else {
                list[rng.below(list.len())]
            }
        };
        let dir = &folders.all[fi].0;
        let date = c.day(rng.range(0, days_span));
        let name = filler_name(ft, c, &mut rng, date);
        plan.add(
            format!("{dir}/{name}"),
            ft,
            Body::Filler,
            date,
            Role::Filler,
        );
    }
    // Duplicates: byte-identical copies in backup-ish places, some with "Copy of" names.
    let originals = plan.files.len();
    let mut added = 0;
    let mut attempts = 0;
    while added < dupes {
        attempts += 1;
        if attempts > dupes * 20 {
            // Could not place a copy without renaming code; fill with a note instead.
            let date = c.day(rng.range(0, days_span));
            plan.add(
                format!("{}/notes.txt", folders.all[rng.below(folders.all.len())].0),
                ty("txt"),
                Body::Filler,
                date,
                Role::Filler,
            );
            added += 1;
            continue;
        }
        let src = rng.below(originals);
        let (ft, path, date) = (
            plan.files[src].ty,
            plan.files[src].path.clone(),
            plan.files[src].date,
        );
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let arch = &folders.by_root[lay
            .roots
            .iter()
            .position(|r| r.name == "archive")
            .unwrap_or(0)];
        let dir = &folders.all[arch[rng.below(arch.len())]].0;
        let name = if ft.category != Category::Code && !ft.fixed_name && rng.chance(0.4) {
            format!("Copy of {name}")
        } else {
            name
        };
        if (ft.category == Category::Code || ft.fixed_name)
            && plan.taken.contains(&format!("{dir}/{name}"))
        {
            // A renamed copy of code would no longer compile (class and file names differ).
            continue;
        }
        added += 1;
        plan.add(
            format!("{dir}/{name}"),
            ft,
            Body::CopyOf(src),
            date + Duration::days(rng.range(0, 30)),
            Role::Duplicate,
        );
    }
    plan
}

fn cat_total(cat: Category) -> u32 {
    TYPES
        .iter()
        .filter(|t| t.category == cat)
        .map(|t| t.weight)
        .sum::<u32>()
        .max(1)
}

/// Render every planned file. Each file has its own random stream (seed, path), so files
/// render in parallel and the result does not depend on scheduling.
pub(crate) fn render_all(
    spec: &GenSpec,
    c: &Company,
    plan: &Plan,
) -> Result<Vec<Vec<u8>>, GenError> {
    let n = plan.files.len();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16);
    let chunk = n.div_ceil(workers).max(1);
    let mut out: Vec<Result<Vec<u8>, GenError>> = Vec::with_capacity(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|f| {
                            if matches!(f.body, Body::CopyOf(_)) {
                                return Ok(Vec::new());
                            }
                            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                            let stem = if f.ty.fixed_name {
                                name
                            } else {
                                name.strip_suffix(f.ty.suffix).unwrap_or(name)
                            };
                            let ctx = FileCtx {
                                path: &f.path,
                                stem,
                                date: f.date,
                            };
                            let mut rng = Rng::new(spec.seed, &f.path);
                            render::render(f.ty, &f.body, c, &ctx, &mut rng)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(v) => out.extend(v),
                Err(_) => out.push(Err(GenError::Render {
                    path: String::new(),
                    reason: "a render thread panicked".into(),
                })),
            }
        }
    });
    let mut bytes: Vec<Vec<u8>> = out.into_iter().collect::<Result<_, _>>()?;
    for i in 0..bytes.len() {
        if let Body::CopyOf(src) = plan.files[i].body {
            bytes[i] = bytes.get(src).cloned().unwrap_or_default();
        }
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 3, 4).unwrap()
    }

    #[test]
    fn taken_paths_get_a_counter_that_keeps_each_type_valid() {
        let mut p = Plan::default();
        let a = p.add(
            "notes/plan.docx".into(),
            ty("docx"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        let b = p.add(
            "notes/plan.docx".into(),
            ty("docx"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("notes/plan.docx", "notes/plan (2).docx")
        );
        // Code keeps identifier-safe stems (Java's class name is the file stem).
        p.add(
            "src/Export.java".into(),
            ty("java"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        let j = p.add(
            "src/Export.java".into(),
            ty("java"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(j, "src/Export_2.java");
        // A fixed name cannot change; the copy goes to a sibling folder of the same depth.
        p.add(
            "deploy/Dockerfile".into(),
            ty("dockerfile"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        let f = p.add(
            "deploy/Dockerfile".into(),
            ty("dockerfile"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(f, "deploy-2/Dockerfile");
        // Multi-part suffixes stay whole.
        p.add(
            "x/a.tar.gz".into(),
            ty("tar.gz"),
            Body::Filler,
            d(),
            Role::Filler,
        );
        assert_eq!(
            p.add(
                "x/a.tar.gz".into(),
                ty("tar.gz"),
                Body::Filler,
                d(),
                Role::Filler
            ),
            "x/a (2).tar.gz"
        );
    }

    #[test]
    fn folders_reach_depth_eight_and_never_deeper() {
        let c = Company::new(3);
        for persona in Persona::ALL {
            let spec = GenSpec {
                persona,
                files: 2_000,
                seed: 3,
            };
            let f = grow_folders(&spec, &c, layout(persona), &mut Rng::new(3, "plan"));
            let max = f.all.iter().map(|(p, _)| depth(p)).max().unwrap();
            assert_eq!(max, 8, "{persona}");
            assert!(f.all.len() >= 400, "{persona}: {} folders", f.all.len());
            let unique: BTreeSet<&String> = f.all.iter().map(|(p, _)| p).collect();
            assert_eq!(unique.len(), f.all.len());
        }
    }
}
