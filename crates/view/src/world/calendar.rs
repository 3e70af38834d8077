//! Calendars: events added, changed (which fields), cancelled and deleted per calendar owner,
//! and week grids (days × events, the changed ones marked) around the turn.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, Offset, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use super::anchor::object_anchor;
use super::diff::{FieldChange, json_diff, obj, rest_diff, text};

/// At most this many week grids per turn.
pub const MAX_WEEKS: usize = 4;

/// One event of one calendar that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventChange {
    /// The calendars that saw this same change.
    pub owners: Vec<String>,
    pub uid: String,
    /// `event-<uid>` for the first entry of the uid, `event-<owner>/<uid>` (its first
    /// owner) for others (a change that differs between calendars).
    pub anchor: String,
    /// `added`, `changed`, `cancelled` or `deleted` (also the CSS class).
    pub status: &'static str,
    pub summary: String,
    /// Local time of the turn's clock: `Thu 12 Mar 2026 10:00–12:00`.
    pub when: String,
    /// Where it was before, when it moved.
    pub was: Option<String>,
    pub location: String,
    pub fields: Vec<FieldChange>,
}

/// One event drawn in a week grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeekEvent {
    pub uid: String,
    /// The anchor of its change entry (for a link), when it changed.
    pub link: Option<String>,
    pub summary: String,
    /// `10:00–12:00`, or `all day`.
    pub time: String,
    pub owners: Vec<String>,
    /// `added`, `changed`, `cancelled`, `deleted` (a deleted event, or where a moved event
    /// was: `moved` is then true) or "" (unchanged).
    pub mark: &'static str,
    pub moved: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Day {
    pub date: String,
    /// `Mon 9 Mar`.
    pub label: String,
    /// The day of the turn's clock.
    pub today: bool,
    pub events: Vec<WeekEvent>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Week {
    /// `Week of Mon 9 Mar 2026`.
    pub label: String,
    pub days: Vec<Day>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CalendarChanges {
    pub events: Vec<EventChange>,
    /// Weeks of the turn's clock and of every changed event (old and new place), at most
    /// [`MAX_WEEKS`], in the clock's UTC offset; none when no calendar holds an event.
    pub weeks: Vec<Week>,
    /// The UTC offset the grid and times are shown in.
    pub offset: String,
    pub other: Vec<FieldChange>,
}

impl CalendarChanges {
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.other.is_empty()
    }
}

#[derive(Clone)]
struct Ev {
    uid: String,
    summary: String,
    start: Option<DateTime<Utc>>,
    end: Option<DateTime<Utc>>,
    all_day: bool,
    cancelled: bool,
}

fn ev(uid: &str, v: &Value) -> Ev {
    let t = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|d| d.with_timezone(&Utc))
    };
    Ev {
        uid: uid.to_string(),
        summary: text(v, "summary"),
        start: t("start"),
        end: t("end"),
        all_day: v.get("all_day").and_then(Value::as_bool).unwrap_or(false),
        cancelled: text(v, "status").eq_ignore_ascii_case("CANCELLED"),
    }
}

fn when(e: &Ev, tz: &FixedOffset) -> String {
    let Some(s) = e.start else {
        return "(no valid start)".into();
    };
    let s = s.with_timezone(tz);
    if e.all_day {
        return format!("{} (all day)", s.format("%a %-d %b %Y"));
    }
    let end = e.end.map(|x| x.with_timezone(tz));
    match end {
        Some(x) if x.date_naive() == s.date_naive() => {
            format!("{}–{}", s.format("%a %-d %b %Y %H:%M"), x.format("%H:%M"))
        }
        Some(x) => format!(
            "{} – {}",
            s.format("%a %-d %b %Y %H:%M"),
            x.format("%a %-d %b %H:%M")
        ),
        None => s.format("%a %-d %b %Y %H:%M").to_string(),
    }
}

fn calendars(v: Option<&Value>) -> &Map<String, Value> {
    obj(v, "calendars")
}

/// Compares two calendar states (`services.calendar`); `clock` is the turn's world time.
pub(crate) fn diff_calendar(
    old: Option<&Value>,
    new: Option<&Value>,
    clock: Option<DateTime<FixedOffset>>,
) -> CalendarChanges {
    let tz = clock.map(|c| *c.offset()).unwrap_or_else(|| Utc.fix());
    let (a, b) = (calendars(old), calendars(new));
    let owners: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let mut out = CalendarChanges {
        offset: tz.to_string(),
        ..Default::default()
    };
    let mut anchored: BTreeSet<String> = BTreeSet::new();
    // uid → (mark, anchor) for the grid; uid → old event where it moved or went.
    let mut marks: BTreeMap<String, (&'static str, String)> = BTreeMap::new();
    let mut ghosts: BTreeMap<String, (Ev, Vec<String>, &'static str)> = BTreeMap::new();
    let mut weeks: BTreeSet<NaiveDate> = BTreeSet::new();
    let empty = Map::new();
    for owner in owners {
        let (x, y) = (
            a.get(owner).and_then(Value::as_object).unwrap_or(&empty),
            b.get(owner).and_then(Value::as_object).unwrap_or(&empty),
        );
        let uids: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
        for uid in uids {
            let (p, q) = (x.get(uid), y.get(uid));
            if p == q {
                continue;
            }
            let (pe, qe) = (p.map(|v| ev(uid, v)), q.map(|v| ev(uid, v)));
            let status = match (&pe, &qe) {
                (None, Some(e)) if e.cancelled => "cancelled",
                (None, Some(_)) => "added",
                (Some(_), None) => "deleted",
                (Some(o), Some(n)) if n.cancelled && !o.cancelled => "cancelled",
                _ => "changed",
            };
            let mut fields = Vec::new();
            json_diff("", p, q, &[], &mut fields);
            marks
                .entry(uid.clone())
                .or_insert((status, object_anchor("event", uid)));
            for e in [&pe, &qe].into_iter().flatten() {
                if let Some(s) = e.start {
                    weeks.insert(monday(s.with_timezone(&tz).date_naive()));
                }
            }
            if let (Some(o), n) = (&pe, &qe) {
                let moved = n
                    .as_ref()
                    .is_some_and(|n| (n.start, n.end) != (o.start, o.end));
                if moved || n.is_none() {
                    let g = ghosts.entry(uid.clone()).or_insert((
                        o.clone(),
                        Vec::new(),
                        if moved { "moved" } else { "deleted" },
                    ));
                    g.1.push(owner.clone());
                }
            }
            // The same change in several calendars (an organiser's update reaches every
            // attendee's copy) is one entry naming them all.
            if let Some(same) = out
                .events
                .iter_mut()
                .find(|e| e.uid == *uid && e.status == status && e.fields == fields)
            {
                same.owners.push(owner.clone());
                continue;
            }
            let anchor = if anchored.insert(uid.clone()) {
                object_anchor("event", uid)
            } else {
                object_anchor("event", &format!("{owner}/{uid}"))
            };
            let shown = qe.as_ref().or(pe.as_ref());
            let was = match (&pe, &qe) {
                (Some(o), Some(n)) if (o.start, o.end) != (n.start, n.end) => Some(when(o, &tz)),
                _ => None,
            };
            let loc = q.or(p).map(|v| text(v, "location")).unwrap_or_default();
            out.events.push(EventChange {
                owners: vec![owner.clone()],
                uid: uid.clone(),
                anchor,
                status,
                summary: shown.map(|e| e.summary.clone()).unwrap_or_default(),
                when: shown.map(|e| when(e, &tz)).unwrap_or_default(),
                was,
                location: loc,
                fields,
            });
        }
    }
    if let Some(c) = clock {
        weeks.insert(monday(c.date_naive()));
    }
    let today = clock.map(|c| c.date_naive());
    // Every event of the new state, once per uid, with the calendars holding it.
    let mut live: BTreeMap<String, (Ev, Vec<String>)> = BTreeMap::new();
    for (owner, events) in b {
        if let Some(events) = events.as_object() {
            for (uid, v) in events {
                live.entry(uid.clone())
                    .or_insert_with(|| (ev(uid, v), Vec::new()))
                    .1
                    .push(owner.clone());
            }
        }
    }
    if live.is_empty() && ghosts.is_empty() {
        // No event in any calendar: no grid to draw.
        weeks.clear();
    }
    for monday in weeks.into_iter().take(MAX_WEEKS) {
        let mut days = Vec::new();
        for i in 0..7 {
            let date = monday + Duration::days(i);
            let mut events: Vec<(Option<DateTime<Utc>>, WeekEvent)> = Vec::new();
            let on_day = |e: &Ev| {
                let (Some(s), end) = (e.start, e.end) else {
                    return false;
                };
                let s = s.with_timezone(&tz).date_naive();
                let last = end
                    .map(|x| {
                        let x = x.with_timezone(&tz);
                        // An end at midnight (exclusive) ends the day before.
                        let d = x.date_naive();
                        if x.time() == chrono::NaiveTime::MIN && d > s {
                            d.pred_opt().unwrap_or(d)
                        } else {
                            d
                        }
                    })
                    .unwrap_or(s);
                s <= date && date <= last
            };
            for (uid, (e, owners)) in &live {
                if on_day(e) {
                    let (mark, link) = match marks.get(uid) {
                        Some((m, l)) => (*m, Some(l.clone())),
                        None if e.cancelled => ("cancelled", None),
                        None => ("", None),
                    };
                    events.push((e.start, week_event(e, owners, mark, link, false, &tz)));
                }
            }
            for (uid, (e, owners, kind)) in &ghosts {
                if on_day(e) {
                    let link = marks.get(uid).map(|(_, l)| l.clone());
                    events.push((
                        e.start,
                        week_event(e, owners, "deleted", link, *kind == "moved", &tz),
                    ));
                }
            }
            events.sort_by(|x, y| (x.0, &x.1.uid, x.1.moved).cmp(&(y.0, &y.1.uid, y.1.moved)));
            days.push(Day {
                date: date.to_string(),
                label: date.format("%a %-d %b").to_string(),
                today: Some(date) == today,
                events: events.into_iter().map(|(_, e)| e).collect(),
            });
        }
        out.weeks.push(Week {
            label: format!("Week of {}", monday.format("%a %-d %b %Y")),
            days,
        });
    }
    out.other = rest_diff("calendar", old, new, &["calendars", "created"]);
    out
}

fn week_event(
    e: &Ev,
    owners: &[String],
    mark: &'static str,
    link: Option<String>,
    moved: bool,
    tz: &FixedOffset,
) -> WeekEvent {
    let time = match (e.all_day, e.start, e.end) {
        (true, _, _) => "all day".to_string(),
        (false, Some(s), Some(x)) => format!(
            "{}–{}",
            s.with_timezone(tz).format("%H:%M"),
            x.with_timezone(tz).format("%H:%M")
        ),
        (false, Some(s), None) => s.with_timezone(tz).format("%H:%M").to_string(),
        _ => String::new(),
    };
    WeekEvent {
        uid: e.uid.clone(),
        link,
        summary: e.summary.clone(),
        time,
        owners: owners.to_vec(),
        mark,
        moved,
    }
}

fn monday(d: NaiveDate) -> NaiveDate {
    d - Duration::days(d.weekday().num_days_from_monday() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(start: &str, end: &str, status: &str) -> Value {
        json!({"uid": "u1", "summary": "Visit", "location": "Delft", "start": start, "end": end,
               "all_day": false, "status": status, "sequence": 0, "attendees": []})
    }

    #[test]
    fn a_moved_event_is_changed_and_drawn_twice() {
        let old = json!({"calendars": {"a@x.test": {"u1": event("2026-03-12T09:00:00Z", "2026-03-12T11:00:00Z", "CONFIRMED")}}, "created": 0});
        let new = json!({"calendars": {"a@x.test": {"u1": event("2026-03-18T08:30:00Z", "2026-03-18T10:30:00Z", "CONFIRMED")}}, "created": 0});
        let clock = DateTime::parse_from_rfc3339("2026-03-11T09:00:00+01:00").ok();
        let c = diff_calendar(Some(&old), Some(&new), clock);
        assert_eq!(c.events.len(), 1);
        let e = &c.events[0];
        assert_eq!((e.status, e.anchor.as_str()), ("changed", "event-u1"));
        assert_eq!(e.when, "Wed 18 Mar 2026 09:30–11:30");
        assert_eq!(e.was.as_deref(), Some("Thu 12 Mar 2026 10:00–12:00"));
        let paths: Vec<_> = e.fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["end", "start"]);
        assert_eq!(
            c.weeks.len(),
            2,
            "the clock's week (with the old place) and the new one"
        );
        let thursday = &c.weeks[0].days[3];
        assert_eq!(thursday.label, "Thu 12 Mar");
        assert_eq!(
            (thursday.events[0].mark, thursday.events[0].moved),
            ("deleted", true)
        );
        assert!(c.weeks[0].days[2].today);
        let wednesday = &c.weeks[1].days[2];
        assert_eq!(wednesday.events[0].mark, "changed");
        assert_eq!(wednesday.events[0].time, "09:30–11:30");
        assert_eq!(wednesday.events[0].link.as_deref(), Some("event-u1"));
    }

    #[test]
    fn cancelled_and_deleted() {
        let old = json!({"calendars": {"a@x.test": {"u1": event("2026-03-12T09:00:00Z", "2026-03-12T11:00:00Z", "CONFIRMED")},
                                       "b@x.test": {"u1": event("2026-03-12T09:00:00Z", "2026-03-12T11:00:00Z", "CONFIRMED")}}});
        let new = json!({"calendars": {"a@x.test": {"u1": event("2026-03-12T09:00:00Z", "2026-03-12T11:00:00Z", "CANCELLED")},
                                       "b@x.test": {}}});
        let c = diff_calendar(Some(&old), Some(&new), None);
        assert_eq!(c.weeks.len(), 1, "the week of the cancelled event");
        let got: Vec<_> = c
            .events
            .iter()
            .map(|e| (e.owners.join(","), e.status, e.anchor.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a@x.test".to_string(), "cancelled", "event-u1".to_string()),
                (
                    "b@x.test".to_string(),
                    "deleted",
                    object_anchor("event", "b@x.test/u1")
                )
            ]
        );
    }
}

#[cfg(test)]
mod no_calendar {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_events_no_grid() {
        let clock = DateTime::parse_from_rfc3339("2026-03-11T09:00:00+01:00").ok();
        let empty = json!({"calendars": {}, "created": 0});
        let c = diff_calendar(Some(&empty), Some(&empty), clock);
        assert!(c.weeks.is_empty() && c.is_empty());
    }
}
