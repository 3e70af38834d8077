//! Files attached to knowledge-base pages: shown as files_read shows a file
//! (`kb_read_attachment`), attached from the workspace (`kb_attach`), saved into it
//! (`kb_save_attachment`).

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::{Tool, ToolResult, parse, schema, string};
use crate::World;
use crate::attachments::{StoredFile, read_file};
use crate::kb::KbAttachment;

pub(super) const READ_ATTACHMENT: Tool = Tool {
    name: "kb_read_attachment",
    description: "Read a file attached to a page, as files_read reads a file: text, office files as structured text, images as images, audio as audio, video as key frames, scanned PDF pages as images.",
    schema: || {
        schema(
            &[
                ("page", string("Page id (or its URL) or unique title")),
                (
                    "filename",
                    string("The attachment's name, as kb_read_page lists it"),
                ),
            ],
            &["page", "filename"],
        )
    },
    run: read_attachment,
};
pub(super) const ATTACH: Tool = Tool {
    name: "kb_attach",
    description: "Attach a workspace file to a page (a copy, as it is now; at most 16 MiB, 50 attachments a page). An attachment of the same name is replaced by the new version.",
    schema: || {
        schema(
            &[
                ("page", string("Page id (or its URL) or unique title")),
                ("path", string("Workspace path of the file to attach")),
                (
                    "filename",
                    string("Name to attach it under (default: the file's name)"),
                ),
            ],
            &["page", "path"],
        )
    },
    run: attach,
};
pub(super) const SAVE_ATTACHMENT: Tool = Tool {
    name: "kb_save_attachment",
    description: "Save a file attached to a page into the workspace.",
    schema: || {
        schema(
            &[
                ("page", string("Page id (or its URL) or unique title")),
                (
                    "filename",
                    string("The attachment's name, as kb_read_page lists it"),
                ),
                ("path", string("Workspace path to write")),
            ],
            &["page", "filename", "path"],
        )
    },
    run: save_attachment,
};

/// Attachment `filename` of `page`: the page's id, the file and its bytes.
fn page_file(
    w: &World,
    page: &str,
    filename: &str,
) -> Result<(String, StoredFile, Vec<u8>), String> {
    let p = w.kb.find_page(page)?;
    let f = p.attachment(filename)?.file.clone();
    let bytes = w.stored_bytes(&f)?;
    Ok((p.id.clone(), f, bytes))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    page: String,
    filename: String,
}

fn read_attachment(w: &mut World, _a: &Actor, args: &Value) -> ToolResult {
    let a: ReadArgs = parse("kb_read_attachment", args)?;
    let (id, f, bytes) = page_file(w, &a.page, &a.filename)?;
    let format = bureau_formats::office::Format::detect(&f.name, &bytes);
    let mut v = super::super::files::show(w, &f.name, &bytes, format)?;
    if let Value::Object(o) = &mut v {
        o.remove("path");
        o.insert("page".into(), json!(id));
        o.insert("filename".into(), json!(f.name));
        o.insert("mime_type".into(), json!(f.mime_type));
    }
    Ok(v)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachArgs {
    page: String,
    path: String,
    filename: Option<String>,
}

fn attach(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: AttachArgs = parse("kb_attach", args)?;
    let me = w.acting_email(actor)?;
    let id = w.kb.find_page(&a.page)?.id.clone();
    let full = w.files.resolve(&a.path)?;
    if full.is_dir() {
        return Err(format!(
            "`{}` is a directory; attach the files in it one by one",
            a.path
        ));
    }
    if !full.exists() {
        return Err(format!(
            "no file `{}` in the workspace; files_list shows what there is",
            a.path
        ));
    }
    let name = match &a.filename {
        Some(n) => n.clone(),
        None => a
            .path
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(&a.path)
            .to_string(),
    };
    crate::attachments::check_name(&name).map_err(|e| format!("`filename`: {e}"))?;
    let bytes = read_file(&full, &a.path)?;
    let file = w.store_file(&name, &bytes)?;
    let at = super::now(w);
    let Some(page) = w.kb.pages.get_mut(&id) else {
        return Err(format!("no page `{id}`"));
    };
    let replaced = page.attach(KbAttachment {
        file: file.clone(),
        added_by: me.clone(),
        added_at: at.clone(),
    })?;
    page.updated_by = me.clone();
    page.updated_at = at;
    let mut payload = json!({"page": id, "path": a.path, "attachment": file.checked(),
        "by": me});
    if let Some(old) = &replaced {
        payload["replaced"] = old.file.checked();
    }
    w.record(actor.clone(), "kb", "attach", false, payload);
    let mut v = json!({"page": id, "attachment": file.listed()});
    v["replaced"] = json!(replaced.is_some());
    Ok(v)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveArgs {
    page: String,
    filename: String,
    path: String,
}

fn save_attachment(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SaveArgs = parse("kb_save_attachment", args)?;
    let (id, f, bytes) = page_file(w, &a.page, &a.filename)?;
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "files",
        if created { "create" } else { "write" },
        false,
        json!({"path": a.path, "size": bytes.len(), "from_kb": id, "filename": f.name}),
    );
    Ok(json!({"path": a.path, "size": bytes.len()}))
}
