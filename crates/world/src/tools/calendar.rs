//! calendar_* tools: the acting person's own calendar (the user's for the agent, the colleague's
//! for an `act` event); attendees' copies follow when they have a calendar in the world.
//!
//! Authority follows the event's organizer, as in every real calendar: only the organizer
//! changes an event, invites to it or cancels it for everyone. An attendee answers it
//! (`calendar_respond`: accepted, declined, tentative) or takes it off their own calendar
//! (`calendar_respond` with `remove`); anything else is a tool error that names the organizer
//! and changes nothing. An event without an organizer belongs to the calendar it is in.

use bureau_core::log::Actor;
use bureau_formats::calendar::{Attendee, CalEvent};
use chrono::{DateTime, Datelike, Duration, NaiveTime, Utc, Weekday};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Tool, ToolResult, boolean, integer, parse, schema, show_time, string, strings, time_arg,
};
use crate::World;
use crate::calendar::{CANCELLED, is_cancelled};

pub(super) const LIST: Tool = Tool {
    name: "calendar_list",
    description: "List events of your calendar, optionally between two datetimes. Times are shown in the office time zone.",
    schema: || {
        schema(
            &[
                ("from", string("Start of the range (ISO 8601)")),
                ("to", string("End of the range (ISO 8601)")),
                (
                    "include_cancelled",
                    boolean("Also list cancelled events (default false)"),
                ),
            ],
            &[],
        )
    },
    run: list,
};
pub(super) const CREATE: Tool = Tool {
    name: "calendar_create",
    description: "Create an event in your calendar; attendees are invited.",
    schema: || {
        schema(
            &[
                ("summary", string("Title")),
                (
                    "start",
                    string("Start (ISO 8601; without offset = office time zone)"),
                ),
                ("end", string("End (ISO 8601)")),
                ("description", string("Details")),
                ("location", string("Place or meeting link")),
                ("attendees", strings("Addresses to invite")),
            ],
            &["summary", "start", "end"],
        )
    },
    run: create,
};
pub(super) const UPDATE: Tool = Tool {
    name: "calendar_update",
    description: "Change an event you organize; attendees' copies are updated. Attendees cannot change an event: they answer it with calendar_respond.",
    schema: || {
        schema(
            &[
                ("uid", string("Event uid")),
                ("summary", string("New title")),
                ("start", string("New start")),
                ("end", string("New end")),
                ("description", string("New details")),
                ("location", string("New place")),
            ],
            &["uid"],
        )
    },
    run: update,
};
pub(super) const DELETE: Tool = Tool {
    name: "calendar_delete",
    description: "Cancel an event you organize: it leaves your calendar and attendees' copies are cancelled. To drop an event someone else organizes, use calendar_respond with response=declined and remove=true.",
    schema: || schema(&[("uid", string("Event uid"))], &["uid"]),
    run: delete,
};
pub(super) const INVITE: Tool = Tool {
    name: "calendar_invite",
    description: "Invite more people to an event you organize.",
    schema: || {
        schema(
            &[
                ("uid", string("Event uid")),
                ("attendees", strings("Addresses to invite")),
            ],
            &["uid", "attendees"],
        )
    },
    run: invite,
};
pub(super) const RESPOND: Tool = Tool {
    name: "calendar_respond",
    description: "Answer an invitation in your calendar (an event someone else organizes): accepted, declined or tentative; the organizer's and the other attendees' copies show your answer. With remove=true (only with declined) the event also leaves your own calendar.",
    schema: || {
        schema(
            &[
                ("uid", string("Event uid")),
                (
                    "response",
                    string("Your answer: accepted, declined or tentative"),
                ),
                (
                    "remove",
                    boolean(
                        "Also remove the event from your own calendar (only with declined; default false)",
                    ),
                ),
            ],
            &["uid", "response"],
        )
    },
    run: respond,
};
pub(super) const FREE_SLOTS: Tool = Tool {
    name: "calendar_free_slots",
    description: "Find times when you and the given attendees are all free, within working hours on weekdays.",
    schema: || {
        schema(
            &[
                ("from", string("Start of the search range (ISO 8601)")),
                ("to", string("End of the search range")),
                ("duration_minutes", integer("Minimum length of a slot")),
                (
                    "attendees",
                    strings("Addresses whose calendars must be free too"),
                ),
                (
                    "work_start",
                    string("Start of the working day, HH:MM (default 09:00)"),
                ),
                (
                    "work_end",
                    string("End of the working day, HH:MM (default 17:00)"),
                ),
            ],
            &["from", "to", "duration_minutes"],
        )
    },
    run: free_slots,
};

fn show(w: &World, e: &CalEvent) -> Value {
    json!({
        "uid": e.uid, "url": w.url_of(crate::urls::Kind::CalendarEvent, &e.uid),
        "summary": e.summary, "start": show_time(w, e.start), "end": show_time(w, e.end),
        "location": e.location, "description": e.description, "organizer": e.organizer,
        "attendees": e.attendees.iter().map(|a| json!({"email": a.email, "status": a.status})).collect::<Vec<_>>(),
        "status": e.status, "all_day": e.all_day,
    })
}

fn own_event(w: &World, me: &str, uid: &str) -> Result<CalEvent, String> {
    w.calendar
        .get(me, uid)
        .cloned()
        .ok_or_else(|| format!("no event `{uid}` in your calendar; use calendar_list to find uids"))
}

/// Who organizes `ev` as it stands in `owner`'s calendar: its ORGANIZER, else the owner (an
/// event without an organizer is the owner's own).
fn organizer_of(ev: &CalEvent, owner: &str) -> String {
    ev.organizer
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .unwrap_or(owner)
        .to_lowercase()
}

/// An event of `me`'s calendar that `me` organizes, for a change of the event itself (`what`:
/// "change", "cancel", "invite people to"). For an event someone else organizes, a tool error
/// that names the organizer and what an attendee can do instead.
fn organized_event(w: &World, me: &str, uid: &str, what: &str) -> Result<CalEvent, String> {
    let ev = own_event(w, me, uid)?;
    let organizer = organizer_of(&ev, me);
    if organizer != me.to_lowercase() {
        return Err(format!(
            "`{uid}` is organized by {organizer}: only the organizer can {what} it for everyone, and nothing was changed. \
As an attendee you can answer it with calendar_respond (response accepted, declined or tentative), \
or take it off your own calendar with calendar_respond {{uid, response: \"declined\", remove: true}}; \
to ask for a change, write to {organizer}"
        ));
    }
    Ok(ev)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    from: Option<String>,
    to: Option<String>,
    #[serde(default)]
    include_cancelled: bool,
}

fn list(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ListArgs = parse("calendar_list", args)?;
    let me = w.acting_email(actor)?;
    let from = a
        .from
        .as_deref()
        .map(|s| time_arg(w, "from", s))
        .transpose()?
        .map(|t| t.with_timezone(&Utc));
    let to =
        a.to.as_deref()
            .map(|s| time_arg(w, "to", s))
            .transpose()?
            .map(|t| t.with_timezone(&Utc));
    let events: Vec<Value> = w
        .calendar
        .events(&me)
        .into_iter()
        .filter(|e| a.include_cancelled || !is_cancelled(e))
        .filter(|e| {
            from.is_none_or(|f| e.end > f || (e.start == e.end && e.start >= f))
                && to.is_none_or(|t| e.start < t)
        })
        .map(|e| show(w, e))
        .collect();
    Ok(json!({"events": events}))
}

fn check_addresses(list: &[String]) -> Result<Vec<String>, String> {
    list.iter()
        .map(|s| {
            bureau_formats::mail::Address::parse(s)
                .map(|a| a.email)
                .map_err(|e| format!("`attendees`: {e}"))
        })
        .collect()
}

/// Put a copy of `ev` (organized by `me`) into each attendee's calendar that exists in the world.
fn sync_attendees(w: &mut World, me: &str, ev: &CalEvent) -> Vec<String> {
    let mut synced = Vec::new();
    for att in &ev.attendees {
        if att.email.eq_ignore_ascii_case(me) || !w.calendar.has_calendar(&att.email) {
            continue;
        }
        let cal = w.calendar.ensure(&att.email);
        let mut copy = ev.clone();
        // Keep each attendee's own answers.
        if let Some(old) = cal.get(&ev.uid) {
            for a in &mut copy.attendees {
                if let Some(prev) = old.attendees.iter().find(|p| p.email == a.email) {
                    a.status = prev.status.clone();
                }
            }
        }
        cal.insert(ev.uid.clone(), copy);
        synced.push(att.email.clone());
    }
    synced
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    summary: String,
    start: String,
    end: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    location: String,
    #[serde(default)]
    attendees: Vec<String>,
}

fn create(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: CreateArgs = parse("calendar_create", args)?;
    let me = w.acting_email(actor)?;
    if a.summary.trim().is_empty() {
        return Err("`summary` is empty; give the event a title".into());
    }
    let start = time_arg(w, "start", &a.start)?.with_timezone(&Utc);
    let end = time_arg(w, "end", &a.end)?.with_timezone(&Utc);
    if end <= start {
        return Err("`end` must be after `start`".into());
    }
    let mut emails = check_addresses(&a.attendees)?;
    emails.dedup();
    w.calendar.created += 1;
    let uid = format!("evt-{}@bureau", w.calendar.created);
    let ev = CalEvent {
        uid: uid.clone(),
        summary: a.summary,
        description: a.description,
        location: a.location,
        start,
        end,
        all_day: false,
        tzid: None,
        organizer: Some(me.clone()),
        attendees: emails
            .iter()
            .map(|e| Attendee {
                email: e.clone(),
                name: None,
                status: "NEEDS-ACTION".into(),
            })
            .collect(),
        status: "CONFIRMED".into(),
        sequence: 0,
    };
    w.calendar.ensure(&me).insert(uid.clone(), ev.clone());
    let synced = sync_attendees(w, &me, &ev);
    w.record(actor.clone(), "calendar", "create", false, json!({"uid": uid, "summary": ev.summary, "start": show_time(w, start), "end": show_time(w, end), "attendees": emails, "invited_calendars": synced}));
    let url = w.url_of(crate::urls::Kind::CalendarEvent, &uid);
    Ok(json!({"uid": uid, "url": url}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    uid: String,
    summary: Option<String>,
    start: Option<String>,
    end: Option<String>,
    description: Option<String>,
    location: Option<String>,
}

fn update(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: UpdateArgs = parse("calendar_update", args)?;
    let me = w.acting_email(actor)?;
    let mut ev = organized_event(w, &me, &a.uid, "change")?;
    if let Some(s) = a.summary {
        ev.summary = s;
    }
    if let Some(s) = a.description {
        ev.description = s;
    }
    if let Some(s) = a.location {
        ev.location = s;
    }
    if let Some(s) = &a.start {
        ev.start = time_arg(w, "start", s)?.with_timezone(&Utc);
    }
    if let Some(s) = &a.end {
        ev.end = time_arg(w, "end", s)?.with_timezone(&Utc);
    }
    if ev.end < ev.start {
        return Err("after this change the event would end before it starts".into());
    }
    ev.sequence += 1;
    w.calendar.ensure(&me).insert(ev.uid.clone(), ev.clone());
    sync_attendees(w, &me, &ev);
    w.record(actor.clone(), "calendar", "update", false, json!({"uid": ev.uid, "summary": ev.summary, "start": show_time(w, ev.start), "end": show_time(w, ev.end)}));
    Ok(json!({"uid": ev.uid}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UidArg {
    uid: String,
}

fn delete(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: UidArg = parse("calendar_delete", args)?;
    let me = w.acting_email(actor)?;
    let ev = organized_event(w, &me, &a.uid, "cancel")?;
    w.calendar.ensure(&me).remove(&a.uid);
    let mut cancelled = Vec::new();
    for att in &ev.attendees {
        if let Some(copy) = w.calendar.get_mut(&att.email, &a.uid) {
            copy.status = CANCELLED.into();
            copy.sequence += 1;
            cancelled.push(att.email.clone());
        }
    }
    w.record(
        actor.clone(),
        "calendar",
        "delete",
        false,
        json!({"uid": a.uid, "summary": ev.summary, "cancelled_for": cancelled}),
    );
    Ok(json!({"uid": a.uid}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InviteArgs {
    uid: String,
    attendees: Vec<String>,
}

fn invite(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: InviteArgs = parse("calendar_invite", args)?;
    let me = w.acting_email(actor)?;
    let mut ev = organized_event(w, &me, &a.uid, "invite people to")?;
    if is_cancelled(&ev) {
        return Err(format!("event `{}` is cancelled", a.uid));
    }
    let emails = check_addresses(&a.attendees)?;
    if emails.is_empty() {
        return Err("`attendees` is empty".into());
    }
    let mut added = Vec::new();
    for e in emails {
        if !ev.attendees.iter().any(|x| x.email == e) {
            ev.attendees.push(Attendee {
                email: e.clone(),
                name: None,
                status: "NEEDS-ACTION".into(),
            });
            added.push(e);
        }
    }
    ev.sequence += 1;
    w.calendar.ensure(&me).insert(ev.uid.clone(), ev.clone());
    sync_attendees(w, &me, &ev);
    w.record(
        actor.clone(),
        "calendar",
        "invite",
        false,
        json!({"uid": ev.uid, "added": added}),
    );
    let all: Vec<&str> = ev.attendees.iter().map(|x| x.email.as_str()).collect();
    Ok(json!({"uid": ev.uid, "attendees": all}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RespondArgs {
    uid: String,
    response: String,
    #[serde(default)]
    remove: bool,
}

fn respond(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: RespondArgs = parse("calendar_respond", args)?;
    let me = w.acting_email(actor)?.to_lowercase();
    let status = match a.response.trim().to_ascii_lowercase().as_str() {
        "accepted" | "accept" => "ACCEPTED",
        "declined" | "decline" => "DECLINED",
        "tentative" => "TENTATIVE",
        _ => {
            return Err(format!(
                "`response` must be accepted, declined or tentative, not `{}`",
                a.response
            ));
        }
    };
    if a.remove && status != "DECLINED" {
        return Err(
            "`remove` takes the event off your calendar and so declines it: give response=declined with remove=true".into(),
        );
    }
    let ev = own_event(w, &me, &a.uid)?;
    let organizer = organizer_of(&ev, &me);
    if organizer == me {
        return Err(format!(
            "you organize `{}`: answers are for attendees. Change it with calendar_update or cancel it with calendar_delete",
            a.uid
        ));
    }
    // Your answer shows in every copy of the event in the world: yours, the organizer's and
    // the other attendees'.
    let mut answered = Vec::new();
    for owner in w.calendar.users() {
        if let Some(copy) = w.calendar.get_mut(&owner, &a.uid) {
            let mut found = false;
            for att in &mut copy.attendees {
                if att.email.eq_ignore_ascii_case(&me) {
                    att.status = status.to_string();
                    found = true;
                }
            }
            if !found && owner == me {
                copy.attendees.push(Attendee {
                    email: me.clone(),
                    name: None,
                    status: status.to_string(),
                });
                found = true;
            }
            if found {
                answered.push(owner);
            }
        }
    }
    if a.remove {
        w.calendar.ensure(&me).remove(&a.uid);
    }
    w.record(
        actor.clone(),
        "calendar",
        "respond",
        false,
        json!({"uid": a.uid, "summary": ev.summary, "organizer": organizer, "response": status,
            "removed": a.remove, "updated_calendars": answered}),
    );
    Ok(json!({"uid": a.uid, "response": status, "organizer": organizer, "removed": a.remove}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlotArgs {
    from: String,
    to: String,
    duration_minutes: u32,
    #[serde(default)]
    attendees: Vec<String>,
    #[serde(default = "nine")]
    work_start: String,
    #[serde(default = "five")]
    work_end: String,
}
fn nine() -> String {
    "09:00".into()
}
fn five() -> String {
    "17:00".into()
}

fn hhmm(field: &str, s: &str) -> Result<NaiveTime, String> {
    NaiveTime::parse_from_str(s.trim(), "%H:%M")
        .map_err(|_| format!("`{field}` must be HH:MM, e.g. 09:00"))
}

fn free_slots(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SlotArgs = parse("calendar_free_slots", args)?;
    let from = time_arg(w, "from", &a.from)?.with_timezone(&Utc);
    let to = time_arg(w, "to", &a.to)?.with_timezone(&Utc);
    if to <= from {
        return Err("`to` must be after `from`".into());
    }
    if to - from > Duration::days(62) {
        return Err("the range is longer than 62 days; search a shorter range".into());
    }
    if a.duration_minutes == 0 {
        return Err("`duration_minutes` must be at least 1".into());
    }
    let ws = hhmm("work_start", &a.work_start)?;
    let we = hhmm("work_end", &a.work_end)?;
    if we <= ws {
        return Err("`work_end` must be after `work_start`".into());
    }
    let tz = w.timezone;
    let mut people = vec![w.acting_email(actor)?];
    let mut unknown = Vec::new();
    for e in check_addresses(&a.attendees)? {
        if w.calendar.has_calendar(&e) {
            people.push(e);
        } else {
            unknown.push(e);
        }
    }
    let mut busy: Vec<(DateTime<Utc>, DateTime<Utc>)> = Vec::new();
    for p in &people {
        for e in w.calendar.busy(p, from, to) {
            busy.push((e.start, e.end));
        }
    }
    busy.sort();
    let need = Duration::minutes(a.duration_minutes as i64);
    let mut slots = Vec::new();
    let mut day = from.with_timezone(&tz).date_naive();
    let last = to.with_timezone(&tz).date_naive();
    while day <= last && slots.len() < 50 {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            let open = bureau_core::time::local_to_world(day.and_time(ws), tz)
                .map(|t| t.with_timezone(&Utc));
            let close = bureau_core::time::local_to_world(day.and_time(we), tz)
                .map(|t| t.with_timezone(&Utc));
            if let (Some(open), Some(close)) = (open, close) {
                let mut cursor = open.max(from);
                let end = close.min(to);
                for (bs, be) in &busy {
                    if *be <= cursor || *bs >= end {
                        continue;
                    }
                    if *bs > cursor && *bs - cursor >= need {
                        slots.push((cursor, *bs));
                    }
                    cursor = cursor.max(*be);
                }
                if end > cursor && end - cursor >= need {
                    slots.push((cursor, end));
                }
            }
        }
        match day.succ_opt() {
            Some(d) => day = d,
            None => break,
        }
    }
    slots.truncate(50);
    let shown: Vec<Value> = slots
        .iter()
        .map(|(s, e)| json!({"start": show_time(w, *s), "end": show_time(w, *e)}))
        .collect();
    Ok(json!({"slots": shown, "checked": people, "unknown_attendees": unknown}))
}
