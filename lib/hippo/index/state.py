"""`.hippo/state.json`: what the index reflects (commit, branch, model, per-file records). Stdlib only.

Written atomically (temp file + rename) after every committed batch, so a killed run leaves a state that
matches the table: files it lists are fully indexed; files it lacks are picked up by the next run.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from hippo.core.indexdir import IndexDir, atomic_write

SCHEMA_VERSION = 1


@dataclass
class FileRecord:
    size: int
    mtime_ns: int
    sha: str  # sha1 of the file bytes
    blob: str | None = None  # git blob id when the file was clean and tracked
    chunks: int = 0


@dataclass
class SkipRecord:
    """A file left out for what its first bytes hold (binary, generated, minified), and the stat and blob
    id that verdict was reached for: while they match, discovery does not read the file again."""

    size: int
    mtime_ns: int
    reason: str
    blob: str | None = None


@dataclass
class IndexState:
    schema_version: int = SCHEMA_VERSION
    model_id: str = ""
    dim: int = 0
    indexed_commit: str | None = None
    branch: str | None = None
    updated_at: float = 0.0
    complete: bool = False  # the last run finished every file (vectors may still be filling in)
    vectors_complete: bool = False
    vectors_skipped: bool = False  # the last run was `--no-vectors`: keyword-only until a run embeds
    # Maintenance bookkeeping (see Indexer._maintain): writes since the last optimize, and when it ran.
    runs_since_optimize: int = 0
    rows_since_optimize: int = 0
    optimized_at: float = 0.0
    # When the last run started listing files (time.time_ns). A file whose recorded mtime is not clearly
    # older than this may have changed again within the same timestamp tick, so its stat proves nothing.
    listed_at_ns: int = 0
    files: dict[str, FileRecord] = field(default_factory=dict)
    # Files skipped for their content (discovery.CONTENT_REASONS), valid under the rules named by
    # `skip_rules` (discovery.CONTENT_RULES). Not indexed, so not in `files`.
    skipped_files: dict[str, SkipRecord] = field(default_factory=dict)
    skip_rules: str = ""

    @property
    def chunk_count(self) -> int:
        return sum(f.chunks for f in self.files.values())


def state_path(index_dir: Path) -> Path:
    return IndexDir(index_dir).state


def load_state(index_dir: Path) -> IndexState | None:
    """None when there is no state or it cannot be read (the caller rebuilds)."""
    try:
        raw = json.loads(state_path(index_dir).read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            return None
        files = {p: FileRecord(**rec) for p, rec in raw.pop("files", {}).items()}
        skipped = {p: SkipRecord(**rec) for p, rec in raw.pop("skipped_files", {}).items()}
        known = IndexState.__dataclass_fields__
        return IndexState(files=files, skipped_files=skipped, **{k: v for k, v in raw.items() if k in known})
    except (OSError, ValueError, TypeError, AttributeError):  # garbage or a wrong shape: rebuild
        return None


def save_state(index_dir: Path, state: IndexState) -> None:
    state.updated_at = time.time()
    # Built by hand and encoded in one `dumps` call (the C encoder): asdict + json.dump took ~0.7 s per save
    # for 4k files, and the indexer saves after every batch.
    data = {k: getattr(state, k) for k in IndexState.__dataclass_fields__ if k not in ("files", "skipped_files")}
    data["files"] = {p: vars(rec) for p, rec in state.files.items()}
    data["skipped_files"] = {p: vars(rec) for p, rec in state.skipped_files.items()}
    text = json.dumps(data, separators=(",", ":"))
    index_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(state_path(index_dir), text)
