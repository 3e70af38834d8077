//! The rmcp server handler of an [`Office`]: tools/list and tools/call.

use std::sync::Arc;

use bureau_core::tool::{MediaKind, ToolOutcome, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::office::Office;
use crate::render::render_text;
use crate::{McpError, protocol_error};

/// One connection's view of an office (cheap to clone: the HTTP transport makes one per
/// session or request).
#[derive(Clone)]
pub(crate) struct Handler {
    office: Office,
    tools: Arc<Vec<Tool>>,
}

impl Handler {
    pub(crate) fn new(office: Office) -> Handler {
        let tools = office.tool_specs().iter().map(mcp_tool).collect();
        Handler {
            office,
            tools: Arc::new(tools),
        }
    }

    pub(crate) async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        // Bureau reads the client's lines first: a bad one gets its JSON-RPC error here.
        let (reader, writer, inbound, outbound) = crate::jsonrpc::guard(reader, writer);
        let served = match self.serve((reader, writer)).await {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| protocol_error("server task", e)),
            // The client went away before saying anything: nothing was served, nothing failed.
            Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(protocol_error("handshake", e)),
        };
        // rmcp has stopped: its last output is written out, the client is read no more.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), outbound).await;
        inbound.abort();
        served
    }
}

/// What the server says about itself at the handshake.
pub(crate) fn server_config(instructions: &str) -> ServerConfig {
    ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        .with_server_info(Implementation::new("bureau", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions)
}

/// A Bureau tool spec as an MCP tool: same name, description and input schema.
pub(crate) fn mcp_tool(spec: &ToolSpec) -> Tool {
    let schema: Map<String, Value> = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        // Every world tool takes an object; this only guards against a malformed spec.
        _ => Map::from_iter([("type".to_string(), Value::from("object"))]),
    };
    let tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    );
    match spec.annotations {
        Some(a) => tool.annotate(
            ToolAnnotations::new()
                .read_only(a.read_only_hint)
                .destructive(a.destructive_hint)
                .idempotent(a.idempotent_hint)
                .open_world(a.open_world_hint),
        ),
        None => tool,
    }
}

/// A tool outcome as an MCP tool result: the JSON as structured content plus a readable
/// text rendering and the media as image / audio content; an error is `isError: true` with the message as text.
pub(crate) fn tool_result(outcome: ToolOutcome) -> CallToolResult {
    match outcome {
        ToolOutcome::Ok { value, media } => {
            // The text first, then each picture or sound as MCP image / audio content (the
            // text describes them, for a client that shows only text).
            let mut content = vec![ContentBlock::text(render_text(&value))];
            let has_media = !media.is_empty();
            for m in media {
                content.push(match m.kind {
                    MediaKind::Image => ContentBlock::image(m.data, m.mime_type),
                    MediaKind::Audio => ContentBlock::audio(m.data, m.mime_type),
                });
            }
            let mut result = CallToolResult::success(content);
            if has_media {
                // A result with media has no structured content: clients that prefer it to
                // the content blocks (Codex CLI does) would drop the picture, and the text
                // block already holds the same JSON.
                return result;
            }
            // MCP's structured content is a JSON object; world tools always return one.
            result.structured_content = Some(match value {
                Value::Object(_) => value,
                other => Value::Object(Map::from_iter([("value".to_string(), other)])),
            });
            result
        }
        ToolOutcome::Error { message } => CallToolResult::error(vec![ContentBlock::text(message)]),
    }
}

impl ServerHandler for Handler {
    /// Asked at each handshake: the instructions carry the office's time at that moment.
    fn get_info(&self) -> ServerConfig {
        server_config(&self.office.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let office = self.office.clone();
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default());
        // Tools touch the file system and wait on the world's lock: off the async workers.
        let outcome = tokio::task::spawn_blocking(move || office.call(&name, args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool call failed: {e}"), None))?;
        Ok(tool_result(outcome).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn media_come_as_image_and_audio_content_after_the_text_without_structured_content() {
        let media = |kind, mime: &str| bureau_core::tool::Media {
            kind,
            mime_type: mime.into(),
            label: "x".into(),
            data: "AAAA".into(),
            bytes: 3,
            blake3: "h".into(),
        };
        let r = tool_result(ToolOutcome::Ok {
            value: json!({"path": "vm.wav", "media": "audio"}),
            media: vec![
                media(MediaKind::Image, "image/png"),
                media(MediaKind::Audio, "audio/wav"),
            ],
        });
        assert_eq!(r.is_error, Some(false));
        assert!(
            r.content[0]
                .as_text()
                .unwrap()
                .text
                .contains("media: audio")
        );
        let image = r.content[1].as_image().unwrap();
        assert_eq!(
            (image.data.as_str(), image.mime_type.as_str()),
            ("AAAA", "image/png")
        );
        let audio = r.content[2].as_audio().unwrap();
        assert_eq!(audio.mime_type, "audio/wav");
        // Clients that prefer structured content (Codex) would drop the media.
        assert_eq!(r.structured_content, None);
    }

    #[test]
    fn results_carry_the_json_and_a_readable_text() {
        let r = tool_result(ToolOutcome::ok(json!({"path": "memo.md", "size": 3})));
        assert_eq!(r.is_error, Some(false));
        assert_eq!(
            r.structured_content,
            Some(json!({"path": "memo.md", "size": 3}))
        );
        let text = r.content[0].as_text().unwrap().text.clone();
        assert_eq!(text, "path: memo.md\nsize: 3");
    }

    #[test]
    fn errors_are_tool_results_flagged_as_errors() {
        let r = tool_result(ToolOutcome::Error {
            message: "no such file: a.txt".into(),
        });
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content, None);
        assert_eq!(r.content[0].as_text().unwrap().text, "no such file: a.txt");
    }

    #[test]
    fn specs_keep_name_description_and_schema() {
        let spec = ToolSpec {
            name: "files_read".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            annotations: None,
        };
        let tool = mcp_tool(&spec);
        assert_eq!(tool.name, "files_read");
        assert_eq!(tool.description.as_deref(), Some("Read a file"));
        assert_eq!(
            Value::Object((*tool.input_schema).clone()),
            spec.input_schema
        );
    }
}
