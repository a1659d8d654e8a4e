"""Stand-ins shared by tests: a Searcher over the fixture projects' live files (whole top-level blocks
as chunks, literal keyword search, the store's one-pass lookups) for the diagnosis and the warm server.

FakeSearcher is a `push.diagnosis.index_api.DiagnosisIndex`; mypy checks it (pyproject's mypy files), and
tests/test_diagnosis_index_api.py checks its signatures against the Protocol and the real Store's."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hippo.core import pathkind
from hippo.core.gitutil import CommitDates
from hippo.push.diagnosis.index_api import DiagnosisIndex, DiagnosisStore
from hippo.retrieval.results import Hit, SearchResponse

_SYMBOL = re.compile(r"^(?:export\s+)?(?:async\s+)?(?:def|class|function|fn|pub fn|struct|public class|static \w+)\s+(\w+)")


ERRORS = Path(__file__).parent / "fixtures" / "errors"


PROJECTS = ERRORS / "projects"


@dataclass(frozen=True)
class _Rec:
    size: int
    mtime_ns: int
    blob: str | None = None


@dataclass
class _State:
    files: dict[str, _Rec]
    indexed_commit: str | None = "abc123"


class _Store:
    """The Store's one-pass lookups over the stand-in chunks."""

    def __init__(self, owner: FakeSearcher) -> None:
        self.owner = owner

    def _rows(self):
        for path, blocks in self.owner.chunks.items():
            for s, e, lines in blocks:
                text = "\n".join(lines[s - 1:e])
                m = _SYMBOL.match(lines[s - 1]) if s - 1 < len(lines) else None
                yield {"id": f"{path}#{s}", "path": path, "start_line": s, "end_line": e, "language": "text",
                       "symbol": m.group(1) if m else "", "text": text}

    def literal_lookup(self, terms: Sequence[str], limit: int, flt: Any = None,
                       in_tests: Sequence[str] = ()) -> dict[str, list[dict]]:
        self.owner.calls.append(("literal", list(terms)))
        out: dict[str, list[dict]] = {t: [] for t in terms}
        for row in self._rows():
            for t in terms:
                if t in in_tests and not pathkind.is_test(row["path"]):
                    continue
                if t in row["text"] and len(out[t]) < limit:
                    out[t].append(row)
        return out

    def identifier_lookup(self, names: Sequence[str], limit: int, flt: Any = None) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {n: [] for n in names}
        for row in self._rows():
            for n in names:
                if row["symbol"] == n and len(out[n]) < limit:
                    out[n].append(row)
        return out

    def symbols(self):
        return [r for r in self._rows() if r["symbol"]]

    def symbol_names(self) -> list[str]:
        return sorted({r["symbol"] for r in self._rows() if r["symbol"]})

    def table_version(self) -> int:
        return 1

    def file_graphs(self) -> dict[str, str]:
        return {}  # an index without a code graph: diagnosis does without suspects


@dataclass
class FakeSearcher:
    """Chunks = whole top-level blocks of the fixture files (the live files, under `root`); search =
    literal keyword match; the store answers the one-pass lookups."""

    root: Path = PROJECTS
    state: _State = field(init=False)
    calls: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.index_dir = self.root / ".hippo"  # no co-change history there: an empty one
        self.commit_dates = CommitDates(self.root)
        self.chunks: dict[str, list[tuple[int, int, list[str]]]] = {}
        for p in self.root.rglob("*"):
            if p.is_file() and p.suffix in {".py", ".js", ".rs", ".c", ".java", ".md"}:
                rel = p.relative_to(self.root).as_posix()
                lines = p.read_text().split("\n")
                starts = [i for i, ln in enumerate(lines) if ln and not ln[0].isspace() and ln[0] not in "})]"] or [0]
                self.chunks[rel] = [(s + 1, (starts[n + 1] if n + 1 < len(starts) else len(lines)), lines)
                                    for n, s in enumerate(starts)]
        self.state = _State(files={k: _Rec((self.root / k).stat().st_size, (self.root / k).stat().st_mtime_ns)
                                   for k in self.chunks})
        self.store: DiagnosisStore = _Store(self)

    def chunks_at(self, path: str, line: int) -> list[dict]:
        return [{"id": f"{path}#{s}", "path": path, "start_line": s, "end_line": e, "language": "text",
                 "text": "\n".join(lines[s - 1:e])} for s, e, lines in self.chunks.get(path, []) if s <= line <= e]

    def search(self, query: str, *, keywords: Sequence[str] = (), k: int | None = 4,
               mode: str = "hybrid") -> SearchResponse:
        self.calls.append((query, list(keywords)))
        hits = []
        for path, blocks in self.chunks.items():
            for s, e, lines in blocks:
                text = "\n".join(lines[s - 1:e])
                if any(kw and kw.lower() in text.lower() for kw in keywords):
                    hits.append(Hit(f"{path}#{s}", path, s, e, "text", 0.6, text))
        return SearchResponse(query, hits[:k])


def as_index(searcher: FakeSearcher) -> DiagnosisIndex:
    """The stand-in as the interface diagnosis declares: mypy fails here when the two drift apart."""
    return searcher
