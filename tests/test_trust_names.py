"""Indexing never dies on one file (issue 12, item 6).

A file name that is not valid UTF-8 (`src/bad\\xff\\xfe.py`) used to crash every `hippo index` when
pyarrow refused the surrogate-escaped path. Such names are skipped and named in the run summary; any
other per-file failure while chunking is skipped and reported the same way. Real git repos, real CLI.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from repo_helpers import git, hippo_in_process

ENV = {"HIPPO_MODEL": FAKE, "HIPPO_NO_SERVER": "1", "HIPPO_NO_BACKGROUND_INDEX": "1"}


def hippo(args, root):
    return hippo_in_process([*args, "--repo", str(root)], env=ENV)

BAD = b"src/bad\xff\xfe.py"
UNTRACKED = b"src/untracked\xff.py"
NOTICE = "hippo: skipped 2 files with names that are not valid UTF-8: src/bad\\xff\\xfe.py, src/untracked\\xff.py"


def _write(root: Path, rel: bytes, text: str) -> None:
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(text.encode())


def _tree(root: Path) -> None:
    root.mkdir()
    _write(root, b"src/ok.py", "def good_function_here():\n    return 'fine'\n")
    _write(root, BAD, "def function_in_a_badly_named_file():\n    return 2\n")


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    _tree(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a committed file with a non-UTF-8 name")
    _write(root, UNTRACKED, "def untracked_function():\n    return 3\n")
    assert BAD in subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True).stdout
    return root


def test_index_skips_and_reports_non_utf8_names(repo):
    first = hippo(["index"], repo)
    err = first.stderr.decode()
    assert first.returncode == 0, err[-3000:]
    assert "Traceback" not in err and NOTICE in err.splitlines(), err
    state = json.loads((repo / ".hippo" / "state.json").read_text(encoding="utf-8"))
    assert sorted(state["files"]) == ["src/ok.py"]
    found = hippo(["search", "--format", "json", "good function", "-w", "good_function_here"], repo)
    assert found.returncode == 0 and json.loads(found.stdout)["results"][0]["path"] == "src/ok.py"
    status = hippo(["status", "--format", "json"], repo)
    assert status.returncode == 0 and json.loads(status.stdout)["files"] == 1
    again = hippo(["index"], repo)  # a no-op; still says what it leaves out
    assert again.returncode == 0 and b"up to date" in again.stdout and NOTICE in again.stderr.decode()


def test_non_git_directory_walk_skips_them_too(tmp_path):
    root = tmp_path / "plain"
    _tree(root)
    proc = hippo(["index"], root)
    err = proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err, err[-3000:]
    assert "hippo: skipped 1 file with a name that is not valid UTF-8: src/bad\\xff\\xfe.py" in err.splitlines()


def test_a_file_the_chunker_chokes_on_is_skipped_and_reported(tmp_path, monkeypatch):
    """Any per-file exception while chunking (here: a chunker bug on one file) skips that file, not the run."""
    from fake_embedder import FakeEmbedder
    from hippo.core.config import load_settings
    from hippo.index.indexer import index_repo
    from hippo.index.state import load_state
    from index_checks import chunking_fails_on

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n")
    (root / "boom.py").write_text("def boom():\n    return 2\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    chunking_fails_on(monkeypatch, "boom.py")
    report = index_repo(root, load_settings(root), embedder=FakeEmbedder())
    assert report.notices == ["skipped boom.py: it could not be chunked (RecursionError: maximum recursion "
                              "depth exceeded)"]
    state = load_state(root / ".hippo")
    assert state.complete and state.files["a.py"].chunks == 1 and state.files["boom.py"].chunks == 0
    again = index_repo(root, load_settings(root), embedder=FakeEmbedder())
    assert again.files_changed == 0 and again.notices == []  # not retried until the file changes
