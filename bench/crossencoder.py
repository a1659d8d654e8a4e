"""Latency of the optional cross-encoder (HIPPO_RERANK_MODEL) at the shape of a real one, offline.

    python -m bench.crossencoder [--layers 6] [--pairs 10,20,30] [--reps 3] [--int8]

No cross-encoder's weights can be had here (the hub is out of reach and no PyPI package ships one), so
this builds a BERT cross-encoder of ms-marco-MiniLM-L-6-v2's shape (6 layers, hidden 384, 12 heads,
intermediate 1536, the uncased 30,522-word vocabulary; random weights, a pooler and a one-logit head)
with hippo's own ONNX graph writer, loads it through `rerank.CrossEncoderReranker` (fastembed's
TextCrossEncoder, as a configured local folder is loaded) and times the pairs search would send it: the
query and real code chunks of about 1,000 characters. Its scores mean nothing; its cost is the real
model's cost. Prints CPU and wall milliseconds per search at each depth.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json", "vocab.txt")


def build(folder: Path, *, layers: int = 6, hidden: int = 384, heads: int = 12, intermediate: int = 1536,
          positions: int = 512, seed: int = 0) -> Path:
    """Write a BERT cross-encoder (model.onnx: input_ids, attention_mask, token_type_ids -> logits [batch, 1])
    with random weights and hippo's vendored uncased tokenizer into `folder`."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from hippo.index.embedding import graph as bert

    tok_dir = Path(bert.__file__).with_name("tokenizer")
    vocab = len((tok_dir / "vocab.txt").read_text(encoding="utf-8").splitlines())
    rng = np.random.default_rng(seed)

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    w: dict[str, np.ndarray] = {"embeddings.word_embeddings.weight": rand(vocab, hidden),
                                "embeddings.position_embeddings.weight": rand(positions, hidden),
                                "embeddings.token_type_embeddings.weight": rand(2, hidden),
                                "embeddings.LayerNorm.weight": np.ones(hidden, np.float32),
                                "embeddings.LayerNorm.bias": np.zeros(hidden, np.float32)}
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for name, (o, n) in {"attention.self.query": (hidden, hidden), "attention.self.key": (hidden, hidden),
                             "attention.self.value": (hidden, hidden), "attention.output.dense": (hidden, hidden),
                             "intermediate.dense": (intermediate, hidden), "output.dense": (hidden, intermediate)}.items():
            w[f"{p}.{name}.weight"], w[f"{p}.{name}.bias"] = rand(o, n), np.zeros(o, np.float32)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"{p}.{ln}.weight"], w[f"{p}.{ln}.bias"] = np.ones(hidden, np.float32), np.zeros(hidden, np.float32)
    config = {"hidden_size": hidden, "num_attention_heads": heads, "num_hidden_layers": layers}
    model = bert.build_bert_graph(w, config)
    g = model.graph
    del g.output[:]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "cls_index"),
             numpy_helper.from_array(rand(hidden, hidden), "pooler_w"),
             numpy_helper.from_array(np.zeros(hidden, np.float32), "pooler_b"),
             numpy_helper.from_array(rand(hidden, 1), "classifier_w"),
             numpy_helper.from_array(np.zeros(1, np.float32), "classifier_b")]
    g.initializer.extend(inits)
    g.node.extend([  # [CLS] -> dense + tanh (BERT's pooler) -> one relevance logit
        helper.make_node("Gather", ["last_hidden_state", "cls_index"], ["cls3"], axis=1),
        helper.make_node("Squeeze", ["cls3", "squeeze_axes"], ["cls"]),
        helper.make_node("MatMul", ["cls", "pooler_w"], ["pool_mm"]),
        helper.make_node("Add", ["pool_mm", "pooler_b"], ["pool_lin"]),
        helper.make_node("Tanh", ["pool_lin"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "classifier_w"], ["logit_mm"]),
        helper.make_node("Add", ["logit_mm", "classifier_b"], ["logits"])])
    g.initializer.append(numpy_helper.from_array(np.array([1], np.int64), "squeeze_axes"))
    g.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1]))
    onnx.checker.check_model(model)
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / "model.onnx"))
    for name in TOKENIZER_FILES:
        shutil.copyfile(tok_dir / name, folder / name)
    return folder


def chunks(n: int, size: int = 1000) -> list[str]:
    """`n` real code chunks of about `size` characters (hippo's own sources)."""
    out: list[str] = []
    for path in sorted((REPO / "lib" / "hippo").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out += [text[i:i + size] for i in range(0, len(text) - size, size)]
        if len(out) >= n:
            break
    return out[:n]


def main() -> None:
    from hippo.retrieval import rerank

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--pairs", default="10,20,30")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--int8", action="store_true", help="quantize it as hippo quantizes its embedding model")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(Path(tmp) / "ce", layers=a.layers)
        if a.int8:
            from hippo.index.embedding.build import quantize

            fp32 = folder / "model.onnx"
            quantize(fp32, folder / "model.int8.onnx")
            (folder / "model.int8.onnx").replace(fp32)
        t, c = time.perf_counter(), time.process_time()
        enc = rerank.CrossEncoderReranker(str(folder), threads=1)
        enc.scores("warm up", ["x"])
        print(f"load: {(time.perf_counter() - t) * 1000:.0f} ms wall, {(time.process_time() - c) * 1000:.0f} ms CPU "
              f"({(folder / 'model.onnx').stat().st_size / 1e6:.1f} MB, {a.layers} layers"
              f"{', int8' if a.int8 else ''}; 1 thread)")
        query = "how does the client retry a request after a timeout"
        print("| pairs | wall ms (median) | CPU ms (median) | CPU ms per pair |\n|---|---|---|---|")
        for n in (int(x) for x in a.pairs.split(",")):
            texts = chunks(n)
            walls, cpus = [], []
            for _ in range(a.reps):
                t, c = time.perf_counter(), time.process_time()
                enc.scores(query, texts)
                walls.append((time.perf_counter() - t) * 1000)
                cpus.append((time.process_time() - c) * 1000)
            walls.sort()
            cpus.sort()
            print(f"| {n} | {walls[len(walls) // 2]:.0f} | {cpus[len(cpus) // 2]:.0f} | {cpus[len(cpus) // 2] / n:.1f} |")


if __name__ == "__main__":
    main()
