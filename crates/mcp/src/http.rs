//! [`TrialEndpoint`]: one trial's office over streamable HTTP on loopback, behind a bearer
//! token.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use bureau_agents::ToolSession;
use bureau_world::World;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};

use crate::McpError;
use crate::handler::Handler;
use crate::office::Office;

/// Random bytes in a bearer token (256 bits, written as 64 hex digits).
pub const TOKEN_BYTES: usize = 32;

/// The path of the MCP endpoint on its server.
const MCP_PATH: &str = "/mcp";

/// How long a shutdown waits for open connections to finish.
const GRACE: Duration = Duration::from_secs(2);

/// One trial's office over streamable HTTP: its own listener on a loopback address, its own
/// secret bearer token, its own world.
///
/// A request without `Authorization: Bearer <token>` (or with another token) is answered
/// `401 Unauthorized` before it reaches MCP. The server runs on its own tokio runtime on a
/// background thread; it stops on [`TrialEndpoint::shutdown`] or when the endpoint is
/// dropped.
///
/// The endpoint lives for a whole trial; the run loop hands it each turn's session with
/// [`TrialEndpoint::set_session`] and takes it back (`None`) when the turn ends. Between
/// turns a world tool call is a tool error saying that no turn is in progress.
pub struct TrialEndpoint {
    /// The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`.
    pub url: String,
    /// The bearer token (hex). Keep it secret: it opens this trial's world.
    pub token: String,
    addr: SocketAddr,
    office: Office,
    stop: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for TrialEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("TrialEndpoint")
            .field("url", &self.url)
            .field("office", &self.office)
            .finish_non_exhaustive()
    }
}

impl TrialEndpoint {
    /// Serve `world`'s tools on `127.0.0.1` on an ephemeral port, with a fresh token.
    pub fn start(world: Arc<Mutex<World>>) -> Result<TrialEndpoint, McpError> {
        TrialEndpoint::start_on(world, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
    }

    /// Like [`TrialEndpoint::start`] on a given loopback address (port 0: ephemeral).
    pub fn start_on(world: Arc<Mutex<World>>, addr: SocketAddr) -> Result<TrialEndpoint, McpError> {
        TrialEndpoint::serve(Office::new(world), addr)
    }

    /// Serve an existing [`Office`] (e.g. to share its session slot with another transport).
    pub fn serve(office: Office, addr: SocketAddr) -> Result<TrialEndpoint, McpError> {
        if !addr.ip().is_loopback() {
            return Err(McpError::NotLoopback {
                addr: addr.to_string(),
            });
        }
        let token = new_token()?;
        let std_listener = std::net::TcpListener::bind(addr).map_err(|source| McpError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let bound = std_listener.local_addr().map_err(|source| McpError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        std_listener
            .set_nonblocking(true)
            .map_err(McpError::Runtime)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bureau-mcp-http")
            .enable_all()
            .build()
            .map_err(McpError::Runtime)?;
        let listener = {
            let _entered = rt.enter();
            tokio::net::TcpListener::from_std(std_listener).map_err(McpError::Runtime)?
        };

        let config = StreamableHttpServerConfig::default();
        let cancel = config.cancellation_token.clone();
        let handler = Handler::new(office.clone());
        let mcp: StreamableHttpService<Handler, LocalSessionManager> = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let app = Router::new()
            .route_service(MCP_PATH, mcp)
            .fallback(|| async { StatusCode::NOT_FOUND })
            // Inside the token check: only a client with the token gets this far.
            .layer(from_fn(check_body))
            .layer(from_fn_with_state(
                Arc::<str>::from(token.as_str()),
                require_token,
            ));

        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("bureau-mcp-{}", bound.port()))
            .spawn(move || {
                rt.block_on(async move {
                    let graceful = cancel.clone();
                    let server = tokio::spawn(async move {
                        axum::serve(listener, app)
                            .with_graceful_shutdown(async move { graceful.cancelled().await })
                            .await
                    });
                    // Also returns when the endpoint is dropped without a shutdown.
                    let _ = stop_rx.await;
                    cancel.cancel();
                    let _ = tokio::time::timeout(GRACE, server).await;
                });
                rt.shutdown_timeout(Duration::from_millis(200));
            })
            .map_err(McpError::Runtime)?;

        Ok(TrialEndpoint {
            url: format!("http://{bound}{MCP_PATH}"),
            token,
            addr: bound,
            office,
            stop: Mutex::new(Some(stop_tx)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The address the endpoint listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The office served (its current session, its tools).
    pub fn office(&self) -> &Office {
        &self.office
    }

    /// Make `session` the current turn's session, or end the turn (`None`). A session of
    /// another world is refused ([`McpError::ForeignSession`]). Waits for calls in flight
    /// under the previous session, so after it returns the world is not being changed
    /// through this endpoint.
    pub fn set_session(&self, session: Option<Arc<ToolSession>>) -> Result<(), McpError> {
        self.office.set_session(session)
    }

    /// The `Authorization` header value clients must send.
    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// The usual MCP client configuration for this endpoint (Claude Code's `--mcp-config`,
    /// Cursor, ...): `{"mcpServers": {"bureau": {"type": "http", "url": ..., "headers":
    /// {"Authorization": "Bearer ..."}}}}`.
    pub fn mcp_config_json(&self) -> Value {
        json!({
            "mcpServers": {
                "bureau": {
                    "type": "http",
                    "url": self.url,
                    "headers": {"Authorization": self.authorization()}
                }
            }
        })
    }

    /// Stop serving: open connections get a short grace period, then the server thread ends.
    /// Also done on drop.
    pub fn shutdown(self) {
        self.stop_now();
    }

    fn stop_now(&self) {
        let stop = self.stop.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(stop) = stop {
            let _ = stop.send(());
        }
        let thread = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

impl Drop for TrialEndpoint {
    fn drop(&mut self) {
        self.stop_now();
    }
}

/// A fresh random token: [`TOKEN_BYTES`] bytes from the OS, hex.
fn new_token() -> Result<String, McpError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| McpError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Refuse every request whose `Authorization` is not `Bearer <token>`.
async fn require_token(State(token): State<Arc<str>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer);
    match given {
        Some(given) if same_secret(given.as_bytes(), token.as_bytes()) => next.run(request).await,
        Some(_) => unauthorized("wrong bearer token for this trial's endpoint"),
        None => unauthorized(
            "missing bearer token: send `Authorization: Bearer <token>` with this trial's token",
        ),
    }
}

/// Read a POST's body with Bureau's bound and check it as a JSON-RPC message
/// ([`crate::jsonrpc::check`]) before rmcp sees it: a bad one is answered `400 Bad Request`
/// (`413 Payload Too Large` past [`crate::jsonrpc::MAX_MESSAGE_BYTES`]) with the JSON-RPC
/// error response as its JSON body, as the streamable-HTTP transport prescribes. rmcp alone
/// answers such bodies with plain text a client cannot correlate.
async fn check_body(request: Request, next: Next) -> Response {
    use crate::jsonrpc::{MAX_MESSAGE_BYTES, Verdict, check, too_long};
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    // A declared length past the bound is refused before a byte of the body is read.
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_MESSAGE_BYTES as u64) {
        return jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, too_long());
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => return jsonrpc_error(StatusCode::PAYLOAD_TOO_LARGE, too_long()),
    };
    match check(&bytes) {
        Verdict::Pass => next.run(Request::from_parts(parts, bytes.into())).await,
        Verdict::Blank => jsonrpc_error(
            StatusCode::BAD_REQUEST,
            crate::jsonrpc::error_response(
                Value::Null,
                crate::jsonrpc::INVALID_REQUEST,
                "Invalid Request: the body is empty",
            ),
        ),
        Verdict::Unanswerable => jsonrpc_error(
            StatusCode::BAD_REQUEST,
            crate::jsonrpc::error_response(
                Value::Null,
                crate::jsonrpc::INVALID_REQUEST,
                "Invalid Request: a response without an id answers nothing",
            ),
        ),
        Verdict::Reject(response) => jsonrpc_error(StatusCode::BAD_REQUEST, response),
    }
}

fn jsonrpc_error(status: StatusCode, response: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        response.to_string(),
    )
        .into_response()
}

fn unauthorized(message: &'static str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        message,
    )
        .into_response()
}

/// The credentials of a `Bearer` authorization (the scheme is case-insensitive).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim())
        .filter(|t| !t.is_empty())
}

/// Compare secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_distinct() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn bearer_credentials_are_parsed_strictly() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("abc"), None);
    }

    #[test]
    fn secrets_compare_by_content_and_length() {
        assert!(same_secret(b"abcd", b"abcd"));
        assert!(!same_secret(b"abcd", b"abce"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
