//! Everyday files around the planted storylines: notes, status updates, exports, code and
//! configuration. They use the company's names but state no planted fact.

use chrono::Duration;

use crate::company::{Company, ascii_slug, thousands};
use crate::content::{Block, Doc, Event, Mail, Table, Val, long_date};
use crate::render::{FileCtx, at, xml_escape};
use crate::rng::Rng;

const DOC_KINDS: &[&str] = &[
    "Meeting notes",
    "Weekly status update",
    "Process guide",
    "Supplier review",
    "Onboarding checklist",
    "Retrospective",
    "Risk register notes",
    "Customer visit report",
    "Training summary",
    "Handover notes",
];
const ACTIONS: &[&str] = &[
    "follow up with the supplier on the delayed order",
    "update the shared tracker before Friday",
    "send the revised figures to finance",
    "book the room for the quarterly review",
    "check the calibration certificates",
    "draft the customer announcement",
    "collect feedback from the field engineers",
    "archive last quarter's exports",
    "confirm the shipping window with the carrier",
    "review the open support tickets",
];

pub(crate) fn doc(c: &Company, f: &FileCtx, rng: &mut Rng) -> Doc {
    let kind = *rng.pick(DOC_KINDS);
    let region = rng.pick(&c.regions);
    let product = rng.pick(&c.products);
    let owner = c.person(rng.below(c.people.len()));
    let mut attendees: Vec<String> = (0..3 + rng.below(3))
        .map(|_| c.person(rng.below(c.people.len())).name.clone())
        .collect();
    attendees.sort();
    attendees.dedup();
    let mut actions: Vec<String> = (0..2 + rng.below(3))
        .map(|_| {
            format!(
                "{}: {}",
                c.person(rng.below(c.people.len())).first,
                rng.pick(ACTIONS)
            )
        })
        .collect();
    actions.dedup();
    let mut blocks = vec![
        Block::P(format!(
            "{} · {} · prepared by {} ({}) on {}.",
            c.name,
            region.name,
            owner.name,
            owner.title,
            long_date(f.date)
        )),
        Block::H(1, "Summary".into()),
        Block::P(format!(
            "Discussion focused on the {} in {}. {} open items were reviewed and {} were closed; the team logged {} hours on it this period.",
            product.name,
            region.name,
            3 + rng.below(12),
            1 + rng.below(6),
            8 + rng.below(60)
        )),
        Block::H(1, "Attendees".into()),
        Block::Bullets(attendees),
        Block::H(1, "Actions".into()),
        Block::Bullets(actions),
    ];
    if rng.chance(0.4) {
        let rows = (0..3 + rng.below(4))
            .map(|i| {
                vec![
                    format!("{}-{:03}", region.code, 100 + i * 7 + rng.below(7)),
                    c.person(rng.below(c.people.len())).first.clone(),
                    ["open", "in progress", "done", "blocked"][rng.below(4)].to_string(),
                ]
            })
            .collect::<Vec<_>>();
        let mut t = vec![vec!["Item".into(), "Owner".into(), "Status".into()]];
        t.extend(rows);
        blocks.push(Block::H(1, "Tracker".into()));
        blocks.push(Block::Table(t));
    }
    Doc {
        title: format!("{kind} — {}", region.name),
        blocks,
    }
}

/// A table of records: tickets, inventory, timesheets or measurements.
pub(crate) fn table(c: &Company, f: &FileCtx, rng: &mut Rng) -> Table {
    let n = 5 + rng.below(20);
    match rng.below(4) {
        0 => Table {
            name: "Inventory".into(),
            header: vec![
                "SKU".into(),
                "Product".into(),
                "Warehouse".into(),
                "On hand".into(),
                "Reorder point".into(),
                "Unit price (EUR)".into(),
            ],
            rows: (0..n)
                .map(|_| {
                    let p = rng.pick(&c.products);
                    let r = rng.pick(&c.regions);
                    vec![
                        Val::Text(p.sku.clone()),
                        Val::Text(p.name.clone()),
                        Val::Text(r.city.to_string()),
                        Val::Num(rng.range(0, 900) as f64),
                        Val::Num(rng.range(20, 120) as f64),
                        Val::Num(f64::from(p.price)),
                    ]
                })
                .collect(),
            total_cols: vec![3],
        },
        1 => Table {
            name: "Tickets".into(),
            header: vec![
                "Ticket".into(),
                "Opened".into(),
                "Owner".into(),
                "Priority".into(),
                "Hours".into(),
            ],
            rows: (0..n)
                .map(|i| {
                    vec![
                        Val::Text(format!("SUP-{}", 1000 + i * 3 + rng.below(3))),
                        Val::Text((f.date - Duration::days(rng.range(0, 60))).to_string()),
                        Val::Text(c.person(rng.below(c.people.len())).name.clone()),
                        Val::Text(["low", "medium", "high"][rng.below(3)].into()),
                        Val::Num(rng.range(1, 16) as f64),
                    ]
                })
                .collect(),
            total_cols: vec![4],
        },
        2 => Table {
            name: "Timesheet".into(),
            header: vec![
                "Date".into(),
                "Person".into(),
                "Project".into(),
                "Hours".into(),
            ],
            rows: (0..n)
                .map(|i| {
                    vec![
                        Val::Text((f.date - Duration::days(i as i64)).to_string()),
                        Val::Text(c.person(rng.below(c.people.len())).name.clone()),
                        Val::Text(rng.pick(&c.products).name.clone()),
                        Val::Num((rng.range(2, 16) as f64) / 2.0),
                    ]
                })
                .collect(),
            total_cols: vec![3],
        },
        _ => Table {
            name: "Measurements".into(),
            header: vec![
                "Sample".into(),
                "Temperature C".into(),
                "Flow l/min".into(),
                "Pressure kPa".into(),
            ],
            rows: (0..n)
                .map(|i| {
                    vec![
                        Val::Text(format!("S{:03}", i + 1)),
                        Val::Num(rng.range(150, 350) as f64 / 10.0),
                        Val::Num(rng.range(100, 900) as f64 / 10.0),
                        Val::Num(rng.range(900, 1100) as f64),
                    ]
                })
                .collect(),
            total_cols: vec![],
        },
    }
}

pub(crate) fn mails(c: &Company, f: &FileCtx, rng: &mut Rng, n: usize) -> Vec<Mail> {
    let mut out: Vec<Mail> = Vec::new();
    let subject = format!(
        "{} — {}",
        rng.pick(&[
            "Quick question",
            "Update",
            "Re: schedule",
            "Shipment",
            "Follow-up",
            "FYI"
        ]),
        rng.pick(&c.products).name
    );
    let a = rng.below(c.people.len());
    let b = (a + 1 + rng.below(c.people.len() - 1)) % c.people.len();
    for i in 0..n {
        let (from, to) = if i % 2 == 0 { (a, b) } else { (b, a) };
        let id = format!(
            "{}.{}.{}@{}",
            ascii_slug(f.stem),
            i,
            rng.u64() % 1_000_000,
            c.domain
        );
        let body = format!(
            "Hi {},\n\nCould you {}? I would like to close this before {}.\n\nThanks,\n{}\n",
            c.person(to).first,
            rng.pick(ACTIONS),
            long_date(f.date + Duration::days(3)),
            c.person(from).first
        );
        out.push(Mail {
            from,
            to: vec![to],
            cc: vec![],
            subject: if i == 0 {
                subject.clone()
            } else {
                format!("Re: {subject}")
            },
            body,
            at: at(f.date, 9 + (i as u32 % 8), rng.below(60) as u32),
            in_reply_to: out.last().map(|m| m.id.clone()),
            id,
        });
    }
    out
}

pub(crate) fn events(c: &Company, f: &FileCtx, rng: &mut Rng) -> Vec<Event> {
    (0..1 + rng.below(4))
        .map(|i| {
            let org = rng.below(c.people.len());
            let mut att: Vec<usize> = (0..2 + rng.below(3))
                .map(|_| rng.below(c.people.len()))
                .collect();
            att.sort_unstable();
            att.dedup();
            Event {
                uid: format!("{}-{i}@{}", ascii_slug(f.stem), c.domain),
                summary: format!("{} sync", rng.pick(&c.products).name),
                description: format!("Agenda: {}.", rng.pick(ACTIONS)),
                location: format!("{} office", rng.pick(&c.regions).city),
                start: at(
                    f.date + Duration::days(i as i64 * 7),
                    9 + rng.below(8) as u32,
                    0,
                ),
                minutes: 30 * (1 + rng.below(3) as i64),
                organizer: org,
                attendees: att,
            }
        })
        .collect()
}

fn ident(s: &str) -> String {
    let s = ascii_slug(s);
    if s.is_empty() { "item".into() } else { s }
}

fn pascal(s: &str) -> String {
    ident(s)
        .split('_')
        .map(|w| {
            let mut ch = w.chars();
            ch.next()
                .map(|f| f.to_ascii_uppercase().to_string() + ch.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Source, configuration, build files, logs, notebooks, diagrams and the other text types.
pub(crate) fn text(id: &str, c: &Company, f: &FileCtx, rng: &mut Rng) -> String {
    let p = rng.pick(&c.products).clone();
    let r = rng.pick(&c.regions).clone();
    let person = c.person(rng.below(c.people.len())).clone();
    let svc = ident(&format!(
        "{}_{}",
        p.name.split(' ').next().unwrap_or("core"),
        rng.pick(&["api", "sync", "ingest", "billing", "telemetry", "scheduler"])
    ));
    let port = 8000 + rng.below(900);
    let limit = 10 + rng.below(90);
    let stem_ident = ident(f.stem);
    let is_ident = !f.stem.is_empty()
        && f.stem
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        && !f.stem.starts_with(|ch: char| ch.is_ascii_digit());
    let class = if is_ident {
        f.stem.to_string()
    } else {
        pascal(f.stem)
    };
    match id {
        "py" => format!(
            "\"\"\"{} helpers for {} ({}).\"\"\"\n\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Reading:\n    sku: str\n    value: float\n\n\nLIMIT = {limit}\n\n\ndef over_limit(readings):\n    \"\"\"Readings above LIMIT, highest first.\"\"\"\n    hits = [r for r in readings if r.value > LIMIT]\n    return sorted(hits, key=lambda r: r.value, reverse=True)\n\n\nif __name__ == \"__main__\":\n    sample = [Reading(\"{}\", {}.5), Reading(\"{}\", 3.0)]\n    print(over_limit(sample))\n",
            stem_ident, p.name, c.name, p.sku, limit + 1, p.sku
        ),
        "rs" => format!(
            "//! {svc}: threshold checks for {}.\n\n/// Readings above the limit.\npub const LIMIT: f64 = {limit}.0;\n\n#[derive(Debug, Clone, PartialEq)]\npub struct Reading {{\n    pub sku: String,\n    pub value: f64,\n}}\n\npub fn over_limit(readings: &[Reading]) -> Vec<&Reading> {{\n    readings.iter().filter(|r| r.value > LIMIT).collect()\n}}\n\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn filters() {{\n        let r = vec![Reading {{ sku: \"{}\".into(), value: {}.0 }}];\n        assert_eq!(over_limit(&r).len(), 1);\n    }}\n}}\n",
            p.name, p.sku, limit + 5
        ),
        "go" => format!(
            "// Package {svc} serves {} readings.\npackage main\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\nconst limit = {limit}\n\nfunc health(w http.ResponseWriter, _ *http.Request) {{\n\tfmt.Fprintln(w, \"ok\")\n}}\n\nfunc main() {{\n\thttp.HandleFunc(\"/health\", health)\n\t_ = http.ListenAndServe(\":{port}\", nil)\n}}\n",
            p.name
        ),
        "js" => format!(
            "'use strict';\n// {} dashboard helpers ({})\n\nconst LIMIT = {limit};\n\nfunction overLimit(readings) {{\n  return readings.filter((r) => r.value > LIMIT).sort((a, b) => b.value - a.value);\n}}\n\nfunction formatRegion(code) {{\n  return {{ {}: '{}' }}[code] || code;\n}}\n\nmodule.exports = {{ overLimit, formatRegion }};\n",
            p.name, c.name, r.code, r.name
        ),
        "ts" => format!(
            "// {svc} client types\nexport interface Reading {{\n  sku: string;\n  value: number;\n  region: '{}' | string;\n}}\n\nexport const LIMIT = {limit};\n\nexport function overLimit(readings: Reading[]): Reading[] {{\n  return readings.filter((r) => r.value > LIMIT);\n}}\n",
            r.code
        ),
        "tsx" => format!(
            "import React from 'react';\n\ntype Props = {{ sku: string; value: number }};\n\nexport function {class}Card({{ sku, value }}: Props) {{\n  return (\n    <div className=\"card\">\n      <h3>{}</h3>\n      <p>{{sku}}: {{value}}</p>\n    </div>\n  );\n}}\n",
            xml_escape(&p.name)
        ),
        "jsx" => format!(
            "import React from 'react';\n\nexport default function {class}List({{ items }}) {{\n  return (\n    <ul>\n      {{items.map((i) => (\n        <li key={{i.id}}>{{i.name}}</li>\n      ))}}\n    </ul>\n  );\n}}\n"
        ),
        "java" => format!(
            "package com.brightwater.{};\n\nimport java.util.ArrayList;\nimport java.util.List;\n\n/** {} readings for {}. */\npublic class {class} {{\n    public static final double LIMIT = {limit}.0;\n\n    public static List<Double> overLimit(List<Double> values) {{\n        List<Double> out = new ArrayList<>();\n        for (double v : values) {{\n            if (v > LIMIT) {{\n                out.add(v);\n            }}\n        }}\n        return out;\n    }}\n}}\n",
            ident(&svc).replace('_', ""), p.name, r.name
        ),
        "c" => format!(
            "/* {} firmware helper ({}) */\n#include <stdio.h>\n\n#define LIMIT {limit}\n\nstatic int over_limit(const double *v, int n) {{\n    int hits = 0;\n    for (int i = 0; i < n; i++) {{\n        if (v[i] > LIMIT) {{\n            hits++;\n        }}\n    }}\n    return hits;\n}}\n\nint main(void) {{\n    double v[] = {{1.0, {}.5, 3.0}};\n    printf(\"%d\\n\", over_limit(v, 3));\n    return 0;\n}}\n",
            p.name, p.sku, limit + 1
        ),
        "h" => format!(
            "#ifndef {0}_H\n#define {0}_H\n\n/* {1} sensor interface */\n#define {0}_LIMIT {limit}\n\ntypedef struct {{\n    unsigned int id;\n    double value;\n}} reading_t;\n\nint read_sensor(reading_t *out);\n\n#endif\n",
            stem_ident.to_uppercase(), p.name
        ),
        "cpp" => format!(
            "// {} calibration\n#include <algorithm>\n#include <iostream>\n#include <vector>\n\nnamespace bw {{\nconstexpr double kLimit = {limit}.0;\n\nint overLimit(const std::vector<double>& v) {{\n    return static_cast<int>(std::count_if(v.begin(), v.end(), [](double x) {{ return x > kLimit; }}));\n}}\n}}  // namespace bw\n\nint main() {{\n    std::cout << bw::overLimit({{1.0, {}.0}}) << std::endl;\n    return 0;\n}}\n",
            p.name, limit + 3
        ),
        "hpp" => format!(
            "#pragma once\n#include <string>\n\nnamespace bw {{\n// {}\nstruct Reading {{\n    std::string sku{{\"{}\"}};\n    double value{{0.0}};\n}};\n\ninline bool over(const Reading& r) {{ return r.value > {limit}.0; }}\n}}  // namespace bw\n",
            p.name, p.sku
        ),
        "cs" => format!(
            "using System;\nusing System.Linq;\n\nnamespace Brightwater.{class}\n{{\n    public static class Readings\n    {{\n        public const double Limit = {limit};\n\n        public static int OverLimit(double[] values) => values.Count(v => v > Limit);\n    }}\n}}\n"
        ),
        "rb" => format!(
            "# {} report helper\nLIMIT = {limit}\n\ndef over_limit(values)\n  values.select {{ |v| v > LIMIT }}\nend\n\nputs over_limit([1, {}, 3]).inspect if $PROGRAM_NAME == __FILE__\n",
            p.name, limit + 2
        ),
        "sh" => format!(
            "#!/usr/bin/env bash\n# Nightly export for {} ({})\nset -euo pipefail\n\nOUT=\"${{1:-exports}}\"\nmkdir -p \"$OUT\"\nfor region in {}; do\n  echo \"exporting $region\"\n  printf '%s,%s\\n' \"$region\" \"$(date -u +%F)\" >> \"$OUT/manifest.csv\"\ndone\n",
            r.name, c.name, c.regions.iter().map(|x| x.code).collect::<Vec<_>>().join(" ")
        ),
        "ps1" => format!(
            "# Copy the weekly reports to the share\nparam([string]$Target = \"\\\\fileserver\\{}\")\n$files = Get-ChildItem -Path . -Filter *.xlsx\nforeach ($f in $files) {{\n    Copy-Item $f.FullName -Destination $Target\n}}\nWrite-Output \"copied $($files.Count) files\"\n",
            r.code
        ),
        "kt" => format!(
            "package com.brightwater\n\ndata class Reading(val sku: String, val value: Double)\n\nconst val LIMIT = {limit}.0\n\nfun overLimit(readings: List<Reading>): List<Reading> = readings.filter {{ it.value > LIMIT }}\n\nfun main() {{\n    println(overLimit(listOf(Reading(\"{}\", {}.0))))\n}}\n",
            p.sku, limit + 4
        ),
        "swift" => format!(
            "import Foundation\n\nstruct Reading {{\n    let sku: String\n    let value: Double\n}}\n\nlet limit = {limit}.0\n\nfunc overLimit(_ readings: [Reading]) -> [Reading] {{\n    readings.filter {{ $0.value > limit }}\n}}\n\nprint(overLimit([Reading(sku: \"{}\", value: 1.0)]))\n",
            p.sku
        ),
        "scala" => format!(
            "package com.brightwater\n\nfinal case class Reading(sku: String, value: Double)\n\nobject {class} {{\n  val Limit: Double = {limit}.0\n  def overLimit(rs: Seq[Reading]): Seq[Reading] = rs.filter(_.value > Limit)\n}}\n"
        ),
        "php" => format!(
            "<?php\n// {} order lookup\nconst LIMIT = {limit};\n\nfunction over_limit(array $values): array\n{{\n    return array_values(array_filter($values, fn($v) => $v > LIMIT));\n}}\n\necho json_encode(over_limit([1, {}, 3])), PHP_EOL;\n",
            p.name, limit + 1
        ),
        "r" => format!(
            "# {} analysis\nlibrary(stats)\n\nlimit <- {limit}\nreadings <- data.frame(sku = c(\"{}\", \"{}\"), value = c(1.5, {}.0))\nhits <- subset(readings, value > limit)\nprint(summary(readings$value))\nprint(nrow(hits))\n",
            p.name, p.sku, p.sku, limit + 2
        ),
        "jl" => format!(
            "# {} simulation\nusing Statistics\n\nconst LIMIT = {limit}.0\n\nover_limit(v) = filter(x -> x > LIMIT, v)\n\nv = [1.0, {}.0, 3.0]\nprintln(mean(v), \" \", length(over_limit(v)))\n",
            p.name, limit + 1
        ),
        "lua" => format!(
            "-- {} config loader\nlocal M = {{}}\nM.limit = {limit}\n\nfunction M.over_limit(values)\n  local out = {{}}\n  for _, v in ipairs(values) do\n    if v > M.limit then table.insert(out, v) end\n  end\n  return out\nend\n\nreturn M\n",
            p.name
        ),
        "pl" => format!(
            "#!/usr/bin/perl\n# {} log scan\nuse strict;\nuse warnings;\n\nmy $limit = {limit};\nmy $hits = 0;\nwhile (my $line = <STDIN>) {{\n    my @f = split /,/, $line;\n    $hits++ if defined $f[1] && $f[1] > $limit;\n}}\nprint \"$hits\\n\";\n",
            p.name
        ),
        "m" => format!(
            "% {} signal smoothing\nfunction y = {stem_ident}(x)\n  limit = {limit};\n  y = movmean(x, 5);\n  y(y > limit) = limit;\nend\n",
            p.name
        ),
        "css" => format!(
            "/* {} intranet theme */\n:root {{\n  --brand: #1f77b4;\n  --accent: #ff7f0e;\n}}\n\nbody {{\n  font-family: Helvetica, Arial, sans-serif;\n  margin: 0 auto;\n  max-width: {}px;\n}}\n\n.card h3 {{\n  color: var(--brand);\n}}\n",
            c.name, 900 + limit * 4
        ),
        "scss" => format!(
            "$brand: #1f77b4;\n$gap: {}px;\n\n.report {{\n  padding: $gap;\n  h2 {{\n    color: $brand;\n  }}\n  table {{\n    border-collapse: collapse;\n  }}\n}}\n",
            4 + limit % 12
        ),
        "proto" => format!(
            "syntax = \"proto3\";\n\npackage brightwater.{};\n\n// {} readings\nmessage Reading {{\n  string sku = 1;\n  double value = 2;\n  string region = 3;\n}}\n\nservice {class} {{\n  rpc Get (Reading) returns (Reading);\n}}\n",
            ident(&svc), p.name
        ),
        "graphql" => format!(
            "# {} schema\ntype Product {{\n  sku: ID!\n  name: String!\n  price: Float\n}}\n\ntype Query {{\n  product(sku: ID!): Product\n  products(region: String = \"{}\"): [Product!]!\n}}\n",
            c.name, r.code
        ),
        "patch" => format!(
            "From: {} <{}>\nSubject: [PATCH] Raise {svc} limit\n\n---\n a/config/{svc}.yaml | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\ndiff --git a/config/{svc}.yaml b/config/{svc}.yaml\n--- a/config/{svc}.yaml\n+++ b/config/{svc}.yaml\n@@ -1,3 +1,3 @@\n service: {svc}\n-limit: {limit}\n+limit: {}\n port: {port}\n",
            person.name, person.email, limit + 10
        ),
        "yaml" | "yml" => format!(
            "# {svc} settings ({})\nservice: {svc}\nport: {port}\nregion: {}\nlimits:\n  max_items: {limit}\n  timeout_seconds: {}\nowners:\n  - {}\nfeatures:\n  export_csv: true\n  beta_dashboard: {}\n",
            c.name, r.code, 5 + limit % 25, person.email, rng.chance(0.5)
        ),
        "toml" => format!(
            "# {svc}\n[service]\nname = \"{svc}\"\nport = {port}\nregion = \"{}\"\n\n[limits]\nmax_items = {limit}\ntimeout_seconds = {}\n\n[owner]\nemail = \"{}\"\n",
            r.code, 5 + limit % 25, person.email
        ),
        "ini" | "cfg" | "conf" => format!(
            "; {} settings\n[general]\nname = {svc}\nregion = {}\n\n[server]\nport = {port}\nworkers = {}\n\n[export]\nfolder = exports/{}\nkeep_days = {limit}\n",
            c.name, r.code, 2 + limit % 6, r.code.to_lowercase()
        ),
        "env" => format!(
            "# {svc} environment (no secrets here; see the vault)\nSERVICE_NAME={svc}\nPORT={port}\nREGION={}\nLOG_LEVEL=info\nMAX_ITEMS={limit}\n",
            r.code
        ),
        "properties" => format!(
            "# {svc}\nservice.name={svc}\nserver.port={port}\nexport.region={}\nexport.maxItems={limit}\n",
            r.code
        ),
        "editorconfig" => "root = true\n\n[*]\nindent_style = space\nindent_size = 4\nend_of_line = lf\ninsert_final_newline = true\n\n[*.{yml,yaml,json}]\nindent_size = 2\n".into(),
        "gitignore" => "/target\n/build\n*.pyc\n__pycache__/\n.env.local\n.DS_Store\nexports/*.tmp\n".into(),
        "log" => {
            let mut s = String::new();
            let mut t = at(f.date, 6, 0);
            for i in 0..10 + rng.below(40) {
                t += Duration::seconds(rng.range(1, 400));
                let lvl = *rng.pick(&["INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"]);
                s.push_str(&format!(
                    "{} {lvl:<5} {svc}[{}] {}\n",
                    t.format("%Y-%m-%dT%H:%M:%SZ"),
                    1000 + i,
                    match lvl {
                        "ERROR" => format!("export to {} failed: timeout after {}s", r.city, 5 + limit % 25),
                        "WARN" => format!("{} stock below reorder point", p.sku),
                        _ => format!("processed {} records for {}", rng.range(10, 999), r.code),
                    }
                ));
            }
            s
        }
        "srt" | "vtt" => {
            let lines = [
                format!("Let's start with the {} numbers.", r.name),
                format!("{} shipments are on track this week.", p.name),
                format!("{} will send the summary afterwards.", person.first),
                "Any other business? Then we close here.".to_string(),
            ];
            let mut s = if id == "vtt" { "WEBVTT\n\n".to_string() } else { String::new() };
            for (i, l) in lines.iter().enumerate() {
                let (a, b) = (i * 4, i * 4 + 3);
                if id == "vtt" {
                    s.push_str(&format!("00:00:{a:02}.000 --> 00:00:{b:02}.500\n{l}\n\n"));
                } else {
                    s.push_str(&format!("{}\n00:00:{a:02},000 --> 00:00:{b:02},500\n{l}\n\n", i + 1));
                }
            }
            s
        }
        "geojson" | "kml" | "gpx" => {
            let pts: Vec<(String, f64, f64)> = c
                .regions
                .iter()
                .map(|r| {
                    let (lat, lon) = city_pos(r.city);
                    (format!("{} hub", r.city), lat, lon)
                })
                .collect();
            match id {
                "geojson" => {
                    let feats: Vec<serde_json::Value> = pts
                        .iter()
                        .map(|(n, lat, lon)| serde_json::json!({"type": "Feature", "properties": {"name": n}, "geometry": {"type": "Point", "coordinates": [lon, lat]}}))
                        .collect();
                    let mut s = serde_json::to_string_pretty(&serde_json::json!({"type": "FeatureCollection", "features": feats})).unwrap_or_default();
                    s.push('\n');
                    s
                }
                "kml" => {
                    let mut s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<kml xmlns=\"http://www.opengis.net/kml/2.2\">\n<Document>\n".to_string();
                    for (n, lat, lon) in &pts {
                        s.push_str(&format!("  <Placemark><name>{}</name><Point><coordinates>{lon},{lat},0</coordinates></Point></Placemark>\n", xml_escape(n)));
                    }
                    s.push_str("</Document>\n</kml>\n");
                    s
                }
                _ => {
                    let mut s = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"{}\" xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk><name>{} route</name><trkseg>\n", xml_escape(c.name), xml_escape(r.name));
                    for (_, lat, lon) in &pts {
                        s.push_str(&format!("  <trkpt lat=\"{lat}\" lon=\"{lon}\"></trkpt>\n"));
                    }
                    s.push_str("</trkseg></trk>\n</gpx>\n");
                    s
                }
            }
        }
        "bib" => {
            let mut s = String::new();
            for i in 0..2 + rng.below(4) {
                let a = c.person(rng.below(c.people.len()));
                let y = c.year - rng.range(0, 8) as i32;
                s.push_str(&format!(
                    "@article{{{}{y}{},\n  author = {{{}, {}}},\n  title = {{{} drift in field-deployed {} sensors}},\n  journal = {{Journal of Water Instrumentation}},\n  year = {{{y}}},\n  volume = {{{}}},\n  pages = {{{}--{}}}\n}}\n\n",
                    ident(&a.last), (b'a' + i as u8) as char, a.last, a.first,
                    rng.pick(&["Thermal", "Calibration", "Long-term", "Seasonal"]),
                    rng.pick(&["flow", "pressure", "turbidity"]),
                    10 + rng.below(30), 100 + i * 20, 115 + i * 20
                ));
            }
            s
        }
        "ris" => {
            let a = c.person(rng.below(c.people.len()));
            format!(
                "TY  - JOUR\nAU  - {}, {}\nTI  - Field calibration of {} probes\nJO  - Sensors and Systems\nPY  - {}\nVL  - {}\nER  - \n",
                a.last, a.first, p.name, c.year - 1, 3 + rng.below(20)
            )
        }
        "dockerfile" => format!(
            "FROM python:3.12-slim\nLABEL org.opencontainers.image.vendor=\"{}\"\nWORKDIR /app\nCOPY requirements.txt .\nRUN pip install --no-cache-dir -r requirements.txt\nCOPY . .\nEXPOSE {port}\nCMD [\"python\", \"-m\", \"{svc}\"]\n",
            c.name
        ),
        "makefile" => format!(
            ".PHONY: all test export clean\n\nall: test\n\ntest:\n\tpython -m pytest -q\n\nexport:\n\tpython -m {svc}.export --region {}\n\nclean:\n\trm -rf build exports/*.tmp\n",
            r.code
        ),
        "gradle" => format!(
            "plugins {{\n    id 'java'\n}}\n\ngroup = 'com.brightwater'\nversion = '1.{}.0'\n\nrepositories {{\n    mavenCentral()\n}}\n\ndependencies {{\n    testImplementation 'junit:junit:4.13.2'\n}}\n",
            limit % 10
        ),
        "cmake" => format!(
            "cmake_minimum_required(VERSION 3.16)\nproject({} C CXX)\n\nset(CMAKE_CXX_STANDARD 17)\nadd_executable({svc} main.cpp)\n",
            ident(&p.name)
        ),
        "ipynb" => notebook(
            &format!("{} readings", p.name),
            &[
                "import pandas as pd".to_string(),
                format!("df = pd.DataFrame({{'sku': ['{}'], 'value': [{limit}]}})\ndf.describe()", p.sku),
            ],
        ),
        "puml" => format!(
            "@startuml\ntitle {svc} flow\nactor \"{}\" as user\nparticipant \"{svc}\" as svc\ndatabase \"warehouse\" as db\nuser -> svc : request report\nsvc -> db : query {}\ndb --> svc : rows\nsvc --> user : report\n@enduml\n",
            person.name, r.code
        ),
        "mmd" => format!(
            "flowchart LR\n  A[Order received] --> B{{In stock in {}?}}\n  B -- yes --> C[Ship from {}]\n  B -- no --> D[Reorder {}]\n",
            r.city, r.city, p.sku
        ),
        "dot" => format!(
            "digraph {} {{\n  rankdir=LR;\n  supplier -> warehouse -> \"{}\" -> customer;\n}}\n",
            ident(&svc), r.city
        ),
        "drawio" => format!(
            "<mxfile host=\"app.diagrams.net\">\n  <diagram name=\"{}\">\n    <mxGraphModel>\n      <root>\n        <mxCell id=\"0\"/>\n        <mxCell id=\"1\" parent=\"0\"/>\n        <mxCell id=\"2\" value=\"{}\" vertex=\"1\" parent=\"1\"><mxGeometry x=\"40\" y=\"40\" width=\"120\" height=\"60\" as=\"geometry\"/></mxCell>\n        <mxCell id=\"3\" value=\"{}\" vertex=\"1\" parent=\"1\"><mxGeometry x=\"220\" y=\"40\" width=\"120\" height=\"60\" as=\"geometry\"/></mxCell>\n        <mxCell id=\"4\" edge=\"1\" source=\"2\" target=\"3\" parent=\"1\"/>\n      </root>\n    </mxGraphModel>\n  </diagram>\n</mxfile>\n",
            xml_escape(&svc), xml_escape(&p.name), xml_escape(r.city)
        ),
        "json" => {
            let v = serde_json::json!({
                "service": svc,
                "port": port,
                "region": r.code,
                "limits": {"max_items": limit},
                "owner": person.email,
            });
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        _ => format!(
            "{} — {}\n\nNotes on {} in {}, {} units.\n",
            c.name,
            f.stem,
            p.name,
            r.name,
            thousands(rng.range(100, 99_999))
        ),
    }
}

fn city_pos(city: &str) -> (f64, f64) {
    match city {
        "Toronto" => (43.6532, -79.3832),
        "Rotterdam" => (51.9244, 4.4777),
        "Singapore" => (1.3521, 103.8198),
        "São Paulo" => (-23.5505, -46.6333),
        _ => (57.7089, 11.9746),
    }
}

/// A Jupyter notebook (nbformat 4.5): a markdown title cell and code cells, no outputs.
pub(crate) fn notebook(title: &str, code: &[String]) -> String {
    let lines = |s: &str| -> Vec<String> {
        let v: Vec<&str> = s.split('\n').collect();
        let n = v.len();
        v.iter()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 < n {
                    format!("{l}\n")
                } else {
                    l.to_string()
                }
            })
            .collect()
    };
    let mut cells = vec![serde_json::json!({
        "cell_type": "markdown", "id": "title", "metadata": {}, "source": lines(&format!("# {title}"))
    })];
    for (i, c) in code.iter().enumerate() {
        cells.push(serde_json::json!({
            "cell_type": "code", "execution_count": null, "id": format!("cell-{i}"),
            "metadata": {}, "outputs": [], "source": lines(c)
        }));
    }
    let nb = serde_json::json!({
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5
    });
    let mut s = serde_json::to_string_pretty(&nb).unwrap_or_default();
    s.push('\n');
    s
}
