"""Embed with bare onnxruntime + tokenizers (mean pooling, L2 norm), bypassing fastembed.

It reproduces fastembed's pipeline for a BERT model dir, so it serves as an independent check
(tests compare the int8 model against the fp32 graph with it) and as the lighter path a cold
process could use: it skips fastembed's ~0.4 s import.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

TOKENIZER_DIR = Path(__file__).parent / "tokenizer"


class OrtPoolEmbedder:
    """Runs any BERT-style ONNX file with inputs input_ids/attention_mask/token_type_ids."""

    def __init__(self, model_path: Path, tokenizer_dir: Path = TOKENIZER_DIR, *, max_length: int = 256,
                 threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        config = json.loads((tokenizer_dir / "config.json").read_text(encoding="utf-8"))
        pad_id = int(config.get("pad_token_id", 0))
        self.dim = int(config["hidden_size"])
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding(pad_id=pad_id, pad_token="[PAD]")
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
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
