"""The brief's tracked-file list is kept in the index dir between session starts, keyed on git's index
file and HEAD: an unchanged checkout does not run `git ls-files` again, a staged file is listed at once."""
from __future__ import annotations

from hippo.core import gitutil, indexdir
from hippo.core.config import DEFAULT_SPEC_GLOBS
from hippo.push.brief import compose
from hippo.push.brief.repo import Repo
from repo_helpers import git


def _count_listings(monkeypatch) -> list[tuple]:
    calls: list[tuple] = []
    real = gitutil.output

    def spy(root, *args, **kw):
        if args[:1] == ("ls-files",):
            calls.append(args)
        return real(root, *args, **kw)

    monkeypatch.setattr(gitutil, "output", spy)
    return calls


def test_a_second_session_start_lists_the_files_without_git_and_a_stage_is_seen(git_repo, monkeypatch):
    root = git_repo({"README.md": "# demo\n\nRun `make test`.\n", "src/app.py": "x = 1\n",
                     "Makefile": "test:\n\tpytest -q\n"})
    idx = root / ".hippo"
    indexdir.create(idx)
    calls = _count_listings(monkeypatch)
    first = compose(root, DEFAULT_SPEC_GLOBS, 6000, cache_dir=idx)
    assert len(calls) == 1
    assert compose(root, DEFAULT_SPEC_GLOBS, 6000, cache_dir=idx) == first
    assert len(calls) == 1  # the listing came from the index dir
    assert sorted(Repo(root, cache_dir=idx).tracked()) == ["Makefile", "README.md", "src/app.py"] and len(calls) == 1
    (root / "src/new.py").write_text("y = 2\n")
    git(root, "add", "src/new.py")  # git replaces its index file: the kept listing no longer applies
    assert "src/new.py" in Repo(root, cache_dir=idx).tracked() and len(calls) == 2
    assert "src/new.py" in Repo(root, cache_dir=idx).tracked() and len(calls) == 2
    assert Repo(root).tracked() and len(calls) == 3  # no index dir given: git, as before


def test_a_listing_kept_for_another_index_state_is_not_used(git_repo):
    root = git_repo({"a.py": "a = 1\n"})
    idx = root / ".hippo"
    indexdir.create(idx)
    Repo(root, cache_dir=idx).tracked()
    kept = (idx / indexdir.TRACKED_FILES).read_bytes()
    (idx / indexdir.TRACKED_FILES).write_bytes(kept.replace(b"a.py", b"planted.py"))
    assert Repo(root, cache_dir=idx).tracked() == ["planted.py"]  # same key: trusted (the dir is ours, 0700)
    git(root, "rm", "-q", "--cached", "a.py")
    assert Repo(root, cache_dir=idx).tracked() != ["planted.py"]


def test_a_big_tree_lists_uncommitted_tracked_files_without_walking_for_untracked_ones(git_repo, monkeypatch):
    """Past ~20k tracked files `git status` would read every folder for untracked files (seconds at 100k,
    past the hook's deadline, so nothing was listed at all): only tracked changes are asked for then."""
    from hippo.surfaces.hooks import session_start

    root = git_repo({"a.py": "a = 1\n", "b.py": "b = 1\n"})
    (root / "a.py").write_text("a = 2\n")
    (root / "new.py").write_text("n = 1\n")
    small = session_start._changes(root, root / ".hippo", record=False)
    assert "a.py" in small and "new.py" in small
    monkeypatch.setattr(session_start, "UNTRACKED_WALK_MAX_INDEX_BYTES", 10)  # this index is "big"
    big = session_start._changes(root, root / ".hippo", record=False)
    assert "a.py" in big and "new.py" not in big


def test_spec_files_come_from_the_listing_as_the_walk_would_find_them(tmp_path):
    """SessionStart at 100k files walked every folder for the spec globs (~0.5 CPU-s): a repo git lists is
    filtered from its listing instead, with the walk's rules (depth, skipped folders); untracked and ignored
    files are not the repository's documents."""
    from hippo.push.brief import conventions

    files = {"README.md": "# r\n", "CONTRIBUTING.md": "# c\n", "docs/guide.md": "# g\n", "docs/a/b/c/d/deep.md": "# d\n",
             "docs/a/b/c/d/e/f/too-deep.md": "# t\n", "node_modules/x/README.md": "# n\n", ".hidden/README.md": "# h\n",
             ".github/CONTRIBUTING.md": "# gh\n", "src/code.py": "x = 1\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    walked = conventions.spec_files(tmp_path, DEFAULT_SPEC_GLOBS)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-f", "-A")
    git(tmp_path, "commit", "-q", "-m", "all")
    (tmp_path / "docs" / "untracked.md").write_text("# u\n")
    repo = Repo(tmp_path)
    listed = conventions.spec_files(tmp_path, DEFAULT_SPEC_GLOBS, repo)
    assert repo.from_git and listed == walked and "docs/untracked.md" not in listed
