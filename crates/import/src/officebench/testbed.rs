//! An OfficeBench testbed read into Bureau's world: files, mailboxes (dated, with Message-IDs), calendars.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};

use super::*;

/// The testbed of one task folder, read once for all its subtasks.
pub(super) struct Testbed {
    pub(super) data_dir: PathBuf,
    pub(super) data_files: BTreeSet<String>,
    /// Mailbox folder name (as written) → fixed .eml files (name, bytes).
    pub(super) mail: BTreeMap<String, Vec<(String, Vec<u8>)>>,
    /// Lower-case folder name → .eml file names.
    pub(super) mail_files: BTreeMap<String, BTreeSet<String>>,
    /// .eml files directly in emails/ (no owner).
    pub(super) loose_mail: Vec<(String, Vec<u8>)>,
    /// Calendar name (as written) → .ics text.
    pub(super) calendars: BTreeMap<String, String>,
    /// Lower-case calendar name → seeded events.
    pub(super) busy: BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>>,
    /// Calendars whose events lacked a UID and got one.
    pub(super) fixed_uids: Vec<String>,
    pub(super) reference_dir: PathBuf,
}

pub(super) fn read_testbed(
    folder: &str,
    dir: &Path,
    clock: NaiveDateTime,
) -> Result<Testbed, Vec<Problem>> {
    let tb = dir.join("testbed");
    let data_dir = tb.join("data");
    let data_files: BTreeSet<String> = list_files(&data_dir)
        .into_iter()
        .filter(|f| f != "answer.txt")
        .collect();
    let mut problems = Vec::new();
    let mut mail: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    let mut loose_mail = Vec::new();
    let emails = tb.join("emails");
    let mut n = 0;
    for rel in list_files(&emails) {
        if !rel.to_lowercase().ends_with(".eml") {
            continue;
        }
        let path = emails.join(&rel);
        n += 1;
        let fixed = std::fs::read(&path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|raw| fix_eml(&raw, clock, &format!("ob.{folder}.{n}@officebench.invalid")));
        match fixed {
            Err(why) => problems.push(Problem::new(
                &path,
                None,
                format!("the .eml does not parse as a mail: {why}"),
                "repair or remove the file (an RFC 5322 message: header lines, a blank line, the body)",
            )),
            Ok(bytes) => match rel.split_once('/') {
                Some((owner, file)) if !file.contains('/') => mail
                    .entry(owner.to_string())
                    .or_default()
                    .push((file.to_string(), bytes)),
                None => loose_mail.push((rel.clone(), bytes)),
                Some(_) => problems.push(Problem::new(
                    &path,
                    None,
                    "a mail nested deeper than emails/<Name>/",
                    "OfficeBench's email app reads emails/<Name>/*.eml only; move the file there",
                )),
            },
        }
    }
    let mail_files = mail
        .iter()
        .map(|(k, v)| (k.to_lowercase(), v.iter().map(|(f, _)| f.clone()).collect()))
        .collect();
    let mut calendars = BTreeMap::new();
    let mut fixed_uids = Vec::new();
    let mut busy: BTreeMap<String, Vec<(NaiveDateTime, NaiveDateTime)>> = BTreeMap::new();
    let cal_dir = tb.join("calendar");
    for rel in list_files(&cal_dir) {
        let Some(name) = rel.strip_suffix(".ics") else {
            continue;
        };
        if name.contains('/') {
            continue;
        }
        let path = cal_dir.join(&rel);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                problems.push(Problem::new(
                    &path,
                    None,
                    format!("cannot read: {e}"),
                    "make it a UTF-8 .ics file",
                ));
                continue;
            }
        };
        let (text, fixed) = add_uids(&text, &format!("ob.{folder}.{}", name.to_lowercase()));
        if fixed {
            fixed_uids.push(name.to_string());
        }
        match bureau_formats::calendar::parse_ics(&text, chrono_tz::UTC) {
            Err(e) => problems.push(Problem::new(
                &path,
                None,
                format!("the calendar does not parse: {e}"),
                "repair the .ics (a VCALENDAR of VEVENTs with DTSTART and UID)",
            )),
            Ok(events) => {
                busy.insert(
                    name.to_lowercase(),
                    events
                        .iter()
                        .map(|e| (e.start.naive_utc(), e.end.naive_utc()))
                        .collect(),
                );
                calendars.insert(name.to_string(), text);
            }
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Testbed {
        data_dir,
        data_files,
        mail,
        mail_files,
        loose_mail,
        calendars,
        busy,
        fixed_uids,
        reference_dir: dir.join("reference"),
    })
}

/// Give every VEVENT without a UID one (`<n>.<prefix>@officebench.invalid`).
pub(super) fn add_uids(text: &str, prefix: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut block: Vec<&str> = Vec::new();
    let mut inside = false;
    let mut n = 0;
    let mut fixed = false;
    for line in text.lines() {
        let t = line.trim_end_matches('\r');
        if t.eq_ignore_ascii_case("BEGIN:VEVENT") {
            inside = true;
            block.clear();
        }
        if inside {
            block.push(t);
            if t.eq_ignore_ascii_case("END:VEVENT") {
                inside = false;
                n += 1;
                let has_uid = block
                    .iter()
                    .any(|l| l.to_ascii_uppercase().starts_with("UID"));
                for (i, l) in block.iter().enumerate() {
                    out.push_str(l);
                    out.push_str("\r\n");
                    if i == 0 && !has_uid {
                        out.push_str(&format!("UID:{n}.{prefix}@officebench.invalid\r\n"));
                        fixed = true;
                    }
                }
            }
            continue;
        }
        out.push_str(t);
        out.push_str("\r\n");
    }
    for l in block.iter().filter(|_| inside) {
        out.push_str(l);
        out.push_str("\r\n");
    }
    (out, fixed)
}

/// Give a seeded .eml a `Date` (from its "Sent at: YYYY-MM-DD HH:MM:SS" line, else a day
/// before the turn) and a `Message-ID` when it has none.
pub(super) fn fix_eml(
    raw: &[u8],
    clock: NaiveDateTime,
    message_id: &str,
) -> Result<Vec<u8>, String> {
    let parsed = bureau_formats::mail::parse_eml(raw).map_err(|e| e.to_string())?;
    if parsed.from.is_none() {
        return Err("it has no From header".into());
    }
    let crlf = raw.windows(2).any(|w| w == b"\r\n");
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut head = String::new();
    if parsed.date.is_none() {
        let sent = parsed.text.lines().find_map(|l| {
            let v = l.trim().strip_prefix("Sent at:")?.trim();
            NaiveDateTime::parse_from_str(v, "%Y-%m-%d %H:%M:%S").ok()
        });
        let when = sent.unwrap_or(clock - chrono::Duration::days(1));
        head.push_str(&format!(
            "Date: {}{nl}",
            when.format("%a, %d %b %Y %H:%M:%S +0000")
        ));
    }
    if parsed.message_id.is_none() {
        head.push_str(&format!("Message-ID: <{message_id}>{nl}"));
    }
    let mut out = head.into_bytes();
    out.extend_from_slice(raw);
    let check = bureau_formats::mail::parse_eml(&out).map_err(|e| e.to_string())?;
    if check.date.is_none() || check.message_id.is_none() {
        return Err("a Date or Message-ID header could not be added".into());
    }
    Ok(out)
}

/// "2020-05-01" + "10:00 AM" → the turn's clock.
pub(super) fn clock(date: &str, time: &str) -> Option<NaiveDateTime> {
    let d = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d").ok()?;
    let t = time.trim();
    let t = ["%I:%M %p", "%I:%M%p", "%H:%M", "%H:%M:%S", "%I:%M:%S %p"]
        .iter()
        .find_map(|f| NaiveTime::parse_from_str(t, f).ok())?;
    Some(d.and_time(t))
}
