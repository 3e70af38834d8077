//! Time one generation without building the whole CLI (docs/BENCHMARKS.md):
//! `cargo run --release -p bureau-gen --example generate -- researcher 11020 1 /tmp/ws [1GiB]`
//! (the optional fifth argument is `--grow-to`).

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (persona, files, seed, out, grow) = match args.as_slice() {
        [p, f, s, o] => (p, f, s, o, None),
        [p, f, s, o, g] => (p, f, s, o, Some(bureau_gen::parse_size(g)?)),
        _ => return Err("usage: generate <persona> <files> <seed> <out> [grow-to]".into()),
    };
    let spec = bureau_gen::GenSpec {
        persona: persona.parse()?,
        files: files.parse()?,
        seed: seed.parse()?,
    };
    let opts = bureau_gen::GenOptions { grow_to: grow };
    let t = Instant::now();
    let m = bureau_gen::generate_with(&spec, &opts, std::path::Path::new(out))?;
    println!("{} in {:.2}s", m.summary(), t.elapsed().as_secs_f64());
    Ok(())
}
