"""Structural questions answered from the code graph: where NAME is defined, who calls it, what it calls.

The `def`, `callers` and `callees` ops of the warm server, the CLI and the MCP tools. Answers carry line
ranges and the live text of the lines they name (read through the repo's read gate and redacted as the
indexer redacts). Names may be bare (`parse`), class-qualified (`Command.parse`) or module-qualified
(`pkg.mod.func`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from hippo.retrieval.codegraph import EXACT, CodeGraph, Def, graph_for

OPS = ("def", "callers", "callees")
VALUE = "value"  # a caller's `resolved` when the target is used there as a value (handed on, registered), not called
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
DEF_LINES = 8  # lines of a definition shown: its signature and the head of its body
MAX_NAME = 300


class _Live:
    """Live lines of indexed files, read once per answer."""

    def __init__(self, root: Path, files) -> None:
        self.root, self.files = root, files
        self._cache: dict[str, list[str] | None] = {}
        self._reader: Any = None  # a RepoReader, opened on the first read

    def lines(self, path: str) -> list[str] | None:
        if path not in self._cache:
            self._cache[path] = self._read(path)
        return self._cache[path]

    def _read(self, path: str) -> list[str] | None:
        if path not in self.files:
            return None
        if self._reader is None:
            from hippo.core.repo_read import RepoReader

            self._reader = RepoReader(self.root, max_bytes=2_000_000)
        text = self._reader.read_text(path, check_ignored=False)
        if text is None:
            return None
        from hippo.core.secrets import redact

        return redact(text.replace("\x00", "\ufffd"))[0].split("\n")

    def span(self, path: str, start: int, end: int) -> str:
        lines = self.lines(path) or []
        return "\n".join(lines[max(0, start - 1):max(0, end)])


def answer(searcher, op: str, name: str, limit: int = DEFAULT_LIMIT) -> dict:
    """{"op", "name", "definitions": [...], "results": [...], "message"} for one structural question."""
    from hippo.core.errors import BadQueryError

    if op not in OPS:
        raise BadQueryError(f"unknown structural query {op!r}; use one of {', '.join(OPS)}")
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME or "\n" in name:
        raise BadQueryError("NAME must be one line naming a function, method or class (e.g. Command.parse).")
    limit = max(1, min(int(limit or DEFAULT_LIMIT), MAX_LIMIT))
    with searcher.store.reading():
        graph = graph_for(searcher.store)
    live = _Live(Path(searcher.root), searcher.state.files)
    defs = graph.find(name)
    out: dict = {"op": op, "name": name, "definitions": [], "results": [], "message": None,
                 "indexed_commit": (searcher.state.indexed_commit or "")[:12]}
    if not defs:
        out["message"] = (f"No definition named {name!r} in the index" +
                          ("" if graph.files else " (this index has no code graph: run `hippo index`)") + ".")
        return out
    out["definitions"] = [_def_row(d, live) for d in defs[:limit if op == "def" else 3]]
    if op == "def":
        return out
    target = _same_name_group(defs)
    if op == "callers":
        out["results"] = _callers(graph, target, live, limit)
    else:
        out["results"] = _callees(graph, target[0], live, limit)
    if not out["results"]:
        out["message"] = f"No {'call sites of' if op == 'callers' else 'calls in'} {defs[0].qual} were found."
    return out


def _same_name_group(defs: list[Def]) -> list[Def]:
    """The definitions a question is about: the best one, plus same-named ones in the same file (a
    property's getter and setter, overloads)."""
    best = defs[0]
    return [d for d in defs if d.path == best.path and d.qual == best.qual] or [best]


def _def_row(d: Def, live: _Live) -> dict:
    row = d.to_dict()
    row["text"] = live.span(d.path, d.start, min(d.end, d.start + DEF_LINES - 1))
    return row


def _callers(graph: CodeGraph, target: list[Def], live: _Live, limit: int) -> list[dict]:
    """Call sites (`resolved` exact or name), then the places that use the target as a value without calling
    it there (`resolved` "value": a callback handed on, a registry entry), within `limit` in all."""
    sites = graph.callers(target)[:limit]
    sites += [(ref, VALUE) for ref in graph.uses(target)[:max(0, limit - len(sites))]]
    out = []
    for call, how in sites:
        within = call.within
        out.append({"path": call.path, "line": call.line, "callee": call.callee, "resolved": how,
                    "symbol": within.qual if within else "", "start_line": within.start if within else call.line,
                    "end_line": within.end if within else call.line,
                    "text": live.span(call.path, call.line, call.line).strip()})
    return out


def _callees(graph: CodeGraph, d: Def, live: _Live, limit: int) -> list[dict]:
    out = []
    seen: set[tuple[str, tuple]] = set()
    for call, found, how in graph.callees(d):
        targets = found[:3] if how == EXACT or len(found) <= 3 else []
        key = (call.callee, tuple((t.path, t.qual) for t in targets))
        if key in seen:
            continue
        seen.add(key)
        out.append({"path": call.path, "line": call.line, "callee": call.callee,
                    "resolved": how if targets else "unresolved",
                    "targets": [t.to_dict() for t in targets]})
        if len(out) >= limit:
            break
    # what resolves inside the repository first; library and builtin calls last
    out.sort(key=lambda r: (not r["targets"], r["resolved"] != EXACT))
    return out
