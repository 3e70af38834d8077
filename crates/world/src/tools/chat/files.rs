//! The files messages carry: posted with `chat_post` (a copy of workspace files, or for a
//! colleague of the task's `world/chat/files/`), shown as files_read shows a file
//! (`chat_read_file`: pictures as images, sounds as audio, ...), saved into the workspace
//! (`chat_save_file`).

use bureau_core::log::Actor;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::{Tool, ToolResult, parse, schema, string};
use crate::World;
use crate::attachments::{StoredFile, read_file};
use crate::chat::{ChatMessage, MAX_FILES_PER_MESSAGE, check_message_files, library_files};

pub(super) const READ_FILE: Tool = Tool {
    name: "chat_read_file",
    description: "Read a file posted with a chat message, as files_read reads a file: text, office files as structured text, images as images, audio as audio, video as key frames, scanned PDF pages as images.",
    schema: || {
        schema(
            &[
                ("id", string("Message id (or its URL)")),
                (
                    "filename",
                    string("The file's name, as the message lists it"),
                ),
            ],
            &["id", "filename"],
        )
    },
    run: read_file_tool,
};
pub(super) const SAVE_FILE: Tool = Tool {
    name: "chat_save_file",
    description: "Save a file posted with a chat message into the workspace.",
    schema: || {
        schema(
            &[
                ("id", string("Message id (or its URL)")),
                (
                    "filename",
                    string("The file's name, as the message lists it"),
                ),
                ("path", string("Workspace path to write")),
            ],
            &["id", "filename", "path"],
        )
    },
    run: save_file,
};

/// The files a `chat_post` carries: workspace paths for the agent (a copy of each, as it is
/// now); for a colleague (an `act` event), files of the task's `world/chat/files/` — a
/// colleague posts from their own machine, not from the user's workspace. Bounded as
/// [`check_message_files`] says; nothing is posted when one is wrong.
pub(super) fn files_to_post(
    w: &World,
    actor: &Actor,
    paths: &[String],
) -> Result<Vec<StoredFile>, String> {
    if paths.len() > MAX_FILES_PER_MESSAGE {
        return Err(format!(
            "`files`: {} files; a message may carry at most {MAX_FILES_PER_MESSAGE} (post the rest in another message)",
            paths.len()
        ));
    }
    if let Actor::Colleague(_) = actor {
        return library_files(w, paths).map_err(|e| format!("`files`: {e}"));
    }
    let mut files = Vec::new();
    for p in paths {
        let full = w.files.resolve(p).map_err(|e| format!("`files`: {e}"))?;
        if full.is_dir() {
            return Err(format!(
                "`files`: `{p}` is a directory; post the files in it one by one"
            ));
        }
        if !full.exists() {
            return Err(format!(
                "`files`: no file `{p}` in the workspace; files_list shows what there is"
            ));
        }
        let bytes = read_file(&full, p).map_err(|e| format!("`files`: {e}"))?;
        let name = p.trim_end_matches('/').rsplit('/').next().unwrap_or(p);
        files.push(
            w.store_file(name, &bytes)
                .map_err(|e| format!("`files`: {e}"))?,
        );
        check_message_files(&files).map_err(|e| format!("`files`: {e}"))?;
    }
    Ok(files)
}

/// Message `id` as the acting person sees it.
fn visible_message(w: &World, actor: &Actor, id: &str) -> Result<ChatMessage, String> {
    let me = w.acting_email(actor)?;
    w.chat
        .message(id)
        .filter(|m| w.chat.visible_to(m, &me))
        .cloned()
        .ok_or_else(|| format!("no message `{id}` that you can see"))
}

/// File `filename` of message `id` and its bytes.
fn message_file(
    w: &World,
    actor: &Actor,
    id: &str,
    filename: &str,
) -> Result<(StoredFile, Vec<u8>), String> {
    let m = visible_message(w, actor, id)?;
    let f = m.file(filename)?.clone();
    let bytes = w.stored_bytes(&f)?;
    Ok((f, bytes))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    id: String,
    filename: String,
}

fn read_file_tool(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: ReadArgs = parse("chat_read_file", args)?;
    let (f, bytes) = message_file(w, actor, &a.id, &a.filename)?;
    let format = bureau_formats::office::Format::detect(&f.name, &bytes);
    let mut v = super::super::files::show(w, &f.name, &bytes, format)?;
    if let Value::Object(o) = &mut v {
        o.remove("path");
        o.insert("message".into(), json!(a.id));
        o.insert("filename".into(), json!(f.name));
        o.insert("mime_type".into(), json!(f.mime_type));
    }
    Ok(v)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveArgs {
    id: String,
    filename: String,
    path: String,
}

fn save_file(w: &mut World, actor: &Actor, args: &Value) -> ToolResult {
    let a: SaveArgs = parse("chat_save_file", args)?;
    let (f, bytes) = message_file(w, actor, &a.id, &a.filename)?;
    let created = w.files.write(&a.path, &bytes)?;
    w.record(
        actor.clone(),
        "files",
        if created { "create" } else { "write" },
        false,
        json!({"path": a.path, "size": bytes.len(), "from_chat": a.id, "filename": f.name}),
    );
    Ok(json!({"path": a.path, "size": bytes.len()}))
}
