"""Code-graph benchmark: what the graph costs at index time, and whether `hippo def` finds the right
definition for names taken from real call sites.

    python bench/graph_bench.py [--packages networkx,pip] [--repeat 3] [--sample 400] [--json FILE]

Each corpus is an installed package (plus hippo's own lib/) copied into a temp git repo. Two parts:

- **index time**: full index runs (fake embedder, so the model does not drown the difference) with the
  graph and with it switched off, best of --repeat each; and the chunking step alone (CPU only).
- **names**: call sites sampled from the code itself (not from the definitions list); the oracle is
  Python: the called name evaluated in the imported module (`mod.attr`, `Class.method` for `self.x`), its
  source file and lines from `inspect`. A site counts when the oracle lands in the corpus. Reported: the
  call site resolved by the graph (first definition == oracle), `hippo def` with the oracle's qualified
  name (`pkg.mod.Class.method`), and with the bare name (ambiguous by nature; shown for scale).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import random
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "lib"), str(Path(__file__).resolve().parents[1])]

from bench.fake_model import use_fake  # noqa: E402
from bench.freshness_bench import git  # noqa: E402
from hippo.index import indexer as indexer_mod  # noqa: E402
from hippo.index.chunking import chunk_file  # noqa: E402
from hippo.index.indexer import index_repo  # noqa: E402
from hippo.index.state import load_state  # noqa: E402
from hippo.index.store import Store  # noqa: E402
from hippo.retrieval.codegraph import EXACT, CodeGraph, Def, graph_for  # noqa: E402

use_fake()
from fake_embedder import FakeEmbedder  # noqa: E402  (tests/fake_embedder.py, on sys.path now)

ROOT = Path(__file__).resolve().parents[1]


def make_corpus(name: str, base: Path) -> tuple[Path, Path]:
    """(repo root, the directory the package sits in) for an installed package or "hippo"."""
    root = base / name
    if name == "hippo":
        src = ROOT / "lib" / "hippo"
        dest = root / "lib" / "hippo"
    else:
        src = Path(sysconfig.get_paths()["purelib"]) / name
        dest = root / name
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.pyd"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "corpus")
    return root, dest.parent


def _no_graph(rel: str, data: bytes, graph: list | None = None):
    return _real_chunks_for_file(rel, data, None)


_real_chunks_for_file = indexer_mod.chunks_for_file


def index_times(root: Path, repeat: int) -> dict:
    out: dict[str, list[float]] = {"with": [], "without": []}
    cpu: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(repeat):
        for mode in ("without", "with"):  # interleaved, so a burst of load on the shared box hits both
            shutil.rmtree(root / ".hippo", ignore_errors=True)
            indexer_mod.chunks_for_file = _real_chunks_for_file if mode == "with" else _no_graph
            try:
                t, c = time.perf_counter(), time.process_time()
                index_repo(root, embedder=FakeEmbedder())
                out[mode].append(time.perf_counter() - t)
                cpu[mode].append(time.process_time() - c)
            finally:
                indexer_mod.chunks_for_file = _real_chunks_for_file
    files = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts and ".hippo" not in p.parts]
    texts = [(str(p.relative_to(root)), p.read_text("utf-8", "replace")) for p in files if p.suffix in (".py", ".js", ".ts")]
    chunk = {"with": [], "without": []}
    for _ in range(repeat):
        for mode in ("without", "with"):
            t = time.perf_counter()
            for rel, text in texts:
                chunk_file(rel, text, graph=[] if mode == "with" else None)
            chunk[mode].append(time.perf_counter() - t)
    st = Store(root / ".hippo", load_state(root / ".hippo").dim)
    graphs = st.file_graphs()
    st.close()
    return {"files": len(texts), "index_without": min(out["without"]), "index_with": min(out["with"]),
            "cpu_without": min(cpu["without"]), "cpu_with": min(cpu["with"]),
            "chunk_without": min(chunk["without"]), "chunk_with": min(chunk["with"]),
            "graph_bytes": sum(len(g) for g in graphs.values())}


def _oracle(module, call, pkg_dir: Path, package: str):
    """(relative path, first line, last line, qualified name) of what the call site calls, by Python."""
    parts = call.callee.split(".")
    try:
        if parts[0] in ("self", "cls"):
            if call.within is None or "." not in call.within.qual:
                return None
            obj = getattr(module, call.within.qual.split(".")[0])
            parts = parts[1:]
        else:
            obj = vars(module)[parts[0]]
            parts = parts[1:]
        for p in parts:
            obj = inspect.getattr_static(obj, p)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            return None
        obj = inspect.unwrap(obj)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            return None
        src = Path(inspect.getsourcefile(obj) or "").resolve()
        lines, first = inspect.getsourcelines(obj)
    except Exception:  # noqa: BLE001 - anything Python cannot answer is left out of the name set
        return None
    try:
        rel = src.relative_to(pkg_dir.resolve())
    except ValueError:
        return None
    if rel.parts[0] != package:  # defined outside the corpus (pytest, the standard library)
        return None
    return str(rel), first, first + len(lines) - 1, f"{obj.__module__}.{obj.__qualname__}"


def _same(d: Def | None, oracle, prefix: str) -> bool:
    if d is None:
        return False
    path, first, last, _ = oracle
    return d.path == prefix + path and first <= d.start <= last


def name_accuracy(root: Path, package: str, pkg_parent: Path, site_dir: Path, sample: int, seed: int = 7) -> dict:
    st = Store(root / ".hippo", load_state(root / ".hippo").dim)
    g: CodeGraph = graph_for(st)
    st.close()
    prefix = str(pkg_parent.relative_to(root)) + "/" if pkg_parent != root else ""
    calls = [c for f in g.files.values() for c in f.calls
             if c.path.endswith(".py") and not c.callee.startswith(".") and c.callee.split(".")[0] != "super"]
    random.Random(seed).shuffle(calls)
    counts = {"sites": 0, "resolved_first": 0, "resolved_exact": 0, "def_qualified": 0, "def_bare": 0}
    misses: list[str] = []
    sys.path.insert(0, str(site_dir))
    try:
        for c in calls:
            if counts["sites"] >= sample:
                break
            mod_name = c.path[len(prefix):].removesuffix(".py").replace("/", ".").removesuffix(".__init__")
            if mod_name.endswith("__main__"):
                continue  # importing it would run the program
            try:
                module = importlib.import_module(mod_name)
            except BaseException:  # noqa: BLE001 - pytest's importorskip raises a BaseException
                continue
            oracle = _oracle(module, c, site_dir, package)
            if oracle is None:
                continue
            counts["sites"] += 1
            found, how = g.resolve(c)
            ok = _same(found[0] if found else None, oracle, prefix)
            counts["resolved_first"] += ok
            counts["resolved_exact"] += ok and how == EXACT
            if not ok and len(misses) < 12:
                misses.append(f"{c.path}:{c.line} {c.callee} -> {[(d.path, d.qual) for d in found[:2]]} want {oracle}")
            counts["def_qualified"] += _same(next(iter(g.find(oracle[3])), None), oracle, prefix)
            counts["def_bare"] += _same(next(iter(g.find(oracle[3].rsplit(".", 1)[-1])), None), oracle, prefix)
    finally:
        sys.path.remove(str(site_dir))
    return {**counts, "misses": misses}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packages", default="hippo,networkx")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sample", type=int, default=400)
    ap.add_argument("--skip-index", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.packages.split(","):
            root, parent = make_corpus(name, Path(tmp))
            res: dict = {}
            if not args.skip_index:
                res["index"] = index_times(root, args.repeat)
            else:
                index_repo(root, embedder=FakeEmbedder())
            site = ROOT / "lib" if name == "hippo" else Path(sysconfig.get_paths()["purelib"])
            res["names"] = name_accuracy(root, name, parent, site, args.sample)
            results[name] = res
    if not args.skip_index:
        print("| corpus | code files | index wall without / with graph (s) | growth | index CPU without / with (s) "
              "| growth | chunking alone without / with (s) | graph JSON |")
        print("|---|---|---|---|---|---|---|---|")
        for name, r in results.items():
            i = r["index"]
            print(f"| {name} | {i['files']} | {i['index_without']:.2f} / {i['index_with']:.2f} | "
                  f"{(i['index_with'] / i['index_without'] - 1) * 100:+.1f}% | {i['cpu_without']:.2f} / "
                  f"{i['cpu_with']:.2f} | {(i['cpu_with'] / i['cpu_without'] - 1) * 100:+.1f}% | "
                  f"{i['chunk_without']:.2f} / {i['chunk_with']:.2f} | {i['graph_bytes'] / 1024:.0f} KiB |")
        print()
    print("| corpus | call sites (oracle in corpus) | call site resolved, first = oracle | of which by import/scope "
          "| `def` qualified name first | `def` bare name first |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        n = r["names"]
        s = max(n["sites"], 1)
        print(f"| {name} | {n['sites']} | {n['resolved_first'] / s:.3f} | {n['resolved_exact'] / s:.3f} | "
              f"{n['def_qualified'] / s:.3f} | {n['def_bare'] / s:.3f} |")
    for name, r in results.items():
        for m in r["names"]["misses"]:
            print(f"  miss {name}: {m}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
