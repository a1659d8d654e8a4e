"""Build the corpora, generate tasks, index with hippo, run every system on every task kind.

    python -m bench.quality.run_quality [--quick] [--out DIR]   (bench/run.py calls `run`)
Task JSONL files are written under <workdir>/tasks/<corpus>/<kind>.jsonl for inspection.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.quality import corpora, metrics, systems
from bench.quality import tasks as taskgen
from bench.quality.realrun import click_real_errors

KINDS = ("error", "intent", "spec")


def _timed_search(system, task) -> tuple[list, float]:
    t = time.perf_counter()
    if isinstance(system, systems.HippoErrorHook):
        res = system.search(task.query, task.command)
    else:
        res = system.search(task.query)
    return res, (time.perf_counter() - t) * 1000


def evaluate(system_list, task_sets: dict[str, list]) -> dict:
    """{system: {kind: aggregate metrics + ms}}"""
    out: dict = {}
    for sysm in system_list:
        for kind in KINDS:
            if isinstance(sysm, systems.HippoErrorHook) and kind != "error":
                continue
            rows = []
            for t in task_sets.get(kind, []):
                res, ms = _timed_search(sysm, t)
                row = metrics.score(res, t)
                row["ms"] = ms
                rows.append(row)
            if rows:
                out.setdefault(sysm.name, {})[kind] = metrics.aggregate(rows)
    return out


def gate(hook: systems.HippoErrorHook, error_tasks: list, irrelevant: list) -> dict:
    """Would the failure hook inject anything? Relevant = the error tasks; should-not = irrelevant."""
    inj_rel = [bool(hook.search(t.query, t.command)) for t in error_tasks]
    irr_res = [hook.search(t.query, t.command) for t in irrelevant]
    inj_irr = [bool(r) for r in irr_res]
    tp, fp = sum(inj_rel), sum(inj_irr)
    return {"precision": tp / (tp + fp) if tp + fp else 0.0, "recall": tp / len(inj_rel) if inj_rel else 0.0,
            "irrelevant_injected": fp, "irrelevant_total": len(irrelevant),
            "irrelevant_chars": sum(r.chars for res in irr_res for r in res)}


def run(workdir: Path, quick: bool, embedder=None, limit: int | None = None, log=print,
        corpus_specs=corpora.CORPORA) -> dict:
    from hippo.index.embedding import load_embedder
    from hippo.index.indexer import index_repo
    from hippo.retrieval.search import Searcher

    limit = limit or (40 if quick else 150)
    embedder = embedder or load_embedder()
    report: dict = {"corpora": {}, "quick": quick, "limit": limit}
    for spec in corpus_specs:
        log(f"[quality] {spec.name}: building corpus ({spec.requirement})")
        root = corpora.materialize(spec, workdir / "corpora" / spec.name, quick)
        files = corpora.corpus_files(root)
        sets = taskgen.generate(root, files, spec.language, limit)
        if spec.name == "click":
            real = click_real_errors(root)
            sets["error"] = real + sets["error"][: max(limit - len(real), 0)]
        for kind, ts in sets.items():
            taskgen.write_jsonl(ts, workdir / "tasks" / spec.name / f"{kind}.jsonl")
        log(f"[quality] {spec.name}: {len(files)} files; tasks " + ", ".join(f"{k}={len(v)}" for k, v in sets.items()))
        t = time.perf_counter()
        rep = index_repo(root, embedder=embedder)
        index_s = time.perf_counter() - t
        log(f"[quality] {spec.name}: hippo indexed {rep.chunks_written} chunks in {index_s:.1f}s "
            f"(keyword-ready {rep.keyword_ready_seconds:.1f}s)")
        searcher = Searcher(root, embedder=embedder)
        docs = systems.read_corpus(root, files)
        t = time.perf_counter()
        naive = systems.NaiveDense(docs, embedder)
        naive_s = time.perf_counter() - t
        sys_list = [systems.Hippo(searcher, "hybrid"), systems.Hippo(searcher, "vector"),
                    systems.Hippo(searcher, "keyword"), systems.HippoErrorHook(searcher),
                    systems.BM25Files(docs), systems.BM25Windows(docs), systems.Grep(docs), naive]
        log(f"[quality] {spec.name}: running {len(sys_list)} systems")
        results = evaluate(sys_list, sets)
        real_only = [t for t in sets["error"] if t.source == "real-run"]
        if real_only:
            sub = evaluate([s for s in sys_list], {"error": real_only})
            results_real = {name: kinds["error"] for name, kinds in sub.items() if "error" in kinds}
        else:
            results_real = {}
        report["corpora"][spec.name] = {
            "requirement": spec.requirement, "files": len(files), "chunks": rep.chunks_written,
            "index_seconds": index_s, "keyword_ready_seconds": rep.keyword_ready_seconds,
            "chunks_embedded": rep.chunks_embedded, "naive_chunks": len(naive.chunks), "naive_seconds": naive_s,
            "tasks": {k: len(v) for k, v in sets.items()}, "real_errors": len(real_only),
            "results": results, "results_real_errors": results_real,
            "gate": gate(systems.HippoErrorHook(searcher), sets["error"], sets["irrelevant"]),
        }
    return report


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    work = Path(a.out or tempfile.mkdtemp(prefix="hippo-quality-"))
    print(json.dumps(run(work, a.quick), indent=1, default=float))


if __name__ == "__main__":
    main()
