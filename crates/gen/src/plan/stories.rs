//! The storylines that plant facts: numbers, version chains, people, analyses.

use chrono::{Duration, NaiveDate};

use super::layout::Layout;
use super::{Plan, Role};
use crate::Persona;
use crate::company::{Company, ascii_slug, thousands};
use crate::content::{Block, Body, Doc, Event, Mail, Table, Val, long_date};
use crate::manifest::{Chain, Change};
use crate::render::{self, at};
use crate::rng::Rng;
use crate::types::ty;

pub(super) fn t(s: &str) -> Val {
    Val::Text(s.to_string())
}

/// The numbers storyline: a spreadsheet of a metric by region and month, its CSV export,
/// a report quoting its table, a deck quoting the total, a chart and a mail discussing it.
pub(super) fn numbers(
    plan: &mut Plan,
    c: &Company,
    lay: &Layout,
    k: usize,
    rng: &mut Rng,
    me: usize,
) {
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
pub(super) fn chain(
    plan: &mut Plan,
    c: &Company,
    lay: &Layout,
    k: usize,
    rng: &mut Rng,
    me: usize,
) {
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

pub(super) fn capitalise(s: &str) -> String {
    let mut ch = s.chars();
    ch.next()
        .map(|f| f.to_uppercase().collect::<String>() + ch.as_str())
        .unwrap_or_default()
}

/// The people storyline: a roster, the contacts file and an org chart derived from the roster.
pub(super) fn people(plan: &mut Plan, c: &Company, lay: &Layout) {
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
pub(super) fn analysis(
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
