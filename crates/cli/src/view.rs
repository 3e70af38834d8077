//! `bureau view`, `bureau report --html`, `bureau status` and `bureau unpack`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;

/// Serve the viewer over `dirs` until interrupted.
pub fn cmd_view(dirs: Vec<PathBuf>, port: Option<u16>) -> anyhow::Result<ExitCode> {
    for d in &dirs {
        if !d.is_dir() {
            bail!(
                "{} is not a directory — give run directories (the --out of `bureau run`)",
                d.display()
            );
        }
    }
    bureau_view::serve::serve_blocking(dirs, port.unwrap_or(0), |url| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "Bureau viewer: {url}");
        let _ = out.flush();
        eprintln!("serving on 127.0.0.1 only; Ctrl-C stops it");
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Write the static HTML report of `dir` into `out` (default `<dir>/html`).
pub fn write_html(dir: &Path, out: Option<PathBuf>) -> anyhow::Result<()> {
    let out = out.unwrap_or_else(|| dir.join("html"));
    let written = bureau_view::export_html(&[dir.to_path_buf()], &out)?;
    eprintln!(
        "wrote {} and {} trial page(s) — self-contained, open it from disk",
        written.index.display(),
        written.trials
    );
    Ok(())
}

/// Print the progress of the run in `dir`, per shard.
pub fn cmd_status(dir: &Path) -> anyhow::Result<ExitCode> {
    if !dir.join(bureau_run::rundir::RUN_JSON).is_file() {
        bail!(
            "{} is not a run directory (it has no run.json) — give the --out directory of `bureau run`",
            dir.display()
        );
    }
    let status = bureau_run::status::status(dir)?;
    print!("{}", status.render());
    Ok(ExitCode::SUCCESS)
}

/// Unpack the trials of `paths` in place, or the one trial into `to`.
pub fn cmd_unpack(paths: &[PathBuf], to: Option<&Path>) -> anyhow::Result<ExitCode> {
    let done = bureau_run::unpack::unpack(paths, to)?;
    let packed = done.iter().filter(|u| u.files > 0).count();
    let files: usize = done.iter().map(|u| u.files).sum();
    match to {
        Some(to) => eprintln!("wrote {files} file(s) into {}", to.display()),
        None => eprintln!(
            "unpacked {packed} trial(s) ({files} file(s)); {} had no archive",
            done.len() - packed
        ),
    }
    Ok(ExitCode::SUCCESS)
}
