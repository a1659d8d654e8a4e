"""Is this index hippo's own, and is its table data still what the writer wrote?

Planted index dirs: `refuse_planted` is the one check the writer and every reader run, so nothing reads
an index dir `hippo index` would refuse to write (a `.hippo/` the repository ships, or a symlink).

Damage: a cheap probe every `hippo index` can afford.

LanceDB files carry no checksums, so bit flips, a truncated data file or a garbage manifest show up only
when a query happens to read the broken bytes, and a no-op `hippo index` never reads the table at all. So
the writer records, at the end of every run that changed the tables, each file under `db/` with its size
and a CRC-32 (`tablesums.json`): the whole file up to FULL_BELOW bytes, else its first and last bytes
(where Lance keeps the footer, page and column metadata). The next run compares sizes and those CRCs
before it trusts the table. A reader that meets damage leaves a `damaged` mark for the writer. Stdlib only.

What changes the files legitimately: only a writer under the lock. Compaction deletes files, so the sums
are dropped before it runs and written again after (a run killed in between leaves no sums: nothing is
compared, the next run records afresh). A swapped `db/` (a team download, a rebuild) has another inode and
voids the old sums.
"""
from __future__ import annotations

import json
import os
import stat
import time
import zlib
from pathlib import Path

from hippo.core.config import UnsafeIndexDir, check_index_dir
from hippo.core.indexdir import IndexDir, atomic_write, create

MARK = "damaged"
FULL_BELOW = 1 << 20  # files up to 1 MB are summed whole; bigger ones by head and tail
HEAD = 4096
TAIL = 64 * 1024
MAX_REPORT = 200
# Lance rewrites this in place on every commit (data, manifests, indexes and transactions are write-once);
# it is only a hint: a garbage one is ignored and the versions are listed instead.
MUTABLE = frozenset({"latest_version_hint.json"})


def refuse_planted(root: Path, index_dir: Path) -> None:
    """Raise UnsafeIndexDir for an index dir the repository itself could have put there.

    The one check for the writer and every reader (Searcher, hooks, servers): what `hippo index` refuses
    to write, nothing reads. The git half costs one `git ls-files`; it is remembered until git's index
    file changes, so the warm server pays one stat per query.
    """
    check_index_dir(root, index_dir)
    if _tracked_by_git(root, index_dir):
        raise UnsafeIndexDir(f"git tracks files under {index_dir}: a repository must not ship hippo's index "
                             "dir. Remove them (or set HIPPO_INDEX_DIR elsewhere) and run `hippo index` again.")


def prepare_for_writing(root: Path, index_dir: Path) -> None:
    """What every writer does before its first write: refuse a planted index dir, then create it (private,
    with its `.gitignore`)."""
    refuse_planted(root, index_dir)
    create(index_dir)


_TRACKED_CACHE: dict[tuple[str, str], tuple[object, bool]] = {}


def _git_index_stamp(root: Path) -> object:
    try:
        st = os.stat(root / ".git" / "index")
    except OSError:
        return None  # a worktree (.git is a file) or no index yet: ask git every time
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _tracked_by_git(root: Path, index_dir: Path) -> bool:
    from hippo.core import gitutil

    try:
        rel = index_dir.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return False  # outside the repo (an explicit HIPPO_INDEX_DIR): git has no say
    key = (str(root), str(index_dir))
    stamp = _git_index_stamp(root)
    hit = _TRACKED_CACHE.get(key)
    if stamp is not None and hit is not None and hit[0] == stamp:
        return hit[1]
    tracked = gitutil.is_git_repo(root) and gitutil.tracks_under(root, rel.as_posix())
    if stamp is not None:
        _TRACKED_CACHE[key] = (stamp, tracked)
    return tracked


def _crc(path: Path, size: int) -> int:
    with open(path, "rb", opener=lambda p, f: os.open(p, f | getattr(os, "O_NOFOLLOW", 0))) as fh:
        if size <= FULL_BELOW:
            return zlib.crc32(fh.read())
        crc = zlib.crc32(fh.read(HEAD))
        fh.seek(size - TAIL)
        return zlib.crc32(fh.read(TAIL), crc)


def _files(db_dir: Path) -> dict[str, os.stat_result]:
    out: dict[str, os.stat_result] = {}
    for dirpath, _dirnames, filenames in os.walk(db_dir):
        for name in filenames:
            full = os.path.join(dirpath, name)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and name not in MUTABLE:
                out[os.path.relpath(full, db_dir).replace(os.sep, "/")] = st
    return out


def _db_id(db_dir: Path) -> list[int] | None:
    try:
        st = os.stat(db_dir)
    except OSError:
        return None
    return [st.st_dev, st.st_ino]


def _load(index_dir: Path) -> dict | None:
    try:
        data = json.loads(IndexDir(index_dir).tablesums.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return None
    return data


def _write_json(path: Path, data: dict) -> None:
    atomic_write(path, json.dumps(data, separators=(",", ":")))


def record(index_dir: Path) -> None:
    """Sum the table files as they are now (the writer calls this under its lock, after its last write).

    Files are immutable once written: an entry whose size and mtime did not change keeps its old CRC, so
    an incremental run sums only the files it added.
    """
    db_dir = IndexDir(index_dir).db
    ident = _db_id(db_dir)
    if ident is None:
        forget(index_dir)
        return
    old = _load(index_dir) or {}
    known = old.get("files", {}) if old.get("db") == ident else {}
    files: dict[str, list[int]] = {}
    for rel, st in _files(db_dir).items():
        prev = known.get(rel)
        if isinstance(prev, list) and len(prev) == 3 and prev[:2] == [st.st_size, st.st_mtime_ns]:
            files[rel] = prev
            continue
        try:
            files[rel] = [st.st_size, st.st_mtime_ns, _crc(db_dir / rel, st.st_size)]
        except OSError:
            continue
    _write_json(IndexDir(index_dir).tablesums, {"db": ident, "recorded_at": time.time(), "files": files})


def forget(index_dir: Path) -> None:
    try:
        os.unlink(IndexDir(index_dir).tablesums)
    except FileNotFoundError:
        pass


def recorded(index_dir: Path) -> bool:
    data = _load(index_dir)
    return data is not None and data.get("db") == _db_id(IndexDir(index_dir).db)


def probe(index_dir: Path) -> str | None:
    """Why the table files differ from what the writer recorded, or None (also when nothing is recorded).

    Files added since (a run killed before it recorded) are not damage; a recorded file that is gone, has
    another size or another CRC is.
    """
    data = _load(index_dir)
    db_dir = IndexDir(index_dir).db
    if data is None or data.get("db") != _db_id(db_dir):
        return None
    for rel, entry in data["files"].items():
        if not (isinstance(entry, list) and len(entry) == 3):
            continue
        size, _mtime, crc = entry
        path = db_dir / rel
        try:
            st = os.lstat(path)
        except OSError:
            return f"{rel[:MAX_REPORT]} is missing"
        if not stat.S_ISREG(st.st_mode):
            return f"{rel[:MAX_REPORT]} is no longer a regular file"
        if st.st_size != size:
            return f"{rel[:MAX_REPORT]} has {st.st_size} bytes, {size} were written"
        try:
            if _crc(path, size) != crc:
                return f"{rel[:MAX_REPORT]} changed after it was written"
        except OSError as exc:
            return f"{rel[:MAX_REPORT]} cannot be read ({exc.strerror or exc})"
    return None


def mark_damaged(index_dir: Path, detail: str) -> None:
    """A reader met damage: leave the reason for the next `hippo index`, which rebuilds and clears it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(index_dir / MARK, flags, 0o600)
    except OSError:
        return
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
        fh.write(detail[:1000])


def damage_mark(index_dir: Path) -> str | None:
    """The reason a reader left, or None."""
    try:
        with open(index_dir / MARK, "rb", opener=lambda p, f: os.open(p, f | getattr(os, "O_NOFOLLOW", 0))) as fh:
            text = fh.read(1000).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return text or "a reader found the table unreadable"


def clear_mark(index_dir: Path) -> None:
    try:
        os.unlink(index_dir / MARK)
    except FileNotFoundError:
        pass
