"""Shared fixtures. Kept small and generic: module-specific helpers live in their own test files.

Every test session runs with a private HOME and HIPPO_HOME (hooks log there, fastembed caches there),
without the developer's HIPPO_* settings and with HIPPO_SERVER=ask (and a generous HIPPO_BRIEF_SECONDS); `models/` in it links to the real built model, so the
slow tests that load it do not rebuild it. This directory goes first on PYTHONPATH, so every child a test
starts (hooks, `python -m hippo`, the warm server, background indexers, the `claude` CLI's hooks) can load
the test embedder plugin `fake_embedder:FakeEmbedder` (tests/fake_embedder.py).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from pathlib import Path

import pytest

from fake_embedder import with_tests_dir
from hippo.core.config import Settings
from hippo.index.embedding.paths import models_dir
from hook_helpers import warm_server  # noqa: F401  (a fixture for every test module)
from repo_helpers import GIT_ENV, git, write_files  # noqa: F401  (re-exported)

GitRepoFactory = Callable[..., Path]

# Environment switches that change what hippo does; a developer's shell may have any of them set.
HIPPO_KNOBS = {f"HIPPO_{f.name.upper()}" for f in fields(Settings)} | {
    "HIPPO_NO_SERVER", "HIPPO_SERVER", "HIPPO_NO_BACKGROUND_INDEX", "HIPPO_HOOK_COLD_BUDGET", "HIPPO_BRIEF_SECONDS",
    "HIPPO_SERVER_IDLE",
    "HIPPO_VECTOR_INDEX_MIN_ROWS", "HIPPO_PARALLEL_MIN_FILES",
}


@pytest.fixture(scope="session", autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private HOME and HIPPO_HOME for the whole session (session scope, so module fixtures get it too).

    Nothing a test runs reads the developer's ~/.claude or ~/.gitconfig, or writes hippo.log or caches
    into their ~/.cache/hippo. The built model stays reachable through a `models` link to the real one.
    """
    real_models = models_dir()  # resolved from the environment pytest started in
    base = tmp_path_factory.mktemp("isolated")
    hippo_home = base / "hippo-home"
    hippo_home.mkdir()
    if real_models.is_dir():
        (hippo_home / "models").symlink_to(real_models.resolve(), target_is_directory=True)
    mp = pytest.MonkeyPatch()
    for name in HIPPO_KNOBS:
        mp.delenv(name, raising=False)
    # No detached query servers by default: an in-process `hippo search` or hook would otherwise leave
    # one running for 30 minutes. Tests of the warm server start (and stop) theirs explicitly; a running one
    # is still asked.
    mp.setenv("HIPPO_SERVER", "ask")
    # SessionStart waits ~1 s for its brief, then answers without it: on a loaded test machine that would make
    # every test that reads the brief or the changes depend on the load. The deadline's tests set their own.
    mp.setenv("HIPPO_BRIEF_SECONDS", "20")
    mp.setenv("HIPPO_HOME", str(hippo_home))
    mp.setenv("HOME", str(base))
    mp.delenv("XDG_DATA_HOME", raising=False)
    mp.delenv("XDG_CACHE_HOME", raising=False)
    mp.setenv("PYTHONPATH", with_tests_dir(os.environ.get("PYTHONPATH", "")))  # children find fake_embedder
    yield hippo_home
    mp.undo()


@pytest.fixture
def git_repo(tmp_path: Path) -> GitRepoFactory:
    """Factory: `git_repo({"a.py": "x = 1\\n"})` -> path of a fresh repo with those files committed.

    `commit=False` leaves the files untracked (repo without commits); `name` picks the directory.
    user.name/email are set in the repo's own config so later `git commit` calls work too.
    """
    counter = {"n": 0}

    def make(files: Mapping[str, str | bytes] | None = None, *, commit: bool = True,
             name: str | None = None, message: str = "initial") -> Path:
        counter["n"] += 1
        root = tmp_path / (name or f"repo{counter['n']}")
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        with open(root / ".git" / "config", "a", encoding="utf-8") as fh:  # one git process fewer per setting
            fh.write("[user]\n\tname = Test\n\temail = test@example.com\n[commit]\n\tgpgsign = false\n")
        write_files(root, files or {})
        if commit and files:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", message)
        return root

    return make


# --- `pytest --cpu-report`: which tests cost the most CPU (this process and the children it waited for) ---
def pytest_addoption(parser):
    parser.addoption("--cpu-report", action="store_true", help="print the 30 tests that used the most CPU time")


_CPU: dict[str, float] = {}


def _cpu_now() -> float:
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# --- HIPPO_TEST_TRACE=FILE: the test running now is written there, so a run that a native crash kills
# (no report, only the faulthandler dump) still says which test it was (scripts/test.sh prints it) ---
_TRACE = os.environ.get("HIPPO_TEST_TRACE")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _TRACE:
        Path(_TRACE).write_text(item.nodeid + "\n", encoding="utf-8")
    start = _cpu_now()
    yield
    _CPU[item.nodeid] = _cpu_now() - start


def pytest_terminal_summary(terminalreporter, config):
    if config.getoption("--cpu-report") and _CPU:
        terminalreporter.section("CPU seconds per test (setup + call + teardown, waited-for children included)")
        for nodeid, secs in sorted(_CPU.items(), key=lambda kv: -kv[1])[:30]:
            terminalreporter.write_line(f"{secs:7.2f}  {nodeid}")
        modules: dict[str, float] = {}
        for nodeid, secs in _CPU.items():
            modules[nodeid.split("::")[0]] = modules.get(nodeid.split("::")[0], 0.0) + secs
        for module, secs in sorted(modules.items(), key=lambda kv: -kv[1])[:12]:
            terminalreporter.write_line(f"{secs:7.2f}  {module} (whole module)")
        terminalreporter.write_line(f"{sum(_CPU.values()):7.2f}  total")
