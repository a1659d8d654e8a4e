"""The warm server answers each connection from a thread of its own, with a deadline for the whole request
and a size cap: clients that trickle their request (or send nothing) do not hold up the hook's request,
and are closed at the deadline. Ordering, not timing: a fast request is answered while the slow ones are
still connected, within the hook's own client timeout (client.WARM_TIMEOUT_S)."""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hippo.surfaces.service import client, server


class _Searcher:
    """Stands in for the open Searcher: the search op only needs `search(...).to_dict()`."""

    def search(self, query, **kwargs):
        return SimpleNamespace(to_dict=lambda: {"query": query, "hits": []})


@pytest.fixture
def running(git_repo, monkeypatch):
    """A QueryServer on its real socket, served from a thread, with a stand-in Searcher."""
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    root = git_repo({"README.md": "# r\n"}, name="slow").resolve()
    idx = root / ".hippo"
    srv = server.QueryServer(root, idle_s=30.0)
    srv.index._searcher = _Searcher()
    t = threading.Thread(target=srv.serve, daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while client.request(idx, {"op": "ping"}, timeout=1) is None:
        assert t.is_alive() and time.monotonic() < deadline, "server did not come up"
        time.sleep(0.05)
    yield root, idx, srv
    srv.idle_s = 0  # the next request is its last
    client.request(idx, {"op": "ping"}, timeout=1)
    t.join(30)
    assert not t.is_alive(), "server thread did not stop"


def _connect(idx: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(client.socket_path(idx)))
    return s


def _still_open(s: socket.socket) -> bool:
    """No reply and no EOF yet: the server is still waiting for this client's request."""
    s.setblocking(False)
    try:
        s.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)
    return False  # a reply, or EOF


def test_ten_slow_clients_do_not_block_a_fast_one(running):
    root, idx, _ = running
    slow = [_connect(idx) for _ in range(10)]
    try:
        for s in slow:  # half a request each, and then nothing (a trickler between two bytes)
            s.sendall(b'{"op": "pi')
        # answered within the hook's own timeout while all ten are connected and unanswered
        assert client.request(idx, {"op": "ping"}) is not None
        assert client.request(idx, {"op": "search", "query": "token", "root": str(root)}, timeout=3)["hits"] == []
        assert all(_still_open(s) for s in slow)
        for s in slow:  # the rest of their requests: each is answered in turn
            s.sendall(b'ng"}\n')
            s.shutdown(socket.SHUT_WR)
        for s in slow:
            s.settimeout(10)
            assert json.loads(s.recv(65536))["ok"] is True
    finally:
        for s in slow:
            s.close()


def test_a_trickler_is_closed_at_the_request_deadline(running, monkeypatch):
    """One byte at a time, each well inside any per-read timeout: the deadline is for the whole request."""
    _, idx, _ = running
    monkeypatch.setattr(server, "READ_DEADLINE_S", 0.5)
    s = _connect(idx)
    closed = False
    try:
        s.settimeout(0.1)
        for byte in b'{"op": "ping", "pad": "' + b"x" * 200:
            try:
                s.sendall(bytes([byte]))
                if s.recv(1) == b"":  # EOF: the server gave up on us
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:  # reset / broken pipe: closed too
                closed = True
                break
        assert closed, "the server kept reading a request that trickled for 20 s"
    finally:
        s.close()
    assert client.request(idx, {"op": "ping"}) is not None


def test_an_oversize_request_is_refused_without_reading_it_all(running):
    _, idx, _ = running
    s = _connect(idx)
    try:
        s.settimeout(10)
        try:
            s.sendall(b'{"op": "ping", "pad": "' + b"x" * (client.MAX_REQUEST + 4096))
        except OSError:  # the server stopped reading once over the cap and closed
            pass
        reply = json.loads(s.recv(65536))
    finally:
        s.close()
    assert reply["ok"] is False and reply["kind"] == "RequestTooLarge"
