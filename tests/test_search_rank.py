"""Search's ranking rules on a small repo: code over prose for code questions, implementation over type
declarations, a symbol's definition over its usages, import-only chunks below code, no text twice."""
from __future__ import annotations

import pytest

from hippo.retrieval import rankpolicy, rerank
from repo_helpers import indexed_searcher

README = """# fetchy

A small HTTP client for the command line.

## Offline mode

Run with --offline to build the request without sending it: fetchy prints the request it would
send and exits. The --offline flag works with every method and is handy to check headers offline.
Offline mode never opens a connection; offline output shows the method, URL, headers and body.
"""

CLI = '''"""Command line entry point."""
import sys


def main(argv):
    args = parse(argv)
    if args.offline:
        # --offline: build the request, print it, never open a connection
        request = build_request(args)
        print(format_request(request))
        return 0
    return send(build_request(args))


def parse(argv):
    flags = {"offline": "--offline" in argv}
    return Args(**flags)
'''

SESSIONS = '''from fetchy.storage import load_json, save_json, session_path
from fetchy.storage import lock_session_file, unlock_session_file
from fetchy.cookies import load_cookies, save_cookies
from fetchy.session_store import load_session, save_session, SessionLoadError, SessionSaveError
import os
import json


class Session:
    def __init__(self, name):
        self.name = name
        self.headers = {}

    def load(self):
        """Read the stored headers and cookies back."""
        data = load_json(session_path(self.name))
        self.headers = data.get("headers", {})
        self.cookies = load_cookies(data)

    def save(self):
        """Write headers and cookies to disk."""
        save_json(session_path(self.name), {"headers": self.headers, "cookies": save_cookies(self)})
'''

TIME_JS = '''"use strict";

function nullTime() {
  return "";
}

// The default timestamp format: epoch milliseconds as a string field.
function epochTime() {
  return `,"time":${Date.now()}`;
}

function isoTime() {
  return `,"time":"${new Date(Date.now()).toISOString()}"`;
}

module.exports = { nullTime, epochTime, isoTime };
'''

TYPES = '''/** The timestamp format of every log line; the default is epochTime. */
export type TimeFn = () => string;
/** Change the default timestamp format: pass stdTimeFunctions.isoTime as `timestamp`. */
export interface LoggerOptions {
  /** timestamp format: true (default epoch format), false, or a function returning the format */
  timestamp?: TimeFn | boolean;
}
/** timestamp format functions: the default epoch timestamp, iso timestamp format, no timestamp */
export const stdTimeFunctions: { epochTime: TimeFn; isoTime: TimeFn; nullTime: TimeFn };
'''

STATUS = '''import enum


class ExitStatus(enum.IntEnum):
    """Program exit codes."""

    SUCCESS = 0
    ERROR = 1
    ERROR_TIMEOUT = 2
'''

USAGE = '''from fetchy.status import ExitStatus


def finish_{n}(ok):
    if ok:
        return ExitStatus.SUCCESS
    if ok is None:
        return ExitStatus.ERROR_TIMEOUT
    return ExitStatus.ERROR  # ExitStatus for the {n} path
'''


def repo_files() -> dict[str, str]:
    return {
        "README.md": README,
        "PKG-INFO": "Metadata-Version: 2.1\nName: fetchy\nVersion: 1.0\n\n" + README,
        "fetchy/cli.py": CLI,
        "fetchy/sessions.py": SESSIONS,
        "fetchy/status.py": STATUS,
        "lib/time.js": TIME_JS,
        "pino.d.ts": TYPES,
        **{f"fetchy/step{n}.py": USAGE.format(n=n) for n in range(5)},
    }


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    return indexed_searcher(tmp_path_factory.mktemp("rank") / "repo", repo_files())


def test_how_question_puts_code_above_prose(searcher):
    resp = searcher.search("how does --offline work")
    assert resp.hits[0].path == "fetchy/cli.py"


def test_same_text_is_never_shown_twice(searcher):
    resp = searcher.search("offline mode prints the request without sending it")
    shown = [h.path for h in resp.hits]
    assert not {"README.md", "PKG-INFO"} <= set(shown), shown


def test_implementation_ranks_above_type_declarations(searcher):
    resp = searcher.search("where would I change the default timestamp format")
    paths = [h.path for h in resp.hits] + [c.path for c in resp.candidates]
    assert "lib/time.js" in paths
    assert paths.index("lib/time.js") < paths.index("pino.d.ts") if "pino.d.ts" in paths else True
    assert paths[0] == "lib/time.js"


def test_type_declarations_come_first_when_asked_for(searcher):
    resp = searcher.search("timestamp format type declaration")
    assert resp.hits[0].path == "pino.d.ts"


def test_symbol_query_puts_definition_first(searcher):
    resp = searcher.search("ExitStatus")
    assert resp.hits[0].path == "fetchy/status.py"
    assert resp.hits[0].start_line <= 4 <= resp.hits[0].end_line


def test_import_only_chunk_is_weak_evidence(searcher):
    resp = searcher.search("load and save a session")
    top = resp.hits[0]
    assert top.path == "fetchy/sessions.py"
    assert top.snippet.lstrip().startswith("class Session") or top.start_line > 6, top


def test_reranker_is_deterministic(searcher):
    first = searcher.search("how does --offline work").to_dict()["hits"]
    again = searcher.search("how does --offline work").to_dict()["hits"]
    assert [(h["path"], h["start_line"], h["score"]) for h in first] == \
           [(h["path"], h["start_line"], h["score"]) for h in again]
    f = rerank.Features(first=0.5, conf=0.6, kind="doc", definition=0.0)
    intent = rankpolicy.read_intent("how does --offline work")
    assert rerank.score(f, intent).final == rerank.score(f, intent).final
    assert rerank.score(f, intent).final < rerank.score(rerank.Features(first=0.5, conf=0.6), intent).final


def test_intent_and_path_kinds():
    assert rankpolicy.read_intent("ExitStatus").symbol == "ExitStatus"
    assert rankpolicy.read_intent("`Client.send()`").symbol == "Client.send"
    assert rankpolicy.read_intent("how does --offline work").code_question
    assert not rankpolicy.read_intent("where do the docs explain sessions").code_question
    assert rankpolicy.read_intent("where is SingleKey quoting decided").names == ("SingleKey",)
    # a commit subject that introduces something ("New X", "walk: New X") asks for a change, like "Add X"
    assert rankpolicy.read_intent("walk: New WorkerState struct shared by the worker threads").change_request
    assert not rankpolicy.read_intent("newline handling in the parser").change_request
    kinds = {p: rankpolicy.path_kind(p) for p in ("PKG-INFO", "index.d.ts", "stubs/x.pyi", "README.rst",
                                                  "src/a.py", "docs/x.html", "CHANGELOG.md", "tests/test_a.py")}
    assert kinds == {"PKG-INFO": "generated", "index.d.ts": "types", "stubs/x.pyi": "types", "README.rst": "doc",
                     "src/a.py": "code", "docs/x.html": "doc", "CHANGELOG.md": "changelog",
                     "tests/test_a.py": "test"}
    assert rankpolicy.is_import_only("import os\nfrom a import (\n    b,\n    c,\n)\n")
    assert not rankpolicy.is_import_only("import os\n\ndef f():\n    return os.sep\n")


# --- how-questions: what the code does, not what it declares (issue 20, branch search-how3) -------------

CONFIG_RS = '''/// Configuration options for the walk.
pub struct Config {
    /// Whether to follow symbolic links while walking the tree.
    pub follow_links: bool,

    /// Whether symbolic links are followed into other file systems while walking.
    pub same_file_system: bool,

    /// The maximum depth of the walk.
    pub max_depth: Option<usize>,
}
'''

WALK_RS = '''use crate::config::Config;

pub fn build_walker(config: &Config, root: &Path) -> Walker {
    let mut builder = WalkBuilder::new(root);
    if config.follow_links {
        builder.follow_links(true);
    }
    if config.same_file_system {
        builder.same_file_system(true);
    }
    builder.max_depth(config.max_depth);
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_symbolic_links_while_walking() {
        let config = Config { follow_links: true, same_file_system: false, max_depth: None };
        let walker = build_walker(&config, Path::new("."));
        assert!(walker.follows_symbolic_links());
    }
}
'''


@pytest.fixture(scope="module")
def walker_searcher(tmp_path_factory):
    files = {"src/config.rs": CONFIG_RS, "src/walk.rs": WALK_RS}
    return indexed_searcher(tmp_path_factory.mktemp("how") / "repo", files)


def _first(searcher, query):
    hits = searcher.search(query).hits
    return (hits[0].path, hits[0].symbol) if hits else None


def test_how_question_ranks_the_doing_code_above_a_documented_struct(walker_searcher, monkeypatch):
    q = "how does the walk follow symbolic links"
    assert _first(walker_searcher, q) == ("src/walk.rs", "build_walker")
    monkeypatch.setattr(rankpolicy, "DECLARATIVE", 1.0)  # without the rule the struct's doc comments win
    assert _first(walker_searcher, q) != ("src/walk.rs", "build_walker")


def test_logic_lines_count_what_code_does():
    assert rankpolicy.logic_lines(CONFIG_RS, "rust") == 0  # fields and doc comments
    assert rankpolicy.logic_lines(WALK_RS.split("#[cfg")[0], "rust") >= 5
    getter = "\t/**\n\tReturns the delay.\n\n\tIf it fails, return 0 and retry.\n\t*/\n\tget delay() {\n\t\treturn this.d;\n\t}\n"
    assert rankpolicy.logic_lines(getter, "typescript") == 1  # the prose of a block comment is not code
    doc = 'class A:\n    """If the header is set, return it.\n\n    for each key\n    """\n\n    def __init__(self, app):\n        self.app = app\n'
    assert rankpolicy.logic_lines(doc, "python") == 0  # docstring, header, a plain assignment
    calls = "def extract(self, r):\n    req = Request(r)\n    self.jar.extract_cookies(req, r)\n"
    assert rankpolicy.logic_lines(calls, "python") == 2
    literal = 'STYLES = {\n    "bold": Style(bold=True),\n    "dim": Style(dim=True),\n}\n'
    assert rankpolicy.logic_lines(literal, "python") == 0
    assert rankpolicy.logic_lines("if a:\n    return b\n", "markdown") == 0
    assert rankpolicy.logic_weight(0) == rankpolicy.DECLARATIVE and rankpolicy.logic_weight(10) == 1.0


def test_behaviour_questions_and_in_file_test_modules():
    for q in ("how does pagination work", "why is my authorization header dropped on redirect",
              "what happens when a request fails", "How are timeouts implemented"):
        assert rankpolicy.read_intent(q).behaviour, q
    for q in ("where is the retry delay computed", "how do I add a retry hook", "fix retry delay", "parseBody",
              "how does the documentation describe retries"):
        assert not rankpolicy.read_intent(q).behaviour, q
    assert rankpolicy.chunk_kind("src/walk.rs", "rust", "tests.follows, tests.stops") == "test"
    assert rankpolicy.chunk_kind("src/walk.rs", "rust", "build_walker") == "code"
    assert rankpolicy.chunk_kind("src/walk.rs", "rust", "tests") == "code"  # a function named tests
    assert rankpolicy.chunk_kind("README.md", "markdown", "tests.x") == "doc"
    decl = rerank.Features(first=0.8, conf=0.6, logic=0)
    code = rerank.Features(first=0.8, conf=0.6, logic=4)
    how = rankpolicy.read_intent("how does the walker follow links")
    assert rerank.score(decl, how).final < rerank.score(code, how).final
    where = rankpolicy.read_intent("where is the walker configured")
    assert rerank.score(decl, where).final == rerank.score(code, where).final


def test_enum_variants_and_benchmarks_are_not_the_code_asked_about():
    enum = "pub enum WorkerResult {\n    Entry(DirEntry),\n    Error(ignore::Error),\n}\n"
    assert rankpolicy.logic_lines(enum, "rust") == 0
    assert rankpolicy.chunk_kind("benchmarks/benchmarks.py", "python", "StyleSuite") == "test"
    assert rankpolicy.chunk_kind("src/bench/x.rs", "rust") == "test"
    assert rankpolicy.chunk_kind("rich/benchmark_utils.py", "python") == "code"
    assert rankpolicy.read_intent("how fast is the style parser in the benchmarks").tests


def test_how_question_shows_the_first_few_blocks_past_a_confident_one(walker_searcher):
    from hippo.retrieval.search import _Cand

    rows = [walker_searcher.chunks_at("src/config.rs", 2)[0], walker_searcher.chunks_at("src/walk.rs", 3)[0],
            walker_searcher.chunks_at("src/walk.rs", 20)[0]]
    assert len({r["id"] for r in rows}) == 3

    def shown(query):
        cands = [_Cand(row=r, final=f, conf=c) for r, f, c in zip(rows, (0.9, 0.8, 0.7), (0.95, 0.4, 0.35),
                                                                  strict=True)]
        hits, _msg, _ptr = walker_searcher._select(cands, query, 5, 6000)
        return [(h.path, h.start_line) for h in hits]

    # a confident first block sets the bar (0.55 of its confidence) and stands alone ...
    assert shown("walk configuration") == [("src/config.rs", rows[0]["start_line"])]
    # ... but a how-question shows the next blocks above the absolute floor, in rank order
    assert shown("how does the walk follow links") == [(r["path"], r["start_line"]) for r in rows]


def test_in_file_test_module_ranks_as_a_test_only_for_questions_about_code(walker_searcher):
    from hippo.retrieval.search import _Cand

    row = walker_searcher.chunks_at("src/walk.rs", 20)[0]
    row = {**row, "symbol": "tests.follow_symbolic_links_while_walking, tests.stops_at_max_depth"}

    def final(query):
        c = _Cand(row=row, rrf=0.02)
        walker_searcher._score([c], query, [], None, (), rankpolicy.read_intent(query))
        return c.final

    how = final("how does the walk follow symbolic links while walking")
    change = final("Fix: follow symbolic links while walking")
    assert how < change  # a how-question ranks the module down as a test ...
    assert change == final("Fix: follow symbolic links while walking")  # ... a change request keeps it


def test_a_files_opening_documentation_is_an_overview_not_declarations():
    """Under a how-question a chunk with no logic line weighs less, but a module's opening docstring or
    header comment explains how the module works (the README's demo: discovery.py's docstring answers
    "how does hippo decide which files to skip")."""
    from hippo.retrieval.rankpolicy import module_overview

    doc = '#!/usr/bin/env python\n"""Which files get indexed: ignore rules, secrets, vendored trees."""\nMAX = 3\n'
    assert module_overview(doc, 1)
    assert module_overview("/**\n * Retry policy: how delays grow.\n */\nexport const LIMIT = 2;\n", 1)
    assert not module_overview(doc, 40)  # a later chunk of the file
    assert not module_overview("from typing import Dict\n\nDEFAULT_STYLES: Dict[str, str] = {\n", 1)


def test_import_only_stops_at_the_first_other_line_and_still_counts_imports():
    import re

    def counted_first(text: str, language: str = "") -> bool:  # the formula before the early exit
        if language in rankpolicy.DOC_LANGUAGES:
            return False
        lines = [ln for ln in text.split("\n") if ln.strip()]
        if len(lines) < 2:
            return False
        imports = sum(1 for ln in lines if re.match(r"^\s*(import|from|export|use|extern|mod|#\s*include|package)\b", ln)
                      or "require(" in ln)
        return imports >= 2 and all(rankpolicy.IMPORT_LINE.match(ln) for ln in lines)

    samples = ["import os\nfrom a import (\n    b,\n    c,\n)\n", "import os\n\ndef f():\n    return os.sep\n",
               "import os\n", "# comment\nimport os\n# more\n", "const a = require('a');\nconst b = require('b');\n",
               "use std::io;\nuse std::fs;\nfn main() {}\n", "#include <a.h>\n#include <b.h>\n", "package x\n\nimport \"fmt\"\n",
               "export * from './a';\nexport { b } from './b';\n", "def f():\n    import os\n    import sys\n"]
    for text in samples:
        assert rankpolicy.is_import_only(text) == counted_first(text), text
        assert rankpolicy.is_import_only(text, "markdown") == counted_first(text, "markdown")
