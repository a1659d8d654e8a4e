"""Symbol-definition tasks drawn from real code: names the repository calls from one file and defines,
exactly once, in another. The query is the bare name (what a user pastes from a call site); the answer is
its definition line.

Definitions are found with one regular expression per language (independent of hippo's chunker):
Python def/class, JS/TS function/class/const-arrow/method, Go func/method/type, Rust fn/struct/enum/trait.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.where.tasks import TEST

DEFS = {
    "py": re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w{4,})\b", re.M),
    "js": re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+([A-Za-z_$][\w$]{4,})|"
                     r"class\s+([A-Za-z_$][\w$]{4,})|(?:const|let)\s+([A-Za-z_$][\w$]{4,})\s*=\s*(?:async\s*)?"
                     r"(?:\([^)]*\)|[\w$]+)\s*=>)", re.M),
    "go": re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w{4,})\s*[(\[]|^type\s+([A-Za-z_]\w{4,})\s", re.M),
    "rs": re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:fn|struct|enum|trait)\s+([A-Za-z_]\w{4,})\b",
                     re.M),
}
LANG = {".py": "py", ".js": "js", ".mjs": "js", ".cjs": "js", ".ts": "js", ".tsx": "js", ".go": "go", ".rs": "rs"}
GENERIC = {"__init__", "constructor", "toString", "render", "update", "close", "reset", "start", "write", "parse",
           "String", "Error", "main", "build", "value", "flush", "clear", "setup", "_print"}


@dataclass(frozen=True)
class SymbolTask:
    corpus: str
    query: str
    path: str
    line: int

    @property
    def split(self) -> str:
        return "heldout" if int(hashlib.sha1(f"{self.corpus}:{self.query}".encode()).hexdigest()[:8], 16) % 3 == 0 \
            else "tune"


def _files(git_dir: Path, head: str) -> list[str]:
    out = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", head],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return [p for p in out if Path(p).suffix in LANG and not TEST.search(p) and not p.endswith(".d.ts")
            and not re.search(r"(^|/)(examples?|docs?|benchmarks?|scripts?|vendor|dist|build)/", p)]


def build(git_dir: Path, corpus: str, head: str, n: int = 30) -> list[SymbolTask]:
    texts = {}
    for p in _files(git_dir, head):
        texts[p] = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{head}:{p}"], capture_output=True,
                                  text=True, errors="replace").stdout
    defs: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for p, text in texts.items():
        for m in DEFS[LANG[Path(p).suffix]].finditer(text):
            i = next(i for i, g in enumerate(m.groups(), 1) if g)
            defs[m.group(i)].append((p, text[: m.start(i)].count("\n") + 1))
    tasks = []
    for name, where in defs.items():
        if len(where) != 1 or name in GENERIC:
            continue
        path, line = where[0]
        call = re.compile(r"(?<![\w$])" + re.escape(name) + r"\s*[({]|\.\s*" + re.escape(name) + r"\b|new\s+"
                          + re.escape(name) + r"\b")
        if any(q != path and call.search(t) for q, t in texts.items()):
            tasks.append(SymbolTask(corpus, name, path, line))
    tasks.sort(key=lambda t: hashlib.sha1(f"{corpus}:{t.query}".encode()).hexdigest())
    return tasks[:n]
