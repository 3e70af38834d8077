#!/usr/bin/env python3
"""A scripted model server speaking the OpenAI Responses API (SSE streaming), for tests that
run real harnesses (Codex CLI, OpenClaw) against Bureau with no model API.

    responses.py --script SCRIPT.json --port-file FILE [--log REQUESTS.jsonl]

Listens on 127.0.0.1, port 0 (the port is written to --port-file once it listens). Every
request is logged to --log, one JSON object a line: {"n", "method", "path", "headers" (no
authorization), "body"}. `POST /v1/responses` (also `/responses`) is answered from the script,
one step per request, in order:

    [{"call": {"name": "files_write", "arguments": {...}}, "usage": {...}},
     {"text": "Done.", "usage": {"input_tokens": 100, "cached_tokens": 20, "output_tokens": 7}}]

A step `{"http_error": {"status": 400, "message": "..."}}` answers with that HTTP error (an
OpenAI-style error body) instead. A call's `name` is the tool name as the harness exposes it; when no tool of the request has
that exact name, the one tool whose name ends with it after a separator (`__`, `_`, `.`, `-`,
`/`, `:`) is used (`files_write` matches OpenClaw's `bureau__files_write`), so one script
serves several harnesses. Tools inside a namespace (Codex offers an MCP server's tools as
`{"type": "namespace", "name": "mcp__bureau", "tools": [...]}`) are called with their
namespace (`"namespace": "mcp__bureau"` in the function call); `"ns.name"` picks one
explicitly. A request that finds the
script exhausted is answered with the text "(script exhausted)" and logged with
"exhausted": true. `stream: false` gets the whole response as one JSON object.

Other endpoints: `GET /v1/models` lists the models named in the script (`--model`, default
"scripted-model"); anything else is a 404 with an OpenAI-style error (and logged).
"""

import argparse
import gzip
import json
import os
import sys
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from scripted import SEPARATORS, State


def tool_names(body):
    """(namespace or None, name) of every function tool the request offers."""
    names = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            # Codex groups an MCP server's tools: {"type": "namespace", "name": "mcp__bureau",
            # "tools": [{"type": "function", "name": "files_write", ...}]}; a call names both.
            for inner in t.get("tools") or []:
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    names.append((t.get("name"), inner["name"]))
            continue
        name = t.get("name") or (t.get("function") or {}).get("name")
        if isinstance(name, str):
            names.append((None, name))
    return names


def resolve(name, available):
    """The (namespace, name) the script's tool `name` stands for among `available`."""
    if "." in name and "/" not in name:
        ns, _, inner = name.rpartition(".")
        if (ns, inner) in available:
            return ns, inner
    exact = [a for a in available if a[1] == name]
    if exact:
        return exact[0]
    ends = [a for a in available if any(a[1].endswith(sep + name) for sep in SEPARATORS)]
    if len(ends) == 1:
        return ends[0]
    return None, name


def usage_of(step):
    u = step.get("usage") or {}
    inp = int(u.get("input_tokens", 100))
    cached = int(u.get("cached_tokens", 0))
    out = int(u.get("output_tokens", 10))
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out,
    }


def build(step, n, body, model):
    """The response's output items and usage for one script step."""
    if step is None:
        step = {"text": "(script exhausted)"}
    if "call" in step:
        call = step["call"]
        namespace, name = resolve(call["name"], tool_names(body))
        args = call.get("arguments", {})
        args_text = args if isinstance(args, str) else json.dumps(args)
        item = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": name,
            "arguments": args_text,
            "status": "completed",
        }
        if namespace:
            item["namespace"] = namespace
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": step.get("text", ""), "annotations": []}],
        }
    response = {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model") or model,
        "output": [item],
        "usage": usage_of(step),
    }
    return item, response


def sse_events(item, response):
    seq = 0

    def ev(kind, **fields):
        nonlocal seq
        seq += 1
        return {"type": kind, "sequence_number": seq, **fields}

    started = dict(response, status="in_progress", output=[], usage=None)
    yield ev("response.created", response=started)
    yield ev("response.in_progress", response=started)
    if item["type"] == "function_call":
        yield ev("response.output_item.added", output_index=0,
                 item=dict(item, arguments="", status="in_progress"))
        yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=0,
                 delta=item["arguments"])
        yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=0,
                 arguments=item["arguments"])
    else:
        text = item["content"][0]["text"]
        yield ev("response.output_item.added", output_index=0,
                 item=dict(item, content=[], status="in_progress"))
        part = {"type": "output_text", "text": "", "annotations": []}
        yield ev("response.content_part.added", item_id=item["id"], output_index=0,
                 content_index=0, part=part)
        yield ev("response.output_text.delta", item_id=item["id"], output_index=0,
                 content_index=0, delta=text)
        yield ev("response.output_text.done", item_id=item["id"], output_index=0,
                 content_index=0, text=text)
        yield ev("response.content_part.done", item_id=item["id"], output_index=0,
                 content_index=0, part=dict(part, text=text))
    yield ev("response.output_item.done", output_index=0, item=item)
    yield ev("response.completed", response=response)


def make_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: the JSONL log is the record
            pass

        def read_body(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            enc = (self.headers.get("Content-Encoding") or "").lower()
            if enc == "gzip":
                raw = gzip.decompress(raw)
            elif enc == "deflate":
                raw = zlib.decompress(raw)
            elif enc == "zstd":
                try:
                    import zstandard  # not in the standard library
                except ImportError:
                    return None, "zstd request body (install zstandard to read it)"
                raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=1 << 26)
            if not raw:
                return {}, None
            try:
                return json.loads(raw), None
            except ValueError as e:
                return None, f"body is not JSON: {e}"

        def headers_logged(self):
            return {k: v for k, v in self.headers.items()
                    if k.lower() not in ("authorization", "api-key", "x-api-key")}

        def send_json(self, status, obj):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            path = self.path.split("?")[0].rstrip("/")
            state.log({"method": "GET", "path": self.path, "headers": self.headers_logged()})
            if path.endswith("/models"):
                self.send_json(200, {"object": "list", "data": [
                    {"id": state.model, "object": "model", "created": 0, "owned_by": "bureau"}],
                    "models": []})
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}",
                                               "type": "invalid_request_error"}})

        def do_POST(self):
            path = self.path.split("?")[0].rstrip("/")
            body, problem = self.read_body()
            if body is None:
                state.log({"method": "POST", "path": self.path,
                           "headers": self.headers_logged(), "error": problem})
                self.send_json(400, {"error": {"message": problem,
                                               "type": "invalid_request_error"}})
                return
            if not path.endswith("/responses"):
                state.log({"method": "POST", "path": self.path,
                           "headers": self.headers_logged(), "body": body})
                self.send_json(404, {"error": {"message": f"no route {self.path}",
                                               "type": "invalid_request_error"}})
                return
            step, n = state.take()
            record = {"method": "POST", "path": self.path, "headers": self.headers_logged(),
                      "body": body, "step": n if step is not None else None}
            if step is None:
                record["exhausted"] = True
            state.log(record)
            if step is not None and "http_error" in step:
                err = step["http_error"]
                self.send_json(int(err.get("status", 400)), {"error": {
                    "message": err.get("message", "scripted error"),
                    "type": "invalid_request_error", "code": None, "param": None}})
                return
            item, response = build(step, n if step is not None else n + 1000, body, state.model)
            if not body.get("stream"):
                self.send_json(200, response)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for event in sse_events(item, response):
                    self.wfile.write(
                        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--script", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log")
    p.add_argument("--model", default="scripted-model")
    a = p.parse_args()
    with open(a.script, encoding="utf-8") as f:
        steps = json.load(f)
    if not isinstance(steps, list):
        sys.exit("the script must be a JSON list of steps")
    state = State(steps, a.log, a.model)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, a.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
