"""The test embedder (tests/fake_embedder.py) for the benches' fast / no-model modes.

hippo's lib has no fake model: the benches load the tests' one as an embedder plugin. `use_fake()` puts the
repository's tests/ directory on this process's sys.path and first on PYTHONPATH in os.environ (so every
child hippo starts, hooks, `python -m hippo`, servers and background indexers included, imports it too),
and returns the model name that selects it:

    from bench.fake_model import use_fake
    os.environ["HIPPO_MODEL"] = use_fake()       # or load_embedder(use_fake())
    from fake_embedder import FakeEmbedder       # importable once use_fake() ran

A bench run as a file (`python bench/x.py`) puts the repository root on sys.path first, so `bench.` imports.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1] / "tests"


def use_fake() -> str:
    """Make `fake_embedder` importable here and in every child; return its spec, for HIPPO_MODEL."""
    tests = str(TESTS_DIR)
    if tests not in sys.path:
        sys.path.append(tests)  # after everything else: tests/ holds helper modules, never shadow a package
    from fake_embedder import SPEC, with_tests_dir

    os.environ["PYTHONPATH"] = with_tests_dir(os.environ.get("PYTHONPATH", ""))
    return SPEC
