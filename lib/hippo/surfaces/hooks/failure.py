"""PostToolUseFailure(Bash): push the code a failure is about, or nothing. A thin adapter.

The warm per-repo server answers the whole hook (service/client.py sends it the payload) with
hippo.push.diagnosis.respond; when none answers, the client runs the same code in-process. `handle` is that
answer with an optional cold, in-process diagnoser (tests and direct callers).
"""
from __future__ import annotations

from typing import Any

from hippo.push.diagnosis.respond import respond


def handle(payload: dict[str, Any], diagnoser=None) -> dict | None:
    """The hook. Without a `diagnoser`, a cold in-process WarmIndex answers (loaded only past the gate)."""
    if diagnoser is None:
        def diagnoser(request: dict) -> dict | None:
            from hippo.core.runtime import find_repo_root, hook_context
            from hippo.surfaces.service.host import WarmIndex

            root = find_repo_root(str(payload.get("cwd") or ""))
            if root is None:
                return None
            settings, _idx = hook_context(root)
            return WarmIndex(root, settings, cold=True).diagnose(request)
    return respond(payload, diagnoser)

