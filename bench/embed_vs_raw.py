"""hippo's embedding path against the raw ONNX int8 model, same file, same tokenizer, same texts, same run.

    python -m bench.embed_vs_raw --repo PATH [--chunks 400] [--reps 3]

Texts are real chunks: the repository at PATH is indexed keyword-only (`hippo index --no-vectors`, into a
throw-away copy of its index dir) and the first `--chunks` chunk rows, in the indexer's vector order, go
through `embed_text` exactly as the vector phase sends them. Systems, run in turns (A B C A B C ...) so
that load from other processes falls on all of them alike:

- **hippo**: `load_embedder()` (hippo's model through its embedding path), called page by page as the
  indexer's vector phase calls it;
- **raw, batch 1**: onnxruntime on the same `model.onnx` with the model directory's tokenizer (same
  truncation), one text per run, mean pooling and L2 norm in numpy: the floor of what any wrapper adds;
- **raw, sorted batches of 8 / 32**: the same, texts sorted by token count and padded only to their batch's
  longest; the best the raw model does on these cores (its vectors differ slightly from batch 1: dynamic int8
  quantisation scales activations per batch, see `LocalModel.onnx_batch`).

Prints chunks per CPU-second (process CPU, all threads) and per wall-second, best of `--reps`, and hippo as
a share of each raw row.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def real_chunks(repo: Path, n: int) -> list[str]:
    """The first `n` texts the vector phase would embed for `repo` (keyword-indexed into a temp dir)."""
    from hippo.index.indexer import embed_text
    from hippo.index.store import Filter, Store

    tmp = Path(tempfile.mkdtemp(prefix="hippo-embed-"))
    try:
        env = {**os.environ, "HIPPO_INDEX_DIR": str(tmp / "idx"), "HIPPO_SERVER": "off", "HIPPO_NO_BACKGROUND_INDEX": "1"}
        subprocess.run([sys.executable, "-m", "hippo", "index", "--no-vectors", "-q", "-C", str(repo)], env=env,
                       check=True)
        store = Store(tmp / "idx", 384)
        rows = store.rows(Filter(embedded=False), columns=["symbol", "breadcrumb", "text"], limit=n * 3)
        texts = list(dict.fromkeys(embed_text(r["symbol"], r["breadcrumb"], r["text"]) for r in rows))
        return texts[:n]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Raw:
    """Bare onnxruntime + tokenizers on the model directory hippo loads."""

    def __init__(self, directory: Path, threads: int, spin: bool = True) -> None:
        import onnxruntime as ort

        from hippo.index.embedding.fastembedder import _fastembed

        _fastembed()
        from fastembed.common.preprocessor_utils import load_tokenizer

        self.tokenizer, _ = load_tokenizer(directory)  # the same truncation and padding fastembed applies
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        if not spin:  # idle worker threads sleep instead of spinning for the next op
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(directory / "model.onnx"), opts, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str], batch: int) -> np.ndarray:
        order = list(range(len(texts)))
        if batch > 1:  # sort by token count so a batch pads only to its own longest text
            lengths = [len(e.ids) for e in self.tokenizer.encode_batch(list(texts))]
            order.sort(key=lambda i: lengths[i])
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), batch):
            idx = order[start:start + batch]
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask,
                                             "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def measure(systems: dict[str, Callable[[list[str]], np.ndarray]], texts: list[str], reps: int) -> dict:
    best: dict[str, list[float]] = {name: [0.0, 0.0] for name in systems}
    vecs: dict[str, np.ndarray] = {}
    for fn in systems.values():
        fn(texts[:4])  # warm-up: first-run allocations are not throughput
    for _ in range(reps):
        for name, fn in systems.items():
            t, c = time.perf_counter(), time.process_time()
            vecs[name] = fn(texts)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            best[name][0] = max(best[name][0], len(texts) / cpu)
            best[name][1] = max(best[name][1], len(texts) / wall)
    return {"rates": best, "vectors": vecs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="repository whose chunks are embedded (default: hippo)")
    ap.add_argument("--chunks", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()

    from hippo.index.embedding import load_embedder, prepare_model
    from hippo.index.embedding.fastembedder import cpu_count
    from hippo.index.indexer import EMBED_WRITE_BATCH

    texts = real_chunks(a.repo.resolve(), a.chunks)
    threads = cpu_count()
    emb = load_embedder()
    raw = Raw(prepare_model(), threads)
    raw1 = Raw(prepare_model(), 1)
    raw_nospin = Raw(prepare_model(), threads, spin=False)
    tokens = [len(e.ids) for e in raw.tokenizer.encode_batch(texts)]

    def hippo(ts: list[str]) -> np.ndarray:
        return np.concatenate([emb.embed_passages(ts[i:i + EMBED_WRITE_BATCH]) for i in range(0, len(ts), EMBED_WRITE_BATCH)])

    systems = {"hippo (load_embedder().embed_passages)": hippo,
               "raw onnxruntime, batch 1": lambda ts: raw.embed(ts, 1),
               f"raw onnxruntime, batch 1, {threads} threads, no spinning": lambda ts: raw_nospin.embed(ts, 1),
               "raw onnxruntime, batch 1, 1 thread": lambda ts: raw1.embed(ts, 1),
               "raw onnxruntime, sorted batches of 8": lambda ts: raw.embed(ts, 8),
               "raw onnxruntime, sorted batches of 32": lambda ts: raw.embed(ts, 32)}
    load0 = os.getloadavg()[0]
    res = measure(systems, texts, a.reps)
    hippo_cpu = res["rates"]["hippo (load_embedder().embed_passages)"][0]
    print(f"{len(texts)} real chunks of {a.repo.resolve().name} (tokens: median {int(np.median(tokens))}, "
          f"max {max(tokens)}, {sum(t >= 256 for t in tokens)} truncated at 256); {threads} threads; "
          f"model {emb.model_id}; load average {load0:.1f} -> {os.getloadavg()[0]:.1f}; best of {a.reps}")
    print("| system | chunks per CPU-s | chunks per wall-s | hippo as a share (CPU) | cos vs raw batch 1 (min) |")
    print("|---|---|---|---|---|")
    ref = res["vectors"]["raw onnxruntime, batch 1"]
    for name, (cpu, wall) in res["rates"].items():
        cos = float((res["vectors"][name] * ref).sum(axis=1).min())
        share = f"{hippo_cpu / cpu:.0%}" if not name.startswith("hippo") else ""
        print(f"| {name} | {cpu:.1f} | {wall:.1f} | {share} | {cos:.4f} |")


if __name__ == "__main__":
    main()
