"""How-questions answered by a long function: a snippet from the middle of its body shows the function's
header (search._headers), a function several of whose chunks match is lifted as one unit (search._spread,
rankpolicy.SPREAD), a name the question gives that nothing defines brings the source that uses it
(search._fuse_usages), and a chunk opening inside a block comment counts no logic in it."""
from __future__ import annotations

import pytest

from hippo.retrieval import rankpolicy
from repo_helpers import indexed_searcher


def _body(n: int, word: str) -> str:
    return "".join(f"        total_{word}_{i} = compute_{word}(total_{word}_{i - 1}, {i})\n" for i in range(1, n))


# A function of ~150 lines: the chunker cuts it, and only its last part mentions the retry jitter.
LONG = ('"""Transfers."""\n\n\nclass Transfer:\n    def run_transfer(self, request, attempts):\n'
        '        """Run a transfer."""\n' + _body(120, "bytes") +
        "        for attempt in range(attempts):\n"
        "            jitter = random_jitter(attempt)\n"
        "            if jitter > self.max_jitter:\n"
        "                jitter = self.max_jitter\n"
        "            sleep_applied_jitter(jitter)\n"
        "        return total_bytes_119\n")
OTHER = "def unrelated(a, b):\n    return a + b\n"
# The same in Go, a language the code graph does not read: the chunker's symbol names the unit.
GO_LONG = ("package run\n\n// Execute runs the command.\nfunc (c *Command) Execute(args []string) error {\n" +
           "".join(f"\tstep{i} := prepare{i}(args)\n" for i in range(120)) +
           "\tfor _, hook := range c.shutdownHooks {\n\t\tif err := hook.Drain(); err != nil {\n"
           "\t\t\treturn err\n\t\t}\n\t}\n\treturn nil\n}\n")

USES = """export function makeRequest(options) {
  // hooks are called in order; one returning false stops the request
  for (const hook of options.hooks.beforeSend) {
    if (hook(options) === false) {
      return null;
    }
  }
  return send(options);
}
"""
HOOK_TEST = "test('beforeSend hooks are called {i}', () => {{\n  hooks.beforeSend = [f{i}];\n  expect(run()).toBe({i});\n}});\n"
HOOK_DOC = "# beforeSend hooks, part {i}\n\nThe beforeSend option lists hooks to run with the options.\n"


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    files = {"pkg/transfer.py": LONG, "pkg/other.py": OTHER, "src/request.js": USES, "run/execute.go": GO_LONG,
             **{f"test/hooks{i}.test.js": HOOK_TEST.format(i=i) for i in range(70)},
             **{f"docs/hooks{i}.md": HOOK_DOC.format(i=i) for i in range(70)}}
    return indexed_searcher(tmp_path_factory.mktemp("how4") / "repo", files)


def test_a_hit_from_the_middle_of_a_long_function_shows_its_header(searcher):
    chunks = searcher.store.chunks_covering([("pkg/transfer.py", 125)])
    tail = chunks[("pkg/transfer.py", 125)]
    assert tail["start_line"] > 5  # the question's words are in a later chunk, not the header's
    hits = searcher.search("how is the random jitter applied to each attempt", k=3).hits
    hit = next(h for h in hits if h.path == "pkg/transfer.py")
    assert hit.start_line == 5 and hit.end_line >= 125
    lines = hit.snippet.split("\n")
    assert lines[0].strip() == "def run_transfer(self, request, attempts):"
    assert lines[1].startswith("// ... (") and "random_jitter" in hit.snippet
    # a question that is not about code keeps the snippet as it was
    pasted = searcher.search("jitter = random_jitter(attempt)\nTraceback (most recent call last):", k=3).hits
    assert all(h.start_line != 5 for h in pasted if h.path == "pkg/transfer.py")


def test_a_go_hit_from_the_middle_of_a_function_shows_its_header(searcher):
    hits = searcher.search("how are the shutdown hooks drained", k=3).hits
    hit = next(h for h in hits if h.path == "run/execute.go")
    assert hit.start_line == 4 and hit.snippet.startswith("func (c *Command) Execute(args []string) error {\n// ... (")


def test_header_lines_stop_at_the_body():
    from hippo.retrieval.search import header_lines

    text = "@cached\ndef f(\n    a,\n    b,\n):\n    return a\n"
    assert [n for n, _ in header_lines(text, 10, 10, 16)] == [10, 11, 12, 13]  # at most HEADER_LINES
    assert [t for _, t in header_lines("async _make() {\n  x();\n}\n", 1, 1, 3)] == ["async _make() {"]
    assert header_lines("def g():\n    pass\n", 1, 1, 1) == []  # never reaches the hit itself


def test_a_function_matching_in_several_chunks_is_lifted_as_one(searcher, monkeypatch):
    from hippo.retrieval.search import _Cand, _spread

    def cand(start, final, logic, symbol="Transfer.run_transfer", path="pkg/transfer.py"):
        return _Cand(row={"id": f"{path}{start}", "path": path, "start_line": start, "end_line": start + 30,
                          "symbol": symbol, "language": "python", "text": ""}, final=final, logic=logic)

    unit = [cand(40, 0.60, 5), cand(80, 0.55, 4), cand(120, 0.50, 3)]
    single = cand(1, 0.65, 6, symbol="other", path="pkg/other.py")
    fields = [cand(200, 0.5, 0, symbol="Options"), cand(240, 0.5, 0, symbol="Options")]
    _spread([*unit, single, *fields])
    assert unit[0].final > single.final  # 0.60 + 0.15 * (0.55 + 0.5 * 0.50)
    assert unit[1].final == 0.55 and fields[0].final == 0.5  # only the best chunk, and only code that does
    monkeypatch.setattr(rankpolicy, "SPREAD", 0.0)
    again = [cand(40, 0.60, 5), cand(80, 0.55, 4)]
    _spread(again)
    assert again[0].final == 0.60


def test_a_class_the_question_names_is_lifted_by_its_methods(monkeypatch):
    from hippo.retrieval.search import _Cand, _spread

    def cand(symbol, start, final, logic, named=0.0):
        return _Cand(row={"id": f"{symbol}{start}", "path": "pkg/decoders.py", "start_line": start,
                          "end_line": start + 9, "symbol": symbol, "language": "python", "text": ""},
                     final=final, logic=logic, named=named)

    def run(named):
        header = cand("BrotliDecoder", 108, 0.50, 0, named=named)  # the class line and its docstring
        methods = [cand("BrotliDecoder.decode", 118, 0.60, 6), cand("BrotliDecoder.flush", 130, 0.52, 8)]
        other = cand("SUPPORTED", 381, 0.62, 4)
        _spread([header, *methods, other])
        return header.final, other.final, methods[0].final

    head, other, method = run(named=1.0)
    assert head > other and method == 0.60  # 0.50 + 0.25 * (0.60 + 0.3 * 0.52)
    head, other, _ = run(named=0.25)  # a class the question does not name is not lifted
    assert head == 0.50 < other


def test_rust_test_modules_named_after_their_module_are_tests():
    assert rankpolicy.chunk_kind("src/fmt/mod.rs", "rust", "fmt_tests, fmt_tests.parse_no_placeholders") == "test"
    assert rankpolicy.chunk_kind("src/fmt/mod.rs", "rust", "fmt_tests.all_placeholders") == "test"
    assert rankpolicy.chunk_kind("src/run.rs", "rust", "run_tests") == "code"  # a function of that name
    assert rankpolicy.chunk_kind("src/fmt/mod.rs", "rust", "FormatTemplate.parse") == "code"


def test_a_name_nothing_defines_brings_the_code_that_uses_it(searcher, monkeypatch):
    def top3(q):
        return [h.path for h in searcher.search(q, k=5).hits[:3]]

    q = "how are beforeSend hooks called"
    assert "src/request.js" in top3(q)
    monkeypatch.setattr(type(searcher), "_fuse_usages", lambda self, cands, names, pred: None)
    assert "src/request.js" not in top3(q)  # tests and docs repeat the name and fill every list


def test_a_chunk_opening_inside_a_block_comment_counts_no_logic_in_it():
    cut = "\tconst x = got.extend({\n\t\thooks: {beforeRequest: [o => {\n\t\t\treturn o;\n\t\t}]}\n\t});\n\t```\n\t*/\n\tfoo: string;\n"
    assert rankpolicy.logic_lines(cut, "typescript") == 0
    assert rankpolicy.logic_lines("x = 1\n/* a */\nreturn x\n", "typescript") == 1


def test_words_inside_string_literals_are_not_logic():
    help_text = ('        cmd.arg(Arg::new("exec")\n            .help("Execute a command for each search result")\n'
                 '            .long_help(\n                "Execute a command for each result. \\\n'
                 '                 If no placeholder is present, return an implicit one.\\n\\\n                 "\n            ),\n')
    assert rankpolicy.logic_lines(help_text, "rust") == 1  # the `cmd.arg(` call; the help's "for", "if", "return" not
    assert rankpolicy.logic_lines('if x == "a":\n    return "for each"\n', "python") == 2
    assert rankpolicy.logic_lines("msg = 'if you return'\nlog(msg)\n", "python") == 1
