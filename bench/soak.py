"""Long trust runs: many kill -9 crashes with recovery checks, and a long soak of the warm server.

    python bench/soak.py --crash 40 --soak 3000 --out soak.json

--crash N: N cycles on one generated repo. Each cycle mutates the repo (edits, adds, deletes, a commit),
  then kills `hippo index` either inside a random phase (tests/fixtures/trust/kill_driver.py) or from
  outside at a random moment, sometimes twice in a row; a normal run must then leave an index equal to a
  fresh full build. Counts kills, recoveries, mismatches and errors.
--soak N: N mixed requests (in-process hook runs through the real entry point, `python -m hippo hook`
  subprocesses, searches, raw socket garbage) against `python -m hippo serve` while the repo changes and
  `hippo index` runs every --update-every requests; reports the server's RSS and open files over time.
Uses the tests' fake embedder (HIPPO_MODEL=fake_embedder:FakeEmbedder, no model weights; bench/fake_model.py).
The CI-sized versions are tests/test_trust_*.py.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "fixtures" / "trust"), str(HERE.parent)]
from bench.fake_model import use_fake  # noqa: E402

use_fake()  # trustkit and kill_driver (here and in every child) import tests/fake_embedder.py
import kill_driver  # noqa: E402
import soaklib  # noqa: E402
import trustkit  # noqa: E402

DRIVER = HERE.parent / "tests" / "fixtures" / "trust" / "kill_driver.py"
# (phase, highest call number worth aiming at) for a repo of ~300 files changing ~40 per cycle
PHASE_CALLS = {"discovery": 1, "chunking": 40, "writing": 2, "state": 4, "fts": 1, "embedding": 4,
               "vector-writing": 2, "compaction": 1}


def crash_cycles(work: Path, cycles: int, seed: int, log) -> dict:
    rng = random.Random(seed)
    root = trustkit.make_repo(work / "crash", files=300, seed=seed)
    fig = {"cycles": 0, "kills": 0, "kills_by_phase": {}, "not_reached": 0, "recoveries_equal": 0,
           "mismatches": 0, "errors": [], "double_kills": 0}
    assert set(PHASE_CALLS) == set(kill_driver.PHASES)
    for c in range(cycles):
        fig["cycles"] += 1
        if c:
            soaklib.mutate(root, rng, n=rng.randint(5, 60))
        for _ in range(2 if rng.random() < 0.25 else 1):
            if rng.random() < 0.7:
                phase = rng.choice(sorted(PHASE_CALLS))
                nth = rng.randint(1, PHASE_CALLS[phase])
                proc = subprocess.run([sys.executable, str(DRIVER), phase, str(nth), f"{rng.uniform(0, 0.05)}",
                                       str(root)], capture_output=True, timeout=600, env=trustkit.env())
                label = phase
            else:
                p = trustkit.hippo_popen(["index", "--quiet"], root)
                time.sleep(rng.uniform(0.05, 4.0))
                p.kill()
                p.communicate(timeout=120)
                proc = p
                label = "random-time"
            if proc.returncode == -9:
                fig["kills"] += 1
                fig["kills_by_phase"][label] = fig["kills_by_phase"].get(label, 0) + 1
            elif proc.returncode == 0:
                fig["not_reached"] += 1  # the run finished before the kill point
            else:
                fig["errors"].append(f"cycle {c} {label}: exit {proc.returncode}")
        rec = trustkit.hippo(["index", "--quiet"], root, timeout=600)
        if rec.returncode != 0:
            fig["errors"].append(f"cycle {c} recovery: {rec.stderr.decode(errors='replace')[-300:]}")
            continue
        try:
            same = trustkit.snapshot(root / ".hippo") == trustkit.fresh_snapshot(root)
        except AssertionError as exc:
            same = False
            fig["errors"].append(f"cycle {c}: {exc}")
        fig["recoveries_equal" if same else "mismatches"] += 1
        log(f"crash cycle {c + 1}/{cycles}: kills {fig['kills']}, equal {fig['recoveries_equal']}, "
            f"mismatches {fig['mismatches']}")
    fig["double_kills"] = max(0, fig["kills"] + fig["not_reached"] - fig["cycles"])
    return fig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--crash", type=int, default=30, help="kill/recover cycles (0 to skip)")
    ap.add_argument("--soak", type=int, default=3000, help="soak requests (0 to skip)")
    ap.add_argument("--hook-procs", type=int, default=150, help="real hook subprocesses within the soak")
    ap.add_argument("--update-every", type=int, default=250)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args()
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="hippo-soak-") as tmp:
        work = Path(tmp)
        import os

        os.environ["HIPPO_HOME"] = str(work / "home")
        os.environ.update(trustkit.QUIET_ENV)
        os.environ.pop("HIPPO_NO_SERVER")  # in-process hooks talk to the live server
        if args.crash:
            t = time.monotonic()
            figures["crash"] = crash_cycles(work, args.crash, args.seed, log)
            figures["crash"]["seconds"] = round(time.monotonic() - t, 1)
        if args.soak:
            root = trustkit.make_repo(work / "soak", files=150, seed=args.seed)
            assert trustkit.hippo(["index", "--quiet"], root).returncode == 0
            figures["soak"] = soaklib.soak(root, args.soak, args.hook_procs, args.update_every, args.seed, log)
    text = json.dumps(figures, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    bad = figures.get("crash", {}).get("mismatches", 0) + len(figures.get("crash", {}).get("errors", [])) \
        + len(figures.get("soak", {}).get("errors", []))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
