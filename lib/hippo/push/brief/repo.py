"""A read-only view of a cloned repository for the brief: its files are untrusted input.

Reads go through hippo.core.repo_read, the gate every reader of repo files shares: no symlink, FIFO,
secret-bearing name (.env, keys, .git-credentials), .gitignored/.hippoignored file, nothing under
.git or the index dir; size-capped and redacted;
names are matched case-insensitively (`Readme.md`, `makefile`). Listing uses `git ls-files`,
so ignored and untracked files never reach the brief. Stdlib only: SessionStart runs this.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hippo.core.gitutil import git_env

MAX_BYTES = 256_000
MAX_TRACKED = 200_000


class Repo:
    def __init__(self, root: Path, settings=None):
        from hippo.core.repo_read import RepoReader

        self.root = root
        self._real = root.resolve()
        self.reader = RepoReader(root, settings, max_bytes=MAX_BYTES)
        self._allowed: dict[str, bool] = {}
        self._from_git = False
        self._tracked: list[str] | None = None
        self._top: dict[str, str] | None = None
        self._texts: dict[tuple[str, int, bool], str | None] = {}
        self.memo: dict = {}  # extractors share parsed results (a README's sections) through this

    # --- names -------------------------------------------------------------------------------
    def top(self) -> dict[str, str]:
        """Lower-cased name → real name of the entries at the repo root."""
        if self._top is None:
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
        """Repo-relative paths git tracks (falls back to a shallow walk outside git)."""
        if self._tracked is None:
            try:
                res = subprocess.run(["git", "-C", str(self.root), "ls-files", "-z"], capture_output=True, timeout=5,
                                     env=git_env())
                out = res.stdout.decode("utf-8", "replace") if res.returncode == 0 else ""
            except (OSError, subprocess.SubprocessError):
                out = ""
            files = [f for f in out.split("\0") if f][:MAX_TRACKED]
            self._from_git = bool(files)
            self._tracked = files or self._walk()
        return self._tracked

    def _walk(self, max_depth: int = 3) -> list[str]:
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            depth = 0 if rel == "." else rel.count("/") + 1
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "target")]
            if depth >= max_depth:
                dirnames[:] = []
            out += [n if rel == "." else f"{rel}/{n}" for n in filenames]
            if len(out) > 20_000:
                break
        return out

    def listdir(self, rel: str) -> list[str]:
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
            return None
        return redact(text) if redacted else text

    def head(self, rel: str, size: int = 2048) -> str:
        """The first `size` bytes of a file inside the repo (for a docstring or comment), redacted."""
        self.vet([rel])
        if not self._allowed[rel]:
            return ""
        raw = self.reader.read_bytes(rel, size, checked=True, truncate=True)
        return "" if raw is None else redact(raw.decode("utf-8", "replace"))


def redact(text: str) -> str:
    """Credentials out (build files and docs hold example ones too); the line count is kept."""
    from hippo.core.secrets import redact as _redact  # stdlib-only

    return _redact(text)[0]
