//! Writing one imported task: skip reasons, task.toml, checks, world, reference and oracle.

use std::collections::BTreeSet;
use std::path::Path;

use chrono::NaiveDateTime;

use super::*;

fn is_image(p: &str) -> bool {
    let l = p.to_lowercase();
    [".jpg", ".jpeg", ".png", ".gif", ".bmp"]
        .iter()
        .any(|e| l.ends_with(e))
}

/// Facts that make a task inexpressible in Bureau today, as a skip reason: an evaluation
/// checks an image file that is seeded nowhere (a seeded image of the same name moved to a new
/// folder is fine), and no Bureau tool makes an image file.
pub(super) fn skip_reason(sub: &Subtask, tb: &Testbed) -> Option<&'static str> {
    for r in &sub.evals {
        if let Eval::FileExist {
            place: Place::Data(p),
            negate: false,
        } = &r.eval
            && is_image(p)
            && !tb.data_files.contains(p)
            && !tb
                .data_files
                .iter()
                .any(|f| f.rsplit('/').next() == p.rsplit('/').next())
        {
            return Some(SKIP_IMAGE_OUTPUT);
        }
    }
    None
}

/// Whether the task's facts are in a picture ([`ABILITY_IMAGE`]) or in a PDF without a text
/// layer ([`ABILITY_SCAN`]): the task has content checks (not only file existence) and names a
/// seeded image or a word of its name ("contact cards" for `Bob_card.png`; or says image,
/// picture, photo, scan, OCR), or names a seeded PDF whose pages have no text. A heuristic for the ability tag and `import.json` only: every imported task
/// offers `files_ocr`, and `files_read` shows any picture, so a task it misses loses nothing.
pub(super) fn media_input(sub: &Subtask, tb: &Testbed) -> Option<&'static str> {
    let content_checked = sub
        .evals
        .iter()
        .any(|r| !matches!(r.eval, Eval::FileExist { .. }));
    if !content_checked {
        return None;
    }
    let task = sub.task.to_lowercase();
    let images: Vec<&String> = tb.data_files.iter().filter(|f| is_image(f)).collect();
    if !images.is_empty() {
        let named = images.iter().any(|f| names(&task, f));
        if named
            || [
                "image", "picture", "photo", "scan", "ocr", ".jpg", ".png", "jpg", "png",
            ]
            .iter()
            .any(|w| task.contains(w))
        {
            return Some(ABILITY_IMAGE);
        }
    }
    for f in &tb.data_files {
        if !f.to_lowercase().ends_with(".pdf") {
            continue;
        }
        let stem = f.rsplit('/').next().unwrap_or(f).to_lowercase();
        let stem = stem.trim_end_matches(".pdf");
        if !(task.contains("pdf") || task.contains(stem) || task.contains(&stem.replace('_', " ")))
        {
            continue;
        }
        let Ok(bytes) = std::fs::read(tb.data_dir.join(f)) else {
            continue;
        };
        // A PDF that cannot be read is no scan (files_read says why; files_ocr still reads it)
        let Ok(text) = bureau_formats::office::to_text(f, &bytes) else {
            continue;
        };
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with("## Page"))
            .collect::<Vec<_>>()
            .join("");
        if body.trim().is_empty() {
            return Some(ABILITY_SCAN);
        }
    }
    None
}

/// Whether the task's text (lower case) names the file `path`: its name, or one of the words of
/// its name, alone or with a plural s ("collect all contact cards" names `Bob_card.png`).
fn names(task: &str, path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file
        .rsplit_once('.')
        .map(|(s, _)| s)
        .unwrap_or(file)
        .to_lowercase();
    if task.contains(&stem) || task.contains(&stem.replace('_', " ")) {
        return true;
    }
    let words: Vec<&str> = task
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    stem.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .any(|w| {
            words
                .iter()
                .any(|t| *t == w || t.strip_suffix('s') == Some(w))
        })
}

/// The people a subtask's evaluations name (lower case), for empty calendars.
pub(super) fn calendar_people(sub: &Subtask) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for r in &sub.evals {
        match &r.eval {
            Eval::Contain {
                place: Place::Calendar(n),
                ..
            }
            | Eval::FileExist {
                place: Place::Calendar(n),
                ..
            } => {
                out.insert(n.to_lowercase());
            }
            Eval::NoOverlap { username } => {
                out.insert(username.to_lowercase());
            }
            _ => {}
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
pub(super) fn write_task(
    opts: &Options,
    folder: &str,
    id: &str,
    path: &Path,
    sub: &Subtask,
    at: NaiveDateTime,
    tb: &Testbed,
    summary: &mut Summary,
) -> Result<Result<(), Problem>, ImportError> {
    let user = sub.username.trim();
    let calendars: BTreeSet<String> = tb.calendars.keys().map(|k| k.to_lowercase()).collect();
    let missing_references: BTreeSet<String> = sub
        .evals
        .iter()
        .filter_map(|r| match &r.eval {
            Eval::ExactMatch {
                expected: Place::Reference(f),
                ..
            } if !tb.reference_dir.join(f).is_file() => Some(f.clone()),
            _ => None,
        })
        .collect();
    let ctx = rubric::Ctx {
        mode: opts.mode,
        user,
        data_files: &tb.data_files,
        mail_files: &tb.mail_files,
        all: &sub.evals,
        calendars: &calendars,
        missing_references: &missing_references,
    };
    let mut items = Vec::new();
    let mut problems = Vec::new();
    for (i, r) in sub.evals.iter().enumerate() {
        match rubric::item(&ctx, i, r) {
            Ok(it) => items.push(it),
            Err((m, h)) => problems.push(format!("evaluation {}: {m} — {h}", i + 1)),
        }
        if let Eval::DiffContain {
            input: Place::Original(f),
            ..
        } = &r.eval
            && !tb.data_files.contains(&ctx.resolve(f))
        {
            problems.push(format!(
                "evaluation {}: the original testbed/data/{f} the diff starts from does not exist — add it",
                i + 1
            ));
        }
    }
    if !problems.is_empty() {
        let line = sub.evals.first().and_then(|r| r.line);
        return Ok(Err(Problem::new(
            path,
            line,
            problems.join("; "),
            "fix the subtask's evaluation, or leave the subtask out",
        )));
    }
    findings(id, sub, tb, &ctx, at, summary);
    for f in &missing_references {
        summary.findings.push(Finding {
            task: id.to_string(),
            what: format!("evaluate_exact_match expects reference/{f}, which the task folder lacks: the subtask can never pass"),
        });
    }
    for name in &tb.fixed_uids {
        summary.findings.push(Finding {
            task: id.to_string(),
            what: format!("calendar/{name}.ics has events without a UID (RFC 5545 requires one); the import gives them one"),
        });
    }

    let task_dir = opts.out.join(id);
    let world = task_dir.join("world");
    // files: the workspace is testbed/data
    for f in &tb.data_files {
        let from = tb.data_dir.join(f);
        let bytes = std::fs::read(&from).map_err(io_err(&from))?;
        write(&world.join("files").join(f), &bytes)?;
    }
    let me = user.to_lowercase();
    // mailboxes; others' mail and every calendar are also readable as files, as
    // OfficeBench's apps read any user's mail and calendar
    for (owner, msgs) in &tb.mail {
        for (file, bytes) in msgs {
            write(&world.join("mail").join(address(owner)).join(file), bytes)?;
            if owner.to_lowercase() != me {
                write(
                    &world.join("files/testbed/emails").join(owner).join(file),
                    bytes,
                )?;
            }
        }
    }
    for (file, bytes) in &tb.loose_mail {
        write(&world.join("mail").join(address(user)).join(file), bytes)?;
    }
    for (name, text) in &tb.calendars {
        write(
            &world
                .join("calendar")
                .join(format!("{}.ics", address(name))),
            text.as_bytes(),
        )?;
        if name.to_lowercase() != me {
            write(
                &world
                    .join("files/testbed/calendar")
                    .join(format!("{name}.ics")),
                text.as_bytes(),
            )?;
        }
    }
    let seeded_cals: BTreeSet<String> = tb.calendars.keys().map(|k| k.to_lowercase()).collect();
    for name in calendar_people(sub) {
        if !seeded_cals.contains(&name) {
            write(
                &world.join("calendar").join(format!("{}.ics", address(&name))),
                b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bureau import officebench//EN\r\nEND:VCALENDAR\r\n",
            )?;
        }
    }
    // reference/: the task folder's reference files and the originals diffs start from
    let mut reference_files = BTreeSet::new();
    for r in &sub.evals {
        match &r.eval {
            Eval::ExactMatch {
                expected: Place::Reference(f),
                ..
            } if !missing_references.contains(f) => {
                reference_files.insert((tb.reference_dir.join(f), f.clone()));
            }
            Eval::DiffContain {
                input: Place::Original(f),
                ..
            } => {
                let f = ctx.resolve(f);
                reference_files.insert((tb.data_dir.join(&f), format!("original/{f}")));
            }
            _ => {}
        }
    }
    for (from, to) in &reference_files {
        let bytes = std::fs::read(from).map_err(io_err(from))?;
        write(&task_dir.join("reference").join(to), &bytes)?;
    }

    // the oracle: authored when the table has one, else derived, else none
    let resolve = |p: &str| ctx.resolve(p);
    let (oracle, kind) = match authored::oracle(id) {
        Some(o) => (Some(o), "authored"),
        None => {
            let seed = oracle::Seed {
                data_dir: &tb.data_dir,
                reference_dir: &tb.reference_dir,
                data_files: &tb.data_files,
                busy: &tb.busy,
                now: at,
                user,
            };
            match oracle::derive(&seed, &sub.evals, &resolve) {
                Ok(o) => (Some(o), "derived"),
                Err(why) => {
                    summary.no_oracle.insert(id.to_string(), why);
                    (None, "none")
                }
            }
        }
    };
    if let Some(o) = &oracle {
        let mut lines = String::new();
        for c in &o.calls {
            lines.push_str(&serde_json::to_string(c).unwrap_or_default());
            lines.push('\n');
        }
        write(&task_dir.join("solution/1.jsonl"), lines.as_bytes())?;
        if let Some(m) = &o.message {
            write(
                &task_dir.join("solution/1.message"),
                format!("{m}\n").as_bytes(),
            )?;
        }
    }

    let skip = skip_reason(sub, tb);
    let media = media_input(sub, tb);
    let copies = tb.mail.keys().any(|o| o.to_lowercase() != me)
        || tb.calendars.keys().any(|n| n.to_lowercase() != me);
    let toml = task_toml(
        id,
        folder,
        path,
        sub,
        at,
        (kind, skip, media, copies),
        &items,
        opts,
    );
    write(&task_dir.join("task.toml"), toml.as_bytes())?;
    let checks: Vec<&String> = items.iter().filter_map(|i| i.check.as_ref()).collect();
    if !checks.is_empty() {
        let mut star = String::from(star::PRELUDE);
        for c in checks {
            star.push('\n');
            star.push_str(c);
        }
        write(&task_dir.join("checks.star"), star.as_bytes())?;
    }
    match skip {
        Some(reason) => summary
            .skipped
            .entry(reason.to_string())
            .or_default()
            .push(id.to_string()),
        None => {
            summary.imported.push(id.to_string());
            *summary.oracles.entry(kind.to_string()).or_insert(0) += 1;
            if let Some(ability) = media {
                summary
                    .media_input
                    .entry(ability.to_string())
                    .or_default()
                    .push(id.to_string());
            }
        }
    }
    Ok(Ok(()))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn task_toml(
    id: &str,
    folder: &str,
    path: &Path,
    sub: &Subtask,
    at: NaiveDateTime,
    (oracle, skip, media, copies): (&str, Option<&str>, Option<&str>, bool),
    items: &[rubric::Item],
    opts: &Options,
) -> String {
    let apps: usize = folder
        .split('-')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let user = sub.username.trim();
    let weekday = at.format("%A");
    let title: String = {
        let t = sub.task.split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > 100 {
            format!("{}…", t.chars().take(99).collect::<String>())
        } else {
            t
        }
    };
    let rel = path
        .strip_prefix(&opts.checkout)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string());
    let mut notes = vec![
        format!("{user}'s files are the workspace (OfficeBench's /testbed/data)."),
        format!(
            "Everyone's mail address is their name in lower case at {DOMAIN} ({user}: {}).",
            address(user)
        ),
        "To put an event on someone else's calendar, invite them to an event you create.".into(),
    ];
    if copies {
        notes.push("Other people's calendars and mailboxes, which OfficeBench's apps can read, are copied under testbed/ in the workspace.".into());
    }
    notes.push("If the task asks a question, give the answer in your final message.".into());
    let prompt = format!(
        "Today is {} ({weekday}). The current time is {}. You are an AI assistant for user {user}.\n\n{}\n\nNotes on this office:\n{}",
        sub.date.trim(),
        sub.time.trim(),
        sub.task.trim(),
        notes
            .iter()
            .map(|n| format!("- {n}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let mut s = format!(
        "# Imported from OfficeBench {rel} by `bureau import officebench`{}.\n# Do not edit: import again. See docs/import-officebench.md.\n",
        if opts.mode == Mode::Strict {
            " --strict-original"
        } else {
            ""
        }
    );
    s.push_str(&format!("id = {}\n", q(id)));
    s.push_str(&format!("title = {}\n", q(&title)));
    s.push_str(&format!("persona = {}\n", q(user)));
    s.push_str(&format!("category = {}\n", q(&format!("{apps}-app"))));
    s.push_str(&format!(
        "difficulty = {}\n",
        q(match apps {
            1 => "easy",
            2 => "medium",
            _ => "hard",
        })
    ));
    let mut abilities = vec!["officebench".to_string()];
    abilities.extend(media.map(str::to_string));
    s.push_str(&format!("abilities = {}\n", q_list(&abilities)));
    // OfficeBench offers every app, its OCR app too, in every subtask (see the docs)
    s.push_str("apps = [\"files\", \"mail\", \"calendar\", \"sheets\", \"ocr\"]\n");
    s.push_str("timezone = \"UTC\"\n");
    s.push_str(&format!("oracle = {}\n", q(oracle)));
    if let Some(why) = skip {
        s.push_str(&format!("skip_reason = {}\n", q(why)));
    }
    s.push_str(&format!(
        "\n[user]\nname = {}\nemail = {}\n",
        q(user),
        q(&address(user))
    ));
    s.push_str(&format!(
        "\n[[turn]]\nat = {}\nprompt = {}\n",
        q(&at.format("%Y-%m-%dT%H:%M:%S").to_string()),
        q_multiline(&prompt)
    ));
    for it in items {
        s.push_str(&format!(
            "\n[[rubric]]\nid = {}\ndescription = {}\nkind = {}\nweight = {}\n{}\n",
            q(&it.id),
            q(&it.description),
            q(it.kind),
            it.weight,
            it.evaluator
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_task_names_a_picture_by_its_name_or_a_word_of_it() {
        // OfficeBench's wordings
        for (task, file) in [
            ("what is bob's score in scores.jpg?", "scores.jpg"),
            ("read business traveling image", "business_travel.jpg"),
            ("collect all contact cards except tom's", "Bob_card.png"),
            ("extract students and their ids", "students_ids.jpg"),
            (
                "what is the maximum prices of the cars sold in march?",
                "car_trading.png",
            ),
            (
                "collect company trading and save in company_trading.xlsx",
                "company_trading_records.jpg",
            ),
        ] {
            assert!(names(task, file), "{task:?} names {file}");
        }
        for (task, file) in [
            ("delete file3.xlsx", "file4.jpg"),
            (
                "what the maximum sales revenue entry from sales report",
                "transcripts.jpg",
            ),
            ("reply to the manager", "managers_photo.png"),
        ] {
            assert!(!names(task, file), "{task:?} does not name {file}");
        }
    }
}
