"""/rag UserPromptExpansion handler: command routing, hostile arguments, budget, real hook process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from helpers_index import sample_repo
from hippo.retrieval.results import Hit, SearchResponse
from hippo.surfaces.hooks.prompt_expansion import HARD_CAP, command_kind, handle, rag_context
from repo_helpers import hippo_in_process


class Recorder:
    """Stands in for Searcher: records what the handler asked for, returns canned hits."""

    def __init__(self, hits=None):
        self.calls = []
        self.hits = hits or []

    def search(self, query, **kw):
        self.calls.append((query, kw))
        return SearchResponse(query=query, hits=list(self.hits),
                              meta={"total_hits": len(self.hits), "returned_hits": len(self.hits)})


def _hit(i: int, size: int = 100) -> Hit:
    return Hit(id=f"c{i}", path=f"src/m{i}.py", start_line=1, end_line=5, language="python",
               score=0.9 - i / 100, snippet="x" * size)


@pytest.mark.parametrize("name, kind", [
    ("rag", "rag"), ("hippo:rag", "rag"), ("/rag", "rag"), ("rag-status", "status"),
    ("hippo:rag-index", "index"), ("other:rag", None), ("ragged", None), ("", None),
])
def test_command_kind(name, kind):
    assert command_kind(name) == kind


def test_not_our_command_says_nothing(tmp_path):
    assert handle({"command_name": "commit", "command_args": "x", "cwd": str(tmp_path)}) is None


def test_options_reach_the_searcher(tmp_path):
    rec = Recorder([_hit(1)])
    ctx = rag_context(tmp_path, "token expiry --glob 'src/**/*.py' --exact --k 4 \"TokenExpiredError\"", searcher=rec)
    query, kw = rec.calls[0]
    assert query == "token expiry TokenExpiredError"
    assert kw["globs"] == ["src/**/*.py"] and kw["exact"] is True and kw["k"] == 4
    assert kw["keywords"] == ["TokenExpiredError"]
    assert "<search_results>" in ctx and "[[path:line]]" in ctx


def test_bad_arguments_explain_usage(tmp_path):
    rec = Recorder()
    ctx = rag_context(tmp_path, "x --glob ../../etc/*", searcher=rec)
    assert rec.calls == []
    assert "outside the repository" in ctx and "Usage: /rag QUERY" in ctx


def test_output_fits_the_hook_cap(tmp_path):
    rec = Recorder([_hit(i, size=1500) for i in range(20)])
    ctx = rag_context(tmp_path, "everything", searcher=rec)
    assert len(ctx) <= HARD_CAP
    doc = ET.fromstring(ctx[ctx.index("<search_results>"): ctx.index("</search_results>") + 17])
    assert 0 < len(doc.findall("result")) < 20


@pytest.fixture(scope="module")
def indexed_repo(tmp_path_factory):
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo

    root = sample_repo(tmp_path_factory.mktemp("rag"))
    index_repo(root, embedder=FakeEmbedder())
    return root


HOOK_ENV = {"HIPPO_MODEL": FAKE, "HIPPO_SERVER_IDLE": "5"}


def _hook(payload: dict | bytes, cwd: Path) -> subprocess.CompletedProcess:
    """The hook's answer, computed in this process (what it answers is the point, not the process)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return hippo_in_process(["hook", "prompt-expansion"], cwd, env=HOOK_ENV, stdin=data)


def _hook_process(data: bytes, cwd: Path) -> subprocess.CompletedProcess:
    """The real `python -m hippo hook prompt-expansion` process."""
    return subprocess.run([sys.executable, "-m", "hippo", "hook", "prompt-expansion"], input=data, cwd=cwd,
                          capture_output=True, env={**os.environ, **HOOK_ENV}, timeout=120)


HOSTILE = [
    "$(touch {p}/pwned1) where is the token checked",
    "`touch {p}/pwned2` token",
    "token'; touch {p}/pwned3; echo '",
    "token \"$(touch {p}/pwned4)\" \\\n; touch {p}/pwned5",
    "token\n$(touch {p}/pwned6)\n`touch {p}/pwned7`",
]


@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_arguments_run_no_shell(indexed_repo, tmp_path, template):
    args = template.format(p=tmp_path)
    proc = _hook({"hook_event_name": "UserPromptExpansion", "expansion_type": "slash_command",
                  "command_name": "hippo:rag", "command_args": args, "command_source": "plugin",
                  "prompt": "/hippo:rag " + args, "session_id": "s1", "cwd": str(indexed_repo)}, indexed_repo)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.glob("pwned*")) == []
    out = json.loads(proc.stdout)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptExpansion"
    assert "<search_results>" in ctx and f"touch {tmp_path}/pwned" in ctx  # echoed as inert text


def test_rag_hook_finds_the_raise_site(indexed_repo):
    proc = _hook({"hook_event_name": "UserPromptExpansion", "command_name": "rag",
                  "command_args": "Token is too old \"TokenExpiredError\"",
                  "cwd": str(indexed_repo / "src")}, indexed_repo)
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    doc = ET.fromstring(ctx[ctx.index("<search_results>"): ctx.index("</search_results>") + 17])
    assert doc.find("result/source_file").text == "src/auth/tokens.py"
    assert len(ctx) <= HARD_CAP


def test_status_command(indexed_repo):
    proc = _hook({"hook_event_name": "UserPromptExpansion", "command_name": "hippo:rag-status",
                  "command_args": "$(touch /nonexistent/x)", "cwd": str(indexed_repo)}, indexed_repo)
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith("hippo index status:")
    assert "chunks" in ctx


def test_missing_index_says_run_rag_index(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = _hook({"command_name": "rag", "command_args": "anything", "cwd": str(tmp_path)}, tmp_path)
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "/rag-index" in ctx and "do not answer from memory" in ctx


@pytest.mark.parametrize("garbage", [b"", b"not json", b"[1,2]", b"\xff\xfe", b'{"command_name": 5}'])
def test_garbage_stdin_is_silent(tmp_path, garbage):
    proc = _hook_process(garbage, tmp_path)
    assert proc.returncode == 0 and proc.stdout == b""
