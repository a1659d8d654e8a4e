"""Baseline "the test's direct callees": what a developer gets by reading the failing test and grepping
for the definitions of the names its body calls, without any index.

1. The failing test's body: the innermost function around a frame of the output that points into a
   test file; failing that, the test the runner names (pytest `path::test`, unittest `test (mod.Class)`,
   a jest/vitest/mocha/node:test title) looked up in the case's test files.
2. The names called in that body (`name(`, `.name(`, `new Name(`), in order of first call.
3. For each, its definitions in the code under test (`def`/`class`; `function`, methods, `const x =`,
   `x: function`, `exports.x =`), each shown from 2 lines above to CALLEE_LINES below the definition.
The ranked windows are cut at hippo's characters for the case, like the BM25 baseline.
"""
from __future__ import annotations

import re
from pathlib import Path

from bench.realfail import gold as goldmod
from bench.realfail.scoring import Span, frames

CALLEE_LINES = 38  # lines shown below a definition (40-line windows, like the BM25 baseline's 50)
_CALL = re.compile(r"(?:\bnew\s+)?(?<![\w$])([A-Za-z_$][\w$]*)\s*\(")
_NOT_CALLEES = {
    "if", "for", "while", "switch", "return", "function", "catch", "with", "assert", "print", "len", "isinstance",
    "expect", "it", "test", "describe", "t", "require", "import", "super", "self", "this", "typeof", "await",
    "list", "dict", "set", "tuple", "str", "int", "float", "bool", "range", "type", "repr", "sorted", "iter",
    "next", "raises", "elif", "and", "or", "not", "in", "lambda", "yield", "async", "def", "class", "toBe",
    "toEqual", "toStrictEqual", "equal", "deepEqual", "strictEqual", "deepStrictEqual", "ok", "assertEqual",
    "assertTrue", "assertFalse", "assertRaises", "assertIs", "assertIsNone", "assertIn", "plan", "throws",
}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PY_TEST_ID = re.compile(r"(?:^|\s)([\w./-]+\.py)::(?:\w+::)*(\w+)")
_UNITTEST_ID = re.compile(r"^(?:FAIL|ERROR): (\w+) \(")
_JS_TITLE = re.compile(r"^\s*(?:●|\d+\)|not ok \d+ -|✖|×|FAIL\s.*>)\s*(.+?)\s*$")


def _py_def(name: str) -> re.Pattern:
    return re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b")


def _js_def(name: str) -> re.Pattern:
    n = re.escape(name)
    return re.compile(rf"\bfunction\s*\*?\s*{n}\s*\(|^\s*(?:export\s+)?(?:default\s+)?(?:const|let|var)\s+{n}\s*="
                      rf"|^\s*(?:(?:static|async|get|set|public|private|protected|export)\s+)*\*?{n}\s*(?:<[^>]*>)?\([^)]*\)"
                      rf"\s*(?::\s*[^={{]+)?\{{|^\s*{n}\s*:\s*(?:async\s+)?function|\bclass\s+{n}\b"
                      rf"|^\s*(?:[\w$]+\.)+{n}\s*=(?!=)")


def test_body(error: str, root: Path, docs: dict[str, list[str]], test_files: list[str], is_test,
              cwd: Path | None = None) -> tuple[str, int, int] | None:
    """(test file, first line, last line) of the failing test's body, or None."""
    error = _ANSI.sub("", error)  # a person reads the text, not the colour codes
    for path, line in frames(error, root, cwd):
        if path in docs and is_test(path):
            funcs = goldmod.enclosing(goldmod.functions("\n".join(docs[path]), path), line, line)
            if funcs:
                name, a, b = min(funcs, key=lambda f: f[2] - f[1])
                return path, a, b
    files = [f for f in test_files if f in docs] or [p for p in docs if is_test(p)]
    for wanted in _failing_tests(error):
        for path in files:
            text = "\n".join(docs[path])
            funcs = goldmod.functions(text, path)
            for i, line in enumerate(docs[path], 1):
                if wanted not in line:
                    continue
                if path.endswith(".py") and not re.search(rf"def\s+{re.escape(wanted)}\b", line):
                    continue
                starting = [f for f in funcs if f[1] == i] or goldmod.enclosing(funcs, i, i)
                if starting:
                    name, a, b = max(starting, key=lambda f: f[2] - f[1]) if path.endswith(".py") else \
                        min(starting, key=lambda f: f[2] - f[1])
                    return path, a, b
    return None


def _failing_tests(error: str) -> list[str]:
    """Names or titles of the failing tests, as the runner prints them (most specific first)."""
    out: list[str] = []
    lines = error.split("\n")
    for i, raw in enumerate(lines):
        for pat in (_PY_TEST_ID, _UNITTEST_ID):
            m = pat.search(raw)
            if m:
                out.append(m.group(m.lastindex or 1))
        m = _JS_TITLE.match(raw)
        if m:
            nested = _mocha_title(lines, i)  # mocha's summary: "1) suite", then deeper lines, the title last
            title = nested or m.group(1).split(" › ")[-1].split(" > ")[-1].strip()
            title = title.rstrip(":").strip()
            if len(title) >= 4:
                out.append(title)
    return list(dict.fromkeys(out))


def _mocha_title(lines: list[str], i: int) -> str:
    indent = len(lines[i]) - len(lines[i].lstrip())
    last = ""
    for raw in lines[i + 1:]:
        if not raw.strip() or len(raw) - len(raw.lstrip()) <= indent:
            break
        last = raw.strip()
    return last


def called_names(lines: list[str]) -> list[str]:
    names: list[str] = []
    for line in lines:
        code = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
        for m in _CALL.finditer(code):
            name = m.group(1)
            if name not in _NOT_CALLEES and not name.startswith(("test", "assert")) and name not in names:
                names.append(name)
    return names


def callee_windows(error: str, root: Path, docs: dict[str, list[str]], test_files: list[str], is_test, is_src,
                   cwd: Path | None = None) -> list[Span]:
    """The ranked definition windows of what the failing test's body calls (uncut)."""
    body = test_body(error, root, docs, test_files, is_test, cwd)
    if body is None:
        return []
    path, a, b = body
    names = called_names(docs[path][a - 1:b])
    out: list[Span] = []
    src = [p for p in docs if is_src(p)]
    for name in names:
        for rel in src:
            pat = _py_def(name) if rel.endswith(".py") else _js_def(name)
            lines = docs[rel]
            for i, line in enumerate(lines, 1):
                if pat.search(line):
                    lo, hi = max(1, i - 2), min(len(lines), i + CALLEE_LINES)
                    out.append(Span(rel, lo, hi, len("\n".join(lines[lo - 1:hi]))))
    return out
