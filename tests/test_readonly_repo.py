"""A read-only checkout (a read-only mount, a directory the user may not write): `hippo index` says so in
one line and names HIPPO_INDEX_DIR, `status` and `search` say the same instead of "Run `hippo index`", and
an index dir elsewhere works. As root, chmod does not stop writes, so the repo is bind-mounted read-only in
a private mount namespace of each command (unshare); as another user, chmod 0555 does it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from repo_helpers import git, write_files


def _read_only_runner(root: Path):
    """A function running `python -m hippo ARGS` with `root` read-only; skip when it cannot be made so."""
    if os.geteuid() != 0:
        os.chmod(root, 0o555)
        prefix: list[str] = []
    else:
        unshare = shutil.which("unshare")
        probe = ["sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && ! touch "$0/probe"',
                 str(root)]
        if unshare is None or subprocess.run([unshare, "-m", "--propagation", "private", *probe],
                                             capture_output=True).returncode != 0:
            pytest.skip("cannot make a read-only mount here (needs unshare and mount)")
        prefix = [unshare, "-m", "--propagation", "private", "sh", "-c",
                  'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"', str(root)]

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        full = {**os.environ, "HIPPO_MODEL": FAKE, **env}
        return subprocess.run([*prefix, sys.executable, "-m", "hippo", *args], cwd=root, env=full,
                              capture_output=True, text=True, timeout=300)

    return run


@pytest.fixture
def read_only(tmp_path):
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_files(root, {"app.py": "def handle_payment(amount):\n    return amount * 2\n"})
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    yield root, _read_only_runner(root)
    os.chmod(root, 0o755)


def _one_line_naming_the_fix(proc: subprocess.CompletedProcess[str]) -> str:
    err = proc.stderr.strip()
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert len(err.splitlines()) == 1 and "read-only" in err and "HIPPO_INDEX_DIR" in err, err
    return err


def test_a_read_only_repo_is_named_by_index_status_and_search(read_only):
    root, run = read_only
    said = _one_line_naming_the_fix(run("index"))
    assert _one_line_naming_the_fix(run("status")) == said
    assert _one_line_naming_the_fix(run("search", "payment")) == said
    assert not (root / ".hippo").exists()


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_hippo_index_dir_elsewhere_indexes_a_read_only_repo(read_only, tmp_path):
    root, run = read_only
    elsewhere = str(tmp_path / "index-elsewhere")
    assert run("index", HIPPO_INDEX_DIR=elsewhere).returncode == 0
    found = run("search", "handle payment", HIPPO_INDEX_DIR=elsewhere)
    assert found.returncode == 0 and "handle_payment" in found.stdout
    assert not (root / ".hippo").exists()
