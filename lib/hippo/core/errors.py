"""Errors the user can act on. Each message is one line that says the fix."""
from __future__ import annotations


class HippoError(Exception):
    """Base class: shown to the user as a one-line message, exit code 1."""


class NoIndexError(HippoError):
    def __init__(self, msg: str = "No index here yet. Run `hippo index`.") -> None:
        super().__init__(msg)

    @classmethod
    def at(cls, index_dir: object) -> NoIndexError:
        """The error for a missing index at `index_dir`; it says so when the index cannot be created there."""
        from hippo.core.indexdir import read_only_reason

        reason = read_only_reason(index_dir)  # type: ignore[arg-type]
        return ReadOnlyIndexDir(reason) if reason else cls()


class ReadOnlyIndexDir(NoIndexError):
    """The index dir does not exist and cannot be created where it is (a read-only checkout, a mount)."""


class NotARepoError(HippoError):
    pass


class IndexLockedError(HippoError):
    def __init__(self, msg: str = "Another `hippo index` is running on this repository; try again when it finishes.") -> None:
        super().__init__(msg)


class EmbedderUnavailable(HippoError):
    pass


class BadQueryError(HippoError):
    """Invalid search input (empty query, bad glob). Usage-level: CLI maps it to exit 2."""


class DamagedIndexError(HippoError):
    """The index's table files are damaged (bit flips, truncation, garbage manifests, lost files).

    Raised by `hippo.index.store.Store` only, after a full read of the table confirmed the damage, so callers
    never have to guess from an error message. `hippo.index.indexer.repair` is the one place that acts on it.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"The index is damaged ({detail}); run `hippo index` to rebuild it.")
