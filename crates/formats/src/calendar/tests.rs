use super::*;
use chrono_tz::America::New_York;
use chrono_tz::Europe::Berlin;

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn ics(body: &str) -> String {
    format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n")
}

fn one(body: &str, tz: Tz) -> CalEvent {
    let events = parse_ics(&ics(body), tz).unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    events.into_iter().next().unwrap()
}

fn event(uid: &str) -> CalEvent {
    CalEvent {
        uid: uid.into(),
        summary: "Budget review".into(),
        description: "Line one\nLine two; with, punctuation \\ backslash".into(),
        location: "Room 4, HQ".into(),
        start: utc("2024-03-15T13:00:00Z"),
        end: utc("2024-03-15T14:30:00Z"),
        all_day: false,
        tzid: None,
        organizer: Some("dana@x.test".into()),
        attendees: vec![
            Attendee {
                email: "sam@x.test".into(),
                name: Some("Lee, \"Sam\"".into()),
                status: "ACCEPTED".into(),
            },
            Attendee {
                email: "ops@x.test".into(),
                name: None,
                status: "NEEDS-ACTION".into(),
            },
        ],
        status: "CONFIRMED".into(),
        sequence: 2,
    }
}

#[test]
fn full_event_with_everything() {
    let e = one(
        "BEGIN:VEVENT\r\nUID:abc-1@x.test\r\nDTSTAMP:20240301T000000Z\r\nSUMMARY:Budget review\\, Q3\r\nDESCRIPTION:Bring numbers\\nand \\;coffee\\\\tea\r\nLOCATION:Room 4\r\nDTSTART:20240315T130000Z\r\nDTEND:20240315T143000Z\r\nORGANIZER;CN=Dana:MAILTO:Dana@X.test\r\nATTENDEE;CN=\"Lee, Sam\";PARTSTAT=accepted;ROLE=REQ-PARTICIPANT:mailto:SAM@x.test\r\nATTENDEE;RSVP=TRUE:mailto:ops@x.test\r\nSTATUS:tentative\r\nSEQUENCE:3\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:alarm text must not leak\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\nEND:VEVENT\r\n",
        New_York,
    );
    assert_eq!(e.uid, "abc-1@x.test");
    assert_eq!(e.summary, "Budget review, Q3");
    assert_eq!(e.description, "Bring numbers\nand ;coffee\\tea");
    assert_eq!(e.location, "Room 4");
    assert_eq!(e.start, utc("2024-03-15T13:00:00Z"));
    assert_eq!(e.end, utc("2024-03-15T14:30:00Z"));
    assert!(!e.all_day);
    assert_eq!(e.tzid, None);
    assert_eq!(e.organizer.as_deref(), Some("dana@x.test"));
    assert_eq!(
        e.attendees,
        vec![
            Attendee {
                email: "sam@x.test".into(),
                name: Some("Lee, Sam".into()),
                status: "ACCEPTED".into()
            },
            Attendee {
                email: "ops@x.test".into(),
                name: None,
                status: "NEEDS-ACTION".into()
            },
        ]
    );
    assert_eq!(e.status, "TENTATIVE");
    assert_eq!(e.sequence, 3);
}

#[test]
fn defaults_for_missing_properties() {
    let e = one(
        "BEGIN:VEVENT\r\nUID:u\r\nDTSTART:20240315T130000Z\r\nEND:VEVENT\r\n",
        Tz::UTC,
    );
    assert_eq!(e.summary, "");
    assert_eq!(e.description, "");
    assert_eq!(e.end, e.start);
    assert_eq!(e.status, "CONFIRMED");
    assert_eq!(e.sequence, 0);
    assert_eq!(e.organizer, None);
    assert!(e.attendees.is_empty());
}

#[test]
fn folded_lines_are_unfolded() {
    let e = one(
        "BEGIN:VEVENT\r\nUID:fold\r\nDTSTART:20240315T130000Z\r\nDESCRIPTION:This is a lo\r\n ng description\r\n\tthat spans three lines\r\nSUMMARY:caf\r\n é\r\nEND:VEVENT\r\n",
        Tz::UTC,
    );
    assert_eq!(
        e.description,
        "This is a long descriptionthat spans three lines"
    );
    assert_eq!(e.summary, "café");
    // LF-only files too.
    let lf = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:lf\nDTSTART:20240315T130000Z\nSUMMARY:a\n b\nEND:VEVENT\nEND:VCALENDAR\n";
    assert_eq!(parse_ics(lf, Tz::UTC).unwrap()[0].summary, "ab");
}

#[test]
fn tzid_new_york_across_dst() {
    // 2024-03-10 02:00 EST -> EDT. Before: UTC-5, after: UTC-4.
    let before = one(
        "BEGIN:VEVENT\r\nUID:a\r\nDTSTART;TZID=America/New_York:20240309T090000\r\nDTEND;TZID=America/New_York:20240309T100000\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(before.start, utc("2024-03-09T14:00:00Z"));
    assert_eq!(before.end, utc("2024-03-09T15:00:00Z"));
    assert_eq!(before.tzid.as_deref(), Some("America/New_York"));
    let after = one(
        "BEGIN:VEVENT\r\nUID:b\r\nDTSTART;TZID=\"America/New_York\":20240311T090000\r\nDURATION:PT1H\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(after.start, utc("2024-03-11T13:00:00Z"));
    assert_eq!(after.end, utc("2024-03-11T14:00:00Z"));
    // A nominal day across the change is 23 hours long.
    let across = one(
        "BEGIN:VEVENT\r\nUID:c\r\nDTSTART;TZID=America/New_York:20240309T090000\r\nDURATION:P1D\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(across.end, utc("2024-03-10T13:00:00Z"));
    // 02:30 does not exist on 2024-03-10: read with the offset before the gap.
    let gap = one(
        "BEGIN:VEVENT\r\nUID:d\r\nDTSTART;TZID=America/New_York:20240310T023000\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(gap.start, utc("2024-03-10T07:30:00Z"));
    // 01:30 happens twice on 2024-11-03: the first (EDT) one.
    let twice = one(
        "BEGIN:VEVENT\r\nUID:e\r\nDTSTART;TZID=America/New_York:20241103T013000\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(twice.start, utc("2024-11-03T05:30:00Z"));
    // Vendor-prefixed TZIDs resolve by their Area/City tail.
    let prefixed = one(
        "BEGIN:VEVENT\r\nUID:f\r\nDTSTART;TZID=/mozilla.org/20050126_1/America/New_York:20240701T090000\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(prefixed.start, utc("2024-07-01T13:00:00Z"));
}

#[test]
fn floating_times_use_the_default_zone() {
    let body = "BEGIN:VEVENT\r\nUID:f\r\nDTSTART:20240701T090000\r\nDTEND:20240701T093000\r\nEND:VEVENT\r\n";
    let ny = one(body, New_York);
    assert_eq!(ny.start, utc("2024-07-01T13:00:00Z"));
    assert_eq!(ny.tzid, None);
    let berlin = one(body, Berlin);
    assert_eq!(berlin.start, utc("2024-07-01T07:00:00Z"));
    assert_eq!(berlin.end, utc("2024-07-01T07:30:00Z"));
}

#[test]
fn all_day_events() {
    let e = one(
        "BEGIN:VEVENT\r\nUID:a\r\nDTSTART;VALUE=DATE:20240315\r\nEND:VEVENT\r\n",
        New_York,
    );
    assert!(e.all_day);
    assert_eq!(e.start, utc("2024-03-15T04:00:00Z"));
    assert_eq!(e.end, utc("2024-03-16T04:00:00Z"));
    let multi = one(
        "BEGIN:VEVENT\r\nUID:b\r\nDTSTART;VALUE=DATE:20240308\r\nDTEND;VALUE=DATE:20240311\r\nEND:VEVENT\r\n",
        New_York,
    );
    assert_eq!(multi.start, utc("2024-03-08T05:00:00Z"));
    assert_eq!(multi.end, utc("2024-03-11T04:00:00Z"));
    // The day of the DST change is 23 hours long in local terms.
    let dst = one(
        "BEGIN:VEVENT\r\nUID:c\r\nDTSTART:20240310\r\nEND:VEVENT\r\n",
        New_York,
    );
    assert_eq!(dst.end - dst.start, Duration::hours(23));
    let dur = one(
        "BEGIN:VEVENT\r\nUID:d\r\nDTSTART;VALUE=DATE:20240315\r\nDURATION:P2D\r\nEND:VEVENT\r\n",
        Berlin,
    );
    assert_eq!(dur.start, utc("2024-03-14T23:00:00Z"));
    assert_eq!(dur.end, utc("2024-03-16T23:00:00Z"));
}

#[test]
fn durations() {
    let end = |d: &str| {
        one(
            &format!("BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20240315T130000Z\r\nDURATION:{d}\r\nEND:VEVENT\r\n"),
            Tz::UTC,
        )
        .end
    };
    assert_eq!(end("PT30M"), utc("2024-03-15T13:30:00Z"));
    assert_eq!(
        end("P1H".replace("P1H", "PT1H").as_str()),
        utc("2024-03-15T14:00:00Z")
    );
    assert_eq!(end("P1D"), utc("2024-03-16T13:00:00Z"));
    assert_eq!(end("P1W"), utc("2024-03-22T13:00:00Z"));
    assert_eq!(end("P1DT2H3M4S"), utc("2024-03-16T15:03:04Z"));
    assert_eq!(end("+PT0S"), utc("2024-03-15T13:00:00Z"));
    for bad in [
        "-PT1H",
        "P",
        "PT",
        "1H",
        "P1H",
        "PT1D",
        "P1.5D",
        "P99999999999999999999D",
        "P1Y",
    ] {
        let err = parse_ics(
            &ics(&format!("BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20240315T130000Z\r\nDURATION:{bad}\r\nEND:VEVENT\r\n")),
            Tz::UTC,
        )
        .unwrap_err();
        assert!(err.to_string().contains("DURATION"), "{bad}: {err}");
    }
}

#[test]
fn missing_uid_names_the_event() {
    let err = parse_ics(
        &ics("BEGIN:VEVENT\r\nSUMMARY:Budget review\r\nDTSTART:20240315T130000Z\r\nEND:VEVENT\r\n"),
        Tz::UTC,
    )
    .unwrap_err();
    assert_eq!(
        err,
        FormatError::MissingUid {
            summary: "Budget review".into(),
            line: 4
        }
    );
    let msg = err.to_string();
    assert!(
        msg.contains("\"Budget review\"") && msg.contains("UID"),
        "{msg}"
    );
}

#[test]
fn unknown_tzid_is_named() {
    let err = parse_ics(
        &ics("BEGIN:VEVENT\r\nUID:x\r\nDTSTART;TZID=Eastern Standard Time:20240315T130000\r\nEND:VEVENT\r\n"),
        Tz::UTC,
    )
    .unwrap_err();
    assert_eq!(
        err,
        FormatError::UnknownTimezone {
            tzid: "Eastern Standard Time".into(),
            line: 6
        }
    );
    assert!(err.to_string().contains("Eastern Standard Time"));
}

#[test]
fn malformed_calendars_give_clear_errors() {
    let cases: &[(&str, &str)] = &[
        ("", "empty"),
        ("just some prose", "not a \"NAME:value\" line"),
        ("SUMMARY:no components\r\n", "not iCalendar"),
        (
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nDTSTART:20240315T130000Z\r\n",
            "never closed",
        ),
        (
            "BEGIN:VCALENDAR\r\nEND:VEVENT\r\n",
            "closes BEGIN:VCALENDAR",
        ),
        ("END:VCALENDAR\r\n", "without a matching"),
        (
            "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            "no DTSTART",
        ),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:2024-03-15\r\nEND:VEVENT\r\n",
            "not a date",
        ),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20241345T250000Z\r\nEND:VEVENT\r\n",
            "not a date",
        ),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20240315T130000Z\r\nDTEND:20240315T120000Z\r\nEND:VEVENT\r\n",
            "before it starts",
        ),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20240315T130000Z\r\nSEQUENCE:-1\r\nEND:VEVENT\r\n",
            "SEQUENCE",
        ),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nATTENDEE;CN=\"open:mailto:a@b\r\nEND:VEVENT\r\n",
            "unterminated quote",
        ),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nATTENDEE;CN:mailto:a@b\r\nEND:VEVENT\r\n",
            "without '='",
        ),
        ("BEGIN:VEVENT\r\n:value\r\nEND:VEVENT\r\n", "property name"),
        (
            "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:2024031ÄT130000Z\r\nEND:VEVENT\r\n",
            "not a date",
        ),
    ];
    for (text, fragment) in cases {
        let err = parse_ics(text, Tz::UTC).unwrap_err().to_string();
        assert!(err.contains(fragment), "{text:?}: {err}");
    }
}

#[test]
fn hostile_input_does_not_crash() {
    let deep = "BEGIN:X\r\n".repeat(200_000);
    assert!(
        parse_ics(&deep, Tz::UTC)
            .unwrap_err()
            .to_string()
            .contains("never closed")
    );
    let long = format!(
        "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:20240315T130000Z\r\nSUMMARY:{}\r\nEND:VEVENT\r\n",
        "a".repeat(5_000_000)
    );
    assert_eq!(
        parse_ics(&long, Tz::UTC).unwrap()[0].summary.len(),
        5_000_000
    );
    let _ = parse_ics("\u{feff}\r\n \r\n\t\r\n", Tz::UTC);
    let _ = parse_ics(
        "BEGIN:VEVENT\r\nUID:x\r\nDTSTART:99991231T235959Z\r\nDURATION:P999999D\r\nEND:VEVENT\r\n",
        Tz::UTC,
    );
    let _ = parse_ics(
        "BEGIN:VEVENT\r\nUID:x\r\nDTSTART;VALUE=DATE:99991231\r\nEND:VEVENT\r\n",
        Tz::UTC,
    );
}

#[test]
fn vtimezone_and_other_components_are_ignored() {
    let events = parse_ics(
        &ics("BEGIN:VTIMEZONE\r\nTZID:America/New_York\r\nBEGIN:STANDARD\r\nDTSTART:19701101T020000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\nBEGIN:VTODO\r\nUID:todo\r\nEND:VTODO\r\nBEGIN:VEVENT\r\nUID:one\r\nDTSTART:20240315T130000Z\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:two\r\nDTSTART:20240316T130000Z\r\nEND:VEVENT\r\n"),
        Tz::UTC,
    )
    .unwrap();
    assert_eq!(
        events.iter().map(|e| e.uid.as_str()).collect::<Vec<_>>(),
        ["one", "two"]
    );
    assert!(parse_ics(&ics(""), Tz::UTC).unwrap().is_empty());
}

#[test]
fn write_ics_format() {
    let mut e = event("uid,1;x");
    e.summary = "Ü".repeat(60);
    let text = write_ics(&[e.clone()], "-//Bureau//EN");
    assert!(text.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Bureau//EN\r\n"));
    assert!(text.ends_with("END:VEVENT\r\nEND:VCALENDAR\r\n"));
    assert!(text.contains("UID:uid\\,1\\;x\r\n"));
    assert!(text.contains("DTSTAMP:20240315T130000Z\r\n"));
    assert!(text.contains("DTSTART:20240315T130000Z\r\nDTEND:20240315T143000Z\r\n"));
    assert!(
        text.contains("DESCRIPTION:Line one\\nLine two\\; with\\, punctuation \\\\ backslash\r\n")
    );
    assert!(text.contains("ATTENDEE;CN=\"Lee, ^'Sam^'\";PARTSTAT=ACCEPTED:mailto:sam@x.test\r\n"));
    for line in text.split("\r\n") {
        assert!(line.len() <= 75, "{line:?} is {} octets", line.len());
        assert!(!line.contains('\n') && !line.contains('\r'));
    }
    assert_eq!(text, write_ics(&[e], "-//Bureau//EN"));

    let mut day = event("day");
    day.all_day = true;
    day.start = utc("2024-03-15T04:00:00Z");
    day.end = utc("2024-03-16T04:00:00Z");
    let text = write_ics(&[day], "p");
    assert!(text.contains("DTSTART;VALUE=DATE:20240315\r\nDTEND;VALUE=DATE:20240316\r\n"));
}

#[test]
fn write_then_parse_round_trips() {
    let mut day = event("day");
    day.all_day = true;
    day.start = utc("2024-03-14T23:00:00Z");
    day.end = utc("2024-03-16T23:00:00Z");
    day.tzid = None;
    let mut tokyo_day = event("tokyo");
    tokyo_day.all_day = true;
    tokyo_day.tzid = Some("Asia/Tokyo".into());
    tokyo_day.start = utc("2024-03-14T15:00:00Z");
    tokyo_day.end = utc("2024-03-15T15:00:00Z");
    let mut with_tz = event("tz");
    with_tz.tzid = Some("America/New_York".into());
    let events = vec![event("a"), day, with_tz];
    let back = parse_ics(&write_ics(&events, "p"), Berlin).unwrap();
    let expected: Vec<CalEvent> = events
        .into_iter()
        .map(|e| CalEvent { tzid: None, ..e })
        .collect();
    assert_eq!(back, expected);
    // With a TZID naming the zone, even a UTC+9 all-day date survives when
    // read with that zone as the default.
    let back = parse_ics(
        &write_ics(std::slice::from_ref(&tokyo_day), "p"),
        chrono_tz::Asia::Tokyo,
    )
    .unwrap();
    assert_eq!(
        back,
        vec![CalEvent {
            tzid: None,
            ..tokyo_day
        }]
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    const ZONES: &[Tz] = &[
        Tz::UTC,
        New_York,
        Berlin,
        chrono_tz::Asia::Kolkata,
        chrono_tz::Australia::Sydney,
        chrono_tz::Pacific::Honolulu,
        chrono_tz::Asia::Tokyo,
        chrono_tz::America::St_Johns,
    ];

    fn text() -> impl Strategy<Value = String> {
        "[^\r]{0,120}"
    }

    fn attendee() -> impl Strategy<Value = Attendee> {
        (
            "[a-z0-9._-]{1,10}@[a-z]{1,8}\\.test",
            proptest::option::of("[^\\p{C}]{1,30}".prop_map(|s| s.trim().to_string()))
                .prop_map(|n| n.filter(|n| !n.is_empty())),
            prop_oneof![
                Just("NEEDS-ACTION"),
                Just("ACCEPTED"),
                Just("DECLINED"),
                Just("TENTATIVE")
            ],
        )
            .prop_map(|(email, name, status)| Attendee {
                email,
                name,
                status: status.to_string(),
            })
    }

    fn cal_event(zone: Tz) -> impl Strategy<Value = CalEvent> {
        (
            "[^\r]{1,80}".prop_filter("uid needs a visible character", |s| !s.trim().is_empty()),
            (text(), text(), text()),
            any::<bool>(),
            (0i64..4_000_000_000, 0i64..2_000_000, 0u64..30),
            proptest::option::of("[a-z0-9.]{1,10}@[a-z]{1,8}\\.test"),
            proptest::collection::vec(attendee(), 0..4),
            prop_oneof![Just("CONFIRMED"), Just("TENTATIVE"), Just("CANCELLED")],
            any::<u32>(),
        )
            .prop_map(
                move |(
                    uid,
                    (summary, description, location),
                    all_day,
                    (secs, len, days),
                    organizer,
                    attendees,
                    status,
                    sequence,
                )| {
                    let (start, end) = if all_day {
                        let date = DateTime::from_timestamp(secs, 0).unwrap().date_naive();
                        let end_date = date.checked_add_days(chrono::Days::new(days)).unwrap();
                        (
                            date_start(date, zone).unwrap(),
                            date_start(end_date, zone).unwrap(),
                        )
                    } else {
                        let start = DateTime::from_timestamp(secs, 0).unwrap();
                        (start, start + Duration::seconds(len))
                    };
                    CalEvent {
                        uid,
                        summary,
                        description,
                        location,
                        start,
                        end,
                        all_day,
                        tzid: None,
                        organizer,
                        attendees,
                        status: status.to_string(),
                        sequence,
                    }
                },
            )
    }

    fn zone_and_events() -> impl Strategy<Value = (Tz, Vec<CalEvent>)> {
        proptest::sample::select(ZONES)
            .prop_flat_map(|zone| (Just(zone), proptest::collection::vec(cal_event(zone), 0..4)))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn round_trip((zone, events) in zone_and_events(), prodid in text()) {
            let written = write_ics(&events, &prodid);
            prop_assert_eq!(&written, &write_ics(&events, &prodid));
            for line in written.split("\r\n") {
                prop_assert!(line.len() <= 75);
            }
            let back = parse_ics(&written, zone).unwrap();
            prop_assert_eq!(back, events);
        }

        #[test]
        fn parse_never_panics(s in "(BEGIN:VEVENT\r\n|END:VEVENT\r\n|UID:x\r\n|DTSTART[;:A-Z=/_]{0,20}[0-9TZ]{0,16}\r\n|DURATION:[PTDHMSW0-9+-]{0,8}\r\n| |\\PC{0,10}\r\n){0,30}") {
            let _ = parse_ics(&s, New_York);
        }

        #[test]
        fn parse_never_panics_on_arbitrary_text(s in "\\PC{0,300}") {
            let _ = parse_ics(&s, Berlin);
        }
    }
}
