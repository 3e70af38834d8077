//! Document readers for checks: `docx(path)`, `pptx(path)`, `pdf(path)`, `read_text(path)`
//! — typed views of workspace office files (see docs/services/documents.md).
//!
//! | function | result |
//! |---|---|
//! | `docx(path)` | `.paragraphs` (each `.style`, `.heading_level` (int or None), `.text`, `.list_level` (int or None)), `.headings` (each `.level`, `.text`), `.tables` (list of rows of cell strings), `.text` |
//! | `pptx(path)` | `.slides` (each `.number`, `.title`, `.text`, `.notes`), `.text` |
//! | `pdf(path)` | `.pages` (list of page texts), `.text` |
//! | `read_text(path)` | the text an agent sees for the file (`files_read`) |
//!
//! A missing, corrupt, encrypted or oversized file is an error of the check, with the reason.

use bureau_formats::office;
use serde_json::{Value as J, json};
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::list::AllocList;
use starlark::values::structs::AllocStruct;
use starlark::values::{Heap, Value};

use crate::globals::{env, fail};
use crate::remote::Query;

/// The bytes of a workspace file, or a check error naming the function.
pub(crate) fn bytes(
    f: &str,
    path: &str,
    eval: &Evaluator<'_, '_, '_>,
) -> starlark::Result<Vec<u8>> {
    let c = env(eval)?;
    if let Some(rel) = path.strip_prefix(crate::reference::PREFIX) {
        return c
            .bytes(&Query::ReferenceBytes(rel.to_string()))?
            .or_else(|e| fail(format!("{f}(\"{path}\"): {e}")));
    }
    if !c.call::<bool>(&Query::Exists(path.to_string()))? {
        return fail(format!(
            "{f}(\"{path}\"): no such file in the workspace; guard with `if not w.files.exists(\"{path}\"): return False`"
        ));
    }
    match c.bytes(&Query::Bytes(path.to_string()))? {
        Ok(b) => Ok(b),
        Err(e) => fail(format!("{f}(\"{path}\"): {e}")),
    }
}

/// JSON to Starlark: objects become structs, arrays lists.
pub(crate) fn to_value<'v>(heap: Heap<'v>, v: &J) -> Value<'v> {
    match v {
        J::Object(m) => heap.alloc(AllocStruct(
            m.iter()
                .map(|(k, x)| (k.clone(), to_value(heap, x)))
                .collect::<Vec<_>>(),
        )),
        J::Array(a) => heap.alloc(AllocList(
            a.iter().map(|x| to_value(heap, x)).collect::<Vec<_>>(),
        )),
        other => heap.alloc(other.clone()),
    }
}

fn read<T>(f: &str, path: &str, r: Result<T, bureau_formats::FormatError>) -> starlark::Result<T> {
    r.or_else(|e| fail(format!("{f}(\"{path}\"): {e}")))
}

#[starlark_module]
pub(crate) fn document_functions(builder: &mut GlobalsBuilder) {
    /// A Word document of the workspace: paragraphs (style, heading level, text, list level),
    /// headings, tables (rows of cell strings) and the text an agent sees.
    fn docx<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let b = bytes("docx", path, eval)?;
        let d = read("docx", path, office::read_docx(path, &b))?;
        let v = json!({
            "paragraphs": d.paragraphs,
            "headings": d.headings().iter().map(|(l, t)| json!({"level": l, "text": t})).collect::<Vec<_>>(),
            "tables": d.tables,
            "text": d.to_text(),
        });
        Ok(to_value(eval.heap(), &v))
    }

    /// A PowerPoint presentation of the workspace: slides (number, title, text, notes).
    fn pptx<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let b = bytes("pptx", path, eval)?;
        let p = read("pptx", path, office::read_pptx(path, &b))?;
        let v = json!({"slides": p.slides, "text": p.to_text()});
        Ok(to_value(eval.heap(), &v))
    }

    /// A PDF of the workspace: the text of each page.
    fn pdf<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let b = bytes("pdf", path, eval)?;
        let p = read("pdf", path, office::read_pdf(path, &b))?;
        let v = json!({"pages": p.pages, "text": p.to_text()});
        Ok(to_value(eval.heap(), &v))
    }

    /// The text an agent sees for a workspace file: office files rendered with their structure,
    /// text files as they are.
    fn read_text<'v>(
        #[starlark(require = pos)] path: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let b = bytes("read_text", path, eval)?;
        let text = match std::str::from_utf8(&b) {
            Ok(t) if !b.contains(&0) && office::Format::detect(path, &b) != office::Format::Pdf => {
                t.to_string()
            }
            _ => read("read_text", path, office::to_text(path, &b))?,
        };
        Ok(eval.heap().alloc(text))
    }
}
