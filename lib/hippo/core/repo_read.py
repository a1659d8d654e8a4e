"""The one gate for reading a file of the repository: may hippo read it, and read it without surprises.

A cloned repository is untrusted input. Every path that opens a repo file goes through here (the
SessionStart spec files, the live-file check of search and failure-hook results, hippo.toml,
.hippoignore), so one rule holds everywhere: the file lies inside the repo and is no symlink, is not
secret-bearing by name (.env, keys, .git-credentials ...), is not ignored by .gitignore or
.hippoignore, is not under .git or the index directory, is a regular file (a FIFO or device would
block or never end) and is no larger than a cap. Discovery applies the same name rules when it picks
what to index, so a reader never shows what the indexer would have refused.

Stdlib only and cheap: hooks call it. Gitignore answers come from one `git check-ignore` per batch.
"""
from __future__ import annotations

import errno
import fnmatch
import functools
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from hippo.core.indexdir import IndexDir

if TYPE_CHECKING:
    import pathspec

# Never descended into by discovery, never read: VCS internals and hippo's own index directory.
NEVER_DESCEND = frozenset({".git", ".hippo", ".hg", ".svn"})
IGNORE_FILE_BYTES = 256 * 1024  # .gitignore / .hippoignore larger than this are not rules but an attack
GIT_TIMEOUT_S = 3.0

# Secret-bearing file names (glob on the lower-cased base name; "!" = allowed). Templates are
# allowed: their content still goes through secrets.redact like everything else. Matched by set and
# prefix/suffix lookups: a pathspec with ~60 patterns cost ~0.1 ms per file (1 s for 10k files), and
# compiling them into one regex ~1.5 ms at every hook start.
SECRET_GLOBS = [
    ".env", ".env.*", "*.env", "!.env.example", "!.env.sample", "!.env.template", "!.env.dist",
    "!*.env.example", "!*.env.sample", "!*.env.template",
    "*.pem", "*.key", "*.p12", "*.pfx", "*.p8", "*.keystore", "*.jks",
    "*.kdbx", "*.asc", "*.gpg", "*.ovpn", "*.tfstate", "*.tfstate.*", "*.tfvars",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "!*.pub",
    # Data files only: `credentials.py` / `secrets.py` are code worth searching (and are redacted).
    "credentials", "credentials.*", "!credentials.py", "!credentials.go", "!credentials.ts",
    "!credentials.js", "!credentials.rs", "!credentials.java", "!credentials.rb", "!credentials.md",
    "*credentials*.json", "secrets", "secrets.json", "secrets.y*ml", "secrets.toml", "secrets.ini",
    "secrets.env", "secrets.txt", "secrets.properties", "secrets.conf", "secrets.cfg", "*.secrets",
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".git-credentials", ".htpasswd",
    ".dockercfg", "service-account*.json", "serviceaccount*.json", "*.ppk", "master.key",
    "*.mobileprovision", "keystore.properties",
]


class _NameGlobs:
    """Base-name globs as set, prefix and suffix lookups (µs per name, nothing to compile at hook start);
    the few with inner wildcards go through fnmatch."""

    def __init__(self, globs: list[str]) -> None:
        self.exact: set[str] = set()
        prefixes: list[str] = []
        suffixes: list[str] = []
        self.other: list[str] = []  # globs with an inner wildcard
        for g in globs:
            if not any(c in g for c in "*?["):
                self.exact.add(g)
            elif g.startswith("*") and not any(c in g[1:] for c in "*?["):
                suffixes.append(g[1:])
            elif g.endswith("*") and not any(c in g[:-1] for c in "*?["):
                prefixes.append(g[:-1])
            else:
                self.other.append(g)
        self.prefixes, self.suffixes = tuple(prefixes), tuple(suffixes)
        # each inner-wildcard glob with its longest literal part: a cheap `in` test before fnmatch
        self.other_keyed = [(max(g.replace("?", "*").replace("[", "*").split("*"), key=len), g) for g in self.other]

    def match(self, name: str) -> bool:
        return (name in self.exact or name.startswith(self.prefixes) or name.endswith(self.suffixes)
                or any(key in name and fnmatch.fnmatchcase(name, g) for key, g in self.other_keyed))


@functools.lru_cache(maxsize=1)
def _secret_globs() -> tuple[_NameGlobs, _NameGlobs]:
    return (_NameGlobs([g for g in SECRET_GLOBS if not g.startswith("!")]),
            _NameGlobs([g[1:] for g in SECRET_GLOBS if g.startswith("!")]))


def is_secret_path(rel: str) -> bool:
    """True for files that hold credentials by convention (.env, keys, .netrc ...), and for paths that
    hold a token themselves (`config/ghp_<...>.json`): such a file is skipped whole, so its path is
    never stored, searched or shown (issue 19)."""
    name = rel.rpartition("/")[2].lower()
    yes, no = _secret_globs()
    if bool(name) and yes.match(name) and not no.match(name):
        return True
    from hippo.core.secrets import redact_name  # stdlib-only; a name without a long run costs one search

    return redact_name(rel) != rel


class RefusedRead(Exception):
    """hippo will not read this file; `reason` is one word (symlink, not_a_file, too_large, ...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def read_regular(path: Path | str, limit: int, root: Path | str | None = None, truncate: bool = False) -> bytes:
    """At most `limit` bytes of a regular file, never through a symlink and never blocking.

    Raises FileNotFoundError when it is absent and RefusedRead when it is a symlink, not a regular
    file, larger than `limit` (unless `truncate`: then its first `limit` bytes), or (with `root`) in a
    directory that resolves outside `root`."""
    path = os.fspath(path)
    if root is not None and not _inside(os.path.realpath(os.path.dirname(path) or "."), os.path.realpath(root)):
        raise RefusedRead("outside_root", "lies in a directory that resolves outside the repository")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or (os.path.islink(path) and exc.errno != errno.ENOENT):
            raise RefusedRead("symlink", "is a symlink; hippo does not follow links inside a repository") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedRead("not_a_file", "is not a regular file")
        if st.st_size > limit and not truncate:
            raise RefusedRead("too_large", f"is larger than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            data = os.read(fd, min(1 << 20, limit + 1 - size))
            if not data:
                break
            chunks.append(data)
            size += len(data)
        if size > limit:
            if truncate:
                return b"".join(chunks)[:limit]
            raise RefusedRead("too_large", f"is larger than {limit} bytes")  # grew while we read it
        return b"".join(chunks)
    finally:
        os.close(fd)


def _normalise(rel: str) -> str | None:
    """A clean repo-relative path, or None when it is absolute or climbs out."""
    if not rel or os.path.isabs(rel) or "\0" in rel:
        return None
    norm = os.path.normpath(rel.replace("\\", "/")).replace(os.sep, "/")
    if norm in (".", "..") or norm.startswith("../"):
        return None
    return norm


class RepoReader:
    """The read rules for one repository root, built once and reused for a handful of files."""

    def __init__(self, root: Path | str, settings=None, *, max_bytes: int | None = None) -> None:
        self.root = Path(root)
        self.root_real = os.path.realpath(self.root)
        self.settings = settings
        self.max_bytes = int(max_bytes or (settings.max_file_bytes if settings is not None else 1_000_000))
        self.index_rel: str | None = None
        if settings is not None:
            index_real = os.path.realpath(IndexDir.of(self.root, settings).path)
            if _inside(index_real, self.root_real) and index_real != self.root_real:
                self.index_rel = os.path.relpath(index_real, self.root_real).replace(os.sep, "/")
        self._user_spec: object = None  # built on first use; False = no rules
        self._dir_ok: dict[str, bool] = {}

    # -- rules without reading the file ------------------------------------------------------
    def name_reason(self, rel: str) -> str | None:
        """Why `rel` may not be read, judged by its path alone (plus .hippoignore), or None."""
        norm = _normalise(rel)
        if norm is None:
            return "outside_root"
        parts = norm.split("/")
        if any(p in NEVER_DESCEND for p in parts[:-1]) or parts[-1] in NEVER_DESCEND:
            return "ignored"
        if self.index_rel and (norm == self.index_rel or norm.startswith(self.index_rel + "/")):
            return "ignored"
        if is_secret_path(norm):
            return "secret"
        spec = self._hippoignore()
        if spec is not None and spec.match_file(norm):  # type: ignore[attr-defined]
            return "ignored"
        return None

    def _hippoignore(self):
        """The .hippoignore + settings.extra_ignores rules; pathspec is imported only when there are any."""
        if self._user_spec is None:
            lines: list[str] = []
            try:
                raw = read_regular(self.root / ".hippoignore", IGNORE_FILE_BYTES, root=self.root)
                lines = raw.decode("utf-8", "replace").splitlines()
            except (OSError, RefusedRead):
                pass
            if self.settings is not None:
                lines += list(self.settings.extra_ignores)
            lines = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
            self._user_spec = gitignore_spec(lines) if lines else False
        return self._user_spec or None

    def refusals(self, rels: Iterable[str], *, check_ignored: bool = True) -> dict[str, str]:
        """rel -> reason for each path hippo may not read (by name, .hippoignore, .gitignore)."""
        out: dict[str, str] = {}
        rest: list[str] = []
        for rel in rels:
            reason = self.name_reason(rel)
            if reason:
                out[rel] = reason
            else:
                rest.append(rel)
        if check_ignored and rest:
            for rel in self._gitignored(rest):
                out[rel] = "ignored"
        return out

    def _gitignored(self, rels: list[str]) -> set[str]:
        """The subset .gitignore (and info/exclude, core.excludesFile) ignores: one `git check-ignore`."""
        from hippo.core import gitutil

        norm = {_normalise(r) or r: r for r in rels}
        data = b"\0".join(p.encode("utf-8", "surrogateescape") for p in norm) + b"\0"
        try:
            proc = gitutil.run(self.root, "check-ignore", "-z", "--stdin", input=data, check=False,
                               timeout=GIT_TIMEOUT_S)
        except gitutil.GitError:
            proc = None
        if proc is not None and proc.returncode in (0, 1):
            hits = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
            return {norm[h] for h in hits if h in norm}
        # Not a git work tree (or git failed): the .gitignore files themselves, as discovery's walk reads them.
        return {orig for n, orig in norm.items() if gitignored_without_git(self.root, n)}

    # -- reading -----------------------------------------------------------------------------
    def _dir_inside(self, norm: str) -> bool:
        parent = norm.rpartition("/")[0]
        ok = self._dir_ok.get(parent)
        if ok is None:
            real = os.path.realpath(os.path.join(self.root_real, parent)) if parent else self.root_real
            ok = self._dir_ok[parent] = _inside(real, self.root_real)
        return ok

    def read_bytes(self, rel: str, limit: int | None = None, *, check_ignored: bool = True,
                   checked: bool = False, truncate: bool = False) -> bytes | None:
        """The file's bytes, or None when it is missing or hippo may not read it.

        `checked=True`: the caller already ran `refusals` on this path (a batch), skip the rules.
        `truncate=True`: the first `limit` bytes of a larger file instead of None."""
        norm = _normalise(rel)
        if norm is None:
            return None
        if not checked and self.refusals([rel], check_ignored=check_ignored):
            return None
        if not self._dir_inside(norm):
            return None
        try:
            return read_regular(os.path.join(self.root_real, norm), limit or self.max_bytes, truncate=truncate)
        except (OSError, RefusedRead):
            return None

    def read_text(self, rel: str, limit: int | None = None, **kw) -> str | None:
        data = self.read_bytes(rel, limit, **kw)
        return None if data is None else data.decode("utf-8", "replace")


# -- .gitignore rules without git (a tree that is not a work tree) ----------------------------------
def load_ignore_file(path: Path) -> pathspec.PathSpec | None:
    try:  # never through a symlink, never a FIFO that would block the walk
        lines = read_regular(path, IGNORE_FILE_BYTES).decode("utf-8", "replace").splitlines()
    except (OSError, RefusedRead):
        return None
    return gitignore_spec(lines) if lines else None


def gitignore_spec(lines: list[str]) -> pathspec.PathSpec:
    import pathspec  # only when there are rules: a repo without .hippoignore lists files without it

    return pathspec.GitIgnoreSpec.from_lines(lines)


def ignore_verdict(spec: pathspec.PathSpec, rel: str) -> bool | None:
    """True = ignored, False = re-included by a `!` rule, None = no rule matched."""
    check = getattr(spec, "check_file", None)
    if check is not None:  # pathspec >= 0.12
        return check(rel).include
    return True if spec.match_file(rel) else None

def gitignored_without_git(root: Path, rel: str) -> bool:
    """Non-git mode: is `rel` (or a parent dir) ignored by a .gitignore on its way down?"""
    parts = rel.split("/")
    for depth in range(1, len(parts) + 1):
        target = "/".join(parts[:depth])
        is_dir = depth < len(parts)
        verdict: bool | None = None
        for i in range(depth):
            spec = load_ignore_file(root.joinpath(*parts[:i], ".gitignore"))
            if spec is None:
                continue
            v = ignore_verdict(spec, "/".join(parts[i:depth]) + ("/" if is_dir else ""))
            if v is not None:
                verdict = v
        if verdict:
            return True
        if target in NEVER_DESCEND or parts[depth - 1] in NEVER_DESCEND:
            return True
    return False
