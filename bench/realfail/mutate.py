"""Mutation-made failures: on a pinned commit of each corpus whose covering tests pass, change one
line of one function (flip a comparison or a boolean, an off-by-one, drop a statement, misspell an
attribute, swap two arguments), run the covering tests, keep mutants that fail.

A mutation is stored as (file, line, operator, the old and new token, the line's sha1), never as code;
`apply_mutation` recreates it and refuses if the line is not the one recorded.

    python -m bench.realfail.mutate [--repo owner/name] [--per-repo N]
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import sys
import time
from pathlib import Path

from bench.realfail import gold as goldmod
from bench.realfail.corpora import CORPORA, Corpus
from bench.realfail.workspace import claude_error, normalise, reset, run_command, tree

CASES = Path(__file__).parent / "cases"
SEED = 13
# pinned commits whose covering tests pass with the tools in corpora.py
BASES = {
    "more-itertools/more-itertools": "2fe1b2eeb9d75f994113fe3ac76d14b6bcd6fb10",
    "python-humanize/humanize": "c3a124cdeb272d7f63bc0aa66f79c6fbafd2fc6d",
    "tj/commander.js": "e6f56c888c96d1339c2b974fee7e6ba4f2e3d218",  # v13.1.0, the last jest era release line
    "mahmoud/boltons": "967864f89791509f9eb36b22b4579d36b72a6df2",
    "tkem/cachetools": "28d4506f2a49d781ffbcecb095fa7aba5bb80aff",
    "unjs/ufo": "11308c0bb5cb4a4bc3bfcbdc5c03177b097423e6",
    "micromatch/picomatch": "4f41a8edade7a5ab19832f7b40ecce46b288767f",
}
# (operator, regex of the token, replacement): one occurrence per mutant, the line count never changes
_SWAPS = [
    ("flip-compare", r"(?<![=!<>])===(?!=)", "!=="), ("flip-compare", r"!==", "==="),
    ("flip-compare", r"(?<![=!<>])==(?!=)", "!="), ("flip-compare", r"(?<![!=])!=(?!=)", "=="),
    ("flip-compare", r"(?<=\s)<=(?=\s)", "<"), ("flip-compare", r"(?<=\s)>=(?=\s)", ">"),
    ("flip-compare", r"(?<=\s)<(?=\s)", "<="), ("flip-compare", r"(?<=\s)>(?=\s)", ">="),
    ("flip-compare", r"\bis not\b", "is"), ("flip-compare", r"\bnot in\b", "in"),
    ("flip-bool", r"\band\b", "or"), ("flip-bool", r"\bor\b", "and"), ("flip-bool", r"&&", "||"),
    ("flip-bool", r"\|\|", "&&"), ("flip-bool", r"\bTrue\b", "False"), ("flip-bool", r"\bFalse\b", "True"),
    ("flip-bool", r"\btrue\b", "false"), ("flip-bool", r"\bfalse\b", "true"),
    ("off-by-one", r"(?<=[\s(\[])- 1\b", "+ 1"), ("off-by-one", r"(?<=[\s(\[])\+ 1\b", "- 1"),
    ("off-by-one", r"\[0\]", "[1]"), ("off-by-one", r"\[1:\]", "[2:]"),
]
_ATTR = re.compile(r"(?<=[\w\)\]])\.([a-z_][A-Za-z0-9_]{3,})\b(?!\()")  # attribute read, not a call


def candidates(text: str, path: str, lo: int, hi: int) -> list[dict]:
    """Every single-token mutation of lines lo..hi (1-based) that keeps the line count."""
    lines = text.split("\n")
    out = []
    for n in range(lo + 1, hi + 1):  # skip the def line itself
        line = lines[n - 1]
        s = line.strip()
        if not s or s.startswith(("#", "//", "*", "/*", '"', "'", "@", "import ", "from ")):
            continue
        code = re.sub(r"(['\"`]).*?\1", lambda m: "\0" * len(m.group(0)), line)  # no edits inside strings
        code = code.split(" #")[0] if path.endswith(".py") else code.split(" //")[0]
        for op, pat, rep in _SWAPS:
            m = re.search(pat, code)
            if m:
                out.append({"line": n, "op": op, "col": m.start(), "old": m.group(0), "new": rep})
        m = _ATTR.search(code)
        if m and not s.startswith(("def ", "class ", "function ")):
            name = m.group(1)
            new = name[:-1] if name.endswith("s") else name + "s"
            out.append({"line": n, "op": "rename-attribute", "col": m.start(1), "old": name, "new": new})
        m = re.search(r"\(([A-Za-z_][\w.]*), ([A-Za-z_][\w.]*)\)", code)
        if m and m.group(1) != m.group(2):
            out.append({"line": n, "op": "swap-arguments", "col": m.start(), "old": m.group(0),
                        "new": f"({m.group(2)}, {m.group(1)})"})
        if _droppable(s, path):
            indent = line[: len(line) - len(line.lstrip())]
            out.append({"line": n, "op": "drop-statement", "col": 0, "old": line,
                        "new": indent + ("pass" if path.endswith(".py") else ";")})
    return out


def _droppable(s: str, path: str) -> bool:
    if path.endswith(".py"):
        return bool(re.match(r"[\w.\[\]]+\s*([+\-*/|&]?=)\s*\S|[\w.]+\(.*\)$", s)) and not s.endswith((":", ",", "(", "[", "{", "\\"))
    return s.endswith(";") and not re.search(r"[{}]|^(return|const|let|var)\b", s)


def line_sha(line: str) -> str:
    return hashlib.sha1(line.encode("utf-8")).hexdigest()[:12]


def apply_mutation(tree_path: Path, m: dict) -> None:
    """Recreate a recorded mutation in a work tree at its base commit."""
    path = tree_path / m["file"]
    lines = path.read_text(encoding="utf-8").split("\n")
    line = lines[m["line"] - 1]
    if line_sha(line) != m["line_sha"]:
        raise RuntimeError(f"{m['file']}:{m['line']} is not the line the mutation was made on")
    lines[m["line"] - 1] = mutated_line(line, m)
    path.write_text("\n".join(lines), encoding="utf-8")


def mutated_line(line: str, m: dict) -> str:
    if m["op"] == "drop-statement":
        return m["new"]
    col = m["col"]
    assert line[col: col + len(m["old"])] == m["old"], "mutation token moved"
    return line[:col] + m["new"] + line[col + len(m["old"]):]


def _parses(text: str, path: str) -> bool:
    if path.endswith(".py"):
        try:
            ast.parse(text)
            return True
        except SyntaxError:
            return False
    from tree_sitter_language_pack import get_parser

    lang = "typescript" if path.endswith(".ts") else "tsx" if path.endswith(".tsx") else "javascript"
    return not get_parser(lang).parse(text.encode()).root_node.has_error  # TS read as JS never parses


def test_command(c: Corpus, file: str, work: Path) -> str:
    target = c.mutate_tests[file]
    if c.repo == "tj/commander.js":
        stem = file.rsplit("/", 1)[-1].split(".")[0]
        prefix = {"command": "command", "option": "options", "help": "help", "argument": "argument"}.get(stem, stem)
        return c.command.format(tests=f"tests/{prefix}.")
    stop_first = {"pytest": "-x ", "unittest": "-f "}.get(c.runner, "")  # as one does while fixing
    return c.command_for(work, [stop_first + target])


def build(c: Corpus, per_repo: int, log=print, sink=None) -> list[dict]:
    base = BASES[c.repo]
    work = tree(c.repo, base, name=c.repo.replace("/", "+") + "-mutate")
    c.prepare(work)
    rng = random.Random(SEED)
    out: list[dict] = []
    per_file = max(1, per_repo // max(1, len(c.mutate)) + 1)
    for file in c.mutate:
        if not (work / file).exists():
            continue
        command = test_command(c, file, work)
        code, _ = run_command(work, command, c.env_bin(), timeout=300)
        if code != 0:
            log(f"  {file}: covering tests fail before mutating (exit {code}); skipped")
            continue
        text = (work / file).read_text(encoding="utf-8")
        funcs = [f for f in goldmod.functions(text, file) if f[2] - f[1] >= 3]
        rng.shuffle(funcs)
        kept_here = 0
        for name, lo, hi in funcs:
            if kept_here >= per_file or len(out) >= per_repo:
                break
            if any(o["gold"]["functions"][0]["name"] == name and o["mutation"]["file"] == file for o in out):
                continue
            cands = candidates(text, file, lo, hi)
            rng.shuffle(cands)
            ops_used = {o["mutation"]["op"] for o in out[-3:]}
            cands.sort(key=lambda x: x["op"] in ops_used)  # vary the operators
            for cand in cands[:2]:
                m = {"file": file, **cand}
                lines = text.split("\n")
                m["line_sha"] = line_sha(lines[m["line"] - 1])
                new = mutated_line(lines[m["line"] - 1], m)
                mutated = "\n".join(lines[: m["line"] - 1] + [new] + lines[m["line"]:])
                if not _parses(mutated, file):
                    continue
                (work / file).write_text(mutated, encoding="utf-8")
                t = time.perf_counter()
                code, output = run_command(work, command, c.env_bin(), timeout=300)
                secs = time.perf_counter() - t
                (work / file).write_text(text, encoding="utf-8")
                if code in (0, 124):
                    continue
                if m["op"] == "drop-statement":
                    m["old"] = ""  # the dropped line is recreated from the tree (line_sha checks it)
                gold = {"files": [file], "lines": {file: [[m["line"], m["line"]]]},
                        "functions": [{"file": file, "name": n, "start": a, "end": b}
                                      for n, a, b in goldmod.enclosing(goldmod.functions(text, file), m["line"], m["line"])]}
                case = {"id": f"mut-{c.repo.split('/')[1]}-{file.rsplit('/', 1)[-1].split('.')[0]}-{m['line']}-{m['op']}",
                        "kind": "mutation", "repo": c.repo, "language": c.language, "commit": base,
                        "mutation": m, "command": command, "exit_code": code,
                        "error": normalise(claude_error(code, output), work, c.env_home()), "seconds": round(secs, 2),
                        "gold": gold}
                out.append(case)
                if sink is not None:
                    sink(out)
                kept_here += 1
                log(f"  + {case['id']} in {name} ({secs:.1f}s)")
                break
        reset(work, base)
        c.prepare(work)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", action="append")
    ap.add_argument("--per-repo", type=int, default=24)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    for c in CORPORA:
        if args.repo and c.repo not in args.repo or not c.mutate:
            continue
        print(f"[mutate] {c.repo} at {BASES[c.repo][:12]}", flush=True)
        out = args.out or CASES / f"mutants-{c.repo.split('/')[1]}.jsonl"

        def sink(cases: list[dict], out: Path = out) -> None:
            out.write_text("".join(json.dumps(x) + "\n" for x in cases))

        cases = build(c, args.per_repo, log=lambda s: print(s, flush=True), sink=sink)
        sink(cases)
        print(f"[mutate] {c.repo}: {len(cases)} mutants -> {out.name}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
