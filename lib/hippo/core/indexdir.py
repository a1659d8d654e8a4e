"""Where hippo keeps its files, how they are locked, how they are written. Stdlib only and cheap to import:
every hook goes through here.

- `hippo_home()`: per-user data that outlives a repository index (built models, the fastembed cache, the
  log of hooks that run outside any repo).
- `IndexDir.of(root, settings)`: the one way to find a repository's index dir (`<root>/.hippo` unless
  HIPPO_INDEX_DIR says otherwise); `create(index_dir)` makes it with the `.gitignore` that keeps `git add -A`
  from committing it.
- Locks: advisory whole-file locks, exclusive or shared, that the OS drops when the holder closes the file
  or dies. `flock` on POSIX; on Windows `LockFileEx` on the file's handle (through msvcrt), which has the
  same exclusive/shared/fail-now modes.
- `atomic_write(path, data)`: readers see the old file or the new one, never a part.
- `IndexDir(path)`: every file hippo keeps in an index dir, named once, and the "is a writer / server
  running?" probes written once.

Module imports are errno/os/stat/sys only (the rest is imported where used): the warm hook process imports this
to find the index dir and keeps to json/os/sys.
"""
from __future__ import annotations

import errno
import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO, Generic, TypeVar

    from hippo.core.config import Settings

    P = TypeVar("P", str, Path)
else:  # typing costs the warm hook process an import it otherwise never makes; only mypy needs Generic
    P = None

    class Generic:
        __slots__ = ()

        def __class_getitem__(cls, _item):
            return cls

DEFAULT_DIR = ".hippo"
PRIVATE_MODE = 0o700  # the index dir and the socket's dir: this user only

# The files of an index dir. Spelled here only: everything else asks an IndexDir for the path.
STATE = "state.json"  # schema, model, indexed commit, per-file records
STATE_SUMMARY = "state-summary.json"  # counts and flags of state.json, for readers that need no per-file record
DB = "db"  # the LanceDB database
WRITER_LOCK = "lock"  # held by the one writer; holds its pid
READERS_LOCK = "readers.lock"  # shared by open readers, so compaction only prunes everything when alone
SERVER_LOCK = "server.lock"  # the warm server's singleton lock
SERVER_SOCKET = "server.sock"
LOG = "hippo.log"
SESSIONS = "sessions"  # per-session hook state (dedupe)
LAST_SESSION = "last_session.json"  # what changed since the last session
TEAM = "team.json"  # which team base this index came from
TABLESUMS = "tablesums.json"  # the writer's checksums of the table files
COCHANGE = "cochange.json"  # which source files changed together with each test file (index/cochange.py)
TRACKED_FILES = "tracked-files"  # the brief's `git ls-files` listing, keyed on git's index file and HEAD
BRIEF_CACHE = "brief.json"  # the last finished brief and what it was composed from (hippo.push.brief.cache)
WATCH = "watch"  # the warm server's sentinel files: all earlier file events were read (surfaces/service/watch.py)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # Windows has none (and no symlinks an unprivileged user makes)


# --- locations -------------------------------------------------------------------------------------
def hippo_home() -> Path:
    """`$HIPPO_HOME`, else `~/.cache/hippo`. A blank value counts as unset and `~` is expanded, for the
    models, the fastembed cache and the fallback log alike. Not created here: callers mkdir what they write."""
    from pathlib import Path

    return Path(hippo_home_location())


def hippo_home_location() -> str:
    """`hippo_home()` as a string, without pathlib (the warm hook client keeps to os)."""
    env = os.environ.get("HIPPO_HOME", "").strip()
    if env:
        return os.path.expanduser(env)
    return os.path.join(os.path.expanduser("~"), ".cache", "hippo")


def create(index_dir: Path) -> None:
    """Create the index dir, private to this user (0700 whatever the umask, see `make_private`), with a
    `.gitignore` of `*` first, so `git add -A` never commits (and so plants) it; every process that creates
    or writes the dir (the indexer, SessionStart, the server, state saves) goes through here."""
    try:
        index_dir.mkdir(mode=PRIVATE_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
        from hippo.core.errors import ReadOnlyIndexDir

        raise ReadOnlyIndexDir(read_only_reason(index_dir) or
                               f"hippo cannot create its index at {index_dir} ({exc.strerror}); set "
                               "HIPPO_INDEX_DIR to a writable directory and run `hippo index`.") from None
    make_private(index_dir)
    ignore = index_dir / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, "# hippo's local index; safe to delete (`rm -rf .hippo`)\n*\n")


def make_private(index_dir: Path | str) -> bool:
    """Take group and other access off a directory of this user's (0700): the index holds the text of every
    file it read, including files only the user may read, and a dir made under umask 022 (or by an older
    hippo) is 0755 with 0644 LanceDB files inside. Closing the directory closes everything under it, so
    the files keep whatever mode LanceDB gives them. A symlink, another user's dir or a missing one is left
    alone (check_index_dir refuses the first). True when the dir is private afterwards."""
    if sys.platform == "win32":  # pragma: no cover - ACLs, not mode bits, on Windows
        return True
    try:
        st = os.lstat(index_dir)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return False
        if st.st_mode & 0o077:
            os.chmod(index_dir, stat.S_IMODE(st.st_mode) & 0o700 | 0o700)
    except OSError:  # a read-only file system: the caller's write (if any) reports it
        return False
    return True


def read_only_reason(index_dir: Path | str) -> str | None:
    """One line, when the index dir is missing and cannot be created because the directory it would go in
    is read-only to us (a read-only checkout or mount); else None. What `hippo index` reports instead of a
    traceback, and what `status` and `search` say instead of "Run `hippo index`"."""
    path = os.path.abspath(os.fspath(index_dir))
    if os.path.lexists(path):
        return None
    parent = os.path.dirname(path)
    while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if os.access(parent, os.W_OK):
        return None
    return (f"{parent} is read-only, so hippo cannot create its index at {path}. Set HIPPO_INDEX_DIR to a "
            f"writable directory (e.g. HIPPO_INDEX_DIR=~/.cache/hippo/indexes/{os.path.basename(parent) or 'repo'}) "
            "and run `hippo index`.")


class IndexDir(Generic[P]):
    """One index directory and the paths of its files. Paths come back as the type the directory was given:
    a str for the warm hook process (no pathlib), a Path everywhere else."""

    __slots__ = ("path",)

    def __init__(self, path: P) -> None:
        self.path: P = path

    @classmethod
    def of(cls, root: P, settings: Settings | None = None) -> IndexDir[P]:
        """The index dir of the repository at `root`, nothing created or checked: the one place that says
        where an index lives (`refuse_planted` checks it, `create` makes it).

        The `index_dir` setting moves it; without `settings`, HIPPO_INDEX_DIR, which is where that setting
        comes from (a repository's own config may not move the index, see config.ENV_ONLY), so hooks need
        not load settings to find the index. A relative value is taken under `root`. A configured value is
        spelled as pathlib spells it, so a client holding a str and a server holding a Path agree on the
        socket's name; the default needs no pathlib (the warm hook process keeps to json/os/sys).
        """
        value = os.environ.get("HIPPO_INDEX_DIR", "") if settings is None else settings.index_dir
        where = os.fspath(root)
        if value:
            from pathlib import Path

            p = os.path.expanduser(value)
            where = str(Path(p if os.path.isabs(p) else os.path.join(where, p)))
        else:
            where = os.path.join(where, DEFAULT_DIR)
        if isinstance(root, str):
            return cls(where)
        from pathlib import Path

        return cls(Path(where))

    def _at(self, name: str) -> P:
        path = self.path
        if isinstance(path, str):
            return os.path.join(path, name)
        return path / name

    state = property(lambda self: self._at(STATE))
    state_summary = property(lambda self: self._at(STATE_SUMMARY))
    db = property(lambda self: self._at(DB))
    writer_lock = property(lambda self: self._at(WRITER_LOCK))
    readers_lock = property(lambda self: self._at(READERS_LOCK))
    server_lock = property(lambda self: self._at(SERVER_LOCK))
    server_socket = property(lambda self: self._at(SERVER_SOCKET))
    log = property(lambda self: self._at(LOG))
    sessions = property(lambda self: self._at(SESSIONS))
    last_session = property(lambda self: self._at(LAST_SESSION))
    team = property(lambda self: self._at(TEAM))
    tablesums = property(lambda self: self._at(TABLESUMS))
    cochange = property(lambda self: self._at(COCHANGE))
    watch = property(lambda self: self._at(WATCH))
    tracked_files = property(lambda self: self._at(TRACKED_FILES))
    brief_cache = property(lambda self: self._at(BRIEF_CACHE))

    def has_index(self) -> bool:
        """A finished keyword phase has written state.json at least once."""
        return os.path.isfile(self.state)

    def writer_running(self) -> bool:
        """Some process holds the writer lock: an index run (perhaps a rebuild) is under way."""
        return held(self.writer_lock)

    def writer_pid(self) -> int | None:
        """The pid of the process holding the writer lock, None when nobody writes, 0 when unreadable.

        A shared probe never blocks a writer for long (writers retry for seconds); the lock, not state.json,
        is the truth: a killed run leaves "incomplete" in the state but the kernel drops its lock."""
        try:
            fh = os.fdopen(os.open(self.writer_lock, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0)), "r")
        except OSError:
            return None  # no lock file: no writer ever ran here
        with fh:
            try:
                if try_lock(fh, shared=True):
                    unlock(fh)
                    return None
            except OSError:
                return None
            try:
                return int(fh.read(32).strip() or 0)
            except (ValueError, UnicodeDecodeError):
                return 0

    def server_running(self) -> bool:
        """Some process holds the warm server's singleton lock."""
        return held(self.server_lock)


# --- locks -----------------------------------------------------------------------------------------
if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    _EXCLUSIVE, _FAIL_NOW = 0x2, 0x1
    _BUSY = 33  # ERROR_LOCK_VIOLATION: another handle holds a conflicting lock
    # Lock one byte far past any content: Windows locks are mandatory for the range they cover, and the
    # writer lock file holds the holder's pid at offset 0 for others to read.
    _HIGH = 0x7FFFFFFF

    def _overlapped():
        import ctypes
        from ctypes import wintypes

        class Overlapped(ctypes.Structure):
            _fields_ = [("Internal", ctypes.c_void_p), ("InternalHigh", ctypes.c_void_p),
                        ("Offset", wintypes.DWORD), ("OffsetHigh", wintypes.DWORD), ("hEvent", wintypes.HANDLE)]

        return ctypes.byref(Overlapped(OffsetHigh=_HIGH))

    def _os_lock(fd: int, shared: bool, blocking: bool) -> bool:
        import ctypes
        import msvcrt
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        flags = (0 if shared else _EXCLUSIVE) | (0 if blocking else _FAIL_NOW)
        if kernel32.LockFileEx(wintypes.HANDLE(msvcrt.get_osfhandle(fd)), flags, 0, 1, 0, _overlapped()):
            return True
        err = ctypes.get_last_error()
        if err == _BUSY:
            return False
        raise ctypes.WinError(err)

    def _os_unlock(fd: int) -> None:
        import ctypes
        import msvcrt
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.UnlockFileEx(wintypes.HANDLE(msvcrt.get_osfhandle(fd)), 0, 1, 0, _overlapped())
else:
    def _os_lock(fd: int, shared: bool, blocking: bool) -> bool:
        import fcntl

        op = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if blocking else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, op)
        except BlockingIOError:
            return False
        return True

    def _os_unlock(fd: int) -> None:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)


def open_lock(path: Path | str) -> IO[str]:
    """Open (creating, mode 0600) a lock file of the index dir without following a symlink planted there.
    The lock lives as long as the returned file is open."""
    return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600), "r+")


def try_lock(fh: IO, *, shared: bool = False) -> bool:
    """Take the lock without waiting: True when taken, False when another open file holds a conflicting one
    (exclusive conflicts with everything, shared only with exclusive). Other OS errors propagate."""
    return _os_lock(fh.fileno(), shared, blocking=False)


def lock(fh: IO, *, shared: bool = False) -> None:
    """Take the lock, waiting as long as it takes."""
    _os_lock(fh.fileno(), shared, blocking=True)


def wait_lock(fh: IO, wait: float, *, shared: bool = False, poll: float = 0.05) -> bool:
    """`try_lock` until it succeeds or `wait` seconds have passed (a bounded wait, unlike `lock`)."""
    import time

    deadline = time.monotonic() + wait
    while not try_lock(fh, shared=shared):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)
    return True


def unlock(fh: IO) -> None:
    """Drop the lock early; closing the file drops it too."""
    _os_unlock(fh.fileno())


def held(path: Path | str) -> bool:
    """True when some process holds a lock on `path` (a probe: takes and drops it; never creates the file)."""
    try:
        fh = os.fdopen(os.open(path, os.O_RDONLY | NOFOLLOW), "r")
    except OSError:
        return False
    with fh:
        try:
            if not try_lock(fh):
                return True
        except OSError:
            return False
        unlock(fh)
    return False


class locked:  # noqa: N801 - used like a function: `with locked(path):`
    """Hold the lock on `path` (waiting for it) for the body of a `with`."""

    def __init__(self, path: Path | str, *, shared: bool = False) -> None:
        self.path, self.shared = path, shared
        self.fh: IO[str] | None = None

    def __enter__(self) -> IO[str]:
        self.fh = open_lock(self.path)
        try:
            lock(self.fh, shared=self.shared)
        except BaseException:
            self.fh.close()
            raise
        return self.fh

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()  # closing drops the lock
            self.fh = None


# --- writes ----------------------------------------------------------------------------------------
def atomic_write(path: Path | str, data: bytes | str, *, mode: int = 0o600, durable: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old file or the new one, never a part of either.

    The temp file is created beside the target with O_EXCL|O_NOFOLLOW (nothing planted under its name is
    followed or reused), synced to disk (unless not `durable`: a record whose loss on a power cut costs
    nothing, written on a hot path where an fsync can take 100+ ms on a busy disk), then renamed over the
    target. A directory that is a symlink is refused (OSError): hippo never writes through one.
    """
    from pathlib import Path

    path = Path(path)
    parent = path.parent
    if stat.S_ISLNK(os.lstat(parent).st_mode):
        raise OSError(f"{parent} is a symlink; hippo will not write through it")
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_BINARY", 0), mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
