"""Shared fixtures. Kept small and generic: module-specific helpers live in their own test files.

HIPPO_HOME is deliberately left alone: the real embedding model is cached under it, so pointing
it at a per-test temp dir would rebuild the model in every test.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from repo_helpers import GIT_ENV, git, write_files  # noqa: E402,F401  (re-exported)


GitRepoFactory = Callable[..., Path]


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
        git(root, "config", "user.name", "Test")
        git(root, "config", "user.email", "test@example.com")
        git(root, "config", "commit.gpgsign", "false")
        write_files(root, files or {})
        if commit and files:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", message)
        return root

    return make
