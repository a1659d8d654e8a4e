"""Gold of a case: the lines a fix (or a mutation) changed in non-test files, in the numbering of the
tree the failure happened in, and the functions enclosing them (Python: ast; JS/TS: tree-sitter)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)
PY_EXT = (".py",)
JS_EXT = (".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx")


def hunk_ranges(diff: str) -> list[tuple[int, int]]:
    """Old-side line ranges of a `git diff -U0` of one file; a pure insertion covers the lines around it."""
    out = []
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        out.append((start, start + count - 1) if count else (max(1, start), start + 1))
    return out


def functions(text: str, path: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every function/method in a file."""
    if path.endswith(PY_EXT):
        return _py_functions(text)
    if path.endswith(JS_EXT):
        return _js_functions(text, path)
    return []


def enclosing(funcs: list[tuple[str, int, int]], lo: int, hi: int) -> list[tuple[str, int, int]]:
    """Innermost functions overlapping lines lo..hi (one per separate function touched)."""
    hits = [f for f in funcs if f[1] <= hi and lo <= f[2]]
    inner = [f for f in hits if not any(g is not f and f[1] <= g[1] and g[2] <= f[2] and g in hits
                                        and (g[1], g[2]) != (f[1], f[2]) for g in hits)]
    return inner


def gold_for(tree: Path, ranges: dict[str, list[tuple[int, int]]]) -> dict:
    """{'files': [...], 'lines': {file: [[a, b]]}, 'functions': [{'file', 'name', 'start', 'end'}]}."""
    funcs_out: list[dict] = []
    for rel, spans in ranges.items():
        try:
            text = (tree / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        funcs = functions(text, rel)
        for lo, hi in spans:
            for name, a, b in enclosing(funcs, lo, hi):
                item = {"file": rel, "name": name, "start": a, "end": b}
                if item not in funcs_out:
                    funcs_out.append(item)
    return {"files": sorted(ranges), "lines": {f: [list(s) for s in v] for f, v in ranges.items()},
            "functions": funcs_out}


def _py_functions(text: str) -> list[tuple[str, int, int]]:
    try:
        mod = ast.parse(text)
    except SyntaxError:
        return []
    out: list[tuple[str, int, int]] = []

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in getattr(child, "decorator_list", [])])
                if not isinstance(child, ast.ClassDef):
                    out.append((name, start, child.end_lineno or child.lineno))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(mod, "")
    return out


_JS_FUNC_TYPES = {"function_declaration", "method_definition", "function_expression", "arrow_function",
                  "generator_function_declaration", "function"}


def _js_functions(text: str, path: str) -> list[tuple[str, int, int]]:
    try:
        from tree_sitter_language_pack import get_parser
    except ImportError:
        return []
    lang = "typescript" if path.endswith((".ts",)) else "tsx" if path.endswith(".tsx") else "javascript"
    tree = get_parser(lang).parse(text.encode("utf-8"))
    out: list[tuple[str, int, int]] = []

    def name_of(node) -> str:
        n = node.child_by_field_name("name")
        if n is not None:
            return n.text.decode("utf-8", "replace")
        parent = node.parent
        if parent is not None and parent.type in {"variable_declarator", "pair", "assignment_expression",
                                                  "public_field_definition", "field_definition"}:
            key = parent.child_by_field_name("name") or parent.child_by_field_name("key") \
                or parent.child_by_field_name("left")
            if key is not None:
                return key.text.decode("utf-8", "replace").split("=")[0].strip()
        return "<anonymous>"

    def walk(node, prefix: str) -> None:
        for child in node.children:
            if child.type in _JS_FUNC_TYPES:
                name = prefix + name_of(child)
                out.append((name, child.start_point[0] + 1, child.end_point[0] + 1))
                walk(child, name + "." if not name.endswith("<anonymous>") else prefix)
            elif child.type in {"class_declaration", "class"}:
                n = child.child_by_field_name("name")
                walk(child, prefix + (n.text.decode() if n is not None else "<class>") + ".")
            else:
                walk(child, prefix)

    walk(tree.root_node, "")
    return out
