//! Built-in predicates of the kb service.

use bureau_core::task::{KbPageFilter, KbRowFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;

pub(crate) fn kb_page(_task: &Task, _world: &World, _f: &KbPageFilter) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `kb_page` predicate is not implemented yet".into(),
    )
}

pub(crate) fn kb_row(_task: &Task, _world: &World, _f: &KbRowFilter) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `kb_row` predicate is not implemented yet".into(),
    )
}
