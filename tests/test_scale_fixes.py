"""Work that grew with the repository on the paths issue 21 measures at 100k files: a keyword search while
vectors are being built (rows the vector phase rewrote were scanned flat), and a first index holding every
file's bytes at once."""
from __future__ import annotations

from fake_embedder import FakeEmbedder
from hippo.core.indexdir import IndexDir
from hippo.index import indexer as indexer_mod
from hippo.index.indexer import index_repo
from hippo.index.state import load_state
from repo_helpers import git, write_files


def _repo(tmp_path, n_files: int = 12):
    root = tmp_path / "repo"
    body = "".join(f"    step_{j} = value * {j}\n" for j in range(28))
    write_files(root, {f"src/mod_{i}.py": "\n\n".join(f"def fn_{i}_{k}(value):\n{body}    return step_27\n"
                                                      for k in range(6)) for i in range(n_files)})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


def _unindexed(root) -> int:
    from hippo.index.store import Store

    store = Store(IndexDir.of(root).path, FakeEmbedder().dim)
    return store.chunks().index_stats("text_idx").num_unindexed_rows


def test_vector_phase_folds_its_rows_into_the_full_text_index(tmp_path, monkeypatch):
    root = _repo(tmp_path, 26)  # 156 chunks: more than a small update's SMALL_UPDATE_VECTORS
    index_repo(root, embedder=FakeEmbedder(), vectors=False)  # keyword phase: every row indexed
    assert _unindexed(root) == 0
    from hippo.index.store import Store

    folds: list[int] = []
    real = Store.optimize

    def counting(self, **kw):
        folds.append(self.chunks().count_rows("embedded = true"))
        return real(self, **kw)

    monkeypatch.setattr(Store, "optimize", counting)
    monkeypatch.setattr(indexer_mod, "VECTOR_FOLD_ROWS", 20)
    monkeypatch.setattr(indexer_mod, "VECTOR_FOLD_SHARE", 0.0)
    monkeypatch.setattr(indexer_mod, "EMBED_WRITE_BATCH", 16)
    report = index_repo(root, embedder=FakeEmbedder())
    total = load_state(IndexDir.of(root).path).chunk_count
    assert report.chunks_embedded and total > indexer_mod.SMALL_UPDATE_VECTORS
    # folded while the phase ran (not only at its end), and nothing is left for a search to scan flat
    assert len(folds) >= 2 and min(folds) < total
    assert _unindexed(root) < 20
    assert load_state(IndexDir.of(root).path).rows_since_optimize == _unindexed(root)  # left to maintenance


def test_vector_phase_fold_waits_out_its_own_cost(monkeypatch):
    monkeypatch.setattr(indexer_mod, "VECTOR_FOLD_ROWS", 10)
    fold = indexer_mod._Fold()
    fold.rows = 9
    assert not fold.due()
    fold.rows = 10
    assert fold.due()
    fold.not_before = indexer_mod.time.monotonic() + 60
    assert not fold.due()


def test_keyword_phase_reads_each_batch_when_it_is_written_not_all_at_once(tmp_path, monkeypatch):
    """A 100k-file first index held every file's bytes before writing the first batch (peak RSS ~2 GB)."""
    from pathlib import Path

    from hippo.index.store import Store

    root = _repo(tmp_path, 9)
    monkeypatch.setattr(indexer_mod, "FILE_BATCH", 2)
    events: list[str] = []
    real_read, real_append = Path.read_bytes, Store.append_rows

    def read(self):
        if self.suffix == ".py":
            events.append(f"read {self.name}")
        return real_read(self)

    def append(self, rows):
        events.append("write")
        return real_append(self, rows)

    monkeypatch.setattr(Path, "read_bytes", read)
    monkeypatch.setattr(Store, "append_rows", append)  # a first build appends (see the next test)
    report = index_repo(root, embedder=FakeEmbedder(), vectors=False)
    assert report.files_changed == 9 and report.files_read == 9
    reads = [i for i, e in enumerate(events) if e.startswith("read")]
    assert len(reads) == 9  # a new file is read once (no hash ahead of its batch: nothing was deleted)
    assert events.index("write") < reads[-1], "every file was read before the first batch was written"
    state = load_state(IndexDir.of(root).path)
    assert len(state.files) == 9 and all(r.chunks == 6 and len(r.sha) == 40 for r in state.files.values())


def test_warm_up_scans_the_text_only_when_the_server_holds_it(tmp_path, monkeypatch):
    """Over textcolumn.MAX_BYTES the warm-up's exact keyword would scan the whole text column (100k files:
    ~18 CPU-s and ~1 GB of the server's memory); it touches the full-text indexes only."""
    from hippo.index import textcolumn
    from hippo.retrieval.search import Searcher
    from hippo.surfaces.service.host import WarmIndex

    root = _repo(tmp_path, 3)
    index_repo(root, embedder=FakeEmbedder())
    calls: list[dict] = []
    real = Searcher.search

    def recording(self, query, **kw):
        calls.append(kw)
        return real(self, query, **kw)

    monkeypatch.setattr(Searcher, "search", recording)
    for cap, exact in ((textcolumn.MAX_BYTES, True), (0, False)):
        monkeypatch.setattr(textcolumn, "MAX_BYTES", cap)
        calls.clear()
        warm = WarmIndex(root, embedder=FakeEmbedder())
        warm.warm()
        assert warm.text_held is exact
        assert [bool(c.get("exact")) for c in calls] == [exact]
        assert bool(calls[0].get("keywords")) is exact
        warm.close()


def test_warm_up_builds_what_a_first_failure_looks_up(tmp_path):
    """The line spans (chunks_at) and the symbol index are built at warm-up, not on the first failure
    hook's clock (1M chunks: ~1.5 CPU-s, which with the machine loaded ran past the hook's 3 s wait)."""
    from hippo.surfaces.service.host import WarmIndex

    root = _repo(tmp_path, 3)
    index_repo(root, embedder=FakeEmbedder())
    warm = WarmIndex(root, embedder=FakeEmbedder())
    warm.warm()
    store = warm._searcher.store
    version = store.table_version()
    assert store._span_cache is not None and store._span_cache[0] == version and store._span_cache[1].ascending
    assert store._symbol_cache is not None and store._symbol_cache[0] == version
    warm.close()


def test_noop_run_does_not_check_known_paths_against_unchanged_rules(tmp_path, monkeypatch):
    """A no-op run at 100k files spent ~1.3 CPU-s checking every known path against the path rules; the
    state remembers the rules its files were admitted under, and a change to them checks them all again."""
    from hippo.index import discovery

    root = _repo(tmp_path, 4)
    index_repo(root, embedder=FakeEmbedder())
    checked: list[str] = []
    real = discovery.PathFilter.path_reason

    def counting(self, rel):
        checked.append(rel)
        return real(self, rel)

    monkeypatch.setattr(discovery.PathFilter, "path_reason", counting)
    index_repo(root, embedder=FakeEmbedder())  # the run that records the rules (the first one did too)
    checked.clear()
    report = index_repo(root, embedder=FakeEmbedder())
    assert report.files_total == 4 and checked == []
    (root / ".hippoignore").write_text("src/mod_0.py\n")  # new rules: every path is checked, one leaves
    report = index_repo(root, embedder=FakeEmbedder())
    assert len(checked) >= 4 and report.files_deleted == 1 and report.files_total == 4  # .hippoignore is text
    checked.clear()
    index_repo(root, embedder=FakeEmbedder())
    # only the files without a record: .hippoignore (untracked, no blob) and the file it leaves out
    assert sorted(checked) == [".hippoignore", "src/mod_0.py"]
    monkeypatch.setattr(discovery, "_rules_code", lambda: b"other rules code")
    checked.clear()
    index_repo(root, embedder=FakeEmbedder())
    assert len(checked) >= 3


def test_noop_run_does_not_check_files_left_out_for_their_content_against_unchanged_rules(tmp_path, monkeypatch):
    """The same for files recorded as minified, generated or binary (4k of the 100k tree): their verdict was
    reached under the recorded rules, so it stands without a check while those rules hold."""
    from hippo.index import discovery

    root = _repo(tmp_path, 2)
    (root / "web").mkdir()
    (root / "web" / "bundle.js").write_text(("var a=1;" * 60 + "\n") * 20)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bundle")
    index_repo(root, embedder=FakeEmbedder())
    index_repo(root, embedder=FakeEmbedder())
    checked: list[str] = []
    real = discovery.PathFilter.path_reason
    monkeypatch.setattr(discovery.PathFilter, "path_reason", lambda self, rel: checked.append(rel) or real(self, rel))
    report = index_repo(root, embedder=FakeEmbedder())
    assert report.files_total == 2 and report.skipped.get("minified") == 1 and checked == []
    (root / ".hippoignore").write_text("docs/\n")  # new rules: the content-skipped file is checked again
    report = index_repo(root, embedder=FakeEmbedder())
    assert "web/bundle.js" in checked and report.skipped.get("minified") == 1


def test_a_build_into_an_empty_table_appends_and_later_runs_merge(tmp_path, monkeypatch):
    """merge_insert joins each batch against the whole table (a 100k-file first index: ~170 CPU-s of LanceDB
    writes); a build into an empty table appends. The rows are the same either way, ids unique."""
    from hippo.index.store import Store

    calls: list[str] = []
    real_add, real_merge = Store.append_rows, Store.replace_files
    monkeypatch.setattr(Store, "append_rows", lambda self, rows: (calls.append("append"), real_add(self, rows))[1])
    monkeypatch.setattr(Store, "replace_files",
                        lambda self, paths, rows: (calls.append("merge"), real_merge(self, paths, rows))[1])
    monkeypatch.setattr(indexer_mod, "FILE_BATCH", 3)
    root = _repo(tmp_path, 7)
    index_repo(root, embedder=FakeEmbedder(), vectors=False)
    assert calls == ["append"] * 3
    store = Store(IndexDir.of(root).path, FakeEmbedder().dim)
    ids = [r["id"] for r in store.rows(columns=["id"])]
    assert len(ids) == len(set(ids)) == 7 * 6
    calls.clear()
    (root / "src" / "mod_1.py").write_text("def changed():\n    return 1\n")
    index_repo(root, embedder=FakeEmbedder(), vectors=False)
    assert calls == ["merge"]
    store.refresh()
    assert store.count() == 6 * 6 + 1
    calls.clear()
    index_repo(root, embedder=FakeEmbedder(), vectors=False, full=True)  # a rebuild starts from an empty table
    assert calls == ["append"] * 3
