//! `bureau play`: the one URL line on stdout, the token guard, and a play ended and closed
//! over HTTP — the process prints the result line and exits 0.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bureau() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bureau"))
}

#[test]
fn play_prints_its_url_and_ends_with_the_result_line() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let task = repo.join("suites/starter/customer-spec-answer");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let mut child = bureau()
        .args(["play", task.to_str().unwrap(), "--name", "carol", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let re = url_parts(&line);
    let (port, token) = re.unwrap_or_else(|| panic!("first line: {line:?}"));

    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::blocking::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    assert_eq!(client.get(&base).send().unwrap().status(), 401);
    let with = |path: &str| format!("{base}{path}?token={token}");
    let started = Instant::now();
    loop {
        let s: serde_json::Value = client.get(with("/status")).send().unwrap().json().unwrap();
        if s["phase"] == "turn" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    let r = client
        .post(with("/end"))
        .form(&[("note", "")])
        .send()
        .unwrap();
    assert_eq!(r.status(), 303);
    loop {
        let s: serde_json::Value = client.get(with("/status")).send().unwrap().json().unwrap();
        if s["phase"] == "finished" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(client.post(with("/close")).send().unwrap().status(), 200);
    let status = child.wait().unwrap();
    assert!(status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(
        rest.starts_with("customer-spec-answer · human:carol · failed · score "),
        "{rest}"
    );
    assert!(
        out.join("trials/customer-spec-answer/human:carol/1/result.json")
            .is_file()
    );
}

/// `Bureau play: http://127.0.0.1:PORT/?token=TOKEN` → (port, token).
fn url_parts(line: &str) -> Option<(u16, String)> {
    let rest = line
        .strip_suffix('\n')?
        .strip_prefix("Bureau play: http://127.0.0.1:")?;
    let (port, token) = rest.split_once("/?token=")?;
    (token.len() == 32 && token.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| Some((port.parse().ok()?, token.to_string())))?
}

#[test]
fn play_refuses_a_directory_that_is_not_a_task() {
    let tmp = tempfile::tempdir().unwrap();
    let o = bureau()
        .args(["play", tmp.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not a task directory"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn ctrl_c_leaves_the_trial_interrupted_and_unscored() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let task = repo.join("suites/starter/customer-spec-answer");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let mut child = bureau()
        .args(["play", task.to_str().unwrap(), "--name", "dave", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let (port, token) = url_parts(&line).unwrap();
    let client = reqwest::blocking::Client::new();
    let started = Instant::now();
    loop {
        let s: serde_json::Value = client
            .get(format!("http://127.0.0.1:{port}/status?token={token}"))
            .send()
            .unwrap()
            .json()
            .unwrap();
        if s["phase"] == "turn" {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let trial = out.join("trials/customer-spec-answer/human:dave/1");
    assert!(!trial.join("result.json").exists());
    let attempt = std::fs::read_to_string(trial.join("attempts/1/attempt.json")).unwrap();
    assert!(attempt.contains("interrupted"), "{attempt}");
}
