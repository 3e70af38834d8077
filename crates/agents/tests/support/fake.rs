//! A fake model API on 127.0.0.1: a small HTTP/1.1 server that speaks the OpenAI Chat
//! Completions or the Anthropic Messages wire format, checks every request against the
//! format's rules (as the real APIs reject malformed conversations), records it, and answers
//! with the next scripted reply — a JSON body, an error status with `Retry-After`, a body cut
//! off mid-way, a connection closed without an answer, or any of these after a delay.
//!
//! An OpenAI server also answers `POST /v1/embeddings` (not from the script): each input gets
//! a deterministic vector, a hashed bag of its words ([`bow_vector`]), so texts sharing words
//! are close and relevant units really rank first. The data come back in reverse order with
//! their `index` (a client must put them back), with `usage.prompt_tokens` = the inputs'
//! words. Faults are injected with [`FakeServer::fail_embeddings`]: each request takes the
//! next fault while there is one.
//!
//! Bounded: the server stops when dropped, after `MAX_LIFETIME`, or after
//! `MAX_CONNECTIONS` connections; each connection has read and write timeouts.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MAX_LIFETIME: Duration = Duration::from_secs(120);
const MAX_CONNECTIONS: usize = 200;
const IO_TIMEOUT: Duration = Duration::from_secs(15);

/// Which wire format the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A status, extra headers, and a JSON body.
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// `200` with a `Content-Length` of the whole body, but only its first `keep` bytes are
    /// sent before the connection closes.
    Truncated { body: Value, keep: usize },
    /// The connection is closed after the request is read, with no answer.
    Reset,
    /// `then`, after `delay`.
    Slow { delay: Duration, then: Box<Reply> },
}

impl Reply {
    pub fn ok(body: Value) -> Reply {
        Reply::Json {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }

    /// An error status with the provider-style error body.
    pub fn error(wire: Wire, status: u16, message: &str) -> Reply {
        Reply::Json {
            status,
            headers: Vec::new(),
            body: error_body(wire, status, message),
        }
    }

    /// `429` with `Retry-After: <retry_after>` (seconds or an HTTP date).
    pub fn rate_limited(wire: Wire, retry_after: &str) -> Reply {
        Reply::Json {
            status: 429,
            headers: vec![("Retry-After".into(), retry_after.into())],
            body: error_body(wire, 429, "Rate limit reached for requests"),
        }
    }

    pub fn slow(delay: Duration, then: Reply) -> Reply {
        Reply::Slow {
            delay,
            then: Box::new(then),
        }
    }
}

fn error_body(wire: Wire, status: u16, message: &str) -> Value {
    match wire {
        Wire::OpenAi => json!({"error": {"message": message, "type": "api_error", "code": status}}),
        Wire::Anthropic => {
            json!({"type": "error", "error": {"type": "api_error", "message": message}})
        }
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    embedding_faults: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
    violations: Mutex<Vec<String>>,
}

/// The running server; dropping it stops it.
pub struct FakeServer {
    addr: SocketAddr,
    wire: Wire,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Start a server speaking `wire` that answers requests with `script`, in order, and
    /// requires `key` (as `Authorization: Bearer` or `x-api-key`) when given.
    pub fn start(wire: Wire, key: Option<&str>, script: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            ..Shared::default()
        });
        let stop = Arc::new(AtomicBool::new(false));
        let key = key.map(str::to_string);
        let accept = {
            let shared = shared.clone();
            let stop = stop.clone();
            std::thread::spawn(move || accept_loop(listener, wire, key, shared, stop))
        };
        FakeServer {
            addr,
            wire,
            shared,
            stop,
            accept: Some(accept),
        }
    }

    /// The base URL as a user configures it: `http://127.0.0.1:<port>/v1` for OpenAI,
    /// `http://127.0.0.1:<port>` for Anthropic.
    pub fn base_url(&self) -> String {
        match self.wire {
            Wire::OpenAi => format!("http://{}/v1", self.addr),
            Wire::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// Every request received so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// Requests that broke the wire format's rules (answered with 400).
    pub fn violations(&self) -> Vec<String> {
        self.shared.violations.lock().unwrap().clone()
    }

    /// Scripted replies not used.
    pub fn unused(&self) -> usize {
        self.shared.script.lock().unwrap().len()
    }

    /// Answer the next embeddings requests with these faults, in order, then normally again.
    pub fn fail_embeddings(&self, faults: Vec<Reply>) {
        self.shared.embedding_faults.lock().unwrap().extend(faults);
    }

    /// Requests received on `/v1/embeddings`.
    pub fn embedding_requests(&self) -> Vec<Received> {
        self.received()
            .into_iter()
            .filter(|r| r.path == EMBEDDINGS_PATH)
            .collect()
    }
}

const EMBEDDINGS_PATH: &str = "/v1/embeddings";

/// Dimensions of the fake embeddings.
pub const BOW_DIMENSIONS: usize = 256;

/// Words that carry no topic.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "for", "from", "i", "in", "is",
    "it", "me", "my", "of", "on", "or", "our", "so", "that", "the", "this", "to", "we", "what",
    "when", "which", "with", "you", "your",
];

/// The words of `text` that count: lower-cased alphanumeric runs, stop words dropped, a final
/// `s` cut (a crude stemmer: "moves" and "move" are one word).
pub fn bow_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOP_WORDS.contains(w))
        .map(|w| {
            if w.len() > 3 && w.ends_with('s') {
                w[..w.len() - 1].to_string()
            } else {
                w.to_string()
            }
        })
        .collect()
}

/// A hashed bag of words (FNV-1a of each word, modulo [`BOW_DIMENSIONS`]).
pub fn bow_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; BOW_DIMENSIONS];
    for w in bow_words(text) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in w.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        v[(h % BOW_DIMENSIONS as u64) as usize] += 1.0;
    }
    v
}

/// The embeddings answer to `req`, as OpenAI writes it (data reversed, with their index).
fn embeddings_body(req: &Received) -> Value {
    let inputs: Vec<String> = match &req.body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().unwrap_or("").to_string())
            .collect(),
        _ => Vec::new(),
    };
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": bow_vector(t)}))
        .collect();
    data.reverse();
    let tokens: usize = inputs.iter().map(|t| t.split_whitespace().count()).sum();
    json!({
        "object": "list",
        "data": data,
        "model": req.body["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}
    })
}

/// The rules of the embeddings route: the key, a model, and `input` a non-empty string or a
/// non-empty array (at most 2048) of non-empty strings.
fn check_embeddings(key: Option<&str>, req: &Received) -> Result<(), String> {
    if let Some(key) = key
        && req.headers.get("authorization") != Some(&format!("Bearer {key}"))
    {
        return Err("auth: Incorrect API key provided".into());
    }
    match &req.body["input"] {
        Value::String(s) if !s.is_empty() => Ok(()),
        Value::Array(a)
            if !a.is_empty()
                && a.len() <= 2048
                && a.iter().all(|v| v.as_str().is_some_and(|s| !s.is_empty())) =>
        {
            Ok(())
        }
        other => Err(format!(
            "'$.input' is invalid: {other} — give a non-empty string or an array of 1 to 2048 non-empty strings"
        )),
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    wire: Wire,
    key: Option<String>,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
) {
    let started = Instant::now();
    let connections = AtomicUsize::new(0);
    let mut handlers = Vec::new();
    while !stop.load(Ordering::SeqCst)
        && started.elapsed() < MAX_LIFETIME
        && connections.load(Ordering::SeqCst) < MAX_CONNECTIONS
    {
        match listener.accept() {
            Ok((stream, _)) => {
                connections.fetch_add(1, Ordering::SeqCst);
                let shared = shared.clone();
                let key = key.clone();
                handlers.push(std::thread::spawn(move || {
                    let _ = serve(stream, wire, key.as_deref(), &shared);
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => break,
        }
    }
    for h in handlers {
        let _ = h.join();
    }
}

fn serve(
    mut stream: TcpStream,
    wire: Wire,
    key: Option<&str>,
    shared: &Shared,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let Some(req) = read_request(&mut stream)? else {
        return Ok(());
    };
    shared.received.lock().unwrap().push(req.clone());
    if wire == Wire::OpenAi && req.path == EMBEDDINGS_PATH {
        let checked = check_basics(&req).and_then(|()| check_embeddings(key, &req));
        if let Err(problem) = checked {
            shared.violations.lock().unwrap().push(problem.clone());
            let status = if problem.starts_with("auth:") {
                401
            } else {
                400
            };
            return write_json(
                &mut stream,
                status,
                &[],
                &error_body(wire, status, &problem),
            );
        }
        let fault = shared.embedding_faults.lock().unwrap().pop_front();
        return match fault {
            Some(reply) => answer(&mut stream, reply),
            None => write_json(&mut stream, 200, &[], &embeddings_body(&req)),
        };
    }
    if let Err(problem) = check(wire, key, &req) {
        shared.violations.lock().unwrap().push(problem.clone());
        let status = if problem.starts_with("auth:") {
            401
        } else {
            400
        };
        return write_json(
            &mut stream,
            status,
            &[],
            &error_body(wire, status, &problem),
        );
    }
    let reply = shared.script.lock().unwrap().pop_front();
    let Some(reply) = reply else {
        let problem = "the script has no reply left for this request".to_string();
        shared.violations.lock().unwrap().push(problem.clone());
        return write_json(&mut stream, 500, &[], &error_body(wire, 500, &problem));
    };
    answer(&mut stream, reply)
}

fn answer(stream: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    match reply {
        Reply::Json {
            status,
            headers,
            body,
        } => write_json(stream, status, &headers, &body),
        Reply::Truncated { body, keep } => {
            let text = body.to_string();
            let keep = keep.min(text.len().saturating_sub(1));
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                text.len()
            );
            stream.write_all(head.as_bytes())?;
            stream.write_all(&text.as_bytes()[..keep])?;
            stream.flush()?;
            stream.shutdown(std::net::Shutdown::Both)
        }
        Reply::Reset => stream.shutdown(std::net::Shutdown::Both),
        Reply::Slow { delay, then } => {
            std::thread::sleep(delay);
            answer(stream, *then)
        }
    }
}

fn write_json(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &Value,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let text = body.to_string();
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        text.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(text.as_bytes())?;
    stream.flush()
}

fn read_request(stream: &mut TcpStream) -> std::io::Result<Option<Received>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > 1 << 20 {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let method = first.next().unwrap_or("").to_string();
    let path = first.next().unwrap_or("").to_string();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(Some(Received {
        method,
        path,
        headers,
        body,
    }))
}

/// The rules of each wire format that a real API enforces and a client can break.
fn check(wire: Wire, key: Option<&str>, req: &Received) -> Result<(), String> {
    check_basics(req)?;
    match wire {
        Wire::OpenAi => check_openai(key, req),
        Wire::Anthropic => check_anthropic(key, req),
    }
}

/// POST, JSON, and a model: every route's rules.
fn check_basics(req: &Received) -> Result<(), String> {
    if req.method != "POST" {
        return Err(format!("method {} — the API takes POST", req.method));
    }
    if req.headers.get("content-type").map(String::as_str) != Some("application/json") {
        return Err("content-type is not application/json".into());
    }
    let body = &req.body;
    let model = body.get("model").and_then(Value::as_str).unwrap_or("");
    if model.is_empty() {
        return Err("`model` is missing".into());
    }
    Ok(())
}

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn check_openai(key: Option<&str>, req: &Received) -> Result<(), String> {
    if req.path != "/v1/chat/completions" {
        return Err(format!("no route {}", req.path));
    }
    if let Some(key) = key
        && req.headers.get("authorization") != Some(&format!("Bearer {key}"))
    {
        return Err("auth: Incorrect API key provided".into());
    }
    let body = &req.body;
    if let Some(tools) = body.get("tools") {
        for t in tools.as_array().ok_or("`tools` is not an array")? {
            let f = &t["function"];
            if t["type"] != "function" || !valid_tool_name(f["name"].as_str().unwrap_or("")) {
                return Err(format!("invalid tool {t}"));
            }
            if !f["parameters"].is_object() {
                return Err(format!("tool {} has no parameters object", f["name"]));
            }
        }
    }
    let messages = body["messages"]
        .as_array()
        .filter(|m| !m.is_empty())
        .ok_or("`messages` must be a non-empty array")?;
    let mut open: BTreeSet<String> = BTreeSet::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role != "tool" && !open.is_empty() {
            return Err(format!(
                "messages[{i}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing {open:?})"
            ));
        }
        match role {
            "system" => {
                if !m["content"].is_string() {
                    return Err(format!("messages[{i}]: content must be a string"));
                }
            }
            // A user message: a string, or content parts (text, image_url, input_audio).
            "user" => {
                if !m["content"].is_string() {
                    let parts = m["content"]
                        .as_array()
                        .ok_or(format!("messages[{i}]: content must be a string or parts"))?;
                    for p in parts {
                        match p["type"].as_str() {
                            Some("text") if p["text"].is_string() => {}
                            Some("image_url") => {
                                let url = p["image_url"]["url"].as_str().unwrap_or("");
                                let (mime, data) = url
                                    .strip_prefix("data:")
                                    .and_then(|r| r.split_once(";base64,"))
                                    .ok_or(format!("messages[{i}]: image_url is no data URI"))?;
                                if !["image/png", "image/jpeg", "image/gif", "image/webp"]
                                    .contains(&mime)
                                {
                                    return Err(format!("messages[{i}]: unsupported image {mime}"));
                                }
                                b64(data).map_err(|e| format!("messages[{i}]: {e}"))?;
                            }
                            Some("input_audio") => {
                                let a = &p["input_audio"];
                                if !["wav", "mp3"].contains(&a["format"].as_str().unwrap_or("")) {
                                    return Err(format!("messages[{i}]: bad audio format"));
                                }
                                b64(a["data"].as_str().unwrap_or(""))
                                    .map_err(|e| format!("messages[{i}]: {e}"))?;
                            }
                            _ => return Err(format!("messages[{i}]: invalid content part {p}")),
                        }
                    }
                }
            }
            "assistant" => {
                if let Some(calls) = m.get("tool_calls") {
                    for c in calls.as_array().ok_or("tool_calls is not an array")? {
                        let id = c["id"].as_str().unwrap_or("");
                        if id.is_empty() || c["type"] != "function" {
                            return Err(format!("messages[{i}]: invalid tool call {c}"));
                        }
                        if !c["function"]["arguments"].is_string() {
                            return Err(format!(
                                "messages[{i}]: tool call arguments must be a string"
                            ));
                        }
                        open.insert(id.to_string());
                    }
                } else if !m["content"].is_string() {
                    return Err(format!(
                        "messages[{i}]: an assistant message needs content or tool_calls"
                    ));
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or("");
                if !open.remove(id) {
                    return Err(format!(
                        "messages[{i}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (id {id})"
                    ));
                }
                if !m["content"].is_string() {
                    return Err(format!("messages[{i}]: tool content must be a string"));
                }
            }
            other => return Err(format!("messages[{i}]: unknown role `{other}`")),
        }
    }
    Ok(())
}

fn check_anthropic(key: Option<&str>, req: &Received) -> Result<(), String> {
    if req.path != "/v1/messages" {
        return Err(format!("no route {}", req.path));
    }
    if let Some(key) = key
        && req.headers.get("x-api-key").map(String::as_str) != Some(key)
    {
        return Err("auth: invalid x-api-key".into());
    }
    if !req.headers.contains_key("anthropic-version") {
        return Err("anthropic-version header is required".into());
    }
    let body = &req.body;
    if body["max_tokens"].as_u64().unwrap_or(0) == 0 {
        return Err("max_tokens: Field required (a positive integer)".into());
    }
    if let Some(tools) = body.get("tools") {
        for t in tools.as_array().ok_or("`tools` is not an array")? {
            if !valid_tool_name(t["name"].as_str().unwrap_or("")) || !t["input_schema"].is_object()
            {
                return Err(format!("invalid tool {t}"));
            }
        }
    }
    let messages = body["messages"]
        .as_array()
        .filter(|m| !m.is_empty())
        .ok_or("`messages` must be a non-empty array")?;
    if messages[0]["role"] != "user" {
        return Err("messages: the first message must use the user role".into());
    }
    // Consecutive messages of one role are combined by the API; tool_use blocks need their
    // tool_result blocks at the start of the next user turn.
    let mut open: BTreeSet<String> = BTreeSet::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        let content = m["content"]
            .as_array()
            .ok_or(format!("messages[{i}]: content must be a list of blocks"))?;
        match role {
            "assistant" => {
                if !open.is_empty() {
                    return Err(format!(
                        "messages[{i}]: tool_use ids were found without tool_result blocks immediately after: {open:?}"
                    ));
                }
                for b in content {
                    if b["type"] == "tool_use" {
                        if !b["input"].is_object() {
                            return Err(format!("messages[{i}]: tool_use input must be an object"));
                        }
                        open.insert(b["id"].as_str().unwrap_or("").to_string());
                    }
                }
            }
            "user" => {
                for b in content {
                    match b["type"].as_str() {
                        Some("tool_result") => {
                            // Content: a string, or text and image blocks.
                            if let Some(blocks) = b["content"].as_array() {
                                for c in blocks {
                                    match c["type"].as_str() {
                                        Some("text") if c["text"].is_string() => {}
                                        Some("image") => {
                                            let s = &c["source"];
                                            if s["type"] != "base64"
                                                || ![
                                                    "image/png",
                                                    "image/jpeg",
                                                    "image/gif",
                                                    "image/webp",
                                                ]
                                                .contains(&s["media_type"].as_str().unwrap_or(""))
                                            {
                                                return Err(format!(
                                                    "messages[{i}]: invalid image source {s}"
                                                ));
                                            }
                                            b64(s["data"].as_str().unwrap_or(""))
                                                .map_err(|e| format!("messages[{i}]: {e}"))?;
                                        }
                                        _ => {
                                            return Err(format!(
                                                "messages[{i}]: invalid tool_result content {c}"
                                            ));
                                        }
                                    }
                                }
                            } else if !b["content"].is_string() {
                                return Err(format!(
                                    "messages[{i}]: tool_result content must be a string or blocks"
                                ));
                            }
                            let id = b["tool_use_id"].as_str().unwrap_or("");
                            if !open.remove(id) {
                                return Err(format!(
                                    "messages[{i}]: unexpected tool_use_id found in tool_result blocks: {id}"
                                ));
                            }
                        }
                        Some("text") => {
                            if !open.is_empty() {
                                return Err(format!(
                                    "messages[{i}]: tool_result blocks must come first, before text (open: {open:?})"
                                ));
                            }
                        }
                        Some("image") => {
                            let src = &b["source"];
                            let media = src["media_type"].as_str().unwrap_or("");
                            if src["type"] != "base64"
                                || !["image/png", "image/jpeg", "image/gif", "image/webp"]
                                    .contains(&media)
                            {
                                return Err(format!("messages[{i}]: invalid image block {b}"));
                            }
                            b64(src["data"].as_str().unwrap_or(""))
                                .map_err(|e| format!("messages[{i}]: {e}"))?;
                            if !open.is_empty() {
                                return Err(format!(
                                    "messages[{i}]: tool_result blocks must come first, before images (open: {open:?})"
                                ));
                            }
                        }
                        _ => return Err(format!("messages[{i}]: unexpected block {b}")),
                    }
                }
            }
            other => return Err(format!("messages[{i}]: unknown role `{other}`")),
        }
    }
    Ok(())
}

/// Base64 data as the APIs take it (standard alphabet, padded), decoded.
pub fn b64(data: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    if data.is_empty() {
        return Err("empty base64 data".into());
    }
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("invalid base64 data: {e}"))
}
