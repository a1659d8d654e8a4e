"""Latency of the hooks as Claude Code runs them (a fresh `python -m hippo hook ...` per call).

Usage: python bench/hook_bench.py [--repo PATH] [--copies N] [--runs N]
Without --repo, builds a synthetic repo of N copies of tests/fixtures/errors/projects (plus docs),
indexes it (HIPPO_MODEL as set; the real model by default) and measures:
  session-start, failure hook on an irrelevant error (gated out), failure hook on a real
  traceback cold (no server) and warm (`hippo serve` running). Prints p50/p95 in ms.
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
    for i in range(copies):
        shutil.copytree(PROJECTS, dest / f"pkg{i}")
    shutil.copytree(PROJECTS, dest, dirs_exist_ok=True)
    (dest / "CONTRIBUTING.md").write_text("# Contributing\n\n## Tests\n\nRun pytest -q before pushing.\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True)
    return dest


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
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hippo-bench-"))
    root = Path(a.repo).resolve() if a.repo else build_repo(tmp / "repo", a.copies)
    base_env = {**os.environ, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    idx = root / ".hippo"
    if not (idx / "state.json").exists():
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet"], cwd=root, env=base_env, check=True)
        print(f"indexed in {time.perf_counter() - t:.1f}s")
    traceback = subprocess.run([sys.executable, "-m", "shop.main"], cwd=root / "py", capture_output=True, text=True)
    fail = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "python -m shop.main"},
            "error": f"Exit code 1\n{traceback.stderr}", "session_id": "", "cwd": str(root / "py")}
    irrelevant = {**fail, "error": "Exit code 127\nbash: line 1: pnpmx: command not found"}
    start = {"session_id": "bench", "cwd": str(root), "hook_event_name": "SessionStart", "source": "startup"}
    rows = []

    def measure(name: str, event: str, payload: dict, env: dict) -> None:
        xs, out = [], ""
        for i in range(a.runs):
            ms, out = timed(event, {**payload, "session_id": f"{name}-{i}"}, env)
            xs.append(ms)
        rows.append((name, statistics.median(xs), pct(xs, 0.95), len(out)))

    cold_env = {**base_env, "HIPPO_NO_SERVER": "1"}
    measure("session-start", "session-start", start, cold_env)
    measure("failure, gated out", "tool-failure", irrelevant, cold_env)
    measure("failure, cold (no server)", "tool-failure", fail, cold_env)
    server = subprocess.Popen([sys.executable, "-m", "hippo", "serve", "--root", str(root), "--idle", "300"],
                              cwd=root, env=base_env, start_new_session=True)
    try:
        from hippo.hooks.client import request

        deadline = time.time() + 120
        while request(idx, {"op": "ping"}, timeout=1) is None and time.time() < deadline:
            time.sleep(0.2)
        measure("failure, warm (server)", "tool-failure", fail, base_env)
        measure("session-start, server up", "session-start", start, {**base_env, "HIPPO_NO_SERVER": "1"})
    finally:
        server.terminate()
        server.wait(10)
    print(f"repo: {root}  chunks: {sum(f.get('chunks', 0) for f in json.loads((idx / 'state.json').read_text())['files'].values())}")
    print(f"{'case':32} {'p50 ms':>8} {'p95 ms':>8} {'out chars':>10}")
    for name, p50, p95, n in rows:
        print(f"{name:32} {p50:8.0f} {p95:8.0f} {n:10d}")


if __name__ == "__main__":
    main()
