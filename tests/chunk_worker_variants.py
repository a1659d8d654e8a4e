"""Chunk workers that misbehave on purpose, for tests/test_parallel_index.py (run as
`python -m chunk_worker_variants`: tests set hippo.index.parallel.WORKER_MODULE to this module; conftest puts
this directory on every child's PYTHONPATH).

HIPPO_TEST_WORKER picks the behaviour:
  fail:<path>   chunking <path> raises, as a chunker bug would (the indexer's own test does the same in-process)
  die-at:<path> the worker exits without a word when handed <path> (a crash, an OOM kill)
"""
from __future__ import annotations

import os


def main() -> None:
    import hippo.index.chunking
    from hippo.index import parallel

    kind, _, arg = os.environ.get("HIPPO_TEST_WORKER", "").partition(":")
    if kind == "fail":
        real = hippo.index.chunking.chunk_file

        def chunk_file(path, text, **kw):
            if path == arg:
                raise RecursionError("maximum recursion depth exceeded")
            return real(path, text, **kw)

        hippo.index.chunking.chunk_file = chunk_file  # type: ignore[assignment]
    elif kind == "die-at":
        real_rows = parallel.file_rows

        def file_rows(rel, data, model_id):
            if rel == arg:
                os._exit(3)
            return real_rows(rel, data, model_id)

        parallel.file_rows = file_rows  # type: ignore[assignment]
    parallel.serve()


if __name__ == "__main__":
    main()
