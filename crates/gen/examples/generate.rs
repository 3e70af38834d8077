//! Time one generation without building the whole CLI (docs/BENCHMARKS.md):
//! `cargo run --release -p bureau-gen --example generate -- researcher 11020 1 /tmp/ws`

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [persona, files, seed, out] = args.as_slice() else {
        return Err("usage: generate <persona> <files> <seed> <out>".into());
    };
    let spec = bureau_gen::GenSpec {
        persona: persona.parse()?,
        files: files.parse()?,
        seed: seed.parse()?,
    };
    let t = Instant::now();
    let m = bureau_gen::generate(&spec, std::path::Path::new(out))?;
    println!("{} in {:.2}s", m.summary(), t.elapsed().as_secs_f64());
    Ok(())
}
