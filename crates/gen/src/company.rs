//! The company model one seed describes: people, products, regions and the working calendar.
//! Every file draws its names and numbers from here, so files agree with each other.

use chrono::{Datelike, Duration, NaiveDate};

use crate::rng::Rng;

/// A colleague.
#[derive(Debug, Clone)]
pub(crate) struct Person {
    pub name: String,
    pub first: String,
    pub last: String,
    pub email: String,
    pub title: String,
    pub department: String,
    pub phone: String,
}

/// A product line.
#[derive(Debug, Clone)]
pub(crate) struct Product {
    pub name: String,
    pub sku: String,
    /// Unit price in euros.
    pub price: u32,
}

/// A sales/operations region with its lead.
#[derive(Debug, Clone)]
pub(crate) struct Region {
    pub name: &'static str,
    pub code: &'static str,
    pub city: &'static str,
    /// Index into `Company::people`.
    pub lead: usize,
}

pub(crate) struct Company {
    pub name: &'static str,
    pub domain: &'static str,
    pub people: Vec<Person>,
    pub products: Vec<Product>,
    pub regions: Vec<Region>,
    /// The first working day of the workspace's history; every date derives from it.
    pub start: NaiveDate,
    /// The fiscal year the workspace is about.
    pub year: i32,
}

/// The intranet suite's roster comes first so generated workspaces and hand-written tasks
/// share a cast.
const CORE: &[(&str, &str, &str)] = &[
    ("Willem Brandt", "CEO", "Management"),
    ("Jonas Petersen", "Head of Operations", "Operations"),
    ("Mara Lindqvist", "Operations Coordinator", "Operations"),
    ("Priya Natarajan", "Finance Controller", "Finance"),
    ("Tomás Ferreira", "Sales Lead Benelux", "Sales"),
    ("Eline de Vries", "Product Manager", "Product"),
    ("Karim Haddad", "Hardware Engineer", "Engineering"),
    ("Sofie Janssen", "Office & People Manager", "People"),
    ("Ruben Bakker", "Customer Support Lead", "Support"),
    ("Lena Vos", "Support Engineer", "Support"),
    ("Hannah Okafor", "Marketing Manager", "Marketing"),
    ("Daan Smit", "Field Application Engineer", "Engineering"),
];

const FIRST: &[&str] = &[
    "Aisha", "Bram", "Chloe", "Dmitri", "Esther", "Felix", "Greta", "Hugo", "Ines", "Jasper",
    "Keiko", "Lars", "Mei", "Nadia", "Oskar", "Paula", "Quentin", "Rosa", "Sanne", "Theo", "Umar",
    "Vera", "Wout", "Ximena", "Yusuf", "Zara", "Anouk", "Bastian", "Carmen", "Diego",
];
const LAST: &[&str] = &[
    "Alvarez", "Berg", "Chen", "Dijkstra", "Eriksen", "Fontaine", "Gupta", "Hoekstra", "Ivanova",
    "Jansen", "Kowalski", "Larsen", "Moreau", "Nakamura", "Olsen", "Pereira", "Quist", "Rossi",
    "Schmidt", "Tanaka", "Usman", "Visser", "Weber", "Yilmaz", "Zwart", "Mensah", "Novak",
];
const TITLES: &[(&str, &str)] = &[
    ("Regional Operations Manager", "Operations"),
    ("Logistics Planner", "Logistics"),
    ("Warehouse Supervisor", "Logistics"),
    ("Data Scientist", "Research"),
    ("Research Engineer", "Research"),
    ("Backend Engineer", "Engineering"),
    ("Site Reliability Engineer", "Engineering"),
    ("Account Executive", "Sales"),
    ("Product Designer", "Product"),
    ("QA Engineer", "Engineering"),
    ("Procurement Specialist", "Operations"),
    ("Financial Analyst", "Finance"),
];
const PRODUCTS: &[&str] = &[
    "Kestrel", "Heron", "Osprey", "Plover", "Tern", "Merlin", "Avocet", "Curlew", "Dunlin", "Egret",
];
const KINDS: &[&str] = &[
    "Flow Meter",
    "Pressure Sensor",
    "Water Quality Probe",
    "Level Gauge",
    "Data Logger",
    "Turbidity Sensor",
];
const REGIONS: &[(&str, &str, &str)] = &[
    ("North America", "NA", "Toronto"),
    ("EMEA", "EMEA", "Rotterdam"),
    ("APAC", "APAC", "Singapore"),
    ("LATAM", "LATAM", "São Paulo"),
    ("Nordics", "NORD", "Gothenburg"),
];

pub(crate) fn ascii_slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let c = match c {
            'á' | 'à' | 'ä' | 'â' => 'a',
            'é' | 'è' | 'ë' | 'ê' => 'e',
            'í' | 'ï' => 'i',
            'ó' | 'ö' | 'ô' => 'o',
            'ú' | 'ü' => 'u',
            'ã' => 'a',
            c => c,
        };
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

impl Company {
    pub(crate) fn new(seed: u64) -> Company {
        let mut rng = Rng::new(seed, "company");
        let domain = "brightwater.test";
        let mut people = Vec::new();
        let make = |name: &str, title: &str, dept: &str, rng: &mut Rng| {
            let (first, last) = name.split_once(' ').unwrap_or((name, ""));
            let local = format!(
                "{}.{}",
                ascii_slug(first),
                ascii_slug(last).replace('_', "")
            );
            Person {
                name: name.to_string(),
                first: first.to_string(),
                last: last.to_string(),
                email: format!("{local}@{domain}"),
                title: title.to_string(),
                department: dept.to_string(),
                phone: format!(
                    "+31 10 {:03} {:04}",
                    rng.range(200, 899),
                    rng.range(0, 9999)
                ),
            }
        };
        for (name, title, dept) in CORE {
            let p = make(name, title, dept, &mut rng);
            people.push(p);
        }
        let mut firsts: Vec<&str> = FIRST.to_vec();
        let mut lasts: Vec<&str> = LAST.to_vec();
        rng.shuffle(&mut firsts);
        rng.shuffle(&mut lasts);
        let extra = 14 + rng.below(10);
        for i in 0..extra {
            let name = format!("{} {}", firsts[i % firsts.len()], lasts[i % lasts.len()]);
            let (title, dept) = *rng.pick(TITLES);
            let p = make(&name, title, dept, &mut rng);
            people.push(p);
        }
        let mut names: Vec<&str> = PRODUCTS.to_vec();
        rng.shuffle(&mut names);
        let n_products = 5 + rng.below(3);
        let products = names[..n_products]
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let kind = KINDS[(i + rng.below(KINDS.len())) % KINDS.len()];
                Product {
                    name: format!("{n} {kind}"),
                    sku: format!("BW-{}-{}", &n[..3].to_uppercase(), 100 + rng.below(900)),
                    price: 40 * (10 + rng.below(90)) as u32,
                }
            })
            .collect();
        let regions = REGIONS
            .iter()
            .enumerate()
            .map(|(i, (name, code, city))| Region {
                name,
                code,
                city,
                // Leads are the generated regional managers, after the core cast.
                lead: CORE.len() + (i % extra),
            })
            .collect();
        let year = 2024 + (seed % 3) as i32;
        let start = NaiveDate::from_ymd_opt(year, 1, 1)
            .unwrap_or(NaiveDate::MIN)
            .checked_add_signed(Duration::days(rng.range(0, 40)))
            .unwrap_or(NaiveDate::MIN);
        Company {
            name: "Brightwater Instruments",
            domain,
            people,
            products,
            regions,
            start,
            year,
        }
    }

    /// A working date `days` after the start (weekends move to the Monday).
    pub(crate) fn day(&self, days: i64) -> NaiveDate {
        let d = self.start + Duration::days(days.clamp(0, 3650));
        match d.weekday().num_days_from_monday() {
            5 => d + Duration::days(2),
            6 => d + Duration::days(1),
            _ => d,
        }
    }

    pub(crate) fn person(&self, i: usize) -> &Person {
        &self.people[i % self.people.len()]
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn thousands(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}
