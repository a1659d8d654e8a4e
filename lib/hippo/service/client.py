"""Stdlib-only client for the per-repo warm query server (server.py), plus its launcher.

One JSON object per connection each way. Any failure (no socket, refused, timeout, bad reply)
returns None so the caller falls back to its cold path.

`warm_hook` is the hook fast path: when a server is up it does the whole hook (gate, retrieval,
dedupe, rendering), so the short-lived hook process imports only json/os/socket — no pathlib,
re, dataclasses or config (each costs milliseconds that a failed command pays every time).
"""
from __future__ import annotations

import json
import os

MAX_REPLY = 8 * 1024 * 1024
WARM_TIMEOUT_S = 3.0
MAX_ERROR_SENT = 64 * 1024  # well under the server's 1 MB request cap
_SUN_PATH_MAX = 100  # AF_UNIX paths are limited to ~104-108 bytes depending on the OS


def _socket_file(index_dir) -> str:
    p = os.path.join(os.fspath(index_dir), "server.sock")
    if len(os.fsencode(p)) < _SUN_PATH_MAX:
        return p
    import hashlib
    import tempfile

    digest = hashlib.sha1(os.fsencode(os.path.realpath(os.fspath(index_dir)))).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"hippo-{os.getuid()}", f"{digest}.sock")


def private_dir_ok(path: str) -> bool:
    """A directory only this user controls: ours, not a symlink, no group/other access (the /tmp fallback
    is a predictable name another local user could pre-create to read failures or answer as the server)."""
    import stat

    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not (st.st_mode & 0o077)


def socket_path(index_dir):
    """`<index_dir>/server.sock`, or a short path in the temp dir when that is too long for AF_UNIX."""
    from pathlib import Path

    return Path(_socket_file(index_dir))


def request(index_dir, payload: dict, timeout: float = WARM_TIMEOUT_S) -> dict | None:
    path = _socket_file(index_dir)
    if not os.path.exists(path):
        return None
    if not path.startswith(os.fspath(index_dir)) and not private_dir_ok(os.path.dirname(path)):
        return None
    import socket  # only once there is a server to talk to

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(json.dumps(payload).encode("utf-8") + b"\n")
            s.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
                size += len(data)
                if size > MAX_REPLY:
                    return None
        reply = json.loads(b"".join(chunks).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(reply, dict) or not reply.get("ok"):
        return None
    result = reply.get("result")
    return result if isinstance(result, dict) else None


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


def quick_index_dir(root: str) -> str:
    """The index dir without loading settings in the common case (index_dir is an environment-only
    setting, so without HIPPO_INDEX_DIR it is always `<root>/.hippo`)."""
    if "HIPPO_INDEX_DIR" not in os.environ:
        return os.path.join(root, ".hippo")
    from pathlib import Path

    from hippo.config import load_settings

    return str(load_settings(Path(root)).index_path(Path(root)))


def warm_hook(event: str, payload: dict, timeout: float = WARM_TIMEOUT_S) -> tuple[bool, dict | None]:
    """Let the repo's running server answer a whole hook. (True, output or None) when it answered;
    (False, None) when no server is up or it failed, and the caller runs the in-process handler."""
    root = repo_root(payload.get("cwd"))
    if root is None:
        return False, None
    error = payload.get("error")
    if isinstance(error, str) and len(error) > MAX_ERROR_SENT:
        # Claude Code middle-truncates at 10k anyway; huge output would overflow the server's request cap.
        payload = {**payload, "error": error[:2000] + "\n...\n" + error[-(MAX_ERROR_SENT - 2000):]}
    result = request(quick_index_dir(root), {"op": "hook", "event": event, "payload": payload}, timeout=timeout)
    if result is None:
        return False, None
    out = result.get("output")
    return True, out if isinstance(out, dict) else None


def server_running(index_dir) -> bool:
    """True when some process holds the server's singleton lock."""
    import fcntl

    lock = os.path.join(os.fspath(index_dir), "server.lock")
    if not os.path.exists(lock):
        return False
    try:
        with open(lock, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False
    except OSError:
        return False


def start_server(root, index_dir) -> int | None:
    """Start `python -m hippo serve` detached unless one is already up (the server re-checks)."""
    from hippo.hooks.common import spawn_detached

    if os.environ.get("HIPPO_NO_SERVER") == "1" or server_running(index_dir):
        return None
    return spawn_detached(["serve", "--root", str(root)], index_dir, root)
