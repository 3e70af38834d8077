//! A scripted OpenAI-compatible model server for benchmarking the run loop under model latency
//! (`scripts/bench-concurrency.sh`, docs/BENCHMARKS.md).
//!
//! ```sh
//! cargo run --release -p bureau-agents --example scripted_model -- --latency-ms 1000 --tool-calls 4
//! ```
//!
//! Binds 127.0.0.1 on a free port and prints `http://127.0.0.1:<port>/v1` (the base URL for
//! `OPENAI_BASE_URL`) as its first line on stdout. Every `POST /v1/chat/completions` is
//! answered after the fixed latency (an async sleep: no thread waits per connection) from a
//! deterministic script that reads only the request: in each turn (the messages after the
//! last user message) the first `--tool-calls` answers call `files_list` (a read-only tool
//! every task offers), then one answer ends the turn with a text. Usage tokens are filled in
//! (prompt ≈ request bytes / 4). So a trial of `t` turns makes `t × (tool_calls + 1)` model
//! calls, one after another.
//!
//! `GET /stats` answers `{"requests", "in_flight", "max_in_flight"}`; `POST /reset` zeroes the
//! counters (one server for several runs).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Default)]
struct Counters {
    requests: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

struct Settings {
    latency: Duration,
    tool_calls: usize,
    counters: Counters,
}

type Shared = Arc<Settings>;

fn usage() -> ! {
    eprintln!(
        "usage: scripted_model [--latency-ms N (default 1000)] [--tool-calls K (default 4)] [--threads T (default: the cores)]"
    );
    std::process::exit(2)
}

fn main() {
    let mut latency_ms: u64 = 1000;
    let mut tool_calls: usize = 4;
    let mut threads: usize = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--latency-ms" => latency_ms = value.parse().unwrap_or_else(|_| usage()),
            "--tool-calls" => tool_calls = value.parse().unwrap_or_else(|_| usage()),
            "--threads" => threads = value.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let settings = Arc::new(Settings {
        latency: Duration::from_millis(latency_ms),
        tool_calls,
        counters: Counters::default(),
    });
    // The latency is a timer, not a blocked thread; the threads parse requests and write
    // replies (a model API answers a burst of replies in parallel, not one after the other).
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("scripted_model: cannot start the runtime: {e}");
            std::process::exit(1)
        }
    };
    if let Err(e) = runtime.block_on(serve(settings)) {
        eprintln!("scripted_model: {e}");
        std::process::exit(1)
    }
}

async fn serve(settings: Shared) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    println!("http://{}/v1", listener.local_addr()?);
    let app = Router::new()
        .route("/v1/chat/completions", post(completion))
        .route("/stats", get(stats))
        .route("/reset", post(reset))
        .with_state(settings);
    axum::serve(listener, app).await
}

async fn stats(State(s): State<Shared>) -> Response {
    let c = &s.counters;
    json_response(
        StatusCode::OK,
        &json!({
            "requests": c.requests.load(Ordering::SeqCst),
            "in_flight": c.in_flight.load(Ordering::SeqCst),
            "max_in_flight": c.max_in_flight.load(Ordering::SeqCst),
        }),
    )
}

async fn reset(State(s): State<Shared>) -> Response {
    let c = &s.counters;
    c.requests.store(0, Ordering::SeqCst);
    c.max_in_flight
        .store(c.in_flight.load(Ordering::SeqCst), Ordering::SeqCst);
    json_response(StatusCode::OK, &json!({"reset": true}))
}

/// Decrements the in-flight count however the request ends (a client may hang up).
struct InFlight<'a>(&'a Counters);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn completion(State(s): State<Shared>, body: Bytes) -> Response {
    let c = &s.counters;
    c.requests.fetch_add(1, Ordering::SeqCst);
    let now = c.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    c.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let _guard = InFlight(c);
    // Only what the script reads is kept (every message's role, the model): the rest of the
    // conversation and the tool schemas are skipped without being built, so the server's
    // share of the bench machine's CPU stays small — a model API is not on that machine.
    let request: Request<'_> = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return json_response(
                StatusCode::BAD_REQUEST,
                &json!({"error": {"message": format!("body is not JSON: {e}"), "type": "invalid_request_error"}}),
            );
        }
    };
    let answer = script(&request, s.tool_calls, body.len());
    tokio::time::sleep(s.latency).await;
    json_response(StatusCode::OK, &answer)
}

/// What the script reads of a chat-completions request.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow, default)]
    model: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    messages: Vec<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: std::borrow::Cow<'a, str>,
}

/// The scripted answer to `request`: a `files_list` call while the turn has made fewer than
/// `tool_calls` calls, then a text.
fn script(request: &Request<'_>, tool_calls: usize, bytes: usize) -> Value {
    let messages = &request.messages;
    let last_user = messages.iter().rposition(|m| m.role == "user").unwrap_or(0);
    let made = messages[last_user..]
        .iter()
        .filter(|m| m.role == "assistant")
        .count();
    let assistant_total = messages.iter().filter(|m| m.role == "assistant").count();
    let (message, finish) = if made < tool_calls {
        (
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("call_{assistant_total}"),
                "type": "function",
                "function": {"name": "files_list", "arguments": "{}"}
            }]}),
            "tool_calls",
        )
    } else {
        (
            json!({"role": "assistant", "content": "Done: I looked at the workspace."}),
            "stop",
        )
    };
    let prompt = bytes / 4;
    json!({
        "id": format!("chatcmpl-scripted-{assistant_total}"),
        "object": "chat.completion",
        "created": 1_767_225_600,
        "model": request.model.as_deref().unwrap_or("scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}
    })
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}
