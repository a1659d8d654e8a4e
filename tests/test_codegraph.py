"""The code graph: extraction per language (definitions, calls, imports), resolution across files, and
the graph column kept in step with the chunks by the indexer (edit, delete, rename)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from fake_embedder import FakeEmbedder
from hippo.index.chunking import chunk_file
from hippo.index.indexer import index_repo
from hippo.index.state import load_state
from hippo.index.store import Store
from hippo.retrieval import codegraph
from hippo.retrieval.codegraph import EXACT, NAME, CodeGraph, Def
from repo_helpers import git, write_files


def graph_of(path: str, text: str) -> dict:
    out: list = []
    chunk_file(path, text, graph=out)
    assert out, f"no graph for {path}"
    return out[0].to_json()


PY = '''\
from .util import helper as h
from pkg import core
import os.path
import json as j


class Base:
    def shared(self):
        return 1


class Parser(Base):
    def parse(self, text):
        self.tokenize(text)
        h(text)
        core.run(text).strip()
        super().shared()
        return j.loads(text)

    def tokenize(self, text):
        def inner():
            return os.path.join("a", "b")
        return inner()


def top():
    return Parser().parse("x")
'''


def test_python_definitions_calls_imports():
    g = graph_of("pkg/parser.py", PY)
    defs = {d[0]: (d[1], d[2], d[3], d[4]) for d in g["d"]}
    assert defs["Parser"] == ("class", 12, 23, ["Base"])
    assert defs["Parser.parse"][:3] == ("method", 13, 18)
    assert defs["Parser.tokenize.inner"][0] == "function"
    assert defs["top"][:3] == ("function", 26, 27)
    calls = {(c[0], c[1]): g["d"][c[2]][0] if c[2] >= 0 else "" for c in g["c"]}
    assert calls[("self.tokenize", 14)] == "Parser.parse"
    assert calls[("h", 15)] == "Parser.parse"
    assert calls[("core.run", 16)] == "Parser.parse"
    assert calls[(".strip", 16)] == "Parser.parse"  # a receiver that is not a plain chain
    assert calls[("super.shared", 17)] == "Parser.parse"
    assert calls[("os.path.join", 22)] == "Parser.tokenize.inner"
    assert calls[("inner", 23)] == "Parser.tokenize"
    imports = {(i[0], i[1], i[2]) for i in g["i"]}
    assert {("h", ".util", "helper"), ("core", "pkg", "core"), ("os", "os", ""),
            ("j", "json", "")} <= imports


JS = '''\
import Default, {a as b, c} from "./m";
import * as ns from "../n";
const {x, y: z} = require("./r");
const Cmd = require("./cmd").Command;

export class K extends Base {
  foo(v) { this.bar(v); new Thing(); ns.baz(); }
  bar(v) { return b(v); }
}
export const f = (q) => g(q);
exports.h = function () { inner(); };
Cmd.prototype.p = function () { return this.s(); };
'''


@pytest.mark.parametrize("path", ["src/k.js", "src/k.ts"])
def test_javascript_and_typescript(path):
    g = graph_of(path, JS)
    defs = {d[0]: d[1] for d in g["d"]}
    assert defs["K"] == "class" and defs["K.foo"] == "method" and defs["K.bar"] == "method"
    assert defs["f"] == "function" and defs["h"] == "function" and defs["Cmd.p"] == "function"
    assert [d[4] for d in g["d"] if d[0] == "K"] == [["Base"]]
    calls = {(c[0], g["d"][c[2]][0] if c[2] >= 0 else "") for c in g["c"]}
    assert {("this.bar", "K.foo"), ("Thing", "K.foo"), ("ns.baz", "K.foo"), ("b", "K.bar"), ("g", "f"),
            ("inner", "h"), ("this.s", "Cmd.p")} <= calls
    imports = {(i[0], i[1], i[2]) for i in g["i"]}
    assert {("Default", "./m", "default"), ("b", "./m", "a"), ("c", "./m", "c"), ("ns", "../n", ""),
            ("x", "./r", "x"), ("z", "./r", "y"), ("Cmd", "./cmd", "Command")} <= imports


def test_no_graph_for_languages_without_rules():
    out: list = []
    chunk_file("a.md", "# hi\n\ntext\n", graph=out)
    assert out == []


def _graph(files: dict[str, str]) -> CodeGraph:
    return CodeGraph.from_rows({p: json.dumps(graph_of(p, t)) for p, t in files.items()})


PKG = {
    "pkg/__init__.py": "from .core import run\n",
    "pkg/core.py": "def run(x):\n    return _step(x)\n\n\ndef _step(x):\n    return x\n\n\nclass Engine:\n"
                   "    def start(self):\n        return run(1)\n",
    "pkg/util.py": "def helper(t):\n    return t\n\n\ndef run(x):\n    return 'other run'\n",
    "pkg/parser.py": PY,
    "tests/test_parser.py": "from pkg.parser import Parser\nfrom pkg import core as c\n\n\n"
                            "def test_parse():\n    assert Parser().parse('x') == 1\n    c.run(2)\n    c.Engine().start()\n",
}


def test_resolution_through_imports_self_and_relative_paths():
    g = _graph(PKG)
    parse = g.find("Parser.parse")[0]
    got = {c.callee: ([(d.path, d.qual) for d in found], how) for c, found, how in g.callees(parse)}
    assert got["self.tokenize"] == ([("pkg/parser.py", "Parser.tokenize")], EXACT)
    assert got["h"] == ([("pkg/util.py", "helper")], EXACT)  # from .util import helper as h
    assert got["core.run"] == ([("pkg/core.py", "run")], EXACT)  # not pkg/util.py's run
    assert got["super.shared"] == ([("pkg/parser.py", "Base.shared")], EXACT)
    assert got["j.loads"] == ([], NAME)  # the standard library is not in the repo
    test = g.find("test_parse")[0]
    got = {c.callee: [(d.path, d.qual) for d in found] for c, found, _ in g.callees(test)}
    assert got["c.run"] == [("pkg/core.py", "run")]
    assert got["c.Engine"] == [("pkg/core.py", "Engine")]
    assert got[".start"] == [("pkg/core.py", "Engine.start")]  # unknown receiver: by name, methods only


def test_a_variable_holds_an_instance_of_the_class_it_was_built_from():
    g = _graph({**PKG, "tests/test_engine.py": "from pkg.core import Engine\n\n\ndef test_start():\n"
                                                "    eng = Engine()\n    assert eng.start() == 1\n"})
    got = {c.callee: ([d.qual for d in found], how) for c, found, how in g.callees(g.find("test_start")[0])}
    assert got["eng.start"] == (["Engine.start"], EXACT)


def test_find_qualified_names_and_callers():
    g = _graph(PKG)
    assert [(d.path, d.qual) for d in g.find("pkg.core.run")][:1] == [("pkg/core.py", "run")]
    assert [(d.path, d.qual) for d in g.find("pkg.util.run")][:1] == [("pkg/util.py", "run")]
    assert [d.qual for d in g.find("pkg.parser.Parser.tokenize")] == ["Parser.tokenize"]
    callers = {(c.path, c.within.qual if c.within else "") for c, _ in g.callers(g.find("pkg.core.run")[:1])}
    # its own module (Engine.start), `core.run` after `from pkg import core`, `c.run` in the test; never
    # pkg/util.py's `run`, which shares the name
    assert callers == {("pkg/core.py", "Engine.start"), ("pkg/parser.py", "Parser.parse"),
                       ("tests/test_parser.py", "test_parse")}
    step = g.find("_step")[0]
    assert [(c.within.qual, how) for c, how in g.callers([step])] == [("run", EXACT)]


def test_js_resolution_through_import_and_require():
    g = _graph({
        "lib/cmd.js": "class Command {\n  parse(a) { return this._prepare(a); }\n  _prepare(a) { return split(a); }\n}\n"
                      "function split(a) { return a; }\nexports.Command = Command;\n",
        "lib/index.ts": "import { Command as C } from './cmd.js';\nexport function make() { return new C(); }\n",
        "test/cmd.test.js": "const { Command } = require('../lib/cmd');\n"
                            "test('x', () => { const c = new Command(); c.parse([]); });\n",
    })
    prep = g.find("Command._prepare")[0]
    assert [(c.within.qual, how) for c, how in g.callers([prep])] == [("Command.parse", EXACT)]
    make = g.find("make")[0]
    assert [[d.qual for d in found] for c, found, _ in g.callees(make)] == [["Command"]]
    cls = g.find("Command")[0]
    assert {c.path for c, _ in g.callers([cls])} == {"lib/index.ts", "test/cmd.test.js"}


def test_calling_a_required_module_runs_what_it_exports_and_a_bare_name_is_never_a_method():
    """`const parse = require('./parse'); picomatch.parse = (p) => parse(p)`: the call is lib/parse.js's
    `parse`, not `picomatch.parse` itself; a method calling bare `run()` means the module's `run`."""
    g = _graph({
        "lib/parse.js": "const parse = (input) => {\n  const push = (t) => t;\n  return push(input);\n};\n"
                        "module.exports = parse;\n",
        "lib/picomatch.js": "const parse = require('./parse');\nconst picomatch = (g) => g;\n"
                            "picomatch.parse = (pattern) => {\n  return parse(pattern);\n};\nmodule.exports = picomatch;\n",
        "pkg/job.py": "def run(x):\n    return x\n\n\nclass Job:\n    def run(self):\n        return run(1)\n",
    })
    wrapper = g.find("picomatch.parse")[0]
    assert [([(d.path, d.qual) for d in found], how) for c, found, how in g.callees(wrapper)] == \
        [([("lib/parse.js", "parse")], EXACT)]
    method = g.find("Job.run")[0]
    assert [[d.qual for d in found] for c, found, _ in g.callees(method)] == [["run"]]


def _store(root: Path) -> Store:
    return Store(root / ".hippo", load_state(root / ".hippo").dim)


def test_graph_follows_edits_deletes_and_renames(git_repo):
    root = git_repo({"a.py": "def alpha():\n    return beta()\n\n\ndef beta():\n    return 1\n",
                     "b.py": "from a import alpha\n\n\ndef gamma():\n    return alpha()\n",
                     "README.md": "# readme\n"})
    index_repo(root, embedder=FakeEmbedder())
    st = _store(root)
    graphs = st.file_graphs()
    assert set(graphs) == {"a.py", "b.py"}
    assert [d[0] for d in json.loads(graphs["a.py"])["d"]] == ["alpha", "beta"]
    st.close()
    write_files(root, {"a.py": "def alpha():\n    return delta()\n\n\ndef delta():\n    return 2\n"})
    git(root, "mv", "b.py", "c.py")
    index_repo(root, embedder=FakeEmbedder())
    st = _store(root)
    graphs = st.file_graphs()
    assert set(graphs) == {"a.py", "c.py"}
    assert [d[0] for d in json.loads(graphs["a.py"])["d"]] == ["alpha", "delta"]
    from hippo.retrieval.codegraph import graph_for

    g = graph_for(st)
    assert [(c.path, c.within.qual) for c, _ in g.callers(g.find("alpha"))] == [("c.py", "gamma")]
    st.close()
    (root / "a.py").unlink()
    index_repo(root, embedder=FakeEmbedder())
    st = _store(root)
    assert set(st.file_graphs()) == {"c.py"}
    st.close()


def test_an_index_from_before_the_graph_gets_one(git_repo):
    root = git_repo({"a.py": "def alpha():\n    return 1\n"})
    index_repo(root, embedder=FakeEmbedder())
    state_file = root / ".hippo" / "state.json"
    data = json.loads(state_file.read_text())
    data.pop("graph_version")  # as written before the graph existed
    state_file.write_text(json.dumps(data))
    st = _store(root)
    st.chunks().drop_columns(["graph"])
    st.close()
    report = index_repo(root, embedder=FakeEmbedder())
    assert report.files_changed == 1 and report.chunks_embedded == 0  # re-read, vectors reused
    st = _store(root)
    assert set(st.file_graphs()) == {"a.py"}
    st.close()


def test_def_callers_callees_cli(git_repo):
    from repo_helpers import hippo_in_process

    root = git_repo({**PKG})
    index_repo(root, embedder=FakeEmbedder())
    env = {"HIPPO_MODEL": FAKE}
    res = hippo_in_process(["def", "pkg.core.run", "-C", str(root)], env=env)
    assert res.returncode == 0
    first = res.stdout.decode().splitlines()[0]
    assert first.startswith("1. pkg/core.py:1-2  run  (function)")
    res = hippo_in_process(["callers", "pkg.core.run", "-C", str(root), "-f", "json"], env=env)
    data = json.loads(res.stdout)
    assert data["definitions"][0]["path"] == "pkg/core.py"
    assert {(r["path"], r["symbol"], r["resolved"]) for r in data["results"]} == {
        ("pkg/core.py", "Engine.start", EXACT), ("pkg/parser.py", "Parser.parse", EXACT),
        ("tests/test_parser.py", "test_parse", EXACT)}
    assert all(r["text"].strip() and "run(" in r["text"] for r in data["results"])
    res = hippo_in_process(["callees", "Engine.start", "-C", str(root), "-f", "xml"], env=env)
    assert '<target path="pkg/core.py" lines="1-2" symbol="run"/>' in res.stdout.decode()
    res = hippo_in_process(["callers", "no_such_name", "-C", str(root)], env=env)
    assert res.returncode == 1 and "No definition named" in res.stdout.decode()


def test_cochange_history_is_built_then_extended_incrementally(git_repo):
    from hippo.index import cochange

    root = git_repo({"src/a.py": "def a():\n    return 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    write_files(root, {"src/b.py": "def b():\n    return 2\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "b alone")
    index_repo(root, embedder=FakeEmbedder())
    data = cochange.load(root / ".hippo")
    assert data["commits"] == 2 and data["pairs"] == {"tests/test_a.py": {"src/a.py": 1}}
    assert set(data["last"]) == {"src/a.py", "src/b.py"}
    write_files(root, {"src/a.py": "def a():\n    return 3\n", "src/c.py": "def c():\n    return 4\n",
                       "tests/test_a.py": "def test_a():\n    assert True\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a and c with its test")
    index_repo(root, embedder=FakeEmbedder())
    data = cochange.load(root / ".hippo")
    assert data["commits"] == 3  # only the new commit was read
    assert data["pairs"] == {"tests/test_a.py": {"src/a.py": 2, "src/c.py": 1}}


@pytest.mark.parametrize("path,text", [
    ("pkg/text.py", "from .cells import cell_len\n\n\nclass Text:\n    def cell_len(self):\n"
                    "        return cell_len(self.plain)\n"),
    ("pkg/text.js", "const { cell_len } = require('./cells');\n\nclass Text {\n  cell_len() {\n"
                    "    return cell_len(this.plain);\n  }\n}\n"),
])
def test_a_method_does_not_see_its_class_scope(path, text):
    """Inside a method, a bare name is never a sibling method (neither Python nor JS puts the class body in
    scope): `cell_len(...)` in `Text.cell_len` is the imported function, not a recursive call."""
    cells = "pkg/cells.py" if path.endswith(".py") else "pkg/cells.js"
    body = "def cell_len(t):\n    return len(t)\n" if path.endswith(".py") else \
        "function cell_len(t) {\n  return t.length;\n}\nmodule.exports = { cell_len };\n"
    g = _graph({cells: body, path: text})
    method = g.find("Text.cell_len")[0]
    got = {c.callee: ([(d.path, d.qual) for d in found], how) for c, found, how in g.callees(method)}
    assert got["cell_len"] == ([(cells, "cell_len")], EXACT)
    assert [c.path for c, _ in g.callers(g.find(f"{cells}:cell_len"))] == [path]


REFS = {
    "md/filters.py": "def strip_ws(s):\n    return s.strip()\n\n\ndef lower(s):\n    return s.lower()\n",
    "md/core.py": (
        "from md import filters\nfrom md.filters import strip_ws\n\n\n"
        "class Base:\n    pass\n\n\n"
        "class Inline(Base):\n    def __init__(self, md):\n        self.md = md\n\n"
        "    def run(self, text):\n        return text\n\n    def _helper(self):\n        return 1\n\n\n"
        "def render(text, extra):\n"
        "    for f in [strip_ws, filters.lower, extra]:\n"
        "        text = f(text)\n"
        "    register(Inline, key=filters.lower)\n"
        "    return text\n"),
    "web/app.js": (
        "import {strip} from './s';\nfunction a() {}\n"
        "function b(x) { [a, strip, x].forEach(f => f(x)); return { a }; }\n"),
    "web/s.js": "export function strip(x) { return x.trim(); }\n",
}


def test_names_used_as_values_are_recorded_and_resolved_exactly():
    raw = graph_of("md/core.py", REFS["md/core.py"])["r"]
    names = [r[0] for r in raw]
    assert names == ["strip_ws", "filters.lower", "Inline"]  # not `extra` (a parameter), nor `Base` (a base)
    g = _graph(REFS)
    render = g.find("render")[0]
    assert [(d.path, d.qual) for d in g.references(render)] == [
        ("md/filters.py", "strip_ws"), ("md/filters.py", "lower"), ("md/core.py", "Inline")]
    assert [d.qual for d in g.references(g.find("b")[0])] == ["a", "strip"]
    assert [d.qual for d in g.methods(g.find("Inline")[0])] == ["Inline.run", "Inline._helper"]


def test_callers_also_lists_where_a_function_is_handed_on_or_registered(git_repo):
    """A filter registered in a list and run later, or a callback handed to another function, is reached
    without a call site of its own: `callers` lists those places too, marked resolved="value"."""
    from hippo.retrieval.render import structure_text
    from hippo.retrieval.search import Searcher
    from hippo.retrieval.structure import answer

    root = git_repo({
        "pkg/__init__.py": "",
        "pkg/filters.py": "def strip_comments(text):\n    return text\n\n\ndef shout(text):\n    return text + '!'\n",
        "pkg/stack.py": "from pkg.filters import shout, strip_comments\n\n\n"
                        "def default_filters():\n    return [strip_comments, shout]\n\n\n"
                        "def run(text, on_done):\n    return on_done(shout(text))\n\n\n"
                        "def main(text):\n    return run(text, strip_comments)\n",
    })
    index_repo(root, embedder=FakeEmbedder())
    data = answer(Searcher(root, embedder=FakeEmbedder()), "callers", "strip_comments")
    got = [(r["symbol"], r["line"], r["resolved"]) for r in data["results"]]
    assert got == [("default_filters", 5, "value"), ("main", 13, "value")], got
    data = answer(Searcher(root, embedder=FakeEmbedder()), "callers", "shout")
    assert [(r["symbol"], r["resolved"]) for r in data["results"]] == [("run", EXACT), ("default_filters", "value")]
    assert "called or used from 2 place(s)" in structure_text(data) and "[used as a value" in structure_text(data)


TABLES = {
    "lex/keywords.py": (
        "import re\n\n"
        "KEYWORDS = {\n    'ASC': 'order',\n    'DESC': 'order',\n}\n"
        "PATTERNS = [\n    (r'NULLS\\s+FIRST', 'keyword'),\n]\n"
        "log = make_log('x')\n"
        "__all__ = ['KEYWORDS']\n"),
    "lex/lexer.py": (
        "import re\n"
        "from lex import keywords\n\n\n"
        "class Lexer:\n"
        "    RE = r'^-{3,}$'\n"
        "    SEARCH_RE = re.compile(RE, re.M)\n\n"
        "    def setup(self):\n"
        "        self.add(keywords.PATTERNS)\n\n"
        "    def kind(self, word):\n"
        "        return keywords.KEYWORDS.get(word.upper())\n\n"
        "    def is_rule(self, block):\n"
        "        return self.SEARCH_RE.search(block)\n"),
    "web/table.ts": (
        "export const ENTITIES = { amp: '&', lt: '<' };\n"
        "const decodeMap = new Map([[1, 2]]);\n"
        "const helpers = { trim: function (x) { return x.trim(); } };\n"
        "export class Decoder {\n  static readonly RE: RegExp = /&(\\w+);/;\n"
        "  decode(s: string) { return this.RE.test(s) && decodeMap.get(s) && ENTITIES[s]; }\n}\n"),
}


def test_tables_and_patterns_are_data_definitions():
    """Module- and class-level literal values (dicts, lists, regexes, constants) are definitions of kind
    'data'; a logger built from a call, `__all__` and functions written inside a table are not."""
    defs = {d[0]: d[1:4] for d in graph_of("lex/keywords.py", TABLES["lex/keywords.py"])["d"]}
    assert defs == {"KEYWORDS": ["data", 3, 6], "PATTERNS": ["data", 7, 9]}
    defs = {d[0]: d[1] for d in graph_of("lex/lexer.py", TABLES["lex/lexer.py"])["d"]}
    assert defs["Lexer.RE"] == "data" and defs["Lexer.SEARCH_RE"] == "data" and defs["Lexer.kind"] == "method"
    defs = {d[0]: d[1] for d in graph_of("web/table.ts", TABLES["web/table.ts"])["d"]}
    assert defs["ENTITIES"] == defs["decodeMap"] == defs["helpers"] == defs["Decoder.RE"] == "data"
    assert defs["trim"] == "function"  # keeps its own name: a table is no scope


def test_a_table_is_reached_where_it_is_read_indexed_or_searched():
    g = _graph(TABLES)
    uses = {c.callee: [d.qual for d in found] for c, found, how in
            ((r, *g.resolve(r)) for f in g.files.values() for r in f.refs) if how == EXACT}
    assert uses["keywords.PATTERNS"] == ["PATTERNS"]  # handed to a function
    assert uses["keywords.KEYWORDS"] == ["KEYWORDS"]  # a method called on it
    assert uses["self.SEARCH_RE"] == ["Lexer.SEARCH_RE"]
    assert uses["RE"] == ["Lexer.RE"]  # class body: one attribute built from another
    assert uses["this.RE"] == ["Decoder.RE"] and uses["decodeMap"] == ["decodeMap"] and uses["ENTITIES"] == ["ENTITIES"]
    kind = g.find("Lexer.kind")[0]
    assert [(d.qual, how) for _c, found, how in g.callees(kind) for d in found] == [("KEYWORDS", EXACT)]
    assert [d.qual for d in g.find("KEYWORDS")] == ["KEYWORDS"]  # `hippo def` finds a table


def test_the_suspect_walk_reaches_a_table_deeper_than_functions():
    """A keyword table read by an initializer six calls below the test is still a suspect (data only is
    collected past suspects.MAX_DEPTH), and its why says it is used, not called."""
    from hippo.push.diagnosis import suspects

    chain = "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n\n\n" for i in range(1, 6))
    files = {
        "app/keywords.py": "KEYWORDS = {'ASC': 1}\n",
        "app/core.py": "from app import keywords\n\n\n" + chain + "def f6(x):\n    return keywords.KEYWORDS.get(x)\n",
        "tests/test_core.py": "from app.core import f1\n\n\ndef test_asc():\n    assert f1('ASC') == 2\n",
    }
    g = _graph(files)
    reached = suspects.walk(g, g.find("test_asc"))
    assert "f6" not in {d.qual for d in reached}  # functions stop at MAX_DEPTH
    table = next(s for d, s in reached.items() if d.qual == "KEYWORDS")
    assert table.distance == 7 and table.why() == "used by f6, 7 calls down"


def test_parametrized_and_focused_js_tests_are_test_definitions():
    """`test.each(table)('title %p', fn)` and `it.only(...)` are tests; the runner reports a parametrized
    test by its instance (`flags {"flags": "-a"} throw`), which still finds the definition."""
    from hippo.push.diagnosis import runners, suspects

    src = ("const { Option } = require('../lib/option');\n\n"
           "test.each([{ flags: '-a, -b' }])('when built with flags %p then throw', ({ flags }) => {\n"
           "  expect(() => new Option(flags)).toThrow();\n});\n"
           "describe.each`a`('table $a', () => {});\n"
           "it.only('solo', () => { new Option('-s'); });\n")
    tests = {d[0]: d[1] for d in graph_of("tests/option.test.js", src)["d"]}
    assert tests == {"when built with flags %p then throw": "test", "table $a": "test", "solo": "test"}
    g = _graph({"tests/option.test.js": src,
                "lib/option.js": "class Option {\n  constructor(flags) { this.flags = split(flags); }\n}\n"
                                 "function split(f) { return f.split(','); }\nmodule.exports = { Option };\n"})
    failing = runners.FailingTest("tests/option.test.js", 'when built with flags {"flags": "-a, -b"} then throw')
    starts = suspects.test_defs(g, [failing], [], lambda p: p)
    assert [d.qual for d in starts] == ["when built with flags %p then throw"]
    assert {d.qual for d in suspects.walk(g, starts)} >= {"Option.constructor", "split"}


def test_a_test_requiring_the_package_root_reaches_its_index():
    """`require('..')` from tests/ is the repository's own index.js, and through it the class it exports."""
    g = _graph({"index.js": "const { Option } = require('./lib/option.js');\nexports.Option = Option;\n",
                "lib/option.js": "class Option {\n  constructor(f) { this.f = f; }\n}\nexports.Option = Option;\n",
                "tests/o.test.js": "const { Option } = require('..');\ntest('x', () => { new Option('a'); });\n"})
    got = {c.callee: ([(d.path, d.qual) for d in found], how) for c, found, how in g.callees(g.find("x")[0])}
    assert got["Option"] == ([("lib/option.js", "Option")], EXACT)


def test_name_resolution_is_computed_once_per_graph_and_answers_the_same():
    """Packages that import a name from each other, copied three times (a big repository holds copies): each
    hop fans out to every copy, so without the graph's lookup cache resolving one call grows as 3^depth."""
    files = dict(PKG)
    for k in range(3):
        files[f"copy{k}/cyc/__init__.py"] = "from cyc.b import helper\n"
        files[f"copy{k}/cyc/a.py"] = "from cyc.b import helper\n\n\ndef go():\n    return helper()\n"
        files[f"copy{k}/cyc/b.py"] = "from cyc.a import helper\n"
    g = _graph(files)
    calls = [c for f in g.files.values() for c in f.calls]
    warm = {c: g.resolve(c) for c in calls}  # one graph, its cache shared by every call
    for c, answer in warm.items():
        assert _graph(files).resolve(c) == answer  # a graph that resolved nothing before
    go = next(c for c in calls if c.callee == "helper" and c.path == "copy0/cyc/a.py")
    fresh = _graph(files)
    resolved = []
    real = fresh._resolve_name
    fresh._resolve_name = lambda *a: resolved.append(a[:2]) or real(*a)  # type: ignore[method-assign]
    assert fresh.resolve(go)[1] == NAME  # the cycle defines no helper
    assert len(resolved) < 60  # each (file, name, depth) once, not 3^7 walks



def test_the_graph_does_not_depend_on_the_order_tree_sitter_returns_captures(monkeypatch):
    """`QueryCursor.captures` collects each capture's nodes in a set, whose order follows node addresses and
    so changes between processes: the graph must come out the same whatever order the lists arrive in."""
    import tree_sitter

    py = PY + "\n\ndef use(p):\n    a = Parser()\n    b = core.make(p)\n    with open(p) as fh:\n        return a.parse(fh), b\n"
    js = ("const c = new Command();\nconst d = make.thing(1);\nfunction go(x) {\n  const e = build(x);\n"
          "  return [c.run(e), d, KEYS[x]];\n}\nconst KEYS = {a: 1};\n")
    want = {p: graph_of(p, t) for p, t in (("m.py", py), ("m.js", js))}
    real = tree_sitter.QueryCursor

    class Reversed:
        def __init__(self, query):
            self.cursor = real(query)

        def captures(self, node):
            return {k: v[::-1] for k, v in self.cursor.captures(node).items()}

    monkeypatch.setattr(tree_sitter, "QueryCursor", Reversed)
    assert {p: graph_of(p, t) for p, t in (("m.py", py), ("m.js", js))} == want


def test_a_variable_is_paired_with_the_call_of_its_own_statement():
    g = graph_of("m.py", "def use(p):\n    a = Parser()\n    b = core.make(p)\n    with open(p) as fh:\n"
                         "        x = 1\n    return a, b, fh\n")
    assert [r[:2] for r in g["a"]] == [["a", "Parser"], ["b", "core.make"], ["fh", "open"]]
    g = graph_of("m.js", "function go(x) {\n  const e = build(x);\n  let f = new lib.Thing(e), k = 2;\n}\n")
    assert [r[:2] for r in g["a"]] == [["e", "build"], ["f", "lib.Thing"]]


def _answers(g: CodeGraph) -> list:
    """Everything a walk asks of the graph, as plain values: resolutions, callees, callers, uses, lookups."""
    def plain(x):
        if isinstance(x, Def):
            return ("def", x.path, x.qual, x.kind, x.start, x.end, x.bases, x.idx)
        if isinstance(x, codegraph.Call):
            return ("call", x.path, x.line, x.callee, plain(x.within) if x.within else None)
        if isinstance(x, (list, tuple)):
            return [plain(y) for y in x]
        return x

    out: list = [sorted((k, sorted(v)) for k, v in g.aliases.items()), sorted(g.by_name)]
    for path in sorted(g.files):
        f = g.files[path]
        out.append(plain([*f.calls, *f.refs]))
        out += [plain(g.resolve(c)) for c in [*f.calls, *f.refs]]
        for d in f.defs:
            out += [plain(g.callees(d)), plain(g.callers([d])), plain(g.uses([d])), plain(g.references(d)),
                    plain(f.sites_within(d)), plain(g.find(d.qual)), plain(g.constructors(d)), plain(g.methods(d))]
    for tail in sorted({c.tail for f in g.files.values() for c in f.calls}):
        out.append(plain(g.calls_by_tail.get(tail)))
    return out


def test_only_a_bounded_share_of_the_graph_is_held_parsed_and_answers_do_not_change(monkeypatch):
    """A 100k-file repository's graph held whole as objects took ~2.5 GB of the warm server: definitions
    are held, the rest of each file is parsed from its compressed JSON on use, within MAX_PARSED_BYTES."""
    files = {**PKG, **REFS, **TABLES, "web/app.js": JS}
    whole = _answers(_graph(files))
    monkeypatch.setattr(codegraph, "MAX_PARSED_BYTES", 1)  # each parse drops the one before
    g = _graph(files)
    assert _answers(g) == whole
    assert sum(f._body is not None for f in g.files.values()) == 1
    assert set(g.by_name) == {d.name for f in g.files.values() for d in f.defs}
    assert all(isinstance(f.zraw, bytes) and f.raw == json.dumps(graph_of(p, files[p])) for p, f in g.files.items())


def test_an_unchanged_file_is_reused_from_the_previous_graph():
    rows = {p: json.dumps(graph_of(p, t)) for p, t in PKG.items()}
    g1 = CodeGraph.from_rows(rows)
    rows2 = {**rows, "pkg/util.py": json.dumps(graph_of("pkg/util.py", "def helper(t):\n    return 1\n"))}
    g2 = CodeGraph.from_rows(iter(rows2.items()), g1)
    assert all(g2.files[p] is g1.files[p] for p in rows if p != "pkg/util.py")
    assert g2.files["pkg/util.py"] is not g1.files["pkg/util.py"]
    assert [d.qual for d in g2.files["pkg/util.py"].defs] == ["helper"]


DISPATCH = {
    "calc/__init__.py": "VERSION = 1\n",
    "calc/kinds.py": "class Pow:\n    pass\n\n\nclass Mul:\n    pass\n",
    "calc/predicates.py": (
        "class Predicate:\n"
        "    @classmethod\n"
        "    def register(cls, *types):\n"
        "        return cls.handler.register(*types)\n\n\n"
        "class IntegerPredicate(Predicate):\n"
        "    handler = None\n\n\n"
        "def ask(pred, expr):\n"
        "    return pred.handler(expr)\n"),
    "calc/handlers.py": (
        "from calc.kinds import Mul, Pow\n"
        "from calc.predicates import IntegerPredicate\n\n\n"
        "@IntegerPredicate.register(Pow)\n"
        "def _(expr):\n"
        "    return expr.exp >= 0\n\n\n"
        "@IntegerPredicate.register(Mul)\n"
        "def _(expr):\n"
        "    return True\n\n\n"
        "class Registry:\n"
        "    def multiregister(self, *types):\n"
        "        return lambda f: f\n\n\n"
        "facts = Registry()\n\n\n"
        "@facts.multiregister(Pow, Mul)\n"
        "def _(expr):\n"
        "    return []\n"),
    "calc/solver.py": "from calc.handlers import facts\n\n\ndef solve(expr):\n    return [f for f in facts(expr)]\n",
    "tests/test_calc.py": (
        "import pytest\n"
        "from calc.kinds import Pow\n"
        "from calc.predicates import IntegerPredicate, ask\n"
        "from calc.solver import solve\n"
        "from calc import solver\n\n"
        "FNS = [solve, solver.solve]\n\n\n"
        "def test_pow():\n"
        "    assert ask(IntegerPredicate(), Pow())\n\n\n"
        "@pytest.mark.parametrize('fn', FNS)\n"
        "class TestSolve:\n"
        "    @pytest.mark.parametrize('k, g', [(1, ask), (2, solve)])\n"
        "    def test_solve(self, fn, k, g):\n"
        "        assert fn(Pow()) == g(k)\n"),
}


def test_registered_handlers_are_reachable_from_their_dispatcher_and_registry_object():
    """`@X.register(T)` handlers are never called by name: reaching X (a class or function) or calling
    a registry object by a name the file imports reaches them, with the types they are registered for."""
    g = _graph(DISPATCH)
    handlers = g.files["calc/handlers.py"].defs
    pow_h, mul_h, facts_h = [d for d in handlers if d.qual == "_"]
    integer = g.find("IntegerPredicate")[0]
    assert g.handlers_of(integer) == [pow_h, mul_h]
    assert g.registered_types(pow_h) == ("Pow",) and g.registered_types(facts_h) == ("Pow", "Mul")
    assert g.handlers_of(g.find("solve")[0]) == [facts_h]  # `facts(expr)`, imported from the registry's file
    assert g.handlers_of(g.find("ask")[0]) == []


def test_a_pytest_parametrize_argument_resolves_to_its_values():
    """`@parametrize('fn', FNS)` on the class, `('k, g', [(1, ask), ...])` on the method: a call of the
    argument reaches the functions listed (a named table is read through its entries)."""
    g = _graph(DISPATCH)
    test = g.find("TestSolve.test_solve")[0]
    called = {c.callee: ([d.qual for d in found], how) for c, found, how in g.callees(test)}
    assert called["fn"] == (["solve"], EXACT)
    assert called["g"] == (["ask", "solve"], EXACT)
    rows = graph_of("tests/test_calc.py", DISPATCH["tests/test_calc.py"])["p"]
    assert [r[:2] for r in rows] == [["fn", ["FNS"]], ["g", ["ask", "solve"]]]  # `k`'s values are no names


def test_the_walk_reaches_handlers_and_a_type_the_test_writes_ranks_its_handler_first():
    """A handler registered for Pow, and a printer's `_print_Pow`, outrank their siblings when the test
    builds a Pow; the handler's why says what it is registered with."""
    from hippo.push.diagnosis import suspects

    files = dict(DISPATCH)
    files["calc/printer.py"] = ("class Printer:\n    def doprint(self, expr):\n"
                                "        return getattr(self, '_print_' + type(expr).__name__)(expr)\n\n"
                                "    def _print_Mul(self, expr):\n        return '*'\n\n"
                                "    def _print_Pow(self, expr):\n        return '**'\n")
    files["tests/test_print.py"] = ("from calc.kinds import Pow\nfrom calc.printer import Printer\n\n\n"
                                    "def test_print():\n    assert Printer().doprint(Pow()) == '^'\n")
    g = _graph(files)
    for test, body, expected in (("test_pow", files["tests/test_calc.py"], "_"),
                                 ("test_print", files["tests/test_print.py"], "Printer._print_Pow")):
        reached = suspects.walk(g, g.find(test))
        ranked = suspects.rank(reached, frozenset(), frozenset(), [], lambda _d: "",
                               test_names=suspects.identifiers(body))
        top = ranked[0]
        assert (top.d.qual, top.features["dispatch_type"]) == (expected, 1.0)
        siblings = [s for s in ranked if s.d.qual == expected and s is not top] or \
            [s for s in ranked if s.d.qual == "Printer._print_Mul"]
        assert siblings and all(s.features["dispatch_type"] == 0.0 for s in siblings)
    handler = next(s for d, s in suspects.walk(g, g.find("test_pow")).items() if s.types == ("Pow",))
    assert handler.how == suspects.HANDLER and handler.why() == "a handler of IntegerPredicate, 2 calls down"


TYPED = {
    "src/app/core.py": (
        "class Base:\n    def build(self):\n        return 1\n\n\n"
        "class App(Base):\n    def run(self):\n        return 2\n\n\n"
        "class Checker:\n    def __exit__(self, *a):\n        return False\n\n\n"
        "def warns() -> 'Checker':\n    return Checker()\n"),
    "src/app/plugin.py": (
        "def pytest_configure(config):\n    return 1\n\n\n"
        "class Reporter:\n    def pytest_configure(self, config):\n        return 2\n"),
    "src/app/hookspec.py": "def pytest_configure(config):\n    \"\"\"Called once.\"\"\"\n",
    "src/app/main.py": (
        "from app.core import App, warns\n\n\n"
        "def configure(config):\n    config.hook.pytest_configure(config=config)\n\n\n"
        "def drive(app: App, other: 'Optional[App]' = None):\n    app.run()\n    other.build()\n\n\n"
        "def check():\n    with warns() as w:\n        w.__exit__()\n"),
    "tests/conftest.py": (
        "import pytest\nfrom app.core import App\n\n\n"
        "@pytest.fixture\ndef app(tmp_path) -> 'Iterator[App]':\n    yield App()\n"),
    "tests/test_app.py": "def test_build(app):\n    app.build()\n    app.run()\n",
}


def test_a_hook_relay_call_reaches_every_implementation_but_the_spec():
    """`config.hook.pytest_configure(...)` is pluggy calling each plugin's function or method of that name;
    the specification module only describes the hook."""
    g = _graph(TYPED)
    configure = g.find("configure")[0]
    [(_, found, how)] = [(c, f, h) for c, f, h in g.callees(configure) if c.callee.endswith("pytest_configure")]
    assert how == EXACT
    assert sorted((d.path, d.qual) for d in found) == [("src/app/plugin.py", "Reporter.pytest_configure"),
                                                       ("src/app/plugin.py", "pytest_configure")]


def test_annotations_and_fixtures_type_the_receiver():
    """A parameter annotated `App` (also inside `Optional[...]`, or as a string), a variable from a function
    annotated `-> 'Checker'`, and a test's fixture parameter whose fixture returns `Iterator[App]` resolve
    `x.m()` to that class's method, inherited ones included."""
    g = _graph(TYPED)
    rows = graph_of("src/app/main.py", TYPED["src/app/main.py"])
    assert ["app", "App"] == rows["a"][0][:2] and ["other", "App"] == rows["a"][1][:2]
    assert graph_of("src/app/core.py", TYPED["src/app/core.py"])["d"][-1][-1] == "Checker"

    def called(name: str) -> dict:
        return {c.callee: ([(d.path, d.qual) for d in found], how) for c, found, how in g.callees(g.find(name)[0])}

    drive = called("drive")
    assert drive["app.run"] == ([("src/app/core.py", "App.run")], EXACT)
    assert drive["other.build"] == ([("src/app/core.py", "Base.build")], EXACT)
    assert called("check")["w.__exit__"] == ([("src/app/core.py", "Checker.__exit__")], EXACT)
    test = called("test_build")
    assert test["app.build"] == ([("src/app/core.py", "Base.build")], EXACT)
    assert test["app.run"] == ([("src/app/core.py", "App.run")], EXACT)
