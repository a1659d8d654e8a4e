"""What `hippo status` and `/rag-status` report: size, model, commit and how far behind HEAD the index is.

"Behind" has two parts: commits between the indexed commit and HEAD (git), and files that differ from the
index right now (the indexer's own no-read comparison), so uncommitted edits count too.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from hippo import gitutil
from hippo.config import load_settings
from hippo.state import load_state


def _dir_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def pending_changes(root: Path, state) -> dict[str, int]:
    """Files that differ from the index right now, judged like the indexer's no-op path (git blob ids and
    stats only, no file reads): {"changed": n, "added": n, "deleted": n}."""
    from hippo.discovery import discover

    disc = discover(root, load_settings(root), known=state.files)
    out = {"changed": 0, "added": 0, "deleted": 0}
    seen = set()
    for f in disc.files:
        seen.add(f.path)
        rec = state.files.get(f.path)
        if rec is None:
            out["added"] += 1
        elif f.blob and rec.blob == f.blob:
            continue
        elif rec.size != f.size or rec.mtime_ns != f.mtime_ns or (f.blob and rec.blob and rec.blob != f.blob):
            out["changed"] += 1
    out["deleted"] = sum(1 for p in state.files if p not in seen)
    return out


def freshness(root: Path, indexed_commit: str | None, pending: dict[str, int] | None = None) -> str:
    """Human summary: commits between the indexed commit and HEAD, and files that differ from the index."""
    parts: list[str] = []
    if not gitutil.is_git_repo(root):
        parts.append("not a git repo (files are tracked by content hash)")
    else:
        head = gitutil.head_commit(root)
        if head is None:
            parts.append("no commits yet")
        elif indexed_commit is None:
            parts.append("indexed before the first commit")
        elif indexed_commit == head:
            parts.append("indexed at HEAD")
        elif not gitutil.is_commit(root, indexed_commit):
            parts.append("the indexed commit no longer exists (rebase?)")
        elif gitutil.is_ancestor(root, indexed_commit, head):
            parts.append(f"{gitutil.commits_between(root, indexed_commit, head)} commit(s) behind HEAD")
        else:
            parts.append(f"HEAD is on another line of history (branch switch or rebase): "
                         f"{gitutil.commits_between(root, indexed_commit, head)} commit(s) not indexed")
    if pending is not None:
        n = sum(pending.values())
        if n:
            detail = ", ".join(f"{v} {k}" for k, v in pending.items() if v)
            parts.append(f"{n} file(s) differ from the index ({detail}): run `hippo index`")
        else:
            parts.append("every file matches the index")
    return "; ".join(parts)


def index_status(root: Path) -> dict:
    settings = load_settings(root)
    index_dir = settings.index_path(root)
    state = load_state(index_dir)
    if state is None:
        return {"indexed": False, "root": str(root), "index_dir": str(index_dir)}
    chunks = state.chunk_count
    try:
        pending = pending_changes(root, state)
    except Exception:  # noqa: BLE001 - status must always answer; the listing is a nicety
        pending = None
    info = {
        "indexed": True, "root": str(root), "index_dir": str(index_dir),
        "files": len(state.files), "chunks": chunks, "model": state.model_id,
        "indexed_commit": state.indexed_commit, "branch": state.branch,
        "behind": freshness(root, state.indexed_commit, pending),
        "pending": pending,
        "vectors": "complete" if state.vectors_complete else "still being built (keyword search works)",
        "complete": state.complete,
        "size_mb": round(_dir_size(index_dir) / 1e6, 1),
        "updated": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.updated_at)) if state.updated_at else "",
    }
    return info
