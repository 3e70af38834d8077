#!/usr/bin/env python3
"""A scripted model server speaking the OpenAI Chat Completions API (SSE streaming), for tests
that run real harnesses (OpenHands, Hermes) against Bureau with no model API.

    chat.py --script SCRIPT.json --port-file FILE [--log REQUESTS.jsonl] [--model M]

Listens on 127.0.0.1, port 0 (the port is written to --port-file once it listens). Every
request is logged to --log, one JSON object a line: {"n", "method", "path", "headers" (no
authorization), "body"}. `POST /v1/chat/completions` (also `/chat/completions`) is answered
from the script, one step per request, in order (the same steps as responses.py; the script state is shared, in scripted.py):

    [{"call": {"name": "files_write", "arguments": {...}}, "usage": {...}},
     {"text": "Done.", "usage": {"input_tokens": 100, "cached_tokens": 20, "output_tokens": 7}}]

A step `{"http_error": {"status": 400, "message": "..."}}` answers with that HTTP error (an
OpenAI-style error body) instead; a step `{"sleep": 120}` answers only after that many seconds
(a model call that hangs, for a harness's wall-clock limit), with the text "(woke up)". A call's `name` is the tool name as the harness exposes it;
when no tool of the request has that exact name, the one tool whose name ends with it after a
separator (`__`, `_`, `.`, `-`, `/`, `:`) is used (`files_write` matches Hermes's
`mcp_bureau_files_write`), so one script serves several harnesses. A request that finds the
script exhausted is answered with the text "(script exhausted)" and logged with
"exhausted": true. `stream: false` gets the whole completion as one JSON object; a streamed
answer ends with a usage chunk (`choices: []`) whatever `stream_options` says, then
`data: [DONE]`.

Requests that are not model calls do not take a step: a request offering no tools whose last
message asks for a title or a summary (`--aux-marker`, default: "title") is answered with the
text "Scripted title" and logged with "aux": true.

Other endpoints: `GET /v1/models` lists `--model` (default "scripted-model"), with `--pricing`
(a JSON object of US dollars per token, OpenRouter's shape: `{"prompt": "0.0000025",
"completion": "0.00001", "cache_read": "0.00000125"}`) as its `pricing` when given — which
Hermes reads to price a custom endpoint's usage; anything else is a 404 with an OpenAI-style
error (and logged).
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
    names = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        name = (t.get("function") or {}).get("name") or t.get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def resolve(name, available):
    """The tool name the script's `name` stands for among `available`."""
    if name in available:
        return name
    ends = [a for a in available if any(a.endswith(sep + name) for sep in SEPARATORS)]
    if len(ends) == 1:
        return ends[0]
    return name


def usage_of(step):
    u = step.get("usage") or {}
    inp = int(u.get("input_tokens", 100))
    cached = int(u.get("cached_tokens", 0))
    out = int(u.get("output_tokens", 10))
    return {
        "prompt_tokens": inp,
        "completion_tokens": out,
        "total_tokens": inp + out,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def build(step, n, body, model):
    """The assistant message, finish reason and usage of one script step."""
    if step is None:
        step = {"text": "(script exhausted)"}
    if "call" in step:
        call = step["call"]
        name = resolve(call["name"], tool_names(body))
        args = call.get("arguments", {})
        args_text = args if isinstance(args, str) else json.dumps(args)
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": args_text},
            }],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": step.get("text", "")}
        finish = "stop"
    return message, finish, usage_of(step)


def completion(message, finish, usage, n, model):
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish,
                     "logprobs": None}],
        "usage": usage,
    }


def chunks(message, finish, usage, n, model):
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta, finish_reason=None):
        return dict(base, choices=[{"index": 0, "delta": delta,
                                    "finish_reason": finish_reason, "logprobs": None}])

    yield chunk({"role": "assistant", "content": ""})
    if message.get("tool_calls"):
        for i, tc in enumerate(message["tool_calls"]):
            yield chunk({"tool_calls": [{"index": i, "id": tc["id"], "type": "function",
                                         "function": {"name": tc["function"]["name"],
                                                      "arguments": ""}}]})
            yield chunk({"tool_calls": [{"index": i, "function": {
                "arguments": tc["function"]["arguments"]}}]})
    else:
        yield chunk({"content": message["content"]})
    yield chunk({}, finish)
    yield dict(base, choices=[], usage=usage)


def is_aux(body, marker):
    """A side request (a title, a summary) rather than the agent's model call."""
    if body.get("tools"):
        return False
    msgs = body.get("messages") or []
    text = json.dumps(msgs[-1:] + msgs[:1]).lower() if msgs else ""
    return marker.lower() in text


def make_handler(state, aux_marker):
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
            # Only the OpenAI listing: a 200 on `/api/v1/models` would make Hermes take the
            # server for LM Studio (and read another listing).
            if path in ("/v1/models", "/models"):
                entry = {"id": state.model, "object": "model", "created": 0, "owned_by": "bureau"}
                if state.pricing:
                    entry["pricing"] = state.pricing
                self.send_json(200, {"object": "list", "data": [entry]})
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}",
                                               "type": "invalid_request_error"}})

        def answer(self, body, message, finish, usage, n):
            model = body.get("model") or state.model
            if not body.get("stream"):
                self.send_json(200, completion(message, finish, usage, n, model))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for c in chunks(message, finish, usage, n, model):
                    self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

        def do_POST(self):
            path = self.path.split("?")[0].rstrip("/")
            body, problem = self.read_body()
            if body is None:
                state.log({"method": "POST", "path": self.path,
                           "headers": self.headers_logged(), "error": problem})
                self.send_json(400, {"error": {"message": problem,
                                               "type": "invalid_request_error"}})
                return
            if not path.endswith("/chat/completions"):
                state.log({"method": "POST", "path": self.path,
                           "headers": self.headers_logged(), "body": body})
                self.send_json(404, {"error": {"message": f"no route {self.path}",
                                               "type": "invalid_request_error"}})
                return
            if is_aux(body, aux_marker):
                n = state.log({"method": "POST", "path": self.path,
                               "headers": self.headers_logged(), "body": body, "aux": True})
                self.answer(body, {"role": "assistant", "content": "Scripted title"}, "stop",
                            usage_of({"usage": {"input_tokens": 0, "output_tokens": 0}}),
                            n + 2000)
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
            if step is not None and "sleep" in step:
                time.sleep(float(step["sleep"]))
                step = {"text": "(woke up)"}
            message, finish, usage = build(step, n, body, state.model)
            self.answer(body, message, finish, usage, n if step is not None else n + 1000)

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--script", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log")
    p.add_argument("--model", default="scripted-model")
    p.add_argument("--aux-marker", default="title")
    p.add_argument("--pricing", type=json.loads)
    a = p.parse_args()
    with open(a.script, encoding="utf-8") as f:
        steps = json.load(f)
    if not isinstance(steps, list):
        sys.exit("the script must be a JSON list of steps")
    state = State(steps, a.log, a.model, a.pricing)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state, a.aux_marker))
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
