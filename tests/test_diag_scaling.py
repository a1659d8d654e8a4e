"""Per-failure work that must not grow with the repo: the diagnosis reads the index's file list by
membership, and resolves a cwd-relative traceback path through a by-name table built once per index
state, not through a scan of every indexed path per frame."""
from __future__ import annotations

from types import SimpleNamespace

from hippo.push.diagnosis.pipeline import Collector
from hippo.push.diagnosis.signals import extract


class CountingFiles(dict):
    """An index's path -> record map that counts how often it is walked whole."""

    walks = 0

    def __iter__(self):
        CountingFiles.walks += 1
        return super().__iter__()


def test_frames_resolve_without_walking_every_indexed_path_per_failure():
    files = CountingFiles({f"pkg{i}/mod{i}.py": None for i in range(5000)})
    files["py/shop/cart.py"] = files["py/shop/main.py"] = files["other/shop/main.py"] = None
    searcher = SimpleNamespace(root="/r", state=SimpleNamespace(files=files))
    sig = extract("boom", cwd="/r", root="/r")
    for _ in range(5):  # five failures against one index state
        c = Collector(searcher, sig, live=None, mode="keyword")
        assert c._resolve("shop/cart.py") == "py/shop/cart.py"
        assert c._resolve("shop/main.py") is None  # two indexed files end so: ambiguous
        assert c._resolve("pkg7/mod7.py") == "pkg7/mod7.py"
        assert c._resolve("nowhere.py") is None
    assert CountingFiles.walks <= 1
