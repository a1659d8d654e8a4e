"""Text -> vectors. The `Embedder` protocol, the offline default model, fastembed hub models, a fake.

Every real model goes through fastembed (`fastembedder`); hippo's own model gets a session whose threads do
not spin. `ortpool` (bare onnxruntime) is the independent check the tests compare graphs with.
Importing this package is cheap (stdlib only): onnxruntime, fastembed, onnx and numpy load inside
`load_embedder` / `prepare_model`, so hooks can import it without paying ~0.5 s.

    emb = load_embedder()                  # hippo/all-MiniLM-L6-v2-int8, built once into $HIPPO_HOME
    emb.embed_passages(["def f(): ..."])   # (n, 384) float32, unit rows
    emb.embed_query("where is f defined")  # (384,)
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from hippo.core.config import DEFAULT_MODEL

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_MODEL", "Embedder", "load_embedder", "model_id_for", "prepare_model"]

FAKE_MODEL = "fake"


@runtime_checkable
class Embedder(Protocol):
    """What the indexer and searcher need from a model. Vectors are float32 and L2-normalised."""

    model_id: str  # changes whenever vectors would change (model or build recipe): stored with the index
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...  # (n, dim)

    def embed_query(self, text: str) -> np.ndarray: ...  # (dim,)


def load_embedder(model: str = DEFAULT_MODEL, *, threads: int = 0, batch_size: int | None = None) -> Embedder:
    """Return a ready embedder. `threads=0` uses all cores. Raises `EmbedderUnavailable` (one line).

    `batch_size` = texts per onnxruntime run; None picks the model's best (1 for the local int8
    model, which also makes its vectors independent of batching; 32 for hub models).

    `"fake"` gives the test embedder; hippo's own model names build locally from PyPI wheels; any
    other name goes to fastembed's hub download (internet needed, cached in $HIPPO_HOME/fastembed).
    """
    if model == FAKE_MODEL:
        from hippo.index.embedding.fake import FakeEmbedder

        return FakeEmbedder()
    from hippo.index.embedding import build, fastembedder

    if build.local_model(model) is not None:
        return fastembedder.load_local(model, threads=threads, batch_size=batch_size)
    return fastembedder.load_hub(model, threads=threads, batch_size=batch_size)


def prepare_model(model: str = DEFAULT_MODEL) -> Path:
    """Build the local model if it is missing and return its directory (no-op when already built)."""
    from hippo.index.embedding import build

    return build.prepare_model(model)


def needs_preparing(model: str = DEFAULT_MODEL) -> bool:
    """True when loading `model` first builds it locally (the one-time int8 build from the PyPI wheel), so a
    caller can say why the first run waits before its first vector."""
    if model == FAKE_MODEL:
        return False
    from hippo.index.embedding import build

    spec = build.local_model(model)
    return spec is not None and not build.is_complete(spec.directory)


def model_id_for(model: str) -> str:
    """The `model_id` an embedder for `model` will report, without loading anything heavy.

    Lets the indexer detect a model/recipe change (and so a needed rebuild) from state.json alone.
    """
    if model == FAKE_MODEL:
        return FAKE_MODEL
    from hippo.index.embedding import build

    spec = build.local_model(model)
    return spec.model_id if spec is not None else model
