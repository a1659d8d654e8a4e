"""Settings: defaults < `hippo.toml` (or `.hippo/config.toml`) < HIPPO_* environment variables.

Stdlib only: hooks import this on their fast path.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

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


@dataclass(frozen=True)
class Settings:
    """Everything a user can tune. Field names double as toml keys and HIPPO_<NAME> env vars."""

    index_dir: str = ""  # default: <repo>/.hippo
    model: str = DEFAULT_MODEL  # or any fastembed model name (downloads from the hub)
    max_file_bytes: int = 1_000_000
    budget_chars: int = 8000  # total characters of snippets a search returns
    hook_budget_chars: int = 9500  # hard cap for a hook's additionalContext
    default_k: int = 8
    embed_batch: int = 32
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
        return int(value)  # type: ignore[arg-type]
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
                values.update(data.get("hippo", data))
                break
    for f in fields(Settings):
        key = f"HIPPO_{f.name.upper()}"
        if key in env:
            values[f.name] = env[key]
    known = {f.name: f.type for f in fields(Settings)}
    clean = {k: _coerce(known[k], v) for k, v in values.items() if k in known}
    return replace(Settings(), **clean)
