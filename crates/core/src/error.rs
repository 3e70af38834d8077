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

impl Location {
    /// A path as a whole, with no position in it (a directory, or a path that does not
    /// exist): shown as the path alone, never with a made-up `:1:1`.
    pub fn whole(path: &Path) -> Location {
        Location {
            path: path.to_path_buf(),
            line: 0,
            col: 0,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "{}", self.path.display());
        }
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.col)
    }
}

/// The Levenshtein distance between `a` and `b`, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate nearest to `word` by [`edit_distance`], if it is near enough to be what was
/// meant (at most a third of the word's length, and at least 1, edits); ties go to the
/// first in sorted order.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let mut all: Vec<&str> = candidates.into_iter().collect();
    all.sort_unstable();
    all.into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
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

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("starter", "starter"), 0);
        assert_eq!(edit_distance("stater", "starter"), 1);
        assert_eq!(edit_distance("wieght", "weight"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn did_you_mean_picks_the_nearest_close_candidate() {
        let suites = ["history", "intranet", "starter", "workspace"];
        assert_eq!(did_you_mean("stater", suites), Some("starter"));
        assert_eq!(did_you_mean("intranett", suites), Some("intranet"));
        assert_eq!(did_you_mean("zzz", suites), None);
    }

    #[test]
    fn a_whole_path_location_has_no_made_up_position() {
        assert_eq!(
            Location::whole(Path::new("suites/x")).to_string(),
            "suites/x"
        );
        assert_eq!(
            Location::file(Path::new("a.toml")).to_string(),
            "a.toml:1:1"
        );
    }
}
