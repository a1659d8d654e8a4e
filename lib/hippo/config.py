"""Settings: defaults < `hippo.toml` (or `.hippo/config.toml`) < HIPPO_* environment variables.

Stdlib only: hooks import this on their fast path.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from hippo.errors import HippoError

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as _toml  # type: ignore[no-redef]

DEFAULT_MODEL = "hippo/all-MiniLM-L6-v2-int8"

DEFAULT_SPEC_GLOBS = (
    "CONTRIBUTING*", "ARCHITECTURE*", "CONVENTIONS*", "STYLE*", "DEVELOPMENT*", "HACKING*",
    "README*", "docs/**/*.md", "docs/**/*.rst", "doc/**/*.md", "**/adr/**/*.md",
    "**/decisions/**/*.md", ".editorconfig", ".github/CONTRIBUTING*", "pyproject.toml",
    "setup.cfg", ".eslintrc*", ".prettierrc*", "ruff.toml", ".rubocop.yml", "rustfmt.toml",
    ".golangci.y*ml",
)


# Settings a repository's own files may not choose: where hippo writes and deletes (index_dir), what remote
# it talks to (shared_index) and what it downloads (model). A cloned repo is untrusted input; these come
# only from the environment (HIPPO_INDEX_DIR, HIPPO_SHARED_INDEX, HIPPO_MODEL).
ENV_ONLY = frozenset({"index_dir", "shared_index", "model"})


class UnsafeIndexDir(HippoError):
    """The index directory is a symlink, escapes the repo, or holds files the repo itself put there."""


def check_index_dir(root: Path, index_dir: Path) -> None:
    """Refuse an index dir a repository could have planted to make hippo write or delete elsewhere.

    Cheap (a few lstat calls): hooks run it too. The indexer adds `tracked_by_git` on top.
    """
    if index_dir.is_symlink():
        raise UnsafeIndexDir(f"{index_dir} is a symlink; hippo will not write through it. Remove it and run "
                             "`hippo index` again.")
    try:
        inside = index_dir.resolve().is_relative_to(root.resolve())
    except OSError:
        inside = False
    default_place = index_dir.parent == root
    if default_place and not inside:
        raise UnsafeIndexDir(f"{index_dir} resolves outside the repository; hippo will not use it.")
    try:
        entries = list(os.scandir(index_dir))
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise UnsafeIndexDir(f"{index_dir} is not a directory; remove it and run `hippo index`.") from None
    for entry in entries:
        if entry.is_symlink():
            raise UnsafeIndexDir(f"{entry.path} is a symlink; hippo will not write through it. Remove "
                                 f"{index_dir} and run `hippo index` again.")


@dataclass(frozen=True)
class Settings:
    """Everything a user can tune. Field names double as toml keys and HIPPO_<NAME> env vars."""

    index_dir: str = ""  # default: <repo>/.hippo
    model: str = DEFAULT_MODEL  # or any fastembed model name (downloads from the hub)
    max_file_bytes: int = 1_000_000
    budget_chars: int = 8000  # total characters of snippets a search returns
    default_k: int = 8
    threads: int = 0  # 0 = all cores
    index_submodules: bool = False
    spec_globs: tuple[str, ...] = DEFAULT_SPEC_GLOBS
    shared_index: str = ""  # s3://bucket/prefix for a team index (see docs/team.md)
    extra_ignores: tuple[str, ...] = field(default_factory=tuple)

    def index_path(self, root: Path) -> Path:
        if self.index_dir:
            p = Path(self.index_dir).expanduser()
            return p if p.is_absolute() else root / p
        return root / ".hippo"


def _coerce(kind: object, value: object) -> object:
    if kind in (int, "int"):
        return int(value)  # type: ignore[call-overload]
    if kind in (bool, "bool"):
        if isinstance(value, bool):
            return value
        return str(value).strip().lower() in ("1", "true", "yes", "on")
    if "tuple" in str(kind):
        if isinstance(value, (list, tuple)):
            return tuple(str(v) for v in value)
        return tuple(v.strip() for v in str(value).split(",") if v.strip())
    return str(value)


def load_settings(root: Path | None = None, env: dict[str, str] | None = None) -> Settings:
    """Merge defaults, the repo's config file and the environment."""
    env = dict(os.environ) if env is None else env
    values: dict[str, object] = {}
    if root is not None:
        for candidate in (root / "hippo.toml", root / ".hippo" / "config.toml"):
            if candidate.is_file():
                try:
                    data = _toml.loads(candidate.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                from_file = data.get("hippo", data)
                if isinstance(from_file, dict):
                    values.update({k: v for k, v in from_file.items() if k not in ENV_ONLY})
                break
    for f in fields(Settings):
        key = f"HIPPO_{f.name.upper()}"
        if key in env:
            values[f.name] = env[key]
    known = {f.name: f.type for f in fields(Settings)}
    clean: dict[str, Any] = {k: _coerce(known[k], v) for k, v in values.items() if k in known}
    return replace(Settings(), **clean)
