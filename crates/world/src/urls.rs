//! Stable URLs of world objects: what a task's prompt can cite ("fix
//! https://code.brightwater.test/sensor-fw/-/issues/12") and what tools accept wherever they
//! take the object's id.
//!
//! The office's hosts are `<service>.<domain of the task user's email>`; the paths follow
//! GitLab (code) and Plane (tracker), whose URLs TheAgentCompany's prompts cite:
//!
//! | object | URL |
//! | --- | --- |
//! | repository | `https://code.<domain>/<repo>` |
//! | repository issue | `https://code.<domain>/<repo>/-/issues/<n>` |
//! | merge request | `https://code.<domain>/<repo>/-/merge_requests/<n>` |
//! | commit | `https://code.<domain>/<repo>/-/commit/<sha>` |
//! | wiki page | `https://code.<domain>/<repo>/-/wikis/<title>` |
//! | tracker issue | `https://tracker.<domain>/<PROJECT>/issues/<KEY>` |
//! | mail message | `https://mail.<domain>/message/<id>` |
//! | calendar event | `https://calendar.<domain>/event/<uid>` |
//! | chat channel / message | `https://chat.<domain>/channel/<name>`, `…/message/<id>` |
//! | knowledge-base page / database / row | `https://kb.<domain>/page/<id>`, `…/database/<id>`, `…/database/<id>/row/<id>` |
//!
//! A workspace file is named by its path, which is already stable.
//!
//! Reading is lenient about everything but the path, so URLs copied from the original
//! services of imported tasks work too: any scheme and host (`http://the-agent-company.com:8929`),
//! a namespace before the repository (`root/sotopia` is repository `sotopia`), a trailing `/`,
//! a query or a fragment.

use serde_json::Value;

/// The office's domain: the part after `@` of the task user's email, lower-case.
pub fn office_domain(user_email: &str) -> String {
    match user_email.rsplit_once('@') {
        Some((_, d)) if !d.trim().is_empty() => d.trim().to_ascii_lowercase(),
        _ => "office.test".to_string(),
    }
}

/// `https://<service>.<domain>`.
pub fn service_base(service: &str, user_email: &str) -> String {
    format!("https://{service}.{}", office_domain(user_email))
}

/// What a code-hosting URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRef {
    Repo(String),
    Issue(String, u32),
    MergeRequest(String, u32),
    Commit(String, String),
    Wiki(String, String),
}

impl CodeRef {
    pub fn repo(&self) -> &str {
        match self {
            CodeRef::Repo(r)
            | CodeRef::Issue(r, _)
            | CodeRef::MergeRequest(r, _)
            | CodeRef::Commit(r, _)
            | CodeRef::Wiki(r, _) => r,
        }
    }

    /// The URL of this object under `base` (`https://code.<domain>`).
    pub fn url(&self, base: &str) -> String {
        match self {
            CodeRef::Repo(r) => format!("{base}/{r}"),
            CodeRef::Issue(r, n) => format!("{base}/{r}/-/issues/{n}"),
            CodeRef::MergeRequest(r, n) => format!("{base}/{r}/-/merge_requests/{n}"),
            CodeRef::Commit(r, sha) => format!("{base}/{r}/-/commit/{sha}"),
            CodeRef::Wiki(r, t) => format!("{base}/{r}/-/wikis/{}", encode_segment(t)),
        }
    }
}

/// Whether `s` is written as a URL (`scheme://...`).
pub fn is_url(s: &str) -> bool {
    let s = s.trim();
    s.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            && !rest.is_empty()
    })
}

/// The path segments of a URL (after scheme and host; query and fragment dropped; each
/// segment percent-decoded), or `None` when `s` is not a URL.
fn segments(s: &str) -> Option<Vec<String>> {
    let s = s.trim();
    if !is_url(s) {
        return None;
    }
    let (_, rest) = s.split_once("://")?;
    let path = rest.split_once('/').map(|(_, p)| p).unwrap_or("");
    let path = path.split(['?', '#']).next().unwrap_or("");
    Some(
        path.split('/')
            .filter(|p| !p.is_empty())
            .map(decode_segment)
            .collect(),
    )
}

/// Read a code-hosting URL. `Err` says what is wrong with a URL; `Ok(None)` is not a URL.
pub fn parse_code_url(s: &str) -> Result<Option<CodeRef>, String> {
    let Some(segs) = segments(s) else {
        return Ok(None);
    };
    let bad = |why: &str| {
        Err(format!(
            "`{}` is not a code-hosting URL ({why}); they look like https://code.<domain>/<repo>/-/issues/<n>, …/-/merge_requests/<n>, …/-/commit/<sha> or …/-/wikis/<title>",
            s.trim()
        ))
    };
    let dash = segs.iter().position(|p| p == "-");
    let (before, after) = match dash {
        Some(i) => (&segs[..i], &segs[i + 1..]),
        None => (&segs[..], &segs[segs.len()..]),
    };
    let Some(repo) = before.last() else {
        return bad("it names no repository");
    };
    let repo = repo.strip_suffix(".git").unwrap_or(repo).to_string();
    let number = |n: &str| -> Result<u32, String> {
        n.parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("`{n}` in `{}` is not a number", s.trim()))
    };
    match after {
        [] => Ok(Some(CodeRef::Repo(repo))),
        [kind, n, ..] if kind == "issues" => Ok(Some(CodeRef::Issue(repo, number(n)?))),
        [kind, n, ..] if kind == "merge_requests" => {
            Ok(Some(CodeRef::MergeRequest(repo, number(n)?)))
        }
        [kind, sha, ..] if kind == "commit" || kind == "commits" => {
            Ok(Some(CodeRef::Commit(repo, sha.clone())))
        }
        [kind, title @ ..] if kind == "wikis" && !title.is_empty() => {
            Ok(Some(CodeRef::Wiki(repo, title.join("/"))))
        }
        _ => bad("unknown object after `/-/`"),
    }
}

/// The URL of tracker issue `key` (`OPS-12`) under `base` (`https://tracker.<domain>`).
pub fn tracker_issue_url(base: &str, key: &str) -> String {
    let project = key.rsplit_once('-').map(|(p, _)| p).unwrap_or(key);
    format!("{base}/{project}/issues/{key}")
}

/// Read a tracker issue URL: the issue key (`OPS-12`). `Ok(None)` is not a URL.
pub fn parse_tracker_url(s: &str) -> Result<Option<String>, String> {
    let Some(segs) = segments(s) else {
        return Ok(None);
    };
    match segs.iter().rposition(|p| p == "issues") {
        Some(i) if i + 1 < segs.len() => Ok(Some(segs[i + 1].to_ascii_uppercase())),
        _ => Err(format!(
            "`{}` is not a tracker issue URL; they look like https://tracker.<domain>/<PROJECT>/issues/<KEY>",
            s.trim()
        )),
    }
}

/// What a URL of another service names (code hosting has [`CodeRef`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    MailMessage,
    CalendarEvent,
    ChatChannel,
    ChatMessage,
    KbPage,
    KbDatabase,
    KbRow,
    TrackerIssue,
}

impl Kind {
    /// The host's first label and the path of an object of this kind, `{}` for its id
    /// (`{}/row/{}` for a row: the database, then the row).
    fn form(self) -> (&'static str, &'static str) {
        match self {
            Kind::MailMessage => ("mail", "message/{}"),
            Kind::CalendarEvent => ("calendar", "event/{}"),
            Kind::ChatChannel => ("chat", "channel/{}"),
            Kind::ChatMessage => ("chat", "message/{}"),
            Kind::KbPage => ("kb", "page/{}"),
            Kind::KbDatabase => ("kb", "database/{}"),
            Kind::KbRow => ("kb", "database/{}/row/{}"),
            Kind::TrackerIssue => ("tracker", "<PROJECT>/issues/{}"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::MailMessage => "a mail message",
            Kind::CalendarEvent => "a calendar event",
            Kind::ChatChannel => "a chat channel",
            Kind::ChatMessage => "a chat message",
            Kind::KbPage => "a knowledge-base page",
            Kind::KbDatabase => "a knowledge-base database",
            Kind::KbRow => "a knowledge-base row",
            Kind::TrackerIssue => "a tracker issue",
        }
    }
}

/// The URL of object `id` of `kind` for the office of `user_email` (a row's id is
/// `database/row`; a tracker issue's is its key).
pub fn url_of(kind: Kind, id: &str, user_email: &str) -> String {
    let (service, _) = kind.form();
    let base = service_base(service, user_email);
    match kind {
        Kind::TrackerIssue => tracker_issue_url(&base, id),
        Kind::KbRow => {
            let (db, row) = id.split_once('/').unwrap_or((id, ""));
            format!(
                "{base}/database/{}/row/{}",
                encode_segment(db),
                encode_segment(row)
            )
        }
        _ => {
            let (_, path) = kind.form();
            format!("{base}/{}", path.replace("{}", &encode_segment(id)))
        }
    }
}

/// Read `s` as the URL of an object of `kind`: `Ok(None)` when `s` is not a URL (an id as
/// before), its id when it is one (a row: `(database, row)` joined by `/`), and an error
/// saying what such URLs look like otherwise.
pub fn parse_url(kind: Kind, s: &str) -> Result<Option<String>, String> {
    if kind == Kind::TrackerIssue {
        return parse_tracker_url(s);
    }
    let Some(segs) = segments(s) else {
        return Ok(None);
    };
    let (service, path) = kind.form();
    let found = match (kind, segs.as_slice()) {
        (Kind::KbRow, [.., d, db, r, row]) if d == "database" && r == "row" => {
            Some(format!("{db}/{row}"))
        }
        (Kind::KbRow, _) => None,
        (_, [.., word, id]) if Some(word.as_str()) == path.split('/').next() => Some(id.clone()),
        _ => None,
    };
    found.map(Some).ok_or_else(|| {
        format!(
            "`{}` is not the URL of {}; they look like https://{service}.<domain>/{}",
            s.trim(),
            kind.name(),
            path.replace("{}", "<id>")
        )
    })
}

/// The arguments of world tool `tool` with the URLs of objects read as their ids, for the
/// arguments that take an id (`None`: nothing to change).
pub fn read_url_args(tool: &str, args: &Value) -> Result<Option<Value>, String> {
    let table: &[(&str, Kind)] = match tool.split('_').next().unwrap_or("") {
        "mail" => &[("id", Kind::MailMessage)],
        "calendar" => &[("uid", Kind::CalendarEvent)],
        "chat" => &[
            ("id", Kind::ChatMessage),
            ("thread", Kind::ChatMessage),
            ("thread_of", Kind::ChatMessage),
            ("channel", Kind::ChatChannel),
        ],
        "kb" => &[
            ("page", Kind::KbPage),
            ("parent", Kind::KbPage),
            ("row", Kind::KbRow),
            ("database", Kind::KbDatabase),
        ],
        "tracker" => &[("key", Kind::TrackerIssue)],
        "code" => return read_code_args(tool, args),
        _ => return Ok(None),
    };
    let Some(obj) = args.as_object() else {
        return Ok(None);
    };
    let mut out = obj.clone();
    let mut changed = false;
    // The database a row's URL names (`row` comes before `database` in the table).
    let mut row_db: Option<String> = None;
    for (arg, kind) in table {
        let Some(Value::String(text)) = obj.get(*arg) else {
            continue;
        };
        let Some(id) = parse_url(*kind, text).map_err(|e| format!("`{arg}`: {e}"))? else {
            if *arg == "database"
                && let Some(db) = &row_db
                && db != text
            {
                return Err(format!(
                    "`row` is a row of database `{db}` but `database` is `{text}`; give one of them"
                ));
            }
            continue;
        };
        changed = true;
        match kind {
            Kind::KbRow => {
                let (db, row) = id.split_once('/').unwrap_or(("", id.as_str()));
                out.insert("database".into(), Value::String(db.to_string()));
                out.insert("row".into(), Value::String(row.to_string()));
                row_db = Some(db.to_string());
            }
            Kind::KbDatabase if row_db.as_ref().is_some_and(|db| *db != id) => {
                return Err(format!(
                    "`row` is a row of database `{}` but `database` is `{id}`; give one of them",
                    row_db.unwrap_or_default()
                ));
            }
            _ => {
                out.insert((*arg).to_string(), Value::String(id));
            }
        }
    }
    Ok(changed.then_some(Value::Object(out)))
}

/// The arguments of code tool `tool` with URLs read: a `repo` given as a URL becomes the
/// repository's name; an `iid` given as the URL of an issue (issue tools) or a merge request
/// (merge-request tools), or as `#12` / `!12` / `"12"`, becomes its number and names the
/// repository when `repo` is absent. A URL of the wrong kind, or one that disagrees with
/// `repo`, is an error.
fn read_code_args(tool: &str, args: &Value) -> Result<Option<Value>, String> {
    let Some(obj) = args.as_object() else {
        return Ok(None);
    };
    let mut out = obj.clone();
    let repo_from_url = match obj.get("repo") {
        Some(Value::String(r)) => parse_code_url(r)?.map(|c| c.repo().to_string()),
        _ => None,
    };
    let wants_mr = tool.ends_with("_mr");
    let mut iid_repo: Option<String> = None;
    if let Some(Value::String(raw)) = obj.get("iid") {
        let text = raw.trim();
        let (kind, what) = if wants_mr {
            ("a merge request", "merge_requests")
        } else {
            ("an issue", "issues")
        };
        let n = match parse_code_url(text)? {
            Some(CodeRef::Issue(r, n)) if !wants_mr => {
                iid_repo = Some(r);
                n
            }
            Some(CodeRef::MergeRequest(r, n)) if wants_mr => {
                iid_repo = Some(r);
                n
            }
            Some(_) => {
                return Err(format!(
                    "`iid`: `{text}` is not the URL of {kind} (…/-/{what}/<n>)"
                ));
            }
            None => text
                .trim_start_matches(['#', '!'])
                .parse::<u32>()
                .map_err(|_| format!("`iid`: give {kind}'s number or its URL, not `{text}`"))?,
        };
        out.insert("iid".into(), Value::from(n));
    }
    let named = obj.get("repo").and_then(Value::as_str).map(str::to_string);
    match (repo_from_url.or(named), iid_repo) {
        (Some(a), Some(b)) if a != b => {
            return Err(format!(
                "`repo` is `{a}` but the URL in `iid` is of repository `{b}`; give one of them"
            ));
        }
        (Some(r), _) | (None, Some(r)) => {
            out.insert("repo".into(), Value::String(r));
        }
        (None, None) => {}
    }
    Ok((out != *obj).then_some(Value::Object(out)))
}

/// A path segment with the characters URLs cannot carry percent-encoded.
fn encode_segment(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A percent-decoded path segment (invalid escapes and non-UTF-8 kept as written).
fn decode_segment(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |c: u8| char::from(c).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bureau_and_original_gitlab_urls_name_the_same_objects() {
        let base = service_base("code", "Alex@BrightWater.test");
        assert_eq!(base, "https://code.brightwater.test");
        for (r, url) in [
            (
                CodeRef::Issue("sensor-fw".into(), 12),
                "https://code.brightwater.test/sensor-fw/-/issues/12",
            ),
            (
                CodeRef::MergeRequest("sensor-fw".into(), 3),
                "https://code.brightwater.test/sensor-fw/-/merge_requests/3",
            ),
            (
                CodeRef::Wiki("docs".into(), "On call/Rota 2026".into()),
                "https://code.brightwater.test/docs/-/wikis/On%20call%2FRota%202026",
            ),
            (
                CodeRef::Repo("docs".into()),
                "https://code.brightwater.test/docs",
            ),
        ] {
            assert_eq!(r.url(&base), url);
            assert_eq!(parse_code_url(url), Ok(Some(r)));
        }
        // TheAgentCompany's GitLab URLs: another host, a namespace, a trailing part.
        assert_eq!(
            parse_code_url("http://the-agent-company.com:8929/root/sotopia/-/issues/200"),
            Ok(Some(CodeRef::Issue("sotopia".into(), 200)))
        );
        assert_eq!(
            parse_code_url("http://gitlab.local/root/api-server.git"),
            Ok(Some(CodeRef::Repo("api-server".into())))
        );
        assert_eq!(
            parse_code_url("https://x/r/-/merge_requests/7/diffs?view=inline#note_3"),
            Ok(Some(CodeRef::MergeRequest("r".into(), 7)))
        );
        assert_eq!(parse_code_url("12"), Ok(None));
        assert_eq!(parse_code_url("sensor-fw"), Ok(None));
        for bad in [
            "https://x/r/-/issues/zero",
            "https://x/r/-/issues/0",
            "https://x/r/-/pipelines/4",
            "https://x/",
        ] {
            assert!(parse_code_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tracker_urls() {
        let base = service_base("tracker", "a@b.test");
        let url = tracker_issue_url(&base, "OPS-12");
        assert_eq!(url, "https://tracker.b.test/OPS/issues/OPS-12");
        assert_eq!(parse_tracker_url(&url), Ok(Some("OPS-12".into())));
        assert_eq!(
            parse_tracker_url("http://plane.local/acme/projects/ops/issues/ops-3/"),
            Ok(Some("OPS-3".into()))
        );
        assert_eq!(parse_tracker_url("OPS-12"), Ok(None));
        assert!(parse_tracker_url("https://tracker.b.test/OPS").is_err());
    }

    #[test]
    fn every_kind_round_trips_and_wrong_kinds_are_named() {
        for (kind, id) in [
            (Kind::MailMessage, "m00012"),
            (Kind::CalendarEvent, "evt-1@brightwater.test"),
            (Kind::ChatChannel, "ops"),
            (Kind::ChatMessage, "c00003"),
            (Kind::KbPage, "page-7"),
            (Kind::KbDatabase, "Suppliers"),
            (Kind::KbRow, "Suppliers/Polder BV"),
            (Kind::TrackerIssue, "OPS-3"),
        ] {
            let url = url_of(kind, id, "lena@brightwater.test");
            assert!(url.starts_with("https://"), "{url}");
            assert_eq!(parse_url(kind, &url), Ok(Some(id.to_string())), "{url}");
            assert_eq!(parse_url(kind, id), Ok(None), "{id}");
        }
        assert_eq!(
            url_of(Kind::KbRow, "Suppliers/Polder BV", "a@b.test"),
            "https://kb.b.test/database/Suppliers/row/Polder%20BV"
        );
        let e = parse_url(Kind::ChatMessage, "https://chat.b.test/channel/ops").unwrap_err();
        assert!(e.contains("not the URL of a chat message"), "{e}");
        assert!(e.contains("https://chat.<domain>/message/<id>"), "{e}");
    }

    #[test]
    fn tool_arguments_take_urls_where_they_take_ids() {
        let read = |tool: &str, args: Value| read_url_args(tool, &args);
        assert_eq!(
            read(
                "chat_read",
                serde_json::json!({"thread": "https://chat.b.test/message/c00004", "limit": 3})
            ),
            Ok(Some(serde_json::json!({"thread": "c00004", "limit": 3})))
        );
        // Ids stay as they are; tools of other services are not touched.
        assert_eq!(
            read("chat_read", serde_json::json!({"channel": "ops"})),
            Ok(None)
        );
        assert_eq!(
            read("files_read", serde_json::json!({"path": "https://x/y"})),
            Ok(None)
        );
        // A row's URL names its database too.
        assert_eq!(
            read(
                "kb_update_row",
                serde_json::json!({"row": "https://kb.b.test/database/Suppliers/row/r3", "values": {}})
            ),
            Ok(Some(
                serde_json::json!({"database": "Suppliers", "row": "r3", "values": {}})
            ))
        );
        let e = read(
            "kb_update_row",
            serde_json::json!({"row": "https://kb.b.test/database/Suppliers/row/r3", "database": "Orders"}),
        )
        .unwrap_err();
        assert!(e.contains("row of database `Suppliers`"), "{e}");
        let e = read(
            "mail_read",
            serde_json::json!({"id": "https://calendar.b.test/event/x"}),
        )
        .unwrap_err();
        assert!(e.starts_with("`id`: ") && e.contains("mail message"), "{e}");
    }

    proptest! {
        /// Any wiki title survives the round trip through its URL.
        #[test]
        fn wiki_titles_round_trip(title in "\\PC{1,40}", repo in "[a-z][a-z0-9_-]{0,20}") {
            let r = CodeRef::Wiki(repo, title);
            prop_assert_eq!(parse_code_url(&r.url("https://code.x.test")), Ok(Some(r)));
        }

        /// No input makes the readers panic.
        #[test]
        fn readers_never_panic(s in "\\PC{0,80}") {
            let _ = parse_code_url(&s);
            let _ = parse_tracker_url(&s);
            let _ = parse_code_url(&format!("https://h/{s}"));
        }
    }
}
