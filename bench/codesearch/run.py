"""Code search at each corpus's head: symbol definitions, how-questions, and the where-tasks' messages.

    python -m bench.codesearch.run --repos DIR [--cache DIR] [--corpora a,b] [--split tune|heldout|all]
                                   [--baseline-ref REF] [--where-cache DIR]

Each corpus (bench/where/corpora.py) is checked out at its pinned head and indexed once (with
`--where-cache`, a clone the where benchmark already indexed is copied first, so only the difference is
embedded). Then every system answers every task through `Searcher.search` (bench/codesearch/worker.py):

- symbols (bench/codesearch/symbols.py): the query is a name called in one file and defined once in
  another; **def@1** = the first result covers the definition line, def@3 = one of the first three does.
- how (bench/codesearch/how_tasks.py): hand-written questions with their answering definitions;
  **code@3** = one of the first three results covers one of them.
- where: the where benchmark's commit messages (its split), answered at head rather than at the parent
  (a quick proxy for tuning; bench/where/run.py is the real measure); file recall@10 and MRR@10 over
  the files named (results, then pointers), beside bm25s-file.

Prints one table per task kind and the p50 search latency of each system.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import mean, median

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.codesearch import symbols  # noqa: E402
from bench.codesearch.how_tasks import HOW  # noqa: E402
from bench.where import answer, corpora  # noqa: E402
from bench.where import tasks as wheretasks  # noqa: E402
from bench.where.baselines import StrongBM25Files  # noqa: E402
from bench.where.run import baseline_lib, git  # noqa: E402

MAIN_REF = "40932c1"  # main before issue 20's search work


class Worker:
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


def def_line(text: str, name: str) -> int | None:
    """The line defining `name` (`Owner.member`: the first definition of member after Owner's)."""
    import re

    if "." in name:
        owner, member = name.rsplit(".", 1)
        at = def_line(text, owner)
        if at is None:
            return None
        rest = def_line("\n".join(text.split("\n")[at:]), member)
        return at + rest if rest else None

    # a line opening the definition with its keyword first (`func genBashComp(` rather than a call
    # `genBashComp(buf, ...)` above it), then any line shaped like one (methods, `const f = (`, fields)
    strict = re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:class|struct|enum|"
                        r"trait|type|function\*?|def|fn|func)\s+(?:\([^)]*\)\s*)?" + re.escape(name) + r"\b", re.M)
    # then a named function expression anywhere on a line (`req.on('x', function handleX(`), or a class
    # method's header (`async request(configOrUrl, config) {`), before a property of that name above it
    named = re.compile(r"\bfunction\*?[ \t]+(?P<n>" + re.escape(name) + r")[ \t]*\(|^[ \t]*(?:(?:async|static|get|"
                       r"set|private|public|protected|override)[ \t]+)*(?P<m>" + re.escape(name) +
                       r")[ \t]*\([^)\n]*\)[ \t]*(?::[^{;\n]*)?\{[ \t]*$", re.M)
    loose = re.compile(r"^\s*(?:[\w\s()*.,<>&'\[\]]*?\s)?\*?" + re.escape(name) + r"\s*[(<:={]", re.M)
    m = strict.search(text)
    if not m and (n := named.search(text)):
        return text[: n.start(n.lastgroup or 0)].count("\n") + 1
    m = m or loose.search(text)
    return text[: m.end() - 1].count("\n") + 1 if m else None


def covers(hit: list, path: str, line: int) -> bool:
    return hit[0] == path and hit[1] <= line <= hit[2]


def prepare(corpus, repos: Path, cache: Path, where_cache: Path | None, embedder) -> Path:
    from hippo.index.indexer import index_repo

    root = cache / "head" / corpus.name
    if not (root / ".git").exists():
        seed = where_cache / "corpora" / corpus.name if where_cache else None
        if seed and (seed / ".hippo").exists():
            shutil.copytree(seed, root, symlinks=True)
        else:
            root.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "clone", "-q", "--no-checkout", str(corpora.git_dir(repos, corpus)), str(root)],
                           check=True)
    git(root, "checkout", "-q", "-f", "--detach", corpus.head)
    git(root, "clean", "-fdq", "-e", ".hippo")
    index_repo(root, embedder=embedder)
    return root


def history_before(root: Path, commit: str | None) -> None:
    """Co-change history as of `commit` (the oldest where-task's parent): history up to the head would
    hold the very commits the where-tasks ask about, and name their files together."""
    from hippo.core.config import load_settings
    from hippo.core.indexdir import IndexDir
    from hippo.index import cochange

    if commit:
        cochange.update(root, IndexDir.of(root, load_settings(root)).path, commit)


def run(a) -> dict:
    from hippo.core.config import load_settings
    from hippo.core.indexdir import IndexDir
    from hippo.index.embedding import load_embedder
    from hippo.index.state import load_state

    cache = Path(a.cache).expanduser()
    embedder = load_embedder()
    workers = [Worker("hippo", REPO / "lib")]
    if a.baseline_ref:
        workers.append(Worker(f"hippo@{a.baseline_ref[:7]}", baseline_lib(a.baseline_ref, cache)))
    rows: dict[str, list[dict]] = {"symbols": [], "how": [], "where": []}
    keep = ("all", )
    try:
        for c in corpora.CORPORA:
            if c.name not in a.corpora.split(","):
                continue
            gd = corpora.git_dir(Path(a.repos), c)
            root = prepare(c, Path(a.repos), cache, Path(a.where_cache).expanduser() if a.where_cache else None,
                           embedder)
            where_tasks = wheretasks.build(gd, c.name, c.head, a.n)
            history_before(root, where_tasks[0].parent if where_tasks else None)
            indexed = sorted(load_state(IndexDir.of(root, load_settings(root)).path).files)
            print(f"[{time.strftime('%H:%M:%S')}] {c.name}: {len(indexed)} files indexed", flush=True)
            for t in symbols.build(gd, c.name, c.head):
                if a.split not in (*keep, t.split):
                    continue
                row = {"corpus": c.name, "split": t.split, "query": t.query, "gold": [t.path, t.line], "systems": {}}
                for w in workers:
                    r = w.ask(root, t.query)
                    hits = r["hits"]
                    row["systems"][w.name] = {"def1": bool(hits) and covers(hits[0], t.path, t.line),
                                              "def3": any(covers(h, t.path, t.line) for h in hits[:3]),
                                              "ms": r["ms"], "top": hits[:3]}
                rows["symbols"].append(row)
            for q, golds in HOW.get(c.name, []):
                split = symbols.SymbolTask(c.name, q, "", 0).split
                if a.split not in (*keep, split):
                    continue
                lines = []
                for path, name in golds:
                    f = root / path
                    n = def_line(f.read_text(errors="replace"), name) if f.is_file() else None
                    if n:
                        lines.append((path, n))
                row = {"corpus": c.name, "split": split, "query": q, "gold": lines, "systems": {}}
                for w in workers:
                    r = w.ask(root, q)
                    hits = r["hits"]
                    row["systems"][w.name] = {"code3": any(covers(h, p, n) for h in hits[:3] for p, n in lines),
                                              "code1": any(covers(h, p, n) for h in hits[:1] for p, n in lines),
                                              "ms": r["ms"], "top": hits[:3]}
                rows["how"].append(row)
            bm = StrongBM25Files(root, indexed)
            for t in where_tasks:
                if a.split not in (*keep, t.split):
                    continue
                row = {"corpus": c.name, "split": t.split, "query": t.query[:200], "gold": t.gold, "systems": {}}
                for w in workers:
                    r = w.ask(root, t.query)
                    files = list(dict.fromkeys([h[0] for h in r["hits"]] + r["candidates"]))
                    row["systems"][w.name] = {"recall10": answer.recall_at(files, t.gold), "mrr10": answer.mrr_at(
                        files, t.gold), "ms": r["ms"], "files": files[:10]}
                files = [p for p, _ in bm.search(t.query)]
                row["systems"]["bm25s-file"] = {"recall10": answer.recall_at(files, t.gold),
                                                "mrr10": answer.mrr_at(files, t.gold), "ms": 0.0, "files": files}
                rows["where"].append(row)
            if a.out:  # after every corpus: a long run interrupted keeps what it measured
                Path(a.out).write_text(json.dumps(rows, indent=1))
    finally:
        for w in workers:
            w.close()
    return rows


def table(rows: dict[str, list[dict]]) -> str:
    """One table per task kind (tune and held-out rows apart), then search latency."""
    out = []
    metrics = {"symbols": ("def1", "def3"), "how": ("code1", "code3"), "where": ("recall10", "mrr10")}
    for kind, rs in rows.items():
        if not rs:
            continue
        names = list(rs[0]["systems"])
        m1, m2 = metrics[kind]
        out.append(f"\n{kind}\n| split | corpus | tasks | system | {m1} | {m2} |\n|---|---|---|---|---|---|")
        for split in ("tune", "heldout"):
            by: dict[str, list[dict]] = {}
            for r in rs:
                if r.get("split", "tune") == split:
                    by.setdefault(r["corpus"], []).append(r)
            every = [r for g in by.values() for r in g]
            for cname, group in [*by.items(), ("all", every)] if every else []:
                for n in names:
                    out.append(f"| {split} | {cname} | {len(group)} | {n} | "
                               f"{mean(float(r['systems'][n][m1]) for r in group):.2f} | "
                               f"{mean(float(r['systems'][n][m2]) for r in group):.2f} |")
    every = [s for rs in rows.values() for r in rs for s in r["systems"].items() if s[0] != "bm25s-file"]
    out.append("\n| system | searches | p50 ms | p90 ms |\n|---|---|---|---|")
    for n in dict.fromkeys(k for k, _ in every):
        ms = sorted(v["ms"] for k, v in every if k == n)
        out.append(f"| {n} | {len(ms)} | {median(ms):.0f} | {ms[int(0.9 * (len(ms) - 1))]:.0f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", required=True)
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "hippo-bench" / "codesearch"))
    ap.add_argument("--where-cache", default="", help="the where benchmark's cache, to seed indexes from")
    ap.add_argument("--corpora", default=",".join(c.name for c in corpora.CORPORA))
    ap.add_argument("--split", default="tune", choices=("all", "tune", "heldout"))
    ap.add_argument("--n", type=int, default=45, help="where-tasks per corpus")
    ap.add_argument("--baseline-ref", default=MAIN_REF)
    ap.add_argument("--out", default="")
    ap.add_argument("--table-only", action="store_true", help="print the table of a finished --out file")
    a = ap.parse_args()
    if a.table_only:
        print(table(json.loads(Path(a.out).read_text())))
        return
    rows = run(a)
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
