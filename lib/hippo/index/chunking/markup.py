"""Markdown and reStructuredText: one chunk per heading section, with a breadcrumb.

Sections over budget split at paragraph boundaries (a fenced code block counts as one
paragraph); sections under `min_piece` chars (a bare heading, a one-liner) merge into a
neighbour. A merged chunk keeps the breadcrumb of its largest part. Stdlib only.
"""
from __future__ import annotations

import re

from hippo.index.chunk import Chunk
from hippo.index.chunking.lines import Lines

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_RST_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")  # a run of one punctuation char


def _markdown_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(row, level, title) of each heading outside code fences and front matter."""
    out: list[tuple[int, int, str]] = []
    fence = ""
    start = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    for i in range(start, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        m = _ATX.match(line)
        if m:
            out.append((i, len(m.group(1)), (m.group(2) or "").strip()))
            continue
        if (i + 1 < len(lines) and line.strip() and not line.startswith((" " * 4, "\t"))
                and _SETEXT.match(lines[i + 1])
                and (i == start or not lines[i - 1].strip())
                and not re.match(r"^ {0,3}([-*+]|\d+[.)])\s", line)):
            level = 1 if lines[i + 1].strip()[0] == "=" else 2
            out.append((i, level, line.strip()))
    return out


def _rst_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """RST titles: a line underlined (optionally overlined) by one repeated punctuation char.

    Levels follow the order in which adornment styles first appear, as RST defines them.
    """
    styles: list[tuple[str, bool]] = []
    out: list[tuple[int, int, str]] = []
    i = 0
    while i + 1 < len(lines):
        title, under = lines[i], lines[i + 1]
        m = _RST_ADORN.match(under)
        if (m and title.strip() and not title[0].isspace() and not _RST_ADORN.match(title)
                and len(under.rstrip()) >= min(len(title.rstrip()), 3)):
            over = i > 0 and lines[i - 1].rstrip() == under.rstrip()
            style = (m.group(1), over)
            if style not in styles:
                styles.append(style)
            out.append((i - 1 if over else i, styles.index(style) + 1, title.strip()))
            i += 2
            continue
        i += 1
    return out


def _paragraphs(doc: Lines, lo: int, hi: int) -> list[tuple[int, int]]:
    """Row ranges partitioning lo..hi, cut after blank rows outside code fences."""
    out: list[tuple[int, int]] = []
    start, fence = lo, ""
    for i in range(lo, hi + 1):
        m = _FENCE.match(doc.lines[i])
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = ""
            continue
        if m:
            fence = m.group(1)
        elif doc.blank[i] and i < hi and not doc.blank[i + 1]:
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
    finder = _rst_headings if flavour == "rst" else _markdown_headings
    headings = finder(doc.lines)
    # sections: (lo, hi, breadcrumb path)
    sections: list[tuple[int, int, tuple[str, ...]]] = []
    if not headings or headings[0][0] > 0:
        sections.append((0, (headings[0][0] - 1) if headings else len(doc) - 1, ()))
    stack: list[tuple[int, str]] = []
    for n, (row, level, title) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = headings[n + 1][0] - 1 if n + 1 < len(headings) else len(doc) - 1
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
