"""Chunking in worker processes (index/parallel.py, issue 21): the parallel keyword phase writes exactly the
rows and state of the in-process one, skips and reports a file that cannot be chunked, falls back to
in-process when workers cannot run, and never leaves a worker behind when the run is interrupted or killed.

The parallel path is forced with HIPPO_PARALLEL_MIN_FILES=1 and threads=2 (one worker even on one core),
and small FILE_BATCHes so a tiny repo makes many batches."""
from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_embedder import FakeEmbedder
from hippo.core.config import load_settings
from hippo.index import indexer as indexer_mod
from hippo.index import parallel
from hippo.index.indexer import index_repo
from hippo.index.state import load_state
from hippo.index.store import Store
from index_checks import DOC, assert_fresh, chunking_fails_on, py

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # redacted in the indexed text, both paths alike

FILES = {
    "README.md": DOC,
    "docs/guide.md": DOC + "\n## More\n\nEven more prose.\n",
    "src/app.py": py(0, 1, 2),
    "src/copy.py": py(0, 1, 2),  # the same chunks in another file
    "src/twice.py": py(3, 3, 4),  # the same chunk twice in one file
    "src/config.py": f'TOKEN = "{TOKEN}"\n\n' + py(5),
    "src/web/app.js": "export function start(port) {\n  return listen(port);\n}\n\nconst x = () => 1;\n",
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    "src/main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
    "tests/test_app.py": py(6, 7),
    "notes.txt": "plain text\n" * 20,
    "pkg/__init__.py": "",
}


def forced_parallel(monkeypatch, batch: int = 2) -> None:
    monkeypatch.setenv("HIPPO_PARALLEL_MIN_FILES", "1")
    monkeypatch.setenv("HIPPO_THREADS", "2")
    monkeypatch.setattr(indexer_mod, "FILE_BATCH", batch)


def count_worker_answers(monkeypatch) -> list[int]:
    """Batch numbers the workers answered, as they arrive (the main process may chunk some itself)."""
    got: list[int] = []
    real = parallel._Worker.receive

    def receive(self):
        number, result = real(self)
        got.append(number)
        return number, result

    monkeypatch.setattr(parallel._Worker, "receive", receive)
    return got


def build(root: Path, where: Path):
    settings = dataclasses.replace(load_settings(root), index_dir=str(where))
    report = index_repo(root, settings, embedder=FakeEmbedder())
    return report, where


def table(index_dir: Path) -> list[dict]:
    state = load_state(index_dir)
    assert state is not None
    store = Store(index_dir, state.dim)
    try:
        rows = store.rows()
    finally:
        store.close()
    for r in rows:
        r["vector"] = [float(v) for v in r["vector"]]
        r.pop("_distance", None)
    return sorted(rows, key=lambda r: r["id"])


def state_files(index_dir: Path) -> dict:
    state = load_state(index_dir)
    assert state is not None and state.complete
    return {k: dataclasses.asdict(v) for k, v in state.files.items()}


def test_parallel_rows_and_state_equal_in_process(git_repo, tmp_path, monkeypatch):
    root = git_repo(FILES)
    monkeypatch.setattr(indexer_mod, "FILE_BATCH", 2)
    before, serial = build(root, tmp_path / "serial")
    forced_parallel(monkeypatch)
    answered = count_worker_answers(monkeypatch)
    after, par = build(root, tmp_path / "parallel")
    assert answered, "no batch came from a worker"
    assert table(par) == table(serial)
    assert state_files(par) == state_files(serial)
    assert (after.files_changed, after.chunks_written, after.notices, after.skipped) == \
        (before.files_changed, before.chunks_written, before.notices, before.skipped)
    config = [r for r in table(par) if r["path"] == "src/config.py"]
    assert any("[REDACTED:github_token]" in r["text"] for r in config) and not any(TOKEN in r["text"] for r in config)
    assert len({r["path"] for r in table(par)}) >= 10 and any(r["graph"] for r in table(par))


def test_a_file_that_cannot_be_chunked_is_skipped_and_reported_in_a_worker(git_repo, monkeypatch):
    """The same notice, skip count and state as the in-process path (tests/test_trust_names.py)."""
    root = git_repo({"a.py": "def alpha():\n    return 1\n", "boom.py": "def boom():\n    return 2\n"})
    forced_parallel(monkeypatch, batch=200)  # one batch: the worker gets it, never the main process
    monkeypatch.setattr(parallel, "WORKER_MODULE", "chunk_worker_variants")
    monkeypatch.setenv("HIPPO_TEST_WORKER", "fail:boom.py")
    answered = count_worker_answers(monkeypatch)
    report = index_repo(root, load_settings(root), embedder=FakeEmbedder())
    assert answered == [0]
    assert report.notices == ["skipped boom.py: it could not be chunked (RecursionError: maximum recursion "
                              "depth exceeded)"]
    assert report.skipped.get("chunk_error") == 1
    state = load_state(root / ".hippo")
    assert state is not None
    assert state.complete and state.files["a.py"].chunks == 1 and state.files["boom.py"].chunks == 0


def test_in_process_results_carry_a_chunking_failure_as_a_worker_does(git_repo, monkeypatch):
    """The main process chunks batches itself too (small runs, or while it waits for a worker)."""
    chunking_fails_on(monkeypatch, "boom.py")
    got = list(parallel.batch_results([[("boom.py", b"def boom():\n    pass\n")]], "m", 0, None))
    assert got == [[("RecursionError", "maximum recursion depth exceeded")]]


def test_workers_that_cannot_start_or_die_leave_the_work_to_the_main_process(git_repo, tmp_path, monkeypatch):
    root = git_repo(FILES)
    monkeypatch.setattr(indexer_mod, "FILE_BATCH", 2)
    _, serial = build(root, tmp_path / "serial")
    forced_parallel(monkeypatch)
    monkeypatch.setattr(parallel, "WORKER_MODULE", "no_such_hippo_worker_module")
    _, missing = build(root, tmp_path / "missing")
    assert table(missing) == table(serial) and state_files(missing) == state_files(serial)
    assert "chunk workers unavailable (EOFError: " in (tmp_path / "missing" / "hippo.log").read_text()
    # A worker that dies on the second batch (batches 0-1 always go to a worker): the rest is done here.
    monkeypatch.setattr(parallel, "WORKER_MODULE", "chunk_worker_variants")
    monkeypatch.setenv("HIPPO_TEST_WORKER", "die-at:notes.txt")  # in path order: README.md, docs/guide.md, notes.txt
    _, died = build(root, tmp_path / "died")
    assert table(died) == table(serial) and state_files(died) == state_files(serial)
    assert "chunking in-process from batch 2 of 6" in (tmp_path / "died" / "hippo.log").read_text()


def test_worker_count():
    assert parallel.worker_count(10, 4) == 0  # under the threshold: in-process, no start-up to pay
    assert parallel.worker_count(parallel.PARALLEL_MIN_FILES, 1) == 0  # one core: nothing to overlap with
    assert parallel.worker_count(parallel.PARALLEL_MIN_FILES, 3) == 2
    assert parallel.worker_count(parallel.PARALLEL_MIN_FILES, 64) == parallel.MAX_WORKERS


def test_worker_count_threshold_from_the_environment(monkeypatch):
    monkeypatch.setenv("HIPPO_PARALLEL_MIN_FILES", "5")
    assert parallel.worker_count(5, 2) == 1 and parallel.worker_count(4, 2) == 0
    monkeypatch.setenv("HIPPO_PARALLEL_MIN_FILES", "lots")
    assert parallel.worker_count(parallel.PARALLEL_MIN_FILES - 1, 2) == 0


# --- interrupted runs: no worker survives ------------------------------------------------------------
DRIVER = """
import sys, time
from pathlib import Path
from fake_embedder import FakeEmbedder
from hippo.core.config import load_settings
from hippo.index import indexer
from hippo.surfaces.cli import _sigterm_unwinds

indexer.FILE_BATCH = 2

def progress(phase, done, total):
    if phase == "files" and done:  # one batch written, the workers hold the next ones
        print("ready", flush=True)
        time.sleep(600)

root = Path(sys.argv[1])
with _sigterm_unwinds():
    indexer.index_repo(root, load_settings(root), embedder=FakeEmbedder(), progress=progress)
"""


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (a container's init may never reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow  # a real `hippo index` signalled mid-run, three times (~5 CPU-s): `make check` runs it
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find the workers")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_an_interrupted_parallel_run_leaves_no_worker_and_a_consistent_index(git_repo, sig):
    root = git_repo(FILES)
    env = {**os.environ, "HIPPO_PARALLEL_MIN_FILES": "1", "HIPPO_THREADS": "2"}
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(root)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n", proc.stderr and proc.stderr.read()
        workers = [p for p in _children(proc.pid)
                   if b"hippo.index.parallel" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert workers, "the run had no worker to leave behind"
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    # SIGINT/SIGTERM unwind and reap the workers; after SIGKILL each one sees its stdin close and exits.
    deadline = time.monotonic() + 60
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in workers)
    state = json.loads((root / ".hippo" / "state.json").read_text())
    assert not state["complete"]  # the run was stopped in its keyword phase
    index_repo(root, load_settings(root), embedder=FakeEmbedder())
    assert_fresh(root)


def test_a_worker_imports_neither_lancedb_nor_pyarrow_nor_numpy():
    """What a worker runs (file_rows over every kind of file) stays clear of the heavy native libraries."""
    files = [(rel, text.encode()) for rel, text in FILES.items()]
    probe = ("import sys\nfrom hippo.index import parallel\n"
             f"for rel, data in {files!r}:\n    parallel.file_rows(rel, data, 'm')\n"
             "print(sorted(m for m in ('lancedb', 'pyarrow', 'numpy', 'onnxruntime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
