"""The retrieval systems compared, behind one interface: `search(query) -> list[Result]` (best first).

- hippo hybrid / vector / keyword: `hippo.retrieval.search.Searcher` with its defaults (k=10, the default budget).
- hippo error hook: the PostToolUseFailure path (signals -> pre-gate -> diagnose), error tasks only.
- bm25-files / bm25-windows: Okapi BM25 (rank-bm25) over whole files / 50-line windows (stride 25).
- grep: what an agent does with grep alone: distinctive terms and 4-word phrases of the query,
  files ranked by phrase hits then distinct terms, the best line shown with 10 lines of context.
- naive-dense: fixed ~1,000-character chunks, the same embedding model, cosine top-k only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

K = 10
WINDOW, STRIDE = 50, 25
NAIVE_CHARS = 1000
GREP_CONTEXT = 10

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
STOP = set("""a an the and or of to in on for is are was were be been it this that with as at by from not no
do does did what where which who how when why i we you they he she my our your their me us can could should
would will shall may might must have has had there here then than so if else but about into out up down over
under again once code docs say handles handle change need""".split())


@dataclass
class Result:
    path: str
    start: int
    end: int
    chars: int


def tokenize(text: str) -> list[str]:
    """Lower-cased words plus the pieces of snake_case / camelCase identifiers."""
    out = []
    for w in _WORD.findall(text):
        low = w.lower()
        out.append(low)
        parts = [p.lower() for p in _PARTS.findall(w.replace("_", " "))]
        if len(parts) > 1:
            out.extend(parts)
    return out


def read_corpus(root: Path, files: list[str]) -> dict[str, list[str]]:
    return {rel: (root / rel).read_text(encoding="utf-8", errors="replace").split("\n") for rel in files}


class BM25Files:
    name = "bm25-files"

    def __init__(self, docs: dict[str, list[str]]) -> None:
        from rank_bm25 import BM25Okapi

        self.paths = list(docs)
        self.lines = docs
        self.bm25 = BM25Okapi([tokenize("\n".join(docs[p])) + tokenize(p) for p in self.paths])

    def search(self, query: str) -> list[Result]:
        scores = self.bm25.get_scores(tokenize(query))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:K]
        out = []
        for i in order:
            if scores[i] <= 0:
                break
            p = self.paths[i]
            lines = self.lines[p]
            out.append(Result(p, 1, len(lines), len("\n".join(lines))))
        return out


class BM25Windows:
    name = "bm25-windows"

    def __init__(self, docs: dict[str, list[str]]) -> None:
        from rank_bm25 import BM25Okapi

        self.wins = []
        for p, lines in docs.items():
            for s in range(0, max(len(lines), 1), STRIDE):
                e = min(len(lines), s + WINDOW)
                self.wins.append((p, s + 1, e, "\n".join(lines[s:e])))
                if e >= len(lines):
                    break
        self.bm25 = BM25Okapi([tokenize(w[3]) + tokenize(w[0]) for w in self.wins])

    def search(self, query: str) -> list[Result]:
        scores = self.bm25.get_scores(tokenize(query))
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:K]
        return [Result(self.wins[i][0], self.wins[i][1], self.wins[i][2], len(self.wins[i][3]))
                for i in order if scores[i] > 0]


class Grep:
    name = "grep"

    def __init__(self, docs: dict[str, list[str]]) -> None:
        self.docs = docs
        self.low = {p: [ln.lower() for ln in lines] for p, lines in docs.items()}

    @staticmethod
    def patterns(query: str) -> tuple[list[str], list[str]]:
        words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", query)]
        terms = sorted({w.lower() for w in words if w.lower() not in STOP})
        body = [re.sub(r"\s+", " ", ln).strip().lower() for ln in query.split("\n")]
        phrases = set()
        for ln in body:
            toks = ln.split(" ")
            for i in range(0, max(len(toks) - 3, 0)):
                ph = " ".join(toks[i:i + 4])
                if len(ph) >= 16:
                    phrases.add(ph)
        return terms, sorted(phrases)

    def search(self, query: str) -> list[Result]:
        terms, phrases = self.patterns(query)
        scored = []
        for p, lines in self.low.items():
            text = "\n".join(lines)
            ph = sum(1 for x in phrases if x in text)
            tm = [t for t in terms if t in text]
            if not ph and not tm:
                continue
            scored.append((-(ph * 3 + len(tm)), p, tm, phrases if ph else []))
        scored.sort()
        out = []
        for _, p, tm, phs in scored[:K]:
            lines = self.low[p]
            best = max(range(len(lines)), key=lambda i: (sum(3 for x in phs if x[:24] in lines[i])
                                                         + sum(1 for t in tm if t in lines[i]), -i))
            s, e = max(1, best + 1 - GREP_CONTEXT), min(len(lines), best + 1 + GREP_CONTEXT)
            out.append(Result(p, s, e, len("\n".join(self.docs[p][s - 1:e]))))
        return out


class NaiveDense:
    """The tutorial pipeline: fixed-size chunks, embed, cosine top-k; no keywords, no structure."""

    name = "naive-dense"

    def __init__(self, docs: dict[str, list[str]], embedder) -> None:
        import numpy as np

        self.emb = embedder
        self.chunks = []
        for p, lines in docs.items():
            start, buf = 1, []
            for n, ln in enumerate(lines, start=1):
                buf.append(ln)
                if sum(len(x) + 1 for x in buf) >= NAIVE_CHARS:
                    self.chunks.append((p, start, n, "\n".join(buf)))
                    start, buf = n + 1, []
            if any(x.strip() for x in buf):
                self.chunks.append((p, start, len(lines), "\n".join(buf)))
        self.matrix = np.asarray(embedder.embed_passages([c[3] for c in self.chunks]), dtype=np.float32)

    def search(self, query: str) -> list[Result]:
        import numpy as np

        q = np.asarray(self.emb.embed_query(query[:2000]), dtype=np.float32)
        sims = self.matrix @ q
        order = np.argsort(-sims)[:K]
        return [Result(self.chunks[i][0], self.chunks[i][1], self.chunks[i][2], len(self.chunks[i][3])) for i in order]


class Hippo:
    def __init__(self, searcher, mode: str) -> None:
        self.searcher, self.mode = searcher, mode
        self.name = f"hippo {mode}"

    def search(self, query: str) -> list[Result]:
        resp = self.searcher.search(query[:2000], k=K, mode=self.mode)
        return [Result(h.path, h.start_line, h.end_line, len(h.snippet)) for h in resp.hits]


class HippoErrorHook:
    """The failure hook's own retrieval (warm-server path): pre-gate, then diagnose, else nothing."""

    name = "hippo error hook"

    def __init__(self, searcher) -> None:
        self.searcher = searcher

    def search(self, query: str, command: str = "") -> list[Result]:
        from hippo.push.diagnosis.gate import pre_gate
        from hippo.push.diagnosis.pipeline import diagnose
        from hippo.push.diagnosis.signals import extract

        root = str(self.searcher.root)
        if not pre_gate(extract(query, cwd=root, root=root), command).inject:
            return []
        resp = diagnose(self.searcher, {"error": query, "cwd": root}, mode="hybrid")
        return [Result(h["path"], h["start_line"], h["end_line"], len(h["snippet"])) for h in resp["hits"]]
