"""Crash safety: SIGKILL `hippo index` inside each phase, fill the disk, corrupt `.hippo/`.

After every fault a normal `hippo index` must leave an index equal (chunks, lines, text, vectors)
to a from-scratch build of the same tree. The basic kill test lives in test_freshness/test_kill;
these target phases and damage. Long variants: bench/soak.py --crash.
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
import trustkit  # noqa: E402
from trustkit import fresh_snapshot, git, hippo, make_repo, snapshot  # noqa: E402

DRIVER = Path(__file__).parent / "fixtures" / "trust" / "kill_driver.py"
# 250 modules -> two keyword batches (FILE_BATCH=200) and several vector batches.
REPO_FILES = 210

pytestmark = pytest.mark.slow  # long-running processes; `make test-fast` skips them


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """One generated repo and its from-scratch snapshot, copied per test (building it is the slow part)."""
    root = make_repo(tmp_path_factory.mktemp("base") / "repo", files=REPO_FILES)
    return root, fresh_snapshot(root)


def clone(base_root: Path, dest: Path) -> Path:
    shutil.copytree(base_root, dest, ignore=shutil.ignore_patterns(".hippo"))
    return dest


def kill_in(phase: str, nth: int, delay: float, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DRIVER), phase, str(nth), f"{delay}", str(root)],
                          capture_output=True, timeout=300, env=trustkit.env())


def recover_and_compare(root: Path, expected: set) -> None:
    proc = hippo(["index", "--quiet"], root)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    assert snapshot(root / ".hippo") == expected
    again = hippo(["index"], root)  # and the next run has nothing left to do
    assert again.returncode == 0 and b"up to date" in again.stdout, again.stdout + again.stderr


PHASES = [("discovery", 1), ("chunking", 150), ("writing", 2), ("state", 3), ("fts", 1),
          ("embedding", 2), ("vector-writing", 2), ("compaction", 1)]


@pytest.mark.parametrize("phase,nth", PHASES, ids=[f"{p}-{n}" for p, n in PHASES])
def test_kill_inside_phase_of_first_build(base, tmp_path, phase, nth):
    base_root, expected = base
    root = clone(base_root, tmp_path / "repo")
    delay = random.Random(f"{phase}{nth}").uniform(0.0, 0.05)
    proc = kill_in(phase, nth, delay, root)
    assert proc.returncode == -9, f"{phase} #{nth} was not reached: {proc.stderr.decode(errors='replace')[-2000:]}"
    recover_and_compare(root, expected)


@pytest.mark.parametrize("phase,nth", [("writing", 1), ("embedding", 1)])
def test_kill_inside_phase_of_incremental_run(base, tmp_path, phase, nth):
    base_root, _ = base
    root = clone(base_root, tmp_path / "repo")
    assert hippo(["index", "--quiet"], root).returncode == 0
    rng = random.Random(phase)
    mods = sorted((root / "pkg").rglob("*.py"))
    for p in rng.sample(mods, 30):
        p.write_text(p.read_text() + f"\n\ndef added_{uuid.uuid4().hex[:8]}():\n    return {rng.randint(0, 99)}\n")
    for p in rng.sample(mods, 5):
        if p.exists():
            p.unlink()
    (root / "pkg" / "new_mod.py").write_text(trustkit.module_text(999, rng))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "change")
    proc = kill_in(phase, nth, rng.uniform(0, 0.03), root)
    assert proc.returncode == -9, proc.stderr.decode(errors="replace")[-2000:]
    recover_and_compare(root, fresh_snapshot(root))


def test_kill_at_random_times_twice_in_a_row(base, tmp_path):
    """Plain `hippo index` killed from outside at random moments; two kills stack before recovery."""
    base_root, expected = base
    root = clone(base_root, tmp_path / "repo")
    rng = random.Random(42)
    for _ in range(2):
        p = trustkit.hippo_popen(["index", "--quiet"], root)
        time.sleep(rng.uniform(0.8, 3.0))
        p.kill()
        p.communicate(timeout=60)
    recover_and_compare(root, expected)


# --- disk full ------------------------------------------------------------------------------------
@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_is_a_clean_error_and_keeps_the_previous_index(tmp_path, small_tmpfs):
    root = make_repo(tmp_path / "repo", files=40)
    idx = small_tmpfs / "idx"
    env = {"HIPPO_INDEX_DIR": str(idx)}
    first = hippo(["index", "--quiet"], root, extra_env=env)
    assert first.returncode == 0, first.stderr
    before = hippo(["search", "--format", "json", "compute", "-w", "Service3"], root, extra_env=env)
    assert before.returncode == 0
    hits_before = [(h["path"], h["start_line"]) for h in json.loads(before.stdout)["results"]]
    assert hits_before
    # ~12 MB of new, distinct source: far more than the 6 MB filesystem can hold.
    rng = random.Random(5)
    for i in range(400):
        body = "\n".join(f"VALUE_{i}_{k} = '{uuid.UUID(int=rng.getrandbits(128)).hex * 4}'" for k in range(200))
        (root / "big" / f"blob_{i}.py").parent.mkdir(exist_ok=True)
        (root / "big" / f"blob_{i}.py").write_text(body + "\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "big")
    full = hippo(["index"], root, extra_env=env)
    err = full.stderr.decode(errors="replace").strip()
    assert full.returncode == 2, (full.returncode, err[-3000:])
    assert "Traceback" not in err and len(err.splitlines()) == 1, err[-3000:]
    assert "space" in err.lower()
    after = hippo(["search", "--format", "json", "compute", "-w", "Service3"], root, extra_env=env)
    assert after.returncode == 0, after.stderr
    assert [(h["path"], h["start_line"]) for h in json.loads(after.stdout)["results"]] == hits_before


# --- corrupt or truncated .hippo/ ---------------------------------------------------------------
def _truncate_state(idx: Path) -> None:
    p = idx / "state.json"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garbage_state(idx: Path) -> None:
    (idx / "state.json").write_bytes(b"\x00\xffnot json at all")


def _wrong_shape_state(idx: Path) -> None:
    (idx / "state.json").write_text(json.dumps({"schema_version": 1, "files": [1, 2], "dim": "x"}))


def _drop_data_files(idx: Path) -> None:
    for p in (idx / "db" / "chunks.lance" / "data").iterdir():
        p.unlink()


def _drop_versions(idx: Path) -> None:
    shutil.rmtree(idx / "db" / "chunks.lance" / "_versions")


def _drop_db(idx: Path) -> None:
    shutil.rmtree(idx / "db")


DAMAGE = {"truncated-state": _truncate_state, "garbage-state": _garbage_state,
          "wrong-shape-state": _wrong_shape_state, "no-data-files": _drop_data_files,
          "no-versions": _drop_versions, "no-db": _drop_db}


LANCE_DAMAGE = ("no-data-files", "no-versions")
CASES = [(d, True) for d in DAMAGE] + [(d, False) for d in LANCE_DAMAGE]  # no-op runs probe the table files


@pytest.mark.parametrize("damage,edit", CASES, ids=[f"{d}-edit" for d in DAMAGE] + [f"{d}-noop" for d in LANCE_DAMAGE])
def test_corrupt_index_is_detected_rebuilt_and_reported_once(base, tmp_path, damage, edit):
    base_root, expected = base
    root = clone(base_root, tmp_path / "repo")
    assert hippo(["index", "--quiet"], root).returncode == 0
    DAMAGE[damage](root / ".hippo")
    if edit:  # the next run has real work to do (the usual case: SessionStart after a pull)
        mod = next((root / "pkg").rglob("mod_3.py"))
        mod.write_text(mod.read_text() + "\n\ndef after_damage():\n    return 1\n")
        git(root, "commit", "-qam", "edit")
        expected = fresh_snapshot(root)
    first = hippo(["index"], root)
    out = (first.stdout + first.stderr).decode(errors="replace")
    assert first.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    assert "rebuil" in out, out  # the user is told ...
    assert snapshot(root / ".hippo") == expected
    second = hippo(["index"], root)
    assert second.returncode == 0 and b"rebuil" not in second.stdout + second.stderr  # ... once


def test_reads_of_a_damaged_index_trigger_one_rebuild(base, tmp_path, monkeypatch):
    """An MCP tool error and a silent hook mark the index damaged; the CLI search rebuilds, then answers."""
    from fake_embedder import FakeEmbedder
    from hippo.retrieval.search import Searcher
    from hippo.surfaces.mcp_server import SearchService, call_tool

    monkeypatch.setenv("HIPPO_NO_BACKGROUND_INDEX", "1")  # the in-process MCP call would start the rebuild
    base_root, expected = base
    root = clone(base_root, tmp_path / "repo")
    assert hippo(["index", "--quiet"], root).returncode == 0
    _drop_data_files(root / ".hippo")
    text, is_error = call_tool(SearchService(root, lambda r: Searcher(r, embedder=FakeEmbedder())),
                               "search_codebase", {"query": "compute value"})
    assert is_error and "damaged" in text and "Traceback" not in text
    hook = hippo(["hook", "tool-failure"], root, stdin=trustkit.failure_payload(root, trustkit.traceback_error(root, 3)),
                 extra_env={"HIPPO_HOME": str(tmp_path / "home")})
    assert trustkit.check_hook_output(hook) is None
    assert (root / ".hippo" / "damaged").is_file()
    proc = hippo(["search", "compute value", "--format", "xml"], root)
    err = proc.stderr.decode(errors="replace").strip()
    assert proc.returncode == 0 and "Traceback" not in err and len(err.splitlines()) == 1, err[-2000:]
    assert "damaged" in err and "rebuilt" in err and b"<result " in proc.stdout
    fill = hippo(["index"], root)  # the vectors the background run would add (disabled in tests)
    assert fill.returncode == 0 and b"damaged" not in fill.stderr
    assert snapshot(root / ".hippo") == expected
