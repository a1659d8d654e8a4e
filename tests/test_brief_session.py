"""SessionStart after `compact`, run as Claude Code runs it: the essentials and the changes since the previous
session come back, and the per-session failure dedupe is reset so a repeat failure injects again."""
from __future__ import annotations

import json
import re

from hippo.push import session_state
from hippo.surfaces.service import client
from hook_helpers import LOADED_BOX_S, error_text, run_hook, warm_payload
from repo_helpers import git


def _ctx(proc) -> str:
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_compact_repushes_brief_and_changes_since_the_previous_session(git_repo):
    root = git_repo({"Makefile": "test:\n\tpython -m pytest tests\n", "src/app/__init__.py": '"""The app."""\n',
                     "CONTRIBUTING.md": "# Contributing\n\n## Style\n\nKeep functions short; every fix has a test.\n"},
                    name="compact")
    base = {"transcript_path": "/t", "cwd": str(root), "hook_event_name": "SessionStart"}
    run_hook("session-start", json.dumps({**base, "session_id": "first", "source": "startup"}))
    (root / "src" / "app" / "tax.py").write_text("RATE = 0.2\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "add tax rate")
    start = _ctx(run_hook("session-start", json.dumps({**base, "session_id": "second", "source": "startup"})))
    assert "Changes since the last session" in start and "add tax rate" in start
    compact = _ctx(run_hook("session-start", json.dumps({**base, "session_id": "second", "source": "compact"})))
    assert "Changes since the last session" in compact and "add tax rate" in compact and "src/app/tax.py" in compact
    assert "`make test` = python -m pytest tests (Makefile)" in compact and "Keep functions short" in compact
    assert "[[path:line]]" in compact and "Layout (" in compact
    # a later session starts from the new HEAD: the same commit is no longer "new"
    third = _ctx(run_hook("session-start", json.dumps({**base, "session_id": "third", "source": "startup"})))
    assert "add tax rate" not in third


def test_compact_after_a_first_session_repushes_recent_commits(git_repo):
    root = git_repo({"README.md": "# r\n"}, name="fresh", message="the first commit")
    base = {"transcript_path": "/t", "cwd": str(root), "hook_event_name": "SessionStart", "session_id": "s"}
    assert "the first commit" in _ctx(run_hook("session-start", json.dumps({**base, "source": "startup"})))
    assert "the first commit" in _ctx(run_hook("session-start", json.dumps({**base, "source": "compact"})))


def test_compact_resets_only_this_sessions_dedupe(git_repo):
    root = git_repo({"README.md": "# r\n"}, name="dedupe")
    idx = root / ".hippo"
    session_state.remember(idx, "mine", ["a.py:1-5"])
    session_state.remember(idx, "other", ["b.py:1-5"])
    run_hook("session-start", json.dumps({"cwd": str(root), "session_id": "mine", "source": "resume"}))
    assert session_state.injected_keys(idx, "mine") == {"a.py:1-5"}  # resume keeps what the transcript replays
    run_hook("session-start", json.dumps({"cwd": str(root), "session_id": "mine", "source": "compact"}))
    assert session_state.injected_keys(idx, "mine") == set()
    assert session_state.injected_keys(idx, "other") == {"b.py:1-5"}


def test_repeat_failure_injects_again_after_compact(warm_server):
    root, _ = warm_server
    payload = warm_payload(root, error_text(root, "py_traceback.txt"), session="cmp-1")
    first = client.warm_hook("tool-failure", payload, timeout=LOADED_BOX_S)[1]
    assert first is not None
    ctx = _without_meta(first["hookSpecificOutput"]["additionalContext"])
    again = client.warm_hook("tool-failure", payload, timeout=LOADED_BOX_S)[1]
    assert again is None or _without_meta(again["hookSpecificOutput"]["additionalContext"]) != ctx  # deduped
    proc = run_hook("session-start", json.dumps({"cwd": str(root), "session_id": "cmp-1", "source": "compact",
                                                 "hook_event_name": "SessionStart"}))
    assert proc.returncode == 0 and "hippo" in _ctx(proc)
    after = client.warm_hook("tool-failure", payload, timeout=LOADED_BOX_S)[1]
    assert after is not None and _without_meta(after["hookSpecificOutput"]["additionalContext"]) == ctx


def _without_meta(xml: str) -> str:
    """The injected hits without <meta> (latency_ms differs between two runs of the same hook)."""
    return re.sub(r"<meta>.*?</meta>", "", xml, flags=re.S)
