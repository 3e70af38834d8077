//! `[params]`: typed, seeded parameter generators.
//!
//! ```toml
//! [params]
//! constraints = ["total > 1000"]          # optional: expressions every instance satisfies
//!
//! [params.approver]                       # a person of world/people.toml
//! kind = "person"
//! department = "Finance"                  # optional filters
//! exclude = ["priya.natarajan@brightwater.test"]
//! distinct_from = ["requester"]
//!
//! [params.amount]                         # a number in a range, on a step
//! kind = "amount"
//! min = 1000
//! max = 5000
//! step = 10                               # default 1; 0.01 for cents
//! currency = "EUR"                        # for `money` (default EUR)
//!
//! [params.due]                            # a date in a window (ISO "YYYY-MM-DD")
//! kind = "date"
//! from = "2026-03-10"
//! to = "2026-03-20"
//! working_days = true                     # default true: no Saturdays or Sundays
//!
//! [params.vendor]                         # a pick from a list (strings, numbers or tables)
//! kind = "choice"
//! values = [{ name = "Kessler", iban = "DE44..." }, { name = "Polder", iban = "NL..." }]
//!
//! [params.count]                          # an integer in a range
//! kind = "int"
//! min = 3
//! max = 7
//!
//! [params.total]                          # computed from the others (a minijinja expression)
//! kind = "derived"
//! expr = "amount * count"
//! ```
//!
//! Generated values are JSON: a person is an object `name`, `first`, `last`, `email`,
//! `handle`, `role`, `department`; an amount a number (an integer when min and step are
//! whole), a date a string, a choice the listed value, an int an integer. The generator draws
//! the non-derived parameters in name order from a ChaCha8 stream seeded by the instance seed,
//! computes the derived ones in dependency order, and draws again (up to [`MAX_TRIES`] times)
//! until every constraint holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bureau_core::error::{Location, TaskError, TaskErrors, did_you_mean};
use chrono::{Datelike, NaiveDate, Weekday};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng as _, SeedableRng};
use serde_json::Value;

use crate::template::environment;

/// Draws per instance before a parameter set that satisfies the constraints is given up.
pub const MAX_TRIES: usize = 500;

/// One parameter's generator.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Person {
        department: Option<String>,
        role: Option<String>,
        exclude: Vec<String>,
        distinct_from: Vec<String>,
    },
    Amount {
        min: f64,
        max: f64,
        step: f64,
        currency: String,
    },
    Date {
        from: NaiveDate,
        to: NaiveDate,
        working_days: bool,
    },
    Choice {
        values: Vec<Value>,
    },
    Int {
        min: i64,
        max: i64,
    },
    Derived {
        expr: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    pub kind: Kind,
    /// Where `[params.<name>]` is written.
    pub location: Location,
}

/// Everything `[params]` says.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub specs: Vec<ParamSpec>,
    /// Constraint expressions and where each is written.
    pub constraints: Vec<(String, Location)>,
    /// The roster for `person` parameters (from world/people.toml).
    pub people: Vec<Value>,
    /// The task.toml the parameters come from (for errors).
    pub toml_path: PathBuf,
}

fn err(loc: &Location, what: impl Into<String>, hint: impl Into<String>) -> TaskError {
    TaskError::new(loc.clone(), what, hint)
}

/// The location of `needle`'s first occurrence in `source` (else the file).
pub(crate) fn locate(path: &Path, source: &str, needle: &str) -> Location {
    match source.find(needle) {
        Some(off) => Location::from_offset(path, source, off),
        None => Location::file(path),
    }
}

impl Params {
    /// Read `[params]` (`table`) of the task.toml at `toml_path` whose text is `source`.
    /// `task_dir` is where `world/people.toml` is looked up for `person` parameters.
    pub fn parse(
        toml_path: &Path,
        source: &str,
        table: &toml::Value,
        task_dir: &Path,
    ) -> Result<Params, TaskErrors> {
        let mut errors = Vec::new();
        let here = locate(toml_path, source, "[params");
        let Some(table) = table.as_table() else {
            return Err(err(
                &here,
                "`params` must be a table",
                "write [params.<name>] tables, one per parameter",
            )
            .into());
        };
        let mut specs = Vec::new();
        let mut constraints = Vec::new();
        for (name, value) in table {
            let loc = locate(toml_path, source, &format!("[params.{name}]"));
            if name == "constraints" {
                match value.as_array() {
                    Some(list) => {
                        for c in list {
                            match c.as_str() {
                                Some(c) if !c.trim().is_empty() => {
                                    constraints.push((c.to_string(), locate(toml_path, source, c)))
                                }
                                _ => errors.push(err(
                                    &here,
                                    "a constraint is not a non-empty string",
                                    "write constraints = [\"total > 1000\", \"due != start\"]",
                                )),
                            }
                        }
                    }
                    None => errors.push(err(
                        &here,
                        "`constraints` must be a list of expressions",
                        "write constraints = [\"total > 1000\"]",
                    )),
                }
                continue;
            }
            if !is_name(name) {
                errors.push(err(
                    &loc,
                    format!("parameter name `{name}` is not an identifier"),
                    "use letters, digits and _ (not first a digit), so templates can write {{ name }}",
                ));
                continue;
            }
            match parse_kind(name, value, &loc) {
                Ok(kind) => specs.push(ParamSpec {
                    name: name.clone(),
                    kind,
                    location: loc,
                }),
                Err(e) => errors.push(e),
            }
        }
        if specs.is_empty() && errors.is_empty() {
            errors.push(err(
                &here,
                "[params] declares no parameter",
                "add [params.<name>] tables with a `kind`, or remove [params]",
            ));
        }
        let names: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        for s in &specs {
            if let Kind::Person { distinct_from, .. } = &s.kind {
                for d in distinct_from {
                    if !names.contains(d.as_str()) {
                        errors.push(err(
                            &s.location,
                            format!(
                                "parameter `{}`: distinct_from names unknown parameter `{d}`",
                                s.name
                            ),
                            hint_for(d, &names),
                        ));
                    }
                }
            }
        }
        let needs_people = specs.iter().any(|s| matches!(s.kind, Kind::Person { .. }));
        let people = if needs_people {
            match read_people(&task_dir.join("world/people.toml")) {
                Ok(p) => p,
                Err(e) => {
                    errors.push(e);
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        if !errors.is_empty() {
            return Err(TaskErrors(errors));
        }
        Ok(Params {
            specs,
            constraints,
            people,
            toml_path: toml_path.to_path_buf(),
        })
    }

    /// The parameter values of the instance seeded by `seed` for task `task_id`.
    pub fn generate(
        &self,
        task_id: &str,
        seed: u64,
    ) -> Result<BTreeMap<String, Value>, TaskErrors> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let env = environment();
        let mut last_failure: Option<(String, Location)> = None;
        for _ in 0..MAX_TRIES {
            let mut values = BTreeMap::new();
            // Draws first (name order), so that a derived parameter sees all of them.
            for s in &self.specs {
                if matches!(s.kind, Kind::Derived { .. }) {
                    continue;
                }
                match self.draw(task_id, s, &mut rng, &values) {
                    Ok(Some(v)) => {
                        values.insert(s.name.clone(), v);
                    }
                    Ok(None) => {
                        last_failure = Some((
                            format!(
                                "parameter `{}` has no value left to draw (its filters exclude every candidate)",
                                s.name
                            ),
                            s.location.clone(),
                        ));
                        break;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if last_failure
                .as_ref()
                .is_some_and(|(w, _)| w.contains("no value left"))
            {
                break;
            }
            self.derive(task_id, &env, &mut values)?;
            match self.first_failing_constraint(task_id, &env, &values)? {
                None => return Ok(values),
                Some((c, loc)) => {
                    last_failure = Some((format!("constraint `{c}` does not hold"), loc))
                }
            }
        }
        let (what, loc) = last_failure.unwrap_or_else(|| {
            (
                "no parameter set was found".to_string(),
                Location::file(&self.toml_path),
            )
        });
        Err(err(
            &loc,
            format!("task `{task_id}`: the parameters cannot be satisfied: {what} (after {MAX_TRIES} draws)"),
            "widen the parameters' ranges or lists, or relax the constraint",
        )
        .into())
    }

    fn draw(
        &self,
        task_id: &str,
        spec: &ParamSpec,
        rng: &mut ChaCha8Rng,
        so_far: &BTreeMap<String, Value>,
    ) -> Result<Option<Value>, TaskError> {
        let pick =
            |rng: &mut ChaCha8Rng, n: usize| -> usize { (rng.next_u64() % n as u64) as usize };
        Ok(match &spec.kind {
            Kind::Person {
                department,
                role,
                exclude,
                distinct_from,
            } => {
                let taken: Vec<&str> = distinct_from
                    .iter()
                    .filter_map(|d| so_far.get(d))
                    .filter_map(|v| v.get("email").and_then(Value::as_str))
                    .collect();
                let candidates: Vec<&Value> = self
                    .people
                    .iter()
                    .filter(|p| {
                        let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("");
                        department
                            .as_deref()
                            .is_none_or(|d| field("department").eq_ignore_ascii_case(d))
                            && role.as_deref().is_none_or(|r| {
                                field("role").to_lowercase().contains(&r.to_lowercase())
                            })
                            && !exclude
                                .iter()
                                .any(|e| e.eq_ignore_ascii_case(field("email")))
                            && !taken.iter().any(|t| t.eq_ignore_ascii_case(field("email")))
                    })
                    .collect();
                if candidates.is_empty() {
                    if self.people.is_empty() {
                        return Err(err(
                            &spec.location,
                            format!(
                                "task `{task_id}`: parameter `{}` is a person but world/people.toml lists nobody",
                                spec.name
                            ),
                            "add [[person]] entries to world/people.toml",
                        ));
                    }
                    None
                } else {
                    Some(candidates[pick(rng, candidates.len())].clone())
                }
            }
            Kind::Amount { min, max, step, .. } => {
                let steps = ((max - min) / step + 1e-9).floor() as u64;
                let k = rng.next_u64() % (steps + 1);
                let v = min + k as f64 * step;
                let v = (v * 100.0).round() / 100.0;
                Some(number(v))
            }
            Kind::Date {
                from,
                to,
                working_days,
            } => {
                let days: Vec<NaiveDate> = from
                    .iter_days()
                    .take_while(|d| d <= to)
                    .filter(|d| {
                        !*working_days || !matches!(d.weekday(), Weekday::Sat | Weekday::Sun)
                    })
                    .collect();
                if days.is_empty() {
                    None
                } else {
                    Some(Value::String(days[pick(rng, days.len())].to_string()))
                }
            }
            Kind::Choice { values } => Some(values[pick(rng, values.len())].clone()),
            Kind::Int { min, max } => {
                let span = (max - min) as u64 + 1;
                Some(Value::from(min + (rng.next_u64() % span) as i64))
            }
            Kind::Derived { .. } => None,
        })
    }

    /// Compute the derived parameters in dependency order: each pass computes those whose
    /// expression evaluates; a pass that makes no progress reports the first failure.
    fn derive(
        &self,
        task_id: &str,
        env: &minijinja::Environment<'static>,
        values: &mut BTreeMap<String, Value>,
    ) -> Result<(), TaskErrors> {
        let mut pending: Vec<&ParamSpec> = self
            .specs
            .iter()
            .filter(|s| matches!(s.kind, Kind::Derived { .. }))
            .collect();
        while !pending.is_empty() {
            let mut progressed = false;
            let mut last_error = None;
            let mut still = Vec::new();
            for s in pending {
                let Kind::Derived { expr } = &s.kind else {
                    continue;
                };
                match eval(env, expr, values) {
                    Ok(v) => {
                        values.insert(s.name.clone(), v);
                        progressed = true;
                    }
                    Err(e) => {
                        last_error = Some((s, e));
                        still.push(s);
                    }
                }
            }
            if !progressed {
                let (s, e) = last_error.unwrap_or((still[0], String::new()));
                let known: BTreeSet<&str> = self.specs.iter().map(|p| p.name.as_str()).collect();
                let hint = unknown_name(&e)
                    .map(String::from)
                    .or_else(|| {
                        let Kind::Derived { expr } = &s.kind else {
                            return None;
                        };
                        unknown_in_expr(expr, &known)
                    })
                    .map(|n| hint_for(&n, &known))
                    .unwrap_or_else(|| "fix the expression (minijinja syntax: amount * count, (a + b) / 2, due | add_working_days(3))".into());
                return Err(err(
                    &s.location,
                    format!(
                        "task `{task_id}`: derived parameter `{}` cannot be computed: {e}",
                        s.name
                    ),
                    hint,
                )
                .into());
            }
            pending = still;
        }
        Ok(())
    }

    fn first_failing_constraint(
        &self,
        task_id: &str,
        env: &minijinja::Environment<'static>,
        values: &BTreeMap<String, Value>,
    ) -> Result<Option<(String, Location)>, TaskErrors> {
        for (c, loc) in &self.constraints {
            match eval(env, c, values) {
                Ok(Value::Bool(true)) => {}
                Ok(Value::Bool(false)) => return Ok(Some((c.clone(), loc.clone()))),
                Ok(other) => {
                    return Err(err(
                        loc,
                        format!("task `{task_id}`: constraint `{c}` is not true or false (it gives {other})"),
                        "write a comparison, e.g. total > 1000",
                    )
                    .into());
                }
                Err(e) => {
                    let known: BTreeSet<&str> =
                        self.specs.iter().map(|p| p.name.as_str()).collect();
                    return Err(err(
                        loc,
                        format!("task `{task_id}`: constraint `{c}` cannot be evaluated: {e}"),
                        unknown_name(&e)
                            .map(String::from)
                            .or_else(|| unknown_in_expr(c, &known))
                            .map(|n| hint_for(&n, &known))
                            .unwrap_or_else(|| "fix the expression".into()),
                    )
                    .into());
                }
            }
        }
        Ok(None)
    }
}

/// A JSON number: an integer when the value is whole.
pub fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// Evaluate a minijinja expression with `values` as its variables.
pub(crate) fn eval(
    env: &minijinja::Environment<'static>,
    expr: &str,
    values: &BTreeMap<String, Value>,
) -> Result<Value, String> {
    let e = env.compile_expression(expr).map_err(|e| e.to_string())?;
    let v = e
        .eval(crate::template::context(values))
        .map_err(|e| e.to_string())?;
    if v.is_undefined() {
        return Err("the expression is undefined".into());
    }
    crate::template::to_json(&v)
}

/// The variable a minijinja "undefined value" error is about, when it says.
pub(crate) fn unknown_name(e: &str) -> Option<&str> {
    let i = e.find("undefined")?;
    let rest = &e[i..];
    let start = rest.find('`')? + 1;
    let end = rest[start..].find('`')? + start;
    Some(&rest[start..end])
}

/// The first variable of a minijinja expression that is no declared parameter (names after
/// `.` or `|` are attributes and filters; keywords and literals are skipped).
pub(crate) fn unknown_in_expr(expr: &str, known: &BTreeSet<&str>) -> Option<String> {
    const WORDS: &[&str] = &[
        "and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False",
        "None",
    ];
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let before = chars[..start].iter().rev().find(|c| !c.is_whitespace());
            let after = chars[i..].iter().find(|c| !c.is_whitespace());
            let attribute = matches!(before, Some('.') | Some('|'));
            let call = after == Some(&'(');
            if !attribute
                && !call
                && !WORDS.contains(&word.as_str())
                && !known.contains(word.as_str())
            {
                return Some(word);
            }
            continue;
        }
        i += 1;
    }
    None
}

pub(crate) fn hint_for(name: &str, known: &BTreeSet<&str>) -> String {
    let list: Vec<&str> = known.iter().copied().collect();
    match did_you_mean(name, list.iter().copied()) {
        Some(m) => format!(
            "did you mean `{m}`? Declared parameters: {}",
            list.join(", ")
        ),
        None => format!(
            "declare it as [params.{name}], or use one of: {}",
            list.join(", ")
        ),
    }
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn parse_kind(name: &str, v: &toml::Value, loc: &Location) -> Result<Kind, TaskError> {
    let t = v.as_table().ok_or_else(|| {
        err(
            loc,
            format!("parameter `{name}` must be a table"),
            format!("write [params.{name}] with kind = \"amount\" (or person, date, choice, int, derived)"),
        )
    })?;
    let kind = t.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    let known_keys: &[&str] = match kind {
        "person" => &["kind", "department", "role", "exclude", "distinct_from"],
        "amount" => &["kind", "min", "max", "step", "currency"],
        "date" => &["kind", "from", "to", "working_days"],
        "choice" => &["kind", "values"],
        "int" => &["kind", "min", "max"],
        "derived" => &["kind", "expr"],
        other => {
            return Err(err(
                loc,
                format!("parameter `{name}` has unknown kind `{other}`"),
                "use one of: person, amount, date, choice, int, derived",
            ));
        }
    };
    for k in t.keys() {
        if !known_keys.contains(&k.as_str()) {
            return Err(err(
                loc,
                format!("parameter `{name}` ({kind}) has unknown key `{k}`"),
                format!("a {kind} parameter takes: {}", known_keys.join(", ")),
            ));
        }
    }
    let num = |k: &str| -> Result<Option<f64>, TaskError> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(toml::Value::Float(f)) if f.is_finite() => Ok(Some(*f)),
            Some(_) => Err(err(
                loc,
                format!("parameter `{name}`: `{k}` must be a number"),
                format!("write {k} = 100"),
            )),
        }
    };
    let need = |k: &str, v: Option<f64>| -> Result<f64, TaskError> {
        v.ok_or_else(|| {
            err(
                loc,
                format!("parameter `{name}` ({kind}) needs `{k}`"),
                format!("add {k} = ... to [params.{name}]"),
            )
        })
    };
    let strings = |k: &str| -> Result<Vec<String>, TaskError> {
        match t.get(k) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_str().map(String::from).ok_or_else(|| {
                        err(
                            loc,
                            format!("parameter `{name}`: `{k}` must list strings"),
                            format!("write {k} = [\"...\"]"),
                        )
                    })
                })
                .collect(),
            Some(_) => Err(err(
                loc,
                format!("parameter `{name}`: `{k}` must be a list of strings"),
                format!("write {k} = [\"...\"]"),
            )),
        }
    };
    let string = |k: &str| t.get(k).and_then(|v| v.as_str()).map(String::from);
    Ok(match kind {
        "person" => Kind::Person {
            department: string("department"),
            role: string("role"),
            exclude: strings("exclude")?,
            distinct_from: strings("distinct_from")?,
        },
        "amount" => {
            let min = need("min", num("min")?)?;
            let max = need("max", num("max")?)?;
            let step = num("step")?.unwrap_or(1.0);
            if step <= 0.0 || max < min {
                return Err(err(
                    loc,
                    format!(
                        "parameter `{name}`: needs min ≤ max and step > 0 (min {min}, max {max}, step {step})"
                    ),
                    "fix the range",
                ));
            }
            Kind::Amount {
                min,
                max,
                step,
                currency: string("currency").unwrap_or_else(|| "EUR".into()),
            }
        }
        "date" => {
            let date = |k: &str| -> Result<NaiveDate, TaskError> {
                let s = string(k).ok_or_else(|| {
                    err(
                        loc,
                        format!("parameter `{name}` (date) needs `{k}` as \"YYYY-MM-DD\""),
                        format!("add {k} = \"2026-03-10\""),
                    )
                })?;
                NaiveDate::parse_from_str(&s, "%Y-%m-%d").map_err(|_| {
                    err(
                        loc,
                        format!("parameter `{name}`: `{k}` = \"{s}\" is not a date YYYY-MM-DD"),
                        "write e.g. \"2026-03-10\"",
                    )
                })
            };
            let (from, to) = (date("from")?, date("to")?);
            if to < from {
                return Err(err(
                    loc,
                    format!("parameter `{name}`: `to` ({to}) is before `from` ({from})"),
                    "swap them",
                ));
            }
            let working_days = t
                .get("working_days")
                .and_then(|v| v.as_bool())
                .unwrap_or(true);
            Kind::Date {
                from,
                to,
                working_days,
            }
        }
        "choice" => {
            let values: Vec<Value> = match t.get("values") {
                Some(toml::Value::Array(a)) if !a.is_empty() => a
                    .iter()
                    .map(|x| {
                        serde_json::to_value(x).map_err(|e| {
                            err(
                                loc,
                                format!("parameter `{name}`: a value cannot be used: {e}"),
                                "use strings, numbers or tables",
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?,
                _ => {
                    return Err(err(
                        loc,
                        format!("parameter `{name}` (choice) needs a non-empty `values` list"),
                        "add values = [\"a\", \"b\"]",
                    ));
                }
            };
            Kind::Choice { values }
        }
        "int" => {
            let (min, max) = (need("min", num("min")?)?, need("max", num("max")?)?);
            if max < min || min.fract() != 0.0 || max.fract() != 0.0 {
                return Err(err(
                    loc,
                    format!("parameter `{name}`: int needs whole min ≤ max (min {min}, max {max})"),
                    "fix the range",
                ));
            }
            Kind::Int {
                min: min as i64,
                max: max as i64,
            }
        }
        _ => Kind::Derived {
            expr: string("expr")
                .filter(|e| !e.trim().is_empty())
                .ok_or_else(|| {
                    err(
                        loc,
                        format!("parameter `{name}` (derived) needs `expr`"),
                        "add expr = \"amount * count\"",
                    )
                })?,
        },
    })
}

/// The roster of `people.toml` as JSON objects for `person` parameters.
fn read_people(path: &Path) -> Result<Vec<Value>, TaskError> {
    let loc = Location::file(path);
    let text = std::fs::read_to_string(path).map_err(|e| {
        err(
            &loc,
            format!("cannot read the roster for `person` parameters: {e}"),
            "add world/people.toml with [[person]] entries (docs/services/people.md)",
        )
    })?;
    let doc: toml::Table = toml::from_str(&text).map_err(|e| {
        err(
            &Location::from_offset(path, &text, e.span().map_or(0, |s| s.start)),
            e.message().trim().to_string(),
            "fix people.toml",
        )
    })?;
    let mut out = Vec::new();
    for p in doc
        .get("person")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        let f = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let name = f("name");
        let (first, last) = match name.split_once(' ') {
            Some((a, b)) => (a.to_string(), b.to_string()),
            None => (name.clone(), String::new()),
        };
        out.push(serde_json::json!({
            "name": name, "first": first, "last": last, "email": f("email"),
            "handle": f("handle"), "role": f("role"), "department": f("department"),
        }));
    }
    Ok(out)
}
