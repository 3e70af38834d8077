use super::*;

/// A trial directory with plain records and the trees a run leaves.
fn trial(dir: &Path) {
    let w = |rel: &str, bytes: &[u8]| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    w("result.json", b"{}\n");
    w("trajectory.jsonl", b"");
    w("snapshots/turn-0.json", b"{\"turn\":0}");
    w("snapshots/turn-1.json", b"{\"turn\":1}");
    w("world/workspace/reports/a.md", b"# A\n");
    w("world/blobs/abc", &[7u8; 10_000]);
    w("deliverables/reports/a.md", b"# A\n");
    w("mail/u@x.test/INBOX/m00001.eml", b"Subject: hi\r\n\r\nbody");
    w(
        "calendar/u@x.test.ics",
        b"BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n",
    );
    w("attempts/1/result.json", b"{}");
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn packing_keeps_plain_records_and_reads_back_every_file() {
    let d = tempfile::tempdir().unwrap();
    trial(d.path());
    let before = TrialFiles::open(d.path()).unwrap().list("").unwrap();
    let stats = pack(d.path()).unwrap();
    assert_eq!(stats.files, 7);
    assert_eq!(stats.skipped, 0);
    assert!(stats.archive_bytes > 0 && stats.archive_bytes < stats.bytes);
    assert_eq!(
        names(d.path()),
        ["attempts", "result.json", "trajectory.jsonl", "trial.zip"]
    );
    let f = TrialFiles::open(d.path()).unwrap();
    assert!(f.is_packed());
    assert_eq!(f.list("").unwrap(), before);
    assert_eq!(
        f.read("world/blobs/abc", 1 << 20).unwrap(),
        vec![7u8; 10_000]
    );
    assert_eq!(f.read("result.json", 100).unwrap(), b"{}\n");
    assert_eq!(
        f.list("snapshots").unwrap().keys().collect::<Vec<_>>(),
        ["snapshots/turn-0.json", "snapshots/turn-1.json"]
    );
    assert!(f.exists("deliverables/reports/a.md"));
    assert!(!f.exists("deliverables/reports"));
    assert!(f.read("deliverables/reports", 100).is_err());
    assert!(f.read("nope.json", 100).unwrap_err().is_not_found());
    // Bounded: a file larger than asked is refused, from the archive as from disk.
    let big = f.read("world/blobs/abc", 100).unwrap_err();
    assert!(big.to_string().contains("10000 bytes"), "{big}");
    assert!(f.read("result.json", 1).is_err());
    // Trees copied out as a directory.
    let out = tempfile::tempdir().unwrap();
    assert_eq!(f.copy_tree("world/blobs", out.path(), 1 << 20).unwrap(), 1);
    assert_eq!(std::fs::read(out.path().join("abc")).unwrap().len(), 10_000);
}

#[test]
fn the_old_unpacked_layout_reads_the_same() {
    let d = tempfile::tempdir().unwrap();
    trial(d.path());
    let f = TrialFiles::open(d.path()).unwrap();
    assert!(!f.is_packed());
    assert_eq!(
        f.read("snapshots/turn-1.json", 100).unwrap(),
        b"{\"turn\":1}"
    );
    assert_eq!(f.list("mail").unwrap().len(), 1);
    assert!(f.read("../x", 100).is_err());
}

#[test]
fn archives_are_deterministic() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    trial(a.path());
    trial(b.path());
    // Other times and modes on disk do not change the archive.
    std::fs::set_permissions(
        b.path().join("world/blobs/abc"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(b.path().join("snapshots/turn-1.json"), b"{\"turn\":1}").unwrap();
    pack(a.path()).unwrap();
    pack(b.path()).unwrap();
    assert_eq!(
        std::fs::read(a.path().join(ARCHIVE)).unwrap(),
        std::fs::read(b.path().join(ARCHIVE)).unwrap()
    );
}

#[test]
fn links_and_special_files_are_neither_archived_nor_followed() {
    let d = tempfile::tempdir().unwrap();
    trial(d.path());
    let secret = tempfile::tempdir().unwrap();
    std::fs::write(secret.path().join("s"), b"secret").unwrap();
    std::os::unix::fs::symlink(
        secret.path().join("s"),
        d.path().join("world/workspace/link"),
    )
    .unwrap();
    std::os::unix::fs::symlink(secret.path(), d.path().join("deliverables/dirlink")).unwrap();
    let unpacked = TrialFiles::open(d.path()).unwrap();
    let refused = unpacked.read("world/workspace/link", 100).unwrap_err();
    assert!(refused.to_string().contains("symbolic link"), "{refused}");
    assert!(unpacked.read("deliverables/dirlink/s", 100).is_err());
    assert!(
        !unpacked
            .list("deliverables")
            .unwrap()
            .keys()
            .any(|k| k.contains("dirlink"))
    );
    let stats = pack(d.path()).unwrap();
    assert_eq!(stats.skipped, 2);
    let f = TrialFiles::open(d.path()).unwrap();
    assert!(!f.list("").unwrap().keys().any(|k| k.contains("link")));
    assert!(
        f.read("world/workspace/link", 100)
            .unwrap_err()
            .is_not_found()
    );
}

/// A zip archive with the given entries (stored as Bureau writes them).
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut out);
    for (name, bytes) in entries {
        z.start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap();
    out.into_inner()
}

#[test]
fn archives_naming_paths_outside_the_trial_are_refused() {
    for bad in ["../escape", "/etc/passwd", "snapshots/../../x", "a//b"] {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(ARCHIVE), zip_of(&[(bad, b"x")])).unwrap();
        let e = TrialFiles::open(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("trial.zip") && e.contains("refused"),
            "{bad}: {e}"
        );
        assert!(unpack_in_place(d.path()).is_err());
        assert!(!d.path().parent().unwrap().join("escape").exists());
    }
}

#[test]
fn truncated_or_corrupt_archives_are_a_clear_error_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    trial(d.path());
    pack(d.path()).unwrap();
    let archive = d.path().join(ARCHIVE);
    let bytes = std::fs::read(&archive).unwrap();
    // Cut off: the central directory is gone.
    std::fs::write(&archive, &bytes[..bytes.len() / 2]).unwrap();
    let e = TrialFiles::open(d.path()).unwrap_err().to_string();
    assert!(e.contains(&archive.display().to_string()), "{e}");
    assert!(e.contains("truncated or corrupt"), "{e}");
    // The plain files still read without it.
    assert_eq!(
        TrialFiles::loose(d.path()).read("result.json", 10).unwrap(),
        b"{}\n"
    );
    // Damaged inside an entry: that entry is an error naming the archive and the entry.
    let mut damaged = bytes.clone();
    let at = damaged
        .windows(b"world/blobs/abc".len())
        .position(|w| w == b"world/blobs/abc")
        .unwrap()
        + b"world/blobs/abc".len()
        + 8;
    for b in &mut damaged[at..at + 16] {
        *b ^= 0xff;
    }
    std::fs::write(&archive, &damaged).unwrap();
    let f = TrialFiles::open(d.path()).unwrap();
    let e = f.read("world/blobs/abc", 1 << 20).unwrap_err().to_string();
    assert!(
        e.contains("trial.zip") && e.contains("world/blobs/abc"),
        "{e}"
    );
}

#[test]
fn a_linked_archive_is_not_followed() {
    let d = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(
        elsewhere.path().join("z"),
        zip_of(&[("snapshots/turn-0.json", b"{}")]),
    )
    .unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("z"), d.path().join(ARCHIVE)).unwrap();
    let e = TrialFiles::open(d.path()).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
}

#[test]
fn unpacking_restores_the_layout_in_place_or_elsewhere() {
    let d = tempfile::tempdir().unwrap();
    trial(d.path());
    let before = TrialFiles::open(d.path()).unwrap().list("").unwrap();
    pack(d.path()).unwrap();
    assert!(pack(d.path()).unwrap_err().to_string().contains("already"));

    let to = tempfile::tempdir().unwrap();
    let copy = to.path().join("copy");
    assert_eq!(unpack_to(d.path(), &copy).unwrap(), 9);
    let copied = TrialFiles::open(&copy).unwrap();
    assert!(!copied.is_packed());
    let mut expected = before.clone();
    expected.retain(|k, _| !k.starts_with("attempts/"));
    assert_eq!(copied.list("").unwrap(), expected);
    assert!(
        unpack_to(d.path(), &copy)
            .unwrap_err()
            .to_string()
            .contains("not empty")
    );

    assert_eq!(unpack_in_place(d.path()).unwrap(), 7);
    assert!(!d.path().join(ARCHIVE).exists());
    let f = TrialFiles::open(d.path()).unwrap();
    assert!(!f.is_packed());
    assert_eq!(f.list("").unwrap(), before);
    assert_eq!(unpack_in_place(d.path()).unwrap(), 0);
}

#[test]
fn nothing_to_pack_writes_no_archive() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("result.json"), b"{}").unwrap();
    assert_eq!(pack(d.path()).unwrap(), PackStats::default());
    assert_eq!(names(d.path()), ["result.json"]);
}

#[test]
fn relative_paths_are_checked() {
    for ok in ["a", "a/b.json", "world/blobs/0a1b", ".hidden/x"] {
        assert!(check_rel(ok).is_ok(), "{ok}");
    }
    for bad in ["", "/a", "a/../b", "./a", "a/", "a//b", "..", "a\0b"] {
        assert!(check_rel(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn trees_built_elsewhere_pack_into_the_same_archive() {
    // In place.
    let a = tempfile::tempdir().unwrap();
    trial(a.path());
    pack(a.path()).unwrap();
    // The same trees in a scratch directory, the plain records in the trial directory.
    let b = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    trial(trees.path());
    for plain in ["result.json", "trajectory.jsonl"] {
        std::fs::rename(trees.path().join(plain), b.path().join(plain)).unwrap();
    }
    std::fs::remove_dir_all(trees.path().join("attempts")).unwrap();
    let stats = pack_from(b.path(), trees.path()).unwrap();
    assert_eq!(stats.files, 7);
    assert_eq!(
        std::fs::read(a.path().join(ARCHIVE)).unwrap(),
        std::fs::read(b.path().join(ARCHIVE)).unwrap(),
        "the archive's bytes depend on the trees only"
    );
    assert_eq!(
        names(b.path()),
        ["result.json", "trajectory.jsonl", "trial.zip"]
    );
    assert!(names(trees.path()).is_empty(), "the trees are deleted");
}
