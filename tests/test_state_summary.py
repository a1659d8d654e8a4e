"""state-summary.json: SessionStart's status line without reading state.json whole (~20 MB at 100k files,
~0.4 CPU-s), and never a summary of another state.json."""
from __future__ import annotations

import json
import os

from fake_embedder import FakeEmbedder
from hippo.core.indexdir import IndexDir
from hippo.index import state as state_mod
from hippo.index.indexer import index_repo
from hippo.index.state import load_state, load_summary, save_state
from repo_helpers import git, write_files


def _repo(tmp_path):
    root = tmp_path / "repo"
    write_files(root, {f"src/mod_{i}.py": f"def fn_{i}(value):\n    return value * {i}\n" for i in range(3)})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def test_summary_names_its_state_and_is_read_without_the_records(tmp_path, monkeypatch):
    root = _repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    idx = IndexDir.of(root).path
    state = load_state(idx)
    summary = load_summary(idx)
    assert summary is not None
    assert (summary.files, summary.chunks) == (len(state.files), state.chunk_count)
    assert summary.indexed_commit == state.indexed_commit and summary.vectors_complete

    def no_full_read(_idx):
        raise AssertionError("state.json read whole")

    monkeypatch.setattr(state_mod, "load_state", no_full_read)
    assert load_summary(idx) == summary


def test_summary_of_another_state_json_is_not_trusted(tmp_path):
    root = _repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    idx = IndexDir.of(root).path
    state = load_state(idx)
    del state.files[next(iter(state.files))]
    # a writer that replaced state.json without its summary (an older hippo, a team snapshot, a kill between)
    kept = IndexDir(idx).state_summary.read_bytes()
    save_state(idx, state)
    IndexDir(idx).state_summary.write_bytes(kept)
    summary = load_summary(idx)
    assert summary is not None and summary.files == len(state.files)
    # a summary that cannot be read at all
    IndexDir(idx).state_summary.write_text("{not json")
    assert load_summary(idx).files == len(state.files)
    os.unlink(IndexDir(idx).state)
    assert load_summary(idx) is None


def test_session_start_status_line_uses_the_summary(tmp_path, monkeypatch):
    from hippo.surfaces.hooks import session_start

    root = _repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    idx = IndexDir.of(root).path
    summary = json.loads(IndexDir(idx).state_summary.read_text())
    monkeypatch.setattr(state_mod, "load_state", lambda _idx: (_ for _ in ()).throw(AssertionError("read whole")))
    line = session_start._status_line(root, idx)
    assert f"{summary['files']} files / {summary['chunks']} chunks" in line and "up to date" in line
