"""The real embedder: fastembed running either hippo's locally built model or a hub model.

For hippo's own model the onnxruntime session fastembed built is rebuilt from the same file with worker
threads that sleep instead of spin between operators (fastembed exposes no such option): on 2 shared cores
the spinning burned more than half the CPU for the same vectors (bench/embed_vs_raw.py: 24 vs 44 chunks per
CPU-second). fastembed's tokenizer, batching, pooling and normalisation stay as they are.

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


NO_SPINNING = (("session.intra_op.allow_spinning", "0"), ("session.inter_op.allow_spinning", "0"))


def load_local(name: str, *, threads: int = 0, batch_size: int | None = None) -> FastEmbedder:
    """Build (once) and load one of hippo's local models through fastembed; never touches the network."""
    from hippo.index.embedding.build import LOCAL_MODELS, prepare_model

    spec = LOCAL_MODELS[name]
    directory = prepare_model(name)
    threads = threads or cpu_count()
    with hub_offline():
        TextEmbedding = _fastembed().TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType

        try:
            TextEmbedding.add_custom_model(
                spec.model_id, pooling=PoolingType.MEAN, normalization=True,
                sources=ModelSource(hf=spec.model_id),  # required field; never contacted (local path below)
                dim=spec.dim, model_file="model.onnx",
            )
        except ValueError as exc:
            if "already registered" not in str(exc):
                raise
        try:
            engine = TextEmbedding(
                spec.model_id, specific_model_path=str(directory), threads=threads,
                cache_dir=str(paths.fastembed_cache_dir()),
            )
            without_spinning(engine, directory / "model.onnx", threads)
        except Exception as exc:  # onnxruntime/tokenizer errors: point at the fix
            raise EmbedderUnavailable(
                f"Could not load the embedding model in {directory} ({type(exc).__name__}); delete that directory to rebuild it."
            ) from exc
    return FastEmbedder(spec.model_id, spec.dim, engine, batch_size or spec.onnx_batch)


def without_spinning(engine: Any, model_path: Any, threads: int) -> None:
    """Replace the session fastembed built for `engine` with one from the same file whose idle worker threads
    sleep. A fastembed whose engine does not hold its session where this one does keeps its own."""
    impl = getattr(engine, "model", None)
    if impl is None or getattr(impl, "model", None) is None:
        return
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = threads
    for key, value in NO_SPINNING:
        opts.add_session_config_entry(key, value)
    impl.model = ort.InferenceSession(str(model_path), sess_options=opts, providers=["CPUExecutionProvider"])


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
