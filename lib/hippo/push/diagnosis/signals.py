"""Pull machine-usable signals out of a failed command's output.

Pure and stdlib-only: the failure hook runs this before deciding whether anything heavier is worth
loading. Input is Claude Code's `error` string ("Exit code N\\n<interleaved output>"); output is a
`Signals` record of exception types + messages, `file:line` locations (stack frames, compiler and
linter diagnostics, failing tests), error codes and quoted identifiers. Locations are normalised
to repo-relative POSIX paths when they can be, and flagged as library code when they obviously are.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

# Every pattern below runs on untrusted text (a command's output can be anything a repo's test prints).
# They are written to cost time linear in the input: horizontal whitespace is `[^\S\n]` so no pattern
# spans lines where it means one line, quantifiers that could overlap are bounded or separated by a
# fixed character, and no unbounded class crosses a newline. As a backstop the input is cut to
# MAX_SCAN_CHARS and every line to MAX_LINE_CHARS first, so even a pattern that is quadratic within a
# line costs at most MAX_LINE_CHARS² per line (tests/test_trust_regex.py fuzzes all of them).
MAX_SCAN_CHARS = 200_000  # Claude Code middle-truncates at 10k; be generous but bounded
MAX_LINE_CHARS = 512  # longer lines are cut: no real frame, diagnostic or exception line needs more


@dataclass(frozen=True)
class Location:
    """One `file:line` mentioned by the output. `kind`: frame | diagnostic | test."""

    path: str  # repo-relative when resolvable, else as printed
    line: int
    kind: str = "frame"
    func: str = ""
    message: str = ""
    library: bool = False  # stdlib / site-packages / node_modules / toolchain internals


@dataclass(frozen=True)
class ErrorMessage:
    etype: str  # "ValueError", "TypeError", "E0308", "panic", "error" ...
    message: str


@dataclass
class Signals:
    exit_code: int | None
    text: str
    errors: list[ErrorMessage] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)  # most specific first
    failed_tests: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)

    @property
    def repo_locations(self) -> list[Location]:
        return [loc for loc in self.locations if not loc.library]


_EXIT_RE = re.compile(r"\AExit code (\d+)[ \t]*(?:\r?\n|\Z)")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

_LIB_MARKERS = (
    "site-packages/", "dist-packages/", "node_modules/", "/rustc/", "/.cargo/registry/",
    "/go/pkg/mod/", "/usr/lib/", "/usr/local/lib/", "/lib/python3", "<frozen", "<string>",
    "<stdin>", "<anonymous>", "node:", "/.rustup/", "/jdk/", "/usr/include/",
)

# --- location patterns -------------------------------------------------------------------------
_P = r"(?P<path>(?:[A-Za-z]:)?[^\s:()'\"<>,]*[^\s:()'\"<>,.]\.[A-Za-z][\w+-]{0,9})"
_JS_FUNC = r"[\w$.<>\[\]]+(?: [\w$.<>\[\]]+){0,8}"  # `fn`, `new Foo`, `Object.<anonymous> [as x]`
_LOC_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # tsc / MSBuild: path(12,5): error TS2339: msg
    ("diagnostic", re.compile(r"^" + _P + r"\((?P<line>\d+),\d+\): (?:error|warning) (?P<code>[A-Z]+\d+): (?P<msg>.*)$", re.M)),
    # tsc pretty: path:12:5 - error TS2339: msg
    ("diagnostic", re.compile(r"^" + _P + r":(?P<line>\d+):\d+ - (?:error|warning) (?P<code>[A-Z]+\d+): (?P<msg>.*)$", re.M)),
    # Python traceback: File "x.py", line 12, in func
    ("frame", re.compile(r'File "(?P<path>[^"\n]{1,500})", line (?P<line>\d+)(?:, in (?P<func>\S+))?')),
    # pytest long/short: path.py:12: in func | path.py:12: KeyError
    ("frame", re.compile(r"^" + _P + r":(?P<line>\d+): (?:in (?P<func>\S+)|(?P<etype>[A-Z]\w*)?[^\S\n]*$)", re.M)),
    # JS stack: at fn (path:1:2) | at path:1:2 ; also TAP stack lines without "at"
    # (func is words joined by single spaces: "at" + 1,500 spaces once took minutes with `[\w ]+?\s+`)
    ("frame", re.compile(r"^[^\S\n]*(?:at[^\S\n]+)?(?:(?P<func>" + _JS_FUNC + r")[^\S\n]+)?\((?:file://)?" + _P
                         + r":(?P<line>\d+):\d+\)", re.M)),
    ("frame", re.compile(r"^[^\S\n]*at[^\S\n]+(?:file://)?" + _P + r":(?P<line>\d+):\d+[^\S\n]*$", re.M)),
    # vitest: ` ❯ parseFilename src/parse.ts:201:45` (a function, then where) or ` ❯ test/parse.test.ts:286:12`
    ("frame", re.compile(r"^[^\S\n]*\u276f[^\S\n]+(?:(?P<func>[\w$.<>]+)[^\S\n]+)?(?:file://)?" + _P
                         + r":(?P<line>\d+):\d+[^\S\n]*$", re.M)),
    # node's first line: /abs/path.js:6
    ("frame", re.compile(r"\A\s*(?:file://)?" + _P + r":(?P<line>\d+)[^\S\n]*$", re.M)),
    # Java / Kotlin / Scala: at pkg.Cls.meth(File.java:12)
    ("frame", re.compile(r"^[^\S\n]*at (?P<func>[\w$.<>]+)\((?P<path>[\w$]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)", re.M)),
    # C#: at Ns.Cls.Meth() in /path/File.cs:line 44
    ("frame", re.compile(r"^[^\S\n]*at (?P<func>[^\s(]+)(?:\([^()\n]*\))? in " + _P + r":line (?P<line>\d+)", re.M)),
    # Go panic: \t/path/file.go:58 +0x1d
    ("frame", re.compile(r"^\t" + _P + r":(?P<line>\d+)(?: \+0x[0-9a-f]+)?[^\S\n]*$", re.M)),
    # Rust: panicked at src/main.rs:4:9  |  at ./src/main.rs:4:9  |  --> src/main.rs:2:22
    ("frame", re.compile(r"panicked at " + _P + r":(?P<line>\d+):\d+")),
    ("frame", re.compile(r"^[^\S\n]+at " + _P + r":(?P<line>\d+):\d+[^\S\n]*$", re.M)),
    ("diagnostic", re.compile(r"^[^\S\n]*--> " + _P + r":(?P<line>\d+):\d+", re.M)),
    # Ruby: path.rb:23:in `meth'
    ("frame", re.compile(r"(?:^|from )" + _P + r":(?P<line>\d+):in [`'](?P<func>[^'`\n]{1,300})'", re.M)),
    # PHP: in /path/x.php:31 | #0 /path/x.php(18): | in /path/x.php on line 31
    ("frame", re.compile(r" in " + _P + r"(?::| on line )(?P<line>\d+)")),
    ("frame", re.compile(r"^#\d+ " + _P + r"\((?P<line>\d+)\):", re.M)),
    # gcc/clang/javac/mypy/go/ruff: path:12[:5]: [error|warning|note]: msg  (or ruff/go "CODE msg")
    ("diagnostic", re.compile(r"^" + _P + r":(?P<line>\d+)(?::\d+)?: (?:(?:fatal )?(?:error|warning)(?:\[\w+\])?: )?(?P<msg>(?!in )\S.*)$", re.M)),
    # go test: "    ledger_test.go:19: message"
    ("test", re.compile(r"^[^\S\n]{4}(?P<path>[\w./-]+_test\.go):(?P<line>\d+): (?P<msg>.*)$", re.M)),
    # node --test: location: '/path/x.test.js:5:1'
    ("test", re.compile(r"location: '(?:file://)?" + _P + r":(?P<line>\d+):\d+'")),
    # eslint stylish: a path header line, then "  12:7  error  msg  rule"
]
_JVM_LIBRARY_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "kotlin.", "scala.", "org.junit.", "junit.",
                         "org.opentest4j.", "org.apache.maven.", "org.gradle.", "org.springframework.",
                         "System.", "Microsoft.")
_ESLINT_HEADER = re.compile(r"^(?P<path>(?:/|[\w.-]+/)[^\s:]+\.(?:[jt]sx?|mjs|cjs|vue|svelte))[^\S\n]*$", re.M)
_ESLINT_LINE = re.compile(r"^\s+(?P<line>\d+):\d+\s+(?:error|warning)\s+(?P<msg>.+?)\s{2,}(?P<code>[\w@/-]+)\s*$")
MAX_ESLINT_LINES = 500  # diagnostics read after one header

# --- error message patterns ---------------------------------------------------------------------
_ERROR_PATTERNS: list[re.Pattern[str]] = [
    # Exception in thread "main" java.lang.X: msg | Unhandled exception. System.X: msg
    re.compile(r"^(?:Exception in thread \"[^\"\n]*\" |Unhandled exception\. |PHP Fatal error:[^\S\n]+Uncaught |Fatal error: Uncaught |Caused by: )?"
               r"(?:E[^\S\n]{2,})?(?P<etype>(?:[A-Za-z_][\w$]*\.)*(?:[A-Z][\w$]*)?(?:Error|Exception|Exit|Failure|Fault|Interrupt|Warning|Panic))"
               r"(?:: (?P<msg>.*?))?(?: in \S+(?::\d+| on line \d+))?[^\S\n]*$", re.M),
    # Ruby: path:23:in `total': undefined method ... (NoMethodError)
    re.compile(r":in [`'][^'\n]*': (?P<msg>.*) \((?P<etype>[A-Z]\w*)\)[^\S\n]*$", re.M),
    # Rust compiler: error[E0308]: mismatched types
    re.compile(r"^(?:error|warning)\[(?P<etype>E\d{4})\]: (?P<msg>.*)$", re.M),
    # Go panic: panic: runtime error: index out of range
    re.compile(r"^(?P<etype>panic): (?P<msg>.*)$", re.M),
]
# Exception names that do not end in Error/Exception (click's BadParameter and Abort, custom
# classes such as QuotaExceeded) are read only where the output's shape says "this is an
# exception": the tail of a Python traceback, a pytest `E` line, a JS stack header, a log line's
# "failed: Name: msg", a node --test (TAP) block. A bare `Name: text` line elsewhere is not one.
_NAME = r"(?:[A-Za-z_][\w$]*\.)*[A-Z][\w$]*"
_CAMEL = re.compile(r"[A-Z][a-z0-9$]+(?:[A-Z][a-z0-9$]*)+$")  # two humps at least: BadParameter
_ERR_SUFFIX = re.compile(r"(?:Error|Exception|Exit|Failure|Fault|Interrupt|Warning|Panic)$")
_JS_CODE = r"(?: \[(?P<code>[A-Z][A-Z0-9_]{2,})\])?"
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):[ \t]*$", re.M)  # a prompt may precede it
_TRACEBACK_NEXT = re.compile(r"\n(?:[ \t][^\n]*\n|\n){0,2000}(?P<line>\S[^\n]*)")  # the line after the frames
MAX_TRACEBACKS = 50
_EXC_LINE = re.compile(r"(?P<etype>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?:: (?P<msg>.*))?\s*$")
_PYTEST_E = re.compile(r"^E[^\S\n]+(?P<etype>" + _NAME + r")(?:: (?P<msg>.*?))?[^\S\n]*$", re.M)
_PYTEST_TAIL = re.compile(r"^\S+:\d+: (?P<etype>" + _NAME + r")[^\S\n]*$", re.M)
_JS_HEADER = re.compile(r"^(?:Uncaught )?(?P<etype>" + _NAME + r")" + _JS_CODE + r"(?:: (?P<msg>[^\n]*))?\n[ \t]+at ", re.M)
_LOG_FORM = re.compile(
    r"(?i:\b(?:failed|failure|error|exception|crashed|aborted|raised|threw|thrown|uncaught)\b)[^:\n]{0,40}?:[ \t]+"
    r"(?P<etype>" + _NAME + r")" + _JS_CODE + r"(?:: (?P<msg>[^\n]*?)|\((?P<q>['\"])(?P<rmsg>[^\n]*)(?P=q)\))[ \t]*$", re.M)
_TAP_BLOCK = re.compile(r"^not ok \d+[^\n]*\n(?P<body>(?:[ \t]+[^\n]*\n?|\n)*)", re.M)
_TAP_ERROR = re.compile(r"^(?P<ind>[ \t]+)error: (?:'(?P<sq>.*)'|\"(?P<dq>.*)\"|(?P<block>\|-?)|(?P<plain>[^\n]+?))[ \t]*$", re.M)
# mocha's failure block: "  1) suite\n       title:\n     Error [CODE]: message" (indented, the stack below a diff)
_MOCHA_BLOCK = re.compile(r"^[^\S\n]+\d{1,4}\) [^\n]*\n(?:[^\n]*\n){0,10}?"
                          r"[^\S\n]+(?P<etype>" + _NAME + r")" + _JS_CODE + r": (?P<msg>[^\n]*)$", re.M)
_TAP_NAME = re.compile(r"^[ \t]+name: '?(?P<etype>[A-Za-z_$][\w$]*)'?[ \t]*$", re.M)
_CHAINED = re.compile(r"^(?:During handling of the above exception|The above exception was the direct cause)", re.M)
_RUST_PANIC = re.compile(r"panicked at [^\n]*:\d+:\d+:\n(?P<msg>[^\n]+)")
_LINK_ERROR = re.compile(r"undefined reference to [`'‘]([^'’`\n]{1,300})['’]")
_CODE_RE = re.compile(r"\b(E\d{4}|TS\d{4,5}|CS\d{4}|[A-Z]{1,3}\d{3,4})\b")
_MYPY_CODE = re.compile(r"  \[(?P<code>[a-z][a-z-]+)\][^\S\n]*$", re.M)
_QUOTED = re.compile(r"[`'\"‘“]([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*)[`'\"’”]")

# --- failing tests ------------------------------------------------------------------------------
_TEST_PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"^FAILED (?P<t>\S+::\S+)", re.M),  # pytest summary
    re.compile(r"^_{3,} (?P<t>(?:\w+\.)?test\w*(?:\[[^\]\n]*\])?) _{3,}$", re.M),  # pytest section
    re.compile(r"^---- (?P<t>\S+) stdout ----$", re.M),  # cargo test
    re.compile(r"^--- FAIL: (?P<t>\S+)", re.M),  # go test
    re.compile(r"^[^\S\n]+● (?P<t>\S(?:[^\n]*\S)?)[^\S\n]*$", re.M),  # jest/vitest
    re.compile(r"^[^\S\n]*FAIL[^\S\n]+(?P<t>\S{1,300}\.[cm]?[jt]sx? > \S[^\n]{0,400}?)[^\S\n]*$", re.M),  # vitest
    re.compile(r"^not ok \d+ - (?P<t>.+)$", re.M),  # TAP / node --test
    # mocha: "  1) title:" above its error, or "  1) suite\n       inner suite\n         title:"
    re.compile(r"^[^\S\n]+\d{1,4}\) (?:[^\n]*+\n[^\S\n]++){0,8}?(?P<t>\S[^\n]{0,400}?):$", re.M),  # possessive: no split of an indent between two repeats
    re.compile(r"^\[ERROR\] (?P<t>[\w.$]+\.[\w$]+)[^\S\n]+--.*<<< (?:FAILURE|ERROR)!", re.M),  # surefire
    re.compile(r"^(?P<t>[^\s:]+(?:::[^\s:\[]+)+(?:\[[^\]\s]*\])?) FAILED", re.M),  # pytest -v
]

_NOISE_IDENTIFIERS = {
    "main", "self", "this", "None", "null", "undefined", "true", "false", "True", "False",
    "origin", "HEAD", "utf-8", "stdout", "stderr", "error", "warning", "test", "string", "int",
    "str", "object", "number", "Object", "String",
}


def clip_lines(text: str, max_line: int = MAX_LINE_CHARS) -> str:
    """`text` with every line cut to `max_line` characters (the bound the patterns above rely on)."""
    if len(text) <= max_line:
        return text
    lines = text.split("\n")
    if max(map(len, lines)) <= max_line:
        return text
    return "\n".join(line[:max_line] for line in lines)


def split_exit(error: str) -> tuple[int | None, str]:
    """`"Exit code 3\\nout"` -> (3, "out"); a bare message (shell could not start) -> (None, msg)."""
    m = _EXIT_RE.match(error)
    if not m:
        return None, error
    return int(m.group(1)), error[m.end():]


def is_library_path(path: str) -> bool:
    p = path.replace("\\", "/")
    return any(marker in p for marker in _LIB_MARKERS)


def normalize_path(path: str, cwd: str = "", root: str = "") -> tuple[str, bool]:
    """Return (path relative to `root` if possible, is_library).

    Relative paths are taken relative to `cwd` (the shell's directory), then re-expressed relative
    to the repo `root`. Absolute paths outside the root are library paths.
    """
    p = path.strip().replace("\\", "/")
    if p.startswith("file://"):
        p = p[len("file://"):]
    if is_library_path(p):
        return p, True
    root_p = root.replace("\\", "/").rstrip("/")
    cwd_p = (cwd.replace("\\", "/").rstrip("/") or root_p)
    if posixpath.isabs(p) or re.match(r"^[A-Za-z]:/", p):
        absolute = posixpath.normpath(p)
    elif cwd_p:
        absolute = posixpath.normpath(posixpath.join(cwd_p, p))
    else:
        return posixpath.normpath(p), False
    if root_p and (absolute == root_p or absolute.startswith(root_p + "/")):
        return absolute[len(root_p) + 1:], False
    if root_p:
        return absolute, True  # outside the repository: someone else's code
    return posixpath.normpath(p), False


def _java_path(func: str, filename: str) -> str:
    """`com.acme.Inventory.take` + `Inventory.java` -> `com/acme/Inventory.java` (a suffix guess)."""
    parts = func.split(".")
    pkg = [p for p in parts[:-2] if p and p[0].islower()]
    return "/".join(pkg + [filename]) if pkg else filename


def _clean_message(msg: str) -> str:
    msg = msg.strip()
    msg = re.sub(r"\s+\[[^\]]*\]$", "", msg)  # mypy "[arg-type]", MSBuild "[/abs/x.csproj]"
    msg = re.sub(r"^[A-Z]{1,3}\d{3,4}\s+(?:\[\*\]\s+)?", "", msg)  # ruff/flake8 "F821 "
    return msg[:300]


def extract(error: str, cwd: str = "", root: str = "") -> Signals:
    """Parse Claude Code's `error` string of a failed Bash call into `Signals`."""
    exit_code, text = split_exit(error or "")
    text = clip_lines(_ANSI_RE.sub("", text[:MAX_SCAN_CHARS]).replace("\r\n", "\n"))
    sig = Signals(exit_code=exit_code, text=text)
    if not text.strip():
        return sig

    seen_loc: set[tuple[str, int]] = set()
    found: list[tuple[int, Location]] = []  # (offset in text, location)
    for kind, pattern in _LOC_PATTERNS:
        for m in pattern.finditer(text):
            gd = m.groupdict()
            raw, line = gd.get("path") or "", int(gd.get("line") or 0)
            func = (gd.get("func") or "").strip()
            if not raw or line <= 0 or raw.startswith(("http:", "https:")):
                continue
            if raw.endswith((".java", ".kt", ".scala", ".groovy")) and "/" not in raw and func:
                raw = _java_path(func, raw)
            path, lib = normalize_path(raw, cwd, root)
            lib = lib or func.startswith(_JVM_LIBRARY_PACKAGES)
            if (path, line) in seen_loc:
                continue
            seen_loc.add((path, line))
            msg = _clean_message(gd.get("msg") or "")
            if kind == "diagnostic" and _PY_WARNING.match(msg):
                continue  # `conftest.py:51: UserWarning: ...`: Python's warnings module printing, not the failure
            found.append((m.start(), Location(path, line, kind, func, msg, lib)))
    for header in _ESLINT_HEADER.finditer(text):
        path, lib = normalize_path(header.group("path"), cwd, root)
        pos = header.end()
        while text.startswith("\n", pos):
            pos += 1
        for _ in range(MAX_ESLINT_LINES):  # line by line, stopping at the first that is not a diagnostic
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            em = _ESLINT_LINE.match(text[pos:end])
            pos = end + 1
            if not em:
                break
            key = (path, int(em.group("line")))
            if key not in seen_loc:
                seen_loc.add(key)
                found.append((header.start(), Location(path, key[1], "diagnostic", "", em.group("msg"), lib)))
                sig.codes.append(em.group("code"))

    # Order: tracebacks print outermost first for Python, innermost first for most others; the
    # raise site is the most useful, so Python frames are reversed (they are the only "File" ones).
    py = [loc for off, loc in found if _is_python_frame(text, loc)]
    rest = [loc for off, loc in sorted(found, key=lambda t: t[0]) if loc not in py]
    sig.locations = list(reversed(py)) + rest
    # Repo code before library code, stable otherwise; diagnostics keep their order.
    sig.locations.sort(key=lambda loc: loc.library)

    seen_err: set[tuple[str, str]] = set()
    offsets: dict[int, int] = {}  # index in sig.errors -> offset in text (exception lines only)
    extra_codes: list[str] = []

    def add_error(etype: str, raw_msg: str, offset: int | None = None) -> None:
        msg = _clean_message(raw_msg or "")
        short = etype.rsplit(".", 1)[-1]
        if (etype, msg) in seen_err or (short, msg) in seen_err:
            return
        seen_err.update({(etype, msg), (short, msg)})
        if offset is not None:
            offsets[len(sig.errors)] = offset
        sig.errors.append(ErrorMessage(etype, msg))

    for pattern in _ERROR_PATTERNS:
        for m in pattern.finditer(text):
            add_error(m.group("etype"), m.group("msg") or "", m.start() if pattern is _ERROR_PATTERNS[0] else None)
    for offset, etype, msg, code in _exception_lines(text):
        add_error(etype, msg, offset)
        if code and code not in extra_codes:
            extra_codes.append(code)
    if len(offsets) > 1 and _CHAINED.search(text):
        # a chained Python exception: the last one printed is the one that escaped; lead with it
        last = max(offsets, key=offsets.__getitem__)
        sig.errors.insert(0, sig.errors.pop(last))
    for m in _LINK_ERROR.finditer(text):
        msg = f"undefined reference to {m.group(1)}"
        if ("link", msg) not in seen_err:
            seen_err.add(("link", msg))
            sig.errors.append(ErrorMessage("link", msg))
    for m in _RUST_PANIC.finditer(text):
        msg = _clean_message(m.group("msg"))
        if ("panic", msg) not in seen_err:
            seen_err.add(("panic", msg))
            sig.errors.append(ErrorMessage("panic", msg))
    for loc in sig.locations:  # compiler diagnostics carry their own message
        if loc.kind in ("diagnostic", "test") and loc.message and ("error", loc.message) not in seen_err:
            seen_err.add(("error", loc.message))
            sig.errors.append(ErrorMessage("error", loc.message))

    for pattern in _TEST_PATTERNS:
        for m in pattern.finditer(text):
            t = m.group("t").strip()
            if t and t not in sig.failed_tests:
                sig.failed_tests.append(t)

    codes = [m.group(1) for m in _CODE_RE.finditer(" ".join(e.message for e in sig.errors) + " " + " ".join(e.etype for e in sig.errors))]
    codes += [m.group("code") for m in _MYPY_CODE.finditer(text)]
    codes += [m.group(1) for m in re.finditer(r"^(?:error|warning)\[(E\d{4})\]", text, re.M)]
    codes += [m.group(1) for m in re.finditer(r"(?:error|warning) ((?:TS|CS)\d{4,5})", text)]
    codes += [m.group(1) for m in re.finditer(r"^\S+:\d+(?::\d+)?: ([A-Z]{1,4}\d{3,4})\b", text, re.M)]
    for c in codes + extra_codes:
        if c not in sig.codes:
            sig.codes.append(c)

    idents: list[str] = []
    for source in [e.message for e in sig.errors] + [text[:4000]]:
        for m in _QUOTED.finditer(source):
            ident = m.group(1)
            if 3 <= len(ident) <= 80 and ident not in _NOISE_IDENTIFIERS and ident not in idents:
                idents.append(ident)
    sig.identifiers = idents[:12]
    return sig


def _exception_like(name: str) -> bool:
    """A name that reads as an exception class even without a traceback around it."""
    last = name.rsplit(".", 1)[-1]
    return bool(_ERR_SUFFIX.search(last) or _CAMEL.match(last) or ("." in name and name[0].islower()))


def _exception_lines(text: str) -> list[tuple[int, str, str, str]]:
    """(offset, exception name, message, error code) from the shapes that mark an exception line."""
    out: list[tuple[int, str, str, str]] = []
    for n, head in enumerate(_TRACEBACK_HEAD.finditer(text)):  # the first unindented line after the frames
        if n >= MAX_TRACEBACKS:
            break
        m = _TRACEBACK_NEXT.match(text, head.end())
        em = _EXC_LINE.fullmatch(m.group("line")) if m else None
        if m and em:
            out.append((m.start("line"), em.group("etype"), em.group("msg") or "", ""))
    tail_names = {m.group("etype").rsplit(".", 1)[-1] for m in _PYTEST_TAIL.finditer(text)}
    for m in _PYTEST_E.finditer(text):
        etype = m.group("etype")
        if _exception_like(etype) or etype.rsplit(".", 1)[-1] in tail_names:
            out.append((m.start(), etype, m.group("msg") or "", ""))
    for m in _JS_HEADER.finditer(text):
        out.append((m.start(), m.group("etype"), m.group("msg") or "", m.group("code") or ""))
    for m in _MOCHA_BLOCK.finditer(text):
        if _exception_like(m.group("etype")):
            out.append((m.start("etype"), m.group("etype"), m.group("msg"), m.group("code") or ""))
    for m in _LOG_FORM.finditer(text):
        if _exception_like(m.group("etype")):
            msg = m.group("msg") if m.group("msg") is not None else m.group("rmsg")
            out.append((m.start("etype"), m.group("etype"), msg or "", m.group("code") or ""))
    for block in _TAP_BLOCK.finditer(text):
        body = block.group("body")
        em, nm = _TAP_ERROR.search(body), _TAP_NAME.search(body)
        if not em:
            continue
        if em.group("block") is not None:  # YAML block scalar: its first non-blank line
            lines = [ln.strip() for ln in body[em.end():].split("\n")[1:] if ln.startswith(em.group("ind") + " ")]
            msg = next((ln for ln in lines if ln), "")
        elif em.group("sq") is not None:
            msg = em.group("sq").replace("''", "'")
        else:
            msg = em.group("dq") if em.group("dq") is not None else em.group("plain")
        code = re.search(r"^[ \t]+code: '?(ERR_[A-Z0-9_]+)'?", body, re.M)
        code_s = code.group(1) if code and code.group(1) not in ("ERR_TEST_FAILURE", "ERR_ASSERTION") else ""
        out.append((block.start() + em.start(), nm.group("etype") if nm else "Error", msg, code_s))
    out.sort(key=lambda t: t[0])
    return out


def _is_python_frame(text: str, loc: Location) -> bool:
    return loc.path.endswith(".py") and f'line {loc.line}' in text and loc.kind == "frame" and (
        f'", line {loc.line}' in text
    )


def message_literals(message: str) -> list[str]:
    """The constant parts of a runtime message, most specific first, for a keyword search.

    Formatted messages interleave literal text with values (`quantity must be positive, got -1`);
    the source only holds the literal parts, so cut at values: digits, quotes, braces, separators.
    """
    msg = message.strip()
    if not msg:
        return []
    pieces = re.split(r"""\s*(?:[:=,;]\s|['"`‘’{(\[<>]|(?:^|\s)\S*\d\S*|\s-\S|\s\S*[/\\]\S*)""", msg)
    out: list[str] = []
    for piece in pieces:
        piece = piece.strip(" .:,;-=[]()<>*")
        words = piece.split()
        if len(words) >= 2 or (len(words) == 1 and len(piece) >= 12):
            if piece not in out:
                out.append(piece)
    out.sort(key=len, reverse=True)
    # a message that is already a plain sentence is its own best literal
    if msg not in out and len(msg) <= 120 and not re.search(r"\d|['\"`]", msg):
        out.insert(0, msg)
    return out[:4]


def template_fragments(message: str) -> list[str]:
    """Substrings of a runtime message that the raise site's *template* likely holds verbatim.

    `message_literals` cuts at quoted, numeric and path-like values; an unquoted value can still
    sit at either end of a piece (`Unknown command frobnicate` from `Unknown command ${c}`), so
    pieces of 3+ words also yield themselves minus their first or last word. Longest first.
    """
    out: list[str] = []
    for lit in message_literals(message):
        variants = [lit]
        words = lit.split()
        if len(words) >= 3:
            variants += [" ".join(words[:-1]), " ".join(words[1:])]
        for v in variants:
            v = v.strip(" .:,;-=")
            if (len(v.split()) >= 2 and len(v) >= 10) and v not in out:
                out.append(v)
    out.sort(key=len, reverse=True)
    return out[:6]


_RUN_TOKEN = re.compile(r"[A-Za-z]+|\d+")
_PY_WARNING = re.compile(r"[A-Z]\w*Warning:")  # the category of a `path:line: Category: message` warning line


def shared_run(message: str, text: str) -> tuple[int, int]:
    """Longest run of consecutive message words that also appear consecutively in `text`
    (case-insensitive; quotes, `+`, `${...}` and line breaks between them are ignored).

    Returns (characters in the run's words, 0-based line of `text` where the run starts); (0, -1)
    when not even one word matches. A raise site's template shares long runs with the message.
    """
    msg = [w.lower() for w in _RUN_TOKEN.findall(message)][:60]
    if not msg:
        return 0, -1
    at: dict[str, list[int]] = {}  # word -> its positions in the message
    for j, w in enumerate(msg):
        at.setdefault(w, []).append(j)
    best, best_start = 0, (0, 0)  # the run's length, (token index, message index) where it starts
    line_of: list[int] = []  # the line of each token of `text`
    prev: dict[int, tuple[int, int]] = {}  # message index -> (chars of the run ending there, its first token)
    i = 0
    for lineno, line in enumerate(text.split("\n")):
        for w in _RUN_TOKEN.findall(line):
            line_of.append(lineno)
            cur: dict[int, tuple[int, int]] = {}
            for j in at.get(w.lower(), ()):
                run, first = prev.get(j - 1, (0, i))
                n = run + len(msg[j]) + (1 if run else 0)
                cur[j] = (n, first)
                start = (first, j - (i - first))
                if n > best or (n == best and start < best_start):
                    best, best_start = n, start
            prev = cur
            i += 1
    if not best:
        return 0, -1
    return best, line_of[best_start[0]]
