"""Co-change history: for each test file, the source files that changed in the same commits; for each
source file, the other source files it changed with most often; and when each source file last changed.
Read by the failure diagnosis (a file that keeps changing with the failing test is a suspect) and by file
ranking (a change to the best file for a question often touches its partners too). Stdlib only.

Built from one bounded `git log --name-only` (at most MAX_COMMITS commits, no diffs) and kept in the index
dir as `cochange.json`; later index runs read only the commits since the recorded head (from scratch when
history was rewritten). Commits touching more than MAX_FILES files (reformatting, renames, vendoring) say
nothing about which test covers what and are skipped.
"""
from __future__ import annotations

import json
from pathlib import Path

from hippo.core import gitutil
from hippo.core.indexdir import IndexDir, atomic_write
from hippo.core.pathkind import is_test, reads_as_doc
from hippo.core.repo_read import is_secret_path

MAX_COMMITS = 2000
MAX_FILES = 40
MAX_PARTNERS = 12  # source partners kept per source file (the most frequent): bounded size on any history
VERSION = 2


def _empty() -> dict:
    return {"v": VERSION, "head": None, "commits": 0, "pairs": {}, "with": {}, "last": {}}


def load(index_dir: Path) -> dict:
    """The recorded history ({"head", "commits", "pairs": {test: {source: n}}, "with": {source: {source: n}},
    "last": {source: time}}), or an empty one."""
    try:
        data = json.loads(Path(IndexDir(index_dir).cochange).read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("v") == VERSION:
            return data
    except (OSError, ValueError):
        pass
    return _empty()


_LOADED: dict[str, tuple[tuple[int, int], dict]] = {}  # index dir -> (the file's mtime and size, its history)


def load_cached(index_dir: Path) -> dict:
    """`load`, read from disk again only when the file changed: a warm server's every failure asks for it."""
    path = Path(IndexDir(index_dir).cochange)
    try:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        return _empty()
    key = str(path)
    hit = _LOADED.get(key)
    if hit is None or hit[0] != stamp:
        if len(_LOADED) >= 8:  # one per index a process serves
            _LOADED.clear()
        hit = _LOADED[key] = (stamp, load(index_dir))
    return hit[1]


def is_current(index_dir: Path) -> bool:
    """Whether the record exists in this VERSION's shape, judged from its first bytes (the no-op index run
    asks, and a whole record can be megabytes): a record an older hippo wrote is rebuilt at once."""
    try:
        with open(IndexDir(index_dir).cochange, "rb") as fh:
            return fh.read(16).startswith(b'{"v":%d,' % VERSION)
    except OSError:
        return False


def update(root: Path, index_dir: Path, head: str | None) -> int:
    """Bring the history up to `head`; returns how many commits were read."""
    if not head:
        return 0
    data = load(index_dir)
    if data["head"] == head:
        return 0
    base = data["head"]
    if base and gitutil.is_commit(root, base) and gitutil.is_ancestor(root, base, head):
        rng = f"{base}..{head}"
    else:
        data = _empty()  # history rewritten (or a first run): start over
        rng = head
    commits = gitutil.changed_files_log(root, rng, MAX_COMMITS)
    pairs: dict[str, dict[str, int]] = data["pairs"]
    partners: dict[str, dict[str, int]] = data["with"]
    last: dict[str, int] = data["last"]
    for when, files in commits:
        if len(files) > MAX_FILES:
            continue
        files = [f for f in files if not is_secret_path(f)]  # a token in a file name is never stored
        tests = [f for f in files if is_test(f)]
        sources = [f for f in files if not is_test(f) and not reads_as_doc(f)]
        for s in sources:
            last[s] = max(last.get(s, 0), when)
        for t in tests:
            row = pairs.setdefault(t, {})
            for s in sources:
                row[s] = row.get(s, 0) + 1
        for s in sources:
            row = partners.setdefault(s, {})
            for o in sources:
                if o != s:
                    row[o] = row.get(o, 0) + 1
    for s, row in partners.items():  # pruned once per update: an incremental run may promote a partner
        if len(row) > MAX_PARTNERS:
            partners[s] = dict(sorted(row.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_PARTNERS])
    data["head"], data["commits"] = head, data["commits"] + len(commits)
    atomic_write(Path(IndexDir(index_dir).cochange), json.dumps(data, separators=(",", ":")))
    return len(commits)
