//! What each world tool does to the office, as MCP tool annotations: harnesses' approval
//! policies key on them (a read-only tool may run unattended where a destructive one asks).
//!
//! Every tool is listed here by name, once; a test checks that the list and the tools agree,
//! so a new tool cannot be served without saying what it does.

use bureau_core::tool::ToolAnnotations;

/// What a tool does to the office.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Only reads: calling it changes nothing.
    Read,
    /// Adds something (a file, a mail sent, a post, a comment, a row); never overwrites or
    /// removes. Calling it twice adds twice.
    Add,
    /// Changes or replaces what exists (an overwrite, an edit, a move, a status); calling it
    /// again with the same arguments changes nothing more.
    Change,
    /// Removes or closes something.
    Remove,
    /// Changes what exists in a way a repeat does again: an in-place edit whose operations
    /// may insert or append (calling it twice inserts twice) as well as overwrite or delete.
    Edit,
}

impl Effect {
    /// The MCP annotations of a tool with this effect. The office is a closed, simulated
    /// world: no tool reaches outside it (`openWorldHint: false`).
    pub fn annotations(self) -> ToolAnnotations {
        let (read_only, destructive, idempotent) = match self {
            Effect::Read => (true, false, true),
            Effect::Add => (false, false, false),
            Effect::Change => (false, true, true),
            Effect::Remove => (false, true, true),
            Effect::Edit => (false, true, false),
        };
        ToolAnnotations {
            read_only_hint: read_only,
            destructive_hint: destructive,
            idempotent_hint: idempotent,
            open_world_hint: false,
        }
    }
}

/// Every world tool's effect.
pub const EFFECTS: &[(&str, Effect)] = &[
    // files
    ("files_list", Effect::Read),
    ("files_read", Effect::Read),
    ("files_ocr", Effect::Read),
    ("mail_read_attachment", Effect::Read),
    ("files_search", Effect::Read),
    ("files_write", Effect::Change),
    ("files_write_docx", Effect::Change),
    ("files_edit_docx", Effect::Edit),
    ("files_set_cells", Effect::Change),
    ("files_export_pdf", Effect::Change),
    ("files_pdf_to_docx", Effect::Change),
    ("files_image_to_pdf", Effect::Change),
    ("files_edit", Effect::Change),
    ("files_move", Effect::Change),
    ("files_delete", Effect::Remove),
    // mail
    ("mail_folders", Effect::Read),
    ("mail_list", Effect::Read),
    ("mail_read", Effect::Read),
    ("mail_search", Effect::Read),
    ("mail_send", Effect::Add),
    ("mail_reply", Effect::Add),
    ("mail_forward", Effect::Add),
    ("mail_move", Effect::Change),
    ("mail_mark_read", Effect::Change),
    ("mail_save_attachment", Effect::Change),
    // calendar
    ("calendar_list", Effect::Read),
    ("calendar_free_slots", Effect::Read),
    ("calendar_create", Effect::Add),
    ("calendar_invite", Effect::Add),
    ("calendar_update", Effect::Change),
    ("calendar_respond", Effect::Change),
    ("calendar_delete", Effect::Remove),
    // chat
    ("chat_list_channels", Effect::Read),
    ("chat_read", Effect::Read),
    ("chat_search", Effect::Read),
    ("chat_members", Effect::Read),
    ("chat_post", Effect::Add),
    ("chat_react", Effect::Add),
    ("chat_join", Effect::Change),
    ("chat_create_channel", Effect::Add),
    ("chat_set_topic", Effect::Change),
    ("chat_invite", Effect::Change),
    ("chat_set_role", Effect::Change),
    ("chat_remove_member", Effect::Remove),
    ("chat_leave", Effect::Remove),
    ("chat_delete_message", Effect::Remove),
    ("chat_read_file", Effect::Read),
    ("chat_save_file", Effect::Change),
    // knowledge base
    ("kb_search", Effect::Read),
    ("kb_list_pages", Effect::Read),
    ("kb_read_page", Effect::Read),
    ("kb_list_databases", Effect::Read),
    ("kb_query", Effect::Read),
    ("kb_create_page", Effect::Add),
    ("kb_add_row", Effect::Add),
    ("kb_comment", Effect::Add),
    ("kb_update_page", Effect::Change),
    ("kb_update_row", Effect::Change),
    ("kb_read_attachment", Effect::Read),
    ("kb_attach", Effect::Change),
    ("kb_save_attachment", Effect::Change),
    // spreadsheets
    ("sheets_list", Effect::Read),
    ("sheets_read", Effect::Read),
    ("sheets_find", Effect::Read),
    ("sheets_write", Effect::Change),
    ("sheets_append_rows", Effect::Add),
    ("sheets_add_sheet", Effect::Add),
    ("sheets_create", Effect::Change),
    ("sheets_export", Effect::Change),
    ("sheets_import", Effect::Change),
    // tracker
    ("tracker_list_projects", Effect::Read),
    ("tracker_list_issues", Effect::Read),
    ("tracker_get_issue", Effect::Read),
    ("tracker_list_cycles", Effect::Read),
    ("tracker_create_issue", Effect::Add),
    ("tracker_comment", Effect::Add),
    ("tracker_create_cycle", Effect::Add),
    ("tracker_update_issue", Effect::Change),
    // code hosting
    ("code_list_repos", Effect::Read),
    ("code_status", Effect::Read),
    ("code_log", Effect::Read),
    ("code_diff", Effect::Read),
    ("code_show_file", Effect::Read),
    ("code_list_issues", Effect::Read),
    ("code_list_mrs", Effect::Read),
    ("code_get_mr", Effect::Read),
    ("code_wiki_read", Effect::Read),
    ("code_clone", Effect::Change),
    ("code_commit", Effect::Add),
    ("code_commit_files", Effect::Add),
    ("code_push", Effect::Change),
    ("code_pull", Effect::Change),
    ("code_branch", Effect::Change),
    ("code_create_issue", Effect::Add),
    ("code_comment_issue", Effect::Add),
    ("code_update_issue", Effect::Change),
    ("code_close_issue", Effect::Remove),
    ("code_create_mr", Effect::Add),
    ("code_comment_mr", Effect::Add),
    ("code_approve_mr", Effect::Change),
    ("code_merge_mr", Effect::Change),
    ("code_close_mr", Effect::Remove),
    ("code_wiki_write", Effect::Change),
    // the dialogue history (OdysseyBench)
    ("memory_search", Effect::Read),
];

/// The effect of tool `name`, if it is a world tool.
pub fn effect(name: &str) -> Option<Effect> {
    EFFECTS.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
}
