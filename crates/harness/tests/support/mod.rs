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
