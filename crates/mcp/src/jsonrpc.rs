//! Bureau's own reading of incoming JSON-RPC, in front of rmcp.
//!
//! rmcp's transports drop what they cannot parse without a word (a line that is not JSON, a
//! line longer than their limit, JSON nested deeper than serde_json's recursion limit), so a
//! client that sends one waits forever. Every message a client sends — a line over stdio, a
//! POST body over streamable HTTP — is first checked here, and a bad one is answered with the
//! JSON-RPC 2.0 error response the spec prescribes; the server then goes on with the next
//! message:
//!
//! * longer than [`MAX_MESSAGE_BYTES`] → `-32600` (Invalid Request), without being read whole
//!   (over stdio the rest of the line is skipped as it streams in);
//! * nested deeper than [`MAX_DEPTH`] arrays and objects → `-32600`, found by a scan that
//!   needs no recursion (serde_json itself stops at 128 levels and rmcp then says nothing);
//! * not JSON → `-32700` (Parse error);
//! * a batch (a JSON array; MCP has no batches since 2025-06-18), anything but an object, a
//!   wrong `jsonrpc`, an `id` that is not a string or an integer, a `method` that is not a
//!   string, `params` that is not an object → `-32600`.
//!
//! The error's `id` is the request's when it can be read (a string or an integer), else
//! `null`. Blank lines are skipped, and so is a response without a usable id (a response is
//! never answered: a peer that answers errors with errors would never stop). What passes
//! goes to rmcp unchanged.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The largest message read (a stdio line without its newline, or an HTTP body): 4 MiB.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The deepest nesting of arrays and objects in a message. Tool arguments never come near
/// it; serde_json's own limit (128) is well above it, so what passes here also parses in rmcp.
pub const MAX_DEPTH: usize = 64;

/// JSON-RPC 2.0: invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;

/// The JSON-RPC error response for `id` (`Value::Null` when it cannot be known).
pub(crate) fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The error response for a message longer than [`MAX_MESSAGE_BYTES`].
pub(crate) fn too_long() -> Value {
    error_response(
        Value::Null,
        INVALID_REQUEST,
        &format!(
            "Invalid Request: the message is longer than {MAX_MESSAGE_BYTES} bytes (4 MiB), Bureau's limit; it was not read"
        ),
    )
}

/// What to do with one incoming message.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// Nothing but white space: skip it.
    Blank,
    /// A well-formed JSON-RPC message: hand it on.
    Pass,
    /// A response (`result` or `error`) without a usable id: nothing to correlate it with,
    /// and a response is never answered (answering it could start an error storm with a peer
    /// that answers errors). Over stdio it is dropped; over HTTP refused with `400`.
    Unanswerable,
    /// Answer this error response and do not hand the message on.
    Reject(Value),
}

/// The deepest nesting of `[` and `{` outside strings, stopping as soon as it passes `limit`.
fn depth_exceeds(bytes: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Check one message (a stdio line or an HTTP body).
pub(crate) fn check(bytes: &[u8]) -> Verdict {
    let bytes = bytes.trim_ascii();
    if bytes.is_empty() {
        return Verdict::Blank;
    }
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Verdict::Reject(too_long());
    }
    if depth_exceeds(bytes, MAX_DEPTH) {
        return Verdict::Reject(error_response(
            Value::Null,
            INVALID_REQUEST,
            &format!(
                "Invalid Request: arrays and objects are nested deeper than {MAX_DEPTH} levels, Bureau's limit"
            ),
        ));
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Reject(error_response(
                Value::Null,
                PARSE_ERROR,
                &format!("Parse error: the message is not JSON ({e})"),
            ));
        }
    };
    let invalid = |id: Value, what: &str| {
        Verdict::Reject(error_response(
            id,
            INVALID_REQUEST,
            &format!("Invalid Request: {what}"),
        ))
    };
    let obj = match value {
        Value::Object(o) => o,
        Value::Array(a) if a.is_empty() => return invalid(Value::Null, "an empty batch"),
        Value::Array(_) => {
            return invalid(
                Value::Null,
                "batches are not supported (MCP has none since 2025-06-18); send one message at a time",
            );
        }
        _ => return invalid(Value::Null, "a JSON-RPC message is a JSON object"),
    };
    let null_id = matches!(obj.get("id"), Some(Value::Null));
    let id = match obj.get("id") {
        None | Some(Value::Null) => Value::Null,
        Some(v @ Value::String(_)) => v.clone(),
        Some(v @ Value::Number(n)) if n.is_i64() || n.is_u64() => v.clone(),
        Some(_) => return invalid(Value::Null, "`id` must be a string or an integer"),
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(id, "`jsonrpc` must be \"2.0\"");
    }
    match obj.get("method") {
        // A request's id may not be null (JSON-RPC discourages it, MCP forbids it).
        Some(_) if null_id => invalid(Value::Null, "`id` must be a string or an integer"),
        Some(Value::String(_)) => match obj.get("params") {
            None | Some(Value::Object(_)) => Verdict::Pass,
            Some(_) => invalid(id, "`params` must be an object"),
        },
        Some(_) => invalid(id, "`method` must be a string"),
        // A response to a request of the server's (it has a result or an error and an id).
        None if obj.contains_key("result") || obj.contains_key("error") => {
            if id.is_null() {
                Verdict::Unanswerable
            } else {
                Verdict::Pass
            }
        }
        None => invalid(
            id,
            "neither a request (`method`) nor a response (`result` or `error`)",
        ),
    }
}

/// One line read with a bound.
enum Line {
    /// A whole line (without its newline) is in the buffer; `true` when the stream ended
    /// without a newline after it.
    Whole(bool),
    /// The line was longer than the bound: its bytes were skipped, up to and including its
    /// newline.
    TooLong,
    /// The stream ended.
    End,
}

/// Read one `\n`-terminated line into `buf` (cleared first), never holding more than `max`
/// bytes of it: a longer line is skipped to its end as it streams in.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::End
            } else {
                Line::Whole(true)
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |i| i);
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        let consumed = newline.map_or(available.len(), |i| i + 1);
        reader.consume(consumed);
        if newline.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Whole(false)
            });
        }
    }
}

/// Write one JSON value as a line, whole, under the lock every writer of `out` takes.
async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    if !line.ends_with(b"\n") {
        out.write_all(b"\n").await?;
    }
    out.flush().await
}

/// Put Bureau's reading in front of a newline-delimited JSON-RPC stream pair: returns the
/// pair to give rmcp instead. Lines that pass [`check`] reach rmcp unchanged; the others are
/// answered on `writer` right away. rmcp's output goes to `writer` line by line, so an error
/// response never lands inside one of its messages. The two pumping tasks end when their
/// input ends (the client's stream, or rmcp's output when rmcp stops); the returned handle
/// stops the reading one (it may wait on a client that says nothing).
pub(crate) fn guard<R, W>(
    reader: R,
    writer: W,
) -> (
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    tokio::task::JoinHandle<()>,
    tokio::task::JoinHandle<()>,
)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    // Room for one whole message each way, so a pass never waits on a half-read line.
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let out = Arc::new(Mutex::new(writer));

    let out_in = out.clone();
    let inbound = tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        loop {
            let line = match read_line(&mut reader, &mut buf, MAX_MESSAGE_BYTES).await {
                Ok(Line::End) | Err(_) => break,
                Ok(line) => line,
            };
            let verdict = match line {
                Line::TooLong => Verdict::Reject(too_long()),
                _ => check(&buf),
            };
            let ok = match verdict {
                Verdict::Blank | Verdict::Unanswerable => true,
                Verdict::Pass => {
                    let mut sent = to_rmcp.write_all(&buf).await.is_ok();
                    sent = sent && to_rmcp.write_all(b"\n").await.is_ok();
                    sent && to_rmcp.flush().await.is_ok()
                }
                Verdict::Reject(response) => {
                    let text = response.to_string();
                    write_line(&out_in, text.as_bytes()).await.is_ok()
                }
            };
            if !ok || matches!(line, Line::Whole(true)) {
                break;
            }
        }
        // Dropping `to_rmcp` ends rmcp's input: it stops as on the client's end of stream.
        let _ = to_rmcp.shutdown().await;
    });

    let outbound = tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from_rmcp.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if write_line(&out, &line).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    (rmcp_in, rmcp_out, inbound, outbound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> (i64, Value) {
        match v {
            Verdict::Reject(r) => (r["error"]["code"].as_i64().unwrap_or(0), r["id"].clone()),
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[test]
    fn well_formed_messages_pass_and_blank_lines_are_skipped() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"s":"[[[{"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        ] {
            assert_eq!(check(ok.as_bytes()), Verdict::Pass, "{ok}");
        }
        assert_eq!(check(b"  \r"), Verdict::Blank);
        // A peer's error about something it could not parse is not answered back.
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
            Verdict::Unanswerable
        );
    }

    #[test]
    fn each_bad_message_gets_the_specs_error_with_the_id_when_known() {
        assert_eq!(code(&check(b"hello")), (PARSE_ERROR, Value::Null));
        assert_eq!(code(&check(b"{\"jsonrpc\":")), (PARSE_ERROR, Value::Null));
        assert_eq!(code(&check(b"[]")), (INVALID_REQUEST, Value::Null));
        assert_eq!(
            code(&check(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)),
            (INVALID_REQUEST, Value::Null)
        );
        assert_eq!(code(&check(b"42")), (INVALID_REQUEST, Value::Null));
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}"#
            )),
            (INVALID_REQUEST, json!(7))
        );
        assert_eq!(
            code(&check(
                br#"{"jsonrpc":"2.0","id":"q","method":"x","params":"s"}"#
            )),
            (INVALID_REQUEST, json!("q"))
        );
        assert_eq!(
            code(&check(br#"{"jsonrpc":"1.0","id":2,"method":"x"}"#)),
            (INVALID_REQUEST, json!(2))
        );
        assert_eq!(
            code(&check(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#)),
            (INVALID_REQUEST, Value::Null)
        );
        assert_eq!(
            code(&check(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#)),
            (INVALID_REQUEST, Value::Null)
        );
        assert_eq!(
            code(&check(br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#)),
            (INVALID_REQUEST, Value::Null)
        );
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert_eq!(
            code(&check(deep.as_bytes())),
            (INVALID_REQUEST, Value::Null)
        );
        let at_limit = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{}{}}}}}"#,
            "[".repeat(MAX_DEPTH - 2),
            "]".repeat(MAX_DEPTH - 2)
        );
        assert_eq!(check(at_limit.as_bytes()), Verdict::Pass);
        let big = vec![b'x'; MAX_MESSAGE_BYTES + 1];
        assert_eq!(code(&check(&big)), (INVALID_REQUEST, Value::Null));
    }

    #[tokio::test]
    async fn long_lines_are_skipped_without_being_held() {
        let mut input = vec![b'a'; 100];
        input.push(b'\n');
        input.extend_from_slice(b"ok\nlast");
        let mut reader = BufReader::with_capacity(16, &input[..]);
        let mut buf = Vec::new();
        assert!(matches!(
            read_line(&mut reader, &mut buf, 10).await.unwrap(),
            Line::TooLong
        ));
        assert!(buf.len() <= 10);
        assert!(matches!(
            read_line(&mut reader, &mut buf, 10).await.unwrap(),
            Line::Whole(false)
        ));
        assert_eq!(buf, b"ok");
        assert!(matches!(
            read_line(&mut reader, &mut buf, 10).await.unwrap(),
            Line::Whole(true)
        ));
        assert_eq!(buf, b"last");
        assert!(matches!(
            read_line(&mut reader, &mut buf, 10).await.unwrap(),
            Line::End
        ));
    }
}
