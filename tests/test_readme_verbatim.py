"""The README's two commands, word for word, on a fresh machine: a copy of this repository in a temp dir,
a fresh venv, a fresh HOME (so the embedding model is prepared from scratch too) and none of this test
run's environment. Only pip's download cache is shared (PIP_CACHE_DIR), to keep it fast; the package
registry is still asked.

The test command is `... && make check`; running the whole suite inside the suite would recurse (and take
an hour), so the exact command runs with PYTEST_ARGS set, which the Makefile honours, to a small selection
that needs the test extra (pytest, hypothesis) and spawns the freshly installed `hippo`. The quick start
runs in full: install, a real index with the real model, and the demo search.
"""
from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
EXPECTED_DEMO_TOP = "lib/hippo/index/discovery.py"  # where hippo decides which files to skip
NARROW = "tests/test_rag_args.py tests/test_cli_conventions.py -k 'dash_h or skip_summary or piped'"


def readme_commands() -> tuple[str, str]:
    """(quick start, test command): the two ```bash blocks of the README's Quick start section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(blocks) == 2, blocks
    commands = [b.strip() for b in blocks]
    assert all("\n" not in c for c in commands), commands  # one line each: copy, paste, done
    return commands[0], commands[1]


def demo_query(quick: str) -> tuple[str, list[str]]:
    """The demo's query and its globs."""
    match = re.search(r'hippo search "([^"]+)"(.*)$', quick)
    assert match, quick
    return match.group(1), re.findall(r"-g '([^']+)'", match.group(2))


def test_readme_has_the_two_commands_the_issue_asks_for() -> None:
    quick, tests = readme_commands()
    assert "pip install ." in quick and "hippo index" in quick and "hippo search" in quick
    assert ".[test]" in tests and tests.endswith("make check")
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "$(PYTEST_ARGS)" in makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_the_demo_query_finds_its_answer_in_keyword_mode(tmp_path: Path) -> None:
    """Fast check of the demo on this repository (fake embedder, so the keyword side decides)."""
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo
    from hippo.retrieval.search import Searcher

    work = copy_repo(tmp_path / "hippo")
    emb = FakeEmbedder()
    index_repo(work, embedder=emb, vectors=False)
    query, globs = demo_query(readme_commands()[0])
    resp = Searcher(work, embedder=emb).search(query, globs=globs, mode="keyword")
    assert resp.hits and resp.hits[0].path == EXPECTED_DEMO_TOP, [h.path for h in resp.hits]


def copy_repo(dest: Path) -> Path:
    """The files git would ship (tracked and untracked-not-ignored: uncommitted edits count), committed
    into a new repository, the way a fresh clone looks."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if not src.is_file() or src.is_symlink() and not src.exists():
            continue  # deleted in the work tree
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel, follow_symlinks=False)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "fresh clone"]):
        subprocess.run(["git", *cmd], cwd=dest, env=env, check=True, capture_output=True)
    return dest


def fresh_env(home: Path) -> dict[str, str]:
    """What a new user's shell has: a system PATH (not this venv's), a new HOME, no hippo settings."""
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
                           if p and Path(p).resolve() != Path(venv_bin).resolve())
    env = {"PATH": path, "HOME": str(home), "LANG": os.environ.get("LANG", "C.UTF-8"),
           "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
           # The one setting that is not a new user's: no warm query server left running after the test.
           "HIPPO_NO_SERVER": "1"}
    # The user's own pip cache (the suite runs under a private HOME, so ask the password database).
    cache = os.environ.get("PIP_CACHE_DIR") or str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "pip")
    env["PIP_CACHE_DIR"] = cache
    return env


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_readme_quick_start_and_test_command_verbatim(tmp_path: Path) -> None:
    quick, tests = readme_commands()
    work = copy_repo(tmp_path / "hippo")
    home = tmp_path / "home"
    home.mkdir()
    env = fresh_env(home)

    run = subprocess.run(["bash", "-c", quick], cwd=work, env=env, capture_output=True, text=True, timeout=3000)
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    results = [line for line in run.stdout.splitlines() if re.match(r"\d+\. \S+:\d+-\d+  \(", line)]
    assert results and results[0].startswith(f"1. {EXPECTED_DEMO_TOP}:"), run.stdout[-3000:]  # text, though piped
    assert run.stdout.rstrip().endswith("]") and "<search_results>" not in run.stdout
    assert (home / ".cache" / "hippo" / "models").is_dir()  # the model was prepared under the fresh HOME
    assert (work / ".hippo" / "state.json").is_file()

    # The second command, verbatim; PYTEST_ARGS (honoured by the Makefile) keeps it from re-running the suite.
    check = subprocess.run(["bash", "-c", tests], cwd=work, env={**env, "PYTEST_ARGS": NARROW},
                           capture_output=True, text=True, timeout=3000)
    assert check.returncode == 0, (check.stdout[-3000:], check.stderr[-3000:])
    assert re.search(r"\b\d+ passed\b", check.stdout) and " failed" not in check.stdout, check.stdout[-2000:]
