//! Reset and materialisation at Workspace-Bench scale, side by side in one run.
//!
//! `cargo bench -p bureau-replica --bench reset` (needs `rsync` and `cp`). The tree is the
//! 11,020-file researcher workspace of `bureau gen workspace --persona researcher --files
//! 11020 --seed 1 --grow-to 1GiB` (bureau-gen, a dev-dependency): the ordinary documents,
//! code and data plus the large files a researcher keeps (.npy recordings, .safetensors
//! checkpoints, logs, archived runs). It is written under the system temp dir (the
//! generator's `.bureau/` manifest moved out of the baseline); the run holds at most the
//! baseline and two full copies (~3.3 GB) and deletes everything at the end.
//!
//! `BUREAU_BENCH_SCALE=0.1` grows the tree to a tenth of the bytes for a quick run;
//! `BUREAU_BENCH_TREE=synthetic` uses the older synthetic tree of the same shape (11,020
//! random-byte files in 2,000 folders, 1.31 GB) instead.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bureau_replica::{Backend, Baseline, Manifest, Pool, PoolOptions};

const FILES: usize = 11_020;
const DIRS: usize = 2_000;
const MAX_DEPTH: usize = 8;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

const TOP: [&str; 6] = [
    "literature",
    "experiments",
    "results",
    "drafts",
    "data",
    "archive",
];
const EXT: [&str; 12] = [
    "pdf", "csv", "md", "txt", "docx", "xlsx", "json", "py", "ipynb", "png", "tex", "log",
];

/// Write the synthetic workspace; returns (files, dirs, bytes).
fn generate(root: &Path, scale: f64) -> (usize, usize, u64) {
    let mut rng = Rng(0x5eed_2026);
    fs::create_dir_all(root).unwrap();
    let mut dirs: Vec<(PathBuf, usize)> = Vec::new();
    for t in TOP {
        fs::create_dir(root.join(t)).unwrap();
        dirs.push((PathBuf::from(t), 1));
    }
    while dirs.len() < DIRS {
        let (parent, depth) = dirs[rng.below(dirs.len() as u64) as usize].clone();
        if depth >= MAX_DEPTH {
            continue;
        }
        let name = format!(
            "{}_{}",
            ["v", "run", "q", "misc", "old", "set"][rng.below(6) as usize],
            dirs.len()
        );
        let p = parent.join(name);
        fs::create_dir(root.join(&p)).unwrap();
        dirs.push((p, depth + 1));
    }
    // Sizes: 10,000 small (1–16 KiB), 1,000 medium (0.2–1.8 MiB), 20 large (5–15 MiB):
    // about 1.2 GB in all.
    let mut bytes = 0u64;
    let mut buf = vec![0u8; 16 << 20];
    for i in 0..FILES {
        let size = if i % 551 == 0 && i / 551 < 20 {
            (5 << 20) + rng.below(10 << 20)
        } else if i % 11 == 0 {
            (200 << 10) + rng.below(1600 << 10)
        } else {
            1024 + rng.below(15 << 10)
        };
        let size = ((size as f64) * scale).max(16.0) as usize;
        let (dir, _) = &dirs[rng.below(dirs.len() as u64) as usize];
        let name = format!("f{i:05}.{}", EXT[i % EXT.len()]);
        rng.fill(&mut buf[..size]);
        fs::write(root.join(dir).join(name), &buf[..size]).unwrap();
        bytes += size as u64;
    }
    (FILES, dirs.len(), bytes)
}

/// The researcher workspace from `bureau gen workspace` grown to `grow_to` bytes, with its
/// `.bureau/` manifest moved to `aside`. Returns (files, folders, bytes, large files, their
/// bytes, the large text files an agent might append to).
#[allow(clippy::type_complexity)]
fn generate_researcher(
    root: &Path,
    aside: &Path,
    grow_to: u64,
) -> (usize, usize, u64, usize, u64, Vec<PathBuf>) {
    let spec = bureau_gen::GenSpec {
        persona: bureau_gen::Persona::Researcher,
        files: FILES,
        seed: 1,
    };
    let m = bureau_gen::generate_with(
        &spec,
        &bureau_gen::GenOptions {
            grow_to: Some(grow_to),
        },
        root,
    )
    .unwrap();
    fs::rename(root.join(bureau_gen::MANIFEST_DIR), aside).unwrap();
    let bulk: Vec<_> = m.files.iter().filter(|f| f.role == "bulk").collect();
    (
        m.stats.files,
        m.stats.folders,
        m.stats.bytes,
        bulk.len(),
        bulk.iter().map(|f| f.size).sum(),
        bulk.iter()
            .filter(|f| f.ty == "csv" || f.ty == "jsonl")
            .map(|f| PathBuf::from(&f.path))
            .collect(),
    )
}

/// An agent-like change of `n` paths: edits, adds, deletes, one same-size same-mtime edit and
/// one chmod (for n = 1: the same-size same-mtime edit alone); from n = 10 on, one of the
/// edits appends a few rows to a large file (`big`: the agent adds results to a log).
/// Deterministic per `seed`.
fn agent_change(ws: &Path, files: &[PathBuf], big: &[PathBuf], n: usize, seed: u64) {
    let mut rng = Rng(seed);
    let mut picked: BTreeSet<PathBuf> = BTreeSet::new();
    let pick = |rng: &mut Rng, picked: &mut BTreeSet<PathBuf>| loop {
        let f = &files[rng.below(files.len() as u64) as usize];
        if picked.insert(f.clone()) {
            return f.clone();
        }
    };
    // 1: the same-size same-mtime edit (the change a size/mtime comparison cannot see).
    let f = ws.join(pick(&mut rng, &mut picked));
    let md = fs::metadata(&f).unwrap();
    let t = md.modified().unwrap();
    let mut body = fs::read(&f).unwrap();
    body[0] = body[0].wrapping_add(1);
    fs::write(&f, &body).unwrap();
    fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_times(fs::FileTimes::new().set_modified(t))
        .unwrap();
    if n == 1 {
        return;
    }
    // 2: a chmod.
    let f = ws.join(pick(&mut rng, &mut picked));
    fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
    for k in 2..n {
        if k == 2 && n >= 10 && !big.is_empty() {
            let rel = &big[rng.below(big.len() as u64) as usize];
            if picked.insert(rel.clone()) {
                let mut w = fs::File::options().append(true).open(ws.join(rel)).unwrap();
                std::io::Write::write_all(&mut w, b"\n# appended by the agent: 3 more rows\n")
                    .unwrap();
                continue;
            }
        }
        match k % 10 {
            0..=3 => {
                // edit: rewrite a few KiB at the start, new size
                let f = ws.join(pick(&mut rng, &mut picked));
                let mut buf = vec![0u8; 2048 + rng.below(4096) as usize];
                rng.fill(&mut buf);
                fs::write(&f, &buf).unwrap();
            }
            4..=6 => {
                let dir = ws
                    .join(pick(&mut rng, &mut picked))
                    .parent()
                    .unwrap()
                    .to_path_buf();
                let mut buf = vec![0u8; 4096];
                rng.fill(&mut buf);
                fs::write(dir.join(format!("agent_new_{seed}_{k}.md")), &buf).unwrap();
            }
            _ => fs::remove_file(ws.join(pick(&mut rng, &mut picked))).unwrap(),
        }
    }
}

fn run(cmd: &mut Command) {
    let st = cmd
        .status()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (is it installed?)"));
    assert!(st.success(), "{cmd:?} failed");
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// The Workspace-Bench rollback (Alg. 1), single-threaded: walk both trees, replicate missing
/// nodes, delete extraneous ones, overwrite files whose size or mtime differ.
fn workspace_bench_reset(base: &Path, ws: &Path) {
    let mut names: BTreeSet<std::ffi::OsString> = BTreeSet::new();
    for e in fs::read_dir(ws).unwrap() {
        names.insert(e.unwrap().file_name());
    }
    for e in fs::read_dir(base).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        names.remove(&name);
        let (b, w) = (e.path(), ws.join(&name));
        let bm = fs::symlink_metadata(&b).unwrap();
        let wm = fs::symlink_metadata(&w).ok();
        if bm.is_dir() {
            if wm.as_ref().is_some_and(|m| !m.is_dir()) {
                fs::remove_file(&w).unwrap();
            }
            if !w.exists() {
                run(Command::new("cp").arg("-a").arg(&b).arg(&w));
            } else {
                workspace_bench_reset(&b, &w);
            }
        } else {
            let differs = match &wm {
                None => true,
                Some(m) => m.len() != bm.len() || m.modified().ok() != bm.modified().ok(),
            };
            if differs {
                if wm.is_some_and(|m| m.is_dir()) {
                    fs::remove_dir_all(&w).unwrap();
                }
                fs::copy(&b, &w).unwrap();
                fs::File::options()
                    .write(true)
                    .open(&w)
                    .unwrap()
                    .set_times(fs::FileTimes::new().set_modified(bm.modified().unwrap()))
                    .unwrap();
            }
        }
    }
    for extra in names {
        let p = ws.join(extra);
        if p.is_dir() {
            fs::remove_dir_all(p).unwrap();
        } else {
            fs::remove_file(p).unwrap();
        }
    }
}

fn exact(baseline: &Baseline, ws: &Path) -> String {
    let m = Manifest::scan(ws).unwrap();
    if m.digest() == baseline.digest() {
        return "yes".into();
    }
    let bad: Vec<_> = baseline
        .manifest()
        .entries
        .iter()
        .filter(|(rel, b)| m.entries.get(*rel).is_none_or(|e| !e.same_as(b)))
        .map(|(rel, _)| rel.display().to_string())
        .chain(
            m.entries
                .keys()
                .filter(|k| !baseline.manifest().entries.contains_key(*k))
                .map(|k| format!("+{}", k.display())),
        )
        .collect();
    format!("NO ({} differ: {})", bad.len(), bad.join(", "))
}

fn free_bytes(dir: &Path) -> u64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid C string and an out-parameter of the right type.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail as u64 * st.f_frsize as u64
}

/// The least free space seen under the bench's dir (for the peak-usage line).
static MIN_FREE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

fn disk_mark(dir: &Path) {
    MIN_FREE.fetch_min(free_bytes(dir), std::sync::atomic::Ordering::Relaxed);
}

fn rss_kib(pid: u32) -> u64 {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` would run this too: only run fully
    // when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let scale: f64 = std::env::var("BUREAU_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let reps: usize = 5;
    let work = std::env::temp_dir().join(format!("bureau-replica-bench-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).unwrap();
    let base = work.join("baseline");

    let free = free_bytes(&work);
    // Baseline + two full copies (the plain tree and a portable replica) + margin.
    let need = (1.4e9 * scale * 4.0) as u64;
    assert!(
        free > need,
        "the bench needs {:.1} GB free under {} (baseline + 2 copies + margin), has {:.1} GB",
        need as f64 / 1e9,
        work.display(),
        free as f64 / 1e9
    );
    let synthetic = std::env::var("BUREAU_BENCH_TREE").is_ok_and(|v| v == "synthetic");
    let t = Instant::now();
    let big: Vec<PathBuf> = if synthetic {
        let (nfiles, ndirs, bytes) = generate(&base, scale);
        println!(
            "synthetic researcher-shaped workspace: {nfiles} files, {ndirs} folders, {:.2} GB, generated in {}",
            bytes as f64 / 1e9,
            fmt(t.elapsed())
        );
        Vec::new()
    } else {
        let grow_to = ((1u64 << 30) as f64 * scale) as u64;
        let (nfiles, ndirs, bytes, nbulk, bulk_bytes, big) =
            generate_researcher(&base, &work.join("gen-manifest"), grow_to);
        println!(
            "bureau gen workspace --persona researcher --files {FILES} --seed 1 --grow-to {grow_to}: \
             {nfiles} files ({nbulk} large: {:.2} GB), {ndirs} folders, {:.2} GB in all, generated in {}",
            bulk_bytes as f64 / 1e9,
            bytes as f64 / 1e9,
            fmt(t.elapsed())
        );
        big
    };
    disk_mark(&work);
    let t = Instant::now();
    let baseline = Arc::new(Baseline::open(&base).unwrap());
    println!(
        "Baseline::open (scan + BLAKE3 of every file): {}",
        fmt(t.elapsed())
    );
    let files: Vec<PathBuf> = baseline
        .manifest()
        .entries
        .iter()
        .filter(|(_, e)| e.kind == bureau_replica::Kind::File)
        .map(|(p, _)| p.clone())
        .collect();

    // ---- reset after the 20-file agent change --------------------------------------------
    println!("\n## Reset after an agent-like change of 20 files (median of {reps})\n");
    println!("| method | reset | vs rsync | exact |");
    println!("|---|---|---|---|");
    let mut rows: Vec<(String, Duration, String)> = Vec::new();
    let mut seed = 1u64;
    for (label, backend) in [
        ("Bureau overlay", Backend::Overlay),
        ("Bureau portable", Backend::Portable),
    ] {
        let pool = Pool::new(
            Arc::clone(&baseline),
            PoolOptions {
                capacity: 1,
                backend,
                dir: Some(work.join(format!("pool-{label}").replace(' ', "-"))),
            },
        )
        .unwrap();
        let mut lease = pool.acquire().unwrap();
        let (mut times, mut settled) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            seed += 1;
            agent_change(&lease.path(), &files, &big, 20, seed);
            let t = Instant::now();
            lease.reset().unwrap();
            times.push(t.elapsed());
            lease.settle().unwrap();
            settled.push(t.elapsed());
        }
        let ok = exact(&baseline, &lease.path());
        rows.push((label.into(), median(times), ok.clone()));
        if backend == Backend::Overlay {
            rows.push((
                format!("{label}, background clean-up included"),
                median(settled),
                ok,
            ));
        }
    }
    let plain = work.join("plain");
    run(Command::new("cp").arg("-a").arg(&base).arg(&plain));
    type Method = fn(&Path, &Path);
    let methods: [(&str, Method); 3] = [
        ("rsync -a --delete", |b, w| {
            run(Command::new("rsync")
                .arg("-a")
                .arg("--delete")
                .arg(format!("{}/", b.display()))
                .arg(format!("{}/", w.display())))
        }),
        ("rm -rf + cp -a", |b, w| {
            fs::remove_dir_all(w).unwrap();
            run(Command::new("cp").arg("-a").arg(b).arg(w));
        }),
        ("Workspace-Bench reference (size/mtime walk)", |b, w| {
            workspace_bench_reset(b, w)
        }),
    ];
    for (label, reset) in methods {
        // Start each method from an exact copy so an inexact predecessor cannot leak into it.
        fs::remove_dir_all(&plain).unwrap();
        run(Command::new("cp").arg("-a").arg(&base).arg(&plain));
        let mut times = Vec::new();
        let mut ok = String::new();
        let n = if label.starts_with("rm") { 3 } else { reps };
        for i in 0..n {
            seed += 1;
            agent_change(&plain, &files, &big, 20, seed);
            let t = Instant::now();
            reset(&base, &plain);
            times.push(t.elapsed());
            if i == 0 {
                ok = exact(&baseline, &plain);
            }
        }
        rows.push((label.into(), median(times), ok));
    }
    let rsync = rows
        .iter()
        .find(|r| r.0.starts_with("rsync"))
        .map(|r| r.1)
        .unwrap();
    for (label, d, ok) in &rows {
        println!(
            "| {label} | {} | {:.1}× | {ok} |",
            fmt(*d),
            rsync.as_secs_f64() / d.as_secs_f64()
        );
    }

    // ---- reset time as the change grows ---------------------------------------------------
    println!("\n## Reset time vs number of changed files (median of {reps})\n");
    println!("| changed files | Bureau overlay | Bureau portable | rsync -a --delete |");
    println!("|---|---|---|---|");
    let mut pools = Vec::new();
    for backend in [Backend::Overlay, Backend::Portable] {
        let pool = Pool::new(
            Arc::clone(&baseline),
            PoolOptions {
                capacity: 1,
                backend,
                dir: Some(work.join(format!("scale-{backend:?}"))),
            },
        )
        .unwrap();
        let lease = pool.acquire().unwrap();
        pools.push((pool, lease));
    }
    fs::remove_dir_all(&plain).unwrap();
    run(Command::new("cp").arg("-a").arg(&base).arg(&plain));
    disk_mark(&work);
    for n in [1usize, 10, 100, 1000] {
        let mut cells = Vec::new();
        for (_, lease) in pools.iter_mut() {
            let mut times = Vec::new();
            for _ in 0..reps {
                seed += 1;
                agent_change(&lease.path(), &files, &big, n, seed);
                let t = Instant::now();
                let stats = lease.reset().unwrap();
                times.push(t.elapsed());
                lease.settle().unwrap();
                assert!(stats.touched >= n.min(2));
            }
            cells.push(fmt(median(times)));
        }
        let mut times = Vec::new();
        for _ in 0..3 {
            seed += 1;
            agent_change(&plain, &files, &big, n, seed);
            let t = Instant::now();
            methods[0].1(&base, &plain);
            times.push(t.elapsed());
        }
        cells.push(fmt(median(times)));
        println!("| {n} | {} |", cells.join(" | "));
    }
    for (_, lease) in pools.iter_mut() {
        assert_eq!(lease.full_digest().unwrap(), baseline.digest());
    }
    drop(pools);
    fs::remove_dir_all(&plain).unwrap();

    // ---- materialising 8 replicas --------------------------------------------------------
    println!("\n## Materialising 8 replicas\n");
    println!("| method | time | vs cp -a ×8 |");
    println!("|---|---|---|");
    // Disk: each copy is deleted (untimed) before the next one, so the run never holds more
    // than the baseline and two copies; the time is the sum of the 8 materialisations.
    let copies = work.join("copies");
    fs::create_dir(&copies).unwrap();
    let mut cp8 = Duration::ZERO;
    for i in 0..8 {
        let c = copies.join(format!("c{i}"));
        let t = Instant::now();
        run(Command::new("cp").arg("-a").arg(&base).arg(&c));
        cp8 += t.elapsed();
        disk_mark(&work);
        fs::remove_dir_all(&c).unwrap();
    }
    let mut mat = vec![("cp -a ×8".to_string(), cp8)];
    let mut holder_rss = Vec::new();
    // Overlay: 8 replicas that coexist (they cost no disk).
    let pool = Pool::new(
        Arc::clone(&baseline),
        PoolOptions {
            capacity: 8,
            backend: Backend::Overlay,
            dir: Some(work.join("mat-overlay")),
        },
    )
    .unwrap();
    let t = Instant::now();
    pool.warm(8).unwrap();
    mat.push(("Bureau overlay, pool.warm(8)".to_string(), t.elapsed()));
    let leases: Vec<_> = (0..8).map(|_| pool.acquire().unwrap()).collect();
    for l in &leases {
        holder_rss.push(l.holder_pids().iter().map(|p| rss_kib(*p)).sum::<u64>());
        assert_eq!(
            fs::read(l.path().join(&files[0])).unwrap(),
            fs::read(base.join(&files[0])).unwrap()
        );
    }
    drop(leases);
    drop(pool);
    // Portable: one replica at a time (a full copy each), summed like cp -a.
    let mut portable8 = Duration::ZERO;
    for i in 0..8 {
        let pool = Pool::new(
            Arc::clone(&baseline),
            PoolOptions {
                capacity: 1,
                backend: Backend::Portable,
                dir: Some(work.join(format!("mat-portable-{i}"))),
            },
        )
        .unwrap();
        let t = Instant::now();
        pool.warm(1).unwrap();
        portable8 += t.elapsed();
        disk_mark(&work);
    }
    mat.push(("Bureau portable, 8 replicas".to_string(), portable8));
    for (label, d) in &mat {
        println!(
            "| {label} | {} | {:.1}× |",
            fmt(*d),
            cp8.as_secs_f64() / d.as_secs_f64()
        );
    }
    let avg = holder_rss.iter().sum::<u64>() / holder_rss.len().max(1) as u64;
    println!(
        "\nidle overlay replica: holder processes (current + spare) RSS {avg} KiB in all (VmRSS, mean of {}; mostly shared libc pages), \
         no per-replica manifest; portable replica: a manifest of {} entries in memory plus a full copy on disk",
        holder_rss.len(),
        baseline.len()
    );
    let peak = free.saturating_sub(MIN_FREE.load(std::sync::atomic::Ordering::Relaxed));
    fs::remove_dir_all(&work).unwrap();
    println!(
        "\npeak disk use of the run (free space before minus the least seen): {:.2} GB; all of it deleted",
        peak as f64 / 1e9
    );
}
