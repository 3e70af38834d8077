//! `bureau media render <media.toml> [--check]`: make a task's media from its spec, or check
//! that the committed files are what the spec makes (docs/media.md).

use std::path::PathBuf;
use std::process::ExitCode;

use bureau_media::render::build::{BuildError, Checked, check_all, render_all};
use bureau_media::render::spec::MediaSpec;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum MediaCommand {
    /// Make every file a media.toml asks for (pictures, charts, scans, voicemails with espeak-ng, clips with ffmpeg, mails) and print each with its BLAKE3. With --check, write nothing: re-render pictures, charts, scans and mails in memory and fail (exit 1) naming each committed file that differs or is missing; audio and video are only checked to exist with a readable duration.
    Render {
        /// The spec (outputs are relative to its directory).
        #[arg(value_name = "MEDIA_TOML")]
        spec: PathBuf,
        /// Compare instead of writing.
        #[arg(long)]
        check: bool,
    },
}

pub fn cmd_media(cmd: MediaCommand) -> anyhow::Result<ExitCode> {
    let MediaCommand::Render { spec, check } = cmd;
    // Located errors (file:line:col: what — what to do) go up to main's printer.
    let spec = MediaSpec::load(&spec)?;
    if check {
        return check_spec(&spec);
    }
    let result = render_all(&spec, |m| {
        println!("{}  {}", m.blake3, spec.dir.join(&m.out).display());
    });
    match result {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => Ok(build_failed(&e)),
    }
}

fn build_failed(e: &BuildError) -> ExitCode {
    match e.missing_program() {
        // One line naming what to install.
        Some(missing) => {
            eprintln!("error: {missing}");
            ExitCode::from(super::EXIT_BAD_INPUT)
        }
        None => {
            eprintln!("error: {e}");
            ExitCode::from(super::EXIT_FAILURE)
        }
    }
}

fn check_spec(spec: &MediaSpec) -> anyhow::Result<ExitCode> {
    let checked = match check_all(spec) {
        Ok(c) => c,
        Err(e) => return Ok(build_failed(&e)),
    };
    let path = |out: &str| spec.dir.join(out).display().to_string();
    let mut bad = 0;
    for c in &checked {
        match c {
            Checked::Same(m) => println!("ok       {}  {}", m.blake3, path(&m.out)),
            Checked::Playable { made, seconds } => println!(
                "present  {}  {} ({seconds:.1} s; {} is made by an external program and checked for a readable duration only, not byte for byte)",
                made.blake3,
                path(&made.out),
                made.kind.name()
            ),
            Checked::Differs {
                out,
                committed,
                rendered,
            } => {
                bad += 1;
                println!(
                    "DIFFERS  {}: committed {committed}, the spec makes {rendered}; run `bureau media render {}` and commit the result",
                    path(out),
                    spec.path.display()
                );
            }
            Checked::Missing { out } => {
                bad += 1;
                println!(
                    "MISSING  {}: run `bureau media render {}` and commit the result",
                    path(out),
                    spec.path.display()
                );
            }
            Checked::Unreadable { out, reason } => {
                bad += 1;
                println!("UNREADABLE  {}: {reason}", path(out));
            }
        }
    }
    if bad > 0 {
        eprintln!(
            "{bad} of {} files are not what {} makes",
            checked.len(),
            spec.path.display()
        );
        return Ok(ExitCode::from(super::EXIT_FAILURE));
    }
    Ok(ExitCode::SUCCESS)
}
