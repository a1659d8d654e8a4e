"""`.hippo/state.json`: what the index reflects (commit, branch, model, per-file records). Stdlib only.

Written atomically (temp file + rename) after every committed batch, so a killed run leaves a state that
matches the table: files it lists are fully indexed; files it lacks are picked up by the next run.

Beside it, `state-summary.json` holds the counts and flags a status line needs (`load_summary`): at 100k files
state.json is ~20 MB and reading it whole costs ~0.4 CPU-s, which SessionStart must not pay. The summary names
the state.json it was made from (inode, size, mtime); a reader that finds another state.json there (a writer
killed between the two writes, a team snapshot moved in, an older hippo) reads state.json itself.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from hippo.core.indexdir import IndexDir, atomic_write, create

SCHEMA_VERSION = 1


@dataclass
class FileRecord:
    size: int
    mtime_ns: int
    sha: str  # sha1 of the file bytes
    blob: str | None = None  # git blob id when the file was clean and tracked
    chunks: int = 0


# A file whose mtime is this close to (or after) the listing time may have been written while that run listed
# it: its stat cannot vouch for its content. File mtimes come from a coarse kernel clock, listing time from a
# fine one.
RACY_NS = 50_000_000
# The code-graph extraction of chunking/graph.py: bump it when the extraction changes and the indexer re-reads
# every file once (kept here, not there, so a no-op `hippo index` never imports the chunking package).
GRAPH_VERSION = 9  # 2: names used as values (`r`); 3: data definitions (tables, patterns) and their uses;
# 4: `test.each(..)(title, fn)` and `it.only`/`.skip` tests; 5: captures in document order; 6: the same graph in
# every process, with every `x = f()` variable (most were lost to a mispairing); 7: handlers registered by a
# decorator (`g`) and pytest parametrize values (`p`); 8: return annotations and annotated parameters; 9: class
# attributes' short strings (`name = 'doctest'`)


def still_holds(rec: FileRecord, size: int, mtime_ns: int, blob: str | None, listed_at_ns: int) -> bool:
    """Does the file still hold what `rec` recorded, judged without reading it? git's blob id vouches for the
    content; otherwise the same size and mtime do, unless the file was written as that run listed it (racy)
    or git's blob id and the record's disagree. The indexer reads a file exactly when this is False; `hippo
    status` counts such files as changed."""
    if blob and rec.blob == blob:
        return True
    racy = rec.mtime_ns >= listed_at_ns - RACY_NS
    return rec.size == size and rec.mtime_ns == mtime_ns and not racy and not (blob and rec.blob)


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
    # The code-graph extraction (GRAPH_VERSION) the table's graph column was written with;
    # when it differs, the next run re-reads every file once so each file's graph is written again.
    graph_version: int = 0
    # The path rules (discovery.PathFilter.fingerprint) every file in `files` was admitted under, set by a run
    # that completed: while they are the rules now, a no-op run does not check 100k paths against them again.
    path_rules: str = ""

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


@dataclass
class StateSummary:
    """What state.json says about the index as a whole, without its per-file records."""

    files: int
    chunks: int
    indexed_commit: str | None
    updated_at: float
    vectors_complete: bool
    vectors_skipped: bool

    @classmethod
    def of(cls, state: IndexState) -> StateSummary:
        files = state.files if isinstance(state.files, dict) else {}
        chunks = sum(r.chunks for r in files.values() if type(r.chunks) is int)
        return cls(len(files), chunks, state.indexed_commit, state.updated_at, bool(state.vectors_complete),
                   bool(state.vectors_skipped))


def _state_key(index_dir: Path) -> list[int] | None:
    try:
        st = os.stat(state_path(index_dir))
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def load_summary(index_dir: Path) -> StateSummary | None:
    """The summary of the current state.json (None when there is none or it cannot be read): from
    state-summary.json when that was written for this very state.json, else from state.json itself."""
    key = _state_key(index_dir)
    if key is None:
        return None
    try:
        raw = json.loads(IndexDir(index_dir).state_summary.read_text(encoding="utf-8"))
        if isinstance(raw, dict) and raw.get("state") == key:
            summary = StateSummary(**{k: raw[k] for k in StateSummary.__dataclass_fields__})
            if type(summary.files) is int and type(summary.chunks) is int:
                return summary
    except (OSError, ValueError, TypeError, KeyError):
        pass
    state = load_state(index_dir)
    return StateSummary.of(state) if state is not None else None


def save_state(index_dir: Path, state: IndexState) -> None:
    state.updated_at = time.time()
    # Built by hand and encoded in one `dumps` call (the C encoder): asdict + json.dump took ~0.7 s per save
    # for 4k files, and the indexer saves after every batch.
    data = {k: getattr(state, k) for k in IndexState.__dataclass_fields__ if k not in ("files", "skipped_files")}
    data["files"] = {p: vars(rec) for p, rec in state.files.items()}
    data["skipped_files"] = {p: vars(rec) for p, rec in state.skipped_files.items()}
    text = json.dumps(data, separators=(",", ":"))
    create(index_dir)  # also tightens an index dir an older hippo left group/other-readable
    atomic_write(state_path(index_dir), text)
    summary = {"state": _state_key(index_dir), **vars(StateSummary.of(state))}
    # not synced: a summary lost on a power cut no longer names the state.json there, which is then read whole
    atomic_write(IndexDir(index_dir).state_summary, json.dumps(summary), durable=False)
