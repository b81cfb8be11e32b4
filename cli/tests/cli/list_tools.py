"""Lists a toolgate MCP server's tools with the official Python SDK.

Usage: list_tools.py http <url> <token>  |  list_tools.py stdio <command> [args...]
Prints one JSON object: {"tools": [names...]} or {"error": "..."}.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client, StdioServerParameters


async def listed(client):
    tools = await client.list_tools()
    called = await client.call_tool("hello", {}) if any(t.name == "hello" for t in tools.tools) else None
    text = "".join(b.text for b in called.content if getattr(b, "type", "") == "text") if called else None
    return {"tools": sorted(t.name for t in tools.tools), "hello": text}


def describe(error):
    """The innermost errors' types and messages (task groups wrap them)."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions)
    return f"{type(error).__name__}: {error}"


async def main():
    try:
        if sys.argv[1] == "http":
            from mcp.client.streamable_http import streamable_http_client

            headers = {"Authorization": f"Bearer {sys.argv[3]}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                async with Client(streamable_http_client(sys.argv[2], http_client=http)) as client:
                    report = await listed(client)
        else:
            params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
            async with Client(params) as client:
                report = await listed(client)
    except BaseException as error:  # the refusal of a bad token is what some cases check
        report = {"error": describe(error)}
    print(json.dumps(report), flush=True)


asyncio.run(main())
