"""Incremental indexing edge cases, each checked against a fresh full index of the same tree.

Also home of the helpers the property, kill and concurrency tests share (`index_content`, `fresh_content`).
"""
from __future__ import annotations

import shutil
import time

import pytest

from fake_embedder import SPEC as FAKE
from fake_embedder import FakeEmbedder
from hippo.index.indexer import index_repo
from hippo.index.state import load_state, save_state
from index_checks import DOC, assert_fresh, index_content, py, settle
from repo_helpers import git, write_files


@pytest.fixture
def repo(git_repo):
    return git_repo({"src/a.py": py(0, 1), "src/b.py": py(2, 3), "src/c.py": py(4), "README.md": DOC})


def test_noop_reads_nothing_and_embeds_nothing(repo):
    emb = FakeEmbedder()
    first = index_repo(repo, embedder=emb)
    assert first.files_changed == 4 and first.chunks_embedded > 0
    n = len(emb.texts)
    again = index_repo(repo, embedder=emb)
    assert (again.files_changed, again.files_deleted, again.files_read, again.chunks_written) == (0, 0, 0, 0)
    assert len(emb.texts) == n
    assert_fresh(repo)


def test_edit_add_delete_rename(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    n = len(emb.texts)
    (repo / "src/a.py").write_text(py(0, 5))  # one unit changed
    write_files(repo, {"src/new.py": py(6)})
    (repo / "src/c.py").unlink()
    git(repo, "mv", "src/b.py", "src/moved.py")
    report = index_repo(repo, embedder=emb)
    assert report.files_deleted == 1 and report.files_renamed == 1
    new = "\n".join(emb.texts[n:])
    assert "unit_5" in new and "unit_6" in new and "unit_3" not in new  # the renamed file was not re-embedded
    assert_fresh(repo, emb, n)


def test_branch_switch_and_back_reuses_vectors(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "src/a.py").write_text(py(7, 8))
    (repo / "src/b.py").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature work")
    index_repo(repo, embedder=emb)
    assert_fresh(repo)
    n = len(emb.texts)
    git(repo, "checkout", "-q", "main")
    report = index_repo(repo, embedder=emb)
    assert report.files_changed == 2 and len(emb.texts) == n  # everything on main was embedded before
    assert load_state(repo / ".hippo").branch == "main"
    assert_fresh(repo)


def test_rebase_indexed_commit_no_longer_ancestor(repo):
    emb = FakeEmbedder()
    (repo / "src/a.py").write_text(py(9))
    git(repo, "commit", "-qam", "will be rewritten")
    index_repo(repo, embedder=emb)
    old = load_state(repo / ".hippo").indexed_commit
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / "src/c.py").write_text(py(10))
    git(repo, "commit", "-qam", "another history")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    report = index_repo(repo, embedder=emb)
    assert report.files_changed == 2
    state = load_state(repo / ".hippo")
    assert state.indexed_commit != old and state.indexed_commit == git(repo, "rev-parse", "HEAD").strip()
    assert_fresh(repo)


def test_uncommitted_edit_then_revert(repo):
    emb = FakeEmbedder()
    (repo / "src/a.py").write_text(py(11))
    index_repo(repo, embedder=emb)
    assert_fresh(repo)
    git(repo, "checkout", "--", "src/a.py")  # back to the committed content
    report = index_repo(repo, embedder=emb)
    assert report.files_changed == 1
    assert_fresh(repo)


def test_staged_then_modified_again(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    (repo / "src/a.py").write_text(py(1, 2))
    git(repo, "add", "src/a.py")
    (repo / "src/a.py").write_text(py(3, 4))  # work tree differs from the staged blob
    index_repo(repo, embedder=emb)
    assert_fresh(repo)


def test_gitignore_change_drops_and_restores_untracked(repo):
    emb = FakeEmbedder()
    write_files(repo, {"scratch/notes.py": py(5)})
    index_repo(repo, embedder=emb)
    assert any(p == "scratch/notes.py" for p, *_ in index_content(repo))
    (repo / ".gitignore").write_text("scratch/\n")
    report = index_repo(repo, embedder=emb)
    assert report.files_deleted == 1
    assert not any(p == "scratch/notes.py" for p, *_ in index_content(repo))
    assert_fresh(repo)
    n = len(emb.texts)
    (repo / ".gitignore").write_text("")
    index_repo(repo, embedder=emb)
    assert len(emb.texts) == n  # came back: same content, vector reused
    assert_fresh(repo)


def test_repo_without_commits_then_first_commit(git_repo):
    root = git_repo({"a.py": py(1), "b.md": DOC}, commit=False)
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    assert load_state(root / ".hippo").indexed_commit is None
    assert_fresh(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    report = index_repo(root, embedder=emb)
    assert report.files_changed == 0 and report.chunks_written == 0
    settle()
    index_repo(root, embedder=emb)
    assert index_repo(root, embedder=emb).files_read == 0  # committed as indexed: git's blob ids vouch
    assert load_state(root / ".hippo").indexed_commit is not None
    assert_fresh(root)


def test_non_git_directory_uses_content_hashes(tmp_path):
    root = tmp_path / "plain"
    write_files(root, {"a.py": py(1), "sub/b.py": py(2)})
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    assert_fresh(root)
    first_noop = index_repo(root, embedder=emb)  # files written right before the listing: checked again
    assert first_noop.chunks_written == 0
    settle()
    index_repo(root, embedder=emb)
    assert index_repo(root, embedder=emb).files_read == 0
    (root / "a.py").write_text(py(3))
    (root / "sub/b.py").unlink()
    report = index_repo(root, embedder=emb)
    assert (report.files_changed, report.files_deleted) == (1, 1)
    assert_fresh(root)


def test_touched_file_is_read_once_but_not_rechunked(tmp_path):
    root = tmp_path / "plain"
    write_files(root, {"a.py": py(1)})
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    index_repo(root, embedder=emb)
    p = root / "a.py"
    p.write_text(p.read_text())  # new mtime, same bytes
    report = index_repo(root, embedder=emb)
    assert report.files_read == 1 and report.files_changed == 0 and report.chunks_written == 0
    settle()
    index_repo(root, embedder=emb)
    assert index_repo(root, embedder=emb).files_read == 0


def test_same_size_edit_in_the_same_timestamp_tick_is_caught(tmp_path):
    """Racy stat: a same-size rewrite that keeps the recorded mtime, right as the index listed the file.

    The file's mtime is put an hour ahead, so it is "written as the run listed it" however long the steps
    of this test take on a loaded machine (the clock never decides the outcome)."""
    import os

    root = tmp_path / "plain"
    write_files(root, {"a.py": "VALUE = 1111\n"})
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(root / "a.py", ns=(ahead, ahead))
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    st = (root / "a.py").stat()
    (root / "a.py").write_text("VALUE = 2222\n")
    os.utime(root / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # the stat now looks unchanged
    report = index_repo(root, embedder=emb)
    assert report.files_changed == 1
    assert_fresh(root)


def test_submodule_is_skipped_by_default(git_repo, repo):
    sub = git_repo({"inner.py": py(4)}, name="inner")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendor_inner")
    git(repo, "commit", "-q", "-m", "add submodule")
    index_repo(repo, embedder=FakeEmbedder())
    assert not any(p.startswith("vendor_inner") for p, *_ in index_content(repo))
    assert_fresh(repo)


class Boom(RuntimeError):
    pass


def test_crash_mid_keyword_phase_resumes_and_sweeps_orphans(repo, monkeypatch):
    """A run dies right after a batch was committed but before state.json recorded it."""
    import hippo.index.indexer as indexer_mod
    from hippo.index.store import Store

    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    write_files(repo, {f"gen/f{i}.py": py(i, i + 1) for i in range(5)})
    real = Store.replace_files

    def replace_then_die(self, paths, rows):
        real(self, paths, rows)
        raise Boom("killed after the table commit")

    monkeypatch.setattr(Store, "replace_files", replace_then_die)
    monkeypatch.setattr(indexer_mod, "FILE_BATCH", 2)
    with pytest.raises(Boom):
        index_repo(repo, embedder=emb)
    monkeypatch.setattr(Store, "replace_files", real)
    assert load_state(repo / ".hippo").complete is False
    shutil.rmtree(repo / "gen")  # the files it wrote are gone before the next run
    (repo / "src/a.py").write_text(py(9))
    report = index_repo(repo, embedder=emb)
    assert report.resumed
    assert load_state(repo / ".hippo").complete is True
    assert_fresh(repo)


def test_crash_mid_vector_phase_resumes_without_reembedding(repo, monkeypatch):
    from hippo.index.store import Store

    emb = FakeEmbedder()
    index_repo(repo, embedder=emb, vectors=False)  # keyword phase only
    real = Store.update_vectors
    calls = {"n": 0}

    def update_then_die(self, rows):
        real(self, rows)
        raise Boom("killed after the first vector batch")

    monkeypatch.setattr(Store, "update_vectors", update_then_die)
    with pytest.raises(Boom):
        index_repo(repo, embedder=emb)
    monkeypatch.setattr(Store, "update_vectors", real)
    n = len(emb.texts)
    index_repo(repo, embedder=emb)
    assert len(emb.texts) == n  # the cache kept what the dead run embedded
    assert len(set(emb.texts)) == len(emb.texts)
    assert_fresh(repo)
    del calls


def test_prune_all_only_when_no_reader(repo, monkeypatch):
    import hippo.index.indexer as indexer_mod
    from hippo.index.store import Store

    monkeypatch.setattr(indexer_mod, "OPTIMIZE_EVERY_RUNS", 1)
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    reader = Store(repo / ".hippo", emb.dim)
    try:
        (repo / "src/a.py").write_text(py(5))
        rep = index_repo(repo, embedder=emb)
        assert not rep.optimized  # a reader is open and the last optimize is younger than the margin
        state = load_state(repo / ".hippo")
        state.optimized_at -= 3600  # pretend the margin has passed
        save_state(repo / ".hippo", state)
        (repo / "src/a.py").write_text(py(6))
        rep = index_repo(repo, embedder=emb)
        assert rep.optimized and not rep.pruned_all  # margin pruning only: a reader is open
        kept = len(Store(repo / ".hippo", emb.dim, writer=True).chunks().list_versions())
    finally:
        reader.close()
    (repo / "src/a.py").write_text(py(7))
    rep = index_repo(repo, embedder=emb)
    assert rep.optimized and rep.pruned_all
    versions = Store(repo / ".hippo", emb.dim, writer=True).chunks().list_versions()
    assert len(versions) <= 2 < kept  # optimize itself commits after its prune step
    assert_fresh(repo)


def test_optimize_waits_for_enough_churn(repo):
    from hippo.index.indexer import OPTIMIZE_EVERY_RUNS

    emb = FakeEmbedder()
    assert index_repo(repo, embedder=emb).optimized  # a first build ends compacted
    ran = []
    for k in range(OPTIMIZE_EVERY_RUNS):
        (repo / "src/a.py").write_text(py(k + 3, k + 7))
        ran.append(index_repo(repo, embedder=emb).optimized)
    assert ran == [False] * (OPTIMIZE_EVERY_RUNS - 1) + [True]
    assert load_state(repo / ".hippo").runs_since_optimize == 0


def test_noop_opens_no_repo_file(repo, monkeypatch):
    """The unchanged-repo path trusts git's index and stats: not even discovery's 8 KB sniff runs."""
    import builtins
    import io

    index_repo(repo, embedder=FakeEmbedder())
    opened: list[str] = []
    real_open = io.open

    def spy(file, *a, **kw):
        p = str(file)
        if p.startswith(str(repo)) and "/.hippo" not in p and "/.git/" not in p:
            opened.append(p)
        return real_open(file, *a, **kw)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)
    report = index_repo(repo, embedder=FakeEmbedder())
    assert report.files_total == 4 and opened == []
    monkeypatch.undo()
    (repo / "src/a.py").write_text(py(3))
    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", spy)
    index_repo(repo, embedder=FakeEmbedder())
    assert sorted(set(opened)) == [str(repo / "src/a.py")]  # sniffed + read once each, nothing else


def test_status_reports_commits_behind_and_dirty_files(repo):
    from hippo.index.status import index_status

    index_repo(repo, embedder=FakeEmbedder())
    info = index_status(repo)
    assert "indexed at HEAD" in info["behind"] and "every file matches" in info["behind"]
    (repo / "src/a.py").write_text(py(8))
    git(repo, "commit", "-qam", "one more")
    (repo / "src/b.py").write_text(py(9))  # uncommitted
    write_files(repo, {"src/new.py": py(10)})
    (repo / "src/c.py").unlink()
    info = index_status(repo)
    assert "1 commit(s) behind HEAD" in info["behind"]
    assert info["pending"] == {"changed": 2, "added": 1, "deleted": 1}
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dirty work")
    git(repo, "checkout", "-q", "-b", "side", "HEAD~2")
    assert "indexed at HEAD" in index_status(repo)["behind"]  # HEAD~2 is the indexed commit
    (repo / "src/a.py").write_text(py(11))
    git(repo, "commit", "-qam", "side work")
    index_repo(repo, embedder=FakeEmbedder())
    git(repo, "checkout", "-q", "main")
    assert "another line of history" in index_status(repo)["behind"]


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_noop_cli_never_imports_lancedb(repo):
    """`hippo index` on an unchanged repo must not pay LanceDB's ~1 s import."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "HIPPO_MODEL": FAKE}
    cmd = [sys.executable, "-m", "hippo", "index", "--quiet", "--repo", str(repo)]
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == 0
    settle()
    subprocess.run(cmd, env=env, capture_output=True)  # first run after settling may re-check racy files
    probe = ("import sys, runpy; sys.argv = ['hippo'] + sys.argv[1:]\n"
             "try:\n    runpy.run_module('hippo', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print('LANCEDB' if 'lancedb' in sys.modules else 'CLEAN')")
    out = subprocess.run([sys.executable, "-c", probe, *cmd[3:]], env=env, capture_output=True, text=True)
    assert out.stdout.strip().endswith("CLEAN"), out.stdout + out.stderr
