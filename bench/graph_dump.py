"""Dump the code graph JSON of every file under some trees, to check that a change to graph extraction
(hippo.index.chunking.graph) leaves the graph it produces byte for byte the same.

    python bench/graph_dump.py OUT.jsonl TREE [TREE ...]     # then: cmp before.jsonl after.jsonl

One line per file: {"path": ..., "graph": <the indexed graph column>}. Also prints the CPU seconds spent
chunking with the graph, and with the graph alone re-extracted from the same parse (best of --repeat).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "lib")]

from hippo.index.chunking import chunk_file  # noqa: E402
from hippo.index.chunking.graph import GRAPH_LANGUAGES  # noqa: E402
from hippo.index.chunking.languages import detect_language  # noqa: E402
from hippo.index.indexer import graph_json  # noqa: E402


def sources(trees: list[str]) -> list[tuple[str, str]]:
    out = []
    for tree in trees:
        base = Path(tree)
        for p in sorted(base.rglob("*")):
            rel = f"{base.name}/{p.relative_to(base).as_posix()}"
            if p.is_file() and detect_language(rel) in GRAPH_LANGUAGES and "node_modules" not in p.parts:
                out.append((rel, p.read_text("utf-8", "replace")))
    return out


def extract_only(files: list[tuple[str, str]]) -> float:
    """CPU seconds of graph extraction alone, on trees parsed beforehand."""
    from hippo.index.chunking.code import _parser_safe, get_parser
    from hippo.index.chunking.graph import extract
    from hippo.index.chunking.lines import split_lines

    parsed = []
    for rel, text in files:
        lang = detect_language(rel)
        src = _parser_safe("\n".join(split_lines(text))).encode("utf-8", "replace")
        parser = get_parser(lang)
        if parser is not None:
            parsed.append((parser.parse(src), src, lang))
    t = time.process_time()
    for tree, src, lang in parsed:
        extract(tree, src, lang)
    return time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    files = sources(args.trees)
    with open(args.out, "w", encoding="utf-8") as fh:
        for rel, text in files:
            graph: list = []
            chunk_file(rel, text, graph=graph)
            fh.write(json.dumps({"path": rel, "graph": graph_json(graph[0]) if graph else ""}) + "\n")
    chunk = min(_timed(lambda: [chunk_file(r, t, graph=[]) for r, t in files]) for _ in range(args.repeat))
    only = min(extract_only(files) for _ in range(args.repeat))
    print(f"{len(files)} files; chunking with graph {chunk:.2f} s CPU; extraction alone {only:.2f} s CPU")
    return 0


def _timed(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


if __name__ == "__main__":
    raise SystemExit(main())
