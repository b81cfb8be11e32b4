"""Calls one tool of a toolgate MCP server with the official Python SDK, carrying a W3C
trace context in the request's `_meta`.

Usage: traced_call.py <url> <token> <mode> <traceparent> <tool>
  mode: "legacy" (the initialize handshake) or a protocol version such as "2026-07-28".
Prints one JSON object: {"is_error": bool, "text": "..."} or {"error": "..."}.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main():
    url, token, mode, traceparent, tool = sys.argv[1:6]
    try:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:
                result = await client.call_tool(tool, {}, meta={"traceparent": traceparent})
        text = "".join(b.text for b in result.content if getattr(b, "type", "") == "text")
        report = {"is_error": bool(result.is_error), "text": text}
    except BaseException as error:
        report = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(report), flush=True)


asyncio.run(main())
