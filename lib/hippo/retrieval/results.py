"""Search result types shared by search, render, hooks and the MCP server. Stdlib only."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Hit:
    """One block of evidence: a line range of one file (adjacent chunks already merged)."""

    id: str
    path: str
    start_line: int
    end_line: int
    language: str
    score: float  # 0..1 relevance: fused rank blended with vector similarity and keyword coverage
    snippet: str
    last_modified: str = ""  # YYYY-MM-DD
    stale: bool = False  # the live file no longer matches what was indexed
    symbol: str = ""
    truncated: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Hit:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class Candidate:
    """A file worth opening that did not fit the snippet budget: a one-line pointer, no text.

    Pointers are cheap (~100 characters each), so an answer can name the ten files a change may touch while
    showing the code of only the best few."""

    path: str
    start_line: int
    end_line: int
    symbol: str = ""
    score: float = 0.0  # its best chunk's score (Hit.score's scale); pointers are ordered by whole-file evidence

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Candidate:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class SearchResponse:
    query: str
    hits: list[Hit] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    message: str | None = None  # e.g. "No high-confidence results ..."
    candidates: list[Candidate] = field(default_factory=list)  # more files, best first, after the hits

    def to_dict(self) -> dict:
        return {"query": self.query, "hits": [h.to_dict() for h in self.hits],
                "candidates": [c.to_dict() for c in self.candidates],
                "meta": dict(self.meta), "message": self.message}

    @classmethod
    def from_dict(cls, data: dict) -> SearchResponse:
        return cls(query=data.get("query", ""), hits=[Hit.from_dict(h) for h in data.get("hits", [])],
                   meta=dict(data.get("meta", {})), message=data.get("message"),
                   candidates=[Candidate.from_dict(c) for c in data.get("candidates", []) or []])
