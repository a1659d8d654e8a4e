"""Fit the reranker's weights (hippo.retrieval.rankpolicy) on the tuning split only.

    python -m bench.codesearch.tune --cache DIR [--corpora a,b] [--rounds 2]

Uses the head indexes bench/codesearch/run.py built. Every tuning task is retrieved once (vector and
full-text lists fused: the expensive part); then, for each candidate value of each weight in turn
(coordinate ascent), the second stage and the answer's selection are replayed on copies of those
candidates. The objective is the mean of three rates: where-task file recall@10, symbol def@1 and
how-question code@3. Prints the chosen values; copying them into rankpolicy is left to a person.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from statistics import mean

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.codesearch import symbols  # noqa: E402
from bench.codesearch.how_tasks import HOW  # noqa: E402
from bench.codesearch.run import covers, def_line  # noqa: E402
from bench.where import answer, corpora  # noqa: E402
from bench.where import tasks as wheretasks  # noqa: E402

GRID = {
    "DOC_UNDER_CHANGE": (0.35, 0.45, 0.55, 0.65),
    "DOC_UNDER_CODE_QUESTION": (0.4, 0.5, 0.6, 0.8),
    "TYPES_UNDER_CODE_QUESTION": (0.4, 0.55, 0.7),
    "IMPORT_ONLY": (0.4, 0.55, 0.75),
    "TEST": (0.45, 0.6, 0.75),
    "DEFINITION_IN_QUESTION": (0.0, 0.1, 0.15, 0.3),
    "DEFINITION_OF_SYMBOL_QUERY": (0.3, 0.6, 0.9),
    "SYMBOL_WORDS": (0.0, 0.04, 0.08, 0.15),
    "NAMED_DEFINITION": (0.0, 0.05, 0.1, 0.2),
    "NAMED_CONF": (0.0, 0.45, 0.6, 0.75),
    "DECLARATIVE": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0),
    "LOGIC_LINES": (1, 2, 3, 4),
    "HOW_MIN_SHOWN": (1, 2, 3, 4),
    "SPREAD": (0.0, 0.1, 0.2, 0.25, 0.3, 0.4),
    "SPREAD_DECAY": (0.0, 0.3, 0.5),
    "SPREAD_NAMED_OWNER": (0.5, 1.0, 2.0),
    "COCHANGE": (0.0, 0.3, 0.6),
    "GRAPH_LINK": (0.0, 0.15, 0.3),
}


def capture(searcher, query: str):
    """The fused candidates of one search, before the second stage, and the arguments to replay it."""
    from hippo.retrieval import search as S

    box: dict = {}
    orig = S.Searcher._score

    def spy(self, cands, *args, **kw):
        cands = list(cands)
        box["cands"], box["args"], box["kw"] = copy.deepcopy(cands), args, kw
        return orig(self, cands, *args, **kw)

    S.Searcher._score = spy
    try:
        searcher.search(query)
    finally:
        S.Searcher._score = orig
    return box


def replay(searcher, query: str, box: dict):
    """Hits and pointers for the captured candidates under the current rankpolicy values."""
    from hippo.core.textutil import query_terms

    if "cands" not in box:
        return [], []
    cands = copy.deepcopy(box["cands"])
    searcher._score(cands, *box["args"], **box["kw"])
    k, budget = searcher.settings.default_k, searcher.settings.budget_chars
    hits, _msg, pointers = searcher._select(cands, query, k, budget, query_terms(query))
    return [[h.path, h.start_line, h.end_line] for h in hits], [p.path for p in pointers]


def main() -> None:
    from hippo.retrieval import rankpolicy
    from hippo.retrieval.search import Searcher

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", required=True)
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "hippo-bench" / "codesearch"))
    ap.add_argument("--corpora", default=",".join(c.name for c in corpora.CORPORA))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated weights to fit (default: every one in GRID)")
    a = ap.parse_args()
    grid = {n: v for n, v in GRID.items() if not a.only or n in a.only.split(",")}
    Searcher._annotate = lambda self, hits: hits  # dates and staleness do not change the order
    tasks = []  # (kind, searcher, query, box, gold)
    for c in corpora.CORPORA:
        root = Path(a.cache).expanduser() / "head" / c.name
        if c.name not in a.corpora.split(",") or not (root / ".hippo").exists():
            continue
        s = Searcher(root)
        gd = corpora.git_dir(Path(a.repos), c)
        for t in symbols.build(gd, c.name, c.head):
            if t.split == "tune":
                tasks.append(("symbols", s, t.query, capture(s, t.query), (t.path, t.line)))
        for q, golds in HOW.get(c.name, []):
            if symbols.SymbolTask(c.name, q, "", 0).split == "tune":
                lines = [(p, n) for p, name in golds if (root / p).is_file()
                         and (n := def_line((root / p).read_text(errors="replace"), name))]
                tasks.append(("how", s, q, capture(s, q), lines))
        for t in wheretasks.build(gd, c.name, c.head, 45):
            if t.split == "tune":
                tasks.append(("where", s, t.query, capture(s, t.query), t.gold))
        print(f"{c.name}: {len(tasks)} tuning tasks so far", flush=True)

    def objective(show: bool = False) -> float:
        rates: dict[str, list[float]] = {"symbols": [], "how": [], "where": []}
        for kind, s, q, box, gold in tasks:
            hits, pointers = replay(s, q, box)
            if kind == "symbols":
                rates[kind].append(float(bool(hits) and covers(hits[0], *gold)))
            elif kind == "how":
                rates[kind].append(float(any(covers(h, p, n) for h in hits[:3] for p, n in gold)))
            else:
                files = list(dict.fromkeys([h[0] for h in hits] + pointers))
                rates[kind].append(answer.recall_at(files, gold))
        if show:
            print("  " + " ".join(f"{k}={mean(v):.4f} ({len(v)})" for k, v in rates.items() if v), flush=True)
        return mean(mean(v) for v in rates.values() if v)

    best = objective(show=True)
    print(f"start: {best:.4f} " + " ".join(f"{n}={getattr(rankpolicy, n)}" for n in grid), flush=True)
    for _ in range(a.rounds):
        for name, values in grid.items():
            keep = getattr(rankpolicy, name)
            for v in values:
                setattr(rankpolicy, name, v)
                score = objective()
                print(f"  {name}={v}: {score:.4f}", flush=True)
                if score > best + 1e-9:
                    best, keep = score, v
            setattr(rankpolicy, name, keep)
            print(f"{name} = {keep}  ({best:.4f})", flush=True)
    objective(show=True)
    print("chosen: " + " ".join(f"{n}={getattr(rankpolicy, n)}" for n in grid))


if __name__ == "__main__":
    main()
