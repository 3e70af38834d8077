//! [`bridge_stdio`]: a stdio MCP server that forwards to a trial's HTTP endpoint, for harnesses
//! that only speak stdio (`bureau mcp --trial <url>`).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams,
    ResultType, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::handler::server_config;
use crate::{McpError, protocol_error};

/// Serve MCP on stdin/stdout, forwarding `tools/list` and `tools/call` to the trial endpoint
/// at `url` with `token` as bearer token. Blocks until the client closes stdin.
///
/// Fails before serving anything when the endpoint cannot be reached or refuses the token.
pub fn bridge_stdio(url: &str, token: &str) -> Result<(), McpError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(McpError::Runtime)?;
    let served = rt.block_on(bridge_io(
        url,
        token,
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    rt.shutdown_timeout(Duration::from_secs(1));
    served
}

/// [`bridge_stdio`] over one byte stream pair (newline-delimited JSON-RPC) instead of the
/// process's stdin/stdout.
pub async fn bridge_io<R, W>(url: &str, token: &str, reader: R, writer: W) -> Result<(), McpError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    let upstream = ().serve(transport).await.map_err(|e| {
        protocol_error(
            &format!("connecting to the trial endpoint {url}"),
            format!("{e} — is the trial running, and is the token its token?"),
        )
    })?;
    let instructions = upstream
        .peer_info()
        .and_then(|info| info.instructions.clone())
        .unwrap_or_default();
    let bridge = Bridge {
        upstream: upstream.peer().clone(),
        info: Arc::new(server_config(&instructions)),
    };
    // Bureau reads the client's lines first: a bad one gets its JSON-RPC error here.
    let (reader, writer, inbound, outbound) = crate::jsonrpc::guard(reader, writer);
    let served = match bridge.serve((reader, writer)).await {
        Ok(downstream) => downstream
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| protocol_error("bridge task", e)),
        Err(e) => Err(protocol_error("handshake with the stdio client", e)),
    };
    let _ = upstream.cancel().await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), outbound).await;
    inbound.abort();
    served
}

#[derive(Clone)]
struct Bridge {
    upstream: Peer<RoleClient>,
    info: Arc<ServerConfig>,
}

/// An upstream failure as the downstream client's error: MCP errors pass through unchanged.
fn upstream_error(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(e) => e,
        other => ErrorData::internal_error(format!("the trial endpoint: {other}"), None),
    }
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = self
            .upstream
            .list_all_tools()
            .await
            .map_err(upstream_error)?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Only the name and the arguments: the downstream connection's metadata (protocol
        // version, ...) is not the upstream's.
        let mut forwarded = CallToolRequestParams::new(request.name);
        if let Some(args) = request.arguments {
            forwarded = forwarded.with_arguments(args);
        }
        let response = self
            .upstream
            .call_tool_once(forwarded)
            .await
            .map_err(upstream_error)?;
        Ok(match response {
            // The upstream connection may speak an older protocol, whose results have no
            // `resultType`; the downstream one may require it.
            CallToolResponse::Complete(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                CallToolResponse::Complete(result)
            }
            other => other,
        })
    }
}
