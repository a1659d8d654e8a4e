"""Write a minimal BERT encoder as an ONNX graph straight from a weight dict (no torch).

The graph holds only what inference needs: embeddings, 6 (or `num_hidden_layers`) encoder layers
with plain MatMul attention and exact GELU, output `last_hidden_state`. Fewer ops than a torch
export means `quantize_dynamic` turns every projection into an int8 MatMul and nothing else is
left running in fp32 around it. Inputs match what fastembed feeds a BERT model.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

OPSET = 17  # LayerNormalization is a standard op from 17 on
IR_VERSION = 8  # old enough for every onnxruntime fastembed supports
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class _GraphWriter:
    """Accumulates nodes/initializers with generated, deterministic names."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._consts: dict[str, str] = {}

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        if name not in self._consts:
            self.inits.append(numpy_helper.from_array(value, name))
            self._consts[name] = name
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        from onnx import helper

        out = f"t{len(self.nodes)}_{op_type.lower()}"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"n{len(self.nodes)}", **attrs))
        return out


def build_bert_graph(weights: dict[str, np.ndarray], config: dict[str, Any]) -> Any:
    """Return an `onnx.ModelProto` for a BERT encoder; linear weights are given HF-style ([out, in])."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    layers = int(config["num_hidden_layers"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    head_dim = hidden // heads
    g = _GraphWriter()
    f32 = np.float32

    one = g.const("c_one_f", np.array(1.0, f32))
    half = g.const("c_half_f", np.array(0.5, f32))
    rsqrt2 = g.const("c_rsqrt2_f", np.array(1.0 / np.sqrt(2.0), f32))

    def linear(x: str, prefix: str) -> str:
        w = g.const(f"{prefix}.weight_t", np.ascontiguousarray(weights[f"{prefix}.weight"].T.astype(f32)))
        b = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(f32))
        return g.op("Add", [g.op("MatMul", [x, w]), b])

    def layer_norm(x: str, prefix: str) -> str:
        gamma = g.const(f"{prefix}.weight", weights[f"{prefix}.weight"].astype(f32))
        beta = g.const(f"{prefix}.bias", weights[f"{prefix}.bias"].astype(f32))
        return g.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    # Embeddings: word + position(0..seq-1) + token type, then LayerNorm.
    seq_len = g.op("Gather", [g.op("Shape", ["input_ids"]), g.const("c_one_i", np.array(1, np.int64))], axis=0)
    positions = g.op("Range", [g.const("c_zero_i", np.array(0, np.int64)), seq_len, "c_one_i"])
    word = g.op("Gather", [g.const("word_emb", weights["embeddings.word_embeddings.weight"]), "input_ids"])
    pos = g.op("Gather", [g.const("pos_emb", weights["embeddings.position_embeddings.weight"]), positions])
    typ = g.op("Gather", [g.const("type_emb", weights["embeddings.token_type_embeddings.weight"]), "token_type_ids"])
    x = layer_norm(g.op("Add", [g.op("Add", [word, pos]), typ]), "embeddings.LayerNorm")

    # Additive attention bias: 0 where attended, -10000 on padding; shape (batch, 1, 1, seq).
    keep = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    masked = g.op("Mul", [g.op("Sub", [one, keep]), g.const("c_mask_neg", np.array(-10000.0, f32))])
    bias = g.op("Unsqueeze", [masked, g.const("c_axes_12", np.array([1, 2], np.int64))])

    split_heads = g.const("c_split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = g.const("c_merge_heads", np.array([0, 0, hidden], np.int64))
    inv_sqrt_d = g.const("c_inv_sqrt_d", np.array(1.0 / np.sqrt(head_dim), f32))

    for i in range(layers):
        p = f"encoder.layer.{i}"

        def heads_of(name: str, perm: list[int]) -> str:
            # called within this iteration only, so the loop's current x and p are the ones meant
            return g.op("Transpose", [g.op("Reshape", [linear(x, f"{p}.attention.self.{name}"), split_heads])],  # noqa: B023
                        perm=perm)

        q = heads_of("query", [0, 2, 1, 3])  # (b, h, s, d)
        k = heads_of("key", [0, 2, 3, 1])  # (b, h, d, s): pre-transposed for q @ k
        v = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), inv_sqrt_d]), bias])
        context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(g.op("Add", [x, linear(context, f"{p}.attention.output.dense")]), f"{p}.attention.output.LayerNorm")

        h = linear(x, f"{p}.intermediate.dense")  # exact GELU: h * 0.5 * (1 + erf(h / sqrt 2))
        gelu = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [g.op("Erf", [g.op("Mul", [h, rsqrt2])]), one])])
        x = layer_norm(g.op("Add", [x, linear(gelu, f"{p}.output.dense")]), f"{p}.output.LayerNorm")

    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in INPUTS]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])]
    graph = helper.make_graph(g.nodes, "hippo_bert", inputs, outputs, g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hippo")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def save_model(model: Any, path: Path) -> None:
    import onnx

    onnx.save(model, str(path))
