"""An MCP client on the official Python SDK, driving a toolgate server.

Usage: client.py stdio <server command> [args...]   |   client.py http <url> [token]
Prints one JSON object with what it saw.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def content_text(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def exercise(client):
    report = {}
    info = client.server_info
    report["server_info"] = info.model_dump(exclude_none=True) if info else None
    listed, cursor, pages = [], None, 0
    while True:
        page = await client.list_tools(cursor=cursor)
        if pages == 0:
            report["list_cache"] = {
                "ttl_ms": getattr(page, "ttl_ms", None),
                "cache_scope": getattr(page, "cache_scope", None),
            }
        listed.extend(page.tools)
        pages += 1
        cursor = page.next_cursor
        if not cursor:
            break
    report["pages"] = pages

    class Listing:
        tools = listed

    tools = Listing
    report["tools"] = sorted(tool.name for tool in tools.tools)
    report["annotations"] = {
        tool.name: tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
        for tool in tools.tools
    }
    report["output_schemas"] = {
        tool.name: tool.output_schema for tool in tools.tools if tool.output_schema is not None
    }
    added = await client.call_tool("add", {"a": 2, "b": 40})
    report["add"] = {"is_error": added.is_error, "text": content_text(added), "structured": added.structured_content}
    who = await client.call_tool("whoami", {})
    report["whoami"] = content_text(who)
    invalid = await client.call_tool("add", {"a": "two", "b": 40})
    report["invalid"] = {"is_error": invalid.is_error, "text": content_text(invalid)}
    if "slow_count" in report["tools"]:
        heard = []

        async def on_progress(progress, total, message):
            heard.append([progress, total, message])

        counted = await client.call_tool("slow_count", {"n": 3}, progress_callback=on_progress)
        report["progress"] = {"heard": heard, "result": content_text(counted)}
    if "reverse_text" in report["tools"]:
        too_long = await client.call_tool("reverse_text", {"text": "x" * 500})
        report["too_long"] = {"is_error": too_long.is_error, "text": content_text(too_long)}
    if "task_from_file" in report["tools"]:
        made = await client.call_tool("task_from_file", {"path": "todo.txt"})
        report["workflow"] = {"is_error": made.is_error, "structured": made.structured_content, "text": content_text(made)}
    for name in ["no_such_tool", "reverse_text", "get_device_info"]:
        if name in report["tools"]:
            continue
        try:
            await client.call_tool(name, {})
            report.setdefault("unknown", {})[name] = "answered"
        except MCPError as error:
            report.setdefault("unknown", {})[name] = f"protocol error: {error}"
    return report


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        # The server gets this process's environment (its sandbox and task database), not
        # the SDK's minimal default.
        server = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=dict(os.environ))
        async with Client(server) as client:
            report = await exercise(client)
    else:
        url = sys.argv[2]
        headers = {"Authorization": f"Bearer {sys.argv[3]}"} if len(sys.argv) > 3 else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                report = await exercise(client)
    print(json.dumps(report))


asyncio.run(main())
