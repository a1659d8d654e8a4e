"""One open index for a reader, and the request handler every caller shares.

The warm server (service/server.py) keeps one `WarmIndex` for its whole life; the client's in-process
fallback (service/client.py) builds one when no server answered, and the MCP server keeps one for when
the warm server is away. The same `handle(request)` answers in all three, so a hook, `hippo search`
and the MCP tool get the same answer whether or not a server is up.

Requests are JSON objects: {"op": "ping"|"search"|"structure"|"diagnose"|"hook"|"index", ...}; replies are
{"ok": true, "result": {...}} or {"ok": false, "error": "one line", "kind": "BadQueryError"|...}.
Heavy imports (lancedb, the model) happen when the Searcher opens, not at module import.

`index` runs an incremental `hippo index` in this process (the server's, where lancedb and the model are
already loaded) through the same Indexer and writer lock as an in-process run, so a server killed mid-run
leaves what a killed `hippo index` leaves: a state the next run resumes from.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from hippo.core.errors import DamagedIndexError, HippoError
from hippo.core.indexdir import IndexDir
from hippo.core.runtime import find_repo_root, log

SEARCH_FIELDS = ("keywords", "globs", "exact", "k", "budget_chars", "mode", "rerank_ms")
COLD_BUDGET_S = float(os.environ.get("HIPPO_HOOK_COLD_BUDGET", "8"))


class WarmIndex:
    """The open Searcher of one repository, reopened or refreshed when the index changes.

    `cold` is the short-lived hook process's mode: failure retrieval runs in keyword mode (no model
    load) and gives up after COLD_BUDGET_S. `searcher_factory(root)` stands in for Searcher in tests.
    """

    def __init__(self, root: Path | str, settings: Any = None, *, embedder: Any = None,
                 searcher_factory: Any = None, cold: bool = False) -> None:
        self.root = Path(root)
        self._settings = settings
        self._embedder = embedder
        self._factory = searcher_factory
        self.cold = cold
        self._searcher: Any = None
        self._watch: Any = None
        self.lock = threading.RLock()  # the MCP server runs tool calls in worker threads
        self.needed = False  # a request needed the index (the client then leaves a server warm)
        self.served = 0
        self.index_lock = threading.Lock()  # index requests run one after another (the writer lock is per process)
        self.long_lived = False  # warm() ran: this process answers many requests (the server, the MCP server)
        self.text_held = False  # its store holds the text column in memory (Store.keep_text)

    @property
    def settings(self) -> Any:
        if self._settings is None:
            from hippo.core.runtime import settings_for

            self._settings = settings_for(self.root)
        return self._settings

    @property
    def index_dir(self) -> Path:
        return Path(IndexDir.of(self.root, self.settings).path)

    @property
    def is_open(self) -> bool:
        return self._searcher is not None

    def searcher(self) -> Any:
        """The open Searcher, refreshed when the index's state.json changed since the last query."""
        from hippo.retrieval.search import Searcher, StateWatch

        with self.lock:
            if self._watch is None:
                self._watch = StateWatch(self.index_dir)
            if self._searcher is None:
                self._watch.changed()  # the new Searcher reads the current state
                if self._factory is not None:
                    self._searcher = self._factory(self.root)
                else:
                    self._searcher = Searcher(self.root, self.settings, embedder=self._embedder)
                    self._embedder = self._searcher._embedder or self._embedder
                if self.long_lived:
                    self._hold_text()
            elif self._watch.changed():
                # a (background) reindex committed a new version: reopen the table, keep the loaded model
                self._searcher.refresh()
            return self._searcher

    def warm(self) -> None:
        """Open the index, load the model and touch the full-text indexes before the first real query; from
        now on the open store holds its text column for literal lookups (Store.keep_text)."""
        self.long_lived = True
        try:
            s = self.searcher()
        except DamagedIndexError as exc:
            self.damaged(exc)
            return
        except Exception as exc:  # no index yet ...: the first real request reports it
            log(self.index_dir, "warm-up: index not open", exc if not isinstance(exc, HippoError) else None)
            return
        embedder = getattr(s, "embedder", None)
        try:
            if callable(embedder):
                embedder().embed_query("warm up")
        except Exception as exc:  # vectors may not exist yet; keyword search still works
            log(self.index_dir, "warm-up: model failed", exc)
        try:  # first touch of the FTS indexes and the scan path costs ~60 ms: pay it before the first hook.
            # The scan path only while the text column is held: over it, an exact keyword scans the whole
            # column (100k files: ~18 CPU-s and ~1 GB of the server's memory for a warm-up).
            exact = self.text_held
            s.search("raise error", keywords=["raise"] if exact else (), exact=exact, k=2, mode="keyword")
        except Exception as exc:
            log(self.index_dir, "warm-up: search failed", exc)
        prepare = getattr(getattr(s, "store", None), "prepare_lookups", None)
        try:  # the first failure's lookups and modules, here rather than on its hook's clock (1M chunks: ~1.5 CPU-s)
            import hippo.push.diagnosis.pipeline
            import hippo.push.diagnosis.respond  # noqa: F401

            if callable(prepare):
                prepare()
        except Exception as exc:  # noqa: BLE001 - the first lookup builds them instead
            log(self.index_dir, "warm-up: lookups not prepared", exc if not isinstance(exc, HippoError) else None)

    def _hold_text(self) -> None:
        store = getattr(self._searcher, "store", None)
        keep = getattr(store, "keep_text", None)
        if callable(keep):
            try:
                self.text_held = keep() is not False
            except Exception as exc:  # noqa: BLE001 - lookups scan instead; a damaged table surfaces on use
                log(self.index_dir, "warm-up: text column not held", exc if not isinstance(exc, HippoError) else None)

    def close(self) -> None:
        """Drop the open Searcher (its table handle and model); the next request opens a new one."""
        with self.lock:
            searcher, self._searcher, self._watch = self._searcher, None, None
        store = getattr(searcher, "store", None)
        if store is not None and hasattr(store, "close"):
            try:
                store.close()
            except Exception:  # noqa: BLE001 - best effort; the handle is dropped anyway
                pass

    def damaged(self, exc: DamagedIndexError) -> None:
        """Drop the open handle (it points at damaged files), log one line, have the indexer rebuild
        in the background (hippo.index.indexer.repair: the one place that acts on damage)."""
        from hippo.index.indexer import repair

        self.close()
        log(self.index_dir, f"{exc}; rebuilding it in the background")
        try:
            repair(self.root, self.settings, exc, wait=False)
        except Exception as err:  # noqa: BLE001 - the next request tries again
            log(self.index_dir, "could not start the rebuild", err)

    # --- requests ---------------------------------------------------------------------------------
    def search(self, req: dict) -> dict:
        """A SearchResponse as a dict. Raises HippoError (BadQueryError, NoIndexError ...) as Searcher does."""
        self.needed = True
        kwargs = {f: req[f] for f in SEARCH_FIELDS if req.get(f) is not None}
        with self.lock:
            resp = self.searcher().search(str(req.get("query") or ""), **kwargs)
        return resp.to_dict()

    def structure(self, req: dict) -> dict:
        """A structural answer (hippo.retrieval.structure: def / callers / callees) from the code graph."""
        from hippo.retrieval.structure import answer

        self.needed = True
        limit = req.get("k")
        with self.lock:
            return answer(self.searcher(), str(req.get("kind") or ""), str(req.get("name") or ""),
                          limit if isinstance(limit, int) else 0)

    def diagnose(self, req: dict) -> dict | None:
        """Failure retrieval (hippo.push.diagnosis) over this index; in cold mode keyword-only, budgeted."""
        from hippo.push.diagnosis.pipeline import diagnose

        self.needed = True
        if not self.cold:
            with self.lock:
                return diagnose(self.searcher(), req)
        return self._within_budget(lambda: diagnose(self.searcher(), req, mode="keyword"))

    def _within_budget(self, work: Any) -> dict | None:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["resp"] = work()
            except DamagedIndexError as exc:  # silent; the indexer rebuilds in the background
                self.damaged(exc)
            except HippoError as exc:  # no index yet, a refused (planted) index dir ...: one line, no output
                log(self.index_dir, f"cold failure search: {exc}")
            except Exception as exc:  # a locked or unreadable index -> no output
                log(self.index_dir, "cold failure search failed", exc)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(COLD_BUDGET_S)
        if t.is_alive():
            log(self.index_dir, f"cold failure search exceeded {COLD_BUDGET_S}s; nothing injected")
            return None
        return box.get("resp")

    def handle(self, req: dict, progress: Any = None) -> dict:
        """Answer one request; user-level errors come back as {"ok": false, "kind": ...}, never raised.
        A damaged index answers hooks with silence and starts the rebuild; a search caller is told, and
        its in-process fallback meets the same damage mark and handles it its own way."""
        try:
            return self._handle(req, progress)
        except DamagedIndexError as exc:
            self.damaged(exc)
            if req.get("op") == "hook":
                return {"ok": True, "result": {"output": None}}
            if req.get("op") == "diagnose":
                return {"ok": True, "result": {"hits": []}}
            return {"ok": False, "error": str(exc), "kind": type(exc).__name__}
        except HippoError as exc:  # a refused (planted) index dir, no index ...: the caller goes cold, and refuses too
            from hippo.core.config import UnsafeIndexDir

            log(None if isinstance(exc, UnsafeIndexDir) else self.index_dir, f"{exc}")
            return {"ok": False, "error": str(exc), "kind": type(exc).__name__}

    def _handle(self, req: dict, progress: Any = None) -> dict:
        op = req.get("op")
        if op == "ping":
            return {"ok": True, "result": {"pid": os.getpid(), "root": str(self.root), "served": self.served}}
        if op == "uncommitted":
            from hippo.push.diagnosis.changes import uncommitted_paths

            return {"ok": True, "result": {"paths": uncommitted_paths(self.root)}}
        if op not in ("search", "structure", "diagnose", "hook", "index"):
            return {"ok": False, "error": f"unknown op {op!r}"}
        if op != "hook" and ("root" in req or op == "index") and not self._ours(req.get("root")):
            return {"ok": False, "error": "request is for another repository"}
        with self.lock:  # connections are answered from threads of their own
            self.served += 1
        if op == "search":
            return {"ok": True, "result": self.search(req)}
        if op == "structure":
            return {"ok": True, "result": self.structure(req)}
        if op == "index":
            return self.index(req, progress)
        if op == "diagnose":
            return {"ok": True, "result": self.diagnose(req) or {"hits": []}}
        return self._hook(req)

    def index(self, req: dict, progress: Any = None) -> dict:
        """An incremental index run of this repository here, with the model this process already holds.

        Refused (the caller then runs it itself) unless the caller's settings and index-relevant
        environment are this process's too (`req["key"]`, indexer.run_key): otherwise the two would
        build different indexes. Returns {"report": IndexReport as a dict}."""
        from dataclasses import asdict

        from hippo.core.config import load_settings
        from hippo.index.indexer import Indexer, run_key

        settings = load_settings(self.root)
        if req.get("key") != run_key(settings):
            return {"ok": False, "error": "the server runs with other settings", "kind": "SettingsDiffer"}
        wait = req.get("wait_lock")
        wait_lock = float(wait) if isinstance(wait, (int, float)) and 0 <= wait <= 600 else 3.0
        with self.index_lock:
            embedder = self._loaded_embedder()
            indexer = Indexer(self.root, settings, embedder=embedder, progress=progress)
            try:
                report = indexer.run(vectors=req.get("vectors") is not False, wait_lock=wait_lock)
            finally:
                indexer._close_store()
            if embedder is None and indexer._embedder is not None:
                self._embedder = indexer._embedder  # loaded for this run: the next one (and a search) reuses it
        return {"ok": True, "result": {"report": asdict(report)}}

    def _loaded_embedder(self) -> Any:
        """The model this process already loaded (for queries or a previous index run), or None."""
        searcher = self._searcher
        loaded = getattr(searcher, "_embedder", None) if searcher is not None else None
        return loaded or self._embedder

    def _ours(self, root: Any) -> bool:
        if not isinstance(root, str) or not root:
            return False
        try:
            return os.path.realpath(root) == os.path.realpath(self.root)
        except (OSError, ValueError):
            return False

    def _hook(self, req: dict) -> dict:
        """A whole PostToolUseFailure hook (gate, diagnose, dedupe, render) for a payload from this repo,
        so the hook process itself imports almost nothing. Not ok for another repo's payload."""
        payload = req.get("payload")
        if req.get("event") != "tool-failure" or not isinstance(payload, dict):
            return {"ok": False, "error": "unsupported hook"}
        root = find_repo_root(payload.get("cwd"))
        if root is None or root != self.root.resolve():
            return {"ok": False, "error": "payload is for another repository"}
        from hippo.push.diagnosis.respond import respond

        out = respond(payload, self.diagnose, root=root, settings=lambda: self.settings)
        return {"ok": True, "result": {"output": out}}
