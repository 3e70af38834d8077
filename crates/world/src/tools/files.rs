//! files_* tools.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolResult, boolean, integer, parse, schema, string};
use crate::World;
use crate::files::{WalkedFile, is_binary};
use bureau_core::log::Actor;

pub(super) const LIST: Tool = Tool {
    name: "files_list",
    description: "List files and folders of the workspace (recursive by default), with sizes in bytes.",
    schema: || {
        schema(
            &[
                (
                    "path",
                    string(
                        "Folder to list, relative to the workspace; empty for the whole workspace",
                    ),
                ),
                ("recursive", boolean("List sub-folders too (default true)")),
            ],
            &[],
        )
    },
    run: list,
};
pub(super) const READ: Tool = Tool {
    name: "files_read",
    description: "Read a file of the workspace. Text files come back as they are; office files (.docx, .pptx, .pdf, .xlsx, .eml, ...) as text with their structure (headings, lists, tables, slides, pages) and a `format` field. Images come back as images, sounds as audio, a video as key frames, and the pages of a scanned PDF (pages with no text) as images, each with a short description (size, duration) and notes of anything cut to fit. With blocks=true a .docx is shown as numbered blocks (`[3] ...`), the indices files_edit_docx takes.",
    schema: || {
        schema(
            &[
                ("path", string("File path relative to the workspace")),
                (
                    "blocks",
                    boolean(
                        "For a .docx: number its top-level paragraphs and tables, empty paragraphs included (default false)",
                    ),
                ),
            ],
            &["path"],
        )
    },
    run: read,
};
pub(super) const OCR: Tool = Tool {
    name: "files_ocr",
    description: "Read the text in a picture or a scanned PDF of the workspace with OCR (tesseract). Offered only in offices with the `ocr` app.",
    schema: || {
        schema(
            &[
                (
                    "path",
                    string("Image or PDF path relative to the workspace"),
                ),
                (
                    "lang",
                    string("Tesseract language(s), e.g. eng, deu, eng+fra (default eng)"),
                ),
            ],
            &["path"],
        )
    },
    run: ocr,
};
pub(super) const WRITE: Tool = Tool {
    name: "files_write",
    description: "Create or overwrite a text file in the workspace (folders are created as needed).",
    schema: || {
        schema(
            &[
                ("path", string("File path relative to the workspace")),
                ("content", string("The full new text of the file")),
            ],
            &["path", "content"],
        )
    },
    run: write,
};
pub(super) const EDIT: Tool = Tool {
    name: "files_edit",
    description: "Replace an exact string in a text file. `old` must occur exactly once unless replace_all is true.",
    schema: || {
        schema(
            &[
                ("path", string("File path relative to the workspace")),
                ("old", string("Exact text to replace")),
                ("new", string("Replacement text")),
                (
                    "replace_all",
                    boolean("Replace every occurrence (default false)"),
                ),
            ],
            &["path", "old", "new"],
        )
    },
    run: edit,
};
pub(super) const MOVE: Tool = Tool {
    name: "files_move",
    description: "Move or rename a file or folder inside the workspace.",
    schema: || {
        schema(
            &[
                ("from", string("Current path")),
                ("to", string("New path")),
                (
                    "overwrite",
                    boolean("Replace an existing file at `to` (default false)"),
                ),
            ],
            &["from", "to"],
        )
    },
    run: move_,
};
pub(super) const DELETE: Tool = Tool {
    name: "files_delete",
    description: "Delete a file, or a folder with recursive=true.",
    schema: || {
        schema(
            &[
                ("path", string("Path relative to the workspace")),
                (
                    "recursive",
                    boolean("Delete a folder and everything in it (default false)"),
                ),
            ],
            &["path"],
        )
    },
    run: delete,
};
pub(super) const SEARCH: Tool = Tool {
    name: "files_search",
    description: "Search the text files of the workspace for a substring (or a regular expression with regex=true). Returns matching lines.",
    schema: || {
        schema(
            &[
                ("query", string("Text or regular expression to find")),
                (
                    "regex",
                    boolean("Treat query as a regular expression (default false)"),
                ),
                (
                    "path",
                    string("Folder or file to search in (default: whole workspace)"),
                ),
                ("case_sensitive", boolean("Default false")),
                ("max_results", integer("Default 100")),
            ],
            &["query"],
        )
    },
    run: search,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    path: String,
    #[serde(default = "yes")]
    recursive: bool,
}
fn yes() -> bool {
    true
}

fn list(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ListArgs = parse("files_list", args)?;
    let entries = w.files.list(&a.path, a.recursive)?;
    Ok(json!({"entries": entries}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    blocks: bool,
}

fn read(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ReadArgs = parse("files_read", args)?;
    let bytes = w.files.read_bytes(&a.path)?;
    use bureau_formats::office::{Format, blocks_to_text, docx_blocks};
    let format = Format::detect(&a.path, &bytes);
    if a.blocks {
        if format != Format::Docx {
            return Err(format!(
                "blocks=true numbers the blocks of a Word document, and `{}` is read as {}; read it without blocks",
                a.path,
                format.name()
            ));
        }
        let blocks = docx_blocks(&a.path, &bytes).map_err(|e| e.to_string())?;
        return Ok(json!({
            "path": a.path,
            "size": bytes.len(),
            "format": format.name(),
            "blocks": blocks.len(),
            "text": blocks_to_text(&blocks),
        }));
    }
    show(w, &a.path, &bytes, format)
}

/// What an agent is shown of the file `path` with contents `bytes` (a workspace file, a mail
/// attachment): text as it is, office files as structured text, media as media.
pub(super) fn show(
    w: &mut World,
    path: &str,
    bytes: &[u8],
    format: bureau_formats::office::Format,
) -> ToolResult {
    use bureau_formats::office::{Format, render};
    // A PDF: its text, and the images of its pages that have no text layer (a scan).
    if format == Format::Pdf {
        let pdf = bureau_formats::office::read_pdf(path, bytes).map_err(|e| e.to_string())?;
        let mut v =
            json!({"path": path, "size": bytes.len(), "format": "pdf", "text": pdf.to_text()});
        if let Some(p) =
            bureau_media::present(path, bytes, Some(&pdf.pages)).map_err(|e| e.to_string())?
        {
            if let Value::Object(o) = &mut v {
                for (k, x) in p.value(path, bytes.len()).as_object().into_iter().flatten() {
                    o.entry(k.clone()).or_insert_with(|| x.clone());
                }
            }
            w.attach_media(p.media);
        }
        return Ok(v);
    }
    // Pictures, sounds and videos come back as media beside a description.
    if let Some(p) = bureau_media::present(path, bytes, None).map_err(|e| e.to_string())? {
        let v = p.value(path, bytes.len());
        w.attach_media(p.media);
        return Ok(v);
    }
    // Spreadsheets (.csv and .tsv too) and binary office files (.docx, .pptx, .xlsx, ...)
    // come back as text with their structure: sheet names, cell coordinates, formulas.
    if format == Format::Sheet || is_binary(bytes) {
        if format == Format::Text {
            return Ok(json!({"path": path, "size": bytes.len(), "binary": true, "text": null}));
        }
        let r = render(path, bytes).map_err(|e| e.to_string())?;
        return Ok(
            json!({"path": path, "size": bytes.len(), "format": r.format.name(), "text": r.text}),
        );
    }
    let text = String::from_utf8_lossy(bytes).into_owned();
    Ok(json!({"path": path, "size": bytes.len(), "text": text}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OcrArgs {
    path: String,
    #[serde(default)]
    lang: Option<String>,
}

fn ocr(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: OcrArgs = parse("files_ocr", args)?;
    let bytes = w.files.read_bytes(&a.path)?;
    let lang = a.lang.as_deref().unwrap_or("eng");
    let text = bureau_media::ocr::ocr(&a.path, &bytes, lang).map_err(|e| e.to_string())?;
    Ok(json!({"path": a.path, "lang": lang, "text": text}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

fn write(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: WriteArgs = parse("files_write", args)?;
    if a.path.trim().is_empty() {
        return Err("`path` is empty; give a file path relative to the workspace".into());
    }
    let created = w.files.write(&a.path, a.content.as_bytes())?;
    let size = a.content.len();
    w.record(
        actor.clone(),
        "files",
        if created { "create" } else { "write" },
        false,
        json!({"path": a.path, "size": size}),
    );
    Ok(json!({"path": a.path, "size": size, "created": created}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old: String,
    new: String,
    #[serde(default)]
    replace_all: bool,
}

fn edit(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: EditArgs = parse("files_edit", args)?;
    if a.old.is_empty() {
        return Err("`old` is empty; give the exact text to replace".into());
    }
    let text = w.files.read_text(&a.path)?;
    let n = text.matches(&a.old).count();
    if n == 0 {
        return Err(format!(
            "`old` does not occur in `{}`; read the file and copy the exact text",
            a.path
        ));
    }
    if n > 1 && !a.replace_all {
        return Err(format!(
            "`old` occurs {n} times in `{}`; give more context to make it unique, or pass replace_all=true",
            a.path
        ));
    }
    let new_text = if a.replace_all {
        text.replace(&a.old, &a.new)
    } else {
        text.replacen(&a.old, &a.new, 1)
    };
    w.files.write(&a.path, new_text.as_bytes())?;
    let replacements = if a.replace_all { n } else { 1 };
    w.record(
        actor.clone(),
        "files",
        "edit",
        false,
        json!({"path": a.path, "replacements": replacements}),
    );
    Ok(json!({"path": a.path, "replacements": replacements}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveArgs {
    from: String,
    to: String,
    #[serde(default)]
    overwrite: bool,
}

fn move_(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: MoveArgs = parse("files_move", args)?;
    w.files.rename(&a.from, &a.to, a.overwrite)?;
    w.record(
        actor.clone(),
        "files",
        "move",
        false,
        json!({"from": a.from, "to": a.to}),
    );
    Ok(json!({"from": a.from, "to": a.to}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    path: String,
    #[serde(default)]
    recursive: bool,
}

fn delete(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: DeleteArgs = parse("files_delete", args)?;
    if a.path.trim().is_empty() || a.path.trim() == "." {
        return Err("the workspace itself cannot be deleted; name a file or folder".into());
    }
    w.files.delete(&a.path, a.recursive)?;
    w.record(
        actor.clone(),
        "files",
        "delete",
        false,
        json!({"path": a.path}),
    );
    Ok(json!({"path": a.path}))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    regex: bool,
    #[serde(default)]
    path: String,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default = "hundred")]
    max_results: usize,
}
fn hundred() -> usize {
    100
}

fn search(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: SearchArgs = parse("files_search", args)?;
    if a.query.is_empty() {
        return Err("`query` is empty".into());
    }
    let pattern = if a.regex {
        a.query.clone()
    } else {
        regex::escape(&a.query)
    };
    let re = regex::RegexBuilder::new(&pattern)
        .case_insensitive(!a.case_sensitive)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("`query` is not a valid regular expression: {e}"))?;
    let files: Vec<WalkedFile> = if !a.path.is_empty() && !w.files.is_dir(&a.path) {
        if !w.files.exists(&a.path) {
            return Err(format!("no file or folder `{}` in the workspace", a.path));
        }
        vec![WalkedFile::named(&a.path)]
    } else {
        // One walk, no stat or path resolution per file (see `Files::walk_files`).
        w.files.walk_files(&a.path)?
    };
    let max = a.max_results.clamp(1, 1000);
    let mut matches = Vec::new();
    let mut truncated = false;
    'outer: for file in files {
        let Ok(bytes) = w.files.read_walked(&file) else {
            continue;
        };
        let path = file.path;
        if is_binary(&bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                if matches.len() >= max {
                    truncated = true;
                    break 'outer;
                }
                let shown: String = line.chars().take(300).collect();
                matches.push(json!({"path": path, "line": i + 1, "text": shown}));
            }
        }
    }
    Ok(json!({"matches": matches, "truncated": truncated}))
}
