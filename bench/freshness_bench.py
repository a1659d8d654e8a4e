"""Freshness benchmark: full vs incremental index times, no-op time, and index growth under churn.

    python bench/freshness_bench.py [--files 4000] [--noop-files 10000] [--updates 500] [--model NAME]

Builds temp git repos from the text sources installed in this interpreter's site-packages (real code:
numpy, onnx, pip, pygments, ...), then measures in-process with the given embedder (default: the tests'
fake one, tests/fake_embedder.py, so the full build is not dominated by the model; see --model). Prints a
table; --json writes raw numbers too. Nothing is downloaded.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "lib"), str(Path(__file__).resolve().parents[1])]

from bench.fake_model import use_fake  # noqa: E402
from hippo.core.config import load_settings  # noqa: E402
from hippo.index.indexer import Indexer  # noqa: E402

TEXT_EXTS = {".py", ".pyi", ".md", ".rst", ".txt", ".c", ".h", ".js", ".ts", ".toml", ".cfg"}
SKIP_DIRS = {"__pycache__", "tests", "test"}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env).stdout.decode()


def source_files(limit: int) -> list[Path]:
    """Up to `limit` real text source files from site-packages (sorted, so runs are comparable)."""
    site = Path(sysconfig.get_paths()["purelib"])
    out: list[Path] = []
    for pkg in sorted(p for p in site.iterdir() if p.is_dir() and not p.name.endswith((".dist-info", ".egg-info"))):
        for dirpath, dirs, files in os.walk(pkg):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            for f in sorted(files):
                p = Path(dirpath) / f
                if p.suffix in TEXT_EXTS and 200 < p.stat().st_size < 200_000:
                    out.append(p)
                    if len(out) >= limit:
                        return out
    return out


def build_repo(root: Path, n: int) -> list[str]:
    """A git repo of n files copied from site-packages (cycled into copyK/ folders if needed)."""
    site = Path(sysconfig.get_paths()["purelib"])
    src = source_files(n)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    rels = []
    for i in range(n):
        s = src[i % len(src)]
        rel = s.relative_to(site).as_posix()
        if i >= len(src):
            rel = f"copy{i // len(src)}/{rel}"
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(s, dst)
        rels.append(rel)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "import")
    return rels


def run_index(root: Path, embedder, **kw):
    t = time.perf_counter()
    report = Indexer(root, load_settings(root), embedder=embedder).run(**kw)
    return time.perf_counter() - t, report


def edit(root: Path, rel: str, tag: str) -> None:
    p = root / rel
    with open(p, "a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef bench_added_{tag}(value):\n    return value  # {tag}\n")


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def make_embedder(model: str):
    from hippo.index.embedding import load_embedder

    return load_embedder(model)


def bench_main(work: Path, files: int, model: str, out: dict) -> None:
    root = work / "main"
    rels = build_repo(root, files)
    emb = make_embedder(model)
    t_full, rep = run_index(root, emb)
    out["files"], out["chunks"] = rep.files_total, rep.chunks_written
    out["full_s"] = t_full
    edit(root, rels[len(rels) // 2], "one")
    out["one_file_s"], r1 = run_index(root, emb)
    out["one_file_embedded"] = r1.chunks_embedded
    out["one_file_keyword_ready_s"] = r1.keyword_ready_seconds
    for k, rel in enumerate(rels[::max(1, len(rels) // 50)][:50]):
        edit(root, rel, f"fifty{k}")
    out["fifty_files_s"], r50 = run_index(root, emb)
    out["fifty_files_changed"] = r50.files_changed
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "edits")
    run_index(root, emb)
    git(root, "checkout", "-q", "-b", "topic")
    touched = rels[::10]
    for k, rel in enumerate(touched):
        edit(root, rel, f"topic{k}")
    git(root, "commit", "-qam", "topic work")
    git(root, "checkout", "-q", "main")
    run_index(root, emb)
    git(root, "checkout", "-q", "topic")
    out["switch_s"], rs = run_index(root, emb)
    out["switch_files"] = rs.files_changed
    git(root, "checkout", "-q", "main")
    out["switch_back_s"], rb = run_index(root, emb)
    out["switch_back_embedded"] = rb.chunks_embedded
    noops = [run_index(root, emb)[0] for _ in range(5)]
    out["noop_s"] = statistics.median(noops)


def bench_noop(work: Path, n: int, out: dict) -> None:
    """No-op cost on an n-file repo: in-process and as a `hippo index` command (cold interpreter)."""
    fake = use_fake()
    from fake_embedder import FakeEmbedder

    root = work / "noop"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for i in range(n):
        p = root / f"d{i % 100}" / f"m{i}.py"
        p.parent.mkdir(exist_ok=True)
        p.write_text(f"def f{i}(x):\n    return x + {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "many")
    emb = FakeEmbedder()
    out["noop_files"] = run_index(root, emb)[1].files_total
    out["noop_10k_inproc_s"] = statistics.median(run_index(root, emb)[0] for _ in range(5))
    env = {**os.environ, "HIPPO_MODEL": fake}
    walls = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hippo", "index", "--quiet", "--repo", str(root)], env=env,
                       check=True)
        walls.append(time.perf_counter() - t)
    out["noop_10k_cli_s"] = statistics.median(walls)


def bench_growth(work: Path, files: int, updates: int, model: str, out: dict) -> None:
    """db size after `updates` single-file index runs, under three pruning policies."""
    from hippo.index.store import Store

    for policy in ("none", "margin", "all"):
        root = work / f"growth_{policy}"
        rels = build_repo(root, files)
        emb = make_embedder(model)
        run_index(root, emb)
        db = root / ".hippo" / "db"
        base = du(db)
        reader = Store(root / ".hippo", emb.dim) if policy == "margin" else None  # an open searcher
        times = []
        for k in range(updates):
            edit(root, rels[(k * 7919) % len(rels)], f"g{k}")
            t, _ = run_index(root, emb, compact=policy != "none")
            times.append(t)
        if reader is not None:
            reader.close()
        out[f"growth_{policy}"] = {"fresh_mb": base / 1e6, "after_mb": du(db) / 1e6,
                                   "update_median_s": statistics.median(times)}
        shutil.rmtree(root)


def table(out: dict, args) -> str:
    rows = [
        ("repo", f"{out['files']} files / {out['chunks']} chunks (site-packages sources), embedder={args.model}"),
        ("full index", f"{out['full_s']:.2f} s"),
        ("1-file edit", f"{out['one_file_s']:.2f} s (keyword-ready {out['one_file_keyword_ready_s']:.2f} s, "
                        f"{out['one_file_embedded']} chunk(s) embedded)"),
        ("50-file edit", f"{out['fifty_files_s']:.2f} s ({out['fifty_files_changed']} files)"),
        ("branch switch (10%)", f"{out['switch_s']:.2f} s ({out['switch_files']} files); back: "
                                f"{out['switch_back_s']:.2f} s, {out['switch_back_embedded']} embedded"),
        ("no-op", f"{out['noop_s'] * 1000:.0f} ms"),
        ("full / 1-file", f"{out['full_s'] / out['one_file_s']:.0f}x"),
        ("full / 50-file", f"{out['full_s'] / out['fifty_files_s']:.0f}x"),
    ]
    if "noop_10k_inproc_s" in out:
        rows.append((f"no-op, {out['noop_files']} files", f"{out['noop_10k_inproc_s'] * 1000:.0f} ms in-process, "
                     f"{out['noop_10k_cli_s'] * 1000:.0f} ms as `hippo index`"))
    for policy, label in (("none", "no compaction"), ("margin", "compaction, reader open (2 min margin)"),
                          ("all", "compaction, no reader (prune all)")):
        g = out.get(f"growth_{policy}")
        if g:
            rows.append((f"{args.updates} updates, {label}",
                         f"{g['fresh_mb']:.1f} -> {g['after_mb']:.1f} MB ({g['after_mb'] / g['fresh_mb']:.2f}x), "
                         f"median update {g['update_median_s']:.2f} s"))
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"| {a:<{w}} | {b} |" for a, b in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=4000)
    ap.add_argument("--noop-files", type=int, default=10000)
    ap.add_argument("--updates", type=int, default=500)
    ap.add_argument("--growth-files", type=int, default=1000, help="repo size for the churn runs")
    ap.add_argument("--model", help="embedder for every run (default: the tests' fake, fake_embedder:FakeEmbedder)")
    ap.add_argument("--skip", default="", help="comma list of: main,noop,growth")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.model = args.model or use_fake()
    skip = set(filter(None, args.skip.split(",")))
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="hippo-fresh-bench-") as tmp:
        work = Path(tmp)
        if "main" not in skip:
            bench_main(work, args.files, args.model, out)
            print(table(out, args), flush=True)
        if "noop" not in skip:
            bench_noop(work, args.noop_files, out)
        if "growth" not in skip:
            bench_growth(work, args.growth_files, args.updates, args.model, out)
    if "files" in out:
        print(table(out, args))
    else:
        print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
