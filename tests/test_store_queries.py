"""The Store owns every LanceDB query: lookups, filters and the scan cache, on a real index of the sample repo."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fake_embedder import FakeEmbedder
from helpers_index import sample_repo
from hippo.index.indexer import index_repo
from hippo.index.state import load_state
from hippo.index.store import Filter, Store

LIB = Path(__file__).resolve().parent.parent / "lib" / "hippo"


def test_only_store_imports_lancedb():
    offenders = []
    for path in sorted(LIB.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(n == "lancedb" or n.startswith("lancedb.") for n in names):
                offenders.append(f"{path.relative_to(LIB)}:{node.lineno}")
    assert offenders and all(o.startswith("index/store.py:") for o in offenders), offenders


def test_opening_the_index_does_not_load_lancedbs_rest_client_until_it_is_asked_for():
    """`import lancedb` spent half its time importing a REST client's API classes a local index never calls
    (hippo.index.rest_client_defer); its data models still load, and the client's names still resolve."""
    import subprocess
    import sys

    probe = (
        "import sys, tempfile, pyarrow as pa\n"
        "from hippo.index import store\n"
        "pkg = 'lance_namespace_urllib3_client'\n"
        "db = store.lancedb.connect(tempfile.mkdtemp())\n"
        "db.create_table('t', pa.table({'a': [1]}))\n"
        "print(sorted(db.table_names()), f'{pkg}.models' in sys.modules, f'{pkg}.api.table_api' in sys.modules)\n"
        "print(sys.modules[pkg].ApiClient.__name__, f'{pkg}.api.table_api' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["['t'] True False", "ApiClient True"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = sample_repo(tmp_path_factory.mktemp("store"))
    index_repo(root, embedder=FakeEmbedder())
    st = Store(root / ".hippo", load_state(root / ".hippo").dim)
    yield st
    st.close()


def test_literal_lookup_finds_each_string_in_one_call(store):
    found = store.literal_lookup(['raise TokenExpiredError("Token is too old")', "InvalidSignatureError(",
                                  "no chunk holds this string"], limit=5)
    assert [r["path"] for r in found['raise TokenExpiredError("Token is too old")']] == ["src/auth/tokens.py"]
    sig = found["InvalidSignatureError("]
    assert sig and all("InvalidSignatureError(" in r["text"] for r in sig)
    assert found["no chunk holds this string"] == []
    # case-sensitive by default, as exact strings from an error message are
    assert store.literal_lookup(["tokenexpirederror"], limit=5) == {"tokenexpirederror": []}
    assert store.literal_lookup(["tokenexpirederror"], limit=5, case_sensitive=False)["tokenexpirederror"]


def test_literal_lookup_caps_each_term_without_starving_the_others(store):
    every = store.rows(columns=["id", "text"])
    common = "e"  # in nearly every chunk
    rare = 'raise TokenExpiredError("Token is too old")'
    found = store.literal_lookup([common, rare], limit=2)
    assert len(found[common]) == 2 and sum(common in r["text"] for r in every) > 2
    assert len(found[rare]) == 1


def test_literal_lookup_honours_the_filter(store):
    term = "TokenExpiredError"
    everywhere = {r["path"] for r in store.literal_lookup([term], limit=50)[term]}
    assert {"src/auth/tokens.py", "tests/test_tokens.py"} <= everywhere
    only_tests = store.literal_lookup([term], limit=50, flt=Filter(paths=("tests/test_tokens.py",)))[term]
    assert {r["path"] for r in only_tests} == {"tests/test_tokens.py"}
    assert store.literal_lookup([term], limit=50, flt=Filter(paths=()))[term] == []


def test_identifier_lookup_matches_whole_symbols_only(store):
    found = store.identifier_lookup(["TokenExpiredError", "AuthService", "Token"], limit=5)
    defs = found["TokenExpiredError"]
    assert defs and all("TokenExpiredError" in [p.strip() for p in r["symbol"].split(",")] for r in defs)
    assert {r["path"] for r in defs} == {"src/auth/tokens.py"}  # the test that raises it does not define it
    assert found["AuthService"] and all(r["path"] == "src/auth/tokens.py" for r in found["AuthService"])
    assert found["Token"] == []  # a prefix of a symbol is not that symbol


def test_quotes_in_values_are_data(store):
    nasty = "x' OR '1'='1"
    assert store.literal_lookup([nasty], limit=5) == {nasty: []}
    assert store.count(Filter(paths=(nasty,))) == 0
    assert store.chunks_at(nasty, 1) == []
    assert store.substring_scan([nasty], 10) == []
    assert store.count() > 0


def test_filters_count_and_scan(store):
    total = store.count()
    assert store.count(Filter(embedded=True)) == total  # the fake embedder filled every vector
    assert store.count(Filter(embedded=False)) == 0
    tokens = store.count(Filter(paths=("src/auth/tokens.py",)))
    assert 0 < tokens < total
    rows = store.rows(Filter(paths=("src/auth/tokens.py",)), columns=["path"])
    assert len(rows) == tokens and {r["path"] for r in rows} == {"src/auth/tokens.py"}


def test_substring_scan_all_or_any_and_cached_copies(store):
    anyof = store.substring_scan(["TokenExpiredError", "ShoppingCart"], 50)
    both = store.substring_scan(["TokenExpiredError", "ShoppingCart"], 50, require_all=True, case_sensitive=True)
    assert {r["path"] for r in anyof} >= {"src/auth/tokens.py", "src/web/cart.ts"}
    assert both == []
    first = store.substring_scan(["TokenExpiredError"], 50)
    first[0]["text"] = "changed by the caller"
    again = store.substring_scan(["TokenExpiredError"], 50)
    assert again[0]["text"] != "changed by the caller"  # the cache hands out copies
    assert store._scan_cache
    store.refresh()
    assert not store._scan_cache  # a newer table version empties it


def test_nearest_and_fulltext_return_plain_rows(store):
    from fake_embedder import fake_vector

    near = store.nearest(fake_vector("token expired error"), 3)
    assert len(near) == 3 and all(-1.0 <= r["_cos"] <= 1.0 for r in near)
    assert near == sorted(near, key=lambda r: -r["_cos"])
    only = store.nearest(fake_vector("token"), 10, Filter(paths=("src/web/retry.js",)))
    assert only and {r["path"] for r in only} == {"src/web/retry.js"}
    fts = store.fulltext("TokenExpiredError: Token is too old!", 5)
    assert fts and fts[0]["path"].endswith("tokens.py")
    assert store.fulltext("!!! ???", 5) == []  # nothing the full-text parser could take


def test_raw_sql_is_refused(store):
    with pytest.raises(TypeError, match="Filter"):
        store.count("embedded = true")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Filter"):
        store.rows("path = 'x'")  # type: ignore[arg-type]


def test_literal_lookup_from_memory_matches_the_scan(store, monkeypatch):
    """The text column held in memory (textcolumn.py) finds what the scan of the table finds, row for row."""
    from hippo.index import textcolumn

    every = store.rows(columns=["text"])
    terms = ["e", "def ", "TokenExpiredError(", "class ", "return", "no chunk holds this string",
             *(r["text"][5:25] for r in every[::3])]
    store.keep_text()
    for limit in (1, 2, 6):
        store.refresh()
        kept = store.literal_lookup(terms, limit)
        assert store._text_cache is not None and store._text_cache[1] is not None
        store.refresh()
        monkeypatch.setattr(textcolumn, "MAX_BYTES", 0)  # too big to keep: the lookup scans
        scanned = store.literal_lookup(terms, limit)
        assert store._text_cache is not None and store._text_cache[1] is None
        monkeypatch.undo()
        assert kept == scanned


def test_terms_wanted_in_tests_count_only_test_files_from_memory_and_by_scan(store, monkeypatch):
    """A test's title is looked for in test files only: the in-memory lookup reads just their rows, and it
    finds what the scan finds; the other terms of the same call still count every file."""
    from hippo.core.pathkind import is_test
    from hippo.index import textcolumn

    term, other = "TokenExpiredError", "def "
    assert {r["path"] for r in store.literal_lookup([term], 50)[term]} - {"tests/test_tokens.py"}  # code holds it too
    store.keep_text()
    for limit in (1, 50):
        store.refresh()
        kept = store.literal_lookup([term, other], limit, in_tests=[term])
        assert kept[term] and all(is_test(r["path"]) for r in kept[term])
        assert kept[other] == store.literal_lookup([other], limit)[other]
        store.refresh()
        monkeypatch.setattr(textcolumn, "MAX_BYTES", 0)  # too big to keep: the lookup scans
        assert store.literal_lookup([term, other], limit, in_tests=[term]) == kept
        monkeypatch.undo()


def test_text_column_and_regex_cache_follow_the_table_version(tmp_path):
    root = sample_repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    st = Store(root / ".hippo", load_state(root / ".hippo").dim)
    try:
        st.literal_lookup(["def "], 3)
        assert st._text_cache is None  # a one-shot reader scans: it never holds the text column
        st.keep_text()
        term = "BRAND_NEW_CONSTANT"
        assert st.literal_lookup([term], 3) == {term: []}
        assert st.regex_scan(f"{term}\\s*=", 3) == []
        version = st._text_cache[0] if st._text_cache else None
        (root / "src" / "fresh.py").write_text(f"{term} = 1\n")
        index_repo(root, embedder=FakeEmbedder())
        assert st.literal_lookup([term], 3) == {term: []}  # still reading the version it opened
        st.refresh()
        assert [r["path"] for r in st.literal_lookup([term], 3)[term]] == ["src/fresh.py"]
        assert st._text_cache is not None and st._text_cache[0] != version
        hits = st.regex_scan(f"{term}\\s*=", 3)
        assert [r["path"] for r in hits] == ["src/fresh.py"]
        hits[0]["text"] = "changed by the caller"
        assert st.regex_scan(f"{term}\\s*=", 3)[0]["text"] != "changed by the caller"  # copies
    finally:
        st.close()


def test_rows_by_id_from_memory_are_the_rows_a_read_returns(tmp_path):
    """A store that keeps the text column answers chunks_at, identifier_lookup and literal_lookup's rows from
    memory (no `_rowid IN` read): the same rows, keys and order as a store that reads them, and after a
    re-index the rows of the version it moved to."""
    root = sample_repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    dim = load_state(root / ".hippo").dim
    plain, warm = Store(root / ".hippo", dim), Store(root / ".hippo", dim)
    try:
        warm.keep_text()
        spots = [(r["path"], n) for r in plain.rows(columns=["path", "start_line", "end_line"])
                 for n in (r["start_line"], r["end_line"], r["start_line"] + 1)]
        names = sorted({s.split(".")[-1] for r in plain.symbols() for s in r["symbol"].split(", ")})
        for _ in range(2):
            for path, n in spots:
                assert warm.chunks_at(path, n) == plain.chunks_at(path, n)
                assert warm.chunks_at(path, n, columns=("path", "text")) == plain.chunks_at(path, n, columns=("path", "text"))
            assert warm.identifier_lookup(names, 3) == plain.identifier_lookup(names, 3)
            assert warm._meta_cache is not None
            (root / "src" / "fresh.py").write_text("def brand_new():\n    return 1\n")
            index_repo(root, embedder=FakeEmbedder())
            plain.refresh()
            warm.refresh()
            spots.append(("src/fresh.py", 1))
            names.append("brand_new")
        assert [r["path"] for r in warm.identifier_lookup(["brand_new"], 3)["brand_new"]] == ["src/fresh.py"]
    finally:
        plain.close()
        warm.close()


def test_text_column_over_the_cap_is_given_up_while_it_is_read(store, monkeypatch):
    """A text column over textcolumn.MAX_BYTES is never read whole (a 100k-file index: ~1 GB of text the
    warm server read only to drop it): the read stops at the first batch past the cap."""
    from hippo.index import store as store_mod
    from hippo.index import textcolumn

    total = sum(len(r["text"].encode()) for r in store.rows(columns=["text"]))
    monkeypatch.setattr(store_mod, "TEXT_READ_BATCH", 1)
    monkeypatch.setattr(textcolumn, "MAX_BYTES", total // 4)
    taken: list[int] = []
    real = store_mod.Store._read_text_column

    def counting(self, tbl):
        import pyarrow.compute as pc

        real_sum = pc.sum

        def tally(arr, *a, **k):
            taken.append(1)
            return real_sum(arr, *a, **k)

        monkeypatch.setattr(store_mod.pc, "sum", tally)
        try:
            return real(self, tbl)
        finally:
            monkeypatch.setattr(store_mod.pc, "sum", real_sum)

    monkeypatch.setattr(store_mod.Store, "_read_text_column", counting)
    store._text_cache = None  # the module's store: an earlier test may have read this version's column
    store.keep_text()
    assert store._text_cache is not None and store._text_cache[1] is None
    assert 0 < len(taken) < store.count()  # stopped early, one batch (row) at a time
    monkeypatch.setattr(textcolumn, "MAX_BYTES", total)
    store._text_cache = None
    kept = store._text_column(store.chunks())
    assert kept is not None and len(kept.data) == total


def test_text_column_bound_to_pass_the_cap_is_given_up_after_its_first_batch(store, monkeypatch):
    """Reading on to the cap cost the warm server ~500 MB of peak memory at 1M chunks, only to scan
    afterwards: a column whose first batch projects to twice the cap is given up there."""
    from hippo.index import store as store_mod
    from hippo.index import textcolumn

    texts = [len(r["text"].encode()) for r in store.rows(columns=["text"])]
    monkeypatch.setattr(store_mod, "TEXT_READ_BATCH", max(1, len(texts) // 3))
    monkeypatch.setattr(textcolumn, "MAX_BYTES", sum(texts) // 4)
    batches: list[int] = []
    real = store_mod.pc.sum
    monkeypatch.setattr(store_mod.pc, "sum", lambda arr, *a, **k: batches.append(1) or real(arr, *a, **k))
    store._text_cache = None
    assert store._text_column(store.chunks()) is None and len(batches) == 1
    monkeypatch.setattr(textcolumn, "MAX_BYTES", sum(texts))
    store._text_cache = None
    kept = store._text_column(store.chunks())  # under half the cap at its rate: read whole
    assert kept is not None and len(kept.data) == sum(texts)
    store._text_cache = None


def test_nearest_from_the_held_embedded_rows_matches_lances_flat_scan(tmp_path, monkeypatch):
    """Without a vector index lance scans the whole vector column (~2 CPU-s at 1M rows, however few are
    embedded); the embedded rows are held in memory instead: the same rows, order and cosines."""
    import hippo.index.store as store_mod
    from fake_embedder import fake_vector

    root = sample_repo(tmp_path)
    index_repo(root, embedder=FakeEmbedder())
    dim = load_state(root / ".hippo").dim
    held, flat = Store(root / ".hippo", dim), Store(root / ".hippo", dim)
    monkeypatch.setattr(store_mod, "MATRIX_MIN_TABLE", 0)
    try:
        paths = sorted({r["path"] for r in held.rows(columns=["path"])})
        held.chunks().update(where=f"path = '{paths[0]}'", values={"embedded": False})  # a partial index
        held.refresh()
        flat.refresh()
        queries = ["token expired error", "retry", "parse the config file", "def", "class user"]
        for limit in (1, 3, 60):
            for text in queries:
                monkeypatch.setattr(store_mod, "MATRIX_MAX_ROWS", 50000)
                got = held.nearest(fake_vector(text), limit)
                monkeypatch.setattr(store_mod, "MATRIX_MAX_ROWS", 0)
                want = flat.nearest(fake_vector(text), limit)
                assert [r["id"] for r in got] == [r["id"] for r in want]
                assert all(g["_cos"] == pytest.approx(w["_cos"], abs=1e-5) for g, w in zip(got, want, strict=True))
                assert [{k: v for k, v in r.items() if k != "_cos"} for r in got] == \
                    [{k: v for k, v in r.items() if k != "_cos"} for r in want]
                assert paths[0] not in {r["path"] for r in got}
        monkeypatch.setattr(store_mod, "MATRIX_MAX_ROWS", 50000)
        assert held._matrix_cache is not None and held._matrix_cache[1] is not None
        assert flat._matrix_cache is not None and flat._matrix_cache[1] is None  # over the cap: lance, as before
        n = held.count(Filter(embedded=True))
        assert len(held._matrix_cache[1][0]) == n < held.count()
    finally:
        held.close()
        flat.close()


def test_line_spans_held_as_arrays_answer_as_the_tuples_did(store):
    """chunks_at's spans (path -> chunks' lines and row ids) are three arrays, not a tuple per chunk: the
    same row ids, in table order, for every line of every path."""
    from hippo.index.store import Spans

    t = (store.chunks().search().select(["path", "start_line", "end_line"]).with_row_id(True)
         .limit(store.count()).to_arrow())
    old: dict[str, list[tuple[int, int, int]]] = {}
    for path, a, b, rid in zip(*(t.column(c).to_pylist() for c in ("path", "start_line", "end_line", "_rowid")), strict=True):
        old.setdefault(path, []).append((a, b, rid))
    for v in old.values():
        v.sort(key=lambda s: s[2])
    spans = Spans.build(t.take(list(reversed(range(t.num_rows)))))  # the scan order does not matter
    assert isinstance(store._spans(store.chunks()), Spans)
    for path, rows in old.items():
        for line in range(0, max(b for _a, b, _r in rows) + 2):
            assert spans.covering(path, line) == [rid for a, b, rid in rows if a <= line <= b]
    assert spans.covering("no/such/file.py", 1) == []


def test_literal_words_are_whole_words_of_the_term_that_may_anchor_a_query():
    from hippo.index.store import literal_words

    assert literal_words("first() was called on an empty iterable, and") == ["called", "empty", "iterable"]
    assert literal_words("was called on") == ["called"]  # `was`, `on`: edges of the term, and stop words
    assert literal_words("x = self._marker)") == ["marker", "self"]  # `_` splits as the tokenizer splits
    assert literal_words("of the  and") == []  # stop words alone find nothing in the index
    assert literal_words("émoji café ünïcode ok") == []  # a non-ASCII neighbour may be part of the token
    assert literal_words("(" + "a" * 41 + ")") == []  # past the index's longest token


def test_literal_lookup_narrowed_by_the_full_text_index_matches_the_scan(store, monkeypatch):
    """A long-lived reader whose text column is over its cap finds a lookup's candidate rows in the
    full-text index and tests only those: the same rows, in the same order, as the scan of the table, for
    each term alone and for all at once; it does answer (no scan) when every term has a word to ask for."""
    from hippo.index import textcolumn

    every = store.rows(columns=["text"])
    texts = [r["text"] for r in every if r["text"]]
    terms = ["TokenExpiredError(", "def verify(", " the ", "raise ", "no chunk holds this distinctive string",
             "self._secret)", "x", *(t[k:k + n] for t in texts[::2] for k, n in ((3, 30), (20, 12), (40, 60)))]
    terms = [t for t in dict.fromkeys(terms) if t]
    plain = Store(store.index_dir, store.dim)
    try:
        monkeypatch.setattr(textcolumn, "MAX_BYTES", 0)
        store.keep_text()
        answered = []
        real = Store._literal_narrowed

        def spy(self, tbl, wanted, *args, **kwargs):
            rest = real(self, tbl, wanted, *args, **kwargs)
            answered.append(not rest)
            return rest

        monkeypatch.setattr(Store, "_literal_narrowed", spy)
        for limit in (1, 3):
            for group in [[t] for t in terms] + [terms]:
                store.refresh()
                assert store.literal_lookup(group, limit) == plain.literal_lookup(group, limit), group
                assert store.literal_lookup(group, limit, in_tests=group[:1]) == \
                    plain.literal_lookup(group, limit, in_tests=group[:1]), group
        assert store._text_cache is not None and store._text_cache[1] is None  # over the cap: not held
        assert sum(answered) >= len(terms) // 2 and not all(answered)
    finally:
        plain.close()


def test_literal_lookup_narrowed_gives_up_past_its_candidate_cap(store, monkeypatch):
    """Past LITERAL_NARROW_MAX candidate rows for all terms together the lookup scans (reading them by id
    costs about what the scan does): the same rows either way."""
    from hippo.index import store as storemod
    from hippo.index import textcolumn

    terms = ["def issue(self", "raise TokenExpiredError("]
    plain = Store(store.index_dir, store.dim)
    try:
        want = plain.literal_lookup(terms, 3)
        assert all(want.values())
        monkeypatch.setattr(textcolumn, "MAX_BYTES", 0)
        store.keep_text()
        outcomes = []
        real = Store._literal_narrowed
        monkeypatch.setattr(Store, "_literal_narrowed",
                            lambda self, *a, **k: outcomes.append(real(self, *a, **k)) or outcomes[-1])
        for cap in (5000, 1):
            monkeypatch.setattr(storemod, "LITERAL_NARROW_MAX", cap)
            store.refresh()
            assert store.literal_lookup(terms, 3) == want
        assert outcomes == [[], terms]
    finally:
        plain.close()
