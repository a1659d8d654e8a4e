"""PostToolUseFailure(Bash): push the code a failure is about, or nothing. A thin adapter.

The warm per-repo server answers the whole hook (service/client.py sends it the payload) with
hippo.push.diagnosis.respond; when none answers, the client runs the same code in-process. `handle` is that
answer with an optional cold, in-process diagnoser (tests and direct callers).
"""
from __future__ import annotations

from typing import Any

from hippo.push.diagnosis.respond import respond


def handle(payload: dict[str, Any], diagnoser=None) -> dict | None:
    """The hook. Without a `diagnoser`, a cold in-process WarmIndex answers (its index opened only past the
    gate), with the repo root found here once and its settings loaded once."""
    if diagnoser is not None:
        return respond(payload, diagnoser)
    from hippo.core.runtime import find_repo_root
    from hippo.surfaces.service.host import WarmIndex

    root = find_repo_root(str(payload.get("cwd") or ""))
    if root is None:
        return None
    warm = WarmIndex(root, cold=True)
    return respond(payload, warm.diagnose, root=root, settings=lambda: warm.settings)

