"""Thin wrappers over the `git` CLI: repo root, HEAD, ls-files, diff-files, status, log; and `run`, the one
way any module of hippo spawns git (safe environment, no repository-configured commands, a timeout).

Stdlib only (hooks call this on their fast path), and the git binary itself rather than GitPython:
a handful of porcelain commands whose `-z` output we parse byte for byte. Every listing uses `-z`, and names are decoded with `surrogateescape`
so non-UTF-8 file names round-trip to the file system. Reads run with GIT_OPTIONAL_LOCKS=0 so
we never take the index lock while the user runs git.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hippo.core.errors import HippoError, NotARepoError

_ENC = "utf-8"
_ERRORS = "surrogateescape"
_GITLINK = "160000"
_SYMLINK = "120000"


class GitError(HippoError):
    """A git command failed in a way the caller cannot recover from."""


class GitTimeout(GitError):
    """A git command did not finish within its timeout (a huge repo, a hung filesystem, a lock)."""


# The longest any git call may take unless its caller asks for less: whole-repo listings of a big, cold
# repository take seconds; hooks pass their own budget (a second or two).
TIMEOUT_S = 120.0
# Subcommands that can print a patch or read blobs through filters: a repository's config must not make
# them run an external diff driver or a textconv command.
_DIFFING = frozenset({"diff", "diff-files", "diff-index", "diff-tree", "log", "show"})


def git_env() -> dict[str, str]:
    """The environment every git call of hippo runs with: no optional locks, no prompts, no GIT_DIR leaking in."""
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("LC_ALL", "C")
    # A hook may run inside another git process (e.g. a commit hook); its GIT_DIR would win.
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_EXTERNAL_DIFF"):
        env.pop(var, None)
    return env


def run(root: Path | str, *args: str, check: bool = True, timeout: float = TIMEOUT_S,
        input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run `git <args>` in `root`: the one place hippo spawns git (tests/test_gitutil.py holds every other
    module to it). Safe for a cloned, untrusted repository: `git_env()`, no fsmonitor hook, no external
    diff or textconv for the commands that diff, stdin closed (or `input`), and a timeout.

    Raises GitError when git cannot be run, GitTimeout after `timeout` seconds, and GitError for a non-zero
    exit when `check` (the caller reads `returncode` otherwise)."""
    sub, rest = args[0], args[1:]
    no_filters = ("--no-ext-diff", "--no-textconv") if sub in _DIFFING else ()
    cmd = ["git", "-C", str(root), "-c", "core.quotepath=off", "-c", "core.fsmonitor=false", sub, *no_filters, *rest]
    stdin = subprocess.DEVNULL if input is None else None
    try:
        proc = subprocess.run(cmd, capture_output=True, env=git_env(), stdin=stdin, input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GitTimeout(f"git {sub} did not finish within {timeout:g}s in {root}; gave up.") from None
    except FileNotFoundError as exc:  # git not installed
        raise GitError("git is not installed or not on PATH.") from exc
    except OSError as exc:
        raise GitError(f"could not run git in {root}: {exc.strerror or exc}") from exc
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(_ENC, _ERRORS).strip().splitlines()
        first = msg[0] if msg else f"exit code {proc.returncode}"
        raise GitError(f"git {sub} failed in {root}: {first}")
    return proc


def output(root: Path | str, *args: str, timeout: float, ok: tuple[int, ...] = (0,)) -> bytes | None:
    """stdout of `run(...)` when git exits with a code in `ok`; None when it failed, timed out or is
    missing. For the hooks and the brief, which go without rather than fail."""
    try:
        proc = run(root, *args, check=False, timeout=timeout)
    except GitError:
        return None
    return proc.stdout if proc.returncode in ok else None


def _out(root: Path | str, *args: str) -> str:
    return run(root, *args).stdout.decode(_ENC, _ERRORS)


def _split_z(data: str) -> list[str]:
    return [p for p in data.split("\0") if p]


# Work-tree top levels git named in this process (realpath -> realpath). `hippo index` asks git for the
# top level once (find_root) and every later "is this a repo?" on the same path is answered from here, as
# long as its `.git` is still there: each git process costs 5-50 ms on a busy machine.
_TOPLEVELS: dict[str, str] = {}


def _toplevel(base: Path | str) -> str | None:
    """git's top level for `base` (a realpath), or None outside a work tree."""
    key = os.path.realpath(base)
    top = _TOPLEVELS.get(key)
    if top is not None and os.path.lexists(os.path.join(top, ".git")):
        return top
    try:
        proc = run(key, "rev-parse", "--show-toplevel", check=False)
    except GitError:
        return None
    top = proc.stdout.decode(_ENC, _ERRORS).strip() if proc.returncode == 0 else ""
    if not top:
        _TOPLEVELS.pop(key, None)
        return None
    top = os.path.realpath(top)
    _TOPLEVELS[key] = _TOPLEVELS[top] = top
    return top


def find_root(start: Path) -> Path:
    """The git top-level containing `start`; a plain directory if it is not in a repo."""
    start = Path(start).expanduser()
    if not start.exists():
        raise NotARepoError(f"{start} does not exist.")
    base = start if start.is_dir() else start.parent
    top = _toplevel(base)
    return Path(top) if top else base.resolve()


def is_toplevel(root: Path | str) -> bool:
    """True when `root` is the top level of a git work tree (git's paths are relative to it)."""
    top = _toplevel(root)
    return top is not None and top == os.path.realpath(root)


def is_git_repo(root: Path) -> bool:
    """True when `root` is inside a git work tree."""
    return _toplevel(root) is not None


def head_commit(root: Path) -> str | None:
    """Full sha of HEAD; None when there are no commits (or no repo)."""
    try:
        proc = run(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    except GitError:
        return None
    sha = proc.stdout.decode(_ENC).strip()
    return sha if proc.returncode == 0 and sha else None


def current_branch(root: Path) -> str | None:
    """Short branch name; None when HEAD is detached or not a repo."""
    try:
        proc = run(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    except GitError:
        return None
    name = proc.stdout.decode(_ENC, _ERRORS).strip()
    return name if proc.returncode == 0 and name else None


def is_commit(root: Path, sha: str | None) -> bool:
    """Does `sha` still name a commit (it may vanish after a rebase + gc)."""
    if not sha or sha.startswith("-"):
        return False
    try:
        return run(root, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0
    except GitError:
        return False


def is_ancestor(root: Path, a: str, b: str) -> bool:
    """True when commit `a` is an ancestor of (or equal to) commit `b`."""
    if not a or not b or a.startswith("-") or b.startswith("-"):
        return False
    try:
        return run(root, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0
    except GitError:
        return False


def tracked_files(root: Path, include_submodules: bool = False,
                  include_symlinks: bool = False, links: set[str] | None = None) -> dict[str, str]:
    """path -> blob sha from the index. Skips submodules (gitlinks) and symlinks unless asked; `links`
    collects the paths git's index holds as symlinks."""
    out: dict[str, str] = {}
    for rec in _split_z(_out(root, "ls-files", "-s", "-z")):
        meta, _, path = rec.partition("\t")
        parts = meta.split()
        if len(parts) < 3:
            continue
        mode, sha, stage = parts[0], parts[1], parts[2]
        if mode == _GITLINK and not include_submodules:
            continue
        if mode == _SYMLINK:
            if not include_symlinks:
                continue
            if links is not None:
                links.add(path)
        if stage not in ("0", "2") and path in out:  # merge conflict: keep one entry per path
            continue
        out[path] = sha
    return out


def tracks_under(root: Path, rel_dir: str) -> bool:
    """Does git's index hold any file at or under repo-relative `rel_dir`? (One pathspec-limited ls-files.)"""
    proc = run(root, "ls-files", "-z", "--", f":(literal){rel_dir}", check=False)
    return proc.returncode == 0 and bool(proc.stdout.strip(b"\0"))


def untracked_files(root: Path) -> list[str]:
    """Untracked files git would not ignore (honours every .gitignore and info/exclude)."""
    return _split_z(_out(root, "ls-files", "--others", "--exclude-standard", "-z"))


def commits_between(root: Path, base: str, head: str) -> int:
    """Number of commits reachable from `head` but not from `base`."""
    return int(_out(root, "rev-list", "--count", f"{base}..{head}").strip() or 0)


def last_commit_dates(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """YYYY-MM-DD of the last commit touching each path; paths never committed are left out."""
    out: dict[str, str] = {}
    if head_commit(root) is None:
        return out
    for p in dict.fromkeys(paths):
        proc = run(root, "log", "-1", "--format=%cs", "--", f":(literal){p}", check=False)
        date = proc.stdout.decode(_ENC).strip()
        if proc.returncode == 0 and date:
            out[p] = date
    return out


def changed_files_log(root: Path, rev_range: str, max_commits: int) -> list[tuple[int, list[str]]]:
    """(commit time, paths changed) of the newest `max_commits` non-merge commits of `rev_range`, newest
    first: one bounded `git log --name-only` (no diffs)."""
    proc = run(root, "log", "--no-merges", "--no-renames", "--name-only", "--format=%x00%ct",
                f"-n{int(max_commits)}", rev_range, "--", check=False)
    if proc.returncode != 0:
        return []
    out: list[tuple[int, list[str]]] = []
    for block in proc.stdout.decode(_ENC, _ERRORS).split("\0")[1:]:
        lines = [ln for ln in block.split("\n") if ln.strip()]
        if lines and lines[0].strip().isdigit():
            out.append((int(lines[0].strip()), lines[1:]))
    return out


@dataclass
class WorkTreeStatus:
    """What one `git status` says about a work tree: HEAD, the branch, untracked files (not ignored) and
    the tracked paths whose work-tree file differs from git's index (so their index blob id is stale)."""

    head: str | None
    branch: str | None
    untracked: list[str]
    unstaged: set[str]


def worktree_status(root: Path) -> WorkTreeStatus:
    """One `git status --porcelain=v2` at the top level `root` (its paths are relative to the top level,
    whatever the cwd): HEAD and branch from its header, untracked files, and the unstaged paths.

    Unlike `diff-files`, status refreshes stat-only differences in memory (it never writes the index:
    GIT_OPTIONAL_LOCKS=0), so a touched but unchanged file keeps its blob id. Rename detection is off:
    a staged rename is its deleted and its added path, which is all the indexer needs.
    """
    data = run(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames",
                "--ignore-submodules=all").stdout.decode(_ENC, _ERRORS)
    fields = data.split("\0")
    head = branch = None
    untracked: list[str] = []
    unstaged: set[str] = set()
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        kind = rec[:2]
        if kind == "# ":
            key, _, value = rec[2:].partition(" ")
            if key == "branch.oid" and value != "(initial)":
                head = value
            elif key == "branch.head" and value != "(detached)":
                branch = value
        elif kind == "? ":
            untracked.append(rec[2:])
        elif kind == "1 ":  # 1 XY sub mH mI mW hH hI path
            parts = rec.split(" ", 8)
            if len(parts) == 9 and parts[1][1:] != ".":
                unstaged.add(parts[8])
        elif kind == "2 ":  # 2 XY sub mH mI mW hH hI Xscore path, then the source path as its own field
            parts = rec.split(" ", 9)
            if len(parts) == 10 and parts[1][1:] != ".":
                unstaged.add(parts[9])
            i += 1
        elif kind == "u ":  # unmerged: the work tree holds whatever the merge left
            parts = rec.split(" ", 10)
            if len(parts) == 11:
                unstaged.add(parts[10])
    return WorkTreeStatus(head, branch, untracked, unstaged)


def unstaged_files(root: Path) -> list[str]:
    """Tracked paths whose work-tree file differs from the index (so its index sha is stale).

    Cheaper than `dirty_files` on big repos: no untracked-file walk. May over-report files
    whose stat info changed but content did not.
    """
    return _split_z(_out(root, "diff-files", "--name-only", "-z", "--ignore-submodules"))


def dirty_files(root: Path) -> list[str]:
    """Paths that differ from HEAD: modified, added, deleted, renamed (both sides), untracked."""
    data = run(root, "status", "--porcelain", "-z", "--untracked-files=all").stdout.decode(_ENC, _ERRORS)
    fields = data.split("\0")
    out: list[str] = []
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if len(rec) < 4:
            continue
        xy, path = rec[:2], rec[3:]
        if xy == "!!":
            continue
        out.append(path)
        if "R" in xy or "C" in xy:  # next field is the source path
            if i < len(fields) and fields[i]:
                out.append(fields[i])
            i += 1
    return list(dict.fromkeys(out))


RECENT_COMMITS = 200  # "recent" for the order vectors are built in: the last this many commits


def recently_changed(root: Path, commits: int | None = None) -> set[str]:
    """Paths touched by the last `commits` commits or changed in the work tree (what the user is working on),
    relative to the top level; empty outside git."""
    if head_commit(root) is None:
        return set(dirty_files(root)) if is_git_repo(root) else set()
    logged = run(root, "log", f"-{int(commits or RECENT_COMMITS)}", "--name-only", "--format=", "-z", "--no-renames",
                 check=False).stdout.decode(_ENC, _ERRORS)
    return {p.strip("\n") for p in logged.split("\0") if p.strip("\n")} | set(dirty_files(root))


class CommitDates:
    """Last commit date of each (path, blob), asked of git once per blob: one `git log` per file is the slowest
    part of a warm query. One cache per open index (the Searcher owns it), shared by search and diagnosis."""

    MAX_ENTRIES = 50_000

    def __init__(self, root: Path) -> None:
        self.root = root
        self._known: dict[tuple[str, str], str] = {}

    def get(self, blobs: dict[str, str]) -> dict[str, str]:
        """{path: YYYY-MM-DD} for {path: blob id}; paths git has no date for are left out."""
        missing = sorted(p for p, b in blobs.items() if (p, b) not in self._known)
        if missing:
            try:
                found = last_commit_dates(self.root, missing)
            except (GitError, OSError):  # dates are a nicety: never fail an answer over them
                found = {}
            if len(self._known) > self.MAX_ENTRIES:
                self._known.clear()
            self._known.update({(p, blobs[p]): d for p, d in found.items()})
        return {p: self._known[(p, b)] for p, b in blobs.items() if (p, b) in self._known}
