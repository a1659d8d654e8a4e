"""Session-start brief benchmark: does the SessionStart context hold what a newcomer needs first?

Usage: python bench/brief/run.py --mirrors DIR [--lib PATH] [--runs N] [--split heldout|tune|all] [--show REPO]
                                 [--json OUT] [--dump DIR]

For each repo in bench/brief/facts.json (hand-written: test, lint, format, source dir, install and
build commands), clone it from DIR at the pinned commit, run the real hook the way Claude Code does
(`python -m hippo hook session-start`, payload with source=startup, cwd, session_id; no index, no
background indexer, no server: the brief needs none of them) and report per repo how many facts
the context contains, its size in characters and the hook's latency. DIR holds one entry per
repo named `owner+name`, either a clone or a directory holding a bare `repo` git dir.
`--lib` runs another checkout's hippo (e.g. main's `lib/`) for before/after figures. `--split heldout` keeps
every third repo by sorted name (the held-out third: look only at its totals while changing the brief).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for bench.fake_model
from bench.fake_model import use_fake  # noqa: E402

FACTS = HERE / "facts.json"
FACT_NAMES = ("test", "test_one", "lint", "format", "source_dir", "install", "build")


def source_for(mirrors: Path, repo: str) -> Path:
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if (cand / "HEAD").is_file() or (cand / ".git").exists():
            return cand
    raise SystemExit(f"no clone or mirror of {repo} under {mirrors} (expected {base.name}/ or {base.name}/repo)")


def checkout(src: Path, dest: Path, commit: str) -> Path:
    if not dest.exists():
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(src), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--force", "--detach", commit], check=True)
    subprocess.run(["git", "-C", str(dest), "clean", "-qfdx"], check=True)
    return dest


def run_hook(root: Path, lib: Path, home: Path, session: str) -> tuple[float, str]:
    shutil.rmtree(root / ".hippo", ignore_errors=True)  # every run is a first session
    fake = use_fake()  # the tests' embedder (no index here, so it never embeds; no model is built either)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(lib), os.environ["PYTHONPATH"]]), "HIPPO_HOME": str(home),
           "HIPPO_MODEL": fake, "HIPPO_NO_BACKGROUND_INDEX": "1", "HIPPO_NO_SERVER": "1"}
    payload = {"session_id": session, "transcript_path": str(home / "t.jsonl"), "cwd": str(root),
               "hook_event_name": "SessionStart", "source": "startup"}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hippo", "hook", "session-start"], input=json.dumps(payload).encode(),
                          capture_output=True, env=env, cwd=str(root), timeout=60)
    ms = (time.perf_counter() - t) * 1000
    try:
        ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        ctx = ""
    return ms, ctx


def in_split(repos: list[str], split: str) -> set[str]:
    """The fixed split: repos sorted by name, every third (the 3rd, 6th, ...) held out."""
    ordered = sorted(repos, key=str.lower)
    held = {r for i, r in enumerate(ordered) if i % 3 == 2}
    return set(ordered) if split == "all" else held if split == "heldout" else set(ordered) - held


def contains(ctx: str, needle: str) -> bool:
    """`needle` as a whole token: not inside a longer word, flag or path (`tox` is not in `toxic`)."""
    return re.search(r"(?<![\w./-])" + re.escape(needle) + r"(?![\w-])", ctx) is not None


def score(ctx: str, facts: dict) -> tuple[int, int, list[str]]:
    known = [n for n in FACT_NAMES if facts.get(n)]
    missing = [n for n in known if not any(contains(ctx, s) for s in facts[n])]
    return len(known) - len(missing), len(known), missing


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirrors", required=True, type=Path)
    ap.add_argument("--lib", type=Path, default=HERE.parent.parent / "lib")
    ap.add_argument("--work", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--show", help="print the context of this repo (owner/name)")
    ap.add_argument("--json", type=Path, help="write per-repo results here")
    ap.add_argument("--dump", type=Path, help="write each repo's context to DIR/owner+name.txt")
    ap.add_argument("--split", choices=["heldout", "tune", "all"], default="all")
    a = ap.parse_args()
    data = json.loads(FACTS.read_text(encoding="utf-8"))
    chosen = in_split([e["repo"] for e in data["repos"]], a.split)
    data["repos"] = [e for e in data["repos"] if e["repo"] in chosen]
    work = a.work or Path(tempfile.mkdtemp(prefix="hippo-brief-"))
    work.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="hippo-brief-home-"))
    rows, results = [], []
    per_fact = {n: [0, 0] for n in FACT_NAMES}
    for entry in data["repos"]:
        repo, commit = entry["repo"], entry["commit"]
        root = checkout(source_for(a.mirrors, repo), work / repo.replace("/", "+"), commit)
        times, ctx = [], ""
        for i in range(max(1, a.runs)):
            ms, out = run_hook(root, a.lib.resolve(), home, f"brief-bench-{i}")
            times.append(ms)
            ctx = ctx or out
        found, known, missing = score(ctx, entry["facts"])
        for n in FACT_NAMES:
            if entry["facts"].get(n):
                per_fact[n][1] += 1
                per_fact[n][0] += n not in missing
        p50 = statistics.median(times)
        rows.append((repo, entry["lang"], found, known, ", ".join(missing) or "-", len(ctx), p50))
        results.append({"repo": repo, "commit": commit, "found": found, "known": known, "missing": missing,
                        "chars": len(ctx), "p50_ms": round(p50, 1), "runs": len(times)})
        if a.dump:
            a.dump.mkdir(parents=True, exist_ok=True)
            (a.dump / (repo.replace("/", "+") + ".txt")).write_text(ctx, encoding="utf-8")
        if a.show == repo:
            print(ctx, "\n" + "=" * 100)
    print(f"hippo lib: {a.lib}   runs per repo: {a.runs}   split: {a.split} ({len(rows)} repos)")
    print(f"{'repo':<20} {'lang':<11} {'facts':>7}  {'chars':>6} {'p50 ms':>7}  missing")
    for repo, lang, found, known, missing, chars, p50 in rows:
        print(f"{repo:<20} {lang:<11} {found:>3}/{known:<3}  {chars:>6} {p50:>7.0f}  {missing}")
    tf, tk = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'overall':<20} {'':<11} {tf:>3}/{tk:<3}  {statistics.mean(r[5] for r in rows):>6.0f} "
          f"{statistics.median(r[6] for r in rows):>7.0f}  ({100 * tf / max(1, tk):.0f}% of facts; mean chars, median p50)")
    print("per fact: " + ", ".join(f"{n} {f}/{k}" for n, (f, k) in per_fact.items() if k))
    if a.json:
        a.json.write_text(json.dumps({"lib": str(a.lib), "repos": results}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
