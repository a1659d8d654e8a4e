"""Per-session hook memory: which chunks were already injected (dedupe), pruned by age.

State lives in `<index_dir>/sessions/<session_id>.json`. Stdlib only. Written atomically; a lost
update only means a chunk may be shown twice, never a broken hook.
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from hippo.core.indexdir import IndexDir, atomic_write

MAX_AGE_S = 3 * 24 * 3600
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def _path(index_dir: Path, session_id: str) -> Path | None:
    sid = _SAFE_ID.sub("_", session_id or "")[:120]
    if not sid.strip("._"):
        return None
    return IndexDir(index_dir).sessions / f"{sid}.json"


def load(index_dir: Path, session_id: str) -> dict[str, Any]:
    p = _path(index_dir, session_id)
    if p is None:
        return {"injected": []}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("injected"), list):
            return data
    except (OSError, ValueError):
        pass
    return {"injected": []}


def injected_keys(index_dir: Path, session_id: str) -> set[str]:
    return {str(k) for k in load(index_dir, session_id).get("injected", [])}


def remember(index_dir: Path, session_id: str, keys: list[str]) -> None:
    p = _path(index_dir, session_id)
    if p is None or not keys:
        return
    data = load(index_dir, session_id)
    seen = list(dict.fromkeys([*data.get("injected", []), *keys]))[-500:]
    data.update(injected=seen, updated=time.time())
    p.parent.mkdir(parents=True, exist_ok=True)
    # on every failure that injected something, before the reply: a dedupe record lost on a power cut only
    # shows a snippet twice, so no fsync
    atomic_write(p, json.dumps(data), durable=False)


def prune(index_dir: Path, max_age_s: float = MAX_AGE_S, now: float | None = None) -> int:
    """Delete session files untouched for `max_age_s` (sessions that never sent SessionEnd)."""
    now = time.time() if now is None else now
    removed = 0
    try:
        entries = list(IndexDir(index_dir).sessions.iterdir())
    except OSError:
        return 0
    for f in entries:
        try:
            if now - f.stat().st_mtime > max_age_s:
                f.unlink()
                removed += 1
        except OSError:
            pass
    return removed


def reset_injected(index_dir: Path, session_id: str) -> None:
    """Forget what this session was shown (after `compact` the conversation no longer holds it)."""
    p = _path(index_dir, session_id)
    if p is None or not p.exists():
        return
    data = load(index_dir, session_id)
    data.update(injected=[], updated=time.time())
    atomic_write(p, json.dumps(data))


def forget(index_dir: Path, session_id: str) -> None:
    p = _path(index_dir, session_id)
    if p is not None:
        try:
            p.unlink()
        except OSError:
            pass


def handle_session_end(payload: dict[str, Any]) -> None:
    """SessionEnd: drop this session's dedupe state. Prints nothing."""
    from hippo.core.runtime import find_repo_root, hook_context

    root = find_repo_root(payload.get("cwd"))
    if root is None:
        return None
    _, idx = hook_context(root)
    forget(idx.path, str(payload.get("session_id") or ""))
    return None
