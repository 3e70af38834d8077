//! The README, followed word for word by a newcomer: the quick start's main command and every
//! command of "Using it" that needs no external model or harness, run in order from a copy of
//! the repository's suites at a new path (with a space in it, as a fresh clone may have),
//! with relative run directories. Every command must succeed, and no trial may be `error`.
//!
//! The commands are read from README.md itself, so this test follows the README as it changes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The argument lists of the README's commands that run without a model: the quick start's
/// `cargo run --release -- <args>` and each `bureau <args>` line of a `sh` block, comments cut.
fn readme_commands() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let command = line.split(" # ").next().unwrap_or("").trim();
        let args = if let Some(rest) = command.strip_prefix("cargo run --release -- ") {
            rest
        } else if let Some(rest) = command.strip_prefix("bureau ") {
            rest
        } else {
            continue;
        };
        // Needs a model, a key or a third-party harness: not part of a newcomer's first hour.
        if ["llm:", "openai:", "anthropic:", "claude-code", "codex"]
            .iter()
            .any(|m| args.contains(m))
        {
            continue;
        }
        // Needs another benchmark's checkout (and runs of it): `bureau import ...`.
        if args.starts_with("import ") {
            continue;
        }
        out.push(args.split_whitespace().map(str::to_string).collect());
    }
    out
}

#[test]
fn every_readme_command_without_a_model_works_from_a_fresh_path() {
    let commands = readme_commands();
    let names: Vec<String> = commands.iter().map(|c| c.join(" ")).collect();
    // The README's own list, as a newcomer reads it (a guard against the parser losing lines).
    for expected in [
        "run suites/starter --agent oracle",
        "run suites/intranet --agent oracle",
        "run suites/evidence --agent oracle",
        "validate suites",
        "report runs/demo",
        "report runs/demo --html",
        "rescore runs/demo",
        "gen workspace --persona researcher --files 11020 --seed 1 --out ws",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected}: {names:#?}"
        );
    }

    let tmp = tempfile::tempdir().unwrap();
    let clone = tmp.path().join("a fresh clone");
    copy_dir(&repo().join("suites"), &clone.join("suites"));
    for args in &commands {
        let out = Command::new(env!("CARGO_BIN_EXE_bureau"))
            .args(args)
            .current_dir(&clone)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "`bureau {}` exited {:?}:\n{stderr}",
            args.join(" "),
            out.status.code()
        );
        if args[0] == "run" {
            assert!(
                stderr.contains(" 0 errored"),
                "`bureau {}`: a trial errored:\n{stderr}",
                args.join(" ")
            );
        }
    }
    assert!(clone.join("runs/demo/summary.json").is_file());
    assert!(clone.join("runs/demo/html/index.html").is_file());
    assert!(clone.join("ws/.bureau/manifest.json").is_file());
}
