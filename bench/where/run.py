"""Where would I change X? Commit message -> implementation files changed, recall@10 of the answer Claude sees.

    python -m bench.where.run --repos DIR [--cache DIR] [--out DIR] [--corpora httpx,rich] [--n 45]
                              [--baseline-ref REF]

For every corpus (bench/where/corpora.py) the tasks (bench/where/tasks.py) are walked oldest first: check out
the commit's parent, update hippo's index there incrementally (the vector cache keeps every chunk text ever
embedded, so reruns embed almost nothing), then ask every system the commit message:

- `hippo`: the MCP `search_codebase` answer from this checkout's lib/ (bench/where/worker.py);
- `hippo@REF`: the same from a baseline ref's lib/ (default: the commit before the candidates work), same index;
- `bm25-file`: Okapi BM25 over whole files (the files hippo indexed), top 10 files returned whole;
- `bm25s-file`: the strong baseline (bench/where/baselines.py): bm25s over whole files with code-aware tokens
  (camelCase / snake_case parts, stop words dropped) plus path tokens.

Tasks carry a split (tasks.split_of: a third held out by commit hash); `--split tune|heldout|all` picks them.

Metrics, from the answer text: recall@10 over the distinct files it names (result snippets and candidate
pointers, in that order), MRR@10, and its character count. Prints one table; writes per-task JSON lines and a
summary to --out.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from statistics import mean

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.where import answer, corpora  # noqa: E402
from bench.where import tasks as taskgen  # noqa: E402
from bench.where.baselines import StrongBM25Files  # noqa: E402

BASELINE_REF = "49402fa90fc321b77266ab81f197b5f0d29ea4d8"  # main before candidates / file-level ranking
K = 10


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def baseline_lib(ref: str, cache: Path) -> Path:
    """lib/ of hippo at `ref`, extracted once into the cache."""
    sha = git(REPO, "rev-parse", ref).strip()
    dest = cache / f"hippo-{sha[:12]}"
    if not (dest / "lib" / "hippo" / "__init__.py").is_file():
        data = subprocess.run(["git", "archive", sha, "lib"], cwd=REPO, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")
    return dest / "lib"


class Worker:
    """One hippo version answering over stdin/stdout (see worker.py)."""

    def __init__(self, name: str, lib: Path) -> None:
        self.name = name
        env = {**os.environ, "PYTHONPATH": str(lib), "HIPPO_NO_SERVER": "1"}
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("worker.py"))], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        hello = json.loads(self.proc.stdout.readline())
        if Path(hello["hippo"]).resolve() != (lib / "hippo").resolve():
            raise SystemExit(f"{name}: worker imported hippo from {hello['hippo']}, not {lib}")

    def ask(self, root: Path, query: str) -> dict:
        self.proc.stdin.write(json.dumps({"root": str(root), "query": query}) + "\n")
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def bm25_files(root: Path, files: list[str], query: str) -> tuple[list[str], int]:
    from bench.quality.systems import BM25Files, read_corpus

    docs = read_corpus(root, files)
    res = BM25Files(docs).search(query)
    return [r.path for r in res], sum(r.chars for r in res)


def prepare_clone(src: Path, dest: Path) -> None:
    if not (dest / ".git").exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(src), str(dest)], check=True)


def checkout(root: Path, commit: str) -> None:
    git(root, "checkout", "-q", "-f", "--detach", commit)
    git(root, "clean", "-fdq", "-e", ".hippo")


def run_corpus(corpus, repos: Path, cache: Path, n: int, workers: list[Worker], embedder,
               split: str = "all") -> list[dict]:
    from hippo.core.config import load_settings
    from hippo.core.indexdir import IndexDir
    from hippo.index.indexer import index_repo
    from hippo.index.state import load_state

    src = corpora.git_dir(repos, corpus)
    tasks = [t for t in taskgen.build(src, corpus.name, corpus.head, n) if split in ("all", t.split)]
    root = cache / "corpora" / corpus.name
    prepare_clone(src, root)
    rows = []
    for i, t in enumerate(tasks, 1):
        checkout(root, t.parent)
        tic = time.perf_counter()
        rep = index_repo(root, embedder=embedder)
        index_s = time.perf_counter() - tic
        state = load_state(IndexDir.of(root, load_settings(root)).path)
        indexed = sorted(state.files)
        row = {**t.to_dict(), "indexed_files": len(indexed), "index_s": round(index_s, 2),
               "embedded": rep.chunks_embedded, "systems": {}}
        missing = [g for g in t.gold if g not in state.files]
        row["gold_not_indexed"] = missing
        for w in workers:
            rep_ = w.ask(root, t.query)
            files = [] if rep_["is_error"] else answer.files_named(rep_["text"])
            row["systems"][w.name] = {"files": files[:20], "chars": len(rep_["text"]), "ms": round(rep_["ms"], 1),
                                      "error": rep_["text"][:300] if rep_["is_error"] else None}
        tic = time.perf_counter()
        files, chars = bm25_files(root, indexed, t.query)
        row["systems"]["bm25-file"] = {"files": files, "chars": chars, "ms": round((time.perf_counter() - tic) * 1000, 1)}
        tic = time.perf_counter()
        found = StrongBM25Files(root, indexed).search(t.query)
        row["systems"]["bm25s-file"] = {"files": [p for p, _ in found], "chars": sum(c for _, c in found),
                                        "ms": round((time.perf_counter() - tic) * 1000, 1)}
        for s in row["systems"].values():
            s["recall10"] = answer.recall_at(s["files"], t.gold, K)
            s["mrr10"] = answer.mrr_at(s["files"], t.gold, K)
        rows.append(row)
        log(f"{corpus.name} {i}/{len(tasks)} {t.commit[:8]} index {index_s:.1f}s (+{rep.chunks_embedded} embedded) "
            + "  ".join(f"{k} {v['recall10']:.2f}" for k, v in row["systems"].items()))
    return rows


def summarize(by_corpus: dict[str, list[dict]]) -> tuple[str, dict]:
    names = list(next(iter(by_corpus.values()))[0]["systems"])
    summary: dict = {}
    lines = ["| corpus | tasks | files indexed | system | recall@10 | MRR@10 | answer chars (mean) | answer chars (max) |",
             "|---|---|---|---|---|---|---|---|"]
    every = [r for rows in by_corpus.values() for r in rows]
    for cname, rows in [*by_corpus.items(), ("all", every)]:
        for name in names:
            s = [r["systems"][name] for r in rows]
            agg = {"tasks": len(rows), "recall10": mean(x["recall10"] for x in s), "mrr10": mean(x["mrr10"] for x in s),
                   "chars_mean": mean(x["chars"] for x in s), "chars_max": max(x["chars"] for x in s)}
            summary.setdefault(cname, {})[name] = agg
            files = round(mean(r["indexed_files"] for r in rows))
            lines.append(f"| {cname} | {len(rows)} | {files} | {name} | {agg['recall10']:.2f} | {agg['mrr10']:.2f} | "
                         f"{agg['chars_mean']:,.0f} | {agg['chars_max']:,} |")
    return "\n".join(lines), summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", required=True, help="folder holding the corpora's git clones (see corpora.py)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "hippo-bench" / "where"))
    ap.add_argument("--out", default="", help="results folder (default: <cache>/results)")
    ap.add_argument("--corpora", default=",".join(c.name for c in corpora.CORPORA))
    ap.add_argument("--n", type=int, default=45, help="tasks per corpus")
    ap.add_argument("--baseline-ref", default=BASELINE_REF, help="hippo ref to compare with ('' to skip)")
    ap.add_argument("--split", default="all", choices=("all", "tune", "heldout"))
    a = ap.parse_args()
    cache = Path(a.cache).expanduser()
    out = Path(a.out or cache / "results")
    out.mkdir(parents=True, exist_ok=True)
    wanted = [c for c in corpora.CORPORA if c.name in a.corpora.split(",")]
    from hippo.index.embedding import load_embedder

    embedder = load_embedder()
    workers = [Worker("hippo", REPO / "lib")]
    if a.baseline_ref:
        workers.append(Worker(f"hippo@{a.baseline_ref[:7]}", baseline_lib(a.baseline_ref, cache)))
    started = time.perf_counter()
    by_corpus = {}
    try:
        for c in wanted:
            log(f"{c.name}: {c.repo} @ {c.head[:12]}")
            by_corpus[c.name] = rows = run_corpus(c, Path(a.repos), cache, a.n, workers, embedder, a.split)
            with open(out / f"{c.name}.jsonl", "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(r) + "\n")
    finally:
        for w in workers:
            w.close()
    text, summary = summarize(by_corpus)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(text)
    log(f"done in {(time.perf_counter() - started) / 60:.1f} min; per-task JSON in {out}")


if __name__ == "__main__":
    main()
