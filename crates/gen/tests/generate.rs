//! Generated workspaces: exact counts, determinism, coverage of every type, and a manifest
//! that agrees with the files on disk (hashes, facts stated in the files they name).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use bureau_gen::{GenSpec, MANIFEST_DIR, Manifest, Persona, TYPES, generate};

/// Every file under `root` except `.bureau/`: relative path → blake3.
fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == MANIFEST_DIR {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    rel,
                    blake3::hash(&std::fs::read(&p).unwrap())
                        .to_hex()
                        .to_string(),
                );
            }
        }
    }
    out
}

fn gen_into(spec: GenSpec) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = generate(&spec, dir.path()).unwrap();
    (dir, m)
}

#[test]
fn same_spec_gives_a_byte_identical_tree_and_manifest() {
    let spec = GenSpec {
        persona: Persona::Researcher,
        files: 300,
        seed: 11,
    };
    let (a, ma) = gen_into(spec);
    let (b, mb) = gen_into(spec);
    assert_eq!(tree(a.path()), tree(b.path()));
    let ra = std::fs::read(a.path().join(".bureau/manifest.json")).unwrap();
    let rb = std::fs::read(b.path().join(".bureau/manifest.json")).unwrap();
    assert_eq!(ra, rb, "manifest bytes differ");
    assert_eq!(ma, mb);
    // Modification times are the documents' dates, not the clock.
    let f = &ma.files[0];
    let t = std::fs::metadata(a.path().join(&f.path))
        .unwrap()
        .modified()
        .unwrap();
    let secs = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(secs < 1_900_000_000 && secs > 1_600_000_000, "mtime {secs}");
}

#[test]
fn another_seed_gives_another_tree() {
    let (a, _) = gen_into(GenSpec {
        persona: Persona::OperationsManager,
        files: 120,
        seed: 1,
    });
    let (b, _) = gen_into(GenSpec {
        persona: Persona::OperationsManager,
        files: 120,
        seed: 2,
    });
    assert_ne!(tree(a.path()), tree(b.path()));
}

#[test]
fn the_manifest_lists_exactly_the_files_on_disk() {
    for persona in Persona::ALL {
        let (dir, m) = gen_into(GenSpec {
            persona,
            files: 250,
            seed: 3,
        });
        let on_disk = tree(dir.path());
        assert_eq!(on_disk.len(), 250, "{persona}: file count");
        assert_eq!(m.stats.files, 250);
        let listed: BTreeMap<String, String> = m
            .files
            .iter()
            .map(|f| (f.path.clone(), f.blake3.clone()))
            .collect();
        assert_eq!(on_disk, listed, "{persona}: manifest and disk differ");
        assert!(
            m.stats.max_depth <= 8,
            "{persona}: depth {}",
            m.stats.max_depth
        );
        assert!(
            m.stats.max_depth >= 6,
            "{persona}: depth {}",
            m.stats.max_depth
        );
        // Every referenced path exists.
        let paths: BTreeSet<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
        for f in &m.facts {
            assert!(!f.files.is_empty(), "{}: no files", f.id);
            for p in &f.files {
                assert!(
                    paths.contains(p.as_str()),
                    "fact {} names missing {p}",
                    f.id
                );
            }
        }
        for d in &m.derivations {
            assert!(
                paths.contains(d.source.as_str()) && paths.contains(d.derived.as_str()),
                "{d:?}"
            );
        }
        for c in &m.chains {
            assert_eq!(c.versions.len(), 3);
            for v in c.versions.iter().chain(&c.stale_copies) {
                assert!(paths.contains(v.as_str()), "{v}");
            }
        }
        // Duplicates repeat their original's bytes.
        let by_path: BTreeMap<&str, &str> = m
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.blake3.as_str()))
            .collect();
        let dupes: Vec<_> = m
            .files
            .iter()
            .filter(|f| f.duplicate_of.is_some())
            .collect();
        assert!(!dupes.is_empty(), "{persona}: no duplicates");
        for f in dupes {
            assert_eq!(
                Some(&f.blake3.as_str()),
                by_path.get(f.duplicate_of.as_deref().unwrap())
            );
        }
    }
}

#[test]
fn every_type_appears_and_each_persona_has_at_least_seventy() {
    let mut all = BTreeSet::new();
    for persona in Persona::ALL {
        let (_d, m) = gen_into(GenSpec {
            persona,
            files: 200,
            seed: 5,
        });
        let types: BTreeSet<String> = m.files.iter().map(|f| f.ty.clone()).collect();
        assert!(types.len() >= 70, "{persona}: only {} types", types.len());
        assert_eq!(m.stats.types, types.len());
        all.extend(types);
    }
    let expected: BTreeSet<String> = TYPES.iter().map(|t| t.id.to_string()).collect();
    assert_eq!(all, expected);
    assert!(TYPES.len() >= 70);
}

#[test]
fn planted_facts_are_stated_in_every_file_the_manifest_names() {
    use bureau_formats::{office, text};
    for persona in Persona::ALL {
        let (dir, m) = gen_into(GenSpec {
            persona,
            files: 900,
            seed: 9,
        });
        assert!(m.facts.len() >= 10, "{persona}: {} facts", m.facts.len());
        assert!(m.chains.len() >= 2, "{persona}: {} chains", m.chains.len());
        assert!(
            m.derivations.len() >= 20,
            "{persona}: {} derivations",
            m.derivations.len()
        );
        let media: BTreeSet<&str> = m
            .files
            .iter()
            .filter(|f| f.media.is_some())
            .map(|f| f.path.as_str())
            .collect();
        for f in &m.facts {
            // The value's first part (a figure, a name, a date and time) must be in each file's
            // text; pictures and scans are read by OCR in their own test below.
            let key = f
                .value
                .split(" (")
                .next()
                .unwrap()
                .split(" <")
                .next()
                .unwrap();
            for p in f.files.iter().filter(|p| !media.contains(p.as_str())) {
                let bytes = std::fs::read(dir.path().join(p)).unwrap();
                let txt = office::to_text(p, &bytes).unwrap();
                assert!(
                    key.split_whitespace()
                        .all(|k| text::contains_keyword(&txt, k)),
                    "{persona}: fact {} ({key}) not in {p}:\n{txt}",
                    f.id
                );
            }
        }
        // Chains: earlier versions state the old value, later ones the new value.
        for c in &m.chains {
            for ch in &c.changes {
                let read = |p: &str| {
                    office::to_text(p, &std::fs::read(dir.path().join(p)).unwrap()).unwrap()
                };
                assert!(
                    text::contains_keyword(&read(&ch.from), &ch.before),
                    "{}",
                    ch.from
                );
                assert!(
                    text::contains_keyword(&read(&ch.to), &ch.after),
                    "{}",
                    ch.to
                );
                // The older version cannot know the later value (the later one may quote the
                // old value in its review notes).
                assert!(
                    !text::contains_keyword(&read(&ch.from), &ch.after),
                    "{}",
                    ch.from
                );
            }
        }
    }
}

#[test]
fn every_office_file_opens_with_bureaus_own_readers() {
    use bureau_formats::{office, sheet};
    let (dir, m) = gen_into(GenSpec {
        persona: Persona::OperationsManager,
        files: 400,
        seed: 4,
    });
    let mut n = 0;
    for f in &m.files {
        let bytes = std::fs::read(dir.path().join(&f.path)).unwrap();
        match f.ty.as_str() {
            // A scan: pages of pictures, no text layer.
            "pdf" if f.media.as_deref() == Some("scan") => {
                let t =
                    office::to_text(&f.path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", f.path));
                assert!(
                    t.lines()
                        .all(|l| l.trim().is_empty() || l.starts_with("## Page")),
                    "{}: a scan with text: {t}",
                    f.path
                );
            }
            "docx" | "pptx" | "pdf" | "eml" | "ics" | "vcf" | "html" | "md" | "json" | "yaml" => {
                let t =
                    office::to_text(&f.path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", f.path));
                assert!(!t.trim().is_empty(), "{}: empty text", f.path);
                n += 1;
            }
            "xlsx" | "csv" | "tsv" => {
                let wb =
                    sheet::read_file(&f.path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", f.path));
                assert!(wb.cell_count() > 0, "{}", f.path);
                n += 1;
            }
            _ => {}
        }
    }
    assert!(n > 150, "only {n} office files read");
}

#[test]
fn bad_specs_are_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let e = generate(
        &GenSpec {
            persona: Persona::Researcher,
            files: 3,
            seed: 1,
        },
        dir.path(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--files 3"), "{e}");
    let e = "chef".parse::<Persona>().unwrap_err();
    assert!(e.to_string().contains("researcher"), "{e}");
    assert_eq!(
        "ai-product-manager".parse::<Persona>().unwrap(),
        Persona::AiProductManager
    );
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 6, .. ProptestConfig::default() })]
        /// Any small spec: exact count, stable manifest, all paths relative and inside the tree.
        #[test]
        fn small_specs_are_exact_and_deterministic(p in 0usize..5, files in 40usize..140, seed in any::<u64>()) {
            let spec = GenSpec { persona: Persona::ALL[p], files, seed };
            let (a, ma) = gen_into(spec);
            let (_b, mb) = gen_into(spec);
            prop_assert_eq!(ma.files.len(), files);
            prop_assert_eq!(tree(a.path()).len(), files);
            prop_assert_eq!(ma.to_json(), mb.to_json());
            for f in &ma.files {
                prop_assert!(!f.path.starts_with('/') && !f.path.contains(".."), "{}", f.path);
            }
        }
    }
}

// ---- growing a workspace to a size (--grow-to) ----

fn grow_into(spec: GenSpec, grow_to: u64) -> (tempfile::TempDir, Manifest) {
    let dir = tempfile::tempdir().unwrap();
    let m = bureau_gen::generate_with(
        &spec,
        &bureau_gen::GenOptions {
            grow_to: Some(grow_to),
        },
        dir.path(),
    )
    .unwrap();
    (dir, m)
}

#[test]
fn a_grown_workspace_keeps_the_file_count_reaches_the_size_and_repeats_byte_for_byte() {
    let spec = GenSpec {
        persona: Persona::Researcher,
        files: 400,
        seed: 5,
    };
    let target = 48 << 20;
    let (a, ma) = grow_into(spec, target);
    let (b, mb) = grow_into(spec, target);
    assert_eq!(ma.stats.files, 400, "--files counts the large files too");
    assert_eq!(ma.files.len(), 400);
    assert!(ma.stats.bytes >= target, "{} < {target}", ma.stats.bytes);
    assert!(
        ma.stats.bytes < target + (target / 20),
        "overshoots: {}",
        ma.stats.bytes
    );
    assert_eq!(ma.grow_to, Some(target));
    let ta = tree(a.path());
    assert_eq!(ta, tree(b.path()));
    assert_eq!(
        std::fs::read(a.path().join(".bureau/manifest.json")).unwrap(),
        std::fs::read(b.path().join(".bureau/manifest.json")).unwrap()
    );
    assert_eq!(ma, mb);
    // Every file on disk is in the manifest with its hash and size, the large ones included.
    assert_eq!(ta.len(), ma.files.len());
    let bulk: Vec<_> = ma.files.iter().filter(|f| f.role == "bulk").collect();
    assert_eq!(bulk.len(), 6, "one large file per 8 MiB asked for");
    for f in &ma.files {
        assert_eq!(ta[&f.path], f.blake3, "{}", f.path);
        let md = std::fs::metadata(a.path().join(&f.path)).unwrap();
        assert_eq!(md.len(), f.size, "{}", f.path);
    }
    let types: BTreeSet<&str> = bulk.iter().map(|f| f.ty.as_str()).collect();
    assert!(
        types.is_superset(&BTreeSet::from([
            "npy",
            "safetensors",
            "csv",
            "jsonl",
            "tar"
        ])),
        "{types:?}"
    );
    assert!(
        ma.stats.types > TYPES.len(),
        "npy and safetensors count as types"
    );
    // They live in the researcher's own folders, at depth ≤ 8, named like the tree.
    for f in &bulk {
        let top = f.path.split('/').next().unwrap();
        assert!(
            ["data", "experiments", "results", "archive", "downloads"].contains(&top),
            "{}",
            f.path
        );
        assert!(f.path.split('/').count() <= 9, "{}", f.path);
        assert!(f.size >= 64 << 10, "{}: {}", f.path, f.size);
    }
    assert!(
        bulk.iter()
            .any(|f| f.ty == "safetensors" && f.path.contains("/checkpoints/")),
        "a checkpoint under experiments/.../checkpoints"
    );
    // A different seed gives different bytes.
    let (_c, mc) = grow_into(GenSpec { seed: 6, ..spec }, target);
    let hashes = |m: &Manifest| -> BTreeSet<String> {
        m.files
            .iter()
            .filter(|f| f.role == "bulk")
            .map(|f| f.blake3.clone())
            .collect()
    };
    assert!(hashes(&ma).is_disjoint(&hashes(&mc)));
}

#[test]
fn without_grow_to_the_output_is_exactly_generates() {
    let spec = GenSpec {
        persona: Persona::BackendDeveloper,
        files: 200,
        seed: 9,
    };
    let (a, ma) = gen_into(spec);
    let b = tempfile::tempdir().unwrap();
    let mb = bureau_gen::generate_with(&spec, &Default::default(), b.path()).unwrap();
    assert_eq!(tree(a.path()), tree(b.path()));
    assert_eq!(ma, mb);
    let json = std::fs::read_to_string(a.path().join(".bureau/manifest.json")).unwrap();
    assert!(!json.contains("grow_to"), "no new key in ungrown manifests");
    assert!(ma.files.iter().all(|f| f.role != "bulk"));
}

#[test]
fn a_grow_to_below_the_ordinary_tree_is_refused_with_the_size_to_ask_for() {
    let spec = GenSpec {
        persona: Persona::OperationsManager,
        files: 200,
        seed: 2,
    };
    let dir = tempfile::tempdir().unwrap();
    let e = bureau_gen::generate_with(
        &spec,
        &bureau_gen::GenOptions {
            grow_to: Some(1000),
        },
        dir.path(),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("--grow-to 1000 bytes is too small"), "{msg}");
    assert!(msg.contains("ask for"), "{msg}");
}

#[test]
fn sizes_parse_with_decimal_and_binary_units() {
    use bureau_gen::parse_size;
    assert_eq!(parse_size("1GiB"), Ok(1 << 30));
    assert_eq!(parse_size("1G"), Ok(1 << 30));
    assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
    assert_eq!(parse_size("500MB"), Ok(500_000_000));
    assert_eq!(parse_size("1.5 MiB"), Ok(3 << 19));
    assert_eq!(parse_size("4096"), Ok(4096));
    assert!(
        parse_size("1 parsec")
            .unwrap_err()
            .contains("unknown size unit")
    );
    assert!(parse_size("GB").is_err());
}

/// The text tesseract reads in a picture, page layout analysis (psm 3) and sparse text (psm
/// 11, which finds the values written on a chart's bars) together; `None` without tesseract.
fn ocr(bytes: &[u8], ext: &str) -> Option<String> {
    let tesseract = bureau_media::external::find("tesseract")?;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(format!("in.{ext}"));
    std::fs::write(&input, bytes).unwrap();
    let mut text = String::new();
    for psm in ["3", "11"] {
        let out = std::process::Command::new(&tesseract)
            .args([input.to_str().unwrap(), "stdout", "--psm", psm])
            .env("OMP_THREAD_LIMIT", "1")
            .output()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&out.stdout));
        text.push('\n');
    }
    Some(text)
}

#[test]
fn evidence_media_carry_their_facts_legibly_and_are_what_the_manifest_says() {
    use bureau_formats::text;
    let (dir, m) = gen_into(GenSpec {
        persona: Persona::LogisticsManager,
        files: 900,
        seed: 5,
    });
    let media: BTreeMap<&str, &str> = m
        .files
        .iter()
        .filter_map(|f| f.media.as_deref().map(|k| (f.path.as_str(), k)))
        .collect();
    let kinds: BTreeSet<&str> = media.values().copied().collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["bar chart", "receipt photo", "scan", "whiteboard photo"])
    );
    // Each is what its name says, by its bytes.
    for (path, kind) in &media {
        let bytes = std::fs::read(dir.path().join(path)).unwrap();
        let sniffed = bureau_media::sniff(&bytes).map(|t| t.name());
        let want = match *kind {
            "scan" => "pdf",
            "bar chart" => "png",
            _ => "jpeg",
        };
        assert_eq!(sniffed, Some(want), "{path}");
    }
    // The scan is image-only: every page an image, no text layer.
    let scan = media.iter().find(|(_, k)| **k == "scan").unwrap().0;
    let bytes = std::fs::read(dir.path().join(scan)).unwrap();
    let pages = bureau_media::scan::page_images(scan, &bytes, &[1, 2]).unwrap();
    assert!(pages.iter().all(|p| p.image.is_ok()), "{pages:?}");
    // Facts of media are stated by media only, and OCR reads each one's value.
    let media_facts: Vec<_> = m
        .facts
        .iter()
        .filter(|f| f.files.iter().any(|p| media.contains_key(p.as_str())))
        .collect();
    assert_eq!(media_facts.len(), 7, "{media_facts:?}");
    let mut read = BTreeMap::new();
    for f in &media_facts {
        assert_eq!(f.files.len(), 1, "{}", f.id);
        let p = &f.files[0];
        let text = match read.get(p) {
            Some(t) => t,
            None => {
                let bytes = std::fs::read(dir.path().join(p)).unwrap();
                let t = if p.ends_with(".pdf") {
                    let mut t = Some(String::new());
                    for page in bureau_media::scan::page_images(p, &bytes, &[1, 2]).unwrap() {
                        let img = page.image.unwrap();
                        match ocr(&img.bytes, "png") {
                            Some(x) => t.as_mut().unwrap().push_str(&x),
                            None => t = None,
                        }
                    }
                    t
                } else {
                    ocr(&bytes, p.rsplit('.').next().unwrap())
                };
                let Some(t) = t else {
                    panic!(
                        "tesseract is not on PATH: install it (apt-get install tesseract-ocr) to read the media facts back"
                    );
                };
                read.insert(p.clone(), t);
                &read[p]
            }
        };
        // The value, its parenthesised count too ("Nordics (383)" → Nordics, 383).
        for word in f.value.replace(['(', ')'], " ").split_whitespace() {
            assert!(
                text::contains_keyword(text, word),
                "fact {} ({}): {word:?} not read in {p}:\n{text}",
                f.id,
                f.value
            );
        }
    }
}
