"""fastembed for hub models (any fastembed name; hippo's own model runs on bare onnxruntime: `ortpool`).

fastembed (and numpy) are imported only when an embedder is constructed, never at module import,
so `import hippo.index.embedding` stays cheap for hooks.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from hippo.core.errors import EmbedderUnavailable
from hippo.index.embedding import paths

DEFAULT_BATCH = 32


def cpu_count() -> int:
    """Cores this process may use (respects affinity/cgroup pinning where the OS exposes it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Set HF_HUB_OFFLINE=1 for the duration, restoring the previous value afterwards."""
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old


class FastEmbedder:
    """Wraps a `fastembed.TextEmbedding`; guarantees float32, L2-normalised output.

    `batch_size` is how many texts go into one onnxruntime run (default 32). Callers may pass any
    number of texts at once.
    """

    def __init__(self, model_id: str, dim: int, engine: Any, batch_size: int = DEFAULT_BATCH) -> None:
        self.model_id = model_id
        self.dim = dim
        self.batch_size = batch_size
        self._engine = engine

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        batch = list(texts)
        if not batch:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(list(self._engine.passage_embed(batch, batch_size=self.batch_size)), dtype=np.float32)
        return _normalise(vecs)

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.asarray(next(iter(self._engine.query_embed(text))), dtype=np.float32)
        return _normalise(vec[None, :])[0]


def _fastembed() -> Any:
    try:
        import fastembed
    except ImportError as exc:
        raise EmbedderUnavailable("fastembed is not installed; reinstall hippo with `pip install cc-hippo`.") from exc
    return fastembed


def _normalise(vecs: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.maximum(norms, 1e-12)


def load_hub(name: str, *, threads: int = 0, batch_size: int | None = None) -> FastEmbedder:
    """Any fastembed model name; downloads into $HIPPO_HOME/fastembed on first use (needs internet)."""
    TextEmbedding = _fastembed().TextEmbedding

    cache = paths.fastembed_cache_dir()
    try:
        dim = TextEmbedding.get_embedding_size(name)
    except ValueError as exc:
        raise EmbedderUnavailable(f"Unknown embedding model {name!r}; use the default or a fastembed model name.") from exc
    try:
        cache.mkdir(parents=True, exist_ok=True)
        engine = TextEmbedding(name, cache_dir=str(cache), threads=threads or cpu_count())
    except Exception as exc:
        raise EmbedderUnavailable(
            f"Could not load embedding model {name!r} (it downloads on first use and needs internet); "
            f"use the default model instead ({type(exc).__name__})."
        ) from exc
    return FastEmbedder(name, dim, engine, batch_size or DEFAULT_BATCH)
