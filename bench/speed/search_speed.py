"""Search latency at a given index size, on synthetic rows written straight into the store.

    python -m bench.speed.search_speed --rows N --work DIR [--source DIR]
Rows get text made of real source lines (sampled with a fixed seed) and random unit vectors; the
query vector comes from the tests' fake embedder (tests/fake_embedder.py), so this measures the store +
fusion + ranking path, not the model (the model's query embedding is reported separately). Prints one
JSON line.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path

from bench.fake_model import use_fake
from bench.speed.common import dir_bytes, pct, peak_rss_mb

QUERIES = [
    "where is the config file parsed", "raise an error when the option is missing", "retry the request on timeout",
    "format the help text for a command", "TokenExpiredError", "how are environment variables read",
    "write the lock file atomically", "parse_args", "validate the package name", "cache directory location",
    "progress bar rendering", "convert the value to an integer", "print a warning to stderr",
    "registry authentication token", "shell completion script", "default values for parameters",
]
BATCH = 20_000


def _lines(source: Path | None) -> list[str]:
    lines = []
    if source is not None:
        for p in sorted(source.rglob("*")):
            if p.is_file() and p.suffix in (".py", ".js", ".md", ".rst") and ".git" not in p.parts:
                lines += [ln for ln in p.read_text(encoding="utf-8", errors="replace").split("\n") if ln.strip()]
    return lines or [f"def function_{i}(value):\n    return value + {i}" for i in range(1000)]


def build(index_dir: Path, rows: int, source: Path | None) -> float:
    import numpy as np
    import pyarrow as pa

    from hippo.core.textutil import identifier_text
    from hippo.index.state import IndexState, save_state
    from hippo.index.store import Store, chunk_schema

    rng, nrng = random.Random(7), np.random.default_rng(7)
    pool = _lines(source)
    store = Store(index_dir, 384)
    t = time.perf_counter()
    for start in range(0, rows, BATCH):
        n = min(BATCH, rows - start)
        texts = ["\n".join(rng.choice(pool) for _ in range(12)) for _ in range(n)]
        paths = [f"src/mod{(start + i) // 10:06d}.py" for i in range(n)]
        vecs = nrng.standard_normal((n, 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        cols = {
            "id": [f"c{start + i}" for i in range(n)], "path": paths,
            "start_line": [((start + i) % 10) * 12 + 1 for i in range(n)],
            "end_line": [((start + i) % 10) * 12 + 12 for i in range(n)],
            "language": ["python"] * n, "symbol": [""] * n, "kind": ["lines"] * n, "breadcrumb": [""] * n,
            "text": texts, "text_ids": [identifier_text(tx, p) for tx, p in zip(texts, paths, strict=True)],
            "vkey": [f"v{start + i}" for i in range(n)], "embedded": [True] * n, "graph": [""] * n,
        }
        vector = pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel(), pa.float32()), 384)
        arrays = [vector if f.name == "vector" else pa.array(cols[f.name], type=f.type) for f in chunk_schema(384)]
        table = pa.Table.from_arrays(arrays, schema=chunk_schema(384))
        store.chunks(create=True).add(table)
    store.ensure_indexes()
    save_state(index_dir, IndexState(model_id=use_fake(), dim=384, complete=True, vectors_complete=True))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--source", default="")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    use_fake()
    from fake_embedder import FakeEmbedder
    from hippo.retrieval.search import Searcher

    root = Path(a.work) / f"search-{a.rows}"
    shutil.rmtree(root, ignore_errors=True)
    (root / ".hippo").mkdir(parents=True)
    build_s = build(root / ".hippo", a.rows, Path(a.source) if a.source else None)
    searcher = Searcher(root, embedder=FakeEmbedder())
    out = {"rows": a.rows, "build_s": build_s, "index_bytes": dir_bytes(root / ".hippo" / "db")}
    for mode in ("hybrid", "keyword", "vector"):
        searcher.search(QUERIES[0], mode=mode)  # warm caches
        xs = []
        for _ in range(a.repeat):
            for q in QUERIES:
                t = time.perf_counter()
                searcher.search(q, mode=mode)
                xs.append((time.perf_counter() - t) * 1000)
        out[f"{mode}_p50_ms"], out[f"{mode}_p95_ms"] = pct(xs, 0.5), pct(xs, 0.95)
    out["peak_rss_mb"] = peak_rss_mb()
    shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
