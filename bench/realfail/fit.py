"""Fit the suspect weights (policy.SUSPECT_WEIGHTS) on the tuning split, reproducibly.

Two steps:
- `record`: run the failure hook on the tuning split's fix commits (the same trees and indexes as
  bench.realfail.run) and write, per case, every definition the code graph reached with its raw features
  (suspects.features), whether it overlaps the fix function (a pointer to it names the fix), whether the
  window it would show with code does (shown_window), and whether hippo's other evidence already shows
  the fix;
- `fit`: a coordinate search over the weights that maximises, on that record, the cases whose fix
  function ranks among the suspects shown with code (SUSPECT_SHOWN, at distance >= 2) plus those among
  the shown and surely pointed-to ones (SUSPECT_SHOWN + POINTERS_RESERVED). No hook runs; seconds.

    python -m bench.realfail.fit record --fast [--repo R] [--out suspects.jsonl]
    python -m bench.realfail.fit fit suspects.jsonl

Only `--split tune` cases are ever recorded. The weights printed are copied into policy.SUSPECT_WEIGHTS
by hand (the only place they live); rerun the benchmark to see what they do end to end.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

STEPS = (-8.0, -4.0, -2.0, -1.0, 1.0, 2.0, 4.0, 8.0)
ROUNDS = 6
REG = 0.3  # per unit of weight moved from the starting point: a move must gain cases, ties keep the start


def record(args) -> int:
    from bench.fake_model import use_fake
    from bench.realfail import run, scoring
    from hippo.index.embedding import load_embedder
    from hippo.push.diagnosis import suspects

    args.split, args.kind = "tune", ["fix"]
    cases = run.select_cases(args)
    box: list = []
    original, original_walk = suspects.rank, suspects.walk
    starts: list = []

    def capture(reached, clues, test_words, *a, **kw):
        ranked = original(reached, clues, test_words, *a, **kw)
        box.append((ranked, clues, test_words))
        return ranked

    def capture_walk(graph, tests):
        starts[:] = tests
        return original_walk(graph, tests)

    lock = run._exclusive_cache()
    if lock is None:
        print("realfail fit: another run is using the work trees; wait for it", file=sys.stderr)
        return 2
    suspects.rank = capture  # type: ignore[assignment]
    suspects.walk = capture_walk  # type: ignore[assignment]
    depth = suspects.MAX_DEPTH
    suspects.MAX_DEPTH = args.depth or depth  # a deeper record: `fit --max-distance` compares depths
    embedder = load_embedder(use_fake()) if args.fast else load_embedder()
    out = args.out.open("w")
    try:
        for case, work, rec in run.evaluated(cases, embedder, args.fast, lambda: (box.clear(), starts.clear())):
            gold = case.get("gold") or {}
            cands = []
            ranked, clues, test_words = box[-1] if box else ([], frozenset(), frozenset())
            for s in ranked:
                span = scoring.Span(s.d.path, s.d.start, s.d.end)
                lo, hi = shown_window(work, s.d, clues)
                cands.append({"path": s.d.path, "qual": s.d.qual, "start": s.d.start, "end": s.d.end,
                              "distance": s.distance, "gold": scoring.score([span], gold)["function"],
                              "gold_shown": scoring.score([scoring.Span(s.d.path, lo, hi)], gold)["function"],
                              "features": s.features})
            row = {"id": case["id"], "repo": case["repo"], "shown_by_frames": rec["shown_by_frames"],
                   "hippo_shown": rec["hippo"]["function"], "hippo_named": rec["hippo"]["named"],
                   "other_shown": _other_shown(rec), "reached": any(c["gold"] for c in cands),
                   "clues": sorted(clues), "test_words": sorted(test_words), "work": str(work),
                   "tests": [{"path": d.path, "start": d.start, "end": d.end} for d in starts],
                   "candidates": cands}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(f"  {case['id']}: {len(cands)} suspects, gold reached={row['reached']} "
                  f"shown={int(rec['hippo']['function'])} named={int(rec['hippo']['named'])}", flush=True)
    finally:
        out.close()
        suspects.rank, suspects.walk = original, original_walk  # type: ignore[assignment]
        suspects.MAX_DEPTH = depth
    return 0


def shown_window(work: Path, d, clues: frozenset[str]) -> tuple[int, int]:
    """About the lines a suspect shows when it gets a code slot (pipeline._suspects, evidence.window,
    policy.select): the whole definition when short, else MAX_SUSPECT_LINES around its line most like the
    failure, cut to an even share of the code budget. A long definition that holds the fix is named by a
    pointer, but shown only when this window reaches the fix."""
    from hippo.push.diagnosis import policy
    from hippo.push.diagnosis.pipeline import _best_line

    try:
        lines = (work / d.path).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return d.start, d.end
    n = policy.MAX_SUSPECT_LINES
    focus = _best_line(lines, d.start, d.end, clues) if d.end - d.start + 1 > n else d.start
    lo = max(d.start, focus - n // 3)
    hi = min(d.end, lo + n - 1)
    lo = max(d.start, hi - n + 1)
    # the code budget is shared: a suspect's span is cut to its share, whole lines around the focus
    # (policy._cut), so count only the lines that fit
    room = policy.code_budget(policy.SNIPPET_BUDGET, policy.POINTERS_RESERVED) // policy.SUSPECT_SHOWN
    text = "\n".join(lines[lo - 1:hi])
    if len(text) > room:
        lo, hi, _ = policy._cut(text, lo, focus, room)
    return lo, hi


def _other_shown(rec: dict) -> bool:
    """Hippo showed the fix through a span that is not a suspect's (frames, definitions, changes): the
    answer's results in order, each with its why; a suspect's why starts with one of WHY_PREFIXES."""
    import re

    from bench.realfail import scoring
    from hippo.push.diagnosis.suspects import WHY_PREFIXES

    whys = re.findall(r'<result score="[^"]*"(?: why="([^"]*)")?>', rec["hippo"]["context"])
    spans = [scoring.Span(**d) for d in rec["hippo"]["spans"]]
    other = [s for s, why in zip(spans, whys, strict=False) if not why.startswith(WHY_PREFIXES)]
    return scoring.score(other, rec["gold"])["function"]


def objective(rows: list[dict], w: dict[str, float], shown_k: int, named_k: int,
              min_shown_distance: int) -> tuple[int, int]:
    """(cases shown, cases named) under weights `w`, counting the fix shown by other evidence too."""
    from hippo.push.diagnosis.suspects import NAMED_POINTERS

    shown = named = 0
    for r in rows:
        ranked = sorted(r["candidates"], key=lambda c: (-(w["base"] + sum(w[k] * v for k, v in c["features"].items())),
                                                        c["distance"], c["path"], c["start"]))
        drop = {id(c) for c in [c for c in ranked if c["features"].get("named_like")][NAMED_POINTERS:]}  # suspects.capped
        top = [c for c in ranked if id(c) not in drop][:named_k]
        # found by name alone (suspects.named_like): named, never shown with code (pipeline._suspects)
        code = [c for c in top if c["distance"] >= min_shown_distance and not c["features"].get("named_like")][:shown_k]
        s = r["other_shown"] or any(c.get("gold_shown", c["gold"]) for c in code)
        shown += s
        named += s or any(c["gold"] for c in top)
    return shown, named


def fit(args) -> int:
    from hippo.push.diagnosis import policy

    rows = [json.loads(line) for line in args.record.read_text().splitlines() if line.strip()]
    if args.max_distance:
        for r in rows:
            r["candidates"] = [c for c in r["candidates"] if c["distance"] <= args.max_distance]
            r["reached"] = any(c["gold"] for c in r["candidates"])
    start = dict(policy.SUSPECT_WEIGHTS)
    keys = [k for k in start if k != "base"]
    k_shown, k_named = policy.SUSPECT_SHOWN, policy.SUSPECT_SHOWN + policy.POINTERS_RESERVED

    def value(w: dict[str, float]) -> float:
        s, n = objective(rows, w, k_shown, k_named, policy.SUSPECT_MIN_SHOWN_DISTANCE)
        return s + n - REG * sum(abs(w[k] - start[k]) for k in keys)

    w = dict(start)
    best = value(w)
    for _ in range(ROUNDS):
        moved = False
        for k in keys:
            for step in STEPS:
                trial = {**w, k: w[k] + step}
                v = value(trial)
                if v > best + 1e-9:
                    w, best, moved = trial, v, True
        if not moved:
            break
    before = objective(rows, start, k_shown, k_named, policy.SUSPECT_MIN_SHOWN_DISTANCE)
    after = objective(rows, w, k_shown, k_named, policy.SUSPECT_MIN_SHOWN_DISTANCE)
    reached = sum(1 for r in rows if r["reached"])
    print(f"{len(rows)} tune cases, fix function reached by the graph in {reached}")
    print(f"shown/named (simulated): before {before[0]}/{before[1]}, after {after[0]}/{after[1]}")
    for dist in (1, 2):
        print(f"  with suspects shown from distance {dist}: {objective(rows, w, k_shown, k_named, dist)}")
    print("SUSPECT_WEIGHTS = {")
    for k, v in w.items():
        print(f'    "{k}": {v:.1f},')
    print("}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="run the tuning split's fix commits and write each one's suspects")
    rec.add_argument("--fast", action="store_true")
    rec.add_argument("--repo", action="append")
    rec.add_argument("--case", action="append")
    rec.add_argument("--limit", type=int, default=0)
    rec.add_argument("--out", type=Path, default=Path("suspects.jsonl"))
    rec.add_argument("--depth", type=int, default=0, help="walk this many calls deep (default suspects.MAX_DEPTH)")
    f = sub.add_parser("fit", help="fit the weights on a record")
    f.add_argument("record", type=Path)
    f.add_argument("--max-distance", type=int, default=0, help="only the suspects this many calls deep or less")
    args = ap.parse_args(argv)
    return record(args) if args.cmd == "record" else fit(args)


if __name__ == "__main__":
    sys.exit(main())
