"""Where hippo keeps per-user data that outlives a repository index: built models, fastembed cache.

Stdlib only, so anything (hooks included) can ask for the location without paying for imports.
"""
from __future__ import annotations

import os
from pathlib import Path


def hippo_home() -> Path:
    """`$HIPPO_HOME`, else `~/.cache/hippo`. Not created here; callers mkdir what they write."""
    env = os.environ.get("HIPPO_HOME", "").strip()
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "hippo"


def models_dir() -> Path:
    """Parent of the locally built models (`<slug>-<version>/` each)."""
    return hippo_home() / "models"


def fastembed_cache_dir() -> Path:
    """Cache for hub models fastembed downloads; persistent, unlike fastembed's temp-dir default."""
    return hippo_home() / "fastembed"
