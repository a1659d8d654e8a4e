"""An MCP client session against `hippo mcp` (the official SDK's stdio client)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fake_embedder import SPEC as FAKE
from hippo.surfaces.mcp_server import TOOL_NAME


def mcp_params(root: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "hippo", "mcp"], cwd=str(root),
        env={"HIPPO_MODEL": FAKE, "HIPPO_PROJECT_DIR": str(root), "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
             # the SDK passes only a few variables on: no detached query server unless a test asks for one
             "HIPPO_SERVER": "ask", "HIPPO_HOME": os.environ.get("HIPPO_HOME", ""), **env},
    )


async def _session(root: Path, calls: list[dict], env: dict | None = None) -> tuple[list, str | None, list]:
    async with Client(mcp_params(root, **(env or {})), mode="legacy", read_timeout_seconds=60) as client:
        tools = (await client.list_tools()).tools
        results = []
        for args in calls:
            tool = args.pop("_tool", TOOL_NAME)  # search_codebase unless a call names another tool
            results.append(await client.call_tool(tool, args))
        return tools, client.instructions, results


def run_session(root: Path, calls: list[dict], env: dict | None = None):
    return anyio.run(_session, root, calls, env)


def tool_text(result) -> str:
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
