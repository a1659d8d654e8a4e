"""A piece of evidence (a line range of one file and why it is evidence) and its live text.

Evidence is located with the index (chunk boundaries, definitions, literal hits) but always shown from
the file on disk: when the file changed since indexing, an index-located range is re-found in the live
file by the text it was found for (a definition's header, a literal) or dropped, never shown stale.
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hippo.core.repo_read import RepoReader

MAX_HIT_LINES = 24  # a hit is cut to this many lines around its focus line
MAX_FILE_BYTES = 2_000_000
READ_CACHE_FILES = 256
_READ_CACHE: OrderedDict[tuple[str, str], list] = OrderedDict()  # LiveFiles._entry


@dataclass
class Evidence:
    path: str
    start: int  # the enclosing unit, as known (1-based, inclusive)
    end: int
    focus: int  # the line the evidence is about
    why: str
    weight: float  # policy's ordering: higher first
    anchor: str = ""  # text the range was found by (re-found in the live file when it moved)
    from_index: bool = False  # the range came from the index, not from the output or a diff
    language: str = ""
    max_lines: int = MAX_HIT_LINES  # definitions show their head, hunks and frames more around the line
    share: float = 1.0  # the most of the code budget it may take (a suspect leaves room for the next one)


class LiveFiles:
    """Live file text, read once per diagnosis, plus whether each file still matches the index."""

    def __init__(self, root: Path, state) -> None:
        self.root = root
        self.state = state
        self._lines: dict[str, list[str] | None] = {}
        self._entries: dict[str, list | None] = {}
        self._reader: RepoReader | None = None

    def lines(self, path: str) -> list[str] | None:
        """The live lines, redacted exactly as the indexer redacts (a snippet read from disk must not carry
        the secret the index never stored)."""
        if path not in self._lines:
            entry = self._entry(path)
            if entry is not None and entry[2] is None:
                from hippo.core.secrets import redact

                entry[2] = redact("\n".join(entry[1]))[0].split("\n")
            self._lines[path] = entry[2] if entry is not None else None
        return self._lines[path]

    def scoring_lines(self, path: str) -> list[str] | None:
        """The live lines NOT redacted, for scoring only (the words a suspect's body holds): redaction is
        most of a read's cost and a score shows nothing. Never put these lines in an answer."""
        if path in self._lines:
            return self._lines[path]
        entry = self._entry(path)
        return entry[1] if entry is not None else None

    def _entry(self, path: str) -> list | None:
        """[lstat stamp, raw lines, redacted lines or None until asked for], read through the one read gate
        (no symlink, FIFO or secret name), once per diagnosis. A warm server reads the same few files failure
        after failure: an entry is kept while the file's lstat (inode, mode, size, mtime) stays the same."""
        if path not in self._entries:
            self._entries[path] = self._stamped_entry(path)
        return self._entries[path]

    def _stamped_entry(self, path: str) -> list | None:
        if path not in self.state.files:  # only what the index admitted (ignored, secret, outside: never)
            return None
        try:
            st = os.lstat(self.root / path)
            stamp = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns)
        except OSError:
            return None
        key = (str(self.root), path)
        hit = _READ_CACHE.get(key)
        if hit is not None and hit[0] == stamp:
            _READ_CACHE.move_to_end(key)
            return hit
        raw = self._read_gated(path)
        if raw is None:
            return None
        entry: list = [stamp, raw, None]
        _READ_CACHE[key] = entry
        if len(_READ_CACHE) > READ_CACHE_FILES:
            _READ_CACHE.popitem(last=False)
        return entry

    def _read_gated(self, path: str) -> list[str] | None:
        if self._reader is None:
            from hippo.core.repo_read import RepoReader

            self._reader = RepoReader(self.root, max_bytes=MAX_FILE_BYTES)
        reader = self._reader
        text = reader.read_text(path, check_ignored=False)  # the index applied .gitignore already
        if text is None:
            return None
        return text.replace("\x00", "\ufffd").split("\n")

    def changed_since_index(self, path: str) -> bool:
        rec = self.state.files.get(path)
        try:
            st = (self.root / path).stat()
        except OSError:
            return True
        return rec is None or st.st_size != rec.size or st.st_mtime_ns != rec.mtime_ns


def relocate(ev: Evidence, live: LiveFiles) -> Evidence | None:
    """`ev` with its range valid in the live file, or None when it can no longer be found there."""
    lines = live.lines(ev.path)
    if lines is None:
        return None
    n = len(lines)
    if ev.from_index and ev.anchor and live.changed_since_index(ev.path):
        at = ev.focus - 1
        if not (0 <= at < n and ev.anchor in lines[at]):
            found = [i for i, text in enumerate(lines) if ev.anchor in text[:2000]]
            if not found:
                return None
            best = min(found, key=lambda i: abs(i - at))
            shift = best - at
            ev.focus += shift
            ev.start, ev.end = max(1, ev.start + shift), min(n, ev.end + shift)
    ev.start, ev.end = max(1, min(ev.start, n)), max(1, min(ev.end, n))
    ev.focus = max(ev.start, min(ev.focus, ev.end)) if ev.start <= ev.focus <= ev.end else max(1, min(ev.focus, n))
    if not (ev.start <= ev.focus <= ev.end):
        ev.start, ev.end = min(ev.start, ev.focus), max(ev.end, ev.focus)
    return ev


def window(ev: Evidence, live: LiveFiles) -> tuple[int, int, str] | None:
    """(first line, last line, text) of the live lines shown for `ev`: the whole unit when short,
    else `ev.max_lines` around the focus (a third before it)."""
    max_lines = ev.max_lines
    lines = live.lines(ev.path)
    if lines is None:
        return None
    lo, hi = ev.start, ev.end
    if hi - lo + 1 > max_lines:
        lo = max(ev.start, ev.focus - max_lines // 3)
        hi = min(ev.end, lo + max_lines - 1)
        lo = max(ev.start, hi - max_lines + 1)
    while hi > lo and not lines[hi - 1].strip():  # no trailing blank lines
        hi -= 1
    return lo, hi, "\n".join(lines[lo - 1:hi])


_DEF_WORDS = r"(?:def|class|function|fn|func|async function|async def|interface|type|struct|enum|trait|impl)"
_VAR_WORDS = r"(?:const|let|var)"


# Ways a name is defined, strongest first: a def/class/function header, a method header (`name(...) {`),
# then an assignment (`name = `, `const name =`), which is as often a local variable that shares the name.
# Each is (what must fill the line before the name, what must follow it): compiled once, not per name
# (compiling three patterns per name cost a first-seen failure more than matching them).
_DEFINITION_FORMS = [
    (re.compile(r"[^\S\n]*(?:export[^\S\n]+)?(?:pub(?:\([\w ]{0,20}\))?[^\S\n]+)?" + _DEF_WORDS + r"[^\S\n]+"), None),
    (re.compile(r"[^\S\n]+(?:static[^\S\n]+|async[^\S\n]+|get[^\S\n]+|set[^\S\n]+)?"),
     re.compile(r"[^\S\n]*\([^)\n]{0,300}\)[^\S\n]*\{")),
    (re.compile(r"[^\S\n]*(?:export[^\S\n]+)?(?:" + _VAR_WORDS + r"[^\S\n]+)?(?:self\.|this\.|exports\.|module\.exports\.)?"),
     re.compile(r"[^\S\n]*=[^=]")),
]
_WORD_CHAR = re.compile(r"\w")


def _defines(line: str, name: str, form: int) -> bool:
    """Whether `line` (its first 500 characters) defines `name` in the form-th way of _DEFINITION_FORMS."""
    line = line[:500]
    before, after = _DEFINITION_FORMS[form]
    at = line.find(name)
    while at >= 0 and name:
        end = at + len(name)
        if before.fullmatch(line, 0, at):
            if after is not None:
                if after.match(line, end):
                    return True
            elif _boundary(line, end):
                return True
        at = line.find(name, at + 1)
    return False


def _boundary(line: str, at: int) -> bool:
    """`\\b` at offset `at` of `line`."""
    left = at > 0 and bool(_WORD_CHAR.match(line[at - 1]))
    right = at < len(line) and bool(_WORD_CHAR.match(line[at]))
    return left != right


def definition_line(lines: list[str], name: str, near: int | None = None) -> int | None:
    """1-based line of `name`'s definition in live text (`def name`, `function name`, `name(...) {`,
    `name = ...`), for files whose index entry is stale: the strongest kind of definition, and of
    those the one nearest `near` (where the index last saw it)."""
    holding = [(i, text) for i, text in enumerate(lines) if name in text[:500]]
    for form in range(len(_DEFINITION_FORMS)):
        found = [i + 1 for i, text in holding if _defines(text, name, form)]
        if found:
            return found[0] if near is None else min(found, key=lambda n: abs(n - near))
    return None


def definition_body(text: str, name: str, max_lines: int = 60) -> list[str]:
    """The lines of `name`'s definition in a chunk's `text`: from its header to the first line indented
    no deeper than the header (a closing brace ends it too), at most `max_lines`."""
    lines = text.split("\n")
    at = definition_line(lines, name)
    if at is None:
        return []
    head = lines[at - 1]
    indent = len(head) - len(head.lstrip())
    out = [head]
    for t in lines[at:at + max_lines]:
        if t.strip() and len(t) - len(t.lstrip()) <= indent:
            if t.strip()[:1] in "})]":
                out.append(t)
            break
        out.append(t)
    return out


_BLOCK_START = re.compile(r"^[^\S\n]*(?:async[^\S\n]+)?(?:def|class|function|fn|func|it|test|describe)\b")


def body_of(text: str, marker: str, max_lines: int = 80) -> list[str]:
    """The lines of the block in `text` that starts at the first line holding `marker` (a test's
    `def name` or its quoted title), up to the next block at the same or a lower indentation."""
    lines = text.split("\n")
    start = next((i for i, t in enumerate(lines) if marker in t[:600]), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = [lines[start]]
    for t in lines[start + 1:start + max_lines]:
        if t.strip() and len(t) - len(t.lstrip()) <= indent and _BLOCK_START.match(t):
            break
        out.append(t)
    return out
