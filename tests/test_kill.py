"""Kill -9 `hippo index` at random moments and in each phase; the next run must equal a fresh full index."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from hippo.index.state import load_state
from index_checks import assert_fresh, index_rows
from repo_helpers import make_big_repo, write_module

FILES = 800
pytestmark = pytest.mark.slow  # real `hippo index` processes killed at random moments


def start_index(root: Path) -> subprocess.Popen:
    env = {**os.environ, "HIPPO_MODEL": FAKE}
    return subprocess.Popen([sys.executable, "-m", "hippo", "index", "--quiet", "--repo", str(root)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def raw_state(root: Path) -> dict:
    try:
        return json.loads((root / ".hippo" / "state.json").read_text())
    except (OSError, ValueError):
        return {}


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL and reap `proc`, closing its stderr pipe (nothing reads it after a kill)."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.stderr is not None:
        proc.stderr.close()


def kill_when(proc: subprocess.Popen, ready, timeout: float = 60.0) -> bool:
    """SIGKILL `proc` as soon as `ready()` holds; False if it finished first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            kill(proc)  # already gone: reaps it and closes its pipe
            return False
        if ready():
            kill(proc)
            return True
        time.sleep(0.01)
    kill(proc)
    raise AssertionError("index run neither reached the kill point nor finished")


def test_sigkill_at_random_moments_then_rerun_equals_fresh(tmp_path):
    root = tmp_path / "big"
    make_big_repo(root, FILES)
    rng = random.Random(1234)
    kills = 0
    # 1) in the middle of the keyword phase: some batches committed, the run not finished
    proc = start_index(root)
    kills += kill_when(proc, lambda: (s := raw_state(root)) and not s.get("complete") and len(s.get("files", {})) > 0)
    # 2) edit, delete and add while the index is half built, then kill at a random moment
    for i in range(0, 60, 3):
        write_module(root, i, 1)
    for i in range(100, 130):
        (root / f"pkg{i % 20}" / f"mod{i}.py").unlink()
    for i in range(FILES, FILES + 10):
        write_module(root, i, 0)
    proc = start_index(root)
    time.sleep(rng.uniform(0.5, 4.0))
    kill(proc)
    kills += 1
    # 3) during the vector phase: keyword phase done, vectors still being filled in
    proc = start_index(root)
    kills += kill_when(proc, lambda: (s := raw_state(root)).get("complete") and not s.get("vectors_complete"))
    # 4) a few more random moments, with edits in between
    for round_ in range(3):
        for i in rng.sample(range(FILES), 15):
            path = root / f"pkg{i % 20}" / f"mod{i}.py"
            if path.exists():
                write_module(root, i, 2 + round_)
        proc = start_index(root)
        time.sleep(rng.uniform(0.2, 3.0))
        kill(proc)
        kills += 1
    assert kills >= 5
    done = start_index(root)
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err.decode()
    state = load_state(root / ".hippo")
    assert state.complete and state.vectors_complete
    ids = [r["path"] + str(r["start_line"]) for r in index_rows(root / ".hippo")]
    assert len(ids) == len(set(ids))  # no duplicated chunks left by a dead run
    assert_fresh(root)


@pytest.mark.parametrize("seed", [7, 8])
def test_sigkill_then_rerun_again_is_a_noop(tmp_path, seed):
    """After recovery, a further run has nothing left to do (no work is redone forever)."""
    root = tmp_path / "big"
    make_big_repo(root, 300)
    proc = start_index(root)
    time.sleep(random.Random(seed).uniform(0.8, 2.5))
    kill(proc)
    for _ in range(2):
        p = start_index(root)
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo

    emb = FakeEmbedder()
    report = index_repo(root, embedder=emb)
    assert (report.chunks_written, len(emb.texts)) == (0, 0)
    assert_fresh(root)
