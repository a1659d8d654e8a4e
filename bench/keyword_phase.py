"""CPU and wall of one fresh keyword phase, chunked in-process vs in worker processes (index/parallel.py).

    python -m bench.keyword_phase --repo TREE --rounds 2    (TREE: e.g. a bench/monorepo.py tree)

Each measurement is a fresh interpreter building a keyword-only index (the tests' fake embedder, no vectors) of
`--repo` into a throwaway index dir; the two paths alternate so both see the same machine load. CPU is user+sys
of that process and its children (the workers), taken around `Indexer._keyword_phase` and around the whole
run; the keyword phase's CPU is also split into the main process's and the workers' (the larger of the two is
a floor for the phase's wall time on an otherwise idle machine with enough cores). The load average is printed
with each line: on a shared machine wall time says more about the neighbours than about hippo.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.fake_model import use_fake

ONE_RUN = r"""
import json, os, resource, sys, time
from pathlib import Path
from hippo.core.config import load_settings
from hippo.index import indexer
from fake_embedder import FakeEmbedder

def own():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def cpu():
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own() + kids.ru_utime + kids.ru_stime

phase = {}
real = indexer.Indexer._keyword_phase
def timed(self, *a, **kw):
    c, o, w = cpu(), own(), time.monotonic()
    real(self, *a, **kw)
    phase.update(cpu=cpu() - c, own=own() - o, wall=time.monotonic() - w)
indexer.Indexer._keyword_phase = timed
root = Path(sys.argv[1])
c, w = cpu(), time.monotonic()
report = indexer.Indexer(root, load_settings(root), embedder=FakeEmbedder()).run(vectors=False)
run = {"run_cpu": cpu() - c, "run_wall": time.monotonic() - w}
print(json.dumps({"files": report.files_changed, "chunks": report.chunks_written, "phase_cpu": phase["cpu"],
                  "phase_own": phase["own"], "phase_wall": phase["wall"], **run}))
"""


def measure(repo: Path, parallel: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="hippo-kw-") as tmp:
        env = {**os.environ, "HIPPO_INDEX_DIR": str(Path(tmp) / "idx"), "HIPPO_NO_BACKGROUND_INDEX": "1",
               "HIPPO_PARALLEL_MIN_FILES": "1" if parallel else str(10**9)}
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, "-c", ONE_RUN, str(repo)], env=env, capture_output=True, text=True,
                             check=True, cwd=tmp).stdout
        return {**json.loads(out.strip().splitlines()[-1]), "load": (load, os.getloadavg()[0])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    os.environ["HIPPO_MODEL"] = use_fake()
    print("| path | files | chunks | keyword phase CPU s (main process + workers) | wall s | whole run CPU s | wall s "
          "| load avg (1 min) |")
    print("|---|---|---|---|---|---|---|---|")
    for _ in range(args.rounds):
        for parallel in (False, True):
            r = measure(args.repo.resolve(), parallel)
            workers = max(0.0, r["phase_cpu"] - r["phase_own"])
            print(f"| {'workers' if parallel else 'in-process'} | {r['files']:,} | {r['chunks']:,} | "
                  f"{r['phase_cpu']:.2f} ({r['phase_own']:.2f} + {workers:.2f}) | {r['phase_wall']:.2f} | "
                  f"{r['run_cpu']:.2f} | {r['run_wall']:.2f} | {r['load'][0]:.2f}-{r['load'][1]:.2f} |", flush=True)

if __name__ == "__main__":
    main()
