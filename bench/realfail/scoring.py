"""Scoring a system's injected spans against a case's gold, and the baselines the hook is compared with.

A span is (path relative to the repo, first line, last line, characters). Per case:
- file: a span is in a file the fix changed;
- function: a span overlaps a gold function (gold lines when the change is outside any function);
- line: a span covers a changed line;
- shown: the failure output's own frames (`path:line`) already point inside a gold function, i.e. the
  user could read it off the traceback; the hard subset is the cases where this is false.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FRAME_CONTEXT = 20  # the traceback baseline shows each repo frame's line +- this many lines
GREP_RESULTS = 3

_FRAME_PATTERNS = [
    re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)'),  # Python traceback
    re.compile(r"(?P<path>[\w./{}~\-+@]+\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|rs|go)):(?P<line>\d+)(?::\d+)?"),  # pytest, node, jest
]


@dataclass(frozen=True)
class Span:
    path: str
    start: int
    end: int
    chars: int = 0


def frames(error: str, root: Path, cwd: Path | None = None) -> list[tuple[str, int]]:
    """Repo-relative (path, line) of every frame-like mention in the output, in order, deduplicated;
    paths outside the repo or inside installed packages are dropped."""
    out: list[tuple[str, int]] = []
    root = root.resolve()
    for raw in error.split("\n"):
        for pat in _FRAME_PATTERNS:
            for m in pat.finditer(raw):
                rel = _relative(m.group("path"), root, cwd or root)
                item = (rel, int(m.group("line"))) if rel else None
                if item and item not in out:
                    out.append(item)
    return out


def _relative(path: str, root: Path, cwd: Path) -> str | None:
    if "site-packages" in path or "node_modules" in path or path.startswith("<"):
        return None
    p = Path(path)
    p = p if p.is_absolute() else cwd / p
    try:
        rel = p.resolve().relative_to(root)
    except (ValueError, OSError):
        return None
    return rel.as_posix() if (root / rel).is_file() else None


def score(spans: list[Span], gold: dict) -> dict:
    files = set(gold.get("files") or [])
    fn_ranges = [(f["file"], f["start"], f["end"]) for f in gold.get("functions") or []]
    line_ranges = [(f, a, b) for f, spans_ in (gold.get("lines") or {}).items() for a, b in spans_]
    fn_targets = fn_ranges or line_ranges

    def overlaps(targets) -> bool:
        return any(s.path == f and s.start <= b and a <= s.end for s in spans for f, a, b in targets)

    return {"file": any(s.path in files for s in spans), "function": overlaps(fn_targets),
            "line": overlaps(line_ranges), "chars": sum(s.chars for s in spans)}


def shown_by_frames(error: str, root: Path, gold: dict, cwd: Path | None = None) -> bool:
    fr = frames(error, root, cwd)
    targets = [(f["file"], f["start"], f["end"]) for f in gold.get("functions") or []] or \
        [(f, a, b) for f, s in (gold.get("lines") or {}).items() for a, b in s]
    return any(p == f and a <= n <= b for p, n in fr for f, a, b in targets)


# --- baselines ----------------------------------------------------------------------------------------
def traceback_windows(error: str, root: Path, docs: dict[str, list[str]], cwd: Path | None = None) -> list[Span]:
    """What reading the traceback gives: each repo frame's line +- FRAME_CONTEXT, merged per file."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for path, line in frames(error, root, cwd):
        if path not in docs:
            continue
        n = len(docs[path])
        by_file.setdefault(path, []).append((max(1, line - FRAME_CONTEXT), min(n, line + FRAME_CONTEXT)))
    out = []
    for path, wins in by_file.items():
        wins.sort()
        merged = [list(wins[0])]
        for a, b in wins[1:]:
            if a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        for a, b in merged:
            out.append(Span(path, a, b, len("\n".join(docs[path][a - 1:b]))))
    return out


def budget_matched(results, budget: int) -> list[Span]:
    """A ranked list cut where its characters reach `budget` (the last window partly)."""
    out, used = [], 0
    for r in results:
        if used >= budget:
            break
        out.append(Span(r.path, r.start, r.end, min(r.chars, budget - used)))
        used += r.chars
    return out


_MESSAGE_LINES = [
    re.compile(r"^E\s{2,}(?P<m>\S.*)$"),  # pytest assertion / exception lines
    re.compile(r"^(?:\w+\.)*(?P<m>\w*(?:Error|Exception|Warning)\b:?.*)$"),  # Python / JS exception line
    re.compile(r"^\s*(?P<m>(?:Expected|Received)(?: value)?:.*)$"),  # jest expect output
    re.compile(r"^\s*(?P<m>(?:AssertionError|Error|TypeError|RangeError)\b.*)$"),
]


def error_message(error: str, limit: int = 4) -> str:
    """The message lines of a failure, what a person would paste into grep."""
    out = []
    for raw in error.split("\n"):
        line = raw.rstrip()
        for pat in _MESSAGE_LINES:
            m = pat.match(line)
            if m and m.group("m").strip() and m.group("m") not in out:
                out.append(m.group("m").strip())
                break
        if len(out) >= limit:
            break
    return "\n".join(out)


def read_docs(root: Path, files) -> dict[str, list[str]]:
    docs = {}
    for rel in files:
        try:
            docs[rel] = (root / rel).read_text(encoding="utf-8", errors="replace").split("\n")
        except OSError:
            continue
    return docs


# --- issue 23: "named" (a code span or a pointer overlaps the fix function) -----------------------------
_CANDIDATE = re.compile(r"<candidate\b([^>]*)/?>")
_ATTR = re.compile(r'(\w+)=(?:"([^"]*)"|\'([^\']*)\')')


def pointers(context: str) -> list[Span]:
    """The `<candidate path=".." lines="a-b" .../>` pointers of an injected context, as spans (0 chars:
    they show no code)."""
    from xml.sax.saxutils import unescape

    out = []
    for m in _CANDIDATE.finditer(context or ""):
        attrs = {k: unescape(a if a else b, {"&quot;": '"', "&apos;": "'"}) for k, a, b in _ATTR.findall(m.group(1))}
        lines = re.fullmatch(r"(\d+)-(\d+)", attrs.get("lines", ""))
        if attrs.get("path") and lines:
            out.append(Span(attrs["path"], int(lines.group(1)), int(lines.group(2)), 0))
    return out


def named(spans: list[Span], pointer_spans: list[Span], gold: dict) -> bool:
    """A code span or a pointer overlaps a gold function (gold lines when the fix is outside one)."""
    return bool(score([*spans, *pointer_spans], gold)["function"])
