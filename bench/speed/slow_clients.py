"""Failure-hook latency while other clients trickle requests into the warm server.

Usage: python -m bench.speed.slow_clients [--copies N] [--runs N] [--slow N] [--interval S] [--fake]

Builds a small repo (N copies of tests/fixtures/errors/projects, as bench/hook_bench.py does), indexes it,
starts `hippo serve`, and times the real failure hook (a fresh `python -m hippo hook tool-failure` per call,
as Claude Code runs it, on a real traceback of the fixture project) with no other client, then with
`--slow` clients connected that each send one byte of a request every `--interval` seconds (reconnecting
when the server closes them). A hook the server cannot answer within its timeout pays the in-process
fallback. Prints p50/p95/max in ms per case, how many hooks gave context, and how often the server
closed a slow client (at its request deadline).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.fake_model import use_fake
from bench.hook_bench import build_repo, timed
from bench.speed.common import pct


def trickle(path: str, interval: float, stop: threading.Event, closed: list[int]) -> None:
    """One slow client: a byte of a request every `interval` seconds, for as long as the bench runs."""
    data = b'{"op": "ping", "pad": "' + b"x" * 100_000
    while not stop.is_set():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            for i in range(len(data)):
                s.sendall(data[i:i + 1])
                if stop.wait(interval):
                    return
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        closed[0] += 1
                        break
                except BlockingIOError:
                    pass
                finally:
                    s.setblocking(True)
        except OSError:
            closed[0] += 1
            stop.wait(0.1)
        finally:
            s.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--slow", type=int, default=10)
    ap.add_argument("--interval", type=float, default=4.0)
    ap.add_argument("--fake", action="store_true", help="the tests' fake embedder instead of the real model")
    a = ap.parse_args()
    from hippo.surfaces.service.client import request, socket_path

    tmp = Path(tempfile.mkdtemp(prefix="hippo-slow-"))
    root = build_repo(tmp / "repo", a.copies).resolve()
    model = {"HIPPO_MODEL": use_fake()} if a.fake else {}  # before os.environ is copied (it sets PYTHONPATH)
    env = {**os.environ, "HIPPO_NO_BACKGROUND_INDEX": "1", **model}
    idx = root / ".hippo"
    subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet"], cwd=root, env=env, check=True)
    traceback = subprocess.run([sys.executable, "-m", "shop.main"], cwd=root / "py", capture_output=True, text=True)
    fail = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "python -m shop.main"},
            "error": f"Exit code 1\n{traceback.stderr}", "session_id": "", "cwd": str(root / "py")}
    server = subprocess.Popen([sys.executable, "-m", "hippo", "serve", "--root", str(root), "--idle", "900"],
                              cwd=root, env=env, start_new_session=True)
    rows = []
    tag = f"{os.getpid()}-{time.time():.0f}"
    try:
        deadline = time.time() + 300
        while request(idx, {"op": "ping"}, timeout=1) is None:
            if server.poll() is not None or time.time() > deadline:
                sys.exit("hippo serve did not come up")
            time.sleep(0.2)
        timed("tool-failure", {**fail, "session_id": f"warmup-{tag}"}, env)  # first query pays the FTS touch

        def measure(name: str, slow: int) -> None:
            stop, closed = threading.Event(), [0]
            clients = [threading.Thread(target=trickle, args=(str(socket_path(idx)), a.interval, stop, closed),
                                        daemon=True) for _ in range(slow)]
            for c in clients:
                c.start()
            time.sleep(1.0 if slow else 0)  # let them connect and start trickling
            xs, outs = [], 0
            for i in range(a.runs):
                ms, out = timed("tool-failure", {**fail, "session_id": f"{name}-{i}-{tag}"}, env)
                xs.append(ms)
                outs += bool(out.strip())
            stop.set()
            for c in clients:
                c.join(a.interval + 5)
            rows.append((name, pct(xs, 0.5), pct(xs, 0.95), max(xs), outs, closed[0]))

        measure("failure hook, no other client", 0)
        measure(f"failure hook, {a.slow} trickling clients", a.slow)
    finally:
        server.terminate()
        server.wait(20)
    print(json.dumps({"repo_chunks": sum(f.get("chunks", 0) for f in
                                         json.loads((idx / "state.json").read_text())["files"].values()),
                      "runs": a.runs, "slow": a.slow, "interval_s": a.interval, "model": "fake" if a.fake else "real"}))
    print(f"{'case':40} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'with output':>12} {'slow closed':>12}")
    for name, p50, p95, mx, outs, closed in rows:
        print(f"{name:40} {p50:8.0f} {p95:8.0f} {mx:8.0f} {outs:>12} {closed:>12}")


if __name__ == "__main__":
    main()
