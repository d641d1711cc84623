#!/usr/bin/env python3
"""Drives `termhost mcp` with the official MCP Python SDK (the `mcp` package from PyPI) as an
outside agent would: its stdio client starts the server, its session initializes, lists tools,
calls them, answers elicitation and cancels. Prints what it saw, one JSON object per line, for
Tests/AssistantTests/MCPEndToEndTests.swift to check; this script asserts nothing itself.

    mcp_client.py TERMHOST SCENARIO HOST [DIR]

Scenarios:
  catalog  no elicitation: the tool list, list_hosts, a read-only ssh_exec with a progress
           token, a state-changing ssh_exec (Ask), sftp_write (set to deny by the test)
  elicit   with an elicitation callback that accepts a command containing "accept-me" and
           declines any other: two state-changing ssh_exec calls
  cancel   an ssh_exec of `sleep 30` abandoned after 2 s (the SDK sends notifications/cancelled),
           then a ping and list_hosts on the same session
The server's environment is this script's (the test sets XDG_*, TERMHOST_*, HOME).
"""
import json
import os
import sys
import time

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client


def emit(step, **fields):
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def call(session, step, name, arguments, **kwargs):
    result = await session.call_tool(name, arguments, **kwargs)
    emit(step, is_error=bool(result.is_error), text=text_of(result))
    return result


async def catalog(session, host, directory):
    listed = await session.list_tools()
    for tool in listed.tools:
        a = tool.annotations
        emit("tool", name=tool.name, read_only=a.read_only_hint, destructive=a.destructive_hint,
             idempotent=a.idempotent_hint, open_world=a.open_world_hint, description=tool.description,
             schema_type=tool.input_schema.get("type"))
    await call(session, "list_hosts", "list_hosts", {})
    progress = []

    async def on_progress(value, total, message):
        progress.append([value, message])

    await call(session, "read_only_exec", "ssh_exec", {"host": host, "command": "uname -s"},
               progress_callback=on_progress)
    emit("progress", notifications=progress)
    await call(session, "ask_exec", "ssh_exec", {"host": host, "command": f"touch {directory}/asked"})
    await call(session, "denied_write", "sftp_write", {"host": host, "path": f"{directory}/denied", "content": "x"})


async def elicit_scenario(session, host, directory):
    await call(session, "accepted", "ssh_exec", {"host": host, "command": f"touch {directory}/accept-me"})
    await call(session, "declined", "ssh_exec", {"host": host, "command": f"touch {directory}/declined"})


async def cancel_scenario(session, host):
    started = time.monotonic()
    with anyio.move_on_after(2):
        await session.call_tool("ssh_exec", {"host": host, "command": "sleep 30", "timeout_seconds": 60})
    emit("abandoned", seconds=round(time.monotonic() - started, 2))
    await session.send_ping()
    emit("ping", seconds=round(time.monotonic() - started, 2))
    await call(session, "list_hosts_after", "list_hosts", {})


async def main():
    termhost, scenario, host = sys.argv[1], sys.argv[2], sys.argv[3]
    directory = sys.argv[4] if len(sys.argv) > 4 else ""
    params = StdioServerParameters(command=termhost, args=["mcp"], env=dict(os.environ))
    asked = []

    async def on_elicit(context, params):
        asked.append(params.message)
        emit("elicitation", message=params.message, schema=params.requested_schema)
        if "accept-me" in params.message:
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    started = time.monotonic()
    async with stdio_client(params) as (read, write):
        kwargs = {"elicitation_callback": on_elicit} if scenario == "elicit" else {}
        async with ClientSession(read, write, **kwargs) as session:
            init = await session.initialize()
            emit("initialize", protocol=init.protocol_version, name=init.server_info.name,
                 tools=init.capabilities.tools is not None)
            if scenario == "catalog":
                await catalog(session, host, directory)
            elif scenario == "elicit":
                await elicit_scenario(session, host, directory)
            elif scenario == "cancel":
                await cancel_scenario(session, host)
            closing = time.monotonic()
    emit("closed", seconds=round(time.monotonic() - closing, 2), total=round(time.monotonic() - started, 2))


anyio.run(main)
