"""Entry of every Claude Code hook: `python -m hippo hook <event>` with the payload on stdin.

Fails open by construction: whatever happens, exit status 0 and stdout holds one JSON object or
nothing; exceptions go to the rotated `hippo.log` (in the repo's index dir, else $HIPPO_HOME).
Stdlib-only imports; each handler decides itself whether it needs the search stack. Module-level
imports are kept to json/os/sys: a failed command pays for this process every time, and when the
repo's warm server is up, `tool-failure` is answered by it whole (service.client.hook) so nothing
else — not even pathlib or re — needs importing.
"""
from __future__ import annotations

import json
import os
import sys

MAX_STDIN = 4 * 1024 * 1024  # payloads are ≤ ~20 KB; refuse to parse anything absurd

EVENTS = {
    "session-start": "SessionStart",
    "tool-failure": "PostToolUseFailure",
    "session-end": "SessionEnd",
    "prompt-expansion": "UserPromptExpansion",
}


def _log(log_dir, message: str, exc: BaseException | None = None) -> None:
    from hippo.core.runtime import log

    log(log_dir, message, exc)


def _handler(event: str):
    if event == "session-start":
        from hippo.surfaces.hooks.session_start import handle
    elif event == "tool-failure":
        from hippo.surfaces.hooks.failure import handle
    elif event == "session-end":
        from hippo.push.session_state import handle_session_end as handle
    elif event == "prompt-expansion":
        from hippo.surfaces.hooks.prompt_expansion import handle
    else:
        raise ValueError(f"unknown hook event {event!r}")
    return handle


def _log_dir(payload: dict | None):
    try:
        from hippo.core.runtime import find_repo_root, hook_context

        root = find_repo_root((payload or {}).get("cwd"))
        if root is not None:
            return hook_context(root)[1].path
    except Exception:
        pass
    return None


STR_FIELDS = ("cwd", "session_id", "transcript_path", "hook_event_name", "tool_name", "error", "source",
              "prompt", "command_name", "command_args")


def _shape_problem(data) -> str | None:
    """Why a decoded payload cannot come from Claude Code (None when its known fields look right)."""
    if not isinstance(data, dict):
        return f"payload is a JSON {type(data).__name__}, not an object"
    for key in STR_FIELDS:
        if key in data and not isinstance(data[key], str):
            return f"field {key!r} is a {type(data[key]).__name__}, not a string"
    if "cwd" in data and "\x00" in data["cwd"]:
        return "field 'cwd' contains a NUL byte"
    if "tool_input" in data and not isinstance(data["tool_input"], dict):
        return "field 'tool_input' is not an object"
    return None


def run(event: str, stdin_bytes: bytes | None) -> int:
    """Handle one hook invocation. Always returns 0; prints valid JSON or nothing."""
    log = _log
    payload: dict | None = None
    try:
        if not stdin_bytes or not stdin_bytes.strip():
            log(None, f"hook {event}: empty stdin, ignored")
            return 0
        if len(stdin_bytes) > MAX_STDIN:
            log(None, f"hook {event}: stdin larger than {MAX_STDIN} bytes, ignored")
            return 0
        try:
            data = json.loads(stdin_bytes.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, absurdly nested
            log(None, f"hook {event}: stdin is not a JSON payload ({type(exc).__name__}), ignored")
            return 0
        problem = _shape_problem(data)
        if problem:
            log(_log_dir(data if isinstance(data, dict) and isinstance(data.get("cwd"), str) else None),
                f"hook {event}: {problem}, ignored")
            return 0
        payload = data
        out = _dispatch(event, payload)
        if out:
            text = json.dumps(out, ensure_ascii=False)
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
    except Exception as exc:  # noqa: BLE001 - the session must never see our failure
        log(_log_dir(payload), f"hook {event} failed", exc)
    return 0


def _dispatch(event: str, payload: dict) -> dict | None:
    """A failed command goes to the service client (the warm server answers it whole, else the same handler
    runs here); every other event runs its handler in this process."""
    if event == "tool-failure":
        from hippo.surfaces.service.client import hook

        return hook(event, payload)
    return _handler(event)(payload)


def main(argv: list[str] | None = None) -> None:
    """`python -m hippo hook <event>`: read stdin, run, and leave without interpreter teardown."""
    argv = sys.argv[1:] if argv is None else argv
    event = argv[0] if argv else ""
    try:
        data = sys.stdin.buffer.read(MAX_STDIN + 1)
    except Exception:
        data = b""
    run(event, data)
    try:
        sys.stdout.flush()
    finally:
        # lancedb/onnx teardown costs ~0.2 s when the cold path loaded them
        os._exit(0)
