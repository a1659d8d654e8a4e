"""Do the brief's commands run? A mechanical check of each shown command against the repo's own files (issue 20).

Usage: python bench/brief/commands_check.py REPO_DIR... [--lib PATH] [--split heldout|tune|all] [--show]

For each repo (a checkout), the brief is composed with the hippo under `--lib`, and every command in its
"Commands" section is checked with plain file reads written here, apart from the brief's own parsers:
* `make T` / `just T` / `npm|pnpm|yarn|bun (run) S` (pnpm/yarn/bun also run a dependency's bin) / `nox -s S` / `tox -e E` / `scripts/X`: the target,
  recipe, script, session, env or file exists (tox: listed or a [testenv:E] section);
* `tox -e pyXY`: XY inside `requires-python` (or setup.cfg python_requires);
* `python -m a.b`: a/b/__main__.py (or a/b.py) exists at the root or under src/;
* bare `mypy`: its config names `files`;
* a one-test command's runner is the one the test script runs first (node --test/borp, jest, vitest ...);
* a command taken from a file under examples/, tutorial/, demo/ is wrong;
* `scripts/X` shown as a test run must run a test runner; shown as lint, it must not rewrite files.
Anything else (pytest, ruff, cargo ...) is counted as unchecked. The split is deterministic: repos sorted by
name, every third one (the 3rd, 6th, ...) is held out; tune on the rest.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLE_DIRS = {"examples", "example", "samples", "sample", "demo", "demos", "tutorial", "tutorials"}
RUNNERS = {"node --test": "node", "borp": "node", "jest": "jest", "vitest": "vitest", "ava": "ava", "mocha": "mocha",
           "tap": "tap"}


def brief_of(root: Path, lib: Path) -> str:
    # the layered package (hippo.push.brief), or the flat one of checkouts from before the layout move
    code = ("import importlib, sys\nfrom pathlib import Path\n"
            "for pkg, conf in (('push.brief', 'core.config'), ('brief', 'config')):\n"
            "    try:\n        b, c = (importlib.import_module('hippo.' + m) for m in (pkg, conf))\n        break\n"
            "    except ImportError:\n        continue\n"
            "print(b.compose(Path(sys.argv[1]), c.DEFAULT_SPEC_GLOBS, 6000))\n")
    env = {**os.environ, "PYTHONPATH": str(lib)}
    return subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, env=env,
                          timeout=60).stdout


def shown_commands(brief: str) -> list[tuple[str, str, str]]:
    """(kind, command, source) for each command in the brief's Commands section."""
    out = []
    for line in brief.split("\n"):
        if line.startswith("Layout (") or line.startswith("Project conventions"):
            break
        m = re.match(r"- ([^:]+): (.*)", line)
        if not m or m.group(1) == "other tasks":
            continue
        for item in re.finditer(r"`([^`]+)`(?: = [^(]*?)? \(([^)]*)\)", m.group(2)):
            out.append((m.group(1), item.group(1), item.group(2)))
    return out


def read(root: Path, rel: str) -> str:
    try:
        return (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def python_bounds(root: Path) -> tuple[tuple[int, int], tuple[int, int]]:
    text = read(root, "pyproject.toml") + "\n" + read(root, "setup.cfg")
    m = re.search(r"(?:requires-python|python_requires)\s*=\s*[\"']?([^\"'\n]+)", text)
    lo, hi = (0, 0), (99, 0)
    for op, major, minor in re.findall(r"(>=|<=|>|<|~=)\s*(\d+)\.(\d+)", m.group(1) if m else ""):
        v = (int(major), int(minor))
        if op in (">=", "~="):
            lo = max(lo, v)
        elif op == ">":
            lo = max(lo, (v[0], v[1] + 1))
        elif op == "<":
            hi = min(hi, v)
        elif op == "<=":
            hi = min(hi, (v[0], v[1] + 1))
    return lo, hi


def first_runner(scripts: dict, name: str = "test", depth: int = 0) -> str | None:
    body = scripts.get(name)
    if not isinstance(body, str) or depth > 3:
        return None
    for part in re.split(r"&&|\|\||;", body):
        words = part.split()
        if words[:1] == ["npx"]:
            words = words[1:]
        if len(words) >= 3 and words[0] in ("npm", "pnpm", "yarn", "bun") and words[1] == "run":
            got = first_runner(scripts, words[2], depth + 1)
            if got:
                return got
        for marker, runner in RUNNERS.items():
            if " ".join(words[:len(marker.split())]) == marker:
                return runner
    return None


def verdict(root: Path, kind: str, cmd: str, source: str) -> bool | None:
    """True: runs as shown (as far as the files tell); False: it cannot; None: not checkable here."""
    if any(part in EXAMPLE_DIRS for part in source.lower().split("/")[:-1]):
        return False
    w = cmd.split()
    pkg = {}
    if (root / "package.json").is_file():
        try:
            pkg = json.loads(read(root, "package.json"))
        except ValueError:
            pkg = {}
    scripts = pkg.get("scripts") or {}
    if kind == "test (one)" and scripts:
        runner = first_runner(scripts)
        shown = "node" if "node --test" in cmd else next((r for m, r in RUNNERS.items() if m in w), None)
        return runner is None or shown == runner
    if w[0] == "make" and len(w) > 1:
        text = read(root, "Makefile") or read(root, "GNUmakefile") or read(root, "makefile")
        return re.search(rf"^{re.escape(w[1])}\s*:", text, re.M) is not None or re.search(
            rf"^[\w .-]*\b{re.escape(w[1])}\b[\w .-]*:", text, re.M) is not None
    if w[0] == "just" and len(w) > 1:
        text = read(root, "justfile") or read(root, ".justfile")
        return re.search(rf"^@?{re.escape(w[1])}\b[^\n]*:", text, re.M) is not None
    if w[0] in ("npm", "pnpm", "yarn", "bun") and len(w) > 1:
        if w[1] in ("install", "ci", "i"):
            return True
        name = w[2] if w[1] == "run" and len(w) > 2 else w[1]
        deps = {**(pkg.get("devDependencies") or {}), **(pkg.get("dependencies") or {})}
        return name in scripts or w[0] != "npm" and w[1] != "run" and name in deps  # `pnpm vitest`: a package's bin
    if w[0] == "nox" and "-s" in w:
        text = read(root, "noxfile.py")
        s = w[w.index("-s") + 1]
        return f"def {s}(" in text or f"name=\"{s}\"" in text or f"name='{s}'" in text
    if w[0] == "tox" and "-e" in w:
        env = w[w.index("-e") + 1]
        text = read(root, "tox.ini") + read(root, "setup.cfg") + read(root, "pyproject.toml")
        text += "\n" + re.sub(r"([^\s{},]*)\{([^{}]*)\}([^\s{},]*)",  # factor braces, one level: py{py3} → pypy3
                              lambda m: " ".join(m.group(1) + o + m.group(3) for o in m.group(2).split(",")), text)
        listed = f"[testenv:{env}]" in text or re.search(rf"(?<![\w.-]){re.escape(env)}(?![\w.-])", text) is not None
        m = re.search(r"\bpy(\d)(\d+)\b", env)
        if m:
            lo, hi = python_bounds(root)
            ver = (int(m.group(1)), int(m.group(2)))
            return lo <= ver < hi  # factor braces (`py3{9,10}`) list envs no grep finds: the version decides
        return listed
    if len(w) >= 3 and w[-3:-1] == ["python", "-m"] or (len(w) == 3 and w[:2] == ["python", "-m"]):
        mod = w[-1].replace(".", "/")
        if mod in ("pytest", "build", "pip", "mypy", "ruff", "black", "isort", "flake8", "tox", "nox"):
            return None
        return any((root / base / mod / "__main__.py").is_file() or (root / base / f"{mod}.py").is_file()
                   for base in ("", "src"))
    if w[-1] == "mypy" or (len(w) >= 1 and w[-1:] == ["mypy"]):
        text = read(root, "pyproject.toml") + read(root, "setup.cfg") + read(root, "mypy.ini")
        return re.search(r"^\s*files\s*=", text, re.M) is not None
    if w[0].startswith("scripts/"):
        body = read(root, w[0])
        if not body:
            return False
        if kind == "test (all)":
            return re.search(r"\b(pytest|unittest|jest|vitest|mocha|node --test|go test|cargo test)\b", body) is not None
        if kind == "lint/check":
            return re.search(r"--fix\b|ruff format(?!.*--(check|diff))|black (?!.*--(check|diff))|--write", body) is None
        return True
    return None


def split_of(repos: list[Path], which: str) -> list[Path]:
    ordered = sorted(repos, key=lambda p: p.name.lower())
    held = [r for i, r in enumerate(ordered) if i % 3 == 2]
    return held if which == "heldout" else [r for r in ordered if r not in held] if which == "tune" else ordered


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repos", nargs="+", type=Path)
    ap.add_argument("--lib", type=Path, default=Path(__file__).resolve().parents[2] / "lib")
    ap.add_argument("--split", choices=("heldout", "tune", "all"), default="heldout")
    ap.add_argument("--show", action="store_true", help="print each command with its verdict")
    a = ap.parse_args()
    total = {"ok": 0, "wrong": 0, "unchecked": 0}
    print(f"lib: {a.lib}   split: {a.split}")
    print(f"{'repo':<24} {'shown':>5} {'ok':>4} {'wrong':>5} {'unchecked':>9}")
    for root in split_of(a.repos, a.split):
        counts = {"ok": 0, "wrong": 0, "unchecked": 0}
        for kind, cmd, source in shown_commands(brief_of(root, a.lib)):
            v = verdict(root, kind, cmd, source)
            key = "unchecked" if v is None else "ok" if v else "wrong"
            counts[key] += 1
            if a.show and v is not None:
                print(f"    {key:<9} {kind:<12} {cmd}  ({source})")
        for k in total:
            total[k] += counts[k]
        print(f"{root.name:<24} {sum(counts.values()):>5} {counts['ok']:>4} {counts['wrong']:>5} {counts['unchecked']:>9}")
    checked = total["ok"] + total["wrong"]
    print(f"{'overall':<24} {sum(total.values()):>5} {total['ok']:>4} {total['wrong']:>5} {total['unchecked']:>9}"
          f"   correct of checked: {100 * total['ok'] / max(1, checked):.1f}%")


if __name__ == "__main__":
    main()
