//! The evidence storyline: facts that live only in media — a photographed till receipt in
//! the downloads, a whiteboard photo from a planning meeting, a scanned signed agreement and a
//! chart with its values written on it (drawn by `bureau_media::render`). Every fact is in the
//! manifest; no text file states it.

use bureau_media::render::{Chart, ChartKind, Photo, Picture, Template};
use chrono::{Datelike, Duration};

use super::layout::Layout;
use super::{Plan, Role};
use crate::company::{Company, thousands};
use crate::content::{Body, Evidence, long_date};
use crate::rng::Rng;
use crate::types::ty;

/// Files one evidence set adds.
pub(super) const FILES: usize = 4;

const SHOPS: &[(&str, &str)] = &[
    ("TRATTORIA DA MARIO", "Oudegracht 112, Utrecht"),
    ("CAFE DE ZWAAN", "Stationsplein 4, Amersfoort"),
    ("BRASSERIE LE NORD", "Rue Royale 21, Brussels"),
    ("BURGER & CO", "Hafenstrasse 8, Hamburg"),
    ("NOODLE BAR KOI", "Vijzelstraat 30, Amsterdam"),
    ("THE COPPER KETTLE", "High Street 5, Cambridge"),
];
const DISHES: &[(&str, i64)] = &[
    ("Pasta del giorno", 1250),
    ("Soup of the day", 750),
    ("Club sandwich", 1150),
    ("Caesar salad", 1325),
    ("Risotto funghi", 1600),
    ("Fish and chips", 1750),
    ("Espresso", 300),
    ("Cappuccino", 390),
    ("Mineral water", 325),
    ("Fresh orange juice", 450),
    ("Tiramisu", 725),
];
const SUPPLIERS: &[(&str, &str)] = &[
    (
        "Kessler Logistik GmbH",
        "freight forwarding between the warehouses",
    ),
    (
        "Vandermeer Facilities B.V.",
        "cleaning and maintenance of the offices",
    ),
    ("Altmark Software GmbH", "maintenance of the ERP system"),
    (
        "Fjordline IT Services AS",
        "hosting and monitoring of the data platform",
    ),
    (
        "Castellan Calibration Ltd",
        "calibration of the test benches",
    ),
];

fn money(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// A phone photo's look, drawn from the storyline's stream.
fn phone(rng: &mut Rng) -> Photo {
    let sign = if rng.chance(0.5) { -1.0 } else { 1.0 };
    Photo {
        rotate: sign * rng.range(10, 35) as f32 / 10.0,
        blur: rng.range(4, 8) as f32 / 10.0,
        noise: rng.range(2, 4) as f32 / 100.0,
        perspective: rng.range(8, 20) as f32 / 100.0,
        lighting: rng.range(15, 35) as f32 / 100.0,
    }
}

/// One evidence set (the `k`th).
pub(super) fn evidence(
    plan: &mut Plan,
    c: &Company,
    lay: &Layout,
    k: usize,
    rng: &mut Rng,
    me: usize,
) {
    let pl = &lay.places;
    let n = k + 1;

    // A lunch receipt photographed for an expense claim.
    let d = c.day(40 + rng.range(0, 500));
    let (shop, address) = *rng.pick(SHOPS);
    let mut lines = vec![
        address.to_string(),
        format!(
            "{} {:02}:{:02}",
            d.format("%d/%m/%Y"),
            rng.range(12, 14),
            rng.range(0, 59)
        ),
        String::new(),
    ];
    let mut total = 0;
    let mut items = Vec::new();
    for _ in 0..rng.range(2, 4) {
        let (dish, price) = *rng.pick(DISHES);
        let qty = rng.range(1, 3);
        total += qty * price;
        items.push((format!("{qty} x {dish}"), money(qty * price)));
    }
    // Amounts lined up three spaces after the longest item (a wider gap loses them to OCR).
    let col = items
        .iter()
        .map(|(l, a)| l.len() + a.len())
        .max()
        .unwrap_or(0)
        + 3;
    for (left, amount) in &items {
        lines.push(format!(
            "{left}{}{amount}",
            " ".repeat(col - left.len() - amount.len())
        ));
    }
    let amount = money(total);
    lines.push(String::new());
    lines.push(format!("TOTAL EUR   {amount}"));
    lines.push(format!("Card ****{:04}", rng.range(1000, 9999)));
    let mut receipt = Picture::new(Template::Receipt, shop, &[]);
    receipt.lines = lines;
    receipt.width = Some(480);
    receipt.photo = phone(rng);
    let receipt_path = plan.add(
        format!(
            "downloads/IMG_{}_{:02}{:02}{:02}.jpg",
            d.format("%Y%m%d"),
            rng.range(12, 15),
            rng.range(0, 59),
            rng.range(0, 59)
        ),
        ty("jpg"),
        Body::Media(Box::new(Evidence::Picture(receipt))),
        d,
        Role::Storyline,
    );
    plan.fact(
        format!("receipt_{n:02}_total"),
        format!("Total in EUR on the {shop} receipt of {}", long_date(d)),
        amount,
        vec![receipt_path],
    );

    // A whiteboard photographed after a planning meeting.
    let d = c.day(60 + rng.range(0, 450));
    let product = rng.pick(&c.products).name.clone();
    let owner = c
        .person(2 + rng.below(c.people.len().saturating_sub(2).max(1)))
        .name
        .clone();
    let go_live = d + Duration::days(rng.range(21, 90));
    let budget = rng.range(12, 95) * 1000;
    let mut board = Picture::new(
        Template::Whiteboard,
        &format!("{product}: launch plan"),
        &[
            &format!("Go-live: {}", long_date(go_live)),
            &format!("Owner: {owner}"),
            &format!("Budget: EUR {}", thousands(budget)),
            "Open: test plan, pricing page",
        ],
    );
    board.width = Some(1024);
    board.photo = phone(rng);
    let board_path = plan.add(
        format!("{}/whiteboard {}.jpg", pl.meetings, d.format("%Y-%m-%d")),
        ty("jpg"),
        Body::Media(Box::new(Evidence::Picture(board))),
        d,
        Role::Storyline,
    );
    plan.fact(
        format!("whiteboard_{n:02}_go_live"),
        format!(
            "Go-live date of {product} on the whiteboard of {}",
            long_date(d)
        ),
        long_date(go_live),
        vec![board_path.clone()],
    );
    plan.fact(
        format!("whiteboard_{n:02}_owner"),
        format!(
            "Owner of the {product} launch on the whiteboard of {}",
            long_date(d)
        ),
        owner,
        vec![board_path],
    );

    // A signed services agreement, scanned.
    let d = c.day(20 + rng.range(0, 400));
    let (supplier, service) = *rng.pick(SUPPLIERS);
    let effective = d + Duration::days(rng.range(5, 40));
    let effective = effective.with_day(1).unwrap_or(effective);
    let fee = rng.range(8, 96) * 100;
    let signatory = c.person(me).name.clone();
    let mut terms = Picture::new(
        Template::Document,
        "SERVICES AGREEMENT",
        &[
            &format!(
                "between {} (the Client) and {supplier} (the Supplier)",
                c.name
            ),
            "",
            "# 1. Services",
            &format!("The Supplier provides {service}."),
            "",
            "# 2. Term",
            &format!(
                "The effective date of this agreement is {}. It runs for 24 months.",
                long_date(effective)
            ),
            "",
            "# 3. Fees",
            &format!(
                "The Client pays EUR {} per month, invoiced monthly in arrears.",
                thousands(fee)
            ),
        ],
    );
    terms.width = Some(1000);
    let mut signed = Picture::new(
        Template::Document,
        "SIGNATURES",
        &[&format!("Signed for {} on {}.", c.name, long_date(d))],
    );
    signed.width = Some(1000);
    signed.signature = Some(signatory.clone());
    let scanner = |rng: &mut Rng| Photo {
        rotate: rng.range(-8, 8) as f32 / 10.0,
        blur: 0.5,
        noise: 0.03,
        ..Photo::default()
    };
    terms.photo = scanner(rng);
    signed.photo = scanner(rng);
    let scan_path = plan.add(
        format!(
            "downloads/Scan {} {:02}.{:02}.pdf",
            d.format("%Y-%m-%d"),
            rng.range(9, 17),
            rng.range(0, 59)
        ),
        ty("pdf"),
        Body::Media(Box::new(Evidence::Scan(vec![terms, signed]))),
        d,
        Role::Storyline,
    );
    let short = supplier.split(' ').next().unwrap_or(supplier);
    plan.fact(
        format!("agreement_{n:02}_effective_date"),
        format!("Effective date of the services agreement with {supplier}"),
        long_date(effective),
        vec![scan_path.clone()],
    );
    plan.fact(
        format!("agreement_{n:02}_monthly_fee"),
        format!("Monthly fee in EUR of the services agreement with {short}"),
        thousands(fee),
        vec![scan_path.clone()],
    );
    plan.fact(
        format!("agreement_{n:02}_signed_by"),
        format!("Who signed the services agreement with {short} for the company"),
        signatory,
        vec![scan_path],
    );

    // A chart whose values are written only on the picture.
    let d = c.day(30 + rng.range(0, 500));
    let visits: Vec<(String, i64)> = c
        .regions
        .iter()
        .map(|r| (r.name.to_string(), rng.range(40, 480)))
        .collect();
    let best = visits
        .iter()
        .max_by_key(|v| v.1)
        .cloned()
        .unwrap_or_default();
    let month = d.format("%B %Y").to_string();
    let mut chart = Chart::new(
        ChartKind::Bar,
        &format!("Customer visits by region, {month}"),
        &visits.iter().map(|v| v.0.as_str()).collect::<Vec<_>>(),
        &visits.iter().map(|v| v.1 as f64).collect::<Vec<_>>(),
    );
    chart.y_label = "visits".into();
    chart.width = 900;
    chart.height = 560;
    let chart_path = plan.add(
        format!(
            "{}/charts/visits_by_region_{}.png",
            pl.reports,
            d.format("%Y-%m")
        ),
        ty("png"),
        Body::Media(Box::new(Evidence::Chart(chart))),
        d,
        Role::Storyline,
    );
    plan.fact(
        format!("visits_{n:02}_top_region"),
        format!("Region with the most customer visits in {month}, and their number"),
        format!("{} ({})", best.0, best.1),
        vec![chart_path],
    );
}
