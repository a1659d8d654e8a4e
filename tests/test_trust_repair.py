"""Self-repair (issue 12, item 8): damaged table files are detected and rebuilt once, on every path.

Damage is done in place to a real index, the way a disk or a killed copy would leave it: bit flips spread
over a data file, a data file cut in half, manifests overwritten with garbage. Then `hippo index`, `hippo
search`, the failure hook, the warm server and the MCP tool each meet it. None may crash, inject anything
or say "up to date"; the rebuild happens by itself and is announced in exactly one line.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
import trustkit  # noqa: E402
from trustkit import fresh_snapshot, hippo, make_repo, snapshot  # noqa: E402

pytestmark = pytest.mark.slow  # subprocesses and full index builds


def _data_file(idx: Path) -> Path:
    return max((idx / "db" / "chunks.lance" / "data").iterdir(), key=lambda p: p.stat().st_size)


def bit_flips(idx: Path) -> None:
    """Invert one byte in every 2 KB of the largest chunks data file (same size, same name)."""
    p = _data_file(idx)
    data = bytearray(p.read_bytes())
    for i in range(0, len(data), 2048):
        data[i] ^= 0xFF
    p.write_bytes(bytes(data))


def truncated(idx: Path) -> None:
    p = _data_file(idx)
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def garbage_manifest(idx: Path) -> None:
    for m in (idx / "db" / "chunks.lance" / "_versions").glob("*.manifest"):
        m.write_bytes(os.urandom(m.stat().st_size))


DAMAGE = {"bit-flips": bit_flips, "truncated-data": truncated, "garbage-manifest": garbage_manifest}


@pytest.fixture(scope="module")
def expected(tmp_path_factory):
    root = make_repo(tmp_path_factory.mktemp("ref") / "repo", files=40, docs=4)
    return fresh_snapshot(root)


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo", files=40, docs=4)
    proc = hippo(["index", "--quiet"], root)
    assert proc.returncode == 0, proc.stderr
    return root


def _out(proc) -> str:
    return (proc.stdout + proc.stderr).decode(errors="replace")


def _assert_rebuilt_once_then_quiet(root: Path, expected: set) -> None:
    """The next plain `hippo index` leaves a complete, correct index and has nothing to say about damage."""
    again = hippo(["index"], root)
    assert again.returncode == 0, _out(again)
    assert "damaged" not in _out(again) and "rebuil" not in _out(again)
    assert snapshot(root / ".hippo") == expected
    last = hippo(["index"], root)
    assert last.returncode == 0 and b"up to date" in last.stdout and b"damaged" not in last.stderr


@pytest.mark.parametrize("damage", DAMAGE)
def test_index_never_says_up_to_date_over_damage(repo, expected, damage):
    DAMAGE[damage](repo / ".hippo")
    first = hippo(["index"], repo)  # a no-op run as far as the files are concerned
    out = _out(first)
    assert first.returncode == 0, out
    assert "up to date" not in out and "Traceback" not in out
    lines = [ln for ln in first.stderr.decode().splitlines() if "damaged" in ln]
    assert len(lines) == 1 and "rebuilt it" in lines[0], out
    assert snapshot(repo / ".hippo") == expected
    second = hippo(["index"], repo)
    assert second.returncode == 0 and b"up to date" in second.stdout and b"damaged" not in second.stderr


@pytest.mark.parametrize("damage", DAMAGE)
def test_search_rebuilds_then_answers(repo, expected, damage):
    before = hippo(["search", "--format", "json", "compute", "-w", "Service3"], repo)
    want = [(h["path"], h["start_line"]) for h in json.loads(before.stdout)["results"]]
    DAMAGE[damage](repo / ".hippo")
    proc = hippo(["search", "--format", "json", "compute", "-w", "Service3"], repo)
    err = proc.stderr.decode(errors="replace").strip()
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "damaged" in err and "rebuilt" in err, err
    got = json.loads(proc.stdout)["results"]
    assert got and {(h["path"], h["start_line"]) for h in got} & set(want)
    _assert_rebuilt_once_then_quiet(repo, expected)


@pytest.mark.parametrize("damage", ["truncated-data", "garbage-manifest"])
def test_failure_hook_stays_silent_and_leaves_the_rebuild_to_the_indexer(repo, expected, tmp_path, damage):
    DAMAGE[damage](repo / ".hippo")
    payload = trustkit.failure_payload(repo, trustkit.traceback_error(repo, 3))
    hook = hippo(["hook", "tool-failure"], repo, stdin=payload, extra_env={"HIPPO_HOME": str(tmp_path / "home")})
    assert trustkit.check_hook_output(hook) is None and hook.stderr == b""
    log = (repo / ".hippo" / "hippo.log").read_text()
    assert sum("damaged" in ln for ln in log.splitlines()) == 1 and "Traceback" not in log, log
    assert (repo / ".hippo" / "damaged").is_file()  # what the background `hippo index` acts on
    again = hippo(["hook", "tool-failure"], repo, stdin=payload, extra_env={"HIPPO_HOME": str(tmp_path / "home")})
    assert trustkit.check_hook_output(again) is None
    fix = hippo(["index"], repo)  # the run the hook starts in the background (disabled in tests)
    assert fix.returncode == 0 and sum("damaged" in ln for ln in fix.stderr.decode().splitlines()) == 1
    assert not (repo / ".hippo" / "damaged").exists()
    assert snapshot(repo / ".hippo") == expected
    after = hippo(["hook", "tool-failure"], repo, stdin=payload, extra_env={"HIPPO_HOME": str(tmp_path / "home")})
    assert trustkit.check_hook_output(after) is not None  # healthy again: the hook answers


@pytest.mark.parametrize("damage", ["truncated-data", "bit-flips"])
def test_warm_server_drops_its_handle_and_triggers_the_rebuild(repo, expected, damage, monkeypatch):
    """A server started over damaged files (the next session) stays silent, marks the index and serves again
    once it is rebuilt; one that was already warm (pages cached) keeps answering and moves to the rebuild."""
    from fake_embedder import FakeEmbedder
    from hippo.surfaces.service.server import QueryServer

    monkeypatch.setenv("HIPPO_NO_BACKGROUND_INDEX", "1")

    def ask(server, session):
        req = {"op": "hook", "event": "tool-failure",
               "payload": json.loads(trustkit.failure_payload(repo, trustkit.traceback_error(repo, 3), session=session))}
        return server.handle(req)

    warm = QueryServer(repo, embedder=FakeEmbedder())
    assert ask(warm, "w1")["result"]["output"]
    DAMAGE[damage](repo / ".hippo")
    cold = QueryServer(repo, embedder=FakeEmbedder())
    assert ask(cold, "c1") == {"ok": True, "result": {"output": None}}
    assert not cold.index.is_open and (repo / ".hippo" / "damaged").is_file()
    assert ask(cold, "c2") == {"ok": True, "result": {"output": None}}  # still silent until rebuilt
    log = (repo / ".hippo" / "hippo.log").read_text()
    assert "Traceback" not in log and sum("damaged" in ln for ln in log.splitlines()) == 2
    assert hippo(["index", "--quiet"], repo).returncode == 0  # what the server started in the background
    assert snapshot(repo / ".hippo") == expected
    assert ask(cold, "c3")["result"]["output"]  # a fresh handle on the rebuilt index
    assert ask(warm, "w2")["result"]["output"]  # the warm one followed the rebuild


def test_mcp_tool_reports_damage_in_one_message_and_triggers_the_rebuild(repo, monkeypatch):
    from fake_embedder import FakeEmbedder
    from hippo.retrieval.search import Searcher
    from hippo.surfaces.mcp_server import SearchService, call_tool

    monkeypatch.setenv("HIPPO_NO_BACKGROUND_INDEX", "1")
    service = SearchService(repo, lambda r: Searcher(r, embedder=FakeEmbedder()))
    text, is_error = call_tool(service, "search_codebase", {"query": "compute value"})
    assert not is_error
    truncated(repo / ".hippo")
    text, is_error = call_tool(service, "search_codebase", {"query": "compute value", "keywords": ["Service3"]})
    assert is_error and "damaged" in text and "Traceback" not in text and "\n" not in text
    assert (repo / ".hippo" / "damaged").is_file()
