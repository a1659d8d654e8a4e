"""scripts/hippo: resolution order (env, PATH, plugin venv), background bootstrap, one-time messages."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hippo

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "scripts" / "hippo"
VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
BASE_PATH = "/usr/bin:/bin"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def _wrapper(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(0o755)
    return path


def _run(args: list[str], data: Path, *, path: str = BASE_PATH, stdin: bytes = b"", extra: dict | None = None):
    env = {"HOME": str(data.parent), "PATH": path, "CLAUDE_PLUGIN_ROOT": str(REPO),
           "CLAUDE_PLUGIN_DATA": str(data), **(extra or {})}
    return subprocess.run(["bash", str(LAUNCHER), *args], input=stdin, capture_output=True, env=env, timeout=60)


def _which(data: Path, **kw) -> str:
    return _run(["--launcher-which"], data, **kw).stdout.decode().strip()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "plugin-data"


def test_version_matches_the_package():
    assert VERSION == hippo.__version__
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert market["plugins"][0]["version"] == VERSION


def test_path_hippo_with_compatible_version_wins(data, tmp_path):
    bindir = tmp_path / "bin"
    # A console script like pip writes: shebang = the interpreter that has hippo installed.
    _wrapper(bindir / "hippo", "").write_text(f"#!{sys.executable}\nfrom hippo.surfaces.cli import main\nmain()\n")
    assert _which(data, path=f"{bindir}:{BASE_PATH}") == f"path {sys.executable}"
    proc = _run(["--version"], data, path=f"{bindir}:{BASE_PATH}")
    assert proc.returncode == 0 and proc.stdout.decode().strip() == f"hippo, version {hippo.__version__}"


def test_path_hippo_with_other_version_is_skipped(data, tmp_path):
    fake_py = _wrapper(tmp_path / "oldpy" / "python",
                       f'if [ "$1" = -c ]; then echo 9.9.0; exit 0; fi\nexec {sys.executable} "$@"\n')
    _wrapper(tmp_path / "bin" / "hippo", "").write_text(f"#!{fake_py}\n")
    assert _which(data, path=f"{tmp_path / 'bin'}:{BASE_PATH}") == "missing -"


def test_plugin_venv_is_used_when_ready(data):
    venv = data / f"venv-{VERSION}"
    _wrapper(venv / "bin" / "python", f'exec {sys.executable} "$@"\n')
    assert _which(data) == "missing -"  # exists but not marked ready (half-built)
    (venv / ".hippo-ready").write_text("x")
    assert _which(data) == f"venv {venv / 'bin' / 'python'}"
    proc = _run(["hook", "prompt-expansion"], data, stdin=b'{"command_name": "not-ours"}')
    assert proc.returncode == 0 and proc.stdout == b""


def test_env_override(data):
    assert _which(data, extra={"HIPPO_PYTHON_BIN": sys.executable}) == f"env {sys.executable}"


def _fake_base_python(tmp_path: Path, pip_rc: int, pip_sleep: float) -> Path:
    """A 'python3' whose venv's pip is fake: lets us drive the bootstrap state machine quickly."""
    venv_python = (f'if [ "$1 $2" = "-m pip" ]; then sleep {pip_sleep}; echo fake-pip "$@"; exit {pip_rc}; fi\n'
                   f'exec {sys.executable} "$@"\n')
    body = (
        'if [ "$1" = -c ]; then exit 0; fi\n'
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin"; '
        f"cat > \"$3/bin/python\" <<'EOS'\n#!/usr/bin/env bash\n{venv_python}EOS\n"
        'chmod +x "$3/bin/python"; exit 0; fi\n'
        "exit 2\n"
    )
    return _wrapper(tmp_path / "basepy" / "python3", body)


def _wait(pred, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow  # waits out a timeout or a deadline: wall time, not CPU
def test_bootstrap_in_background_then_ready(data, tmp_path):
    base = _fake_base_python(tmp_path, pip_rc=0, pip_sleep=1.5)
    extra = {"HIPPO_BOOTSTRAP_PYTHON": str(base)}
    t0 = time.monotonic()
    first = _run(["hook", "session-start"], data, stdin=b"{}", extra=extra)
    assert time.monotonic() - t0 < 5  # returns at once; the build is detached
    assert first.returncode == 0
    msg = json.loads(first.stdout)
    assert set(msg) == {"systemMessage"} and "installing its Python environment" in msg["systemMessage"]
    # While building: every hook is silent, and nobody starts a second build.
    assert _which(data, extra=extra) == "building -"
    for event in ("session-start", "tool-failure", "prompt-expansion"):
        p = _run(["hook", event], data, stdin=b"{}", extra=extra)
        assert p.returncode == 0 and p.stdout == b""
    mcp = _run(["mcp"], data, extra=extra)
    assert mcp.returncode == 1 and b"not ready" in mcp.stderr
    assert _wait(lambda: (data / f"venv-{VERSION}" / ".hippo-ready").exists())
    assert _wait(lambda: _which(data, extra=extra).startswith("venv "))
    log = (data / "bootstrap.log").read_text()
    assert "fake-pip -m pip install" in log and str(REPO) in log
    done = _run(["hook", "prompt-expansion"], data, stdin=b'{"command_name": "x"}', extra=extra)
    assert done.returncode == 0 and done.stdout == b""


def test_failed_bootstrap_is_reported_once(data, tmp_path):
    base = _fake_base_python(tmp_path, pip_rc=1, pip_sleep=0)
    extra = {"HIPPO_BOOTSTRAP_PYTHON": str(base)}
    assert b"installing" in _run(["hook", "session-start"], data, stdin=b"{}", extra=extra).stdout
    assert _wait(lambda: _which(data, extra=extra) == "failed -")
    told = _run(["hook", "session-start"], data, stdin=b"{}", extra=extra)
    text = json.loads(told.stdout)["systemMessage"]
    assert "could not install" in text and "pip install of hippo failed" in text and "--bootstrap-now" in text
    again = _run(["hook", "session-start"], data, stdin=b"{}", extra=extra)
    assert again.returncode == 0 and again.stdout == b""


def test_session_end_never_starts_a_build(data, tmp_path):
    base = _fake_base_python(tmp_path, pip_rc=0, pip_sleep=0)
    p = _run(["hook", "session-end"], data, stdin=b"{}", extra={"HIPPO_BOOTSTRAP_PYTHON": str(base)})
    assert p.returncode == 0 and p.stdout == b""
    assert not (data / f"venv-{VERSION}").exists()


def test_version_change_rebuilds(data, tmp_path):
    old = data / "venv-0.0.9"
    _wrapper(old / "bin" / "python", f'exec {sys.executable} "$@"\n')
    (old / ".hippo-ready").write_text("x")
    # The plugin is now VERSION, so the old venv is not used ...
    assert _which(data) == "missing -"
    base = _fake_base_python(tmp_path, pip_rc=0, pip_sleep=0)
    proc = _run(["--bootstrap-now"], data, extra={"HIPPO_BOOTSTRAP_PYTHON": str(base)})
    assert proc.returncode == 0, proc.stderr
    # ... and a successful build of the new one removes it.
    assert (data / f"venv-{VERSION}" / ".hippo-ready").exists() and not old.exists()


def test_failed_bootstrap_retries_after_a_while(data, tmp_path):
    base = _fake_base_python(tmp_path, pip_rc=1, pip_sleep=0)
    extra = {"HIPPO_BOOTSTRAP_PYTHON": str(base)}
    _run(["hook", "session-start"], data, stdin=b"{}", extra=extra)
    assert _wait(lambda: _which(data, extra=extra) == "failed -")
    failed = data / f"venv-{VERSION}.failed"
    old = time.time() - 7 * 3600
    os.utime(failed, (old, old))
    assert _which(data, extra=extra) == "missing -"
    again = _run(["hook", "session-start"], data, stdin=b"{}", extra=extra)
    assert b"installing its Python environment" in again.stdout


@pytest.mark.slow  # many real launcher processes racing for the first build
def test_concurrent_first_launches_start_one_build(tmp_path):
    """SessionStart and the MCP server launch together on first use: exactly one build may start (review)."""
    import concurrent.futures

    base = _fake_base_python(tmp_path, pip_rc=0, pip_sleep=2.0)
    extra = {"HIPPO_BOOTSTRAP_PYTHON": str(base)}
    for trial in range(8):
        data = tmp_path / f"data{trial}"
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            a = pool.submit(_run, ["hook", "session-start"], data, stdin=b"{}", extra=extra)
            b = pool.submit(_run, ["mcp"], data, extra=extra)
            a.result(), b.result()
        assert _wait(lambda data=data: (data / f"venv-{VERSION}" / ".hippo-ready").exists())
        log = (data / "bootstrap.log").read_text()
        assert log.count("fake-pip -m pip install") == 1, log


def test_a_hook_whose_python_crashes_still_exits_0_and_the_crash_is_logged(data, tmp_path):
    """hippo's hooks exit 0 from Python, but a native crash (a damaged index file read by LanceDB, a grammar)
    kills the process by a signal; with `exec` that status reached Claude Code as a failed hook. The payload
    still arrives on the child's stdin, and the reply it wrote before dying is passed on."""
    fake = _wrapper(tmp_path / "bin" / "python", 'payload="$(cat)"\nprintf \'{"got": %s}\\n\' "$payload"\nkill -ABRT $$\n')
    proc = _run(["hook", "tool-failure"], data, stdin=b'"the payload"', extra={"HIPPO_PYTHON_BIN": str(fake)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"got": "the payload"}
    log = (data / "hook-crashes.log").read_text()
    assert "hook tool-failure" in log and "signal 6" in log


def test_a_command_that_is_not_a_hook_keeps_its_exit_status(data, tmp_path):
    fake = _wrapper(tmp_path / "bin" / "python", "exit 3\n")
    assert _run(["search", "x"], data, extra={"HIPPO_PYTHON_BIN": str(fake)}).returncode == 3
