"""gitutil against real temporary git repositories."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from hippo.core import gitutil
from hippo.core.errors import HippoError, NotARepoError
from repo_helpers import git, write_files


def test_find_root_from_subdir_and_file(git_repo):
    root = git_repo({"pkg/mod.py": "x = 1\n"})
    assert gitutil.find_root(root / "pkg").resolve() == root.resolve()
    assert gitutil.find_root(root / "pkg" / "mod.py").resolve() == root.resolve()


def test_find_root_plain_dir_and_missing(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert gitutil.find_root(plain) == plain.resolve()
    assert not gitutil.is_git_repo(plain)
    with pytest.raises(NotARepoError, match="does not exist"):
        gitutil.find_root(tmp_path / "nope")


def test_head_branch_and_commit_checks(git_repo):
    root = git_repo({"a.py": "a\n"})
    assert gitutil.is_git_repo(root)
    head = gitutil.head_commit(root)
    assert head and re.fullmatch(r"[0-9a-f]{40}", head)
    assert gitutil.current_branch(root) == "main"
    assert gitutil.is_commit(root, head)
    assert not gitutil.is_commit(root, "0" * 40)
    assert not gitutil.is_commit(root, "--help")
    assert not gitutil.is_commit(root, None)
    write_files(root, {"b.py": "b\n"})
    git(root, "add", "b.py")
    git(root, "commit", "-q", "-m", "second")
    head2 = gitutil.head_commit(root)
    assert gitutil.is_ancestor(root, head, head2)
    assert not gitutil.is_ancestor(root, head2, head)
    assert gitutil.commits_between(root, head, head2) == 1
    git(root, "checkout", "-q", "--detach")
    assert gitutil.current_branch(root) is None


def test_empty_repo(git_repo):
    root = git_repo({"new.py": "x\n", "sub/other.md": "# hi\n"}, commit=False)
    assert gitutil.head_commit(root) is None
    assert gitutil.last_commit_dates(root, ["new.py"]) == {}
    assert sorted(gitutil.untracked_files(root)) == ["new.py", "sub/other.md"]


def test_tracked_files_skips_symlinks_and_submodules(git_repo):
    sub = git_repo({"inner.py": "i\n"}, name="sub")
    root = git_repo({"a.py": "a\n"}, name="main")
    os.symlink("a.py", root / "link.py")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "vendored")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")
    files = gitutil.tracked_files(root)
    assert set(files) == {"a.py", ".gitmodules"}
    assert re.fullmatch(r"[0-9a-f]{40}", files["a.py"])
    assert files["a.py"] == git(root, "hash-object", "a.py").strip()
    assert "vendored" in gitutil.tracked_files(root, include_submodules=True)
    assert "link.py" in gitutil.tracked_files(root, include_symlinks=True)


def test_last_commit_dates(git_repo):
    root = git_repo({"a.py": "a\n"}, message="first commit")
    for i in range(3):
        write_files(root, {"b.py": f"{i}\n"})
        git(root, "add", "b.py")
        git(root, "commit", "-q", "-m", f"change {i}: with | odd ; chars")
    dates = gitutil.last_commit_dates(root, ["a.py", "b.py", "never.py"])
    assert set(dates) == {"a.py", "b.py"}
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", dates["a.py"])


def test_dirty_files(git_repo):
    root = git_repo({"a.py": "a\n", "b.py": "b\n", "c.py": "c\n" * 20})
    assert gitutil.dirty_files(root) == []
    write_files(root, {"a.py": "changed\n", "new/untracked.py": "u\n"})
    (root / "b.py").unlink()
    git(root, "mv", "c.py", "d.py")
    assert sorted(gitutil.dirty_files(root)) == ["a.py", "b.py", "c.py", "d.py", "new/untracked.py"]
    assert sorted(gitutil.unstaged_files(root)) == ["a.py", "b.py"]  # the rename is staged


def test_odd_file_names_round_trip(git_repo):
    names = {"with space.py": "s\n", "tab\there.py": "t\n", "quote\"d.py": "q\n",
             "ünïcode/файл.py": "u\n"}
    if sys.platform.startswith("linux"):
        names[os.fsdecode(b"latin1-\xe9.py")] = "l\n"
    root = git_repo(names)
    files = gitutil.tracked_files(root)
    assert set(files) == set(names)
    for rel in files:
        assert (root / rel).is_file()  # names map back to real files (surrogateescape)
    write_files(root, {"new ünï.py": "x\n"})
    assert gitutil.untracked_files(root) == ["new ünï.py"]


def test_reads_do_not_take_index_lock(git_repo, monkeypatch):
    root = git_repo({"a.py": "a\n"})
    seen = {}
    real = gitutil.subprocess.run

    def spy(cmd, **kw):
        seen["env"] = kw.get("env")
        return real(cmd, **kw)

    monkeypatch.setattr(gitutil.subprocess, "run", spy)
    monkeypatch.setenv("GIT_DIR", str(root / "elsewhere"))  # must not leak into our calls
    gitutil.dirty_files(root)
    assert seen["env"]["GIT_OPTIONAL_LOCKS"] == "0"
    assert "GIT_DIR" not in seen["env"]


def test_missing_git_binary_is_a_hippo_error(git_repo, monkeypatch):
    root = git_repo({"a.py": "a\n"})
    monkeypatch.setenv("PATH", str(Path(root) / "no-bin"))
    with pytest.raises(HippoError, match="git is not installed"):
        gitutil.tracked_files(root)
    assert gitutil.head_commit(root) is None
    assert gitutil.is_git_repo(root) is False
