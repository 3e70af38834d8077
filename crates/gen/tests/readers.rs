//! Every generated file type opens in a real reader: LibreOffice (docx, xlsx, pptx, rtf to
//! PDF), Python libraries (python-docx, openpyxl, python-pptx, pypdf, Pillow, PyYAML,
//! nbformat, numpy for the large files of grown workspaces, and the standard library) and compilers/interpreters for source code (gcc, g++,
//! node, javac, perl, bash, rustc). A missing reader fails the test with what to install.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use bureau_gen::{GenSpec, Manifest, Persona, generate};

fn need(cmd: &str, args: &[&str], install: &str) {
    let ok = Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{cmd}` is missing or broken; install {install} (see .ci/run)"
    );
}

/// One workspace per persona (the union covers every type); returns (dir, manifest) pairs.
fn workspaces() -> Vec<(tempfile::TempDir, Manifest)> {
    Persona::ALL
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let d = tempfile::tempdir().unwrap();
            let m = generate(
                &GenSpec {
                    persona: *p,
                    files: 160,
                    seed: 40 + i as u64,
                },
                d.path(),
            )
            .unwrap();
            (d, m)
        })
        .collect()
}

/// Up to `n` files of each type across the workspaces: type → absolute paths.
fn sample(ws: &[(tempfile::TempDir, Manifest)], n: usize) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for (d, m) in ws {
        for f in &m.files {
            let v = out.entry(f.ty.clone()).or_default();
            if v.len() < n {
                v.push(d.path().join(&f.path));
            }
        }
    }
    out
}

#[test]
fn python_readers_open_every_data_and_document_type() {
    need(
        "python3",
        &[
            "-c",
            "import docx, openpyxl, pptx, pypdf, PIL, yaml, nbformat",
        ],
        "python3 with `pip install python-docx openpyxl python-pptx pypdf pillow pyyaml nbformat`",
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/readers/check_types.py");
    let ws = workspaces();
    let mut types = std::collections::BTreeSet::new();
    for (d, _) in &ws {
        let out = Command::new("python3")
            .arg(&script)
            .arg(d.path())
            .arg(d.path().join(".bureau/manifest.json"))
            .arg("4")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "python readers failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for t in v["types"].as_array().unwrap() {
            types.insert(t.as_str().unwrap().to_string());
        }
    }
    assert!(
        types.len() >= 50,
        "python checked only {} types: {types:?}",
        types.len()
    );
}

/// Every large file of a grown workspace (`--grow-to`) opens in its reader: numpy for .npy
/// (also inside run archives), the safetensors layout parsed with json + struct, sqlite3 runs
/// the dumps, csv/json/tarfile/zipfile/gzip for the rest.
#[test]
fn python_readers_open_every_large_file_of_a_grown_workspace() {
    need(
        "python3",
        &["-c", "import numpy"],
        "python3 with `pip install numpy`",
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/readers/check_bulk.py");
    let mut types = std::collections::BTreeSet::new();
    for (i, p) in Persona::ALL.iter().enumerate() {
        let d = tempfile::tempdir().unwrap();
        let m = bureau_gen::generate_with(
            &GenSpec {
                persona: *p,
                files: 120,
                seed: 70 + i as u64,
            },
            &bureau_gen::GenOptions {
                grow_to: Some(64 << 20),
            },
            d.path(),
        )
        .unwrap();
        let bulk = m.files.iter().filter(|f| f.role == "bulk").count();
        assert_eq!(bulk, 8, "{p}");
        let out = Command::new("python3")
            .arg(&script)
            .arg(d.path())
            .arg(d.path().join(".bureau/manifest.json"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{p}: python readers failed on large files:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["checked"].as_u64(), Some(bulk as u64), "{p}");
        for t in v["types"].as_array().unwrap() {
            types.insert(t.as_str().unwrap().to_string());
        }
    }
    let want: std::collections::BTreeSet<String> = [
        "npy",
        "safetensors",
        "csv",
        "jsonl",
        "log",
        "sql",
        "tar",
        "zip",
        "gz",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(types, want, "every large-file type checked");
}

#[test]
fn source_code_compiles_or_parses_with_real_toolchains() {
    let ws = workspaces();
    let s = sample(&ws, 4);
    let tmp = tempfile::tempdir().unwrap();
    let run = |what: &str, cmd: &mut Command| {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
        assert!(
            out.status.success(),
            "{what} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let files = |t: &str| {
        s.get(t)
            .cloned()
            .unwrap_or_else(|| panic!("no {t} file generated"))
    };
    need("gcc", &["--version"], "gcc");
    need("g++", &["--version"], "g++");
    need("node", &["--version"], "nodejs");
    need("javac", &["-version"], "a JDK (default-jdk-headless)");
    need("perl", &["-v"], "perl");
    need("bash", &["--version"], "bash");
    need("rustc", &["--version"], "rustc");
    for f in files("c") {
        run(
            &format!("gcc {}", f.display()),
            Command::new("gcc")
                .args(["-fsyntax-only", "-Wall", "-Werror"])
                .arg(&f),
        );
    }
    for f in files("h") {
        run(
            &format!("gcc {}", f.display()),
            Command::new("gcc")
                .args(["-fsyntax-only", "-x", "c"])
                .arg(&f),
        );
    }
    for t in ["cpp", "hpp"] {
        for f in files(t) {
            run(
                &format!("g++ {}", f.display()),
                Command::new("g++")
                    .args(["-std=c++17", "-fsyntax-only", "-x", "c++"])
                    .arg(&f),
            );
        }
    }
    for f in files("js") {
        run(
            &format!("node --check {}", f.display()),
            Command::new("node").arg("--check").arg(&f),
        );
    }
    let java = files("java");
    run(
        "javac",
        Command::new("javac").arg("-d").arg(tmp.path()).args(&java),
    );
    for f in files("pl") {
        run(
            &format!("perl -c {}", f.display()),
            Command::new("perl").arg("-c").arg(&f),
        );
    }
    for f in files("sh") {
        run(
            &format!("bash -n {}", f.display()),
            Command::new("bash").arg("-n").arg(&f),
        );
    }
    for f in files("rs") {
        run(
            &format!("rustc {}", f.display()),
            Command::new("rustc")
                .args([
                    "--edition",
                    "2021",
                    "--crate-type",
                    "lib",
                    "--emit",
                    "metadata",
                    "--test",
                    "-o",
                ])
                .arg(tmp.path().join("out.rmeta"))
                .arg(&f),
        );
    }
}

#[test]
fn libreoffice_converts_office_files_to_pdf() {
    need(
        "libreoffice",
        &["--version"],
        "LibreOffice (libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui)",
    );
    let ws = workspaces();
    let s = sample(&ws, 2);
    let out = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for t in ["docx", "xlsx", "pptx", "rtf"] {
        inputs.extend(
            s.get(t)
                .cloned()
                .unwrap_or_else(|| panic!("no {t} generated")),
        );
    }
    // Same-named inputs would overwrite each other's PDF: copy them under unique names.
    let src = tempfile::tempdir().unwrap();
    let mut copies = Vec::new();
    for (i, p) in inputs.iter().enumerate() {
        let ext = p.extension().unwrap().to_string_lossy().to_string();
        let c = src.path().join(format!("in{i}.{ext}"));
        std::fs::copy(p, &c).unwrap();
        copies.push(c);
    }
    let o = Command::new("libreoffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.path().display()
        ))
        .args(["--headless", "--convert-to", "pdf", "--outdir"])
        .arg(out.path())
        .args(&copies)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "libreoffice failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (i, p) in inputs.iter().enumerate() {
        let pdf = out.path().join(format!("in{i}.pdf"));
        let bytes = std::fs::read(&pdf).unwrap_or_else(|_| {
            panic!(
                "LibreOffice did not convert {} ({}):\n{}",
                p.display(),
                pdf.display(),
                String::from_utf8_lossy(&o.stdout)
            )
        });
        assert!(
            bytes.starts_with(b"%PDF-") && bytes.len() > 500,
            "{}",
            p.display()
        );
    }
}
