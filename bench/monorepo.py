"""A monorepo of real code with real history, at a chosen size, for the 1k / 10k / 100k-file bench.

    python -m bench.monorepo --mirrors DIR --files 10000 --out /tmp/mono-10k

Real projects (bare mirrors `DIR/<owner>+<name>/repo`, as the search tool's `fetch` brings them) are laid
side by side as `p0/<name>/`, whole, in a fixed order (`ORDER` first, then any other mirror found, by name),
until the tree holds `--files` tracked files (the last project is cut in path order). A bigger size than all
the projects hold repeats them as `p1/`, `p2/`, ..., each copy an older real revision of the project
(`--copy-step` first-parent commits further back per copy, the oldest commit at most), as a monorepo that
vendors several versions of a library holds them: real code that differs between copies, not byte-identical
files that every cache would collapse.
The history is real: `more-itertools` starts at its commit `--replay` first-parent commits before its head,
the tree is committed, then the next `--history` of those commits are replayed into `p0/more-itertools/`
with their own messages (so `git log` and the brief see a project's real recent work). The commits left over
are written as patches under `<out>/../<name>.pending/` for the bench to apply one at a time, as a user's
next commit.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

REPLAY = "more-itertools+more-itertools"
# Mixed languages, small projects first so the 1k tree is several projects, not a slice of one.
ORDER = [REPLAY, "encode+httpx", "axios+axios", "spf13+cobra", "sharkdp+fd", "pallets+flask", "psf+requests",
         "tj+commander.js", "postcss+postcss", "sindresorhus+got", "python-humanize+humanize", "mahmoud+boltons",
         "andialbrecht+sqlparse", "pytoolz+toolz", "unjs+ufo", "micromatch+picomatch", "delvedor+find-my-way",
         "Textualize+rich", "Python-Markdown+markdown", "nodeca+js-yaml", "sqlalchemy+sqlalchemy",
         "sphinx-doc+sphinx", "wagtail+wagtail"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None, data: bytes | None = None) -> bytes:
    pre = ["--git-dir", str(git_dir)] if git_dir else []
    return subprocess.run(["git", *pre, *args], cwd=cwd, input=data, capture_output=True, check=True,
                          env={**os.environ, **GIT_ENV}).stdout


def tree(git_dir: Path, rev: str) -> list[tuple[str, str, str]]:
    """(mode, blob id, path) of every file of `rev`, in path order (submodules left out)."""
    out = []
    for rec in git("ls-tree", "-r", "-z", rev, git_dir=git_dir).split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        # a project's .gitattributes may ask git to re-encode files (sphinx's working-tree-encoding), which
        # fails inside another repository: the monorepo does without them
        if kind == "blob" and not path.endswith(b".gitattributes"):
            out.append((mode, sha, path.decode("utf-8", "surrogateescape")))
    return out


def extract(git_dir: Path, rev: str, dest: Path, keep: int | None = None) -> int:
    """The files of `rev` (its first `keep` in path order when given) into `dest`; returns how many were written.

    Blobs are streamed through one `git cat-file --batch`: a snapshot may lack its largest blobs (they are
    skipped, as hippo would skip a file that size anyway), which `git archive` would fail on."""
    files = tree(git_dir, rev)[:keep]
    proc = subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    request = "".join(f"{sha}\n" for _m, sha, _p in files).encode()

    def feed() -> None:  # in a thread: the answers fill the pipe long before a big request is written
        proc.stdin.write(request)  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    written = 0
    for mode, _sha, path in files:
        header = proc.stdout.readline().split()
        if header[-1] == b"missing":
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)  # the newline after each object
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            target.unlink(missing_ok=True)
            os.symlink(data.decode("utf-8", "surrogateescape"), target)
        else:
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
        written += 1
    feeder.join()
    proc.wait()
    return written


def projects_in(mirrors: Path, only: list[str] | None = None) -> list[str]:
    """The mirrors to lay out: those of `ORDER` that are present, in its order, then every other one by name;
    `only` (owner+name each) keeps a tree the same when more mirrors arrive (a run's JSON lists its projects)."""
    present = sorted(d.name for d in mirrors.iterdir() if (d / "repo").is_dir()) if mirrors.is_dir() else []
    if only is not None:
        missing = sorted(set(only) - set(present))
        if missing:
            raise SystemExit(f"mirrors not found under {mirrors}: {', '.join(missing)}")
        present = [n for n in present if n in only]
    return [n for n in ORDER if n in present] + [n for n in present if n not in ORDER]


def copy_rev(git_dir: Path, copy: int, step: int) -> str:
    """The revision of a project's `copy`-th copy: `copy * step` first-parent commits before its head, or its
    oldest first-parent commit when the history is shorter."""
    if copy == 0 or step <= 0:
        return "HEAD"
    chain = git("rev-list", "--first-parent", f"-{copy * step + 1}", "HEAD", git_dir=git_dir).decode().split()
    return chain[-1]


def build(mirrors: Path, files: int, out: Path, replay: int = 30, history: int = 24, copy_step: int = 10,
          only: list[str] | None = None) -> dict:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rmirror = mirrors / REPLAY / "repo"
    chain = git("rev-list", "--first-parent", "--no-merges", f"-{replay + 1}", "HEAD",
                git_dir=rmirror).decode().split()[::-1]  # oldest first
    projects: list[tuple[str, str, int]] = []  # (name, rev, files taken)
    total, copy = 0, 0
    names = projects_in(mirrors, only)
    while total < files:
        added = 0
        for name in names:
            gd = mirrors / name / "repo"
            if total >= files:
                continue
            rev = chain[0] if name == REPLAY and not copy else copy_rev(gd, copy, copy_step)
            take = extract(gd, rev, out / f"p{copy}" / name.split("+", 1)[1], keep=files - total)
            projects.append((f"p{copy}/{name.split('+', 1)[1]}", git("rev-parse", rev, git_dir=gd).decode().strip(), take))
            total += take
            added += take
        if not added:
            raise SystemExit(f"no mirrors found under {mirrors}")
        copy += 1
    git("init", "-q", cwd=out)
    git("config", "gc.auto", "0", cwd=out)  # no background repack of 100k loose objects in the middle of a bench
    git("add", "-A", cwd=out)
    git("commit", "-q", "-m", f"monorepo of {len(projects)} real project trees", cwd=out)
    prefix = f"p0/{REPLAY.split('+', 1)[1]}"
    pending = out.parent / f"{out.name}.pending"
    shutil.rmtree(pending, ignore_errors=True)
    pending.mkdir()
    replayed = 0
    for i, (parent, commit) in enumerate(zip(chain, chain[1:], strict=False)):
        patch = git("diff", "--binary", parent, commit, git_dir=rmirror)
        message = git("log", "-1", "--format=%B", commit, git_dir=rmirror)
        if i < history:
            apply(out, prefix, patch, message)
            replayed += 1
        else:
            (pending / f"{i:03d}.patch").write_bytes(patch)
            (pending / f"{i:03d}.msg").write_bytes(message)
    return {"files": total, "projects": projects, "replayed": replayed, "pending": str(pending), "prefix": prefix,
            "mirrors": names}


def apply(root: Path, prefix: str, patch: bytes, message: bytes) -> None:
    """One real commit of the replayed project, applied under its prefix and committed with its message."""
    if patch.strip():
        git("apply", "--whitespace=nowarn", f"--directory={prefix}", cwd=root, data=patch)
    git("add", "-A", "--", prefix, cwd=root)  # only its own folder: no stat of the other 100k files
    git("commit", "-q", "--allow-empty", "-F", "-", cwd=root, data=message)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--replay", type=int, default=30)
    ap.add_argument("--history", type=int, default=24)
    ap.add_argument("--copy-step", type=int, default=10, help="first-parent commits between a project's copies")
    ap.add_argument("--projects", help="comma-separated owner+name mirrors to use (default: every one found)")
    a = ap.parse_args()
    only = a.projects.split(",") if a.projects else None
    info = build(a.mirrors, a.files, a.out, a.replay, a.history, a.copy_step, only)
    (a.out.parent / f"{a.out.name}.json").write_text(json.dumps(info, indent=1))
    print(json.dumps({k: v for k, v in info.items() if k != "projects"}))


if __name__ == "__main__":
    main()
