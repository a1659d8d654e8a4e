"""Full and incremental indexing: discovery + chunking + embedding + store, crash-safe and resumable.

Two phases so the index is useful in seconds and complete in minutes:
1. keyword phase: changed files are chunked, redacted and written with any vector already known for their
   text (the `vectors` cache); the rest get a placeholder and `embedded = false`. Full-text search works now.
2. vector phase: texts still missing a vector are embedded in batches and filled in. A killed run resumes here.

Change detection asks git, not the files: discovery lists paths with the blob id from git's index for every
tracked file that is clean in the work tree (what `git diff`/`git status` would report as unchanged), so a
tracked file is re-read only when its blob id differs from the one recorded. Dirty, untracked and non-git
files fall back to (size, mtime_ns) and then a content hash. This covers edits, adds, deletes, renames,
branch switches and rebases without needing the indexed commit to still exist. Only differing files are read.

Crash safety: each batch of files is one atomic table commit, and state.json is rewritten after it. The
state is marked incomplete while a run is in flight; a run that finds it incomplete also sweeps the table
for paths the state does not know (written just before a kill) so nothing orphaned survives.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hippo.core import indexdir, integrity, pathkind
from hippo.core.config import Settings, load_settings
from hippo.core.errors import DamagedIndexError, IndexLockedError
from hippo.core.indexdir import IndexDir
from hippo.core.integrity import refuse_planted
from hippo.core.textutil import identifier_text
from hippo.index.chunk import Chunk, chunk_id
from hippo.index.state import (
    GRAPH_VERSION,
    RACY_NS,
    SCHEMA_VERSION,
    FileRecord,
    IndexState,
    SkipRecord,
    load_state,
    save_state,
    still_holds,
)

if TYPE_CHECKING:
    from hippo.index.discovery import FileEntry

Progress = Callable[[str, int, int], None]  # (phase, done, total)
# Phases: "files" and "vectors" count work; "keyword-ready" (files indexed, chunks awaiting a vector) says
# full-text search works now while vectors are still to be filled in.

FILE_BATCH = 200
EMBED_TEXT_CHARS = 1000  # MiniLM sees 256 tokens, roughly 1,000 characters of code
EMBED_WRITE_BATCH = 256
PATHS_PER_FILTER = 500  # paths in one `path IN (...)` of the vector phase's priority groups
SMALL_UPDATE_VECTORS = 128  # new chunks an update may embed before its closing state write (see _run)
OPTIMIZE_EVERY_RUNS = 10  # writing runs between optimizes (LanceDB suggests ~20 modifications)
OPTIMIZE_EVERY_ROWS = 2000  # or this many rows written/deleted (unindexed FTS rows are scanned flat)
# The vector phase rewrites every row it fills in (LanceDB's merge_insert moves a row out of the fragments the
# full-text indexes cover), so a keyword search while vectors are being built flat-scans every row embedded
# since the last optimize: ~45 us a row (0.3 s per search after 7k rows, ~35 s after 800k). The phase folds
# its rows into the indexes once VECTOR_FOLD_ROWS have piled up, but no sooner than VECTOR_FOLD_SHARE times
# the last fold's own duration after it (the fold's cost grows with the table; its share of the phase stays
# under ~1/VECTOR_FOLD_SHARE), and once more at the end when that many are left.
VECTOR_FOLD_ROWS = OPTIMIZE_EVERY_ROWS
VECTOR_FOLD_SHARE = 10.0


@dataclass
class IndexReport:
    files_total: int = 0
    files_changed: int = 0
    files_deleted: int = 0
    chunks_written: int = 0
    chunks_embedded: int = 0  # texts actually sent to the model in this run
    vectors_reused: int = 0
    rebuilt: bool = False
    seconds: float = 0.0
    keyword_ready_seconds: float = 0.0
    files_renamed: int = 0  # deleted path whose exact bytes reappeared under a new path
    files_read: int = 0  # files whose bytes were read (the no-op path reads none)
    resumed: bool = False  # the previous run was interrupted; this one finished its work
    optimized: bool = False  # compaction + FTS fold-in ran this time
    pruned_all: bool = False  # ... and no reader was open, so every old table version was dropped
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)  # (reason, path) for `--verbose`
    dry_run: dict | None = None
    vector_index_built: bool = False
    repaired: str | None = None  # the damage this run found and rebuilt the index over
    notices: list[str] = field(default_factory=list)  # files left out for a reason the user should see


def open_private(path: Path, flags: int = os.O_RDWR | os.O_CREAT):
    """Open a file of the index dir without following a symlink planted there (O_NOFOLLOW)."""
    return os.fdopen(os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600), "r+" if flags & os.O_RDWR else "w")


class WriterLock:
    """One writer per index (an exclusive indexdir lock on `.hippo/lock`); readers never take it."""

    def __init__(self, index_dir: Path, wait_seconds: float) -> None:
        self.path = IndexDir(index_dir).writer_lock
        self.wait = wait_seconds
        self.fh = None

    def __enter__(self) -> WriterLock:
        self.fh = indexdir.open_lock(self.path)
        if not indexdir.wait_lock(self.fh, self.wait, poll=0.1):
            self.fh.close()
            raise IndexLockedError()
        self.fh.seek(0)
        self.fh.truncate()
        self.fh.write(str(os.getpid()))
        self.fh.flush()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            indexdir.unlock(self.fh)
            self.fh.close()


def embed_text(symbol: str, breadcrumb: str, text: str) -> str:
    """What the model sees: the unit's name or heading path, then the head of its body."""
    head = symbol or breadcrumb
    body = f"{head}\n{text}" if head else text
    return body[:EMBED_TEXT_CHARS]


def vector_key(model_id: str, text: str) -> str:
    return hashlib.sha1(f"{model_id}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


def indexed_text(data: bytes) -> str:
    """A file's text as the index holds it: decoded, NULs replaced, secrets redacted. Whatever compares
    indexed text with a live file (base verification, stale search hits) compares against this."""
    from hippo.core.secrets import redact

    return redact(decode(data).replace("\x00", "\ufffd"))[0]


def chunks_for_file(rel: str, data: bytes, graph: list | None = None) -> list[Chunk]:
    """The chunks of one file's indexed text; its code graph is appended to `graph` when given."""
    from hippo.index.chunking import chunk_file

    return chunk_file(rel, indexed_text(data), graph=graph)


def rows_for_file(rel: str, data: bytes, model_id: str, *, identifiers: bool = True,
                  graph: bool = True) -> list[dict]:
    """The rows the indexer writes for `rel` with these bytes (vectors aside). Deterministic.
    `identifiers=False` leaves out `text_ids` (about 40% of the time; base verification does not need it),
    `graph=False` the code graph column."""
    graphs: list | None = [] if graph else None
    chunks = chunks_for_file(rel, data, graphs)
    return _rows_for(rel, chunks, model_id, identifiers=identifiers,
                     graph=graph_json(graphs[0]) if graphs else "")


def _rows_for(rel: str, chunks: list[Chunk], model_id: str, *, identifiers: bool = True,
              graph: str = "") -> list[dict]:
    rows: list[dict] = []
    seen: Counter[str] = Counter()
    for c in chunks:
        h = c.content_hash
        occurrence = seen[h]
        seen[h] += 1
        rows.append({
            "id": chunk_id(rel, h, occurrence), "path": rel, "start_line": c.start_line,
            "end_line": c.end_line, "language": c.language, "symbol": c.symbol, "kind": c.kind,
            "breadcrumb": c.breadcrumb, "text": c.text,
            "text_ids": identifier_text(c.text, f"{rel} {c.symbol} {c.breadcrumb}") if identifiers else "",
            "vkey": vector_key(model_id, embed_text(c.symbol, c.breadcrumb, c.text)),
            "graph": "",
        })
    if rows and graph:
        rows[0]["graph"] = graph  # chunks come in file order: the first one carries the file's graph
    return rows


def graph_json(graph) -> str:
    """A FileGraph as the compact JSON the store keeps."""
    import json

    return json.dumps(graph.to_json(), separators=(",", ":"), ensure_ascii=False)


def _dry_run_summary(files) -> dict:
    by_ext: Counter = Counter()
    by_dir: Counter = Counter()
    total_bytes = 0
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        ext = name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else "(none)"
        by_ext[ext] += 1
        by_dir[f.path.split("/", 1)[0] if "/" in f.path else "."] += 1
        total_bytes += f.size
    return {"files": len(files), "bytes": total_bytes, "by_extension": dict(by_ext.most_common()),
            "by_top_folder": dict(by_dir.most_common())}


def _table_damage(index_dir: Path, state: IndexState) -> str | None:
    """Why the table of a usable-looking state cannot be trusted, or None. Stdlib only: a no-op run never
    opens the table, so this is all that stands between damaged files and "Index is up to date"."""
    mark = integrity.damage_mark(index_dir)
    if mark:
        return mark
    if state.chunk_count:
        table = IndexDir(index_dir).db / "chunks.lance"
        for part in ("_versions", "data"):
            try:
                if any((table / part).iterdir()):
                    continue
            except OSError:
                pass
            return f"the files under chunks.lance/{part} are missing"
    return integrity.probe(index_dir)


def _shown(rel: str) -> str:
    """A path as the user can read it: undecodable bytes as \\xNN escapes."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _names_notice(names: list[str]) -> str:
    n = len(names)
    what = "1 file with a name that is" if n == 1 else f"{n} files with names that are"
    listed = ", ".join(_shown(p) for p in names[:5]) + (", ..." if n > 5 else "")
    return f"skipped {what} not valid UTF-8: {listed}"


class Indexer:
    def __init__(self, root: Path, settings: Settings | None = None, *, embedder=None,
                 progress: Progress | None = None, create: bool = True) -> None:
        self.root = root
        self.settings = settings or load_settings(root)
        self.index_dir = IndexDir.of(root, self.settings).path
        if create:
            integrity.prepare_for_writing(root, self.index_dir)
        else:  # a dry run writes nothing
            refuse_planted(root, self.index_dir)
        self._embedder = embedder
        # The configured name identifies the model in state.json, so a no-op run never loads the model.
        if embedder is not None:
            self.model_name = embedder.model_id
        else:
            from hippo.index.embedding import model_id_for

            self.model_name = model_id_for(self.settings.model)
        self.progress = progress or (lambda phase, done, total: None)

    def embedder(self):
        if self._embedder is None:
            from hippo.index.embedding import load_embedder

            self._embedder = load_embedder(self.settings.model, threads=self.settings.threads)
        return self._embedder

    def run(self, *, full: bool = False, dry_run: bool = False, wait_lock: float = 3.0,
            vectors: bool = True, compact: bool = True) -> IndexReport:
        """One locked pass. `compact=False` skips the optimize step (benchmarks measure what it saves).

        Damage found on the way (the probe, a reader's mark, or a table write that fails on damaged files)
        is handled here, once: the index is rebuilt from scratch and `report.repaired` says why. Damage met
        by that rebuild itself is raised.
        """
        try:
            return self._run(full=full, dry_run=dry_run, wait_lock=wait_lock, vectors=vectors, compact=compact)
        except DamagedIndexError as exc:
            if full or dry_run:
                raise
            self._close_store()
            report = self._run(full=True, dry_run=False, wait_lock=wait_lock, vectors=vectors, compact=compact)
            report.repaired = exc.detail
            return report

    def _close_store(self) -> None:
        store = getattr(self, "_store_obj", None)
        if store is not None:
            store.close()
        self._store_obj = None

    def _run(self, *, full: bool, dry_run: bool, wait_lock: float, vectors: bool, compact: bool) -> IndexReport:
        started = time.monotonic()
        report = IndexReport()
        if dry_run:
            disc = self._discover(None)
            report.files_total, report.skipped = len(disc.files), dict(disc.skipped)
            report.skipped_paths = list(disc.skipped_paths)
            report.dry_run = _dry_run_summary(disc.files)
            self._notice_names(disc, report)
            return report
        with WriterLock(self.index_dir, wait_lock):
            state = self._open_state(full, report)
            # Listed under the lock: a run that waited for another must see the tree as it is now.
            listed_at = time.time_ns()
            disc = self._discover(state)
            report.files_total, report.skipped = len(disc.files), dict(disc.skipped)
            self._notice_names(disc, report)
            report.skipped_paths = list(disc.skipped_paths)
            regraph = state.graph_version != GRAPH_VERSION
            current = {f.path for f in disc.files}
            stale_paths = set(state.files)
            if not state.complete and self._has_table():
                report.resumed = True
                stale_paths |= self._store().paths()  # rows written just before a kill
            deleted = sorted(stale_paths - current)
            # A new file is hashed before its batch only when it may be a rename (something was deleted).
            changed, arrived = self._changed_files(disc.files, state, report, regraph=regraph, hash_new=bool(deleted))
            self._touched += self._keep_skips(state, disc)
            # A rename is a deleted path whose exact bytes reappear elsewhere; report it once, as a rename.
            report.files_renamed = sum(1 for p in deleted if p in state.files and state.files[p].sha in arrived)
            report.files_changed, report.files_deleted = len(changed), len(deleted) - report.files_renamed
            was = (state.indexed_commit, state.branch, state.complete)
            small = False
            if changed or deleted or not state.complete:
                had_vectors = state.vectors_complete
                state.complete = False
                state.vectors_complete = False  # new rows may lack vectors until the vector phase ends
                save_state(self.index_dir, state)  # "a run is in flight" survives a kill
                # The last batch is not saved on its own: the closing write below follows at once (a kill
                # in between leaves the in-flight state, and the next run redoes that batch).
                self._keyword_phase(state, changed, deleted, report, save_last=False)
                state.graph_version = GRAPH_VERSION
                # A small update (an edit or two) embeds its few new chunks before that closing write
                # instead of after it: one state.json write less (~60 ms at 10k files), and its
                # keyword-only moment is over in a fraction of a second anyway.
                small = vectors and had_vectors and \
                    report.chunks_written - report.vectors_reused <= SMALL_UPDATE_VECTORS
            report.keyword_ready_seconds = time.monotonic() - started
            if small:
                self._vector_phase(state, report, save=False)
            self._record_git(state, getattr(disc, "git", None))
            if state.indexed_commit != was[0] or not self._cochange_current():
                self._cochange(state)
            if changed or deleted:
                state.runs_since_optimize += 1
                state.rows_since_optimize += report.chunks_written + len(deleted)
            # A true no-op leaves state.json alone (an older listed_at only makes the racy check stricter).
            rules = getattr(disc, "path_rules", "")
            if changed or deleted or self._touched or was != (state.indexed_commit, state.branch, True) \
                    or state.path_rules != rules:
                state.listed_at_ns = listed_at
                state.complete = True
                state.path_rules = rules
                save_state(self.index_dir, state)
            if not vectors and not state.vectors_complete and not state.vectors_skipped:
                state.vectors_skipped = True  # status says "keyword-only", not "being built"
                save_state(self.index_dir, state)
            filled = small or (vectors and not state.vectors_complete)
            if vectors and not state.vectors_complete:  # the no-op path never even imports lancedb
                self._vector_phase(state, report)
            if compact:
                self._maintain(state, report)
            wrote = changed or deleted or filled or report.optimized or report.rebuilt \
                or was != (state.indexed_commit, state.branch, True) or self._touched
            if wrote or not integrity.recorded(self.index_dir):
                integrity.record(self.index_dir)  # what the next run's probe compares against
        report.seconds = time.monotonic() - started
        return report

    @staticmethod
    def _notice_names(disc, report: IndexReport) -> None:
        names = list(getattr(disc, "bad_names", ()))
        if names:
            report.notices.append(_names_notice(names))

    def _maintain(self, state: IndexState, report: IndexReport) -> None:
        """Optimize (fold rows into FTS, compact, prune old versions) only once enough churn piled up.

        Measured (bench/freshness_bench.py): optimizing after every small update costs ~1 s and, while a
        reader pins versions for the safety margin, every compaction's rewritten files are kept too, so
        the index grew 10x in 10 updates. Unoptimized writes only add small files. So: optimize every
        OPTIMIZE_EVERY_RUNS writing runs (or OPTIMIZE_EVERY_ROWS rows); prune everything when no reader is
        open, otherwise at most once per retention margin.
        """
        if not (state.runs_since_optimize or state.rows_since_optimize):
            return
        due = (state.runs_since_optimize >= OPTIMIZE_EVERY_RUNS or state.rows_since_optimize >= OPTIMIZE_EVERY_ROWS
               or report.rebuilt or not state.optimized_at)  # a first build ends compacted
        if not due:
            return
        from hippo.index.store import KEEP_OLD_VERSIONS  # imports lancedb: never on the no-op path
        margin_ok = time.time() - state.optimized_at >= KEEP_OLD_VERSIONS.total_seconds()
        integrity.forget(self.index_dir)  # compaction deletes files: the sums are recorded again after it
        report.optimized, report.pruned_all = self._store().optimize(only_if_alone=not margin_ok)
        if report.optimized:
            state.runs_since_optimize = state.rows_since_optimize = 0
            state.optimized_at = time.time()
            save_state(self.index_dir, state)

    def _discover(self, state: IndexState | None):
        """List indexable files; unchanged files the state knows (indexed, or skipped for their content)
        are not sniffed again."""
        from hippo.index.discovery import discover

        if state is None:
            return discover(self.root, self.settings)
        return discover(self.root, self.settings, known=state.files, skips=self._trusted_skips(state),
                        path_rules=state.path_rules if state.complete else "")

    def _trusted_skips(self, state: IndexState) -> dict[str, SkipRecord]:
        """The recorded content verdicts discovery may reuse. One made under other rules is dropped; one
        whose file was written as that run listed (racy, see RACY_NS) stands only on its git blob id."""
        from hippo.index.discovery import CONTENT_RULES

        if state.skip_rules != CONTENT_RULES:
            return {}
        racy_from = state.listed_at_ns - RACY_NS
        self._racy_skips = 0
        out: dict[str, SkipRecord] = {}
        for rel, rec in state.skipped_files.items():
            if rec.mtime_ns >= racy_from:
                self._racy_skips += 1
                rec = SkipRecord(-1, -1, rec.reason, rec.blob)
            out[rel] = rec
        return out

    def _keep_skips(self, state: IndexState, disc) -> int:
        """Record this listing's content verdicts in the state; nonzero when that changes state.json (or a
        racy record was checked again and the state must move its listing time on)."""
        from hippo.index.discovery import CONTENT_RULES

        skips = getattr(disc, "content_skips", None)
        if skips is None:
            return 0
        racy, self._racy_skips = getattr(self, "_racy_skips", 0), 0
        if skips == state.skipped_files and state.skip_rules == CONTENT_RULES:
            return racy
        state.skipped_files, state.skip_rules = dict(skips), CONTENT_RULES
        return 1

    def _has_table(self) -> bool:
        return IndexDir(self.index_dir).db.exists() and self._store().has_chunks()

    # --- steps ---------------------------------------------------------------------------------
    def _store(self):
        if getattr(self, "_store_obj", None) is None:
            from hippo.index.store import Store

            self._store_obj = Store(self.index_dir, self._dim, writer=True)
        return self._store_obj

    def _open_state(self, full: bool, report: IndexReport) -> IndexState:
        state = load_state(self.index_dir)
        db_exists = IndexDir(self.index_dir).db.exists()
        usable = (state is not None and state.schema_version == SCHEMA_VERSION
                  and state.model_id == self.model_name and db_exists and not full)
        if usable:
            damage = _table_damage(self.index_dir, state)
            if damage:
                raise DamagedIndexError(damage)
            self._dim = state.dim
            return state
        # Model, schema or layout changed (or the user asked): rebuild cleanly instead of mixing.
        report.rebuilt = state is not None or db_exists
        integrity.forget(self.index_dir)
        shutil.rmtree(IndexDir(self.index_dir).db, ignore_errors=True)
        integrity.clear_mark(self.index_dir)
        emb = self.embedder()
        self._dim = emb.dim
        state = IndexState(model_id=self.model_name, dim=emb.dim, graph_version=GRAPH_VERSION)
        save_state(self.index_dir, state)
        return state

    def _changed_files(self, files, state: IndexState, report: IndexReport, *, regraph: bool = False,
                       hash_new: bool = True) -> tuple[list[FileEntry], set[str]]:
        """The files whose content differs from the index, and the sha1s of those hashed here. Reads only
        files whose blob id or stat changed, and only to compare them with their record (or, `hash_new`, to
        tell a renamed file); their bytes are read again when their batch is written (`_FileBatches`), so a
        big run never holds every file at once. `regraph` (the graph column was written by another
        extraction) re-reads and re-indexes every file."""
        changed: list[FileEntry] = []
        arrived: set[str] = set()
        self._touched = 0  # records updated in place (re-read with the same bytes, or a blob id adopted)
        for f in files:
            rec = state.files.get(f.path)
            if rec is not None and not regraph:
                if f.blob and rec.blob == f.blob:
                    # git vouches for the content. The recorded stat is left alone: git's verdict and our
                    # lstat are not taken at the same instant, and a stale stat only costs one re-read later.
                    continue
                if still_holds(rec, f.size, f.mtime_ns, f.blob, state.listed_at_ns):
                    if f.blob and not rec.blob:  # indexed while dirty/untracked, now committed as is
                        rec.blob = f.blob
                        self._touched += 1
                    continue
            if rec is None and not hash_new:
                changed.append(f)
                continue
            try:
                data = (self.root / f.path).read_bytes()
            except OSError:
                continue  # vanished between listing and reading: the next run sees it gone
            sha = hashlib.sha1(data).hexdigest()
            if rec is not None and rec.sha == sha and not regraph:
                report.files_read += 1  # (a changed file is counted when its batch reads it)
                # same bytes, new stat or blob: nothing to re-index. Recorded with the stat of the bytes read,
                # not of the listing: a write in between must not hide.
                state.files[f.path] = FileRecord(size=len(data), mtime_ns=f.mtime_ns, sha=sha, blob=f.blob,
                                                 chunks=rec.chunks)
                self._touched += 1
                continue
            changed.append(f)
            arrived.add(sha)
        return changed, arrived

    def _keyword_phase(self, state, changed, deleted, report, *, save_last: bool = True) -> None:
        store = self._store()
        total = len(changed) + len(deleted)
        done = 0
        self.progress("files", 0, total)  # the bar's clock starts with the work, not after the first batch
        pending_delete = list(deleted)
        since_save = 0
        from hippo.index import parallel

        # Into a table with no row yet (a first build, a rebuild), every batch's files are new: appended, not
        # merged (a kill leaves rows behind, so the next run finds the table non-empty and merges).
        fresh = not deleted and not self._has_table()
        # A big run has the next batches chunked in worker processes while this one is written (index/parallel.py).
        batches = _FileBatches(self.root, changed, report)
        records = batches.records
        workers = parallel.worker_count(len(changed), self.settings.threads)
        results = parallel.batch_results(batches, self.model_name, workers, self.index_dir)
        with contextlib.closing(results):  # an interrupted run ends its workers now, not at garbage collection
            for n, got in enumerate(results):
                i, batch = n * FILE_BATCH, batches.taken.pop(n)
                rows_by_path = {rel: self._kept_rows(rel, r, report) for rel, r in zip(batch, got, strict=True)}
                rows = [r for rs in rows_by_path.values() for r in rs]
                cached = store.cached_vectors(r["vkey"] for r in rows)
                zero = [0.0] * self._dim
                for r in rows:
                    vec = cached.get(r["vkey"])
                    r["embedded"] = vec is not None
                    r["vector"] = vec if vec is not None else zero
                report.vectors_reused += sum(1 for r in rows if r["embedded"])
                paths = list(rows_by_path) + pending_delete
                if fresh:
                    store.append_rows(rows)
                elif paths:
                    store.replace_files(paths, rows)
                for rel, rs in rows_by_path.items():
                    rec = records[rel]
                    rec.chunks = len(rs)
                    state.files[rel] = rec
                for rel in pending_delete:
                    state.files.pop(rel, None)
                pending_delete = []
                report.chunks_written += len(rows)
                done += len(batch) + (len(deleted) if i == 0 else 0)
                since_save += len(batch)
                last = i + FILE_BATCH >= len(changed)
                # Each batch is one table commit; state.json (a record per file) follows once the files written
                # since its last save reach a tenth of those it holds. Saved after every batch, a 100k-file first
                # index rewrote a file growing to ~50 MB some 400 times; now it writes ~10 times its final size in
                # all. A kill redoes at most that tenth: files the table holds but state.json does not are re-read.
                if (save_last or not last) and (last or since_save >= max(FILE_BATCH, len(state.files) // 10)):
                    save_state(self.index_dir, state)
                    since_save = 0
                self.progress("files", done, total)
        store.ensure_indexes()  # cheap when present; also repairs a run killed before creating them

    @staticmethod
    def _kept_rows(rel: str, got, report: IndexReport) -> list[dict]:
        """One file's rows (parallel.file_rows); a file that could not be chunked is left out (no rows) and
        reported, never fatal.

        Its record still goes into the state with its sha, so later runs do not retry it until it changes.
        """
        if isinstance(got, list):
            return got
        name, message = got
        first = (message.strip().splitlines() or [""])[0][:120]
        report.notices.append(f"skipped {_shown(rel)}: it could not be chunked ({name}{': ' + first if first else ''})")
        report.skipped["chunk_error"] = report.skipped.get("chunk_error", 0) + 1
        return []

    def _vector_order(self, store, pending) -> list:
        """The pending rows as Filters in the order they are embedded: recently changed source (the last
        commits and the work tree), other source, tests, then docs, examples and everything else."""
        from hippo.core import gitutil
        from hippo.index.store import Filter

        paths = sorted({r["path"] for r in store.rows(pending, columns=["path"])})
        try:
            recent = gitutil.recently_changed(self.root) if gitutil.is_git_repo(self.root) else set()
        except Exception:  # noqa: BLE001 - order is a nicety; every row is still embedded
            recent = set()
        prefix = _top_level_prefix(self.root)
        tiers: dict[int, list[str]] = {}
        for p in paths:
            tiers.setdefault(vector_priority(p, (prefix + p) in recent), []).append(p)
        out: list[Filter] = []
        for tier in sorted(tiers):
            group = tiers[tier]
            out.extend(Filter(paths=tuple(group[i:i + PATHS_PER_FILTER]), embedded=False)
                       for i in range(0, len(group), PATHS_PER_FILTER))
        return out + [pending]  # rows written meanwhile (a path listed in no tier) are embedded last

    def _record_git(self, state: IndexState, status=None) -> None:
        """HEAD and branch as the listing's `git status` saw them (or asked now for a non-top-level root).
        The branch is stored redacted: a token in a branch name must not sit in state.json (issue 19)."""
        from hippo.core.secrets import redact_name

        if status is not None:
            state.indexed_commit, state.branch = status.head, status.branch and redact_name(status.branch)
            return
        from hippo.core import gitutil

        if gitutil.is_git_repo(self.root):
            state.indexed_commit = gitutil.head_commit(self.root)
            branch = gitutil.current_branch(self.root)
            state.branch = branch and redact_name(branch)

    def _cochange_current(self) -> bool:
        from hippo.index import cochange

        return cochange.is_current(self.index_dir)

    def _cochange(self, state: IndexState) -> None:
        """Co-change history up to the indexed commit (index/cochange.py); it never fails an index run."""
        from hippo.index import cochange

        try:
            cochange.update(self.root, self.index_dir, state.indexed_commit)
        except Exception as exc:  # noqa: BLE001 - history is a ranking hint, the index is what matters
            from hippo.core.runtime import log

            log(self.index_dir, "co-change history not updated", exc)

    def _fold(self, store, state: IndexState, fold: _Fold) -> None:
        """Fold the rows the vector phase rewrote into the indexes (and compact its small fragments) so that
        keyword search does not flat-scan them. Old versions younger than the readers' margin are kept when a
        reader is open. A failed fold costs only speed: it is logged and the phase goes on."""
        started = time.monotonic()
        try:
            integrity.forget(self.index_dir)  # compaction rewrites files: the sums are recorded after the run
            ran, _ = store.optimize()
        except Exception as exc:  # noqa: BLE001 - the rows are written; the next optimize folds them
            from hippo.core.runtime import log

            log(self.index_dir, "vector phase: folding rows into the full-text index failed", exc)
            ran = False
        took = time.monotonic() - started
        fold.rows = 0
        fold.not_before = time.monotonic() + VECTOR_FOLD_SHARE * took
        if ran:
            state.optimized_at = time.time()

    def _vector_phase(self, state: IndexState, report: IndexReport, *, save: bool = True) -> None:
        """Embed every row still without its vector. `save=False`: the caller writes state.json next."""
        store = self._store()
        if not store.has_chunks():
            state.vectors_complete = True
            if save:
                save_state(self.index_dir, state)
            return
        from hippo.index.store import Filter, chunk_schema

        pending = Filter(embedded=False)
        total = store.count(pending)
        flags = (state.vectors_complete, state.vectors_skipped)
        if total and state.vectors_complete:
            state.vectors_complete = False
        if state.vectors_skipped:
            state.vectors_skipped = False  # this run embeds: no longer a keyword-only index
        if save and flags != (state.vectors_complete, state.vectors_skipped):
            save_state(self.index_dir, state)
        if total:
            self.progress("keyword-ready", len(state.files), total)
            self.progress("vectors", 0, total)
        emb = None
        done = 0
        # Page through the pending rows without their placeholder vectors: a 100k-chunk first build would
        # otherwise hold ~3 GB of Python dicts before embedding anything. Each page is filled in before the
        # next is read, so the same filter yields the following page. Pages come in priority order (what the
        # user works on first, docs and tests last), so a stopped or still-running build has its vectors
        # where they matter.
        columns = [f.name for f in chunk_schema(self._dim) if f.name != "vector"]
        groups = iter(self._vector_order(store, pending) if total > EMBED_WRITE_BATCH else [pending])
        group = next(groups, None)
        fold = _Fold()
        while done < total and group is not None:
            batch = store.rows(group, columns=columns, limit=EMBED_WRITE_BATCH)
            if not batch:
                group = next(groups, None)
                continue
            texts: dict[str, str] = {}
            for r in batch:
                texts.setdefault(r["vkey"], embed_text(r["symbol"], r["breadcrumb"], r["text"]))
            known = store.cached_vectors(texts)
            todo = [k for k in texts if k not in known]
            if todo:
                if emb is None and self._embedder is None:
                    from hippo.index.embedding import needs_preparing

                    if needs_preparing(self.settings.model):
                        self.progress("model-prepare", 0, 0)  # the bar would otherwise sit at 0/N unexplained
                emb = emb or self.embedder()
                vecs = emb.embed_passages([texts[k] for k in todo])
                fresh = dict(zip(todo, vecs, strict=True))
                store.cache_vectors(fresh)
                known.update(fresh)
                report.chunks_embedded += len(todo)
            for r in batch:
                r["vector"] = known[r["vkey"]]
                r["embedded"] = True
                r.pop("_distance", None)
            store.update_vectors(batch)
            done += len(batch)
            fold.rows += len(batch)
            if fold.due():
                self._fold(store, state, fold)
            self.progress("vectors", done, total)
        if fold.rows >= VECTOR_FOLD_ROWS:
            self._fold(store, state, fold)
        elif total > SMALL_UPDATE_VECTORS:  # fewer left: the next maintenance counts them (a small update's
            state.rows_since_optimize += fold.rows  # rows are the ones its keyword phase counted already)
        if store.ensure_vector_index():
            report.vector_index_built = True
        state.vectors_complete = True
        if save:
            save_state(self.index_dir, state)


class _FileBatches:
    """The changed files in batches of FILE_BATCH, each read from disk when it is taken (`batches[n]`, by
    index/parallel.py), not before: a 100k-file first index held every file's bytes at once (~1.5 GB of
    source). A batch's files are recorded (`records`) with the sha1 of the bytes read then and the stat of
    the listing; a file gone by then is left out of its batch (`taken[n]`: the paths it holds)."""

    def __init__(self, root: Path, files: list[FileEntry], report: IndexReport) -> None:
        self.root, self.files, self.report = root, files, report
        self.records: dict[str, FileRecord] = {}
        self.taken: dict[int, list[str]] = {}

    def __len__(self) -> int:
        return max(1, -(-len(self.files) // FILE_BATCH))  # an empty run is one empty batch (its deletions)

    def __getitem__(self, n: int) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        for f in self.files[n * FILE_BATCH:(n + 1) * FILE_BATCH]:
            try:
                data = (self.root / f.path).read_bytes()
            except OSError:
                continue  # vanished since it was listed: the next run sees it gone
            self.report.files_read += f.path not in self.records
            self.records[f.path] = FileRecord(size=len(data), mtime_ns=f.mtime_ns,
                                              sha=hashlib.sha1(data).hexdigest(), blob=f.blob)
            out.append((f.path, data))
        self.taken[n] = [rel for rel, _ in out]
        return out


class _Fold:
    """When the vector phase next folds its rewritten rows into the full-text indexes (VECTOR_FOLD_ROWS)."""

    def __init__(self) -> None:
        self.rows = 0  # rows rewritten since the last fold
        self.not_before = 0.0  # time.monotonic() before which no fold starts

    def due(self) -> bool:
        return self.rows >= VECTOR_FOLD_ROWS and time.monotonic() >= self.not_before


def index_repo(root: Path, settings: Settings | None = None, *, full: bool = False, dry_run: bool = False,
               progress: Progress | None = None, embedder=None, vectors: bool = True) -> IndexReport:
    return Indexer(root, settings, embedder=embedder, progress=progress, create=not dry_run).run(
        full=full, dry_run=dry_run, vectors=vectors)


# Environment read on the indexing path outside Settings: an index run handed to the warm server must see
# the same values as the caller would have.
RUN_ENV = ("HIPPO_HOME", "HIPPO_VECTOR_INDEX_MIN_ROWS", "HIPPO_NO_BACKGROUND_INDEX")


def run_key(settings: Settings) -> str:
    """What decides how an index run behaves besides the files: the settings and RUN_ENV. The warm server
    runs a caller's `hippo index` only when its own key is the caller's."""
    import json
    from dataclasses import asdict

    env = {k: os.environ.get(k) for k in RUN_ENV}
    return json.dumps({"settings": asdict(settings), "env": env}, sort_keys=True, default=str)


def repair(root: Path, settings: Settings, damage: DamagedIndexError, *, wait: bool) -> IndexReport | None:
    """What every reader does with DamagedIndexError: mark the index damaged, then have it rebuilt.

    `wait=True` (the CLI) rebuilds the keyword phase now, so the caller can answer from it, and leaves the
    vectors to a background run. `wait=False` (hooks, warm server, MCP) only starts a detached `hippo index
    --quiet`, unless one is already running; that run finds the mark and rebuilds.
    """
    from hippo.core.runtime import spawn_detached

    index_dir = IndexDir.of(root, settings).path
    integrity.mark_damaged(index_dir, damage.detail)
    report = None
    if wait:
        report = Indexer(root, settings).run(vectors=False)
    if os.environ.get("HIPPO_NO_BACKGROUND_INDEX") != "1" and not IndexDir(index_dir).writer_running():
        spawn_detached(["index", "--quiet"], index_dir, root)
    return report


def vector_priority(path: str, recent: bool) -> int:
    """Embedding order of a file's chunks, lowest first: 0 recently changed source, 1 other source, 2 tests,
    3 docs, examples, vendored or generated text."""
    if pathkind.reads_as_doc(path) or pathkind.is_vendored(path) or pathkind.is_generated(path):
        return 3
    if pathkind.is_test(path):
        return 2
    return 0 if recent else 1


def _top_level_prefix(root: Path) -> str:
    """`root` relative to its git top level, as a path prefix ("" at the top): git names paths from there."""
    from hippo.core import gitutil

    try:
        if gitutil.is_toplevel(root):
            return ""
        top = gitutil.find_root(root)
        rel = os.path.relpath(root, top).replace(os.sep, "/")
        return "" if rel == "." else rel + "/"
    except Exception:  # noqa: BLE001
        return ""
