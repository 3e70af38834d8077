//! Fingerprint bureau-gen's sources so cached generated workspaces (`[workspace]` tasks) are
//! keyed by the generator that made them: any change to the generator gives a new cache key.
//! The picture renderer it draws evidence media with (`bureau-media`'s `render/` and fonts) and
//! the PDF writer of its scans count as the generator too.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let gen_dir = crates.join("gen");
    let mut paths = Vec::new();
    files(&gen_dir.join("src"), &mut paths);
    paths.push(gen_dir.join("Cargo.toml"));
    files(&crates.join("media/src/render"), &mut paths);
    files(&crates.join("media/fonts"), &mut paths);
    paths.push(crates.join("formats/src/office/image.rs"));
    paths.sort();
    // FNV-1a 64 over (relative path, contents): stable across compilers and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    let mut seen = 0;
    for p in &paths {
        if let Ok(bytes) = std::fs::read(p) {
            eat(p
                .strip_prefix(&crates)
                .unwrap_or(p)
                .to_string_lossy()
                .as_bytes());
            eat(&bytes);
            seen += 1;
        }
    }
    // Outside the Bureau repository (no sources next door), fall back to the package version.
    let fingerprint = if seen == 0 {
        format!("v{}", env!("CARGO_PKG_VERSION"))
    } else {
        format!("{h:016x}")
    };
    println!("cargo:rustc-env=BUREAU_GEN_FINGERPRINT={fingerprint}");
    println!("cargo:rerun-if-changed=../gen/src");
    println!("cargo:rerun-if-changed=../gen/Cargo.toml");
    println!("cargo:rerun-if-changed=../media/src/render");
    println!("cargo:rerun-if-changed=../media/fonts");
    println!("cargo:rerun-if-changed=../formats/src/office/image.rs");
}
