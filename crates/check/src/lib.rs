//! Bureau's checks and scores.
//!
//! * [`program`] — a compiled `checks.star` ([`CheckProgram`]) and [`load_checks`], which ties
//!   a task's rubric to it;
//! * [`eval`] — running a rubric against a world: Starlark checks over the view `w`, built-in
//!   predicates ([`eval_predicate`]), limits ([`CheckLimits`]);
//! * [`metrics`] — every score formula of the seed benchmarks, by its name;
//! * [`outputs`] — a trial's deliverables (output collection, `w.outputs`, `outputs.json`);
//! * [`depgraph`] — Workspace-Bench dependency-graph recognition (node / edge F1);
//! * [`summary`] — a run's results summarised per agent ([`summarize`], schema
//!   `bureau.summary/1`, documented in `docs/summary-schema.md`).
//!
//! A broken check is never a failed item: it is a verdict with status `Error` and a message.
//!
//! Checks run in an isolated process that holds no world: `view` builds `w` as data
//! (`tree`), `remote` answers what a check asks of the world while it runs, and `env` is what
//! the native functions see in that process.

mod code_view;
pub mod depgraph;
mod documents;
mod env;
pub mod eval;
mod globals;
mod images;
pub mod judge;
pub mod judge_pages;
pub mod metrics;
pub mod outputs;
pub mod predicate;
pub mod program;
mod reference;
mod remote;
mod sheets_view;
pub mod summary;
mod tree;
mod view;

pub use eval::{CheckLimits, evaluate, evaluate_item, evaluate_judged};
pub use judge::{CachedJudge, Judge};
pub use predicate::{eval_predicate, final_message_of};
pub use program::{CheckError, CheckProgram, load_checks};
pub use summary::{Summary, summarize};

/// Initialise what every checks' process would otherwise build again (Starlark's global
/// tables): give it to [`bureau_isolate::start_zygote`].
pub fn warm_up() {
    let _ = globals::helpers();
    let _ = globals::api();
}
