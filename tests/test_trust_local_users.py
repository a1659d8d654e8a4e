"""Another local user of the machine: the index holds the text of every file hippo read (a 0600 file's
too), so it must be no more readable than the user's own files; and the socket's directory must be one
no other user can create first. A second real user reads through a subprocess that drops to its uid
(`nobody`, or a user made here); without root to do that the tests skip."""
from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_embedder import SPEC as FAKE
from helpers_index import sample_repo
from hippo.core import indexdir
from hippo.surfaces.service import client

pytest.importorskip("lancedb")

SECRET = "zq-private-marker-7731"  # the text of a 0600 file; no other user may see it anywhere

# Run as the other user: for each path, list a dir or read a file, or say it was denied.
PROBE = r"""
import json, os, sys
out = {}
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            out[p] = ["listed", sorted(os.listdir(p))]
        else:
            with open(p, "rb") as fh:
                out[p] = ["read", fh.read().decode("utf-8", "replace")]
    except OSError as exc:
        out[p] = ["denied", exc.errno]
print(json.dumps(out))
"""


def _other_user() -> tuple[int, int]:
    """(uid, gid) of a second local user, made if needed; skip when this process cannot act as one."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("acting as a second local user needs root")
    for name in ("nobody", "hippo-other"):
        try:
            pw = pwd.getpwnam(name)
            return pw.pw_uid, pw.pw_gid
        except KeyError:
            continue
    if shutil.which("useradd") is None:
        pytest.skip("no second user and no useradd")
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", "hippo-other"], check=True)
    pw = pwd.getpwnam("hippo-other")
    return pw.pw_uid, pw.pw_gid


def _dropper(user: tuple[int, int]):
    uid, gid = user

    def drop() -> None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    return drop


def _python_for(user: tuple[int, int]) -> str:
    """A Python the other user may run (this venv's may sit under root's 0700 home)."""
    for exe in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        try:
            if subprocess.run([exe, "-I", "-S", "-c", "pass"], preexec_fn=_dropper(user), cwd="/",
                              capture_output=True, timeout=30).returncode == 0:
                return exe
        except OSError:
            continue
    pytest.skip("no Python interpreter the second user may run")


def as_other(user: tuple[int, int], *paths: Path) -> dict[str, list]:
    """What the other user gets for each path: ["listed", names] | ["read", text] | ["denied", errno]."""
    proc = subprocess.run([_python_for(user), "-I", "-S", "-c", PROBE, *map(str, paths)],
                          preexec_fn=_dropper(user), capture_output=True, text=True, timeout=60, cwd="/")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def shared_place() -> Iterator[Path]:
    """A directory every user may enter, as a home or /srv is (pytest's own temp dirs are 0700)."""
    base = Path(tempfile.mkdtemp(prefix="hippo-users-")).resolve()
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _repo_with_a_private_file(place: Path) -> Path:
    root = sample_repo(place)
    os.chmod(root, 0o755)
    notes = root / "private_notes.md"
    notes.write_text(f"# Notes\n\nThe vault phrase is {SECRET} and nobody else may read it.\n")
    os.chmod(notes, 0o600)
    return root


def _everything_under(d: Path) -> list[Path]:
    return [d, *sorted(d.rglob("*"))]


def _index(root: Path, monkeypatch) -> Path:
    from hippo.index.indexer import index_repo

    monkeypatch.setenv("HIPPO_MODEL", FAKE)
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    index_repo(root)
    return root / ".hippo"


def test_another_user_reads_nothing_of_the_index(shared_place, umask022, monkeypatch):
    user = _other_user()
    root = _repo_with_a_private_file(shared_place)
    idx = _index(root, monkeypatch)
    from hippo.retrieval.search import Searcher

    assert SECRET in json.dumps(Searcher(root).search("vault phrase", mode="keyword").to_dict())  # it is indexed
    seen = as_other(user, root / "README.md", root / "private_notes.md", *_everything_under(idx))
    assert seen.pop(str(root / "README.md"))[0] == "read"  # the other user does reach the repo ...
    assert seen.pop(str(root / "private_notes.md"))[0] == "denied"  # ... but not the private file
    assert len(seen) > 10 and all(v[0] == "denied" for v in seen.values()), \
        {p: v[0] for p, v in seen.items() if v[0] != "denied"}
    assert SECRET not in json.dumps(seen)
    assert (idx.stat().st_mode & 0o777) == 0o700


def test_an_index_left_open_by_an_older_hippo_is_closed_on_open_and_on_write(shared_place, umask022, monkeypatch):
    user = _other_user()
    root = _repo_with_a_private_file(shared_place)
    idx = _index(root, monkeypatch)
    os.chmod(idx, 0o755)  # what the old code left under umask 022
    opened = as_other(user, idx / "db")
    assert opened[str(idx / "db")][0] == "listed"  # the probe does see an open index
    from hippo.retrieval.search import Searcher

    Searcher(root)  # a reader opening it closes it
    assert as_other(user, idx / "db")[str(idx / "db")][0] == "denied"
    os.chmod(idx, 0o755)
    from hippo.index.indexer import index_repo

    (root / "new.md").write_text("# New\n\nmore text\n")
    index_repo(root)  # and so does the next write
    assert as_other(user, idx / "db")[str(idx / "db")][0] == "denied"


def test_an_index_dir_elsewhere_is_made_private_whatever_the_umask(shared_place, monkeypatch):
    from hippo.index.indexer import index_repo

    root = _repo_with_a_private_file(shared_place)
    elsewhere = shared_place / "indexes" / "sample"
    monkeypatch.setenv("HIPPO_MODEL", FAKE)
    monkeypatch.setenv("HIPPO_INDEX_DIR", str(elsewhere))
    old = os.umask(0)
    try:
        index_repo(root)
    finally:
        os.umask(old)
    assert (elsewhere.stat().st_mode & 0o777) == 0o700


# --- the socket's directory -------------------------------------------------------------------------
def test_socket_dir_is_the_users_runtime_dir_only_when_private(tmp_path, monkeypatch):
    runtime = tmp_path / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert client.socket_dir() == str(runtime / "hippo")
    os.chmod(runtime, 0o755)  # not private: not used
    assert client.socket_dir() == os.path.join(indexdir.hippo_home_location(), "run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/dir")
    assert client.socket_dir() == os.path.join(indexdir.hippo_home_location(), "run")
    assert not client.socket_dir().startswith(tempfile.gettempdir() + os.sep + "hippo-")


def _deep_repo(place: Path, monkeypatch) -> tuple[Path, Path]:
    """An indexed repo whose `.hippo/server.sock` is too long for AF_UNIX (the socket goes elsewhere)."""
    deep = place / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    root = sample_repo(deep)
    idx = _index(root, monkeypatch)
    assert client.socket_path(idx).parent != idx
    return root, idx


def _serve(root: Path) -> tuple[object, threading.Thread]:
    from hippo.surfaces.service.server import QueryServer

    srv = QueryServer(root, idle_s=30.0)
    t = threading.Thread(target=srv.serve, daemon=True)
    t.start()
    return srv, t


def _stop(srv, t: threading.Thread, idx: Path) -> None:
    srv.idle_s = 0
    client.request(idx, {"op": "ping"}, timeout=1)
    t.join(20)


def test_a_squatted_temp_dir_does_not_switch_the_server_off(shared_place, tmp_path, monkeypatch):
    """Another user pre-creates the old fixed socket dir in the shared temp dir (and a runtime dir):
    the server still comes up, in a dir only this user owns."""
    user = _other_user()
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    os.chmod(shared_tmp, 0o1777)
    monkeypatch.setenv("TMPDIR", str(shared_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() re-reads TMPDIR
    squat = shared_tmp / f"hippo-{os.getuid()}"
    squat.mkdir(mode=0o777)
    os.chown(squat, *user)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    root, idx = _deep_repo(shared_place, monkeypatch)
    srv, t = _serve(root)
    try:
        deadline = time.monotonic() + 60
        while client.request(idx, {"op": "ping"}, timeout=1) is None:
            assert t.is_alive() and time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.05)
        sock = client.socket_path(idx)
        assert not str(sock).startswith(str(shared_tmp))
        assert client.private_dir_ok(str(sock.parent)) and (sock.parent.stat().st_mode & 0o777) == 0o700
    finally:
        _stop(srv, t, idx)


def test_a_socket_dir_another_user_made_is_refused(shared_place, monkeypatch):
    """Should another user own the socket dir (say HIPPO_HOME sits somewhere shared), the server does
    not serve from it and the client does not trust it: no server, in-process answers."""
    user = _other_user()
    home = shared_place / "hippo-home"
    home.mkdir()
    os.chmod(home, 0o777)
    monkeypatch.setenv("HIPPO_HOME", str(home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    run = Path(client.socket_dir())
    run.mkdir(mode=0o700)
    os.chown(run, *user)
    root, idx = _deep_repo(shared_place, monkeypatch)
    from hippo.surfaces.service.server import QueryServer

    assert QueryServer(root, idle_s=0.1).serve() == 0
    assert "is not a private directory of this user; not serving" in (idx / "hippo.log").read_text()
    assert not client.socket_path(idx).exists() and client.request(idx, {"op": "ping"}, timeout=1) is None
