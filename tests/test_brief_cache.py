"""The last finished brief is kept in the index dir: shown again while nothing it was composed from moved,
composed again when a file it read changed, and at 100k files (where composing runs out the hook's budget)
shown across a commit while a background `hippo brief` composes the fresh one."""
from __future__ import annotations

import json
import os
import time

import pytest
from click.testing import CliRunner

from hippo.core import indexdir
from hippo.core.config import DEFAULT_SPEC_GLOBS
from hippo.push.brief import cache, compose
from repo_helpers import git

FILES = {"README.md": "# demo\n\nThe demo app.\n", "Makefile": "test:\n\tpytest -q\n",
         "CONTRIBUTING.md": "# Contributing\n\n## Style\n\nUse black. Keep functions short.\n",
         "src/app.py": "x = 1\n", "scripts/check.sh": "#!/bin/sh\nruff check .\n"}


def _settled(root) -> None:
    """Every file older than the racy window, as a checkout made minutes ago is."""
    past = time.time() - 60
    for dirpath, _dirs, names in os.walk(root):
        if ".git" in dirpath.split(os.sep):
            continue
        for name in names:
            os.utime(os.path.join(dirpath, name), (past, past))


@pytest.fixture
def repo(git_repo):
    root = git_repo(FILES)
    indexdir.create(root / ".hippo")
    _settled(root)
    return root


def _brief(root, outcome: dict | None = None, **kw) -> str:
    return compose(root, DEFAULT_SPEC_GLOBS, 6000, cache_dir=root / ".hippo", outcome=outcome, **kw)


def test_a_second_session_start_shows_the_kept_brief(repo):
    first_outcome: dict = {}
    first = _brief(repo, first_outcome)
    assert "make test" in first and not first_outcome["kept"] and first_outcome["complete"]
    again: dict = {}
    assert _brief(repo, again) == first and again["kept"] and not again["stale_listing"]


def test_an_edited_file_the_brief_read_composes_it_again(repo):
    _brief(repo)
    (repo / "Makefile").write_text("test:\n\tpython -m pytest -x tests\n")
    outcome: dict = {}
    text = _brief(repo, outcome)
    assert "python -m pytest -x tests" in text and not outcome["kept"]


def test_a_new_file_in_a_listed_folder_or_at_the_root_composes_it_again(repo):
    _brief(repo)
    (repo / "scripts" / "lint.sh").write_text("#!/bin/sh\nflake8\n")
    outcome: dict = {}
    _brief(repo, outcome)
    assert not outcome["kept"]
    _settled(repo)
    _brief(repo)
    (repo / "justfile").write_text("test:\n    pytest\n")
    outcome = {}
    _brief(repo, outcome)
    assert not outcome["kept"]


def test_a_commit_composes_a_cheap_brief_again_and_shows_a_costly_one_marked_stale(repo, monkeypatch):
    _brief(repo)
    (repo / "src" / "more.py").write_text("y = 2\n")
    git(repo, "add", "src/more.py")
    git(repo, "commit", "-qm", "more")
    outcome: dict = {}
    _brief(repo, outcome)
    assert not outcome["kept"]  # cheap to compose: composed again for the new listing
    (repo / "src" / "third.py").write_text("z = 3\n")
    git(repo, "add", "src/third.py")
    monkeypatch.setattr(cache, "COSTLY_CPU_SECONDS", 0.0)  # every brief counts as costly
    outcome = {}
    _brief(repo, outcome)
    assert outcome["kept"] and outcome["stale_listing"]


def test_a_brief_cut_by_its_deadline_or_composed_outside_git_is_not_kept(repo, tmp_path):
    outcome: dict = {}
    _brief(repo, outcome, deadline=time.monotonic() - 1)
    assert not outcome["complete"] and not (repo / ".hippo" / indexdir.BRIEF_CACHE).exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "Makefile").write_text("test:\n\tpytest\n")
    indexdir.create(plain / ".hippo")
    _settled(plain)
    outcome = {}
    compose(plain, DEFAULT_SPEC_GLOBS, 6000, cache_dir=plain / ".hippo", outcome=outcome)
    assert not outcome["cacheable"] and not (plain / ".hippo" / indexdir.BRIEF_CACHE).exists()


def test_inputs_changed_a_moment_ago_are_not_trusted_to_mark_a_later_edit(git_repo):
    root = git_repo(FILES)
    indexdir.create(root / ".hippo")
    _brief(root)  # the files were just written: their mtimes could hide an edit in the same tick
    assert not (root / ".hippo" / indexdir.BRIEF_CACHE).exists()


def test_a_kept_brief_from_other_settings_or_code_is_not_used(repo, monkeypatch):
    text = _brief(repo)
    kept = repo / ".hippo" / indexdir.BRIEF_CACHE
    rec = json.loads(kept.read_text())
    rec["text"] = "planted"
    kept.write_text(json.dumps(rec))
    assert _brief(repo) == "planted"  # the dir is hippo's own (0700, refused when planted): its record is trusted
    assert compose(repo, ("*.md",), 6000, cache_dir=repo / ".hippo") != "planted"
    kept.write_text(json.dumps(rec))
    monkeypatch.setattr(cache, "code_mark", lambda: ["another hippo"])
    assert _brief(repo) == text


def test_the_hook_refreshes_in_the_background_when_it_showed_a_stale_or_cut_brief(repo, monkeypatch):
    from hippo.surfaces.hooks import session_start

    spawned: list[list[str]] = []
    monkeypatch.setattr(session_start, "spawn_detached", lambda args, *a, **k: spawned.append(args) or 1)
    monkeypatch.delenv("HIPPO_NO_BACKGROUND_INDEX", raising=False)
    monkeypatch.setattr(session_start, "_kick_indexer", lambda root, idx: False)
    payload = {"cwd": str(repo), "session_id": "s", "source": "startup"}
    session_start.handle(payload)
    assert spawned == []  # composed whole and kept
    ctx = session_start.handle(payload)["hookSpecificOutput"]["additionalContext"]
    assert "make test" in ctx and spawned == []  # the kept one, nothing to refresh
    (repo / "src" / "more.py").write_text("y = 2\n")
    git(repo, "add", "src/more.py")
    monkeypatch.setattr(cache, "COSTLY_CPU_SECONDS", 0.0)
    ctx = session_start.handle(payload)["hookSpecificOutput"]["additionalContext"]
    assert "make test" in ctx
    assert spawned == [["brief", "--quiet", "--repo", str(repo)]]
    assert "brief: kept from before the last commit" in (repo / ".hippo" / "hippo.log").read_text()


def test_hippo_brief_prints_the_brief_and_keeps_it(repo):
    from hippo.surfaces.cli import cli

    res = CliRunner().invoke(cli, ["brief", "--repo", str(repo)])
    assert res.exit_code == 0, res.output
    assert "`make test` = pytest -q" in res.output and "Layout" in res.output
    quiet = CliRunner().invoke(cli, ["brief", "-q", "--repo", str(repo)])
    assert quiet.exit_code == 0 and quiet.output == ""
    outcome: dict = {}
    assert _brief(repo, outcome) and outcome["kept"]
