"""A deterministic stand-in embedder for tests and the benches' fast modes: no model, instant, and it
records its work.

hippo loads it as a plugin: HIPPO_MODEL=fake_embedder:FakeEmbedder (`SPEC`), with this directory on
PYTHONPATH (tests/conftest.py puts it there for every child a test starts; bench/fake_model.py for benches).

Vectors are bags of hashed tokens (words plus the parts of camelCase/snake_case identifiers), so
texts that share words really are closer, which keeps ranking tests meaningful. Every passage batch
is recorded in `.calls` and every passage in `.texts`, so tests can count re-embeds.
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from hippo.index.embedding import Embedder

SPEC = "fake_embedder:FakeEmbedder"  # the model name that selects it; also its model_id, as hippo requires
TESTS_DIR = Path(__file__).resolve().parent
FAKE_DIM = 384
_WORD = re.compile(r"[A-Za-z0-9_]+")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def with_tests_dir(pythonpath: str = "") -> str:
    """`pythonpath` with the tests directory first (once), so a child can import this module. Empty entries
    (which would mean the child's working directory) are dropped."""
    rest = [p for p in pythonpath.split(os.pathsep) if p and p != str(TESTS_DIR)]
    return os.pathsep.join([str(TESTS_DIR), *rest])


def tokens(text: str) -> list[str]:
    """Lower-cased words, plus the pieces of compound identifiers (`getUserName` -> get, user, name)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        lower = word.lower()
        out.append(lower)
        parts = [p.lower() for p in _PARTS.findall(word)]
        if len(parts) > 1:
            out.extend(parts)
    return out


def _slot(token: str) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % FAKE_DIM, (1.0 if (value >> 32) & 1 else -1.0)


def fake_vector(text: str) -> np.ndarray:
    """Unit-length (FAKE_DIM,) float32 vector; text without tokens maps to a fixed unit vector."""
    vec = np.zeros(FAKE_DIM, dtype=np.float32)
    for tok in tokens(text) or ["\0empty"]:
        index, sign = _slot(tok)
        vec[index] += sign
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:  # opposite signs cancelled out exactly; still honour the unit-norm contract
        vec[_slot("\0empty")[0]] = 1.0
        norm = 1.0
    return vec / norm


class FakeEmbedder:
    """Implements the `Embedder` protocol without a model (`load_embedder(SPEC)`)."""

    model_id = SPEC
    dim = FAKE_DIM

    def __init__(self) -> None:
        self.calls: list[list[str]] = []  # one entry per embed_passages call (a batch)
        self.texts: list[str] = []  # every passage ever embedded, in order
        self.queries: list[str] = []  # queries are kept apart so passage counts stay exact

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        batch = list(texts)
        self.calls.append(batch)
        self.texts.extend(batch)
        if not batch:
            return np.zeros((0, FAKE_DIM), dtype=np.float32)
        return np.stack([fake_vector(t) for t in batch])

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return fake_vector(text)


if TYPE_CHECKING:  # mypy (pyproject's mypy files) checks the fake against the protocol hippo loads it as
    _checked: Embedder = FakeEmbedder()
