"""Build the real-fix cases: for bug-fix commits of each corpus, the parent with only the fix's test
changes applied must fail the fix's tests and the fix itself must pass them. Writes
cases/fixes.jsonl (repo, commits, command, the failure output as the Bash tool shows it, gold).

    python -m bench.realfail.build [--repo owner/name] [--per-repo N] [--max-tries N]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from bench.realfail import gold as goldmod
from bench.realfail.corpora import CORPORA, Corpus
from bench.realfail.workspace import apply_diff, claude_error, git, mirror_dir, normalise, reset, run_command, tree

CASES = Path(__file__).parent / "cases"
FIX_WORDS = re.compile(r"\b(fix(es|ed|ing)?|bug|regression|broken|incorrect|wrong|crash|issue|handle|correct|prevent|avoid|edge case)\b|#\d+", re.I)
MAX_SRC_FILES, MAX_SRC_LINES, MAX_TEST_FILES = 3, 80, 3


def candidates(c: Corpus) -> list[dict]:
    """Non-merge commits whose message says fix and whose diff changes both code (modifying, not only
    adding, lines) and tests, small enough to be one bug."""
    mirror = mirror_dir(c.repo)
    args = ["log", "--no-merges", f"--since={c.since}", "--format=%H %P%x09%s", "HEAD"]
    if c.until:
        args.insert(-1, f"--until={c.until}")
    out = []
    for line in git(mirror, *args).splitlines():
        head, _, subject = line.partition("\t")
        parts = head.split()
        if len(parts) != 2 or not FIX_WORDS.search(subject):
            continue
        fix, parent = parts
        stat = git(mirror, "diff", "--numstat", parent, fix).splitlines()
        src, tests, src_lines, removed = [], [], 0, 0
        for row in stat:
            a, d, path = row.split("\t", 2)
            if a == "-":
                continue
            if c.is_test(path):
                tests.append(path)
            elif c.is_src(path):
                src.append(path)
                src_lines += int(a) + int(d)
                removed += int(d)
        if src and tests and removed and len(src) <= MAX_SRC_FILES and src_lines <= MAX_SRC_LINES \
                and len(tests) <= MAX_TEST_FILES:
            out.append({"fix": fix, "parent": parent, "subject": subject, "src": src, "tests": tests})
    return out


def test_targets(c: Corpus, tests: list[str], work: Path) -> list[str]:
    """The changed test files that are runnable test modules (not fixtures, snapshots, typings)."""
    return [t for t in tests if c.is_runnable(t) and (work / t).exists()]


def uses_new_api(output: str) -> bool:
    """The tests import or call what the fix adds: a feature's failure, not a bug's."""
    return bool(re.search(r"ImportError: cannot import name|AttributeError: module '[\w.]+' has no attribute"
                          r"|is not a function", output))


def try_case(c: Corpus, cand: dict, log=print) -> dict | None:
    work = tree(c.repo, cand["parent"], name=c.repo.replace("/", "+") + "-build")
    reset(work, cand["parent"])
    c.prepare(work)
    apply_diff(work, cand["parent"], cand["fix"], cand["tests"])
    targets = test_targets(c, cand["tests"], work)
    if not targets:
        return None
    command = c.command_for(work, targets)
    t = time.perf_counter()
    code, out = run_command(work, command, c.env_bin())
    before_s = time.perf_counter() - t
    if code in (0, 124) or (c.language == "python" and code in (4, 5)):
        log(f"    skip {cand['fix'][:10]}: before-fix exit {code}")
        return None
    if uses_new_api(out):
        log(f"    skip {cand['fix'][:10]}: the tests use API the fix adds (a feature, not a bug)")
        return None
    ranges = {}
    for path in cand["src"]:
        diff = git(work, "diff", "-U0", cand["parent"], cand["fix"], "--", path)
        ranges[path] = goldmod.hunk_ranges(diff)
    gold = goldmod.gold_for(work, ranges)  # numbered in the failing (pre-fix) tree
    reset(work, cand["fix"])
    c.prepare(work)
    code_after, out_after = run_command(work, command, c.env_bin())
    if code_after != 0:
        log(f"    skip {cand['fix'][:10]}: still fails after the fix (exit {code_after})")
        return None
    return {
        "id": f"fix-{c.repo.split('/')[1]}-{cand['fix'][:10]}", "kind": "fix", "repo": c.repo,
        "language": c.language, "commit": cand["parent"], "fix_commit": cand["fix"], "subject": cand["subject"],
        "test_files": cand["tests"], "command": command, "exit_code": code,
        "error": normalise(claude_error(code, out), work, c.env_home()), "seconds": round(before_s, 2),
        "gold": gold,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append", help="only this corpus (repeatable)")
    ap.add_argument("--per-repo", type=int, default=16, help="stop a corpus after this many cases")
    ap.add_argument("--max-tries", type=int, default=60, help="candidate commits tried per corpus")
    ap.add_argument("--out", type=Path, default=None, help="default: cases/fixes-<name>.jsonl per corpus")
    ap.add_argument("--max-per-src", type=int, default=0,
                    help="skip a commit whose changed source files all already have this many cases (a big "
                         "repository's newest fixes often cluster in one module)")
    ap.add_argument("--extend", action="store_true",
                    help="keep the cases already in the output file and try only commits not among them")
    args = ap.parse_args(argv)
    for c in CORPORA:
        if args.repo and c.repo not in args.repo:
            continue
        out = args.out or CASES / f"fixes-{c.repo.split('/')[1]}.jsonl"
        kept: list[dict] = []
        if args.extend and out.exists():
            kept = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
        known = {k["fix_commit"] for k in kept}
        cands = candidates(c)
        print(f"[build] {c.repo}: {len(cands)} candidate fix commits, {len(kept)} cases kept", flush=True)
        tries = 0
        for cand in cands:
            if cand["fix"] in known or len(kept) >= args.per_repo or tries >= args.max_tries:
                continue
            if args.max_per_src and all(sum(s in k["gold"]["files"] for k in kept) >= args.max_per_src
                                        for s in cand["src"]):
                continue
            tries += 1
            try:
                case = try_case(c, cand, log=lambda m: print(m, flush=True))
            except Exception as exc:  # a commit whose tests cannot even be set up is not a case
                print(f"    skip {cand['fix'][:10]}: {str(exc)[:120]}", flush=True)
                continue
            if case:
                kept.append(case)
                print(f"  + {case['id']} ({case['subject'][:60]}) gold={case['gold']['functions'][:2]}", flush=True)
                out.write_text("".join(json.dumps(k) + "\n" for k in kept))
            if len(kept) >= args.per_repo:
                break
        out.write_text("".join(json.dumps(k) + "\n" for k in kept))
        print(f"[build] {c.repo}: {len(kept)} cases -> {out.name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
