"""Answers queries with one hippo source tree (PYTHONPATH picks it), as `hippo search` does.

Protocol: one JSON object per line on stdin ({"root", "query"}); one per line on stdout: the hits
(path, start, end), the candidate pointers' paths, and the milliseconds the search took. The first line
says which hippo answers ({"hippo": module path}).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    import hippo
    try:
        from hippo.retrieval.search import Searcher
    except ImportError:  # a baseline from before the layout move (its flat module name, spelled so
        import importlib  # the layout rewrite leaves it alone)

        Searcher = importlib.import_module(".".join(("hippo", "search"))).Searcher  # type: ignore[misc]

    print(json.dumps({"hippo": str(Path(hippo.__file__).parent)}), flush=True)
    open_: dict[str, Searcher] = {}
    for line in sys.stdin:
        req = json.loads(line)
        s = open_.get(req["root"]) or open_.setdefault(req["root"], Searcher(Path(req["root"])))
        t = time.perf_counter()
        resp = s.search(req["query"])
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"hits": [[h.path, h.start_line, h.end_line] for h in resp.hits],
                          "candidates": [c.path for c in resp.candidates], "ms": ms}), flush=True)


if __name__ == "__main__":
    main()
