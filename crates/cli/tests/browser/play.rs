//! `bureau play` in a browser: a scripted person does `suites/starter/customer-spec-answer`
//! by clicking and typing what the task's solution does, and reaches strict success; another
//! finishes at once and fails; a request without the session token gets 401. The human's
//! trial then shows in `bureau view` like an agent's.
//!
//! Element ids are those of the play templates (crates/play/templates: `#nav-inbox`,
//! `#mail-list`, `#open-<id>`, `#files-list`, `button.open-file[data-path]`, `#send-*`,
//! `#end-day`, `#final`, `#status`, `#strict`, `#close`).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Chrome, Page, Server};
use crate::view;

const TASK: &str = "suites/starter/customer-spec-answer";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The task's solution steps: (tool, args).
fn solution() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(repo().join(TASK).join("solution/1.jsonl"))
        .expect("the task's solution");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a solution line is JSON");
            (
                v["tool"].as_str().expect("a tool").to_string(),
                v["args"].clone(),
            )
        })
        .collect()
}

/// Starts `bureau play` on the task for `name`, writing to `out`.
fn play(name: &str, out: &Path) -> Server {
    let task = repo().join(TASK);
    Server::start(
        &[
            OsStr::new("play"),
            task.as_os_str(),
            OsStr::new("--name"),
            OsStr::new(name),
            OsStr::new("--out"),
            out.as_os_str(),
        ],
        "Bureau play: ",
    )
    .expect("bureau play starts and prints its URL")
}

/// The one result.json under a run directory, parsed.
fn result_json(out: &Path) -> Value {
    let mut found = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("reading the run directory")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "result.json") {
                found.push(path);
            }
        }
    }
    assert_eq!(found.len(), 1, "one trial in {}: {found:?}", out.display());
    serde_json::from_str(&std::fs::read_to_string(&found[0]).expect("result.json"))
        .expect("result.json is JSON")
}

/// Presses the finish button and waits for the score page (there may be a waiting page
/// between, which reloads itself).
fn finish(page: &Page) {
    page.click("#end-day").expect("the finish button");
    page.wait_for("#final")
        .expect("the score page after finishing");
    page.wait_loaded().expect("the score page loads");
}

/// Closes the play from its score page and waits for `bureau play` to exit.
fn close(page: &Page, server: &mut Server) {
    page.click("#close").expect("the close button");
    let status = server
        .wait_exit(Duration::from_secs(30))
        .expect("bureau play exits after Close");
    assert!(status.success(), "bureau play exited with {status}");
}

/// Clicks a button that posts a tool call and waits for the page it leads back to.
fn act(page: &Page, selector: &str) {
    page.click_to_navigate(selector)
        .unwrap_or_else(|e| panic!("{selector}: {e:#}"));
    let notice = page.eval("(document.getElementById('notice') || {}).innerText || null");
    if let Ok(Value::String(notice)) = notice {
        panic!("{selector} led to a notice: {notice}");
    }
}

#[test]
fn play_human_reaches_strict_success() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let out = tmp.path().join("run");
    let mut server = play("tester", &out);
    let chrome = Chrome::launch("play_human_reaches_strict_success").expect("Chromium starts");
    let page = chrome.page().expect("a tab");
    let steps = solution();

    page.goto(&server.url).expect("the play's home page");
    page.wait_for("#prompt")
        .expect("the turn's prompt is shown");
    let prompt = page.text("#prompt").expect("the prompt");
    assert!(
        prompt.contains("Bram"),
        "the prompt is the task's: {prompt}"
    );
    let header = page.text("#turn-header").expect("the header");
    for secret in ["checks.star", "no-roadmap-leak", "solution"] {
        assert!(
            !header.contains(secret),
            "the page shows {secret} before the end: {header}"
        );
    }
    page.screenshot("1-home").expect("screenshot");

    // The inbox: list, then read each message the solution reads.
    page.click_to_navigate("#nav-inbox").expect("the inbox");
    act(&page, "#mail-list");
    page.screenshot("2-inbox").expect("screenshot");
    let mut read = 0;
    for (tool, args) in &steps {
        if tool != "mail_read" {
            continue;
        }
        let id = args["id"].as_str().expect("a message id");
        if page.count(&format!("#open-{id}")).expect("count") == 0 {
            act(&page, "#mail-list");
        }
        act(&page, &format!("#open-{id}"));
        let subject = page
            .text("#message-subject")
            .expect("the message's subject");
        let text = page.text("#message-text").expect("the message's text");
        assert!(
            !text.trim().is_empty(),
            "message {id} ({subject}) has a text"
        );
        read += 1;
        page.screenshot(&format!("3-message-{id}"))
            .expect("screenshot");
    }
    assert_eq!(read, 2, "the solution reads the two messages");

    // The files the solution opens.
    page.click_to_navigate("#nav-files")
        .expect("the files page");
    for (tool, args) in &steps {
        if tool != "files_read" {
            continue;
        }
        let path = args["path"].as_str().expect("a path");
        if page.count("button.open-file").expect("count") == 0 {
            act(&page, "#files-list");
        }
        act(
            &page,
            &format!("button.open-file[data-path={}]", crate::support::js(path)),
        );
        assert_eq!(page.text("#file-path").expect("the open file"), path);
        let text = page.text("#file-text").expect("the file's text");
        assert!(!text.trim().is_empty(), "{path} has a text");
        page.screenshot(&format!("4-file-{}", path.replace('/', "_")))
            .expect("screenshot");
    }

    // The answer, typed as the solution sends it.
    let (_, mail) = steps
        .iter()
        .find(|(tool, _)| tool == "mail_send")
        .expect("the solution sends a mail");
    let list = |key: &str| -> String {
        mail[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    page.click_to_navigate("#nav-inbox").expect("the inbox");
    page.fill("#send-to", &list("to")).expect("To");
    page.fill("#send-cc", &list("cc")).expect("Cc");
    page.fill(
        "#send-subject",
        mail["subject"].as_str().expect("a subject"),
    )
    .expect("Subject");
    page.fill("#send-body", mail["body"].as_str().expect("a body"))
        .expect("the message");
    page.screenshot("5-compose").expect("screenshot");
    act(&page, "#send");
    page.screenshot("6-sent").expect("screenshot");

    finish(&page);
    page.screenshot("7-score").expect("screenshot");
    assert_eq!(page.text("#status").expect("the status"), "passed");
    assert_eq!(page.text("#strict").expect("strict success"), "yes");
    page.assert_clean("the play's pages");
    close(&page, &mut server);

    let result = result_json(&out);
    assert_eq!(result["status"], "passed", "result.json: {result:#}");
    assert_eq!(result["score"]["strict"], true, "result.json: {result:#}");
    assert_eq!(result["agent"], "human:tester", "result.json: {result:#}");

    // The human baseline is an ordinary trial: `bureau view` shows it like an agent's.
    let viewer = view::view(&[&out]);
    page.goto(&viewer.url).expect("the viewer's overview");
    page.wait_for("a.heat-cell").expect("the heat map");
    page.screenshot("8-view-overview").expect("screenshot");
    page.click_to_navigate("a.heat-cell")
        .expect("the human's trial");
    let title = page.eval("document.title").expect("the title");
    assert!(
        title.as_str().is_some_and(|t| t.contains("human:tester")),
        "the trial page is the human's: {title}"
    );
    let trials = view::trials(&out);
    assert_eq!(trials.len(), 1, "one trial: {trials:?}");
    assert_eq!(
        view::trial_page(&page),
        view::trial_files(&trials[0].2),
        "the viewer shows the human's verdicts and every call"
    );
    page.screenshot("9-view-trial").expect("screenshot");
    page.assert_clean("the viewer's pages of the human trial");
}

#[test]
fn play_human_who_does_nothing_fails() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let out = tmp.path().join("run");
    let mut server = play("idle", &out);
    let chrome = Chrome::launch("play_human_who_does_nothing_fails").expect("Chromium starts");
    let page = chrome.page().expect("a tab");
    page.goto(&server.url).expect("the play's home page");
    page.screenshot("1-home").expect("screenshot");
    finish(&page);
    page.screenshot("2-score").expect("screenshot");
    assert_eq!(page.text("#status").expect("the status"), "failed");
    assert_eq!(page.text("#strict").expect("strict success"), "no");
    page.assert_clean("the play's pages");
    close(&page, &mut server);

    let result = result_json(&out);
    assert_eq!(result["status"], "failed", "result.json: {result:#}");
    assert_eq!(result["score"]["strict"], false, "result.json: {result:#}");
}

/// The status line of a plain HTTP GET of `path` on `origin` (`http://127.0.0.1:PORT`).
fn http_status(origin: &str, path: &str) -> String {
    let host = origin.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).expect("connecting to bureau play");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a read timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .expect("sending the request");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_string()
}

#[test]
fn play_without_token_is_refused() {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let server = play("nobody", &tmp.path().join("run"));
    let origin = server.origin();
    let token = server
        .url
        .split_once("token=")
        .map(|(_, t)| t.to_string())
        .expect("the URL carries a token");
    for path in ["/", "/inbox", "/status"] {
        let status = http_status(&origin, path);
        assert!(
            status.contains(" 401 "),
            "GET {path} without the token: {status}"
        );
        let wrong = http_status(&origin, &format!("{path}?token=x{token}"));
        assert!(
            wrong.contains(" 401 "),
            "GET {path} with a wrong token: {wrong}"
        );
    }
    let with = http_status(&origin, &format!("/?token={token}"));
    assert!(with.contains(" 200 "), "GET / with the token: {with}");
}
