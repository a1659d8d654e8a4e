"""Fixtures for the real-client end-to-end suite (issue 6). See docs/testing-real-client.md.

The suite skips only when no `claude` binary can be found; CI installs the pinned one with
`.ci/install-claude.sh`, so there it always runs.
"""
from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from e2e.e2e_harness import REPO, find_claude, index_repo, make_fixture_repo, stop_warm_server
from fake_embedder import SPEC as FAKE

collect_ignore_glob = ["fixtures/*"]


@pytest.fixture(scope="session")
def claude() -> str:
    """Path of the real client binary."""
    path = find_claude()
    if path is None:
        pytest.skip("claude binary not found: run .ci/install-claude.sh (or set HIPPO_CLAUDE_BIN)")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A throwaway HOME: no login, no settings, no installed plugins."""
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture(scope="session")
def plugin_root() -> Path:
    """The repo root is the plugin root (and the marketplace root)."""
    manifest = REPO / ".claude-plugin" / "plugin.json"
    assert manifest.is_file(), "plugin bundle missing (.claude-plugin/plugin.json)"
    return REPO


@pytest.fixture(scope="session")
def _indexed_templates(tmp_path_factory) -> dict:
    """Fixture repos indexed once per (name, model); tests get private copies (see ledger_repo)."""
    return {"dir": tmp_path_factory.mktemp("templates")}


@pytest.fixture
def ledger_repo(tmp_path: Path, _indexed_templates: dict) -> Iterator[Callable[..., Path]]:
    """Factory: a committed, indexed copy of fixtures/<name> (model None = the real default model).

    Indexing is done once per session and the result copied: the index holds no absolute paths
    (checked by `hippo status` in the copy), and this saves ~5 s per test on 2 cores.
    """

    made: list[Path] = []

    def make(model: str | None = FAKE, name: str = "ledgerly") -> Path:
        key = (name, model)
        if key not in _indexed_templates:
            tag = (model or "default").replace(":", "-")
            src = make_fixture_repo(name, _indexed_templates["dir"] / f"{name}-{tag}" / name)
            index_repo(src, model)
            _indexed_templates[key] = src
        dest = tmp_path / name
        shutil.copytree(_indexed_templates[key], dest, symlinks=True)
        made.append(dest)
        return dest

    yield make
    for root in made:  # sessions leave a warm query server behind; stop ours
        stop_warm_server(root)
