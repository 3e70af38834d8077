//! Shared by the tests that run real harnesses (`real_codex.rs`, `real_openclaw.rs`,
//! `real_openhands.rs`, `real_hermes.rs`): finding the harness, reading the scripted model
//! server's log, the tasks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use bureau_run::{RunConfig, RunOutcome, run_with_catalog};
use serde_json::Value;

use super::support::ModelServer;

/// The real harness `program` on `PATH`, or `None` when `BUREAU_HARNESS_SKIP_<NAME>` says
/// why it is not installed (set only when `.ci/harnesses/<name>.sh` could not install it):
/// that reason is printed loudly. A harness missing otherwise fails the test.
pub fn harness(name: &str, program: &str) -> Option<PathBuf> {
    let var = format!(
        "BUREAU_HARNESS_SKIP_{}",
        name.to_uppercase().replace('-', "_")
    );
    if let Some(reason) = std::env::var_os(&var) {
        // Straight to the process's stderr: the test harness captures `eprintln!`.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
             !!! SKIPPED: the real {name} was not tested — {var}={}\n\
             !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n",
            reason.to_string_lossy()
        );
        return None;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file());
    match found {
        Some(p) => Some(p),
        None => panic!(
            "`{program}` is not on PATH: install it with `.ci/harnesses/{name}.sh` and put the \
             directory it prints (PATH=...) first on PATH, or set {var}=<reason> to skip"
        ),
    }
}

/// The base URL of the scripted Responses-API server (`support/models/responses.py`, started
/// with `ModelServer::start("responses", ...)`), as OpenAI clients take it.
pub fn base_url(server: &ModelServer) -> String {
    format!("{}/v1", server.url())
}

/// The bodies of the model requests (`POST .../responses`) `server` got, in order.
pub fn model_requests(server: &ModelServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| {
            r["method"] == "POST"
                && r["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/responses"))
        })
        .map(|r| r["body"].clone())
        .collect()
}

/// The bodies of the model requests (`POST .../chat/completions`) of the scripted Chat
/// Completions server (`support/models/chat.py`) `server` got, in order (side requests, a
/// title, left out).
pub fn chat_requests(server: &ModelServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| {
            r["method"] == "POST"
                && r["aux"] != true
                && r["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/chat/completions"))
        })
        .map(|r| r["body"].clone())
        .collect()
}

/// A step of the script calling `tool` (a Bureau tool by its own name, or the harness's).
pub fn call(tool: &str, args: Value, input: u64, cached: u64, output: u64) -> Value {
    serde_json::json!({"call": {"name": tool, "arguments": args},
        "usage": {"input_tokens": input, "cached_tokens": cached, "output_tokens": output}})
}

/// A step of the script answering `text`.
pub fn text(text: &str, input: u64, cached: u64, output: u64) -> Value {
    serde_json::json!({"text": text,
        "usage": {"input_tokens": input, "cached_tokens": cached, "output_tokens": output}})
}

/// The memo task with its first turn only.
pub fn write_one_turn_memo_task(dir: &Path) {
    super::common::write_memo_task(dir, "memo1");
    let path = dir.join("task.toml");
    let toml = std::fs::read_to_string(&path).unwrap();
    let second_turn = toml.match_indices("[[turn]]").nth(1).unwrap().0;
    let rubric = toml.find("[[rubric]]").unwrap();
    let budget = toml.find("[[rubric]]\nid = \"budget-in-memo\"").unwrap();
    let one = format!("{}{}", &toml[..second_turn], &toml[rubric..budget]);
    assert_eq!(one.matches("[[turn]]").count(), 1);
    std::fs::write(&path, one).unwrap();
    std::fs::remove_file(dir.join("solution/2.jsonl")).unwrap();
    std::fs::remove_dir_all(dir.join("turns/2")).unwrap();
}

pub fn run(task: &Path, agent: &str, out: &Path, agents_file: &Path) -> RunOutcome {
    let mut c = RunConfig::new(
        vec![task.to_string_lossy().into_owned()],
        vec![agent.to_string()],
        out.to_path_buf(),
    );
    c.quiet = true;
    c.retries = 0;
    c.agents_file = Some(agents_file.to_path_buf());
    run_with_catalog(&c, bureau_harness::catalog()).unwrap()
}

pub fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every file under `dir`, relative, sorted.
/// The deliverables of a trial (packed in its trial.zip, or plain files), below `deliverables/`.
pub fn deliverables(trial: &Path) -> Vec<String> {
    bureau_world::trial_files::TrialFiles::open(trial)
        .unwrap()
        .list("deliverables")
        .unwrap()
        .into_keys()
        .map(|k| k.trim_start_matches("deliverables/").to_string())
        .collect()
}

/// The final workspace of a trial (in its trial.zip, or plain files) as [`files`] lists a
/// directory: its files, and each directory holding one with a trailing `/`.
pub fn workspace(trial: &Path) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let listed = bureau_world::trial_files::TrialFiles::open(trial)
        .unwrap()
        .list("world/workspace")
        .unwrap();
    for k in listed.into_keys() {
        let rel = k.trim_start_matches("world/workspace/").to_string();
        let mut at = 0;
        while let Some(i) = rel[at..].find('/') {
            out.insert(rel[..at + i + 1].to_string());
            at += i + 1;
        }
        out.insert(rel);
    }
    out.into_iter().collect()
}

pub fn files(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.push(format!("{}/", p.strip_prefix(base).unwrap().display()));
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A TOML string literal.
pub fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// The steps of type `t` of a trajectory.
pub fn of<'a>(steps: &'a [Value], t: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    steps.iter().filter(move |s| s["type"] == t)
}

/// The values under `key` of the trajectory's notes.
pub fn notes<'a>(steps: &'a [Value], key: &'a str) -> Vec<&'a Value> {
    of(steps, "note")
        .filter_map(|s| s["data"].get(key))
        .collect()
}

/// The two-turn memo task's calls: Bureau's four tools, in their turns, each answered.
pub fn assert_two_turn_memo_calls(steps: &[Value]) {
    let tools: Vec<(u64, &str)> = of(steps, "tool_call")
        .map(|s| (s["turn"].as_u64().unwrap(), s["tool"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tools,
        [
            (1, "files_write"),
            (1, "mail_send"),
            (2, "files_read"),
            (2, "files_edit")
        ]
    );
    assert!(
        of(steps, "tool_call").all(|s| s["outcome"] == "ok"),
        "{steps:#?}"
    );
}

/// A text file of a trial (packed in its trial.zip, or a plain file), by its path in the trial.
pub fn trial_text(trial: &Path, rel: &str) -> String {
    let bytes = bureau_world::trial_files::TrialFiles::open(trial)
        .unwrap()
        .read(rel, 1 << 26)
        .unwrap_or_else(|e| panic!("{rel} of {}: {e}", trial.display()));
    String::from_utf8(bytes).unwrap()
}

/// The two-turn memo task's end: memo.md as the agent wrote it, one final message a turn.
pub fn assert_two_turn_memo_end(trial: &Path, steps: &[Value]) {
    let memo = trial_text(trial, "world/workspace/memo.md");
    assert_eq!(
        memo,
        "The meeting moved to Friday.\nBudget total: 12,500 EUR.\n"
    );
    let messages: Vec<(u64, &str)> = of(steps, "message")
        .map(|s| (s["turn"].as_u64().unwrap(), s["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        messages,
        [(1, "Memo written and Bob told."), (2, "Budget added.")]
    );
}

/// A `model_call` step's (input, cached input, output) tokens.
pub fn tokens(call: &Value) -> (u64, u64, u64) {
    let t = |k: &str| call["usage"][k].as_u64().unwrap();
    (
        t("input_tokens"),
        t("cached_input_tokens"),
        t("output_tokens"),
    )
}

/// The command line a `model_call` step ran the harness with.
pub fn argv(call: &Value) -> Vec<&str> {
    call["request"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

/// A receipt-like picture (300×120 PNG) for the media tests: what a harness's model must be
/// sent when its agent reads it over MCP.
pub fn receipt_png() -> Vec<u8> {
    let img = image::RgbImage::from_fn(300, 120, |x, y| {
        if (20..280).contains(&x) && (y / 10) % 3 == 1 && (x / 7) % 5 != 0 {
            image::Rgb([20, 20, 20])
        } else {
            image::Rgb([250, 250, 245])
        }
    });
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// Whether a model request body carries `bytes` as base64 (in an image block, a data URI or
/// an `input_image`): the picture reached the model as a picture.
pub fn carries_bytes(body: &Value, bytes: &[u8]) -> bool {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    serde_json::to_string(body).unwrap().contains(&b64)
}
