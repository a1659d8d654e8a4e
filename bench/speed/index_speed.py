"""Full and incremental index cost at a given repo size (one process per size, for its peak memory).

    python -m bench.speed.index_speed --source DIR --files N --work DIR [--model NAME]
Builds a git repo of N files by cycling the source tree's code and docs files (each copy gets a
unique header line, so no two files share content), indexes it from scratch, then re-indexes after
changing 1 and then 50 committed files. Prints one JSON line. The embedder is the tests' fake one
(tests/fake_embedder.py) unless --model names another.
"""
from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from bench.fake_model import use_fake
from bench.quality.corpora import git, init_repo
from bench.speed.common import dir_bytes, peak_rss_mb

EXTS = (".py", ".js", ".md", ".rst")


def build_repo(source: Path, dest: Path, n: int) -> Path:
    pool = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in EXTS and ".git" not in p.parts
                  and ".hippo" not in p.parts)
    if not pool:
        raise SystemExit(f"no source files under {source}")
    if dest.exists():
        shutil.rmtree(dest)
    for i in range(n):
        src = pool[i % len(pool)]
        mark = "#" if src.suffix in (".py",) else "//" if src.suffix == ".js" else ".." if src.suffix == ".rst" else "<!--"
        tail = " -->" if mark == "<!--" else ""
        out = dest / f"pkg{i // 200:03d}" / f"{src.stem}_{i}{src.suffix}"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f"{mark} copy {i} of {src.name}{tail}\n" + src.read_text(encoding="utf-8", errors="replace"),
                       encoding="utf-8")
    return init_repo(dest)


def touch(root: Path, count: int, round_: int) -> None:
    files = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".js") and ".git" not in p.parts)[:count]
    for p in files:
        with p.open("a", encoding="utf-8") as fh:
            if p.suffix == ".py":
                fh.write(f"\n\ndef bench_added_{round_}_{p.stem}():\n    return {round_}\n")
            else:
                fh.write(f"\n\nfunction benchAdded{round_}() {{\n  return {round_}\n}}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"touch {count}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", help="embedder (default: the tests' fake, fake_embedder:FakeEmbedder)")
    a = ap.parse_args()
    from hippo.index.embedding import load_embedder
    from hippo.index.indexer import index_repo

    root = build_repo(Path(a.source), Path(a.work) / f"repo-{a.files}", a.files)
    emb = load_embedder(a.model or use_fake())
    t = time.perf_counter()
    rep = index_repo(root, embedder=emb)
    full_s = time.perf_counter() - t
    out = {"files": rep.files_total, "chunks": rep.chunks_written, "full_s": full_s,
           "keyword_ready_s": rep.keyword_ready_seconds, "index_bytes": dir_bytes(root / ".hippo" / "db")}
    for count in (1, 50):
        touch(root, count, count)
        t = time.perf_counter()
        inc = index_repo(root, embedder=emb)
        out[f"incr{count}_s"] = time.perf_counter() - t
        out[f"incr{count}_changed"] = inc.files_changed
    t = time.perf_counter()
    index_repo(root, embedder=emb)
    out["noop_s"] = time.perf_counter() - t
    out["peak_rss_mb"] = peak_rss_mb()
    shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
