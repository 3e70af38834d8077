#!/usr/bin/env python3
"""A stand-in for a third-party harness, for crates/harness/tests/run_loop.rs.

    fake_harness.py --prompt-file FILE --mcp CONFIG --turn N [--resume=SESSION] [--log FILE]

It does what a real harness does with Bureau: reads the MCP configuration Bureau wrote (the
`mcpServers` JSON: URL and bearer token), calls world tools over streamable HTTP with the
official MCP Python SDK, and prints a Claude Code stream-json stream of what it did — one
native tool call (a `Bash` it "ran"), its MCP calls, assistant text, and a `result` with
usage, cost and its session id. On turn 2 it requires `--resume=<the session of turn 1>`.

The memo task's turns: turn 1 writes memo.md and mails Bob; turn 2 reads notes/budget.txt
and adds the total to memo.md.
"""

import argparse
import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

SESSION = "fake-session-0001"


def emit(obj):
    print(json.dumps(obj), flush=True)


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def work(url, headers, turn):
    hc = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0))
    calls = []
    async with hc:
        async with Client(streamable_http_client(url, http_client=hc)) as client:
            if turn == 1:
                plan = [
                    ("files_write", {"path": "memo.md", "content": "The meeting moved to Friday.\n"}),
                    ("mail_send", {"to": ["bob@corp.test"], "subject": "The meeting moved",
                                   "body": "It is on Friday now."}),
                ]
            else:
                plan = [("files_read", {"path": "notes/budget.txt"})]
            for name, args in plan:
                result = await client.call_tool(name, args)
                calls.append((name, args, result))
            if turn == 2:
                budget = text_of(calls[0][2])
                total = "12,500 EUR" if "12,500" in budget else "unknown"
                args = {"path": "memo.md", "old": "Friday.\n",
                        "new": f"Friday.\nBudget total: {total}.\n"}
                calls.append(("files_edit", args, await client.call_tool("files_edit", args)))
    return calls


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--prompt-file", required=True)
    p.add_argument("--mcp", required=True)
    p.add_argument("--turn", type=int, required=True)
    p.add_argument("--resume")
    p.add_argument("--log")
    a = p.parse_args()
    with open(a.prompt_file) as f:
        prompt = f.read()
    with open(a.mcp) as f:
        server = json.load(f)["mcpServers"]["bureau"]
    if a.log:
        with open(a.log, "a") as f:
            f.write(json.dumps({"turn": a.turn, "resume": a.resume, "cwd": os.getcwd(),
                                "prompt": prompt, "argv": sys.argv[1:],
                                "private_dir_mode": os.stat(os.path.dirname(a.mcp)).st_mode & 0o777})
                    + "\n")
    if a.turn > 1 and a.resume != SESSION:
        print(f"turn {a.turn} must resume {SESSION}, got {a.resume!r}", file=sys.stderr)
        sys.exit(3)

    emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
          "tools": ["Bash", "mcp__bureau__files_write"], "mcp_servers": [{"name": "bureau", "status": "connected"}],
          "model": "fake-model-1", "permissionMode": "default", "apiKeySource": "none"})
    emit({"type": "assistant", "session_id": SESSION, "parent_tool_use_id": None,
          "message": {"role": "assistant", "content": [{"type": "text", "text": f"Working on turn {a.turn}."}]}})
    emit({"type": "assistant", "session_id": SESSION, "parent_tool_use_id": None,
          "message": {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_bash_{a.turn}",
                                                          "name": "Bash", "input": {"command": "ls"}}]}})
    emit({"type": "user", "session_id": SESSION, "parent_tool_use_id": None,
          "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_bash_{a.turn}",
                                                    "content": "\n".join(sorted(os.listdir("."))), "is_error": False}]}})
    calls = asyncio.run(work(server["url"], server["headers"], a.turn))
    for i, (name, args, result) in enumerate(calls):
        tid = f"toolu_mcp_{a.turn}_{i}"
        emit({"type": "assistant", "session_id": SESSION, "parent_tool_use_id": None,
              "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid,
                                                              "name": f"mcp__bureau__{name}", "input": args}]}})
        emit({"type": "user", "session_id": SESSION, "parent_tool_use_id": None,
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                        "content": [{"type": "text", "text": text_of(result)}],
                                                        "is_error": bool(result.is_error)}]}})
    final = f"Turn {a.turn} done."
    emit({"type": "assistant", "session_id": SESSION, "parent_tool_use_id": None,
          "message": {"role": "assistant", "content": [{"type": "text", "text": final}]}})
    emit({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": final,
          "session_id": SESSION, "total_cost_usd": 0.25,
          "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 300,
                    "output_tokens": 40}})


if __name__ == "__main__":
    main()
