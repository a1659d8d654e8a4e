"""Chunking: golden chunk lists per language, invariants (also under Hypothesis), edge cases.

Regenerate goldens with `UPDATE_GOLDEN=1 pytest tests/test_chunking.py`, then read the diff:
a golden is only worth having if a person checked it is right.
"""
from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippo.index.chunk import Chunk
from hippo.index.chunking import MAX_CHUNK_CHARS, Budget, chunk_file, detect_language, split_lines

FIXTURES = Path(__file__).parent / "fixtures" / "chunking"
GOLDEN_CASES = sorted(
    (d.name, src, exp)
    for d in FIXTURES.iterdir() if d.is_dir()
    for src in d.iterdir() if src.name.lower().startswith("sample")
    for exp in d.glob("expected*.txt")
)


def render(chunks: list[Chunk]) -> str:
    rows = []
    for c in chunks:
        row = f"{c.path}:{c.start_line}-{c.end_line} {c.kind} {c.symbol}".rstrip()
        if c.breadcrumb:
            row += f" [{c.breadcrumb}]"
        rows.append(row)
    return "\n".join(rows) + "\n"


def budget_for(expected: Path) -> Budget:
    """`expected.txt` uses the default budget, `expected-600.txt` max_chars=600."""
    stem = expected.stem
    return Budget(max_chars=int(stem.split("-")[1])) if "-" in stem else Budget()


def check_invariants(path: str, text: str, chunks: list[Chunk]) -> None:
    lines = split_lines(text)
    covered: set[int] = set()
    prev_start = 0
    for c in chunks:
        assert c.path == path
        assert 1 <= c.start_line <= c.end_line <= len(lines), c
        assert c.start_line >= prev_start, "chunks out of order"
        prev_start = c.start_line
        want = "\n".join(ln[:MAX_CHUNK_CHARS] for ln in lines[c.start_line - 1:c.end_line])
        assert c.text == want, f"text of {c.start_line}-{c.end_line} differs from the file"
        assert c.text.strip(), "blank chunk"
        covered.update(range(c.start_line, c.end_line + 1))
    missing = [i + 1 for i, ln in enumerate(lines) if ln.strip() and i + 1 not in covered]
    assert not missing, f"non-blank lines not covered: {missing[:10]}"


# -- golden files ------------------------------------------------------------------------------
@pytest.mark.parametrize("lang,src,expected", GOLDEN_CASES,
                         ids=[f"{c[0]}/{c[2].name}" for c in GOLDEN_CASES])
def test_golden(lang: str, src: Path, expected: Path) -> None:
    text = src.read_text(encoding="utf-8")
    chunks = chunk_file(src.name, text, budget=budget_for(expected))
    check_invariants(src.name, text, chunks)
    got = render(chunks)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        expected.write_text(got, encoding="utf-8")
    want = expected.read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            str(expected.relative_to(FIXTURES)), "actual"))
        pytest.fail(f"chunks differ from the golden file:\n{diff}", pytrace=False)


def test_every_required_language_has_a_golden() -> None:
    have = {lang for lang, _, _ in GOLDEN_CASES}
    need = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "ruby",
            "php", "csharp", "kotlin", "swift", "bash", "markdown", "rst", "yaml"}
    assert need <= have


@pytest.mark.parametrize("lang,src", sorted({(c[0], c[1]) for c in GOLDEN_CASES}))
def test_fixture_language_and_small_budget_invariants(lang: str, src: Path) -> None:
    text = src.read_text(encoding="utf-8")
    assert detect_language(src.name) == lang
    for max_chars in (150, 400, 900):
        budget = Budget(max_chars=max_chars, max_lines=max_chars // 25)
        check_invariants(src.name, text, chunk_file(src.name, text, budget=budget))


# -- units and symbols -------------------------------------------------------------------------
def _by_symbol(chunks: list[Chunk]) -> dict[str, Chunk]:
    return {c.symbol: c for c in chunks}


def test_split_class_keeps_class_in_method_symbols() -> None:
    text = (FIXTURES / "python" / "sample.py").read_text()
    chunks = _by_symbol(chunk_file("auth/service.py", text))
    method = chunks["AuthService.validate_token"]
    assert method.kind == "method"
    assert method.text.lstrip().startswith("def validate_token(")
    assert method.text.rstrip().endswith("return token.subject")


def test_big_function_splits_at_line_boundaries_with_header_first() -> None:
    body = "\n".join(f"    total += compute_value_number_{i}(item, factor={i})" for i in range(80))
    text = f"def crunch(item):\n    total = 0\n{body}\n    return total\n"
    chunks = chunk_file("crunch.py", text)
    assert len(chunks) >= 3
    assert all(c.symbol == "crunch" and c.kind == "function" for c in chunks)
    assert chunks[0].text.startswith("def crunch(item):")
    assert all(len(c.text) <= Budget().soft_chars for c in chunks)
    check_invariants("crunch.py", text, chunks)


def test_tiny_siblings_are_grouped() -> None:
    text = "import os\nimport sys\n\nA = 1\n\n\ndef one():\n    return 1\n\n\ndef two():\n    return 2\n"
    chunks = chunk_file("m.py", text)
    assert [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks] == [
        (1, 12, "group", "one, two")]


def test_decorators_and_doc_comments_stay_with_their_unit() -> None:
    pad = "\n".join(f"    x{i} = {i} * {i} + {i}  # padding to make this unit stand alone" for i in range(8))
    text = ("import functools\n\n\n# Cache results because the lookup is slow.\n"
            f"@functools.cache\ndef lookup(key):\n{pad}\n    return key\n")
    chunks = chunk_file("m.py", text)
    unit = _by_symbol(chunks)["lookup"]
    assert unit.start_line == 1 or unit.text.startswith("# Cache results")
    rust = ("/// Adds one.\n#[inline]\npub fn inc(x: i32) -> i32 {\n"
            + "\n".join(f"    let y{i} = x + {i}; // keep the function above the grouping size" for i in range(8))
            + "\n    x + 1\n}\n")
    unit = _by_symbol(chunk_file("lib.rs", rust))["inc"]
    assert unit.start_line == 1 and unit.text.startswith("/// Adds one.")


def test_js_arrow_function_and_exports_are_units() -> None:
    body = "\n".join(f"  const v{i} = input.map((x) => x * {i}).filter(Boolean);" for i in range(8))
    text = f"export const transform = (input) => {{\n{body}\n  return input;\n}};\n"
    (chunk,) = chunk_file("t.js", text)
    assert (chunk.kind, chunk.symbol) == ("function", "transform")


def test_go_method_symbol_names_receiver() -> None:
    text = (FIXTURES / "go" / "sample.go").read_text()
    assert "Cache.Get" in _by_symbol(chunk_file("cache.go", text))


# -- markdown / rst ------------------------------------------------------------------------------
def test_markdown_breadcrumbs() -> None:
    para = "Some words about this topic that are long enough to stand alone as a chunk. " * 4
    text = (f"# Guide\n\n{para}\n\n## Install\n\n{para}\n\n### Linux\n\n{para}\n\n```sh\n"
            f"# not a heading\n```\n\n### macOS\n\n{para}\n\n## Usage\n\n{para}\n")
    chunks = chunk_file("docs/guide.md", text)
    crumbs = [c.breadcrumb for c in chunks]
    assert crumbs == ["Guide", "Guide > Install", "Guide > Install > Linux",
                      "Guide > Install > macOS", "Guide > Usage"]
    linux = chunks[2]
    assert linux.kind == "section" and linux.symbol == "Linux"
    assert "# not a heading" in linux.text


def test_markdown_big_section_splits_at_paragraphs() -> None:
    paras = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 12 for i in range(12)]
    text = "# Big\n\n" + "\n\n".join(paras) + "\n"
    chunks = chunk_file("big.md", text)
    assert len(chunks) > 1
    assert all(c.breadcrumb == "Big" for c in chunks)
    lines = split_lines(text)
    for c in chunks[1:]:  # every piece starts at a paragraph start
        assert lines[c.start_line - 2] == ""
    check_invariants("big.md", text, chunks)


def test_markdown_tiny_sections_merge() -> None:
    text = "# A\n\nshort.\n\n# B\n\nalso short.\n"
    (chunk,) = chunk_file("t.md", text)
    assert (chunk.start_line, chunk.end_line) == (1, 7)


def test_setext_headings() -> None:
    para = "Body text that is long enough to count as a real section of the file. " * 3
    text = f"Title\n=====\n\n{para}\n\nPart\n----\n\n{para}\n"
    assert [c.breadcrumb for c in chunk_file("r.md", text)] == ["Title", "Title > Part"]


# -- plain text ----------------------------------------------------------------------------------
def test_text_windows_overlap_and_cover() -> None:
    text = "".join(f"key_{i}: value number {i} with some padding text\n" for i in range(200))
    chunks = chunk_file("conf.yaml", text)
    assert len(chunks) > 3
    assert all(c.kind == "window" and c.language == "yaml" for c in chunks)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.start_line <= a.end_line  # a few lines of overlap
        assert b.start_line > a.start_line
    assert all(len(c.text) <= Budget().max_chars and c.text.count("\n") < 60 for c in chunks)
    check_invariants("conf.yaml", text, chunks)


# -- edge cases ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "\r\n\r\n"])
def test_empty_and_blank_files_have_no_chunks(text: str) -> None:
    assert chunk_file("a.py", text) == []
    assert chunk_file("a.md", text) == []
    assert chunk_file("a.txt", text) == []


def test_crlf_and_missing_final_newline() -> None:
    text = "def f():\r\n    return 1\r\n\r\nx = f()"
    (chunk,) = chunk_file("a.py", text)
    assert (chunk.start_line, chunk.end_line) == (1, 4)
    assert chunk.text == "def f():\n    return 1\n\nx = f()"


def test_only_newline_breaks_lines() -> None:
    # \x0c and \u2028 are line breaks to str.splitlines but not to git or editors
    text = "a = 1\x0c\nb = '\u2028'\n"
    assert split_lines(text) == ["a = 1\x0c", "b = '\u2028'"]
    check_invariants("a.py", text, chunk_file("a.py", text))


def test_huge_single_line_is_capped() -> None:
    text = "var x=" + "1," * 50_000 + "0;\n"  # 100 KB minified line
    for path in ("app.min.js", "app.js", "data.json"):
        chunks = chunk_file(path, text)
        assert len(chunks) == 1
        assert (chunks[0].start_line, chunks[0].end_line) == (1, 1)
        assert len(chunks[0].text) == MAX_CHUNK_CHARS
        assert text.startswith(chunks[0].text)


def test_long_lines_never_make_oversized_chunks() -> None:
    text = "\n".join(("x" * 3000) if i % 3 == 0 else f"line {i}" for i in range(30)) + "\n"
    for path in ("a.py", "a.txt", "a.md"):
        chunks = chunk_file(path, text)
        check_invariants(path, text, chunks)
        assert max(len(c.text) for c in chunks) <= MAX_CHUNK_CHARS


def test_budget_cannot_exceed_the_hard_cap() -> None:
    text = "".join(f"row {i} " + "y" * 70 + "\n" for i in range(400))
    chunks = chunk_file("a.txt", text, budget=Budget(max_chars=50_000, max_lines=10_000))
    assert len(chunks) > 1 and max(len(c.text) for c in chunks) <= MAX_CHUNK_CHARS


def test_nul_bytes_and_surrogates_do_not_crash() -> None:
    text = "def f():\n    return '\x00'\n\nbad = b'\udcff'\n"
    for path in ("a.py", "a.txt", "a.md", "a.c"):
        check_invariants(path, text, chunk_file(path, text))


def test_syntax_errors_still_cover_everything() -> None:
    text = "def broken(:\n    pass\n\nclass X\n  def y(self) return 1\n" * 40
    chunks = chunk_file("broken.py", text)
    check_invariants("broken.py", text, chunks)


def test_shebang_picks_the_grammar() -> None:
    body = "\n".join(f"    echo step {i} with a longer line of output here" for i in range(10))
    text = f"#!/bin/bash\nrun() {{\n{body}\n}}\n"
    chunks = chunk_file("scripts/run", text)
    assert chunks[0].language == "bash"
    assert "run" in {c.symbol for c in chunks}


def test_chunk_file_is_deterministic() -> None:
    text = (FIXTURES / "rust" / "sample.rs").read_text()
    assert chunk_file("a.rs", text) == chunk_file("a.rs", text)


# -- detect_language -------------------------------------------------------------------------------
@pytest.mark.parametrize("path,lang", [
    ("src/app.py", "python"), ("types.pyi", "python"), ("web/index.js", "javascript"),
    ("a.mjs", "javascript"), ("ui/App.jsx", "javascript"), ("x.ts", "typescript"),
    ("ui/App.tsx", "tsx"), ("main.go", "go"), ("lib.rs", "rust"), ("A.java", "java"),
    ("a.c", "c"), ("a.h", "c"), ("a.cc", "cpp"), ("a.hpp", "cpp"), ("a.rb", "ruby"),
    ("Gemfile", "ruby"), ("index.php", "php"), ("A.cs", "csharp"), ("a.kt", "kotlin"),
    ("build.gradle.kts", "kotlin"), ("a.swift", "swift"), ("run.sh", "bash"),
    ("README.md", "markdown"), ("docs/index.rst", "rst"), ("ci.yml", "yaml"),
    ("pyproject.toml", "toml"), ("package.json", "json"), ("setup.cfg", "ini"),
    ("notes.txt", "text"), ("Dockerfile", "dockerfile"), ("Makefile", "make"),
    ("schema.sql", "sql"), ("page.html", "html"), ("site.css", "css"), ("LICENSE", "text"),
    (".gitignore", "text"), ("dist/app.min.js", "text"), ("weird.unknownext", "text"),
    ("go", "text"), ("img/logo.png", None), ("a.PNG", None), ("x.pyc", None),
    ("lib.so", None), ("font.woff2", None), ("data.parquet", None), ("a.zip", None),
    (".DS_Store", None),
])
def test_detect_language(path: str, lang: str | None) -> None:
    assert detect_language(path) == lang


def test_importing_chunking_does_not_load_tree_sitter() -> None:
    code = ("import sys, hippo.index.chunking as c; c.chunk_file('a.md', '# x\\n'); "
            "c.chunk_file('a.txt', 'x\\n'); "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('tree_sitter', 'tree_sitter_language_pack', 'numpy', 'lancedb')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- properties ------------------------------------------------------------------------------------
_CODE_LINES = st.sampled_from([
    "def f(x):", "    return x", "class A:", "    def m(self):", "        pass", "import os",
    "x = 1", "", "", "   ", "# comment", "if x:", "    y = [1,", "         2]", "}", "{",
    "function g() {", "  return 1;", "fn h() -> i32 {", "# Heading", "## Sub", "```", "---",
    "=====", "Title", "- item", "long " * 60, "\x00", "\t\tindented", "'''", '"""',
])
_LANG_PATHS = st.sampled_from(["a.py", "a.js", "a.ts", "a.go", "a.rs", "a.c", "a.rb", "a.md",
                               "a.rst", "a.yaml", "a.txt", "a.sh", "a.java", "a.cpp"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(_CODE_LINES, st.text(max_size=40)), max_size=120),
       path=_LANG_PATHS, crlf=st.booleans(), final_newline=st.booleans(),
       max_chars=st.sampled_from([80, 300, 1500]))
def test_property_invariants(lines: list[str], path: str, crlf: bool, final_newline: bool,
                             max_chars: int) -> None:
    # text() may contain "\r" or "\n" itself: that is fine, split_lines defines the truth
    text = ("\r\n" if crlf else "\n").join(lines) + ("\n" if final_newline and lines else "")
    chunks = chunk_file(path, text, budget=Budget(max_chars=max_chars))
    check_invariants(path, text, chunks)


@pytest.mark.parametrize("path", ["a.sh", "a.py", "a.js", "a.rb", "a.go", "a.rs", "a.c", "a.java", "a.yaml"])
def test_code_points_that_crash_a_grammar_scanner_do_not_kill_the_process(path: str) -> None:
    """tree-sitter-bash segfaulted on `{` + U+60000 (found by test_property_invariants): one planted file would
    end every `hippo index`. Run in a child so a crash fails this test instead of the whole session."""
    text = "".join(f"{{{chr(cp)}\nx{chr(cp)}(\n\"{chr(cp)}\"\n" for cp in range(0x40000, 0x110000, 0x10000))
    code = ("import sys, json; from hippo.index.chunking import chunk_file; "
            "c = chunk_file(sys.argv[1], json.loads(sys.stdin.read())); "
            "print(sum(len(x.text) for x in c))")
    proc = subprocess.run([sys.executable, "-c", code, path], input=json.dumps(text), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert int(proc.stdout) >= len(text.replace("\n", "")) // 2  # the chunks keep the real text
