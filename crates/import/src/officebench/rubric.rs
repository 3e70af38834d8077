//! Each OfficeBench evaluation → one Bureau rubric item: a built-in predicate where one
//! expresses it, else a generated Starlark check (helpers in [`super::star`]). The item's
//! description keeps the original function and args.

use std::collections::{BTreeMap, BTreeSet};

use super::source::{Eval, Place, RawEval};
use super::toml::{q, q_list};
use super::{Mode, address};

/// A generated rubric item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: String,
    pub kind: &'static str,
    /// 1, or 0.25 for a check that holds in an untouched world (no calendar overlap).
    pub weight: f64,
    pub description: String,
    /// `key = value` TOML of a predicate, or `check = "name"`.
    pub evaluator: String,
    /// The Starlark function when the item is a check.
    pub check: Option<String>,
}

/// What the conversion needs to know about the subtask's testbed.
pub struct Ctx<'a> {
    pub mode: Mode,
    /// The user's name (OfficeBench `username`).
    pub user: &'a str,
    /// Seeded workspace files (paths under testbed/data).
    pub data_files: &'a BTreeSet<String>,
    /// Seeded .eml file names by mailbox folder name (lower case).
    pub mail_files: &'a BTreeMap<String, BTreeSet<String>>,
    /// Every evaluation of the subtask (to infer a missing `file`).
    pub all: &'a [RawEval],
    /// Seeded calendars (lower-case names).
    pub calendars: &'a BTreeSet<String>,
    /// Reference files the task folder lacks (OfficeBench's evaluation then always fails).
    pub missing_references: &'a BTreeSet<String>,
}

impl Ctx<'_> {
    /// The seeded file a wrongly-cased path means (`house_creak.docx` for a seeded
    /// `House_creak.docx`), in typed mode; the path as written otherwise.
    pub fn resolve(&self, path: &str) -> String {
        if self.mode == Mode::Strict || self.data_files.contains(path) {
            return path.to_string();
        }
        let lower = path.to_lowercase();
        let hits: Vec<&String> = self
            .data_files
            .iter()
            .filter(|f| f.to_lowercase() == lower)
            .collect();
        match hits.as_slice() {
            [one] => (*one).clone(),
            _ => path.to_string(),
        }
    }

    /// The .xlsx an `evaluate_excel_cell_value` without `file` most likely means: the
    /// subtask's only other .xlsx path (typed mode).
    pub fn inferred_xlsx(&self) -> Option<String> {
        let mut found: BTreeSet<String> = BTreeSet::new();
        for r in self.all {
            let p = match &r.eval {
                Eval::FileExist {
                    place: Place::Data(p),
                    negate: false,
                } => p,
                Eval::Contain {
                    place: Place::Data(p),
                    ..
                } => p,
                _ => continue,
            };
            if p.to_lowercase().ends_with(".xlsx") {
                found.insert(p.clone());
            }
        }
        // Several candidates: the first named (OfficeBench lists the main output first).
        for r in self.all {
            if let Eval::FileExist {
                place: Place::Data(p),
                negate: false,
            } = &r.eval
                && found.contains(p)
            {
                return Some(p.clone());
            }
        }
        found.into_iter().next()
    }
}

/// A problem converting one evaluation: (message, hint).
pub type ItemError = (String, String);

fn short(function: &str) -> &str {
    function.strip_prefix("evaluate_").unwrap_or(function)
}

/// Convert evaluation `index` (0-based) of the subtask.
pub fn item(ctx: &Ctx<'_>, index: usize, raw: &RawEval) -> Result<Item, ItemError> {
    let n = index + 1;
    let sh = short(&raw.function);
    let id = format!("e{n}-{}", sh.replace('_', "-"));
    let fname = format!("e{n}_{sh}");
    let args = serde_json::to_string(&raw.args).unwrap_or_default();
    let origin = format!("OfficeBench {}({args})", raw.function);
    let strict = ctx.mode == Mode::Strict;
    let check = |what: String, body: String| -> Item {
        Item {
            id: id.clone(),
            kind: "result",
            weight: 1.0,
            description: format!("{what} — {origin}"),
            evaluator: format!("check = {}", q(&fname)),
            check: Some(format!("def {fname}(w):\n{body}")),
        }
    };
    let predicate = |what: String, evaluator: String| -> Item {
        Item {
            id: id.clone(),
            kind: "result",
            weight: 1.0,
            description: format!("{what} — {origin}"),
            evaluator,
            check: None,
        }
    };
    let kw_star = |k: &[String]| star_list(k);
    let item = match &raw.eval {
        Eval::Contain {
            place,
            doc_type,
            keywords,
            negate,
        } => {
            let verb = if *negate {
                "does not contain every one of"
            } else {
                "contains"
            };
            let kws = keywords.join("\", \"");
            match place {
                Place::Answer => {
                    let what = format!("The final answer {verb} \"{kws}\"");
                    if strict {
                        let inner = format!(
                            "    msg = w.final_message()\n    if msg == None:\n        return {{\"passed\": {}, \"detail\": \"no final answer (OfficeBench: answer.txt missing)\"}}\n    res = ob_strict_contain(msg.replace('\"', '').replace(\"'\", ''), {}, \"the final answer\")\n",
                            if *negate { "True" } else { "False" },
                            kw_star(keywords)
                        );
                        check(what, finish(inner, *negate, "the final answer"))
                    } else if *negate {
                        predicate(
                            format!("The final answer contains none of \"{kws}\""),
                            format!("final_message = {{ none = {} }}", q_list(keywords)),
                        )
                    } else {
                        predicate(
                            what,
                            format!("final_message = {{ all = {} }}", q_list(keywords)),
                        )
                    }
                }
                Place::Data(p) => {
                    let path = ctx.resolve(p);
                    let what = format!("{path} {verb} \"{kws}\"");
                    if strict {
                        let read = match doc_type.as_str() {
                            "xlsx" => format!(
                                "\"\\n\".join(ob_strict_sheet_text(ob_first_sheet(xlsx({}))))",
                                q(&path)
                            ),
                            "doc" | "docx" => format!(
                                "\"\\n\".join([p.text for p in docx({}).paragraphs])",
                                q(&path)
                            ),
                            "pdf" => format!("pdf({}).text", q(&path)),
                            _ => format!("w.files.text({})", q(&path)),
                        };
                        let lower = path.to_lowercase();
                        let readable = match doc_type.as_str() {
                            "xlsx" => lower.ends_with(".xlsx") || lower.ends_with(".xlsm"),
                            "doc" | "docx" => lower.ends_with(".docx"),
                            "pdf" => lower.ends_with(".pdf"),
                            _ => true,
                        };
                        if !readable {
                            // openpyxl / python-docx / PyPDF2 raise on it: the evaluation
                            // fails whether the file exists or not (not_contain too: the
                            // exception is not caught)
                            return Ok(check(
                                what,
                                format!(
                                    "    return {{\"passed\": False, \"detail\": \"OfficeBench reads {path} as {doc_type}, which raises: the evaluation never passes\"}}\n"
                                ),
                            ));
                        }
                        let inner = format!(
                            "    if not w.files.exists({p}):\n        return {{\"passed\": {missing}, \"detail\": {p} + \" does not exist\"}}\n    res = ob_strict_contain({read}, {k}, {p})\n",
                            p = q(&path),
                            missing = if *negate { "True" } else { "False" },
                            k = kw_star(keywords)
                        );
                        check(what, finish(inner, *negate, &path))
                    } else if *negate {
                        predicate(
                            format!("{path} exists and contains none of \"{kws}\""),
                            format!(
                                "file_contains = {{ path = {}, none = {} }}",
                                q(&path),
                                q_list(keywords)
                            ),
                        )
                    } else {
                        predicate(
                            what,
                            format!(
                                "file_contains = {{ path = {}, all = {} }}",
                                q(&path),
                                q_list(keywords)
                            ),
                        )
                    }
                }
                Place::Calendar(name) => {
                    let what = format!("{name}'s calendar {verb} \"{kws}\"");
                    let helper = if strict {
                        "ob_strict_ics_contain"
                    } else {
                        "ob_typed_ics_contain"
                    };
                    let inner = format!(
                        "    res = {helper}(w, {}, {})\n",
                        q(name),
                        kw_star(keywords)
                    );
                    check(what, finish(inner, *negate, &format!("{name}'s calendar")))
                }
                other => {
                    return Err((
                        format!("`{}` on {other:?} is not supported", raw.function),
                        "OfficeBench reads data/ files, calendar/<Name>.ics or a mailbox here"
                            .into(),
                    ));
                }
            }
        }
        Eval::MailContain {
            username,
            keywords,
            negate,
        } => {
            let kws = keywords.join("\", \"");
            let what = if strict {
                format!(
                    "The mailbox of {username} {} \"{kws}\"",
                    if *negate {
                        "does not contain every one of"
                    } else {
                        "contains"
                    }
                )
            } else {
                format!(
                    "A message {} sent {} {} \"{kws}\" (subject or body)",
                    ctx.user,
                    if username.eq_ignore_ascii_case(ctx.user) {
                        String::new()
                    } else {
                        format!("to {username} ({})", address(username))
                    },
                    if *negate {
                        "does not hold every one of"
                    } else {
                        "holds"
                    }
                )
            };
            if !strict && *negate {
                let mut it = check(
                    format!(
                        "Nothing {} sent to {username} holds any of \"{kws}\"",
                        ctx.user
                    ),
                    format!(
                        "    return ob_typed_mail_none(w, {}, {})\n",
                        q(username),
                        kw_star(keywords)
                    ),
                );
                it.weight = 0.25;
                return Ok(it);
            }
            let helper = if strict {
                "ob_strict_mail_contain"
            } else {
                "ob_typed_mail_contain"
            };
            let inner = format!(
                "    res = {helper}(w, {}, {})\n",
                q(username),
                kw_star(keywords)
            );
            check(what, finish(inner, *negate, &format!("{username}'s mail")))
        }
        Eval::FileExist { place, negate } => {
            let mut it = match place {
                Place::Data(p) => {
                    let path = ctx.resolve(p);
                    if strict {
                        // os.path.exists: a directory counts too
                        check(
                            format!(
                                "{path} {}",
                                if *negate { "does not exist" } else { "exists" }
                            ),
                            format!(
                                "    return {}w.files.exists({})\n",
                                if *negate { "not " } else { "" },
                                q(&path)
                            ),
                        )
                    } else if *negate {
                        predicate(
                            format!("{path} does not exist"),
                            format!("file_absent = {}", q(&path)),
                        )
                    } else {
                        predicate(
                            format!("{path} exists"),
                            format!("file_exists = {}", q(&path)),
                        )
                    }
                }
                Place::Answer => check(
                    "A final answer was given".into(),
                    format!(
                        "    return {}(w.final_message() != None)\n",
                        if *negate { "not " } else { "" }
                    ),
                ),
                Place::Calendar(name) => {
                    let seeded = ctx.calendars.contains(&name.to_lowercase());
                    let inner = format!(
                        "    res = ob_calendar_exists(w, {}, {})\n",
                        q(name),
                        if seeded { "True" } else { "False" }
                    );
                    check(
                        format!("{name} has a calendar with an event (calendar/{name}.ics)"),
                        finish(inner, *negate, &format!("calendar/{name}.ics")),
                    )
                }
                Place::Email { name, file } => {
                    let subject = file.strip_suffix(".eml").unwrap_or(file);
                    let seeded = ctx
                        .mail_files
                        .get(&name.to_lowercase())
                        .is_some_and(|s| s.contains(file));
                    let inner = format!(
                        "    res = ob_mail_file_exists(w, {}, {}, {})\n",
                        q(name),
                        q(subject),
                        if seeded { "True" } else { "False" }
                    );
                    check(
                        format!(
                            "A message \"{subject}\" is in {name}'s mailbox (emails/{name}/{file})"
                        ),
                        finish(inner, *negate, &format!("emails/{name}/{file}")),
                    )
                }
                other => {
                    return Err((
                        format!("`{}` on {other:?} is not supported", raw.function),
                        "OfficeBench checks data/, calendar/ or emails/ paths here".into(),
                    ));
                }
            };
            it.kind = "foundation";
            it
        }
        Eval::CellValue { place, matches } => {
            let cells: Vec<String> = matches
                .iter()
                .map(|(r, c, v)| format!("{}{r} = {v}", col_letters(*c)))
                .collect();
            let list = matches
                .iter()
                .map(|(r, c, v)| format!("({r}, {c}, {})", q(v)))
                .collect::<Vec<_>>()
                .join(", ");
            let path = match place {
                Some(Place::Data(p)) => Some(ctx.resolve(p)),
                None if !strict => ctx.inferred_xlsx(),
                None => None,
                Some(other) => {
                    return Err((
                        format!("`{}` on {other:?} is not supported", raw.function),
                        "OfficeBench reads a data/ .xlsx here".into(),
                    ));
                }
            };
            match path {
                None => check(
                    format!("Cells {} (no file named)", cells.join(", ")),
                    if strict {
                        "    return {\"passed\": False, \"detail\": \"OfficeBench raises KeyError('file'): the evaluation names no file, so it never passes\"}\n".into()
                    } else {
                        "    return {\"passed\": False, \"detail\": \"the evaluation names no file and none can be inferred from the subtask\"}\n".into()
                    },
                ),
                Some(path) => {
                    let helper = if strict {
                        "ob_strict_cell_value"
                    } else {
                        "ob_typed_cell_value"
                    };
                    let note = if place.is_none() {
                        " (file inferred: OfficeBench's args name none)"
                    } else {
                        ""
                    };
                    check(
                        format!("In {path}{note}: {}", cells.join(", ")),
                        format!("    return {helper}(w, {}, [{list}])\n", q(&path)),
                    )
                }
            }
        }
        Eval::CellComparator { place, matches } => {
            let Place::Data(p) = place else {
                return Err((
                    format!("`{}` on {place:?} is not supported", raw.function),
                    "OfficeBench reads a data/ .xlsx here".into(),
                ));
            };
            let path = ctx.resolve(p);
            let mut list = Vec::new();
            let mut cells = Vec::new();
            for (r, c, lambda) in matches {
                let lambda = starlark_lambda(lambda).ok_or_else(|| {
                    (
                        format!("comparator `{lambda}` is not a simple lambda the importer can translate"),
                        "write it as `lambda x: <expression over x>` using comparisons, `in`, lists and string or number literals".to_string(),
                    )
                })?;
                list.push(format!("({r}, {c}, {lambda})"));
                cells.push(format!("{}{r}", col_letters(*c)));
            }
            let helper = if strict {
                "ob_strict_comparator"
            } else {
                "ob_typed_comparator"
            };
            check(
                format!(
                    "In {path}: cells {} pass their comparators",
                    cells.join(", ")
                ),
                format!(
                    "    return {helper}(w, {}, [{}])\n",
                    q(&path),
                    list.join(", ")
                ),
            )
        }
        Eval::ExactMatch {
            doc_type,
            result,
            expected,
        } => {
            let (path, exp, shown) = match (result, expected) {
                (Place::Data(p), Place::Reference(r)) => {
                    if ctx.missing_references.contains(r) {
                        return Ok(check(
                            format!(
                                "{} equals the reference {r}, which OfficeBench's task folder lacks",
                                ctx.resolve(p)
                            ),
                            format!(
                                "    return {{\"passed\": False, \"detail\": \"reference/{r} is missing from OfficeBench's task folder: the original never passes\"}}\n"
                            ),
                        ));
                    }
                    (
                        ctx.resolve(p),
                        format!("w.reference({})", q(r)),
                        format!("the reference {r}"),
                    )
                }
                // another workspace file (OfficeBench's 3-62 compares two data/ PDFs)
                (Place::Data(p), Place::Data(e)) => {
                    let e = ctx.resolve(e);
                    (ctx.resolve(p), q(&e), e)
                }
                _ => {
                    return Err((
                        format!(
                            "`{}` from {result:?} to {expected:?} is not supported",
                            raw.function
                        ),
                        "OfficeBench compares a data/ file with a reference/ or data/ file here"
                            .into(),
                    ));
                }
            };
            let r = exp.as_str();
            let what = format!("{path} equals {shown}");
            let guard = format!(
                "    if not w.files.exists({p}):\n        return {{\"passed\": False, \"detail\": {p} + \" does not exist\"}}\n",
                p = q(&path)
            );
            let body = match (doc_type.as_str(), strict) {
                ("xlsx", true) => format!(
                    "{guard}    return ob_strict_sheet_equal(ob_first_sheet(xlsx({})), ob_first_sheet(xlsx({})))\n",
                    q(&path),
                    r
                ),
                ("xlsx", false) => format!(
                    "{guard}    return ob_typed_sheet_equal(ob_first_sheet(xlsx({})), ob_first_sheet(xlsx({})))\n",
                    q(&path),
                    r
                ),
                ("pdf" | "doc", true) => format!(
                    "{guard}    return {{\"passed\": False, \"detail\": \"OfficeBench compares two lists of page/paragraph objects by identity: never equal\"}}\n"
                ),
                ("pdf", false) => format!(
                    "{guard}    a = \" \".join(pdf({}).text.split())\n    b = \" \".join(pdf({}).text.split())\n    return {{\"passed\": a == b, \"detail\": \"same text as the reference\" if a == b else \"the text differs from the reference\"}}\n",
                    q(&path),
                    r
                ),
                (_, true) => format!(
                    "{guard}    return w.files.text({}) == read_text({})\n",
                    q(&path),
                    r
                ),
                (_, false) => format!(
                    "{guard}    a = \" \".join(read_text({}).split())\n    b = \" \".join(read_text({}).split())\n    return {{\"passed\": a == b, \"detail\": \"same text as the reference\" if a == b else \"the text differs from the reference\"}}\n",
                    q(&path),
                    r
                ),
            };
            check(what, body)
        }
        Eval::NoOverlap { username } => {
            let mut it = if strict {
                check(
                    format!("No two adjacent events of {username}'s calendar overlap"),
                    format!("    return ob_strict_no_overlap(w, {})\n", q(username)),
                )
            } else {
                predicate(
                    format!("No two events of {username}'s calendar overlap"),
                    format!(
                        "calendar_no_overlap = {{ user = {} }}",
                        q(&address(username))
                    ),
                )
            };
            // it holds in an untouched calendar: collateral damage, not the result
            it.weight = 0.25;
            it
        }
        Eval::DiffContain {
            doc_type,
            input,
            output,
            keywords,
        } => {
            let (Place::Original(i), Place::Data(o)) = (input, output) else {
                return Err((
                    format!(
                        "`{}` from {input:?} to {output:?} is not supported",
                        raw.function
                    ),
                    "OfficeBench diffs the cached original testbed file with a data/ file here"
                        .into(),
                ));
            };
            let path = ctx.resolve(o);
            let orig = format!("original/{}", ctx.resolve(i));
            let kws = keywords.join("\", \"");
            let what = format!("{path} changed from the original, and the change holds \"{kws}\"");
            let guard = format!(
                "    if not w.files.exists({p}):\n        return {{\"passed\": False, \"detail\": {p} + \" does not exist\"}}\n",
                p = q(&path)
            );
            let body = match (doc_type.as_str(), strict) {
                ("xlsx", true) => format!(
                    "{guard}    return ob_strict_diff(ob_strict_sheet_text(ob_first_sheet(xlsx(w.reference({})))), ob_strict_sheet_text(ob_first_sheet(xlsx({}))), {})\n",
                    q(&orig),
                    q(&path),
                    kw_star(keywords)
                ),
                ("xlsx", false) => format!(
                    "{guard}    return ob_typed_diff(ob_rows(ob_first_sheet(xlsx(w.reference({})))), ob_rows(ob_first_sheet(xlsx({}))), {})\n",
                    q(&orig),
                    q(&path),
                    kw_star(keywords)
                ),
                (_, true) => format!(
                    "{guard}    return {{\"passed\": False, \"detail\": \"OfficeBench diffs lists of paragraph objects (`.split` fails): never passes\"}}\n"
                ),
                (_, false) => format!(
                    "{guard}    return ob_typed_diff([p.text for p in docx(w.reference({})).paragraphs], [p.text for p in docx({}).paragraphs], {})\n",
                    q(&orig),
                    q(&path),
                    kw_star(keywords)
                ),
            };
            check(what, body)
        }
    };
    // Checks that hold in an untouched world are collateral damage, not the result: a
    // not-contain on mail or a calendar (nothing sent, no event), a file that is seeded.
    let mut item = item;
    let holds_untouched = match &raw.eval {
        Eval::MailContain { negate: true, .. } => true,
        Eval::Contain {
            place: Place::Calendar(_),
            negate: true,
            ..
        } => true,
        Eval::FileExist {
            place: Place::Data(p),
            negate: false,
        } => ctx.data_files.contains(&ctx.resolve(p)),
        Eval::FileExist {
            place: Place::Calendar(n),
            negate: false,
        } => ctx.calendars.contains(&n.to_lowercase()),
        Eval::FileExist {
            place: Place::Email { name, file },
            negate: false,
        } => ctx
            .mail_files
            .get(&name.to_lowercase())
            .is_some_and(|s| s.contains(file)),
        _ => false,
    };
    if holds_untouched {
        item.weight = 0.25;
    }
    Ok(item)
}

/// The check body's last lines: return `res`, or its negation.
fn finish(inner: String, negate: bool, what: &str) -> String {
    if negate {
        format!("{inner}    return ob_negated(res, {})\n", q(what))
    } else {
        format!("{inner}    return res\n")
    }
}

/// A Starlark list literal of strings.
pub fn star_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ")
    )
}

/// `1` → `A`, `27` → `AA` (1-based).
pub fn col_letters(mut col: u32) -> String {
    let mut out = Vec::new();
    while col > 0 {
        let r = (col - 1) % 26;
        out.push(b'A' + r as u8);
        col = (col - 1) / 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A Python comparator lambda as Starlark, when it only uses what both languages share:
/// one parameter, comparisons, `in`, `and`/`or`/`not`, lists and string or number literals.
pub fn starlark_lambda(src: &str) -> Option<String> {
    let rest = src.trim().strip_prefix("lambda")?;
    let (param, body) = rest.split_once(':')?;
    let param = param.trim();
    if param.is_empty() || !param.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let body = body.trim();
    let ok = !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " _'\"[](),.<>=!+-*/".contains(c))
        && !body.contains("__");
    // every identifier outside string literals is the parameter, a keyword or a builtin
    let mut code = String::new();
    let mut quote: Option<char> = None;
    for c in body.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                code.push(' ');
            }
            None => code.push(c),
        }
    }
    let idents_ok = quote.is_none()
        && code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()))
            .all(|w| {
                w == param
                    || [
                        "in", "not", "and", "or", "int", "float", "str", "len", "True", "False",
                        "None",
                    ]
                    .contains(&w)
            });
    (ok && idents_ok).then(|| format!("lambda {param}: {body}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparators_translate_only_when_simple() {
        assert_eq!(
            starlark_lambda("lambda x: x in ['1', '2']").as_deref(),
            Some("lambda x: x in ['1', '2']")
        );
        assert!(starlark_lambda("lambda x: __import__('os')").is_none());
        assert!(starlark_lambda("lambda x: open('/etc/passwd')").is_none());
        assert!(starlark_lambda("x: 1").is_none());
        assert_eq!(col_letters(1), "A");
        assert_eq!(col_letters(28), "AB");
    }
}
