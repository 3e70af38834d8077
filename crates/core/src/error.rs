//! Located errors for task and suite files.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a file, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub path: PathBuf,
    pub line: usize,
    pub col: usize,
}

impl Location {
    /// The location of byte `offset` in `source` (clamped to the source's length).
    pub fn from_offset(path: &Path, source: &str, offset: usize) -> Location {
        let offset = offset.min(source.len());
        let before = source.get(..offset).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let col = before
            .get(line_start..)
            .map(|s| s.chars().count())
            .unwrap_or(0)
            + 1;
        Location {
            path: path.to_path_buf(),
            line,
            col,
        }
    }

    /// A whole-file location (line 1, column 1).
    pub fn file(path: &Path) -> Location {
        Location {
            path: path.to_path_buf(),
            line: 1,
            col: 1,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.col)
    }
}

/// One problem in a task or suite: where, what is wrong, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {what} — {hint}")]
pub struct TaskError {
    pub location: Location,
    pub what: String,
    pub hint: String,
}

impl TaskError {
    pub fn new(location: Location, what: impl Into<String>, hint: impl Into<String>) -> Self {
        TaskError {
            location,
            what: what.into(),
            hint: hint.into(),
        }
    }
}

/// Every problem found while loading one task (loading does not stop at the first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TaskErrors(pub Vec<TaskError>);

impl fmt::Display for TaskErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl From<TaskError> for TaskErrors {
    fn from(e: TaskError) -> Self {
        TaskErrors(vec![e])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_one_based_lines_and_columns() {
        let src = "a = 1\nbé = 2\n";
        let p = Path::new("task.toml");
        assert_eq!(
            Location::from_offset(p, src, 0).to_string(),
            "task.toml:1:1"
        );
        assert_eq!(
            Location::from_offset(p, src, 6).to_string(),
            "task.toml:2:1"
        );
        // 'é' is two bytes but one column
        assert_eq!(
            Location::from_offset(p, src, 9).to_string(),
            "task.toml:2:3"
        );
        assert_eq!(Location::from_offset(p, src, 999).line, 3);
    }
}
