"""What the failure diagnosis may ask of an open index: the whole interface, declared.

The warm server hands diagnosis its `retrieval.search.Searcher`; tests hand it a stand-in over fixture
files (tests/fakes.py). Both are checked against these Protocols by mypy, so the stand-in cannot drift from
the real thing (it once took `where=` where the store takes `flt=`) and diagnosis cannot reach past them.
Stdlib-only at import.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hippo.retrieval.results import SearchResponse

# What a query over an open table raises short of damage (lance's I/O, query and arrow errors): a lookup
# that fails so leaves the other evidence. DamagedIndexError is none of these: it reaches the caller, whose
# hook adapter starts the rebuild (service/host.py).
LOOKUP_ERRORS: tuple[type[Exception], ...] = (OSError, RuntimeError, ValueError)


class DiagnosisStore(Protocol):
    """The store's one-pass lookups (hippo.index.store.Store) diagnosis uses."""

    def literal_lookup(self, terms: Sequence[str], limit: int, *, flt: Any = None,
                       in_tests: Sequence[str] = ()) -> dict[str, list[dict]]: ...

    def identifier_lookup(self, names: Sequence[str], limit: int, *, flt: Any = None) -> dict[str, list[dict]]: ...

    def symbol_names(self) -> list[str]: ...

    def table_version(self) -> int: ...

    def file_graphs(self) -> dict[str, str]: ...


class FileFacts(Protocol):
    """What the index recorded of one file (hippo.index.state.FileRecord): is the live file still that?"""

    @property
    def size(self) -> int: ...

    @property
    def mtime_ns(self) -> int: ...

    @property
    def blob(self) -> str | None: ...


class IndexFacts(Protocol):
    """The index's state (hippo.index.state.IndexState) as far as diagnosis reads it."""

    @property
    def files(self) -> Mapping[str, FileFacts]: ...

    @property
    def indexed_commit(self) -> str | None: ...


class Dates(Protocol):
    """The index's one cache of last-commit dates (hippo.core.gitutil.CommitDates), shared with search."""

    def get(self, blobs: dict[str, str]) -> dict[str, str]: ...


class DiagnosisIndex(Protocol):
    """An open index as diagnosis sees it (hippo.retrieval.search.Searcher)."""

    @property
    def root(self) -> Path: ...

    @property
    def index_dir(self) -> Path: ...

    @property
    def state(self) -> IndexFacts: ...

    @property
    def store(self) -> DiagnosisStore: ...

    @property
    def commit_dates(self) -> Dates: ...

    def chunks_at(self, path: str, line: int) -> list[dict]: ...

    def search(self, query: str, *, keywords: Sequence[str] = (), k: int | None = None,
               mode: str = "hybrid") -> SearchResponse: ...

if TYPE_CHECKING:
    from hippo.retrieval.search import Searcher

    def _searcher_is_one(s: Searcher) -> DiagnosisIndex:  # mypy: the real Searcher meets the interface
        return s
