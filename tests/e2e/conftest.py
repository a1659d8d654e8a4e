"""Fixtures for the real-client end-to-end suite (issue 6). See docs/testing-real-client.md.

The suite skips only when no `claude` binary can be found; CI installs the pinned one with
`.ci/install-claude.sh`, so there it always runs.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from e2e_harness import REPO, find_claude, index_repo, make_fixture_repo

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
    assert (REPO / ".claude-plugin" / "plugin.json").is_file(), "plugin bundle missing (.claude-plugin/plugin.json)"
    return REPO


@pytest.fixture
def ledger_repo(tmp_path: Path) -> Callable[..., Path]:
    """Factory: a committed copy of fixtures/ledgerly, indexed with `model` before the session."""

    def make(model: str = "fake", name: str = "ledgerly") -> Path:
        root = make_fixture_repo(name, tmp_path / name)
        index_repo(root, model)
        return root

    return make
