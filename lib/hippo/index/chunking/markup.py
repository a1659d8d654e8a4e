"""Markdown and reStructuredText: one chunk per heading section (`headings.py` finds them), with a breadcrumb.

Sections over budget split at paragraph boundaries (a fenced code block counts as one
paragraph); sections under `min_piece` chars (a bare heading, a one-liner) merge into a
neighbour. A merged chunk keeps the breadcrumb of its largest part. Stdlib only.
"""
from __future__ import annotations

from hippo.index.chunk import Chunk
from hippo.index.chunking.headings import fence_step, headings
from hippo.index.chunking.lines import Lines


def _paragraphs(doc: Lines, lo: int, hi: int) -> list[tuple[int, int]]:
    """Row ranges partitioning lo..hi, cut after blank rows outside code fences."""
    out: list[tuple[int, int]] = []
    start, fence = lo, ""
    for i in range(lo, hi + 1):
        fence, fenced = fence_step(doc.lines[i], fence)
        if not fenced and doc.blank[i] and i < hi and not doc.blank[i + 1]:
            out.append((start, i))
            start = i + 1
    out.append((start, hi))
    return out


def _split_section(doc: Lines, lo: int, hi: int) -> list[tuple[int, int]]:
    if doc.fits(lo, hi):
        return [(lo, hi)]
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for p_lo, p_hi in _paragraphs(doc, lo, hi):
        if cur is not None and doc.fits(cur[0], p_hi):
            cur = (cur[0], p_hi)
            continue
        if cur is not None:
            out.append(cur)
        if doc.fits(p_lo, p_hi):
            cur = (p_lo, p_hi)
        else:
            out.extend(doc.windows(p_lo, p_hi))
            cur = None
    if cur is not None:
        out.append(cur)
    return doc.merge_small(out)


def chunk_markup(doc: Lines, flavour: str) -> list[Chunk]:
    """Section chunks for a Markdown (`flavour="markdown"`) or RST (`"rst"`) document."""
    if not len(doc):
        return []
    heads = headings(doc.lines, flavour)
    # sections: (lo, hi, breadcrumb path)
    sections: list[tuple[int, int, tuple[str, ...]]] = []
    if not heads or heads[0][0] > 0:
        sections.append((0, (heads[0][0] - 1) if heads else len(doc) - 1, ()))
    stack: list[tuple[int, str]] = []
    for n, (row, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = heads[n + 1][0] - 1 if n + 1 < len(heads) else len(doc) - 1
        sections.append((row, end, tuple(t for _, t in stack)))
    # pieces: [lo, hi, crumb, size of the part the crumb came from]
    pieces: list[list] = []
    for lo, hi, crumb in sections:
        for p_lo, p_hi in _split_section(doc, lo, hi):
            pieces.append([p_lo, p_hi, crumb, doc.chars(p_lo, p_hi)])
    _merge_tiny(doc, pieces)
    out: list[Chunk] = []
    for lo, hi, crumb, _ in pieces:
        t = doc.trim(lo, hi)
        if t is not None:
            out.append(doc.chunk(*t, kind="section", symbol=crumb[-1] if crumb else "",
                                 breadcrumb=" > ".join(crumb)))
    return out


def _merge_tiny(doc: Lines, pieces: list[list]) -> None:
    min_piece = doc.budget.min_piece
    i = 0
    while i < len(pieces) and len(pieces) > 1:
        lo, hi, crumb, weight = pieces[i]
        if doc.chars(lo, hi) >= min_piece:
            i += 1
            continue
        for j in (i + 1, i - 1):  # prefer the next section: a bare heading introduces it
            if 0 <= j < len(pieces):
                a, b = sorted((i, j))
                if doc.fits(pieces[a][0], pieces[b][1]):
                    keep = pieces[j] if pieces[j][3] >= weight else pieces[i]
                    pieces[a] = [pieces[a][0], pieces[b][1], keep[2], keep[3]]
                    del pieces[b]
                    i = a
                    break
        else:
            i += 1
