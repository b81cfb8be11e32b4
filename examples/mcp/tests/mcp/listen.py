"""Listens for tool list changes on a toolgate server over Streamable HTTP, the way a
protocol 2026-07-28 client does (`subscriptions/listen`).

Usage: listen.py <url> [token]
Prints `listening` once the server has acknowledged the subscription and, after the first
change event, one JSON object: the acknowledged filter, the event and the tools listed then.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main():
    url = sys.argv[1]
    headers = {"Authorization": f"Bearer {sys.argv[2]}"} if len(sys.argv) > 2 else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            async with client.listen(tools_list_changed=True) as subscription:
                print("listening", flush=True)
                async with asyncio.timeout(60):
                    event = await anext(aiter(subscription))
                tools = await client.list_tools()
                report = {
                    "protocol": client.session.protocol_version,
                    "honored": subscription.honored.model_dump(by_alias=True, exclude_none=True),
                    "event": type(event).__name__,
                    "tools": sorted(tool.name for tool in tools.tools),
                }
    print(json.dumps(report), flush=True)


asyncio.run(main())
