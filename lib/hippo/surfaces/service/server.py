"""Per-repo warm query server: keeps lancedb, the model and an open Searcher in one process so a
hook, `hippo search` and the MCP tool answer in tens of milliseconds instead of paying seconds of
imports and model load per call.

Listens on a unix socket in the index dir (client.socket_path; mode 0600 in a 0700 dir, or in the private
client.socket_dir() when that path is too long), one JSON request per connection, answered by the shared
`WarmIndex.handle` (service/host.py). Each connection gets a thread (at most MAX_CLIENTS at once) and
READ_DEADLINE_S for its whole request, so a client that trickles bytes or never sends delays no one else;
WarmIndex serialises what touches the open Searcher. A singleton lock (`server.lock`) keeps one server per index; it
exits after `idle_s` without requests. Before each query it picks up the latest committed table
version (the background indexer writes while we read). Started as a fresh `python -m hippo serve`
(never forked: lancedb deadlocks in forked children).

An `index` request (`hippo index` handing its run over) runs in its connection's thread like any other,
so queries are still answered while it writes: one JSON line per progress step and a heartbeat every HEARTBEAT_S,
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

BUSY_POLL_S = 0.2  # how often the accept loop looks again while requests are being answered
DEFAULT_IDLE_S = float(os.environ.get("HIPPO_SERVER_IDLE", str(30 * 60)))
HEARTBEAT_S = 2.0  # an index run's client counts silence longer than client.INDEX_SILENCE_S as a dead server
READ_DEADLINE_S = 5.0  # for a whole request to arrive: a client sends its one line at once
MAX_CLIENTS = 64  # connections answered at once (a thread each); more are closed and their callers fall back


def _private_socket_dir(path: Path) -> bool:
    """Make (0700) and check the socket dir for long index paths (client.socket_dir): ours, not a link,
    no group/other access. One that another user made first is refused, never used."""
    try:
        path.parent.mkdir(mode=indexdir.PRIVATE_MODE, parents=True, exist_ok=True)
        path.mkdir(mode=indexdir.PRIVATE_MODE, exist_ok=True)
    except OSError:
        return False
    indexdir.make_private(path)  # ours but loose (an older hippo, a umask): tightened
    return private_dir_ok(str(path))


class QueryServer:
    def __init__(self, root: Path, settings=None, embedder=None, idle_s: float = DEFAULT_IDLE_S) -> None:
        self.index = WarmIndex(root, settings, embedder=embedder)
        self.root = self.index.root
        self.settings = self.index.settings
        self.index_dir = self.index.index_dir
        self.idle_s = idle_s
        self._jobs: set[threading.Thread] = set()  # index runs in flight
        self._threads: set[threading.Thread] = set()  # connections in flight
        self._guard = threading.Lock()  # over the two sets
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)

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
        try:
            indexdir.create(self.index_dir)  # 0700: the socket in it, and the index, are this user's alone
        except HippoError as exc:  # a read-only checkout
            log(None, f"server: not serving {self.root}: {exc}")
            return 0
        # open_lock is O_NOFOLLOW: a planted `server.lock` link must not make us create or lock a file elsewhere.
        lock = indexdir.open_lock(indexdir.IndexDir(self.index_dir).server_lock)
        if not indexdir.try_lock(lock):
            lock.close()
            return 0
        path = socket_path(self.index_dir)
        if path.parent != self.index_dir and not _private_socket_dir(path.parent):
            log(self.index_dir, f"server: {path.parent} is not a private directory of this user; not serving")
            lock.close()
            return 0
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        watch = self._watch_tree()
        try:
            self.warm()
            sock.bind(str(path))
            os.chmod(path, 0o600)
            sock.listen(64)
            last = time.monotonic()
            log(self.index_dir, f"server: listening on {path}")
            while self._busy() or time.monotonic() - last < self.idle_s:
                # wait at most until the idle deadline, and only briefly while answers are in flight (the
                # last one may end the idle wait: idle_s can be lowered while we serve)
                left = self.idle_s - (time.monotonic() - last)
                sock.settimeout(BUSY_POLL_S if self._busy() else max(BUSY_POLL_S, min(left, 30.0)))
                try:
                    conn, _ = sock.accept()
                except TimeoutError:
                    continue
                last = time.monotonic()
                self._take(conn)
            log(self.index_dir, "server: idle, exiting")
        finally:
            sock.close()
            try:
                path.unlink()
            except OSError:
                pass
            self._drain()
            if watch is not None:
                from hippo.push.diagnosis import changes

                changes.track(self.root, None)
                watch.close()
            lock.close()
        return 0

    def _watch_tree(self):
        """Watch the work tree so a failure's diff asks git only about what changed (service/watch.py);
        None where it cannot (then every failure diffs the whole tree). HIPPO_WATCH=off turns it off."""
        if os.environ.get("HIPPO_WATCH", "").strip().lower() in ("0", "off", "no", "false"):
            return None
        from hippo.push.diagnosis import changes
        from hippo.surfaces.service.watch import TreeWatch

        watch = TreeWatch(self.root, self.index_dir)
        if not watch.start():
            return None
        changes.track(self.root, watch)
        return watch

    def _busy(self) -> bool:
        with self._guard:
            self._jobs = {t for t in self._jobs if t.is_alive()}
            return bool(self._jobs)

    def _take(self, conn: socket.socket) -> None:
        """Answer `conn` from a thread of its own, so a client that trickles its request (or never sends
        it) holds one thread until READ_DEADLINE_S, not the server. Past MAX_CLIENTS connections in flight
        the new one is closed at once: its caller falls back to answering in-process."""
        if not self._slots.acquire(blocking=False):
            log(self.index_dir, f"server: {MAX_CLIENTS} connections in flight; refusing one")
            conn.close()
            return
        t = threading.Thread(target=self._connection, args=(conn,), name="hippo-conn", daemon=True)
        with self._guard:
            self._threads = {x for x in self._threads if x.is_alive()}
            self._threads.add(t)
        t.start()

    def _connection(self, conn: socket.socket) -> None:
        try:
            if not self._answer(conn):
                conn.close()
        finally:
            self._slots.release()

    def _drain(self) -> None:
        """At exit, let the connections in flight finish (each is bounded by READ_DEADLINE_S + its work)."""
        with self._guard:
            threads = list(self._threads)
        deadline = time.monotonic() + READ_DEADLINE_S + 10
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def _read_request(self, conn: socket.socket) -> bytes | None:
        """The request line, or None when it is over MAX_REQUEST. Raises TimeoutError when the whole
        request has not arrived within READ_DEADLINE_S (a deadline for the request, not for each byte)."""
        deadline = time.monotonic() + READ_DEADLINE_S
        buf = bytearray()
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"request not received within {READ_DEADLINE_S:g}s")
            conn.settimeout(left)
            data = conn.recv(65536)
            if not data:
                break
            buf += data
            if len(buf) > MAX_REQUEST:
                return None
        return bytes(buf)

    def _answer(self, conn: socket.socket) -> bool:
        """Answer one connection; True when it was an index run (which closes the connection itself)."""
        try:
            raw = self._read_request(conn)
            if raw is None:
                reply = {"ok": False, "error": f"request over {MAX_REQUEST} bytes", "kind": "RequestTooLarge"}
            else:
                req = json.loads(raw.decode("utf-8"))
                if isinstance(req, dict) and req.get("op") == "index":
                    with self._guard:
                        self._jobs.add(threading.current_thread())  # keeps the server from idling out
                    self._index_job(conn, req)
                    return True
                reply = self.handle(req) if isinstance(req, dict) else {"ok": False, "error": "bad request"}
        except TimeoutError as exc:
            log(self.index_dir, f"server: closing a connection: {exc}")
            return False
        except Exception as exc:
            log(self.index_dir, "server: request failed", exc)
            reply = {"ok": False, "error": type(exc).__name__}
        try:
            conn.settimeout(READ_DEADLINE_S)
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
