//! files_* tools for office documents: write .docx/.xlsx/.csv/.md, export .pdf.

use super::Tool;

pub(super) const TOOLS: &[Tool] = &[];
