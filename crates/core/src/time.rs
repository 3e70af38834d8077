//! World time: turn clocks and datetimes written in task files.
//!
//! A task has one IANA time zone (`timezone = "Europe/Berlin"`, default UTC). Datetimes in task
//! files may carry an offset (`2026-03-02T09:00:00+01:00`) or be local
//! (`2026-03-02T09:00:00`, `2026-03-02 09:00`), in which case they are read in the task's zone.

use chrono::{DateTime, FixedOffset, NaiveDate, NaiveDateTime, TimeZone};
use chrono_tz::Tz;

/// The world's clock type: an instant with the offset it is shown in.
pub type WorldTime = DateTime<FixedOffset>;

/// The office's date and time as every agent is told it: local date, time, zone and offset,
/// e.g. `Tuesday 3 March 2026, 09:00 (Europe/Berlin, UTC+01:00)`. The one spelling shared by
/// the `llm` agent's prompts, the harnesses' prompts and the MCP server's instructions, so an
/// agent's "today" is always the world's, never the machine's.
pub fn office_time(t: &WorldTime, tz: Tz) -> String {
    let local = t.with_timezone(&tz);
    format!(
        "{} ({}, UTC{})",
        local.format("%A %-d %B %Y, %H:%M"),
        tz.name(),
        local.format("%:z")
    )
}

/// The line that opens each turn's prompt: `Office time: <office_time>`, then a blank line.
pub fn turn_preamble(t: &WorldTime, tz: Tz) -> String {
    format!("Office time: {}\n\n", office_time(t, tz))
}

/// Parse a datetime written in a task file. Returns a message on failure.
pub fn parse_world_time(text: &str, tz: Tz) -> Result<WorldTime, String> {
    let t = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(dt);
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%:z",
        "%Y-%m-%d %H:%M%:z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(t, fmt) {
            return Ok(dt);
        }
    }
    let naive = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())
    .or_else(|| {
        NaiveDate::parse_from_str(t, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
    });
    match naive {
        Some(n) => local_to_world(n, tz).ok_or_else(|| {
            format!("`{t}` does not exist in time zone {tz} (a daylight-saving gap)")
        }),
        None => Err(format!(
            "`{t}` is not a datetime; write e.g. 2026-03-02T09:00:00 (task time zone) or 2026-03-02T09:00:00+01:00"
        )),
    }
}

/// A local wall-clock time in `tz` as a world time (earliest instant if ambiguous).
pub fn local_to_world(naive: NaiveDateTime, tz: Tz) -> Option<WorldTime> {
    tz.from_local_datetime(&naive)
        .earliest()
        .map(|dt| dt.fixed_offset())
}

/// Parse an IANA time zone name.
pub fn parse_tz(name: &str) -> Result<Tz, String> {
    name.parse::<Tz>().map_err(|_| {
        format!("`{name}` is not an IANA time zone; write e.g. \"Europe/Berlin\" or \"UTC\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn office_time_names_the_local_day_zone_and_offset() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let t = parse_world_time("2026-03-03T08:00:00Z", tz).unwrap();
        assert_eq!(
            office_time(&t, tz),
            "Tuesday 3 March 2026, 09:00 (Europe/Berlin, UTC+01:00)"
        );
        let summer = parse_world_time("2026-07-01 18:30", tz).unwrap();
        assert_eq!(
            turn_preamble(&summer, tz),
            "Office time: Wednesday 1 July 2026, 18:30 (Europe/Berlin, UTC+02:00)\n\n"
        );
    }

    #[test]
    fn local_times_take_the_task_zone_and_dst() {
        let tz = parse_tz("Europe/Berlin").unwrap();
        assert_eq!(
            parse_world_time("2026-03-02T09:00:00", tz)
                .unwrap()
                .to_rfc3339(),
            "2026-03-02T09:00:00+01:00"
        );
        assert_eq!(
            parse_world_time("2026-07-02 09:00", tz)
                .unwrap()
                .to_rfc3339(),
            "2026-07-02T09:00:00+02:00"
        );
        assert_eq!(
            parse_world_time("2026-07-02T09:00:00Z", tz)
                .unwrap()
                .to_rfc3339(),
            "2026-07-02T09:00:00+00:00"
        );
        assert!(parse_world_time("2026-03-29T02:30:00", tz).is_err());
        assert!(parse_world_time("tomorrow", tz).is_err());
        assert!(parse_tz("Mars/Olympus").is_err());
    }
}
