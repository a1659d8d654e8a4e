"""Settings: defaults < `hippo.toml` (or `.hippo/config.toml`) < HIPPO_* environment variables.

Stdlib only: hooks import this on their fast path.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hippo.core.errors import HippoError

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
# it talks to (shared_index) and what it downloads or imports (model: a `module:factory` spec runs Python code).
# A cloned repo is untrusted input; these come only from the environment (HIPPO_INDEX_DIR, HIPPO_SHARED_INDEX,
# HIPPO_MODEL, HIPPO_RERANK_MODEL), and so does how much of that remote it may download (HIPPO_SHARED_INDEX_MAX_MB).
ENV_ONLY = frozenset({"index_dir", "shared_index", "model", "rerank_model", "shared_index_max_mb"})


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
    model: str = DEFAULT_MODEL  # or any fastembed model name (downloads from the hub), or a `module:factory` plugin
    max_file_bytes: int = 1_000_000
    budget_chars: int = 8000  # total characters of snippets a search returns
    default_k: int = 8
    threads: int = 0  # 0 = all cores
    index_submodules: bool = False
    spec_globs: tuple[str, ...] = DEFAULT_SPEC_GLOBS
    shared_index: str = ""  # s3://bucket/prefix for a team index (see docs/team.md)
    shared_index_max_mb: int = 2048  # a team snapshot larger than this is not downloaded
    extra_ignores: tuple[str, ...] = field(default_factory=tuple)
    rerank_model: str = ""  # a cross-encoder (fastembed name or local folder) reranking search; off when empty


# --- validation -------------------------------------------------------------------------------
# A repository's hippo.toml is untrusted input: every value is type-checked, and resource settings are
# clamped to ranges a cloned repo cannot use to exhaust memory or CPU in the background indexer. The
# user's own environment may go wider, but is type-checked the same way. A bad value never raises: it
# becomes one line ("hippo.toml: default_k must be an integer 1-50, got 'abc'; using 8") and the default.
CONFIG_FILES = ("hippo.toml", ".hippo/config.toml")
MAX_CONFIG_BYTES = 64 * 1024  # a real hippo.toml is a few hundred bytes
MAX_PROBLEMS = 12  # per load: a hostile file with 1,000 bad keys gets 12 lines and a count
MAX_GLOBS = 200
MAX_GLOB_CHARS = 300
MAX_STR_CHARS = 4096
_CPUS = os.cpu_count() or 1


@dataclass(frozen=True)
class _Rule:
    kind: str  # "int" | "bool" | "globs" | "str"
    repo: tuple[int, int] | None = None  # allowed range from a repository file (ints: clamped)
    env: tuple[int, int] | None = None  # allowed range from HIPPO_* (ints: clamped)
    note: str = ""


RULES: dict[str, _Rule] = {
    "index_dir": _Rule("str"),
    "model": _Rule("str"),
    "shared_index": _Rule("str"),
    "rerank_model": _Rule("str"),
    "shared_index_max_mb": _Rule("int", (1, 1_000_000), (1, 1_000_000)),
    "max_file_bytes": _Rule("int", (1_000, 4_000_000), (1_000, 1_000_000_000)),
    "budget_chars": _Rule("int", (500, 40_000), (200, 2_000_000)),
    "default_k": _Rule("int", (1, 50), (1, 50)),
    "threads": _Rule("int", (0, _CPUS), (0, 512), " (0 = all cores)"),
    "index_submodules": _Rule("bool"),
    "spec_globs": _Rule("globs"),
    "extra_ignores": _Rule("globs"),
}
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


class _Bad(ValueError):
    """A value of the wrong type or shape; the default is used."""


def _show(value: object) -> str:
    """A value as a short, printable, escape-free string (a repo file may hold terminal escapes)."""
    text = ascii(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_int(value: object) -> int:
    if isinstance(value, bool):  # True is an int to Python, not to a user
        raise _Bad
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value) < 40:
        return int(value.strip())
    raise _Bad


def _as_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise _Bad


def _clean_string(value: str, limit: int) -> str:
    if len(value) > limit or any(ord(c) < 32 or c == "\x7f" for c in value):
        raise _Bad
    return value


def _as_globs(value: object) -> tuple[str, ...]:
    if isinstance(value, str):  # the environment's form: comma-separated
        items: list[object] = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise _Bad
    if len(items) > MAX_GLOBS or not all(isinstance(v, str) and v.strip() for v in items):
        raise _Bad
    return tuple(_clean_string(str(v).strip(), MAX_GLOB_CHARS) for v in items)


def _describe(rule: _Rule, source_is_env: bool) -> str:
    if rule.kind == "int":
        lo, hi = (rule.env if source_is_env else rule.repo) or (0, 0)
        return f"an integer {lo}-{hi}{rule.note}"
    if rule.kind == "bool":
        return "true or false"
    if rule.kind == "globs":
        return "a comma-separated list of globs" if source_is_env else f"a list of at most {MAX_GLOBS} glob strings"
    return f"a string of at most {MAX_STR_CHARS} characters without control characters"


def _validate(name: str, value: object, where: str, source_is_env: bool, problems: list[str]) -> object:
    """The value to use for one setting from one source, or _SKIP (keep what lower sources gave)."""
    rule = RULES[name]
    default = getattr(_DEFAULTS, name)
    try:
        if rule.kind == "int":
            n = _as_int(value)
            lo, hi = (rule.env if source_is_env else rule.repo) or (n, n)
            if lo <= n <= hi:
                return n
            use = min(max(n, lo), hi)
            problems.append(f"{where}: {name} must be {_describe(rule, source_is_env)}"
                            f"{'' if source_is_env else ' in a repository config'}, got {_show(value)}; "
                            f"using {use}")
            return use
        if rule.kind == "bool":
            return _as_bool(value)
        if rule.kind == "globs":
            return _as_globs(value)
        if not isinstance(value, str):
            raise _Bad
        return _clean_string(value, MAX_STR_CHARS)
    except _Bad:
        shown = "the defaults" if isinstance(default, tuple) else _show(default)
        problems.append(f"{where}: {name} must be {_describe(rule, source_is_env)}, got {_show(value)}; "
                        f"using {shown}")
        return _SKIP


_DEFAULTS = Settings()
_SKIP = object()


def _read_config_file(root: Path, problems: list[str]) -> tuple[str, dict] | None:
    """(display name, table) of the first config file present; a problem line when it is unusable."""
    from hippo.core.repo_read import RefusedRead, read_regular

    for name in CONFIG_FILES:
        path = root / name
        try:
            raw = read_regular(path, MAX_CONFIG_BYTES, root=root)
        except FileNotFoundError:
            continue
        except RefusedRead as exc:
            problems.append(f"{name}: the file {exc}; ignored, using defaults")
            return None
        except OSError as exc:
            problems.append(f"{name}: could not be read ({exc.strerror or exc}); ignored, using defaults")
            return None
        try:
            data = _toml.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(f"{name}: not UTF-8 text; ignored, using defaults")
            return None
        except (ValueError, RecursionError) as exc:  # tomllib.TOMLDecodeError is a ValueError
            problems.append(f"{name}: not valid TOML ({_show(str(exc))[1:-1]}); ignored, using defaults")
            return None
        table = data.get("hippo", data)
        if not isinstance(table, dict):
            problems.append(f"{name}: [hippo] must be a table, got {_show(table)}; ignored, using defaults")
            return None
        return name, table
    return None


def check_settings(root: Path | None = None, env: dict[str, str] | None = None) -> tuple[Settings, list[str]]:
    """(settings, one line per problem) from defaults < the repo's config file < HIPPO_* variables."""
    env = dict(os.environ) if env is None else env
    problems: list[str] = []
    values: dict[str, Any] = {}
    found = _read_config_file(root, problems) if root is not None else None
    if found is not None:
        name, table = found
        for key, value in table.items():
            if key in ENV_ONLY:
                problems.append(f"{name}: {key} can only be set by HIPPO_{key.upper()} (a repository may not "
                                "choose it); ignored")
            elif key not in RULES:
                problems.append(f"{name}: unknown setting {_show(key)}; ignored")
            else:
                got = _validate(key, value, name, False, problems)
                if got is not _SKIP:
                    values[key] = got
    for key in RULES:
        var = f"HIPPO_{key.upper()}"
        if var in env:
            got = _validate(key, env[var], var, True, problems)
            if got is not _SKIP:
                values[key] = got
    if len(problems) > MAX_PROBLEMS:
        problems = problems[:MAX_PROBLEMS] + [f"... and {len(problems) - MAX_PROBLEMS} more configuration problems"]
    return replace(_DEFAULTS, **values), problems


_reported: set[str] = set()


def _to_stderr(line: str) -> None:
    import sys

    try:
        print(f"hippo: {line}", file=sys.stderr)
    except (OSError, ValueError):
        pass


def load_settings(root: Path | None = None, env: dict[str, str] | None = None, *,
                  warn=None) -> Settings:
    """Merge defaults, the repo's config file and the environment; never raises for bad values.

    Each problem is reported once per process through `warn(line)` (default: stderr, which the CLI
    user sees and which background processes send to hippo.log; hooks pass a logger)."""
    settings, problems = check_settings(root, env)
    for line in problems:
        if line not in _reported:
            _reported.add(line)
            (warn or _to_stderr)(line)
    return settings
