"""Search's ranking rules on a small repo: code over prose for code questions, implementation over type
declarations, a symbol's definition over its usages, import-only chunks below code, no text twice."""
from __future__ import annotations

import pytest

from fake_embedder import FakeEmbedder
from hippo.index.indexer import index_repo
from hippo.retrieval import rankpolicy, rerank
from hippo.retrieval.search import Searcher
from repo_helpers import git

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


def build_repo(root):
    files = {
        "README.md": README,
        "PKG-INFO": "Metadata-Version: 2.1\nName: fetchy\nVersion: 1.0\n\n" + README,
        "fetchy/cli.py": CLI,
        "fetchy/sessions.py": SESSIONS,
        "fetchy/status.py": STATUS,
        "lib/time.js": TIME_JS,
        "pino.d.ts": TYPES,
        **{f"fetchy/step{n}.py": USAGE.format(n=n) for n in range(5)},
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial")


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    root = tmp_path_factory.mktemp("rank") / "repo"
    build_repo(root)
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    return Searcher(root, embedder=emb)


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
    kinds = {p: rankpolicy.path_kind(p) for p in ("PKG-INFO", "index.d.ts", "stubs/x.pyi", "README.rst",
                                                  "src/a.py", "docs/x.html", "CHANGELOG.md", "tests/test_a.py")}
    assert kinds == {"PKG-INFO": "generated", "index.d.ts": "types", "stubs/x.pyi": "types", "README.rst": "doc",
                     "src/a.py": "code", "docs/x.html": "doc", "CHANGELOG.md": "changelog",
                     "tests/test_a.py": "test"}
    assert rankpolicy.is_import_only("import os\nfrom a import (\n    b,\n    c,\n)\n")
    assert not rankpolicy.is_import_only("import os\n\ndef f():\n    return os.sep\n")
