"""Syntax-aware chunking of source code with tree-sitter.

Units (functions, classes, methods ...) become chunks; tiny neighbours (imports, constants,
one-line helpers) are grouped up to the budget; a unit over budget is split on its members
(class -> methods) or, for function bodies, on statement boundaries, never mid-line. The
layout always partitions the file's rows, so no line is lost. tree-sitter is imported lazily.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from hippo.index.chunk import Chunk
from hippo.index.chunking.lines import Lines
from hippo.index.chunking.specs import CONTAINER_KINDS, UnitInfo, find_body, resolve

Node = Any
_MAX_DEPTH = 200  # deeper syntax than this (generated code) falls back to line windows
_local = threading.local()  # tree-sitter parsers are not safe to share between threads


def get_parser(lang: str) -> Any | None:
    """A cached parser for `lang`, or None if the grammar is unavailable."""
    cache: dict[str, Any] = getattr(_local, "parsers", None) or {}
    _local.parsers = cache
    if lang not in cache:
        try:
            from tree_sitter_language_pack import get_parser as _load
            cache[lang] = _load(lang)  # type: ignore[arg-type]
        except Exception:  # unknown grammar, broken install: caller falls back to windows
            cache[lang] = None
    return cache[lang]


# Code points in planes 4-16 (unassigned, tags, private use) crash some grammars' scanners outright: tree-sitter-
# bash segfaults on `{` followed by U+60000, so one planted .sh file would kill every `hippo index`. The parser
# sees a harmless 4-byte stand-in (byte offsets stay put); chunks keep the real text.
_UNSAFE_FOR_SCANNERS = re.compile("[\U00040000-\U0010FFFF]")
_STAND_IN = "\U0001F4C4"


def _parser_safe(text: str) -> str:
    if text and max(text) >= "\U00040000":
        return _UNSAFE_FOR_SCANNERS.sub(_STAND_IN, text)
    return text


def chunk_code(doc: Lines, grammar: str, graph: list | None = None) -> list[Chunk] | None:
    """Chunks for a source file, or None when it cannot be parsed (caller uses windows). When `graph` is
    a list, the file's code graph (chunking.graph) is appended to it, from the same parse."""
    parser = get_parser(grammar)
    if parser is None:
        return None
    src = _parser_safe("\n".join(doc.lines)).encode("utf-8", "replace")
    try:
        tree = parser.parse(src)
    except Exception:
        return None
    if graph is not None:
        from hippo.index.chunking.graph import extract

        try:
            fg = extract(tree, src, grammar)
        except Exception:  # noqa: BLE001 - a graph is extra: the chunks must not depend on it
            fg = None
        if fg is not None:
            graph.append(fg)
    layout = _Layout(doc, grammar, src)
    pieces = layout.container(tree.root_node.children, 0, len(doc) - 1, scope="",
                              code_kind="module", code_symbol="", header=False)
    out: list[Chunk] = []
    for p in pieces:
        t = doc.trim(p.lo, p.hi)
        if t is not None:
            out.append(doc.chunk(*t, kind=p.kind, symbol=p.symbol))
    return out


@dataclass
class _Piece:
    lo: int
    hi: int
    kind: str
    symbol: str
    code_only: bool = False


@dataclass
class _Atom:
    lo: int
    hi: int
    nodes: list[Node]
    unit: UnitInfo | None = None


@dataclass
class _Group:
    lo: int
    hi: int
    units: list[tuple[str, str]] = field(default_factory=list)  # (kind, qualified name)
    has_header: bool = False


def _rows(node: Node) -> tuple[int, int]:
    lo, hi = node.start_point[0], node.end_point[0]
    if hi > lo and node.end_point[1] == 0:  # ends at the start of the next line
        hi -= 1
    return lo, hi


def _is_leading(node: Node) -> bool:
    """Comments and attributes that belong to the definition right below them."""
    return "comment" in node.type or node.type in ("attribute_item", "decorator", "annotation")


def _qualify(scope: str, name: str) -> str:
    if not scope:
        return name
    return f"{scope}.{name}" if name else scope


class _Layout:
    def __init__(self, doc: Lines, lang: str, src: bytes) -> None:
        self.doc = doc
        self.lang = lang
        self.src = src

    # -- atoms: sibling nodes turned into a row partition -------------------------------------
    def _atoms(self, nodes: list[Node], lo: int, hi: int, *, units: bool) -> list[_Atom]:
        """Partition rows lo..hi along `nodes`; siblings sharing a row share an atom.

        Blank gaps go to the previous atom, rows before the first node to the first atom.
        With `units`, definitions are resolved and leading comments attached to them.
        """
        atoms: list[_Atom] = []
        for node in nodes:
            nlo, nhi = _rows(node)
            nlo, nhi = max(nlo, lo), min(nhi, hi)
            if nlo > nhi:
                continue
            unit = resolve(node, self.lang, self.src) if units else None
            if atoms and nlo <= atoms[-1].hi:  # shares a row with the previous atom
                prev = atoms[-1]
                prev.hi = max(prev.hi, nhi)
                prev.nodes.append(node)
                if prev.unit is None and unit is not None:
                    prev.unit = unit
                continue
            if (unit is not None and atoms and atoms[-1].unit is None
                    and all(_is_leading(n) for n in atoms[-1].nodes)
                    and atoms[-1].hi >= nlo - 1):
                prev = atoms[-1]  # doc comment / attribute directly above: part of the unit
                prev.hi, prev.unit = nhi, unit
                prev.nodes.append(node)
                continue
            atoms.append(_Atom(nlo, nhi, [node], unit))
        if not atoms:
            return []
        atoms[0].lo = lo
        for prev, nxt in zip(atoms, atoms[1:], strict=False):
            prev.hi = nxt.lo - 1
        atoms[-1].hi = hi
        return atoms

    # -- a run of siblings (module, class body) -----------------------------------------------
    def container(self, nodes: list[Node], lo: int, hi: int, *, scope: str, code_kind: str,
                  code_symbol: str, header: bool) -> list[_Piece]:
        doc = self.doc
        atoms = self._atoms(nodes, lo, hi, units=True)
        if not atoms:
            return [_Piece(a, b, code_kind, code_symbol, True) for a, b in doc.windows(lo, hi)]
        # consecutive code atoms form one run, so statements pack together
        merged: list[_Atom] = []
        for a in atoms:
            if merged and a.unit is None and merged[-1].unit is None:
                merged[-1].hi = a.hi
                merged[-1].nodes.extend(a.nodes)
            else:
                merged.append(a)
        pieces: list[_Piece] = []
        group: _Group | None = None

        def flush() -> None:
            nonlocal group
            if group is not None:
                pieces.append(self._describe(group, scope, code_kind, code_symbol))
                group = None

        def add(a: _Atom, unit: tuple[str, str] | None) -> None:
            nonlocal group
            if group is not None and not doc.fits(group.lo, a.hi):
                flush()
            if group is None:
                group = _Group(a.lo, a.hi, has_header=header and a.lo == lo)
            group.hi = a.hi
            if unit is not None:
                group.units.append(unit)

        in_container = code_kind in CONTAINER_KINDS
        for a in merged:
            if a.unit is None:
                if doc.fits(a.lo, a.hi):
                    add(a, None)
                    continue
                flush()
                ranges = self.split(a.nodes, a.lo, a.hi, 0)
                first = header and a.lo == lo
                for r_lo, r_hi in ranges:
                    is_head = first and r_lo == lo
                    pieces.append(_Piece(r_lo, r_hi, code_kind, code_symbol, not is_head))
                continue
            kind, name = a.unit.kind, a.unit.name
            if kind == "function" and in_container:
                kind = "method"
            qual = _qualify(scope, name)
            if doc.fits(a.lo, a.hi):
                if doc.chars(a.lo, a.hi) < doc.budget.min_piece * 3 // 2:
                    add(a, (kind, qual))
                else:
                    flush()
                    pieces.append(_Piece(a.lo, a.hi, kind, qual))
                continue
            flush()
            pieces.extend(self.unit(a, kind, qual))
        flush()
        return self._absorb_small_code(pieces)

    def _describe(self, g: _Group, scope: str, code_kind: str, code_symbol: str) -> _Piece:
        names = list(dict.fromkeys(q for _, q in g.units))  # `impl` blocks repeat a type name
        if g.has_header:
            return _Piece(g.lo, g.hi, code_kind, ", ".join([code_symbol, *names]))
        if not g.units:
            return _Piece(g.lo, g.hi, code_kind, code_symbol, True)
        if len(g.units) == 1:
            return _Piece(g.lo, g.hi, g.units[0][0], names[0])
        return _Piece(g.lo, g.hi, "group", ", ".join(names))

    def _absorb_small_code(self, pieces: list[_Piece]) -> list[_Piece]:
        """A stray statement between units (`x = 1`, `main()`) joins a neighbour."""
        doc = self.doc
        i = 0
        while i < len(pieces) and len(pieces) > 1:
            p = pieces[i]
            if not p.code_only or doc.chars(p.lo, p.hi) >= doc.budget.min_piece:
                i += 1
                continue
            if i > 0 and doc.fits(pieces[i - 1].lo, p.hi, soft=True):
                pieces[i - 1].hi = p.hi
                del pieces[i]
                continue
            if i + 1 < len(pieces) and doc.fits(p.lo, pieces[i + 1].hi, soft=True):
                pieces[i + 1].lo = p.lo
                del pieces[i]
                continue
            i += 1
        return pieces

    # -- one definition over budget -----------------------------------------------------------
    def unit(self, a: _Atom, kind: str, qual: str) -> list[_Piece]:
        assert a.unit is not None
        node = a.unit.node
        if kind in CONTAINER_KINDS:
            body = find_body(node)
            if body is not None:
                # members become their own chunks; the header stays with the first piece
                return self.container(body.children, a.lo, a.hi, scope=qual, code_kind=kind,
                                      code_symbol=qual, header=True)
        return [_Piece(lo, hi, kind, qual) for lo, hi in self.split(a.nodes, a.lo, a.hi, 0)]

    # -- generic: split rows lo..hi on the boundaries of `nodes`' children --------------------
    def split(self, nodes: list[Node], lo: int, hi: int, depth: int) -> list[tuple[int, int]]:
        doc = self.doc
        if doc.fits(lo, hi):
            return [(lo, hi)]
        children = [c for n in nodes for c in n.children]
        if not children or depth > _MAX_DEPTH:
            return doc.windows(lo, hi)
        atoms = self._atoms(children, lo, hi, units=False)
        if not atoms:
            return doc.windows(lo, hi)
        if len(atoms) == 1:  # one child spans everything: look inside it
            return self.split(atoms[0].nodes, lo, hi, depth + 1)
        out: list[tuple[int, int]] = []
        cur: tuple[int, int] | None = None
        for a in atoms:
            if doc.fits(a.lo, a.hi):
                if cur is not None and doc.fits(cur[0], a.hi):
                    cur = (cur[0], a.hi)
                else:
                    if cur is not None:
                        out.append(cur)
                    cur = (a.lo, a.hi)
                continue
            sub = self.split(a.nodes, a.lo, a.hi, depth + 1)
            if cur is not None:
                # a short lead-in (signature, `if ...:` line) rides with what follows it
                if doc.fits(cur[0], sub[0][1], soft=True):
                    sub[0] = (cur[0], sub[0][1])
                else:
                    out.append(cur)
                cur = None
            out.extend(sub)
        if cur is not None:
            out.append(cur)
        return doc.merge_small(out)
