use crate::World;
use bureau_core::log::Actor;
use bureau_core::tool::{ToolOutcome, ToolSpec};
use serde_json::Value;
pub fn specs() -> Vec<ToolSpec> { todo!() }
pub(crate) fn call(_w: &mut World, _a: Actor, _n: &str, _args: &Value) -> ToolOutcome { todo!() }
