"""Where a Markdown or reStructuredText document's sections start: the one heading parser. The chunker cuts
sections at these headings and the SessionStart brief titles a spec file's sections with them.

A document is repository input and one line of it may be 100 KB, so each line costs string checks and
patterns without overlapping repeats (a closing `#` run is peeled off by hand, not by a lazy regex, which
backtracked quadratically in a long run of spaces). Stdlib only.
"""
from __future__ import annotations

import re
import string

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")  # opens or closes a Markdown code block


def fence_step(line: str, fence: str) -> tuple[str, bool]:
    """The code fence open after `line` ('' for none) and whether `line` opens, closes or sits inside one:
    a closing fence has the opening one's character and at least its length."""
    m = FENCE.match(line)
    if fence:
        closes = m is not None and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
        return ("" if closes else fence), True
    return (m.group(1), True) if m else ("", False)


_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d+[.)])\s")
_PUNCTUATION = frozenset(string.punctuation)  # what may adorn an RST title


def headings(lines: list[str], flavour: str) -> list[tuple[int, int, str]]:
    """(row, level, title) of each heading of a document, in order: RST rules for `flavour="rst"`,
    Markdown (ATX and setext) for anything else. `lines` carry no line breaks."""
    return rst_headings(lines) if flavour == "rst" else markdown_headings(lines)


def atx(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line (`## Title ##`), else None: up to 3 spaces, 1-6 `#`, then a
    space or the end; an optional closing run of `#` after a space is not part of the title."""
    text = line.lstrip(" ")
    if len(line) - len(text) > 3 or not text.startswith("#"):
        return None
    rest = text.lstrip("#")
    level = len(text) - len(rest)
    if level > 6 or (rest and rest[0] not in " \t"):
        return None
    title = rest.strip()
    bare = title.rstrip("#")
    if not bare:
        return level, ""
    if len(bare) < len(title) and bare[-1] in " \t":
        title = bare.rstrip()
    return level, title


def markdown_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """Markdown headings outside code fences and YAML front matter."""
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
        fence, fenced = fence_step(line, fence)
        if fenced:
            continue
        head = atx(line)
        if head is not None:
            out.append((i, *head))
            continue
        if (i + 1 < len(lines) and line.strip() and not line.startswith((" " * 4, "\t"))
                and _SETEXT.match(lines[i + 1])
                and (i == start or not lines[i - 1].strip())
                and not _LIST_ITEM.match(line)):
            level = 1 if lines[i + 1].strip()[0] == "=" else 2
            out.append((i, level, line.strip()))
    return out


def rst_adornment(line: str) -> str | None:
    """The character of an RST adornment line (3+ of one punctuation character, trailing space allowed)."""
    text = line.rstrip()
    if len(text) >= 3 and text[0] in _PUNCTUATION and text.count(text[0]) == len(text):
        return text[0]
    return None


def rst_headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """RST titles: a line underlined (optionally overlined) by one repeated punctuation character. Levels
    follow the order in which adornment styles first appear, as RST defines them; the row is the overline's
    when there is one."""
    styles: list[tuple[str, bool]] = []
    out: list[tuple[int, int, str]] = []
    i = 0
    while i + 1 < len(lines):
        title, under = lines[i], lines[i + 1]
        char = rst_adornment(under)
        if (char and title.strip() and not title[0].isspace() and not rst_adornment(title)
                and len(under.rstrip()) >= min(len(title.rstrip()), 3)):
            over = i > 0 and lines[i - 1].rstrip() == under.rstrip()
            style = (char, over)
            if style not in styles:
                styles.append(style)
            out.append((i - 1 if over else i, styles.index(style) + 1, title.strip()))
            i += 2
            continue
        i += 1
    return out
