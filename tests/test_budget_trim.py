"""Trimming a result to the character budget keeps the lines that matched the query, marks what it
elides, and keeps line numbers and staleness checks right."""
from __future__ import annotations

from pathlib import Path

from fake_embedder import FakeEmbedder
from hippo.index.indexer import index_repo
from hippo.retrieval.results import Hit
from hippo.retrieval.search import TRUNCATION_MARK, Searcher, _apply_budget
from repo_helpers import git

FILLER = [f"func (c *Context) Get{i}() int {{ return c.v{i} }}" for i in range(40)]
CLIENT_IP = [
    "// ClientIP implements one best effort algorithm to return the real client IP.",
    "func (c *Context) ClientIP() string {",
    "\tif ip := c.requestHeader(\"X-Real-Ip\"); ip != \"\" {",
    "\t\treturn ip",
    "\t}",
    "\tremoteIP := net.ParseIP(c.RemoteIP())",
    "\treturn remoteIP.String()",
    "}",
]


def block(lines: list[str], start: int = 10) -> Hit:
    return Hit(id="x", path="context.go", start_line=start, end_line=start + len(lines) - 1, language="go",
               score=0.9, snippet="\n".join(lines))


def test_the_matching_code_survives_trimming() -> None:
    lines = FILLER[:25] + CLIENT_IP + FILLER[25:]
    [hit] = _apply_budget([block(lines)], 800, ["clientip", "client", "ip"])
    assert len(hit.snippet) <= 800 and hit.truncated
    shown = hit.snippet.split("\n")
    for needed in CLIENT_IP[1:7]:  # the signature and the body, not just the doc comment
        assert needed in shown, hit.snippet
    assert FILLER[0] not in shown  # the unrelated head was what got dropped
    # Line numbers: the snippet starts at start_line, and every elided run says how many lines it hides.
    first = lines.index(shown[0])
    assert hit.start_line == 10 + first
    n = hit.start_line
    for text in shown:
        if text.startswith("// ... (") and text.endswith(" lines)"):
            n += int(text[len("// ... ("):-len(" lines)")])
        elif text == TRUNCATION_MARK:
            break
        else:
            assert lines[n - 10] == text
            n += 1
    assert hit.end_line == n - 1


def test_elided_runs_are_marked_with_their_length() -> None:
    lines = CLIENT_IP[:2] + FILLER + CLIENT_IP[2:]  # two matching islands far apart
    [hit] = _apply_budget([block(lines, start=1)], 700, ["clientip", "client", "ip", "remote"])
    markers = [s for s in hit.snippet.split("\n") if s.startswith("// ... (") and s.endswith("lines)")]
    assert markers, hit.snippet
    assert "func (c *Context) ClientIP() string {" in hit.snippet and "remoteIP.String()" in hit.snippet


def test_without_a_matching_line_the_head_is_kept_as_before() -> None:
    [hit] = _apply_budget([block(FILLER)], 600, ["nothing", "matches"])
    shown = hit.snippet.split("\n")
    assert shown[0] == FILLER[0] and shown[-1] == TRUNCATION_MARK
    assert hit.end_line == 10 + len(shown) - 2


def test_a_small_block_is_untouched() -> None:
    [hit] = _apply_budget([block(CLIENT_IP)], 8000, ["clientip"])
    assert hit.snippet == "\n".join(CLIENT_IP) and not hit.truncated


def test_search_keeps_the_matching_function_of_a_big_merged_block(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    # The chunker groups small methods: ClientIP lands at the end of a chunk that opens with a dozen
    # unrelated one-liners (the chunk's symbol list still names Context.ClientIP).
    body = ["package web", ""] + [x for f in FILLER for x in (f, "")] + CLIENT_IP
    (root / "context.go").write_text("\n".join(body) + "\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "go")
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    resp = Searcher(root, embedder=emb).search("client ip", keywords=["ClientIP"], budget_chars=450)
    top = resp.hits[0]
    assert top.path == "context.go" and top.truncated and "Context.ClientIP" in top.symbol
    assert "func (c *Context) ClientIP() string {" in top.snippet and "remoteIP.String()" in top.snippet, top.snippet
    assert not top.stale  # the trimmed snippet still matches the live file at its line numbers
    (root / "context.go").write_text("\n".join(body).replace("X-Real-Ip", "X-Forwarded-For") + "\n")
    again = Searcher(root, embedder=emb).search("client ip", keywords=["ClientIP"], budget_chars=450).hits
    # a changed line among the shown ones is caught: that hit is dropped, its old text never shown
    assert not any("X-Real-Ip" in h.snippet for h in again)
