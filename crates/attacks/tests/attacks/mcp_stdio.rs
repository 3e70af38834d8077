//! Attacks: the MCP protocol. A client (a harness, or an agent that found the endpoint)
//! sending malformed JSON-RPC over stdio or streamable HTTP, using another trial's bearer
//! token, or calling after its trial is over. See docs/security.md.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bureau_agents::{Recorder, ToolSession, TurnLimits};
use bureau_core::task::Task;
use bureau_mcp::{NO_TURN, Office, TrialEndpoint};
use bureau_world::World;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// How long a test waits for any one answer: a server that says nothing fails the test
/// instead of hanging it.
const ANSWER: Duration = Duration::from_secs(20);

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

struct Trial {
    _dir: tempfile::TempDir,
    task: Task,
    world: Arc<Mutex<World>>,
}

fn trial() -> Trial {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("task");
    write(
        &t.join("task.toml"),
        r#"
id = "mcp-attack"
title = "MCP attack"
persona = "engineer"
category = "engineering"
difficulty = "easy"
apps = ["files"]
timezone = "Europe/Amsterdam"
[user]
name = "Lena Vos"
email = "lena.vos@brightwater.test"

[[turn]]
at = 2026-03-09T09:00:00
prompt = "Read the note."

[[rubric]]
id = "x"
description = "x"
kind = "result"
file_exists = "note.txt"
"#,
    );
    write(&t.join("world/files/note.txt"), "hello\n");
    let task = Task::load(&t).expect("the task loads");
    let mut world = World::build(&task, &dir.path().join("world")).expect("the world builds");
    world.begin_turn(&task.turns[0]).expect("turn 1");
    Trial {
        _dir: dir,
        task,
        world: Arc::new(Mutex::new(world)),
    }
}

impl Trial {
    fn session(&self) -> Arc<ToolSession> {
        Arc::new(ToolSession::new(
            self.world.clone(),
            Recorder::new(),
            1,
            TurnLimits::from(&self.task.limits),
        ))
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"0"}}}"#;

/// A stdio client speaking raw lines to an [`Office`] served over an in-memory pipe.
struct Stdio {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl Stdio {
    async fn start(office: &Office) -> Stdio {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server);
        let office = office.clone();
        tokio::spawn(async move { office.serve_io(sr, sw).await });
        let (cr, cw) = tokio::io::split(client);
        let mut c = Stdio {
            to_server: cw,
            from_server: BufReader::new(cr),
        };
        c.send(INITIALIZE.as_bytes()).await;
        let init = c.answer().await;
        assert_eq!(init["id"], 0, "{init}");
        assert!(init.get("result").is_some(), "{init}");
        c.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        c
    }

    async fn send(&mut self, line: &[u8]) {
        self.to_server.write_all(line).await.expect("send");
        self.to_server.write_all(b"\n").await.expect("send");
        self.to_server.flush().await.expect("flush");
    }

    /// The next line the server writes, as JSON; fails the test after [`ANSWER`].
    async fn answer(&mut self) -> Value {
        let mut line = String::new();
        match tokio::time::timeout(ANSWER, self.from_server.read_line(&mut line)).await {
            Ok(Ok(n)) if n > 0 => serde_json::from_str(&line).expect("the server writes JSON"),
            Ok(_) => panic!("the server closed the connection"),
            Err(_) => panic!("no answer within {ANSWER:?}: the client would wait forever"),
        }
    }

    /// A valid request still gets its answer.
    async fn still_serving(&mut self, id: u64) {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        self.send(req.to_string().as_bytes()).await;
        let a = self.answer().await;
        assert_eq!(a["id"], id, "{a}");
        assert!(a["result"]["tools"].is_array(), "{a}");
    }
}

fn deep(levels: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"files_read","arguments":{{"path":{}1{}}}}}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

/// Each malformed line gets the JSON-RPC 2.0 error it deserves (id null where it cannot be
/// known) and the server goes on answering; a 20 MiB line is refused without being held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_stdio_lines_get_json_rpc_errors_and_serving_goes_on() {
    let t = trial();
    let office = Office::new(t.world.clone());
    let mut c = Stdio::start(&office).await;

    let huge = {
        let mut v = br#"{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{"pad":""#.to_vec();
        v.resize(20 * 1024 * 1024, b'a');
        v.extend_from_slice(br#""}}"#);
        v
    };
    let cases: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        ("not JSON", b"this is not json".to_vec(), -32700, Value::Null),
        ("cut JSON", br#"{"jsonrpc":"2.0","id":3,"#.to_vec(), -32700, Value::Null),
        (
            "params not an object",
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"x"}"#.to_vec(),
            -32600,
            json!(5),
        ),
        (
            "params an array",
            br#"{"jsonrpc":"2.0","id":"six","method":"tools/call","params":["files_read"]}"#
                .to_vec(),
            -32600,
            json!("six"),
        ),
        (
            "a batch",
            br#"[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]"#
                .to_vec(),
            -32600,
            Value::Null,
        ),
        ("an empty batch", b"[]".to_vec(), -32600, Value::Null),
        ("a number", b"12".to_vec(), -32600, Value::Null),
        ("5,000-deep nesting", deep(5000).into_bytes(), -32600, Value::Null),
        ("a 20 MiB line", huge, -32600, Value::Null),
    ];
    for (n, (what, line, code, id)) in cases.into_iter().enumerate() {
        c.send(&line).await;
        let a = c.answer().await;
        assert_eq!(a["jsonrpc"], "2.0", "{what}: {a}");
        assert_eq!(a["error"]["code"], code, "{what}: {a}");
        assert_eq!(a["id"], id, "{what}: {a}");
        assert!(a["error"]["message"].is_string(), "{what}: {a}");
        c.still_serving(100 + n as u64).await;
    }
    // Nesting within the bound is an ordinary (failing) tool call, not a protocol error.
    c.send(deep(20).as_bytes()).await;
    let a = c.answer().await;
    assert_eq!(a["id"], 41, "{a}");
    assert!(a.get("result").is_some(), "{a}");
}

fn request(
    addr: SocketAddr,
    authorization: Option<&str>,
    content_length: usize,
    body: &[u8],
) -> (u16, String) {
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(ANSWER)).expect("timeout");
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {content_length}\r\n\
         Connection: close\r\n{auth}\r\n"
    )
    .expect("send");
    s.write_all(body).expect("send");
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                // An answered initialize streams on; its status line is all we need.
                if got.starts_with(b"HTTP/1.1 200") {
                    break;
                }
            }
            Err(e) if got.is_empty() => panic!("no answer within {ANSWER:?}: {e}"),
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The streamable-HTTP endpoint answers the same bodies with `400` (`413` past the bound)
/// and the JSON-RPC error as a JSON body — rmcp alone answered `415` with plain text — and
/// a declared 20 MiB body is refused before it is sent.
#[test]
fn malformed_http_bodies_get_json_rpc_errors() {
    let t = trial();
    let ep = TrialEndpoint::start(t.world.clone()).expect("endpoint");
    let auth = ep.authorization();
    let cases: Vec<(&str, String, u16, i64, Value)> = vec![
        (
            "not JSON",
            "this is not json".into(),
            400,
            -32700,
            Value::Null,
        ),
        (
            "params not an object",
            r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":"x"}"#.into(),
            400,
            -32600,
            json!(5),
        ),
        (
            "a batch",
            format!("[{INITIALIZE},{INITIALIZE}]"),
            400,
            -32600,
            Value::Null,
        ),
        ("5,000-deep nesting", deep(5000), 400, -32600, Value::Null),
    ];
    for (what, body, status, code, id) in cases {
        let (got, text) = request(ep.addr(), Some(&auth), body.len(), body.as_bytes());
        assert_eq!(got, status, "{what}: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what}: the body is not JSON ({e}): {text}"));
        assert_eq!(v["error"]["code"], code, "{what}: {v}");
        assert_eq!(v["id"], id, "{what}: {v}");
    }
    // 20 MiB announced: refused on the headers alone.
    let (got, text) = request(ep.addr(), Some(&auth), 20 * 1024 * 1024, b"");
    assert_eq!(got, 413, "{text}");
    let v: Value = serde_json::from_str(&text).expect("a JSON-RPC error body");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    // And the endpoint still serves.
    let (got, text) = request(
        ep.addr(),
        Some(&auth),
        INITIALIZE.len(),
        INITIALIZE.as_bytes(),
    );
    assert_eq!(got, 200, "{text}");
    // Without the token, nothing of this is even looked at.
    let (got, _) = request(ep.addr(), None, 4, b"nope");
    assert_eq!(got, 401);
}

// -- held: tokens across trials, calls after the trial ends -------------------------------------

/// One trial's bearer token never opens another trial's endpoint (nor does anything close to
/// it): `401` before MCP sees the request.
#[test]
fn a_trials_token_does_not_open_another_trials_endpoint() {
    let a = trial();
    let b = trial();
    let ep_a = TrialEndpoint::start(a.world.clone()).expect("endpoint a");
    let ep_b = TrialEndpoint::start(b.world.clone()).expect("endpoint b");
    assert_ne!(ep_a.token, ep_b.token);
    let init = INITIALIZE.as_bytes();
    let mut truncated = ep_a.token.clone();
    truncated.pop();
    for wrong in [
        ep_b.authorization(),
        format!("Bearer {truncated}"),
        format!("Bearer {}x", ep_a.token),
        format!("Bearer {}", ep_a.token.to_uppercase()),
        format!("Basic {}", ep_a.token),
        ep_a.token.clone(),
    ] {
        let (got, _) = request(ep_a.addr(), Some(&wrong), init.len(), init);
        assert_eq!(got, 401, "{wrong}");
    }
    let (got, _) = request(ep_b.addr(), Some(&ep_a.authorization()), init.len(), init);
    assert_eq!(got, 401);
    // The right token works, so the refusals above are the token's.
    let (got, _) = request(ep_a.addr(), Some(&ep_a.authorization()), init.len(), init);
    assert_eq!(got, 200);
}

/// When a turn ends the office refuses world calls (a tool error naming it, nothing
/// recorded); when the trial ends its endpoint stops listening.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_after_the_turn_and_the_trial_end_are_refused() {
    let t = trial();
    let office = Office::new(t.world.clone());
    office.set_session(Some(t.session())).expect("a session");
    let mut c = Stdio::start(&office).await;
    let call = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "files_read", "arguments": {"path": "note.txt"}}})
        .to_string()
    };
    c.send(call(1).as_bytes()).await;
    let a = c.answer().await;
    assert_eq!(a["result"]["isError"], false, "during the turn: {a}");
    // The turn (and with it the trial) is over.
    office.set_session(None).expect("no session");
    let log_len = t.world.lock().expect("world").log().len();
    c.send(call(2).as_bytes()).await;
    let a = c.answer().await;
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(a.to_string().contains(NO_TURN), "{a}");
    assert_eq!(t.world.lock().expect("world").log().len(), log_len);

    let ep = TrialEndpoint::start(t.world.clone()).expect("endpoint");
    let addr = ep.addr();
    let auth = ep.authorization();
    let init = INITIALIZE.as_bytes();
    assert_eq!(request(addr, Some(&auth), init.len(), init).0, 200);
    ep.shutdown();
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(5)).is_err(),
        "the endpoint of a finished trial still accepts connections"
    );
}
