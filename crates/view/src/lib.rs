//! Bureau in the browser: `bureau view <run-dir>…` (a local web app on 127.0.0.1) and
//! `bureau report --html` (the same pages as a folder of self-contained HTML files).
//!
//! - `load.rs`: reading run directories leniently (what cannot be read is a [`load::Problem`]
//!   shown on the page).
//! - `pages.rs`: the templates and the overview (leaderboard, charts, comparison, heat map).
//! - `charts.rs`: the charts, SVG drawn by `plotters`.
//! - `timeline.rs` and `trial.rs`: the trial page.
//! - `world/`: what each turn changed in the world, per service.
//! - `serve.rs`: the server; `export.rs`: the static export.

use std::path::PathBuf;

pub mod charts;
pub mod export;
pub mod load;
pub mod pages;
pub mod serve;
pub mod timeline;
pub mod trial;
pub mod world;

pub use export::{Exported, export_html};
pub use serve::Viewer;

/// Why the viewer could not start or write.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(
        "cannot listen on 127.0.0.1:{port}: {source} — give another --port, or none for a free one"
    )]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Serve(String),
    #[error("{path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
