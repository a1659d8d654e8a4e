"""Harness for driving the real `claude` binary offline and reading what the model would have seen.

Every claude invocation goes through `fake_anthropic.py` as a driver, started inside a fresh network
namespace when the machine allows it, so the client can reach nothing but the loopback stand-in.
The helpers below turn recorded Messages API request bodies into text a test can assert on.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from fake_embedder import SPEC as FAKE
from fake_embedder import with_tests_dir

CLAUDE_VERSION = "2.1.332"
REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "fake_anthropic.py"
FIXTURES = HERE / "fixtures"
# The directory of the interpreter running the tests: it holds `hippo` (the editable venv install).
VENV_BIN = Path(sys.executable).parent

SESSION_START_MARK = "SessionStart hook additional context:"
FAILURE_MARK = "PostToolUseFailure:Bash hook additional context:"
RESULT_RE = re.compile(r"<source_file>([^<]+)</source_file>\s*<lines>(\d+)-(\d+)</lines>")


def find_claude() -> str | None:
    """$HIPPO_CLAUDE_BIN, else the pinned copy `.ci/install-claude.sh` puts in .ci/cache, else PATH."""
    env = os.environ.get("HIPPO_CLAUDE_BIN")
    if env:
        return env if Path(env).is_file() else None
    pinned = REPO / ".ci" / "cache" / f"claude-code-{CLAUDE_VERSION}" / "node_modules" / ".bin" / "claude"
    if pinned.exists():
        return str(pinned)
    return shutil.which("claude")


def _works(prefix: list[str]) -> bool:
    if shutil.which(prefix[0]) is None:
        return False
    try:
        return subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@lru_cache(maxsize=1)
def isolation_mode() -> str:
    """How runs get a network namespace with nothing but loopback in it.

    "netns": root, plain `unshare -n`. "userns": `unshare -rn` (a user namespace too; some
    distributions forbid it). "sudo": `sudo -n unshare -n`, then back to our uid with setpriv (CI
    runners with passwordless sudo). HIPPO_E2E_ISOLATION=<one of those> forces a mode; "none" opts
    out: the stand-in on loopback and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC still keep the
    client off the Anthropic API.
    """
    choice = os.environ.get("HIPPO_E2E_ISOLATION", "auto")
    if choice in ("none", "netns", "userns", "sudo"):
        return choice
    if os.geteuid() == 0 and _works(["unshare", "-n"]):
        return "netns"
    if _works(["unshare", "-rn"]):
        return "userns"
    if shutil.which("setpriv") and _works(["sudo", "-n", "unshare", "-n"]):
        return "sudo"
    return "none"


def isolate(cmd: list[str], env: dict[str, str]) -> list[str]:
    """Prefix `cmd` so it runs in the isolation chosen by isolation_mode()."""
    mode = isolation_mode()
    if mode == "netns":
        return ["unshare", "-n", *cmd]
    if mode == "userns":
        return ["unshare", "-rn", *cmd]
    if mode == "sudo":  # sudo resets the environment: hand it over explicitly after dropping root
        return ["sudo", "-n", "unshare", "-n", "setpriv", f"--reuid={os.getuid()}",
                f"--regid={os.getgid()}", "--init-groups", "env", "-i",
                *[f"{k}={v}" for k, v in env.items()], *cmd]
    return cmd


def hippo_home() -> str:
    """The real per-user hippo cache (built model), shared with runs that use a throwaway HOME."""
    return os.environ.get("HIPPO_HOME") or str(Path.home() / ".cache" / "hippo")


def base_env(home: Path, model: str | None = FAKE, **extra: str) -> dict[str, str]:
    """A clean environment for the client: throwaway HOME, no updater, no telemetry, dummy key.

    The venv's bin goes first on PATH so the plugin launcher finds `hippo` (and the scripted Bash
    commands run the venv's python). `model` becomes HIPPO_MODEL for the hooks (None: the real
    default model; the default is the test embedder plugin, which the hooks import from the tests
    directory on PYTHONPATH); it must match the model the fixture repo was indexed with.
    """
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "/usr/bin:/bin")]),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", tempfile.gettempdir()),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy-key",
        "HIPPO_HOME": hippo_home(),
        "PYTHONPATH": with_tests_dir(os.environ.get("PYTHONPATH", "")),  # hooks find fake_embedder
        "LANCEDB_LOG": "error",
        # SessionStart starts a warm query server per repo; tests stop it, this is the backstop.
        "HIPPO_SERVER_IDLE": "120",
    }
    if model is not None:
        env["HIPPO_MODEL"] = model
    env.update(extra)
    return env


@dataclass
class ClaudeRun:
    """What one client invocation did: exit code, output, every API request, the debug log."""

    rc: int
    stdout: str
    stderr: str
    requests: list[dict]
    debug_log: str = ""
    unused_turns: list[dict] = field(default_factory=list)

    @property
    def model_requests(self) -> list[dict]:
        """Bodies of agent-loop Messages requests (the ones that offer tools), in order."""
        return [r["body"] for r in self.requests
                if r["method"] == "POST" and r["path"].split("?")[0].endswith("/v1/messages")
                and isinstance(r["body"], dict) and r["body"].get("tools")]

    def describe(self) -> str:
        """Short failure context for assertion messages."""
        tail = self.debug_log[-3000:] if self.debug_log else ""
        return (f"rc={self.rc}\nstdout={self.stdout[-1500:]}\nstderr={self.stderr[-1500:]}\n"
                f"requests={len(self.requests)} unused_turns={self.unused_turns}\ndebug tail:\n{tail}")


def run_claude(claude: str, args: list[str], *, cwd: Path, home: Path, script: list[dict] | None = None,
               env: dict[str, str] | None = None, timeout: float = 150, debug: bool = True) -> ClaudeRun:
    """Run `claude ARGS` in `cwd` inside the isolation, against a stand-in serving `script`."""
    work = Path(tempfile.mkdtemp(prefix="claude-run-", dir=home))
    script_file, record = work / "script.json", work / "record.json"
    script_file.write_text(json.dumps(script or []), encoding="utf-8")
    debug_file = work / "debug.log"
    cmd = [claude, *args] + (["--debug-file", str(debug_file)] if debug else [])
    env = env or base_env(home)
    full = isolate([sys.executable, str(DRIVER), "--script", str(script_file), "--record", str(record),
                    "--timeout", str(timeout), "--cwd", str(cwd), "--", *cmd], env)
    proc = subprocess.run(full, env=env, capture_output=True, text=True, timeout=timeout + 60)
    if proc.returncode != 0 or not record.exists():
        raise RuntimeError(f"stand-in driver failed (rc={proc.returncode}): {proc.stderr[-3000:]}")
    data = json.loads(record.read_text(encoding="utf-8"))
    log = debug_file.read_text(encoding="utf-8", errors="replace") if debug_file.exists() else ""
    return ClaudeRun(rc=data["rc"], stdout=data["stdout"], stderr=data["stderr"],
                     requests=data["requests"], debug_log=log, unused_turns=data["unused_turns"])


# ---- reading request bodies -------------------------------------------------------------------

def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(_content_text(block.get("content")))
    return "\n".join(parts)


def request_text(body: dict) -> str:
    """All message text of one request (user, system-role and tool_result text), in order."""
    return "\n".join(_content_text(m.get("content")) for m in body.get("messages", []))


def session_start_context(body: dict) -> str:
    """The SessionStart additionalContext the client put in a request ("" if none).

    Where it lands depends on the model: older models get a <system-reminder> in the first user
    message, newer ones a system-role message that also holds the client's "# Environment"
    section; either way it follows SESSION_START_MARK. Returns just the hooks' text.
    """
    blocks = []
    for m in body.get("messages", []):
        content = m.get("content")
        items = [content] if isinstance(content, str) else [b.get("text", "") for b in content or []
                                                           if isinstance(b, dict)]
        for t in items:
            if SESSION_START_MARK in t:
                t = t[t.index(SESSION_START_MARK) + len(SESSION_START_MARK):]
                for end in ("\n</system-reminder>", "\n\n# Environment\n"):
                    t = t.split(end)[0]
                blocks.append(t.strip())
    return "\n".join(blocks)


@dataclass
class ToolOutcome:
    """A tool call as the model saw it on the next request."""

    result: str  # the tool_result content
    is_error: bool
    after: str  # system-role text that follows the tool_result message (hook context, newer models)

    @property
    def seen(self) -> str:
        return self.result + "\n" + self.after


def tool_outcome(body: dict, tool_use_id: str) -> ToolOutcome | None:
    """Find the tool_result for `tool_use_id` and any hook context the client attached to it."""
    messages = body.get("messages", [])
    for i, m in enumerate(messages):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result" \
                    and block.get("tool_use_id") == tool_use_id:
                after = []
                for nxt in messages[i + 1:]:
                    if nxt.get("role") != "system":
                        break
                    after.append(_content_text(nxt.get("content")))
                return ToolOutcome(_content_text(block.get("content")), bool(block.get("is_error")),
                                   "\n".join(after))
    return None


def tool_use_ids(body: dict, name: str) -> list[str]:
    """ids of the assistant's tool_use blocks for tool `name` in a request's history."""
    return [b["id"] for m in body.get("messages", []) if m.get("role") == "assistant"
            and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"
            and b.get("name") == name]


def search_results(text: str) -> list[tuple[str, int, int]]:
    """(source_file, start, end) for every <result> of hippo's XML found in `text`."""
    return [(p, int(a), int(b)) for p, a, b in RESULT_RE.findall(text)]


# ---- fixture repositories ---------------------------------------------------------------------

GIT_ENV = {"GIT_AUTHOR_NAME": "E2E", "GIT_AUTHOR_EMAIL": "e2e@example.com",
           "GIT_COMMITTER_NAME": "E2E", "GIT_COMMITTER_EMAIL": "e2e@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    return subprocess.run(["git", "-C", str(root), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


def make_fixture_repo(name: str, dest: Path) -> Path:
    """Copy fixtures/<name> to dest and commit it, so hippo sees a real git repo."""
    shutil.copytree(FIXTURES / name, dest, ignore=shutil.ignore_patterns("__pycache__", ".hippo"))
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "fixture")
    return dest


def index_repo(root: Path, model: str | None) -> subprocess.CompletedProcess:
    """`hippo index` the way a user would, before the session starts (model None: the default)."""
    env = {**os.environ, "HIPPO_HOME": hippo_home(), "LANCEDB_LOG": "error"}
    env.pop("HIPPO_MODEL", None)
    if model is not None:
        env["HIPPO_MODEL"] = model
    proc = subprocess.run([str(VENV_BIN / "hippo"), "index", "--quiet"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"hippo index failed in the fixture repo: {proc.stderr[-2000:]}")
    return proc


def line_of(path: Path, needle: str) -> int:
    """1-based line number of the first line containing `needle` (fixtures compute, never hard-code)."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in {path}")


def clean_copy(src: Path, dest: Path) -> Path:
    """What a user's clone of `src` holds: tracked + untracked-but-not-ignored files (no venv, caches)."""
    out = subprocess.run(["git", "-C", str(src), "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], check=True, capture_output=True).stdout
    for rel in filter(None, out.decode("utf-8", "surrogateescape").split("\0")):
        s = src / rel
        if s.is_file():
            d = dest / rel
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s, d)
    return dest


def stop_warm_server(root: Path, wait: float = 20.0) -> int | None:
    """Stop the query server a session started for `root` (found by asking it for its pid).

    A server still importing its dependencies holds its lock but does not answer yet: wait for it.
    """
    from hippo.surfaces.service.client import request, server_running

    index_dir = root / ".hippo"
    start = time.monotonic()
    while time.monotonic() - start < wait:
        reply = request(index_dir, {"op": "ping"}, timeout=2.0)
        if reply and Path(str(reply.get("root"))).resolve() == root.resolve():
            try:
                os.kill(int(reply["pid"]), signal.SIGTERM)
            except ProcessLookupError:
                return None
            return int(reply["pid"])
        if not server_running(index_dir) and time.monotonic() - start > 1.5:
            return None
        time.sleep(0.3)
    return None
