"""The strong baseline a where-answer has to beat: BM25 (bm25s) over whole files, code-aware tokens.

Each file is one document: its text split into words and into the parts of camelCase / snake_case names
(`parseHeaderValue` -> parseheadervalue, parse, header, value), stop words dropped, plus the words of its
path (folder and file names, split the same way) so a file named after the query's subject matches it.
The query is tokenised the same way; the top 10 files are the answer, each returned whole.
"""
from __future__ import annotations

from pathlib import Path

from bench.quality.systems import STOP, tokenize

K = 10


def code_tokens(text: str) -> list[str]:
    return [t for t in tokenize(text) if t not in STOP and len(t) > 1]


def path_tokens(path: str) -> list[str]:
    return code_tokens(path.replace("/", " ").replace(".", " ").replace("-", " "))


class StrongBM25Files:
    """bm25s over whole files (text tokens + path tokens); `search` returns (path, chars) best first."""

    name = "bm25s-file"

    def __init__(self, root: Path, files: list[str]) -> None:
        import bm25s

        self.paths = list(files)
        self.chars = []
        corpus = []
        for rel in self.paths:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
            self.chars.append(len(text))
            corpus.append(code_tokens(text) + path_tokens(rel))
        self.retriever = bm25s.BM25()
        self.retriever.index(corpus, show_progress=False)

    def search(self, query: str, k: int = K) -> list[tuple[str, int]]:
        vocab = self.retriever.vocab_dict
        tokens = [t for t in code_tokens(query) if t in vocab]
        if not tokens:
            return []
        scores = self.retriever.get_scores(tokens)
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return [(self.paths[i], self.chars[i]) for i in order if scores[i] > 0]
