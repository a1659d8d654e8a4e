"""hippo.core.indexdir: one hippo_home, one index path, portable locks, atomic writes."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from hippo.core import indexdir
from hippo.core.config import load_settings

HOLDER = textwrap.dedent("""
    import sys
    from hippo.core import indexdir
    fh = indexdir.open_lock(sys.argv[1])
    ok = indexdir.try_lock(fh, shared=sys.argv[2] == "shared")
    print("locked" if ok else "busy", flush=True)
    sys.stdin.read()  # hold the lock until the test closes our stdin
""")


class Holder:
    """Another process holding (or failing to take) a lock on `path` until release()."""

    def __init__(self, path: Path, shared: bool = False) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), "shared" if shared else "exclusive"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.status = self.proc.stdout.readline().strip()

    def release(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


@pytest.mark.timeout(60)
def test_two_processes_contend_for_an_exclusive_lock(tmp_path):
    path = tmp_path / "lock"
    first = Holder(path)
    assert first.status == "locked"
    try:
        assert indexdir.held(path)
        with indexdir.open_lock(path) as fh:
            assert not indexdir.try_lock(fh)  # non-blocking: returns at once instead of waiting
            assert not indexdir.try_lock(fh, shared=True)
            assert not indexdir.wait_lock(fh, 0.0)
        second = Holder(path)
        assert second.status == "busy"
        second.release()
    finally:
        first.release()
    assert not indexdir.held(path)  # the holder exited: the OS dropped its lock
    with indexdir.open_lock(path) as fh:
        assert indexdir.try_lock(fh)


@pytest.mark.timeout(60)
def test_shared_locks_coexist_and_keep_out_an_exclusive_one(tmp_path):
    path = tmp_path / "readers.lock"
    reader = Holder(path, shared=True)
    assert reader.status == "locked"
    try:
        with indexdir.open_lock(path) as fh:
            assert indexdir.try_lock(fh, shared=True)
        with indexdir.open_lock(path) as fh:
            assert not indexdir.try_lock(fh)  # the writer's "no readers" probe
    finally:
        reader.release()
    with indexdir.open_lock(path) as fh:
        assert indexdir.try_lock(fh)


def test_lock_is_released_on_close_and_on_unlock(tmp_path):
    path = tmp_path / "lock"
    a = indexdir.open_lock(path)
    assert indexdir.try_lock(a)
    with indexdir.open_lock(path) as b:  # another open file conflicts, even in this process
        assert not indexdir.try_lock(b)
        a.close()
        assert indexdir.try_lock(b)
        indexdir.unlock(b)
        assert not indexdir.held(path)
    with indexdir.locked(path):
        assert indexdir.held(path)
    assert not indexdir.held(path)


def test_held_never_creates_the_file(tmp_path):
    assert not indexdir.held(tmp_path / "nothing")
    assert not (tmp_path / "nothing").exists()


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="no O_NOFOLLOW")
def test_lock_files_are_not_followed_through_symlinks(tmp_path):
    target = tmp_path / "elsewhere"
    (tmp_path / "lock").symlink_to(target)
    with pytest.raises(OSError):
        indexdir.open_lock(tmp_path / "lock")
    assert not target.exists()


def test_atomic_write_never_shows_a_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    path.write_text("old")
    seen = []
    real_replace = os.replace

    def replace(src, dst):
        seen.append((Path(dst).read_text(), Path(src).read_text()))  # target still old, temp complete
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    indexdir.atomic_write(path, "new " * 10_000)
    assert seen == [("old", "new " * 10_000)]
    assert path.read_text() == "new " * 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_atomic_write_failure_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    path.write_bytes(b"old")

    def fail(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        indexdir.atomic_write(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_atomic_write_refuses_a_symlinked_dir(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with pytest.raises(OSError, match="symlink"):
        indexdir.atomic_write(tmp_path / "link" / "state.json", "x")
    assert list(real.iterdir()) == []


def test_atomic_write_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("keep")
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "team.json").symlink_to(outside)
    indexdir.atomic_write(tmp_path / "idx" / "team.json", "{}")
    assert outside.read_text() == "keep"
    assert not (tmp_path / "idx" / "team.json").is_symlink()


def test_hippo_home(monkeypatch, tmp_path):
    monkeypatch.delenv("HIPPO_HOME", raising=False)
    assert indexdir.hippo_home() == Path.home() / ".cache" / "hippo"
    monkeypatch.setenv("HIPPO_HOME", "  ")
    assert indexdir.hippo_home() == Path.home() / ".cache" / "hippo"  # blank counts as unset
    monkeypatch.setenv("HIPPO_HOME", "~/hh")
    assert indexdir.hippo_home() == Path.home() / "hh"
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path))
    assert indexdir.hippo_home() == tmp_path
    from hippo.index.embedding import paths

    assert paths.models_dir() == tmp_path / "models"


def test_index_dir_of_a_repo_matches_settings_and_keeps_the_roots_type(monkeypatch, tmp_path):
    root = tmp_path / "repo"
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    of = indexdir.IndexDir.of
    assert of(root).path == root / ".hippo" == of(root, load_settings(root)).path
    assert of(str(root)).path == os.path.join(str(root), ".hippo")  # a str root: no pathlib (the hook client)
    for value, want in (("idx", root / "idx"), (str(tmp_path / "abs"), tmp_path / "abs"), ("~/i", Path.home() / "i")):
        monkeypatch.setenv("HIPPO_INDEX_DIR", value)
        assert of(root).path == want == of(root, load_settings(root)).path
        assert of(str(root)).path == str(want)  # client and server agree on the socket's name
    assert of(root, replace(load_settings(root), index_dir="other")).path == root / "other"  # the setting wins


def test_create_writes_the_gitignore_once(tmp_path):
    idx = tmp_path / ".hippo"
    indexdir.create(idx)
    assert (idx / ".gitignore").read_text().splitlines()[-1] == "*"
    (idx / ".gitignore").write_text("*\n# mine\n")
    indexdir.create(idx)
    assert (idx / ".gitignore").read_text() == "*\n# mine\n"
