"""Per-repo warm query server: keeps lancedb, the model and an open Searcher in one process so a
hook, `hippo search` and the MCP tool answer in tens of milliseconds instead of paying seconds of
imports and model load per call.

Listens on a unix socket in the index dir (client.socket_path; mode 0600, or a private dir under the
temp dir when that path is too long), one JSON request per connection, answered by the shared
`WarmIndex.handle` (service/host.py). A singleton lock (`server.lock`) keeps one server per index; it
exits after `idle_s` without requests. Before each query it picks up the latest committed table
version (the background indexer writes while we read). Started as a fresh `python -m hippo serve`
(never forked: lancedb deadlocks in forked children).

An `index` request (`hippo index` handing its run over) is answered from a thread of its own, so queries
are still answered while it writes: one JSON line per progress step and a heartbeat every HEARTBEAT_S,
then the reply line. The server does not go idle while such a run is in flight.
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

from hippo.core import indexdir
from hippo.core.errors import HippoError
from hippo.core.runtime import log
from hippo.surfaces.service.client import MAX_REQUEST, private_dir_ok, socket_path
from hippo.surfaces.service.host import WarmIndex

DEFAULT_IDLE_S = float(os.environ.get("HIPPO_SERVER_IDLE", str(30 * 60)))
HEARTBEAT_S = 2.0  # an index run's client counts silence longer than client.INDEX_SILENCE_S as a dead server


class QueryServer:
    def __init__(self, root: Path, settings=None, embedder=None, idle_s: float = DEFAULT_IDLE_S) -> None:
        self.index = WarmIndex(root, settings, embedder=embedder)
        self.root = self.index.root
        self.settings = self.index.settings
        self.index_dir = self.index.index_dir
        self.idle_s = idle_s
        self._jobs: set[threading.Thread] = set()  # index runs in flight

    def searcher(self):
        return self.index.searcher()

    def warm(self) -> None:
        self.index.warm()

    def handle(self, req: dict, progress=None) -> dict:
        return self.index.handle(req, progress)

    def serve(self) -> int:
        """Run until idle; returns 0 (also when another server already owns this index, or refuses it)."""
        from hippo.core.integrity import refuse_planted

        try:
            refuse_planted(self.root, self.index_dir)  # what `hippo index` will not write, we do not serve
        except HippoError as exc:
            log(None, f"server: not serving {self.root}: {exc}")
            return 0
        self.index_dir.mkdir(parents=True, exist_ok=True)
        # open_lock is O_NOFOLLOW: a planted `server.lock` link must not make us create or lock a file elsewhere.
        lock = indexdir.open_lock(indexdir.IndexDir(self.index_dir).server_lock)
        if not indexdir.try_lock(lock):
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
            while self._busy() or time.monotonic() - last < self.idle_s:
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    continue
                last = time.monotonic()
                if not self._answer(conn):
                    conn.close()
            log(self.index_dir, "server: idle, exiting")
        finally:
            sock.close()
            try:
                path.unlink()
            except OSError:
                pass
            lock.close()
        return 0

    def _busy(self) -> bool:
        self._jobs = {t for t in self._jobs if t.is_alive()}
        return bool(self._jobs)

    def _answer(self, conn: socket.socket) -> bool:
        """Answer one connection; True when an index run's thread took it over (and will close it)."""
        try:
            conn.settimeout(5.0)
            buf = b""
            while not buf.endswith(b"\n") and len(buf) < MAX_REQUEST:
                data = conn.recv(65536)
                if not data:
                    break
                buf += data
            req = json.loads(buf.decode("utf-8"))
            if isinstance(req, dict) and req.get("op") == "index":
                job = threading.Thread(target=self._index_job, args=(conn, req), name="hippo-index")
                self._jobs.add(job)
                job.start()
                return True
            reply = self.handle(req) if isinstance(req, dict) else {"ok": False, "error": "bad request"}
        except Exception as exc:
            log(self.index_dir, "server: request failed", exc)
            reply = {"ok": False, "error": type(exc).__name__}
        try:
            conn.sendall(json.dumps(reply).encode("utf-8"))
        except OSError:
            pass
        return False

    def _index_job(self, conn: socket.socket, req: dict) -> None:
        """Run one handed-over `hippo index`, streaming progress lines and heartbeats, then the reply.
        A client that went away (Ctrl-C) does not stop the run: it finishes, as a background index would."""
        out = threading.Lock()
        gone = threading.Event()
        done = threading.Event()

        def send(msg: dict) -> None:
            if gone.is_set():
                return
            with out:
                try:
                    conn.sendall(json.dumps(msg).encode("utf-8") + b"\n")
                except OSError:
                    gone.set()

        def beat() -> None:
            while not done.wait(HEARTBEAT_S):
                send({"alive": True})

        beater = threading.Thread(target=beat, daemon=True)
        beater.start()
        try:
            conn.settimeout(30.0)
            reply = self.handle(req, progress=lambda phase, n, total: send({"progress": [phase, n, total]}))
        except Exception as exc:
            log(self.index_dir, "server: index run failed", exc)
            reply = {"ok": False, "error": type(exc).__name__}
        finally:
            done.set()
            beater.join(HEARTBEAT_S + 1)
        send(reply)
        conn.close()


def serve(root: Path, idle_s: float | None = None) -> int:
    server = QueryServer(root, idle_s=DEFAULT_IDLE_S if idle_s is None else idle_s)
    try:
        return server.serve()
    except Exception as exc:
        log(server.index_dir, "server: crashed", exc)
        return 1
