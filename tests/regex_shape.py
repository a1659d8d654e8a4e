"""Regex helpers for the trust tests: a structural check that a pattern cannot backtrack super-linearly, and
`hard_stop`, which interrupts a runaway match so a regression fails instead of hanging.

Two shapes make Python's backtracking matcher polynomial or exponential on some input:
* nesting: an unbounded repeat inside an unbounded repeat (`(a+)*`, `(?:\\.\\d+)*` after `\\d+`);
* overlap: two unbounded repeats that can sit next to each other (only nullable items, or items whose
  characters they also match, between them) and share a character (`[ \\t]+[^:]*?[ \\t]*:`, `\\s*\\n?\\s*`).
A pattern without either runs each match attempt in time linear in the text it reads. Repeats bounded by a
small count (`{3,120}`) are constant work. The analysis reads the parse tree of `re._parser` and evaluates
character classes over a sample alphabet (ASCII plus a few non-ASCII letters and spaces).
"""
from __future__ import annotations

import ast
import contextlib
import re
import signal
from pathlib import Path

try:
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

HARD_STOP_S = 15


@contextlib.contextmanager
def hard_stop(seconds: float = HARD_STOP_S):
    """Raise TimeoutError in the main thread after `seconds` (re checks for signals while it matches)."""
    def expire(signum, frame):
        raise TimeoutError(f"still matching after {seconds}s: a pattern backtracks super-linearly")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


SMALL = 1000  # a repeat bounded by at most this many is constant work per attempt
ALPHABET = [chr(i) for i in range(128)] + ["é", "Ж", "\u00a0", "\u2028", "中"]
_REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT} | ({C.POSSESSIVE_REPEAT} if hasattr(C, "POSSESSIVE_REPEAT") else set())
_ZERO_WIDTH = {C.AT, C.ASSERT, C.ASSERT_NOT}


def _in_category(cat, ch: str) -> bool:
    table = {
        C.CATEGORY_DIGIT: ch.isdigit(), C.CATEGORY_NOT_DIGIT: not ch.isdigit(),
        C.CATEGORY_SPACE: ch.isspace(), C.CATEGORY_NOT_SPACE: not ch.isspace(),
        C.CATEGORY_WORD: ch.isalnum() or ch == "_", C.CATEGORY_NOT_WORD: not (ch.isalnum() or ch == "_"),
        C.CATEGORY_LINEBREAK: ch == "\n", C.CATEGORY_NOT_LINEBREAK: ch != "\n",
    }
    return table.get(cat, True)


def _one(op, av, ch: str, flags: int) -> bool:
    if op == C.LITERAL:
        return ch == chr(av) or bool(flags & re.I) and ch.lower() == chr(av).lower()
    if op == C.NOT_LITERAL:
        return not _one(C.LITERAL, av, ch, flags)
    if op == C.ANY:
        return ch != "\n" or bool(flags & re.S)
    if op == C.RANGE:
        lo, hi = av
        return lo <= ord(ch) <= hi or bool(flags & re.I) and (lo <= ord(ch.lower()) <= hi or lo <= ord(ch.upper()) <= hi)
    if op == C.CATEGORY:
        return _in_category(av, ch)
    if op == C.IN:
        neg = bool(av) and av[0][0] == C.NEGATE
        hit = any(_one(o, a, ch, flags) for o, a in (av[1:] if neg else av))
        return hit != neg
    return True  # anything else: assume it may match (over-approximation)


class Shape:
    """What an item can match: its characters, whether it can match empty, whether it repeats unboundedly."""

    def __init__(self, chars: frozenset[str], nullable: bool, unbounded: bool):
        self.chars, self.nullable, self.unbounded = chars, nullable, unbounded


def problems(pattern: str | re.Pattern[str], flags: int = 0) -> list[str]:
    """Why `pattern` may backtrack super-linearly ([] when its shape is safe)."""
    if isinstance(pattern, re.Pattern):
        pattern, flags = pattern.pattern, pattern.flags
    tree = P.parse(pattern, flags)
    found: list[str] = []
    _seq(list(tree), tree.state.flags, found, inside_repeat=False)
    return found


def _seq(items, flags: int, found: list[str], inside_repeat: bool) -> Shape:
    chars: set[str] = set()
    nullable = True
    unbounded = False
    pending: set[str] = set()  # characters of the unbounded repeats an upcoming repeat could trade with
    for op, av in _inline_groups(items):
        shape = _item(op, av, flags, found, inside_repeat)
        chars |= shape.chars
        if op in _ZERO_WIDTH:
            continue
        if shape.unbounded:
            if pending & shape.chars:
                found.append(f"overlapping repeats around {sorted(pending & shape.chars)[:5]!r}")
            pending |= shape.chars
            unbounded = True
        elif not shape.nullable:
            pending = pending & shape.chars and pending | shape.chars or set()
        nullable = nullable and shape.nullable
    return Shape(frozenset(chars), nullable, unbounded)


def _inline_groups(items):
    """A plain group (not repeated, no flags of its own) is its items, in place: `\\s*(\\S.*?)` is `\\s*`, `\\S`,
    `.*?`. Alternations stay whole (their characters are pooled, an over-approximation)."""
    for op, av in items:
        if op == C.SUBPATTERN and not av[1] and not av[2]:
            yield from _inline_groups(list(av[3]))
        else:
            yield op, av


def _item(op, av, flags: int, found: list[str], inside_repeat: bool) -> Shape:
    if op in _REPEATS:
        lo, hi, body = av
        big = hi == C.MAXREPEAT or hi > SMALL
        if big and inside_repeat:
            found.append("an unbounded repeat nested in another")
        inner = _seq(list(body), flags, found, inside_repeat=inside_repeat or big)
        if big and inner.unbounded:
            found.append("an unbounded repeat nested in another")
        return Shape(inner.chars, lo == 0 or inner.nullable, big or inner.unbounded)
    if op == C.SUBPATTERN:
        add_flags, del_flags, body = av[1], av[2], av[3]
        return _seq(list(body), (flags | add_flags) & ~del_flags, found, inside_repeat)
    if op == C.BRANCH:
        shapes = [_seq(list(b), flags, found, inside_repeat) for b in av[1]]
        return Shape(frozenset().union(*(s.chars for s in shapes)), any(s.nullable for s in shapes),
                     any(s.unbounded for s in shapes))
    if op in (C.ASSERT, C.ASSERT_NOT):
        _seq(list(av[1]), flags, found, inside_repeat)
        return Shape(frozenset(), True, False)
    if op == C.AT:
        return Shape(frozenset(), True, False)
    if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.CATEGORY, C.RANGE):
        return Shape(frozenset(ch for ch in ALPHABET if _one(op, av, ch, flags)), False, False)
    return Shape(frozenset(ALPHABET), True, False)  # group references and the like: anything


RE_FUNCS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def literal_patterns(path: Path) -> list[tuple[str, str, int]]:
    """(where, pattern, flags) for every `re.<func>(<string literal>, ...)` call in a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RE_FUNCS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            continue
        pat = _const_str(node.args[0])
        if pat is None:
            continue
        flags = 0
        for arg in [*node.args[1:], *(k.value for k in node.keywords if k.arg == "flags")]:
            flags |= _flags_of(arg)
        out.append((f"{path.name}:{node.lineno}", pat, flags))
    return out


def _const_str(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _const_str(node.left), _const_str(node.right)
        return left + right if left is not None and right is not None else None
    return None


def _flags_of(node) -> int:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        value = getattr(re, node.attr, 0)
        return int(value) if isinstance(value, re.RegexFlag) else 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flags_of(node.left) | _flags_of(node.right)
    return 0
