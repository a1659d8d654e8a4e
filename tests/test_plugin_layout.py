"""The plugin bundle: manifest, hooks.json, skills, .mcp.json and launcher wiring.

Static checks run everywhere. The `e2e` tests drive the real `claude` CLI (pinned by
.ci/install-claude.sh) offline: `plugin validate --strict`, its JSON "provides" list, and
`--plugin-dir . mcp list` reaching our MCP server.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hippo.surfaces.hooks.main import EVENTS

REPO = Path(__file__).resolve().parents[1]
CLAUDE_VERSION = "2.1.332"
SKILLS = ("rag", "rag-status", "rag-index")


def _json(rel: str) -> dict:
    return json.loads((REPO / rel).read_text())


def _frontmatter(path: Path) -> tuple[dict[str, str], str]:
    text = path.read_text()
    assert text.startswith("---\n"), path
    head, body = text[4:].split("\n---\n", 1)
    meta = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip().strip('"')
    return meta, body


def _handlers():
    for event, groups in _json("hooks/hooks.json")["hooks"].items():
        for group in groups:
            for h in group["hooks"]:
                yield event, group.get("matcher"), h


def test_manifest_lives_in_dot_claude_plugin_only():
    manifest = _json(".claude-plugin/plugin.json")
    assert manifest["name"] == "hippo"
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    assert isinstance(manifest["keywords"], list)
    assert "hooks" not in manifest  # hooks/hooks.json is auto-loaded; listing it duplicates hooks
    assert not (REPO / "plugin.json").exists()
    # A plugin-root CLAUDE.md is ignored by Claude Code and fails `validate --strict`.
    assert not (REPO / "CLAUDE.md").exists()
    assert sorted(p.name for p in (REPO / ".claude-plugin").iterdir()) == ["marketplace.json", "plugin.json"]


def test_marketplace_lists_this_plugin():
    market = _json(".claude-plugin/marketplace.json")
    entry = market["plugins"][0]
    assert entry["name"] == "hippo" and entry["source"] == "./"
    assert entry["version"] == _json(".claude-plugin/plugin.json")["version"]
    assert market["owner"]["name"]


def test_every_hook_goes_through_the_launcher_in_exec_form():
    seen = set()
    for event, _, h in _handlers():
        assert h["type"] == "command" and h["command"] == "bash"
        assert h["args"][:2] == ["${CLAUDE_PLUGIN_ROOT}/scripts/hippo", "hook"]
        assert h["args"][2] in EVENTS, h  # a dispatcher event name hippo.surfaces.hooks.main knows
        assert EVENTS[h["args"][2]] == event
        assert isinstance(h["timeout"], int) and 1 <= h["timeout"] <= 300
        seen.add(event)
    assert seen == {"SessionStart", "PostToolUseFailure", "SessionEnd", "UserPromptExpansion"}


def test_matchers():
    by_event = {}
    for event, matcher, _ in _handlers():
        by_event.setdefault(event, []).append(matcher)
    assert by_event["SessionStart"] == ["startup|resume|clear|compact"]
    assert by_event["PostToolUseFailure"] == ["Bash"]
    # Claude Code reports both `/rag` and `/hippo:rag` as command_name "hippo:rag" (checked with 2.1.332);
    # the bare form is accepted too. Matchers with ':' are unanchored JS regexes, hence ^…$.
    fires = lambda name: [m for m in by_event["UserPromptExpansion"] if re.search(m, name)]  # noqa: E731
    for name in ("hippo:rag", "rag", "hippo:rag-status", "hippo:rag-index"):
        assert len(fires(name)) == 1, name
    for name in ("hippo:ragged", "other:rag", "hippo:init", "grag"):
        assert fires(name) == [], name


def test_skills():
    for name in SKILLS:
        meta, body = _frontmatter(REPO / "skills" / name / "SKILL.md")
        assert meta["name"] == name
        assert meta["disable-model-invocation"] == "true"
        assert meta["description"]
        # No shell pre-execution at all: `!` lines would paste user text into a shell.
        assert not re.search(r"(^|\s)!`", body) and "```!" not in body
    meta, body = _frontmatter(REPO / "skills" / "rag" / "SKILL.md")
    for opt in ("--glob PATTERN", "--exact", "--k N"):
        assert opt in meta["argument-hint"]
    assert "[[path:line]]" in body


def test_mcp_json():
    servers = _json(".mcp.json")["mcpServers"]
    assert list(servers) == ["hippo"]
    s = servers["hippo"]
    assert s["command"] == "bash" and s["args"] == ["${CLAUDE_PLUGIN_ROOT}/scripts/hippo", "mcp"]
    assert s["env"]["HIPPO_PROJECT_DIR"] == "${CLAUDE_PROJECT_DIR}"


def test_launcher_is_executable_bash():
    launcher = REPO / "scripts" / "hippo"
    assert os.access(launcher, os.X_OK)
    assert launcher.read_text().startswith("#!/usr/bin/env bash\n")
    assert subprocess.run(["bash", "-n", str(launcher)]).returncode == 0


def test_rules_template_is_package_data():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"templates/*"' in pyproject
    assert (REPO / "lib" / "hippo" / "templates" / "claude-rules.md").is_file()


# --- the real client ---------------------------------------------------------------------------

def _claude() -> str:
    cand = [os.environ.get("HIPPO_CLAUDE_BIN", ""),
            str(REPO / ".ci" / "cache" / f"claude-code-{CLAUDE_VERSION}" / "node_modules" / ".bin" / "claude"),
            shutil.which("claude") or ""]
    for c in cand:
        if c and os.access(c, os.X_OK):
            return c
    pytest.skip("claude binary not found: run .ci/install-claude.sh (or set HIPPO_CLAUDE_BIN)")


def _offline(cmd: list[str], home: Path, cwd: Path, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess:
    """Run with a throwaway HOME, no auto-update, and no network namespace when we can get one."""
    env = {"HOME": str(home), "PATH": path, "DISABLE_AUTOUPDATER": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        cmd = [unshare, "-n", *cmd]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_validate_strict(tmp_path):
    claude = _claude()
    for target in (".", ".claude-plugin/plugin.json"):
        proc = _offline([claude, "plugin", "validate", target, "--strict"], tmp_path, REPO)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Validation passed" in proc.stdout


@pytest.mark.e2e
def test_validate_json_provides_everything(tmp_path):
    proc = _offline([_claude(), "plugin", "validate", ".", "--strict", "--json"], tmp_path, REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["success"] is True
    provides = report["provides"]
    hooks = {(h["event"], h["args"][2]) for h in provides["hooks"]}
    assert hooks == {("SessionStart", "session-start"), ("PostToolUseFailure", "tool-failure"),
                     ("SessionEnd", "session-end"), ("UserPromptExpansion", "prompt-expansion")}
    assert sorted(provides["skills"]) == [f"hippo:{s}" for s in sorted(SKILLS)]
    assert [(m["name"], m["type"]) for m in provides["mcpServers"]] == [("hippo", "stdio")]


@pytest.mark.e2e
def test_mcp_list_connected(tmp_path):
    """The launcher finds hippo (the test venv's bin on PATH) and the server completes the handshake."""
    project = tmp_path / "project"
    project.mkdir()
    venv_bin = str(Path(os.environ.get("VIRTUAL_ENV", "")) / "bin") if os.environ.get("VIRTUAL_ENV") else ""
    import sys

    path = ":".join(p for p in (venv_bin, str(Path(sys.executable).parent), "/usr/bin:/bin") if p)
    proc = _offline([_claude(), "--plugin-dir", str(REPO), "mcp", "list"], tmp_path / "home", project, path=path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("plugin:hippo:hippo"))
    assert "Connected" in line, proc.stdout
