"""Text -> vectors. The `Embedder` protocol, the offline default model, fastembed hub models, plugins.

Every real model goes through fastembed (`fastembedder`); hippo's own model gets a session whose threads do
not spin. `ortpool` (bare onnxruntime) is the independent check the tests compare graphs with.
A model name of the form `module:factory` is a plugin ("bring your own embedder"): hippo imports `module`
and calls `factory()`, which must return an `Embedder` whose `model_id` is that spec. The name comes from
HIPPO_MODEL only (config.ENV_ONLY): a repository's config can never make hippo import a module.
Importing this package is cheap (stdlib only): onnxruntime, fastembed, onnx and numpy load inside
`load_embedder` / `prepare_model`, so hooks can import it without paying ~0.5 s.

    emb = load_embedder()                  # hippo/all-MiniLM-L6-v2-int8, built once into $HIPPO_HOME
    emb.embed_passages(["def f(): ..."])   # (n, 384) float32, unit rows
    emb.embed_query("where is f defined")  # (384,)
    load_embedder("mypkg.embed:make")      # a plugin: mypkg.embed.make()
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from hippo.core.config import DEFAULT_MODEL
from hippo.core.errors import EmbedderUnavailable

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_MODEL", "Embedder", "is_plugin", "load_embedder", "model_id_for", "prepare_model"]

# `module:factory` (a dotted module path, then one identifier): a plugin embedder. Hub names have no colon.
_PLUGIN_SPEC = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


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

    A `module:factory` spec loads a plugin (see `is_plugin`); hippo's own model names build locally from
    PyPI wheels; any other name goes to fastembed's hub download (internet needed, cached in
    $HIPPO_HOME/fastembed).
    """
    if is_plugin(model):
        return _load_plugin(model)
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
    if is_plugin(model):
        return False
    from hippo.index.embedding import build

    spec = build.local_model(model)
    return spec is not None and not build.is_complete(spec.directory)


def model_id_for(model: str) -> str:
    """The `model_id` an embedder for `model` will report, without loading anything heavy.

    Lets the indexer detect a model/recipe change (and so a needed rebuild) from state.json alone.
    """
    if is_plugin(model):
        return model  # a plugin reports its spec as model_id (checked when it loads)
    from hippo.index.embedding import build

    spec = build.local_model(model)
    return spec.model_id if spec is not None else model


def is_plugin(model: str) -> bool:
    """True when `model` is a `module:factory` spec: an embedder hippo imports instead of a model it builds
    or downloads."""
    return _PLUGIN_SPEC.fullmatch(model) is not None


def _load_plugin(spec: str) -> Embedder:
    """Import `module`, call `factory()`, check the result is an `Embedder` reporting `spec` as its model_id.

    Whatever goes wrong (no such module, an error while importing or in the factory, an object that is not
    an embedder) becomes one `EmbedderUnavailable` line naming the spec.
    """
    module_name, _, factory_name = spec.partition(":")
    where = f"Embedder plugin {spec} (HIPPO_MODEL)"
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or anything the module raises while it is imported
        raise EmbedderUnavailable(f"{where}: cannot import {module_name} ({_one_line(exc)}); "
                                  "is it installed or on PYTHONPATH?") from exc
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise EmbedderUnavailable(f"{where}: {module_name} has no callable {factory_name}.")
    try:
        embedder = factory()
    except Exception as exc:
        raise EmbedderUnavailable(f"{where}: {factory_name}() failed ({_one_line(exc)}).") from exc
    dim = getattr(embedder, "dim", None)
    if not isinstance(embedder, Embedder) or not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0:
        raise EmbedderUnavailable(f"{where}: {factory_name}() returned a {type(embedder).__name__}, not an "
                                  "embedder (it needs model_id, an int dim, embed_passages and embed_query).")
    if embedder.model_id != spec:
        raise EmbedderUnavailable(f"{where}: the embedder reports model_id {_short(embedder.model_id)}; a plugin "
                                  f"must report its spec {spec!r}, so hippo knows when its vectors need rebuilding.")
    return embedder


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return _short(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, quote=False)


def _short(value: object, limit: int = 160, *, quote: bool = True) -> str:
    text = repr(value) if quote else str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
