"""The warm server of one index: its memory after warm-up, after failure hooks and after searches, and the
hooks' and searches' wall and CPU time (client and server), one JSON line per run.

    python -m bench.warm_server ROOT [--prefix p0/more-itertools] [--runs 8] [--direct-first]

Run it with PYTHONPATH at the checkout to measure, alternating checkouts on the same index (bench/scale.py
builds the trees; its failure is more-itertools' `first([])` under --prefix). HIPPO_NO_BACKGROUND_INDEX
is set so the index does not move under the runs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.scale import QUERIES, pct, server_cpu


def status(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(args: list[str], cwd: Path, env: dict, stdin: bytes | None = None) -> tuple[float, float, bytes]:
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True).stdout
    return time.perf_counter() - t0, child_cpu() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--prefix", default="p0/more-itertools")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--direct-first", action="store_true",
                    help="ask the server for the first hook directly and wait up to 120 s (its own answer time; "
                         "the hook client gives up after 3 s and answers in-process)")
    a = ap.parse_args()
    root = a.root.resolve()
    env = {**os.environ, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    hippo = [sys.executable, "-m", "hippo"]
    pkg = root / a.prefix
    err = subprocess.run([sys.executable, "-c", "import more_itertools as m; m.first([])"], cwd=pkg,
                         capture_output=True, text=True, env={**env, "PYTHONPATH": str(pkg)}).stderr
    fail = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "python -c 'import more_itertools as m; m.first([])'"},
            "error": f"Exit code 1\n{err}", "session_id": "", "cwd": str(pkg)}
    r: dict = {"root": root.name, "load_start": os.getloadavg()[0]}
    t = time.perf_counter()
    server = subprocess.Popen([*hippo, "serve", "--root", str(root), "--idle", "900"], cwd=root, env=env,
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from hippo.surfaces.service.client import request

        while request(root / ".hippo", {"op": "ping"}, timeout=1) is None and time.perf_counter() - t < 600:
            time.sleep(0.2)
        r["ready_s"] = time.perf_counter() - t
        r["warm_mb"] = status(server.pid)
        tag = f"{os.getpid()}-{time.time():.0f}"
        hooks = []
        if a.direct_first:
            s0, t0 = server_cpu(server.pid), time.perf_counter()
            reply = request(root / ".hippo", {"op": "hook", "event": "tool-failure",
                                              "payload": {**fail, "session_id": f"d-{tag}"}}, timeout=120)
            out = ((reply or {}).get("output") or {}).get("hookSpecificOutput", {}).get("additionalContext", "")
            r["hook_first_direct"] = {"ms": (time.perf_counter() - t0) * 1000, "chars": len(out),
                                      "server_cpu_ms": (server_cpu(server.pid) - s0) * 1000}
            r["after_first_mb"] = status(server.pid)
        for i in range(a.runs + 1):  # the first (new failure on this server) apart
            s0 = server_cpu(server.pid)
            wall, cpu, out = timed([*hippo, "hook", "tool-failure"], root, env,
                                   json.dumps({**fail, "session_id": f"w{i}-{tag}"}).encode())
            hooks.append((wall, cpu, server_cpu(server.pid) - s0, len(out)))
        r["hook_first_ms"] = hooks[0][0] * 1000
        r["hook_first_server_cpu_ms"] = hooks[0][2] * 1000
        rest = hooks[1:]
        r["hook"] = {"p50_ms": statistics.median(h[0] for h in rest) * 1000, "p95_ms": pct([h[0] for h in rest], 0.95) * 1000,
                     "cpu_ms": statistics.median(h[1] for h in rest) * 1000,
                     "server_cpu_ms": statistics.median(h[2] for h in rest) * 1000, "chars": rest[-1][3]}
        r["after_hooks_mb"] = status(server.pid)
        walls, cpus, srv, outs = [], [], [], []
        for q in QUERIES[:a.runs]:
            s0 = server_cpu(server.pid)
            wall, cpu, out = timed([*hippo, "search", q, "-f", "json"], root, env)
            walls.append(wall)
            cpus.append(cpu)
            srv.append(server_cpu(server.pid) - s0)
            data = json.loads(out) if out.strip() else {}
            outs.append([(h["path"], h["start_line"], h["score"]) for h in data.get("results", [])]
                        + [(c["path"], c["start_line"]) for c in data.get("candidates", [])])
        r["search"] = {"p50_ms": statistics.median(walls) * 1000, "p95_ms": pct(walls, 0.95) * 1000,
                       "cpu_ms": statistics.median(cpus) * 1000, "server_cpu_ms": statistics.median(srv) * 1000}
        r["search_hits"] = outs
        r["after_searches_mb"] = status(server.pid)
        r["load_end"] = os.getloadavg()[0]
    finally:
        server.terminate()
        server.wait(30)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
