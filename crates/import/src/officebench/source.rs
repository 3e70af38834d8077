//! Reading OfficeBench's subtask files: `tasks/<apps>-<n>/subtasks/<k>.json` with exactly the
//! keys `username`, `date`, `weekday`, `time`, `task` and `evaluation: [{function, args}]`.
//! Every evaluation is parsed into an [`Eval`] with its paths resolved into [`Place`]s, or
//! refused with a located [`Problem`].

use std::path::Path;

use serde_json::Value;

use crate::Problem;

/// The nine evaluation functions of `utils/evaluate.py`.
pub const FUNCTIONS: [&str; 9] = [
    "evaluate_contain",
    "evaluate_not_contain",
    "evaluate_file_exist",
    "evaluate_file_not_exist",
    "evaluate_excel_cell_value",
    "evaluate_excel_cell_comparator",
    "evaluate_exact_match",
    "evaluate_calendar_no_overlap",
    "evaluate_diff_contain_text",
];

/// Where an evaluation's path points, relative to OfficeBench's testbed (`/testbed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// `data/<path>`: a workspace file.
    Data(String),
    /// `data/answer.txt`: the final answer OfficeBench's harness writes from `finish_task`.
    Answer,
    /// `calendar/<Name>.ics`: a person's calendar.
    Calendar(String),
    /// `emails/<Name>/<file>.eml`: a message in a person's mailbox.
    Email { name: String, file: String },
    /// `../../../../reference/<file>`: the task folder's `reference/`.
    Reference(String),
    /// `../../../../cache/<k>/testbed/data/<path>`: the untouched testbed (the seed).
    Original(String),
}

/// One evaluation of a subtask, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Eval {
    /// `evaluate_contain` (negate: `evaluate_not_contain`) on a file.
    Contain {
        place: Place,
        doc_type: String,
        keywords: Vec<String>,
        negate: bool,
    },
    /// `evaluate_contain` / `evaluate_not_contain` with `doc_type = email`: a person's mailbox.
    MailContain {
        username: String,
        keywords: Vec<String>,
        negate: bool,
    },
    /// `evaluate_file_exist` (negate: `evaluate_file_not_exist`).
    FileExist { place: Place, negate: bool },
    /// `evaluate_excel_cell_value`: `(row, col): value` substrings (1-based row and column).
    /// `place` is `None` when the args have no `file` (OfficeBench then raises KeyError).
    CellValue {
        place: Option<Place>,
        matches: Vec<(u32, u32, String)>,
    },
    /// `evaluate_excel_cell_comparator`: `(row, col)` and a Python lambda over the cell text.
    CellComparator {
        place: Place,
        matches: Vec<(u32, u32, String)>,
    },
    /// `evaluate_exact_match`: result file equals the reference file.
    ExactMatch {
        doc_type: String,
        result: Place,
        expected: Place,
    },
    /// `evaluate_calendar_no_overlap`.
    NoOverlap { username: String },
    /// `evaluate_diff_contain_text`: the diff of the original and the output contains keywords.
    DiffContain {
        doc_type: String,
        input: Place,
        output: Place,
        keywords: Vec<String>,
    },
}

/// One evaluation as written, with its function name, raw args and line in the JSON file.
#[derive(Debug, Clone)]
pub struct RawEval {
    pub function: String,
    pub args: Value,
    pub line: Option<usize>,
    pub eval: Eval,
}

/// One subtask file.
#[derive(Debug, Clone)]
pub struct Subtask {
    pub username: String,
    pub date: String,
    pub weekday: String,
    pub time: String,
    pub task: String,
    pub evals: Vec<RawEval>,
}

const KEYS: [&str; 6] = ["date", "evaluation", "task", "time", "username", "weekday"];

/// Parse `path` (its text `text`). All problems of the file are returned at once.
pub fn parse_subtask(path: &Path, text: &str) -> Result<Subtask, Vec<Problem>> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        vec![Problem::new(
            path,
            Some(e.line()),
            format!("not JSON: {e}"),
            "fix the JSON syntax of this subtask file",
        )]
    })?;
    let Some(obj) = v.as_object() else {
        return Err(vec![Problem::new(
            path,
            Some(1),
            "a subtask file is a JSON object",
            "give it the keys username, date, weekday, time, task and evaluation",
        )]);
    };
    let mut problems = Vec::new();
    for k in obj.keys() {
        if !KEYS.contains(&k.as_str()) {
            problems.push(Problem::new(
                path,
                line_of(text, &format!("\"{k}\""), 0),
                format!("unknown key `{k}`"),
                format!(
                    "OfficeBench subtasks have exactly the keys {}",
                    KEYS.join(", ")
                ),
            ));
        }
    }
    let mut string = |key: &str| -> String {
        match obj.get(key) {
            Some(Value::String(s)) => s.clone(),
            other => {
                problems.push(Problem::new(
                    path,
                    line_of(text, &format!("\"{key}\""), 0),
                    match other {
                        None => format!("missing key `{key}`"),
                        Some(_) => format!("`{key}` is not a string"),
                    },
                    format!("give `{key}` as a string, as every OfficeBench subtask does"),
                ));
                String::new()
            }
        }
    };
    let username = string("username");
    let date = string("date");
    let weekday = string("weekday");
    let time = string("time");
    let task = string("task");
    let mut evals = Vec::new();
    match obj.get("evaluation") {
        Some(Value::Array(items)) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                let line = line_of(text, "\"function\"", i);
                match parse_eval(item) {
                    Ok((function, eval)) => evals.push(RawEval {
                        function,
                        args: item.get("args").cloned().unwrap_or(Value::Null),
                        line,
                        eval,
                    }),
                    Err((message, hint)) => problems.push(Problem::new(
                        path,
                        line,
                        format!("evaluation {}: {message}", i + 1),
                        hint,
                    )),
                }
            }
        }
        _ => problems.push(Problem::new(
            path,
            line_of(text, "\"evaluation\"", 0),
            "`evaluation` is missing or not a non-empty list",
            "give `evaluation` as a list of {\"function\", \"args\"} objects",
        )),
    }
    if problems.is_empty() {
        Ok(Subtask {
            username,
            date,
            weekday,
            time,
            task,
            evals,
        })
    } else {
        Err(problems)
    }
}

/// The 1-based line of the `nth` (0-based) occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str, nth: usize) -> Option<usize> {
    let (pos, _) = text.match_indices(needle).nth(nth)?;
    Some(text[..pos].matches('\n').count() + 1)
}

type EvalError = (String, String);

fn bad(message: impl Into<String>, hint: impl Into<String>) -> EvalError {
    (message.into(), hint.into())
}

fn parse_eval(item: &Value) -> Result<(String, Eval), EvalError> {
    let function = item
        .get("function")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            bad(
                "no `function` name",
                "each evaluation is {\"function\": \"evaluate_...\", \"args\": {...}}",
            )
        })?
        .to_string();
    if !FUNCTIONS.contains(&function.as_str()) {
        return Err(bad(
            format!("unknown evaluation function `{function}`"),
            format!(
                "the importer knows OfficeBench's nine functions ({}); fix the name or leave this subtask out",
                FUNCTIONS.join(", ")
            ),
        ));
    }
    let args = item.get("args").and_then(Value::as_object).ok_or_else(|| {
        bad(
            format!("`{function}` has no `args` object"),
            "give its args as in utils/evaluate.py",
        )
    })?;
    let get_str = |key: &str| -> Result<String, EvalError> {
        match args.get(key) {
            Some(v) => scalar(v).ok_or_else(|| {
                bad(
                    format!("`{function}`: `{key}` is not a string"),
                    "give it as a string, as utils/evaluate.py reads it",
                )
            }),
            None => Err(bad(
                format!("`{function}` lacks the argument `{key}`"),
                format!("add `{key}` to its args (see utils/evaluate.py)"),
            )),
        }
    };
    let keywords = |key: &str| -> Result<Vec<String>, EvalError> {
        let list = args.get(key).and_then(Value::as_array).ok_or_else(|| {
            bad(
                format!("`{function}`: `{key}` is missing or not a list"),
                format!("give `{key}` as a list of strings"),
            )
        })?;
        list.iter()
            .map(|v| {
                scalar(v).ok_or_else(|| {
                    bad(
                        format!("`{function}`: an entry of `{key}` is not a string"),
                        "give every keyword as a string",
                    )
                })
            })
            .collect()
    };
    let eval = match function.as_str() {
        "evaluate_contain" | "evaluate_not_contain" => {
            let negate = function == "evaluate_not_contain";
            let doc_type = get_str("doc_type")?;
            let keywords = keywords("keywords")?;
            if doc_type == "email" {
                Eval::MailContain {
                    username: get_str("username")?,
                    keywords,
                    negate,
                }
            } else {
                if !["txt", "ics", "doc", "docx", "xlsx", "pdf"].contains(&doc_type.as_str()) {
                    return Err(bad(
                        format!("`{function}`: unknown doc_type `{doc_type}`"),
                        "use one of email, txt, ics, doc, docx, xlsx, pdf (utils/evaluate.py asserts on others)",
                    ));
                }
                Eval::Contain {
                    place: place(&get_str("file")?)?,
                    doc_type,
                    keywords,
                    negate,
                }
            }
        }
        "evaluate_file_exist" | "evaluate_file_not_exist" => Eval::FileExist {
            place: place(&get_str("file")?)?,
            negate: function == "evaluate_file_not_exist",
        },
        "evaluate_excel_cell_value" => Eval::CellValue {
            place: match args.get("file") {
                None => None,
                Some(_) => Some(place(&get_str("file")?)?),
            },
            matches: matches(args.get("matches"), "value", &function)?,
        },
        "evaluate_excel_cell_comparator" => Eval::CellComparator {
            place: place(&get_str("file")?)?,
            matches: matches(args.get("matches"), "comparator", &function)?,
        },
        "evaluate_exact_match" => {
            let doc_type = get_str("doc_type")?;
            if !["txt", "ics", "doc", "xlsx", "pdf"].contains(&doc_type.as_str()) {
                return Err(bad(
                    format!("`{function}`: unknown doc_type `{doc_type}`"),
                    "use one of txt, ics, doc, xlsx, pdf",
                ));
            }
            Eval::ExactMatch {
                doc_type,
                result: place(&get_str("result_file")?)?,
                expected: place(&get_str("expected_file")?)?,
            }
        }
        "evaluate_calendar_no_overlap" => Eval::NoOverlap {
            username: get_str("username")?,
        },
        "evaluate_diff_contain_text" => {
            let doc_type = get_str("doc_type")?;
            if !["xlsx", "doc"].contains(&doc_type.as_str()) {
                return Err(bad(
                    format!("`{function}`: unknown doc_type `{doc_type}`"),
                    "use xlsx or doc",
                ));
            }
            Eval::DiffContain {
                doc_type,
                input: place(&get_str("input_file")?)?,
                output: place(&get_str("output_file")?)?,
                keywords: keywords("keywords")?,
            }
        }
        _ => unreachable_function(&function)?,
    };
    Ok((function, eval))
}

fn unreachable_function(function: &str) -> Result<Eval, EvalError> {
    Err(bad(
        format!("unknown evaluation function `{function}`"),
        "fix the name",
    ))
}

/// A JSON string, number or bool as the text Python's f-string or `str()` gives.
pub fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(true) => Some("True".into()),
        Value::Bool(false) => Some("False".into()),
        _ => None,
    }
}

fn matches(
    v: Option<&Value>,
    key: &str,
    function: &str,
) -> Result<Vec<(u32, u32, String)>, EvalError> {
    let list = v
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            bad(
                format!("`{function}`: `matches` is missing or not a non-empty list"),
                format!("give `matches` as a list of {{\"row\", \"col\", \"{key}\"}}"),
            )
        })?;
    let mut out = Vec::new();
    for m in list {
        let index = |k: &str| -> Result<u32, EvalError> {
            m.get(k)
                .and_then(scalar)
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|n| *n >= 1)
                .ok_or_else(|| {
                    bad(
                        format!("`{function}`: a match's `{k}` is not a positive number"),
                        format!("give `{k}` as a 1-based index, e.g. \"2\""),
                    )
                })
        };
        let value = m.get(key).and_then(scalar).ok_or_else(|| {
            bad(
                format!("`{function}`: a match lacks `{key}`"),
                format!("give every match a `{key}`"),
            )
        })?;
        out.push((index("row")?, index("col")?, value));
    }
    Ok(out)
}

/// Resolve an evaluation path (relative to the testbed, as `os.path.join(testbed_dir, p)`).
pub fn place(raw: &str) -> Result<Place, EvalError> {
    let unsupported = || {
        bad(
            format!("unsupported path `{raw}`"),
            "OfficeBench paths are data/..., calendar/<Name>.ics, emails/<Name>/<file>.eml, ../../../../reference/<file> or ../../../../cache/<k>/testbed/data/<file>",
        )
    };
    let mut parts: Vec<&str> = raw
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let ups = parts.iter().take_while(|p| **p == "..").count();
    if ups == 4 {
        parts.drain(..4);
        return match parts.as_slice() {
            ["reference", rest @ ..] if !rest.is_empty() && !rest.contains(&"..") => {
                Ok(Place::Reference(rest.join("/")))
            }
            ["cache", _, "testbed", "data", rest @ ..]
                if !rest.is_empty() && !rest.contains(&"..") =>
            {
                Ok(Place::Original(rest.join("/")))
            }
            _ => Err(unsupported()),
        };
    }
    if ups != 0 || parts.contains(&"..") {
        return Err(unsupported());
    }
    match parts.as_slice() {
        ["data", "answer.txt"] => Ok(Place::Answer),
        ["data", rest @ ..] if !rest.is_empty() => Ok(Place::Data(rest.join("/"))),
        ["calendar", file] if file.ends_with(".ics") && file.len() > 4 => {
            Ok(Place::Calendar(file[..file.len() - 4].to_string()))
        }
        ["emails", name, file] if file.ends_with(".eml") => Ok(Place::Email {
            name: name.to_string(),
            file: file.to_string(),
        }),
        _ => Err(unsupported()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_like_the_testbed() {
        assert_eq!(place("./data/a.xlsx"), Ok(Place::Data("a.xlsx".into())));
        assert_eq!(place("data/answer.txt"), Ok(Place::Answer));
        assert_eq!(
            place("./calendar/Bob.ics"),
            Ok(Place::Calendar("Bob".into()))
        );
        assert_eq!(
            place("../../../../reference/score.xlsx"),
            Ok(Place::Reference("score.xlsx".into()))
        );
        assert_eq!(
            place("../../../../cache/3/testbed/data/salary.xlsx"),
            Ok(Place::Original("salary.xlsx".into()))
        );
        assert!(place("/etc/passwd").is_err());
        assert!(place("data/../../x").is_err());
        assert!(place("../x").is_err());
    }

    #[test]
    fn an_unknown_function_is_located() {
        let text = "{\"username\": \"Bob\", \"date\": \"2020-05-01\", \"weekday\": \"Friday\", \"time\": \"10:00 AM\", \"task\": \"x\",\n \"evaluation\": [\n {\"function\": \"evaluate_magic\", \"args\": {}}]}";
        let e = parse_subtask(Path::new("t/subtasks/0.json"), text).unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].line, Some(3));
        assert!(e[0].message.contains("evaluate_magic"), "{}", e[0]);
    }
}
