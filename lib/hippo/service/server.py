"""Per-repo warm query server: keeps lancedb, the model and an open Searcher in one process so a
hook answers in tens of milliseconds instead of paying ~1.5 s of imports per failed command.

Listens on a unix socket in the index dir (hooks.client.socket_path), one JSON request per
connection: {"op": "ping"|"hook"|"diagnose"|"search", ...} -> {"ok": bool, "result"|"error": ...}.
A singleton lock (`server.lock`) keeps one server per index; it exits after `idle_s` without
requests. Before each query it picks up the latest committed table version (the background
indexer writes while we read). Started as a fresh `python -m hippo serve` (never forked).
"""
from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

from hippo.errors import DamagedIndexError, HippoError
from hippo.service.client import private_dir_ok, socket_path
from hippo.hooks.common import log

DEFAULT_IDLE_S = float(os.environ.get("HIPPO_SERVER_IDLE", str(30 * 60)))
MAX_REQUEST = 1024 * 1024


class QueryServer:
    def __init__(self, root: Path, settings=None, embedder=None, idle_s: float = DEFAULT_IDLE_S) -> None:
        from hippo.config import load_settings

        self.root = Path(root)
        self.settings = settings or load_settings(self.root)
        self.index_dir = self.settings.index_path(self.root)
        self.idle_s = idle_s
        self._embedder = embedder
        self._searcher = None
        self._watch = None

    def searcher(self):
        """The open Searcher, refreshed when the index's state.json changed since the last query."""
        from hippo.search import Searcher, StateWatch

        if self._watch is None:
            self._watch = StateWatch(self.index_dir)
        if self._searcher is None:
            self._watch.changed()  # the new Searcher reads the current state
            self._searcher = Searcher(self.root, self.settings, embedder=self._embedder)
            self._embedder = self._searcher._embedder or self._embedder
        elif self._watch.changed():
            self._searcher.refresh()
        return self._searcher

    def warm(self) -> None:
        try:
            s = self.searcher()
        except DamagedIndexError as exc:
            self._damaged(exc)
            return
        try:
            s.embedder().embed_query("warm up")
        except Exception as exc:  # vectors may not exist yet; keyword search still works
            log(self.index_dir, "server: model warm-up failed", exc)
        try:  # first touch of the FTS indexes and the scan path costs ~60 ms: pay it before the first hook
            s.search("raise error", keywords=["raise"], exact=True, k=2, mode="keyword")
        except Exception as exc:
            log(self.index_dir, "server: search warm-up failed", exc)

    def handle(self, req: dict) -> dict:
        """Answer one request. A damaged index answers hooks with silence and starts the rebuild."""
        try:
            return self._handle(req)
        except DamagedIndexError as exc:
            self._damaged(exc)
            if req.get("op") == "hook":
                return {"ok": True, "result": {"output": None}}
            if req.get("op") == "diagnose":
                return {"ok": True, "result": {"hits": []}}
            return {"ok": False, "error": str(exc)}
        except HippoError as exc:  # a refused (planted) index dir, no index ...: the caller goes cold, and refuses too
            from hippo.config import UnsafeIndexDir

            log(None if isinstance(exc, UnsafeIndexDir) else self.index_dir, f"server: {exc}")
            return {"ok": False, "error": str(exc)}

    def _damaged(self, exc: DamagedIndexError) -> None:
        """Drop the open handle (it points at damaged files), log one line, have the indexer rebuild."""
        from hippo.indexer import repair

        if self._searcher is not None:
            try:
                self._searcher.store.close()
            except Exception:  # noqa: BLE001 - closing is best effort; the handle is dropped anyway
                pass
        self._searcher = None
        log(self.index_dir, f"server: {exc}; rebuilding it in the background")
        try:
            repair(self.root, self.settings, exc, wait=False)
        except Exception as err:  # noqa: BLE001 - the next request tries again
            log(self.index_dir, "server: could not start the rebuild", err)

    def _handle(self, req: dict) -> dict:
        op = req.get("op")
        if op == "ping":
            return {"ok": True, "result": {"pid": os.getpid(), "root": str(self.root)}}
        if op == "hook":
            return self._hook(req)
        if op == "diagnose":
            from hippo.hooks.failure import diagnose

            return {"ok": True, "result": diagnose(self.searcher(), req)}
        if op == "search":
            resp = self.searcher().search(str(req.get("query") or ""), keywords=req.get("keywords") or (),
                                          globs=req.get("globs") or (), exact=bool(req.get("exact")),
                                          k=req.get("k"), budget_chars=req.get("budget_chars"))
            return {"ok": True, "result": resp.to_dict()}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _hook(self, req: dict) -> dict:
        """A whole PostToolUseFailure hook (gate, diagnose, dedupe, render) for a payload from this repo,
        so the hook process itself imports almost nothing. Not ok for another repo's payload."""
        from hippo.hooks.common import find_repo_root

        payload = req.get("payload")
        if req.get("event") != "tool-failure" or not isinstance(payload, dict):
            return {"ok": False, "error": "unsupported hook"}
        root = find_repo_root(payload.get("cwd"))
        if root is None or root != self.root.resolve():
            return {"ok": False, "error": "payload is for another repository"}
        from hippo.hooks.failure import diagnose, handle

        return {"ok": True, "result": {"output": handle(payload, diagnoser=lambda r: diagnose(self.searcher(), r))}}

    def serve(self) -> int:
        """Run until idle; returns 0 (also when another server already owns this index, or refuses it)."""
        from hippo.integrity import refuse_planted

        try:
            refuse_planted(self.root, self.index_dir)  # what `hippo index` will not write, we do not serve
        except HippoError as exc:
            log(None, f"server: not serving {self.root}: {exc}")
            return 0
        self.index_dir.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a planted `server.lock` link must not make us create or lock a file elsewhere.
        lock = os.fdopen(os.open(self.index_dir / "server.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                                 0o600), "r+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return 0
        path = socket_path(self.index_dir)
        if path.parent != self.index_dir:  # the short fallback under the temp dir: must be ours alone
            path.parent.mkdir(mode=0o700, exist_ok=True)
            if not private_dir_ok(str(path.parent)):
                log(self.index_dir, f"server: {path.parent} is not a private directory of this user; not serving")
                lock.close()
                return 0
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.warm()
            sock.bind(str(path))
            os.chmod(path, 0o600)
            sock.listen(16)
            sock.settimeout(min(self.idle_s, 30.0))
            last = time.monotonic()
            log(self.index_dir, f"server: listening on {path}")
            while time.monotonic() - last < self.idle_s:
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    continue
                last = time.monotonic()
                with conn:
                    self._answer(conn)
            log(self.index_dir, "server: idle, exiting")
        finally:
            sock.close()
            try:
                path.unlink()
            except OSError:
                pass
            lock.close()
        return 0

    def _answer(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(5.0)
            buf = b""
            while not buf.endswith(b"\n") and len(buf) < MAX_REQUEST:
                data = conn.recv(65536)
                if not data:
                    break
                buf += data
            req = json.loads(buf.decode("utf-8"))
            reply = self.handle(req) if isinstance(req, dict) else {"ok": False, "error": "bad request"}
        except Exception as exc:
            log(self.index_dir, "server: request failed", exc)
            reply = {"ok": False, "error": type(exc).__name__}
        try:
            conn.sendall(json.dumps(reply).encode("utf-8"))
        except OSError:
            pass


def serve(root: Path, idle_s: float | None = None) -> int:
    server = QueryServer(root, idle_s=DEFAULT_IDLE_S if idle_s is None else idle_s)
    try:
        return server.serve()
    except Exception as exc:
        log(server.index_dir, "server: crashed", exc)
        return 1
