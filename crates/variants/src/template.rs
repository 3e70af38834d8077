//! The one templating engine of task instances: minijinja, strict about unknown names, with
//! the filters office text needs.
//!
//! | filter | example | gives |
//! | --- | --- | --- |
//! | `money(currency="EUR")` | `{{ 4080 \| money }}` | `€4,080.00` (`$`, `£`, else `CHF 4,080.00`) |
//! | `thousands(decimals=0)` | `{{ 23230.5 \| thousands(2) }}` | `23,230.50` |
//! | `fixed(decimals=2)` | `{{ 12.5 \| fixed }}` | `12.50` |
//! | `long_date` | `{{ "2026-03-12" \| long_date }}` | `Thursday 12 March 2026` |
//! | `day_month` | `{{ "2026-03-12" \| day_month }}` | `12 March` |
//! | `weekday` | `{{ "2026-03-12" \| weekday }}` | `Thursday` |
//! | `add_days(n)` | `{{ "2026-03-12" \| add_days(7) }}` | `2026-03-19` |
//! | `add_working_days(n)` | `{{ "2026-03-13" \| add_working_days(1) }}` | `2026-03-16` |
//! | `compact_date` | `{{ "2026-03-12" \| compact_date }}` | `20260312` (for .ics) |
//! | `rfc2822_date` | `{{ "2026-03-12" \| rfc2822_date }}` | `Thu, 12 Mar 2026` (for .eml `Date:`) |

use chrono::{Datelike, Duration, NaiveDate, Weekday};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior, Value};

fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOperation, msg.into())
}

fn as_f64(v: &Value) -> Result<f64, Error> {
    if let Some(i) = v.as_i64() {
        return Ok(i as f64);
    }
    f64::try_from(v.clone()).map_err(|_| bad(format!("`{v}` is not a number")))
}

fn as_date(v: &Value) -> Result<NaiveDate, Error> {
    let s = v
        .as_str()
        .ok_or_else(|| bad(format!("`{v}` is not a date string")))?;
    NaiveDate::parse_from_str(s.get(..10).unwrap_or(s), "%Y-%m-%d")
        .map_err(|_| bad(format!("`{s}` is not a date YYYY-MM-DD")))
}

/// `1234567.891` with `decimals` → `1,234,567.89`.
pub fn thousands(v: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i.to_string(), Some(f.to_string())),
        None => (s.clone(), None),
    };
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if v < 0.0 && v.abs() >= 0.5 * 10f64.powi(-(decimals as i32)) {
        "-"
    } else {
        ""
    };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

pub fn money(v: f64, currency: &str) -> String {
    let n = thousands(v, 2);
    match currency.to_ascii_uppercase().as_str() {
        "EUR" => format!("€{n}"),
        "USD" => format!("${n}"),
        "GBP" => format!("£{n}"),
        other => format!("{other} {n}"),
    }
}

fn add_working_days(mut d: NaiveDate, n: i64) -> NaiveDate {
    let step = if n >= 0 { 1 } else { -1 };
    let mut left = n.abs();
    while left > 0 {
        d += Duration::days(step);
        if !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
            left -= 1;
        }
    }
    d
}

/// A JSON value as a template value. (Built by hand: with serde_json's `arbitrary_precision`,
/// which a dependency turns on, serialising a number gives a map, not a number.)
pub fn to_value(v: &serde_json::Value) -> Value {
    use serde_json::Value as J;
    match v {
        J::Null => Value::from(()),
        J::Bool(b) => Value::from(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) => Value::from(f),
            _ => Value::from(n.to_string()),
        },
        J::String(s) => Value::from(s.as_str()),
        J::Array(a) => Value::from(a.iter().map(to_value).collect::<Vec<_>>()),
        J::Object(o) => Value::from_iter(o.iter().map(|(k, v)| (k.clone(), to_value(v)))),
    }
}

/// The template context of parameter `values`.
pub fn context(values: &std::collections::BTreeMap<String, serde_json::Value>) -> Value {
    Value::from_iter(values.iter().map(|(k, v)| (k.clone(), to_value(v))))
}

/// A template value as JSON (numbers stay numbers).
pub fn to_json(v: &Value) -> Result<serde_json::Value, String> {
    use minijinja::value::ValueKind as K;
    Ok(match v.kind() {
        K::Undefined | K::None => serde_json::Value::Null,
        K::Bool => serde_json::Value::Bool(v.is_true()),
        K::Number => match v.as_i64() {
            Some(i) if !v.to_string().contains('.') => serde_json::Value::from(i),
            _ => {
                let f = f64::try_from(v.clone()).map_err(|e| e.to_string())?;
                crate::params::number(f)
            }
        },
        K::String => serde_json::Value::String(v.as_str().unwrap_or_default().to_string()),
        K::Seq | K::Iterable => serde_json::Value::Array(
            v.try_iter()
                .map_err(|e| e.to_string())?
                .map(|x| to_json(&x))
                .collect::<Result<_, _>>()?,
        ),
        K::Map => {
            let mut o = serde_json::Map::new();
            for k in v.try_iter().map_err(|e| e.to_string())? {
                let val = v.get_item(&k).map_err(|e| e.to_string())?;
                o.insert(k.to_string(), to_json(&val)?);
            }
            serde_json::Value::Object(o)
        }
        _ => serde_json::Value::String(v.to_string()),
    })
}

/// The most instructions one template (or expression) may execute.
pub const TEMPLATE_FUEL: u64 = 20_000_000;

/// The environment every template and expression of an instance is rendered with.
pub fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A task is not trusted: a template whose loops would run for hours stops with an error.
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_keep_trailing_newline(true);
    env.add_filter(
        "money",
        |v: Value, currency: Option<String>| -> Result<String, Error> {
            Ok(money(as_f64(&v)?, currency.as_deref().unwrap_or("EUR")))
        },
    );
    env.add_filter(
        "thousands",
        |v: Value, decimals: Option<usize>| -> Result<String, Error> {
            Ok(thousands(as_f64(&v)?, decimals.unwrap_or(0)))
        },
    );
    env.add_filter(
        "fixed",
        |v: Value, decimals: Option<usize>| -> Result<String, Error> {
            Ok(format!("{:.*}", decimals.unwrap_or(2), as_f64(&v)?))
        },
    );
    env.add_filter("long_date", |v: Value| -> Result<String, Error> {
        Ok(as_date(&v)?.format("%A %-d %B %Y").to_string())
    });
    env.add_filter("day_month", |v: Value| -> Result<String, Error> {
        Ok(as_date(&v)?.format("%-d %B").to_string())
    });
    env.add_filter("weekday", |v: Value| -> Result<String, Error> {
        Ok(as_date(&v)?.format("%A").to_string())
    });
    env.add_filter("compact_date", |v: Value| -> Result<String, Error> {
        Ok(as_date(&v)?.format("%Y%m%d").to_string())
    });
    env.add_filter("rfc2822_date", |v: Value| -> Result<String, Error> {
        Ok(as_date(&v)?.format("%a, %-d %b %Y").to_string())
    });
    env.add_filter("add_days", |v: Value, n: i64| -> Result<String, Error> {
        Ok((as_date(&v)? + Duration::days(n)).to_string())
    });
    env.add_filter(
        "add_working_days",
        |v: Value, n: i64| -> Result<String, Error> {
            Ok(add_working_days(as_date(&v)?, n).to_string())
        },
    );
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(t: &str) -> String {
        environment().render_str(t, minijinja::context! {}).unwrap()
    }

    #[test]
    fn office_filters_write_what_people_write() {
        assert_eq!(render("{{ 4080 | money }}"), "€4,080.00");
        assert_eq!(render("{{ 1234567.891 | money('USD') }}"), "$1,234,567.89");
        assert_eq!(render("{{ -1200 | thousands }}"), "-1,200");
        assert_eq!(render("{{ 23230.5 | thousands(2) }}"), "23,230.50");
        assert_eq!(render("{{ 999 | thousands }}"), "999");
        assert_eq!(render("{{ 12.5 | fixed }}"), "12.50");
        assert_eq!(
            render("{{ '2026-03-12' | long_date }}"),
            "Thursday 12 March 2026"
        );
        assert_eq!(render("{{ '2026-03-12' | day_month }}"), "12 March");
        assert_eq!(
            render("{{ '2026-03-13' | add_working_days(1) }}"),
            "2026-03-16"
        );
        assert_eq!(
            render("{{ '2026-03-16' | add_working_days(-1) }}"),
            "2026-03-13"
        );
        assert_eq!(render("{{ '2026-03-12' | add_days(20) }}"), "2026-04-01");
        assert_eq!(render("{{ '2026-03-12' | compact_date }}"), "20260312");
        assert_eq!(
            render("{{ '2026-03-12' | rfc2822_date }}"),
            "Thu, 12 Mar 2026"
        );
    }

    #[test]
    fn a_template_that_would_loop_for_hours_stops_with_an_error() {
        let e = environment()
            .render_str(
                "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}",
                minijinja::context! {},
            )
            .unwrap_err();
        assert_eq!(e.kind(), minijinja::ErrorKind::OutOfFuel, "{e}");
    }

    #[test]
    fn unknown_names_are_errors_not_empty_text() {
        let e = environment()
            .render_str("{{ amout }}", minijinja::context! { amount => 3 })
            .unwrap_err();
        assert!(e.to_string().contains("undefined"), "{e}");
    }
}
