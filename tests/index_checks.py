"""Is an index fresh? Its rows compared with a fresh full index of the same tree, plus small repo content."""
from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import time
from pathlib import Path

from fake_embedder import FakeEmbedder
from hippo.core.config import load_settings
from hippo.core.indexdir import IndexDir
from hippo.index.indexer import embed_text, index_repo
from hippo.index.state import RACY_NS, load_state

# Small distinct units; files are built from them so content recurs across files and branches.
UNITS = [f"def unit_{i}(value):\n    total = value * {i + 2}\n    return total + {i}\n" for i in range(12)]


def content_of(rows: list[dict]) -> set[tuple[str, int, int, str]]:
    return {(r["path"], r["start_line"], r["end_line"], hashlib.sha1(r["text"].encode()).hexdigest())
            for r in rows}


def embed_texts_of(rows: list[dict]) -> set[str]:
    return {embed_text(r["symbol"], r["breadcrumb"], r["text"]) for r in rows}


def fresh_rows(root: Path) -> list[dict]:
    """Rows of a from-scratch index of `root`'s current tree, built in a throwaway directory."""
    with tempfile.TemporaryDirectory(prefix="hippo-fresh-") as tmp:
        settings = dataclasses.replace(load_settings(root), index_dir=str(Path(tmp) / "idx"))
        index_repo(root, settings, embedder=FakeEmbedder(), full=True)
        if not (Path(tmp) / "idx" / "db").exists():
            return []
        try:
            return index_rows(Path(tmp) / "idx")
        except AssertionError:
            return []


DOC = "# Notes\n\nSome prose about the project.\n\n## Usage\n\nRun it with care.\n"


def py(*units: int) -> str:
    return "\n\n".join(UNITS[u % len(UNITS)] for u in units)


def index_rows(index_dir: Path) -> list[dict]:
    from hippo.index.store import Store

    state = load_state(index_dir)
    assert state is not None, "no state.json"
    store = Store(index_dir, state.dim)
    try:
        return store.rows(columns=["path", "start_line", "end_line", "text", "symbol", "breadcrumb", "embedded"])
    finally:
        store.close()


def index_content(root: Path) -> set[tuple[str, int, int, str]]:
    """(path, start, end, content hash) of every chunk in the repo's own index; all must be embedded."""
    rows = index_rows(IndexDir.of(root, load_settings(root)).path)
    assert all(r["embedded"] for r in rows), "index left chunks without vectors"
    return content_of(rows)


def fresh_content(root: Path) -> set[tuple[str, int, int, str]]:
    return content_of(fresh_rows(root))


def settle() -> None:
    """Let the racy-stat window pass, so files written just before a listing count as settled."""
    time.sleep(RACY_NS / 1e9 + 0.02)


def assert_fresh(root: Path, emb: FakeEmbedder | None = None, before: int = 0) -> None:
    """The index equals a fresh full index; with `emb`, texts it embedded since `before` were all needed
    now and none had been embedded before (vectors are reused, never recomputed)."""
    rows = fresh_rows(root)
    assert index_content(root) == content_of(rows)
    if emb is not None:
        new = emb.texts[before:]
        assert len(set(new)) == len(new) and not set(new) & set(emb.texts[:before])
        assert set(new) <= embed_texts_of(rows)


def chunking_fails_on(monkeypatch, failing: str) -> None:
    """Make chunking raise for the file `failing` (what a grammar's recursion limit does on a hostile file);
    every other file chunks as usual."""
    import hippo.index.chunking

    real = hippo.index.chunking.chunk_file

    def chunk_file(path, text, **kw):
        if path == failing:
            raise RecursionError("maximum recursion depth exceeded")
        return real(path, text, **kw)

    monkeypatch.setattr(hippo.index.chunking, "chunk_file", chunk_file)
