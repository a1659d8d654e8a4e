"""The `text` column of one table version, held as one UTF-8 buffer: which rows hold a literal string.

A failure's message fragments and test titles are looked up verbatim in every chunk (store.literal_lookup).
Asking lance re-reads and re-decodes the whole column each time (~100 ms at 50k chunks, on every new
failure); `bytes.find` over the buffer answers a term in ~10 ms when nothing holds it, less when something
does. The buffer is read once per table version (about what one scan costs) and only kept below
MAX_BYTES, so a very large index keeps scanning rather than holding its text twice.

A UTF-8 substring match is a character substring match (UTF-8 is self-synchronizing), so the rows found are
the rows `strpos(text, term) > 0` selects, in the same (table) order. Stdlib only; the caller hands in
the buffer and row ends it read from arrow.
"""
from __future__ import annotations

import bisect
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

MAX_BYTES = 128 * 1024 * 1024  # ~150k chunks of code; a bigger index scans instead of doubling its text in memory
MAX_SHARED_HITS = 4096  # a shared middle found more often than this (a one-word title) is searched per term


@dataclass(frozen=True)
class TextColumn:
    """Row k's text is `data[ends[k-1]:ends[k]]` (row 0 starts at 0); `row_ids` are the rows' lance ids."""

    data: bytes
    ends: list[int]
    row_ids: list[int]

    @classmethod
    def build(cls, data: bytes | memoryview, offsets: Sequence[int], row_ids: Sequence[int]) -> TextColumn:
        """From an arrow string column's data buffer and its len+1 offsets (null rows as empty strings)."""
        base = int(offsets[0]) if len(offsets) else 0
        ends = [int(o) - base for o in offsets[1:]]
        if len(ends) != len(row_ids):
            raise ValueError("one end offset per row")
        return cls(bytes(data[base:base + (ends[-1] if ends else 0)]), ends, list(row_ids))

    def subset(self, positions: Sequence[int]) -> TextColumn:
        """The rows at `positions` (ascending) as a column of their own, in the same order: a lookup that
        wants only some rows (test files) reads only their bytes."""
        parts, ends, size = [], [], 0
        for k in positions:
            start = self.ends[k - 1] if k else 0
            parts.append(self.data[start:self.ends[k]])
            size += self.ends[k] - start
            ends.append(size)
        return TextColumn(b"".join(parts), ends, [self.row_ids[k] for k in positions])

    @functools.cached_property
    def position(self) -> dict[int, int]:
        """Row id -> the row's position here."""
        return {rid: k for k, rid in enumerate(self.row_ids)}

    def text(self, k: int) -> str:
        """Row k's text (a null text was read as "")."""
        return self.data[self.ends[k - 1] if k else 0:self.ends[k]].decode("utf-8", "surrogatepass")

    def rows_holding(self, term: str, limit: int) -> list[int]:
        """Positions (table order) of the first `limit` rows whose text holds `term`."""
        needle = _utf8(term)
        data, ends = self.data, self.ends
        out: list[int] = []
        pos = 0
        while len(out) < limit and needle:
            hit = data.find(needle, pos)
            if hit < 0:
                break
            row = bisect.bisect_right(ends, hit)  # the row whose bytes hold offset `hit`
            end = ends[row]
            if hit + len(needle) <= end:
                out.append(row)
            # a later match in this row would be counted twice; one running past its end can only start later
            pos = end
        return out

    def rows_holding_each(self, terms: Sequence[str], limit: int) -> dict[str, list[int]]:
        """rows_holding for each term, with fewer passes over the buffer (a miss reads all of it, ~10 ms at
        50k chunks, and a failure's terms are mostly misses):
        - terms that differ only in their first and last character (a test title quoted three ways) are
          found from the places their shared middle occurs, one pass for all three: a title is usually in
          the source in one quoting only, and a quoting nothing holds used to cost a pass of its own;
        - a term holding a term no row holds is in no row either (`X is not a constructor`, once
          `is not a constructor` missed)."""
        cores = Counter(t[1:-1] for t in terms if len(t) >= 3)
        shared = {c: self._occurrences(_utf8(c)) for c, n in cores.items() if n > 1}
        missing = [c for c, at in shared.items() if at == []]
        out: dict[str, list[int]] = {}
        for t in sorted(set(terms), key=len):  # shorter first: a miss rules out the terms holding it
            if any(m in t for m in missing):
                out[t] = []
                continue
            at = shared.get(t[1:-1]) if len(t) >= 3 else None
            if at is None:
                out[t] = self.rows_holding(t, limit)
            else:
                needle, lead = _utf8(t), len(_utf8(t[:1]))
                out[t] = self._rows_at([p - lead for p in at if p >= lead and self.data.startswith(needle, p - lead)],
                                       len(needle), limit)
            if not out[t]:
                missing.append(t)
        return {t: out[t] for t in terms}

    def _occurrences(self, needle: bytes) -> list[int] | None:
        """Every offset where `needle` starts (overlapping ones too), or None past MAX_SHARED_HITS."""
        data, out = self.data, []
        hit = data.find(needle) if needle else -1
        while hit >= 0:
            out.append(hit)
            if len(out) > MAX_SHARED_HITS:
                return None
            hit = data.find(needle, hit + 1)
        return out

    def _rows_at(self, hits: list[int], size: int, limit: int) -> list[int]:
        """rows_holding's answer from every offset (ascending) where its needle of `size` bytes starts."""
        ends, pos = self.ends, 0
        out: list[int] = []
        for hit in hits:
            if len(out) >= limit:
                break
            if hit < pos:
                continue
            row = bisect.bisect_right(ends, hit)
            if hit + size <= ends[row]:
                out.append(row)
            pos = ends[row]
        return out


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
