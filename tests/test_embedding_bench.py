"""Cheap checks of bench/embed_bench.py helpers (the benchmark itself is run by hand)."""
from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent.parent / "bench" / "embed_bench.py"


def _bench():
    spec = importlib.util.spec_from_file_location("embed_bench", BENCH)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_code_chunks_are_full_size_windows() -> None:
    chunks = _bench().code_chunks(12)
    assert len(chunks) == 12
    assert all(len(c) == 1000 for c in chunks)
    assert len(set(chunks)) == 12


def test_load_safetensors_reads_f32_and_strips_prefix(tmp_path: Path) -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ids = np.arange(4, dtype=np.int64)
    header = {
        "__metadata__": {"format": "pt"},
        "bert.embeddings.x.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "embeddings.position_ids": {"dtype": "I64", "shape": [4], "data_offsets": [24, 56]},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + a.tobytes() + ids.tobytes())
    out = _bench().load_safetensors(path)
    assert list(out) == ["embeddings.x.weight"]
    np.testing.assert_array_equal(out["embeddings.x.weight"], a)
