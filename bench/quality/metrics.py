"""Retrieval metrics over ranked results: file Recall@k, MRR@10, line-exact Hit@k, injected chars."""
from __future__ import annotations

from statistics import mean

MAX_EXACT_SPAN = 60  # a result longer than this (or than gold + 20 lines) is not "line-exact"


def file_ranks(results, gold_path: str) -> int | None:
    """1-based rank of the gold file among distinct result files, None if absent."""
    seen = []
    for r in results:
        if r.path not in seen:
            seen.append(r.path)
        if r.path == gold_path:
            return len(seen)
    return None


def line_exact(r, path: str, start: int, end: int) -> bool:
    span = r.end - r.start + 1
    limit = max(MAX_EXACT_SPAN, end - start + 1 + 20)
    return r.path == path and r.start <= end and start <= r.end and span <= limit


def score(results, task) -> dict:
    rank = file_ranks(results, task.path)
    return {
        "r1": float(rank is not None and rank <= 1), "r5": float(rank is not None and rank <= 5),
        "r10": float(rank is not None and rank <= 10), "mrr": 1.0 / rank if rank and rank <= 10 else 0.0,
        "h1": float(any(line_exact(r, task.path, task.start, task.end) for r in results[:1])),
        "h5": float(any(line_exact(r, task.path, task.start, task.end) for r in results[:5])),
        "chars": float(sum(r.chars for r in results)),
    }


def aggregate(rows: list[dict]) -> dict:
    if not rows:
        return {}
    out = {k: mean(r[k] for r in rows) for k in rows[0]}
    out["n"] = len(rows)
    return out
