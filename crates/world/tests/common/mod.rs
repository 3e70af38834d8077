//! Shared by the world's `[workspace]` tests: a private generator cache per test binary and a
//! small researcher-workspace task.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use bureau_core::task::Task;

/// All tests of a binary share one private cache directory.
pub fn cache() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap().keep();
        // SAFETY: set once, before any test of this binary reads it (all go through here).
        unsafe { std::env::set_var("BUREAU_CACHE_DIR", &d) };
        d
    })
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A researcher workspace (120 files, seed 7) with `world/files/task-notes.md` on top;
/// `file_deps` goes verbatim at the top level of task.toml.
pub fn task(dir: &Path, file_deps: &str) -> Task {
    cache();
    write(
        &dir.join("task.toml"),
        &format!(
            r#"
id = "t"
title = "T"
persona = "researcher"
category = "workspace"
difficulty = "easy"
{file_deps}

[workspace]
persona = "researcher"
files = 120
seed = 7

[user]
name = "Dana Reyes"
email = "dana@northwind.test"

[[turn]]
at = 2026-03-02T09:00:00
prompt = "Day one."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "answer.md"
"#
        ),
    );
    write(&dir.join("world/files/task-notes.md"), "from the task\n");
    Task::load(dir).unwrap()
}
