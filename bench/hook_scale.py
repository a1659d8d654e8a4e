"""The warm failure hook at index scale: real repositories, real recorded failures, ~50k chunks.

    REALFAIL_MIRRORS=<dir of owner+name/repo> python -m bench.hook_scale [--dir DIR] [--chunks 50000]
        [--runs 3] [--profile N] [--no-server]

Builds (once, in DIR; reused when DIR already holds it) one git repository holding the trees of the
bench/realfail repositories at the commits of their recorded fix-commit failures, each in a directory of
its own (plus rich and httpx), then copies of those trees (smallest first) until the index holds about
--chunks chunks (fake embedder: the model is not what grows with the index). The failures are the recorded outputs of those cases ({ROOT} pointing at
their tree), so the hook meets pytest, unittest, jest, vitest, mocha and node:test output as it comes.

Two measurements over the same cases, after one warm-up pass:
- **in-process**: `WarmIndex.handle({"op": "hook", ...})`, what the warm server runs for a failed
  command: wall and CPU (this process plus its git children) per call; `--profile N` prints cProfile's
  N most expensive functions over the first-sight pass.
- **server**: `hippo serve` running, a fresh `python -m hippo hook tool-failure` per call, as Claude Code
  runs it: wall per call, and the CPU of the hook process and of the server per call.
Wall times on a shared box are inflated by load; the CPU columns are the steadier figure.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench.fake_model import use_fake
from bench.realfail.workspace import mirror_dir, restore

HERE = Path(__file__).resolve().parent
CASES = HERE / "realfail" / "cases"
PER_REPO = 3  # recorded failures taken from each repository
EXTRA = ("Textualize/rich", "encode/httpx")  # bigger trees without recorded cases, at their mirror's HEAD
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}


def _cases() -> list[dict]:
    out = []
    for f in sorted(CASES.glob("fixes-*.jsonl")):
        rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        out += [r for r in rows if r.get("error")][:PER_REPO]
    return out


def _export(repo: str, commit: str, dest: Path) -> bool:
    """The tree of `repo` at `commit` written to `dest` (no .git); False without a mirror."""
    mirror = mirror_dir(repo)
    if not mirror.is_dir():
        return False
    proc = subprocess.run(["git", "--git-dir", str(mirror), "archive", "--format=tar", commit], capture_output=True)
    if proc.returncode != 0:
        return False
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return True


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def _index(root: Path) -> int:
    fake = use_fake()  # before os.environ is copied: it puts tests/ on PYTHONPATH
    env = {**os.environ, "HIPPO_MODEL": fake, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet"], cwd=root, env=env, check=True)
    state = json.loads((root / ".hippo" / "state.json").read_text())
    return sum(f.get("chunks", 0) for f in state["files"].values())


def _chunks_per_tree(root: Path) -> dict[str, int]:
    state = json.loads((root / ".hippo" / "state.json").read_text())
    out: dict[str, int] = {}
    for path, rec in state["files"].items():
        parts = path.split("/")
        if parts[0] == "src" and len(parts) > 2:
            out[parts[1]] = out.get(parts[1], 0) + rec.get("chunks", 0)
    return out


def build(root: Path, target: int) -> list[dict]:
    """The repository (built unless `root/cases.json` says it is) and its cases as hook payloads."""
    manifest = root / "cases.json"
    if manifest.exists():
        return json.loads(manifest.read_text())
    root.mkdir(parents=True, exist_ok=True)
    payloads, trees = [], []
    for case in _cases():
        tree = root / "src" / f"{case['repo'].split('/')[1]}-{case['commit'][:8]}"
        if not tree.exists() and not _export(case["repo"], case["commit"], tree):
            continue
        trees.append(tree)
        payloads.append({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "id": case["id"],
                         "tool_input": {"command": case["command"]}, "cwd": str(tree),
                         "error": restore(case["error"], tree, root / "env")})
    for repo in EXTRA:
        tree = root / "src" / repo.split("/")[1]
        if _export(repo, "HEAD", tree):
            trees.append(tree)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    chunks = _index(root)
    per_tree = _chunks_per_tree(root)
    need, copied, i = target - chunks, 0, 0
    while need > 0:  # whole copies of the trees, smallest first, while they fit under the target
        fits = [(n, t) for t, n in sorted(per_tree.items(), key=lambda kv: kv[1]) if n <= need]
        if not fits:
            break
        for n, tree in fits:
            if n <= need:
                shutil.copytree(root / "src" / tree, root / f"team{i}" / "src" / tree)
                need -= n
                copied += 1
        i += 1
    print(f"base: {chunks} chunks in {len(per_tree)} trees; {copied} tree copies added", file=sys.stderr)
    if copied:
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "copies")
        _index(root)
    # the last commit is what a session's last commit usually is, a small edit, not the bulk copy above
    # (the diagnosis diffs HEAD~1..HEAD on every failure)
    with (root / "NOTES.md").open("a") as fh:
        fh.write("\nbench notes: trees under src/ and team*/ are exported from their mirrors.\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "notes")
    _index(root)
    manifest.write_text(json.dumps(payloads))
    return payloads


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def in_process(root: Path, payloads: list[dict], runs: int, profile: int) -> dict:
    os.environ["HIPPO_MODEL"] = use_fake()
    from fake_embedder import FakeEmbedder
    from hippo.surfaces.service.host import WarmIndex

    warm = WarmIndex(root, embedder=FakeEmbedder())
    warm.warm()
    tag = f"{os.getpid()}-{time.time():.0f}"

    def one(p: dict, i: int) -> tuple[float, float, int]:
        req = {"op": "hook", "event": "tool-failure", "payload": {**p, "session_id": f"{p['id']}-{i}-{tag}"}}
        t, c, k = time.perf_counter(), time.process_time(), _children_cpu()
        reply = warm.handle(req)
        wall = (time.perf_counter() - t) * 1000
        cpu = (time.process_time() - c + _children_cpu() - k) * 1000
        out = (reply.get("result") or {}).get("output") or {}
        return wall, cpu, len(((out.get("hookSpecificOutput") or {}).get("additionalContext")) or "")

    one(payloads[0], -2)  # the very first call builds the per-version caches (symbols, spans, graph)
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    first = [one(p, -1) for p in payloads]  # first sight of each failure: nothing about it cached yet
    if prof is not None:
        prof.disable()
    walls, cpus, sizes = [], [], []
    for i in range(runs):
        for p in payloads:
            w, c, n = one(p, i)
            walls.append(w)
            cpus.append(c)
            sizes.append(n)
    res = {"walls": walls, "cpus": cpus, "sizes": sizes, "first_walls": [w for w, _, _ in first],
           "first_cpus": [c for _, c, _ in first]}
    if prof is not None:  # of the first-sight pass
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(profile)
        res["profile"] = s.getvalue()
    warm.close()
    return res


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def with_server(root: Path, payloads: list[dict], runs: int) -> dict:
    from hippo.surfaces.service.client import request

    fake = use_fake()
    env = {**os.environ, "HIPPO_MODEL": fake, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    idx = root / ".hippo"
    server = subprocess.Popen([sys.executable, "-m", "hippo", "serve", "--root", str(root), "--idle", "600"],
                              cwd=root, env=env, start_new_session=True)
    tag = f"{os.getpid()}-{time.time():.0f}"
    walls, hook_cpu, server_cpu = [], [], []
    try:
        deadline = time.time() + 300
        while request(idx, {"op": "ping"}, timeout=1) is None and time.time() < deadline:
            time.sleep(0.5)

        def one(p: dict, i: int) -> tuple[float, float, float]:
            body = json.dumps({**p, "session_id": f"s-{p['id']}-{i}-{tag}"}).encode()
            s, k, t = _proc_cpu(server.pid), _children_cpu(), time.perf_counter()
            subprocess.run([sys.executable, "-m", "hippo", "hook", "tool-failure"], input=body, capture_output=True,
                           env=env, timeout=60)
            return (time.perf_counter() - t) * 1000, (_children_cpu() - k) * 1000, (_proc_cpu(server.pid) - s) * 1000

        first = [one(p, -1) for p in payloads][1:]
        for i in range(runs):
            for p in payloads:
                w, h, c = one(p, i)
                walls.append(w)
                hook_cpu.append(h)
                server_cpu.append(c)
    finally:
        server.terminate()
        server.wait(10)
    return {"walls": walls, "hook_cpu": hook_cpu, "server_cpu": server_cpu, "first_walls": [f[0] for f in first],
            "first_hook_cpu": [f[1] for f in first], "first_server_cpu": [f[2] for f in first]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", help="where the repository is built (kept; reused by the next run)")
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0)
    ap.add_argument("--no-server", action="store_true")
    a = ap.parse_args(argv)
    root = Path(a.dir or tempfile.mkdtemp(prefix="hippo-hook-scale-")).resolve()
    payloads = build(root, a.chunks)
    state = json.loads((root / ".hippo" / "state.json").read_text())
    chunks = sum(f.get("chunks", 0) for f in state["files"].values())
    print(f"{chunks} chunks, {len(state['files'])} files, {len(payloads)} recorded failures x {a.runs} runs; "
          f"load average {os.getloadavg()[0]:.1f}")
    rows = []
    r = in_process(root, payloads, a.runs, a.profile)
    answered = sum(1 for n in r["sizes"] if n) / max(1, len(r["sizes"]))
    rows.append(("in-process, first sight of each failure", r["first_walls"], r["first_cpus"], None))
    rows.append(("in-process, repeated failures", r["walls"], r["cpus"], None))
    if not a.no_server:
        s = with_server(root, payloads, a.runs)
        rows.append(("hook process + server, first sight", s["first_walls"], s["first_hook_cpu"], s["first_server_cpu"]))
        rows.append(("hook process + server, repeated", s["walls"], s["hook_cpu"], s["server_cpu"]))
    print("| path | wall p50 ms | wall p95 ms | CPU p50 ms (hook process) | CPU p95 ms | server CPU p50 / p95 ms |")
    print("|---|---|---|---|---|---|")
    for name, walls, cpus, srv in [row for row in rows if row[1]]:
        extra = f"{statistics.median(srv):.0f} / {pct(srv, 0.95):.0f}" if srv else "-"
        print(f"| {name} | {statistics.median(walls):.0f} | {pct(walls, 0.95):.0f} | {statistics.median(cpus):.0f} | "
              f"{pct(cpus, 0.95):.0f} | {extra} |")
    if r["sizes"]:
        print(f"answered (code injected) on {answered:.0%} of calls; median answer "
              f"{statistics.median(r['sizes']):.0f} chars")
    if r.get("profile"):
        print(r["profile"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
