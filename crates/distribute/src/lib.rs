//! Sharded runs through Slurm and Kubernetes (issue 18 §2): the files those engines run.
//!
//! Bureau has no scheduler of its own. A run of N shards is N invocations of
//! `bureau run … --out <shared dir> --shard K/N`; this crate writes what makes an engine start
//! them — an sbatch job array plus a dependent report job ([`slurm`]), or a Kubernetes Indexed
//! Job whose completion index picks the shard ([`k8s`]) — and, for Slurm, submits them with
//! `sbatch`.

use std::path::{Path, PathBuf};

pub mod k8s;
pub mod slurm;

/// What went wrong while writing or submitting the engine files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input (a user's argument); the message says what to change.
    #[error("{0}")]
    Input(String),
    /// A file could not be written.
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `sbatch` is not installed here.
    #[error(
        "sbatch is not on PATH: install Slurm's client (Debian: apt-get install slurm-client, or slurm-wlm for a whole node), or use --dry-run to write and print the scripts without submitting"
    )]
    NoSbatch,
    /// `sbatch` ran and refused, or printed no job id.
    #[error("sbatch {script}: {message}")]
    Sbatch { script: PathBuf, message: String },
    /// The manifest could not be serialised.
    #[error("serialising the manifest: {0}")]
    Yaml(#[from] serde_yaml::Error),
}

/// One sharded run: what every shard runs, except the `--shard` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    /// The program nodes run (an absolute path for Slurm, a name on the image's PATH for k8s).
    pub bureau: String,
    /// Suites or tasks, as for `bureau run`.
    pub targets: Vec<String>,
    /// `--agent` values, in order.
    pub agents: Vec<String>,
    /// Further `bureau run` options, passed through verbatim (e.g. `--epochs`, `3`).
    pub run_options: Vec<String>,
    /// The run directory every shard writes into (on shared storage).
    pub out: String,
    /// The number of shards (at least 1).
    pub shards: u32,
}

impl RunSpec {
    /// Refuses a spec no engine could run: no shards, no target, no agent.
    pub fn check(&self) -> Result<(), Error> {
        if self.shards == 0 {
            return Err(Error::Input(
                "--shards 0: a run needs at least one shard (--shards 1 runs it as one job)".into(),
            ));
        }
        if self.targets.is_empty() {
            return Err(Error::Input("no suite or task to run".into()));
        }
        if self.agents.is_empty() {
            return Err(Error::Input("no --agent given".into()));
        }
        Ok(())
    }

    /// `run <targets> --agent A… <options> --out <out>` (everything but the program and
    /// `--shard`).
    pub fn run_args(&self) -> Vec<String> {
        let mut args = vec!["run".to_string()];
        args.extend(self.targets.iter().cloned());
        for a in &self.agents {
            args.push("--agent".into());
            args.push(a.clone());
        }
        args.extend(self.run_options.iter().cloned());
        args.push("--out".into());
        args.push(self.out.clone());
        args
    }

    /// A job name derived from the run directory's last component: lower-case letters,
    /// digits and `-`, at most 40 characters (fits Slurm and Kubernetes names).
    pub fn job_name(&self) -> String {
        let base = Path::new(&self.out)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut name = String::from("bureau");
        let mut dash = true;
        let mut tail = String::new();
        for c in base.chars() {
            if c.is_ascii_alphanumeric() {
                tail.push(c.to_ascii_lowercase());
                dash = false;
            } else if !dash {
                tail.push('-');
                dash = true;
            }
        }
        let tail = tail.trim_matches('-');
        if !tail.is_empty() {
            name.push('-');
            name.push_str(tail);
        }
        name.truncate(40);
        name.trim_end_matches('-').to_string()
    }
}

/// Quotes `word` for a POSIX shell: unchanged when it holds only characters no shell treats
/// specially, else in single quotes (a single quote inside becomes `'\''`).
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@,+%^".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Every word quoted and joined by spaces.
pub fn shell_join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(path, text).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn spec(out: &str) -> RunSpec {
        RunSpec {
            bureau: "/opt/bureau/bin/bureau".into(),
            targets: vec!["suites/starter".into()],
            agents: vec!["oracle".into(), "null".into()],
            run_options: vec!["--epochs".into(), "3".into()],
            out: out.into(),
            shards: 4,
        }
    }

    /// The words a POSIX shell makes of `line`, printed one per line by printf.
    pub(crate) fn words_via_sh(line: &str) -> Vec<String> {
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\n' {line}"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    }

    #[test]
    fn quoted_words_survive_a_shell() {
        let words = [
            "plain",
            "with space",
            "it's",
            "\"double\"",
            "$HOME",
            "`date`",
            "a\\b",
            "semi;colon",
            "*",
            "",
            "tab\there",
            "--agent=command:'x {prompt}'",
        ];
        assert_eq!(words_via_sh(&shell_join(&words)), words);
    }

    #[test]
    fn job_names_are_safe() {
        assert_eq!(
            spec("/runs/Sweep 2026_11").job_name(),
            "bureau-sweep-2026-11"
        );
        assert_eq!(spec("/").job_name(), "bureau");
        assert!(spec(&format!("/r/{}", "x".repeat(100))).job_name().len() <= 40);
    }

    #[test]
    fn zero_shards_are_refused() {
        let mut s = spec("/r");
        s.shards = 0;
        assert!(matches!(s.check(), Err(Error::Input(m)) if m.contains("--shards 0")));
        assert!(spec("/r").check().is_ok());
    }
}
