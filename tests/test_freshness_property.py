"""Property: after any sequence of repo operations, an incremental index equals a fresh full index.

Operations are applied to one temp git repo per example: edits, adds (staged or untracked), deletes,
renames, commits, branch switches (keeping local changes when git allows) and .gitignore changes.
After each operation `index_repo` runs; its chunks must equal a from-scratch index of the same tree, and
the fake embedder must only ever have seen texts that are needed now and were never embedded before.
"""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_embedder import FakeEmbedder
from hippo.index.indexer import index_repo
from index_checks import DOC, assert_fresh, py, settle
from repo_helpers import git

NAMES = ["a.py", "b.py", "pkg/c.py", "pkg/d.py", "docs/e.md", "f.py", "pkg/sub/g.py", "h.md"]


def content_for(name: str, seed: list[int]) -> str:
    if name.endswith(".md"):
        return DOC + "".join(f"\n## Part {s}\n\nText {s} about part {s}.\n" for s in seed)
    return py(*seed)


op = st.one_of(
    st.tuples(st.just("edit"), st.integers(0, 7), st.lists(st.integers(0, 11), min_size=1, max_size=3)),
    st.tuples(st.just("add"), st.integers(0, 7), st.lists(st.integers(0, 11), min_size=1, max_size=3)),
    st.tuples(st.just("add_untracked"), st.integers(0, 7), st.lists(st.integers(0, 11), min_size=1, max_size=3)),
    st.tuples(st.just("delete"), st.integers(0, 7)),
    st.tuples(st.just("rename"), st.integers(0, 7), st.integers(0, 7)),
    st.tuples(st.just("commit")),
    st.tuples(st.just("switch"), st.sampled_from(["main", "topic", "other"])),
    st.tuples(st.just("ignore"), st.sampled_from(["", "*.md\n", "pkg/\n", "f.py\n"])),
)


def existing(root: Path) -> list[str]:
    return sorted(n for n in NAMES if (root / n).is_file())


def apply(root: Path, step: tuple) -> None:
    kind = step[0]
    files = existing(root)
    if kind in ("edit", "delete", "rename") and not files:
        return
    if kind == "edit":
        (root / files[step[1] % len(files)]).write_text(content_for(files[step[1] % len(files)], step[2]))
    elif kind in ("add", "add_untracked"):
        name = NAMES[step[1]]
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content_for(name, step[2]))
        if kind == "add":
            git(root, "add", "--", name)
    elif kind == "delete":
        (root / files[step[1] % len(files)]).unlink()
    elif kind == "rename":
        src, dst = files[step[1] % len(files)], NAMES[step[2]]
        if src == dst or (root / dst).exists() or src.rsplit(".", 1)[1] != dst.rsplit(".", 1)[1]:
            return
        (root / dst).parent.mkdir(parents=True, exist_ok=True)
        (root / src).rename(root / dst)
    elif kind == "commit":
        git(root, "add", "-A")
        if git(root, "status", "--porcelain"):
            git(root, "commit", "-q", "-m", "step")
    elif kind == "switch":
        branches = git(root, "branch", "--format=%(refname:short)").split()
        args = ["checkout", "-q"] + ([step[1]] if step[1] in branches else ["-b", step[1]])
        try:
            git(root, *args)
        except subprocess.CalledProcessError:
            pass  # local changes would be overwritten: git refuses, like for a user
    elif kind == "ignore":
        (root / ".gitignore").write_text(step[1])


def check_incremental_equals_fresh(steps: list[tuple]) -> None:
    with tempfile.TemporaryDirectory(prefix="hippo-prop-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.name", "Test")
        git(root, "config", "user.email", "test@example.com")
        for i, name in enumerate(NAMES[:4]):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content_for(name, [i, i + 4]))
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        emb = FakeEmbedder()
        index_repo(root, embedder=emb)
        assert_fresh(root, emb, 0)
        for step in steps:
            apply(root, step)
            before = len(emb.texts)
            index_repo(root, embedder=emb)
            assert_fresh(root, emb, before)
        before = len(emb.texts)
        again = index_repo(root, embedder=emb)  # files written as the last run listed them are re-checked
        assert (again.chunks_written, len(emb.texts)) == (0, before)
        settle()
        index_repo(root, embedder=emb)
        settled = index_repo(root, embedder=emb)  # and then the fixed point is a true no-op
        assert (settled.files_read, settled.chunks_written, len(emb.texts)) == (0, 0, before)


STEPS = st.lists(op, min_size=2, max_size=6)
PROPERTY = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.mark.slow  # ~2 s per example: the full search runs in `make check`
@settings(max_examples=12, **PROPERTY)
@given(steps=STEPS)
def test_incremental_equals_fresh_full_index(steps):
    check_incremental_equals_fresh(steps)


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
@settings(max_examples=2, **PROPERTY)
@given(steps=STEPS)
def test_incremental_equals_fresh_full_index_quick(steps):
    """The same property on the first two derandomized examples, for `make test-fast`."""
    check_incremental_equals_fresh(steps)
