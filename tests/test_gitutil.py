"""gitutil against real temporary git repositories."""
from __future__ import annotations

import os
import re
import shutil
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


# --- the one runner ----------------------------------------------------------------------------------
LIB = Path(__file__).resolve().parent.parent / "lib" / "hippo"
_SPAWNERS = {"run", "Popen", "call", "check_call", "check_output", "system", "popen", "execv", "execvp",
             "execvpe", "execl", "execlp", "spawnv", "spawnvp", "spawnl", "spawnlp", "posix_spawn", "posix_spawnp"}


def _git_spawns(source: str) -> list[int]:
    """Lines of `source` that spawn git by hand: a process-spawning call with a "git" string among its
    arguments, or an argv-like list/tuple literal that starts with "git" (a name like the gate's
    `("git", re.compile(...))` rule is not one)."""
    import ast

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            args = [*node.args, *(k.value for k in node.keywords)]
            if name in _SPAWNERS and any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                                         and (c.value == "git" or c.value.startswith("git "))
                                         for a in args for c in ast.walk(a)):
                lines.append(node.lineno)
        elif isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) >= 2:
            first, second = node.elts[:2]  # ["git", "-C", ...], ("git", "log"), ["git", *args]
            if (isinstance(first, ast.Constant) and first.value == "git"
                    and (isinstance(second, ast.Starred)
                         or isinstance(second, ast.Constant) and isinstance(second.value, str))):
                lines.append(node.lineno)
    return sorted(set(lines))


def test_the_scan_finds_git_spawned_by_hand():
    assert _git_spawns('import subprocess\nsubprocess.run(["git", "-C", root, "log"], env=e)\n') == [2]
    assert _git_spawns('cmd = ("git", "status")\n') == [1]
    assert _git_spawns('os.system("git status")\n') == [1]
    assert _git_spawns('argv = ["git", *args]\n') == [1]
    assert _git_spawns('subprocess.run([sys.executable, "-m", "hippo"])\ngate = ("git", re.compile("x"), 1)\n') == []
    assert _git_spawns('gitutil.run(root, "log", "-1")\n') == []


def test_no_module_but_gitutil_spawns_git():
    """Every git call goes through gitutil.run (safe environment, no repo-configured commands, a timeout)."""
    offenders = {}
    for path in sorted(LIB.rglob("*.py")):
        if path.name == "gitutil.py":
            continue
        found = _git_spawns(path.read_text(encoding="utf-8"))
        if found:
            offenders[str(path.relative_to(LIB))] = found
    assert offenders == {}


def test_a_repositorys_config_runs_no_command_through_git(git_repo, tmp_path):
    """core.fsmonitor, an external diff and a textconv filter in the repo's config are commands git runs
    on its own; hippo's git calls run none of them. The same config does run them for plain git."""
    root = git_repo({"a.txt": "one\n", ".gitattributes": "*.txt diff=evil\n"})
    write_files(root, {"a.txt": "two\n"})
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "two")
    write_files(root, {"a.txt": "three\n"})
    marker = tmp_path / "ran"
    for key, value in (("core.fsmonitor", f"touch {marker}-fsmonitor; false"),
                       ("diff.external", f"touch {marker}-external"),
                       ("diff.evil.textconv", f"touch {marker}-textconv; cat")):
        git(root, "config", key, value)
    for args in (("status", "--porcelain"), ("diff",), ("diff", "HEAD~1", "HEAD"), ("log", "-p", "-1"),
                 ("show", "HEAD"), ("diff-files", "-p")):
        gitutil.run(root, *args, check=False)
    gitutil.dirty_files(root)
    gitutil.worktree_status(root)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran")) == []
    import subprocess

    for args in (("status", "--porcelain"), ("diff",), ("log", "-p", "-1", "--textconv", "--ext-diff")):
        subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    assert {p.name for p in tmp_path.iterdir() if p.name.startswith("ran")} >= {"ran-fsmonitor", "ran-external"}


@pytest.mark.slow  # waits out a timeout or a deadline: wall time, not CPU
def test_a_git_that_hangs_times_out_with_a_clear_error(git_repo, tmp_path, monkeypatch):
    root = git_repo({"a.py": "a\n"})
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 30\n")
    os.chmod(fake / "git", 0o755)
    monkeypatch.setenv("PATH", str(fake))
    with pytest.raises(gitutil.GitTimeout, match=r"git status did not finish within 0.5s"):
        gitutil.run(root, "status", timeout=0.5)
    assert gitutil.output(root, "ls-files", timeout=0.5) is None  # the hooks' form: nothing, not an error
