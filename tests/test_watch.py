"""The warm server's work-tree watch (surfaces/service/watch.py): a failure's working-tree diff asks git
only about the paths that changed, and is the same as the whole-tree diff after any change, made right
before the request (no timing in these tests: each change is made, then the diff is asked for at once)."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hippo.core import indexdir
from hippo.push.diagnosis import changes
from hippo.surfaces.service import watch as watchmod
from hippo.surfaces.service.watch import TreeWatch, local_fs
from repo_helpers import git

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux only")


def whole_tree(root: Path) -> list[changes.Hunk]:
    """What `git diff HEAD` says (told not to rewrite the index, as a user's `git diff` would)."""
    out = git(root, "-c", "diff.autoRefreshIndex=false", "diff", "--no-color", "--no-renames", "-U0", "HEAD", "--")
    return changes.parse(out, "working tree")


class Recorder:
    """A TreeWatch that remembers what each request asked git about."""

    def __init__(self, w: TreeWatch) -> None:
        self.w, self.asked = w, []

    def begin(self):
        got = self.w.begin()
        self.asked.append(got)
        return got

    def end(self, asked, changed):
        self.w.end(asked, changed)


@pytest.fixture
def watched(git_repo, monkeypatch):
    # a loaded machine must not turn a round-trip or a refresh into a whole-tree diff in these tests: what
    # they check is which answers the watch can give, not how fast it gives them
    monkeypatch.setattr(watchmod, "SYNC_S", 120.0)
    monkeypatch.setattr(watchmod, "REFRESH_WAIT_S", 120.0)
    made = []

    def make(files):
        root = git_repo(files)
        (root / ".gitignore").write_text("build/\n*.log\n")
        git(root, "add", ".gitignore")
        git(root, "commit", "-q", "-m", "ignore")
        idx = root / ".hippo"
        indexdir.create(idx)
        w = TreeWatch(root, idx)
        assert w.start()
        rec = Recorder(w)
        changes.track(root, rec)
        made.append((root, w))
        return root, w, rec

    yield make
    for root, w in made:
        changes.track(root, None)
        w.close()


FILES = {f"pkg{i}/mod{j}.py": "".join(f"def f{k}():\n    return {k}\n" for k in range(6)) for i in range(3) for j in range(4)}
FILES.update({"README.md": "# r\n", "pkg0/sub/deep.py": "x = 1\n"})


def test_an_edit_asks_git_about_that_file_only_and_nothing_asks_git_about_nothing(watched):
    root, w, rec = watched(FILES)
    assert changes.working_tree(root) == []
    assert rec.asked[-1] == []  # no change since the last look: no git call at all
    p = root / "pkg1/mod2.py"
    p.write_text(p.read_text().replace("return 3", "return 33"))
    (root / "build").mkdir()
    (root / "build/out.py").write_text("generated = 1\n")  # ignored (and untracked): never asked about
    (root / "notes.log").write_text("x\n")
    assert changes.working_tree(root) == whole_tree(root) == [changes.Hunk("pkg1/mod2.py", 8, 8, "working tree")]
    assert rec.asked[-1] == ["pkg1/mod2.py"]
    # still differs from HEAD: asked about again, with no new event
    assert changes.working_tree(root) == whole_tree(root) and rec.asked[-1] == ["pkg1/mod2.py"]
    p.write_text(FILES["pkg1/mod2.py"])  # reverted: asked once more, then forgotten
    assert changes.working_tree(root) == [] and rec.asked[-1] == ["pkg1/mod2.py"]
    assert changes.working_tree(root) == [] and rec.asked[-1] == []


def test_a_commit_reset_or_stage_is_seen_though_no_file_of_the_tree_changes(watched):
    root, w, rec = watched(FILES)
    assert changes.working_tree(root) == []
    p = root / "pkg2/mod0.py"
    p.write_text(p.read_text() + "def g():\n    pass\n")
    git(root, "commit", "-q", "-am", "g")
    assert changes.working_tree(root) == whole_tree(root) == []
    git(root, "reset", "-q", "--soft", "HEAD~1")  # HEAD moves back: the file differs from it, untouched
    assert changes.working_tree(root) == whole_tree(root) == [changes.Hunk("pkg2/mod0.py", 13, 14, "working tree")]
    (root / "new.py").write_text("a = 1\n")  # untracked: not in `git diff HEAD`
    assert changes.working_tree(root) == whole_tree(root)
    git(root, "add", "new.py")  # only git's index changes
    got = changes.working_tree(root)
    assert got == whole_tree(root) and changes.Hunk("new.py", 1, 1, "working tree") in got
    assert w.refreshes >= 3


def test_a_lost_event_queue_or_a_dead_reader_means_the_whole_tree_is_diffed(watched):
    root, w, rec = watched(FILES)
    assert changes.working_tree(root) == []
    with w._lock:
        w._event(-1, watchmod.IN_Q_OVERFLOW, "")  # what the kernel sends when events were dropped
    before = w.refreshes
    (root / "README.md").write_text("# changed\n")
    assert changes.working_tree(root) == whole_tree(root) != []
    assert w.refreshes == before + 1 or rec.asked[-1] is None
    w.close()  # no reader: no round-trip can prove the event set complete
    (root / "pkg0/mod0.py").write_text("y = 2\n")
    for _ in range(20):  # its descriptor closed under it, the reader used to swallow a git child's output
        assert changes.working_tree(root) == whole_tree(root) and rec.asked[-1] is None


@pytest.mark.slow  # a property run over a real watched repo (1-2 CPU-s each): `make check` runs it
@pytest.mark.parametrize("max_paths", [watchmod.MAX_PATHS, 3])  # 3: whole-tree fallbacks
def test_any_sequence_of_changes_gives_the_whole_tree_diff(watched, monkeypatch, max_paths):
    """Edits, deletions, renames of files and folders, folders removed and restored, untracked and ignored
    files, every file touched, stages, commits, resets, branch switches and assume-unchanged entries, in a
    random order: after each, at once, the watched diff equals the whole-tree diff (also when a few dirty
    paths are already too many)."""
    monkeypatch.setattr(watchmod, "MAX_PATHS", max_paths)
    root, w, rec = watched(FILES)
    rng = random.Random(21 + max_paths)
    tracked = lambda: [p for p in git(root, "ls-files").split("\n") if p.endswith(".py")]  # noqa: E731
    n = 0

    def edit():
        p = root / rng.choice(tracked())
        if p.exists():
            lines = p.read_text().split("\n")
            lines.insert(rng.randrange(len(lines)), f"z{n} = {n}")
            p.write_text("\n".join(lines))

    def existing() -> Path | None:
        p = root / rng.choice(tracked())
        return p if p.exists() else None

    def rename_dir():
        d = root / f"pkg{rng.randrange(3)}"
        if d.exists():
            d.rename(root / f"moved{n}")
            if rng.random() < 0.5:
                (root / f"moved{n}").rename(d)  # and back

    ops = {
        "edit": edit,
        "delete": lambda: (root / rng.choice(tracked())).unlink(missing_ok=True),
        "rename": lambda: (p := existing()) and p.replace(root / f"r{n}.py"),
        "untracked": lambda: (root / "pkg1").mkdir(exist_ok=True) or (root / f"pkg1/new{n}.py").write_text("n = 1\n"),
        "ignored": lambda: (root / "build").mkdir(exist_ok=True) or (root / f"build/b{n}.py").write_text("b\n"),
        "rmtree": lambda: shutil.rmtree(root / "pkg0", ignore_errors=True),
        "restore": lambda: git(root, "checkout", "-q", "HEAD", "--", "."),
        "restore dir": lambda: (root / "pkg0").exists() or git(root, "checkout", "-q", "HEAD", "--", "pkg0"),
        "rename dir": rename_dir,
        "chmod": lambda: (p := existing()) and os.chmod(p, 0o755),
        "stage": lambda: git(root, "add", "-A"),
        "commit": lambda: git(root, "commit", "-q", "-am", f"c{n}", "--allow-empty"),
        "reset": lambda: git(root, "reset", "-q", "--soft", "HEAD~1") if git(root, "rev-list", "--count", "HEAD").strip() != "1" else None,
        "touch all": lambda: [os.utime(root / f) for f in tracked() if (root / f).exists()],
        "branch": lambda: git(root, "checkout", "-q", "-B", "side", "HEAD~1"),
        "main": lambda: git(root, "checkout", "-q", "main"),
        "assume": lambda: git(root, "update-index", "--assume-unchanged", rng.choice(tracked())),
        "no assume": lambda: git(root, "update-index", "--no-assume-unchanged", rng.choice(tracked())),
    }
    names = list(ops)
    weights = [8, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    for n in range(120):
        name = rng.choices(names, weights)[0]
        try:
            ops[name]()
        except subprocess.CalledProcessError:  # e.g. nothing left to restore after a commit removed it
            pass
        got, want = changes.working_tree(root), whole_tree(root)
        assert got == want, f"step {n} ({name})"
    if max_paths > 100:  # answered without the whole-tree diff, every time
        assert None not in rec.asked and w.full_refreshes < w.refreshes


def test_the_watch_refuses_file_systems_another_machine_may_write():
    info = ("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
            "90 27 0:50 / /mnt/share rw,relatime - nfs4 host:/export rw\n"
            "91 27 0:51 / /home/u/r\\040x rw,relatime - fuse.sshfs u@h:/r rw\n")
    assert local_fs(Path("/srv/repo"), info)
    assert not local_fs(Path("/mnt/share/repo"), info)
    assert not local_fs(Path("/home/u/r x/sub"), info)
    assert not local_fs(Path("/home/u"), info)  # a network mount inside the tree
    assert not local_fs(Path("/srv/repo"), "")


def test_an_edit_made_just_before_the_request_is_always_seen(watched):
    root, w, rec = watched(FILES)
    p = root / "pkg0/sub/deep.py"
    for i in range(100):
        p.write_text(f"x = {i + 2}\n")  # differs from HEAD's `x = 1` each time, in a new way
        assert changes.working_tree(root) == [changes.Hunk("pkg0/sub/deep.py", 1, 1, "working tree")], i
        assert rec.asked[-1] == ["pkg0/sub/deep.py"]
        assert changes.Pending(root).working_tree() == [changes.Hunk("pkg0/sub/deep.py", 1, 1, "working tree")]


def test_the_warm_server_watches_its_tree_and_a_failure_sees_the_edit_made_just_before(warm_server):
    from hippo.surfaces.service import client

    root, srv = warm_server
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "projects")
    tracker = changes._TRACKERS.get(os.path.realpath(root))
    assert isinstance(tracker, TreeWatch)  # the server registered its watch for this tree
    cart = root / "py/shop/cart.py"
    error = ('Traceback (most recent call last):\n  File "shop/main.py", line 1, in <module>\n'
             "ValueError: quantity must be positive, got 0\n")
    for n in range(5):
        cart.write_text(cart.read_text().replace("if quantity <= 0:", f"if quantity <= {n - 10}:"))
        reply = client.request(root / ".hippo", {"op": "diagnose", "root": str(root), "error": error,
                                                 "cwd": str(root / "py")}, timeout=60)
        assert reply is not None
        edited = [h for h in reply["hits"] if h["path"] == "py/shop/cart.py"]
        assert edited and f"<= {n - 10}:" in edited[0]["snippet"], n
        cart.write_text(cart.read_text().replace(f"if quantity <= {n - 10}:", "if quantity <= 0:"))


def test_the_working_tree_diff_never_rewrites_the_users_index(git_repo):
    """Porcelain `git diff` refreshes and rewrites .git/index when a file was only touched, taking the index
    lock under a user's running git (and, to the watch, looking like a change of the index)."""
    root = git_repo(FILES)
    p = root / "pkg0/mod0.py"
    os.utime(p, ns=(p.stat().st_atime_ns, p.stat().st_mtime_ns - 5_000_000_000))  # stat-dirty, same text
    (root / "pkg1/mod1.py").write_text("changed = 1\n")
    index = root / ".git/index"
    before = index.stat()
    assert [h.path for h in changes.working_tree(root)] == ["pkg1/mod1.py"]
    after = index.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)


def test_the_uncommitted_files_from_the_watch_are_what_git_status_lists(watched):
    """SessionStart in a big tree asks the warm server which tracked files differ from HEAD: the watch's
    paths, compared by content (a file only touched is not listed), equal to `git status` for tracked files."""
    root, w, rec = watched(FILES)

    def status() -> list[str]:
        out = git(root, "status", "--porcelain", "--untracked-files=no", "--no-renames")
        return sorted(ln[3:] for ln in out.splitlines())

    assert changes.uncommitted_paths(root) == [] and rec.asked[-1] == []
    edited, touched, gone = root / "pkg1/mod2.py", root / "pkg2/mod0.py", root / "pkg0/sub/deep.py"
    edited.write_text(edited.read_text() + "# more\n")
    os.utime(touched)
    gone.unlink()
    (root / "new.py").write_text("n = 1\n")  # untracked: not listed, as with --untracked-files=no
    assert sorted(changes.uncommitted_paths(root) or []) == status() == ["pkg0/sub/deep.py", "pkg1/mod2.py"]
    git(root, "add", "new.py")
    assert sorted(changes.uncommitted_paths(root) or []) == status() == ["new.py", "pkg0/sub/deep.py", "pkg1/mod2.py"]
    changes.track(root, None)
    assert changes.uncommitted_paths(root) is None  # no watch: the caller asks git itself


def test_session_start_in_a_big_tree_lists_uncommitted_files_through_the_warm_server(warm_server, monkeypatch):
    from hippo.core import gitutil
    from hippo.surfaces.hooks import session_start

    root, srv = warm_server
    # the server runs in this process: a loaded machine must not turn its sync or refresh into a fallback
    monkeypatch.setattr(watchmod, "SYNC_S", 120.0)
    monkeypatch.setattr(watchmod, "REFRESH_WAIT_S", 120.0)
    monkeypatch.setattr(session_start, "SERVER_DIRTY_SECONDS", 240.0)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "projects")
    cart = root / "py/shop/cart.py"
    cart.write_text(cart.read_text() + "# edited\n")
    monkeypatch.setattr(session_start, "UNTRACKED_WALK_MAX_INDEX_BYTES", 10)  # this tree counts as big
    asked: list[tuple] = []
    real = gitutil.output
    monkeypatch.setattr(gitutil, "output", lambda r, *a, **k: asked.append(a) or real(r, *a, **k))
    listed = session_start._uncommitted(root, root / ".hippo", None)
    assert listed == ["py/shop/cart.py"]
    # the hook's own whole-tree `git status` did not run (the watch may refresh with one of its own, off the
    # request path, after the commit above)
    assert not [a for a in asked if a[:2] == ("status", "--porcelain")]
    monkeypatch.setenv("HIPPO_NO_SERVER", "1")
    assert session_start._uncommitted(root, root / ".hippo", None) == ["py/shop/cart.py"]
    assert [a for a in asked if a[:2] == ("status", "--porcelain")]  # no server: git status, as before
