use crate::{World, WorldError};
use bureau_core::task::{Event, Task};
use std::path::Path;
pub(crate) fn build(_task: &Task, _root: &Path) -> Result<World, WorldError> { todo!() }
pub(crate) fn apply(_w: &mut World, _ev: &Event) -> Result<(), WorldError> { todo!() }
