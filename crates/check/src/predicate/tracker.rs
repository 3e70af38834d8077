//! Built-in predicates of the tracker service.

use bureau_core::task::{Task, TrackerIssueFilter};
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;

pub(crate) fn tracker_issue(
    _task: &Task,
    _world: &World,
    _f: &TrackerIssueFilter,
) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `tracker_issue` predicate is not implemented yet".into(),
    )
}
