"""The warm per-repo service (hippo.surfaces.service): one server answers the failure hook, `hippo search` and the
MCP tool over its socket, and the one client falls back to answering in-process when the server is
absent, refuses, or answers garbage. The server runs in a thread of this process (the process
boundary matters only for the client: `hippo search` through a server must not import lancedb)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from helpers_index import sample_repo
from hippo.surfaces.service import client
from hippo.surfaces.service.host import WarmIndex
from repo_helpers import hippo_in_process

pytest.importorskip("lancedb")

TRACEBACK = ('Exit code 1\nTraceback (most recent call last):\n  File "{root}/src/auth/tokens.py", line 37, in '
             'validate_token\n    raise TokenExpiredError("Token is too old")\nauth.tokens.TokenExpiredError: '
             'Token is too old\n')


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The sample repo indexed with the fake embedder (HIPPO_MODEL=fake_embedder:FakeEmbedder for every reader here)."""
    from hippo.index.indexer import index_repo

    mp = pytest.MonkeyPatch()
    mp.setenv("HIPPO_MODEL", FAKE)
    mp.delenv("HIPPO_INDEX_DIR", raising=False)
    root = sample_repo(tmp_path_factory.mktemp("service")).resolve()
    index_repo(root)
    yield root
    mp.undo()


def _ping(idx: Path) -> dict | None:
    return client.request(idx, {"op": "ping"}, timeout=2)


@pytest.fixture
def live_server(indexed):
    """A real QueryServer (real index, fake model) on its real socket, served from a thread."""
    from hippo.surfaces.service.server import QueryServer

    srv = QueryServer(indexed, idle_s=30.0)
    t = threading.Thread(target=srv.serve, daemon=True)
    t.start()
    idx = indexed / ".hippo"
    deadline = time.time() + 60
    while _ping(idx) is None:
        assert t.is_alive() and time.time() < deadline, "server did not come up"
        time.sleep(0.05)
    yield indexed, srv
    srv.idle_s = 0  # the next request is its last: the accept loop ends instead of idling out
    _ping(idx)
    t.join(10)
    assert not t.is_alive(), "server thread did not stop"


def _served(root: Path) -> int:
    pong = _ping(root / ".hippo")
    assert pong is not None
    return int(pong["served"])


def _imports(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if "|" in line}


def _xml_files(text: str) -> list[str]:
    return [r.findtext("source_file") for r in ET.fromstring(text).findall("result")]


def test_cli_search_through_the_server_imports_no_lancedb(live_server):
    root, _ = live_server
    before = _served(root)
    env = {**os.environ, "HIPPO_MODEL": FAKE}
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "hippo", "search", "Token is too old",
                           "--keyword", "TokenExpiredError", "--format", "xml"],
                          cwd=root / "src", capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _xml_files(proc.stdout)[0] == "src/auth/tokens.py"
    imported = _imports(proc.stderr)
    for heavy in ("lancedb", "pyarrow", "numpy", "fastembed", "onnxruntime", "hippo.retrieval.search", "hippo.index.store"):
        assert heavy not in imported, heavy
    assert _served(root) == before + 1  # the server answered it


def test_one_server_serves_hooks_mcp_and_cli(live_server):
    from hippo.surfaces.mcp_server import SearchService, call_tool

    root, _ = live_server
    pid = _ping(root / ".hippo")["pid"]
    before = _served(root)
    # the failure hook, as the hook process runs it
    out = client.hook("tool-failure", {"tool_name": "Bash", "tool_input": {"command": "pytest"},
                                       "error": TRACEBACK.format(root=root), "session_id": "one-server",
                                       "cwd": str(root)})
    assert out is not None and "<source_file>src/auth/tokens.py</source_file>" in \
        out["hookSpecificOutput"]["additionalContext"]
    # the MCP tool: forwarded, so this process never opens the index for it
    svc = SearchService(root)
    text, is_error = call_tool(svc, "search_codebase", {"query": "Token is too old", "keywords": ["TokenExpiredError"]})
    assert not is_error and _xml_files(text)[0] == "src/auth/tokens.py"
    assert not svc.local.is_open and not svc.local.needed
    # `hippo search` (its command body, in this process)
    proc = hippo_in_process(["search", "retry", "--glob", "src/**/*.js", "--format", "json"], root)
    assert proc.returncode == 0
    assert {h["path"] for h in json.loads(proc.stdout)["results"]} == {"src/web/retry.js"}
    pong = _ping(root / ".hippo")
    assert pong["pid"] == pid and pong["served"] == before + 3


@pytest.mark.slow  # a real `hippo mcp` process (~8 s on a busy box); test_one_server_... covers it in-process
def test_mcp_stdio_forwards_to_the_server(live_server):
    from mcp_helpers import run_session, tool_text

    root, _ = live_server
    before = _served(root)
    _, _, results = run_session(root, [{"query": "Token is too old", "keywords": ["TokenExpiredError"]},
                                       {"query": "x", "file_pattern": "../../etc/passwd"}])
    assert not results[0].is_error and _xml_files(tool_text(results[0]))[0] == "src/auth/tokens.py"
    assert results[1].is_error and "outside the repository" in tool_text(results[1])  # validated before forwarding
    assert _served(root) == before + 1


class GarbageServer:
    """Something on the repo's socket that accepts and answers nonsense (a wedged or foreign process)."""

    def __init__(self, path: Path, reply: bytes) -> None:
        self.path, self.reply, self.connections = path, reply, 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        os.chmod(path, 0o600)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                try:
                    conn.recv(1 << 20)
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()
        self.path.unlink(missing_ok=True)


@pytest.mark.parametrize("reply", [b"not json at all", b'{"ok": true, "result": "a string"}', b"[1, 2]",
                                   b'{"ok": false, "error": "boom", "kind": "ValueError"}', b""])
def test_garbage_from_the_socket_falls_back_in_process(indexed, reply):
    garbage = GarbageServer(indexed / ".hippo" / "server.sock", reply)
    try:
        proc = hippo_in_process(["search", "Token is too old", "-w", "TokenExpiredError", "--format", "xml"], indexed)
        assert proc.returncode == 0
        assert _xml_files(proc.stdout.decode())[0] == "src/auth/tokens.py"
        out = client.hook("tool-failure", {"tool_name": "Bash", "error": TRACEBACK.format(root=indexed),
                                           "session_id": f"garbage-{len(reply)}", "cwd": str(indexed)})
        assert out is not None and "src/auth/tokens.py" in out["hookSpecificOutput"]["additionalContext"]
        assert garbage.connections == 2  # both asked the socket first
    finally:
        garbage.close()


def test_no_server_answers_in_process_and_leaves_one_warm(indexed, monkeypatch):
    from hippo.core import runtime as common

    started: list[list[str]] = []
    monkeypatch.setattr(common, "spawn_detached", lambda args, log_dir, cwd, env=None: started.append(args) or 1)
    monkeypatch.setenv("HIPPO_SERVER", "auto")
    assert not (indexed / ".hippo" / "server.sock").exists()
    resp = client.search(indexed, {"query": "password hashing salt"})
    assert resp["hits"] and started == [["serve", "--root", str(indexed)]]
    # a gated-out failure needs no index: nothing is started for it
    assert client.hook("tool-failure", {"tool_name": "Bash", "error": "Exit code 127\nbash: pnpmx: command not found",
                                        "cwd": str(indexed)}) is None
    assert len(started) == 1
    monkeypatch.setenv("HIPPO_SERVER", "ask")  # use one if it runs, never start one
    client.search(indexed, {"query": "password hashing salt"})
    monkeypatch.setenv("HIPPO_NO_SERVER", "1")  # the old spelling of HIPPO_SERVER=off
    client.search(indexed, {"query": "password hashing salt"})
    assert len(started) == 1


def test_user_errors_from_the_server_are_raised_without_the_fallback(live_server, monkeypatch):
    from hippo.core.errors import BadQueryError
    from hippo.surfaces.service import host

    root, _ = live_server

    def no_fallback(*args, **kwargs):
        raise AssertionError("answered in-process")

    monkeypatch.setattr(host, "WarmIndex", no_fallback)  # the server keeps its own instance
    with pytest.raises(BadQueryError, match="--exact needs"):
        client.search(root, {"query": "x", "exact": True})


def test_requests_for_another_repository_are_refused(indexed, tmp_path):
    other = sample_repo(tmp_path, "other")
    index = WarmIndex(indexed)
    assert index.handle({"op": "search", "root": str(indexed), "query": "token"})["ok"]
    refused = index.handle({"op": "search", "root": str(other), "query": "token"})
    assert not refused["ok"] and "another repository" in refused["error"]
    assert not index.handle({"op": "diagnose", "root": str(other), "error": "x"})["ok"]


def test_untrusted_sockets_and_oversized_requests_are_not_used(indexed, tmp_path):
    idx = indexed / ".hippo"
    garbage = GarbageServer(idx / "server.sock", b'{"ok": true, "result": {"pid": 1}}')
    try:
        assert client.request(idx, {"op": "ping"}) == {"pid": 1}
        assert client.ask(idx, {"op": "search", "query": "x" * client.MAX_REQUEST}) is None  # never sent
        mode = idx.stat().st_mode
        os.chmod(idx, mode | 0o002)  # anyone could have replaced the socket
        try:
            assert client.request(idx, {"op": "ping"}) is None
        finally:
            os.chmod(idx, mode)
        assert garbage.connections == 1
    finally:
        garbage.close()
    # the temp-dir fallback for long index paths must be a private directory of ours
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    assert not client.private_dir_ok(str(shared))


@pytest.mark.slow
def test_cli_search_leaves_a_server_warm_for_the_next_call(indexed):
    """Real processes: a cold `hippo search` answers, then a detached server comes up and answers the next."""
    idx = indexed / ".hippo"
    env = {**os.environ, "HIPPO_MODEL": FAKE, "HIPPO_SERVER_IDLE": "60", "HIPPO_SERVER": "auto"}
    args = [sys.executable, "-m", "hippo", "search", "Token is too old", "-w", "TokenExpiredError", "--format", "xml"]
    cold = subprocess.run(args, cwd=indexed, capture_output=True, text=True, env=env, timeout=180)
    assert cold.returncode == 0 and _xml_files(cold.stdout)[0] == "src/auth/tokens.py"
    pid = None
    try:
        deadline = time.time() + 120
        while (pong := _ping(idx)) is None:
            assert time.time() < deadline, "no server was left running"
            time.sleep(0.1)
        pid = int(pong["pid"])
        warm = subprocess.run([*args[:1], "-X", "importtime", *args[1:]], cwd=indexed, capture_output=True, text=True,
                              env=env, timeout=120)
        assert warm.returncode == 0 and warm.stdout == cold.stdout.replace(
            _meta(cold.stdout, "latency_ms"), _meta(warm.stdout, "latency_ms"))
        assert "lancedb" not in _imports(warm.stderr)
        assert _ping(idx)["served"] == 1
    finally:
        if pid is not None:
            os.kill(pid, 15)
            deadline = time.time() + 30  # the next test's server needs the singleton lock this one holds
            while client.server_running(idx) and time.time() < deadline:
                time.sleep(0.05)


def _meta(xml: str, key: str) -> str:
    text = ET.fromstring(xml).findtext(f"meta/{key}")
    return f"<{key}>{text}</{key}>"


def test_mcp_local_copy_is_dropped_once_the_server_answers(live_server):
    """The MCP server answered in-process while no server was up; when one is back it forwards again and
    lets its own open index go, so one process per repo holds LanceDB and the model."""
    from hippo.surfaces.mcp_server import SearchService, call_tool

    root, _ = live_server
    svc = SearchService(root)
    svc.local.searcher()  # what an earlier call without a server left open
    assert svc.local.is_open
    text, is_error = call_tool(svc, "search_codebase", {"query": "retry", "file_pattern": "src/**/*.js"})
    assert not is_error and set(_xml_files(text)) == {"src/web/retry.js"}
    assert not svc.local.is_open
