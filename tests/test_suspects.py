"""Suspects through the code graph: a real pytest failure in a small git repo whose bug sits below what
the failing test calls, in a function the traceback never shows."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from repo_helpers import git

FILES = {
    "shop/__init__.py": "",
    "shop/invoice.py": (
        "class Invoice:\n"
        "    def __init__(self, lines):\n"
        "        self.lines = lines\n\n"
        "    def total(self):\n"
        "        return sum(self.lines)\n"),
    "shop/rates.py": (
        '"""Tax rates by country."""\n'
        "VAT = {'de': 0.19, 'fr': 0.20}\n\n\n"
        "def vat_rate(country):\n"
        "    return VAT.get(country.upper(), 0.0)\n"),  # the bug: the table's keys are lower case
    "shop/cart.py": (
        "from shop import rates\n\n\n"
        "class Cart:\n"
        "    def __init__(self, items, country):\n"
        "        self.items = items\n"
        "        self.country = country\n\n"
        "    def total(self):\n"
        "        net = sum(price for _, price in self.items)\n"
        "        return round(net + self._tax(net), 2)\n\n"
        "    def _tax(self, net):\n"
        "        return net * rates.vat_rate(self.country)\n"),
    "tests/__init__.py": "",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\n"
        "def test_german_vat():\n"
        "    cart = Cart([('book', 10.0)], 'de')\n"
        "    assert cart.total() == 11.9, 'German VAT rate is 19%'\n"),
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    pytest.importorskip("lancedb")
    from hippo.index.embedding import load_embedder
    from hippo.index.indexer import index_repo

    root = tmp_path_factory.mktemp("suspects") / "shop"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_cart.py"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout
    output = f"Exit code 1\n{run.stdout}{run.stderr}"
    assert "vat_rate" not in output and "rates.py" not in output  # the traceback does not show the bug
    embedder = load_embedder(FAKE)
    index_repo(root, embedder=embedder)
    return root, embedder, output


def _vat_rate_lines(root: Path) -> tuple[int, int]:
    lines = (root / "shop/rates.py").read_text().splitlines()
    start = next(i for i, t in enumerate(lines, 1) if t.startswith("def vat_rate"))
    return start, start + 1


def test_the_bug_three_calls_below_the_test_is_named_and_its_caller_shown(shop):
    """The fitted weights favour what the test reaches in fewer calls: Cart.total and Cart._tax show with
    code, and vat_rate, one call further, is a pointer that says how the test reaches it."""
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.retrieval.search import Searcher

    root, embedder, output = shop
    resp = diagnose(Searcher(root, embedder=embedder), {"error": output, "cwd": str(root)}, mode="keyword")
    start, end = _vat_rate_lines(root)
    tax = [h for h in resp["hits"] if h["path"] == "shop/cart.py" and "def _tax" in h["snippet"]]
    assert tax and tax[0]["why"] == "called by Cart.total, 2 calls down", [(h["why"], h["start_line"], h["end_line"]) for h in resp["hits"]]
    assert "rates.vat_rate(self.country)" in tax[0]["snippet"]  # the whole (short) function
    named = [c for c in resp["candidates"] if c["path"] == "shop/rates.py"]
    assert named and (named[0]["start_line"], named[0]["end_line"]) == (start, end), resp["candidates"]
    assert named[0]["symbol"] == "vat_rate" and named[0]["why"] == "called by Cart._tax, 3 calls down"


def test_the_hook_answer_names_further_suspects_within_budget(shop, tmp_path, monkeypatch):
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.retrieval.search import Searcher
    from hippo.surfaces.hooks import failure

    root, embedder, output = shop
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))

    def diagnoser(request):
        return diagnose(Searcher(root, embedder=embedder), request, mode="keyword")

    payload = {"tool_name": "Bash", "tool_input": {"command": "pytest tests/test_cart.py"}, "error": output,
               "session_id": "s", "cwd": str(root)}
    ctx = failure.handle(payload, diagnoser=diagnoser)["hookSpecificOutput"]["additionalContext"]
    assert len(ctx) <= 2000
    doc = ET.fromstring(ctx[ctx.index("<search_results>"):])
    named = {(c.get("path"), c.get("symbol")) for c in doc.iter("candidate")}
    shown = {r.findtext("source_file") for r in doc.findall("result")}
    assert "shop/cart.py" in shown and ("shop/rates.py", "vat_rate") in named
    assert all(c.get("why", "").startswith(("called by ", "used by ")) for c in doc.iter("candidate"))
    assert ("shop/invoice.py", "Invoice.total") not in named  # same name, never called by this test
    env = {**payload, "error": "Exit code 4\nERROR: file or directory not found: tests/test_nope.py\n\n"
                               "no tests ran in 0.01s\n", "tool_input": {"command": "pytest tests/test_nope.py"},
           "session_id": "s2"}
    assert failure.handle(env, diagnoser=diagnoser) is None


def test_suspect_scores_are_the_named_weights_times_raw_features(monkeypatch):
    """The fit (bench/realfail/fit.py) weighs raw features: score = base + sum(weight * feature)."""
    from hippo.push.diagnosis import policy, suspects
    from hippo.retrieval.codegraph import NAME, Def

    d = Def("pkg/rates.py", "vat_rate", "function", 5, 44)
    s = suspects.Suspect(d, 3, "Cart._tax", "tests/test_cart.py", NAME)
    frames = [("pkg/rates.py", 6, "vat_rate")]
    ranked = suspects.rank({d: s}, {"vat", "rate"}, {"german"}, frames, lambda _d: "return VAT.get(country)")
    assert ranked == [s]
    assert s.features["distance"] == 2.0 and s.features["by_name"] == 1.0 and s.features["frame"] == 1.0
    assert s.features["name_clue"] == 2.0 and s.features["body_clue"] == 1.0 and s.features["size"] == 0.5
    w = policy.SUSPECT_WEIGHTS
    assert s.score == pytest.approx(w["base"] + sum(w[k] * v for k, v in s.features.items()))
    monkeypatch.setitem(policy.SUSPECT_WEIGHTS, "frame", w["frame"] - 10)
    before = s.score
    suspects.rank({d: s}, {"vat", "rate"}, {"german"}, frames, lambda _d: "return VAT.get(country)")
    assert s.score == pytest.approx(before - 10)
    assert s.why() == "called by Cart._tax, 3 calls down"  # the definition before it, not the test
    title = "when custom with starting value and argument not specified then action argument is starting value"
    s1 = suspects.Suspect(d, 1, title, "tests/cmd.test.js", NAME)
    assert s1.why() == "called by a failing test, 1 call down"  # a jest title is a sentence: no room for it


def test_a_suspect_whose_body_speaks_of_what_the_test_is_named_for_ranks_first():
    """A test is named for a behaviour (`when passed string then treat as boolean`): of two suspects the
    walk reaches alike, the one whose body handles those words ranks first."""
    from hippo.push.diagnosis import suspects
    from hippo.retrieval.codegraph import EXACT, Def

    plain = Def("lib/option.js", "Option.conflicts", "method", 10, 14)
    named = Def("lib/option.js", "Option.implies", "method", 20, 24)
    reached = {d: suspects.Suspect(d, 1, "t", "tests/options.test.js", EXACT) for d in (plain, named)}
    bodies = {plain: "this.conflictsWith = this.conflictsWith.concat(names);",
              named: "if (typeof impliedOptionValues === 'string') { newImplied = { [value]: true }; } // boolean"}
    test_words = suspects.words("when passed string then treat as boolean")
    ranked = suspects.rank(reached, frozenset(), test_words, [], bodies.__getitem__)
    assert [s.d for s in ranked] == [named, plain]
    assert ranked[0].features["body_test"] == 2.0 and ranked[1].features["body_test"] == 0.0


def test_the_code_budget_leaves_room_for_pointers():
    from hippo.push.diagnosis import policy

    assert policy.code_budget(1200, 0) == 1200
    assert policy.code_budget(1200, 2) == 1200 - 2 * policy.POINTER_LINE
    assert policy.code_budget(1200, 30) == 1200 - policy.POINTERS_RESERVED * policy.POINTER_LINE
    assert policy.code_budget(300, 30) == 2 * policy.MIN_ROOM  # never so little that no code fits


def test_a_suspect_already_in_evidence_takes_no_shown_slot_but_lends_its_weight():
    """What the failing line calls is already a definition hit: a suspect of that definition strengthens it
    instead of spending one of the SUSPECT_SHOWN slots on the same lines."""
    from hippo.push.diagnosis.evidence import Evidence
    from hippo.push.diagnosis.pipeline import Collector
    from hippo.retrieval.codegraph import Def

    c = Collector.__new__(Collector)
    c.items = [Evidence("shop/cart.py", 9, 20, 9, "definition of total, called by the failing line", 50.0),
               Evidence("shop/rates.py", 1, 6, 6, "frame 2 of the traceback", 64.0)]
    total = Def("shop/cart.py", "Cart.total", "method", 9, 11)
    assert c._covered(total, 66.0) and c.items[0].weight == 66.0
    assert c.items[1].weight == 64.0  # another file's evidence is untouched
    assert not c._covered(Def("shop/cart.py", "Cart._tax", "method", 13, 14), 60.0)


def test_the_walk_follows_names_used_as_values_and_the_methods_of_classes_it_builds():
    """A filter run from a list, and a processor handed to a registry that later calls its `run`: neither
    is called by name where the walk passes, yet both are one step further."""
    import json

    from hippo.index.chunking import chunk_file
    from hippo.push.diagnosis import suspects
    from hippo.retrieval.codegraph import CodeGraph

    files = {
        "md/filters.py": "def strip_ws(s):\n    return s.strip()\n",
        "md/core.py": (
            "from md.filters import strip_ws\n\n\n"
            "class Inline:\n    def __init__(self, md):\n        self.md = md\n\n"
            "    def run(self, text):\n        return text\n\n\n"
            "def render(text, registry):\n"
            "    for f in [strip_ws]:\n        text = f(text)\n"
            "    registry.register(Inline(None), 'inline', 20)\n"
            "    return text\n"),
        "tests/test_core.py": "from md.core import render\n\n\ndef test_render():\n    assert render(' x', {}) == 'x'\n",
    }
    rows = {}
    for path, text in files.items():
        out: list = []
        chunk_file(path, text, graph=out)
        rows[path] = json.dumps(out[0].to_json())
    g = CodeGraph.from_rows(rows)
    reached = {d.qual: s for d, s in suspects.walk(g, g.find("test_render")).items()}
    assert reached["render"].how == "exact" and reached["render"].distance == 1
    assert (reached["strip_ws"].how, reached["strip_ws"].distance) == (suspects.REF, 2)
    assert reached["strip_ws"].why() == "used by render, 2 calls down"
    assert (reached["Inline.run"].how, reached["Inline.run"].distance) == (suspects.MEMBER, 3)
    assert reached["Inline.run"].why() == "a method of Inline, 3 calls down"
    ranked = suspects.rank(suspects.walk(g, g.find("test_render")), set(), set(), [], lambda _d: "")
    by = {s.d.qual: s.features for s in ranked}
    assert by["strip_ws"]["by_ref"] == 1.0 and by["strip_ws"]["by_name"] == 0.0
    assert by["Inline.run"]["member"] == 1.0 and by["render"]["by_ref"] == by["render"]["member"] == 0.0


def _graph_of(files: dict[str, str]):
    import json

    from hippo.index.chunking import chunk_file
    from hippo.retrieval.codegraph import CodeGraph

    rows = {}
    for path, text in files.items():
        out: list = []
        chunk_file(path, text, graph=out)
        rows[path] = json.dumps(out[0].to_json())
    return CodeGraph.from_rows(rows)


def test_what_runs_before_the_test_body_is_walked_too():
    """A pytest fixture from conftest.py, a unittest setUp and a describe block's beforeEach build what the
    test works on: the code they call is as much under test as what the body calls."""
    from hippo.push.diagnosis import suspects

    files = {
        "app/store.py": "def open_store(path):\n    return {'path': path}\n\n\ndef migrate(db):\n    return db\n",
        "tests/conftest.py": ("import pytest\nfrom app.store import open_store\n\n\n@pytest.fixture\n"
                              "def db(tmp_path):\n    return open_store(tmp_path)\n"),
        "tests/test_store.py": ("import unittest\nfrom app.store import migrate\n\n\n"
                                "def test_migrate(db, tmp_path):\n    assert migrate(db)\n\n\n"
                                "class MigrateTest(unittest.TestCase):\n    def setUp(self):\n"
                                "        self.db = open_store('x')\n\n    def test_again(self):\n"
                                "        assert self.db\n"),
        "src/cart.js": "function loadCart() { return []; }\nfunction total(c) { return 0; }\nmodule.exports = { loadCart, total };\n",
        "test/cart.test.js": ("const { loadCart, total } = require('../src/cart');\n"
                              "describe('shopping cart', () => {\n  let cart;\n  beforeEach(() => { cart = loadCart(); });\n"
                              "  test('is empty', () => {\n    expect(total(cart)).toBe(0);\n  });\n});\n"),
    }
    g = _graph_of(files)
    lines = {p: t.split("\n") for p, t in files.items()}

    def header(d):
        return "\n".join(lines[d.path][d.start - 1:d.end])

    def reached(test_name):
        tests = [d for d in g.find(test_name) if d.kind in ("function", "method", "test")]
        setup = suspects.setup_defs(g, tests, header)
        return setup, {d.qual for d in suspects.walk(g, tests + setup)}

    setup, quals = reached("test_migrate")
    assert [d.qual for d in setup] == ["db"] and {"migrate", "open_store"} <= quals  # the conftest fixture
    setup, quals = reached("MigrateTest.test_again")
    assert [d.qual for d in setup] == ["MigrateTest.setUp"] and "open_store" in quals
    setup, quals = reached("is empty")
    assert [d.qual for d in setup] == ["shopping cart"] and {"loadCart", "total"} <= quals  # the describe block
    alone = [d for d in g.find("is empty") if d.kind == "test" and d.qual != "shopping cart"]
    assert "loadCart" not in {d.qual for d in suspects.walk(g, alone)}  # only the block's beforeEach calls it


def test_words_compare_without_their_endings():
    """A test named for "implied options" is about `Option.implies`; one named for grouping, about `group`."""
    from hippo.push.diagnosis.suspects import words

    assert words("when implied options then stored") & words("Option.implies") == words("option implies")
    assert words("test_grouping_create_table") & words("def group(stmt)") == words("group")
    assert "bus" in words("bus") and "test" not in words("tests")  # short stems stay whole; stop words go


def test_suspects_alone_are_named_when_the_output_already_prints_the_code(shop, tmp_path, monkeypatch):
    """Every span hippo would show is in the output already: the suspects the traceback does not print are
    still named, as a map under their own lead line; with none left, the hook stays silent."""
    from hippo.push.diagnosis.respond import LEAD_POINTERS
    from hippo.surfaces.hooks import failure

    root, _embedder, output = shop
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))
    pointer = {"path": "shop/rates.py", "start_line": 5, "end_line": 6, "symbol": "vat_rate", "score": 0.6,
               "why": "called by Cart._tax, 3 calls down"}
    payload = {"tool_name": "Bash", "tool_input": {"command": "pytest tests/test_cart.py"}, "error": output,
               "session_id": "s", "cwd": str(root)}
    out = failure.handle(payload, diagnoser=lambda _req: {"hits": [], "candidates": [pointer]})
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith(LEAD_POINTERS) and 'symbol="vat_rate"' in ctx and "<result" not in ctx
    assert failure.handle({**payload, "session_id": "s2"}, diagnoser=lambda _req: {"hits": [], "candidates": []}) is None


def test_code_no_call_reaches_is_found_by_the_words_of_the_test_name():
    """A test that runs the program in a subprocess reaches none of its code by calls; a definition whose
    name shares two words with the test's name (or one word few names have) is a suspect, the test's
    own helpers, type stubs and already reached definitions are not found again."""
    from hippo.push.diagnosis import suspects

    g = _graph_of({
        "app/report.py": ("def show_xfailed(lines):\n    return lines\n\n\n"
                          "def show_summary(lines):\n    return lines\n\n\n"
                          "def teardown_phase(r):\n    return r\n\n\n"
                          "def render_xfail_reason(r):\n    return r\n"),
        "app/report.pyi": "def show_xfailed(lines: list) -> list: ...\n",
        "app/main.py": "import subprocess\n\n\ndef main():\n    return subprocess.run(['app'])\n",
        "tests/test_cli.py": ("import subprocess\n\n\ndef show_xfail_output(out):\n    return out\n\n\n"
                              "def test_xfail_shows_teardown_phase():\n"
                              "    out = subprocess.run(['app', '-rx'])\n    assert show_xfail_output(out)\n"),
    })
    tests = g.find("test_xfail_shows_teardown_phase")
    found = suspects.named_like(g, tests, {})
    assert {(d.path, d.qual) for d in found} == {("app/report.py", "show_xfailed"),
                                                  ("app/report.py", "teardown_phase")}
    s = found[g.find("show_xfailed")[0]]
    assert s.how == suspects.NAMED_LIKE and s.why() == "named like the failing test"
    reached = {g.find("teardown_phase")[0]: s}
    assert [d.qual for d in suspects.named_like(g, tests, reached)] == ["show_xfailed"]
    ranked = suspects.rank(found, frozenset(), suspects.words("test_xfail_shows_teardown_phase"), [], lambda _d: "")
    assert all(r.features["named_like"] == 1.0 for r in ranked)


def test_a_class_the_test_picks_by_a_string_is_a_suspect():
    """`@pytest.mark.sphinx('doctest')` runs the builder whose `name = 'doctest'`: its methods are suspects
    though no call leads there; a string many classes hold (`'html'`) picks none of them."""
    from hippo.push.diagnosis import suspects

    files = {"app/builders.py": "class Builder:\n    name = ''\n\n    def build(self):\n        return self.write()\n"}
    for i, (cls, label) in enumerate([("DocTestBuilder", "doctest")] + [(f"Html{k}", "html") for k in range(4)]):
        files[f"app/b{i}.py"] = (f"from app.builders import Builder\n\n\nclass {cls}(Builder):\n    name = '{label}'\n\n"
                                 "    def write(self):\n        return 1\n")
    g = _graph_of(files)
    test = _graph_of({"tests/test_b.py": "def test_doctest_group(app):\n    app.build()\n"}).files["tests/test_b.py"].defs[0]
    found = suspects.picked(g, "@pytest.mark.sphinx('doctest', testroot='ext')\n@pytest.mark.sphinx('html')", {}, test)
    assert [(d.qual, s.how, s.distance) for d, s in found.items()] == [("DocTestBuilder.write", suspects.PICKED, 2)]
    assert found[g.find("DocTestBuilder.write")[0]].why() == "picked by 'doctest' (DocTestBuilder)"


def test_definitions_found_by_name_alone_never_fill_the_pointers():
    """At most suspects.NAMED_POINTERS of them stay in the ranking; reached suspects keep their places."""
    from hippo.push.diagnosis import suspects
    from hippo.retrieval.codegraph import Def

    ranked = [suspects.Suspect(Def("src/a.py", f"f{i}", "function", i, i), 3, "t", "tests/t.py", suspects.NAMED_LIKE)
              for i in range(4)]
    ranked.insert(2, suspects.Suspect(Def("src/b.py", "g", "function", 1, 2), 2, "t", "tests/t.py", "exact"))
    assert [s.d.qual for s in suspects.capped(ranked)] == ["f0", "f1", "g"]
