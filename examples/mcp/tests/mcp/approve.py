"""Approval over MCP on the official Python SDK: a destructive call asks the person at the
client (elicitation; the InputRequiredResult flow on 2026-07-28, an elicitation request on
the initialize handshake) and runs or is refused by the answer.

Usage: approve.py <auto|legacy> <url> <token> <approve|refuse>
Prints one JSON object with what it saw.
"""

import asyncio
import base64
import json
import sys

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def content_text(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main():
    mode, url, token, choice = sys.argv[1:5]
    asked = []

    async def on_elicit(context, params):
        asked.append({"message": params.message, "schema": params.requested_schema})
        if choice == "approve":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="accept", content={"approve": False, "reason": "not today"})

    report = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=on_elicit) as client:
            report["protocol"] = client.protocol_version
            arguments = {"path": f"approved-{mode}.txt", "content": "hello"}
            result = await client.call_tool("write_file", arguments)
            report["call"] = {"is_error": result.is_error, "text": content_text(result)}
            report["asked"] = asked
            if mode != "legacy" and choice == "approve":
                report["rounds"] = await by_hand(client, arguments)
    print(json.dumps(report))


async def by_hand(client, arguments):
    """The InputRequiredResult rounds driven by hand: a changed state runs nothing, a state
    of other arguments runs nothing, and a state is good for one call only."""
    session = client.session
    seen = {}
    first = await session.call_tool("write_file", arguments, allow_input_required=True)
    seen["first"] = type(first).__name__
    if not isinstance(first, types.InputRequiredResult):
        seen["first_result"] = {"is_error": first.is_error, "text": content_text(first)}
        return seen
    state = first.request_state
    key = next(iter(first.input_requests))
    seen["key"] = key
    answer = {key: {"action": "accept", "content": {"approve": True}}}
    payload, signature = state.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["caller"] = "someone-else"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=") + "." + signature
    for name, call_arguments, request_state in [
        ("tampered", arguments, forged),
        ("other_arguments", {"path": "elsewhere.txt", "content": "hello"}, state),
        ("genuine", arguments, state),
        ("replayed", arguments, state),
    ]:
        try:
            result = await session.call_tool(
                "write_file", call_arguments, input_responses=answer, request_state=request_state,
                allow_input_required=True,
            )
            if isinstance(result, types.CallToolResult):
                seen[name] = {"is_error": result.is_error, "text": content_text(result)}
            else:
                seen[name] = {"input_required": sorted(result.input_requests)}
        except MCPError as error:
            seen[name] = {"protocol_error": str(error)}
    return seen


asyncio.run(main())
