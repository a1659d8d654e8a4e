"""hippo never writes through a symlink a cloned repository planted (issue 12, item 2).

`hippo init` used to write `CLAUDE.md.hippo-tmp` with a plain open (a committed link of that name made it
overwrite the link's target, then renamed the link over CLAUDE.md) and followed a committed `.claude` link
to create `rules/hippo.md` wherever it pointed. Each case here commits the link in a real repository,
clones it, runs the real command, and checks that the file outside the project is byte-for-byte unchanged.
The other writers of hook time (session state, logs, the server lock) are checked for the same pattern.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from hippo.surfaces.cli import cli
from hippo.surfaces.init_rules import BEGIN, RULES_FILE, install_rules
from repo_helpers import GIT_ENV

VICTIM_TEXT = "export PATH=/usr/bin  # the user's own file outside the project\n"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside every project, holding a file an attacker wants overwritten."""
    d = tmp_path / "home"
    d.mkdir()
    (d / ".bashrc").write_text(VICTIM_TEXT)
    return d


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def cloned(tmp_path: Path, links: dict[str, str], files: dict[str, str] | None = None) -> Path:
    """Commit {path: link target} symlinks (and files) in a repo and return a fresh clone of it."""
    src = tmp_path / "upstream"
    src.mkdir()
    _git(src, "init", "-q", "-b", "main")
    for rel, text in (files or {"README.md": "# project\n"}).items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    for rel, target in links.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, src / rel)
    _git(src, "add", "-A")
    _git(src, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "init")
    dst = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(src), str(dst))
    for rel in links:
        assert (dst / rel).is_symlink(), rel  # git restored the link, as on a user's machine
    return dst


def _init(root: Path, *flags: str):
    return CliRunner().invoke(cli, ["init", "--repo", str(root), *flags])


def test_committed_temp_file_link_is_not_written_through(tmp_path, outside):
    before = _snapshot(outside)
    root = cloned(tmp_path, {"CLAUDE.md.hippo-tmp": str(outside / ".bashrc")})
    res = _init(root)
    assert res.exit_code == 0, res.output
    assert _snapshot(outside) == before
    claude = root / "CLAUDE.md"
    assert not claude.is_symlink() and BEGIN in claude.read_text()
    assert (root / "CLAUDE.md.hippo-tmp").is_symlink()  # the planted link is left alone, not used
    assert not [p for p in root.iterdir() if p.name.endswith(".tmp")]  # no temp file left behind


def test_committed_dot_claude_link_is_refused_for_the_rules_file(tmp_path, outside):
    before = _snapshot(outside)
    root = cloned(tmp_path, {".claude": str(outside)})
    res = _init(root, "--rules-file")
    assert res.exit_code != 0
    assert "symlink" in res.output and "hippo init" in res.output and len(res.output.strip().splitlines()) == 1
    assert _snapshot(outside) == before and not (outside / "rules").exists()


def test_link_deeper_in_the_path_is_refused(tmp_path, outside):
    before = _snapshot(outside)
    root = cloned(tmp_path, {".claude/rules": str(outside)}, {".claude/settings.json": "{}\n"})
    for flags in (("--rules-file",), ("--rules-file", "--dry-run")):
        res = _init(root, *flags)
        assert res.exit_code != 0 and "symlink" in res.output, res.output
    assert _snapshot(outside) == before and not (outside / "hippo.md").exists()


def test_dot_claude_link_is_not_used_to_find_claude_md(tmp_path, outside):
    (outside / "CLAUDE.md").write_text("# someone else's memory file\n")
    before = _snapshot(outside)
    root = cloned(tmp_path, {".claude": str(outside)})
    res = install_rules(root)
    assert res.path == root.resolve() / "CLAUDE.md" and res.action == "created"
    assert _snapshot(outside) == before


def test_claude_md_link_is_refused_with_one_line(tmp_path, outside):
    before = _snapshot(outside)
    root = cloned(tmp_path, {"CLAUDE.md": str(outside / ".bashrc")})
    res = _init(root)
    assert res.exit_code != 0 and "symlink" in res.output and len(res.output.strip().splitlines()) == 1
    assert _snapshot(outside) == before


def test_relative_link_escaping_the_repo_is_refused(tmp_path, outside):
    before = _snapshot(outside)
    root = cloned(tmp_path, {".claude": "../home"})
    assert _init(root, "--rules-file").exit_code != 0
    assert _snapshot(outside) == before


def test_existing_file_keeps_its_permissions(tmp_path):
    root = tmp_path / "p"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# mine\n")
    (root / "CLAUDE.md").chmod(0o600)
    install_rules(root)
    assert (root / "CLAUDE.md").stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "q"
    fresh.mkdir()
    assert install_rules(fresh, rules_file=True).path == fresh.resolve() / RULES_FILE


# --- the other writers: logs, session state, the server lock --------------------------------------------

def test_spawn_log_link_is_not_followed(tmp_path, outside):
    from hippo.core.runtime import spawn_detached

    before = _snapshot(outside)
    idx = tmp_path / "idx"
    idx.mkdir()
    os.symlink(outside / ".bashrc", idx / "hippo.log")
    assert spawn_detached(["--version"], idx, tmp_path) is None  # refused, not appended to the link's target
    assert _snapshot(outside) == before


def test_hook_log_and_session_state_replace_links_instead_of_following_them(tmp_path, outside):
    from hippo.core.runtime import log
    from hippo.push import session_state

    before = _snapshot(outside)
    idx = tmp_path / "idx"
    (idx / "sessions").mkdir(parents=True)
    os.symlink(outside / ".bashrc", idx / "hippo.log")
    os.symlink(outside / ".bashrc", idx / "sessions" / "s1.json")
    log(idx, "a line that must not land in .bashrc")
    session_state.remember(idx, "s1", ["chunk-1"])
    assert _snapshot(outside) == before
    assert not (idx / "sessions" / "s1.json").is_symlink()


def test_server_lock_link_is_not_followed(tmp_path, outside, monkeypatch):
    from hippo.surfaces.service.server import QueryServer

    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    root = tmp_path / "r"
    (root / ".hippo").mkdir(parents=True)
    os.symlink(outside / "planted.lock", root / ".hippo" / "server.lock")
    try:  # refused up front (a planted entry in the index dir), or by O_NOFOLLOW on the lock itself
        assert QueryServer(root, idle_s=0.1).serve() == 0
    except OSError:
        pass
    assert not (outside / "planted.lock").exists()
