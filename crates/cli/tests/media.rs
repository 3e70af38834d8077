//! `bureau media render`: files made from a spec with their digests, `--check` naming what
//! differs, located errors for a bad spec, one line naming a missing program.

use std::path::Path;
use std::process::{Command, Output};

fn bureau(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bureau"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SPEC: &str = r#"
seed = 4
[[image]]
out = "world/files/receipt.jpg"
template = "receipt"
title = "CAFE DE ZWAAN"
lines = ["1 x Espresso   3.00", "TOTAL EUR   3.00"]
rotate = -2
noise = 0.03

[[chart]]
out = "world/files/q3.png"
kind = "line"
labels = ["Jul", "Aug", "Sep"]
values = [3, 5, 4]

[[scan]]
out = "world/files/signed.pdf"
[[scan.page]]
template = "document"
title = "AGREEMENT"
lines = ["Effective 1 March 2026."]
signature = "J. de Vries"

[[mail]]
out = "turns/2/scan.eml"
from = "Scanner <scanner@office.test>"
to = "anna@office.test"
subject = "Scan"
date = "2026-03-05T09:12:00+01:00"
attachments = ["world/files/signed.pdf"]
"#;

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    [
        "world/files/receipt.jpg",
        "world/files/q3.png",
        "world/files/signed.pdf",
        "turns/2/scan.eml",
    ]
    .iter()
    .map(|p| (p.to_string(), std::fs::read(dir.join(p)).unwrap()))
    .collect()
}

#[test]
fn render_prints_each_file_with_its_digest_and_check_names_what_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("media.toml");
    std::fs::write(&spec, SPEC).unwrap();
    let out = bureau(&["media", "render", spec.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    let first = files(tmp.path());
    for ((path, bytes), line) in first.iter().zip(&lines) {
        let (digest, shown) = line.split_once("  ").unwrap();
        assert_eq!(digest, blake3::hash(bytes).to_hex().to_string());
        assert!(shown.ends_with(path.as_str()), "{line}");
    }
    // Again: the same bytes.
    assert!(
        bureau(&["media", "render", spec.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(files(tmp.path()), first);

    let check = bureau(&["media", "render", spec.to_str().unwrap(), "--check"]);
    assert!(check.status.success(), "{}", text(&check.stdout));
    assert_eq!(
        text(&check.stdout)
            .lines()
            .filter(|l| l.starts_with("ok "))
            .count(),
        4
    );

    std::fs::write(tmp.path().join("world/files/q3.png"), b"edited").unwrap();
    std::fs::remove_file(tmp.path().join("turns/2/scan.eml")).unwrap();
    let check = bureau(&["media", "render", spec.to_str().unwrap(), "--check"]);
    assert_eq!(check.status.code(), Some(1));
    let report = text(&check.stdout);
    assert!(
        report.contains("DIFFERS") && report.contains("world/files/q3.png: committed"),
        "{report}"
    );
    assert!(
        report.contains("MISSING") && report.contains("turns/2/scan.eml: run `bureau media render"),
        "{report}"
    );
    assert!(
        text(&check.stderr).contains("2 of 4 files are not what"),
        "{}",
        text(&check.stderr)
    );
    // --check wrote nothing.
    assert!(!tmp.path().join("turns/2/scan.eml").exists());
}

#[test]
fn a_bad_spec_is_refused_with_located_errors_and_a_missing_program_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("media.toml");
    std::fs::write(
        &spec,
        "[[image]]\nout = \"../escape.png\"\ntemplate = \"polaroid\"\nlines = [\"x\"]\n",
    )
    .unwrap();
    let out = bureau(&["media", "render", spec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "media.toml:2:7: `out = \"../escape.png\"`: `..` would leave the spec's directory"
        ),
        "{err}"
    );
    assert!(
        err.contains("media.toml:3:12: unknown template \"polaroid\""),
        "{err}"
    );
    assert!(!tmp.path().join("../escape.png").exists());

    std::fs::write(&spec, "[[audio]]\nout = \"vm.wav\"\ntext = \"Hello\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_bureau"))
        .args(["media", "render", spec.to_str().unwrap()])
        .env("PATH", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim(),
        "error: making a voicemail needs `espeak-ng`, which is not on PATH; install it (apt-get install espeak-ng)"
    );
}
