"""Latency of the hooks as Claude Code runs them (a fresh `python -m hippo hook ...` per call).

Usage: python bench/hook_bench.py [--repo PATH] [--copies N] [--grow N] [--runs N]
Without --repo, builds a synthetic repo of N copies of tests/fixtures/errors/projects (plus docs).
A repo without an index is indexed first (HIPPO_MODEL as set; the real model by default).
`--grow N` copies the repo's tracked files N more times into grow<i>/ and re-indexes incrementally:
identical chunk text hits the index's vector cache, so a 5x bigger index keeps the real model's
vectors without re-embedding (the query path still embeds with the real model).
The repo's root must hold the fixture projects (py/shop) for the relevant-failure traceback.
Measures, with no server (cold) and with `hippo serve` running (warm): session-start, the failure
hook on an irrelevant error (gated out) and on a real traceback. Prints p50/p95 in ms.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PROJECTS = HERE / "tests" / "fixtures" / "errors" / "projects"


def build_repo(dest: Path, copies: int) -> Path:
    """`copies` copies of the fixture projects in pkg<i>/ plus one at the root, committed."""
    for i in range(copies):
        shutil.copytree(PROJECTS, dest / f"pkg{i}")
    shutil.copytree(PROJECTS, dest, dirs_exist_ok=True)
    (dest / "CONTRIBUTING.md").write_text("# Contributing\n\n## Tests\n\nRun pytest -q before pushing.\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True)
    return dest


def grow(root: Path, times: int, env: dict) -> None:
    """Copy the tracked files `times` more times into grow<i>/ and commit them."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.decode().split("\0")
    files = [f for f in files if f and not f.startswith("grow")]
    for i in range(times):
        for f in files:
            dest = root / f"grow{i}" / f
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / f, dest)
    for args in (["add", "-A"], ["commit", "-q", "-m", f"grow x{times}"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)


def timed(event: str, payload: dict, env: dict) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hippo", "hook", event], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, timeout=120)
    return (time.perf_counter() - t) * 1000, proc.stdout.decode()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo")
    ap.add_argument("--copies", type=int, default=50)
    ap.add_argument("--grow", type=int, default=0)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hippo-bench-"))
    git_env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
               "GIT_COMMITTER_EMAIL": "b@b"}
    root = Path(a.repo).resolve() if a.repo else build_repo(tmp / "repo", a.copies)
    base_env = {**os.environ, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    idx = root / ".hippo"
    if a.grow:
        grow(root, a.grow, git_env)
    if not (idx / "state.json").exists() or a.grow:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet"], cwd=root, env=base_env, check=True)
        print(f"indexed in {time.perf_counter() - t:.1f}s")
    traceback = subprocess.run([sys.executable, "-m", "shop.main"], cwd=root / "py", capture_output=True, text=True)
    fail = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "python -m shop.main"},
            "error": f"Exit code 1\n{traceback.stderr}", "session_id": "", "cwd": str(root / "py")}
    irrelevant = {**fail, "error": "Exit code 127\nbash: line 1: pnpmx: command not found"}
    start = {"session_id": "bench", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}
    rows = []
    tag = f"{os.getpid()}-{time.time():.0f}"  # fresh session ids: earlier runs' dedupe must not empty the output

    def measure(name: str, event: str, payload: dict, env: dict) -> None:
        xs, out = [], ""
        for i in range(a.runs):
            ms, out = timed(event, {**payload, "session_id": f"{name}-{i}-{tag}"}, env)
            xs.append(ms)
        rows.append((name, statistics.median(xs), pct(xs, 0.95), len(out)))

    from hippo.surfaces.service.client import request

    if request(idx, {"op": "ping"}, timeout=1) is not None:
        sys.exit("a query server is already running for this repo: stop it first (cold numbers need none)")
    cold_env = {**base_env, "HIPPO_NO_SERVER": "1"}
    measure("session-start", "session-start", start, cold_env)
    measure("failure, gated out", "tool-failure", irrelevant, cold_env)
    measure("failure, cold (no server)", "tool-failure", fail, cold_env)
    server = subprocess.Popen([sys.executable, "-m", "hippo", "serve", "--root", str(root), "--idle", "300"],
                              cwd=root, env=base_env, start_new_session=True)
    try:
        deadline = time.time() + 120
        while request(idx, {"op": "ping"}, timeout=1) is None and time.time() < deadline:
            time.sleep(0.2)
        ms, out = timed("tool-failure", {**fail, "session_id": f"first-warm-{tag}"}, base_env)
        rows.append(("failure, 1st query, new server", ms, ms, len(out)))  # one call: p95 = p50
        measure("failure, warm (server)", "tool-failure", fail, base_env)
        measure("failure, gated out, server up", "tool-failure", irrelevant, base_env)
        measure("session-start, server up", "session-start", start, base_env)
    finally:
        server.terminate()
        server.wait(10)
    print(f"repo: {root}  chunks: {sum(f.get('chunks', 0) for f in json.loads((idx / 'state.json').read_text())['files'].values())}")
    print(f"{'case':32} {'p50 ms':>8} {'p95 ms':>8} {'out chars':>10}")
    for name, p50, p95, n in rows:
        print(f"{name:32} {p50:8.0f} {p95:8.0f} {n:10d}")


if __name__ == "__main__":
    main()
