"""Test-runner output read as what it is: which tests failed (and where), the source lines a runner
quotes as the failing assertion, and the names an error message is about.

Stdlib-only and pure. Every pattern runs on untrusted output that `signals.extract` has already cut to
MAX_SCAN_CHARS and every line to MAX_LINE_CHARS; each is anchored or bounded so it costs time linear in
its input (no nested or overlapping unbounded quantifiers, horizontal whitespace is `[^\\S\\n]`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


# --- failing tests -----------------------------------------------------------------------------
@dataclass(frozen=True)
class FailingTest:
    path: str  # as printed ("" when the runner does not say)
    name: str  # the innermost name: pytest function, jest/mocha title, go/cargo test function


_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (?P<path>[^\s:]{1,300})::(?P<name>[^\s\[]{1,200})", re.M)
_PYTEST_VERBOSE = re.compile(r"^(?P<path>[^\s:]{1,300})::(?P<name>[^\s\[]{1,200})(?:\[[^\]\n]{0,300}\])? (?:FAILED|ERROR)", re.M)
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (?P<name>\w{1,200}) \((?P<cls>[\w.]{1,300})\)", re.M)
_JEST_FILE = re.compile(r"^[^\S\n]*FAIL[^\S\n]+(?P<path>\S{1,300}\.[cm]?[jt]sx?)\b", re.M)
# vitest: ` FAIL  test/parse.test.ts > parseFilename > works` (file, then the describe path and the title)
_VITEST_FAIL = re.compile(r"^[^\S\n]*FAIL[^\S\n]+(?P<path>\S{1,300}\.[cm]?[jt]sx?) > (?P<t>\S[^\n]{0,400})$", re.M)
_JEST_TITLE = re.compile(r"^[^\S\n]+● (?P<t>\S[^\n]{0,400})$", re.M)
_MOCHA_TITLE = re.compile(r"^[^\S\n]+\d{1,4}\) (?P<t>\S[^\n]{0,400})$", re.M)
_GO_FAIL = re.compile(r"^[^\S\n]*--- FAIL: (?P<name>\w{1,200})", re.M)
_CARGO_FAIL = re.compile(r"^---- (?P<name>[\w:]{1,300}) stdout ----$|^thread '(?P<tname>[\w:]{1,300})' panicked", re.M)
_RSPEC = re.compile(r"^rspec (?P<path>\./\S{1,300}_spec\.rb):\d{1,6}(?: # (?P<t>[^\n]{1,400}))?", re.M)
_JUNIT = re.compile(r"^\[ERROR\][^\S\n]+(?P<cls>[\w.$]{1,300})\.(?P<name>\w{1,200})(?::\d{1,6})?[^\S\n]", re.M)


def failing_tests(text: str) -> list[FailingTest]:
    """Failed tests in the order the runner reports them."""
    out: list[FailingTest] = []

    def add(path: str, name: str) -> None:
        t = FailingTest(path.strip(), name.strip())
        if t.name and t not in out:
            out.append(t)

    for pat in (_PYTEST_FAILED, _PYTEST_VERBOSE):
        for m in pat.finditer(text):
            add(m.group("path"), m.group("name").split("::")[-1])
    for m in _UNITTEST.finditer(text):
        add("", m.group("name"))
    for m in _RSPEC.finditer(text):
        add(m.group("path"), (m.group("t") or "").strip())
    for m in _VITEST_FAIL.finditer(text):
        add(m.group("path"), m.group("t").rstrip().split(" > ")[-1])
    jest_file = _JEST_FILE.search(text)
    for m in _JEST_TITLE.finditer(text):
        title = m.group("t").rstrip()
        if title.startswith(("Test suite failed to run", "Console")):
            continue
        add(jest_file.group("path") if jest_file else "", title.split(" › ")[-1])
    if not any(True for _ in _JEST_TITLE.finditer(text)):
        for m in _MOCHA_TITLE.finditer(text):
            add("", m.group("t").rstrip().rstrip(":"))
    for m in _GO_FAIL.finditer(text):
        add("", m.group("name"))
    for m in _CARGO_FAIL.finditer(text):
        name = (m.group("name") or m.group("tname") or "").split("::")[-1]
        if name != "main":
            add("", name)
    for m in _JUNIT.finditer(text):
        add("", m.group("name"))
    return out[:8]


# --- the source lines a runner quotes as the failing one ----------------------------------------
_PYTEST_ARROW = re.compile(r"^>[^\S\n]{1,40}(?P<src>\S[^\n]*)$", re.M)  # pytest: ">       assert f(x) == y"
_CODE_FRAME = re.compile(r"^[^\S\n]*>[^\S\n]{0,4}\d{1,6} \|[^\S\n]?(?P<src>[^\n]*)$", re.M)  # jest/vitest/babel
_RUST_SRC = re.compile(r"^[^\S\n]*\d{1,6} \|[^\S\n]{1,40}(?P<src>\S[^\n]*)$", re.M)


def quoted_source(text: str) -> list[str]:
    """Source lines the runner printed as the failing line (pytest `>`, jest's `> 12 |` code frame)."""
    out: list[str] = []
    for pat in (_PYTEST_ARROW, _CODE_FRAME):
        for m in pat.finditer(text):
            src = m.group("src").strip()
            if src and src not in out:
                out.append(src)
    return out[:12]


# --- names an error is about ---------------------------------------------------------------------
_Q = r"[`'\"‘“]"
_QE = r"[`'\"’”]"
_ID = r"[A-Za-z_$][\w$]{0,100}"
_NAME_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("attribute", re.compile(r"has no attribute " + _Q + "(?P<n>" + _ID + ")" + _QE)),
    ("keyword", re.compile(r"unexpected keyword argument " + _Q + "(?P<n>" + _ID + ")" + _QE)),
    ("callee", re.compile(r"(?P<n>" + _ID + r")\(\) (?:got an unexpected|got multiple values|missing \d+ required|takes \d+|takes from)")),
    ("method", re.compile(r"no (?:method|field|function|associated item) named " + _Q + "(?P<n>" + _ID + ")" + _QE)),
    ("method", re.compile(r"has no (?:field or method|method) (?P<n>" + _ID + ")")),
    ("name", re.compile(r"cannot find (?:value|function|type|struct|trait|macro) " + _Q + "(?P<n>" + _ID + ")" + _QE)),
    ("name", re.compile(r"name " + _Q + "(?P<n>" + _ID + ")" + _QE + " is not defined")),
    ("name", re.compile(r"cannot import name " + _Q + "(?P<n>" + _ID + ")" + _QE)),
    ("name", re.compile(r"(?:^|[\s(])(?P<n>" + _ID + r"(?:\." + _ID + r"){0,6}) is not (?:a function|a constructor|defined|iterable)")),
    ("name", re.compile(r"\(reading " + _Q + "(?P<n>" + _ID + ")" + _QE + r"\)")),
    ("name", re.compile(r"^(?:[^\S\n]*\S{1,300}:\d{1,6}:\d{1,6}: )?undefined: (?P<n>" + _ID + ")", re.M)),
    ("module", re.compile(r"(?:Cannot find module|No module named|Module not found: Error: Can't resolve) " + _Q
                          + r"(?P<n>[\w@$./-]{1,200})" + _QE)),
]


@dataclass(frozen=True)
class NameRef:
    name: str
    kind: str  # attribute | keyword | callee | method | name | module


def error_names(messages: list[str]) -> list[NameRef]:
    """Names the error messages are about, in message order: the definition is evidence, and when it
    does not exist the nearest existing name is."""
    out: list[NameRef] = []
    for msg in messages:
        for kind, pat in _NAME_PATTERNS:
            for m in pat.finditer(msg[:600]):
                name = m.group("n")
                if kind == "name" and "." in name:
                    name = name.rsplit(".", 1)[-1]
                ref = NameRef(name, kind)
                if len(name) >= 2 and ref not in out and name not in _NOT_NAMES:
                    out.append(ref)
    return out[:6]


# --- names a line of code calls ------------------------------------------------------------------
_CALL = re.compile(r"(?<![\w$])(?P<n>[A-Za-z_$][\w$]{1,80})[^\S\n]{0,2}\(")
_ATTR = re.compile(r"\.(?P<n>[A-Za-z_$][\w$]{2,80})\b")
_NOT_NAMES = {
    # keywords and builtins of the languages the runners above test
    "if", "for", "while", "return", "print", "len", "str", "int", "float", "list", "dict", "set", "tuple", "repr",
    "isinstance", "range", "type", "super", "bool", "bytes", "sorted", "map", "filter", "zip", "next", "iter",
    "sum", "min", "max", "abs", "any", "all", "enumerate", "open", "getattr", "setattr", "hasattr", "object",
    "function", "require", "import", "new", "typeof", "catch", "switch", "async", "await", "console", "log",
    "JSON", "Object", "Array", "String", "Number", "Promise", "Error", "Math", "Date", "Symbol", "RegExp",
    "fn", "let", "match", "Some", "None", "Ok", "Err", "vec", "format", "println", "unwrap", "expect",
    "self", "this", "cls", "True", "False", "null", "undefined", "main",
    # test harness vocabulary: never the code under test
    "assert", "assertEqual", "assertEquals", "assertTrue", "assertFalse", "assertRaises", "assertIn",
    "assertIs", "assertIsNone", "assertAlmostEqual", "assertNotEqual", "assertCountEqual", "assertRaisesRegex",
    "assert_eq", "assert_ne", "raises", "approx", "parametrize", "fixture", "mark", "pytest", "mock", "patch",
    "describe", "it", "test", "beforeEach", "afterEach", "beforeAll", "afterAll", "jest", "vi", "spyOn",
    "toBe", "toEqual", "toStrictEqual", "toThrow", "toHaveBeenCalled", "toHaveBeenCalledWith", "toMatch",
    "toContain", "toBeTruthy", "toBeFalsy", "toBeUndefined", "toBeDefined", "toHaveLength", "toMatchObject",
    "toThrowError", "toHaveProperty", "toBeNull", "not", "mockImplementation", "mockReturnValue", "t", "Equal", "Errorf", "Fatalf", "Fatal", "Run", "Helper", "deepEqual", "strictEqual", "equal",
    "ok", "throws", "rejects", "should", "eq", "to", "be", "assert_called_once_with", "assert_called_with",
}


def called_names(lines: list[str]) -> list[str]:
    """Names called (`f(`) or reached (`.attr`) in these lines, in order, minus harness and builtins."""
    out: list[str] = []
    for line in lines:
        line = line[:400]
        for pat in (_CALL, _ATTR):
            for m in pat.finditer(line):
                n = m.group("n")
                if n not in _NOT_NAMES and not n.startswith("test") and n not in out:
                    out.append(n)
    return out


_MEMBER_CALL = re.compile(r"(?<![\w$])(?:self|this|cls)\.(?P<n>[A-Za-z_$][\w$]{1,80})[^\S\n]{0,2}\(")


def callees(body: list[str], name: str) -> list[str]:
    """Names a definition's `body` calls, one level down from `name`: its own class's methods
    (`self.x(`, `this.x(`) first, then plain calls, minus `name` itself, harness words and builtins."""
    own: list[str] = []
    plain: list[str] = []
    for line in body[1:]:  # the header names the definition and its parameters, not what it calls
        line = line[:400]
        if line.lstrip().startswith(("#", "//", "*", "/*")):
            continue
        for m in _MEMBER_CALL.finditer(line):
            if m.group("n") not in own:
                own.append(m.group("n"))
        for m in _CALL.finditer(line):
            if m.group("n") not in plain:
                plain.append(m.group("n"))
    return [n for n in dict.fromkeys(own + plain) if n != name and n not in _NOT_NAMES and len(n) >= 3
            and n not in _CALL_NOT_CODE]


# calls inside code that are control flow or the error being raised, not code to follow
_CALL_NOT_CODE = {"elif", "raise", "throw", "except", "with", "yield", "lambda", "delete", "else", "catch"}


