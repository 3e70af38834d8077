//! Built-in predicates of the code service.

use bureau_core::task::{MergeRequestFilter, RepoFileFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;

pub(crate) fn merge_request(
    _task: &Task,
    _world: &World,
    _f: &MergeRequestFilter,
) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `merge_request` predicate is not implemented yet".into(),
    )
}

pub(crate) fn repo_file_contains(
    _task: &Task,
    _world: &World,
    _f: &RepoFileFilter,
) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `repo_file_contains` predicate is not implemented yet".into(),
    )
}
