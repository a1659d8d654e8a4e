"""Line bookkeeping shared by every chunker: splitting, sizing line ranges, windows, Chunk making.

All ranges here are 0-based inclusive row pairs `(lo, hi)`; they become 1-based lines only in
`Lines.chunk`. Stdlib only.
"""
from __future__ import annotations

from dataclasses import dataclass

from hippo.index.chunk import Chunk

# Target size of one chunk. ~1,500 chars is ~390 BERT tokens: the embedder sees the first 256,
# full-text search sees all of it.
MAX_CHARS = 1500
MAX_LINES = 60
# Hard cap on one chunk's text. Budgeted chunks stay far below it; only a single line longer
# than this (minified code, data blobs) reaches it, and that line is cut here in `text`.
MAX_CHUNK_CHARS = 8000
# Pieces smaller than this are merged into a neighbour when the result stays near the budget.
MIN_PIECE_CHARS = 200
# Lines repeated between consecutive plain-text windows, so a match on a boundary has context.
WINDOW_OVERLAP = 3


@dataclass(frozen=True)
class Budget:
    """Size limits for one chunk: `fits` is the test every splitter uses."""

    max_chars: int = MAX_CHARS
    max_lines: int = MAX_LINES
    min_piece: int = MIN_PIECE_CHARS

    @property
    def soft_chars(self) -> int:
        """Merging a tiny remainder may overshoot the budget by a quarter; never past the cap."""
        return min(self.max_chars + self.max_chars // 4, MAX_CHUNK_CHARS)

    @property
    def soft_lines(self) -> int:
        return self.max_lines + self.max_lines // 4


def split_lines(text: str) -> list[str]:
    """Split like git and editors do: only "\\n" ends a line; a "\\r" before it is dropped.

    A final newline does not start another line, so "a\\n" is one line and "" is none.
    (`str.splitlines` would also break on \\x0b, \\x1c, \\u2028 ... and shift line numbers.)
    """
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


class Lines:
    """The lines of one file plus O(1) size queries over row ranges."""

    def __init__(self, path: str, language: str, lines: list[str], budget: Budget) -> None:
        self.path = path
        self.language = language
        self.lines = lines
        self.budget = budget
        self.blank = [not ln.strip() for ln in lines]
        prefix = [0]
        for ln in lines:
            prefix.append(prefix[-1] + len(ln) + 1)
        self._prefix = prefix

    def __len__(self) -> int:
        return len(self.lines)

    def chars(self, lo: int, hi: int) -> int:
        """Length of rows lo..hi joined with newlines."""
        return self._prefix[hi + 1] - self._prefix[lo] - 1

    def fits(self, lo: int, hi: int, *, soft: bool = False) -> bool:
        b = self.budget
        if soft:
            return self.chars(lo, hi) <= b.soft_chars and hi - lo + 1 <= b.soft_lines
        return self.chars(lo, hi) <= b.max_chars and hi - lo + 1 <= b.max_lines

    def trim(self, lo: int, hi: int) -> tuple[int, int] | None:
        """Shrink a range to its first..last non-blank row; None if it is all blank."""
        while lo <= hi and self.blank[lo]:
            lo += 1
        while hi >= lo and self.blank[hi]:
            hi -= 1
        return (lo, hi) if lo <= hi else None

    def windows(self, lo: int, hi: int, *, overlap: int = 0) -> list[tuple[int, int]]:
        """Greedy runs of whole rows within the budget; a row over budget stands alone.

        With `overlap`, each window after the first repeats the last rows of the previous one.
        """
        out: list[tuple[int, int]] = []
        start = lo
        while start <= hi:
            end = start
            while end < hi and self.fits(start, end + 1):
                end += 1
            out.append((start, end))
            if end >= hi:
                break
            start = max(start + 1, end + 1 - overlap) if end - start + 1 > overlap else end + 1
        return out

    def merge_small(self, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Fold pieces under `min_piece` chars into a neighbour while the sum stays near budget.

        `ranges` must be contiguous (each starts right after the previous one ends).
        """
        out = list(ranges)
        i = 0
        while i < len(out) and len(out) > 1:
            lo, hi = out[i]
            if self.chars(lo, hi) >= self.budget.min_piece:
                i += 1
                continue
            if i > 0 and self.fits(out[i - 1][0], hi, soft=True):
                out[i - 1] = (out[i - 1][0], hi)
                del out[i]
                continue
            if i + 1 < len(out) and self.fits(lo, out[i + 1][1], soft=True):
                out[i] = (lo, out[i + 1][1])
                del out[i + 1]
                continue
            i += 1
        return out

    def chunk(self, lo: int, hi: int, *, kind: str = "", symbol: str = "",
              breadcrumb: str = "") -> Chunk:
        """A Chunk for rows lo..hi; rows longer than MAX_CHUNK_CHARS are cut to that length."""
        rows = self.lines[lo:hi + 1]
        if any(len(r) > MAX_CHUNK_CHARS for r in rows):
            rows = [r[:MAX_CHUNK_CHARS] for r in rows]
        return Chunk(path=self.path, start_line=lo + 1, end_line=hi + 1, language=self.language,
                     text="\n".join(rows), symbol=symbol, kind=kind, breadcrumb=breadcrumb)


def window_chunks(doc: Lines, *, kind: str = "window") -> list[Chunk]:
    """Plain text: overlapping line windows over the whole file, blank edges trimmed."""
    out: list[Chunk] = []
    last: tuple[int, int] | None = None
    for lo, hi in doc.windows(0, len(doc) - 1, overlap=WINDOW_OVERLAP) if len(doc) else []:
        t = doc.trim(lo, hi)
        if t is None or (last is not None and t[1] <= last[1]):
            continue  # blank, or nothing new after trimming
        out.append(doc.chunk(*t, kind=kind))
        last = t
    return out
