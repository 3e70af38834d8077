//! Built-in predicates of the sheets service.

use bureau_core::task::{SheetCellFilter, Task};
use bureau_core::verdict::VerdictStatus;
use bureau_world::World;

pub(crate) fn sheet_cell(
    _task: &Task,
    _world: &World,
    _f: &SheetCellFilter,
) -> (VerdictStatus, String) {
    (
        VerdictStatus::Error,
        "the `sheet_cell` predicate is not implemented yet".into(),
    )
}
