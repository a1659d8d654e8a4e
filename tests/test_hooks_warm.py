"""The warm failure-hook path: the hook process hands the whole payload to the repo's server over its
socket and imports almost nothing; the server gates, retrieves, dedupes and renders. Plus the
server-side caches that keep a warm query fast (git dates per (path, blob))."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from hippo.core.indexdir import IndexDir
from hippo.core.runtime import find_repo_root
from hippo.surfaces.service import client
from hook_helpers import LOADED_BOX_S, error_text, warm_payload

ERRORS = Path(__file__).parent / "fixtures" / "errors"


def test_repo_root_matches_common(tmp_path):
    repo = tmp_path / "a"
    (repo / "x" / "y").mkdir(parents=True)
    (repo / ".git").mkdir()
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git is a file
    outside = tmp_path / "none"
    outside.mkdir()
    for cwd in (repo / "x" / "y", repo, wt, outside):
        expect = find_repo_root(str(cwd))
        got = client.repo_root(str(cwd))
        assert (Path(got) if got else None) == expect
    assert client.repo_root("") is None and client.repo_root(None) is None


def test_index_dir_of_a_str_root_honours_env_not_repo_config(tmp_path, monkeypatch):
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    root = str(tmp_path)
    assert IndexDir.of(root).path == os.path.join(root, ".hippo")
    (tmp_path / "hippo.toml").write_text('[hippo]\nindex_dir = "idx-here"\n')
    assert IndexDir.of(root).path == os.path.join(root, ".hippo")  # a repo file cannot move the index
    (tmp_path / "hippo.toml").unlink()
    monkeypatch.setenv("HIPPO_INDEX_DIR", str(tmp_path / "elsewhere"))
    assert IndexDir.of(root).path == str(tmp_path / "elsewhere")


def test_socket_path_long_dirs_go_to_the_private_socket_dir(tmp_path):
    short = tmp_path / "i"
    assert client.socket_path(short) == short / "server.sock"
    deep = tmp_path / ("d" * 120)
    p = client.socket_path(deep)
    assert p.name.endswith(".sock") and len(str(p)) < 100 and client.socket_path(deep) == p
    assert str(p.parent) == client.socket_dir()


def test_warm_hook_answers_whole_hook_and_dedupes(warm_server):
    root, _ = warm_server
    payload = warm_payload(root, error_text(root, "py_traceback.txt"))
    answered, out = client.warm_hook("tool-failure", payload, timeout=LOADED_BOX_S)
    assert answered and out is not None
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert ctx.startswith("hippo: live code this failure points to") and "<source_file>py/shop/" in ctx
    # the same session gets nothing new for the same failure: the server recorded what it injected
    again = client.warm_hook("tool-failure", payload, timeout=LOADED_BOX_S)
    assert again[0] and (again[1] is None or again[1]["hookSpecificOutput"]["additionalContext"] != ctx)


def test_warm_hook_gated_out_and_foreign_payloads(warm_server, tmp_path):
    root, _ = warm_server
    gated = client.warm_hook("tool-failure", warm_payload(root, "Exit code 127\nbash: line 1: pnpmx: command not found"),
                             timeout=LOADED_BOX_S)
    assert gated == (True, None)  # the server answered: nothing to inject
    # a payload whose cwd is another repo is refused, so the caller falls back to its own path
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / ".hippo").symlink_to(root / ".hippo")
    assert client.warm_hook("tool-failure", warm_payload(other, "Exit code 1\nValueError: x", cwd=other)) == (False, None)
    assert client.warm_hook("tool-failure", {"cwd": str(tmp_path / "nowhere"), "error": "x"}) == (False, None)


# What the warm failure hook process may import beyond a bare interpreter: an allowlist, so anything new on
# the hot path is a decision (click's tests/test_imports.py keeps the same kind of list).
WARM_HOOK_ALLOWED = {
    # hippo: the hook entry, the one client, the index dir's names
    "hippo", "hippo.__main__", "hippo.core", "hippo.core.indexdir", "hippo.surfaces", "hippo.surfaces.hooks",
    "hippo.surfaces.hooks.main", "hippo.surfaces.service", "hippo.surfaces.service.client",
    # stdlib: `-m` (runpy), json, a unix socket, and what those pull in
    "__future__", "runpy", "importlib", "importlib._abc", "importlib.machinery", "importlib.util", "warnings",
    "json", "json.decoder", "json.encoder", "json.scanner", "_json", "re", "re._casefix", "re._compiler",
    "re._constants", "re._parser", "_sre", "socket", "_socket", "select", "selectors", "array", "math", "errno",
    "enum", "types", "collections", "collections.abc", "_collections", "functools", "_functools", "operator",
    "_operator", "itertools", "keyword", "reprlib", "contextlib", "copyreg",
}


def _imported(env, args, stdin=b""):
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], input=stdin, capture_output=True, env=env,
                          timeout=60)
    names = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
    return proc, names - {"package"}


def test_hook_process_uses_server_and_imports_only_the_allowlist(warm_server):
    """`python -m hippo hook tool-failure` with a server up: same answer, and nothing imported beyond a bare
    interpreter that the allowlist does not name (no signals, config, pathlib, subprocess, lancedb...)."""
    root, _ = warm_server
    payload = warm_payload(root, error_text(root, "py_traceback.txt"), session="warm-proc")
    env = {**os.environ, "HIPPO_NO_BACKGROUND_INDEX": "1"}
    env.pop("HIPPO_INDEX_DIR", None)
    proc, imported = _imported(env, ["-m", "hippo", "hook", "tool-failure"], json.dumps(payload).encode())
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert "<source_file>py/shop/" in out["hookSpecificOutput"]["additionalContext"]
    _, bare = _imported(env, ["-c", "pass"])
    assert sorted(imported - bare - WARM_HOOK_ALLOWED) == []
    assert "pathlib" not in imported and "subprocess" not in imported


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """The sample repo indexed with the fake embedder (keyword paths never touch the model)."""
    pytest.importorskip("lancedb")
    from helpers_index import sample_repo
    from hippo.index.indexer import index_repo

    mp = pytest.MonkeyPatch()
    mp.setenv("HIPPO_MODEL", FAKE)
    root = sample_repo(tmp_path_factory.mktemp("warm-index"))
    index_repo(root)
    yield root
    mp.undo()


def test_annotate_caches_git_dates_per_path_and_blob(indexed, monkeypatch):
    from hippo.core import gitutil
    from hippo.retrieval.search import Searcher

    calls: list[list[str]] = []
    real = gitutil.last_commit_dates

    def counting(r, paths):
        paths = list(paths)
        calls.append(paths)
        return real(r, paths)

    monkeypatch.setattr(gitutil, "last_commit_dates", counting)
    s = Searcher(indexed)
    first = s.search("verify password hash", k=4, mode="keyword")
    assert first.hits and calls and all(h.last_modified for h in first.hits)
    n = len(calls)
    second = s.search("verify password hash", k=4, mode="keyword")
    assert len(calls) == n  # every (path, blob) already known: no git at all
    assert [h.last_modified for h in second.hits] == [h.last_modified for h in first.hits]
    # a changed blob for one file is looked up again
    path = first.hits[0].path
    s.state.files[path].blob = "0" * 40
    s.search("verify password hash", k=4, mode="keyword")
    assert calls[n:] == [[path]]


def test_keyword_scan_is_cached_until_refresh(indexed):
    from hippo.retrieval.search import Searcher

    s = Searcher(indexed)
    scans = []
    real_chunks = s.store.chunks

    class TextScans:  # a query whose filter tests the text column (a scan of every chunk's text)
        def __init__(self, query):
            self.query = query

        def where(self, clause, *a, **kw):
            if "strpos(" in clause:
                scans.append(clause)
            return TextScans(self.query.where(clause, *a, **kw))

        def __getattr__(self, name):
            attr = getattr(self.query, name)
            return (lambda *a, **kw: TextScans(attr(*a, **kw))) if callable(attr) and name in ("select", "limit") \
                else attr

    class Counting:
        def __init__(self, tbl):
            self.tbl = tbl

        def search(self, *a, **kw):
            return TextScans(self.tbl.search(*a, **kw))

        def __getattr__(self, name):
            return getattr(self.tbl, name)

    s.store.chunks = lambda create=False: Counting(real_chunks(create))
    args = dict(keywords=["verify_password"], exact=True, k=4, mode="keyword")
    first = s.search("verify_password", **args)
    scanned = len(scans)
    assert first.hits and scanned >= 1
    first.hits[0].snippet = "mutated"  # what callers do with hits must not reach the cache
    again = s.search("verify_password", **args)
    assert len(scans) == scanned and [h.id for h in again.hits] == [h.id for h in first.hits]  # no new scan
    assert again.hits[0].snippet != "mutated"
    s.search("verify_password", keywords=["hash_password"], exact=True, k=4, mode="keyword")
    assert len(scans) == 2  # other keywords: a new scan
    s.refresh()
    s.search("verify_password", **args)
    assert len(scans) == 3  # a refreshed table version scans again


def _slow_server(monkeypatch, reply: dict | None, after_s: float):
    """`client.ask` as a server that took the hook request and answers on its socket after `after_s` (never,
    for None): the held end of a socket pair."""
    import socket
    import threading

    ours, theirs = socket.socketpair()

    def fake_ask(index_dir, payload, timeout=client.WARM_TIMEOUT_S, wait_s=0.0, held=None):
        assert held is not None
        held.append(ours)
        if reply is not None:
            threading.Timer(after_s, lambda: (theirs.sendall(json.dumps(reply).encode()), theirs.close())).start()
        return None

    monkeypatch.setattr(client, "ask", fake_ask)
    return theirs


def test_a_server_slower_than_the_hook_timeout_still_answers_while_the_cold_run_goes(tmp_path, monkeypatch):
    """At 100k files a warm server's first failure took 3-7 s: the hook gave up after 3 s and its own cold run
    could not finish in its budget, so nothing was injected. The server is now listened to beside the cold
    run, and the first answer with something in it wins."""
    root = tmp_path / "r"
    (root / ".git").mkdir(parents=True)
    payload = {"tool_name": "Bash", "error": "Exit code 1\nValueError: x", "cwd": str(root)}
    out = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "from the server"}}
    _slow_server(monkeypatch, {"ok": True, "result": {"output": out}}, after_s=0.6)
    monkeypatch.setattr(client, "_cold", lambda *a: None)  # the cold run finds nothing (over its budget)
    assert client.hook("tool-failure", payload, timeout=0.1) == out
    cold = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "cold"}}
    silent = _slow_server(monkeypatch, None, after_s=0)  # took the request, never answers
    monkeypatch.setattr(client, "_cold", lambda *a: cold)
    assert client.hook("tool-failure", payload, timeout=0.1) == cold
    silent.close()
