"""MCP server end to end through the official SDK client over stdio (`python -m hippo mcp`)."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from helpers_index import sample_repo
from hippo.core.errors import BadQueryError
from hippo.surfaces.mcp_server import (
    INPUT_SCHEMA,
    INSTRUCTIONS,
    STRUCTURE_TOOLS,
    TOOL_NAME,
    parse_arguments,
    parse_structure_arguments,
)
from mcp_helpers import run_session, tool_text

# The tool schema of docs/plugin.md, verbatim in structure: four properties, only query required.
SEED_PROPERTIES = {"query": "string", "keywords": "array", "file_pattern": "string",
                   "requires_exact_match": "boolean"}




@pytest.fixture(scope="module")
def indexed_repo(tmp_path_factory):
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo

    root = sample_repo(tmp_path_factory.mktemp("mcp"))
    index_repo(root, embedder=FakeEmbedder())
    return root


def test_schema_is_the_seed_schema():
    assert INPUT_SCHEMA["required"] == ["query"]
    assert {k: v["type"] for k, v in INPUT_SCHEMA["properties"].items()} == SEED_PROPERTIES
    assert INPUT_SCHEMA["properties"]["keywords"]["items"] == {"type": "string"}
    assert "top_k" not in str(INPUT_SCHEMA) and "embedding" not in str(INPUT_SCHEMA)
    assert len(INSTRUCTIONS) < 2048  # Claude Code truncates server instructions at 2 KB


@pytest.mark.parametrize("args, msg", [
    ({}, "query is required"),
    ({"query": "   "}, "empty"),
    ({"query": 3}, "must be a string"),
    ({"query": "x", "keywords": "AuthService"}, "array of strings"),
    ({"query": "x", "file_pattern": "../secrets/*"}, "outside the repository"),
    ({"query": "x", "file_pattern": "/etc/*"}, "absolute"),
    ({"query": "x", "file_pattern": "src/[a"}, "unbalanced"),
    ({"query": "x", "requires_exact_match": "yes"}, "true or false"),
    ({"query": "x", "top_k": 5}, "Unknown argument"),
])
def test_argument_validation(args, msg):
    with pytest.raises(BadQueryError, match=msg):
        parse_arguments(args)


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_protocol_round_trip(indexed_repo):
    tools, instructions, results = run_session(indexed_repo, [
        {"query": "Token is too old", "keywords": ["TokenExpiredError"]},
        {"query": "retry", "file_pattern": "src/**/*.js"},
        {"query": ""},
        {"query": "x", "file_pattern": "../../etc/passwd"},
    ])
    assert [t.name for t in tools] == [TOOL_NAME, *STRUCTURE_TOOLS]
    schema = tools[0].input_schema
    assert schema["required"] == ["query"]
    assert {k: v["type"] for k, v in schema["properties"].items()} == SEED_PROPERTIES
    assert "search_codebase" in (instructions or "")
    assert "When" in tools[0].description or "Use it when" in tools[0].description

    ok = results[0]
    assert not ok.is_error
    doc = ET.fromstring(tool_text(ok))  # well-formed seed XML
    assert doc.tag == "search_results"
    first = doc.find("result")
    assert first is not None and first.findtext("source_file") == "src/auth/tokens.py"
    raise_line = next(i for i, line in enumerate((indexed_repo / "src/auth/tokens.py").read_text().splitlines(), 1)
                      if "raise TokenExpiredError" in line)
    spans = [tuple(int(x) for x in r.findtext("lines").split("-")) for r in doc.findall("result")
             if r.findtext("source_file") == "src/auth/tokens.py"]
    assert any(a <= raise_line <= b for a, b in spans), spans
    assert doc.find("meta/total_hits") is not None

    globbed = ET.fromstring(tool_text(results[1]))
    files = [r.findtext("source_file") for r in globbed.findall("result")]
    assert files and all(f.startswith("src/") and f.endswith(".js") for f in files)

    assert results[2].is_error and "empty" in tool_text(results[2])
    assert results[3].is_error and "outside the repository" in tool_text(results[3])


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_structural_tools(indexed_repo):
    tools, _, results = run_session(indexed_repo, [
        {"_tool": "find_definition", "name": "AuthService.validate_token"},
        {"_tool": "find_callers", "name": "sign"},
        {"_tool": "find_callees", "name": "test_expired_token_is_rejected"},
        {"_tool": "find_callers", "name": ""},
        {"_tool": "find_definition", "name": "no_such_function_anywhere"},
    ])
    by_name = {t.name: t for t in tools}
    for name in STRUCTURE_TOOLS:
        assert by_name[name].input_schema["required"] == ["name"]
        assert set(by_name[name].input_schema["properties"]) == {"name", "limit"}
    source = (indexed_repo / "src/auth/tokens.py").read_text().splitlines()
    line_of = {text.strip().split("(")[0]: n for n, text in enumerate(source, 1)}

    d = ET.fromstring(tool_text(results[0])).find("definition")
    assert d is not None and d.get("path") == "src/auth/tokens.py" and d.get("symbol") == "AuthService.validate_token"
    assert d.get("lines", "").startswith(f"{line_of['def validate_token']}-")

    callers = ET.fromstring(tool_text(results[1])).findall("caller")
    assert {(c.get("symbol"), c.get("resolved")) for c in callers} == {("AuthService.issue", "exact"),
                                                                        ("AuthService.validate_token", "exact")}

    callees = ET.fromstring(tool_text(results[2])).findall("callee")
    targets = {c.get("name"): ([t.get("symbol") for t in c.findall("target")], c.get("resolved")) for c in callees}
    assert targets["AuthService"] == (["AuthService"], "exact")  # through `from src.auth.tokens import AuthService`
    # `svc = AuthService(...)` makes `svc.validate_token` that class's method
    assert targets["svc.validate_token"] == (["AuthService.validate_token"], "exact")

    assert results[3].is_error and "name is required" in tool_text(results[3])
    assert not results[4].is_error and "No definition named" in tool_text(results[4])


@pytest.mark.parametrize("args, msg", [({}, "name is required"), ({"name": "x", "limit": 0}, "limit"),
                                       ({"name": "x", "query": "y"}, "Unknown argument")])
def test_structural_argument_validation(args, msg):
    with pytest.raises(BadQueryError, match=msg):
        parse_structure_arguments(args)


def test_missing_index_is_a_tool_error(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    _, _, results = run_session(tmp_path, [{"query": "anything"}])
    assert results[0].is_error
    assert "no index" in tool_text(results[0]).lower() and "/rag-index" in tool_text(results[0])


def test_warm_searcher_is_reused_and_refreshed(indexed_repo):
    from hippo.surfaces.mcp_server import SearchService

    made = []

    class Recorder:
        def __init__(self, root):
            made.append(self)
            self.refreshed = 0
            self.calls = []

        def refresh(self):
            self.refreshed += 1

        def search(self, query, **kw):
            from hippo.retrieval.results import SearchResponse

            self.calls.append((query, kw))
            return SearchResponse(query=query, meta={"total_hits": 0, "returned_hits": 0})

    svc = SearchService(indexed_repo, searcher_factory=Recorder)
    svc.search_xml({"query": "a", "keywords": ["K", "K", " "], "requires_exact_match": True})
    svc.search_xml({"query": "b", "file_pattern": "./src/*.py"})
    assert len(made) == 1 and made[0].refreshed == 0
    assert made[0].calls[0] == ("a", {"keywords": ("K",), "globs": (), "exact": True})
    assert made[0].calls[1][1]["globs"] == ("src/*.py",)
    state = indexed_repo / ".hippo" / "state.json"
    st = state.stat()
    os.utime(state, (st.st_atime, st.st_mtime + 5))
    svc.search_xml({"query": "c"})
    assert len(made) == 1 and made[0].refreshed == 1
