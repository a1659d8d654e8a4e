"""Process plumbing shared by the hooks, the warm service and the indexer: repo/index discovery, the rotated
log, the hook output shape, safe detached children. Stdlib only: this is on every hook's import path.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from hippo.core.indexdir import IndexDir, hippo_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo.core.config import Settings

HARD_CAP = 9500  # Claude Code turns longer hook values into a 2 KB preview
LOG_MAX_BYTES = 512 * 1024
TRUNCATED = "\n… (hippo: output truncated to fit the hook budget)"


def find_repo_root(cwd: str | os.PathLike | None) -> Path | None:
    """Nearest ancestor holding `.git` (a dir, or a file for worktrees). No subprocess: hooks are hot."""
    if not cwd:
        return None
    try:
        p = Path(cwd).resolve()
    except (OSError, RuntimeError):
        return None
    for candidate in (p, *p.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def settings_for(root: Path) -> Settings:
    """The repo's settings; bad values fall back to defaults (never raise) and are logged: a hook's stderr
    reaches no one, the repo's log does."""
    from hippo.core.config import load_settings

    problems: list[str] = []
    settings = load_settings(root, warn=problems.append)
    if problems:
        idx = IndexDir.of(root, settings)
        for line in problems:
            log(idx.path if not idx.path.is_symlink() else None, f"settings: {line}")
    return settings


def hook_context(root: Path, settings: Settings | None = None) -> tuple[Settings, IndexDir[Path]]:
    """A hook's settings and index dir for a repo, nothing created. `settings` already loaded for `root`
    (a warm server's) are used as they are. A planted index dir raises UnsafeIndexDir (a symlink, files git
    tracks): the hook logs it and stays silent."""
    from hippo.core.integrity import refuse_planted

    settings = settings if settings is not None else settings_for(root)
    idx = IndexDir.of(root, settings)
    refuse_planted(root, idx.path)
    return settings, idx


def log(log_dir: Path | None, message: str, exc: BaseException | None = None) -> None:
    """Append to `<dir>/hippo.log`, rotating once at LOG_MAX_BYTES. Never raises."""
    try:
        target_dir = log_dir if log_dir is not None and log_dir.is_dir() else hippo_home()
        target_dir.mkdir(parents=True, exist_ok=True)
        path = IndexDir(target_dir).log
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, target_dir / "hippo.log.1")
        except OSError:
            pass
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        text = f"{stamp} [{os.getpid()}] {message}\n"
        from hippo.core.errors import HippoError

        if isinstance(exc, HippoError):  # a user-level error: its one-line message says it all
            text = f"{stamp} [{os.getpid()}] {message}: {exc}\n"
        elif exc is not None:
            import traceback

            text += "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        with os.fdopen(log_fd(target_dir), "a", encoding="utf-8", errors="replace") as fh:
            fh.write(text)
    except Exception:  # logging must never be the thing that breaks a session
        pass


def log_fd(log_dir: Path) -> int:
    """`<dir>/hippo.log` opened for appending, never through a symlink: for log() and children's output."""
    return os.open(IndexDir(log_dir).log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0),
                   0o600)


def reply(event: str, context: str, system_message: str | None = None) -> dict:
    """The only output shape Claude Code honours for context (flat `additionalContext` is ignored)."""
    if len(context) > HARD_CAP:
        context = context[: HARD_CAP - len(TRUNCATED)] + TRUNCATED
    out: dict = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    if system_message:
        out["systemMessage"] = system_message
    return out


def python_exe() -> str:
    """The interpreter running us: the venv's own, not a version-manager shim (saves ~80 ms)."""
    return sys.executable or "python3"


# Python puts the current directory (for -m/-c) first on sys.path, so a child started inside a cloned
# repository would import that repository's `hippo/`, `hippo.py` or even `json.py` instead of ours: code
# execution on session start. Every Python hippo starts gets -P / PYTHONSAFEPATH=1 (3.11+) AND runs in a
# neutral directory (the only defence on 3.10); the directory it should act in travels in LAUNCH_CWD_ENV
# and `python -m hippo` moves back there after its own imports are settled (hippo/__main__.py).
LAUNCH_CWD_ENV = "HIPPO_LAUNCH_CWD"


def neutral_cwd() -> str:
    """A directory no repository controls, to start child interpreters in: the filesystem root."""
    return os.path.abspath(os.sep)


def module_argv(module: str, args: list[str] | None = None) -> list[str]:
    """argv for `python -m <module> <args>` that never imports from the child's cwd or script dir."""
    safe = ["-P"] if sys.version_info >= (3, 11) else []
    return [python_exe(), *safe, "-m", module, *(args or [])]


def hippo_argv(args: list[str]) -> list[str]:
    return module_argv("hippo", args)


def child_env(workdir: str | os.PathLike | None, extra: dict | None = None) -> dict:
    """Environment for a hippo child: PYTHONPATH kept (tests and users rely on it), cwd-imports off; the
    directory `python -m hippo` should act in (`workdir`), when it is one."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONSAFEPATH"] = "1"
    if workdir is not None:
        env[LAUNCH_CWD_ENV] = os.fspath(workdir)
    return env


_DETACHED: list = []


def spawn_detached(args: list[str], log_dir: Path, cwd: Path, env: dict | None = None) -> int | None:
    """Start `python -m hippo <args>` in its own session, output to the log; returns the pid.

    A fresh interpreter, never a fork: lancedb deadlocks in forked children. It starts in
    `neutral_cwd()` with `cwd` passed through LAUNCH_CWD_ENV, so the repository is never on its sys.path.
    """
    import subprocess  # not at module level: the warm hook path never spawns

    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        fd = log_fd(log_dir)
        try:
            proc = subprocess.Popen(
                hippo_argv(args), cwd=neutral_cwd(), stdin=subprocess.DEVNULL,
                stdout=fd, stderr=fd, start_new_session=True, close_fds=True,
                env=child_env(cwd, env),
            )
        finally:
            os.close(fd)
        _DETACHED.append(proc)  # kept: the child outlives its handle on purpose (no "still running" at GC)
        return proc.pid
    except Exception as exc:
        log(log_dir, f"could not start `hippo {' '.join(args)}`", exc)
        return None
