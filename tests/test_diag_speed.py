"""The diagnosis fast paths answer exactly what a plain scan would, and never from an older table version:
the store's symbol index (identifier_lookup, symbol_names), the arrow-side literal test, the per-version row
count, and the git diffs started in the background."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fake_embedder import FakeEmbedder
from helpers_index import git, sample_repo
from hippo.index.indexer import index_repo
from hippo.index.state import load_state
from hippo.index.store import Filter, Store, SymbolIndex
from hippo.push.diagnosis import changes


def _named(symbol: str | None) -> set[str]:
    parts = {p.strip() for p in (symbol or "").split(",")}
    return parts | {p.rsplit(".", 1)[-1] for p in parts}


def scan_identifiers(store: Store, names, limit, flt=None):
    """identifier_lookup as a row-by-row scan in table order (the behaviour before the symbol index)."""
    out = {n: [] for n in dict.fromkeys(n for n in names if n)}
    for row in store.rows(flt):
        for n in out:
            if n in _named(row.get("symbol")) and len(out[n]) < limit:
                out[n].append(row["id"])
    return out


def scan_literals(store: Store, terms, limit, flt=None):
    out = {t: [] for t in dict.fromkeys(t for t in terms if t)}
    for row in store.rows(flt):
        for t in out:
            if t in row["text"] and len(out[t]) < limit:
                out[t].append(row["id"])
    return out


def ids(found):
    return {k: [r["id"] for r in rows] for k, rows in found.items()}


@pytest.fixture()
def indexed(tmp_path):
    root = sample_repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    st = Store(root / ".hippo", load_state(root / ".hippo").dim)
    yield root, st
    st.close()


def test_identifier_lookup_matches_a_plain_scan(indexed):
    _, store = indexed
    every = sorted({n for r in store.rows() for n in _named(r.get("symbol")) if n})
    assert len(every) > 10
    for limit in (1, 2, 9):
        assert ids(store.identifier_lookup(every + ["NoSuchName", ""], limit)) == \
            scan_identifiers(store, every + ["NoSuchName"], limit)
    flt = Filter(paths=("src/auth/tokens.py",))
    assert ids(store.identifier_lookup(every, 3, flt)) == scan_identifiers(store, every, 3, flt)
    assert all(v == [] for v in store.identifier_lookup(every, 3, Filter(paths=())).values())


def test_a_row_defining_two_names_is_one_dict_for_both(indexed):
    _, store = indexed
    rows = [r for r in store.rows() if "," in (r.get("symbol") or "")]
    assert rows, "the sample repo has grouped definitions (`a, b`)"
    first, second = (p.strip() for p in rows[0]["symbol"].split(",")[:2])
    found = store.identifier_lookup([first, second], 50)
    assert rows[0]["id"] in [r["id"] for r in found[first]] and rows[0]["id"] in [r["id"] for r in found[second]]
    assert {id(r) for r in found[first]} & {id(r) for r in found[second]}


def test_symbol_index_names_whole_and_dotted_tails():
    index = SymbolIndex.build(["Store.refresh", "a, b.c", None, "", "refresh"], [10, 11, 12, 13, 14])
    assert index.rows == {"Store.refresh": [10], "refresh": [10, 14], "a": [11], "b.c": [11], "c": [11]}
    assert index.names == ["a", "c", "refresh"]


def test_literal_lookup_matches_a_plain_scan(indexed):
    _, store = indexed
    terms = ["def ", "TokenExpiredError", "raise", "(", "Token is too old", "never in any chunk", "e"]
    for limit in (1, 3, 40):
        assert ids(store.literal_lookup(terms, limit)) == scan_literals(store, terms, limit)
    flt = Filter(paths=("src/auth/tokens.py", "tests/test_tokens.py"))
    assert ids(store.literal_lookup(terms, 5, flt)) == scan_literals(store, terms, 5, flt)


def test_symbol_names_are_every_defined_tail(indexed):
    _, store = indexed
    expected = sorted({p.strip().rsplit(".", 1)[-1] for r in store.symbols() for p in r["symbol"].split(",")} - {""})
    assert store.symbol_names() == expected


def test_a_new_version_rebuilds_the_symbol_index(indexed):
    root, store = indexed
    assert store.identifier_lookup(["brand_new_helper"], 3) == {"brand_new_helper": []}
    before = store.count()
    assert len(store.rows()) == before
    (root / "src" / "fresh.py").write_text("def brand_new_helper(x):\n    return x + 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "add a helper")
    index_repo(root, embedder=FakeEmbedder())
    # the open reader stays on its version until refresh(): same answer as before
    assert store.identifier_lookup(["brand_new_helper"], 3) == {"brand_new_helper": []}
    store.refresh()
    found = store.identifier_lookup(["brand_new_helper"], 3)["brand_new_helper"]
    assert [r["path"] for r in found] == ["src/fresh.py"]
    assert "brand_new_helper" in store.symbol_names()
    assert store.count() > before and len(store.rows()) == store.count()  # the cached row count moved too


def test_background_diffs_equal_the_direct_ones(tmp_path):
    def run(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True,
                       env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})

    run("init", "-q", "-b", "main")
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    run("add", "-A")
    run("commit", "-q", "-m", "one")
    (tmp_path / "a.py").write_text("def f():\n    return 2\n\n\ndef g():\n    return 3\n")
    run("commit", "-qam", "two")
    (tmp_path / "a.py").write_text("def f():\n    return 20\n\n\ndef g():\n    return 3\n")
    pending = changes.Pending(Path(tmp_path))
    assert pending.working_tree() == changes.working_tree(tmp_path) == [changes.Hunk("a.py", 2, 2, "working tree")]
    assert pending.last_commit() == changes.last_commit(tmp_path) == [changes.Hunk("a.py", 2, 6, "last commit")]
    nothing = changes.Pending(tmp_path / "not-a-repo")
    assert nothing.working_tree() == [] and nothing.last_commit() == []


def test_chunks_at_matches_a_plain_filter_and_follows_new_versions(indexed):
    root, store = indexed
    rows = store.rows()
    probes = sorted({(r["path"], line) for r in rows for line in (r["start_line"], r["end_line"])})[:80]
    probes += [(rows[0]["path"], 10_000), ("no/such/file.py", 1)]
    for path, line in probes:
        plain = [r["id"] for r in rows if r["path"] == path and r["start_line"] <= line <= r["end_line"]]
        assert [r["id"] for r in store.chunks_at(path, line)] == plain
    assert set(store.chunks_at(*probes[0])[0]) == {"id", "path", "start_line", "end_line", "language", "symbol",
                                                  "text"}
    (root / "brand_new.py").write_text("def brand_new_helper():\n    return 1\n")
    index_repo(root, embedder=FakeEmbedder())
    assert store.chunks_at("brand_new.py", 1) == []  # still the version it opened
    store.refresh()
    assert [r["path"] for r in store.chunks_at("brand_new.py", 1)] == ["brand_new.py"]
