//! Defects of the original found while importing a subtask.

use chrono::{Datelike, NaiveDateTime};

use super::*;

/// Defects of the original the import can see without running anything.
pub(super) fn findings(
    id: &str,
    sub: &Subtask,
    tb: &Testbed,
    ctx: &rubric::Ctx<'_>,
    at: NaiveDateTime,
    summary: &mut Summary,
) {
    let mut add = |what: String| {
        summary.findings.push(Finding {
            task: id.to_string(),
            what,
        })
    };
    let weekday = at.weekday();
    let full = match weekday {
        chrono::Weekday::Mon => "Monday",
        chrono::Weekday::Tue => "Tuesday",
        chrono::Weekday::Wed => "Wednesday",
        chrono::Weekday::Thu => "Thursday",
        chrono::Weekday::Fri => "Friday",
        chrono::Weekday::Sat => "Saturday",
        chrono::Weekday::Sun => "Sunday",
    };
    if !sub.weekday.trim().eq_ignore_ascii_case(full) {
        add(format!(
            "weekday \"{}\" does not match date {} (a {full}); the prompt gives the true weekday",
            sub.weekday, sub.date
        ));
    }
    for (owner, _) in &tb.loose_mail {
        add(format!(
            "emails/{owner} is in no person's folder, so OfficeBench's email app never lists it; imported into {}'s mailbox",
            sub.username
        ));
    }
    for r in &sub.evals {
        let mut paths = Vec::new();
        match &r.eval {
            Eval::CellValue { place: None, .. } => add(format!(
                "{} has no `file` argument: utils/evaluate.py raises KeyError, so the subtask can never pass{}",
                r.function,
                match ctx.inferred_xlsx() {
                    Some(p) if ctx.mode == Mode::Typed => format!(" (typed import checks {p})"),
                    _ => String::new(),
                }
            )),
            Eval::ExactMatch { doc_type, .. } if doc_type != "xlsx" => add(format!(
                "evaluate_exact_match on .{doc_type} compares two lists of PyPDF2/python-docx objects by identity, so it never passes"
            )),
            Eval::Contain {
                place: Place::Data(p),
                doc_type,
                ..
            } if (doc_type == "xlsx" && !p.to_lowercase().ends_with(".xlsx"))
                || (doc_type == "pdf" && !p.to_lowercase().ends_with(".pdf")) =>
            {
                add(format!(
                    "{} reads data/{p} as {doc_type}, whose reader raises on it: the subtask can never pass",
                    r.function
                ))
            }
            Eval::DiffContain { doc_type, .. } if doc_type == "doc" => add(
                "evaluate_diff_contain_text on doc calls .split on a list, so it never passes"
                    .into(),
            ),
            Eval::Contain {
                place: Place::Calendar(n),
                keywords,
                negate: false,
                ..
            } => {
                for k in keywords {
                    let u = k.to_ascii_uppercase();
                    if (u.starts_with("DTSTART:") || u.starts_with("DTEND:")) && u.ends_with('Z') {
                        let seeded = tb
                            .calendars
                            .iter()
                            .any(|(c, t)| c.eq_ignore_ascii_case(n) && t.contains(k.as_str()));
                        add(format!(
                            "keyword \"{k}\" on calendar/{n}.ics ends in Z, which OfficeBench's calendar app never writes (it stores naive times){}",
                            if seeded {
                                "; the seeded calendar already has it, so doing nothing passes"
                            } else {
                                ": no event made with its calendar app matches (Bureau's typed import compares the time)"
                            }
                        ));
                    }
                }
            }
            _ => {}
        }
        match &r.eval {
            Eval::Contain {
                place: Place::Data(p),
                ..
            }
            | Eval::CellValue {
                place: Some(Place::Data(p)),
                ..
            }
            | Eval::CellComparator {
                place: Place::Data(p),
                ..
            }
            | Eval::FileExist {
                place: Place::Data(p),
                ..
            }
            | Eval::ExactMatch {
                result: Place::Data(p),
                ..
            }
            | Eval::DiffContain {
                output: Place::Data(p),
                ..
            } => paths.push(p.clone()),
            _ => {}
        }
        for p in paths {
            if !tb.data_files.contains(&p) {
                let lower = p.to_lowercase();
                if let Some(real) = tb.data_files.iter().find(|f| f.to_lowercase() == lower) {
                    add(format!(
                        "{} reads data/{p}, but the seeded file is data/{real}: only a new file passes{}",
                        r.function,
                        if ctx.mode == Mode::Typed {
                            " (typed import reads the seeded file)"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }
}
