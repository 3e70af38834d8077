//! Calendars: one per user, events keyed by UID. Times are stored in UTC; the task's time zone
//! is used to read and show local times. Seeded from and exported to iCalendar (.ics).

use std::collections::BTreeMap;

use bureau_formats::calendar::CalEvent;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub const CANCELLED: &str = "CANCELLED";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CalendarState {
    pub(crate) calendars: BTreeMap<String, BTreeMap<String, CalEvent>>,
    /// Counter for UIDs of events the agent creates (`evt-<n>@bureau`).
    pub(crate) created: u64,
}

impl CalendarState {
    /// Calendar owners, sorted.
    pub fn users(&self) -> Vec<String> {
        self.calendars.keys().cloned().collect()
    }

    pub fn has_calendar(&self, user: &str) -> bool {
        self.calendars.contains_key(&user.to_lowercase())
    }

    /// A user's events (cancelled ones included), sorted by start then UID.
    pub fn events(&self, user: &str) -> Vec<&CalEvent> {
        let mut v: Vec<&CalEvent> = self
            .calendars
            .get(&user.to_lowercase())
            .map(|c| c.values().collect())
            .unwrap_or_default();
        v.sort_by(|a, b| (a.start, &a.uid).cmp(&(b.start, &b.uid)));
        v
    }

    /// A user's live (not cancelled) events overlapping `[from, to)`.
    pub fn busy(&self, user: &str, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<&CalEvent> {
        self.events(user)
            .into_iter()
            .filter(|e| !is_cancelled(e) && e.start < to && e.end > from)
            .collect()
    }

    pub fn get(&self, user: &str, uid: &str) -> Option<&CalEvent> {
        self.calendars
            .get(&user.to_lowercase())
            .and_then(|c| c.get(uid))
    }

    pub(crate) fn ensure(&mut self, user: &str) -> &mut BTreeMap<String, CalEvent> {
        self.calendars.entry(user.to_lowercase()).or_default()
    }

    pub(crate) fn get_mut(&mut self, user: &str, uid: &str) -> Option<&mut CalEvent> {
        self.calendars
            .get_mut(&user.to_lowercase())
            .and_then(|c| c.get_mut(uid))
    }

    /// Pairs of live events of `user` that overlap, within `[from, to)` when given.
    pub fn overlaps(
        &self,
        user: &str,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
    ) -> Vec<(&CalEvent, &CalEvent)> {
        let evs: Vec<&CalEvent> = self
            .events(user)
            .into_iter()
            .filter(|e| !is_cancelled(e) && !e.all_day)
            .filter(|e| from.is_none_or(|f| e.end > f) && to.is_none_or(|t| e.start < t))
            .collect();
        let mut out = Vec::new();
        for (i, a) in evs.iter().enumerate() {
            for b in &evs[i + 1..] {
                if b.start >= a.end {
                    // sorted by start: later ones may still overlap `a` only if they start before a.end
                    continue;
                }
                if a.start < b.end && b.start < a.end {
                    out.push((*a, *b));
                }
            }
        }
        out
    }

    /// Write each user's calendar as `dir/<user>.ics`.
    pub fn export_ics(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for user in self.calendars.keys() {
            let evs: Vec<CalEvent> = self.events(user).into_iter().cloned().collect();
            let text = bureau_formats::calendar::write_ics(&evs, "-//Bureau//World//EN");
            std::fs::write(dir.join(format!("{user}.ics")), text)?;
        }
        Ok(())
    }
}

pub fn is_cancelled(e: &CalEvent) -> bool {
    e.status.eq_ignore_ascii_case(CANCELLED)
}
