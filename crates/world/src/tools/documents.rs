//! files_* tools for office documents: write a .docx from blocks, export a document to .pdf.
//! (.xlsx/.csv writing lives with the sheets tools.)

use bureau_core::log::Actor;
use bureau_formats::office::{self, WriteBlock};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, parse, schema, string};
use crate::World;

pub(super) const TOOLS: &[Tool] = &[WRITE_DOCX, EXPORT_PDF];

const WRITE_DOCX: Tool = Tool {
    name: "files_write_docx",
    description: "Create or overwrite a Word document (.docx) in the workspace from blocks: headings, paragraphs, bullet lists and tables. Read it back with files_read.",
    schema: || {
        schema(
            &[
                (
                    "path",
                    string("Path of the .docx file, relative to the workspace"),
                ),
                (
                    "blocks",
                    json!({
                        "type": "array",
                        "description": "The document body in order",
                        "items": {
                            "oneOf": [
                                {"type": "object", "properties": {
                                    "type": {"const": "heading"},
                                    "level": {"type": "integer", "minimum": 1, "maximum": 6},
                                    "text": {"type": "string"}},
                                 "required": ["type", "level", "text"], "additionalProperties": false},
                                {"type": "object", "properties": {
                                    "type": {"const": "paragraph"},
                                    "text": {"type": "string", "description": "\\n makes a line break"}},
                                 "required": ["type", "text"], "additionalProperties": false},
                                {"type": "object", "properties": {
                                    "type": {"const": "bullets"},
                                    "items": {"type": "array", "items": {"type": "string"}}},
                                 "required": ["type", "items"], "additionalProperties": false},
                                {"type": "object", "properties": {
                                    "type": {"const": "table"},
                                    "rows": {"type": "array", "description": "Rows of cells; the first row is the header",
                                             "items": {"type": "array", "items": {"type": "string"}}}},
                                 "required": ["type", "rows"], "additionalProperties": false}
                            ]
                        }
                    }),
                ),
            ],
            &["path", "blocks"],
        )
    },
    run: write_docx,
};

const EXPORT_PDF: Tool = Tool {
    name: "files_export_pdf",
    description: "Export a workspace document (.md, .txt, .docx, .html, ...) to a PDF file (A4, headings, bullets and tables kept as text layout).",
    schema: || {
        schema(
            &[
                (
                    "source",
                    string("The document to export, relative to the workspace"),
                ),
                ("path", string("Path of the .pdf to create or overwrite")),
            ],
            &["source", "path"],
        )
    },
    run: export_pdf,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteDocxArgs {
    path: String,
    blocks: Vec<WriteBlock>,
}

fn check_ext(path: &str, ext: &str) -> Result<(), String> {
    if path.trim().is_empty() {
        return Err("`path` is empty; give a file path relative to the workspace".into());
    }
    if !path.to_ascii_lowercase().ends_with(ext) {
        return Err(format!("`path` must end with {ext} (got `{path}`)"));
    }
    Ok(())
}

fn write_docx(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: WriteDocxArgs = parse("files_write_docx", args)?;
    check_ext(&a.path, ".docx")?;
    let bytes = office::write_docx(&a.path, &a.blocks).map_err(|e| e.to_string())?;
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "files",
        "write_docx",
        false,
        json!({"path": a.path, "size": bytes.len(), "blocks": a.blocks.len(), "created": created}),
    );
    Ok(json!({"path": a.path, "size": bytes.len(), "created": created}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportArgs {
    source: String,
    path: String,
}

fn export_pdf(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ExportArgs = parse("files_export_pdf", args)?;
    check_ext(&a.path, ".pdf")?;
    let src = w.files.read_bytes(&a.source)?;
    let text = office::to_text(&a.source, &src).map_err(|e| e.to_string())?;
    let title = a
        .source
        .rsplit('/')
        .next()
        .and_then(|n| n.rsplit_once('.').map(|(stem, _)| stem).or(Some(n)))
        .unwrap_or("document");
    let bytes = office::write_pdf(title, &text);
    let pages = office::read_pdf(&a.path, &bytes)
        .map(|p| p.pages.len())
        .unwrap_or(0);
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "files",
        "export_pdf",
        false,
        json!({"source": a.source, "path": a.path, "size": bytes.len(), "pages": pages, "created": created}),
    );
    Ok(json!({"path": a.path, "size": bytes.len(), "pages": pages, "created": created}))
}
