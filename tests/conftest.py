"""Shared fixtures. Kept small and generic: module-specific helpers live in their own test files.

HIPPO_HOME is deliberately left alone: the real embedding model is cached under it, so pointing
it at a per-test temp dir would rebuild the model in every test.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    """Run git in `root` for test setup; raises on failure, returns stdout."""
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, env=env, check=True)
    return proc.stdout.decode("utf-8", "surrogateescape")


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write {relative path: text or bytes} under root, creating parent dirs."""
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")


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
