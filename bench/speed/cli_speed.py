"""`hippo search` and `hippo index` wall time as a user sees it: each figure is a fresh `hippo` process,
from start to exit, run with subprocess (interpreter start, imports, the answer, teardown).

    python -m bench.speed.cli_speed --repo PATH [--work DIR] [--chunks 50000] [--files 10000] [--runs 15]

PATH is a real git repository (docs/benchmarks.md names the one used and its commit). It is cloned into
DIR and grown like bench/hook_bench.py's `--grow`: its tracked files copied into grow<i>/ until the
index holds --chunks chunks (search figures), then until the repo holds --files files (index figures). Identical chunk text
hits the index's vector cache, so only the first copy is embedded with the real model; the query path
embeds with the real model too. Measured:
- search, cold: no server running (HIPPO_NO_SERVER=1, so none is left behind): imports, index open,
  model load, query;
- search, warm: a `hippo serve` is up; the CLI only talks to its socket;
- index, no-op: nothing changed since the last `hippo index`;
- index, 1 file: one tracked file edited (a different one each run), then `hippo index`;
both without a server (the CLI runs the indexer itself) and with a `hippo serve` up (the CLI hands the
run to it: lancedb and the model are loaded there already).
Prints a table (milliseconds: wall p50/p95 and the process's own CPU time, which says what an idle
machine would show when the box is shared; the 1-minute load average when each row started) and, with
--json, one JSON line.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.speed.common import REPO, pct

QUERIES = [
    "where is the console width detected", "how are markup tags parsed into styles", "render a table with borders",
    "progress bar refresh rate", "syntax highlighting theme", "traceback frames are suppressed", "Segment",
    "how does the live display redraw", "escape square brackets in markup", "convert a color to truecolor",
]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **GIT_ENV, "HIPPO_NO_BACKGROUND_INDEX": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO / "lib"), os.environ.get("PYTHONPATH", "")])}
    env.pop("HIPPO_NO_SERVER", None)
    env.update(extra)
    return env


CPU: list[float] = []  # CPU ms (user + sys) of each measured process, parallel to the wall figures


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 7200) -> tuple[float, str]:
    """Wall milliseconds of one process, and its stdout; its CPU time goes to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    ms = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return ms, proc.stdout


def hippo(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 7200) -> tuple[float, str]:
    """Wall milliseconds of one `hippo ...` process (as `python -m hippo`), and its stdout."""
    return run([sys.executable, "-m", "hippo", *args], cwd, env, timeout)


LOAD: list[float] = []  # 1-minute load average as each measured row started, parallel to the rows


def measured(fn, n: int) -> tuple[list[float], list[float]]:
    """(wall ms, CPU ms) of n calls of fn() -> wall ms."""
    LOAD.append(os.getloadavg()[0])
    start = len(CPU)
    walls = [fn(i) for i in range(n)]
    return walls, CPU[start:]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=_env(), check=True, capture_output=True,
                          text=True).stdout


def tracked(root: Path) -> list[str]:
    return [f for f in git(root, "ls-files", "-z").split("\0") if f and not f.startswith("grow")]


def grow(root: Path, copies: int) -> None:
    """Copy the original tracked files `copies` times into grow<i>/ (idempotent) and commit them."""
    files = tracked(root)
    for i in range(copies):
        if (root / f"grow{i}").exists():
            continue
        for f in files:
            src, dest = root / f, root / f"grow{i}" / f
            if src.is_file() and not src.is_symlink():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
    git(root, "add", "-A")
    if git(root, "status", "--porcelain"):
        git(root, "commit", "-q", "-m", f"grow x{copies}")


def clone(src: Path, dest: Path) -> Path:
    if not (dest / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(src), str(dest)], check=True)
    return dest


def status(root: Path) -> dict:
    return json.loads(hippo(["status", "--json"], root, _env())[1])


def index(root: Path) -> float:
    return hippo(["index", "--quiet"], root, _env())[0]


def start_server(root: Path) -> subprocess.Popen:
    from hippo.surfaces.service.client import request

    server = subprocess.Popen([sys.executable, "-m", "hippo", "serve", "--root", str(root), "--idle", "600"],
                              cwd=root, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while request(root / ".hippo", {"op": "ping"}, timeout=2) is None:
        if server.poll() is not None or time.time() > deadline:
            raise RuntimeError("hippo serve did not come up")
        time.sleep(0.2)
    return server


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(10)


Row = tuple[str, list[float], list[float], str]  # name, wall ms, CPU ms, note


def bench_search(root: Path, target_chunks: int, runs: int) -> list[Row]:
    from hippo.surfaces.service.client import server_running

    idx = root / ".hippo"
    if server_running(idx):
        sys.exit(f"a query server is already running for {root}: stop it first (cold numbers need none)")
    if not (idx / "state.json").exists():
        print(f"indexing {root.name} (real model) ...", file=sys.stderr)
        index(root)
    chunks = int(status(root).get("chunks") or 0)
    copies = len([p for p in root.glob("grow*") if p.is_dir()])
    base = max(1, chunks // (copies + 1))
    need = max(0, math.ceil(target_chunks / base) - 1)
    if need > copies or chunks < target_chunks:
        print(f"growing to ~{target_chunks} chunks ({need} copies of {base}) ...", file=sys.stderr)
        grow(root, need)
        index(root)
    chunks = int(status(root).get("chunks") or 0)
    rows = []
    cold_env = _env(HIPPO_NO_SERVER="1")
    floor = measured(lambda i: run([sys.executable, "-c", "pass"], root, cold_env)[0], runs)
    rows.append(("python -c pass (interpreter floor)", *floor, "what any Python CLI pays on this machine now"))
    cold = measured(lambda i: hippo(["search", QUERIES[i % len(QUERIES)], "--format", "xml"], root, cold_env)[0],
                    max(3, runs // 3))
    rows.append((f"search, cold (no server), {chunks} chunks", *cold, "imports + open + model load + query"))
    server = start_server(root)
    try:
        hippo(["search", "warm up", "--format", "xml"], root, _env())
        lat: list[float] = []

        def one(i: int) -> float:
            ms, out = hippo(["search", QUERIES[i % len(QUERIES)], "--format", "xml"], root, _env())
            lat.append(float(out.split("<latency_ms>")[1].split("<")[0]))
            return ms

        warm = measured(one, runs)
        rows.append((f"search, warm (server up), {chunks} chunks", *warm,
                     f"CLI process + socket; the server's own search p50 {pct(lat, 0.5):.0f} ms"))
    finally:
        stop(server)
    return rows


def bench_index(root: Path, target_files: int, runs: int) -> list[Row]:
    from hippo.surfaces.service.client import server_running

    if server_running(root / ".hippo"):
        sys.exit(f"a query server is already running for {root}: stop it first (the in-process rows need none)")
    base = len(tracked(root))
    copies = len([p for p in root.glob("grow*") if p.is_dir()])
    grow(root, max(copies, math.ceil(target_files / base) - 1))
    files = len(git(root, "ls-files", "-z").split("\0")) - 1
    print(f"indexing {files} files ...", file=sys.stderr)
    index(root)
    index(root)  # settle: anything the first run left for later
    noop = measured(lambda i: index(root), runs)
    candidates = [f for f in tracked(root) if f.endswith(".py")] or tracked(root)
    edits = iter(range(10**6))

    def edit_one(i: int) -> float:
        n = next(edits)
        path = root / candidates[(n * 7) % len(candidates)]
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n# cli_speed edit {n}\n")
        return index(root)

    one = measured(edit_one, runs)
    rows: list[Row] = [(f"index, no-op, {files} files", *noop, "no server: the CLI runs the indexer"),
                       (f"index, 1 file edited, {files} files", *one, "no server: imports lancedb, loads the model")]
    server = start_server(root)
    try:
        index(root)  # the server's first run pays what a first run pays (state, model)
        noop_warm = measured(lambda i: index(root), runs)
        one_warm = measured(edit_one, runs)
    finally:
        stop(server)
    rows += [(f"index, no-op, {files} files, server up", *noop_warm, "handed to the warm server"),
             (f"index, 1 file edited, {files} files, server up", *one_warm, "handed to the warm server")]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True, help="a real git repository to clone and grow")
    ap.add_argument("--work", default="", help="work dir (kept between runs: the base index is reused)")
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", choices=["search", "index"], default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    src = Path(a.repo).resolve()
    work = Path(a.work or (Path(os.environ.get("TMPDIR", "/tmp")) / "hippo-cli-speed")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    root = clone(src, work / "repo")  # one clone: the index grown for search keeps its vectors for the index runs
    if a.only in (None, "search"):
        rows += bench_search(root, a.chunks, a.runs)
    if a.only in (None, "index"):
        rows += bench_index(root, a.files, a.runs)
    load = os.getloadavg()
    print(f"\n{'what':<56} {'runs':>4} {'wall p50':>8} {'wall p95':>8} {'CPU p50':>8} {'load':>5}  note (ms)")
    for (name, xs, cpu, note), ld in zip(rows, LOAD, strict=True):
        print(f"{name:<56} {len(xs):>4} {pct(xs, 0.5):>8.0f} {pct(xs, 0.95):>8.0f} {pct(cpu, 0.5):>8.0f} {ld:>5.1f}  {note}")
    print(f"\nload average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores")
    if a.json:
        print(json.dumps({"rows": [{"name": n, "p50_ms": round(pct(x, 0.5)), "p95_ms": round(pct(x, 0.95)),
                                    "max_ms": round(max(x)), "cpu_p50_ms": round(pct(c, 0.5)), "runs": len(x),
                                    "load": round(ld, 1)}
                                   for (n, x, c, _), ld in zip(rows, LOAD, strict=True)],
                          "loadavg": load, "repo_commit": git(src, "rev-parse", "HEAD").strip()}))


if __name__ == "__main__":
    main()
