"""A read-only view of a cloned repository for the brief: its files are untrusted input.

Reads go through hippo.core.repo_read, the gate every reader of repo files shares: no symlink, FIFO,
secret-bearing name (.env, keys, .git-credentials), .gitignored/.hippoignored file, nothing under
.git or the index dir; size-capped and redacted;
names are matched case-insensitively (`Readme.md`, `makefile`). Listing uses `git ls-files`,
so ignored and untracked files never reach the brief. Stdlib only: SessionStart runs this.

The files are hostile input for the parsers too (issue 19): every manifest is read and parsed once
per brief (`toml`, `json`, `ini`, cached here), a manifest parsed whole is size-capped, a TOML whose
dotted keys would cost the stdlib parser quadratic time is refused before it runs, and a `deadline`
lets the brief's steps stop between files. What was skipped, and why, is kept in `notes` for the log.
"""
from __future__ import annotations

import configparser
import json
import os
import time
import zlib
from pathlib import Path

from hippo.core import gitutil

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

MAX_BYTES = 256_000  # a line-scanned file (Makefile, justfile, workflow, doc); the scans are linear
MANIFEST_BYTES = 64_000  # a manifest parsed whole (TOML, JSON, INI); real ones are a few KB
# tomllib spends time quadratic in the parts of one dotted key (`a.a.a…`); a key cannot span lines, so the
# squares of the per-line dot counts bound that cost. Lines with a few dots (versions, URLs) are free.
TOML_DOTS_FREE = 16
TOML_DOT_COST = 100_000
MAX_TRACKED = 200_000
LISTING_VERSION = "hippo-ls-files-1"  # first word of the cached listing's key


class Repo:
    def __init__(self, root: Path, settings=None, deadline: float | None = None, cpu_seconds: float | None = None,
                 cache_dir: Path | None = None):
        """`deadline` is a time.monotonic() value after which the brief's steps stop taking new work;
        `cpu_seconds` stops them once the calling thread has spent that much CPU time. A hostile repo
        runs into the CPU budget; a starved process on a loaded laptop gets its wall time up to `deadline`.
        `cache_dir` (the index dir) keeps the tracked-file list between sessions (`tracked`)."""
        from hippo.core.repo_read import RepoReader

        self.root = root
        self._real = root.resolve()
        self.reader = RepoReader(root, settings, max_bytes=MAX_BYTES)
        self.deadline = deadline
        self._cpu_end = None if cpu_seconds is None else time.thread_time() + cpu_seconds
        self.notes: list[str] = []  # files skipped (size, cost) or steps cut by the deadline: for the log
        self._allowed: dict[str, bool] = {}
        self._from_git = False
        self._tracked: list[str] | None = None
        self._top: dict[str, str] | None = None
        self._texts: dict[tuple[str, int, bool], str | None] = {}
        self.memo: dict = {}  # extractors share parsed results (a README's sections) through this
        self.cache_dir = cache_dir
        self.inputs: dict[str, list[int] | None] = {}  # every path looked at, with its stat then (brief.cache)

    # --- time ----------------------------------------------------------------------------------
    def expired(self) -> bool:
        if self._cpu_end is not None and time.thread_time() >= self._cpu_end:
            return True
        return self.deadline is not None and time.monotonic() >= self.deadline

    def seconds_left(self, default: float) -> float:
        """What is left before the deadline, at most `default` (a subprocess timeout), at least 0.05 s."""
        if self.deadline is None:
            return default
        return max(0.05, min(default, self.deadline - time.monotonic()))

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    # --- names -------------------------------------------------------------------------------
    def saw(self, rel: str, entries: bool = False) -> None:
        """Record `rel` as an input of this brief, with its stat now (a kept brief is valid while none moved);
        `entries`: a folder whose names were listed, marked by those names (its mtime moves with any temp file)."""
        key = f"{rel}/" if entries else rel
        if key not in self.inputs:
            self.inputs[key] = stat_mark(self.root, key)

    def is_dir(self, rel: str) -> bool:
        self.saw(rel)
        return (self.root / rel).is_dir()

    def is_file(self, rel: str) -> bool:
        self.saw(rel)
        return (self.root / rel).is_file()

    def top(self) -> dict[str, str]:
        """Lower-cased name → real name of the entries at the repo root."""
        if self._top is None:
            self.saw(".", entries=True)
            try:
                self._top = {e.name.lower(): e.name for e in os.scandir(self.root)}
            except OSError:
                self._top = {}
        return self._top

    def find(self, *names: str) -> str | None:
        """The first of `names` present at the root, matched case-insensitively; its real name."""
        top = self.top()
        for name in names:
            if name.lower() in top:
                return top[name.lower()]
        return None

    def tracked(self) -> list[str]:
        """Repo-relative paths git tracks (falls back to a shallow walk outside git). The listing is kept in
        the index dir, keyed on git's index file (inode, size, mtime: git replaces the file on every write)
        and HEAD, so a session start in an unchanged checkout does not run `git ls-files` again."""
        if self._tracked is None:
            key = self.listing_key()
            listed = self._cached_listing(key)
            if listed is None:
                listed = gitutil.output(self.root, "ls-files", "-z", timeout=self.seconds_left(5.0))
                if listed is not None:
                    self._store_listing(key, listed)
            out = listed.decode("utf-8", "replace") if listed is not None else ""
            files = [f for f in out.split("\0") if f][:MAX_TRACKED]
            self._from_git = bool(files)
            self._tracked = files or self._walk()
        return self._tracked

    @property
    def from_git(self) -> bool:
        """`tracked()` came from git's listing (not the shallow walk outside git)."""
        return self._from_git

    def listing_key(self) -> bytes | None:
        """What the tracked-file list depends on; None when it cannot be told cheaply (a linked worktree's
        .git file, no index yet)."""
        git_dir = os.path.join(self.root, ".git")
        try:
            st = os.stat(os.path.join(git_dir, "index"))
            with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
                head = fh.read(4096)
        except OSError:
            return None
        return f"{LISTING_VERSION} {st.st_ino} {st.st_size} {st.st_mtime_ns} ".encode() + head.strip() + b"\n"

    def _cached_listing(self, key: bytes | None) -> bytes | None:
        if key is None or self.cache_dir is None:
            return None
        from hippo.core.indexdir import NOFOLLOW, IndexDir

        try:
            fd = os.open(IndexDir(self.cache_dir).tracked_files, os.O_RDONLY | NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        return data[len(key):] if data.startswith(key) else None

    def _store_listing(self, key: bytes | None, listed: bytes) -> None:
        if key is None or self.cache_dir is None or not os.path.isdir(self.cache_dir):
            return  # the index dir is made by the hook's session record or `hippo index`, not here
        from hippo.core.errors import HippoError
        from hippo.core.indexdir import IndexDir, atomic_write

        try:
            atomic_write(IndexDir(self.cache_dir).tracked_files, key + listed)
        except (OSError, HippoError) as exc:  # a read-only index dir: list with git next time too
            self.note(f"could not keep the file list: {exc}")

    def _walk(self, max_depth: int = 3) -> list[str]:
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            depth = 0 if rel == "." else rel.count("/") + 1
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "target")]
            if depth >= max_depth:
                dirnames[:] = []
            out += [n if rel == "." else f"{rel}/{n}" for n in filenames]
            if len(out) > 20_000 or self.expired():
                break
        return out

    def listdir(self, rel: str) -> list[str]:
        self.saw(rel, entries=True)
        try:
            return sorted(e.name for e in os.scandir(self.root / rel))
        except OSError:
            return []

    # --- content -----------------------------------------------------------------------------
    def read(self, rel: str, limit: int = MAX_BYTES, redacted: bool = True) -> str | None:
        """The file's text, redacted; None when absent, too big, not a regular file or outside the repo.

        `redacted=False` is for large docs whose chosen excerpts the caller redacts itself (redacting a
        150 KB README whole costs tens of milliseconds on the session's first prompt)."""
        key = (rel, limit, redacted)
        self.saw(rel)
        if key not in self._texts:
            self._texts[key] = self._read(rel, limit, redacted)
        return self._texts[key]

    def vet(self, rels: list[str]) -> None:
        """Decide for many paths at once whether they may be read (one `git check-ignore` for the
        untracked ones: a file git tracks is never ignored)."""
        todo = [r for r in rels if r not in self._allowed]
        if not todo:
            return
        if "tracked" not in self.memo:
            listed = self.tracked()
            self.memo["tracked"] = set(listed) if self._from_git else set()
        tracked = self.memo["tracked"]
        refused = self.reader.refusals(todo, check_ignored=False)
        unknown = [r for r in todo if r not in refused and r not in tracked]
        refused.update(self.reader.refusals(unknown) if unknown else {})
        for rel in todo:
            self._allowed[rel] = rel not in refused

    def _read(self, rel: str, limit: int, redacted: bool) -> str | None:
        self.vet([rel])
        if not self._allowed[rel]:
            return None
        text = self.reader.read_text(rel, limit, checked=True)  # never through a link, never a FIFO
        if text is None:
            try:
                size = os.lstat(self.root / rel).st_size
            except OSError:
                return None
            if size > limit:
                self.note(f"skipped {rel}: {size // 1000} KB, over the {limit // 1000} KB cap")
            return None
        return redact(text) if redacted else text

    # --- parsed manifests: each path read and parsed once per brief ------------------------------
    def _parsed(self, kind: str, rel: str | None, parse):
        if not rel:
            return None
        key = (kind, rel)
        if key not in self.memo:
            text = self.read(rel, limit=MANIFEST_BYTES)
            value = None
            if text is not None:
                try:
                    value = parse(rel, text)
                except (ValueError, TypeError, RecursionError, configparser.Error) as exc:
                    self.note(f"could not parse {rel}: {type(exc).__name__}")
            self.memo[key] = value
        return self.memo[key]

    def toml(self, rel: str | None) -> dict:
        """The TOML file's table ({} when absent, too big, malformed or too costly to parse)."""
        value = self._parsed("toml", rel, self._load_toml)
        return value if isinstance(value, dict) else {}

    def json(self, rel: str | None):
        """The JSON file's value (None when absent, too big or malformed; nesting depth is bounded by
        the recursion limit, which the parse turns into RecursionError)."""
        return self._parsed("json", rel, lambda _rel, text: json.loads(text))

    def ini(self, rel: str | None) -> configparser.ConfigParser | None:
        """The INI file (tox.ini, setup.cfg) as a ConfigParser, or None."""
        value = self._parsed("ini", rel, lambda _rel, text: parse_ini(text))
        return value if isinstance(value, configparser.ConfigParser) else None

    def _load_toml(self, rel: str, text: str) -> dict | None:
        cost = toml_key_cost(text)
        if cost > TOML_DOT_COST:
            self.note(f"skipped {rel}: its dotted keys would cost the TOML parser ~{cost:,} steps")
            return None
        return tomllib.loads(text)

    def head(self, rel: str, size: int = 2048) -> str:
        """The first `size` bytes of a file inside the repo (for a docstring or comment), redacted."""
        self.saw(rel)
        self.vet([rel])
        if not self._allowed[rel]:
            return ""
        raw = self.reader.read_bytes(rel, size, checked=True, truncate=True)
        return "" if raw is None else redact(raw.decode("utf-8", "replace"))


def stat_mark(root: Path, key: str) -> list[int] | None:
    """What changes when a file is edited, replaced or removed: mtime, size, inode; for a folder key (`rel/`),
    a checksum of its entries' names. None: absent."""
    if key.endswith("/"):
        try:
            names = sorted(e.name for e in os.scandir(root / key[:-1]))
        except (OSError, ValueError):
            return None
        return [0, len(names), zlib.crc32("\0".join(names).encode("utf-8", "surrogateescape"))]
    try:
        st = os.lstat(root / key)
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def toml_key_cost(text: str) -> int:
    """Sum of squared dot counts over the lines with many dots: an upper bound on tomllib's quadratic work."""
    cost = 0
    for line in text.split("\n"):
        dots = line.count(".")
        if dots > TOML_DOTS_FREE:
            cost += dots * dots
    return cost


def parse_ini(text: str) -> configparser.ConfigParser:
    """configparser's option pattern (`.*?` then `\\s*`) is quadratic in a run of spaces inside a line:
    runs inside a line are collapsed first (the indent that marks a continuation line is kept)."""
    lines = []
    for line in text.split("\n"):
        body = line.lstrip()
        lines.append(line[: len(line) - len(body)] + " ".join(body.split()))
    cp = configparser.ConfigParser(interpolation=None, strict=False)
    cp.read_string("\n".join(lines))
    return cp


def redact(text: str) -> str:
    """Credentials out (build files and docs hold example ones too); the line count is kept."""
    from hippo.core.secrets import redact as _redact  # stdlib-only

    return _redact(text)[0]
