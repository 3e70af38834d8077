//! Built-in predicates of the chat service.

use bureau_core::task::{ChatPostedFilter, ColleagueAskedFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;

pub(crate) fn chat_posted(
    _task: &Task,
    _world: &World,
    _f: &ChatPostedFilter,
) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `chat_posted` predicate is not implemented yet".into(),
    )
}

pub(crate) fn colleague_asked(
    _task: &Task,
    _world: &World,
    _f: &ColleagueAskedFilter,
) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `colleague_asked` predicate is not implemented yet".into(),
    )
}
