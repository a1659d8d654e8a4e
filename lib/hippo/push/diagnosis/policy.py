"""Which few pieces of evidence to show: strongest first, no overlaps, nothing the output already
shows, docs and changelogs last, a small character budget.

The weights encode an order of evidence, not a tuning: what the user just changed in the code under
test, then where it raised, then what the error names, then what the failing test calls, then the
test itself; a test-harness or documentation file only when nothing else is there.
"""
from __future__ import annotations

import re

from hippo.core import pathkind
from hippo.push.diagnosis.evidence import Evidence, LiveFiles, relocate, window

SNIPPET_BUDGET = 1200  # characters of code shown per failure
MAX_HITS = 3
MIN_ROOM = 250  # a hit cut below this many characters says too little
SHOWN_SHARE = 0.6  # a window whose lines the output already prints at least this much is dropped
MIN_WEIGHT = 20.0

# the weight of each kind of evidence (the order described above)
W_CHANGED = 100.0
W_RAISE = 90.0
W_NAMED = 85.0
W_MESSAGE = 80.0
W_FRAME = 60.0
W_ASSERTED = 70.0
W_CALLED = 50.0
W_IMPORTED = 35.0
W_LAST_COMMIT = 40.0
W_TEST = 30.0


# Suspects (diagnosis/suspects.py): definitions the failing test reaches through the code graph, scored
# base + the sum of these weights times each raw feature (suspects.features). The only place the weights
# live; fitted on realfail's tuning split by bench/realfail/fit.py (a coordinate search from hand-set ones).
SUSPECT_WEIGHTS: dict[str, float] = {
    "base": 50.0,
    "distance": -8.0,  # per call beyond the first
    "by_name": -7.0,  # reached through a call resolved by bare name only
    "by_ref": 0.0,  # reached because the definition before it uses it as a value (callback, registry entry)
    "member": -7.0,  # reached as a method of a class the definition before it builds or hands on
    "name_clue": 6.0,  # per word of its name in the failure (assertion, expected/actual values, message)
    "name_test": 4.0,  # per word of its name in the failing test's name
    "body_clue": 3.5,  # per failure word its body holds (up to 4)
    "body_test": 12.0,  # per word of the failing test's name its body holds (up to 5): a test is named for a behaviour
    "frame": -4.0,  # the traceback already runs through it (the frame evidence shows it)
    "size": 6.0,  # its length, up to 80 lines: a long definition has more room for the bug
    "private": 2.0,  # a `_helper`: where the work is done, rarely what a test calls itself
    "constructor": -6.0,  # `__init__` / `constructor`: mostly stores its arguments
    "cochange": 4.0,  # per past commit (up to 3) that changed its file together with the failing test's file
    "recent": 2.0,  # its file changed within RECENT_DAYS of the newest commit
    "data": 0.0,  # a table, pattern or constant (module or class level), not a function
    "data_deep": 0.0,  # ... reached beyond suspects.MAX_DEPTH calls (its distance counts as MAX_DEPTH)
    "handler": 0.0,  # reached as a handler registered (`@X.register(T)`) with a dispatcher the walk reached
    "dispatch_type": 20.0,
    "named_like": -8.0,  # not reached by the walk, found by its name's words in the failing test's name
    "picked": 0.0,  # a method of a class the test picks by a string (`'doctest'`: its `name = 'doctest'`)  # a handler registered for, or a `_print_T` / `visit_T` method named after, a type T the test writes
}
SUSPECT_SHOWN = 2  # suspects that may be shown with code; the rest are pointers
SUSPECT_MIN_SHOWN_DISTANCE = 1  # fitted: a top suspect the test calls directly shows more than its 12-line header
SUSPECT_POINTERS = 8
MAX_SUSPECT_LINES = 24  # a suspect shows whole when it is this short, else these many lines around its match
W_SUSPECT_MAX = W_ASSERTED - 2  # a suspect never outranks the failing line's own definitions
W_SUSPECT_MIN = W_IMPORTED
POINTER_CHARS = 2000  # pointers are added while the whole answer stays within this many characters
# Pointers are cheap (one line each) and name the fix more often than a third code span shows it, so the
# code budget leaves room for this many of them (when there are that many) at about POINTER_LINE each.
POINTERS_RESERVED = 3
POINTER_LINE = 125


def code_budget(budget: int, pointers: int) -> int:
    """The characters of code to show when `pointers` suspects wait to be named after it."""
    return max(MIN_ROOM * 2, budget - min(pointers, POINTERS_RESERVED) * POINTER_LINE)


def suspect_weight(score: float) -> float:
    """A suspect's weight among the other evidence: its score, clipped to the band between what the
    failing line calls and what merely is imported."""
    return max(W_SUSPECT_MIN, min(W_SUSPECT_MAX, score))


_EXCEPTION_NAME = re.compile(r"[A-Z][\w$]{0,80}(?:Error|Exception)")


def called_weight(name: str, weight: float, row: dict, frames: list[tuple[str, int, str]]) -> float:
    """The weight of a definition found because the failing line or test calls `name`. Lower when the
    traceback already runs through it (its deeper frames say more than the outer call does), and for an
    exception class: in the failing assertion it is what the test expects raised, not the code under test."""
    if weight >= W_NAMED:
        return weight
    if any(p == row["path"] and row["start_line"] <= n <= row["end_line"] for p, n, _ in frames):
        return min(weight, W_IMPORTED)
    if _EXCEPTION_NAME.fullmatch(name):
        return min(weight, W_IMPORTED)
    return weight


def adjust(ev: Evidence) -> float:
    """Tests and docs weigh less than the code under test, whatever found them."""
    w = ev.weight
    if pathkind.reads_as_doc(ev.path):
        w *= 0.3
    elif pathkind.is_test(ev.path):
        w *= 0.5
    return w


def shown_lines(text: str) -> set[str]:
    """Stripped lines of the failure output long enough to identify a source line."""
    return {s for s in (line.strip() for line in text.split("\n")) if len(s) >= 12}


def _shown_share(snippet: str, shown: set[str]) -> float:
    lines = [s for s in (line.strip() for line in snippet.split("\n")) if len(s) >= 12]
    if not lines:
        return 0.0
    return sum(1 for s in lines if s in shown) / len(lines)


def select(candidates: list[Evidence], live: LiveFiles, output: str, exclude: set[str],
           budget: int = SNIPPET_BUDGET, max_hits: int = MAX_HITS) -> list[tuple[Evidence, int, int, str]]:
    """(evidence, first line, last line, live text) for the hits to show, best first."""
    shown = shown_lines(output)
    ranked = sorted(candidates, key=adjust, reverse=True)
    out: list[tuple[Evidence, int, int, str]] = []
    used = 0
    for ev in ranked:
        if len(out) >= max_hits or budget - used < MIN_ROOM:
            break
        if adjust(ev) < MIN_WEIGHT:
            continue
        moved = relocate(ev, live)
        if moved is None:
            continue
        ev = moved
        win = window(ev, live)
        if win is None:
            continue
        lo, hi, text = win
        if not text.strip() or f"{ev.path}:{lo}-{hi}" in exclude:
            continue
        if any(o.path == ev.path and lo <= ohi and olo <= hi for o, olo, ohi, _ in out):
            continue  # overlapping evidence already chosen
        if ev.weight < W_CHANGED and _shown_share(text, shown) >= SHOWN_SHARE:
            continue  # the output already prints these lines (an edit's lines are news even when printed)
        room = min(budget - used, int(budget * ev.share))
        if len(text) > room:
            lo, hi, text = _cut(text, lo, ev.focus, room)
        out.append((ev, lo, hi, text))
        used += len(text)
    return out


def _cut(text: str, lo: int, focus: int, room: int) -> tuple[int, int, str]:
    """Whole lines around `focus` within `room` characters."""
    lines = text.split("\n")
    i = max(0, min(focus - lo, len(lines) - 1))
    a, b, size = i, i + 1, len(lines[i])
    while True:
        grew = False
        if b < len(lines) and size + len(lines[b]) + 1 <= room:
            size += len(lines[b]) + 1
            b += 1
            grew = True
        if a > 0 and (b - i) > 2 * (i - a) and size + len(lines[a - 1]) + 1 <= room:
            a -= 1
            size += len(lines[a]) + 1
            grew = True
        if not grew:
            break
    return lo + a, lo + b - 1, "\n".join(lines[a:b])
