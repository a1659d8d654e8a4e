"""What `hippo status` and `/rag-status` report: size, model, commit and how far behind HEAD the index is."""
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


def freshness(root: Path, indexed_commit: str | None) -> str:
    """Human summary of commits and dirty files since the indexed commit."""
    if not gitutil.is_git_repo(root):
        return "not a git repo: run `hippo index` after changes"
    head = gitutil.head_commit(root)
    dirty = len(gitutil.dirty_files(root))
    if head is None:
        return f"no commits yet; {dirty} files in the working tree"
    if indexed_commit is None:
        return "never indexed at a commit"
    if not gitutil.is_commit(root, indexed_commit):
        return "indexed commit no longer exists (rebase?): run `hippo index`"
    behind = 0 if indexed_commit == head else gitutil.commits_between(root, indexed_commit, head)
    parts = ["up to date with HEAD" if behind == 0 else f"{behind} commit(s) behind HEAD"]
    if dirty:
        parts.append(f"{dirty} uncommitted change(s) in the working tree")
    return "; ".join(parts)


def index_status(root: Path) -> dict:
    settings = load_settings(root)
    index_dir = settings.index_path(root)
    state = load_state(index_dir)
    if state is None:
        return {"indexed": False, "root": str(root), "index_dir": str(index_dir)}
    chunks = state.chunk_count
    info = {
        "indexed": True, "root": str(root), "index_dir": str(index_dir),
        "files": len(state.files), "chunks": chunks, "model": state.model_id,
        "indexed_commit": state.indexed_commit, "branch": state.branch,
        "behind": freshness(root, state.indexed_commit),
        "vectors": "complete" if state.vectors_complete else "still being built (keyword search works)",
        "complete": state.complete,
        "size_mb": round(_dir_size(index_dir) / 1e6, 1),
        "updated": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state.updated_at)) if state.updated_at else "",
    }
    return info
