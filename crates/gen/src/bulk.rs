//! Growing a workspace to a size: the large files a persona really keeps.
//!
//! A researcher's workspace is not 11,020 small documents only: it holds raw instrument
//! recordings (`.npy`), model checkpoints (`.safetensors`), long metric and training logs
//! (`.csv`, `.jsonl`), and archived runs (`.tar`, `.zip`, `.gz`). Other personas keep
//! exports, database dumps and logs. [`plan`] places such files in the persona's own folders
//! (named like the rest of the tree); [`write`] streams them to disk in large buffers from a
//! fast seeded generator, hashing as it goes, so a gigabyte takes seconds and the same seed
//! gives the same bytes.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{Datelike, NaiveDate};

use crate::company::{Company, ascii_slug};
use crate::manifest::FileEntry;
use crate::rng::Rng;
use crate::{GenError, Persona};

/// Fewest bytes one large file gets.
pub(crate) const MIN_BULK_BYTES: u64 = 64 << 10;
/// One large file per this many bytes asked for (before the clamps in [`count`]).
const BYTES_PER_FILE: u64 = 8 << 20;
/// Output buffer: files are written and hashed in pieces of this size.
const CHUNK: usize = 4 << 20;

/// What a large file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// NumPy array (NPY v1.0, little-endian float32, C order): raw recordings, embeddings.
    Npy,
    /// A model checkpoint: 8-byte header length, JSON header, float32 tensors.
    Safetensors,
    Csv,
    Jsonl,
    Log,
    /// A database dump that runs in SQLite.
    Sql,
    /// An archived run or a month of logs (uncompressed ustar).
    Tar,
    /// An export bundle of CSV files (stored entries).
    Zip,
    /// A gzip-compressed CSV or log.
    Gz,
}

impl Kind {
    /// The manifest's type id.
    pub(crate) fn id(self) -> &'static str {
        match self {
            Kind::Npy => "npy",
            Kind::Safetensors => "safetensors",
            Kind::Csv => "csv",
            Kind::Jsonl => "jsonl",
            Kind::Log => "log",
            Kind::Sql => "sql",
            Kind::Tar => "tar",
            Kind::Zip => "zip",
            Kind::Gz => "gz",
        }
    }
}

/// Where a persona keeps one kind of large file: its share of the bytes, the top-level
/// folders it lives under, and a subfolder it goes into when depth allows.
struct Place {
    kind: Kind,
    weight: u32,
    roots: &'static [&'static str],
    sub: Option<&'static str>,
}

const fn place(
    kind: Kind,
    weight: u32,
    roots: &'static [&'static str],
    sub: Option<&'static str>,
) -> Place {
    Place {
        kind,
        weight,
        roots,
        sub,
    }
}

use Kind::*;

const RESEARCHER: &[Place] = &[
    place(Npy, 34, &["data", "experiments"], Some("raw")),
    place(Safetensors, 30, &["experiments"], Some("checkpoints")),
    place(Csv, 9, &["results", "experiments"], None),
    place(Jsonl, 8, &["experiments"], Some("logs")),
    place(Tar, 15, &["archive", "data"], Some("runs")),
    place(Zip, 3, &["downloads", "data"], None),
    place(Gz, 1, &["data"], Some("raw")),
];

const AI_PM: &[Place] = &[
    place(Jsonl, 30, &["analytics", "experiments"], Some("events")),
    place(Csv, 20, &["analytics", "research"], None),
    place(Npy, 20, &["experiments", "research"], Some("embeddings")),
    place(Sql, 12, &["analytics"], Some("dumps")),
    place(Zip, 15, &["archive", "downloads"], None),
    place(Gz, 3, &["analytics"], None),
];

const DEVELOPER: &[Place] = &[
    place(Log, 35, &["logs"], None),
    place(Jsonl, 15, &["logs"], Some("structured")),
    place(Sql, 20, &["migrations", "archive"], Some("dumps")),
    place(Csv, 10, &["benchmarks"], Some("results")),
    place(Tar, 17, &["archive", "logs"], Some("rotated")),
    place(Gz, 3, &["logs"], Some("rotated")),
];

const OPERATIONS: &[Place] = &[
    place(Csv, 40, &["exports", "finance"], None),
    place(Jsonl, 10, &["exports"], Some("events")),
    place(Sql, 15, &["exports", "archive"], Some("dumps")),
    place(Zip, 22, &["archive", "downloads", "exports"], None),
    place(Log, 10, &["tools"], Some("logs")),
    place(Gz, 3, &["exports"], None),
];

const LOGISTICS: &[Place] = &[
    place(Csv, 35, &["shipments", "inventory"], None),
    place(Jsonl, 20, &["shipments", "routes"], Some("tracking")),
    place(Sql, 15, &["inventory", "archive"], Some("dumps")),
    place(Log, 10, &["scripts"], Some("logs")),
    place(Zip, 17, &["archive", "downloads"], None),
    place(Gz, 3, &["shipments"], None),
];

fn places(p: Persona) -> &'static [Place] {
    match p {
        Persona::Researcher => RESEARCHER,
        Persona::AiProductManager => AI_PM,
        Persona::BackendDeveloper => DEVELOPER,
        Persona::OperationsManager => OPERATIONS,
        Persona::LogisticsManager => LOGISTICS,
    }
}

/// One large file to write.
#[derive(Debug, Clone)]
pub(crate) struct BulkFile {
    pub path: String,
    pub kind: Kind,
    /// Bytes to reach (the file ends at the first record boundary at or past it).
    pub target: u64,
    pub date: NaiveDate,
    /// Serial used in names and content (run number, step, ...).
    pub serial: u32,
}

/// How many of `files` are large files when the workspace grows to `grow_to` bytes: one per
/// 8 MiB asked for, at least 4, at most a tenth of the files and 2,000.
pub(crate) fn count(grow_to: u64, files: usize) -> usize {
    let want = (grow_to / BYTES_PER_FILE).max(4) as usize;
    want.clamp(1, (files / 10).clamp(1, 2_000))
}

/// Plan `n` large files sharing `budget` bytes, in folders of the small tree (`dirs`: every
/// folder holding files) and with names nobody took (`taken`).
pub(crate) fn plan(
    persona: Persona,
    seed: u64,
    c: &Company,
    dirs: &BTreeSet<String>,
    taken: &BTreeSet<String>,
    n: usize,
    budget: u64,
) -> Vec<BulkFile> {
    let mut rng = Rng::new(seed, "bulk/plan");
    let pl = places(persona);
    let weights: Vec<u32> = pl.iter().map(|p| p.weight).collect();
    // Every kind once (when there are enough files), then by weight.
    let mut kinds: Vec<usize> = (0..pl.len()).collect();
    kinds.truncate(n);
    while kinds.len() < n {
        kinds.push(rng.weighted(&weights));
    }
    // Sizes: a kind's share of the bytes, split unevenly among its files.
    let mut share = vec![0f64; n];
    for (k, p) in pl.iter().enumerate() {
        let idx: Vec<usize> = (0..n).filter(|&i| kinds[i] == k).collect();
        let parts: Vec<f64> = idx
            .iter()
            .map(|_| 0.25 + (rng.below(1000) as f64 / 1000.0).powi(2) * 3.0)
            .collect();
        let sum: f64 = parts.iter().sum();
        let kind_share = f64::from(p.weight) / f64::from(weights.iter().sum::<u32>().max(1));
        for (i, part) in idx.iter().zip(parts) {
            share[*i] = kind_share * part / sum.max(f64::MIN_POSITIVE);
        }
    }
    let total_share: f64 = share.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    let products: Vec<String> = c
        .products
        .iter()
        .map(|p| ascii_slug(p.name.split(' ').next().unwrap_or("device")))
        .collect();
    for (i, &k) in kinds.iter().enumerate() {
        let p = &pl[k];
        let target = ((budget as f64 * share[i] / total_share).ceil() as u64).max(MIN_BULK_BYTES);
        let candidates: Vec<&String> = dirs
            .iter()
            .filter(|d| {
                p.roots
                    .iter()
                    .any(|r| d.as_str() == *r || d.starts_with(&format!("{r}/")))
            })
            .collect();
        let mut dir = if candidates.is_empty() {
            p.roots[0].to_string()
        } else {
            candidates[rng.below(candidates.len())].clone()
        };
        if let Some(sub) = p.sub
            && !dir.ends_with(&format!("/{sub}"))
            && dir.split('/').count() < 8
        {
            dir = format!("{dir}/{sub}");
        }
        let date = c.day(rng.range(0, 365 * 2));
        let serial = 1 + rng.below(250) as u32;
        let product = products[rng.below(products.len().max(1))].clone();
        let stem = name(persona, p.kind, &product, date, serial, &mut rng);
        let suffix = match p.kind {
            Kind::Gz if persona == Persona::BackendDeveloper => ".log.gz",
            Kind::Gz => ".csv.gz",
            k => match k.id() {
                "npy" => ".npy",
                "safetensors" => ".safetensors",
                "csv" => ".csv",
                "jsonl" => ".jsonl",
                "log" => ".log",
                "sql" => ".sql",
                "tar" => ".tar",
                _ => ".zip",
            },
        };
        let mut path = format!("{dir}/{stem}{suffix}");
        let mut m = 2;
        while taken.contains(&path) || used.contains(&path) {
            path = format!("{dir}/{stem}_{m}{suffix}");
            m += 1;
        }
        used.insert(path.clone());
        out.push(BulkFile {
            path,
            kind: p.kind,
            target,
            date,
            serial,
        });
    }
    out
}

fn name(
    persona: Persona,
    kind: Kind,
    product: &str,
    d: NaiveDate,
    serial: u32,
    rng: &mut Rng,
) -> String {
    let ymd = d.format("%Y%m%d");
    let ym = d.format("%Y-%m");
    let day = d.format("%Y-%m-%d");
    match (persona, kind) {
        (Persona::Researcher, Kind::Npy) => {
            let what = rng.pick(&["pressure", "flow", "turbidity", "temperature", "level"]);
            format!("{product}_{what}_{ymd}_run-{serial:03}")
        }
        (_, Kind::Npy) => format!("embeddings_{product}_{ym}"),
        (_, Kind::Safetensors) => {
            let model = rng.pick(&["drift-net", "calib-mlp", "tcn-small", "lstm-baseline"]);
            format!("{model}_step{:06}", serial * 500)
        }
        (Persona::Researcher, Kind::Csv) => {
            if rng.chance(0.5) {
                format!("metrics_run-{serial:03}")
            } else {
                format!("readings_{product}_{ym}")
            }
        }
        (Persona::Researcher, Kind::Jsonl) => format!("train_log_run-{serial:03}"),
        (Persona::Researcher, Kind::Tar) => format!("run-{serial:03}_raw"),
        (Persona::Researcher, Kind::Zip) => format!("dataset_{product}_{ym}"),
        (Persona::Researcher, Kind::Gz) => format!("readings_{product}_{ymd}"),
        (Persona::BackendDeveloper, Kind::Log | Kind::Gz) => {
            format!(
                "{}-{day}",
                rng.pick(&["api", "worker", "gateway", "scheduler"])
            )
        }
        (Persona::BackendDeveloper, Kind::Jsonl) => format!("access_{day}"),
        (Persona::BackendDeveloper, Kind::Csv) => format!("loadtest_{product}_{ymd}"),
        (Persona::BackendDeveloper, Kind::Tar) => format!("logs_{ym}"),
        (_, Kind::Sql) => format!("{}_dump_{ymd}", db_name(persona)),
        (_, Kind::Log) => format!(
            "{}_{ymd}",
            if persona == Persona::LogisticsManager {
                "edi_gateway"
            } else {
                "dashboard_sync"
            }
        ),
        (_, Kind::Jsonl) => format!("{}_{day}", event_name(persona)),
        (_, Kind::Csv | Kind::Gz) => format!("{}_{day}", export_name(persona, rng)),
        (_, Kind::Zip | Kind::Tar) => format!("{}_{ym}", export_name(persona, rng)),
    }
}

fn db_name(p: Persona) -> &'static str {
    match p {
        Persona::OperationsManager => "erp",
        Persona::LogisticsManager => "wms",
        Persona::AiProductManager => "analytics",
        Persona::BackendDeveloper => "orders",
        Persona::Researcher => "samples",
    }
}

fn event_name(p: Persona) -> &'static str {
    match p {
        Persona::LogisticsManager => "tracking_events",
        Persona::AiProductManager => "product_events",
        _ => "crm_events",
    }
}

fn export_name(p: Persona, rng: &mut Rng) -> String {
    let opts: &[&str] = match p {
        Persona::OperationsManager => &["orders_export", "crm_export", "erp_ledger"],
        Persona::LogisticsManager => &["shipment_scans", "inventory_movements"],
        Persona::AiProductManager => &["events_export", "funnel_export"],
        _ => &["export"],
    };
    rng.pick(opts).to_string()
}

// ---------------------------------------------------------------- writing

/// A fast seeded stream (wyrand) for bulk bytes, seeded from the file's ChaCha stream.
struct Fast(u64);

impl Fast {
    fn new(seed: u64, path: &str) -> Fast {
        Fast(Rng::new(seed, &format!("bulk/{path}")).u64())
    }
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.0) * u128::from(self.0 ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A file being written: buffered, hashed and counted.
struct Sink {
    file: std::fs::File,
    path: PathBuf,
    hasher: blake3::Hasher,
    buf: Vec<u8>,
    written: u64,
}

impl Sink {
    fn create(path: PathBuf) -> Result<Sink, GenError> {
        let file = std::fs::File::create(&path).map_err(|source| GenError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(Sink {
            file,
            path,
            hasher: blake3::Hasher::new(),
            buf: Vec::with_capacity(CHUNK + (64 << 10)),
            written: 0,
        })
    }
    fn len(&self) -> u64 {
        self.written + self.buf.len() as u64
    }
    fn drain(&mut self) -> std::io::Result<()> {
        self.hasher.update(&self.buf);
        self.file.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
    fn finish(mut self, mtime: std::time::SystemTime) -> Result<(u64, String), GenError> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| GenError::Io { path: p, source }
        };
        self.drain().map_err(io(&self.path))?;
        self.file.set_modified(mtime).map_err(io(&self.path))?;
        Ok((self.written, self.hasher.finalize().to_hex().to_string()))
    }
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.drain()?;
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Write every large file into `out` (folders exist), in parallel; returns their manifest
/// entries in `files` order.
pub(crate) fn write(
    persona: Persona,
    seed: u64,
    c: &Company,
    files: &[BulkFile],
    out: &Path,
) -> Result<Vec<FileEntry>, GenError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    // Largest first, handed out one at a time, so threads finish together.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].target));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<FileEntry>>> =
        std::sync::Mutex::new(vec![None; files.len()]);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| -> Result<(), GenError> {
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&i) = order.get(k) else {
                            return Ok(());
                        };
                        let e = write_one(persona, seed, c, &files[i], out)?;
                        if let Ok(mut r) = results.lock() {
                            r[i] = Some(e);
                        }
                    }
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(r) => r?,
                Err(_) => {
                    return Err(GenError::Render {
                        path: out.display().to_string(),
                        reason: "a bulk writer thread panicked".into(),
                    });
                }
            }
        }
        Ok(())
    })?;
    let results = results.into_inner().unwrap_or_default();
    results
        .into_iter()
        .zip(files)
        .map(|(e, f)| {
            e.ok_or_else(|| GenError::Render {
                path: f.path.clone(),
                reason: "not written".into(),
            })
        })
        .collect()
}

fn write_one(
    persona: Persona,
    seed: u64,
    c: &Company,
    f: &BulkFile,
    out: &Path,
) -> Result<FileEntry, GenError> {
    let p = out.join(&f.path);
    let mut sink = Sink::create(p.clone())?;
    let mut rng = Fast::new(seed, &f.path);
    let ctx = Ctx::new(persona, c, f);
    let err = |e: std::io::Error| GenError::Io {
        path: p.clone(),
        source: e,
    };
    match f.kind {
        Kind::Npy => {
            let (rows, cols) = npy_shape(
                f.target,
                if persona == Persona::Researcher {
                    16
                } else {
                    384
                },
            );
            write_npy(
                &mut sink,
                &mut rng,
                rows,
                cols,
                persona == Persona::Researcher,
            )
            .map_err(err)?;
        }
        Kind::Safetensors => write_safetensors(&mut sink, &mut rng, f).map_err(err)?,
        Kind::Csv | Kind::Jsonl | Kind::Log | Kind::Sql => {
            write_text(&mut sink, &mut rng, &ctx, f.kind, f.target).map_err(err)?
        }
        Kind::Gz => {
            let mut enc = flate2::GzBuilder::new()
                .mtime(0)
                .write(&mut sink, flate2::Compression::fast());
            let text = if persona == Persona::BackendDeveloper {
                Kind::Log
            } else {
                Kind::Csv
            };
            let mut rows = Rows::new(&ctx, text);
            let mut chunk = Vec::with_capacity(256 << 10);
            rows.header(&mut chunk);
            loop {
                while chunk.len() < (256 << 10) {
                    rows.row(&mut rng, &mut chunk);
                }
                enc.write_all(&chunk).map_err(err)?;
                chunk.clear();
                if enc.get_ref().len() >= f.target {
                    break;
                }
            }
            enc.finish().map_err(err)?;
        }
        Kind::Tar => write_tar(&mut sink, &mut rng, &ctx, f).map_err(err)?,
        Kind::Zip => {
            let bytes = zip_bundle(&mut rng, &ctx, f).map_err(|e| GenError::Render {
                path: f.path.clone(),
                reason: e.to_string(),
            })?;
            sink.write_all(&bytes).map_err(err)?;
        }
    }
    let t = crate::render::at(f.date, 9, 0).and_utc().timestamp().max(0) as u64;
    let (size, hash) = sink.finish(std::time::UNIX_EPOCH + std::time::Duration::from_secs(t))?;
    Ok(FileEntry {
        path: f.path.clone(),
        ty: f.kind.id().to_string(),
        size,
        blake3: hash,
        role: "bulk".into(),
        duplicate_of: None,
        date: f.date.to_string(),
        media: None,
    })
}

// ---------------------------------------------------------------- binary formats

/// Rows and columns of a float32 array of at least `bytes` bytes (header included).
fn npy_shape(bytes: u64, cols: u64) -> (u64, u64) {
    let rows = bytes.saturating_sub(128).div_ceil(cols * 4).max(1);
    (rows, cols)
}

fn npy_header(shape: &str) -> Vec<u8> {
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + dict, padded with spaces to a multiple of 64
    // and ended by a newline (NPY format v1.0).
    let unpadded = 10 + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let mut h = Vec::with_capacity(total);
    h.extend_from_slice(b"\x93NUMPY\x01\x00");
    h.extend_from_slice(&((total - 10) as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h.resize(total - 1, b' ');
    h.push(b'\n');
    h
}

fn npy_len(rows: u64, cols: u64) -> u64 {
    npy_header(&format!("({rows}, {cols})")).len() as u64 + rows * cols * 4
}

/// A `rows × cols` float32 array: instrument channels (a baseline per channel, slow drift,
/// noise) or embeddings (small values around zero).
fn write_npy(
    w: &mut impl Write,
    rng: &mut Fast,
    rows: u64,
    cols: u64,
    signal: bool,
) -> std::io::Result<()> {
    w.write_all(&npy_header(&format!("({rows}, {cols})")))?;
    let base: Vec<f32> = (0..cols)
        .map(|_| {
            if signal {
                (rng.unit() * 900.0 + 100.0) as f32
            } else {
                0.0
            }
        })
        .collect();
    let drift: Vec<f32> = (0..cols)
        .map(|_| ((rng.unit() - 0.5) * 1e-4) as f32)
        .collect();
    let amp: f32 = if signal { 2.5 } else { 0.08 };
    let mut chunk: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut r = 0u64;
    while r < rows {
        chunk.clear();
        while chunk.len() < (1 << 20) - (cols as usize) * 4 && r < rows {
            let rf = r as f32;
            for c in 0..cols as usize {
                let x = rng.next();
                let u = ((x & 0xFF_FFFF) as f32 + (x >> 40) as f32) * (1.0 / 16_777_216.0) - 1.0;
                let v = base[c] + drift[c] * rf + amp * u;
                chunk.extend_from_slice(&v.to_le_bytes());
            }
            r += 1;
        }
        w.write_all(&chunk)?;
    }
    Ok(())
}

/// A checkpoint of a small transformer whose width and depth fit `f.target`.
fn write_safetensors(w: &mut impl Write, rng: &mut Fast, f: &BulkFile) -> std::io::Result<()> {
    let floats = f.target / 4;
    let d: u64 = [1024u64, 768, 512, 384, 256]
        .into_iter()
        .find(|d| 2 * (12 * d * d + 9 * d) <= floats)
        .unwrap_or(128);
    let per_layer = 12 * d * d + 9 * d;
    let fixed = 16 * d + d;
    let layers = floats.saturating_sub(fixed + 1000 * d) / per_layer;
    let vocab = (floats.saturating_sub(fixed + layers * per_layer) / d).max(1000);
    let mut tensors: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    tensors.insert("embed.weight".into(), vec![vocab, d]);
    tensors.insert("head.weight".into(), vec![16, d]);
    tensors.insert("norm.weight".into(), vec![d]);
    for l in 0..layers {
        let p = format!("layers.{l}.");
        tensors.insert(format!("{p}attn.qkv.weight"), vec![3 * d, d]);
        tensors.insert(format!("{p}attn.qkv.bias"), vec![3 * d]);
        tensors.insert(format!("{p}attn.out.weight"), vec![d, d]);
        tensors.insert(format!("{p}mlp.fc1.weight"), vec![4 * d, d]);
        tensors.insert(format!("{p}mlp.fc1.bias"), vec![4 * d]);
        tensors.insert(format!("{p}mlp.fc2.weight"), vec![d, 4 * d]);
        tensors.insert(format!("{p}norm1.weight"), vec![d]);
        tensors.insert(format!("{p}norm2.weight"), vec![d]);
    }
    let mut header = serde_json::Map::new();
    let mut meta = serde_json::Map::new();
    meta.insert("format".into(), "pt".into());
    meta.insert("step".into(), (f.serial * 500).to_string().into());
    meta.insert("layers".into(), layers.to_string().into());
    meta.insert("width".into(), d.to_string().into());
    header.insert("__metadata__".into(), serde_json::Value::Object(meta));
    let mut off = 0u64;
    for (name, shape) in &tensors {
        let n: u64 = shape.iter().product::<u64>() * 4;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [off, off + n]}),
        );
        off += n;
    }
    let mut h = serde_json::to_vec(&serde_json::Value::Object(header))?;
    // Pad the header with spaces so the tensor data starts 8-byte aligned.
    while h.len() % 8 != 0 {
        h.push(b' ');
    }
    w.write_all(&(h.len() as u64).to_le_bytes())?;
    w.write_all(&h)?;
    let mut chunk: Vec<u8> = Vec::with_capacity(1 << 20);
    for (name, shape) in &tensors {
        let n: u64 = shape.iter().product();
        let (centre, scale) = if name.ends_with("norm1.weight")
            || name.ends_with("norm2.weight")
            || name == "norm.weight"
        {
            (1.0f32, 0.05f32)
        } else if name.ends_with(".bias") {
            (0.0, 0.01)
        } else {
            (0.0, 0.04)
        };
        let mut left = n;
        while left > 0 {
            chunk.clear();
            let k = left.min(1 << 18);
            for _ in 0..k {
                let x = rng.next();
                // Sum of two uniforms: a bell-ish weight distribution around `centre`.
                let u = ((x & 0xFF_FFFF) as f32 + (x >> 40) as f32) * (1.0 / 16_777_216.0) - 1.0;
                chunk.extend_from_slice(&(centre + scale * u).to_le_bytes());
            }
            w.write_all(&chunk)?;
            left -= k;
        }
    }
    Ok(())
}

/// A run archive (researcher: config, training log and raw channel arrays) or a month of
/// logs (others), as an uncompressed ustar written piece by piece.
fn write_tar(w: &mut impl Write, rng: &mut Fast, ctx: &Ctx, f: &BulkFile) -> std::io::Result<()> {
    let mtime = crate::render::at(f.date, 9, 0).and_utc().timestamp().max(0) as u64;
    let stem = f
        .path
        .rsplit('/')
        .next()
        .unwrap_or("run")
        .trim_end_matches(".tar")
        .to_string();
    let header = |name: &str, size: u64| -> std::io::Result<[u8; 512]> {
        let mut h = tar::Header::new_ustar();
        h.set_path(name)?;
        h.set_size(size);
        h.set_mode(0o644);
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        let mut out = [0u8; 512];
        out.copy_from_slice(h.as_bytes());
        Ok(out)
    };
    let pad = |w: &mut dyn Write, size: u64| -> std::io::Result<()> {
        let r = (512 - size % 512) % 512;
        w.write_all(&vec![0u8; r as usize])
    };
    let mut small: Vec<(String, Vec<u8>)> = Vec::new();
    let mut budget = f.target;
    if ctx.persona == Persona::Researcher {
        let cfg = format!(
            "run: {stem}\ninstrument: {}\nstarted: {}\nsample_rate_hz: 50\nchannels: 16\nseed: {}\n",
            ctx.product, f.date, f.serial
        );
        small.push((format!("{stem}/config.yaml"), cfg.into_bytes()));
        let mut log = Vec::new();
        let mut rows = Rows::new(ctx, Kind::Jsonl);
        while (log.len() as u64) < (f.target / 50).max(4096) {
            rows.row(rng, &mut log);
        }
        small.push((format!("{stem}/train_log.jsonl"), log));
    } else {
        let mut rows = Rows::new(ctx, Kind::Log);
        let parts = 4;
        for k in 0..parts {
            let mut log = Vec::new();
            while (log.len() as u64) < f.target / parts {
                rows.row(rng, &mut log);
            }
            small.push((format!("{stem}/app-{:02}.log", k + 1), log));
        }
    }
    for (name, bytes) in &small {
        w.write_all(&header(name, bytes.len() as u64)?)?;
        w.write_all(bytes)?;
        pad(w, bytes.len() as u64)?;
        budget = budget.saturating_sub(bytes.len() as u64 + 1024);
    }
    if ctx.persona == Persona::Researcher {
        let channels = 4u64;
        for ch in 0..channels {
            let (rows, cols) = npy_shape((budget / channels).max(1024), 16);
            let name = format!("{stem}/raw/block_{ch:02}.npy");
            let size = npy_len(rows, cols);
            w.write_all(&header(&name, size)?)?;
            write_npy(w, rng, rows, cols, true)?;
            pad(w, size)?;
        }
    }
    w.write_all(&[0u8; 1024])
}

/// An export bundle: a few CSV files, stored (no compression) with fixed timestamps.
fn zip_bundle(rng: &mut Fast, ctx: &Ctx, f: &BulkFile) -> zip::result::ZipResult<Vec<u8>> {
    let dt = zip::DateTime::from_date_and_time(
        f.date.year().clamp(1980, 2107) as u16,
        f.date.month() as u8,
        f.date.day() as u8,
        9,
        0,
        0,
    )
    .unwrap_or_default();
    let opt = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(dt)
        .unix_permissions(0o644)
        .large_file(f.target > (3 << 30));
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::with_capacity(
        f.target as usize + 4096,
    )));
    let parts = 3u64;
    for k in 0..parts {
        z.start_file(format!("part-{:02}.csv", k + 1), opt)?;
        let mut rows = Rows::new(ctx, Kind::Csv);
        let mut buf = Vec::with_capacity(1 << 20);
        rows.header(&mut buf);
        let mut n = 0u64;
        while n < f.target / parts {
            while buf.len() < (1 << 20) {
                rows.row(rng, &mut buf);
            }
            n += buf.len() as u64;
            z.write_all(&buf)?;
            buf.clear();
        }
    }
    Ok(z.finish()?.into_inner())
}

// ---------------------------------------------------------------- text formats

/// Names and numbers a file's rows draw from.
struct Ctx {
    persona: Persona,
    product: String,
    products: Vec<(String, String, u32)>,
    regions: Vec<&'static str>,
    /// Unix seconds of the file's date at midnight.
    t0: i64,
}

impl Ctx {
    fn new(persona: Persona, c: &Company, f: &BulkFile) -> Ctx {
        let products: Vec<(String, String, u32)> = c
            .products
            .iter()
            .map(|p| (p.name.clone(), p.sku.clone(), p.price))
            .collect();
        let product = products
            .get(f.serial as usize % products.len().max(1))
            .map_or_else(|| "device".to_string(), |p| p.0.clone());
        Ctx {
            persona,
            product,
            products,
            regions: c.regions.iter().map(|r| r.code).collect(),
            t0: crate::render::at(f.date, 0, 0).and_utc().timestamp(),
        }
    }
}

/// Rows of one text file; `i` counts them (timestamps and ids grow with it).
struct Rows<'a> {
    ctx: &'a Ctx,
    kind: Kind,
    i: u64,
    /// Cached day for timestamps: (day number, "YYYY-MM-DD").
    day: (i64, String),
}

impl<'a> Rows<'a> {
    fn new(ctx: &'a Ctx, kind: Kind) -> Rows<'a> {
        Rows {
            ctx,
            kind,
            i: 0,
            day: (i64::MIN, String::new()),
        }
    }

    fn header(&self, out: &mut Vec<u8>) {
        let h: &str = match (self.kind, self.ctx.persona) {
            (Kind::Csv, Persona::Researcher) => {
                "timestamp,sample_id,channel,value,temperature_c,quality\n"
            }
            (Kind::Csv, Persona::BackendDeveloper) => {
                "timestamp,endpoint,status,latency_ms,bytes,worker\n"
            }
            (Kind::Csv, Persona::LogisticsManager) => {
                "timestamp,shipment_id,warehouse,scan,sku,quantity\n"
            }
            (Kind::Csv, Persona::AiProductManager) => {
                "timestamp,user_id,event,region,product,value\n"
            }
            (Kind::Csv, Persona::OperationsManager) => {
                "date,order_id,region,product,sku,quantity,unit_price,total\n"
            }
            (Kind::Sql, _) => {
                return self.sql_header(out);
            }
            _ => "",
        };
        out.extend_from_slice(h.as_bytes());
    }

    fn sql_header(&self, out: &mut Vec<u8>) {
        let db = db_name(self.ctx.persona);
        out.extend_from_slice(
            format!(
                "-- {db} database dump\n-- tables: orders, order_lines\nPRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n\
                 CREATE TABLE orders (id INTEGER PRIMARY KEY, created TEXT NOT NULL, region TEXT NOT NULL, status TEXT NOT NULL);\n\
                 CREATE TABLE order_lines (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id), sku TEXT NOT NULL, product TEXT NOT NULL, quantity INTEGER NOT NULL, unit_price REAL NOT NULL);\n"
            )
            .as_bytes(),
        );
    }

    /// "YYYY-MM-DDTHH:MM:SS" for `secs` after the file's date.
    fn stamp(&mut self, secs: i64, out: &mut Vec<u8>) {
        let t = self.ctx.t0 + secs;
        let day = t.div_euclid(86_400);
        if day != self.day.0 {
            let d = chrono::DateTime::from_timestamp(day * 86_400, 0)
                .map(|d| d.date_naive())
                .unwrap_or_default();
            self.day = (day, d.format("%Y-%m-%d").to_string());
        }
        let s = t.rem_euclid(86_400);
        out.extend_from_slice(self.day.1.as_bytes());
        out.push(b'T');
        two(out, (s / 3600) as u64);
        out.push(b':');
        two(out, (s / 60 % 60) as u64);
        out.push(b':');
        two(out, (s % 60) as u64);
    }

    fn row(&mut self, rng: &mut Fast, out: &mut Vec<u8>) {
        let i = self.i;
        self.i += 1;
        let ctx = self.ctx;
        match (self.kind, ctx.persona) {
            (Kind::Sql, _) => {
                // Batches of 200 rows per INSERT; the file ends with COMMIT when the caller
                // stops (see `write_text`).
                if i.is_multiple_of(200) {
                    if i > 0 {
                        out.extend_from_slice(b";\n");
                    }
                    out.extend_from_slice(if (i / 200).is_multiple_of(2) {
                        b"INSERT INTO orders VALUES\n" as &[u8]
                    } else {
                        b"INSERT INTO order_lines VALUES\n"
                    });
                } else {
                    out.extend_from_slice(b",\n");
                }
                out.push(b'(');
                int(out, i + 1);
                out.push(b',');
                if (i / 200).is_multiple_of(2) {
                    out.push(b'\'');
                    self.stamp((i * 37) as i64, out);
                    out.extend_from_slice(b"','");
                    out.extend_from_slice(
                        ctx.regions[rng.below(ctx.regions.len() as u64) as usize].as_bytes(),
                    );
                    out.extend_from_slice(b"','");
                    out.extend_from_slice(
                        [b"shipped" as &[u8], b"open", b"invoiced", b"cancelled"]
                            [rng.below(4) as usize],
                    );
                    out.extend_from_slice(b"')");
                } else {
                    let (name, sku, price) =
                        &ctx.products[rng.below(ctx.products.len() as u64) as usize];
                    int(out, 1 + rng.below(i.max(1)));
                    out.extend_from_slice(b",'");
                    out.extend_from_slice(sku.as_bytes());
                    out.extend_from_slice(b"','");
                    out.extend_from_slice(name.replace('\'', "''").as_bytes());
                    out.extend_from_slice(b"',");
                    int(out, 1 + rng.below(40));
                    out.push(b',');
                    fixed(out, i64::from(*price) * 100, 2);
                    out.push(b')');
                }
            }
            (Kind::Csv, Persona::Researcher) => {
                self.stamp((i / 16) as i64, out);
                out.extend_from_slice(b",S");
                int(out, 1000 + i / 160);
                out.extend_from_slice(b",ch");
                two(out, i % 16);
                out.push(b',');
                fixed(
                    out,
                    100_000 + (i % 16) as i64 * 40_000 + rng.below(5_000) as i64,
                    3,
                );
                out.push(b',');
                fixed(out, 180 + rng.below(60) as i64, 1);
                out.extend_from_slice(if rng.below(50) == 0 {
                    b",suspect\n"
                } else {
                    b",ok\n"
                });
            }
            (Kind::Csv, Persona::BackendDeveloper) => {
                self.stamp((i / 20) as i64, out);
                out.push(b',');
                out.extend_from_slice(
                    [
                        b"/v1/orders" as &[u8],
                        b"/v1/orders/{id}",
                        b"/v1/search",
                        b"/healthz",
                    ][rng.below(4) as usize],
                );
                out.extend_from_slice(if rng.below(100) < 2 {
                    b",500,"
                } else {
                    b",200,"
                });
                fixed(
                    out,
                    2_000 + (rng.below(40_000) * rng.below(4_000) / 4_000) as i64,
                    3,
                );
                out.push(b',');
                int(out, 200 + rng.below(9_000));
                out.extend_from_slice(b",w");
                int(out, rng.below(8));
                out.push(b'\n');
            }
            (Kind::Csv, Persona::LogisticsManager) => {
                self.stamp((i * 7) as i64, out);
                out.extend_from_slice(b",SHP-");
                int(out, 400_000 + i / 5);
                out.push(b',');
                out.extend_from_slice(
                    ctx.regions[rng.below(ctx.regions.len() as u64) as usize].as_bytes(),
                );
                out.extend_from_slice(
                    [
                        b",picked," as &[u8],
                        b",packed,",
                        b",loaded,",
                        b",delivered,",
                    ][(i % 4) as usize],
                );
                out.extend_from_slice(
                    ctx.products[rng.below(ctx.products.len() as u64) as usize]
                        .1
                        .as_bytes(),
                );
                out.push(b',');
                int(out, 1 + rng.below(120));
                out.push(b'\n');
            }
            (Kind::Csv, Persona::AiProductManager) => {
                self.stamp((i * 3) as i64, out);
                out.extend_from_slice(b",u");
                int(out, 10_000 + rng.below(90_000));
                out.push(b',');
                out.extend_from_slice(
                    [
                        b"signup" as &[u8],
                        b"page_view",
                        b"activate",
                        b"upgrade",
                        b"churn",
                    ][rng.below(5) as usize],
                );
                out.push(b',');
                out.extend_from_slice(
                    ctx.regions[rng.below(ctx.regions.len() as u64) as usize].as_bytes(),
                );
                out.push(b',');
                out.extend_from_slice(
                    ctx.products[rng.below(ctx.products.len() as u64) as usize]
                        .1
                        .as_bytes(),
                );
                out.push(b',');
                fixed(out, rng.below(10_000) as i64, 2);
                out.push(b'\n');
            }
            (Kind::Csv, Persona::OperationsManager) => {
                self.stamp((i * 90) as i64, out);
                out.truncate(out.len() - 9); // the date only
                out.extend_from_slice(b",SO-");
                int(out, 200_000 + i);
                out.push(b',');
                out.extend_from_slice(
                    ctx.regions[rng.below(ctx.regions.len() as u64) as usize].as_bytes(),
                );
                let (name, sku, price) =
                    &ctx.products[rng.below(ctx.products.len() as u64) as usize];
                out.push(b',');
                out.extend_from_slice(name.replace(',', " ").as_bytes());
                out.push(b',');
                out.extend_from_slice(sku.as_bytes());
                let q = 1 + rng.below(50);
                out.push(b',');
                int(out, q);
                out.push(b',');
                int(out, u64::from(*price));
                out.push(b',');
                int(out, q * u64::from(*price));
                out.push(b'\n');
            }
            (Kind::Jsonl, Persona::Researcher) => {
                let step = (i + 1) * 10;
                let loss = 2_300_000 / (i as i64 / 8 + 10) + 20_000 + rng.below(4_000) as i64;
                out.extend_from_slice(b"{\"step\": ");
                int(out, step);
                out.extend_from_slice(b", \"epoch\": ");
                int(out, step / 2_000);
                out.extend_from_slice(b", \"loss\": ");
                fixed(out, loss, 5);
                out.extend_from_slice(b", \"val_loss\": ");
                fixed(out, loss + 1_500 + rng.below(3_000) as i64, 5);
                out.extend_from_slice(b", \"lr\": 0.00030, \"grad_norm\": ");
                fixed(out, 300 + rng.below(900) as i64, 3);
                out.extend_from_slice(b", \"time\": \"");
                self.stamp((i * 4) as i64, out);
                out.extend_from_slice(b"Z\"}\n");
            }
            (Kind::Jsonl, _) => {
                out.extend_from_slice(b"{\"ts\": \"");
                self.stamp((i * 2) as i64, out);
                out.extend_from_slice(b"Z\", \"event\": \"");
                let ev: &[u8] = match ctx.persona {
                    Persona::LogisticsManager => {
                        [b"scan" as &[u8], b"depart", b"arrive", b"delay"][rng.below(4) as usize]
                    }
                    Persona::BackendDeveloper => {
                        [b"GET" as &[u8], b"POST", b"PUT", b"DELETE"][rng.below(4) as usize]
                    }
                    _ => [b"page_view" as &[u8], b"signup", b"quote_sent", b"order"]
                        [rng.below(4) as usize],
                };
                out.extend_from_slice(ev);
                out.extend_from_slice(b"\", \"id\": ");
                int(out, 1_000_000 + i);
                out.extend_from_slice(b", \"region\": \"");
                out.extend_from_slice(
                    ctx.regions[rng.below(ctx.regions.len() as u64) as usize].as_bytes(),
                );
                out.extend_from_slice(b"\", \"sku\": \"");
                out.extend_from_slice(
                    ctx.products[rng.below(ctx.products.len() as u64) as usize]
                        .1
                        .as_bytes(),
                );
                out.extend_from_slice(b"\", \"value\": ");
                fixed(out, rng.below(100_000) as i64, 2);
                out.extend_from_slice(b"}\n");
            }
            _ => {
                // Log lines (and anything else): "ts LEVEL [component] message k=v".
                self.stamp((i / 3) as i64, out);
                out.push(b'.');
                int3(out, rng.below(1000));
                let lvl = rng.below(100);
                out.extend_from_slice(if lvl < 2 {
                    b"Z ERROR " as &[u8]
                } else if lvl < 8 {
                    b"Z WARN  "
                } else {
                    b"Z INFO  "
                });
                let (comp, msg): (&[u8], &[u8]) = match ctx.persona {
                    Persona::BackendDeveloper => (
                        b"[api] ",
                        b"request done method=GET path=/v1/orders status=200 dur_ms=",
                    ),
                    Persona::LogisticsManager => (
                        b"[edi] ",
                        b"message processed type=856 partner=carrier dur_ms=",
                    ),
                    _ => (b"[sync] ", b"dashboard refresh rows=512 dur_ms="),
                };
                out.extend_from_slice(comp);
                out.extend_from_slice(msg);
                int(out, 1 + rng.below(900));
                out.extend_from_slice(b" req=");
                hex8(out, rng.next());
                out.push(b'\n');
            }
        }
    }
}

/// A text file of `kind` rows until it reaches `target` bytes.
fn write_text(
    sink: &mut Sink,
    rng: &mut Fast,
    ctx: &Ctx,
    kind: Kind,
    target: u64,
) -> std::io::Result<()> {
    let mut rows = Rows::new(ctx, kind);
    let mut chunk = Vec::with_capacity(1 << 20);
    rows.header(&mut chunk);
    loop {
        while chunk.len() < (1 << 20) {
            rows.row(rng, &mut chunk);
            if sink.len() + chunk.len() as u64 >= target
                && (kind != Kind::Sql || rows.i.is_multiple_of(200))
            {
                break;
            }
        }
        sink.write_all(&chunk)?;
        chunk.clear();
        if sink.len() >= target && (kind != Kind::Sql || rows.i.is_multiple_of(200)) {
            break;
        }
    }
    if kind == Kind::Sql {
        sink.write_all(b";\nCOMMIT;\n")?;
    }
    Ok(())
}

fn int(out: &mut Vec<u8>, mut v: u64) {
    let mut b = [0u8; 20];
    let mut i = b.len();
    loop {
        i -= 1;
        b[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&b[i..]);
}

fn two(out: &mut Vec<u8>, v: u64) {
    out.push(b'0' + (v / 10 % 10) as u8);
    out.push(b'0' + (v % 10) as u8);
}

fn int3(out: &mut Vec<u8>, v: u64) {
    out.push(b'0' + (v / 100 % 10) as u8);
    two(out, v % 100);
}

/// `v / 10^decimals` with exactly `decimals` digits after the point.
fn fixed(out: &mut Vec<u8>, v: i64, decimals: u32) {
    if v < 0 {
        out.push(b'-');
    }
    let v = v.unsigned_abs();
    let p = 10u64.pow(decimals);
    int(out, v / p);
    if decimals > 0 {
        out.push(b'.');
        let mut frac = v % p;
        let mut digits = [b'0'; 20];
        for k in (0..decimals as usize).rev() {
            digits[k] = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
        out.extend_from_slice(&digits[..decimals as usize]);
    }
}

fn hex8(out: &mut Vec<u8>, v: u64) {
    const H: &[u8; 16] = b"0123456789abcdef";
    for k in (0..8).rev() {
        out.push(H[((v >> (k * 4)) & 0xF) as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_v1_and_64_aligned() {
        let h = npy_header("(3, 16)");
        assert!(h.starts_with(b"\x93NUMPY\x01\x00"));
        assert_eq!(h.len() % 64, 0);
        assert_eq!(*h.last().unwrap(), b'\n');
        let len = u16::from_le_bytes([h[8], h[9]]) as usize;
        assert_eq!(10 + len, h.len());
        let mut v = Vec::new();
        write_npy(&mut v, &mut Fast(1), 3, 16, true).unwrap();
        assert_eq!(v.len() as u64, npy_len(3, 16));
    }

    #[test]
    fn number_formatting_matches_std() {
        for v in [0i64, 7, 12, 1234, -5, -1234, 100_000] {
            let mut o = Vec::new();
            fixed(&mut o, v, 3);
            assert_eq!(
                String::from_utf8(o).unwrap(),
                format!("{:.3}", v as f64 / 1000.0)
            );
        }
        let mut o = Vec::new();
        int(&mut o, 0);
        int(&mut o, 18_446_744_073_709_551_615);
        assert_eq!(o, b"018446744073709551615");
    }

    #[test]
    fn count_stays_within_the_file_budget() {
        assert_eq!(count(1 << 30, 11_020), 128);
        assert_eq!(count(1 << 20, 11_020), 4);
        assert_eq!(count(1 << 40, 200), 20);
    }
}
