"""Redaction before/after: throughput (MB/s of CPU time) and redaction counts on real text.

Usage: python bench/redaction_bench.py [--before REF] [--passes N] [--no-site] [--show N]

"before" is secrets.py as committed at REF (default: main), loaded from git; "after" is this checkout's.
Each file is redacted whole, as the indexer does. Corpora:
- hippo lib: this checkout's lib/ (Python);
- fp corpus: the false-positive corpus of tests/test_trust_secrets.py (hippo, click, rich, pathspec);
- site-packages: every text file (code, docs, config, notebooks) under 1 MB in this venv's site-packages;
- planted: the issue-19 planted repository (tests/fixtures/trust/planted_secrets.py), for scale.
Prints one table: MB, files, redactions before/after, files whose redactions changed, MB/s before/after.
`--show N` prints N sample lines the two versions redact differently (the way to review false positives).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import sysconfig
import time
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "lib"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "fixtures" / "trust"))

from hippo.core import secrets as after  # noqa: E402

TEXT_EXTS = {".py", ".pyi", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".ipynb",
             ".js", ".ts", ".sh", ".properties", ".conf", ".xml", ".html"}
MAX_BYTES = 1_000_000


def load_before(ref: str) -> types.ModuleType:
    rel = Path(after.__file__).resolve().relative_to(REPO).as_posix()
    old_layout = rel.replace("/core/", "/")  # a REF from before the layer packages
    for path in (rel, old_layout):
        proc = subprocess.run(["git", "-C", str(REPO), "show", f"{ref}:{path}"], capture_output=True, text=True)
        if proc.returncode == 0:
            mod = types.ModuleType("secrets_before")
            exec(compile(proc.stdout, f"{ref}:{path}", "exec"), mod.__dict__)  # noqa: S102 - our own file at REF
            return mod
    raise SystemExit(f"no secrets.py at {ref}")


def read_tree(root: Path, exts: set[str] | None = None) -> list[tuple[str, str]]:
    out = []
    for p in sorted(root.rglob("*")):
        if p.suffix not in (exts or TEXT_EXTS) or not p.is_file() or p.is_symlink():
            continue
        try:
            if p.stat().st_size > MAX_BYTES:
                continue
            out.append((str(p.relative_to(root)), p.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def corpora(site: bool) -> dict[str, list[tuple[str, str]]]:
    from planted_secrets import build

    from test_trust_secrets import _normal_corpus

    out = {"hippo lib": read_tree(REPO / "lib", {".py"}), "fp corpus": _normal_corpus()}
    if site:
        out["site-packages"] = read_tree(Path(sysconfig.get_paths()["purelib"]))
    c = build()
    out["planted"] = sorted({**c.files, **{k: "" for k in c.token_files}}.items()) + [
        (f"commit{i}", m) for i, m in enumerate(c.commits)] + [(f"output{i}", o) for i, o in enumerate(c.outputs)]
    return out


def run(mod: types.ModuleType, files: list[tuple[str, str]], passes: int) -> tuple[float, list[list[str]], list[str]]:
    """(best CPU seconds, kinds per file, redacted texts)."""
    best, kinds, texts = float("inf"), [], []
    for _ in range(passes):
        kinds, texts = [], []
        t0 = time.process_time()
        for _name, text in files:
            out, found = mod.redact(text)
            kinds.append(found)
            texts.append(out)
        best = min(best, time.process_time() - t0)
    return best, kinds, texts


def diff_lines(a: str, b: str) -> list[str]:
    return [f"  before: {x.strip()[:150]}\n  after:  {y.strip()[:150]}"
            for x, y in zip(a.split("\n"), b.split("\n"), strict=True) if x != y]  # lines never move


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="main")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--no-site", action="store_true")
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args()
    before = load_before(args.before)
    rows, samples = [], []
    for name, files in corpora(not args.no_site).items():
        mb = sum(len(t.encode()) for _, t in files) / 1e6
        passes = 1 if mb > 20 else args.passes
        t_b, k_b, x_b = run(before, files, passes)
        t_a, k_a, x_a = run(after, files, passes)
        changed = [i for i in range(len(files)) if sorted(k_b[i]) != sorted(k_a[i])]
        for i in changed:
            samples += [f"{name}: {files[i][0]}\n{d}" for d in diff_lines(x_b[i], x_a[i])]
        rows.append((name, mb, len(files), sum(map(len, k_b)), sum(map(len, k_a)), len(changed),
                     mb / t_b if t_b else 0.0, mb / t_a if t_a else 0.0))
    head = ("corpus", "MB", "files", "redactions before", "after", "files changed", "MB/s before", "MB/s after")
    print(f"| {' | '.join(head)} |\n|{'---|' * len(head)}")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.2f} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]:.1f} | {r[7]:.1f} |")
    print(f"\n(CPU time, best of {args.passes} passes; 1 pass for corpora over 20 MB; before = {args.before})")
    seen: dict[str, int] = {}
    for s in samples:  # one sample per distinct changed line, with how often it occurs
        key = s.split("\n", 1)[1]
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 1 and len(seen) <= args.show:
            print(s)
    if args.show:
        print(f"\n{len(samples)} changed lines, {len(seen)} distinct")


if __name__ == "__main__":
    main()
