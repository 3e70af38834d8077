//! Document readers for checks: `docx(path)`, `pptx(path)`, `pdf(path)`, `read_text(path)`
//! — typed views of workspace office files (see docs/services/documents.md).

use starlark::environment::GlobalsBuilder;
use starlark::starlark_module;

#[starlark_module]
pub(crate) fn document_functions(builder: &mut GlobalsBuilder) {}
