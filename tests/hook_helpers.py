"""Running hooks as Claude Code runs them, and a warm QueryServer over the fake Searcher."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from fakes import ERRORS, PROJECTS, FakeSearcher
from hippo.surfaces.service import client

# What a test waits for the warm server: its answer is under test, not how fast a loaded CI box gives it
# (the hooks themselves wait client.WARM_TIMEOUT_S).
LOADED_BOX_S = 60.0
HOOK_ENV = {"HIPPO_NO_BACKGROUND_INDEX": "1", "HIPPO_NO_SERVER": "1", "HIPPO_MODEL": FAKE}


def run_hook(event: str, stdin: bytes | str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "hippo", "hook", event], input=data, capture_output=True,
                          timeout=timeout, env={**os.environ, **HOOK_ENV, **(env or {})})


def warm_payload(root: Path, error: str, session: str = "warm-1", cwd: Path | None = None) -> dict:
    return {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "python -m shop.main"},
            "error": error, "session_id": session, "cwd": str(cwd or root / "py")}


@pytest.fixture
def warm_server(git_repo, monkeypatch):
    """A QueryServer on a real socket (in a thread) over a stand-in Searcher of the fixture projects."""
    from hippo.surfaces.service.server import QueryServer

    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    root = git_repo({"README.md": "# r\n"}, name="warm").resolve()
    (root / "py").mkdir()
    idx = root / ".hippo"
    idx.mkdir()
    (idx / "state.json").write_text("{}")
    srv = QueryServer(root, idle_s=3.0)
    shutil.copytree(PROJECTS, root, dirs_exist_ok=True)  # the live files the diagnosis reads
    srv.index._searcher = FakeSearcher(root)
    t = threading.Thread(target=srv.serve, daemon=True)
    t.start()
    deadline = time.time() + 20
    while client.request(idx, {"op": "ping"}, timeout=1) is None:
        assert time.time() < deadline, "server did not come up"
        time.sleep(0.05)
    yield root, srv
    srv.idle_s = 0  # the next request is its last: the accept loop ends instead of idling out
    client.request(idx, {"op": "ping"}, timeout=1)
    t.join(10)
    assert not t.is_alive(), "server thread did not stop"


def error_text(root: Path, name: str) -> str:
    return (ERRORS / name).read_text(encoding="utf-8").replace("/srv/dev/work", str(root))
