//! Stable URLs (issue 14, gap 6): seeded issue and merge-request numbers, each object's URL in
//! tool results and in the check view, and tools that take the URL wherever they take an id —
//! Bureau's own URLs and the original service's (TheAgentCompany's GitLab).

use std::path::Path;

use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_core::tool::ToolOutcome;
use bureau_world::World;
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const REPO_TOML: &str = r#"
owner = "karim"

[[branch]]
name = "fix/offset"

[[merge_request]]
iid = 40
title = "Set the pressure offset"
source = "fix/offset"
author = "karim"

[[issue]]
iid = 12
title = "Readings drift after 48 h"
author = "karim"

[[issue]]
title = "Unnumbered: gets 13"
author = "karim"

[[issue]]
iid = 3
title = "An older one"
author = "karim"
"#;

fn task(dir: &Path, repo_toml: &str) -> Task {
    write(
        &dir.join("task.toml"),
        r#"
id = "urls"
title = "URLs"
persona = "engineer"
category = "engineering"
difficulty = "easy"
apps = ["files", "code", "tracker"]
[user]
name = "Lena Vos"
email = "lena.vos@brightwater.test"

[[turn]]
at = 2026-03-09T09:00:00
prompt = "Fix https://code.brightwater.test/sensor-fw/-/issues/12"

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "x.md"
"#,
    );
    write(
        &dir.join("world/people.toml"),
        "[[person]]\nname = \"Karim Haddad\"\nemail = \"karim@brightwater.test\"\nhandle = \"karim\"\n",
    );
    write(&dir.join("world/code/sensor-fw/README.md"), "# fw\n");
    write(&dir.join("world/code/sensor-fw.toml"), repo_toml);
    write(&dir.join("world/code/other/README.md"), "# other\n");
    write(
        &dir.join("world/tracker/OPS.json"),
        r#"{"key": "OPS", "name": "Operations", "issues": [{"number": 11, "title": "Order nozzles"}]}"#,
    );
    Task::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn built(repo_toml: &str) -> Result<(tempfile::TempDir, World), String> {
    let tmp = tempfile::tempdir().unwrap();
    let t = task(&tmp.path().join("task"), repo_toml);
    let mut w = World::build(&t, &tmp.path().join("world")).map_err(|e| e.to_string())?;
    w.begin_turn(&t.turns[0]).unwrap();
    Ok((tmp, w))
}

fn call(w: &mut World, tool: &str, args: Value) -> Result<Value, String> {
    match w.call_tool(Actor::Agent, tool, &args) {
        ToolOutcome::Ok { value, .. } => Ok(value),
        ToolOutcome::Error { message } => Err(message),
    }
}

#[test]
fn seeded_numbers_are_kept_and_new_ones_follow_the_highest() {
    let (_d, mut w) = built(REPO_TOML).unwrap();
    let repo = w.code().repo("sensor-fw").unwrap();
    let iids: Vec<u32> = repo.issues.iter().map(|i| i.iid).collect();
    assert_eq!(iids, vec![12, 13, 3]);
    assert_eq!(repo.merge_requests[0].iid, 40);
    let r = call(
        &mut w,
        "code_create_issue",
        json!({"repo": "sensor-fw", "title": "New"}),
    )
    .unwrap();
    assert_eq!(r["iid"], 14);
    assert_eq!(
        r["url"],
        "https://code.brightwater.test/sensor-fw/-/issues/14"
    );

    for (toml, want) in [
        (
            "[[issue]]\niid = 2\ntitle = \"a\"\n[[issue]]\niid = 2\ntitle = \"b\"\n",
            "issue `b`: number 2 is used twice",
        ),
        ("[[issue]]\niid = 0\ntitle = \"a\"\n", "`iid` starts at 1"),
        (
            "[[merge_request]]\niid = -1\ntitle = \"a\"\nsource = \"main\"\n",
            "sensor-fw.toml",
        ),
    ] {
        let e = built(toml).err().unwrap_or_else(|| panic!("{toml}: built"));
        assert!(
            e.contains(want) && e.contains("sensor-fw.toml"),
            "{toml}: {e}"
        );
    }
}

#[test]
fn code_tools_take_urls_wherever_they_take_a_number() {
    let (_d, mut w) = built(REPO_TOML).unwrap();
    // Bureau's own URL, without `repo`.
    let r = call(
        &mut w,
        "code_comment_issue",
        json!({"iid": "https://code.brightwater.test/sensor-fw/-/issues/12", "body": "On it."}),
    )
    .unwrap();
    assert_eq!(
        (r["repo"].as_str(), r["iid"].as_u64()),
        (Some("sensor-fw"), Some(12))
    );
    // The original GitLab's URL (another host, a namespace), and `#n` / `!n` spellings.
    call(
        &mut w,
        "code_update_issue",
        json!({"iid": "http://the-agent-company.com:8929/root/sensor-fw/-/issues/13", "add_labels": ["bug"]}),
    )
    .unwrap();
    call(
        &mut w,
        "code_comment_issue",
        json!({"repo": "sensor-fw", "iid": "#3", "body": "Old."}),
    )
    .unwrap();
    let mr = call(
        &mut w,
        "code_get_mr",
        json!({"iid": "https://code.brightwater.test/sensor-fw/-/merge_requests/40"}),
    )
    .unwrap();
    assert_eq!(mr["iid"], 40);
    assert_eq!(
        mr["url"],
        "https://code.brightwater.test/sensor-fw/-/merge_requests/40"
    );
    call(
        &mut w,
        "code_comment_mr",
        json!({"repo": "https://code.brightwater.test/sensor-fw", "iid": "!40", "body": "LGTM"}),
    )
    .unwrap();
    let list = call(
        &mut w,
        "code_list_issues",
        json!({"repo": "https://code.brightwater.test/sensor-fw"}),
    )
    .unwrap();
    let urls: Vec<&str> = list["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["url"].as_str().unwrap())
        .collect();
    assert!(
        urls.contains(&"https://code.brightwater.test/sensor-fw/-/issues/3"),
        "{urls:?}"
    );

    // Refusals say what is wrong.
    let e = call(
        &mut w,
        "code_comment_issue",
        json!({"iid": "https://code.brightwater.test/sensor-fw/-/merge_requests/40", "body": "x"}),
    )
    .unwrap_err();
    assert!(e.contains("is not the URL of an issue"), "{e}");
    let e = call(
        &mut w,
        "code_comment_issue",
        json!({"repo": "other", "iid": "https://code.brightwater.test/sensor-fw/-/issues/12", "body": "x"}),
    )
    .unwrap_err();
    assert!(
        e.contains("`repo` is `other` but the URL in `iid` is of repository `sensor-fw`"),
        "{e}"
    );
    let e = call(
        &mut w,
        "code_get_mr",
        json!({"iid": "https://code.brightwater.test/sensor-fw/-/pipelines/2"}),
    )
    .unwrap_err();
    assert!(e.contains("not a code-hosting URL"), "{e}");
    let e = call(
        &mut w,
        "code_get_mr",
        json!({"repo": "sensor-fw", "iid": "forty"}),
    )
    .unwrap_err();
    assert!(
        e.contains("give a merge request's number or its URL"),
        "{e}"
    );
    let e = call(
        &mut w,
        "code_comment_issue",
        json!({"iid": "https://code.brightwater.test/sensor-fw/-/issues/99", "body": "x"}),
    )
    .unwrap_err();
    assert!(e.contains("no issue #99 in `sensor-fw`"), "{e}");
}

#[test]
fn tracker_tools_take_issue_urls_and_show_them() {
    let (_d, mut w) = built(REPO_TOML).unwrap();
    let i = call(
        &mut w,
        "tracker_get_issue",
        json!({"key": "https://tracker.brightwater.test/OPS/issues/OPS-11"}),
    )
    .unwrap();
    assert_eq!(i["key"], "OPS-11");
    assert_eq!(
        i["url"],
        "https://tracker.brightwater.test/OPS/issues/OPS-11"
    );
    call(
        &mut w,
        "tracker_comment",
        json!({"key": "http://plane.local/acme/projects/ops/issues/ops-11", "text": "Quote asked."}),
    )
    .unwrap();
    let e = call(
        &mut w,
        "tracker_get_issue",
        json!({"key": "https://tracker.brightwater.test/OPS"}),
    )
    .unwrap_err();
    assert!(e.contains("not a tracker issue URL"), "{e}");
}

#[test]
fn checks_see_each_objects_url() {
    let (_d, w) = built(REPO_TOML).unwrap();
    let code = w.code().check_view(chrono_tz::UTC, &w.service_url("code"));
    let repo = &code["repos"]["$dict"]["sensor-fw"];
    assert_eq!(repo["url"], "https://code.brightwater.test/sensor-fw");
    assert_eq!(
        repo["issues"][0]["url"],
        "https://code.brightwater.test/sensor-fw/-/issues/12"
    );
    assert_eq!(
        repo["merge_requests"][0]["url"],
        "https://code.brightwater.test/sensor-fw/-/merge_requests/40"
    );
    let tracker = w
        .tracker()
        .check_view(chrono_tz::UTC, &w.service_url("tracker"));
    assert_eq!(
        tracker["issue"]["$dict"]["OPS-11"]["url"],
        "https://tracker.brightwater.test/OPS/issues/OPS-11"
    );
}

/// Mail, calendar, chat and the knowledge base: results carry each object's URL, and the URL
/// works wherever the object's id does.
#[test]
fn every_service_takes_the_urls_it_shows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("task");
    let t = task(&dir, REPO_TOML);
    // The same task with chat, calendar, a mailbox and a page.
    write(
        &dir.join("world/chat/channels.json"),
        r#"[{"name": "ops", "members": ["lena.vos", "karim"]}]"#,
    );
    write(
        &dir.join("world/chat/history.jsonl"),
        r#"{"id": "c-1", "channel": "ops", "author": "karim", "ts": "2026-03-09T08:00:00", "text": "Drift again on unit 17"}
"#,
    );
    write(
        &dir.join("world/kb/pages/Runbook.md"),
        "# Runbook\nRestart the gateway.\n",
    );
    let toml = std::fs::read_to_string(dir.join("task.toml"))
        .unwrap()
        .replace(
            "apps = [\"files\", \"code\", \"tracker\"]",
            "apps = [\"files\", \"code\", \"tracker\", \"chat\", \"kb\", \"calendar\", \"mail\"]",
        );
    write(&dir.join("task.toml"), &toml);
    let _ = t;
    let t = Task::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::build(&t, &tmp.path().join("world")).unwrap();
    w.begin_turn(&t.turns[0]).unwrap();

    let read = call(
        &mut w,
        "chat_read",
        json!({"channel": "https://chat.brightwater.test/channel/ops"}),
    )
    .unwrap();
    let url = read["messages"][0]["url"].as_str().unwrap().to_string();
    assert_eq!(url, "https://chat.brightwater.test/message/c-1");
    call(&mut w, "chat_react", json!({"id": url, "emoji": "eyes"})).unwrap();
    call(
        &mut w,
        "chat_post",
        json!({"thread_of": url, "text": "Looking."}),
    )
    .unwrap();
    assert_eq!(
        w.chat().messages().last().unwrap().thread_of.as_deref(),
        Some("c-1")
    );

    let pages = call(&mut w, "kb_list_pages", json!({})).unwrap();
    let page = pages["pages"][0]["url"].as_str().unwrap().to_string();
    assert!(
        page.starts_with("https://kb.brightwater.test/page/"),
        "{page}"
    );
    let p = call(&mut w, "kb_read_page", json!({"page": page})).unwrap();
    assert_eq!(p["title"], "Runbook");

    let ev = call(
        &mut w,
        "calendar_create",
        json!({"summary": "Drift review", "start": "2026-03-10T10:00:00", "end": "2026-03-10T10:30:00"}),
    )
    .unwrap();
    let ev_url = ev["url"].as_str().unwrap().to_string();
    assert!(
        ev_url.starts_with("https://calendar.brightwater.test/event/"),
        "{ev_url}"
    );
    call(
        &mut w,
        "calendar_update",
        json!({"uid": ev_url, "location": "Lab 2"}),
    )
    .unwrap();

    let sent = call(
        &mut w,
        "mail_send",
        json!({"to": ["karim@brightwater.test"], "subject": "Drift", "body": "See the review."}),
    )
    .unwrap();
    let list = call(&mut w, "mail_list", json!({"folder": "Sent"})).unwrap();
    let mail_url = list["messages"][0]["url"].as_str().unwrap().to_string();
    assert!(
        mail_url.starts_with("https://mail.brightwater.test/message/"),
        "{mail_url} {sent}"
    );
    let m = call(&mut w, "mail_read", json!({"id": mail_url})).unwrap();
    assert_eq!(m["subject"], "Drift");
    let e = call(&mut w, "mail_read", json!({"id": ev_url})).unwrap_err();
    assert!(e.contains("is not the URL of a mail message"), "{e}");
}
