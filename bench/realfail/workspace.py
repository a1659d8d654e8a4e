"""Where the benchmark's fetched repositories, tool environments and work trees live, and how a
command is run the way Claude Code's Bash tool reports it.

Nothing here is committed: the cache defaults to ~/.cache/hippo-realfail (override REALFAIL_CACHE);
repositories come from bare mirrors brought by the search tool's `fetch`, named `<owner>+<name>/repo`,
under REALFAIL_MIRRORS (default: <cache>/mirrors, e.g. a symlink to the directory fetch wrote into).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT_TOKEN = "{ROOT}"  # stands for the work tree in stored outputs (no machine paths in committed data)
ENV_TOKEN = "{ENV}"  # stands for the tool environment (venv / node_modules home)
PYTHON_TOKEN = "{PYTHON}"  # stands for the interpreter's installation (its stdlib frames)
PYTEST_TMP_TOKEN = "{PYTEST_TMP}"  # stands for pytest's per-run temp dir (<tmp>/pytest-of-<user>/pytest-<n>)
_PYENV = re.compile(r"~/\.pyenv/versions/\d+\.\d+\.\d+")
_PYTEST_TMP = re.compile(r"(?:/private)?/tmp/pytest-of-[^/\s'\"]+/pytest-\d*")  # \d*: an output cut mid-path still loses it
ERROR_CAP = 10_000  # Claude Code middle-truncates a failed Bash command's `error` past this


def cache_dir() -> Path:
    return Path(os.environ.get("REALFAIL_CACHE") or Path.home() / ".cache" / "hippo-realfail")


def mirror_dir(repo: str) -> Path:
    base = Path(os.environ.get("REALFAIL_MIRRORS") or cache_dir() / "mirrors")
    return base / repo.replace("/", "+") / "repo"


def git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, input=input,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[:300]}")
    return proc.stdout


def tree(repo: str, commit: str, name: str = "") -> Path:
    """A work tree of `repo` at `commit`, cloned from its mirror once and reused (reset to `commit`).
    `name` picks a tree shared across commits (the builder's scratch tree); by default one per commit,
    so each keeps its own hippo index."""
    mirror = mirror_dir(repo)
    if not mirror.is_dir():
        raise SystemExit(f"realfail: no mirror of {repo} at {mirror}: bring it with the search tool's fetch "
                         "and point REALFAIL_MIRRORS at the directory holding <owner>+<name>/repo")
    path = cache_dir() / "trees" / (name or f"{repo.replace('/', '+')}@{commit[:12]}")
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--no-checkout", "--shared", str(mirror), str(path)], check=True)
    reset(path, commit)
    return path


_MISSING_BLOB = re.compile(r"unable to read sha1 file of (\S+)")


def reset(path: Path, commit: str) -> None:
    """Tracked files back to `commit`, untracked files gone, but keep the index and tool links."""
    for _ in range(20):
        try:
            git(path, "checkout", "-q", "-f", "--detach", commit)
            break
        except RuntimeError as exc:
            missing = _MISSING_BLOB.findall(str(exc))
            if not missing:
                raise
            _leave_out(path, missing)
    git(path, "clean", "-q", "-fdx", "-e", ".hippo", "-e", "node_modules", "-e", "_version.py")


def _leave_out(path: Path, files: list[str]) -> None:
    """A snapshot lacks its largest files (fixtures, samples): check out everything but them."""
    sparse = Path(git(path, "rev-parse", "--git-path", "info/sparse-checkout").strip())
    sparse = sparse if sparse.is_absolute() else path / sparse
    lines = sparse.read_text().split("\n") if sparse.exists() else ["/*"]
    lines += [f"!/{f}" for f in files if f"!/{f}" not in lines]
    sparse.parent.mkdir(parents=True, exist_ok=True)
    sparse.write_text("\n".join(x for x in lines if x) + "\n")
    git(path, "config", "core.sparseCheckout", "true")


def apply_diff(path: Path, repo_commit_a: str, repo_commit_b: str, files: list[str]) -> None:
    """Apply the change between two commits to `files` only (the fix's test changes)."""
    patch = git(path, "diff", "--binary", repo_commit_a, repo_commit_b, "--", *files)
    if patch.strip():
        git(path, "apply", "--whitespace=nowarn", input=patch)


def run_command(path: Path, command: str, env_bin: Path | None, timeout: float = 180) -> tuple[int, str]:
    """(exit code, stdout+stderr interleaved) as the Bash tool shows it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "NODE_"))}
    env.pop("FORCE_COLOR", None)  # pytest colours on any value of it; the Bash tool has no terminal
    env.update({"CI": "true", "NO_COLOR": "1", "PY_COLORS": "0", "PYTHONDONTWRITEBYTECODE": "1",
                "TERM": "dumb", "COLUMNS": "120"})
    if env_bin is not None:
        env["PATH"] = f"{env_bin}{os.pathsep}{env.get('PATH', '')}"
    try:
        proc = subprocess.run(["bash", "-c", command], cwd=path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=env, timeout=timeout)
        return proc.returncode, proc.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else ""
        return 124, out + "\n[timed out]"


def claude_error(code: int, output: str) -> str:
    """The PostToolUseFailure `error` string: `Exit code N` then the output, middle-truncated."""
    text = f"Exit code {code}\n{output.rstrip()}"
    if len(text) <= ERROR_CAP:
        return text
    half = ERROR_CAP // 2
    cut = len(text) - 2 * half
    return text[:half] + f"\n\n... [{cut} characters truncated] ...\n\n" + text[-half:]


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def normalise(text: str, root: Path, env_home: Path | None) -> str:
    """Replace machine paths by tokens so the stored output is portable (`restore` undoes it); drop
    colour codes (a tool that coloured its output anyway did so only because it thought it had a terminal)."""
    text = _ANSI.sub("", text).replace(str(root), ROOT_TOKEN)
    if env_home is not None:
        text = text.replace(str(env_home), ENV_TOKEN)
    return machine_neutral(text)


def machine_neutral(text: str) -> str:
    """The interpreter's installation and pytest's temp dirs as tokens, the home dir as `~`: a stored output
    names no path of the machine that recorded it."""
    text = _PYTEST_TMP.sub(PYTEST_TMP_TOKEN, text).replace(sys.base_prefix, PYTHON_TOKEN)
    # the home dir as a whole path only: with home /root, sphinx's `tests/roots` stays as it is
    text = re.sub(r"(?<![\w.~/-])" + re.escape(str(Path.home())) + r"(?![\w.-])", "~", text)
    return _PYENV.sub(PYTHON_TOKEN, text)  # an older recording made under another interpreter


def restore(text: str, root: Path, env_home: Path | None = None) -> str:
    text = text.replace(ROOT_TOKEN, str(root)).replace(PYTHON_TOKEN, sys.base_prefix)
    text = text.replace(PYTEST_TMP_TOKEN, pytest_tmp())
    return text.replace(ENV_TOKEN, str(env_home or cache_dir() / "envs"))


def pytest_tmp() -> str:
    """Where pytest would put its temp dirs for this user on this machine (what PYTEST_TMP_TOKEN stands for)."""
    import getpass
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"pytest-of-{getpass.getuser()}", "pytest-0")


def rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
