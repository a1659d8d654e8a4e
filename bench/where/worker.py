"""Answers benchmark queries the way Claude gets them: the MCP `search_codebase` tool's text.

Run by bench/where/run.py with PYTHONPATH pointing at one hippo source tree (today's or a baseline ref), so two
versions answer the same tasks over the same index in one run. Protocol: one JSON object per line on stdin
({"root", "query"}), one per line on stdout ({"text", "is_error", "ms"}). The first reply says which hippo
answered ({"hippo": module path}).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    import hippo
    from hippo.surfaces.mcp_server import SearchService, call_tool

    print(json.dumps({"hippo": str(Path(hippo.__file__).parent)}), flush=True)
    services: dict[str, SearchService] = {}
    for line in sys.stdin:
        req = json.loads(line)
        service = services.setdefault(req["root"], SearchService(Path(req["root"])))
        t = time.perf_counter()
        text, is_error = call_tool(service, "search_codebase", {"query": req["query"]})
        print(json.dumps({"text": text, "is_error": is_error, "ms": (time.perf_counter() - t) * 1000}), flush=True)


if __name__ == "__main__":
    main()
