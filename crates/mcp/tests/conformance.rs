//! Conformance with a client nobody here wrote: the official Python MCP SDK (`pip install mcp`)
//! lists and calls every tool over stdio (`bureau mcp --task <dir>`) and over streamable HTTP
//! (two trial endpoints, with token refusals). The checks are in `conformance.py`; this test
//! builds the worlds, starts the servers, runs the script and checks its report against the
//! worlds' state.
//!
//! Python: the system `python3` when it has the SDK, otherwise a virtual environment under
//! the build's temporary directory, where the SDK is installed from PyPI once. The test never
//! skips: without `python3` it fails and says so.

// The task fixtures are shared with bureau-run's tests.
#[path = "../../run/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use bureau_agents::{Recorder, ToolSession, TurnLimits};
use bureau_core::log::Actor;
use bureau_core::task::Task;
use bureau_mcp::{PLAY_TOOLS, TrialEndpoint};
use bureau_world::World;
use serde_json::{Value, json};

use common::*;

/// The SDK version range the script is written for.
const SDK: &str = "mcp>=2.3,<3";
/// What the script imports.
const SDK_PROBE: &str = "import httpx2; from mcp import Client; \
    from mcp.client.stdio import StdioServerParameters; \
    from mcp.client.streamable_http import streamable_http_client";

fn run(cmd: &mut Command) -> std::process::Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn has_sdk(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", SDK_PROBE])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python with the official MCP SDK: the system one, or a venv made for this test.
fn python_with_sdk() -> PathBuf {
    let system = PathBuf::from("python3");
    match Command::new(&system).arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => panic!(
            "python3 is not installed: the MCP conformance test runs the official Python MCP SDK \
             — install Python 3.10 or newer with venv and pip (e.g. `apt-get install python3 \
             python3-venv`)"
        ),
    }
    if has_sdk(&system) {
        return system;
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-sdk");
    let python = venv.join("bin").join("python");
    if has_sdk(&python) {
        return python;
    }
    // Missing or broken (an interrupted install): make it anew.
    let _ = std::fs::remove_dir_all(&venv);
    let out = run(Command::new(&system).args(["-m", "venv"]).arg(&venv));
    assert!(
        out.status.success(),
        "python3 -m venv {} failed — install the venv module (e.g. `apt-get install \
         python3-venv`), or `pip install mcp` for python3:\n{}",
        venv.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(Command::new(&python).args(["-m", "pip", "install", "--quiet", SDK]));
    assert!(
        out.status.success(),
        "pip install {SDK} into {} failed (PyPI must be reachable):\n{}",
        venv.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        has_sdk(&python),
        "{SDK} was installed into {} but does not import",
        venv.display()
    );
    python
}

/// The `bureau` binary, built (or found fresh) by cargo in this build's target directory.
///
/// A test of one crate has no `CARGO_BIN_EXE_` for another crate's binary, so cargo is asked
/// for it. With the same selection as `cargo test --workspace` (every package's tests), the
/// binary that run already built is reused as it is.
fn bureau_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/deps/conformance-<hash>
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let target_dir = profile_dir.parent().unwrap();
    let profile = profile_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--workspace", "--tests", "--message-format=json"])
        .arg("--target-dir")
        .arg(target_dir)
        .stderr(Stdio::inherit());
    match profile.as_str() {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "building the bureau binary failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == "bureau"
                && m["target"]["kind"] == json!(["bin"])
                // Not the binary's own unit-test harness, which `--tests` builds too.
                && m["profile"]["test"] == false
        })
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo built no `bureau` binary")
}

/// A 2×2 RGB PNG (red, blue / black, white).
const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a,
    0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xf8, 0xcf, 0x00, 0x04,
    0x10, 0xe2, 0xff, 0x7f, 0x00, 0x1a, 0xf3, 0x04, 0xfc, 0xc7, 0x99, 0x3c, 0xb4, 0x00, 0x00, 0x00,
    0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A memo task's world at the start of turn 1, with its session.
struct Trial {
    world: Arc<Mutex<World>>,
    recorder: Recorder,
    endpoint: TrialEndpoint,
}

fn trial(task: &Task, root: &Path) -> Trial {
    let mut world = World::build(task, root).unwrap();
    world.begin_turn(&task.turns[0]).unwrap();
    let world = Arc::new(Mutex::new(world));
    let recorder = Recorder::new();
    let endpoint = TrialEndpoint::start(world.clone()).unwrap();
    let session = ToolSession::new(
        world.clone(),
        recorder.clone(),
        1,
        TurnLimits::from(&task.limits),
    );
    endpoint.set_session(Some(Arc::new(session))).unwrap();
    Trial {
        world,
        recorder,
        endpoint,
    }
}

#[test]
fn the_official_python_sdk_lists_and_calls_every_tool_over_stdio_and_http() {
    let started = std::time::Instant::now();
    let python = python_with_sdk();
    eprintln!(
        "conformance: {} ready after {:.1?}",
        python.display(),
        started.elapsed()
    );
    let bureau = bureau_bin();
    eprintln!(
        "conformance: {} ready after {:.1?}",
        bureau.display(),
        started.elapsed()
    );
    let dir = tempfile::tempdir().unwrap();
    let task_dir = dir.path().join("memo");
    write_memo_task(&task_dir, "memo");
    // conformance.py calls the files, mail and calendar tools: the office offers those apps.
    let toml = std::fs::read_to_string(task_dir.join("task.toml")).unwrap();
    std::fs::write(
        task_dir.join("task.toml"),
        toml.replacen(
            "apps = [\"files\", \"mail\"]",
            "apps = [\"files\", \"mail\", \"calendar\"]",
            1,
        ),
    )
    .unwrap();
    // A 2×2 PNG, for `files_image_to_pdf`.
    std::fs::write(task_dir.join("world/files/pixel.png"), PIXEL_PNG).unwrap();
    // A one-second voicemail, for audio content.
    let wav = {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 8000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut out = Vec::new();
        let mut w = hound::WavWriter::new(std::io::Cursor::new(&mut out), spec).unwrap();
        for i in 0..8000i32 {
            w.write_sample(((i % 40 - 20) * 400) as i16).unwrap();
        }
        w.finalize().unwrap();
        out
    };
    std::fs::write(task_dir.join("world/files/voicemail.wav"), &wav).unwrap();
    // An invitation from someone else, for `calendar_respond` (only attendees answer).
    std::fs::create_dir_all(task_dir.join("world/calendar")).unwrap();
    std::fs::write(
        task_dir.join("world/calendar/ada@corp.test.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\n\
         UID:standup@corp.test\r\nDTSTAMP:20260301T080000Z\r\nDTSTART:20260303T083000Z\r\n\
         DTEND:20260303T090000Z\r\nSUMMARY:Standup\r\nORGANIZER:mailto:bob@corp.test\r\n\
         ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:ada@corp.test\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .unwrap();
    let task = Task::load(&task_dir).unwrap();
    assert!(task.apps.iter().any(|a| a == "calendar"));

    let a = trial(&task, &dir.path().join("world-a"));
    let b = trial(&task, &dir.path().join("world-b"));
    let specs = World::tool_specs_for(&task.apps);
    let spec = json!({
        "world_tools": specs,
        "play_tools": PLAY_TOOLS,
        "media": [
            {"path": "pixel.png", "type": "image", "mime": "image/png", "data": b64(PIXEL_PNG)},
            {"path": "voicemail.wav", "type": "audio", "mime": "audio/wav", "data": b64(&wav)},
        ],
        "stdio": {
            "command": bureau,
            "args": ["mcp", "--task", task_dir, "--world-dir", dir.path().join("play")],
        },
        "http": [
            {"url": a.endpoint.url, "token": a.endpoint.token},
            {"url": b.endpoint.url, "token": b.endpoint.token},
        ],
        "bridge": {
            "command": bureau,
            "args": ["mcp", "--trial", a.endpoint.url],
            "env": {"BUREAU_MCP_TOKEN": a.endpoint.token},
        },
    });
    let spec_path = dir.path().join("spec.json");
    std::fs::write(&spec_path, serde_json::to_vec_pretty(&spec).unwrap()).unwrap();

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance.py");
    let out = run(Command::new(&python).arg(&script).arg(&spec_path));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "conformance.py failed (exit {:?}):\n{stderr}\nstdout:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("conformance.py printed no JSON report ({e}):\n{stderr}"));
    eprintln!(
        "conformance: the script passed after {:.1?}",
        started.elapsed()
    );
    if let Some(path) = std::env::var_os("BUREAU_MCP_CONFORMANCE_REPORT") {
        std::fs::write(path, serde_json::to_vec_pretty(&report).unwrap()).unwrap();
    }

    // Every world tool was called over both transports.
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    for transport in ["stdio", "http"] {
        let calls = if transport == "stdio" {
            &report["stdio"]["calls"]
        } else {
            &report["http"]["auto"]["calls"]
        };
        for name in &names {
            assert!(
                calls.get(name).is_some(),
                "{name} was not called over {transport}"
            );
        }
    }
    // The SDK spoke the current protocol on stdio and HTTP, and the legacy one when asked.
    assert_eq!(report["stdio"]["protocol_version"], "2026-07-28");
    assert_eq!(report["http"]["auto"]["protocol_version"], "2026-07-28");
    assert_ne!(report["http"]["legacy"]["protocol_version"], "2026-07-28");

    // Stdio played the task to its end.
    assert_eq!(report["stdio"]["turn_1"]["turn"], 1);
    assert_eq!(report["stdio"]["turn_2"]["turn"], 2);
    let finish = &report["stdio"]["finish"];
    assert_eq!(
        finish["verdicts"].as_array().unwrap().len(),
        task.rubric.len()
    );
    assert!(
        report["stdio"]["after_finish"]
            .as_str()
            .unwrap()
            .starts_with(bureau_mcp::NO_TURN)
    );
    assert!(dir.path().join("play/verdicts.json").is_file());

    // Over HTTP the calls went through trial A's session into its trajectory and world log
    // (the plan, the media reads, the tool errors, one call in legacy mode, two through the
    // bridge); trial B's world was never reached.
    let a_steps = a.recorder.steps();
    let errors = report["http"]["auto"]["tool_errors"]
        .as_array()
        .unwrap()
        .len();
    let media = report["http"]["auto"]["media"].as_array().unwrap().len();
    assert_eq!(media, 2, "the image and the audio were read over HTTP");
    let called = names.len() + media + errors + 1 + 2;
    assert_eq!(
        a_steps.len(),
        called,
        "every HTTP call on trial A is in its trajectory"
    );
    assert!(
        a.world
            .lock()
            .unwrap()
            .log()
            .iter()
            .any(|e| e.actor == Actor::Agent && e.service == "mail" && e.action == "send")
    );
    assert!(b.recorder.is_empty(), "trial B's world was never reached");
    assert!(
        !b.world
            .lock()
            .unwrap()
            .log()
            .iter()
            .any(|e| e.actor == Actor::Agent)
    );
    let refused = &report["http"]["refusals"]["raw_statuses"];
    for what in [
        "no_token",
        "wrong_token",
        "other_trials_token",
        "this_token_on_other_trial",
    ] {
        assert_eq!(refused[what], 401, "{what}");
    }
    assert!(report["http"]["refusals"]["sdk_client_error"].is_string());
    assert_eq!(
        report["bridge"]["tools"].as_array().unwrap().len(),
        names.len()
    );

    // The bridge refuses to start without the token, or with a wrong one, and says why.
    let bridge = |token: Option<&str>| {
        let mut cmd = Command::new(&bureau);
        cmd.args(["mcp", "--trial", &a.endpoint.url])
            .env_remove("BUREAU_MCP_TOKEN")
            .stdin(Stdio::null());
        if let Some(token) = token {
            cmd.env("BUREAU_MCP_TOKEN", token);
        }
        run(&mut cmd)
    };
    let missing = bridge(None);
    assert!(!missing.status.success());
    let msg = String::from_utf8_lossy(&missing.stderr);
    assert!(msg.contains("$BUREAU_MCP_TOKEN is not set"), "{msg}");
    let wrong = bridge(Some(&b.endpoint.token));
    assert!(!wrong.status.success());
    let msg = String::from_utf8_lossy(&wrong.stderr);
    assert!(msg.contains("is the token its token"), "{msg}");
    assert!(wrong.stdout.is_empty(), "nothing on the protocol channel");
    assert_eq!(
        a.recorder.len(),
        a_steps.len(),
        "refused bridges made no calls"
    );
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
