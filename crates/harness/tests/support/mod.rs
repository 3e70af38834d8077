//! Shared by the harness crate's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The SDK version range the fake harness is written for (as crates/mcp's conformance test).
const SDK: &str = "mcp>=2.3,<3";
const SDK_PROBE: &str = "import httpx2; from mcp import Client; \
    from mcp.client.streamable_http import streamable_http_client";

fn has_sdk(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", SDK_PROBE])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python with the official MCP SDK: the system `python3`, or the virtual environment the
/// MCP conformance test makes under the build's temporary directory (made here if missing).
/// Never skips: without `python3` the test fails and says what to install.
pub fn python_with_sdk() -> PathBuf {
    let system = PathBuf::from("python3");
    match Command::new(&system).arg("--version").output() {
        Ok(out) if out.status.success() => {}
        _ => panic!(
            "python3 is not installed: the fake harness of this test uses the official Python \
             MCP SDK — install Python 3.10 or newer with venv and pip"
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
    let _ = std::fs::remove_dir_all(&venv);
    let out = Command::new(&system)
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python3 -m venv failed — install python3-venv, or `pip install mcp`:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", SDK])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pip install {SDK} failed (PyPI must be reachable):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(has_sdk(&python), "{SDK} was installed but does not import");
    python
}

pub fn fake_harness() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_harness.py")
}

/// A scripted model server (`support/models/<wire>.py`) running for one test: it answers the
/// harness's model calls from `script` (see the script's docstring) and logs every request.
pub struct ModelServer {
    child: std::process::Child,
    pub port: u16,
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl ModelServer {
    /// Start `support/models/<wire>.py` (`anthropic`, `responses` or `chat`) with `script`.
    pub fn start(wire: &str, script: &serde_json::Value) -> ModelServer {
        ModelServer::start_with(wire, script, &[])
    }

    /// [`ModelServer::start`] with more arguments for the server (`--require-key K`).
    pub fn start_with(wire: &str, script: &serde_json::Value, extra: &[&str]) -> ModelServer {
        let dir = tempfile::tempdir().unwrap();
        let script_path = dir.path().join("script.json");
        std::fs::write(&script_path, serde_json::to_vec_pretty(script).unwrap()).unwrap();
        let port_file = dir.path().join("port");
        let log = dir.path().join("requests.jsonl");
        let server = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/support/models")
            .join(format!("{wire}.py"));
        let child = Command::new("python3")
            .arg(&server)
            .arg("--script")
            .arg(&script_path)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .args(extra)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("python3 {}: {e}", server.display()));
        let started = std::time::Instant::now();
        let port = loop {
            if let Ok(p) = std::fs::read_to_string(&port_file)
                && let Ok(p) = p.trim().parse::<u16>()
            {
                break p;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "the model server {} did not start",
                server.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        ModelServer {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request the server received, in order.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The program of a real harness on PATH, or `None` when the CI's install of it failed
/// (`BUREAU_HARNESS_SKIP_<NAME>` says why, printed loudly). A harness that is neither on
/// PATH nor marked as failed to install fails the test, naming the install script.
pub fn real_harness(program: &str, name: &str) -> Option<PathBuf> {
    let var = format!(
        "BUREAU_HARNESS_SKIP_{}",
        name.to_ascii_uppercase().replace('-', "_")
    );
    if let Ok(why) = std::env::var(&var) {
        eprintln!(
            "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
             !! {name} NOT TESTED: its registry install failed ({var}): {why}\n\
             !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
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
            "`{program}` ({name}) is not on PATH: run `.ci/harnesses/{name}.sh` and put the \
             directory it prints on PATH (as .ci/run does), or set {var} to say why it cannot \
             be installed"
        ),
    }
}
