"""Which tracked files may differ from HEAD, without stat-ing every tracked file per failure.

The warm server keeps one `TreeWatch`: an inotify watch (Linux, ctypes, no dependency) of the directories
that hold tracked files, plus git's own files (index, HEAD, refs). A failure's working-tree diff
(hippo.push.diagnosis.changes) then asks git about the paths touched since the last diff and the paths
known to differ, instead of `git diff HEAD` over the whole tree.

Correctness never depends on event timing:
- `begin` first makes a file in the index dir's `watch/` folder and waits until the reader thread has seen
  its event. inotify queues the events of one instance in order, so every change made before the request
  has been read by then. No round-trip within SYNC_S: the caller diffs everything.
- A change of git's index, HEAD or refs (commit, stage, checkout, reset) marks the state stale: a
  background refresh relists the tracked files, watches new folders, and adds to the dirty set the paths
  that entered or left the index and those HEAD's move changed (`git diff-tree`, no stat of the tree).
  A queue overflow, more than MAX_PATHS dirty paths or index entries git does not compare with their file
  (assume-unchanged, skip-worktree, unmerged) make it a whole-tree refresh (`git status`, off the request
  path). A request that finds the state stale waits for the refresh (REFRESH_WAIT_S) or diffs everything.
- Untracked files never appear in `git diff HEAD`, so only tracked paths (and tracked directories, for a
  directory made, moved or removed whole) are recorded; a file becomes tracked only through git's index,
  which marks the state stale.
- No inotify, a file system whose changes may come from elsewhere (NFS, 9p, FUSE, ...), too few inotify
  watches, more dirty paths than MAX_PATHS: no watch, or the caller diffs everything.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import struct
import sys
import threading
from pathlib import Path

from hippo.core import gitutil
from hippo.core.indexdir import PRIVATE_MODE, IndexDir, make_private
from hippo.core.runtime import log

# Both waits stay well inside the hook's wait for the server (client: 3 s): past them the request diffs the
# whole tree, as it did before the watch, rather than have its caller give up on the server.
SYNC_S = 0.5  # the sentinel's round-trip; longer means the reader is stuck (or the machine is swamped)
REFRESH_WAIT_S = 0.5  # how long a request waits for a refresh in flight before diffing everything itself
REFRESH_DEBOUNCE_S = 0.05  # a commit writes the index, then the ref, then HEAD's log: one refresh for all
MAX_PATHS = 2000  # more paths than this to ask about: a whole-tree diff is as cheap
GIT_TIMEOUT_S = 30.0
# File systems whose every change is made by this kernel, so inotify sees it (a network or FUSE mount may
# be written by another machine, and a bind mount from a VM's host is not reported either).
LOCAL_FS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "bcachefs",
                      "reiserfs", "jfs", "ramfs"})

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED = 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_EXCL_UNLINK, IN_ISDIR = 0x1000000, 0x2000000, 0x4000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
DIR_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_EVENT = struct.Struct("iIII")
GIT_NAMES = frozenset({"index", "HEAD", "packed-refs"})  # what `git diff HEAD` depends on in git's own dir


class Inotify:
    """One inotify instance: add a watch, read a batch of events. Raises OSError where inotify is missing."""

    def __init__(self) -> None:
        if not sys.platform.startswith("linux"):
            raise OSError(errno.ENOSYS, "inotify is Linux only")
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.fd = fd

    def add(self, path: str, mask: int = DIR_MASK) -> int:
        wd = self._add(self.fd, os.fsencode(path), mask)
        if wd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), path)
        return wd

    def remove(self, wd: int) -> None:
        self._rm(self.fd, wd)

    def read(self, timeout: float) -> list[tuple[int, int, str]]:
        """(wd, mask, name) of the events queued, waiting up to `timeout` seconds for the first."""
        if not select.select([self.fd], [], [], timeout)[0]:
            return []
        try:
            data = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return []
        out = []
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            at += _EVENT.size
            name = os.fsdecode(data[at:at + size].rstrip(b"\0"))
            at += size
            out.append((wd, mask, name))
        return out

    def close(self) -> None:
        os.close(self.fd)


def local_fs(path: Path, mountinfo: str | None = None) -> bool:
    """Every mount at or under `path` is a local file system (inotify sees all of its changes).
    `mountinfo`: the text of /proc/self/mountinfo (read when not given)."""
    if mountinfo is None:
        try:
            with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
                mountinfo = fh.read()
        except OSError:
            return False
    real = os.path.realpath(path)
    best, kind, inside = "", "", []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or not rfields:
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        if real == point or real.startswith(point.rstrip("/") + "/"):
            if len(point) >= len(best):
                best, kind = point, rfields[0]
        elif point.startswith(real.rstrip("/") + "/"):
            inside.append(rfields[0])
    return bool(kind) and all(k in LOCAL_FS for k in [kind, *inside])


class TreeWatch:
    """The tracked paths that may differ from HEAD, kept current by inotify. Protocol of
    hippo.push.diagnosis.changes.Tracker: `begin()` -> the paths to ask git about (None: all of them),
    then `end(asked, changed, complete)` with what git said."""

    def __init__(self, root: Path, index_dir: Path) -> None:
        self.root = Path(os.path.realpath(root))  # a watch on a link to the tree would watch the link
        self.index_dir = Path(index_dir)
        self.sync_dir = Path(IndexDir(self.index_dir).watch)
        self._lock = threading.Condition()
        self._ino: Inotify | None = None
        self._wd: dict[int, str] = {}  # watch -> repo-relative directory ("" is the root)
        self._dirs: dict[str, int] = {}
        self._git_wd: set[int] = set()  # git's dir and the common dir: only GIT_NAMES count
        self._ref_wd: set[int] = set()  # folders of refs/: any ref written counts
        self._sync_wd = -1
        self._refs_dir = ""
        self._tracked: set[str] = set()
        self._tracked_dirs: set[str] = {""}
        self._dirty: set[str] = set()
        self._known: set[str] = set()  # differed from HEAD at the last look
        self._stale = True
        self._need_full = True  # at start, and after lost events: only a whole-tree look is sure
        self._head = ""  # HEAD at the last refresh
        self._refreshing = False
        self._seen: set[str] = set()  # sentinel names the reader has seen
        self._tokens = 0
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None
        self._kick = threading.Event()
        self.broken: str | None = None  # why the watch stopped: every request then diffs everything
        self.refreshes = 0  # refreshes done, and how many of them looked at the whole tree (tests, bench)
        self.full_refreshes = 0

    # --- life ------------------------------------------------------------------------------------
    def start(self) -> bool:
        """Watch the tree; False (and nothing running) when it cannot be watched here."""
        if not local_fs(self.root):
            log(self.index_dir, "watch: not a local file system; failures diff the whole tree")
            return False
        try:
            top, refs = self._git_dirs()
            self._ino = Inotify()
            self.sync_dir.mkdir(mode=PRIVATE_MODE, exist_ok=True)
            make_private(self.sync_dir)
            for leftover in os.listdir(self.sync_dir):
                os.unlink(self.sync_dir / leftover)
            self._sync_wd = self._ino.add(str(self.sync_dir), IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)
            for d in top:
                self._git_wd.add(self._ino.add(d))
            self._refs_dir = refs
            self._watch_refs()
        except (OSError, gitutil.GitError) as exc:
            log(self.index_dir, f"watch: not watching ({exc}); failures diff the whole tree")
            self.close()
            return False
        self._reader = threading.Thread(target=self._read_loop, name="hippo-watch", daemon=True)
        self._reader.start()
        threading.Thread(target=self._refresh_loop, name="hippo-watch-refresh", daemon=True).start()
        self._kick.set()
        return True

    def close(self) -> None:
        """Stop watching. The reader closes the inotify descriptor itself when it sees the stop (within a
        read's timeout): closed under it, the number could be reused by the next pipe this process opens,
        and the reader would read (and swallow) a git child's output."""
        self._stop.set()
        self._kick.set()
        with self._lock:
            self._lock.notify_all()
        if self._reader is None or not self._reader.is_alive() or self._reader is threading.current_thread():
            self._close_fd()

    def _close_fd(self) -> None:
        with self._lock:
            ino, self._ino = self._ino, None
        if ino is not None:
            try:
                ino.close()
            except OSError:
                pass

    def _git_dirs(self) -> tuple[list[str], str]:
        """git's dir (index, HEAD) and the common dir (packed-refs), and the common dir's refs/ folder (a
        linked worktree has a git dir of its own)."""
        out = gitutil.output(self.root, "rev-parse", "--absolute-git-dir", "--git-common-dir", timeout=GIT_TIMEOUT_S)
        lines = out.decode("utf-8", "surrogateescape").split("\n") if out else []
        if len(lines) < 2 or not lines[0]:
            raise gitutil.GitError("not a git work tree")
        common = os.path.normpath(os.path.join(self.root, lines[1]))
        return list(dict.fromkeys([lines[0], common])), os.path.join(common, "refs")

    def _watch_refs(self) -> None:
        """Every folder of refs/ (a branch named a/b makes one): a ref written in any of them moves HEAD."""
        ino = self._ino
        if ino is None:
            return
        for base, _sub, _files in os.walk(self._refs_dir):
            self._ref_wd.add(ino.add(base))

    # --- requests -----------------------------------------------------------------------------------
    def begin(self) -> list[str] | None:
        """The repo-relative paths that may differ from HEAD (an empty list: none), or None when only a
        whole-tree diff is sure to be right."""
        if self.broken or self._stop.is_set() or not self._sync():
            return None
        with self._lock:
            for _attempt in range(2):
                self._lock.wait_for(lambda: not (self._stale or self._refreshing) or self._stop.is_set(),
                                    REFRESH_WAIT_S)
                if self._stale or self._refreshing or self._stop.is_set():
                    return None
                asked = self._dirty | self._known
                if len(asked) <= MAX_PATHS:
                    self._dirty = set()
                    return sorted(asked)
                self._need_full = True  # a checkout of another branch, a tool touching every file ...:
                self._mark_stale()  # one whole-tree look sorts what really differs
            return None

    def end(self, asked: list[str] | None, changed: set[str] | None) -> None:
        """What git said about `asked`: `changed` holds the paths whose diff has hunks, None when the diff
        failed or was cut (the paths are then asked about again next time)."""
        if asked is None:
            return
        with self._lock:
            if changed is None:
                self._dirty |= set(asked)
                return
            # a name git prints differently (not UTF-8) cannot be matched: it stays known
            keep = {p for p in asked if not _plain(p)}
            self._known = (self._known - set(asked)) | set(changed) | keep

    def _sync(self) -> bool:
        """True once the reader has read every event queued before this call (see the module doc)."""
        with self._lock:
            self._tokens += 1
            name = f"{os.getpid()}-{self._tokens}"
        path = self.sync_dir / name
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), 0o600))
        except OSError as exc:
            log(self.index_dir, f"watch: no sentinel ({exc})")
            return False
        try:
            with self._lock:
                ok = self._lock.wait_for(lambda: name in self._seen or self._stop.is_set(), SYNC_S)
                self._seen.discard(name)
                return ok and not self._stop.is_set()
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass

    # --- the reader ---------------------------------------------------------------------------------
    def _read_loop(self) -> None:
        try:
            while not self._stop.is_set():
                ino = self._ino
                if ino is None:
                    return
                events = ino.read(0.5)
                if events and not self._stop.is_set():
                    with self._lock:
                        for wd, mask, name in events:
                            self._event(wd, mask, name)
                        self._lock.notify_all()
        except Exception as exc:  # noqa: BLE001 - a dead reader must not leave requests trusting it
            if not self._stop.is_set():
                self._fail(f"reader stopped: {exc!r}")
        finally:
            self._close_fd()

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            self._need_full = True
            self._mark_stale()
            return
        if wd == self._sync_wd:
            if mask & IN_CREATE:
                self._seen.add(name)
            return
        if wd in self._git_wd or wd in self._ref_wd:
            if name in GIT_NAMES if wd in self._git_wd else not name.endswith(".lock"):
                self._mark_stale()  # the index, HEAD or a ref changed (a new refs/ folder too)
            return
        base = self._wd.get(wd)
        if base is None:
            return
        if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF):
            if base == "" and mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                self._fail("the work tree itself was moved or removed")
            elif mask & IN_IGNORED:
                self._forget(base, wd)
            return
        if not name:
            return
        rel = f"{base}/{name}" if base else name
        if mask & IN_ISDIR:
            if rel not in self._tracked_dirs:
                return
            self._dirty.add(rel)  # a tracked folder made, moved or removed whole: ask git about all under it
            if mask & IN_MOVED_FROM:
                for d in [d for d in self._dirs if d == rel or d.startswith(rel + "/")]:
                    self._unwatch(d)
            elif mask & (IN_CREATE | IN_MOVED_TO):
                self._watch_under(rel)
        elif rel in self._tracked or rel in self._tracked_dirs:  # a tracked folder replaced by a file or link too
            self._dirty.add(rel)

    def _mark_stale(self) -> None:
        self._stale = True
        self._kick.set()

    def _fail(self, why: str) -> None:
        with self._lock:
            if self.broken is None:
                self.broken = why
                log(self.index_dir, f"watch: {why}; failures diff the whole tree")
            self._lock.notify_all()
        self.close()

    # --- watches (called with the lock held) ---------------------------------------------------------
    def _watch(self, rel: str) -> bool:
        ino = self._ino
        if ino is None or rel in self._dirs:
            return True
        try:
            wd = ino.add(str(self.root / rel) if rel else str(self.root))
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                return True  # gone (or a link): a tracked dir that is not there has nothing to watch
            raise
        old = self._wd.get(wd)
        if old is not None and old != rel:  # the same folder under another name (moved while we looked)
            self._dirs.pop(old, None)
        self._wd[wd] = rel
        self._dirs[rel] = wd
        return True

    def _watch_under(self, rel: str) -> None:
        try:
            for d in sorted(d for d in self._tracked_dirs if d == rel or d.startswith(rel + "/")):
                self._watch(d)
        except OSError as exc:
            self._fail(f"cannot watch {rel}: {exc}")

    def _unwatch(self, rel: str) -> None:
        wd = self._dirs.pop(rel, None)
        if wd is not None:
            self._wd.pop(wd, None)
            if self._ino is not None:
                self._ino.remove(wd)

    def _forget(self, rel: str, wd: int) -> None:
        if self._dirs.get(rel) == wd:
            del self._dirs[rel]
        self._wd.pop(wd, None)

    # --- the refresher --------------------------------------------------------------------------------
    def _refresh_loop(self) -> None:
        while not self._stop.is_set():
            self._kick.wait()
            if self._stop.is_set():
                return
            self._stop.wait(REFRESH_DEBOUNCE_S)
            self._kick.clear()
            try:
                self._refresh()
            except Exception as exc:  # noqa: BLE001 - a refresh that cannot run leaves the state stale
                self._fail(f"refresh failed: {exc!r}")
                return

    def _refresh(self) -> None:
        """Relist the tracked files, watch their folders, then learn which paths may differ from HEAD.

        In that order: a change made before a folder is watched is seen by the git call that starts after
        it. After a change of git's index, HEAD or refs only, a path can newly differ from HEAD only if it
        entered or left the index or HEAD's tree changed it, so those paths join the dirty set (one
        ls-files, one tree diff). At start, after lost events or with index entries whose work-tree file
        git does not compare (assume-unchanged, skip-worktree, unmerged), `git status` over the whole tree."""
        with self._lock:
            full = self._need_full or not self._head
            self._stale, self._refreshing, self._need_full = False, True, False
            if full:
                self._dirty = set()
            old_head, old_tracked = self._head, self._tracked
        ok = False
        try:
            head_out = gitutil.output(self.root, "rev-parse", "--verify", "-q", "HEAD", timeout=GIT_TIMEOUT_S)
            head = head_out.decode().strip() if head_out else ""
            listed = gitutil.output(self.root, "ls-files", "-z", "-v", timeout=GIT_TIMEOUT_S)
            if listed is None:
                return
            tracked, plain = _tracked(listed)
            full = full or not plain or not head or not old_head
            # folders of the files that joined (all of them the first time); a folder whose files all left
            # stays watched: an event there asks git about a path it no longer tracks, harmlessly
            added = tracked if full else tracked - old_tracked
            with self._lock:
                dirs = {""} if full else set(self._tracked_dirs)
            for d in {p.rpartition("/")[0] for p in added}:
                while d and d not in dirs:
                    dirs.add(d)
                    d = d.rpartition("/")[0]
            with self._lock:
                self._tracked, self._tracked_dirs = tracked, dirs
                try:
                    self._watch_refs()
                    for d in sorted(dirs - self._dirs.keys()):
                        self._watch(d)
                except OSError as exc:
                    self._fail(f"cannot watch every tracked folder ({exc}; see fs.inotify.max_user_watches)")
                    return
            if full:
                known = self._status()
                if known is None:
                    return
                with self._lock:
                    self._known = known
            else:
                moved: set[str] = set()
                if head != old_head:
                    names = gitutil.output(self.root, "diff-tree", "-r", "--name-only", "-z", "--no-renames",
                                           old_head, head, timeout=GIT_TIMEOUT_S)
                    if names is None:
                        return
                    moved = set(names.decode("utf-8", "surrogateescape").split("\0")) - {""}
                with self._lock:
                    self._dirty |= (old_tracked ^ tracked) | moved
            self._head = head
            ok = True
            self.refreshes += 1
            if full:
                self.full_refreshes += 1
        finally:
            with self._lock:
                self._refreshing = False
                if not ok:
                    self._stale = self._need_full = True
                self._lock.notify_all()

    def _status(self) -> set[str] | None:
        """Tracked paths whose file or index entry differs from HEAD or from the index: a superset of those
        whose file differs from HEAD. `git status` re-reads a file that was only touched (in memory: it
        never writes the index under GIT_OPTIONAL_LOCKS=0), so touched files are not listed."""
        out = gitutil.output(self.root, "status", "--porcelain=v2", "-z", "--untracked-files=no", "--no-renames",
                             "--ignore-submodules=none", timeout=GIT_TIMEOUT_S)
        if out is None:
            return None
        known: set[str] = set()
        fields = out.decode("utf-8", "surrogateescape").split("\0")
        i = 0
        while i < len(fields):
            rec = fields[i]
            i += 1
            width = {"1 ": 8, "2 ": 9, "u ": 10}.get(rec[:2])
            if width is None:
                continue
            parts = rec.split(" ", width)
            if len(parts) == width + 1:
                known.add(parts[width])
            if rec[:2] == "2 ":
                i += 1  # a rename's source path (renames are off; kept for safety)
        return known


def _tracked(listed: bytes) -> tuple[set[str], bool]:
    """The paths of `git ls-files -z -v`, and whether every entry is a plain one (tag H). String methods
    only (no Python loop over 100k records): every record is a tag, a space and the path."""
    text = "\0" + listed.decode("utf-8", "surrogateescape")
    records = text.count("\0") - (1 if text.endswith("\0") else 0)
    plain = text.count("\0H ") == records
    if plain:
        tracked = set(text.replace("\0H ", "\0").split("\0"))
    else:
        tracked = {rec[2:] for rec in text.split("\0") if len(rec) > 2}
    tracked.discard("")
    return tracked, plain


def _plain(path: str) -> bool:
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
