"""`hippo status` and search say what is really going on: a build that is running (the writer lock's
holder), one that was stopped (Ctrl-C, SIGTERM) and resumes, a keyword-only index, an empty repository,
and a dry run that leaves no trace. Real processes and real signals, fake embedder."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_helpers import hippo, index_until_signal
from fake_embedder import FakeEmbedder
from helpers_index import sample_repo
from hippo.core.indexdir import IndexDir
from hippo.index.indexer import WriterLock, index_repo
from hippo.index.status import index_status
from hippo.retrieval.search import Searcher
from repo_helpers import git

ONE_BATCH = 256  # indexer.EMBED_WRITE_BATCH: more chunks than this leave the vectors partial when stopped


def many_files_repo(tmp_path: Path, n: int = ONE_BATCH + 60) -> Path:
    root = tmp_path / "many"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(n):
        (root / f"mod_{i:03d}.py").write_text(f"def handler_{i}(request):\n    return request.value + {i}\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "many")
    return root


def status_json(root: Path) -> dict:
    res = hippo(["status", "-f", "json"], root)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.slow  # a real `hippo index` process stopped by a real signal
@pytest.mark.parametrize("sig,code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_stopped_vector_phase_says_run_index_not_being_built(tmp_path: Path, sig: str, code: int) -> None:
    root = many_files_repo(tmp_path)
    res = index_until_signal(root, sig, "update_vectors")
    assert res.returncode == code, res.stderr
    info = status_json(root)
    assert info["builder_pid"] is None
    assert "being built" not in info["vectors"] and "still being built" not in info["vectors"]
    assert info["vectors"].startswith("vectors 0% built; run `hippo index` to finish"), info["vectors"]
    text = hippo(["status"], root).stdout
    assert "run `hippo index` to finish" in text
    found = hippo(["search", "handler request value", "-f", "json"], root)
    meta = json.loads(found.stdout)["meta"]
    assert "run `hippo index` to finish" in meta["index_status"] and "being built" not in meta["index_status"]
    assert hippo(["index", "-q"], root).returncode == 0  # resumes
    assert status_json(root)["vectors"] == "complete"


def test_a_live_builder_is_named_with_its_pid(tmp_path: Path) -> None:
    root = sample_repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder(), vectors=False)
    index_dir = root / ".hippo"
    assert IndexDir(index_dir).writer_pid() is None
    with WriterLock(index_dir, 1.0):  # what a running `hippo index` holds (it writes its pid into the lock)
        assert IndexDir(index_dir).writer_pid() == os.getpid()
        info = index_status(root)
        assert f"being built (pid {os.getpid()})" in info["vectors"], info["vectors"]
        meta = Searcher(root, embedder=FakeEmbedder()).search("retry backoff").meta
        assert f"being built (pid {os.getpid()})" in meta["index_status"]
    assert IndexDir(index_dir).writer_pid() is None  # released: nobody builds any more


def test_no_vectors_is_called_keyword_only(tmp_path: Path) -> None:
    root = sample_repo(tmp_path)
    res = hippo(["index", "--no-vectors"], root)
    assert res.returncode == 0 and "Keyword-only index (--no-vectors)" in res.stdout
    info = status_json(root)
    assert info["vectors"].startswith("keyword-only (built with --no-vectors"), info["vectors"]
    meta = json.loads(hippo(["search", "retry backoff", "-f", "json"], root).stdout)["meta"]
    assert meta["index_status"].startswith("keyword-only (built with --no-vectors")
    assert "being built" not in meta["index_status"]
    assert hippo(["index", "-q"], root).returncode == 0
    assert status_json(root)["vectors"] == "complete"
    assert "index_status" not in json.loads(hippo(["search", "retry backoff", "-f", "json"], root).stdout)["meta"]


@pytest.mark.slow  # a real process and a real SIGINT
def test_ctrl_c_early_in_full_is_not_indexed_before_the_first_commit(tmp_path: Path) -> None:
    root = sample_repo(tmp_path)
    assert hippo(["index", "-q"], root).returncode == 0
    res = index_until_signal(root, "SIGINT", "append_rows", "--full")  # a full run rebuilds by appending
    assert res.returncode == 130, res.stderr
    behind = status_json(root)["behind"]
    assert "before the first commit" not in behind
    assert behind.startswith("the last `hippo index` was interrupted after 0 files; run `hippo index`"), behind
    assert hippo(["index", "-q"], root).returncode == 0
    assert status_json(root)["behind"].startswith("indexed at HEAD")


def test_an_empty_repository_gets_one_story(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    idx = hippo(["index"], root)
    assert idx.returncode == 0 and "Nothing to index: 0 files matched" in idx.stdout, idx.stdout
    found = hippo(["search", "anything"], root)
    assert found.returncode == 1, found.stderr  # like a search that found nothing, not an error
    assert "0 files matched" in found.stderr and "No index here yet" not in found.stderr
    assert status_json(root)["files"] == 0


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*") if ".git" not in p.relative_to(root).parts[:1]}


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = sample_repo(tmp_path)
    before = _tree(root)
    res = hippo(["index", "--dry-run"], root)
    assert res.returncode == 0 and res.stdout.startswith("Would index ")
    assert not (root / ".hippo").exists()
    assert _tree(root) == before
    assert hippo(["index", "-q"], root).returncode == 0
    before = _tree(root)  # an existing index is not touched either (no lock, state or log rewritten)
    assert hippo(["index", "--dry-run"], root).returncode == 0
    assert _tree(root) == before
