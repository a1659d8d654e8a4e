"""Stdlib-only client for the per-repo warm query server (server.py), plus its launcher.

One JSON object per connection each way. Any failure (no socket, refused, timeout, bad reply)
returns None so the caller falls back to its cold path.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import tempfile
from pathlib import Path

MAX_REPLY = 8 * 1024 * 1024


def socket_path(index_dir: Path) -> Path:
    """`<index_dir>/server.sock`, or a short path in the temp dir when that is too long for AF_UNIX."""
    p = Path(index_dir) / "server.sock"
    if len(os.fsencode(str(p))) < 100:
        return p
    digest = hashlib.sha1(os.fsencode(str(Path(index_dir).resolve()))).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"hippo-{os.getuid()}" / f"{digest}.sock"


def request(index_dir: Path, payload: dict, timeout: float = 3.0) -> dict | None:
    path = socket_path(index_dir)
    if not path.exists():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
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


def server_running(index_dir: Path) -> bool:
    """True when some process holds the server's singleton lock."""
    lock = Path(index_dir) / "server.lock"
    if not lock.exists():
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


def start_server(root: Path, index_dir: Path) -> int | None:
    """Start `python -m hippo serve` detached unless one is already up (the server re-checks)."""
    from hippo.hooks.common import spawn_detached

    if os.environ.get("HIPPO_NO_SERVER") == "1" or server_running(index_dir):
        return None
    return spawn_detached(["serve", "--root", str(root)], index_dir, root)
