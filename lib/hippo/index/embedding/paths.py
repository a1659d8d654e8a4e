"""Where hippo keeps per-user data that outlives a repository index: built models, fastembed cache.

Stdlib only, so anything (hooks included) can ask for the location without paying for imports.
"""
from __future__ import annotations

from pathlib import Path

from hippo.core.indexdir import hippo_home

__all__ = ["models_dir", "fastembed_cache_dir"]


def models_dir() -> Path:
    """Parent of the locally built models (`<slug>-<version>/` each)."""
    return hippo_home() / "models"


def fastembed_cache_dir() -> Path:
    """Cache for hub models fastembed downloads; persistent, unlike fastembed's temp-dir default."""
    return hippo_home() / "fastembed"
