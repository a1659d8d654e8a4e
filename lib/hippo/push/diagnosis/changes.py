"""What the user just changed: the hunks of the working tree (against HEAD) and of the last commit.

A test that passed before an edit and fails after it most likely fails because of that edit, so these
hunks are evidence. One `git diff` each, zero context lines, output capped. A whole-tree working-tree diff
stats every tracked file (~0.4 CPU-s at 100k files), so a long-lived process that knows which paths may
have changed (the warm server's inotify watch, surfaces/service/watch.py) registers a `Tracker` with
`track`, and the diff asks git about those paths only (often none: no git call at all). `Pending` starts
both diffs in background threads and the caller does its index lookups meanwhile.
Only the new side's line ranges are kept; the text itself is read from the live file by the caller.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hippo.core import gitutil

MAX_DIFF_BYTES = 256 * 1024
TIMEOUT_S = 2.0
_HUNK = re.compile(r"^@@ -\d{1,9}(?:,\d{1,9})? \+(?P<start>\d{1,9})(?:,(?P<count>\d{1,9}))? @@")


@dataclass(frozen=True)
class Hunk:
    path: str
    start: int  # first line of the new side (for a pure deletion: the line after it)
    end: int
    where: str  # "working tree" | "last commit"


class Tracker(Protocol):
    """Which tracked paths may differ from HEAD, as a long-lived watcher of the work tree knows them."""

    def begin(self) -> list[str] | None:
        """The paths (files or folders) to ask git about; None when only a whole-tree diff is sure to be right."""

    def end(self, asked: list[str] | None, changed: set[str] | None) -> None:
        """`changed`: the asked paths whose diff had hunks; None when the diff failed or was cut."""


_TRACKERS: dict[str, Tracker] = {}


def track(root: Path, tracker: Tracker | None) -> None:
    """Use `tracker` for `root`'s working-tree diffs in this process (None: diff the whole tree again)."""
    key = os.path.realpath(root)
    if tracker is None:
        _TRACKERS.pop(key, None)
    else:
        _TRACKERS[key] = tracker


def _git_diff_raw(root: Path, *args: str, command: str = "diff") -> bytes | None:
    """`git diff` (two commits) or `git diff-index -p` (HEAD against the work tree). The plumbing command
    for the work tree: porcelain `git diff` refreshes and rewrites the user's index when files were only
    touched (whatever GIT_OPTIONAL_LOCKS says), which takes the index lock and, for the warm server's
    watch, would look like a change of the index."""
    # gitutil.run adds --no-ext-diff/--no-textconv: a cloned repository's config must not run commands
    patch = ("-p",) if command == "diff-index" else ()
    return gitutil.output(root, command, *patch, "--no-color", "--no-renames", "-U0", *args, timeout=TIMEOUT_S,
                          ok=(0, 1))


def _git_diff(root: Path, *args: str, command: str = "diff") -> str:
    out = _git_diff_raw(root, *args, command=command)
    return out[:MAX_DIFF_BYTES].decode("utf-8", errors="replace") if out is not None else ""


def parse(diff: str, where: str) -> list[Hunk]:
    out: list[Hunk] = []
    path = None
    for line in diff.split("\n"):
        if line.startswith("+++ "):
            target = line[4:].strip()
            path = target[2:] if target.startswith("b/") else None  # /dev/null: a deleted file
        elif path and line.startswith("@@"):
            m = _HUNK.match(line[:200])
            if not m:
                continue
            start = int(m.group("start"))
            count = int(m.group("count")) if m.group("count") is not None else 1
            if count == 0:  # a deletion: point at the line after it
                out.append(Hunk(path, start + 1, start + 1, where))
            else:
                out.append(Hunk(path, start, start + count - 1, where))
    return out


def working_tree(root: Path) -> list[Hunk]:
    """Uncommitted changes (staged or not) of tracked files: the same hunks whether a tracker narrows the
    diff to the paths it saw change or git looks at the whole tree."""
    tracker = _TRACKERS.get(os.path.realpath(root))
    try:
        asked = tracker.begin() if tracker is not None else None
    except Exception:  # noqa: BLE001 - a tracker that fails costs the shortcut, never the hunks
        asked = None
    if asked is None:
        return parse(_git_diff(root, "HEAD", "--", command="diff-index"), "working tree")
    assert tracker is not None
    if not asked:
        tracker.end(asked, set())
        return []
    out = _git_diff_raw(root, "HEAD", "--", *(f":(literal){p}" for p in asked), command="diff-index")
    hunks = parse(out[:MAX_DIFF_BYTES].decode("utf-8", errors="replace"), "working tree") if out is not None else []
    tracker.end(asked, {h.path for h in hunks} if out is not None and len(out) <= MAX_DIFF_BYTES else None)
    return hunks


def uncommitted_paths(root: Path) -> list[str] | None:
    """The tracked files that differ from HEAD (staged or not), asking git only about the paths the
    registered tracker saw change; None without a tracker, or when only a whole-tree look would be right."""
    tracker = _TRACKERS.get(os.path.realpath(root))
    try:
        asked = tracker.begin() if tracker is not None else None
    except Exception:  # noqa: BLE001 - a tracker that fails costs the shortcut: the caller asks git itself
        asked = None
    if asked is None:
        return None
    assert tracker is not None
    if not asked:
        tracker.end(asked, set())
        return []
    # --numstat compares content: a file only touched (its stat no longer matches git's index) is not listed
    out = gitutil.output(root, "diff-index", "--numstat", "-z", "--no-renames", "HEAD", "--",
                         *(f":(literal){p}" for p in asked), timeout=TIMEOUT_S)
    if out is None:
        tracker.end(asked, None)
        return None
    names = [rec.split("\t", 2)[2] for rec in out.decode("utf-8", "surrogateescape").split("\0") if rec.count("\t") >= 2]
    tracker.end(asked, set(names))
    return names


def last_commit(root: Path) -> list[Hunk]:
    """What HEAD changed relative to its first parent (nothing for a root commit)."""
    return parse(_git_diff(root, "HEAD~1", "HEAD", "--"), "last commit")


class Pending:
    """Both diffs of `root`, started at once in background threads; each result is waited for on first use."""

    def __init__(self, root: Path) -> None:
        self._threads: dict[str, threading.Thread] = {}
        self._out: dict[str, list[Hunk]] = {}
        for name, work in (("working tree", working_tree), ("last commit", last_commit)):
            t = threading.Thread(target=self._run, args=(name, work, root), daemon=True)
            t.start()
            self._threads[name] = t

    def _run(self, name: str, work, root: Path) -> None:
        try:
            self._out[name] = work(root)
        except Exception:  # noqa: BLE001 - no hunks is the answer for a diff that failed, as in _git_diff
            self._out[name] = []

    def _get(self, name: str) -> list[Hunk]:
        self._threads[name].join(TIMEOUT_S * 2)  # _git_diff's own timeout ends the git process first
        return self._out.get(name, [])

    def working_tree(self) -> list[Hunk]:
        return self._get("working tree")

    def last_commit(self) -> list[Hunk]:
        return self._get("last commit")
