"""Plain helpers for tests that build git repos (importable as `repo_helpers`; conftest.py exposes fixtures).

They live outside conftest.py because tests/e2e has a conftest of its own, and `from conftest import ...`
would pick whichever conftest module was imported first.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    """Run git in `root` for test setup; raises on failure, returns stdout."""
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, env=env, check=True)
    return proc.stdout.decode("utf-8", "surrogateescape")


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write {relative path: text or bytes} under root, creating parent dirs."""
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")


def indexed_searcher(root: Path, files: Mapping[str, str | bytes]):
    """A committed git repo of `files` at `root`, indexed with the fake embedder, and a Searcher over it."""
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo
    from hippo.retrieval.search import Searcher

    write_files(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    return Searcher(root, embedder=emb)


@contextlib.contextmanager
def _environ(extra: Mapping[str, str] | None):
    saved = dict(os.environ)
    os.environ.update(extra or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _cwd(path: Path | str | None):
    old = os.getcwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def hippo_in_process(args: list[str], cwd: Path | str | None = None, env: Mapping[str, str] | None = None,
                     stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """`hippo <args>` run inside this interpreter, returned like `subprocess.run(..., capture_output=True)`.

    For tests whose point is what a command answers, not the process boundary: a `python -m hippo`
    subprocess pays interpreter start plus `import lancedb` (seconds on a busy machine) on every call.
    Hooks go through `hippo.surfaces.hooks.main.run` (the same function the entry point calls, minus its final
    `os._exit`); other commands through click's runner. An uncaught exception is re-raised, so a test
    that asserts "no traceback" fails with the real one.
    """
    if args[:1] == ["hook"]:
        from hippo.surfaces.hooks.main import MAX_STDIN, run

        out = io.StringIO()
        with _environ(env), _cwd(cwd), contextlib.redirect_stdout(out):
            code = run(args[1] if len(args) > 1 else "", (stdin or b"")[:MAX_STDIN + 1])
        return subprocess.CompletedProcess(args, code, out.getvalue().encode("utf-8"), b"")
    from click.testing import CliRunner

    from hippo.surfaces.cli import cli

    with _environ(env), _cwd(cwd):
        result = CliRunner().invoke(cli, args, input=stdin, prog_name="hippo")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout_bytes, result.stderr_bytes)


def make_big_repo(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    for i in range(n):
        write_module(root, i, 0)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "big")


def write_module(root: Path, i: int, version: int) -> None:
    path = root / f"pkg{i % 20}" / f"mod{i}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    units = [f"def fn_{i}_{j}_{version}(x):\n    '''Step {j} of module {i}, v{version}.'''\n"
             f"    y = x * {j + 1} + {i}\n    return y - {version}\n" for j in range(6)]
    path.write_text("\n\n".join(units))
