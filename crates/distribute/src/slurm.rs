//! Slurm: a job array of the shards and a report job that waits for it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Error, RunSpec, shell_join, shell_quote, write};

/// The sbatch options every job gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlurmOptions {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` (a Slurm time limit, e.g. `2:00:00`).
    pub time: Option<String>,
    /// `--cpus-per-task`.
    pub cpus: Option<u32>,
    /// `--mem` (e.g. `4G`).
    pub mem: Option<String>,
    /// Further sbatch options, one `#SBATCH` line each (e.g. `--account=lab`).
    pub extra: Vec<String>,
}

/// The two scripts of a sharded run, and where they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmFiles {
    /// `<out>/slurm/shards.sbatch`: the job array.
    pub shards: PathBuf,
    /// `<out>/slurm/report.sbatch`: the report job.
    pub report: PathBuf,
    /// The text of `shards`.
    pub shards_text: String,
    /// The text of `report`.
    pub report_text: String,
}

/// The job ids sbatch printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    pub array: String,
    pub report: String,
}

/// Checks the options and the run directory's path for what an `#SBATCH` line can hold.
fn check(spec: &RunSpec, opts: &SlurmOptions) -> Result<(), Error> {
    spec.check()?;
    let mut values: Vec<(&str, &str)> = vec![];
    if let Some(p) = &opts.partition {
        values.push(("--partition", p));
    }
    if let Some(t) = &opts.time {
        values.push(("--time", t));
    }
    if let Some(m) = &opts.mem {
        values.push(("--mem", m));
    }
    for e in &opts.extra {
        values.push(("--sbatch-arg", e));
    }
    for (flag, v) in values {
        if v.is_empty() || v.contains(['\n', '\r']) {
            return Err(Error::Input(format!(
                "{flag} {v:?}: an #SBATCH line cannot hold an empty value or a line break"
            )));
        }
    }
    if let Some(e) = opts.extra.iter().find(|e| !e.starts_with('-')) {
        return Err(Error::Input(format!(
            "--sbatch-arg {e:?}: give an sbatch option (e.g. --sbatch-arg=--account=lab)"
        )));
    }
    if !Path::new(&spec.out).is_absolute() {
        return Err(Error::Input(format!(
            "--out {}: the run directory must be an absolute path on storage every node mounts",
            spec.out
        )));
    }
    Ok(())
}

/// An `--output` value for an `#SBATCH` line. sbatch reads `%` as a pattern and does its own
/// quoting, so a run directory whose path has such characters gets a path relative to the
/// job's working directory, which [`submit`] sets to the run directory.
fn log_path(out: &str, file: &str) -> String {
    let awkward = out
        .chars()
        .any(|c| c.is_whitespace() || "%\"'\\$`".contains(c));
    if awkward {
        format!("slurm/{file}")
    } else {
        format!("{}/slurm/{file}", out.trim_end_matches('/'))
    }
}

fn header(lines: &mut Vec<String>, name: &str, opts: &SlurmOptions) {
    lines.push("#!/bin/sh".into());
    lines.push(format!("#SBATCH --job-name={name}"));
    if let Some(p) = &opts.partition {
        lines.push(format!("#SBATCH --partition={p}"));
    }
    if let Some(t) = &opts.time {
        lines.push(format!("#SBATCH --time={t}"));
    }
    if let Some(c) = opts.cpus {
        lines.push(format!("#SBATCH --cpus-per-task={c}"));
    }
    if let Some(m) = &opts.mem {
        lines.push(format!("#SBATCH --mem={m}"));
    }
    for e in &opts.extra {
        lines.push(format!("#SBATCH {e}"));
    }
}

/// The job array: element K runs shard K/N.
pub fn shards_script(spec: &RunSpec, opts: &SlurmOptions) -> Result<String, Error> {
    check(spec, opts)?;
    let mut lines = vec![];
    header(&mut lines, &spec.job_name(), opts);
    lines.push(format!("#SBATCH --array=1-{}", spec.shards));
    lines.push(format!(
        "#SBATCH --output={}",
        log_path(&spec.out, "shard-%a.out")
    ));
    lines.push(format!(
        "# Shard $SLURM_ARRAY_TASK_ID of {} of the Bureau run in {} (written by `bureau submit slurm`;",
        spec.shards, spec.out
    ));
    lines.push(
        "# submit from the run directory: cd <run dir> && sbatch --parsable slurm/shards.sbatch)."
            .into(),
    );
    lines.push("set -eu".into());
    let mut cmd = vec![spec.bureau.clone()];
    cmd.extend(spec.run_args());
    lines.push(format!(
        "exec {} --shard \"$SLURM_ARRAY_TASK_ID/{}\" --quiet",
        shell_join(&cmd),
        spec.shards
    ));
    Ok(lines.join("\n") + "\n")
}

/// The report job: `bureau report <out> --html` (report.md, summary.json and the HTML pages).
pub fn report_script(spec: &RunSpec, opts: &SlurmOptions) -> Result<String, Error> {
    check(spec, opts)?;
    let mut lines = vec![];
    header(&mut lines, &format!("{}-report", spec.job_name()), opts);
    lines.push(format!(
        "#SBATCH --output={}",
        log_path(&spec.out, "report.out")
    ));
    lines.push(format!(
        "# The final report of the Bureau run in {}; submitted with --dependency=afterany:<array job id>.",
        spec.out
    ));
    lines.push("set -eu".into());
    lines.push(format!(
        "exec {} report {} --html",
        shell_quote(&spec.bureau),
        shell_quote(&spec.out)
    ));
    Ok(lines.join("\n") + "\n")
}

/// Writes `<out>/slurm/shards.sbatch` and `<out>/slurm/report.sbatch`.
pub fn write_scripts(spec: &RunSpec, opts: &SlurmOptions) -> Result<SlurmFiles, Error> {
    let shards_text = shards_script(spec, opts)?;
    let report_text = report_script(spec, opts)?;
    let dir = Path::new(&spec.out).join("slurm");
    let files = SlurmFiles {
        shards: dir.join("shards.sbatch"),
        report: dir.join("report.sbatch"),
        shards_text,
        report_text,
    };
    write(&files.shards, &files.shards_text)?;
    write(&files.report, &files.report_text)?;
    Ok(files)
}

/// Whether an `sbatch` is on PATH.
pub fn sbatch_available() -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            let p = d.join("sbatch");
            p.is_file()
        })
    })
}

fn sbatch(args: &[String], script: &Path, workdir: &Path) -> Result<String, Error> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .current_dir(workdir)
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NoSbatch,
            _ => Error::Sbatch {
                script: script.to_path_buf(),
                message: e.to_string(),
            },
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(Error::Sbatch {
            script: script.to_path_buf(),
            message: format!(
                "exit {}: {}",
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    // --parsable prints `<job id>` or `<job id>;<cluster>`.
    let id = stdout
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::Sbatch {
            script: script.to_path_buf(),
            message: format!("no job id in its output {:?}", stdout.trim()),
        });
    }
    Ok(id)
}

/// Submits the array, then the report job with `--dependency=afterany:<array id>`; both run
/// with the run directory as their working directory.
pub fn submit(spec: &RunSpec, files: &SlurmFiles) -> Result<Submitted, Error> {
    if !sbatch_available() {
        return Err(Error::NoSbatch);
    }
    let workdir = Path::new(&spec.out);
    let array = sbatch(&[], &files.shards, workdir)?;
    let report = sbatch(
        &[format!("--dependency=afterany:{array}")],
        &files.report,
        workdir,
    )?;
    Ok(Submitted { array, report })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::{spec, words_via_sh};

    fn exec_line(script: &str) -> &str {
        script
            .lines()
            .find_map(|l| l.strip_prefix("exec "))
            .unwrap()
    }

    #[test]
    fn the_array_runs_one_shard_per_element() {
        let opts = SlurmOptions {
            partition: Some("cpu".into()),
            time: Some("1:00:00".into()),
            cpus: Some(4),
            mem: Some("8G".into()),
            extra: vec!["--account=lab".into()],
        };
        let s = shards_script(&spec("/shared/runs/sweep"), &opts).unwrap();
        for line in [
            "#!/bin/sh",
            "#SBATCH --job-name=bureau-sweep",
            "#SBATCH --array=1-4",
            "#SBATCH --output=/shared/runs/sweep/slurm/shard-%a.out",
            "#SBATCH --partition=cpu",
            "#SBATCH --time=1:00:00",
            "#SBATCH --cpus-per-task=4",
            "#SBATCH --mem=8G",
            "#SBATCH --account=lab",
        ] {
            assert!(s.lines().any(|l| l == line), "{line} missing from\n{s}");
        }
        // The shell expands the array index into the shard.
        let words = {
            let line = exec_line(&s).replace("$SLURM_ARRAY_TASK_ID", "3");
            words_via_sh(&line)
        };
        assert_eq!(
            words,
            [
                "/opt/bureau/bin/bureau",
                "run",
                "suites/starter",
                "--agent",
                "oracle",
                "--agent",
                "null",
                "--epochs",
                "3",
                "--out",
                "/shared/runs/sweep",
                "--shard",
                "3/4",
                "--quiet"
            ]
        );
        let r = report_script(&spec("/shared/runs/sweep"), &opts).unwrap();
        assert!(r.contains("#SBATCH --output=/shared/runs/sweep/slurm/report.out"));
        assert_eq!(
            words_via_sh(exec_line(&r)),
            [
                "/opt/bureau/bin/bureau",
                "report",
                "/shared/runs/sweep",
                "--html"
            ]
        );
    }

    #[test]
    fn paths_with_spaces_and_quotes_survive() {
        let mut sp = spec("/shared/it's a \"run\" $HOME");
        sp.bureau = "/opt/my bureau/bin/bu'reau".into();
        sp.targets = vec!["/suites/o'brien suite@easy".into()];
        sp.run_options = vec!["--agents-file".into(), "/x/a `b`.toml".into()];
        let s = shards_script(&sp, &SlurmOptions::default()).unwrap();
        // sbatch's own line gets a path relative to the run directory.
        assert!(s.contains("#SBATCH --output=slurm/shard-%a.out\n"), "{s}");
        let line = exec_line(&s).replace("$SLURM_ARRAY_TASK_ID", "1");
        let words = words_via_sh(&line);
        assert_eq!(words[0], sp.bureau);
        assert_eq!(words[2], sp.targets[0]);
        assert_eq!(words[8], "/x/a `b`.toml");
        assert_eq!(words[10], sp.out);
        assert_eq!(words[12], "1/4");
        let r = report_script(&sp, &SlurmOptions::default()).unwrap();
        assert_eq!(words_via_sh(exec_line(&r))[2], sp.out);
    }

    #[test]
    fn bad_input_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("run");
        let mut sp = spec(out.to_str().unwrap());
        sp.shards = 0;
        assert!(write_scripts(&sp, &SlurmOptions::default()).is_err());
        sp.shards = 2;
        let bad = SlurmOptions {
            extra: vec!["--account=x\n#SBATCH --evil".into()],
            ..Default::default()
        };
        assert!(write_scripts(&sp, &bad).is_err());
        let bare = SlurmOptions {
            extra: vec!["account=x".into()],
            ..Default::default()
        };
        assert!(write_scripts(&sp, &bare).is_err());
        assert!(!out.exists());
        assert!(shards_script(&spec("relative/run"), &SlurmOptions::default()).is_err());
        let files = write_scripts(&sp, &SlurmOptions::default()).unwrap();
        assert_eq!(
            std::fs::read_to_string(&files.shards).unwrap(),
            files.shards_text
        );
        assert!(files.report.is_file());
    }
}
