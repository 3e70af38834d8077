//! Mail, calendar and contacts: .eml, .mbox, .ics, .vcf.

use super::*;

pub(super) fn addr(c: &Company, i: usize) -> Address {
    let p = c.person(i);
    Address {
        name: Some(p.name.clone()),
        email: p.email.clone(),
    }
}

pub(super) fn mail_as(
    id: &str,
    mails: &[Mail],
    c: &Company,
    f: &FileCtx,
) -> Result<Vec<u8>, GenError> {
    let mut out = Vec::new();
    for m in mails {
        let om = OutgoingMail {
            from: addr(c, m.from),
            to: m.to.iter().map(|i| addr(c, *i)).collect(),
            cc: m.cc.iter().map(|i| addr(c, *i)).collect(),
            bcc: vec![],
            subject: m.subject.clone(),
            text: m.body.clone(),
            date: Utc.from_utc_datetime(&m.at).fixed_offset(),
            message_id: m.id.clone(),
            in_reply_to: m.in_reply_to.clone(),
            references: m.in_reply_to.iter().cloned().collect(),
            attachments: vec![],
        };
        let bytes = build_eml(&om).map_err(|e| fail(f.path, e))?;
        if id == "mbox" {
            out.extend_from_slice(
                format!(
                    "From {} {}\n",
                    c.person(m.from).email,
                    m.at.format("%a %b %e %H:%M:%S %Y")
                )
                .as_bytes(),
            );
            // mboxrd: quote body lines starting with "From ", use LF line ends.
            let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
            for line in text.lines() {
                if line.trim_start_matches('>').starts_with("From ") {
                    out.push(b'>');
                }
                out.extend_from_slice(line.as_bytes());
                out.push(b'\n');
            }
            out.push(b'\n');
        } else {
            out = bytes;
        }
    }
    Ok(out)
}

pub(super) fn ics(events: &[Event], c: &Company) -> String {
    use bureau_formats::calendar::{Attendee, CalEvent, write_ics};
    let evs: Vec<CalEvent> = events
        .iter()
        .map(|e| {
            let start = Utc.from_utc_datetime(&e.start);
            CalEvent {
                uid: e.uid.clone(),
                summary: e.summary.clone(),
                description: e.description.clone(),
                location: e.location.clone(),
                start,
                end: start + chrono::Duration::minutes(e.minutes),
                all_day: false,
                tzid: None,
                organizer: Some(c.person(e.organizer).email.clone()),
                attendees: e
                    .attendees
                    .iter()
                    .map(|i| Attendee {
                        email: c.person(*i).email.clone(),
                        name: Some(c.person(*i).name.clone()),
                        status: "ACCEPTED".into(),
                    })
                    .collect(),
                status: "CONFIRMED".into(),
                sequence: 0,
            }
        })
        .collect();
    write_ics(&evs, &format!("-//{}//Workspace//EN", c.name))
}

pub(super) fn vcf(people: &[usize], c: &Company) -> String {
    let esc = |s: &str| {
        s.replace('\\', "\\\\")
            .replace(',', "\\,")
            .replace(';', "\\;")
    };
    let mut s = String::new();
    for i in people {
        let p = c.person(*i);
        s.push_str("BEGIN:VCARD\r\nVERSION:3.0\r\n");
        s.push_str(&format!("N:{};{};;;\r\n", esc(&p.last), esc(&p.first)));
        s.push_str(&format!("FN:{}\r\n", esc(&p.name)));
        s.push_str(&format!("ORG:{};{}\r\n", esc(c.name), esc(&p.department)));
        s.push_str(&format!("TITLE:{}\r\n", esc(&p.title)));
        s.push_str(&format!("EMAIL;TYPE=INTERNET,WORK:{}\r\n", p.email));
        s.push_str(&format!("TEL;TYPE=WORK,VOICE:{}\r\n", p.phone));
        s.push_str("END:VCARD\r\n");
    }
    s
}
