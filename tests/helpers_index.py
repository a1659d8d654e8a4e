"""Helpers for tests that build real indexes of the sample repo."""
from __future__ import annotations

import shutil
from pathlib import Path

from repo_helpers import git

SAMPLE = Path(__file__).parent / "fixtures" / "sample_repo"


def sample_repo(tmp_path: Path, name: str = "sample") -> Path:
    root = tmp_path / name
    shutil.copytree(SAMPLE, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root
