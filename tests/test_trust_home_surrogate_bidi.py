"""Smaller trust gaps (issue 12, item 9): indexing a home directory, lone surrogates over MCP, deceptive names.

* `/rag-index` (and `hippo index`) in a plain directory that is $HOME, `/` or above $HOME indexed every
  dotfile (.bash_history, .kube/config); now refused unless `--allow-home` is given.
* An MCP tool call whose query holds a lone surrogate (`"\\ud800"`, valid JSON) never got a reply: the SDK's
  parser refused the line and dropped the request. Driven here over the real server's stdio, byte for byte.
* File names with bidi overrides or control characters (U+202E shows `evil\\u202egnp.py` as `evilyp.png`,
  `\\x1b[2J` clears a terminal) are shown escaped in XML, JSON and text output, status and error lines.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from fake_embedder import SPEC as FAKE
from helpers_index import sample_repo
from hippo.core.home_guard import is_home_or_above, refusal
from hippo.surfaces.cli import cli
from hippo.surfaces.hooks import prompt_expansion

SECRET_HISTORY = "mysql -u root -pHunter2Secret!\n"


# --- home directory --------------------------------------------------------------------------------------

@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    home = tmp_path / "users" / "alice"
    (home / ".kube").mkdir(parents=True)
    (home / ".bash_history").write_text(SECRET_HISTORY)
    (home / ".kube" / "config").write_text("users:\n- name: admin\n  user:\n    token: kubetoken1234567890\n")
    (home / "notes.md").write_text("# notes\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HIPPO_MODEL", FAKE)
    monkeypatch.delenv("HIPPO_INDEX_DIR", raising=False)
    return home


def test_hippo_index_refuses_a_home_directory_without_the_flag(fake_home):
    res = CliRunner().invoke(cli, ["index", "--no-vectors", "--repo", str(fake_home)])
    assert res.exit_code != 0
    line = res.output.strip()
    assert len(line.splitlines()) == 1 and "home directory" in line and "--allow-home" in line, res.output
    assert not (fake_home / ".hippo").exists()


def test_hippo_index_refuses_a_directory_above_home(fake_home):
    res = CliRunner().invoke(cli, ["index", "--no-vectors", "--repo", str(fake_home.parent)])
    assert res.exit_code != 0 and "above your home directory" in res.output
    assert not (fake_home.parent / ".hippo").exists()


def test_allow_home_indexes_it_when_asked(fake_home):
    res = CliRunner().invoke(cli, ["index", "--no-vectors", "--allow-home", "--repo", str(fake_home)])
    assert res.exit_code == 0, res.output
    assert (fake_home / ".hippo" / "state.json").is_file()


def test_rag_index_in_home_refuses_and_creates_nothing(fake_home):
    out = prompt_expansion.handle({"command_name": "rag-index", "cwd": str(fake_home)})
    text = out["hookSpecificOutput"]["additionalContext"]
    assert "refused" in text and "/rag-index --allow-home" in text, text
    assert not (fake_home / ".hippo").exists()


def test_the_guard_covers_root_and_spares_projects_and_dotfile_repos(tmp_path, git_repo):
    home = tmp_path / "h"
    home.mkdir()
    assert is_home_or_above(Path("/"), home) and refusal(Path("/"), home) and "filesystem root" in refusal(Path("/"), home)
    project = home / "src" / "app"
    project.mkdir(parents=True)
    assert not is_home_or_above(project, home) and refusal(project, home) is None
    dotfiles = git_repo({".bashrc": "alias ll='ls -l'\n"}, name="dotfiles")
    assert is_home_or_above(dotfiles, dotfiles) and refusal(dotfiles, dotfiles) is None  # git chose what it tracks


# --- lone surrogates over the real MCP server ------------------------------------------------------------

@pytest.fixture(scope="module")
def indexed_sample(tmp_path_factory):
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo

    root = sample_repo(tmp_path_factory.mktemp("surrogate"))
    index_repo(root, embedder=FakeEmbedder())
    return root


class RawMcp:
    """`python -m hippo mcp` spoken to in raw JSON-RPC lines (an SDK client would refuse to send them)."""

    def __init__(self, root: Path) -> None:
        env = {**os.environ, "HIPPO_MODEL": FAKE, "HIPPO_PROJECT_DIR": str(root)}
        self.proc = subprocess.Popen([sys.executable, "-m", "hippo", "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=root)
        self.buf = b""

    def send(self, raw: str) -> None:
        self.proc.stdin.write(raw.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def replies(self, ids: set[int], timeout: float = 60.0) -> dict[int, dict]:
        got: dict[int, dict] = {}
        deadline = time.monotonic() + timeout
        while ids - set(got) and time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            self.buf += chunk
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(line)
                if "id" in msg:
                    got[msg["id"]] = msg
        return got

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _call(i: int, arguments_json: str) -> str:
    return ('{"jsonrpc":"2.0","id":' + str(i) + ',"method":"tools/call","params":{"name":"search_codebase",'
            '"arguments":' + arguments_json + '}}')


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_lone_surrogates_in_a_tool_call_get_an_answer(indexed_sample):
    mcp = RawMcp(indexed_sample)
    try:
        mcp.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                 '"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}')
        assert 1 in mcp.replies({1})
        mcp.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        calls = {
            2: r'{"query":"\ud800"}',
            3: r'{"query":"token is too old \udfff"}',
            4: r'{"query":"expired token","keywords":["TokenExpiredError","\ud83d"]}',
            5: r'{"query":"retry","file_pattern":"src/\udc00*"}',
            6: r'{"query":"token \ud83d\ude00 too old"}',  # a valid pair stays an emoji
            7: r'{"query":"Token is too old","keywords":["TokenExpiredError"]}',
        }
        for i, args in calls.items():
            mcp.send(_call(i, args))
        got = mcp.replies(set(calls))
        assert set(got) == set(calls), f"no reply to {sorted(set(calls) - set(got))}"
        for i in calls:
            assert "result" in got[i], got[i]
        text = {i: "".join(c["text"] for c in got[i]["result"]["content"]) for i in calls}
        assert "<search_results>" in text[3] and "src/auth/tokens.py" in text[4]
        assert "<search_results>" in text[6] and "src/auth/tokens.py" in text[7]
        ET.fromstring(text[7])
    finally:
        mcp.close()


# --- bidi overrides and control characters in names ----------------------------------------------------

RLO = "\u202e"
NAMES = {f"src/evil{RLO}gnp.py": "def evil_marker():\n    return 'evil'\n",
         "src/esc\x1b[2Jclear.py": "def clear_marker():\n    return 'clear'\n",
         "src/zero\u200bwidth.py": "def zero_marker():\n    return 'zero'\n"}
RAW = (RLO, "\x1b", "\u200b")


@pytest.fixture(scope="module")
def bidi_repo(tmp_path_factory):
    from fake_embedder import FakeEmbedder
    from hippo.index.indexer import index_repo
    from repo_helpers import git, write_files

    root = tmp_path_factory.mktemp("bidi") / f"proj{RLO}eman"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_files(root, NAMES)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "names")
    index_repo(root, embedder=FakeEmbedder())
    return root


def _search(root: Path, fmt: str) -> str:
    res = CliRunner().invoke(cli, ["search", "marker", "-w", "evil_marker", "-w", "clear_marker", "-w", "zero_marker",
                                   "--k", "10", "--format", fmt, "--repo", str(root)], env={"HIPPO_MODEL": FAKE})
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("fmt", ["xml", "text", "json"])
def test_deceptive_names_are_shown_escaped(bidi_repo, fmt):
    out = _search(bidi_repo, fmt)
    assert not any(ch in out for ch in RAW), repr(out[:500])
    esc = "esc\\u001b[2Jclear.py" if fmt == "json" else "esc\\x1b[2Jclear.py"  # JSON's own escape form
    assert "evil\\u202egnp.py" in out and esc in out and "zero\\u200bwidth.py" in out
    if fmt == "xml":
        names = {r.findtext("source_file") for r in ET.fromstring(out).findall("result")}
        assert "src/evil\\u202egnp.py" in names
    if fmt == "json":  # the JSON value is still the real name: only its text form is escaped
        paths = {r["path"] for r in json.loads(out)["results"]}
        assert set(NAMES) <= paths


def test_status_and_error_lines_escape_the_repository_name(bidi_repo, tmp_path):
    status = CliRunner().invoke(cli, ["status", "--repo", str(bidi_repo)])
    assert status.exit_code == 0 and RLO not in status.output and "proj\\u202eeman" in status.output
    planted = tmp_path / f"other{RLO}dir"
    planted.mkdir()
    (planted / ".git").mkdir()
    os.symlink(tmp_path, planted / ".hippo")
    err = CliRunner().invoke(cli, ["index", "--repo", str(planted)])
    assert err.exit_code != 0 and "symlink" in err.output and RLO not in err.output, err.output
    assert "other\\u202edir" in err.output
