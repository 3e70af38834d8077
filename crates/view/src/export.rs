//! `bureau report --html`: the viewer's pages written as a folder of self-contained HTML
//! files (every style, script, chart and picture inline; links relative), to attach to a
//! paper or a pull request, or open from disk.

use std::path::{Path, PathBuf};

use crate::ViewError;
use crate::load::{label_runs, load_run};
use crate::pages::{overview, trial_href};

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The overview, `<out>/index.html`.
    pub index: PathBuf,
    /// Trial pages written.
    pub trials: usize,
}

fn write(path: &Path, html: &str) -> Result<(), ViewError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| ViewError::Write {
            path: parent.to_path_buf(),
            source: e,
        })?;
    }
    std::fs::write(path, html).map_err(|e| ViewError::Write {
        path: path.to_path_buf(),
        source: e,
    })
}

/// Write the overview of `dirs` and every trial page under `out`.
pub fn export_html(dirs: &[PathBuf], out: &Path) -> Result<Exported, ViewError> {
    let mut runs: Vec<_> = dirs.iter().map(|d| load_run(d)).collect();
    label_runs(&mut runs);
    let index = out.join("index.html");
    write(&index, &overview(&runs))?;
    let mut trials = 0;
    for (i, run) in runs.iter().enumerate() {
        for t in &run.trials {
            if let Some(html) = crate::trial::trial_page(run, &t.key, "../../../../") {
                write(&out.join(trial_href(i, &t.key)), &html)?;
                trials += 1;
            }
        }
    }
    Ok(Exported { index, trials })
}
