"""File-level evidence: which files a question is about, judged from every chunk that matched it.

"Where would I change X" is answered with files. A file with several matching chunks, or whose name or
symbols carry the question's words, is a better bet than a file with one lucky chunk; ranking chunks alone
spends the whole character budget on a few files. Stdlib only.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hippo.core.textutil import text_terms

# Weights of a file's 2nd, 3rd, ... best chunk in its score (the best counts fully): more evidence helps,
# but ten weak matches must not beat one strong one.
DECAY = (0.25, 0.12, 0.06, 0.06, 0.06)
PATH_BONUS = 0.15  # the file's name (or its folder's) holds the query's words
SYMBOL_BONUS = 0.08  # a symbol defined in a matching chunk of the file is named in the query
GENERIC_PARTS = frozenset({"src", "lib", "source", "sources", "core", "main", "index", "init", "app", "pkg",
                           "internal", "utils", "util", "common", "base", "py", "js", "ts", "mjs", "cjs", "tsx",
                           "jsx", "d"})


@dataclass
class FileEvidence:
    path: str
    score: float  # best chunk + decayed sum of the others + name/symbol bonuses (not capped)
    best: dict  # the row of the best-scoring chunk (start_line, end_line, symbol)
    best_final: float
    chunks: int
    symbols: list[str] = field(default_factory=list)


def path_terms(path: str) -> set[str]:
    """Words of the file name and of its folder below the top level, minus generic ones (src, lib, index...).
    The top-level folder is usually the package name, which every file shares."""
    parts = path.split("/")
    parts = parts[-2:] if len(parts) >= 3 else parts[-1:]
    parts[-1] = parts[-1].split(".", 1)[0] or parts[-1]
    return {t for t in text_terms(" ".join(parts)) if t not in GENERIC_PARTS and len(t) > 2}


def _stem(word: str) -> str:
    """decoders -> decoder, utils -> util: file names are often the plural of what a query says."""
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def symbol_terms(symbol: str) -> set[str]:
    """The unqualified name of a symbol (`Client.send` -> send, client.send), lower-cased."""
    if not symbol:
        return set()
    last = re.split(r"[.:#]", symbol)[-1]
    return {symbol.lower(), last.lower()} if len(last) > 2 else {symbol.lower()}


def query_identifiers(query: str) -> set[str]:
    """Identifier-looking words of the query, lower-cased (`Response.encoding`, send_request, verify)."""
    words = re.findall(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*", query)
    out = set()
    for w in words:
        low = w.lower()
        out.add(low)
        out.add(low.rsplit(".", 1)[-1])
    return {w for w in out if len(w) > 2}


@dataclass
class Neighbours:
    """What links files besides the question's words: the source files each source file changed with
    (index/cochange.py, {path: {partner: commits}}), and the files holding what a chunk's definition calls
    or what calls it (retrieval/codegraph.py; None when there is no graph)."""

    cochange: dict[str, dict[str, int]] = field(default_factory=dict)
    linked: Callable[[dict], set[str]] | None = None


def rank_files(scored: Iterable[tuple[dict, float]], terms: set[str], query: str,
               neighbours: Neighbours | None = None) -> list[FileEvidence]:
    """Files best first from (chunk row, final score) pairs; `terms` are the query's search terms. With
    `neighbours`, the best file's co-change partners and call-graph neighbours gain (see `_lift_neighbours`)."""
    by_path: dict[str, list[tuple[dict, float]]] = {}
    for row, final in scored:
        by_path.setdefault(row["path"], []).append((row, final))
    idents = query_identifiers(query)
    stems = {_stem(t) for t in terms}
    out = []
    for path, items in by_path.items():
        items.sort(key=lambda it: it[1], reverse=True)
        finals = [f for _, f in items]
        score = finals[0] + sum(w * f for w, f in zip(DECAY, finals[1:], strict=False))
        named = {_stem(t) for t in path_terms(path)}
        if named and stems:
            score += PATH_BONUS * finals[0] * min(1.0, len(named & stems) / max(1, min(2, len(named))))
        symbols = [r.get("symbol") or "" for r, _ in items]
        if any(symbol_terms(s) & idents for s in symbols if s):
            score += SYMBOL_BONUS * finals[0]
        out.append(FileEvidence(path=path, score=score, best=items[0][0], best_final=finals[0], chunks=len(items),
                                symbols=[s for s in dict.fromkeys(symbols) if s]))
    out.sort(key=lambda f: (-f.score, f.path))
    if neighbours is not None and out:
        out = _lift_neighbours(out, neighbours)
    return out


def _lift_neighbours(files: list[FileEvidence], nb: Neighbours) -> list[FileEvidence]:
    """A change to the best file often touches the files it changed with before and the files its best
    chunk's definition calls or is called from: those gain a share of the best file's evidence (weights in
    rankpolicy), and co-change partners with no matching chunk join as files of their own."""
    from hippo.retrieval import rankpolicy as P

    top = files[0]
    partners = nb.cochange.get(top.path, {})
    linked = nb.linked(top.best) if nb.linked is not None else set()
    if len(linked) > P.GRAPH_MAX_FILES:  # a helper everything calls links nothing in particular
        linked = set()
    by_path = {f.path: f for f in files}
    for path, n in partners.items():
        if n >= P.COCHANGE_MIN_COMMITS and path not in by_path:
            by_path[path] = FileEvidence(path=path, score=0.0, best={"path": path, "start_line": 1, "end_line": 1,
                                                                     "symbol": ""}, best_final=0.0, chunks=0)
    for f in by_path.values():
        if f is top:
            continue
        n = partners.get(f.path, 0)
        if n >= P.COCHANGE_MIN_COMMITS:
            f.score += P.COCHANGE * top.best_final * min(1.0, n / P.COCHANGE_SATURATION)
        if f.path in linked:
            f.score += P.GRAPH_LINK * top.best_final
    out = list(by_path.values())
    out.sort(key=lambda f: (f is not top, -f.score, f.path))
    return out
