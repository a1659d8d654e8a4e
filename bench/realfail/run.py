"""Run the failure hook on every recorded real failure and score what it injects.

For each case: recreate the work tree (clone from the mirror at the recorded commit, then the fix's test
changes or the mutation), index it with hippo (real model and LanceDB; the index is kept per repo+commit
under the cache, and vectors are cached by content, so a rerun only re-embeds changed files), feed the
recorded output to the PostToolUseFailure hook as Claude Code does, and score it next to three
baselines: the traceback's own frames +-20 lines, BM25 windows cut to hippo's characters, and grep of
the error message.

    python -m bench.realfail.run [--fast] [--kind fix|mutation|env] [--repo R] [--limit N] [--case ID]

--fast uses the tests' fake embedder (tests/fake_embedder.py, loaded as a plugin: no model, so the keyword
half of hybrid search is what is measured).
Writes results/<stamp>.json (every case: spans, scores, the injected text) and results/latest.{json,md}.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

from bench.realfail import scoring, tables
from bench.realfail.callees import callee_windows
from bench.realfail.corpora import by_repo
from bench.realfail.mutate import apply_mutation
from bench.realfail.workspace import apply_diff, cache_dir, reset, restore, tree

HERE = Path(__file__).parent
CASES = HERE / "cases"
RESULTS = HERE / "results"
SYSTEMS = ("hippo", "bm25-windows", "traceback±20", "grep-message", "test-callees")


def load_cases(paths: list[Path] | None = None) -> list[dict]:
    out = []
    for p in paths or sorted(CASES.glob("*.jsonl")):
        out.extend(json.loads(line) for line in p.read_text().splitlines() if line.strip())
    return out


def split_of(case_id: str) -> str:
    """"heldout" for a fixed third of the cases, "tune" for the rest: a change to the hook is tuned on one
    and checked on the other, so a rule that only fits the cases looked at shows up as a gap."""
    import hashlib

    return "heldout" if int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % 3 == 0 else "tune"


def seed_index(work: Path, fast: bool) -> None:
    """A tree without an index starts from a copy of a sibling commit's index (same repo, same model):
    the incremental indexer then re-chunks only the files that differ, and the copied vector cache means
    only new text is embedded. Each repo+commit still keeps its own index for reruns."""
    import shutil

    if (work / ".hippo" / "state.json").exists():
        return
    repo_part = work.name.split("@")[0]
    siblings = [p for p in work.parent.glob(f"{repo_part}@*") if p != work and p.name.endswith("-fast") == fast
                and (p / ".hippo" / "state.json").exists()]
    if not siblings:
        return
    src = max(siblings, key=lambda p: (p / ".hippo" / "state.json").stat().st_mtime) / ".hippo"
    (work / ".hippo").mkdir(exist_ok=True)
    shutil.copytree(src / "db", work / ".hippo" / "db", dirs_exist_ok=True)
    shutil.copy2(src / "state.json", work / ".hippo" / "state.json")


def make_variant(work: Path, case: dict) -> None:
    """Put the tree in the state the failure happened in."""
    if case["kind"] == "fix":
        apply_diff(work, case["commit"], case["fix_commit"], case["test_files"])
    elif case["kind"] == "mutation":
        apply_mutation(work, case["mutation"])


def hook(work: Path, case: dict, searcher, error: str, cwd: Path) -> tuple[dict | None, dict | None, float]:
    """(hook output, the diagnose response it used, seconds): the in-process PostToolUseFailure path."""
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.surfaces.hooks.failure import handle

    box: dict = {}

    def diagnoser(request: dict) -> dict:
        box["resp"] = diagnose(searcher, request, mode="hybrid")
        return box["resp"]

    payload = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
               "tool_input": {"command": case["command"], "description": "run the tests"},
               "tool_use_id": f"toolu_{case['id']}", "error": error, "is_interrupt": False,
               "session_id": f"realfail-{case['id']}-{time.time_ns()}", "cwd": str(cwd)}
    t = time.perf_counter()
    out = handle(payload, diagnoser=diagnoser)
    return out, box.get("resp"), time.perf_counter() - t


def evaluate_case(case: dict, work: Path, searcher, bm25_cache: dict | None = None) -> dict:
    """Score hippo and the baselines on one case whose tree and index are ready."""
    from bench.quality.systems import BM25Windows, Grep

    cwd = work / case.get("cwd", "")
    error = restore(case["error"], work)
    out, resp, secs = hook(work, case, searcher, error, cwd)
    context = (out or {}).get("hookSpecificOutput", {}).get("additionalContext", "")
    hits = (resp or {}).get("hits", []) if out else []
    hippo_spans = [scoring.Span(h["path"], h["start_line"], h["end_line"], len(h["snippet"])) for h in hits]
    docs = scoring.read_docs(work, sorted(searcher.state.files))
    key = (str(work), tuple(sorted(case.get("test_files") or [])), case.get("mutation", {}).get("line"))
    bm25 = (bm25_cache or {}).get(key) or BM25Windows(docs)
    ranked = bm25.search(error[:4000])
    message = scoring.error_message(error)
    grep = Grep(docs).search(message)[: scoring.GREP_RESULTS] if message else []
    tb = scoring.traceback_windows(error, work, docs, cwd)
    gold = case.get("gold") or {"files": [], "lines": {}, "functions": []}
    corpus = _corpus(case["repo"])
    callees = callee_windows(error, work, docs, case.get("test_files") or [], corpus.is_test if corpus else _is_test_path,
                             corpus.is_src if corpus else (lambda p: _is_code_under_test(case["repo"], p)), cwd)
    rec = {
        "id": case["id"], "kind": case["kind"], "repo": case["repo"], "language": case["language"],
        "command": case["command"], "gold": gold,
        "shown_by_frames": scoring.shown_by_frames(error, work, gold, cwd) if case["kind"] != "env" else None,
        "hippo": {**scoring.score(hippo_spans, gold), "context_chars": len(context), "injected": bool(context),
                  "latency_ms": round(secs * 1000, 1), "spans": [s.__dict__ for s in hippo_spans],
                  "context": context},
        "traceback±20": {**scoring.score(tb, gold), "spans": [s.__dict__ for s in tb]},
        "grep-message": {**scoring.score([scoring.Span(r.path, r.start, r.end, r.chars) for r in grep], gold),
                         "query": message, "spans": [r.__dict__ for r in grep]},
        "_bm25_ranked": [r.__dict__ for r in ranked[:40]],
        "_callees_ranked": [c.__dict__ for c in callees[:40]],
        "split": split_of(case["id"]),
    }
    add_named(rec, context)
    return rec


def add_named(rec: dict, context: str) -> None:
    """issue 23's second figure: hippo's pointers count for "named"; a baseline only shows code."""
    ptrs = scoring.pointers(context)
    spans = [scoring.Span(**d) for d in rec["hippo"]["spans"]]
    rec["hippo"]["named"] = scoring.named(spans, ptrs, rec["gold"])
    rec["hippo"]["pointers"] = [p.__dict__ for p in ptrs]
    for system in ("traceback±20", "grep-message"):
        rec[system]["named"] = rec[system]["function"]


def finish_callees(records: list[dict]) -> None:
    """The direct-callees baseline cut at the same characters as BM25 (hippo's, or the run's median)."""
    for r in records:
        ranked = [scoring.Span(**d) for d in r.pop("_callees_ranked")]
        spans = scoring.budget_matched(ranked, r["bm25-windows"]["budget"])
        r["test-callees"] = {**scoring.score(spans, r["gold"]), "named": scoring.score(spans, r["gold"])["function"],
                             "budget": r["bm25-windows"]["budget"], "spans": [s.__dict__ for s in spans]}


def _corpus(repo: str):
    from bench.realfail.corpora import CORPORA

    return next((c for c in CORPORA if c.repo == repo), None)


def _is_test_path(path: str) -> bool:
    return bool(re.search(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_|\.(test|spec)\.[cm]?[jt]sx?$", path))


def finish_bm25(records: list[dict]) -> None:
    """Cut each case's BM25 ranking at hippo's injected characters for that case (the run's median
    injection when hippo stayed silent), so both spend the same context."""
    injected = [r["hippo"]["context_chars"] for r in records if r["hippo"]["context_chars"]]
    fallback = int(statistics.median(injected)) if injected else 2000
    for r in records:
        ranked = [scoring.Span(**d) for d in r.pop("_bm25_ranked")]
        budget = r["hippo"]["context_chars"] or fallback
        spans = scoring.budget_matched(ranked, budget)
        r["bm25-windows"] = {**scoring.score(spans, r["gold"]), "budget": budget, "spans": [s.__dict__ for s in spans]}
        r["bm25-windows"]["named"] = r["bm25-windows"]["function"]


def summarise(records: list[dict]) -> dict:
    def rate(rows, system, key):
        return round(sum(1 for r in rows if r[system][key]) / len(rows), 2) if rows else None

    scored = [r for r in records if r["kind"] != "env"]
    env = [r for r in records if r["kind"] == "env"]
    hidden = [r for r in scored if not r["shown_by_frames"]]
    table = {}
    for system in SYSTEMS:
        chars = [r[system]["chars"] if system != "hippo" else r["hippo"]["context_chars"] for r in scored]
        row = {"cases": len(scored), "file": rate(scored, system, "file"), "function": rate(scored, system, "function"),
               "line": rate(scored, system, "line"), "function_not_in_frames": rate(hidden, system, "function"),
               "median_chars": int(statistics.median(chars)) if chars else 0,
               "env_injections": sum(1 for r in env if (r[system]["context_chars"] if system == "hippo" else r[system]["chars"]))}
        table[system] = row
    lat = sorted(r["hippo"]["latency_ms"] for r in records)
    by_kind = {}
    for kind in ("fix", "mutation"):
        rows = [r for r in scored if r["kind"] == kind]
        hid = [r for r in rows if not r["shown_by_frames"]]
        by_kind[kind] = {s: {"cases": len(rows), "hidden": len(hid), "file": rate(rows, s, "file"),
                             "function": rate(rows, s, "function"), "function_not_in_frames": rate(hid, s, "function")}
                         for s in SYSTEMS}
    by_lang = {}
    for lang in sorted({r["language"] for r in scored}):
        rows = [r for r in scored if r["language"] == lang]
        by_lang[lang] = {s: {"cases": len(rows), "function": rate(rows, s, "function")} for s in SYSTEMS}
    code = [sum(sp["chars"] for sp in r["hippo"]["spans"]) for r in scored if r["hippo"]["injected"]]
    no_source = sum(1 for r in scored if r["hippo"]["injected"]
                    and not any(_is_code_under_test(r["repo"], sp["path"]) for sp in r["hippo"]["spans"]))
    return {"table": table, "hidden_cases": len(hidden),
            "hippo_injected_no_code_under_test": no_source,
            "hippo_median_code_chars_when_injecting": int(statistics.median(code)) if code else 0, "env_cases": len(env), "by_kind": by_kind,
            "by_language": by_lang,
            "latency_ms": {"p50": _pct(lat, 50), "p95": _pct(lat, 95), "max": lat[-1] if lat else 0},
            "hippo_silent_on_scored": sum(1 for r in scored if not r["hippo"]["injected"])}


def select_cases(args) -> list[dict]:
    """The cases the command line asks for (--kind, --repo, --case, --split, --skip-done, --limit)."""
    cases = [c for c in load_cases() if (not args.kind or c["kind"] in args.kind)
             and (not args.repo or c["repo"] in args.repo) and (not args.case or c["id"] in args.case)]
    if args.split:
        cases = [c for c in cases if (split_of(c["id"]) == "heldout") == (args.split == "heldout")]
    for done in getattr(args, "skip_done", None) or []:
        ids = {r["id"] for r in json.loads(done.read_text())["cases"]}
        cases = [c for c in cases if c["id"] not in ids]
    return cases[: args.limit] if args.limit else cases


def prepared(cases: list[dict], embedder, fast: bool):
    """Yield (case, work tree, warm searcher) with the tree in the failure's state and indexed; trees
    are grouped by repo+commit, and each is left clean and indexed at its commit afterwards."""
    from hippo.index.indexer import index_repo
    from hippo.retrieval.search import Searcher

    groups: dict[tuple[str, str], list[dict]] = {}
    for c in cases:
        groups.setdefault((c["repo"], c["commit"]), []).append(c)
    for (repo, commit), group in groups.items():
        corpus = by_repo(repo)
        work = tree(repo, commit, name=f"{repo.replace('/', '+')}@{commit[:12]}" + ("-fast" if fast else ""))
        corpus.prepare(work)
        seed_index(work, fast)
        rep = index_repo(work, embedder=embedder)
        print(f"[realfail] {repo}@{commit[:10]}: {len(group)} cases; index {rep.chunks_written} chunks written, "
              f"{rep.chunks_embedded} embedded, {rep.seconds:.1f}s", flush=True)
        for case in group:
            reset(work, commit)
            corpus.prepare(work)
            make_variant(work, case)
            index_repo(work, embedder=embedder)
            searcher = Searcher(work, embedder=embedder)
            searcher.search("warm up the open tables", k=1, mode="hybrid")  # the warm server's state
            searcher.store.keep_text()  # as the warm server's store does (service/host.py warm)
            yield case, work, searcher
        reset(work, commit)
        index_repo(work, embedder=embedder)  # leave the cached index matching the clean commit


def evaluated(cases: list[dict], embedder, fast: bool, before_each=None):
    """Yield (case, work tree, the case's record) for every case that runs (prepared, then evaluate_case):
    what the recording tools (fit.py, walkdiag.py) capture around. `before_each()` runs before each
    evaluation; a case whose evaluation raises is reported and skipped, so one broken case cannot stop
    a record."""
    for case, work, searcher in prepared(cases, embedder, fast):
        if before_each is not None:
            before_each()
        try:
            rec = evaluate_case(case, work, searcher)
        except Exception as exc:  # noqa: BLE001 - one broken case must not stop the record
            print(f"  ! {case['id']}: {type(exc).__name__}: {exc}", flush=True)
            continue
        yield case, work, rec


def _exclusive_cache():
    """Two runs would reset and patch the same work trees under each other: one at a time per cache."""
    import fcntl

    cache_dir().mkdir(parents=True, exist_ok=True)
    fh = open(cache_dir() / "run.lock", "w")  # noqa: SIM115 - held for the whole run
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        return None
    return fh


def _is_code_under_test(repo: str, path: str) -> bool:
    from bench.realfail.corpora import CORPORA

    corpus = next((c for c in CORPORA if c.repo == repo), None)
    if corpus is None:  # a case outside the corpora (the smoke test's): anything not a test or doc
        return not re.search(r"(^|/)(tests?|docs?)/|(^|/)test_|\.(md|rst|txt)$", path)
    return corpus.is_src(path)


def _pct(sorted_vals: list[float], p: float) -> float:
    if not sorted_vals:
        return 0.0
    i = min(len(sorted_vals) - 1, max(0, round(p / 100 * (len(sorted_vals) - 1))))
    return sorted_vals[i]


def render(summary: dict, meta: dict) -> str:
    t = summary["table"]
    lines = [f"realfail: {meta['cases']} cases ({meta['counts']}), mode {meta['mode']}, {meta['seconds']:.0f}s, "
             f"load average {meta.get('load_average_start', '?')} -> {meta.get('load_average_end', '?')} on {meta.get('cores', '?')} cores",
             "", "| system | fix file | fix function | fix line | function, not in frames "
             f"(n={summary['hidden_cases']}) | median chars | env injections (n={summary['env_cases']}) |",
             "|---|---|---|---|---|---|---|"]
    for s in SYSTEMS:
        r = t[s]
        lines.append(f"| {s} | {r['file']} | {r['function']} | {r['line']} | {r['function_not_in_frames']} | "
                     f"{r['median_chars']:,} | {r['env_injections']} |")
    lat = summary["latency_ms"]
    lines += ["", f"hippo hook latency (in-process, index warm): p50 {lat['p50']} ms, p95 {lat['p95']} ms, max {lat['max']} ms; "
              f"silent on {summary['hippo_silent_on_scored']} of {t['hippo']['cases']} scored cases; "
              f"median code characters when it injects {summary['hippo_median_code_chars_when_injecting']:,} "
              "(the rest of `median chars` is the XML wrapper and lead line); "
              f"injected no file of the code under test (only tests, docs, config) on "
              f"{summary['hippo_injected_no_code_under_test']} scored cases", "",
              "| kind | cases | not in frames | " + " | ".join(f"{s} function (hidden)" for s in SYSTEMS) + " |",
              "|---|---|---|" + "---|" * len(SYSTEMS)]
    for kind, rows in summary["by_kind"].items():
        h = rows["hippo"]
        lines.append(f"| {kind} | {h['cases']} | {h['hidden']} | "
                     + " | ".join(f"{rows[s]['function']} ({rows[s]['function_not_in_frames']})" for s in SYSTEMS) + " |")
    for lang, rows in summary["by_language"].items():
        lines.append(f"| {lang} | {rows['hippo']['cases']} | | " + " | ".join(f"{rows[s]['function']}" for s in SYSTEMS) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fast", action="store_true", help="fake embedder: no model, keyword retrieval only")
    ap.add_argument("--kind", action="append", choices=["fix", "mutation", "env"])
    ap.add_argument("--repo", action="append")
    ap.add_argument("--case", action="append", help="only these case ids")
    ap.add_argument("--limit", type=int, default=0, help="at most this many cases (after filters)")
    ap.add_argument("--split", choices=["tune", "heldout"],
                    help="a fixed third of the cases (by a hash of the id) is held out from tuning: run one part")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--skip-done", type=Path, action="append",
                    help="leave out the cases a results JSON already has (then merge both with --report)")
    ap.add_argument("--report", type=Path, nargs="+",
                    help="only re-summarise results JSON files (no trees, no hook); several are merged, later "
                         "files replacing a case id an earlier one has")
    args = ap.parse_args(argv)
    if args.report:
        docs = [json.loads(p.read_text()) for p in args.report]
        merged = {r["id"]: r for d in docs for r in d["cases"]}
        records = list(merged.values())
        meta = {**docs[-1]["meta"], "cases": len(records),
                "counts": {k: sum(1 for r in records if r["kind"] == k) for k in ("fix", "mutation", "env")},
                "seconds": sum(d["meta"]["seconds"] for d in docs)}
        print(render(summarise(records), meta))
        print(tables.render(records))
        return 0
    from bench.fake_model import use_fake
    from hippo.index.embedding import load_embedder

    cases = select_cases(args)
    if not cases:
        print("realfail: no cases match (build them with bench.realfail.build / mutate / envcases)", file=sys.stderr)
        return 2
    lock = _exclusive_cache()
    if lock is None:
        print(f"realfail: another run is using the work trees under {cache_dir()}; wait for it, or set "
              "REALFAIL_CACHE to another directory", file=sys.stderr)
        return 2
    started = time.perf_counter()
    load_start = [round(x, 1) for x in os.getloadavg()]
    embedder = load_embedder(use_fake()) if args.fast else load_embedder()
    records = []
    for case, work, searcher in prepared(cases, embedder, args.fast):
        try:
            rec = evaluate_case(case, work, searcher)
        except Exception as exc:  # one broken case must not hide the others' numbers
            print(f"  ! {case['id']}: {type(exc).__name__}: {exc}", flush=True)
            continue
        records.append(rec)
        h = rec["hippo"]
        print(f"  {case['id']}: hippo file={int(h['file'])} fn={int(h['function'])} line={int(h['line'])} "
              f"chars={h['context_chars']} {h['latency_ms']:.0f}ms shown={rec['shown_by_frames']}", flush=True)
    finish_bm25(records)
    finish_callees(records)
    summary = summarise(records)
    counts = {k: sum(1 for r in records if r["kind"] == k) for k in ("fix", "mutation", "env")}
    meta = {"cases": len(records), "counts": counts, "mode": "fast (fake embedder)" if args.fast else "hybrid (real model)",
            "seconds": time.perf_counter() - started, "load_average_start": load_start,
            "load_average_end": [round(x, 1) for x in os.getloadavg()], "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    table = render(summary, meta) + "\n" + tables.render(records)
    print("\n" + table)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    doc = {"meta": meta, "summary": summary, "cases": records}
    for name in (f"{stamp}.json", "latest.json"):
        (args.out / name).write_text(json.dumps(doc, indent=1))
    (args.out / "latest.md").write_text(table)
    print(f"per-case results: {args.out / 'latest.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
