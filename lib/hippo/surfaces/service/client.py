"""The one client of the warm per-repo server (service/server.py), with the one in-process fallback.

Every caller goes through here: the failure hook (`hook`), `/rag`, `hippo search` and the MCP tool
(`search`), and `hippo index` (`index`: the run goes to the server when one is up, else the CLI runs it). Each tries the repo's server over its unix socket; when none answers (no socket, refused,
timeout, garbage, another repo's server) the same request is answered in this process by
`service.host.WarmIndex.handle`, the handler the server itself runs, and a server is started in the
background for next time (HIPPO_SERVER=ask: never started; HIPPO_SERVER=off or HIPPO_NO_SERVER=1: never asked).

Stdlib-only on the fast path: when a server is up, a hook process imports only json/os/socket — no
pathlib, re, dataclasses or config (each costs milliseconds that a failed command pays every time) —
and `hippo search` never imports lancedb. A socket is trusted only when this user owns it and its
directory (the index dir, or the private `socket_dir()` for long paths); requests and replies
are size-capped and every call has a timeout.
"""
from __future__ import annotations

import json
import os

from hippo.core.indexdir import IndexDir

MAX_REQUEST = 1024 * 1024  # the server reads at most this much of one request
MAX_REPLY = 8 * 1024 * 1024
WARM_TIMEOUT_S = 3.0  # hooks: a server silent this long is raced by the in-process (cold) run
RACE_SLACK_S = 1.0  # beyond the cold run's budget, how long a slow server's answer is still waited for
SEARCH_TIMEOUT_S = 20.0  # `hippo search`, /rag, MCP: still far less than loading the stack in-process
STARTING_WAIT_S = 15.0  # a server that holds its lock but has no socket yet is loading the model
MAX_ERROR_SENT = 64 * 1024  # well under MAX_REQUEST
_SUN_PATH_MAX = 100  # AF_UNIX paths are limited to ~104-108 bytes depending on the OS
# Errors the in-process fallback would raise just the same: re-raised without loading the search stack.
_USER_ERRORS = ("BadQueryError", "NoIndexError")
INDEX_SILENCE_S = 30.0  # a handed-over index run sends a heartbeat every server.HEARTBEAT_S


def _socket_file(index_dir) -> str:
    from hippo.core.indexdir import IndexDir

    p = IndexDir(os.fspath(index_dir)).server_socket
    if len(os.fsencode(p)) < _SUN_PATH_MAX:
        return p
    import hashlib

    digest = hashlib.sha1(os.fsencode(os.path.realpath(os.fspath(index_dir)))).hexdigest()[:16]
    return os.path.join(socket_dir(), f"{digest}.sock")


def socket_dir() -> str:
    """Where sockets go whose path in the index dir is too long for AF_UNIX: a directory no other user can
    create first. `$XDG_RUNTIME_DIR/hippo` when XDG_RUNTIME_DIR is a private dir of ours (the login
    session's own tmpfs), else `<hippo home>/run`. Never a fixed name in the shared temp dir: another
    local user could make it first and so switch the server off (or, were it trusted, answer as it)."""
    from hippo.core import indexdir

    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg and os.path.isabs(xdg) and private_dir_ok(xdg):
        return os.path.join(xdg, "hippo")
    return os.path.join(indexdir.hippo_home_location(), "run")


def private_dir_ok(path: str) -> bool:
    """A directory only this user controls: ours, not a symlink, no group/other access."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not (st.st_mode & 0o077)


def _trusted(path: str, index_dir) -> bool:
    """The socket was bound by a process of this user, in a directory only this user may replace it in
    (the index dir, owned by us and not world-writable, or the private fallback dir)."""
    import stat

    from hippo.core.indexdir import IndexDir

    directory = os.path.dirname(path)
    if path != IndexDir(os.fspath(index_dir)).server_socket and not private_dir_ok(directory):
        return False
    try:
        st, dst = os.lstat(path), os.stat(directory)
    except OSError:
        return False
    uid = os.getuid()
    return stat.S_ISSOCK(st.st_mode) and st.st_uid == uid and dst.st_uid == uid and not (dst.st_mode & 0o002)


def socket_path(index_dir):
    """`<index_dir>/server.sock`, or a short path in `socket_dir()` when that is too long for AF_UNIX."""
    from pathlib import Path

    return Path(_socket_file(index_dir))


def server_mode() -> str:
    """HIPPO_SERVER: `auto` (default) asks the repo's warm server and starts one when none answers; `ask` uses
    a running one but never starts one (CI, scripts); `off` (or HIPPO_NO_SERVER=1) neither asks nor starts,
    so every call answers in its own process."""
    if os.environ.get("HIPPO_NO_SERVER") == "1":
        return "off"
    mode = os.environ.get("HIPPO_SERVER", "").strip().lower()
    return mode if mode in ("ask", "off") else "auto"


def servers_off() -> bool:
    return server_mode() == "off"


def ask(index_dir, payload: dict, timeout: float = WARM_TIMEOUT_S, wait_s: float = 0.0,
        held: list | None = None) -> dict | None:
    """The server's whole reply ({"ok": ..., ...}), or None when no trusted server answered well-formed.

    `wait_s`: when a server holds its lock but has not bound its socket yet (it is loading the model),
    wait up to this long for it rather than loading everything a second time in this process.
    `held`: when the server took the request but sent nothing within `timeout`, its socket is appended
    there, still open, for a caller that keeps waiting (`read_reply`) instead of giving the answer up."""
    if servers_off():
        return None
    path = _socket_file(index_dir)
    if not os.path.exists(path):
        if wait_s <= 0 or not _await_socket(index_dir, path, wait_s):
            return None
    data = _encoded(payload)
    if data is None or not _trusted(path, index_dir):
        return None
    try:
        s = _send(path, data, timeout)
    except OSError:
        return None
    try:
        return read_reply(s)
    except NoReplyYet:
        if held is not None:
            held.append(s)
            return None
        s.close()
        return None
    except (OSError, ValueError):
        s.close()
        return None


class NoReplyYet(Exception):
    """The server has the request and has sent nothing yet (its socket is still open)."""


def read_reply(s) -> dict | None:
    """The reply on a socket that has sent its request (None: too big, cut or not a reply); closes the
    socket, except when nothing came before its timeout (NoReplyYet): it can be read again then."""
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            got = s.recv(65536)
        except TimeoutError:
            if not chunks:
                raise NoReplyYet() from None
            s.close()
            return None
        if not got:
            break
        chunks.append(got)
        size += len(got)
        if size > MAX_REPLY:
            s.close()
            return None
    s.close()
    reply = json.loads(b"".join(chunks).decode("utf-8"))
    return reply if _is_reply(reply) else None


def _encoded(payload: dict) -> bytes | None:
    """The request line, or None when it is over the server's size cap."""
    data = json.dumps(payload).encode("utf-8") + b"\n"
    return data if len(data) <= MAX_REQUEST else None


def _send(path: str, data: bytes, timeout: float):
    """A connected socket that has sent `data` and closed its writing half; the caller reads the reply."""
    import socket  # only once there is a server to talk to

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except BaseException:
        s.close()
        raise
    return s


def _is_reply(msg: object) -> bool:
    """A well-formed final reply: {"ok": bool, ...}, with a dict `result` when ok."""
    return (isinstance(msg, dict) and isinstance(msg.get("ok"), bool)
            and (not msg["ok"] or isinstance(msg.get("result"), dict)))


def _await_socket(index_dir, path: str, wait_s: float) -> bool:
    import time

    deadline = time.monotonic() + wait_s
    while server_running(index_dir):
        if os.path.exists(path):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # polling a server's startup, not synchronising a test
    return os.path.exists(path)


def request(index_dir, payload: dict, timeout: float = WARM_TIMEOUT_S) -> dict | None:
    """The server's result for one request, or None (no server, refused, failed, garbage)."""
    reply = ask(index_dir, payload, timeout)
    return reply["result"] if reply is not None and reply["ok"] else None


def repo_root(cwd) -> str | None:
    """Nearest ancestor of `cwd` holding `.git` (same rule as common.find_repo_root, without pathlib)."""
    if not cwd or not isinstance(cwd, str):
        return None
    try:
        p = os.path.realpath(cwd)
    except (OSError, ValueError):
        return None
    while True:
        if os.path.exists(os.path.join(p, ".git")):
            return p
        parent = os.path.dirname(p)
        if parent == p:
            return None
        p = parent


def server_running(index_dir) -> bool:
    """True when some process holds the server's singleton lock."""
    from hippo.core.indexdir import IndexDir

    return IndexDir(os.fspath(index_dir)).server_running()


def start_server(root, index_dir) -> int | None:
    """Start `python -m hippo serve` detached unless one is already up (the server re-checks)."""
    if server_mode() != "auto" or server_running(index_dir):
        return None
    from pathlib import Path

    from hippo.core.runtime import spawn_detached

    return spawn_detached(["serve", "--root", str(root)], Path(index_dir), Path(root))


def _raise(reply: dict) -> None:
    from hippo.core import errors

    raise getattr(errors, reply["kind"])(reply.get("error") or "")


def _stream(index_dir, payload: dict, progress, silence_s: float) -> dict | None:
    """Send one request and read newline-separated JSON messages until the reply ({"ok": ...}); progress
    messages go to `progress(phase, done, total)`. None when no trusted server answered it to the end
    (none up, refused, died mid-run, silent for `silence_s`, garbage)."""
    if servers_off():
        return None
    path = _socket_file(index_dir)
    data = _encoded(payload)
    if data is None or not os.path.exists(path) or not _trusted(path, index_dir):
        return None
    buf = b""
    try:
        with _send(path, data, silence_s) as s:
            while True:
                got = s.recv(65536)
                if not got:
                    return None  # the server went away before its reply
                buf += got
                if len(buf) > MAX_REPLY:
                    return None
                while b"\n" in buf:
                    line, _, buf = buf.partition(b"\n")
                    msg = json.loads(line.decode("utf-8"))
                    if not isinstance(msg, dict):
                        return None
                    if "ok" in msg:
                        return msg if _is_reply(msg) else None
                    step = msg.get("progress")
                    if progress is not None and isinstance(step, list) and len(step) == 3:
                        progress(str(step[0]), int(step[1]), int(step[2]))
    except (OSError, ValueError, TypeError):
        return None


# --- callers ------------------------------------------------------------------------------------
def index(root, key: str, *, vectors: bool = True, wait_lock: float = 3.0, progress=None,
          silence_s: float = INDEX_SILENCE_S) -> dict | None:
    """Hand an incremental `hippo index` to the repo's running server: the IndexReport as a dict, or None
    when no server took it (none up, an older server, other settings, it died mid-run), and the caller
    runs it in-process: a run the server left unfinished is resumed there, as after any killed run.
    Raises IndexLockedError / UnsafeIndexDir as the in-process run would. `key`: indexer.run_key."""
    root = os.fspath(root)
    req = {"op": "index", "root": root, "key": key, "vectors": vectors, "wait_lock": wait_lock}
    reply = _stream(IndexDir.of(root).path, req, progress, silence_s)
    if reply is None:
        return None
    if not reply["ok"]:
        if reply.get("kind") == "IndexLockedError":
            _raise(reply)
        if reply.get("kind") == "UnsafeIndexDir":
            from hippo.core.config import UnsafeIndexDir

            raise UnsafeIndexDir(reply.get("error") or "")
        return None
    report = reply["result"].get("report")
    return report if isinstance(report, dict) else None


def search(root, request: dict, *, local=None, timeout: float = SEARCH_TIMEOUT_S,
           wait_s: float = STARTING_WAIT_S, leave_warm: bool = True) -> dict:
    """A SearchResponse dict for `request` (query, keywords, globs, exact, k, budget_chars, mode).

    Asks the repo's server; else answers in-process with `local` (a WarmIndex the caller keeps, e.g.
    the MCP server) or a fresh one, then starts a server for next time when `leave_warm`. Raises what
    Searcher raises (BadQueryError, NoIndexError, ...), whichever side answered."""
    return _answer(root, {"op": "search", **request}, "search", local=local, timeout=timeout, wait_s=wait_s,
                   leave_warm=leave_warm)


def structure(root, request: dict, *, local=None, timeout: float = SEARCH_TIMEOUT_S,
              wait_s: float = STARTING_WAIT_S, leave_warm: bool = True) -> dict:
    """A structural answer (hippo.retrieval.structure) for {"kind": def|callers|callees, "name", "k"}, from the
    repo's server or in-process, exactly as `search` answers."""
    return _answer(root, {"op": "structure", **request}, "structure", local=local, timeout=timeout,
                   wait_s=wait_s, leave_warm=leave_warm)


def _answer(root, request: dict, method: str, *, local, timeout: float, wait_s: float, leave_warm: bool) -> dict:
    """Ask the repo's server for `request`; else `local.<method>(request)` (a WarmIndex), then leave a
    server warm for next time."""
    root = os.fspath(root)
    idx = IndexDir.of(root).path
    req = {**request, "root": root}
    reply = ask(idx, req, timeout=timeout, wait_s=wait_s)
    if reply is not None:
        if reply["ok"]:
            if local is not None and local.is_open:
                local.close()  # the server is back: one process per repo holds the index and the model
            return reply["result"]
        if reply.get("kind") in _USER_ERRORS:
            _raise(reply)
    if local is None:
        from hippo.surfaces.service.host import WarmIndex

        local = WarmIndex(root)
    try:
        return getattr(local, method)(req)
    finally:
        if leave_warm and local.needed and IndexDir(idx).has_index():
            start_server(root, idx)


def warm_hook(event: str, payload: dict, timeout: float = WARM_TIMEOUT_S,
              held: list | None = None) -> tuple[bool, dict | None]:
    """Let the repo's running server answer a whole hook. (True, output or None) when it answered;
    (False, None) when no server is up or it refused or failed, or (with `held`, see `ask`) is still at it."""
    root = repo_root(payload.get("cwd"))
    if root is None:
        return False, None
    error = payload.get("error")
    if isinstance(error, str) and len(error) > MAX_ERROR_SENT:
        # Claude Code middle-truncates at 10k anyway; huge output would overflow the server's request cap.
        payload = {**payload, "error": error[:2000] + "\n...\n" + error[-(MAX_ERROR_SENT - 2000):]}
    reply = ask(IndexDir.of(root).path, {"op": "hook", "event": event, "payload": payload}, timeout, held=held)
    return _hook_output(reply)


def _hook_output(reply: dict | None) -> tuple[bool, dict | None]:
    result = reply["result"] if reply is not None and reply["ok"] else None
    if not isinstance(result, dict):
        return False, None
    out = result.get("output")
    return True, out if isinstance(out, dict) else None


def hook(event: str, payload: dict, timeout: float = WARM_TIMEOUT_S) -> dict | None:
    """The failure hook's output: the server's, else the same handler in-process (cold: keyword mode,
    time-budgeted), then a server for next time if the failure needed the index. A server that took the
    request but has not answered within `timeout` (a 100k-file index's first failure builds its lookups
    for seconds) is still listened to while the cold run goes: the first answer wins."""
    if payload.get("tool_name", "Bash") != "Bash" or not payload.get("error"):
        return None
    held: list = []
    answered, out = warm_hook(event, payload, timeout=timeout, held=held)
    if answered:
        return out
    root = repo_root(payload.get("cwd"))
    if root is None:
        for s in held:
            s.close()
        return None
    if held:
        return _race(held[0], root, event, payload)
    return _cold(root, event, payload)


def _cold(root: str, event: str, payload: dict) -> dict | None:
    from hippo.surfaces.service.host import WarmIndex

    local = WarmIndex(root, cold=True)
    reply = local.handle({"op": "hook", "event": event, "payload": payload})
    if local.needed:
        start_server(root, local.index_dir)
    result = reply.get("result") if reply.get("ok") else None
    out = result.get("output") if isinstance(result, dict) else None
    return out if isinstance(out, dict) else None


def _race(sock, root: str, event: str, payload: dict) -> dict | None:
    """The server's answer on `sock` or the cold run's, whichever comes first with something to say; the
    server is listened to for as long as the cold run may take (host.COLD_BUDGET_S) and a little more."""
    import select
    import threading
    import time

    from hippo.surfaces.service.host import COLD_BUDGET_S

    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("out", _cold(root, event, payload)), daemon=True)
    worker.start()
    deadline = time.monotonic() + COLD_BUDGET_S + RACE_SLACK_S
    try:
        while time.monotonic() < deadline:
            if box.get("out") is not None:
                return box["out"]
            ready, _, _ = select.select([sock], [], [], 0.05)
            if not ready:
                continue
            sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                answered, out = _hook_output(read_reply(sock))
            except (NoReplyYet, OSError, ValueError):
                answered, out = False, None
            if answered:
                return out
            worker.join(max(0.0, deadline - time.monotonic()))  # the server failed: the cold run's answer
            return box.get("out")
        return box.get("out")
    finally:
        sock.close()
