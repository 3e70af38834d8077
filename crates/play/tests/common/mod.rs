//! A scripted person: a play started in-process, driven over HTTP on loopback.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bureau_play::{Play, PlayError, PlayOptions, PlayReport};
use reqwest::blocking::{Client, Response};
use reqwest::header::{COOKIE, HeaderMap, HeaderValue};
use serde_json::Value;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn starter(task: &str) -> PathBuf {
    repo().join("suites/starter").join(task)
}

pub struct Person {
    pub base: String,
    pub url: String,
    pub port: u16,
    pub token: String,
    pub out: PathBuf,
    pub client: Client,
    pub anonymous: Client,
    pub play: Option<JoinHandle<Result<PlayReport, PlayError>>>,
    _tmp: tempfile::TempDir,
}

impl Person {
    pub fn start(task: &Path, name: &str) -> Person {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let play = Play::start(PlayOptions {
            task: task.to_path_buf(),
            name: name.into(),
            out: Some(out.clone()),
            port: None,
        })
        .unwrap();
        let url = play.url();
        let port = play.port();
        let token = play.token().to_string();
        let mut headers = HeaderMap::new();
        headers.insert(
            COOKIE,
            HeaderValue::from_str(&format!("bureau_play_{port}={token}")).unwrap(),
        );
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .default_headers(headers)
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap();
        let anonymous = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let handle = std::thread::spawn(move || play.run());
        let p = Person {
            base: format!("http://127.0.0.1:{port}"),
            url,
            port,
            token,
            out,
            client,
            anonymous,
            play: Some(handle),
            _tmp: tmp,
        };
        p.wait_for("turn");
        p
    }

    pub fn get(&self, path: &str) -> String {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .unwrap();
        assert_eq!(r.status(), 200, "GET {path}");
        r.text().unwrap()
    }

    pub fn raw_get(&self, path: &str) -> Response {
        self.client
            .get(format!("{}{path}", self.base))
            .send()
            .unwrap()
    }

    /// POST a form; the answer must be a redirect (the pattern of every form).
    pub fn post(&self, path: &str, form: &[(&str, &str)]) -> String {
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .form(form)
            .send()
            .unwrap();
        assert_eq!(
            r.status(),
            303,
            "POST {path}: {}",
            r.text().unwrap_or_default()
        );
        r.headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    }

    pub fn status(&self) -> Value {
        serde_json::from_str(&self.get("/status")).unwrap()
    }

    pub fn wait_for(&self, phase: &str) -> Value {
        let started = Instant::now();
        loop {
            let r = self.client.get(format!("{}/status", self.base)).send();
            // `turn_<n>`: that turn is open.
            let wanted = |v: &Value| match phase.strip_prefix("turn_") {
                Some(n) => {
                    v["phase"] == "turn"
                        && v["turn"].as_u64().map(|t| t.to_string()).as_deref() == Some(n)
                }
                None => v["phase"] == phase,
            };
            if let Ok(r) = r
                && let Ok(v) = r.json::<Value>()
                && wanted(&v)
            {
                return v;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the play never reached phase {phase}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// End the last turn, wait for the score page, close, and return the play's report.
    pub fn finish(&mut self, note: &str) -> (String, PlayReport) {
        self.post("/end", &[("note", note)]);
        self.finish_closed()
    }

    /// Wait for the score page, close, and return the play's report.
    pub fn finish_closed(&mut self) -> (String, PlayReport) {
        self.wait_for("finished");
        let page = self.get("/");
        let r = self
            .client
            .post(format!("{}/close", self.base))
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.text().unwrap().contains("id=\"closed\""));
        let report = self.play.take().unwrap().join().unwrap().unwrap();
        (page, report)
    }

    pub fn trial_dir(&self, task: &str, agent: &str) -> PathBuf {
        self.out.join("trials").join(task).join(agent).join("1")
    }
}

/// The `tool_call` steps of a trajectory: (tool, args).
pub fn tool_calls(trajectory: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(trajectory)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|s| s["type"] == "tool_call")
        .map(|s| (s["tool"].as_str().unwrap().to_string(), s["args"].clone()))
        .collect()
}

/// Page HTML with what changes from run to run replaced, and the style and script blocks
/// left out: the shape of the page.
pub fn shape(html: &str, person: &Person) -> String {
    let mut s = html.replace(&person.token, "TOKEN");
    s = s.replace(&person.port.to_string(), "PORT");
    let out = person.out.display().to_string();
    s = s.replace(&out.replace('/', "&#x2f;"), "RUN_DIR");
    s = s.replace(&out, "RUN_DIR");
    let style = regex::Regex::new(r"(?s)<style>.*?</style>").unwrap();
    let script = regex::Regex::new(r"(?s)<script>.*?</script>").unwrap();
    let left = regex::Regex::new(r#"data-seconds="\d+">\d+:\d\d<"#).unwrap();
    s = style.replace_all(&s, "<style>…</style>").into_owned();
    s = script.replace_all(&s, "<script>…</script>").into_owned();
    s = left
        .replace_all(&s, r#"data-seconds="S">M:SS<"#)
        .into_owned();
    s.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
