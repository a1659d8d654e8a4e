"""hippo.push.diagnosis: runner formats, names in the error, recent changes, live text only, the failure XML
with why=, environment failures injecting nothing. Runner outputs are cut from real runs (bench/realfail
cases and the runners' own formats); the end-to-end tests index a small real repo with the fake embedder."""
from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from hippo.core import pathkind
from hippo.push.diagnosis import changes, runners
from hippo.push.diagnosis.evidence import Evidence, LiveFiles, body_of, relocate
from hippo.push.diagnosis.gate import pre_gate
from hippo.push.diagnosis.signals import extract
from hippo.retrieval.render import failure_xml

# --- runner formats ------------------------------------------------------------------------------
PYTEST = """\
    def test_metric(test_args, expected):
>       assert humanize.metric(*test_args) == expected
E       AssertionError: assert '1000 V' == '1.00 kV'

tests/test_number.py:281: AssertionError
=========================== short test summary info ============================
FAILED tests/test_number.py::test_metric[test_args52-1.00 kV] - AssertionError: assert '1000 V' == '1.00 kV'
"""
JEST = """\
FAIL tests/command.help.test.js
  ● Command help › when program has no commands then helpInformation omits Commands

    expect(received).toBe(expected) // Object.is equality

      26 |   const program = new commander.Command();
    > 27 |   expect(program.helpInformation()).toBe(expectedHelpInformation);
         |                                     ^

      at Object.toBe (tests/command.help.test.js:27:37)
"""
UNITTEST = """\
======================================================================
FAIL: test_parse_date (tests.test_dates.DateTests)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/r/tests/test_dates.py", line 12, in test_parse_date
    self.assertEqual(parse_date("2024-01-02"), date(2024, 1, 2))
AssertionError: None != datetime.date(2024, 1, 2)
"""
GO = """\
--- FAIL: TestLedgerBalance (0.00s)
    ledger_test.go:19: balance = 3, want 4
FAIL
"""
CARGO = """\
---- tests::adds stdout ----
thread 'tests::adds' panicked at src/lib.rs:14:9:
assertion `left == right` failed
  left: 5
 right: 4
"""
RSPEC = "Failures:\n\n  1) Cart totals\n\nrspec ./spec/cart_spec.rb:12 # Cart totals\n"
JUNIT = "[ERROR]   InventoryTest.takeMoreThanStock:23 expected: <1> but was: <0>\n"
VITEST = """\
 FAIL  test/parse.test.ts > parseFilename > works
TypeError: Cannot destructure property 'strict' of 'undefined' as it is undefined.
 \u276f parseFilename src/parse.ts:201:45
    201| export function parseFilename(input = "", { strict }): string {
 \u276f test/parse.test.ts:286:12
"""


@pytest.mark.parametrize("text,expected", [
    (PYTEST, [("tests/test_number.py", "test_metric")]),
    (JEST, [("tests/command.help.test.js", "when program has no commands then helpInformation omits Commands")]),
    (UNITTEST, [("", "test_parse_date")]),
    (GO, [("", "TestLedgerBalance")]),
    (CARGO, [("", "adds")]),
    (RSPEC, [("./spec/cart_spec.rb", "Cart totals")]),
    (JUNIT, [("", "takeMoreThanStock")]),
    (VITEST, [("test/parse.test.ts", "works")]),
])
def test_failing_tests_per_runner(text, expected):
    got = [(t.path, t.name) for t in runners.failing_tests(text)]
    assert got[: len(expected)] == expected


def test_quoted_failing_lines_pytest_and_jest():
    assert runners.quoted_source(PYTEST) == ["assert humanize.metric(*test_args) == expected"]
    assert runners.quoted_source(JEST) == ["expect(program.helpInformation()).toBe(expectedHelpInformation);"]
    # what the failing line calls, without harness vocabulary
    assert runners.called_names(runners.quoted_source(PYTEST)) == ["metric"]
    assert runners.called_names(runners.quoted_source(JEST)) == ["helpInformation"]


def test_frames_from_runner_formats_resolve_inside_the_repo():
    root = "/r"
    cargo = extract("Exit code 101\n" + CARGO, cwd=root, root=root)
    assert [(loc.path, loc.line) for loc in cargo.repo_locations][:1] == [("src/lib.rs", 14)]
    jest = extract("Exit code 1\n" + JEST, cwd=root, root=root)
    assert ("tests/command.help.test.js", 27) in [(loc.path, loc.line) for loc in jest.repo_locations]
    py = extract("Exit code 1\n" + PYTEST, cwd=root, root=root)
    assert ("tests/test_number.py", 281) in [(loc.path, loc.line) for loc in py.repo_locations]


@pytest.mark.parametrize("message,name,kind", [
    ("AttributeError: 'Command' object has no attribute 'opts_list'", "opts_list", "attribute"),
    ("TypeError: naturaltime() got an unexpected keyword argument 'futur'", "futur", "keyword"),
    ("TypeError: naturaltime() got an unexpected keyword argument 'futur'", "naturaltime", "callee"),
    ("error[E0599]: no method named `balanse` found for struct `Ledger`", "balanse", "method"),
    ("Error: Cannot find module './lib/suggestSimilar'", "./lib/suggestSimilar", "module"),
    ("TypeError: program.helpInfo is not a function", "helpInfo", "name"),
    ("ImportError: cannot import name 'intword_x' from 'humanize'", "intword_x", "name"),
])
def test_names_the_error_is_about(message, name, kind):
    assert runners.NameRef(name, kind) in runners.error_names([message])


def test_test_harness_and_docs_paths():
    assert pathkind.is_test("tests/test_number.py") and pathkind.is_test("lib/x.test.ts")
    assert pathkind.is_test("pkg/ledger_test.go") and not pathkind.is_test("src/humanize/number.py")
    assert pathkind.reads_as_doc("CHANGES.rst") and pathkind.reads_as_doc("docs/api.md")
    assert pathkind.reads_as_doc("History.md") and not pathkind.reads_as_doc("lib/history.js")


def test_body_of_a_test_stops_at_the_next_test():
    text = "def test_a():\n    f(1)\n\n\ndef test_b():\n    g(2)\n"
    assert body_of(text, "def test_a") == ["def test_a():", "    f(1)", "", ""]
    js = "it('adds', () => {\n  expect(add(1)).toBe(2);\n});\nit('subs', () => {\n  sub(1);\n});\n"
    assert runners.called_names(body_of(js, "'adds'")) == ["add"]


# --- recent changes --------------------------------------------------------------------------------
def test_diff_hunks_parse_new_side_ranges():
    diff = ("diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -10,2 +10,3 @@ def f():\n"
            "-x\n+y\n@@ -40 +41,0 @@\n-gone\ndiff --git a/old.py b/old.py\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n")
    assert changes.parse(diff, "working tree") == [changes.Hunk("src/a.py", 10, 12, "working tree"),
                                                  changes.Hunk("src/a.py", 42, 42, "working tree")]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=T", "-c", "user.email=t@e", *args], cwd=root, check=True,
                   capture_output=True)


def test_working_tree_and_last_commit_hunks(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "a.py").write_text("def f():\n    return 2\n\n\ndef g():\n    return 3\n")
    _git(tmp_path, "commit", "-qam", "two")
    (tmp_path / "a.py").write_text("def f():\n    return 20\n\n\ndef g():\n    return 3\n")
    assert changes.working_tree(tmp_path) == [changes.Hunk("a.py", 2, 2, "working tree")]
    assert changes.last_commit(tmp_path) == [changes.Hunk("a.py", 2, 6, "last commit")]


# --- live text only ----------------------------------------------------------------------------------
class _Rec:
    def __init__(self, p: Path):
        st = p.stat()
        self.size, self.mtime_ns, self.blob = st.st_size, st.st_mtime_ns, None


class _State:
    def __init__(self, root: Path, paths):
        self.files = {p: _Rec(root / p) for p in paths}


def test_a_moved_definition_is_read_from_disk_and_a_vanished_one_dropped(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def keep():\n    pass\n\n\ndef target(x):\n    return x\n")
    live = LiveFiles(tmp_path, _State(tmp_path, ["m.py"]))
    ev = Evidence("m.py", 5, 6, 5, "definition of target", 80, anchor="def target(x):", from_index=True)
    src.write_text("import os\n\n\ndef keep():\n    pass\n\n\ndef target(x):\n    return x\n")  # moved 3 lines down
    got = relocate(ev, live)
    assert got is not None and (got.start, got.end, got.focus) == (8, 9, 8)
    live = LiveFiles(tmp_path, _State(tmp_path, ["m.py"]))
    src.write_text("def keep():\n    pass\n")  # gone since indexing
    assert relocate(Evidence("m.py", 5, 6, 5, "d", 80, anchor="def target(x):", from_index=True), live) is None


# --- the failure XML -----------------------------------------------------------------------------------
def test_failure_xml_has_the_seed_fields_and_why():
    hits = [{"path": "src/a.py", "start_line": 3, "end_line": 4, "language": "python", "score": 0.9,
             "last_modified": "2026-01-02", "snippet": "x = ']]>'\n</snippet>", "why": 'definition of "json_body" <x>'}]
    doc = ET.fromstring(failure_xml(hits))
    (res,) = doc.findall("result")
    assert res.get("why") == 'definition of "json_body" <x>' and res.get("score") == "0.90"
    assert [c.tag for c in res] == ["source_file", "lines", "language", "last_modified", "snippet"]
    assert res.findtext("snippet").strip("\n") == "x = ']]>'\n</snippet>"
    assert doc.find("meta") is None and res.get("id") is None


# --- environment failures ---------------------------------------------------------------------------------
@pytest.mark.parametrize("error,command", [
    ("Exit code 1\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
     "ModuleNotFoundError: No module named 'requests'\n", "python -c 'import requests'"),
    ("Exit code 1\nnode:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'left-pad'\n",
     "node -e \"require('left-pad')\""),
    ("Exit code 5\n============================= test session starts ==============================\n"
     "collected 0 items\n\n============================ no tests ran in 0.01s =============================\n",
     "pytest -k nothing"),
    ("Exit code 127\nbash: line 1: cargo: command not found\n", "cargo test"),
])
def test_environment_failures_are_gated_out(error, command):
    assert not pre_gate(extract(error, cwd="/r", root="/r"), command).inject


# --- end to end on a real (fake-embedder) index -----------------------------------------------------------
def _indexed_repo(root: Path, files: dict[str, str]):
    """`files` committed in a new git repo at `root` and indexed with the fake embedder: (root, embedder)."""
    pytest.importorskip("lancedb")
    from hippo.index.embedding import load_embedder
    from hippo.index.indexer import index_repo

    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "init")
    embedder = load_embedder(FAKE)
    index_repo(root, embedder=embedder)
    return root, embedder


@pytest.fixture()
def repo(tmp_path):
    return _indexed_repo(tmp_path / "repo", {
        "shop/__init__.py": "",
        "shop/prices.py":
            "def net_total(items):\n    return sum(i['price'] for i in items)\n\n\n"
            "def with_tax(total, rate=0.2):\n    return round(total * (1 + rate), 2)\n\n\n"
            "def format_price(value):\n    return f'{value:.2f} EUR'\n",
        "tests/test_prices.py":
            "from shop.prices import net_total, with_tax\n\n\n"
            "def test_with_tax():\n    assert with_tax(net_total([{'price': 10}])) == 12.0\n",
        "CHANGES.md": "# Changes\n\n- with_tax now rounds to 2 places\n",
    })


def _diagnose(root: Path, embedder, error: str) -> dict:
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.retrieval.search import Searcher

    return diagnose(Searcher(root, embedder=embedder), {"error": error, "cwd": str(root)}, mode="keyword")


ASSERT_FAIL = """Exit code 1
    def test_with_tax():
>       assert with_tax(net_total([{'price': 10}])) == 12.0
E       assert 11.0 == 12.0

tests/test_prices.py:5: AssertionError
FAILED tests/test_prices.py::test_with_tax - assert 11.0 == 12.0
"""


def test_code_under_test_is_found_from_the_failing_line(repo):
    root, embedder = repo
    resp = _diagnose(root, embedder, ASSERT_FAIL)
    whys = {h["why"]: h for h in resp["hits"]}
    assert "definition of with_tax, called by the failing line" in whys
    assert whys["definition of with_tax, called by the failing line"]["path"] == "shop/prices.py"
    assert not any(h["path"] == "CHANGES.md" for h in resp["hits"])
    assert not any(h["path"] == "tests/test_prices.py" for h in resp["hits"])  # the output already shows it


def test_an_uncommitted_edit_leads_and_its_text_is_live(repo):
    root, embedder = repo
    p = root / "shop" / "prices.py"
    p.write_text(p.read_text().replace("(1 + rate), 2)", "(1 + rate / 2), 2)"))  # not re-indexed
    resp = _diagnose(root, embedder, ASSERT_FAIL)
    first = resp["hits"][0]
    assert first["why"] == "changed in your working tree" and first["path"] == "shop/prices.py"
    assert "(1 + rate / 2)" in first["snippet"]
    lines = p.read_text().split("\n")
    for h in resp["hits"]:  # every snippet is the live file's text at its lines
        live = (root / h["path"]).read_text().split("\n")[h["start_line"] - 1:h["end_line"]]
        assert h["snippet"].split("\n") == live
    assert lines


def test_a_missing_attribute_brings_the_nearest_existing_name(repo):
    root, embedder = repo
    error = ("Exit code 1\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
             "AttributeError: module 'shop.prices' has no attribute 'format_prices'\n")
    resp = _diagnose(root, embedder, error)
    assert resp["hits"] and resp["hits"][0]["why"] == "format_price: the nearest existing name to format_prices"
    assert "def format_price" in resp["hits"][0]["snippet"]


def test_hook_output_parses_with_why_and_env_failure_injects_nothing(repo, tmp_path, monkeypatch):
    root, embedder = repo
    from hippo.surfaces.hooks import failure

    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))

    def diagnoser(request):
        from hippo.push.diagnosis.pipeline import diagnose
        from hippo.retrieval.search import Searcher

        return diagnose(Searcher(root, embedder=embedder), request, mode="keyword")

    payload = {"tool_name": "Bash", "tool_input": {"command": "pytest"}, "error": ASSERT_FAIL, "session_id": "s",
               "cwd": str(root)}
    out = failure.handle(payload, diagnoser=diagnoser)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    doc = ET.fromstring(ctx[ctx.index("<search_results>"):])
    assert all(r.get("why") for r in doc.findall("result"))
    env = {**payload, "error": "Exit code 1\nModuleNotFoundError: No module named 'requests'\n",
           "tool_input": {"command": "python -c 'import requests'"}, "session_id": "s2"}
    assert failure.handle(env, diagnoser=diagnoser) is None
    json.dumps(out)


# --- one level deeper: what the called code calls, the strongest definition, deep tracebacks -------------
COMMANDER_LIKE = """class Command {
  command(nameAndArgs, execOpts) {
    let opts = execOpts;
    return opts;
  }

  /**
   * Parse `argv`: calls parse(
   */
  parse(argv, parseOptions) {
    this._prepareForParse();
    const userArgs = this._prepareUserArgs(argv, parseOptions);
    this._parseCommand([], userArgs);
    return this;
  }

  opts() {
    return this._optionValues;
  }
}
"""


def test_a_method_definition_beats_a_local_variable_of_the_same_name():
    from hippo.push.diagnosis.evidence import definition_line

    lines = COMMANDER_LIKE.split("\n")
    assert definition_line(lines, "opts") == 17  # `opts() {`, not `let opts = execOpts` at line 3
    py = ["x = 1", "def x():", "    pass", "", "def x():", "    pass"]
    assert definition_line(py, "x", near=6) == 5  # of the same kind, the one nearest where the index saw it


def _definition_regexes(name: str) -> list:
    """definition_line's three forms as whole-line regexes, the way they were first written."""
    esc, sp = re.escape(name), r"[^\S\n]"
    words = r"(?:def|class|function|fn|func|async function|async def|interface|type|struct|enum|trait|impl)"
    return [re.compile(rf"^{sp}*(?:export{sp}+)?(?:pub(?:\([\w ]{{0,20}}\))?{sp}+)?{words}{sp}+{esc}\b"),
            re.compile(rf"^{sp}+(?:static{sp}+|async{sp}+|get{sp}+|set{sp}+)?{esc}{sp}*\([^)\n]{{0,300}}\){sp}*\{{"),
            re.compile(rf"^{sp}*(?:export{sp}+)?(?:(?:const|let|var){sp}+)?(?:self\.|this\.|exports\.|module\.exports\.)?"
                       rf"{esc}{sp}*=[^=]")]


def test_definition_line_finds_what_the_per_name_regexes_find():
    """The forms are compiled once and matched around each place the name occurs; the answer is the one
    the per-name regexes give, on random lines made of the pieces that matter."""
    import random

    from hippo.push.diagnosis.evidence import definition_line

    rng = random.Random(3)
    pieces = ["def ", "class ", "function ", "async function ", "export ", "pub ", "pub(crate) ", "const ", "let ",
              "self.", "this.", "module.exports.", " ", "  ", "\t", "foo", "foo2", "$foo", "fooBar", "(", ")",
              "(a, b)", " {", "{", "=", "==", "= 1", ":", "static ", "get ", "é"]
    for _ in range(20000):
        lines = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 7))) for _ in range(rng.randint(1, 3))]
        name = rng.choice(["foo", "foo2", "$foo", "fooBar", "é"])
        expected = next(([i + 1 for i, t in enumerate(lines) if rx.match(t[:500])][0]
                         for rx in _definition_regexes(name) if any(rx.match(t[:500]) for t in lines)), None)
        assert definition_line(lines, name) == expected, (lines, name)


def test_scoring_text_is_unredacted_and_shown_text_redacted(tmp_path):
    """A suspect's words are read without redaction (the slow part of a read, and a score shows nothing);
    what can be shown is always the redacted text, also after the same file was read for scoring."""
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (tmp_path / "conf.py").write_text(f"def token():\n    return '{key}'\n")
    live = LiveFiles(tmp_path, _State(tmp_path, ["conf.py"]))
    assert key in "\n".join(live.scoring_lines("conf.py"))
    shown = "\n".join(live.lines("conf.py"))
    assert key not in shown and "REDACTED" in shown
    again = LiveFiles(tmp_path, _State(tmp_path, ["conf.py"]))  # a later failure, the read cache warm
    assert key not in "\n".join(again.lines("conf.py"))
    assert live.scoring_lines("missing.py") is None


def test_callees_of_a_definition_own_class_first():
    from hippo.push.diagnosis.evidence import definition_body

    body = definition_body(COMMANDER_LIKE, "parse")
    assert body[0].strip() == "parse(argv, parseOptions) {" and body[-1].strip() == "}"
    assert runners.callees(body, "parse") == ["_prepareForParse", "_prepareUserArgs", "_parseCommand"]
    py = definition_body("def load(path):\n    # read(it) first\n    raw = read_text(path)\n    return self.decode(raw)\n"
                         "\n\ndef other():\n    nope()\n", "load")
    assert runners.callees(py, "load") == ["decode", "read_text"]  # not the comment, not the next def


def test_called_definitions_on_the_traceback_or_expected_errors_weigh_less():
    from hippo.push.diagnosis import policy

    row = {"path": "lib/command.js", "start_line": 907, "end_line": 918}
    frames = [("lib/command.js", 1426, ""), ("lib/command.js", 909, "")]
    assert policy.called_weight("parse", policy.W_ASSERTED, row, frames) == policy.W_IMPORTED
    assert policy.called_weight("parse", policy.W_ASSERTED, row, frames[:1]) == policy.W_ASSERTED
    assert policy.called_weight("CommanderError", policy.W_ASSERTED, row, []) == policy.W_IMPORTED
    assert policy.called_weight("CommanderError", policy.W_NAMED, row, frames) == policy.W_NAMED  # named by the error


@pytest.fixture()
def layered(tmp_path):
    return _indexed_repo(tmp_path / "repo", {
        "cfg/__init__.py": "",
        "cfg/parser.py":
            "def parse(text):\n    pairs = _split_pairs(text)\n    return dict(pairs)\n\n\n"
            + "".join(f"def helper_{i}(value):\n    # unrelated helper {i}\n    return value * {i}\n\n\n" for i in range(20))
            + "def _split_pairs(text):\n    out = []\n    for line in text.splitlines():\n"
            "        key, _, value = line.partition('=')\n        out.append((key, value))\n    return out\n",
        "tests/test_parser.py":
            "from cfg.parser import parse\n\n\ndef test_parse_strips():\n    assert parse('a = 1') == {'a': '1'}\n",
    })


def test_the_function_the_called_code_calls_is_shown(layered):
    root, embedder = layered
    error = """Exit code 1
    def test_parse_strips():
>       assert parse('a = 1') == {'a': '1'}
E       AssertionError: assert {'a ': ' 1'} == {'a': '1'}

tests/test_parser.py:5: AssertionError
FAILED tests/test_parser.py::test_parse_strips - AssertionError: assert {'a ': ' 1'} == {'a': '1'}
"""
    hits = _diagnose(root, embedder, error)["hits"]
    whys = [h["why"] for h in hits]
    assert whys[0] == "definition of parse, called by the failing line"
    callee = next(h for h in hits if h["why"] == "definition of _split_pairs, called by parse")
    assert callee["path"] == "cfg/parser.py" and callee["start_line"] <= 106 <= callee["end_line"]


def test_outer_frames_show_fewer_lines_so_a_deep_traceback_fits(repo):
    root, embedder = repo
    p = root / "shop" / "prices.py"
    body = "".join(f"    step_{i} = {i}\n" for i in range(30))
    p.write_text("def outer(items):\n" + body + "    return inner(items)\n\n\ndef inner(items):\n" + body
                 + "    raise ValueError('bad items')\n")
    from hippo.index.indexer import index_repo

    _git(root, "commit", "-q", "-am", "deeper")  # committed: the frames, not a fresh edit, are the evidence
    index_repo(root, embedder=embedder)
    error = """Exit code 1
tests/test_prices.py:5: in test_with_tax
    outer([])
shop/prices.py:32: in outer
    return inner(items)
shop/prices.py:66: in inner
    raise ValueError('bad items')
E   ValueError: bad items
FAILED tests/test_prices.py::test_with_tax - ValueError: bad items
"""
    hits = {h["why"]: h for h in _diagnose(root, embedder, error)["hits"]}
    inner, frame2 = hits["where the failure was raised (innermost frame)"], hits["frame 2 of the traceback"]
    assert inner["end_line"] - inner["start_line"] + 1 > 9
    assert frame2["start_line"] <= 32 <= frame2["end_line"] and frame2["end_line"] - frame2["start_line"] + 1 <= 9


def test_a_message_split_over_string_literals_is_still_looked_up_by_its_ends():
    """JS/Python sources often split a long message over lines ('found no dependencies to audit ' +
    'a supported registry'): the whole-message fragment is in no chunk, its first and last words are."""
    from hippo.push.diagnosis.pipeline import lookup_fragments

    msg = "found no dependencies to audit that were installed from a supported registry"
    frags = lookup_fragments(msg)
    source = "throw new Error('found no dependencies to audit that were installed from ' +\n'a supported registry')"
    assert not any(f in source for f in frags[:1])  # the full text is not in the source as one literal
    assert "found no dependencies to" in frags and "from a supported registry" in frags
    assert any(f in source for f in frags)


def test_vitest_frames_and_failing_test_reach_the_signals():
    from hippo.push.diagnosis.signals import extract

    sig = extract("Exit code 1\n" + VITEST)
    assert [(loc.path, loc.line, loc.func) for loc in sig.locations] == [
        ("src/parse.ts", 201, "parseFilename"), ("test/parse.test.ts", 286, "")]
    assert sig.failed_tests == ["test/parse.test.ts > parseFilename > works"]


MOCHA_NESTED = """\
  10 passing (84ms)
  1 failing

  1) extglobs
       negation
         should support stars in negation extglobs:

      AssertionError [ERR_ASSERTION]: The expression evaluated to a falsy value:

  assert(!isMatch('/file.d.ts', '/!(*.d).{ts,tsx}'))

      at Context.<anonymous> (test/extglobs.js:75:7)
"""


def test_mocha_failure_blocks_give_the_error_and_the_nested_title():
    from hippo.push.diagnosis.signals import extract

    sig = extract("Exit code 1\n" + MOCHA_NESTED)
    assert [(e.etype, e.message) for e in sig.errors] == [
        ("AssertionError", "The expression evaluated to a falsy value:")]
    assert sig.failed_tests == ["should support stars in negation extglobs"]


def _to_celsius_hit(tmp_path: Path, body_lines: int, bug: str, message: str) -> dict:
    """The hit for `to_celsius` (a doc comment above its header, `body_lines` filler lines, then `bug`) when its
    test fails with `message`."""
    filler = "".join(f"    step_{i} = value + {i}\n" for i in range(body_lines))
    root, embedder = _indexed_repo(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/convert.py": "# to_celsius: one of the long ones\n# (a comment above the header)\n"
                          f"def to_celsius(value):\n{filler}    {bug}\n    return value\n",
        "tests/test_convert.py": "from pkg.convert import to_celsius\n\n\n"
                                 "def test_to_celsius():\n    assert to_celsius(212) == 100\n",
    })
    error = ("Exit code 1\n    def test_to_celsius():\n>       assert to_celsius(212) == 100\n"
             f"E       {message}\n\ntests/test_convert.py:5: AssertionError\n")
    resp = _diagnose(root, embedder, error)
    return next(h for h in resp["hits"] if h["why"] == "definition of to_celsius, called by the failing line")


def test_a_long_called_definition_is_shown_around_the_line_most_like_the_failure(tmp_path):
    """A definition the failing line calls used to be shown as its first 12 lines; when it runs on and its line
    most like the failure lies further down (a bug deep in a long function, or in a function nested in it),
    the lines around that line are shown instead."""
    hit = _to_celsius_hit(tmp_path, 30, "offset = fahrenheit_offset(value) * 32",
                          "AssertionError: fahrenheit offset applied twice")
    assert "fahrenheit_offset(value)" in hit["snippet"]
    assert hit["start_line"] > 3  # not from the header: the bug is 30 lines below it


def test_a_short_called_definition_starts_at_its_header_not_the_comments_above_it(tmp_path):
    hit = _to_celsius_hit(tmp_path, 3, "offset = 32", "assert 212 == 100")
    assert hit["start_line"] == 3 and hit["snippet"].startswith("def to_celsius(value):")


def test_a_type_stub_is_never_shown_before_the_implementation(tmp_path):
    """more-itertools ships more.pyi beside more.py: a failing `exactly_n` call showed two stubs' signatures."""
    root, embedder = _indexed_repo(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/more.py": "def exactly_n(iterable, n):\n    return len(list(iterable)) == n + 1\n",
        "pkg/more.pyi": "from typing import Iterable\n\ndef exactly_n(iterable: Iterable[object], n: int) -> bool: ...\n",
        "tests/test_more.py": "from pkg.more import exactly_n\n\n\n"
                              "def test_exactly_n():\n    assert exactly_n([1, 2], 2)\n",
    })
    error = ("Exit code 1\nTraceback (most recent call last):\n"
             '  File "tests/test_more.py", line 5, in test_exactly_n\n    assert exactly_n([1, 2], 2)\n'
             '  File "pkg/more.py", line 2, in exactly_n\n    return len(list(iterable)) == n + 1\n'
             "AssertionError\n")
    hits = _diagnose(root, embedder, error)["hits"]
    assert hits and hits[0]["path"] == "pkg/more.py"
    assert all(h["path"] != "pkg/more.pyi" for h in hits), [(h["path"], h["why"]) for h in hits]


def test_a_method_with_a_doc_comment_and_a_return_type_is_shown_from_its_header(tmp_path):
    """entities' `write(input: string, offset: number): number {` under a 10-line JSDoc: the definition's window
    showed the comment (the header regex knew no return type); the code graph gives the header line."""
    doc = "".join(f"     * line {i} of the doc comment\n" for i in range(10))
    filler = "".join(f"    step{k}(value: number): number {{\n" + "".join(f"        value = value * {i} + {k};\n" for i in range(25))
                     + "        return value;\n    }\n\n" for k in range(4))
    root, embedder = _indexed_repo(tmp_path / "repo", {
        "package.json": '{"name": "ents", "devDependencies": {"jest": "29"}}\n',
        "src/decode.ts": "export class Decoder {\n    private state = 0;\n\n" + filler + "    /**\n" + doc + "     */\n"
                         "    write(input: string, offset: number): number {\n"
                         "        this.state += input.length - offset;\n        return this.state;\n    }\n}\n",
        "test/decode.test.ts": "import { Decoder } from '../src/decode';\n\n"
                               "test('writes', () => {\n  const d = new Decoder();\n  expect(d.write('ab', 0)).toBe(3);\n});\n",
    })
    error = ("Exit code 1\n FAIL  test/decode.test.ts\n  ● writes\n\n    expect(received).toBe(expected)\n\n"
             "    Expected: 3\n    Received: 2\n\n      3 | test('writes', () => {\n      4 |   const d = new Decoder();\n"
             "    > 5 |   expect(d.write('ab', 0)).toBe(3);\n        |                            ^\n\n"
             "      at Object.<anonymous> (test/decode.test.ts:5:28)\n")
    hits = _diagnose(root, embedder, error)["hits"]
    write = [h for h in hits if h["path"] == "src/decode.ts" and "write(input" in h["snippet"]]
    assert write and write[0]["snippet"].lstrip().startswith("write(input: string"), [(h["why"], h["start_line"], h["snippet"][:60]) for h in hits]
    assert not any("line 3 of the doc comment" in h["snippet"] for h in hits)


def test_the_same_message_raised_where_the_traceback_did_not_run_is_left_out(tmp_path):
    """`first()` and `last()` raise the same sentence; the traceback runs through `last`, so `first` is
    another place with that message, not where this failure came from."""
    pad = "".join(f"    # step {i}\n" for i in range(30))  # keeps the two functions in separate chunks
    root, embedder = _indexed_repo(tmp_path / "repo", {
        "seq/__init__.py": "",
        "seq/ends.py": (
            "def first(items, default=None):\n" + pad + "    for x in items:\n        return x\n"
            "    raise ValueError('first() was called on an empty iterable, and no default value was provided.')\n"
            "\n\ndef last(items, default=None):\n" + pad + "    if not items:\n"
            "        raise ValueError('last() was called on an empty iterable, and no default value was provided.')\n"
            "    return items[-1]\n"),
    })
    line = next(i for i, t in enumerate((root / "seq/ends.py").read_text().split("\n"), 1) if "raise ValueError('last" in t)
    error = ("Exit code 1\nTraceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n"
             f"  File \"{root}/seq/ends.py\", line {line}, in last\n"
             "ValueError: last() was called on an empty iterable, and no default value was provided.\n")
    hits = _diagnose(root, embedder, error)["hits"]
    assert any("def last" in h["snippet"] or "raise ValueError('last" in h["snippet"] for h in hits), hits
    assert not any("raise ValueError('first" in h["snippet"] for h in hits), [(h["why"], h["start_line"]) for h in hits]


def test_a_long_suspect_leaves_room_for_the_next_one(tmp_path):
    """Two suspects get code: the first, 24 long lines, is cut to its share of the budget around its line,
    so the second still shows; before, the first took all of it."""
    from hippo.push.diagnosis import policy

    long_body = "".join(f"    value_{i} = compute_something_rather_long(argument_{i}, other_{i})\n" for i in range(24))
    (tmp_path / "a.py").write_text("def big(x):\n" + long_body)
    (tmp_path / "b.py").write_text("def small(x):\n    return x + 1\n")
    live = LiveFiles(tmp_path, _State(tmp_path, ["a.py", "b.py"]))
    share = 1 / policy.SUSPECT_SHOWN
    first = Evidence("a.py", 1, 25, 12, "called by a failing test, 1 call down", 68, max_lines=24, share=share)
    second = Evidence("b.py", 1, 2, 1, "called by big, 2 calls down", 67, max_lines=24, share=share)
    chosen = policy.select([first, second], live, "", set(), budget=825)
    assert [ev.path for ev, *_ in chosen] == ["a.py", "b.py"]
    lo, hi, text = chosen[0][1], chosen[0][2], chosen[0][3]
    assert len(text) <= 825 * share and lo <= 12 <= hi  # around its line, within its share


def test_a_docstring_quoting_an_interpreter_message_ranks_below_the_frames(tmp_path):
    """`'<' not supported between instances of` comes from the interpreter: a docstring's doctest output that
    quotes it is no raise site, and the traceback's frame into the code that ran comes first (sympy's
    `isqrt` doctest once took the top slot from the fix)."""
    root, embedder = _indexed_repo(tmp_path / "repo", {
        "calc/__init__.py": "",
        "calc/roots.py":
            'def isqrt(n):\n    """Integer square root.\n\n    >>> isqrt(None)\n    Traceback (most recent call last):\n'
            "    ...\n    TypeError: '<' not supported between instances of 'NoneType' and 'int'\n    \"\"\"\n"
            "    return int(n ** 0.5)\n",
        "calc/bounds.py":
            "def bound_degree(poly, limit=None):\n    degree = len(poly) - 1\n    if degree < limit:\n"
            "        return degree\n    return limit\n",
        "tests/test_bounds.py":
            "from calc.bounds import bound_degree\n\n\ndef test_no_limit():\n    assert bound_degree([1, 2, 3]) == 2\n",
    })
    error = ("Exit code 1\n    def test_no_limit():\n>       assert bound_degree([1, 2, 3]) == 2\n\n"
             "tests/test_bounds.py:5: \n_ _ _\n\n    def bound_degree(poly, limit=None):\n"
             "        degree = len(poly) - 1\n>       if degree < limit:\n"
             "E       TypeError: '<' not supported between instances of 'int' and 'NoneType'\n\n"
             "calc/bounds.py:3: TypeError\n"
             "FAILED tests/test_bounds.py::test_no_limit - TypeError: '<' not supported between instances of 'int' and 'NoneType'\n")
    hits = _diagnose(root, embedder, error)["hits"]
    assert hits and hits[0]["path"] == "calc/bounds.py"
    assert not any(h["why"] == "raise site of the message" for h in hits)


def test_a_translation_catalog_quoting_a_message_is_never_its_raise_site():
    """sphinx's 70 `.po` catalogs quote every logged message next to words such as "error": they were taken
    for the message's raise site and shown as the only code in 3 sphinx misses. Only code raises."""
    from hippo.push.diagnosis.pipeline import _run_score

    msg = "toctree contains reference to nonexisting document"
    catalog = {"path": "locale/de/LC_MESSAGES/sphinx.po", "start_line": 10,
               "text": f'# error\n#: sphinx/environment/adapters/toctree.py:180\nmsgid "{msg} %r"\nmsgstr "x"\n'}
    code = {"path": "sphinx/environment/adapters/toctree.py", "start_line": 170,
            "text": f"if ref not in found:\n    raise DocWarning(__('{msg} %r') % ref)\n"}
    score, raising, _line = _run_score(catalog, f"{msg} 'intro'")
    assert score > 0 and not raising
    score, raising, _line = _run_score(code, f"{msg} 'intro'")
    assert score > 0 and raising


def test_a_failed_check_the_repository_itself_defines_is_not_evidence(tmp_path):
    """pytest tests itself with `result.stdout.fnmatch_lines([...])`, a helper in its own source that fails
    the test with `Failed`: the helper's code, and the other places raising `Failed`, say nothing of the bug;
    a plain call on the failing line that raised another error is still evidence."""
    files = {
        "tool/__init__.py": "",
        "tool/outcomes.py": "class Failed(Exception):\n    pass\n\n\ndef fail(msg):\n    raise Failed(msg)\n",
        "tool/matching.py": ("from tool.outcomes import fail\n\n\nclass Lines:\n"
                             "    def __init__(self, lines):\n        self.lines = lines\n\n"
                             "    def fnmatch_lines(self, wanted):\n"
                             "        if wanted not in self.lines:\n            fail('nomatch: ' + wanted)\n"),
        "tool/session.py": ("from tool.outcomes import Failed\n\n\ndef abort(reason):\n"
                            "    raise Failed(reason)\n"),
        "tool/report.py": "def summary(results):\n    return ['XFAIL ' + r for r in results]\n",
        "tests/test_report.py": ("from tool.matching import Lines\nfrom tool.report import summary\n\n\n"
                                 "def test_summary_shows_phase():\n    result = Lines(summary(['t']))\n"
                                 "    result.fnmatch_lines('XFAIL at teardown of t')\n"),
    }
    root, embedder = _indexed_repo(tmp_path / "repo", files)
    error = ("Exit code 1\n    def test_summary_shows_phase():\n        result = Lines(summary(['t']))\n"
             ">       result.fnmatch_lines('XFAIL at teardown of t')\n"
             "E       Failed: nomatch: 'XFAIL at teardown of t'\n\ntests/test_report.py:7: Failed\n")
    whys = [(h["path"], h["why"]) for h in _diagnose(root, embedder, error)["hits"]]
    assert not any("fnmatch_lines" in why or why.startswith("raises Failed") for _p, why in whys), whys
    error = error.replace("Failed: nomatch", "KeyError: nomatch").replace(": Failed", ": KeyError")
    hits = _diagnose(root, embedder, error)["hits"]
    assert any(h["path"] == "tool/matching.py" for h in hits), [(h["path"], h["why"]) for h in hits]


def test_the_builder_a_test_marker_picks_by_name_is_named(tmp_path):
    """The test's decorator picks a builder by its name; nothing the test calls leads to that class."""
    files = {
        "docs/__init__.py": "",
        "docs/app.py": "class App:\n    def __init__(self, builder):\n        self.builder = builder\n\n"
                       "    def build(self):\n        return load(self.builder)\n\n\ndef load(name):\n    return name\n",
        "docs/doctest.py": ("class DocTestBuilder:\n    name = 'doctest'\n\n"
                            "    def test_group(self, group):\n        return group.split(':')[0]\n"),
        "tests/test_doctest.py": ("import pytest\nfrom docs.app import App\n\n\n"
                                  "@pytest.mark.sphinx(\n    'doctest',\n    testroot='ext-doctest',\n)\n"
                                  "def test_block_group(app):\n    assert App(app.name).build() == 'ok'\n"),
    }
    root, embedder = _indexed_repo(tmp_path / "repo", files)
    error = ("Exit code 1\n    def test_block_group(app):\n>       assert App(app.name).build() == 'ok'\n"
             "E       AssertionError: assert 'doctest' == 'ok'\n\ntests/test_doctest.py:10: AssertionError\n")
    out = _diagnose(root, embedder, error)
    named = [(c["symbol"], c["why"]) for c in out["candidates"]] + [(h["path"], h["why"]) for h in out["hits"]]
    assert ("DocTestBuilder.test_group", "picked by 'doctest' (DocTestBuilder)") in named, named


def test_pytest_raises_own_message_has_no_raise_site(tmp_path):
    """"DID NOT RAISE TypeError" is written by `pytest.raises` (in pytest's own repository, by its source):
    the harness's message, not the code under test's."""
    files = {
        "tool/__init__.py": "",
        "tool/raises.py": ("def fail(msg):\n    raise AssertionError(msg)\n\n\nclass RaisesContext:\n"
                           "    def __exit__(self, exc_type, *rest):\n        if exc_type is None:\n"
                           "            fail(f'DID NOT RAISE {self.expected.__name__}')\n"),
        "tool/params.py": "def parametrize(names, values, indirect=False):\n    return names, values\n",
        "tests/test_params.py": ("import pytest\nfrom tool.params import parametrize\n\n\n"
                                 "def test_positional_indirect_error():\n    with pytest.raises(TypeError):\n"
                                 "        parametrize('x', [1], False)\n"),
    }
    root, embedder = _indexed_repo(tmp_path / "repo", files)
    error = ("Exit code 1\n    def test_positional_indirect_error():\n>       with pytest.raises(TypeError):\n"
             "E       Failed: DID NOT RAISE TypeError\n\ntests/test_params.py:6: Failed\n")
    hits = _diagnose(root, embedder, error)["hits"]
    assert not any(h["path"] == "tool/raises.py" for h in hits), [(h["path"], h["why"]) for h in hits]
