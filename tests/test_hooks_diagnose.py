"""Failure retrieval (`diagnosis.pipeline.diagnose`) and the warm server protocol, against a stand-in Searcher
over the real fixture projects, plus an end-to-end run on a real index when the indexer is available."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

import pytest

from fake_embedder import SPEC as FAKE
from fakes import ERRORS, PROJECTS, FakeSearcher
from hippo.push.diagnosis.pipeline import diagnose


def request(name, cwd_sub, exclude=()):
    """A recorded error whose frames name /srv/dev/work, pointed at the fixture projects."""
    error = (ERRORS / name).read_text().replace("/srv/dev/work", str(PROJECTS))
    return {"error": error, "cwd": f"{PROJECTS}/{cwd_sub}", "exclude": list(exclude)}


def ranges(resp):
    return [(h["path"], h["start_line"], h["end_line"]) for h in resp["hits"]]


def _files(tmp: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    return tmp


def test_python_traceback_gets_raise_site_first():
    s = FakeSearcher()
    resp = diagnose(s, request("py_traceback.txt", "py"))
    got = ranges(resp)
    assert got[0][0] == "py/shop/cart.py" and got[0][1] <= 10 <= got[0][2]
    assert "raise ValueError" in resp["hits"][0]["snippet"]
    assert any(p == "py/shop/main.py" and a == 4 for p, a, _ in got)  # the calling frame's function
    assert resp["hits"][0]["why"].startswith("where the failure was raised")
    assert resp["meta"]["returned_hits"] == len(got) and resp["query"].startswith("ValueError")


def test_pytest_failure_brings_the_failing_test_and_the_code():
    resp = diagnose(FakeSearcher(), request("pytest_fail.txt", "py"))
    paths = [r[0] for r in ranges(resp)]
    assert "py/shop/cart.py" in paths
    # pytest already printed the failing test's source: it is not injected again
    assert "def test_total" in (ERRORS / "pytest_fail.txt").read_text()
    assert not any("def test_total" in h["snippet"] for h in resp["hits"])


def test_node_message_literal_finds_throw_site_and_java_package_paths_resolve():
    resp = diagnose(FakeSearcher(), request("node_throw.txt", "js"))
    assert ranges(resp)[0][0] == "js/lib/price.js" and "invalid price" in resp["hits"][0]["snippet"]
    jresp = diagnose(FakeSearcher(), request("java_exception.txt", "java"))
    assert ranges(jresp)[0][0] == "java/com/acme/Inventory.java"


def test_log_line_with_a_custom_exception_finds_its_raise_site():
    """No frame points into the repo; the class name leads to the one place that raises it."""
    resp = diagnose(FakeSearcher(), request("py_worker_log.txt", "py"))
    first = resp["hits"][0]
    assert first["path"] == "py/deploy/quota.py" and first["start_line"] <= 13 <= first["end_line"]
    assert "raise QuotaExceeded" in first["snippet"]
    assert resp["query"].startswith("QuotaExceeded: region eu")


def test_tap_block_and_error_code_outputs_reach_the_throw_site():
    tap = diagnose(FakeSearcher(), request("node_test_throw.txt", "js"))
    assert any(h["path"] == "js/lib/config.js" and h["start_line"] <= 17 <= h["end_line"] for h in tap["hits"])
    code = diagnose(FakeSearcher(), request("node_err_code.txt", "js"))
    assert ranges(code)[0][0] == "js/lib/config.js" and "readFileSync" in code["hits"][0]["snippet"]


def test_a_repo_frame_is_not_padded_with_loose_keyword_matches():
    """`(reading 'name')` quotes a common word; with the frame found, nothing else is added."""
    s = FakeSearcher()
    got = ranges(diagnose(s, request("node_typeerror.txt", "js")))
    assert got and {p for p, _, _ in got} == {"js/typeerr.js"}  # its two frames, nothing else


class TemplateSearcher(FakeSearcher):
    """Stand-in index of a raise site holding a message *template* and a doc quoting the message."""

    FILES: ClassVar[dict[str, str]] = {
        "docs/usage.md": "# Usage\n\nA bad count prints:\n\n    Error: 'twelve' is not a valid integer.\n",
        "src/types.py": "class IntType:\n    def convert(self, value):\n        try:\n            return int(value)\n"
                        "        except ValueError:\n            self.fail(\n"
                        "                _(\"{value!r} is not a valid {number_type}.\")\n            )\n",
        "src/other.py": "def check(x):\n    return 'valid'\n",
    }

    def __post_init__(self):
        _files(self.root, self.FILES)
        super().__post_init__()
        self.chunks = {p: [(1, t.count("\n") + 1, t.split("\n"))] for p, t in self.FILES.items()}


def test_message_template_raise_site_beats_a_verbatim_mention_in_docs(tmp_path):
    s = TemplateSearcher(tmp_path)
    resp = diagnose(s, {"error": "Exit code 1\n2024-03-02 ERROR app: job 3 failed: BadParameter: 'twelve' is not a valid integer.",
                        "cwd": str(tmp_path)})
    got = ranges(resp)
    assert got and got[0][0] == "src/types.py"
    assert "src/other.py" not in [p for p, _, _ in got]
    # the message's fragments went to the store in one literal pass, no ranked search
    literal = [c for c in s.calls if c[0] == "literal"]
    assert len(literal) == 1 and "is not a valid integer" in literal[0][1]
    assert not [c for c in s.calls if c[0] != "literal"]


class ComposedSearcher(TemplateSearcher):
    FILES: ClassVar[dict[str, str]] = {
        "src/exceptions.py": "class NoSuchOption(Exception):\n    def __init__(self, name):\n"
                             "        super().__init__(f\"No such option: {name}\")\n",
        "src/parser.py": "from .exceptions import NoSuchOption\n\n\ndef match(opt, known):\n"
                         "    if opt not in known:\n        raise NoSuchOption(opt)\n    return opt\n",
    }


def test_message_composed_by_its_class_puts_the_raise_site_first(tmp_path):
    resp = diagnose(ComposedSearcher(tmp_path), {"error": "Exit code 1\nE   NoSuchOption: No such option: --nope",
                                                 "cwd": str(tmp_path)})
    assert [p for p, _, _ in ranges(resp)] == ["src/parser.py", "src/exceptions.py"]


def test_no_shared_words_means_no_message_hit(tmp_path):
    s = TemplateSearcher(tmp_path)
    resp = diagnose(s, {"error": "Exit code 1\nTraceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
                                 "Abort: nothing to deploy today", "cwd": str(tmp_path)})
    assert resp["hits"] == []


def test_dedupe_excludes_already_injected_chunks():
    s = FakeSearcher()
    first = ranges(diagnose(s, request("py_traceback.txt", "py")))
    keys = [f"{p}:{a}-{b}" for p, a, b in first]
    again = ranges(diagnose(s, request("py_traceback.txt", "py", exclude=keys)))
    assert not set(first) & set(again)


def test_budget_is_respected():
    resp = diagnose(FakeSearcher(), {**request("pytest_fail.txt", "py"), "budget": 500})
    assert sum(len(h["snippet"]) for h in resp["hits"]) <= 500


def test_server_handle_roundtrip(tmp_path):
    from hippo.surfaces.service.server import QueryServer

    srv = QueryServer(tmp_path)
    srv.index._searcher = FakeSearcher()
    assert srv.handle({"op": "ping"})["ok"]
    out = srv.handle({"op": "diagnose", **request("py_traceback.txt", "py")})
    assert out["ok"] and out["result"]["hits"]
    assert not srv.handle({"op": "nope"})["ok"]
    json.dumps(out)  # must be serialisable for the socket


def test_end_to_end_real_index(tmp_path):
    """A real traceback from the fixture's code -> XML naming the raise site; `command not found` -> nothing.

    The index and the hook run in this process (`hippo_in_process`); test_hooks.py covers the hook process.
    """
    pytest.importorskip("hippo.index.discovery")
    import shutil
    import subprocess
    import sys

    from repo_helpers import git, hippo_in_process

    root = tmp_path / "repo"
    shutil.copytree(PROJECTS, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    env = {"HIPPO_MODEL": FAKE, "HIPPO_NO_SERVER": "1", "HIPPO_NO_BACKGROUND_INDEX": "1"}
    assert hippo_in_process(["index", "--quiet"], root, env=env).returncode == 0
    err = subprocess.run([sys.executable, "-m", "shop.main"], cwd=root / "py", capture_output=True, text=True)
    error = f"Exit code {err.returncode}\n{err.stderr}"
    payload = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "python -m shop.main"},
               "error": error, "session_id": "e2e", "cwd": str(root / "py")}
    proc = hippo_in_process(["hook", "tool-failure"], root, env=env, stdin=json.dumps(payload).encode())
    out = json.loads(proc.stdout)
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure"
    assert ctx.startswith("hippo: live code this failure points to")
    assert "<source_file>py/shop/cart.py</source_file>" in ctx
    m = re.search(r"<source_file>py/shop/cart.py</source_file>\s*<lines>(\d+)-(\d+)</lines>", ctx)
    assert m and int(m.group(1)) <= 10 <= int(m.group(2))
    # a one-line log report naming a class without an Error suffix: no frame, the class leads there
    err = subprocess.run([sys.executable, "-m", "deploy.worker"], cwd=root / "py", capture_output=True, text=True)
    payload["error"] = f"Exit code {err.returncode}\n{err.stderr}"
    payload["session_id"] = "e2e-log"
    proc = hippo_in_process(["hook", "tool-failure"], root, env=env, stdin=json.dumps(payload).encode())
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    m = re.search(r"<source_file>py/deploy/quota.py</source_file>\s*<lines>(\d+)-(\d+)</lines>", ctx)
    assert m and int(m.group(1)) <= 13 <= int(m.group(2))
    payload["error"] = "Exit code 127\nbash: line 1: pnpmx: command not found"
    proc = hippo_in_process(["hook", "tool-failure"], root, env=env, stdin=json.dumps(payload).encode())
    assert (proc.returncode, proc.stdout) == (0, b"")
