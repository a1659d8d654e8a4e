"""The harness itself: the stand-in speaks the Messages API, and a throwaway plugin's hook output
shows up in the recorded requests exactly where the contract says (so hippo failures in the other
tests are hippo's, not the harness's)."""
from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from e2e.e2e_harness import (
    FAILURE_MARK,
    SESSION_START_MARK,
    base_env,
    git,
    run_claude,
    session_start_context,
    tool_outcome,
    tool_use_ids,
)
from e2e.fake_anthropic import FakeAnthropic, message_sse


def _parse_sse(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


def test_sse_stream_reassembles_to_the_scripted_tool_use():
    events = _parse_sse(message_sse({"tool_use": {"name": "Bash", "input": {"command": "false"}}}, "m"))
    kinds = [e["type"] for e in events]
    assert kinds == ["message_start", "content_block_start", "content_block_delta",
                     "content_block_stop", "message_delta", "message_stop"]
    assert events[1]["content_block"]["name"] == "Bash"
    assert json.loads(events[2]["delta"]["partial_json"]) == {"command": "false"}
    assert events[4]["delta"]["stop_reason"] == "tool_use"


def test_stand_in_consumes_script_only_for_agent_requests_and_records_bodies():
    with FakeAnthropic([{"text": "scripted"}]) as fake:
        def post(body: dict) -> dict:
            req = urllib.request.Request(fake.url + "/v1/messages?beta=true", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())
        side = post({"model": "m", "messages": [{"role": "user", "content": "title?"}]})
        main = post({"model": "m", "tools": [{"name": "Bash"}], "messages": []})
        after = post({"model": "m", "tools": [{"name": "Bash"}], "messages": []})
    assert side["content"][0]["text"] == "Done."
    assert main["content"][0]["text"] == "scripted" and main["stop_reason"] == "end_turn"
    assert after["content"][0]["text"] == "Done."
    assert [r["body"]["messages"] for r in fake.requests][0][0]["content"] == "title?"


def _probe_plugin(root: Path) -> Path:
    """A two-hook plugin that echoes fixed markers, written in sh so it needs nothing else."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "probe", "version": "0.0.1"}))
    probes = (("ss", "SessionStart", "PROBE-SS-7731"), ("fail", "PostToolUseFailure", "PROBE-FAIL-7731"))
    for name, event, marker in probes:
        out = json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": marker}})
        (root / "hooks" / f"{name}.sh").write_text(f"#!/bin/sh\ncat >/dev/null\necho '{out}'\n")

    def hook(name: str) -> list[dict]:
        script = f"${{CLAUDE_PLUGIN_ROOT}}/hooks/{name}.sh"
        return [{"type": "command", "command": "sh", "args": [script], "timeout": 10}]

    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": hook("ss")}],
        "PostToolUseFailure": [{"matcher": "Bash", "hooks": hook("fail")}]}}))
    return root


@pytest.mark.e2e
@pytest.mark.parametrize("model", [None, "claude-sonnet-4-5"])
def test_probe_plugin_context_reaches_the_model(claude, home, tmp_path, model):
    plugin = _probe_plugin(tmp_path / "probe")
    proj = tmp_path / "proj"
    proj.mkdir()
    git(proj, "init", "-q")
    script = [{"tool_use": {"name": "Bash", "input": {"command": "echo boom >&2; exit 3"}}},
              {"text": "All done."}]
    args = ["-p", "run it", "--plugin-dir", str(plugin), "--allowedTools", "Bash"]
    run = run_claude(claude, args + (["--model", model] if model else []), cwd=proj, home=home,
                     script=script)
    assert run.rc == 0 and "All done." in run.stdout, run.describe()
    first, second = run.model_requests[0], run.model_requests[1]
    assert "PROBE-SS-7731" in session_start_context(first)
    (use_id,) = tool_use_ids(second, "Bash")
    outcome = tool_outcome(second, use_id)
    assert outcome.is_error and outcome.result.startswith("Exit code 3")
    assert f"{FAILURE_MARK} PROBE-FAIL-7731" in outcome.seen
    if model == "claude-sonnet-4-5":  # older models: the hook context is inside the tool_result
        assert "PROBE-FAIL-7731" in outcome.result
    else:  # default model in 2.1.332: a system-role message right after the tool_result
        assert "PROBE-FAIL-7731" in outcome.after and "PROBE-FAIL-7731" not in outcome.result
    assert SESSION_START_MARK in run.debug_log or "provided additionalContext" in run.debug_log


@pytest.mark.e2e
def test_isolation_has_no_network_but_loopback(home, tmp_path):
    """The driver's child cannot reach anything but 127.0.0.1 (when a namespace is available)."""
    import subprocess
    import sys

    from e2e.e2e_harness import DRIVER, isolate, isolation_mode
    if os.environ.get("HIPPO_E2E_ISOLATION") == "none":
        pytest.skip("network isolation turned off with HIPPO_E2E_ISOLATION=none")
    assert isolation_mode() != "none", "cannot create a network namespace (unshare -n, -rn, sudo)"
    probe = ("import socket,sys\n"
             "s=socket.socket(); s.settimeout(3)\n"
             "try:\n  s.connect(('1.1.1.1',443)); print('NET')\n"
             "except OSError as e: print('NONET', e.errno)\n")
    env = base_env(home)
    rec = tmp_path / "rec.json"
    cmd = isolate([sys.executable, str(DRIVER), "--record", str(rec), "--", sys.executable, "-c", probe], env)
    subprocess.run(cmd, env=env, check=True, timeout=60)
    assert json.loads(rec.read_text())["stdout"].startswith("NONET")
