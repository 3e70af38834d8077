//! The attack suite: one binary, one module per family. See `docs/security.md`.

#[path = "../../../run/tests/common/mod.rs"]
mod common;

mod checks;
mod documents;
mod files;
mod git;
mod harness;
mod mcp_stdio;
mod media;
mod run;
mod services;
mod shell;
