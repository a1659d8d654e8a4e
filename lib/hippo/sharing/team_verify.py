"""Check a downloaded team base against the files it claims before anything reads it.

Why: a base's rows are the text that search shows and the hooks inject. A snapshot can carry chunk text
that is in no file while its state.json claims the real file's blob id and size; git then vouches for the
file, the indexer never re-reads it, and the injected text is trusted for good.

How (one read and one chunking per file, no per-line search): the chunker is deterministic, so for every
file of the base that the work tree holds at the blob id the base claims (git's own verdict: tracked and
clean at that blob), the rows are derived again from the local bytes, redacted as the indexer redacts,
and must equal the base's rows of that file in every column but the vector (id, lines, text, symbol,
breadcrumb, vector key). A file that differs, or whose local copy is not at the claimed blob
(edited, untracked, another commit), loses its rows and its state record, so the ordinary indexer
indexes it locally. A file the work tree no longer has keeps its record, and the indexer deletes it as
usual. Rows under a path the state does not list are removed. The base's content-skip verdicts are
dropped (discovery sniffs those files again), so a base cannot hide a file either.

A file whose rows equal the rows the local index already holds for the same blob is verified by that
equality, without chunking, when the local index is trusted (built here, or from a base verified like
this): so a later base costs only the files that changed since the last one.

Not checked: the vectors (that would mean embedding everything again, which is what a base saves) and
`text_ids`, the identifier words the keyword index matches on (deriving them is ~40% of the chunking
time). Both only steer ranking: a wrong one can reorder results, never put text into them.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from hippo.core.config import Settings
from hippo.core.indexdir import IndexDir
from hippo.index.state import FileRecord, IndexState, save_state

# Every column a row is shown by; `text_ids`, `embedded` and `vector` only rank (see the module doc).
FIELDS = ("id", "path", "start_line", "end_line", "language", "symbol", "kind", "breadcrumb", "text", "vkey")
DELETE_BATCH = 500  # paths per delete (one SQL IN list)


@dataclass
class Verification:
    files: int = 0  # files of the base whose rows were checked against the local bytes
    matched: int = 0
    matched_by_local: int = 0  # of those, vouched for by the trusted local index (no chunking)
    dropped: list[str] = field(default_factory=list)  # at the claimed blob, yet other rows: removed
    elsewhere: int = 0  # files the work tree holds at another blob (or edited): removed, indexed locally
    orphans: list[str] = field(default_factory=list)  # paths with rows but no state record: removed
    rows: int = 0  # rows of the base read
    seconds: float = 0.0

    @property
    def refused(self) -> list[str]:
        """Paths whose base rows were not what their files hold: the poisoned ones."""
        return self.dropped + self.orphans


def verify_base(root: Path, settings: Settings, snap_dir: Path, state: IndexState,
                trusted_dir: Path | None = None) -> Verification:
    """Keep only the base rows the local files reproduce; rewrite `snap_dir`'s table and state.json.

    `trusted_dir`: an index whose rows are known good (see the module doc), or None."""
    from hippo.index.discovery import discover
    from hippo.index.store import Store

    started = time.monotonic()
    report = Verification()
    listed_at = time.time_ns()
    local = {f.path: f for f in discover(root, settings).files}
    known, known_rows = _trusted(trusted_dir, state)
    store = Store(snap_dir, state.dim, writer=True)
    try:
        claimed = _rows_by_path(store)
        report.rows = sum(len(v) for v in claimed.values())
        drop: list[str] = []
        for rel, rec in sorted(state.files.items()):
            f = local.get(rel)
            if f is None:
                continue  # gone (or excluded) here: the indexer deletes it, rows and record
            if not f.blob or f.blob != rec.blob:
                drop.append(rel)  # not the bytes the base claims: indexed locally from what is here
                report.elsewhere += 1
                continue
            report.files += 1
            mine = known.get(rel)
            if mine is not None and mine.blob == rec.blob and known_rows.get(rel, []) == claimed.get(rel, []):
                state.files[rel] = FileRecord(size=mine.size, mtime_ns=f.mtime_ns, sha=mine.sha, blob=f.blob,
                                              chunks=len(claimed.get(rel, [])))
                report.matched += 1
                report.matched_by_local += 1
                continue
            fresh = _record_if_reproduced(root, rel, f, state.model_id, claimed.get(rel, []))
            if fresh is None:
                drop.append(rel)
                report.dropped.append(rel)
            else:
                state.files[rel] = fresh
                report.matched += 1
        orphans = report.orphans = sorted(set(claimed) - set(state.files))
        for rel in drop:
            state.files.pop(rel, None)
        doomed = [p for p in sorted(set(drop) | set(orphans)) if p in claimed]
        for i in range(0, len(doomed), DELETE_BATCH):
            store.replace_files(doomed[i:i + DELETE_BATCH], [])
    finally:
        store.close()
    state.skipped_files, state.skip_rules = {}, ""
    state.listed_at_ns = listed_at
    save_state(snap_dir, state)
    report.seconds = time.monotonic() - started
    return report


def _trusted(index_dir: Path | None, base: IndexState) -> tuple[dict[str, FileRecord], dict[str, list[tuple]]]:
    """The trusted local index's file records and rows (empty when there is none, or it does not read)."""
    from hippo.index.state import load_state

    if index_dir is None:
        return {}, {}
    state = load_state(index_dir)
    if state is None or not state.complete or (state.model_id, state.dim) != (base.model_id, base.dim) \
            or not IndexDir(index_dir).db.is_dir():
        return {}, {}
    from hippo.index.store import Store

    try:
        store = Store(index_dir, state.dim)
        try:
            return state.files, _rows_by_path(store)
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - a shortcut only: without it every file is chunked
        return {}, {}


def _rows_by_path(store) -> dict[str, list[tuple]]:
    """The base's rows (every checked column, no vectors), grouped by path, each group sorted."""
    out: dict[str, list[tuple]] = {}
    for r in store.rows(columns=FIELDS):
        out.setdefault(r["path"], []).append(_key(r))
    for rows in out.values():
        rows.sort()
    return out


def _key(row: dict) -> tuple:
    return tuple(row[k] for k in FIELDS)


def _record_if_reproduced(root: Path, rel: str, entry, model_id: str, claimed: list[tuple]) -> FileRecord | None:
    """The file's state record from its local bytes when they reproduce exactly `claimed`, else None."""
    from hippo.index.indexer import rows_for_file

    try:
        data = (root / rel).read_bytes()
    except OSError:
        return None
    try:
        rows = rows_for_file(rel, data, model_id, identifiers=False, graph=False)
    except Exception:  # noqa: BLE001 - the indexer stores an unchunkable file with no rows; so must the base
        rows = []
    if sorted(_key(r) for r in rows) != claimed:
        return None
    return FileRecord(size=len(data), mtime_ns=entry.mtime_ns, sha=hashlib.sha1(data).hexdigest(),
                      blob=entry.blob, chunks=len(rows))
