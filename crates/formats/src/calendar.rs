//! iCalendar (RFC 5545) events.
//!
//! Guarantees:
//!
//! * [`parse_ics`] reads the VEVENTs of a calendar (nested components such as
//!   VALARM and VTIMEZONE are skipped) with a line-unfolding parser of its
//!   own: it is iterative, so hostile nesting cannot overflow the stack, and
//!   it never panics. TEXT values are unescaped (`\\`, `\;`, `\,`, `\n`),
//!   quoted and RFC 6868 (`^n`, `^'`, `^^`) parameter values decoded.
//!   All times are converted to UTC:
//!   `…Z` is UTC, floating times are in `default_tz`, `TZID=Area/City` uses
//!   the IANA database (an unknown TZID is an error naming it), DATE values
//!   are all-day events starting at 00:00 in `default_tz` (or in the zone of
//!   a TZID parameter, should a DATE carry one). A local time in a
//!   DST gap is read with the offset before the gap, an ambiguous one as its
//!   first occurrence (RFC 5545 3.3.5).
//!   End: DTEND, else DTSTART + DURATION, else DTSTART (all-day: next day).
//!   Recurrence rules are not expanded: each VEVENT gives one event.
//! * [`write_ics`] is deterministic (no clock: DTSTAMP is the event start),
//!   writes CRLF lines folded at 75 octets, escapes text, UTC times and
//!   VALUE=DATE for all-day events.
//! * Round trip: `parse_ics(&write_ics(x, p), tz) == x` with every `tzid`
//!   set to `None`, for events whose times have whole seconds, years
//!   1–9999, lower-case e-mails, upper-case statuses, non-empty names and
//!   text without `\r`; for all-day events, start/end must be local
//!   midnights in `tz` (as [`parse_ics`] produces them) and `tz` must have a
//!   UTC offset between −11:00 and +12:00 on those dates, or the event's
//!   `tzid` must name the zone.

use crate::error::FormatError;
use chrono::{
    DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone, Utc,
};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// Someone invited to an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attendee {
    /// E-mail, lower case, without `mailto:`.
    pub email: String,
    /// The CN parameter, if present and non-empty.
    pub name: Option<String>,
    /// PARTSTAT, upper case; "NEEDS-ACTION" when absent.
    pub status: String,
}

/// One calendar event, all times in UTC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalEvent {
    /// UID (unescaped).
    pub uid: String,
    /// SUMMARY, "" if absent.
    pub summary: String,
    /// DESCRIPTION, "" if absent.
    pub description: String,
    /// LOCATION, "" if absent.
    pub location: String,
    /// Start instant.
    pub start: DateTime<Utc>,
    /// End instant (exclusive); equals `start` for events without an end.
    pub end: DateTime<Utc>,
    /// Whether DTSTART was a DATE (all-day event).
    pub all_day: bool,
    /// The TZID of DTSTART as written in the source, if it had one.
    pub tzid: Option<String>,
    /// ORGANIZER e-mail, lower case, without `mailto:`.
    pub organizer: Option<String>,
    /// ATTENDEEs in source order.
    pub attendees: Vec<Attendee>,
    /// STATUS, upper case: CONFIRMED (default), TENTATIVE or CANCELLED.
    pub status: String,
    /// SEQUENCE, 0 if absent.
    pub sequence: u32,
}

/// One unfolded content line: `NAME;PARAM=value:VALUE`.
#[derive(Debug)]
struct Line {
    /// 1-based line number where it started in the folded text.
    number: usize,
    /// Upper-cased property name.
    name: String,
    /// Upper-cased parameter names with decoded values.
    params: Vec<(String, String)>,
    /// Raw (still escaped) value.
    value: String,
}

impl Line {
    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn cal_err(line: usize, reason: impl Into<String>) -> FormatError {
    FormatError::InvalidCalendar {
        line,
        reason: reason.into(),
    }
}

/// Unfolds the text into logical lines, each with the number of its first
/// physical line. Blank lines are dropped.
fn unfold(text: &str) -> Vec<(usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out: Vec<(usize, String)> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(cont) = line.strip_prefix([' ', '\t'])
            && let Some((_, last)) = out.last_mut()
        {
            last.push_str(cont);
            continue;
        }
        if !line.trim().is_empty() {
            out.push((i + 1, line.to_string()));
        }
    }
    out
}

/// Splits a content line into name, parameters and value.
fn parse_line(number: usize, line: &str) -> Result<Line, FormatError> {
    // The name ends at the first ';' or ':'.
    let name_end = line.find([';', ':']).ok_or_else(|| {
        cal_err(
            number,
            format!("{:?} is not a \"NAME:value\" line", preview(line)),
        )
    })?;
    let name = line[..name_end].trim().to_ascii_uppercase();
    if name.is_empty() {
        return Err(cal_err(
            number,
            "a line starts with ';' or ':' instead of a property name",
        ));
    }
    let mut params = Vec::new();
    let mut rest = &line[name_end..];
    while let Some(after) = rest.strip_prefix(';') {
        let eq = after
            .find('=')
            .ok_or_else(|| cal_err(number, format!("parameter without '=' in property {name}")))?;
        let key = after[..eq].trim().to_ascii_uppercase();
        let mut value = String::new();
        let mut tail = &after[eq + 1..];
        // A parameter may have several comma-separated values, each quoted or not.
        loop {
            if let Some(quoted) = tail.strip_prefix('"') {
                let close = quoted.find('"').ok_or_else(|| {
                    cal_err(
                        number,
                        format!("unterminated quote in parameter {key} of {name}"),
                    )
                })?;
                value.push_str(&quoted[..close]);
                tail = &quoted[close + 1..];
            } else {
                let end = tail.find([',', ';', ':']).unwrap_or(tail.len());
                value.push_str(&tail[..end]);
                tail = &tail[end..];
            }
            match tail.strip_prefix(',') {
                Some(next) => {
                    value.push(',');
                    tail = next;
                }
                None => break,
            }
        }
        params.push((key, decode_caret(&value)));
        rest = tail;
    }
    let value = rest.strip_prefix(':').ok_or_else(|| {
        cal_err(
            number,
            format!("property {name} has no ':' before its value"),
        )
    })?;
    Ok(Line {
        number,
        name,
        params,
        value: value.to_string(),
    })
}

fn preview(s: &str) -> String {
    s.chars().take(60).collect()
}

/// RFC 6868 parameter value decoding.
fn decode_caret(s: &str) -> String {
    if !s.contains('^') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '^' {
            match chars.peek() {
                Some('n') => out.push('\n'),
                Some('\'') => out.push('"'),
                Some('^') => out.push('^'),
                _ => {
                    out.push('^');
                    continue;
                }
            }
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}

/// RFC 6868 parameter value encoding.
fn encode_caret(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '^' => out.push_str("^^"),
            '"' => out.push_str("^'"),
            '\n' => out.push_str("^n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Undoes TEXT escaping (RFC 5545 3.3.11). An unknown escape keeps the
/// character without its backslash; a trailing lone backslash is kept.
fn unescape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'N') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// TEXT escaping; `\r\n` and lone `\r` become `\n`.
fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push_str("\\n");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Parses the VEVENTs of an iCalendar text; see the module docs for the
/// rules. `default_tz` is used for floating times and all-day dates.
pub fn parse_ics(text: &str, default_tz: Tz) -> Result<Vec<CalEvent>, FormatError> {
    crate::error::guard("calendar parser", || parse_ics_inner(text, default_tz))?
}

fn parse_ics_inner(text: &str, default_tz: Tz) -> Result<Vec<CalEvent>, FormatError> {
    let lines = unfold(text);
    if lines.is_empty() {
        return Err(cal_err(
            0,
            "the text is empty; an iCalendar file starts with BEGIN:VCALENDAR",
        ));
    }
    let mut events = Vec::new();
    let mut stack: Vec<(String, usize)> = Vec::new();
    // Properties of the VEVENT being read, with its BEGIN line.
    let mut current: Option<(usize, Vec<Line>)> = None;
    let mut saw_component = false;
    for (number, raw) in &lines {
        let line = parse_line(*number, raw)?;
        match line.name.as_str() {
            "BEGIN" => {
                let kind = line.value.trim().to_ascii_uppercase();
                saw_component = true;
                if kind == "VEVENT" && stack.iter().all(|(k, _)| k != "VEVENT") {
                    current = Some((line.number, Vec::new()));
                }
                stack.push((kind, line.number));
            }
            "END" => {
                let kind = line.value.trim().to_ascii_uppercase();
                match stack.pop() {
                    Some((open, _)) if open == kind => {}
                    Some((open, at)) => {
                        return Err(cal_err(
                            line.number,
                            format!(
                                "END:{kind} closes BEGIN:{open} from line {at}; add the missing END:{open}"
                            ),
                        ));
                    }
                    None => {
                        return Err(cal_err(
                            line.number,
                            format!("END:{kind} without a matching BEGIN:{kind}"),
                        ));
                    }
                }
                if kind == "VEVENT"
                    && stack.iter().all(|(k, _)| k != "VEVENT")
                    && let Some((begin, props)) = current.take()
                {
                    events.push(build_event(begin, &props, default_tz)?);
                }
            }
            _ => {
                // Only direct properties of the VEVENT count, not those of
                // its VALARMs.
                if let (Some((_, props)), Some((top, _))) = (current.as_mut(), stack.last())
                    && top == "VEVENT"
                {
                    props.push(line);
                }
            }
        }
    }
    if let Some((open, at)) = stack.last() {
        return Err(cal_err(
            *at,
            format!("BEGIN:{open} is never closed; add END:{open}"),
        ));
    }
    if !saw_component {
        return Err(cal_err(
            0,
            "no BEGIN:VCALENDAR or BEGIN:VEVENT found; this is not iCalendar data",
        ));
    }
    Ok(events)
}

/// A parsed DTSTART/DTEND value.
enum When {
    /// An all-day date, with the zone of its midnight (TZID or the default).
    Date(NaiveDate, Tz),
    Utc(NaiveDateTime),
    Local(NaiveDateTime, Tz),
}

fn parse_when(line: &Line, default_tz: Tz) -> Result<When, FormatError> {
    let v = line.value.trim();
    let bad = || {
        cal_err(
            line.number,
            format!(
                "{} value {:?} is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS, optionally ending in Z)",
                line.name,
                preview(v)
            ),
        )
    };
    let is_date = line
        .param("VALUE")
        .is_some_and(|t| t.eq_ignore_ascii_case("DATE"))
        || (v.len() == 8 && v.bytes().all(|b| b.is_ascii_digit()));
    let tz = match line.param("TZID") {
        Some(tzid) => resolve_tz(tzid, line.number)?,
        None => default_tz,
    };
    if is_date {
        let d = NaiveDate::parse_from_str(v, "%Y%m%d").map_err(|_| bad())?;
        return Ok(When::Date(d, tz));
    }
    let (body, utc) = match v.strip_suffix(['Z', 'z']) {
        Some(b) => (b, true),
        None => (v, false),
    };
    if body.len() != 15 || !body.is_char_boundary(8) || !body[8..].starts_with(['T', 't']) {
        return Err(bad());
    }
    let date = NaiveDate::parse_from_str(&body[..8], "%Y%m%d").map_err(|_| bad())?;
    let time = NaiveTime::parse_from_str(&body[9..], "%H%M%S").map_err(|_| bad())?;
    let naive = date.and_time(time);
    if utc {
        return Ok(When::Utc(naive));
    }
    Ok(When::Local(naive, tz))
}

/// Looks a TZID up in the IANA database. Also accepts the common
/// `/vendor/prefix/Area/City` form by trying its trailing components.
fn resolve_tz(tzid: &str, line: usize) -> Result<Tz, FormatError> {
    let name = tzid.trim().trim_start_matches('/');
    if let Ok(tz) = name.parse::<Tz>() {
        return Ok(tz);
    }
    let parts: Vec<&str> = name.split('/').collect();
    for take in [3, 2] {
        if parts.len() > take {
            let tail = parts[parts.len() - take..].join("/");
            if let Ok(tz) = tail.parse::<Tz>() {
                return Ok(tz);
            }
        }
    }
    Err(FormatError::UnknownTimezone {
        tzid: tzid.to_string(),
        line,
    })
}

/// Local time → UTC following RFC 5545 3.3.5 for gaps and overlaps.
fn local_to_utc(naive: NaiveDateTime, tz: Tz) -> Option<DateTime<Utc>> {
    match tz.from_local_datetime(&naive) {
        LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
        LocalResult::Ambiguous(first, _) => Some(first.with_timezone(&Utc)),
        LocalResult::None => {
            // In a DST gap: use the offset in force just before it.
            (1..=48).find_map(|h| {
                let before = naive.checked_sub_signed(Duration::hours(h))?;
                let offset = tz.from_local_datetime(&before).earliest()?.offset().fix();
                let utc = naive
                    .checked_sub_signed(Duration::seconds(i64::from(offset.local_minus_utc())))?;
                Some(Utc.from_utc_datetime(&utc))
            })
        }
    }
}

fn date_start(date: NaiveDate, tz: Tz) -> Option<DateTime<Utc>> {
    local_to_utc(date.and_time(NaiveTime::MIN), tz)
}

/// A DURATION value (RFC 5545 3.3.6): nominal days/weeks and exact seconds.
struct IcsDuration {
    days: i64,
    seconds: i64,
}

fn parse_duration(line: &Line) -> Result<IcsDuration, FormatError> {
    let v = line.value.trim().to_ascii_uppercase();
    let bad = || {
        cal_err(
            line.number,
            format!(
                "DURATION {:?} is not a positive duration like P1D, PT1H30M or P2W",
                preview(&v)
            ),
        )
    };
    let body = v.strip_prefix('+').unwrap_or(&v);
    let body = body.strip_prefix('P').ok_or_else(bad)?;
    let (mut days, mut seconds) = (0i64, 0i64);
    let mut in_time = false;
    let mut num = String::new();
    let mut any = false;
    for c in body.chars() {
        match c {
            '0'..='9' => num.push(c),
            'T' if !in_time && num.is_empty() => in_time = true,
            'W' | 'D' | 'H' | 'M' | 'S' => {
                let n: i64 = num.parse().map_err(|_| bad())?;
                num.clear();
                any = true;
                let add = |acc: i64, mul: i64| n.checked_mul(mul).and_then(|x| acc.checked_add(x));
                match (c, in_time) {
                    ('W', false) => days = add(days, 7).ok_or_else(bad)?,
                    ('D', false) => days = add(days, 1).ok_or_else(bad)?,
                    ('H', true) => seconds = add(seconds, 3600).ok_or_else(bad)?,
                    ('M', true) => seconds = add(seconds, 60).ok_or_else(bad)?,
                    ('S', true) => seconds = add(seconds, 1).ok_or_else(bad)?,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        }
    }
    if !any || !num.is_empty() || days > 1_000_000 || seconds > 100_000_000_000 {
        return Err(bad());
    }
    Ok(IcsDuration { days, seconds })
}

fn build_event(begin: usize, props: &[Line], default_tz: Tz) -> Result<CalEvent, FormatError> {
    let first = |name: &str| props.iter().find(|l| l.name == name);
    let text = |name: &str| {
        first(name)
            .map(|l| unescape_text(&l.value))
            .unwrap_or_default()
    };
    let summary = text("SUMMARY");
    let uid = match first("UID") {
        Some(l) if !l.value.trim().is_empty() => unescape_text(&l.value),
        _ => {
            return Err(FormatError::MissingUid {
                summary,
                line: begin,
            });
        }
    };
    let name = if summary.is_empty() {
        uid.clone()
    } else {
        summary.clone()
    };

    let dtstart = first("DTSTART").ok_or_else(|| {
        cal_err(
            begin,
            format!("the event {name:?} has no DTSTART; add e.g. DTSTART:20240315T090000Z"),
        )
    })?;
    let tzid = dtstart.param("TZID").map(str::to_string);
    let out_of_range = |l: &Line| {
        cal_err(
            l.number,
            format!("{} of event {name:?} cannot be represented", l.name),
        )
    };
    // Resolves a DTSTART/DTEND value to (instant, zone for nominal days, all-day date).
    let resolve = |l: &Line| -> Result<(DateTime<Utc>, Tz, Option<NaiveDate>), FormatError> {
        match parse_when(l, default_tz)? {
            When::Date(d, tz) => Ok((
                date_start(d, tz).ok_or_else(|| out_of_range(l))?,
                tz,
                Some(d),
            )),
            When::Utc(n) => Ok((Utc.from_utc_datetime(&n), Tz::UTC, None)),
            When::Local(n, tz) => Ok((
                local_to_utc(n, tz).ok_or_else(|| out_of_range(l))?,
                tz,
                None,
            )),
        }
    };
    let (start, start_tz, start_date) = resolve(dtstart)?;
    let all_day = start_date.is_some();

    let end = if let Some(dtend) = first("DTEND") {
        resolve(dtend)?.0
    } else if let Some(dur) = first("DURATION") {
        let d = parse_duration(dur)?;
        let shifted = if d.days == 0 {
            Some(start)
        } else if let Some(date) = start_date {
            date.checked_add_days(chrono::Days::new(d.days.unsigned_abs()))
                .and_then(|nd| date_start(nd, start_tz))
        } else {
            let local = start.with_timezone(&start_tz).naive_local();
            local
                .checked_add_days(chrono::Days::new(d.days.unsigned_abs()))
                .and_then(|nd| local_to_utc(nd, start_tz))
        };
        shifted
            .and_then(|s| s.checked_add_signed(Duration::seconds(d.seconds)))
            .ok_or_else(|| out_of_range(dur))?
    } else if let Some(date) = start_date {
        date.succ_opt()
            .and_then(|d| date_start(d, start_tz))
            .ok_or_else(|| out_of_range(dtstart))?
    } else {
        start
    };
    if end < start {
        return Err(cal_err(
            begin,
            format!(
                "the event {name:?} ends ({end}) before it starts ({start}); fix DTEND or DURATION"
            ),
        ));
    }

    let organizer = first("ORGANIZER")
        .map(|l| strip_mailto(&l.value))
        .filter(|e| !e.is_empty());
    let attendees = props
        .iter()
        .filter(|l| l.name == "ATTENDEE")
        .filter_map(|l| {
            let email = strip_mailto(&l.value);
            if email.is_empty() {
                return None;
            }
            Some(Attendee {
                email,
                name: l
                    .param("CN")
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string),
                status: l
                    .param("PARTSTAT")
                    .map(|s| s.trim().to_ascii_uppercase())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "NEEDS-ACTION".to_string()),
            })
        })
        .collect();
    let status = first("STATUS")
        .map(|l| l.value.trim().to_ascii_uppercase())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "CONFIRMED".to_string());
    let sequence = match first("SEQUENCE") {
        Some(l) => l.value.trim().parse::<u32>().map_err(|_| {
            cal_err(
                l.number,
                format!(
                    "SEQUENCE {:?} is not a non-negative integer",
                    preview(&l.value)
                ),
            )
        })?,
        None => 0,
    };

    Ok(CalEvent {
        uid,
        summary,
        description: text("DESCRIPTION"),
        location: text("LOCATION"),
        start,
        end,
        all_day,
        tzid,
        organizer,
        attendees,
        status,
        sequence,
    })
}

fn strip_mailto(value: &str) -> String {
    let v = value.trim();
    let v = match v.get(..7) {
        Some(p) if p.eq_ignore_ascii_case("mailto:") => &v[7..],
        _ => v,
    };
    v.trim().to_lowercase()
}

/// Writes events as a VCALENDAR. See the module docs for the format and the
/// round-trip guarantee. `prodid` is written as the PRODID (escaped).
pub fn write_ics(events: &[CalEvent], prodid: &str) -> String {
    let mut out = String::new();
    let mut line = |s: String| fold_into(&mut out, &s);
    line("BEGIN:VCALENDAR".into());
    line("VERSION:2.0".into());
    line(format!("PRODID:{}", escape_text(prodid)));
    line("CALSCALE:GREGORIAN".into());
    for ev in events {
        line("BEGIN:VEVENT".into());
        line(format!("UID:{}", escape_text(&ev.uid)));
        line(format!("DTSTAMP:{}", utc_stamp(ev.start)));
        if ev.all_day {
            let tz = ev.tzid.as_deref().and_then(|t| resolve_tz(t, 0).ok());
            line(format!("DTSTART;VALUE=DATE:{}", all_day_date(ev.start, tz)));
            line(format!("DTEND;VALUE=DATE:{}", all_day_date(ev.end, tz)));
        } else {
            line(format!("DTSTART:{}", utc_stamp(ev.start)));
            line(format!("DTEND:{}", utc_stamp(ev.end)));
        }
        line(format!("SUMMARY:{}", escape_text(&ev.summary)));
        if !ev.description.is_empty() {
            line(format!("DESCRIPTION:{}", escape_text(&ev.description)));
        }
        if !ev.location.is_empty() {
            line(format!("LOCATION:{}", escape_text(&ev.location)));
        }
        if let Some(org) = ev.organizer.as_deref().filter(|o| !o.is_empty()) {
            line(format!("ORGANIZER:mailto:{}", strip_newlines(org)));
        }
        for a in &ev.attendees {
            let mut s = String::from("ATTENDEE");
            if let Some(name) = a.name.as_deref().filter(|n| !n.is_empty()) {
                s.push_str(&format!(";CN=\"{}\"", encode_caret(name)));
            }
            s.push_str(&format!(
                ";PARTSTAT={}:mailto:{}",
                param_token(&a.status),
                strip_newlines(&a.email)
            ));
            line(s);
        }
        line(format!("STATUS:{}", param_token(&ev.status)));
        line(format!("SEQUENCE:{}", ev.sequence));
        line("END:VEVENT".into());
    }
    line("END:VCALENDAR".into());
    out
}

fn strip_newlines(s: &str) -> String {
    s.chars().filter(|&c| c != '\r' && c != '\n').collect()
}

/// A status value reduced to the characters a parameter/token may hold.
fn param_token(s: &str) -> String {
    let t: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect::<String>()
        .to_ascii_uppercase();
    if t.is_empty() {
        "NEEDS-ACTION".into()
    } else {
        t
    }
}

fn utc_stamp(t: DateTime<Utc>) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// The calendar date of an all-day boundary. With a known zone it is the
/// local date there; otherwise the UTC date twelve hours later, which is
/// the right local date for any zone between UTC−11 and UTC+12.
fn all_day_date(t: DateTime<Utc>, tz: Option<Tz>) -> String {
    let date = match tz {
        Some(tz) => t.with_timezone(&tz).date_naive(),
        None => t
            .checked_add_signed(Duration::hours(12))
            .unwrap_or(t)
            .date_naive(),
    };
    format!("{:04}{:02}{:02}", date.year(), date.month(), date.day())
}

/// Appends `s` as CRLF-terminated content lines of at most 75 octets,
/// never splitting a UTF-8 character.
fn fold_into(out: &mut String, s: &str) {
    let mut budget = 75;
    let mut used = 0;
    for c in s.chars() {
        let len = c.len_utf8();
        if used + len > budget {
            out.push_str("\r\n ");
            budget = 74;
            used = 0;
        }
        out.push(c);
        used += len;
    }
    out.push_str("\r\n");
}

#[cfg(test)]
mod tests;
