"""What a failure's working-tree diff costs with and without the warm server's watch (service/watch.py).

Usage: python bench/watch_bench.py [--repo PATH | --files N ...] [--runs N]
Without --repo, builds a synthetic repo of N files (10 a folder, 3 folders deep) for each --files value,
with `git update-index --index-info` (seconds even at 100k). For each repo, prints the CPU (this process
and its git children, user+sys) and wall time of `changes.working_tree`:
- whole tree: `git diff HEAD` over every tracked file (what every failure paid before the watch);
- watched, nothing changed: the sentinel round-trip and no git call;
- watched, one file edited just before: the round-trip and `git diff HEAD -- <that file>`;
- watched, right after `git add`: the request waits for the refresh (ls-files + a whole-tree --name-only);
and the watch's start-up (list, watch every tracked folder, first refresh) with its folder count.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}


def synthetic(dest: Path, n: int) -> Path:
    """`n` small Python files, 10 a folder, committed and checked out."""
    dest.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    blobs = []
    for k in range(16):
        text = "".join(f"def f{k}_{i}(x):\n    return x + {i}\n\n" for i in range(20)).encode()
        blobs.append(subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=dest, input=text, check=True,
                                    capture_output=True).stdout.decode().strip())
    lines = "".join(f"100644 {blobs[i % 16]}\tsrc/d{i // 1000}/e{i // 100 % 10}/f{i // 10 % 10}/m{i}.py\n"
                    for i in range(n))
    subprocess.run(["git", "update-index", "--add", "--index-info"], cwd=dest, input=lines.encode(), check=True)
    subprocess.run(["git", "commit", "-q", "-m", "base"], cwd=dest, env=GIT_ENV, check=True)
    subprocess.run(["git", "checkout-index", "-a", "-f"], cwd=dest, check=True)
    return dest


def cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def measure(runs: int, before, work) -> tuple[float, float, float]:
    """(median CPU ms, median wall ms, p95 wall ms) of `work()` after `before()` each time (not timed)."""
    cpus, walls = [], []
    for i in range(runs):
        before(i)
        c, t = cpu(), time.perf_counter()
        work()
        walls.append((time.perf_counter() - t) * 1000)
        cpus.append((cpu() - c) * 1000)
    walls.sort()
    return statistics.median(cpus), statistics.median(walls), walls[min(len(walls) - 1, round(0.95 * (len(walls) - 1)))]


def bench(root: Path, runs: int) -> list[tuple[str, float, float, float]]:
    from hippo.core import indexdir
    from hippo.push.diagnosis import changes
    from hippo.surfaces.service.watch import TreeWatch

    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout.split("\n")
    target = root / next(f for f in files if f.endswith(".py"))
    original = target.read_bytes()
    rows = []
    idx = Path(tempfile.mkdtemp(prefix="hippo-watch-idx-"))
    indexdir.create(idx)

    def edit(i: int) -> None:
        target.write_bytes(original + f"\nedited_{i} = {i}\n".encode())

    try:
        rows.append(("whole tree, one file edited", *measure(runs, edit, lambda: changes.working_tree(root))))
        target.write_bytes(original)
        c, t = cpu(), time.perf_counter()
        w = TreeWatch(root, idx)
        if not w.start():
            sys.exit("the watch cannot run here (not Linux, or not a local file system)")
        changes.track(root, w)
        while w.refreshes == 0 and w.broken is None:
            time.sleep(0.01)
        rows.append((f"watch start-up ({len(w._dirs)} folders)", (cpu() - c) * 1000, (time.perf_counter() - t) * 1000, 0.0))
        changes.working_tree(root)
        rows.append(("watched, nothing changed", *measure(runs, lambda i: None, lambda: changes.working_tree(root))))
        rows.append(("watched, one file edited", *measure(runs, edit, lambda: changes.working_tree(root))))
        target.write_bytes(original)

        def stage(i: int) -> None:
            target.write_bytes(original + f"\nstaged_{i} = {i}\n".encode())
            subprocess.run(["git", "add", "--", str(target)], cwd=root, check=True)

        rows.append(("watched, just after `git add`", *measure(max(3, runs // 4), stage, lambda: changes.working_tree(root))))
        changes.track(root, None)
        w.close()
    finally:
        target.write_bytes(original)
        subprocess.run(["git", "reset", "-q"], cwd=root, check=False)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", default=[])
    ap.add_argument("--files", type=int, action="append", default=[])
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    repos = [Path(r).resolve() for r in a.repo]
    tmp = Path(tempfile.mkdtemp(prefix="hippo-watch-bench-"))
    for n in a.files or ([] if repos else [10_000, 100_000]):
        t = time.perf_counter()
        repos.append(synthetic(tmp / f"repo{n}", n))
        print(f"built a {n}-file repo in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    print(f"{'repo':>28} {'tracked':>8}  {'case':38} {'CPU ms':>8} {'wall p50':>9} {'wall p95':>9}")
    for root in repos:
        n = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, check=True).stdout.count(b"\n")
        for name, c, p50, p95 in bench(root, a.runs):
            print(f"{root.name[-28:]:>28} {n:8d}  {name:38} {c:8.1f} {p50:9.1f} {p95:9.1f}")


if __name__ == "__main__":
    main()
