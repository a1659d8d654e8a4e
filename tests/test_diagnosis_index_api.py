"""The failure diagnosis against its declared index interface (push/diagnosis/index_api.py): the stand-in
and the real Searcher/Store take what the Protocol declares; damage reaches the repair path; other lookup
failures are narrowed; the hot path parses the output, finds the root and loads settings once per failure;
search and diagnosis share one commit-date cache."""
from __future__ import annotations

import inspect
import shutil
import subprocess
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from fakes import PROJECTS, FakeSearcher
from hippo.core.errors import DamagedIndexError
from hippo.push.diagnosis import index_api

PY_TRACEBACK = (Path(__file__).parent / "fixtures" / "errors" / "py_traceback.txt").read_text(encoding="utf-8")


def _protocol_methods(proto) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(fn) for name, fn in vars(proto).items()
            if inspect.isfunction(fn) and not name.startswith("_")}


def _accepts(impl, declared: inspect.Signature) -> list[str]:
    """What of `declared` the callable `impl` would refuse: a parameter missing, or of another kind."""
    got = inspect.signature(impl).parameters
    problems = []
    for name, p in declared.parameters.items():
        if name == "self":
            continue
        q = got.get(name)
        if q is None:
            problems.append(f"no parameter {name!r}")
        elif p.kind == p.KEYWORD_ONLY and q.kind not in (q.KEYWORD_ONLY, q.POSITIONAL_OR_KEYWORD):
            problems.append(f"{name!r} cannot be passed by keyword")
        elif p.default is not p.empty and q.default is q.empty:
            problems.append(f"{name!r} has no default")
    return problems


def test_the_stand_in_and_the_real_classes_take_what_the_protocols_declare():
    from hippo.index.store import Store
    from hippo.retrieval.search import Searcher

    fake = FakeSearcher()
    for proto, impls in ((index_api.DiagnosisStore, (fake.store, Store)), (index_api.DiagnosisIndex, (fake, Searcher))):
        for name, declared in _protocol_methods(proto).items():
            for impl in impls:
                assert _accepts(getattr(impl, name), declared) == [], (proto.__name__, name, impl)
    for attr in ("root", "index_dir", "state", "store", "commit_dates"):
        assert hasattr(fake, attr)


# --- the hot path over a stand-in index in a real git repo --------------------------------------------
@pytest.fixture
def repo(git_repo, monkeypatch):
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    root = git_repo({"README.md": "# r\n"}, name="hot").resolve()
    shutil.copytree(PROJECTS, root, dirs_exist_ok=True)
    (root / ".hippo").mkdir()
    (root / ".hippo" / "state.json").write_text("{}")
    return root


def _hook(root: Path, session: str) -> dict:
    return {"op": "hook", "event": "tool-failure",
            "payload": {"tool_name": "Bash", "tool_input": {"command": "python -m shop.main"}, "session_id": session,
                        "cwd": str(root / "py"), "error": PY_TRACEBACK.replace("/srv/dev/work", str(root))}}


class _Damaged(FakeSearcher):
    """A stand-in whose table files turn out damaged at the first one-pass lookup."""

    def __post_init__(self) -> None:
        super().__post_init__()
        store = self.store

        class Store:
            def __getattr__(self, name):
                def fail(*a, **kw):
                    raise DamagedIndexError("chunks data file truncated")
                return fail if name in ("literal_lookup", "identifier_lookup") else getattr(store, name)

        self.store = Store()


@pytest.mark.parametrize("cold", [False, True])
def test_damage_met_during_a_diagnosis_starts_the_repair(repo, monkeypatch, cold):
    from hippo.index import indexer
    from hippo.surfaces.service.host import WarmIndex

    started: list[str] = []
    monkeypatch.setattr(indexer, "repair", lambda root, settings, exc, wait=True: started.append(exc.detail))
    warm = WarmIndex(repo, searcher_factory=lambda r: _Damaged(repo), cold=cold)
    assert warm.handle(_hook(repo, "d1")) == {"ok": True, "result": {"output": None}}  # silent, as hooks are
    assert started == ["chunks data file truncated"]
    assert not warm.is_open  # the handle on damaged files is dropped


def test_a_bug_in_a_lookup_is_not_mistaken_for_missing_evidence(repo):
    from hippo.push.diagnosis.pipeline import diagnose

    class Buggy(FakeSearcher):
        def __post_init__(self) -> None:
            super().__post_init__()

            def broken(*a, **kw):
                raise TypeError("a bug, not an unreadable index")

            self.store.literal_lookup = broken  # type: ignore[method-assign]

    request = {"error": PY_TRACEBACK.replace("/srv/dev/work", str(repo)), "cwd": str(repo / "py")}
    with pytest.raises(TypeError):
        diagnose(Buggy(repo), request)

    class Unreadable(FakeSearcher):
        def __post_init__(self) -> None:
            super().__post_init__()

            def io(*a, **kw):
                raise OSError("lance: object store read failed")

            self.store.literal_lookup = io  # type: ignore[method-assign]

    assert diagnose(Unreadable(repo), request)["hits"]  # the other evidence stands


class _Counts:
    def __init__(self, monkeypatch) -> None:
        from hippo.core import config, runtime
        from hippo.push.diagnosis import respond, runners, signals
        from hippo.surfaces.service import host

        self.n: dict[str, int] = {}

        def count(module, attr: str, key: str) -> None:
            real = getattr(module, attr)

            def wrapper(*a, **kw):
                self.n[key] = self.n.get(key, 0) + 1
                return real(*a, **kw)

            monkeypatch.setattr(module, attr, wrapper)

        count(signals, "split_exit", "parse output")  # the first step of signals.extract
        count(runners, "failing_tests", "read failing tests")
        count(runners, "quoted_source", "read quoted lines")
        count(config, "load_settings", "load settings")
        for module in (runtime, respond, host):
            count(module, "find_repo_root", "find repo root")

    def reset(self) -> None:
        self.n.clear()


def test_a_warm_failure_is_parsed_once_and_finds_its_root_once(repo, monkeypatch):
    from hippo.surfaces.service.host import WarmIndex

    counts = _Counts(monkeypatch)
    warm = WarmIndex(repo, searcher_factory=lambda r: FakeSearcher(repo))
    assert warm.handle(_hook(repo, "first"))["result"]["output"]  # the server's first request loads settings
    counts.reset()
    assert warm.handle(_hook(repo, "second"))["result"]["output"]
    assert counts.n == {"parse output": 1, "read failing tests": 1, "read quoted lines": 1, "find repo root": 1}


def test_the_in_process_hook_loads_settings_once(repo, monkeypatch):
    from hippo.surfaces.hooks import failure

    counts = _Counts(monkeypatch)
    failure.handle(_hook(repo, "cold")["payload"])  # no real index here: silent, but past the gate
    assert counts.n["load settings"] == 1 and counts.n["parse output"] == 1
    assert counts.n["find repo root"] == 1


# --- one commit-date cache per open index --------------------------------------------------------------
def test_search_and_diagnosis_share_the_commit_dates(git_repo, monkeypatch):
    from hippo.core import gitutil
    from hippo.index.indexer import index_repo
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.retrieval.search import Searcher

    monkeypatch.setenv("HIPPO_MODEL", FAKE)
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    root = git_repo({"shop/cart.py": (PROJECTS / "py" / "shop" / "cart.py").read_text(),
                     "shop/__init__.py": ""}, name="dates")
    subprocess.run(["git", "log", "-1"], cwd=root, check=True, capture_output=True)
    index_repo(root)
    asked: list[list[str]] = []
    real = gitutil.last_commit_dates

    def counting(r, paths):
        asked.append(list(paths))
        return real(r, paths)

    monkeypatch.setattr(gitutil, "last_commit_dates", counting)
    s = Searcher(root)
    hits = s.search("total prices items", keywords=["prices"], k=3, mode="keyword").hits
    assert any(h.path == "shop/cart.py" and h.last_modified for h in hits) and asked
    n = len(asked)
    error = ("Exit code 1\nTraceback (most recent call last):\n"
             f'  File "{root}/shop/cart.py", line 14, in total\n'
             "    return sum(prices[sku] * q for sku, q in self.items.items())\nKeyError: 'kiwi'\n")
    resp = diagnose(s, {"error": error, "cwd": str(root)}, mode="keyword")
    assert [h for h in resp["hits"] if h["path"] == "shop/cart.py" and h["last_modified"]]
    assert len(asked) == n  # the date search found is the date diagnosis shows: no second `git log`


# --- per-failure work the warm server does not repeat -----------------------------------------------------
JEST_FAIL = """Exit code 1
 FAIL  js/price.test.js
  ● parses cents

    expect(received).toBe(expected) // Object.is equality

    Expected: 1.25
    Received: 1.5
"""


def test_a_failure_scans_the_text_column_once(repo):
    """The message's fragments and the failing test's quoted title are looked up in one literal scan."""
    from hippo.push.diagnosis.pipeline import diagnose

    s = FakeSearcher(repo)
    error = JEST_FAIL + "\nError: price must be a number with two decimals\n"
    resp = diagnose(s, {"error": error, "cwd": str(repo)})
    scans = [c for c in s.calls if c[0] == "literal"]
    assert len(scans) == 1, scans
    assert "'parses cents'" in scans[0][1]
    # the titled test's body was still found: what it calls is shown
    assert any("called by the failing test" in h["why"] for h in resp["hits"]), resp["hits"]


def test_live_files_are_read_once_while_they_stay_the_same(repo, monkeypatch):
    from hippo.core.repo_read import RepoReader
    from hippo.push.diagnosis.pipeline import diagnose

    reads: list[str] = []
    real = RepoReader.read_text

    def counting(self, path, *a, **kw):
        reads.append(path)
        return real(self, path, *a, **kw)

    monkeypatch.setattr(RepoReader, "read_text", counting)
    request = {"error": PY_TRACEBACK.replace("/srv/dev/work", str(repo)), "cwd": str(repo / "py")}
    first = diagnose(FakeSearcher(repo), request)
    assert "py/shop/cart.py" in reads
    n = len(reads)
    assert diagnose(FakeSearcher(repo), request)["hits"] == first["hits"]
    assert len(reads) == n  # the second failure read no file again
    cart = repo / "py" / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace("must be positive", "must be above zero"))
    again = diagnose(FakeSearcher(repo), request)
    assert reads[n:].count("py/shop/cart.py") == 1  # an edited file is read again ...
    assert any("must be above zero" in h["snippet"] for h in again["hits"])  # ... and shown as it is now


def test_the_dedupe_record_is_written_without_waiting_for_the_disk(repo, monkeypatch):
    """session_state.remember runs before every injecting reply; an fsync there cost 200 ms on a busy disk."""
    import os as os_mod

    from hippo.push import session_state

    synced: list[int] = []
    monkeypatch.setattr(os_mod, "fsync", lambda fd: synced.append(fd))
    session_state.remember(repo / ".hippo", "s1", ["py/shop/cart.py:1-9"])
    assert synced == []
    assert session_state.injected_keys(repo / ".hippo", "s1") == {"py/shop/cart.py:1-9"}
