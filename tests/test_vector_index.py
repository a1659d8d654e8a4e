"""Big tables get an IVF_PQ vector index; search keeps finding the same things through it."""
from __future__ import annotations

import hippo.index.store as store_mod
from fake_embedder import FakeEmbedder
from hippo.index.indexer import index_repo
from hippo.retrieval.search import Searcher
from repo_helpers import git, write_files


def test_vector_index_built_above_threshold_and_search_still_finds(tmp_path, monkeypatch):
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {f"pkg/mod_{i}.py": f"def handler_{i}(request):\n    '''Serve topic {i} of the catalogue.'''\n"
                                f"    return render('page_{i}', request, weight={i})\n" for i in range(420)}
    files["pkg/billing.py"] = "def charge_card(amount):\n    '''Charge the customer's credit card.'''\n    return gateway.charge(amount)\n"
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init")
    emb = FakeEmbedder()
    monkeypatch.setattr(store_mod, "VECTOR_INDEX_MIN_ROWS", 10_000)
    assert not index_repo(root, embedder=emb).vector_index_built  # below the threshold: flat search
    monkeypatch.setattr(store_mod, "VECTOR_INDEX_MIN_ROWS", 300)
    (root / "pkg" / "extra.py").write_text("def extra():\n    return 1\n")
    report = index_repo(root, embedder=emb)
    assert report.vector_index_built
    s = Searcher(root, embedder=emb)
    assert "vector_idx" in {i.name for i in s.store.chunks().list_indices()}
    resp = s.search("charge the customer's credit card", mode="vector")
    assert resp.hits and resp.hits[0].path == "pkg/billing.py"
