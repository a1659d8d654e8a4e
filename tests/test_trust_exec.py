"""A cloned repository must never run code through hippo (issue 12, item 1).

Python puts the current directory (for `-m` and `-c`) first on sys.path. hippo used to start its
interpreters inside the repository (the launcher, the background index, the warm server, the MCP server,
/rag-index), so a committed `hippo/__init__.py`, `hippo.py` or `json.py` ran on session start. Here a repo
commits such shadows; each one writes a marker file when imported. Every way hippo starts Python is driven
from inside that repo, and no marker may appear while the hooks still do their job.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from hippo.core import runtime as common
from hippo.surfaces.hooks import prompt_expansion, session_start
from hippo.surfaces.service import client

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "scripts" / "hippo"

# Modules hippo (or the tools it runs: venv, pip) imports after startup. Each shadow writes its marker.
SHADOWS = ("hippo/__init__.py", "hippo.py", "json.py", "click.py", "pathlib.py", "subprocess.py", "socket.py",
           "fcntl.py", "tomllib.py", "tempfile.py", "re.py", "anyio.py", "mcp/__init__.py", "lancedb.py",
           "numpy.py", "venv.py", "pip/__init__.py", "runpy.py", "sitecustomize.py", "usercustomize.py")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("git") is None,
                                reason="needs bash and git")


@pytest.fixture
def hostile(git_repo, tmp_path):
    """(repo root, marker dir): a repo committing import shadows that each drop a marker when run."""
    markers = tmp_path / "markers"
    markers.mkdir()
    files = {"src/app.py": "def handler(event):\n    return event['id']\n", "README.md": "# app\n"}
    for rel in SHADOWS:
        name = rel.split("/")[0].removesuffix(".py")
        files[rel] = f"open({str(markers / name)!r}, 'w').close()\nraise SystemExit('shadow {name} ran')\n"
    root = git_repo(files, name="hostile").resolve()
    return root, markers


def ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "HIPPO_LAUNCH_CWD")}
    env.update({"HIPPO_MODEL": FAKE, "HIPPO_NO_BACKGROUND_INDEX": "1", "HIPPO_SERVER": "ask"}, **extra)
    return env


def _launch(args: list[str], cwd: Path, stdin: bytes = b"", **extra: str) -> subprocess.CompletedProcess:
    env = _env(CLAUDE_PLUGIN_ROOT=str(REPO), CLAUDE_PLUGIN_DATA=str(cwd.parent / "plugin-data"), **extra)
    return subprocess.run(["bash", str(LAUNCHER), *args], cwd=cwd, input=stdin, capture_output=True, env=env,
                          timeout=120)


def _wait_child(pid: int, timeout: float = 180.0) -> None:
    """Reap a child we started (polling; it is detached, so nothing else tells us it finished)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.1)
    os.kill(pid, 9)
    pytest.fail(f"child {pid} did not finish in {timeout:.0f}s")


def test_launcher_hook_runs_from_inside_the_repo_without_importing_it(hostile):
    root, markers = hostile
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s1",
                          "cwd": str(root / "src")}).encode()
    proc = _launch(["hook", "session-start"], root, payload, HIPPO_PYTHON_BIN=sys.executable)
    assert proc.returncode == 0, proc.stderr
    assert ran(markers) == [], proc.stderr
    out = json.loads(proc.stdout)  # the hook still works: it answers for the hostile repo
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "hippo" in out["hookSpecificOutput"]["additionalContext"]


def test_launcher_cli_and_mcp_keep_the_users_directory_but_not_its_modules(hostile):
    root, markers = hostile
    version = _launch(["--version"], root, HIPPO_PYTHON_BIN=sys.executable)
    assert version.returncode == 0 and b"hippo, version" in version.stdout, version.stderr
    # The CLI still acts on the directory it was started in (HIPPO_LAUNCH_CWD), here "no index yet".
    status = _launch(["status", "--json"], root, HIPPO_PYTHON_BIN=sys.executable)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["root"] == str(root)
    mcp = _launch(["mcp"], root, HIPPO_PYTHON_BIN=sys.executable, HIPPO_PROJECT_DIR=str(root))
    assert mcp.returncode == 0, mcp.stderr  # stdin closed at once: the server starts and stops cleanly
    assert ran(markers) == []


def test_launcher_version_probe_of_a_path_hippo_ignores_the_cwd(hostile, tmp_path):
    """path_hippo_python asks the console script's interpreter for hippo.__version__ with `-c`."""
    root, markers = hostile
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "hippo"
    script.write_text(f"#!{sys.executable}\nfrom hippo.surfaces.cli import main\nmain()\n")
    script.chmod(0o755)
    proc = _launch(["--launcher-which"], root, PATH=f"{bindir}:/usr/bin:/bin")
    assert proc.stdout.decode().strip() == f"path {sys.executable}", proc.stderr
    assert ran(markers) == []


@pytest.mark.slow  # a detached index and a warm server, each a full process start
def test_background_index_and_warm_server_spawn_outside_the_repo(hostile, monkeypatch):
    root, markers = hostile
    for key, value in _env(HIPPO_SERVER_IDLE="2").items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    monkeypatch.chdir(root)  # as a hook process would be
    idx = root / ".hippo"
    pid = common.spawn_detached(["index", "--quiet", "--repo", str(root)], idx, root)
    assert pid
    _wait_child(pid)
    assert (idx / "state.json").is_file(), (idx / "hippo.log").read_text(errors="replace")
    assert ran(markers) == []

    monkeypatch.setenv("HIPPO_SERVER", "auto")
    pid = client.start_server(root, idx)
    assert pid
    deadline = time.monotonic() + 120
    answer = None
    while answer is None and time.monotonic() < deadline:
        answer = client.request(idx, {"op": "search", "query": "handler event id", "k": 3}, timeout=5)
        if answer is None:
            time.sleep(0.1)
    assert answer is not None, (idx / "hippo.log").read_text(errors="replace")
    assert any(h["path"] == "src/app.py" for h in answer["hits"])
    _wait_child(pid)  # exits after HIPPO_SERVER_IDLE seconds without a query
    assert ran(markers) == []


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_session_start_kicks_the_indexer_without_running_repo_code(hostile, monkeypatch):
    root, markers = hostile
    for key, value in _env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("HIPPO_NO_BACKGROUND_INDEX")
    monkeypatch.chdir(root)
    spawned: list[int] = []
    real = common.spawn_detached

    def spy(args, log_dir, cwd, env=None):
        spawned.append(real(args, log_dir, cwd, env))
        return spawned[-1]

    monkeypatch.setattr(session_start, "spawn_detached", spy)
    out = session_start.handle({"cwd": str(root), "source": "startup", "session_id": "s2"})
    assert out and spawned and spawned[0]
    _wait_child(spawned[0])
    assert (root / ".hippo" / "state.json").is_file()
    assert ran(markers) == []


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_rag_index_and_rag_status_run_hippo_outside_the_repo(hostile, monkeypatch):
    root, markers = hostile
    for key, value in _env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(root)
    out = prompt_expansion.handle({"command_name": "rag-index", "cwd": str(root)})
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "`hippo index` finished" in text, text
    status = prompt_expansion.handle({"command_name": "hippo:rag-status", "cwd": str(root)})
    assert "files" in status["hookSpecificOutput"]["additionalContext"]
    assert ran(markers) == []


# --- Python 3.10: no -P / PYTHONSAFEPATH there, only the neutral cwd protects us ---------------------------

def _python310() -> str | None:
    candidates = [os.environ.get("HIPPO_TEST_PYTHON310", ""), shutil.which("python3.10") or ""]
    try:
        pyenv_root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=10).stdout.strip()
        candidates += sorted(glob.glob(os.path.join(pyenv_root, "versions", "3.10*", "bin", "python3.10")))
    except (OSError, subprocess.SubprocessError):
        pass
    for cand in candidates:
        if not cand:
            continue
        try:
            got = subprocess.run([cand, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                                 text=True, timeout=20, cwd="/")
        except (OSError, subprocess.SubprocessError):
            continue
        if got.stdout.strip() == "(3, 10)":
            return cand
    return None


PY310 = _python310()
needs_310 = pytest.mark.skipif(PY310 is None, reason="no Python 3.10 interpreter (set HIPPO_TEST_PYTHON310)")


@needs_310
def test_launcher_on_python_310_ignores_the_cwd(hostile):
    root, markers = hostile
    # hippo's hook entry (stdlib only up to here) from this checkout; the payload is not for us.
    proc = _launch(["hook", "prompt-expansion"], root, b'{"command_name": "not-ours"}', HIPPO_PYTHON_BIN=PY310,
                   PYTHONPATH=str(REPO / "lib"))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    assert ran(markers) == []


@needs_310
def test_spawn_on_python_310_ignores_the_cwd(hostile, monkeypatch, tmp_path):
    root, markers = hostile
    monkeypatch.setattr(common, "python_exe", lambda: PY310)
    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    assert "-P" not in common.hippo_argv(["hook"])
    monkeypatch.setenv("PYTHONPATH", str(REPO / "lib"))
    log_dir = tmp_path / "log"
    pid = common.spawn_detached(["hook", "prompt-expansion"], log_dir, root)
    assert pid
    _wait_child(pid, 60)
    assert ran(markers) == [], (log_dir / "hippo.log").read_text(errors="replace")
