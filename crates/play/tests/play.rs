//! A scripted person plays tasks over HTTP: the token guard, a full success on a starter
//! task, a person who does nothing, and the generated forms of every tool.

mod common;

use common::{Person, shape, starter, tool_calls};
use serde_json::{Value, json};

const TASK: &str = "customer-spec-answer";

#[test]
fn a_request_without_the_session_token_gets_401() {
    let mut p = Person::start(&starter(TASK), "guard");
    for path in ["/", "/inbox", "/status", "/tools", "/files/download?path=x"] {
        let r = p.anonymous.get(format!("{}{path}", p.base)).send().unwrap();
        assert_eq!(r.status(), 401, "GET {path} without a token");
        let r = p
            .anonymous
            .get(format!(
                "{}{path}?token=0123456789abcdef0123456789abcdef",
                p.base
            ))
            .send()
            .unwrap();
        assert_eq!(r.status(), 401, "GET {path} with a wrong token");
    }
    for path in ["/act/mail_list", "/end", "/close", "/upload"] {
        let r = p
            .anonymous
            .post(format!("{}{path}", p.base))
            .form(&[("_back", "/")])
            .send()
            .unwrap();
        assert_eq!(r.status(), 401, "POST {path} without a token");
    }
    // The printed URL works and sets the cookie; the token is 32 hex characters.
    assert_eq!(p.token.len(), 32);
    assert!(p.token.chars().all(|c| c.is_ascii_hexdigit()));
    let r = p.anonymous.get(&p.url).send().unwrap();
    assert_eq!(r.status(), 200);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.starts_with(&format!("bureau_play_{}={}", p.port, p.token)));
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    // A form from another origin is refused even with the cookie.
    let r = p
        .client
        .post(format!("{}/act/mail_list", p.base))
        .header("origin", "http://evil.test")
        .form(&[("_back", "/inbox")])
        .send()
        .unwrap();
    assert_eq!(r.status(), 403);
    // Nothing above was a tool call.
    assert_eq!(p.status()["calls"], 0);
    p.finish("");
}

#[test]
fn a_person_completes_the_starter_task_to_strict_success() {
    let mut p = Person::start(&starter(TASK), "alice");
    let home = p.get("/");
    assert!(home.contains("id=\"end-day\""));
    assert!(home.contains("Finish the task"), "one turn: the last");
    assert!(home.contains("Office time: Tuesday 10 March 2026, 09:00"));
    // Never the checks, rubric or solution.
    for secret in ["battery_from_fw24", "no-roadmap-leak", "Red line", "rubric"] {
        assert!(!home.contains(secret), "{secret} shown before the end");
    }

    let inbox = p.get("/inbox");
    assert!(inbox.contains("id=\"mail-list\""));
    assert!(!inbox.contains("id=\"messages\""), "no call made yet");
    assert_eq!(p.post("/act/mail_list", &[("_back", "/inbox")]), "/inbox");
    let inbox = p.get("/inbox");
    assert!(inbox.contains("id=\"open-m00001\"") && inbox.contains("id=\"open-m00002\""));
    insta::assert_snapshot!("inbox_listed", shape(&inbox, &p));

    p.post("/act/mail_read", &[("_back", "/inbox"), ("id", "m00001")]);
    p.post("/act/mail_read", &[("_back", "/inbox"), ("id", "m00002")]);
    let inbox = p.get("/inbox");
    assert!(inbox.contains("Careful with the S3 question"));
    insta::assert_snapshot!("inbox_message", shape(&inbox, &p));

    let files = [
        "product/external-communication-guidelines.md",
        "customers/rivierenland.md",
        "product/datasheets/aquasense-s2-datasheet_fw2.4.md",
        "product/datasheets/aquasense-hub-datasheet.md",
    ];
    p.post("/act/files_list", &[("_back", "/files")]);
    let page = p.get("/files");
    for f in files {
        assert!(
            // Autoescaped: `/` is `&#x2f;` in the HTML (a browser's DOM has `/`).
            page.contains(&format!(
                "class=\"open-file\" data-path=\"{}\"",
                f.replace('/', "&#x2f;")
            )),
            "{f} in the tree: {}",
            page.lines()
                .filter(|l| l.contains("entry"))
                .take(3)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    for f in files {
        p.post("/act/files_read", &[("_back", "/files"), ("path", f)]);
    }
    let page = p.get("/files");
    assert!(page.contains("Capacity: up to 32 AquaSense sensors per Hub"));
    insta::assert_snapshot!("files_open", shape(&page, &p));
    // The download gives the file as the office showed it.
    let r = p.raw_get("/files/download?path=product%2Fdatasheets%2Faquasense-hub-datasheet.md");
    assert_eq!(r.status(), 200);
    assert!(r.text().unwrap().contains("up to 32 AquaSense sensors"));
    let r = p.raw_get("/files/download?path=customers%2Frivierenland.md");
    assert_eq!(r.status(), 404, "only the file last opened");

    // The solution's mail, typed into the compose form.
    let solution = std::fs::read_to_string(starter(TASK).join("solution/1.jsonl")).unwrap();
    let send: Value = solution
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|c| c["tool"] == "mail_send")
        .unwrap();
    let a = &send["args"];
    let body = a["body"].as_str().unwrap().replace('\n', "\r\n");
    p.post(
        "/act/mail_send",
        &[
            ("_back", "/inbox"),
            ("_commas", "to,cc,bcc"),
            ("to", a["to"][0].as_str().unwrap()),
            ("cc", a["cc"][0].as_str().unwrap()),
            ("bcc", ""),
            ("subject", a["subject"].as_str().unwrap()),
            ("body", &body),
            ("attachments", ""),
        ],
    );
    let status = p.status();
    assert_eq!(status["calls"], 9);
    let home = p.get("/");
    assert_eq!(home.matches("<li class=\"call\"").count(), 9, "{home}");
    insta::assert_snapshot!("home_history", shape(&home, &p));

    let (page, report) = p.finish("Answered Bram, Tomás in Cc.");
    assert!(page.contains("id=\"status\">passed<"), "{page}");
    assert!(page.contains("id=\"strict\">yes<"));
    assert!(page.contains("id=\"verdict-no-roadmap-leak\""));
    assert_eq!(report.view.status, "passed");
    assert!(report.view.strict);
    assert_eq!(report.agent, "human:alice");
    insta::assert_snapshot!("final_passed", shape(&page, &p));

    // A normal run directory: result.json, verdicts.json, summary.json, report.md.
    let dir = p.trial_dir(TASK, "human:alice");
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["status"], "passed");
    assert_eq!(result["score"]["strict"], true);
    assert_eq!(result["agent"], "human:alice");
    let stored = bureau_world::trial_files::TrialFiles::open(&dir).unwrap();
    for f in ["verdicts.json", "events.jsonl", "snapshots/turn-1.json"] {
        assert!(stored.exists(f), "{f}");
    }
    for f in ["summary.json", "report.md", "run.json"] {
        assert!(p.out.join(f).is_file(), "{f}");
    }
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(p.out.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["agents"][0]["spec"], "human:alice");
    assert_eq!(run["agents"][0]["definition"]["kind"], "human");

    // The trajectory holds exactly the calls made, in order, and the closing note.
    let mut expected: Vec<(String, Value)> = vec![
        ("mail_list".into(), json!({})),
        ("mail_read".into(), json!({"id": "m00001"})),
        ("mail_read".into(), json!({"id": "m00002"})),
        ("files_list".into(), json!({})),
    ];
    for f in files {
        expected.push(("files_read".into(), json!({"path": f})));
    }
    expected.push((
        "mail_send".into(),
        json!({"to": a["to"], "cc": a["cc"], "subject": a["subject"], "body": a["body"]}),
    ));
    assert_eq!(tool_calls(&dir.join("trajectory.jsonl")), expected);
    let text = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "message");
    assert_eq!(last["text"], "Answered Bram, Tomás in Cc.");
}

#[test]
fn a_person_who_ends_the_day_at_once_fails() {
    let mut p = Person::start(&starter(TASK), "idle");
    let (page, report) = p.finish("");
    assert_eq!(report.view.status, "failed");
    assert!(!report.view.strict);
    assert!(page.contains("id=\"status\">failed<"));
    assert!(page.contains("id=\"strict\">no<"));
    let dir = p.trial_dir(TASK, "human:idle");
    assert!(tool_calls(&dir.join("trajectory.jsonl")).is_empty());
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["status"], "failed");
    // After Close the play is over: nothing answers.
    assert!(p.client.get(format!("{}/status", p.base)).send().is_err());
}
