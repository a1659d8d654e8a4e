"""Why the graph walk misses a fix: for each tuning fix commit, run the failure hook (the same trees and
indexes as bench.realfail.run) and record, beside hippo's scores, what suspects.walk did and what it would
have done without its caps:

- the walk's size: definitions reached and visited, and whether it stopped at MAX_REACHED / MAX_VISITED
  (else the frontier ran out at MAX_DEPTH);
- where each gold function is: its distance and how it was reached, and its rank among the ranked
  suspects (with the features of the ones above it);
- the same with the caps lifted (MAX_REACHED, MAX_VISITED), then also MAX_FANOUT_BY_NAME lifted (every
  bare-name match followed), each with the path from the test to the gold and its rank there;
- the definitions that call the gold function by its name, and whether the walk reached them (a reached
  caller whose call did not lead to the gold: the name was not resolved to it).

    python -m bench.realfail.walkdiag --fast [--repo R] [--case ID] [--out walkdiag.jsonl]

Only `--split tune` cases are ever recorded (the held-out split stays unseen). Read-only on lib/: the walk
is re-run here with the module's own edges(), under patched caps.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

BIG = 10 ** 9


def walk_stats(suspects, graph, starts) -> tuple[dict, int, str]:
    """suspects.walk, counting what it visited and why it stopped (a copy of its loop: same order)."""
    reached: dict = {}
    frontier = [(d, d, 0) for d in starts]
    seen = set(starts)
    while frontier and len(reached) < suspects.MAX_REACHED and len(seen) < suspects.MAX_VISITED:
        nxt = []
        steps = [(d, how, src, test, depth) for src, test, depth in frontier if depth < suspects.DATA_DEPTH
                 for d, how in suspects.edges(graph, src)]
        steps.sort(key=lambda t: suspects._EDGE_ORDER.get(t[1], 0))
        for d, how, src, test, depth in steps:
            if d in seen:
                continue
            seen.add(d)
            if depth < suspects.MAX_DEPTH or d.kind == "data":
                reached[d] = suspects.Suspect(d, depth + 1, src.qual if depth else test.qual, test.path, how)
            nxt.append((d, test, depth + 1))
        frontier = nxt
    stop = "reached" if len(reached) >= suspects.MAX_REACHED else "visited" if len(seen) >= suspects.MAX_VISITED \
        else "frontier-left" if frontier else "exhausted"
    return reached, len(seen), stop


def chain(reached: dict, d) -> list[str]:
    """The path the walk took to `d`, test first (via names the previous definition's qual)."""
    by_qual = {}
    for s in reached.values():
        by_qual.setdefault(s.d.qual, s)
    out, s, hops = [], reached.get(d), 0
    while s is not None and hops < 12:
        out.append(f"{s.d.qual} [{s.how}]")
        prev = by_qual.get(s.via)
        if prev is None or prev is s:
            out.append(s.via)
            break
        s, hops = prev, hops + 1
    return list(reversed(out))


def gold_defs(graph, gold: dict) -> list:
    out = []
    for g in gold.get("functions") or []:
        f = graph.files.get(g["file"])
        if f is None:
            continue
        # the gold's lines start at its first decorator, the graph's definition at its `def`
        d = next((d for d in f.defs if g["start"] <= d.start <= g["end"] and d.qual == g["name"]), None)
        d = d or next((d for d in f.defs if g["start"] <= d.start <= g["end"] and d.name == g["name"].split(".")[-1]),
                      None)
        d = d or graph.def_at(g["file"], g["end"])
        if d is not None and d not in out:
            out.append(d)
    return out


def where(ranked: list, reached: dict, gold: list, top: int = 10) -> list[dict]:
    out = []
    order = [s.d for s in ranked]
    for g in gold:
        row = {"gold": f"{g.path}:{g.qual}", "kind": g.kind}
        s = reached.get(g)
        if s is not None:
            row.update(distance=s.distance, how=s.how, via=s.via)
            if g in order:
                i = order.index(g)
                row.update(rank=i + 1, score=round(ranked[i].score, 1), features=ranked[i].features,
                           above=[{"qual": x.d.qual, "path": x.d.path, "score": round(x.score, 1),
                                   "distance": x.distance, "how": x.how,
                                   "features": {k: v for k, v in x.features.items() if v}}
                                  for x in ranked[:min(i, top)]])
        out.append(row)
    return out


def record(args) -> int:
    from bench.fake_model import use_fake
    from bench.realfail import run
    from hippo.index.embedding import load_embedder
    from hippo.push.diagnosis import suspects

    args.split, args.kind = "tune", ["fix"]
    cases = run.select_cases(args)
    box: dict = {}
    original_rank, original_walk = suspects.rank, suspects.walk

    def capture_walk(graph, starts):
        box["graph"], box["starts"] = graph, list(starts)
        return original_walk(graph, starts)

    def capture_rank(reached, *a, **kw):
        ranked = original_rank(reached, *a, **kw)
        box["rank_args"], box["ranked"], box["reached"] = (a, kw), ranked, reached
        return ranked

    lock = run._exclusive_cache()
    if lock is None:
        print("realfail walkdiag: another run is using the work trees; wait for it", file=sys.stderr)
        return 2
    suspects.walk, suspects.rank = capture_walk, capture_rank  # type: ignore[assignment]
    embedder = load_embedder(use_fake()) if args.fast else load_embedder()
    out = args.out.open("w")
    try:
        for case, _work, rec in run.evaluated(cases, embedder, args.fast, box.clear):
            row = {"id": case["id"], "repo": case["repo"], "test_files": case["test_files"],
                   "gold_functions": [f"{g['file']}:{g['name']}" for g in case["gold"]["functions"]],
                   "shown_by_frames": rec["shown_by_frames"], "hippo_file": rec["hippo"]["file"],
                   "hippo_shown": rec["hippo"]["function"], "hippo_named": rec["hippo"]["named"],
                   "chars": rec["hippo"]["context_chars"], "walked": "graph" in box}
            if "graph" in box:
                graph, starts = box["graph"], box["starts"]
                gold = gold_defs(graph, case["gold"])
                row["starts"] = [f"{d.path}:{d.qual}" for d in starts]
                row["gold_in_graph"] = [f"{d.path}:{d.qual}" for d in gold]
                reached, visited, stop = walk_stats(suspects, graph, starts)
                row["walk"] = {"reached": len(reached), "visited": visited, "stop": stop,
                               "same_as_hook": set(reached) == set(box.get("reached", reached))}
                a, kw = box.get("rank_args", ((frozenset(), frozenset(), [], lambda d: "", None), {}))
                ranked = box.get("ranked") or original_rank(reached, *a, **kw)
                row["capped"] = where(ranked, reached, gold)
                caps = suspects.MAX_REACHED, suspects.MAX_VISITED, suspects.MAX_FANOUT_BY_NAME
                cache = dict(graph.step_cache)
                try:
                    suspects.MAX_REACHED = suspects.MAX_VISITED = BIG
                    r2, v2, _ = walk_stats(suspects, graph, starts)
                    row["uncapped"] = {"reached": len(r2), "visited": v2,
                                       "where": where(original_rank(r2, *a, **kw), r2, gold),
                                       "chain": [chain(r2, g) for g in gold if g in r2]}
                    suspects.MAX_FANOUT_BY_NAME = BIG
                    graph.step_cache.clear()
                    r3, v3, _ = walk_stats(suspects, graph, starts)
                    row["fanout_lifted"] = {"reached": len(r3), "visited": v3,
                                            "where": where(original_rank(r3, *a, **kw), r3, gold),
                                            "chain": [chain(r3, g) for g in gold if g in r3]}
                finally:
                    suspects.MAX_REACHED, suspects.MAX_VISITED, suspects.MAX_FANOUT_BY_NAME = caps
                    graph.step_cache.clear()
                    graph.step_cache.update(cache)
                callers = []
                for c, how in graph.callers(gold):
                    w = c.within
                    callers.append({"at": f"{c.path}:{c.line}", "callee": c.callee, "how": how,
                                    "within": w.qual if w else None, "within_reached": w in r2 if w else None,
                                    "within_reached_capped": w in reached if w else None})
                row["callers"] = callers[:30]
                row["n_callers"] = len(callers)
            out.write(json.dumps(row) + "\n")
            out.flush()
            cap = row.get("capped") or [{}]
            print(f"  {case['id']}: shown={int(row['hippo_shown'])} named={int(row['hippo_named'])} "
                  f"walk={row.get('walk')} gold={[(w.get('distance'), w.get('rank')) for w in cap]}", flush=True)
    finally:
        out.close()
        suspects.walk, suspects.rank = original_walk, original_rank  # type: ignore[assignment]
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--repo", action="append")
    ap.add_argument("--case", action="append")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("walkdiag.jsonl"))
    return record(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
