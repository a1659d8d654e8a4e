"""Plain helpers for tests that build git repos (importable as `repo_helpers`; conftest.py exposes fixtures).

They live outside conftest.py because tests/e2e has a conftest of its own, and `from conftest import ...`
would pick whichever conftest module was imported first.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

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
