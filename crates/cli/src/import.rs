//! `bureau import officebench` and `bureau import compare`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;

use crate::{EXIT_BAD_INPUT, EXIT_FAILURE, table};

/// Exit code of an import that wrote some tasks but skipped or refused others.
const EXIT_PARTIAL: u8 = 3;

pub(crate) fn cmd_import_officebench(
    checkout: &Path,
    out: Option<PathBuf>,
    strict: bool,
) -> anyhow::Result<ExitCode> {
    use bureau_import::officebench::{Mode, Options, import};
    let mode = if strict { Mode::Strict } else { Mode::Typed };
    let out = out.unwrap_or_else(|| {
        PathBuf::from(if strict {
            "officebench-strict"
        } else {
            "officebench"
        })
    });
    let opts = Options {
        checkout: checkout.to_path_buf(),
        out: out.clone(),
        mode,
    };
    let summary = match import(&opts) {
        Ok(s) => s,
        Err(e @ bureau_import::ImportError::NotTheBenchmark { .. }) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(e) => return Err(e.into()),
    };
    for p in &summary.refused {
        eprintln!("error: {p}");
    }
    let oracles: Vec<String> = summary
        .oracles
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    println!("{}", summary.line());
    if let Some(line) = summary.media_line() {
        println!("{line}");
    }
    println!(
        "oracles of the imported tasks: {}; {} finding(s) about the original in {}",
        if oracles.is_empty() {
            "none".to_string()
        } else {
            oracles.join(", ")
        },
        summary.findings.len(),
        out.join("import.json").display()
    );
    println!("wrote {}", out.display());
    if summary.skipped_count() > 0 || !summary.refused.is_empty() {
        return Ok(ExitCode::from(EXIT_PARTIAL));
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn cmd_import_compare(a: &Path, b: &Path) -> anyhow::Result<ExitCode> {
    for dir in [a, b] {
        if !dir.join(bureau_run::rundir::TRIALS).is_dir() {
            bail!(
                "{} is not a run directory (it has no trials/) — give the --out directory of `bureau run`",
                dir.display()
            );
        }
    }
    let c = bureau_run::compare_runs(a, b)?;
    if !c.diffs.is_empty() {
        let mut rows = vec![vec![
            "TASK".to_string(),
            "AGENT".to_string(),
            "EPOCH".to_string(),
            "A".to_string(),
            "B".to_string(),
            "ITEMS THAT DIFFER (A → B)".to_string(),
        ]];
        for d in &c.diffs {
            let items: Vec<String> = d
                .items
                .iter()
                .map(|(id, x, y)| format!("{id} ({x} → {y})"))
                .collect();
            rows.push(vec![
                d.task.clone(),
                d.agent.clone(),
                d.epoch.to_string(),
                d.status_a.clone(),
                d.status_b.clone(),
                items.join(", "),
            ]);
        }
        print!("{}", table(&rows));
    }
    println!(
        "{} of {} trial(s) differ between {} and {}{}",
        c.diffs.len(),
        c.common,
        a.display(),
        b.display(),
        if c.unmatched > 0 {
            format!("; {} trial(s) are in only one of them", c.unmatched)
        } else {
            String::new()
        }
    );
    Ok(if c.diffs.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILURE)
    })
}
