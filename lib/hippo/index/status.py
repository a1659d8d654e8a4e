"""What `hippo status` and `/rag-status` report: size, model, commit and how far behind HEAD the index is.

"Behind" has two parts: commits between the indexed commit and HEAD (git), and files that differ from the
index right now (the indexer's own no-read comparison), so uncommitted edits count too.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from hippo.core import gitutil
from hippo.core.config import load_settings
from hippo.core.indexdir import IndexDir
from hippo.core.secrets import redact_name
from hippo.index.state import load_state, still_holds


def _dir_size(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total




def _who(pid: int) -> str:
    return f"pid {pid}" if pid else "another process"


def vectors_note(index_dir: Path, state, embedded: int | None = None, total: int | None = None) -> str:
    """How far the vectors are and whether anything is filling them in, in one phrase for status/search."""
    if state.vectors_complete:
        return "complete"
    pct = f"{100 * embedded // total}% built" if embedded is not None and total else "not complete"
    pid = IndexDir(index_dir).writer_pid()
    if pid is not None:
        return f"vectors {pct}, being built ({_who(pid)}); keyword search works"
    if state.vectors_skipped:
        return f"keyword-only (built with --no-vectors, vectors {pct}); run `hippo index` to add vectors"
    return f"vectors {pct}; run `hippo index` to finish (keyword search works)"


def build_note(index_dir: Path, state) -> str | None:
    """Says so when the last run did not finish: being built right now, or interrupted and resumable."""
    if state.complete:
        return None
    pid = IndexDir(index_dir).writer_pid()
    if pid is not None:
        return f"being built right now ({_who(pid)}): {len(state.files)} files indexed so far"
    return (f"the last `hippo index` was interrupted after {len(state.files)} files; run `hippo index` to "
            "finish (it resumes)")


def pending_changes(root: Path, state) -> dict[str, int]:
    """Files that differ from the index right now, by the indexer's own rule (state.still_holds: git blob ids
    and stats, no file reads; a file it would re-read counts as changed): {"changed": n, "added": n,
    "deleted": n}."""
    from hippo.index.discovery import discover

    disc = discover(root, load_settings(root), known=state.files)
    out = {"changed": 0, "added": 0, "deleted": 0}
    seen = set()
    for f in disc.files:
        seen.add(f.path)
        rec = state.files.get(f.path)
        if rec is None:
            out["added"] += 1
        elif not still_holds(rec, f.size, f.mtime_ns, f.blob, state.listed_at_ns):
            out["changed"] += 1
    out["deleted"] = sum(1 for p in state.files if p not in seen)
    return out


def freshness(root: Path, indexed_commit: str | None, pending: dict[str, int] | None = None,
              build: str | None = None) -> str:
    """Human summary: commits between the indexed commit and HEAD, and files that differ from the index.

    `build` (see build_note) replaces the commit part when the last run has not finished: an interrupted
    first build has no indexed commit yet, which is not the same as "indexed before the first commit"."""
    parts: list[str] = []
    if build:
        parts.append(build)
    elif not gitutil.is_git_repo(root):
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


def _embedded_counts(index_dir: Path, state) -> tuple[int | None, int | None]:
    """(embedded rows, all rows) when vectors are incomplete; (None, None) if the table cannot say."""
    if state.vectors_complete or not state.chunk_count or not IndexDir(index_dir).db.is_dir():
        return None, None
    try:
        from hippo.index.store import Filter, Store

        store = Store(index_dir, state.dim)
        try:
            return store.count(Filter(embedded=True)), store.count()
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - status must always answer; the percentage is a nicety
        return None, None


def index_status(root: Path) -> dict:
    settings = load_settings(root)
    index_dir = IndexDir.of(root, settings).path
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
        "indexed_commit": state.indexed_commit, "branch": state.branch and redact_name(state.branch),
        "behind": freshness(root, state.indexed_commit, pending, build_note(index_dir, state)),
        "pending": pending,
        "builder_pid": IndexDir(index_dir).writer_pid(),
        "vectors": vectors_note(index_dir, state, *_embedded_counts(index_dir, state)),
        "complete": state.complete,
        "size_mb": round(_dir_size(index_dir) / 1e6, 1),
        "updated": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.updated_at)) if state.updated_at else "",
    }
    return info
