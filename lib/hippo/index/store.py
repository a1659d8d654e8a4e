"""The only module that imports lancedb: the `chunks` table, the `vectors` cache, full-text indexes, and
every query on them (kNN, full-text, scans, literal and identifier lookups, counts). Callers get plain rows
(dicts) and describe what to read with a `Filter`; SQL is written here only, and every value in it goes
through `sql_str`. Ranking stays with the callers (hippo.retrieval.search).

Writes happen under the indexer's lock, one `merge_insert` per batch of files so a file's old and new
chunks swap in a single commit (readers never see a half-replaced file). Readers re-check the latest
version before each query.

Old table versions are pruned in two tiers (pruning at 0 under an open reader breaks it):
every write run prunes versions older than KEEP_OLD_VERSIONS; and when no reader holds a shared lock on
`readers.lock`, the writer also drops every old version. Readers take that shared lock without ever waiting.

Damage (bit flips, truncated data files, garbage manifests, lost files) surfaces as whatever lancedb or
pyarrow raises. Every Store operation that fails is followed by one full read of each table's latest
version (`check`); only when that read fails too does the Store raise `DamagedIndexError`, so no caller
matches error messages and an ordinary failure (disk full, a bad query) is never taken for damage.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from hippo.core import indexdir
from hippo.core.errors import DamagedIndexError, HippoError
from hippo.core.indexdir import IndexDir
from hippo.core.pathkind import is_test
from hippo.index import rest_client_defer, textcolumn
from hippo.index.textcolumn import TextColumn

os.environ.setdefault("LANCEDB_LOG", "error")

rest_client_defer.defer()  # before lancedb: its REST client's import is half of lancedb's

import lancedb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

CHUNKS = "chunks"
GRAPH = "graph"
VECTORS = "vectors"
KEEP_OLD_VERSIONS = timedelta(minutes=2)  # readers may still hold a version this old; never prune at 0
VECTOR_INDEX_MIN_ROWS = int(os.environ.get("HIPPO_VECTOR_INDEX_MIN_ROWS", "30000"))
# embedded rows held in memory for kNN while there is no vector index (4 bytes x dim each: 77 MB at 384)
MATRIX_MAX_ROWS = int(os.environ.get("HIPPO_VECTOR_MATRIX_ROWS", "50000"))
MATRIX_MIN_TABLE = 50000  # ... in a table this big at least: below it lance's flat scan costs < ~90 ms
TEXT_READ_BATCH = 8192  # rows per batch while the text column is read into memory (keep_text)
MARK_WAIT = 10.0  # longest a reader waits for a prune-everything optimize (about 0.5 s at 10k rows)


def chunk_schema(dim: int) -> pa.Schema:
    return pa.schema([
        pa.field("id", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("start_line", pa.int32()),
        pa.field("end_line", pa.int32()),
        pa.field("language", pa.string()),
        pa.field("symbol", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("breadcrumb", pa.string()),
        pa.field("text", pa.string()),
        pa.field("text_ids", pa.string()),
        pa.field("vkey", pa.string()),  # hash of the embedded text: the vector cache key
        pa.field("embedded", pa.bool_()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
        # the file's code graph (chunking.graph, JSON) on the file's first chunk, "" on the others: it is
        # replaced with the file's chunks in one commit, so a table version's chunks and graph agree
        pa.field("graph", pa.string()),
    ])


def vector_schema(dim: int) -> pa.Schema:
    return pa.schema([
        pa.field("vkey", pa.string(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ])


def sql_str(value: str) -> str:
    """A SQL string literal: the only way user or repo text reaches a `where` clause."""
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    vals = list(values)
    if not vals:
        return "false"
    return f"{column} IN ({', '.join(sql_str(v) for v in vals)})"


def _and(a: str | None, b: str | None) -> str | None:
    if a and b:
        return f"({a}) AND ({b})"
    return a or b


FTS_COLUMNS = ("text", "text_ids")  # raw text (stemmed) and the code-aware identifier split (see chunk.py)
MAX_FTS_CHARS = 2000
SCAN_CACHE_ENTRIES = 32  # substring-scan results kept per open table version
AT_COLUMNS = ("id", "path", "start_line", "end_line", "language", "symbol", "text")


@dataclass(frozen=True)
class Filter:
    """Which chunks a read may return. The Store turns it into SQL; callers never write any.

    `paths=()` matches nothing (a glob that selected no file), `None` every path.
    """

    paths: tuple[str, ...] | None = None
    embedded: bool | None = None  # only rows whose vector is computed (True) or not yet (False)

    def sql(self) -> str | None:
        where = None
        if self.paths is not None:
            where = sql_in("path", self.paths)
        if self.embedded is not None:
            where = _and(where, f"embedded = {'true' if self.embedded else 'false'}")
        return where


def _where(flt: Filter | None, extra: str | None = None) -> str | None:
    if flt is not None and not isinstance(flt, Filter):  # an SQL string from before Filter existed
        raise TypeError(f"Store reads take a store.Filter, not {type(flt).__name__}")
    return _and(flt.sql() if flt is not None else None, extra)


def _contains(terms: Sequence[str], *, case_sensitive: bool, require_all: bool) -> str:
    """`text` holds the terms (a substring test, no tokenizer): all of them, or any."""
    if case_sensitive:
        conds = [f"strpos(text, {sql_str(t)}) > 0" for t in terms]
    else:
        conds = [f"strpos(lower(text), {sql_str(t.lower())}) > 0" for t in terms]
    return " AND ".join(conds) if require_all else "(" + " OR ".join(conds) + ")"


def fts_words(text: str) -> str:
    """What the full-text parser may see: words only (its query syntax would reject or reinterpret the rest)."""
    return " ".join(re.findall(r"[A-Za-z0-9_]+", text))[:MAX_FTS_CHARS]


def remote_row_count(uri: str, storage_options: dict[str, str] | None = None) -> int:
    """Open a `chunks` table at `uri` (an uploaded team snapshot) as any LanceDB client would; its row count."""
    db = lancedb.connect(uri, storage_options=storage_options)
    return db.open_table(CHUNKS).count_rows()


class ReaderMark:
    """A shared lock on `readers.lock` (indexdir) held while a process may read a table version.

    The writer takes this lock exclusively only for the short final optimize that drops every old version,
    never while indexing; a reader that meets it waits up to MARK_WAIT seconds, then goes on unmarked
    (and tries again at its next refresh).
    """

    def __init__(self, index_dir: Path) -> None:
        self.path = IndexDir(index_dir).readers_lock
        self.fh: IO[str] | None = None

    def take(self, wait: float = 0.0) -> bool:
        if self.fh is not None:
            return True
        try:
            fh = indexdir.open_lock(self.path)
        except OSError:
            return False
        try:
            taken = indexdir.wait_lock(fh, wait, shared=True, poll=0.02)
        except OSError:
            taken = False
        if not taken:
            fh.close()
            return False
        self.fh = fh
        return True

    def release(self) -> None:
        if self.fh is not None:
            self.fh.close()  # closing drops the lock
            self.fh = None

    __del__ = release  # a Searcher dropped without close() still lets go of its mark, not at interpreter exit


def no_readers(index_dir: Path):
    """An open file holding the exclusive readers lock when no reader is marked, else None."""
    try:
        fh = indexdir.open_lock(IndexDir(index_dir).readers_lock)
    except OSError:
        return None
    try:
        taken = indexdir.try_lock(fh)
    except OSError:
        taken = False
    if not taken:
        fh.close()
        return None
    return fh


CHECK_BATCH = 4096  # rows per batch of the full read that confirms damage


def _first_line(exc: BaseException) -> str:
    """`Type: first line` of an error, without the Rust source location lance appends."""
    text = str(exc).strip().splitlines()
    if not text:
        return type(exc).__name__
    line = re.sub(r",\s*/\S+\.rs:\d+(:\d+)?\s*$", "", text[0])
    return f"{type(exc).__name__}: {line[:160]}"


@contextlib.contextmanager
def _quiet_fd2():
    """Silence fd 2 while a damaged file is read: a Rust panic inside lance prints a backtrace there."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _guarded(method):
    """Turn a failure of `method` into DamagedIndexError when a full read confirms the table is damaged."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self.reading():
            return method(self, *args, **kwargs)

    return wrapper


def _optional(method):
    """Like `_guarded`, for a retriever whose failure is harmless (no FTS index yet, an engine without
    `regexp_like`, a tokenizer edge case): `[]` unless the table is damaged. The other retrievers answer."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except HippoError:
            raise
        except Exception as exc:  # noqa: BLE001 - see the docstring
            damaged = self.damage(exc)
            if damaged is not None:
                raise damaged from exc
            return []

    return wrapper


class Store:
    """An open LanceDB database under `<index_dir>/db`.

    `writer=True` is for the indexer (which holds the writer lock); every other Store marks itself as a
    reader so the writer knows not to drop the versions it may be reading.
    """

    def __init__(self, index_dir: Path, dim: int, *, fresh_reads: bool = False, writer: bool = False) -> None:
        self.dim = dim
        self.index_dir = Path(index_dir)
        self.writer = writer
        self.reader_mark = None if writer else ReaderMark(self.index_dir)
        if self.reader_mark is not None:
            self.reader_mark.take(MARK_WAIT)  # before opening any version
        kw: dict[str, Any] = {"read_consistency_interval": timedelta(0)} if fresh_reads else {}
        self.db = lancedb.connect(str(IndexDir(self.index_dir).db), **kw)
        self._chunks = None
        self._vectors = None
        self._checked: object = None  # the table versions a full read last found intact
        self._scan_cache: dict[tuple, list[dict]] = {}  # emptied when refresh() moves to a newer version
        self._literal_cache: dict[tuple, dict[str, list[dict]]] = {}  # the same, for literal_lookup
        self._symbol_cache: tuple[int, SymbolIndex] | None = None  # (table version, its symbol index)
        self._count_cache: tuple[int, int] | None = None  # (table version, row count)
        self._span_cache: tuple[int, Spans] | None = None  # (version, line spans by path)
        self._text_cache: tuple[int, TextColumn | None] | None = None  # (version, its text; None: too big)
        self._meta_cache: tuple[int, dict[int, tuple]] | None = None  # (version, row id -> AT_COLUMNS but text)
        self._test_text_cache: tuple[TextColumn, TextColumn] | None = None  # (the text column, its test rows)
        self._matrix_cache: tuple[int, tuple[np.ndarray, np.ndarray] | None] | None = None  # (version, embedded rows)
        self._keep_text = False  # keep_text(): a long-lived reader holds the text column in memory

    # --- tables -------------------------------------------------------------------------------
    def _names(self) -> set[str]:
        res = self.db.list_tables()
        return set(getattr(res, "tables", res))

    def _table(self, name: str, schema, create: bool):
        """Open `name` if it exists, create it (when asked) if not; None otherwise."""
        if name in self._names():
            return self.db.open_table(name)
        if create:
            return self.db.create_table(name, schema=schema(self.dim))
        return None

    @_guarded
    def chunks(self, create: bool = False):
        if self._chunks is None:
            self._chunks = self._table(CHUNKS, chunk_schema, create)
            if self._chunks is not None and self.writer and GRAPH not in self._chunks.schema.names:
                # a table from before the code graph: the column is added empty, and the indexer
                # re-reads every file once (state.graph_version) to fill it in
                self._chunks.add_columns({GRAPH: "CAST('' AS STRING)"})
        return self._chunks

    @_guarded
    def vectors(self, create: bool = False):
        if self._vectors is None:
            self._vectors = self._table(VECTORS, vector_schema, create)
        return self._vectors

    def has_chunks(self) -> bool:
        return self.chunks() is not None

    def require_chunks(self) -> None:
        """For readers whose state says rows were committed: a chunks table that will not open is damage."""
        if not self.has_chunks():
            raise DamagedIndexError(self.check() or "the chunks table is missing")

    # --- damage -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def reading(self):
        """Wrap queries a caller builds on `chunks()` itself: damage comes out as DamagedIndexError."""
        try:
            yield self
        except HippoError:
            raise
        except Exception as exc:
            damaged = self.damage(exc)
            if damaged is None:
                raise
            raise damaged from exc

    def damage(self, exc: BaseException) -> DamagedIndexError | None:
        """DamagedIndexError when `exc` came from damaged table files, None when the tables read fine."""
        reason = self.check()
        if reason is None:
            return None
        return DamagedIndexError(reason)

    def check(self) -> str | None:
        """Read every row of every table's latest version on a fresh connection; why it failed, or None.

        Costs one scan (~0.1 s per 10k chunks), so it runs only after a failure, and an intact verdict is
        remembered per table version.
        """
        db_dir = IndexDir(self.index_dir).db
        with _quiet_fd2():
            try:
                db = lancedb.connect(str(db_dir))
                res = db.list_tables()
                names = set(getattr(res, "tables", res))
            except Exception as exc:  # noqa: BLE001 - anything here means the database cannot be listed
                return f"the table list cannot be read: {_first_line(exc)}"
            tables = []
            for name in (CHUNKS, VECTORS):
                if name not in names:
                    if (db_dir / f"{name}.lance").is_dir():
                        return f"the {name} table cannot be opened"
                    continue
                try:
                    tbl = db.open_table(name)
                    tables.append((name, tbl, tbl.version))
                except Exception as exc:  # noqa: BLE001
                    return f"the {name} table cannot be opened: {_first_line(exc)}"
            versions = tuple((name, version) for name, _, version in tables)
            if versions and versions == self._checked:
                return None
            for name, tbl, _ in tables:
                try:
                    expected = tbl.count_rows()
                    seen = 0
                    for batch in tbl.search().limit(max(expected, 1)).to_batches(CHECK_BATCH):
                        seen += batch.num_rows
                except Exception as exc:  # noqa: BLE001 - lance, pyarrow and OS errors alike: the read failed
                    return f"the {name} table cannot be read: {_first_line(exc)}"
                if seen != expected:
                    return f"the {name} table lists {expected} rows but {seen} can be read"
        self._checked = versions
        return None

    def refresh(self) -> None:
        self._scan_cache.clear()
        self._literal_cache.clear()
        self._symbol_cache = None
        self._count_cache = None
        self._span_cache = None
        self._text_cache = None
        self._meta_cache = None
        self._test_text_cache = None
        self._matrix_cache = None
        if self.reader_mark is not None:
            self.reader_mark.take(MARK_WAIT)  # before moving to the newest version
        for tbl in (self._chunks, self._vectors):
            if tbl is not None:
                try:
                    tbl.checkout_latest()
                except Exception:  # noqa: BLE001 - a table without versions to move to
                    pass

    # --- writing ------------------------------------------------------------------------------
    def _to_arrow(self, rows: Sequence[dict], schema: pa.Schema) -> pa.Table:
        cols = {}
        for f in schema:
            if f.name == "vector":
                flat = np.concatenate([np.asarray(r["vector"], dtype=np.float32) for r in rows]) \
                    if rows else np.zeros(0, np.float32)
                cols["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), self.dim)
            elif f.name == GRAPH:
                cols[f.name] = pa.array([r.get(GRAPH) or "" for r in rows], type=f.type)
            else:
                cols[f.name] = pa.array([r[f.name] for r in rows], type=f.type)
        return pa.Table.from_pydict(cols, schema=schema)

    @_guarded
    def replace_files(self, paths: Sequence[str], rows: Sequence[dict]) -> None:
        """Atomically make `rows` the complete set of chunks for `paths` (deleted files: no rows)."""
        if not paths:
            return
        tbl = self.chunks(create=True)
        data = self._to_arrow(rows, chunk_schema(self.dim))
        (tbl.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete(sql_in("path", paths))
            .execute(data))

    @_guarded
    def append_rows(self, rows: Sequence[dict]) -> None:
        """Add `rows` of files the table holds no row of (the caller knows: a build into an empty table).
        A plain append: merge_insert joins every batch against the whole table, which made the LanceDB
        writes ~170 of a 100k-file first index's ~450 CPU-s."""
        if rows:
            self.chunks(create=True).add(self._to_arrow(rows, chunk_schema(self.dim)))

    @_guarded
    def update_vectors(self, rows: Sequence[dict]) -> None:
        """Fill in vectors for existing chunk rows (full rows, matched by id)."""
        if not rows:
            return
        data = self._to_arrow(rows, chunk_schema(self.dim))
        self.chunks().merge_insert("id").when_matched_update_all().execute(data)

    @_guarded
    def cache_vectors(self, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        tbl = self.vectors(create=True)
        rows = [{"vkey": k, "vector": v} for k, v in items.items()]
        tbl.merge_insert("vkey").when_not_matched_insert_all().execute(self._to_arrow(rows, vector_schema(self.dim)))

    @_guarded
    def cached_vectors(self, vkeys: Iterable[str]) -> dict[str, np.ndarray]:
        tbl = self.vectors()
        keys = sorted(set(vkeys))
        out: dict[str, np.ndarray] = {}
        if tbl is None or not keys:
            return out
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            t = tbl.search().where(sql_in("vkey", part)).select(["vkey", "vector"]).limit(len(part)).to_arrow()
            vecs = t.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(-1, self.dim)
            for k, v in zip(t.column("vkey").to_pylist(), vecs, strict=True):
                out[k] = v
        return out

    @_guarded
    def ensure_indexes(self) -> None:
        """Create the full-text indexes once; later rows are searchable by flat scan until optimize()."""
        from lancedb.index import FTS, BTree

        tbl = self.chunks()
        if tbl is None:
            return
        have = {idx.name for idx in tbl.list_indices()}
        if "text_idx" not in have:
            tbl.create_index("text", config=FTS(with_position=False), name="text_idx")
        if "text_ids_idx" not in have:
            tbl.create_index("text_ids", config=FTS(stem=False, remove_stop_words=False), name="text_ids_idx")
        if "path_idx" not in have:
            tbl.create_index("path", config=BTree(), name="path_idx")

    @_guarded
    def ensure_vector_index(self, min_rows: int | None = None) -> bool:
        """Build an IVF_PQ index once the table is big enough for brute-force kNN to be slow.

        Measured: flat kNN costs ~1.6 µs/row (90 ms at 50k rows, 760 ms at 500k); IVF_PQ
        queried with nprobes=20, refine_factor=10 answers in 5-10 ms at recall@10 0.98, and costs about a
        minute to build on 2 cores. optimize() folds later rows into it without retraining.
        """
        from lancedb.index import IvfPq

        tbl = self.chunks()
        if tbl is None or "vector_idx" in {idx.name for idx in tbl.list_indices()}:
            return False
        rows = tbl.count_rows("embedded = true")
        if rows < (VECTOR_INDEX_MIN_ROWS if min_rows is None else min_rows):
            return False
        partitions = max(16, min(1024, int(rows ** 0.5)))
        tbl.create_index("vector", config=IvfPq(distance_type="cosine", num_partitions=partitions,
                                                num_sub_vectors=max(1, self.dim // 8)), name="vector_idx")
        return True

    @_guarded
    def optimize(self, *, keep: timedelta = KEEP_OLD_VERSIONS, only_if_alone: bool = False) -> tuple[bool, bool]:
        """Fold new rows into the indexes, compact and prune old versions. Returns (ran, pruned_all).

        When no reader is marked (and the caller holds the writer lock) every old version and any leftover
        of a killed write goes. Otherwise versions younger than `keep` stay, since a reader may be on one;
        `only_if_alone=True` then skips the run entirely.
        """
        tables = [t for t in (self.chunks(), self.vectors()) if t is not None]
        fh = no_readers(self.index_dir)
        if fh is None and only_if_alone:
            return False, False
        try:
            for tbl in tables:
                if fh is not None:
                    with warnings.catch_warnings():  # the warning is about open readers: we hold them off
                        warnings.simplefilter("ignore", UserWarning)
                        tbl.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
                else:
                    tbl.optimize(cleanup_older_than=keep)
        finally:
            if fh is not None:
                fh.close()
        return True, fh is not None

    def close(self) -> None:
        if self.reader_mark is not None:
            self.reader_mark.release()

    # --- reading ------------------------------------------------------------------------------
    @_guarded
    def paths(self) -> set[str]:
        """Every path with at least one chunk (a full scan of one small column; used after a crash)."""
        tbl = self.chunks()
        if tbl is None:
            return set()
        t = tbl.search().select(["path"]).limit(self._every(tbl)).to_arrow()
        return set(t.column("path").to_pylist())

    @_guarded
    def count(self, flt: Filter | None = None) -> int:
        """Rows matching `flt` (all rows without one)."""
        tbl = self.chunks()
        if tbl is None:
            return 0
        where = _where(flt)
        return tbl.count_rows(where) if where else tbl.count_rows()

    @_guarded
    def rows(self, flt: Filter | None = None, columns: Sequence[str] | None = None,
             limit: int | None = None) -> list[dict]:
        """Rows matching `flt` in table order, every one unless `limit` (the indexer's unembedded batches)."""
        tbl = self.chunks()
        if tbl is None:
            return []
        q = tbl.search()
        where = _where(flt)
        if where:
            q = q.where(where)
        if columns:
            q = q.select(list(columns))
        q = q.limit(limit if limit is not None else self._every(tbl))
        return q.to_list()

    @_guarded
    def chunks_at(self, path: str, line: int, columns: Sequence[str] = AT_COLUMNS) -> list[dict]:
        """Chunks of `path` whose line range covers `line` (nested units: several), in table order.

        A filter on `path` scans the table (~40 ms at 50k chunks, several times per failure), so the line
        spans of every path are read once per table version and the rows then taken by row id."""
        tbl = self.chunks()
        if tbl is None:
            return []
        ids = self._spans(tbl).covering(path, int(line))
        if not ids:
            return []
        kept = self._rows_by_id(tbl, ids, columns)
        if kept is not None:
            return [kept[r] for r in ids if r in kept]
        rows = (tbl.search().where(f"_rowid IN ({', '.join(str(r) for r in ids)})").select(list(columns))
                .with_row_id(True).limit(len(ids)).to_list())
        order = {rid: k for k, rid in enumerate(ids)}
        rows.sort(key=lambda r: order.get(r["_rowid"], 0))
        for r in rows:
            r.pop("_rowid", None)
        return rows

    def _spans(self, tbl) -> Spans:
        """The line spans of every chunk by path (Spans): one read of three small columns per table version."""
        version = tbl.version
        if self._span_cache is None or self._span_cache[0] != version:
            t = (tbl.search().select(["path", "start_line", "end_line"]).with_row_id(True)
                 .limit(self._every(tbl)).to_arrow())
            self._span_cache = (version, Spans.build(t))
        return self._span_cache[1]

    @_guarded
    def chunks_covering(self, spots: Sequence[tuple[str, int]], flt: Filter | None = None,
                        columns: Sequence[str] = AT_COLUMNS) -> dict[tuple[str, int], dict]:
        """For each (path, line), the innermost chunk covering it, in one read (definitions the code graph
        knows, found by their first line)."""
        tbl = self.chunks()
        spots = list(dict.fromkeys((p, int(n)) for p, n in spots))
        if tbl is None or not spots:
            return {}
        ors = " OR ".join(f"(path = {sql_str(p)} AND start_line <= {n} AND end_line >= {n})" for p, n in spots)
        rows = tbl.search().where(_where(flt, f"({ors})")).select(list(columns)).limit(self._every(tbl)).to_list()
        out: dict[tuple[str, int], dict] = {}
        for p, n in spots:
            cover = [r for r in rows if r["path"] == p and r["start_line"] <= n <= r["end_line"]]
            if cover:
                out[(p, n)] = min(cover, key=lambda r: (r["end_line"] - r["start_line"], r["start_line"]))
        return out

    @_guarded
    def nearest(self, qvec, limit: int, flt: Filter | None = None) -> list[dict]:
        """The `limit` embedded rows nearest to `qvec` by cosine, nearest first; each row gets `_cos`.

        Rows not embedded yet hold placeholder vectors and never rank. nprobes/refine_factor only matter once
        the IVF_PQ index exists (see ensure_vector_index). Before it does, lance answers with a flat scan of
        the whole vector column (~2 CPU-s at 1M rows, however few are embedded), so while at most
        MATRIX_MAX_ROWS rows have a vector they are held in memory (_embedded_matrix) and ranked there.
        """
        tbl = self.chunks()
        if tbl is None:
            return []
        held = self._embedded_matrix(tbl) if flt is None else None
        if held is not None:
            return self._nearest_held(tbl, held, qvec, limit)
        q = tbl.search(qvec).metric("cosine").nprobes(20).refine_factor(10).limit(limit)
        q = q.where(_where(flt, "embedded = true"), prefilter=True)
        rows = q.to_list()
        for r in rows:
            r["_cos"] = 1.0 - float(r.pop("_distance", 1.0))
        return rows

    def _embedded_matrix(self, tbl) -> tuple[np.ndarray, np.ndarray] | None:
        """(row ids, their vectors as unit rows) of the open version's embedded rows, read once per version;
        None when the vector index exists (lance answers from it), more than MATRIX_MAX_ROWS are embedded, or
        the table is under MATRIX_MIN_TABLE rows (a 1k-file repository's warm search was no faster)."""
        version = tbl.version
        if self._matrix_cache is None or self._matrix_cache[0] != version:
            held = None
            if self._every(tbl) >= MATRIX_MIN_TABLE and "vector_idx" not in {idx.name for idx in tbl.list_indices()}:
                n = tbl.count_rows("embedded = true")
                if n <= MATRIX_MAX_ROWS:
                    t = (tbl.search().where("embedded = true").select(["vector"]).with_row_id(True)
                         .limit(max(n, 1)).to_arrow())
                    ids = t.column("_rowid").to_numpy()
                    col = t.column("vector").combine_chunks()
                    mat = col.values.to_numpy().astype(np.float32).reshape(len(col), self.dim) if len(col) else \
                        np.zeros((0, self.dim), dtype=np.float32)
                    norms = np.linalg.norm(mat, axis=1, keepdims=True)
                    held = (ids, mat / np.where(norms > 0, norms, 1.0))
            self._matrix_cache = (version, held)
        return self._matrix_cache[1]

    def _nearest_held(self, tbl, held: tuple[np.ndarray, np.ndarray], qvec, limit: int) -> list[dict]:
        """nearest() over the held rows: the same rows, order and cosines as lance's flat scan (float32)."""
        ids, mat = held
        if not len(ids) or limit <= 0:
            return []
        q = np.asarray(qvec, dtype=np.float32).reshape(-1)
        qn = float(np.linalg.norm(q))
        cos = mat @ (q / qn if qn > 0 else q)
        k = min(limit, len(ids))
        top = np.argpartition(-cos, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.argsort(-cos[top], kind="stable")]
        want = [int(r) for r in ids[top]]
        rows = (tbl.search().where(f"_rowid IN ({', '.join(map(str, want))})").with_row_id(True)
                .limit(len(want)).to_list())
        by_id = {r.pop("_rowid"): r for r in rows}
        out = []
        for rid, c in zip(want, cos[top].tolist(), strict=True):
            row = by_id.get(rid)
            if row is not None:
                row["_cos"] = float(c)
                out.append(row)
        return out

    @_optional
    def fulltext(self, text: str, limit: int, flt: Filter | None = None) -> list[dict]:
        """BM25 over both full-text columns (FTS_COLUMNS) for the words of `text`, best first; [] when the
        full-text indexes are not built yet."""
        from lancedb.query import FullTextOperator, MultiMatchQuery

        words = fts_words(text)
        tbl = self.chunks()
        if not words or tbl is None:
            return []
        q = tbl.search(MultiMatchQuery(words, list(FTS_COLUMNS), boosts=None, operator=FullTextOperator.OR), query_type="fts")
        where = _where(flt)
        if where:
            q = q.where(where, prefilter=True)
        return q.limit(limit).to_list()

    @_optional
    def regex_scan(self, pattern: str, limit: int, flt: Filter | None = None) -> list[dict]:
        """Up to `limit` rows (table order) whose text matches the regular expression `pattern`.

        A regex over the whole text column costs ~0.6 s at 50k chunks (a failure nothing else located runs
        one, and runs it again when the command is re-run): cached until refresh(), like substring_scan."""
        tbl = self.chunks()
        if tbl is None:
            return []
        key = ("regex", flt, pattern, limit)
        if key not in self._scan_cache:
            rows = tbl.search().where(_where(flt, f"regexp_like(text, {sql_str(pattern)})")).limit(limit).to_list()
            if len(self._scan_cache) >= SCAN_CACHE_ENTRIES:
                self._scan_cache.pop(next(iter(self._scan_cache)))
            self._scan_cache[key] = rows
        return [dict(r) for r in self._scan_cache[key]]

    @_optional
    def substring_scan(self, terms: Sequence[str], limit: int, flt: Filter | None = None, *,
                       case_sensitive: bool = False, require_all: bool = False) -> list[dict]:
        """Up to `limit` rows (table order) whose text holds any (or, `require_all`, every) of `terms`.

        A substring scan reads the whole text column (~50 ms at 50k chunks) and a failing command is often
        re-run, so answers are cached until refresh() moves to a newer table version. Callers get copies.
        """
        terms = [t for t in terms if t]
        tbl = self.chunks()
        if not terms or tbl is None:
            return []
        key = (flt, tuple(terms), case_sensitive, require_all, limit)
        if key not in self._scan_cache:
            where = _where(flt, _contains(terms, case_sensitive=case_sensitive, require_all=require_all))
            rows = tbl.search().where(where).limit(limit).to_list()
            if len(self._scan_cache) >= SCAN_CACHE_ENTRIES:
                self._scan_cache.pop(next(iter(self._scan_cache)))
            self._scan_cache[key] = rows
        return [dict(r) for r in self._scan_cache[key]]

    @_guarded
    def literal_lookup(self, terms: Sequence[str], limit: int, flt: Filter | None = None, *,
                       case_sensitive: bool = True, columns: Sequence[str] = AT_COLUMNS,
                       in_tests: Sequence[str] = ()) -> dict[str, list[dict]]:
        """For each of `terms`, up to `limit` chunks whose text holds it verbatim, in one pass over the table.

        For exact strings a failure names (message fragments, `raise Name(`): one scan instead of one ranked
        search per string. The scan streams and stops once every term has `limit` chunks, so a common term
        cannot crowd out a rare one. Terms nothing holds map to []. A term also in `in_tests` (a test's
        title) counts only chunks of test files (pathkind.is_test).
        """
        wanted = list(dict.fromkeys(t for t in terms if t))
        found: dict[str, list[dict]] = {t: [] for t in wanted}
        tbl = self.chunks()
        if not wanted or tbl is None:
            return found
        tests_only = frozenset(in_tests) & set(wanted)
        key = (flt, tuple(wanted), limit, case_sensitive, tuple(columns), tests_only)
        if key not in self._literal_cache:  # a scan of the text column: cached until refresh, like substring_scan
            if len(self._literal_cache) >= SCAN_CACHE_ENTRIES:
                self._literal_cache.pop(next(iter(self._literal_cache)))
            texts = self._text_column(tbl) if self._keep_text and flt is None and case_sensitive else None
            if texts is not None:
                self._literal_cache[key] = self._literal_find(tbl, texts, wanted, found, limit, columns, tests_only)
            else:
                rest = self._literal_narrowed(tbl, wanted, found, limit, columns, tests_only) \
                    if self._keep_text and flt is None and case_sensitive else wanted
                if rest:
                    self._literal_scan(tbl, rest, found, limit, flt, case_sensitive, columns, tests_only)
                self._literal_cache[key] = found
        return {t: [dict(r) for r in rows] for t, rows in self._literal_cache[key].items()}

    def keep_text(self) -> bool:
        """For a long-lived reader (the warm server): from now on literal_lookup reads the text column into
        memory once per table version and answers from it (textcolumn.py), starting with this version, now.
        A one-shot process keeps scanning: reading the column costs about what one scan does. True when this
        version's column is held (False: over textcolumn.MAX_BYTES, lookups scan)."""
        self._keep_text = True
        tbl = self.chunks()
        if tbl is None:
            return False
        self._rows_by_id(tbl, [], AT_COLUMNS)  # the text column and the rows' other columns, now
        texts = self._text_column(tbl)
        if texts is not None:
            self._test_text_column(tbl, texts)
        return texts is not None

    @_guarded
    def prepare_lookups(self) -> None:
        """For a long-lived reader, at warm-up: what a failure's first lookups would otherwise build on the
        hook's clock (the line spans of chunks_at, the symbol index): ~1.5 CPU-s at 1M chunks, over a hook's
        3 s wait for the server once the machine is loaded."""
        tbl = self.chunks()
        if tbl is not None:
            self._spans(tbl)
            self._symbol_index(tbl)

    def _text_column(self, tbl) -> TextColumn | None:
        """The open version's text column in memory (textcolumn.py), read once per version; None when it
        is bigger than textcolumn.MAX_BYTES (then lookups scan)."""
        version = tbl.version
        if self._text_cache is None or self._text_cache[0] != version:
            self._text_cache = (version, self._read_text_column(tbl))
        return self._text_cache[1]

    def _read_text_column(self, tbl) -> TextColumn | None:
        """The text column in batches, given up (None) as soon as it passes textcolumn.MAX_BYTES: read whole
        first, a 100k-file index (~1 GB of text) took ~1.5 GB of the warm server's memory only to drop it."""
        total = self._every(tbl)
        q = tbl.search().select(["text"]).with_row_id(True).limit(total)
        batches, size, rows = [], 0, 0
        for batch in q.to_batches(TEXT_READ_BATCH):
            col = batch.column("text")
            size += int(pc.sum(pc.binary_length(col)).as_py() or 0)
            rows += batch.num_rows
            # over the cap, or bound to pass it twice over at this rate: reading on to the cap took ~500 MB of
            # the warm server's peak at 1M chunks, only to scan afterwards (the answers do not depend on it)
            if size > textcolumn.MAX_BYTES or size * total > 2 * textcolumn.MAX_BYTES * max(rows, 1):
                return None
            batches.append(batch)
        if not batches:
            return TextColumn(b"", [], [])
        t = pa.Table.from_batches(batches)
        col = pc.fill_null(t.column("text"), "").combine_chunks()
        if not len(col):
            return TextColumn(b"", [], [])
        wide = pa.types.is_large_string(col.type)
        offsets = np.frombuffer(col.buffers()[1], dtype=np.int64 if wide else np.int32)
        offsets = offsets[col.offset:col.offset + len(col) + 1]
        return TextColumn.build(memoryview(col.buffers()[2] or b""), offsets.tolist(), t.column("_rowid").to_pylist())

    def _rows_by_id(self, tbl, ids: Sequence[int], columns: Sequence[str]) -> dict[int, dict] | None:
        """Rows by row id from memory, as a `_rowid IN (..)` read returns them, for a reader that keeps the
        text column (keep_text): each such read costs ~5-10 ms at 50k chunks, and a new failure made ~10.
        None when this store does not keep them (then the caller reads)."""
        if not self._keep_text or not set(columns) <= set(AT_COLUMNS):
            return None
        texts = self._text_column(tbl)
        if texts is None:
            return None
        version = tbl.version
        if self._meta_cache is None or self._meta_cache[0] != version:
            small = [c for c in AT_COLUMNS if c != "text"]
            t = tbl.search().select(small).with_row_id(True).limit(self._every(tbl)).to_arrow()
            self._meta_cache = (version, dict(zip(t.column("_rowid").to_pylist(),
                                                  zip(*(t.column(c).to_pylist() for c in small), strict=True), strict=True)))
        meta, at = self._meta_cache[1], texts.position
        out: dict[int, dict] = {}
        for rid in ids:
            m, k = meta.get(rid), at.get(rid)
            if m is not None and k is not None:
                row = dict(zip(AT_COLUMNS, (*m, texts.text(k)), strict=True))
                out[rid] = {c: row[c] for c in columns}
        return out

    def _read_by_id(self, tbl, ids: list[int], cols: list[str], flt: Filter | None = None) -> dict[int, dict]:
        """Row id -> row (`cols`) for sorted `ids`: from memory when this store keeps them (_rows_by_id) and
        no filter applies, else `_rowid IN (..)` reads of ROWID_BATCH ids each."""
        kept = self._rows_by_id(tbl, ids, cols) if flt is None else None
        if kept is not None:
            return kept
        by_id: dict[int, dict] = {}
        for i in range(0, len(ids), ROWID_BATCH):
            part = ids[i:i + ROWID_BATCH]
            where = _where(flt, f"_rowid IN ({', '.join(str(int(r)) for r in part)})")
            for row in tbl.search().where(where).select(cols).with_row_id(True).limit(len(part)).to_list():
                by_id[row.pop("_rowid")] = row
        return by_id

    def _literal_find(self, tbl, texts: TextColumn, wanted, found, limit, columns,
                      tests_only: frozenset[str] = frozenset()) -> dict[str, list[dict]]:
        """literal_lookup from the in-memory text column: the rows found, then just those rows read by id.
        Terms wanted in test files only are looked for in those rows' bytes only (about a third)."""
        hits: dict[str, list[int]] = {}  # term -> row ids, table order
        for column, terms in ((texts, [t for t in wanted if t not in tests_only]),
                              (self._test_text_column(tbl, texts) if tests_only else None, [t for t in wanted if t in tests_only])):
            if column is not None and terms:
                hits.update((t, [column.row_ids[k] for k in ks]) for t, ks in column.rows_holding_each(terms, limit).items())
        by_id = self._read_by_id(tbl, sorted({r for rs in hits.values() for r in rs}), list(dict.fromkeys([*columns, "text"])))
        for t, rids in hits.items():
            found[t] = [by_id[r] for r in rids if r in by_id]
        return found

    def _test_text_column(self, tbl, texts: TextColumn) -> TextColumn | None:
        """The text column's rows of test files (pathkind.is_test), kept with it for the version."""
        if self._test_text_cache is None or self._test_text_cache[0] is not texts:
            if self._rows_by_id(tbl, [], ("path",)) is None or self._meta_cache is None:
                return None
            at, meta = [c for c in AT_COLUMNS if c != "text"].index("path"), self._meta_cache[1]
            test_paths = {p for p in {m[at] for m in meta.values()} if is_test(p)}
            keep = [k for k, rid in enumerate(texts.row_ids) if (m := meta.get(rid)) is not None and m[at] in test_paths]
            self._test_text_cache = (texts, texts.subset(keep))
        return self._test_text_cache[1]

    def _literal_narrowed(self, tbl, wanted, found, limit, columns,
                          tests_only: frozenset[str] = frozenset()) -> list[str]:
        """literal_lookup without the text column in memory (over its cap): each term's candidate rows from
        the full-text index of `text`, then only those rows read and tested (`term in text`). Fills `found`
        and returns [] when it answered every term; else leaves `found` alone and returns `wanted` (the
        caller scans: a scan costs about the same for one term as for all).

        A row holding a term holds every word the term holds whole, i.e. an ASCII alphanumeric run with an
        ASCII non-alphanumeric character on each side inside the term: the index's tokenizer splits there
        too, and its later steps (lower case, stem, stop words) treat the query's words as the row's. So the
        rows the index finds for some of those words (AND) are a superset of the rows holding the term. Each
        term needs such a word that is not a stop word (a query of stop words alone finds nothing), all terms
        together at most LITERAL_NARROW_MAX candidate rows, and the open version's rows must be in row id
        order (then the first `limit` by row id are the scan's). On a 1M-chunk index the scan of the text
        column costs ~1.7 CPU-s; this ~0.1 s per term, and a term found too often (tried first: fewest
        words) ends it after one query."""
        spans = self._spans(tbl)
        queries = {t: literal_words(t) for t in wanted}
        if not spans.ascending or not all(queries.values()):
            return list(wanted)
        from lancedb.query import FullTextOperator, MultiMatchQuery

        candidates: dict[str, list[int]] = {}
        hits: dict[tuple[str, ...], list[int]] = {}
        union: set[int] = set()
        for t in sorted(wanted, key=lambda t: (len(queries[t]), len(t))):
            words = tuple(queries[t])
            if words not in hits:
                room = LITERAL_NARROW_MAX - len(union) + 1  # a query that fills it may have been cut short
                try:
                    got = (tbl.search(MultiMatchQuery(" ".join(words), ["text"], boosts=None, operator=FullTextOperator.AND),
                                      query_type="fts")
                           .select(["_score"]).with_row_id(True).limit(room).to_arrow())
                except Exception:  # noqa: BLE001 - no full-text index yet ...: the scan answers
                    return list(wanted)
                if got.num_rows >= room:  # reading them all by id would cost about what the scan does
                    return list(wanted)
                hits[words] = sorted(got.column("_rowid").to_pylist())
                union.update(hits[words])
            candidates[t] = hits[words]
        cols = list(dict.fromkeys([*columns, "text", *(["path"] if tests_only else [])]))
        by_id = self._read_by_id(tbl, sorted(union), cols)
        for t in wanted:
            for rid in candidates[t]:
                row = by_id.get(rid)
                if row is None or t not in (row.get("text") or ""):
                    continue
                if t in tests_only and not is_test(row["path"]):
                    continue
                found[t].append(row)
                if len(found[t]) >= limit:
                    break
        return []

    def _literal_scan(self, tbl, wanted, found, limit, flt, case_sensitive, columns,
                      tests_only: frozenset[str] = frozenset()) -> dict[str, list[dict]]:
        cols = list(dict.fromkeys([*columns, "text", *(["path"] if tests_only else [])]))
        where = _where(flt, _contains(wanted, case_sensitive=case_sensitive, require_all=False))
        q = tbl.search().where(where).select(cols).limit(self._every(tbl))
        open_terms = set(wanted)
        for batch in q.to_batches(CHECK_BATCH):
            if case_sensitive:  # test the terms on the arrow column; only the rows kept become dicts
                _take_matches(batch, wanted, open_terms, found, limit, tests_only)
            else:
                for row in batch.to_pylist():
                    text = row["text"].lower()
                    for t in list(open_terms):
                        if t.lower() in text and (t not in tests_only or is_test(row["path"])):
                            found[t].append(row)
                            if len(found[t]) >= limit:
                                open_terms.discard(t)
            if not open_terms:
                break
        return found

    @_guarded
    def symbols(self) -> list[dict]:
        """(path, start_line, end_line, symbol) of every chunk that names one."""
        tbl = self.chunks()
        if tbl is None:
            return []
        q = tbl.search().where("symbol != ''").select(["path", "start_line", "end_line", "symbol"])
        return q.limit(self._every(tbl)).to_list()

    @_guarded
    def symbol_names(self) -> list[str]:
        """Every name a chunk defines (last dotted part), sorted: the nearest-name fallback when a failure
        names something the repository does not define. Cached per table version."""
        tbl = self.chunks()
        return [] if tbl is None else self._symbol_index(tbl).names

    @_guarded
    def file_graphs(self) -> dict[str, str]:
        """path -> code graph JSON (chunking.graph) of every file that has one, in the open table version.
        One read of the rows that carry a graph (one per file); codegraph.graph_for keeps what it builds
        from them per version, so they are not kept here."""
        return dict(self.file_graph_rows())

    def file_graph_rows(self) -> Iterator[tuple[str, str]]:
        """file_graphs' (path, JSON) pairs, read in batches (a 100k-file repository holds ~300 MB of it)."""
        with self.reading():
            tbl = self.chunks()
            if tbl is None or GRAPH not in tbl.schema.names:
                return
            q = tbl.search().where("graph != ''").select(["path", GRAPH]).limit(self._every(tbl))
            for batch in q.to_batches(TEXT_READ_BATCH):
                yield from zip(batch.column("path").to_pylist(), batch.column(GRAPH).to_pylist(), strict=True)

    def table_version(self) -> int:
        """The open chunks table version (0 without a table): what caches built over the rows key on."""
        tbl = self.chunks()
        return 0 if tbl is None else int(tbl.version)

    def _every(self, tbl) -> int:
        """A `limit` that admits every row of the open version (lance needs one): its row count, counted
        once per version since counting costs a few ms per query at 50k rows."""
        version = tbl.version
        if self._count_cache is None or self._count_cache[0] != version:
            self._count_cache = (version, max(tbl.count_rows(), 1))
        return self._count_cache[1]

    def _symbol_index(self, tbl) -> SymbolIndex:
        """The symbol index of the open table version: one scan of the small symbol column, then reused by
        every lookup until refresh() or a write moves the table on."""
        version = tbl.version
        if self._symbol_cache is None or self._symbol_cache[0] != version:
            t = (tbl.search().where("symbol != ''").select(["symbol"]).with_row_id(True)
                 .limit(self._every(tbl)).to_arrow())
            self._symbol_cache = (version, SymbolIndex.build(t.column("symbol").to_pylist(),
                                                             t.column("_rowid").to_pylist()))
        return self._symbol_cache[1]

    @_guarded
    def identifier_lookup(self, names: Sequence[str], limit: int, flt: Filter | None = None,
                          columns: Sequence[str] = AT_COLUMNS) -> dict[str, list[dict]]:
        """For each of `names`, up to `limit` chunks that define it (table order): the chunker's `symbol`
        names it, whole (`Store.refresh`) or as its last dotted part (`refresh`), alone or in a group
        (`a, b`). A dictionary lookup in the symbol index, then one read of just those rows by row id."""
        wanted = list(dict.fromkeys(n for n in names if n))
        found: dict[str, list[dict]] = {n: [] for n in wanted}
        tbl = self.chunks()
        if not wanted or tbl is None:
            return found
        index = self._symbol_index(tbl)
        # without a filter the first `limit` of each name are the answer; with one, any may be filtered out
        ids = {n: index.rows.get(n, [])[:limit] if flt is None else index.rows.get(n, []) for n in wanted}
        need = sorted({r for rs in ids.values() for r in rs})
        by_id = self._read_by_id(tbl, need, list(dict.fromkeys([*columns, "symbol"])), flt)
        for n in wanted:
            for rid in ids[n]:
                row = by_id.get(rid)
                if row is not None:
                    found[n].append(row)
                    if len(found[n]) >= limit:
                        break
        return found


ROWID_BATCH = 1000  # row ids per `_rowid IN (...)` read
LITERAL_NARROW_MAX = 5000  # candidate rows (all terms together) from the full-text index past which a lookup scans
_LITERAL_WORD = re.compile(r"(?<=[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f])[A-Za-z0-9]+(?=[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f])")
# English stop words of common analyzers (Lucene, Snowball and more): a word here never anchors a lookup
_STOP = frozenset("""a about above after again against all am an and any are aren as at be because been before being
below between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn it its
itself just let me more most mustn my myself no nor not now of off on once only or other ought our ours ourselves out
over own s same shan she should shouldn so some such t than that the their theirs them themselves then there these
they this those through to too under until up very was wasn we were weren what when where which while who whom why
will with won would wouldn you your yours yourself yourselves""".split())


def literal_words(term: str) -> list[str]:
    """Words of `term` a row holding it holds whole as index tokens (see Store._literal_narrowed), sorted:
    those of 3 to 40 characters that are no stop word (leaving out a word only widens the query); [] when
    there are none."""
    return sorted({w.lower() for w in _LITERAL_WORD.findall(term) if 3 <= len(w) <= 40 and w.lower() not in _STOP})


@dataclass(frozen=True)
class Spans:
    """(start_line, end_line, row id) of every chunk, grouped by path and in row id (table) order within a
    path, as three arrays and one slice per path: held as Python tuples, 985k chunks took ~260 MB."""

    at: dict[str, tuple[int, int]]  # path -> (first, end) positions in the arrays
    start: np.ndarray
    end: np.ndarray
    rid: np.ndarray
    ascending: bool = False  # the read delivered row ids in ascending order: table order is row id order

    @classmethod
    def build(cls, t: pa.Table) -> Spans:
        """From a table of path, start_line, end_line and _rowid (any order). Grouped by the paths' dictionary
        codes with numpy, not by sorting the table's strings (at 1M chunks that kept ~300 MB of the warm
        server's peak for a copy of the path column)."""
        if not t.num_rows:
            empty = np.zeros(0, dtype=np.int64)
            return cls({}, empty, empty, empty, True)
        read = t.column("_rowid").to_numpy()
        ascending = bool(np.all(read[1:] > read[:-1]))
        paths = pc.fill_null(t.column("path"), "").combine_chunks().dictionary_encode()
        codes = paths.indices.to_numpy(zero_copy_only=False)
        order = np.lexsort((read, codes))  # by path, then row id (table order within a path)
        codes = codes[order]
        cuts = np.flatnonzero(codes[1:] != codes[:-1]) + 1
        firsts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(codes)]))
        names = paths.dictionary.to_pylist()
        at = {names[c]: (int(f), int(e)) for c, f, e in zip(codes[firsts].tolist(), firsts.tolist(), ends.tolist(), strict=True)}
        # a chunk without lines never covers one (such rows are not written)
        start = pc.fill_null(t.column("start_line"), np.iinfo(np.int32).max).to_numpy()[order]
        end = pc.fill_null(t.column("end_line"), -1).to_numpy()[order]
        return cls(at, start, end, read[order], ascending)

    def covering(self, path: str, line: int) -> list[int]:
        """Row ids (table order) of the chunks of `path` whose lines cover `line`."""
        lo, hi = self.at.get(path, (0, 0))
        if lo == hi:
            return []
        keep = (self.start[lo:hi] <= line) & (line <= self.end[lo:hi])
        return [int(r) for r in self.rid[lo:hi][keep]]


@dataclass(frozen=True)
class SymbolIndex:
    """Defined name -> row ids of the chunks defining it (table order), for one table version."""

    rows: dict[str, list[int]]
    names: list[str]  # last dotted parts, sorted

    @classmethod
    def build(cls, symbols: Sequence[str | None], row_ids: Sequence[int]) -> SymbolIndex:
        rows: dict[str, list[int]] = {}
        last: set[str] = set()
        # a scan may deliver fragments in any order: sorted row ids make "the first `limit`" the same each time
        for rid, sym in sorted(zip(row_ids, symbols, strict=True)):
            parts = {p.strip() for p in (sym or "").split(",")}
            tails = {p.rsplit(".", 1)[-1] for p in parts}
            for name in parts | tails:
                if name:
                    rows.setdefault(name, []).append(rid)
            last.update(t for t in tails if t)
        return cls(rows, sorted(last))


def _take_matches(batch: pa.RecordBatch, wanted: list[str], open_terms: set[str], found: dict[str, list[dict]],
                  limit: int, tests_only: frozenset[str] = frozenset()) -> None:
    """literal_lookup's case-sensitive step for one batch: each open term gets the batch's rows holding it,
    in row order, until it has `limit`; a row two terms share is one dict, as in a row-by-row loop."""
    text = batch.column(batch.schema.get_field_index("text"))
    paths = batch.column(batch.schema.get_field_index("path")).to_pylist() if tests_only else []
    rows: dict[int, dict] = {}
    for t in wanted:
        if t not in open_terms:
            continue
        room = limit - len(found[t])
        hits = pc.indices_nonzero(pc.fill_null(pc.match_substring(text, t), False)).to_pylist()
        hits = [i for i in hits if is_test(paths[i])][:room] if t in tests_only else hits[:room]
        for i in hits:
            if i not in rows:
                rows[i] = batch.slice(i, 1).to_pylist()[0]
            found[t].append(rows[i])
        if len(found[t]) >= limit:
            open_terms.discard(t)
