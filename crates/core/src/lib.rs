//! Bureau's shared vocabulary.
//!
//! Everything the other crates pass between each other lives here, so that the crates can
//! follow the data's path with one-way dependencies:
//!
//! * [`cpu`] — the gate that lets a few threads at a time run trials' CPU-bound work;
//! * [`history`] — a task's dialogue history (`history.json`) and the `--context` setting;
//! * [`task`] — the task format (`task.toml`, `turns/`, `solution/`) and its validating loader;
//! * [`suite`] — a directory of tasks with `suite.toml` and named subsets;
//! * [`tool`] — tool calls and tool descriptions shared by agents and the world;
//! * [`trajectory`] — what an agent did, step by step;
//! * [`log`] — the world event log (every change with its actor);
//! * [`verdict`] — the outcome of one rubric item;
//! * [`result`] — a trial's result record and its status.
//!
//! Errors in a task are reported as `path:line:col: what is wrong — what to do`
//! ([`error::TaskError`]).

pub mod cache;
pub mod cpu;
pub mod error;
pub mod history;
pub mod interrupt;
pub mod log;
pub mod result;
pub mod suite;
pub mod task;
pub mod time;
pub mod tool;
pub mod trajectory;
pub mod verdict;

pub use error::{Location, TaskError, TaskErrors};
pub use task::Task;
