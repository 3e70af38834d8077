//! `bureau tasks`: list tasks, or render one instance of a parametrised task for inspection.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;

use crate::table;

pub(crate) fn cmd_tasks(targets: &[String]) -> anyhow::Result<ExitCode> {
    let tasks = bureau_variants::load_tasks(targets, &bureau_variants::Plan::default())?;
    let mut rows = vec![
        ["ID", "DIFFICULTY", "CATEGORY", "TURNS", "ITEMS", "APPS"]
            .map(String::from)
            .to_vec(),
    ];
    for t in &tasks {
        rows.push(vec![
            t.id.clone(),
            t.difficulty.as_str().to_string(),
            t.category.clone(),
            t.turns.len().to_string(),
            t.rubric.len().to_string(),
            t.apps.join(","),
        ]);
    }
    print!("{}", table(&rows));
    println!("{} task(s)", tasks.len());
    Ok(ExitCode::SUCCESS)
}

/// `bureau tasks --variant <seed> <task> [--out DIR]`.
pub(crate) fn cmd_render_variant(
    targets: &[String],
    seed: u64,
    out: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let [target] = targets else {
        bail!("--variant renders one task: give exactly one task directory");
    };
    let dir = PathBuf::from(target);
    if !dir.join("task.toml").is_file() {
        bail!("{target} is not a task directory (no task.toml) — --variant renders one task");
    }
    if !bureau_variants::is_parametrised(&dir) {
        bail!("{target} has no [params]: it has one instance, the task itself");
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "task".into());
    let out = out.unwrap_or_else(|| PathBuf::from(format!("{name}.variant-{seed}")));
    if out.exists() {
        bail!("{} exists — give a new directory with --out", out.display());
    }
    let values = bureau_variants::render_to(&dir, seed, &out)?;
    println!(
        "instance of `{name}` with seed {seed} rendered to {}",
        out.display()
    );
    for (k, v) in &values {
        println!("  {k} = {v}");
    }
    Ok(ExitCode::SUCCESS)
}
