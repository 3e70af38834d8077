//! files_* tools for office documents: write a .docx from blocks, edit a .docx in place, set
//! cells of a workspace .xlsx, and convert (document or spreadsheet → .pdf, .pdf → .docx,
//! image → .pdf). The sheets service has its own tools for its spreadsheets.

use bureau_core::log::Actor;
use bureau_formats::office::{self, DocxOp, Format, WriteBlock};
use bureau_formats::sheet::{self, CellEdit, CellRef, Workbook};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, parse, schema, string};
use crate::World;

pub(super) const TOOLS: &[Tool] = &[
    WRITE_DOCX,
    EDIT_DOCX,
    SET_CELLS,
    EXPORT_PDF,
    PDF_TO_DOCX,
    IMAGE_TO_PDF,
];

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

fn text_field() -> Value {
    json!({"type": "string", "description": "The text; \\n makes a line break, \\t a tab"})
}

fn style_field() -> Value {
    json!({"type": "string", "description": "Paragraph style by name: \"Heading 1\"…\"Heading 9\", \"Title\", \"List Bullet\", \"List Number\", \"Normal\", or any style the document defines (default: the document's default style)"})
}

fn index_field(desc: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": desc})
}

const EDIT_DOCX: Tool = Tool {
    name: "files_edit_docx",
    description: "Edit a Word document (.docx) of the workspace in place: add, insert, replace or delete paragraphs, set table cells, append table rows. Blocks (top-level paragraphs and tables) are addressed by the index files_read shows with blocks=true; indices refer to the document before this call. Everything else in the file (styles, headers, images, formatting of untouched text) is kept. The operations apply in order, all or none.",
    schema: || {
        let block = |d: &str| index_field(d);
        schema(
            &[
                (
                    "path",
                    string("Path of the .docx file, relative to the workspace"),
                ),
                (
                    "operations",
                    json!({
                        "type": "array",
                        "minItems": 1,
                        "description": "Edits, applied in order",
                        "items": {
                            "oneOf": [
                                {"type": "object", "description": "Add a paragraph at the end", "properties": {
                                    "op": {"const": "append"}, "text": text_field(), "style": style_field()},
                                 "required": ["op", "text"], "additionalProperties": false},
                                {"type": "object", "description": "Add a paragraph before or after a block (give one of before/after)", "properties": {
                                    "op": {"const": "insert"},
                                    "before": block("Insert before this block"),
                                    "after": block("Insert after this block"),
                                    "text": text_field(), "style": style_field()},
                                 "required": ["op", "text"], "additionalProperties": false},
                                {"type": "object", "description": "Replace a paragraph's text, keeping its formatting (and its style unless `style` is given)", "properties": {
                                    "op": {"const": "replace"}, "block": block("The paragraph's block index"),
                                    "text": text_field(), "style": style_field()},
                                 "required": ["op", "block", "text"], "additionalProperties": false},
                                {"type": "object", "description": "Delete a paragraph or a whole table", "properties": {
                                    "op": {"const": "delete"}, "block": block("The block index")},
                                 "required": ["op", "block"], "additionalProperties": false},
                                {"type": "object", "description": "Set the text of one table cell", "properties": {
                                    "op": {"const": "set_cell"}, "block": block("The table's block index"),
                                    "row": index_field("0-based row (the header row is 0)"),
                                    "col": index_field("0-based column"),
                                    "text": text_field()},
                                 "required": ["op", "block", "row", "col", "text"], "additionalProperties": false},
                                {"type": "object", "description": "Append a row to a table, formatted like its last row", "properties": {
                                    "op": {"const": "append_row"}, "block": block("The table's block index"),
                                    "cells": {"type": "array", "items": {"type": "string"}, "description": "Cell texts from the left; missing cells stay empty"}},
                                 "required": ["op", "block", "cells"], "additionalProperties": false}
                            ]
                        }
                    }),
                ),
            ],
            &["path", "operations"],
        )
    },
    run: edit_docx,
};

const SET_CELLS: Tool = Tool {
    name: "files_set_cells",
    description: "Set or clear cells of a workspace Excel file (.xlsx), by A1 reference, on a named sheet or the first one; the file is created (with that sheet) when it does not exist. Values: numbers, booleans, strings typed as a spreadsheet types them (`1250` → number, `2026-03-01` → date, start with `'` to keep text), strings starting with `=` are formulas (computed), null clears the cell. An existing file is edited in place (cell styles, widths, merged cells, charts and every other part kept); when that cannot be done (text with control characters, overwriting a shared formula's master cell) it is rewritten with every sheet's values and formulas, and the result lists what was not kept.",
    schema: || {
        schema(
            &[
                (
                    "path",
                    string("Path of the .xlsx file, relative to the workspace"),
                ),
                (
                    "sheet",
                    string("Sheet (tab) name; default the first sheet (\"Sheet1\" in a new file)"),
                ),
                (
                    "cells",
                    json!({
                        "type": "object",
                        "description": "A1 reference → value, e.g. {\"B2\": 1250, \"C2\": \"=B2*2\", \"D2\": null}",
                        "additionalProperties": {"type": ["string", "number", "boolean", "null"]}
                    }),
                ),
            ],
            &["path", "cells"],
        )
    },
    run: set_cells,
};

const PDF_TO_DOCX: Tool = Tool {
    name: "files_pdf_to_docx",
    description: "Convert a workspace PDF's text to a Word document (.docx): one paragraph per line of text, pages in order (layout, images and fonts are not kept; a scan without a text layer gives an empty document).",
    schema: || {
        schema(
            &[
                (
                    "source",
                    string("The .pdf to convert, relative to the workspace"),
                ),
                ("path", string("Path of the .docx to create or overwrite")),
            ],
            &["source", "path"],
        )
    },
    run: pdf_to_docx,
};

const IMAGE_TO_PDF: Tool = Tool {
    name: "files_image_to_pdf",
    description: "Convert a workspace image (PNG or JPEG) to a one-page PDF showing the image (page size: the image's pixels at 72 dpi).",
    schema: || {
        schema(
            &[
                (
                    "source",
                    string("The .png or .jpg image, relative to the workspace"),
                ),
                ("path", string("Path of the .pdf to create or overwrite")),
            ],
            &["source", "path"],
        )
    },
    run: image_to_pdf,
};

const EXPORT_PDF: Tool = Tool {
    name: "files_export_pdf",
    description: "Export a workspace document (.md, .txt, .docx, .html, .xlsx, .csv, ...) to a PDF file (A4, headings, bullets and tables kept as text layout; a spreadsheet prints each sheet as a table of its shown values).",
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
    let text = if Format::detect(&a.source, &src) == Format::Sheet {
        let name = sheet_file_name(&a.source);
        sheet::read_file(&name, &src)
            .map_err(|e| e.to_string())?
            .to_layout_text()
    } else {
        office::to_text(&a.source, &src).map_err(|e| e.to_string())?
    };
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

/// The name a spreadsheet is read under: its own when the extension says what it is, else
/// with `.xlsx` added (an Excel file detected by its contents).
fn sheet_file_name(path: &str) -> String {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if matches!(ext.as_str(), "xlsx" | "xlsm" | "csv" | "tsv") {
        path.to_string()
    } else {
        format!("{path}.xlsx")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditDocxArgs {
    path: String,
    operations: Vec<DocxOp>,
}

fn edit_docx(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: EditDocxArgs = parse("files_edit_docx", args)?;
    check_ext(&a.path, ".docx")?;
    let src = w.files.read_bytes(&a.path)?;
    let bytes = office::edit_docx(&a.path, &src, &a.operations).map_err(|e| e.to_string())?;
    w.files.write(&a.path, &bytes)?;
    let ops: Vec<String> = a.operations.iter().map(DocxOp::summary).collect();
    w.record(
        actor.clone(),
        "files",
        "edit_docx",
        false,
        json!({"path": a.path, "size": bytes.len(), "operations": ops}),
    );
    Ok(json!({"path": a.path, "size": bytes.len(), "operations": ops.len()}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetCellsArgs {
    path: String,
    #[serde(default)]
    sheet: Option<String>,
    cells: serde_json::Map<String, Value>,
}

fn set_cells(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SetCellsArgs = parse("files_set_cells", args)?;
    check_ext(&a.path, ".xlsx")?;
    if a.cells.is_empty() {
        return Err("`cells` is empty; give at least one, e.g. {\"B2\": 1250}".into());
    }
    if a.cells.len() > super::sheets::MAX_WRITE_CELLS {
        return Err(format!(
            "{} cells in one call; set at most {} at a time",
            a.cells.len(),
            super::sheets::MAX_WRITE_CELLS
        ));
    }
    // Every cell is checked before anything changes.
    let mut updates = Vec::with_capacity(a.cells.len());
    for (key, v) in &a.cells {
        let at = CellRef::parse(key.trim()).ok_or_else(|| {
            format!("`{}`: `{key}` is not a cell reference; write cells as A1 references such as \"B7\"", a.path)
        })?;
        updates.push((
            at,
            super::sheets::input_cell(v, at).map_err(|e| format!("`{}`: {e}", a.path))?,
        ));
    }
    let exists = w.files.exists(&a.path);
    let src = if exists {
        Some(w.files.read_bytes(&a.path)?)
    } else {
        None
    };
    let mut wb = if let Some(src) = &src {
        sheet::read_file(&a.path, src).map_err(|e| e.to_string())?
    } else {
        let name = a.sheet.clone().unwrap_or_else(|| "Sheet1".to_string());
        if let Some(p) = sheet::sheet_name_problem(&name) {
            return Err(format!("`sheet`: {p}"));
        }
        let mut wb = Workbook::default();
        wb.add_sheet(&name)?;
        wb
    };
    let si = match a.sheet.as_deref() {
        None | Some("") => 0,
        Some(name) => wb.sheet_index(name).ok_or_else(|| {
            let names: Vec<&str> = wb.sheets.iter().map(|s| s.name.as_str()).collect();
            format!(
                "`{}` has no sheet {name:?}; its sheets are: {}",
                a.path,
                names.join(", ")
            )
        })?,
    };
    let Some(target) = wb.sheets.get_mut(si) else {
        return Err(format!("`{}` has no sheets", a.path));
    };
    let mut changes = Vec::new();
    for (at, cell) in &updates {
        let before = target.get(*at).cloned().unwrap_or_default();
        target.set(*at, cell.clone());
        changes.push((*at, before));
    }
    if wb.cell_count() > sheet::MAX_CELLS {
        return Err(format!(
            "`{}` would hold more than {} cells, more than can be read back; split it",
            a.path,
            sheet::MAX_CELLS
        ));
    }
    let original = wb.clone();
    wb.recalculate();
    let sheet_name = wb.sheets[si].name.clone();
    // An existing file is edited in place (styles and everything else kept) when it can be;
    // otherwise, and for a new file, the workbook is written anew.
    let mut not_kept = Vec::new();
    let mut in_place = None;
    if let Some(src) = &src {
        let mut edits: Vec<(String, CellRef, CellEdit)> = updates
            .iter()
            .map(|(at, _)| {
                let cell = wb.sheets[si].get(*at).cloned().unwrap_or_default();
                (sheet_name.clone(), *at, CellEdit::Set(cell))
            })
            .collect();
        let updated: std::collections::BTreeSet<CellRef> =
            updates.iter().map(|(at, _)| *at).collect();
        for (i, s) in wb.sheets.iter().enumerate() {
            for (at, cell) in s.cells.iter().filter(|(_, c)| c.formula.is_some()) {
                let was = original.sheets.get(i).map(|o| o.value(*at));
                let set_here = i == si && updated.contains(at);
                if !set_here && was.as_ref() != Some(&cell.value) {
                    edits.push((s.name.clone(), *at, CellEdit::Recache(cell.value.clone())));
                }
            }
        }
        in_place = sheet::edit_xlsx(&a.path, src, &edits).map_err(|e| e.to_string())?;
        if in_place.is_none() {
            not_kept = sheet::xlsx_extras(&a.path, src).map_err(|e| e.to_string())?;
        }
    }
    let edited_in_place = in_place.is_some();
    let bytes = match in_place {
        Some(b) => b,
        None => sheet::write_xlsx(&wb).map_err(|e| e.to_string())?,
    };
    w.files.write(&a.path, &bytes)?;
    let cells: Vec<Value> = updates
        .iter()
        .map(|(at, _)| {
            super::sheets::cell_json(*at, &wb.sheets[si].get(*at).cloned().unwrap_or_default())
        })
        .collect();
    let logged: Vec<Value> = changes
        .iter()
        .take(200)
        .map(|(at, old)| {
            let new = wb.sheets[si].get(*at).cloned().unwrap_or_default();
            json!({"cell": at.to_string(), "before": old.to_json(), "after": new.to_json()})
        })
        .collect();
    w.record(
        actor.clone(),
        "files",
        "set_cells",
        false,
        json!({"path": a.path, "sheet": sheet_name, "size": bytes.len(), "cells": updates.len(), "changes": logged, "created": !exists, "in_place": edited_in_place, "not_kept": not_kept}),
    );
    let mut result = json!({"path": a.path, "sheet": sheet_name, "cells": cells, "created": !exists, "in_place": edited_in_place});
    if !not_kept.is_empty()
        && let Some(o) = result.as_object_mut()
    {
        o.insert(
            "note".into(),
            format!(
                "values and formulas of every sheet were kept; this file also had {}, which were not kept",
                not_kept.join(", ")
            )
            .into(),
        );
        o.insert("not_kept".into(), not_kept.into());
    }
    Ok(result)
}

fn pdf_to_docx(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ExportArgs = parse("files_pdf_to_docx", args)?;
    check_ext(&a.path, ".docx")?;
    let src = w.files.read_bytes(&a.source)?;
    let pdf = office::read_pdf(&a.source, &src).map_err(|e| e.to_string())?;
    let blocks = pdf.to_blocks();
    let bytes = office::write_docx(&a.path, &blocks).map_err(|e| e.to_string())?;
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "files",
        "pdf_to_docx",
        false,
        json!({"source": a.source, "path": a.path, "size": bytes.len(), "pages": pdf.pages.len(), "paragraphs": blocks.len(), "created": created}),
    );
    Ok(
        json!({"path": a.path, "size": bytes.len(), "pages": pdf.pages.len(), "paragraphs": blocks.len(), "created": created}),
    )
}

fn image_to_pdf(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ExportArgs = parse("files_image_to_pdf", args)?;
    check_ext(&a.path, ".pdf")?;
    let src = w.files.read_bytes(&a.source)?;
    let bytes = office::image_to_pdf(&a.source, &src).map_err(|e| e.to_string())?;
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "files",
        "image_to_pdf",
        false,
        json!({"source": a.source, "path": a.path, "size": bytes.len(), "created": created}),
    );
    Ok(json!({"path": a.path, "size": bytes.len(), "pages": 1, "created": created}))
}
