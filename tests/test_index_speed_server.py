"""`hippo index` handed to the repo's warm server (service op `index`): the same index as an in-process run,
the in-process fallback whenever the server is absent, refuses or dies, and a server killed mid-run
leaving an index the next run completes."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from helpers_index import sample_repo
from hippo.core.config import load_settings
from hippo.core.errors import IndexLockedError
from hippo.index.indexer import WriterLock, index_repo, run_key
from hippo.index.state import load_state
from hippo.surfaces.service import client
from index_checks import fresh_content, index_content
from repo_helpers import git, hippo_in_process, write_files

pytest.importorskip("lancedb")

COLUMNS = ["id", "path", "start_line", "end_line", "text", "text_ids", "vkey", "embedded", "vector"]


@pytest.fixture
def fake_model(monkeypatch):
    monkeypatch.setenv("HIPPO_MODEL", FAKE)
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)


def _rows(root: Path) -> list[tuple]:
    from hippo.index.store import Store

    idx = root / ".hippo"
    store = Store(idx, load_state(idx).dim)
    try:
        rows = store.rows(columns=COLUMNS)
    finally:
        store.close()
    return sorted(tuple(tuple(v) if k == "vector" else v for k, v in ((c, r[c]) for c in COLUMNS)) for r in rows)


def _files(root: Path) -> dict[str, tuple]:
    state = load_state(root / ".hippo")
    return {p: (r.sha, r.blob, r.chunks) for p, r in state.files.items()}


def _ping(root: Path) -> dict | None:
    return client.request(root / ".hippo", {"op": "ping"}, timeout=2)


class ThreadServer:
    """A real QueryServer for `root` on its real socket, served from a thread of this process."""

    def __init__(self, root: Path) -> None:
        from hippo.surfaces.service.server import QueryServer

        self.root = root
        self.srv = QueryServer(root, idle_s=30.0)
        self.thread = threading.Thread(target=self.srv.serve, daemon=True)
        self.thread.start()
        deadline = time.time() + 60
        while _ping(root) is None:
            assert self.thread.is_alive() and time.time() < deadline, "server did not come up"
            time.sleep(0.05)

    @property
    def served(self) -> int:
        return int(_ping(self.root)["served"])

    def stop(self) -> None:
        self.srv.idle_s = 0  # the next request is its last
        _ping(self.root)
        self.thread.join(10)
        assert not self.thread.is_alive()


def _edit(root: Path) -> None:
    write_files(root, {"src/auth/tokens.py": (root / "src/auth/tokens.py").read_text() + "\n\ndef renew():\n    return 2\n",
                       "src/new_mod.py": "def brand_new():\n    return 'new'\n"})
    victim = sorted(p for p in root.rglob("*.md") if ".hippo" not in p.parts)[0]
    victim.unlink()


def test_index_through_the_server_equals_an_in_process_run(tmp_path, fake_model):
    here, there = sample_repo(tmp_path, "here"), sample_repo(tmp_path, "there")
    index_repo(here)
    index_repo(there)
    _edit(here)
    _edit(there)
    server = ThreadServer(here)
    try:
        before = server.served
        steps: list[tuple] = []
        report = client.index(here, run_key(load_settings(here)), progress=lambda *s: steps.append(s))
        assert report is not None and server.served == before + 1
        assert report["files_changed"] == 2 and report["files_deleted"] == 1 and report["chunks_embedded"] > 0
        assert ("files", 3, 3) in steps  # progress came back over the socket
        local = index_repo(there)
        assert (local.files_changed, local.files_deleted) == (2, 1)
        assert _rows(here) == _rows(there)
        assert _files(here) == _files(there)
        # the CLI hands its run over too, and says what the server did
        write_files(here, {"src/another.py": "def another():\n    return 3\n"})
        proc = hippo_in_process(["index"], here)
        assert proc.returncode == 0, proc.stderr
        assert b"Indexed 1 changed and 0 deleted" in proc.stdout and server.served == before + 2
        noop = hippo_in_process(["index"], here)
        assert b"Index is up to date" in noop.stdout and server.served == before + 3
        # and the server's own searches see the update
        hit = client.search(here, {"query": "another", "keywords": ["another"], "k": 3}, leave_warm=False)
        assert "src/another.py" in {h["path"] for h in hit["hits"]}
    finally:
        server.stop()


def test_no_server_runs_in_process(tmp_path, fake_model):
    root = sample_repo(tmp_path)
    index_repo(root)
    assert client.index(root, run_key(load_settings(root))) is None
    write_files(root, {"src/x.py": "def x():\n    return 1\n"})
    proc = hippo_in_process(["index"], root)
    assert proc.returncode == 0 and b"Indexed 1 changed" in proc.stdout
    assert "src/x.py" in load_state(root / ".hippo").files


def test_server_with_other_settings_refuses(tmp_path, fake_model):
    root = sample_repo(tmp_path)
    index_repo(root)
    write_files(root, {"src/x.py": "def x():\n    return 1\n"})
    server = ThreadServer(root)
    try:
        before = server.served
        other = json.dumps({"settings": {"max_file_bytes": 5000}})  # what a caller with other settings sends
        assert client.index(root, other) is None
        assert server.served == before + 1
        assert "src/x.py" not in load_state(root / ".hippo").files  # refused: nothing ran
    finally:
        server.stop()


@pytest.mark.slow
def test_cli_with_other_settings_than_the_server_runs_in_process(tmp_path):
    """A real `hippo serve` started with another max_file_bytes: the CLI's own settings decide."""
    root = sample_repo(tmp_path)
    env = {**os.environ, "HIPPO_MODEL": FAKE, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    env.pop("HIPPO_INDEX_DIR", None)
    write_files(root, {"src/big.py": "x = 1\n" * 2000})  # 12 kB
    assert subprocess.run([sys.executable, "-m", "hippo", "index", "-q"], cwd=root, env=env).returncode == 0
    assert "src/big.py" in load_state(root / ".hippo").files
    server = _serve(root, {**env, "HIPPO_MAX_FILE_BYTES": "100000"})
    try:
        served = int(_ping(root)["served"])
        write_files(root, {"src/x.py": "def x():\n    return 1\n"})
        proc = subprocess.run([sys.executable, "-m", "hippo", "index"], cwd=root, env={**env, "HIPPO_MAX_FILE_BYTES": "5000"},
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert int(_ping(root)["served"]) == served + 1  # asked, refused
        files = load_state(root / ".hippo").files
        assert "src/x.py" in files and "src/big.py" not in files  # run here, with this caller's limit
    finally:
        server.kill()
        server.wait(30)


def _serve(root: Path, env: dict[str, str]) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "hippo", "serve", "--root", str(root), "--idle", "120"],
                              cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while _ping(root) is None:
        if server.poll() is not None or time.time() > deadline:
            server.kill()
            raise AssertionError("server did not come up")
        time.sleep(0.1)
    return server


def test_another_writer_holding_the_lock_is_reported_not_retried(tmp_path, fake_model):
    root = sample_repo(tmp_path)
    index_repo(root)
    server = ThreadServer(root)
    try:
        with WriterLock(root / ".hippo", 0):
            with pytest.raises(IndexLockedError):
                client.index(root, run_key(load_settings(root)), wait_lock=0)
    finally:
        server.stop()


def _fake_server(sock_path: Path, lines: list[bytes]) -> threading.Thread:
    """A socket at the server's path that reads one request, writes `lines` and hangs up."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(sock_path))
    os.chmod(sock_path, 0o600)
    srv.listen(1)

    def run() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.recv(65536)
            for line in lines:
                conn.sendall(line)
        srv.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("lines", [
    [b'{"ok": false, "error": "unknown op \'index\'"}'],  # a server from before the index op
    [b'{"progress": ["files", 0, 3]}\n'],  # died mid-run: hung up before its reply
    [b'{"alive": true}\nnot json\n'],  # garbage
    [b'{"ok": true, "result": "no report"}\n'],
], ids=["old-server", "died", "garbage", "bad-reply"])
def test_unusable_server_replies_fall_back_in_process(tmp_path, fake_model, lines):
    root = sample_repo(tmp_path)
    index_repo(root)
    t = _fake_server(client.socket_path(root / ".hippo"), lines)
    assert client.index(root, run_key(load_settings(root))) is None
    t.join(10)


@pytest.mark.slow
def test_server_killed_mid_update_leaves_an_index_the_next_run_completes(tmp_path, fake_model, monkeypatch):
    """A real `hippo serve` process, SIGKILLed once the handed-over run has committed its first batch."""
    monkeypatch.setenv("HIPPO_NO_BACKGROUND_INDEX", "1")
    root = sample_repo(tmp_path)
    index_repo(root)
    write_files(root, {f"gen/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(700)})
    git(root, "add", "-A")
    server = _serve(root, dict(os.environ))
    killed: list[int] = []

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "files" and done >= 200 and not killed:
            server.send_signal(signal.SIGKILL)
            killed.append(done)

    try:
        assert client.index(root, run_key(load_settings(root)), progress=progress) is None
        assert killed and killed[0] < 700
    finally:
        server.kill()
        server.wait(30)
    assert not load_state(root / ".hippo").complete  # what the dead run left says it was in flight
    report = index_repo(root)
    assert report.resumed and load_state(root / ".hippo").complete
    assert index_content(root) == fresh_content(root)
