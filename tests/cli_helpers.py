"""Running the hippo CLI as a user does: a real process, or in-process with a signal at a chosen moment."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fake_embedder import SPEC
from repo_helpers import hippo_in_process

FAKE_ENV = {"HIPPO_MODEL": SPEC, "HIPPO_NO_BACKGROUND_INDEX": "1"}


DRIVER = """
import os, signal, sys
from hippo.surfaces import cli
from hippo.index import store
sig, at = getattr(signal, sys.argv[1]), sys.argv[2]
orig = getattr(store.Store, at)
def interrupt(self, *a, **kw):
    os.kill(os.getpid(), sig)  # delivered before the call returns to Python code
    return orig(self, *a, **kw)
setattr(store.Store, at, interrupt)
sys.argv = ["hippo", *sys.argv[3:]]
cli.main()
"""


def hippo(args: list[str], cwd: Path, env: dict | None = None, real: bool = False) -> subprocess.CompletedProcess:
    """`hippo ARGS`, output captured (never a terminal), text decoded. In this interpreter unless `real`
    (a `python -m hippo` process with piped stdout/stderr) when the process itself is the point."""
    if real:
        return subprocess.run([sys.executable, "-m", "hippo", *args], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, **FAKE_ENV, **(env or {})}, timeout=300)
    res = hippo_in_process(args, cwd, env={**FAKE_ENV, **(env or {})})
    return subprocess.CompletedProcess(res.args, res.returncode, res.stdout.decode("utf-8", "replace"),
                                       res.stderr.decode("utf-8", "replace"))


def index_until_signal(root: Path, sig: str, at: str, *args: str) -> subprocess.CompletedProcess:
    """Run `hippo index ARGS` in a real process that signals itself when the indexer first calls Store.AT."""
    return subprocess.run([sys.executable, "-c", DRIVER, sig, at, "index", "-C", str(root), *args],
                          capture_output=True, text=True, env={**os.environ, **FAKE_ENV}, timeout=300)
