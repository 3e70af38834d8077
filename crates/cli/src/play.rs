//! `bureau play <task>`: a person does a task in the browser, recorded as a trial of agent
//! `human:<name>` (docs/play.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use bureau_play::{Play, PlayError, PlayOptions};
use clap::Args;

use crate::EXIT_BAD_INPUT;

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The task directory to play.
    #[arg(value_name = "TASK_DIR")]
    task: PathBuf,
    /// Your name: the trial's agent is human:<name> [default: $USER, else human].
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Run directory [default: runs/play-<task>-<name>]. A normal run directory: `bureau report` and `bureau view` read it.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Port on 127.0.0.1 [default: a free one].
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
}

/// Serve the play, print its URL (one line on stdout), wait for the person to finish and
/// close; print the result line. Ctrl-C records the trial as interrupted (never scored).
pub fn cmd_play(args: PlayArgs) -> anyhow::Result<ExitCode> {
    crate::stop_cleanly_on_signals();
    let name = args.name.unwrap_or_else(|| {
        std::env::var("USER")
            .ok()
            .filter(|u| bureau_play::check_name(u).is_ok())
            .unwrap_or_else(|| "human".into())
    });
    let options = PlayOptions {
        task: args.task,
        name,
        out: args.out,
        port: args.port,
    };
    let play = match Play::start(options) {
        Ok(p) => p,
        Err(e @ (PlayError::Config(_) | PlayError::Bind { .. })) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(PlayError::Run(e)) => return Err(e.into()),
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "Bureau play: {}", play.url())?;
    stdout.flush()?;
    drop(stdout);
    eprintln!(
        "run directory: {} — open the URL above in a browser on this machine; Ctrl-C stops the play (the trial is then recorded as interrupted, not scored)",
        play.out().display()
    );
    match play.run() {
        Ok(report) => {
            println!("{}", report.line());
            Ok(ExitCode::SUCCESS)
        }
        Err(PlayError::Run(e)) => Err(e.into()),
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(EXIT_BAD_INPUT))
        }
    }
}
