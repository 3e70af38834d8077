//! tracker_* tools.

use super::Tool;

pub(super) const TOOLS: &[Tool] = &[];
