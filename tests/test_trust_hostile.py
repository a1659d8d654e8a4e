"""Hostile and bad input: hook stdin, repository files, queries and options.

Hooks: whatever arrives on stdin, exit 0, nothing on stdout, one line in hippo.log.
Files: odd encodings, NULs, huge and minified files, symlink loops and escapes, odd paths, files that
vanish or change mid-run -> the index completes and equals a fresh build, nothing from outside the repo.
Queries: empty, 100 KB, metacharacters, paths outside the repo, SQL-ish text -> answers or one clean
usage error, never a traceback, never a match outside the repo.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
from trustkit import (  # noqa: E402
    check_hook_output,
    failure_payload,
    fresh_snapshot,
    git,
    hippo,
    hippo_in_process,
    snapshot,
)

from fake_embedder import FakeEmbedder  # noqa: E402
from hippo.core.errors import BadQueryError  # noqa: E402
from hippo.index.indexer import index_repo  # noqa: E402
from hippo.retrieval.search import Searcher  # noqa: E402
from hippo.surfaces.mcp_server import SearchService, call_tool  # noqa: E402

EVENTS = ["session-start", "tool-failure", "session-end", "prompt-expansion", "no-such-event"]
BAD_STDIN = {
    "empty": b"",
    "whitespace": b"  \n\t ",
    "not-json": b"{'cwd': '.'",
    "array": b"[1, 2, 3]",
    "scalar": b"42",
    "null": b"null",
    "wrong-types": b'{"cwd": 5, "error": 7, "tool_input": "x", "session_id": [], "source": {}}',
    "nested-deep": b"[" * 100_000 + b"]" * 100_000,
    "non-utf8": b'{"cwd": "\xff\xfe", "error": "\xc3\x28"}',
    "nul-bytes": b'{"cwd": "repo\\u0000x", "error": "E\\u0000"}',
    "huge": b'{"error": "' + b"A" * (30 * 1024 * 1024) + b'"}',
}


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize("name", list(BAD_STDIN))
def test_hook_stdin_garbage_exit_0_silent_and_logged(tmp_path, event, name):
    """In this process: test_hooks.py sends garbage through the real hook process."""
    home = tmp_path / "home"
    proc = hippo_in_process(["hook", event], tmp_path, stdin=BAD_STDIN[name], extra_env={"HIPPO_HOME": str(home)})
    assert proc.returncode == 0
    assert proc.stdout == b""
    log = (home / "hippo.log").read_text(encoding="utf-8", errors="replace") if (home / "hippo.log").exists() else ""
    assert f"hook {event}" in log, f"no log line for {name!r} on {event}: {log!r}"


# --- hostile files --------------------------------------------------------------------------------
OUTSIDE_MARKER = "OUTSIDE_REPO_MARKER_7f3a"


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    outside = base / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text(f"def leaked():\n    return '{OUTSIDE_MARKER}'\n")
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files: dict[str, bytes] = {
        "latin1.py": "# café résumé\nNAME = 'Müller'\ndef greet_latin():\n    return NAME\n".encode("latin-1"),
        "mixed.py": "# utf8: café\n".encode() + "# latin1: caf\xe9\n".encode("latin-1") + b"def mixed_enc():\n    return 1\n",
        "nul_late.py": b"def before_nul():\n    return 1\n" + b"#" * 9000 + b"\x00\x00\ndef after_nul():\n    return 2\n",
        "huge_lines.py": b"".join(b"v%d = %d\n" % (i, i) for i in range(100_000)),
        "min.js": b"var a=" + b"[" + b",".join(b"%d" % i for i in range(60_000)) + b"];function minified_fn(){return a}\n",
        "dir with spaces/file name.py": b"def spaced_path_fn():\n    return 'spaces'\n",
        "unicodé/日本.py": b"def unicode_path_fn():\n    return 'nihon'\n",
        "new\nline.py": b"def newline_path_fn():\n    return 'nl'\n",
        "it's \"quoted\".py": b"def quoted_path_fn():\n    return 'q'\n",
        "CaseName.py": b"def case_rename_fn():\n    return 'case'\n",
        "bom.py": b"\xef\xbb\xbfdef bom_fn():\n    return 'bom'\n",
        "utf16.txt": "utf sixteen text here\n".encode("utf-16"),
        "crlf.py": b"def crlf_fn():\r\n    return 'crlf'\r\n",
    }
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    os.symlink(outside / "leak.py", root / "link_out.py")
    os.symlink(outside, root / "dir_out")
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    os.symlink(".", root / "self_loop")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile")
    proc = hippo_in_process(["index"], root)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    return root


def _all_rows(root: Path) -> list[dict]:
    from hippo.index.state import load_state
    from hippo.index.store import Store

    store = Store(root / ".hippo", load_state(root / ".hippo").dim)
    try:
        return store.rows(columns=["path", "text", "start_line", "end_line"])
    finally:
        store.close()


def test_hostile_files_index_equals_fresh_and_nothing_from_outside(hostile_repo):
    root = hostile_repo
    assert snapshot(root / ".hippo") == fresh_snapshot(root)
    rows = _all_rows(root)
    paths = {r["path"] for r in rows}
    assert not any(OUTSIDE_MARKER in r["text"] for r in rows)
    assert not any(p.startswith(("link_out", "dir_out", "loop_", "self_loop")) for p in paths)
    for rel in ("dir with spaces/file name.py", "unicodé/日本.py", "new\nline.py", "it's \"quoted\".py",
                "latin1.py", "mixed.py", "CaseName.py", "bom.py", "crlf.py"):
        assert rel in paths, (rel, sorted(paths))
    assert max(len(r["text"]) for r in rows) < 20_000  # no file becomes one giant chunk
    text = "\n".join(r["text"] for r in rows)
    # latin-1 bytes are decoded as UTF-8 with U+FFFD replacement: the file is indexed, the accents are lost
    assert "greet_latin" in text and "caf\ufffd" in text and "café" in text
    assert "\x00" not in text


def test_line_numbers_exact_for_odd_paths(hostile_repo):
    s = Searcher(hostile_repo, embedder=FakeEmbedder())
    for rel, kw in (("new\nline.py", "newline_path_fn"), ("unicodé/日本.py", "unicode_path_fn"),
                    ("it's \"quoted\".py", "quoted_path_fn")):
        resp = s.search(kw, keywords=[kw], exact=True)
        hit = next(h for h in resp.hits if h.path == rel)
        lines = (hostile_repo / rel).read_text().splitlines()
        assert hit.snippet.split("\n") == lines[hit.start_line - 1: hit.end_line]


def test_case_only_rename_matches_fresh(hostile_repo, tmp_path):
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(hostile_repo, root, symlinks=True)
    git(root, "mv", "CaseName.py", "casename.py")
    git(root, "commit", "-q", "-m", "case")
    assert hippo_in_process(["index", "--quiet"], root).returncode == 0
    assert snapshot(root / ".hippo") == fresh_snapshot(root)
    paths = {r["path"] for r in _all_rows(root)}
    assert "casename.py" in paths and "CaseName.py" not in paths


def test_files_vanish_and_change_during_indexing(tmp_path, monkeypatch):
    import hippo.index.discovery as discovery
    from hippo.index import indexer

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(30):
        (root / f"m{i}.py").write_text(f"def fn_{i}():\n    return {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "i")
    real_discover, real_chunks = discovery.discover, indexer.chunks_for_file
    calls = {"n": 0}

    def discover(*a, **kw):
        out = real_discover(*a, **kw)
        (root / "m1.py").unlink()  # listed, then gone before it is read
        return out

    def chunks(rel, data, *args, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            (root / "m20.py").write_text("def changed_mid_run():\n    return 'x'\n")
            (root / "m21.py").unlink()
        return real_chunks(rel, data, *args, **kw)

    monkeypatch.setattr(discovery, "discover", discover)
    monkeypatch.setattr(indexer, "chunks_for_file", chunks)
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    monkeypatch.setattr(discovery, "discover", real_discover)
    monkeypatch.setattr(indexer, "chunks_for_file", real_chunks)
    index_repo(root, embedder=emb)  # the next run settles on what is on disk now
    assert snapshot(root / ".hippo") == fresh_snapshot(root)


# --- queries and options --------------------------------------------------------------------------
HOSTILE_QUERIES = [".*", "(?P<x>", "[a-", "\\", "%_%", "*?[]{}!", "' OR 1=1 --", "path = 'x' OR true",
                   "\"; DROP TABLE chunks; --", "\x00\x01", "😀" * 50, "a" * 100_000, "<snippet>]]></result>"]


@pytest.mark.parametrize("q", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_queries_and_keywords(hostile_repo, q):
    s = Searcher(hostile_repo, embedder=FakeEmbedder())
    before = s.store.count()
    t0 = time.monotonic()
    resp = s.search(q, keywords=[q[:200]])
    assert time.monotonic() - t0 < 30
    resp2 = s.search("spaced path", keywords=[q[:200]], exact=True)
    assert all(q[:200] in h.snippet for h in resp2.hits)
    assert s.store.count() == before
    for h in resp.hits:
        assert (hostile_repo / h.path).resolve().is_relative_to(hostile_repo.resolve())


@pytest.mark.parametrize("glob", ["../*", "../../etc/passwd", "/etc/*", "/**", "~/x", "src/../../x",
                                  "..\\..\\x", "C:/Windows/*", "a/\x00b"])
def test_globs_outside_the_repo_refused_everywhere(hostile_repo, glob):
    with pytest.raises(BadQueryError):
        Searcher(hostile_repo, embedder=FakeEmbedder()).search("x", globs=[glob])
    if "\x00" not in glob:  # a NUL cannot be passed in argv at all
        proc = hippo_in_process(["search", "x", "--glob", glob, "--format", "json"], hostile_repo)
        assert proc.returncode == 2 and b"Traceback" not in proc.stderr and proc.stdout == b""
    text, is_error = call_tool(SearchService(hostile_repo, lambda r: Searcher(r, embedder=FakeEmbedder())),
                               "search_codebase", {"query": "x", "file_pattern": glob})
    assert is_error and "<result" not in text


@pytest.mark.parametrize("glob", ["it's*", "*'*", "*\"*", "[!a]*.py", "**/***", "{a,b}", "*%*", "it''s*",
                                  "*' OR path LIKE '%"])
def test_sqlish_and_metachar_globs_stay_inside_and_exact(hostile_repo, glob):
    import pathspec

    s = Searcher(hostile_repo, embedder=FakeEmbedder())
    try:
        resp = s.search("fn", globs=[glob], k=50)
    except BadQueryError:
        return
    spec = pathspec.PathSpec.from_lines("gitignore", [glob])
    assert all(spec.match_file(h.path) for h in resp.hits), [h.path for h in resp.hits]
    if glob == "it's*":
        assert [h.path for h in resp.hits] == ["it's \"quoted\".py"]


def test_mcp_bad_arguments_are_tool_errors(hostile_repo):
    svc = SearchService(hostile_repo, lambda r: Searcher(r, embedder=FakeEmbedder()))
    for args in ({}, {"query": ""}, {"query": 5}, {"query": "x", "keywords": "notalist"},
                 {"query": "x", "keywords": [1]}, {"query": "x", "requires_exact_match": "yes"},
                 {"query": "x", "file_pattern": 7}, {"query": "x", "evil": 1}, None):
        text, is_error = call_tool(svc, "search_codebase", args)
        assert is_error and "Traceback" not in text, (args, text)
    text, is_error = call_tool(svc, "search_codebase", {"query": "a" * 100_000, "keywords": ["' OR 1=1 --"]})
    assert not is_error and text.startswith("<search_results>")


def test_failure_hook_with_hostile_error_text(hostile_repo):
    for err in ("Exit code 1\n" + "\x00\xff" * 10, "Exit code 1\n" + "x" * 3_000_000,
                f"Exit code 1\n  File \"{hostile_repo}/../../etc/passwd\", line 1\nValueError: x",
                "Exit code 1\n  File \"/etc/shadow\", line 9, in f\nKeyError: ' OR 1=1 --"):
        proc = hippo_in_process(["hook", "tool-failure"], hostile_repo, stdin=failure_payload(hostile_repo, err))
        out = check_hook_output(proc)
        if out:
            assert "/etc/" not in json.dumps(out)


def test_session_start_never_reads_spec_files_outside_the_repo(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text(f"# Setup\n\n## Install\n\nThe private marker {OUTSIDE_MARKER} must stay outside.\n" * 3)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# Demo\n\n## Testing\n\nRun `pytest -q` before pushing any change.\n")
    (root / "docs").mkdir()
    os.symlink(outside, root / "CONTRIBUTING.md")
    os.symlink(outside, root / "docs" / "setup.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")
    data = check_hook_output(hippo(["hook", "session-start"], root, stdin=json.dumps(
        {"hook_event_name": "SessionStart", "source": "startup", "session_id": "s", "cwd": str(root)}).encode()))
    assert data and "pytest -q" in json.dumps(data)
    assert OUTSIDE_MARKER not in json.dumps(data)
