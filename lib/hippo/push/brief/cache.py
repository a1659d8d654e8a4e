"""The last finished brief, kept in the index dir for the next session start.

Composing the brief reads git's listing and every doc and manifest it cites: about 1 CPU-s at 100k files,
which runs out the hook's budget, so the brief came out cut to its first section on every session. A kept
brief is shown again while it holds: same code, same settings, same listing (git's index file and HEAD)
and every path the brief looked at unchanged (mtime, size, inode; an absent path still absent).

When only the listing moved (a commit, a checkout) and the kept brief was costly to compose, it is shown
anyway and marked `stale_listing`: its commands and conventions come from files that did not change, only
its layout's counts may be a commit behind, and the hook starts `hippo brief --quiet` in the background to
compose a fresh one. A cheap brief is composed again instead. Stdlib only (SessionStart runs this).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from hippo.push.brief.repo import stat_mark

VERSION = 1
COSTLY_CPU_SECONDS = 0.25  # a kept brief that took this long to compose is shown across a listing change
ALWAYS_INPUTS = (".gitignore", ".hippoignore", "hippo.toml")  # what decides which files the brief may read
MAX_BYTES = 1_000_000  # a kept brief is ~6 KB plus a few hundred input stats
RACY_NS = 2_000_000_000  # inputs changed this recently are not trusted to show a later edit in their mtime


@dataclass
class Kept:
    text: str
    stale_listing: bool


def path(cache_dir: Path) -> Path:
    from hippo.core.indexdir import IndexDir

    return IndexDir(cache_dir).brief_cache


def code_mark() -> list:
    """The brief's own code: a hippo upgrade (or a checkout of it) composes the brief again."""
    from hippo.core import repo_read, secrets

    here = Path(__file__).parent
    files = sorted(str(p) for p in here.glob("*.py")) + [repo_read.__file__, secrets.__file__]
    return [stat_mark(Path(f).parent, Path(f).name) for f in files]


def params_of(spec_globs, budget: int) -> list:
    return [VERSION, list(spec_globs), budget]


def lookup(cache_dir: Path | None, root: Path, listing_key: bytes | None, params: list) -> Kept | None:
    """The kept brief when it still holds (see the module's docstring), else None."""
    if cache_dir is None or listing_key is None:
        return None
    from hippo.core.indexdir import NOFOLLOW

    try:
        fd = os.open(path(cache_dir), os.O_RDONLY | NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            rec = json.loads(fh.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("params") != params or rec.get("code") != code_mark():
        return None
    inputs, text = rec.get("inputs"), rec.get("text")
    if not isinstance(inputs, dict) or not isinstance(text, str):
        return None
    for rel, mark in inputs.items():
        if not isinstance(rel, str) or stat_mark(root, rel) != mark:
            return None
    if rec.get("listing") == listing_key.decode("utf-8", "replace"):
        return Kept(text, stale_listing=False)
    cpu = rec.get("cpu_seconds")
    if isinstance(cpu, (int, float)) and cpu >= COSTLY_CPU_SECONDS:
        return Kept(text, stale_listing=True)
    return None


def store(cache_dir: Path | None, root: Path, listing_key: bytes | None, params: list, text: str,
          inputs: dict[str, list[int] | None], cpu_seconds: float) -> None:
    """Keep a finished brief. Quietly does nothing without an index dir (the hook does not make one here)."""
    if cache_dir is None or listing_key is None or not os.path.isdir(cache_dir):
        return
    from hippo.core.errors import HippoError
    from hippo.core.indexdir import atomic_write

    marks = dict(inputs)
    for rel in ALWAYS_INPUTS:
        marks.setdefault(rel, stat_mark(root, rel))
    newest = max((m[0] for m in marks.values() if m), default=0)
    if newest >= time.time_ns() - RACY_NS:
        return  # an edit within the file system's timestamp step would keep the same mark: compose next time
    rec = {"params": params, "code": code_mark(), "listing": listing_key.decode("utf-8", "replace"),
           "inputs": marks, "cpu_seconds": round(cpu_seconds, 3), "text": text}
    try:
        atomic_write(path(cache_dir), json.dumps(rec), durable=False)
    except (OSError, HippoError):
        pass  # a read-only index dir: the brief is composed again next time
