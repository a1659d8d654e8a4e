"""`hippo def` / `hippo callers` on names drawn from real repositories, scored against Python's own `ast`.

    REALFAIL_MIRRORS=<dir of owner+name/repo> python -m bench.graph_names [--repos boltons,sqlparse,...]
        [--sample 150] [--misses 6]

Each repository's tree at its mirror's HEAD is indexed (fake embedder) and asked what a user asks,
through the same code as the CLI and the MCP tools (retrieval/structure.py). The answers are scored
against an oracle that never looks at hippo's graph: Python's `ast` over the same files.

Names (sampled, seeded):
- `Class.method` and `pkg.module.func` / `module.func` (qualified): right when the first definition hippo
  gives is one the oracle has under that qualified name;
- bare names defined once in the repository: right when first;
- bare names defined several times (ambiguous by nature): scored on whether every definition the oracle
  knows is listed (no first is "right" without context);
- callers of sampled functions and methods: the oracle's call sites are those `ast` resolves without
  types: `f()` in the defining module, `g()` after `from m import f as g` (relative imports too),
  `m.f()` after `import pkg.m as m`, `self.m()` / `cls.m()` inside the class, `C.m()`. Recall is the share
  of those hippo lists; a listed site the oracle resolves to another definition counts against precision
  (sites it cannot resolve, such as `obj.m()`, are left out of both).
"""
from __future__ import annotations

import argparse
import ast
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from bench.fake_model import use_fake
from bench.realfail.workspace import mirror_dir

CALLERS_LIMIT = 200  # structure.MAX_LIMIT: recall is counted against at most this many true sites
PY_REPOS = {"boltons": "mahmoud/boltons", "sqlparse": "andialbrecht/sqlparse", "markdown": "Python-Markdown/markdown",
            "more-itertools": "more-itertools/more-itertools", "humanize": "python-humanize/humanize",
            "tabulate": "astanin/python-tabulate", "cachetools": "tkem/cachetools", "toolz": "pytoolz/toolz",
            "rich": "Textualize/rich", "httpx": "encode/httpx"}


@dataclass(frozen=True)
class ODef:
    path: str
    qual: str  # Class.method / func / Class
    line: int  # the `def`/`class` line
    end: int
    module: str  # importable dotted module name
    owner: str = "module"  # what it is defined in: module | class | function


@dataclass
class Oracle:
    defs: list[ODef] = field(default_factory=list)
    calls: dict[tuple[str, int], set[ODef]] = field(default_factory=lambda: defaultdict(set))  # site -> targets
    unresolved: set[tuple[str, int]] = field(default_factory=set)  # lines holding a call `ast` cannot resolve


def _module_name(rel: str, root: Path) -> str:
    """The importable name of a file: the path from the top-most package (a dir with __init__.py)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    d = (root / rel).parent
    depth = 0
    while (d / "__init__.py").exists() and d != root:
        depth += 1
        d = d.parent
    keep = depth + (0 if rel.endswith("__init__.py") else 1)
    return ".".join(parts[-keep:]) if keep else ".".join(parts)


def _defs(tree: ast.Module, rel: str, module: str) -> list[ODef]:
    out: list[ODef] = []

    def walk(body, prefix: str, owner: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}{node.name}"
                out.append(ODef(rel, qual, node.lineno, node.end_lineno or node.lineno, module, owner))
                walk(node.body, qual + ".", "class" if isinstance(node, ast.ClassDef) else "function")
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(node).__name__ == "TryStar":
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, []), prefix, owner)
                for h in getattr(node, "handlers", []):
                    walk(h.body, prefix, owner)

    walk(tree.body, "", "module")
    return out


def _file_calls(o: Oracle, rel: str, tree: ast.Module, mod: str, module_names: set[str], top, members) -> None:
    """The call sites of one file `ast` resolves without types, into `o.calls`."""
    pkg = mod if rel.endswith("__init__.py") else mod.rpartition(".")[0]
    names: dict[str, tuple[str, str]] = {}  # bound name -> (module, attr) ; attr "" = the module itself

    def absolute(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = pkg.split(".") if pkg else []
        base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        return ".".join([*base, *(node.module.split(".") if node.module else [])])

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = (a.name, "")
        elif isinstance(node, ast.ImportFrom):
            src = absolute(node)
            for a in node.names:
                if a.name == "*":
                    continue
                bound = a.asname or a.name
                names[bound] = (f"{src}.{a.name}", "") if f"{src}.{a.name}" in module_names else (src, a.name)

    def visit(body, cls: str | None) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, node.name)
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.ClassDef) and sub is not node:
                    continue
                if not isinstance(sub, ast.Call):
                    continue
                f, site = sub.func, (rel, sub.lineno)
                before = len(o.calls[site])
                _resolve_call(o, site, f, names, mod, cls, top, members)
                for d in list(o.calls[site]):  # `C()` runs `C.__init__`
                    o.calls[site].update(members.get((d.module, d.qual, "__init__"), []))
                if len(o.calls[site]) == before:
                    o.unresolved.add(site)

    visit(tree.body, None)


def _resolve_call(o: Oracle, site, f, names, mod: str, cls: str | None, top, members) -> None:
    """Into `o.calls[site]`: the definitions the call `f` reaches, as far as names alone say."""
    if isinstance(f, ast.Name):
        if f.id in names and names[f.id][1]:
            m, attr = names[f.id]
            o.calls[site].update(top.get((m, attr), []))
        elif (mod, f.id) in top:
            o.calls[site].update(top[(mod, f.id)])
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        head = f.value.id
        if head in ("self", "cls") and cls:
            o.calls[site].update(members.get((mod, cls, f.attr), []))
        elif head in names and not names[head][1]:
            o.calls[site].update(top.get((names[head][0], f.attr), []))
        elif (mod, head) in top:  # a class of this module: C.m()
            o.calls[site].update(members.get((mod, head, f.attr), []))
        elif head in names and names[head][1]:  # an imported class: C.m()
            m, attr = names[head]
            o.calls[site].update(members.get((m, attr, f.attr), []))


def build_oracle(root: Path, files: list[str]) -> Oracle:
    o = Oracle()
    trees: dict[str, ast.Module] = {}
    modules: dict[str, str] = {}
    for rel in files:
        try:
            trees[rel] = ast.parse((root / rel).read_text("utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        modules[rel] = _module_name(rel, root)
        o.defs += _defs(trees[rel], rel, modules[rel])
    top = defaultdict(list)  # (module, name) -> defs at module level
    members = defaultdict(list)  # (module, Class, name) -> methods
    for d in o.defs:
        if d.owner == "module":
            top[(d.module, d.qual)].append(d)
        elif d.owner == "class" and d.qual.count(".") == 1:
            members[(d.module, *d.qual.split("."))].append(d)
    by_module = {m: rel for rel, m in modules.items()}
    for rel, tree in trees.items():
        _file_calls(o, rel, tree, modules[rel], set(by_module), top, members)
    for site in [s for s, t in o.calls.items() if not t]:
        del o.calls[site]
    return o


def _export(repo: str, dest: Path) -> bool:
    mirror = mirror_dir(repo)
    if not mirror.is_dir():
        return False
    proc = subprocess.run(["git", "--git-dir", str(mirror), "archive", "--format=tar", "HEAD"], capture_output=True)
    if proc.returncode != 0:
        return False
    import io

    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "tree"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
    return True


def _hits(d: dict, want: set[ODef]) -> bool:
    return any(d["path"] == w.path and d["start_line"] <= w.line <= d["end_line"] for w in want)


def score_repo(name: str, repo: str, base: Path, sample: int, misses: int) -> dict | None:
    use_fake()
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo
    from hippo.retrieval.search import Searcher
    from hippo.retrieval.structure import answer

    root = base / name
    if not _export(repo, root):
        return None
    index_repo(root, embedder=FakeEmbedder())
    searcher = Searcher(root, embedder=FakeEmbedder())
    files = sorted(p for p in searcher.state.files if p.endswith(".py"))
    o = build_oracle(root, files)
    rnd = random.Random(7)
    by_qual: dict[str, set[ODef]] = defaultdict(set)
    by_bare: dict[str, set[ODef]] = defaultdict(set)
    for d in o.defs:
        by_qual[d.qual].add(d)
        by_qual[f"{d.module}.{d.qual}"].add(d)
        by_bare[d.qual.rsplit(".", 1)[-1]].add(d)
    methods = sorted({d.qual for d in o.defs if d.owner == "class" and d.qual.count(".") == 1})
    funcs = sorted({f"{d.module}.{d.qual}" for d in o.defs if d.owner == "module" and d.module})
    unique = sorted(n for n, ds in by_bare.items() if len(ds) == 1)
    ambiguous = sorted(n for n, ds in by_bare.items() if len({(d.path, d.line) for d in ds}) > 1)
    res: dict = {"files": len(files), "defs": len(o.defs), "misses": [], "recall misses": []}
    for kind, names in (("Class.method", methods), ("module.func", funcs), ("bare, unique", unique)):
        pick = rnd.sample(names, min(sample, len(names)))
        right = 0
        for n in pick:
            want = by_qual[n] if kind != "bare, unique" else by_bare[n]
            got = answer(searcher, "def", n, 20)["definitions"]
            ok = bool(got) and _hits(got[0], want)
            right += ok
            if not ok and len(res["misses"]) < misses:
                first = f"{got[0]['path']}:{got[0]['start_line']} {got[0]['symbol']}" if got else "nothing"
                res["misses"].append(f"def {n}: got {first}; want {sorted((w.path, w.line) for w in want)[:2]}")
        res[kind] = (right, len(pick))
    pick = rnd.sample(ambiguous, min(sample, len(ambiguous)))
    complete = 0
    for n in pick:
        got = answer(searcher, "def", n, 200)["definitions"]
        complete += all(any(_hits(g, {w}) for g in got) for w in by_bare[n])
    res["bare, ambiguous"] = (complete, len(pick))
    # callers: targets with at least one call site the oracle resolves
    callers_of: dict[ODef, set[tuple[str, int]]] = defaultdict(set)
    for site, targets in o.calls.items():
        for t in targets:
            callers_of[t].add(site)
    targets = sorted(callers_of, key=lambda d: (d.path, d.line, d.qual))
    pick = rnd.sample(targets, min(sample, len(targets)))
    found = truth = right_listed = wrong_listed = first_ok = 0
    for t in pick:
        q = f"{t.module}.{t.qual}" if t.module else t.qual
        resp = answer(searcher, "callers", q, CALLERS_LIMIT)
        first_ok += bool(resp["definitions"]) and _hits(resp["definitions"][0], {t})
        # call sites only: the oracle knows calls; places that hand the function on ("value") are another list
        listed = {(r["path"], r["line"]) for r in resp["results"] if r["resolved"] != "value"}
        want = callers_of[t]
        truth += min(len(want), CALLERS_LIMIT)  # an answer lists at most CALLERS_LIMIT sites
        found += len(want & listed)
        for site in sorted(listed):
            if site in o.calls and site not in o.unresolved:  # every call on the line resolved
                if t in o.calls[site]:
                    right_listed += 1
                else:
                    wrong_listed += 1
                    if len(res["misses"]) < misses * 3:
                        other = sorted(f"{d.path}:{d.line} {d.qual}" for d in o.calls[site])[0]
                        res["misses"].append(f"callers {q}: lists {site[0]}:{site[1]}, which calls {other}")
        if want - listed and len(res["recall misses"]) < misses:
            res["recall misses"].append(f"callers {q}: {len(want & listed)}/{len(want)} listed, e.g. missed "
                                 f"{sorted(want - listed)[0]}")
    res["callers"] = {"targets": len(pick), "target first": first_ok, "recall": (found, truth),
                      "precision": (right_listed, right_listed + wrong_listed)}
    searcher.store.close()
    return res


def _rate(pair: tuple[int, int]) -> str:
    right, n = pair
    return f"{right / n:.3f} ({n})" if n else "- (0)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", default=",".join(PY_REPOS))
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--misses", type=int, default=4)
    a = ap.parse_args(argv)
    os.environ.setdefault("HIPPO_MODEL", use_fake())  # the tests' embedder, as in score_repo
    rows = {}
    with tempfile.TemporaryDirectory(prefix="hippo-graph-names-") as tmp:
        for name in a.repos.split(","):
            r = score_repo(name, PY_REPOS[name], Path(tmp), a.sample, a.misses)
            if r is None:
                print(f"{name}: no mirror under REALFAIL_MIRRORS", file=sys.stderr)
                continue
            rows[name] = r
            print(f"{name}: done", file=sys.stderr)
    print("| repo | .py files | defs (ast) | `def Class.method` first | `def module.func` first | `def bare` (unique) "
          "first | `def bare` (ambiguous): all listed | `callers`: target first | callers recall | callers precision |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    total: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, r in rows.items():
        c = r["callers"]
        cells = [r["Class.method"], r["module.func"], r["bare, unique"], r["bare, ambiguous"],
                 (c["target first"], c["targets"]), c["recall"], c["precision"]]
        for k, cell in enumerate(cells):
            total[str(k)][0] += cell[0]
            total[str(k)][1] += cell[1]
        print(f"| {name} | {r['files']} | {r['defs']} | " + " | ".join(_rate(x) for x in cells) + " |")
    print("| **all** | | | " + " | ".join(_rate((v[0], v[1])) for v in total.values()) + " |")
    for name, r in rows.items():
        for m in r["misses"] + r["recall misses"]:
            print(f"  miss {name}: {m}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
