#!/usr/bin/env python3
"""A scripted Anthropic Messages API server, for the tests that run real harnesses
(crates/harness/tests/real_claude_code.rs).

    anthropic.py --script SCRIPT.json --port-file FILE --log REQUESTS.jsonl [--require-key K]

It listens on 127.0.0.1 (a free port, written to --port-file) and answers
`POST /v1/messages` (with or without `?beta=true`), streaming (SSE, as Claude Code asks) or
not, from a script: a JSON list of steps played in order, one per model call of the agent's
conversation:

    {"call": {"name": "files_write", "arguments": {...}}, "usage": {"input_tokens": 10, "output_tokens": 5}}
    {"text": "Done.", "usage": {...}}

A call names Bureau's tool; it is sent under the name the harness offers it as (the one tool
of the request whose name ends with `__<name>`, e.g. `mcp__bureau__files_write`). Requests
that offer no Bureau tool (a harness's side calls: titles, summaries, quota probes) get a
short text and use no step. When the script is spent, the server answers "Nothing left to
do." Every request is logged, one JSON object per line: path, headers of interest, body,
and which step answered it. Stdlib only.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


class State:
    def __init__(self, script, log, require_key=None):
        self.require_key = require_key
        self.script = script
        self.next = 0
        self.log = log
        self.calls = 0


def bureau_tool(tools, name):
    for t in tools or []:
        n = t.get("name", "")
        if n == name or n.endswith("__" + name):
            return n
    return None


def offers_bureau(tools):
    return any("bureau" in (t.get("name") or "") for t in tools or [])


def sse(handler, events):
    # No length and no chunking: the stream ends when the connection closes.
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.close_connection = True
    for ev in events:
        data = json.dumps(ev)
        handler.wfile.write(f"event: {ev['type']}\ndata: {data}\n\n".encode())
        handler.wfile.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *args):
        pass

    def reply_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/v1/models"):
            self.reply_json(200, {"data": [{"id": "claude-scripted", "type": "model",
                                            "display_name": "Scripted"}], "has_more": False})
        else:
            self.reply_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                             "message": self.path}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self.reply_json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                             "message": "body is not JSON"}})
            return
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            self.reply_json(200, {"input_tokens": 100})
            return
        if not path.endswith("/v1/messages"):
            self.reply_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                             "message": self.path}})
            return
        st = self.state
        if st.require_key and self.headers.get("x-api-key") != st.require_key:
            with LOCK, open(st.log, "a") as f:
                f.write(json.dumps({"path": self.path, "step": None, "refused": "key"}) + "\n")
            self.reply_json(401, {"type": "error", "error": {"type": "authentication_error",
                                                             "message": "invalid x-api-key"}})
            return
        tools = body.get("tools") or []
        with LOCK:
            step = None
            if offers_bureau(tools):
                if st.next < len(st.script):
                    step = st.script[st.next]
                    st.next += 1
                else:
                    step = {"text": "Nothing left to do."}
                index = st.next - 1
            else:
                index = None
            st.calls += 1
            n = st.calls
            with open(st.log, "a") as f:
                f.write(json.dumps({"path": self.path, "step": index, "body": body,
                                    "x-api-key": self.headers.get("x-api-key"),
                                    "authorization": self.headers.get("authorization")}) + "\n")
        model = body.get("model", "claude-scripted")
        if step is None:
            step = {"text": "Office work", "usage": {"input_tokens": 1, "output_tokens": 1}}
        usage = step.get("usage") or {"input_tokens": 1, "output_tokens": 1}
        blocks = []
        stop = "end_turn"
        if "call" in step:
            name = bureau_tool(tools, step["call"]["name"]) or step["call"]["name"]
            blocks.append({"type": "tool_use", "id": f"toolu_{n:04d}", "name": name,
                           "input": step["call"].get("arguments", {})})
            stop = "tool_use"
        else:
            blocks.append({"type": "text", "text": step.get("text", "")})
        msg_usage = {"input_tokens": usage.get("input_tokens", 0),
                     "output_tokens": usage.get("output_tokens", 0),
                     "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
                     "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0)}
        message = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": model,
                   "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": msg_usage}
        if not body.get("stream"):
            self.reply_json(200, message)
            return
        start = dict(message, content=[], stop_reason=None,
                     usage=dict(msg_usage, output_tokens=1))
        events = [{"type": "message_start", "message": start}]
        for i, b in enumerate(blocks):
            if b["type"] == "tool_use":
                events.append({"type": "content_block_start", "index": i,
                               "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                                 "input": {}}})
                events.append({"type": "content_block_delta", "index": i,
                               "delta": {"type": "input_json_delta",
                                         "partial_json": json.dumps(b["input"])}})
            else:
                events.append({"type": "content_block_start", "index": i,
                               "content_block": {"type": "text", "text": ""}})
                events.append({"type": "content_block_delta", "index": i,
                               "delta": {"type": "text_delta", "text": b["text"]}})
            events.append({"type": "content_block_stop", "index": i})
        events.append({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": {"output_tokens": msg_usage["output_tokens"]}})
        events.append({"type": "message_stop"})
        sse(self, events)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--script", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--require-key", help="answer 401 to requests without this x-api-key")
    a = p.parse_args()
    with open(a.script) as f:
        script = json.load(f)
    Handler.state = State(script, a.log, a.require_key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(a.port_file + ".tmp", a.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
