"""An external MCP server on the official Python SDK, for toolgate's MCP client tests.

Every call is recorded in the file named by CALLS_FILE, so the tests can see what reached it.
"""

import os
import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("lab")


def record(name: str) -> None:
    with open(os.environ["CALLS_FILE"], "a", encoding="utf-8") as calls:
        calls.write(name + "\n")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def echo(text: str, times: int = 1) -> str:
    """Repeat a text."""
    record("echo")
    return " ".join([text] * times)


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def wipe(target: str) -> str:
    """Wipe a target."""
    record("wipe")
    return f"wiped {target}"


@server.tool()
def crash() -> str:
    """Die at once."""
    record("crash")
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def hang() -> str:
    """Never answer."""
    record("hang")
    time.sleep(3600)
    return "late"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def fail() -> str:
    """Fail with a message."""
    record("fail")
    raise ValueError("the lab is closed")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def secret() -> str:
    """Not to be imported."""
    record("secret")
    return "secret"


if __name__ == "__main__":
    # Where the tests look for this process once its client is gone.
    if "PID_FILE" in os.environ:
        with open(os.environ["PID_FILE"], "w", encoding="utf-8") as pid:
            pid.write(str(os.getpid()))
    # What this process was started with, for the test of what a client passes on.
    if "ENV_FILE" in os.environ:
        with open(os.environ["ENV_FILE"], "w", encoding="utf-8") as names:
            names.write("\n".join(sorted(os.environ)))
    server.run("stdio")
