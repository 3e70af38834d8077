//! Each persona's top-level folders, storyline places and filler weights.

use crate::Persona;
use crate::types::Category;

/// A top-level folder: its name, the categories it holds (empty = anything) and the words
/// its subfolders are named from.
pub(super) struct Root {
    pub(super) name: &'static str,
    pub(super) cats: &'static [Category],
    pub(super) words: &'static [&'static str],
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
pub(super) struct Places {
    pub(super) data: &'static str,
    pub(super) exports: &'static str,
    pub(super) reports: &'static str,
    pub(super) decks: &'static str,
    pub(super) mail: &'static str,
    pub(super) meetings: &'static str,
    pub(super) team: &'static str,
    pub(super) chains: &'static str,
    pub(super) analysis: &'static str,
    pub(super) archive: &'static str,
    /// Metric of the numbers storyline, its slug and range per region-month.
    pub(super) metric: (&'static str, &'static str, i64, i64),
    /// The kind of document whose versions form chains, and what its number means.
    pub(super) chain_doc: (&'static str, &'static str),
    /// Variants compared in the analysis storyline and the score's name.
    pub(super) variants: (&'static [&'static str], &'static str),
}

pub(super) struct Layout {
    pub(super) roots: &'static [Root],
    pub(super) places: Places,
    /// Relative weight of each category for fillers.
    pub(super) weights: &'static [(Category, u32)],
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

pub(super) fn layout(p: Persona) -> &'static Layout {
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
