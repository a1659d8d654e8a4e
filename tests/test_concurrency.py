"""One writer at a time; readers never block and never see a file with a partial set of chunks.

Separate processes (LanceDB must not be used across fork): a writer re-indexing in a loop while files flip
between versions, and several searchers checking every hot file's chunks against the valid versions.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from fake_embedder import SPEC as FAKE
from hippo.index.indexer import chunks_for_file
from repo_helpers import make_big_repo

HOT = [f"hot/h{i}.py" for i in range(4)]
ROUNDS = 12
# Real concurrent processes and a lock held for its full wait: `make test-fast` skips them.
pytestmark = pytest.mark.slow


def version_text(i: int, v: int) -> str:
    units = [f"def hot_{i}_{j}_v{v}(x):\n    '''Hot unit {j}, version {v}.'''\n    return x + {j * 10 + v}\n"
             for j in range(3 + v)]  # versions differ in chunk count too
    return "\n\n".join(units)


def expected_sets() -> dict[str, list[list[list]]]:
    """path -> every acceptable chunk set [(start, end, hash)] (version 0, version 1, or absent)."""
    out = {}
    for i, rel in enumerate(HOT):
        sets = [[]] if i == 0 else []  # h0 is deleted and restored
        for v in (0, 1):
            sets.append(sorted([c.start_line, c.end_line, c.content_hash]
                               for c in chunks_for_file(rel, version_text(i, v).encode())))
        out[rel] = sets
    return out


WRITER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo
    root, rounds = Path(sys.argv[1]), int(sys.argv[2])
    versions = json.loads(Path(sys.argv[3]).read_text())  # hot path -> [version 0 text, version 1 text]
    emb = FakeEmbedder()
    stats = {"runs": 0, "pruned_all": 0}
    for r in range(rounds):
        v = (r + 1) % 2
        for i, (rel, texts) in enumerate(versions.items()):
            p = root / rel
            if i == 0 and v == 1:
                p.unlink(missing_ok=True)
            else:
                p.write_text(texts[v])
        rep = index_repo(root, embedder=emb)
        stats["runs"] += 1
        stats["pruned_all"] += rep.pruned_all
    print(json.dumps(stats))
""")

READER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from fake_embedder import FakeEmbedder
    from hippo.retrieval.search import Searcher
    from hippo.index.store import Filter
    root, expected, stop = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text()), Path(sys.argv[3])
    s = Searcher(root, embedder=FakeEmbedder())
    Path(sys.argv[4]).touch()  # the index is open: the writer may start
    checks = searches = reopen = 0
    bad = []
    while not stop.exists():
        if checks % 15 == 14:
            s = Searcher(root, embedder=FakeEmbedder()); reopen += 1
        else:
            s.refresh()
        for rel, valid in expected.items():
            rows = s.store.rows(Filter(paths=(rel,)), columns=["start_line", "end_line", "text"])
            import hashlib
            got = sorted([r["start_line"], r["end_line"], hashlib.sha1(r["text"].encode()).hexdigest()] for r in rows)
            checks += 1
            if got not in valid:
                bad.append({"path": rel, "rows": len(got)})
        resp = s.search("hot unit version", k=5)
        searches += 1
    print(json.dumps({"checks": checks, "searches": searches, "reopen": reopen, "bad": bad[:5], "nbad": len(bad)}))
""")


def test_writer_and_searchers_at_once(tmp_path, git_repo):
    files = {rel: version_text(i, 0) for i, rel in enumerate(HOT)}
    files.update({f"cold/c{i}.py": f"def cold_{i}():\n    return {i}\n" for i in range(30)})
    root = git_repo(files)
    env = {**os.environ, "HIPPO_MODEL": FAKE}
    pre = subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet", "--repo", str(root)], env=env,
                         capture_output=True)
    assert pre.returncode == 0, pre.stderr.decode()
    (tmp_path / "reader.py").write_text(READER)
    (tmp_path / "writer.py").write_text(WRITER)
    (tmp_path / "expected.json").write_text(json.dumps(expected_sets()))
    stop = tmp_path / "stop"
    versions = tmp_path / "versions.json"
    versions.write_text(json.dumps({rel: [version_text(i, 0), version_text(i, 1)] for i, rel in enumerate(HOT)}))
    readers = [subprocess.Popen([sys.executable, str(tmp_path / "reader.py"), str(root),
                                 str(tmp_path / "expected.json"), str(stop), str(tmp_path / f"ready{n}")],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(3)]
    deadline = time.monotonic() + 120  # the readers open the index before the writer starts
    while not all((tmp_path / f"ready{n}").exists() for n in range(3)):
        assert all(r.poll() is None for r in readers), "a reader exited before opening the index"
        assert time.monotonic() < deadline, "readers did not open the index"
        time.sleep(0.02)
    writer = subprocess.run([sys.executable, str(tmp_path / "writer.py"), str(root), str(ROUNDS), str(versions)],
                            env=env, capture_output=True, timeout=600)
    stop.touch()
    outs = [r.communicate(timeout=120) for r in readers]
    assert writer.returncode == 0, writer.stderr.decode()[-2000:]
    wstats = json.loads(writer.stdout.decode().strip().splitlines()[-1])
    assert wstats["runs"] == ROUNDS and wstats["pruned_all"] == 0  # readers were marked: margin pruning only
    for r, (out, err) in zip(readers, outs, strict=True):
        assert r.returncode == 0, err.decode()[-2000:]
        stats = json.loads(out.decode().strip().splitlines()[-1])
        assert stats["nbad"] == 0, stats
        assert stats["checks"] > 0 and stats["searches"] > 0


def test_second_indexer_waits_then_exits_with_one_line(tmp_path):
    """Another writer holds the lock (here: this test, deterministically): `hippo index` waits briefly,
    then gives up with the one-line message and exit 1, touching nothing."""
    import fcntl

    root = tmp_path / "big"
    make_big_repo(root, 50)
    env = {**os.environ, "HIPPO_MODEL": FAKE}
    subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet", "--repo", str(root)], env=env, check=True)
    state_before = (root / ".hippo" / "state.json").read_bytes()
    (root / "extra.py").write_text("def extra():\n    return 1\n")
    with open(root / ".hippo" / "lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        started = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "hippo", "index", "--repo", str(root)], env=env,
                                capture_output=True, timeout=120)
        waited = time.monotonic() - started
    assert second.returncode == 2  # an error, grep-like (README "Exit codes")
    err = second.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "Another `hippo index` is running" in err, err
    assert waited >= 2.5  # it waited briefly for the lock before giving up
    assert (root / ".hippo" / "state.json").read_bytes() == state_before  # nothing written without the lock
    again = subprocess.run([sys.executable, "-m", "hippo", "index", "--repo", str(root)], env=env,
                           capture_output=True, timeout=120)
    assert again.returncode == 0 and b"1 changed" in again.stdout  # free again: the next run does the work
