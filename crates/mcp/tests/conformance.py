#!/usr/bin/env python3
"""Bureau's MCP server, checked with a client nobody here wrote: the official Python MCP SDK.

Run by crates/mcp/tests/conformance.rs, which builds the worlds and starts the servers:

    python3 conformance.py <spec.json>

spec.json:
    {
      "world_tools": [{"name", "description", "input_schema"}, ...],   # World::tool_specs()
      "play_tools": ["task_prompt", "task_next_turn", "task_finish"],
      "stdio": {"command": "...", "args": [...]},                       # bureau mcp --task <dir>
      "http": [{"url", "token"}, {"url", "token"}],                     # two trials' endpoints
      "bridge": {"command": "...", "args": [...], "env": {...}}         # bureau mcp --trial <url>
    }

Both worlds are the same small task (the test's memo task): its workspace has readme.txt,
the user is ada@corp.test. Over each transport the script lists the tools and compares them
with World::tool_specs, then calls every tool with arguments that succeed (and a few that must
fail as tool errors). Over stdio it also plays the task through task_prompt, task_next_turn
and task_finish. Over HTTP it checks that a missing or wrong token, and one trial's token on the
other trial's endpoint, are refused with 401 before MCP is reached. HTTP is exercised in both
of the SDK's connection modes: "auto" (the 2026-07-28 protocol where the server offers it) and
"legacy" (the initialize handshake and an MCP session). Last, the stdio bridge to the first
trial's endpoint lists the tools and makes two calls.

It prints one JSON report on stdout and exits 0, or prints what failed on stderr and exits 1.
"""

import base64
import asyncio
import json
import sys
import urllib.error
import urllib.request

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


# The spec file, for checks deep in the call plans.
SPEC = {}


class Failed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failed(what)


def text_of(result):
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return "\n".join(texts)


# Every world tool, called once with arguments that succeed in the memo task's world, in an
# order where later calls use what earlier ones made (the sent message's id, the event's uid).
# A world tool missing here fails the run: add a call for it.
PLAN = [
    ("files_list", lambda s: {}),
    ("files_read", lambda s: {"path": "readme.txt"}),
    ("files_write", lambda s: {"path": "memo.md", "content": "The meeting moved to Thursday.\n"}),
    ("files_edit", lambda s: {"path": "memo.md", "old": "Thursday", "new": "Friday"}),
    ("files_search", lambda s: {"query": "friday"}),
    ("files_move", lambda s: {"from": "memo.md", "to": "drafts/memo.md"}),
    ("files_delete", lambda s: {"path": "drafts", "recursive": True}),
    ("files_write_docx", lambda s: {"path": "out/memo.docx", "blocks": [
        {"type": "heading", "level": 1, "text": "Meeting"},
        {"type": "paragraph", "text": "It moved to Friday."},
        {"type": "table", "rows": [["day", "room"], ["Friday", "2"]]},
    ]}),
    ("files_export_pdf", lambda s: {"source": "out/memo.docx", "path": "out/memo.pdf"}),
    ("files_edit_docx", lambda s: {"path": "out/memo.docx", "operations": [
        {"op": "insert", "after": 1, "text": "Bring the slides.", "style": "List Bullet"},
        {"op": "set_cell", "block": 2, "row": 1, "col": 1, "text": "3"},
        {"op": "append_row", "block": 2, "cells": ["Monday", "4"]},
    ]}),
    ("files_set_cells", lambda s: {"path": "out/budget.xlsx", "cells": {"A1": "Total", "B1": 12500, "B2": "=B1*2"}}),
    ("files_pdf_to_docx", lambda s: {"source": "out/memo.pdf", "path": "out/memo-text.docx"}),
    ("files_image_to_pdf", lambda s: {"source": "pixel.png", "path": "out/pixel.pdf"}),
    ("mail_folders", lambda s: {}),
    ("mail_send", lambda s: {
        "to": ["bob@corp.test"],
        "subject": "The meeting moved",
        "body": "It is on Friday now.",
        "attachments": ["readme.txt"],
    }),
    ("mail_list", lambda s: {"folder": "Sent"}),
    ("mail_search", lambda s: {"query": "meeting"}),
    ("mail_read", lambda s: {"id": s["sent"]}),
    ("mail_mark_read", lambda s: {"id": s["sent"], "read": False}),
    ("mail_read_attachment", lambda s: {"id": s["sent"], "filename": "readme.txt"}),
    ("mail_save_attachment", lambda s: {"id": s["sent"], "filename": "readme.txt", "path": "copy/readme.txt"}),
    ("mail_reply", lambda s: {"id": s["sent"], "body": "A note to self."}),
    ("mail_forward", lambda s: {"id": s["sent"], "to": ["carol@corp.test"], "body": "FYI"}),
    ("mail_move", lambda s: {"id": s["sent"], "folder": "Archive"}),
    ("calendar_create", lambda s: {
        "summary": "Planning",
        "start": "2026-03-06T10:00:00",
        "end": "2026-03-06T11:00:00",
    }),
    ("calendar_update", lambda s: {"uid": s["uid"], "location": "Room 2"}),
    ("calendar_invite", lambda s: {"uid": s["uid"], "attendees": ["bob@corp.test"]}),
    ("calendar_list", lambda s: {"from": "2026-03-02T00:00:00", "to": "2026-03-09T00:00:00"}),
    ("calendar_free_slots", lambda s: {
        "from": "2026-03-06T09:00:00",
        "to": "2026-03-06T17:00:00",
        "duration_minutes": 30,
    }),
    ("calendar_delete", lambda s: {"uid": s["uid"]}),
    ("calendar_respond", lambda s: {"uid": "standup@corp.test", "response": "accepted"}),
]

# Calls that must come back as tool errors (isError), not protocol errors.
BAD_CALLS = [
    ("files_read", {"path": "../outside.txt"}),
    ("files_read", {"path": "no-such-file.txt"}),
    ("files_read", {"path": "readme.txt", "surprise": 1}),
    ("files_edit_docx", {"path": "out/memo.docx", "operations": [{"op": "delete", "block": 99}]}),
    ("mail_read", {"id": "m99999"}),
    ("no_such_tool", {}),
]


def check_tool_list(listed, spec, extra):
    by_name = {t.name: t for t in listed}
    expect(len(by_name) == len(listed), "tools/list has duplicate names")
    want = [t["name"] for t in spec["world_tools"]] + list(extra)
    expect(sorted(by_name) == sorted(want),
           f"tools/list gives {sorted(by_name)}, World::tool_specs (+ play tools) is {sorted(want)}")
    for t in spec["world_tools"]:
        got = by_name[t["name"]]
        expect(got.description == t["description"], f"{t['name']}: description differs")
        expect(got.input_schema == t["input_schema"],
               f"{t['name']}: input schema differs: {got.input_schema} != {t['input_schema']}")
    planned = {name for name, _ in PLAN}
    unplanned = sorted(set(t["name"] for t in spec["world_tools"]) - planned)
    expect(not unplanned, f"no conformance call planned for {unplanned}: add them to PLAN")


async def call_every_tool(client, report):
    state = {}
    calls = {}
    for name, args_of in PLAN:
        args = args_of(state)
        result = await client.call_tool(name, args)
        text = text_of(result)
        expect(result.is_error is False or result.is_error is None,
               f"{name}({args}) failed: {text}")
        expect(isinstance(result.structured_content, dict),
               f"{name}: no structured content (got {result.structured_content!r})")
        expect(text.strip() != "", f"{name}: no readable text content")
        if name == "mail_send":
            state["sent"] = result.structured_content["id"]
        if name == "calendar_create":
            state["uid"] = result.structured_content["uid"]
        calls[name] = {"args": args, "structured": result.structured_content, "text": text}
    report["calls"] = calls
    # Pictures and sounds come as MCP image / audio content beside the text, byte for byte.
    media = []
    for want in SPEC["media"]:
        result = await client.call_tool("files_read", {"path": want["path"]})
        parts = [c for c in result.content if getattr(c, "type", None) == want["type"]]
        expect(len(parts) == 1, f"files_read {want['path']}: {len(parts)} {want['type']} parts in {result.content!r}")
        expect(parts[0].mime_type == want["mime"], f"{want['path']}: mimeType {parts[0].mime_type}")
        expect(base64.b64decode(parts[0].data) == base64.b64decode(want["data"]),
               f"{want['path']}: the {want['type']} bytes differ from the file's")
        expect(text_of(result).strip() != "", f"{want['path']}: no text description beside the media")
        media.append({"path": want["path"], "type": want["type"], "mime": parts[0].mime_type,
                      "bytes": len(base64.b64decode(parts[0].data))})
    report["media"] = media
    errors = []
    for name, args in BAD_CALLS:
        result = await client.call_tool(name, args)
        text = text_of(result)
        expect(result.is_error is True, f"{name}({args}) should be a tool error, got: {text}")
        expect(text.strip() != "", f"{name}({args}): a tool error without a message")
        errors.append({"tool": name, "args": args, "text": text})
    report["tool_errors"] = errors


async def over_stdio(spec):
    report = {}
    params = StdioServerParameters(command=spec["stdio"]["command"], args=spec["stdio"]["args"])
    async with Client(params) as client:
        report["protocol_version"] = client.session.protocol_version
        listed = (await client.list_tools()).tools
        check_tool_list(listed, spec, spec["play_tools"])
        report["tools"] = [t.name for t in listed]

        prompt = await client.call_tool("task_prompt", {})
        expect(not prompt.is_error, f"task_prompt: {text_of(prompt)}")
        expect(prompt.structured_content["turn"] == 1, f"task_prompt: {prompt.structured_content}")
        report["turn_1"] = prompt.structured_content

        await call_every_tool(client, report)

        nxt = await client.call_tool("task_next_turn", {})
        expect(not nxt.is_error, f"task_next_turn: {text_of(nxt)}")
        expect(nxt.structured_content["turn"] == 2, f"task_next_turn: {nxt.structured_content}")
        report["turn_2"] = nxt.structured_content

        # Turn 2's event brought notes/budget.txt.
        budget = await client.call_tool("files_read", {"path": "notes/budget.txt"})
        expect(not budget.is_error, f"turn 2: files_read notes/budget.txt: {text_of(budget)}")
        last = await client.call_tool("task_next_turn", {})
        expect(last.is_error is True, "task_next_turn on the last turn should be refused")
        report["next_turn_on_last"] = text_of(last)

        finish = await client.call_tool("task_finish", {})
        expect(not finish.is_error, f"task_finish: {text_of(finish)}")
        report["finish"] = finish.structured_content

        after = await client.call_tool("files_list", {})
        expect(after.is_error is True, "a world tool after task_finish should be refused")
        report["after_finish"] = text_of(after)
    return report


def leaf_exceptions(e):
    """The innermost exceptions of an exception group (and their causes)."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaf_exceptions(sub)]
    chain = [e]
    while chain[-1].__cause__ is not None or chain[-1].__context__ is not None:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    return chain


def raw_post(url, token):
    """POST an MCP initialize with `token` (None: no Authorization); the HTTP status."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "conformance", "version": "0"}},
    }).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def http_client(endpoint, mode):
    hc = httpx2.AsyncClient(headers={"Authorization": f"Bearer {endpoint['token']}"},
                            timeout=httpx2.Timeout(30.0, read=60.0))
    return hc, Client(streamable_http_client(endpoint["url"], http_client=hc), mode=mode)


async def over_http(spec):
    a, b = spec["http"]
    report = {"refusals": {}}
    statuses = {
        "no_token": raw_post(a["url"], None),
        "wrong_token": raw_post(a["url"], "0" * len(a["token"])),
        "other_trials_token": raw_post(a["url"], b["token"]),
        "this_token_on_other_trial": raw_post(b["url"], a["token"]),
    }
    for what, status in statuses.items():
        expect(status == 401, f"HTTP {what}: expected 401, got {status}")
    report["refusals"]["raw_statuses"] = statuses
    expect(raw_post(a["url"], a["token"]) == 200, "HTTP with the right token is not accepted")

    # The SDK client itself must fail to connect with a wrong token.
    wrong = {"url": a["url"], "token": b["token"]}
    hc, client = http_client(wrong, "auto")
    try:
        async with hc:
            async with client:
                await client.list_tools()
        raise Failed("the SDK client connected with another trial's token")
    except Failed:
        raise
    except BaseException as e:  # the SDK raises its own error types (or an exception group)
        # The SDK reports a non-2xx answer without its status; the raw posts above checked 401.
        leaves = "; ".join(f"{type(x).__name__}: {x}" for x in leaf_exceptions(e))
        report["refusals"]["sdk_client_error"] = leaves[:500]

    for mode in ("auto", "legacy"):
        part = {}
        hc, client = http_client(a, mode)
        async with hc:
            async with client:
                part["protocol_version"] = client.session.protocol_version
                listed = (await client.list_tools()).tools
                check_tool_list(listed, spec, [])
                part["tools"] = [t.name for t in listed]
                if mode == "auto":
                    await call_every_tool(client, part)
                else:
                    r = await client.call_tool("files_read", {"path": "readme.txt"})
                    expect(not r.is_error, f"legacy mode files_read: {text_of(r)}")
                    part["files_read"] = r.structured_content
        report[mode] = part
    return report


async def over_bridge(spec):
    """`bureau mcp --trial <url>`: stdio for the client, the trial's HTTP endpoint behind it."""
    report = {}
    bridge = spec["bridge"]
    params = StdioServerParameters(command=bridge["command"], args=bridge["args"], env=bridge["env"])
    async with Client(params) as client:
        report["protocol_version"] = client.session.protocol_version
        listed = (await client.list_tools()).tools
        check_tool_list(listed, spec, [])
        report["tools"] = [t.name for t in listed]
        ok = await client.call_tool("files_read", {"path": "readme.txt"})
        expect(not ok.is_error, f"bridge files_read: {text_of(ok)}")
        expect(ok.structured_content["path"] == "readme.txt", f"bridge: {ok.structured_content}")
        bad = await client.call_tool("files_read", {"path": "no-such-file.txt"})
        expect(bad.is_error is True, "bridge: a tool error should stay a tool error")
        report["calls"] = {"files_read": ok.structured_content, "error": text_of(bad)}
    return report


async def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    SPEC.update(spec)
    report = {}
    report["stdio"] = await over_stdio(spec)
    report["http"] = await over_http(spec)
    report["bridge"] = await over_bridge(spec)
    json.dump(report, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Failed as e:
        print(f"conformance failed: {e}", file=sys.stderr)
        sys.exit(1)
