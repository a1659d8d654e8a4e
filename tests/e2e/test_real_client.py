"""Issue 6: hippo's plugin bundle driven by the real `claude` binary, offline, against a scripted model.

Each test is one scenario from the issue. Assertions read the recorded Messages API requests, i.e.
exactly what the model would have been given; line numbers come from the fixture files themselves.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from e2e.e2e_harness import (
    base_env,
    clean_copy,
    git,
    line_of,
    make_fixture_repo,
    request_text,
    run_claude,
    search_results,
    session_start_context,
    tool_outcome,
    tool_use_ids,
)

pytestmark = pytest.mark.e2e

MCP_TOOL = "mcp__plugin_hippo_hippo__search_codebase"
FAILING_CMD = "python -m ledgerly.cli withdraw acme 50000"
# A phrase that exists only in the fixture's CONTRIBUTING.md: proof the conventions were pushed.
CONVENTION = "integer number of cents"
# Names the exception, so even the fake (keyword-driven) embedder ranks the raise site.
RAG_QUERY = "where is OverdraftLimitExceeded raised"


def _hook_finished(log: str, event: str, sub: str, plugin: str = "hippo@inline") -> list[str]:
    """Debug-log lines saying hippo's `event` hook (launcher subcommand `sub`) exited 0."""
    pat = re.compile(rf"{event}\S* \[[^\]]*scripts/hippo hook {sub}\] \(plugin {re.escape(plugin)}\) "
                     r"finished with status 0")
    return [ln for ln in log.splitlines() if pat.search(ln)]


def _covers(results: list[tuple[str, int, int]], path: str, line: int) -> bool:
    return any(p == path and a <= line <= b for p, a, b in results)


def _assert_session_context(ctx: str) -> None:
    assert ctx, "no SessionStart additionalContext in the first request"
    assert "hippo" in ctx.lower()
    assert "path:line" in ctx or "[[" in ctx, "hippo's citation rule is missing"
    assert CONVENTION in ctx and "CONTRIBUTING.md" in ctx, "fixture conventions not pushed"
    assert len(ctx) <= 9_500, "over the hook budget"


# 1 ----------------------------------------------------------------------------------------------
def test_validate_strict_and_provides(claude, home, plugin_root):
    strict = run_claude(claude, ["plugin", "validate", str(plugin_root), "--strict"], cwd=plugin_root,
                        home=home, debug=False)
    assert strict.rc == 0, strict.describe()
    assert "Validation passed" in strict.stdout
    as_json = run_claude(claude, ["plugin", "validate", str(plugin_root), "--json"], cwd=plugin_root,
                         home=home, debug=False)
    report = json.loads(as_json.stdout)
    assert report["success"] is True
    provides = report["provides"]
    events = {(h["event"], tuple(h.get("args", [])[-2:])) for h in provides["hooks"]}
    assert ("SessionStart", ("hook", "session-start")) in events
    assert ("PostToolUseFailure", ("hook", "tool-failure")) in events
    assert ("UserPromptExpansion", ("hook", "prompt-expansion")) in events
    assert "hippo:rag" in provides["skills"] + provides["commands"]
    assert [s["name"] for s in provides["mcpServers"]] == ["hippo"]


# 2 ----------------------------------------------------------------------------------------------
def test_init_only_runs_session_start(claude, home, plugin_root, ledger_repo):
    repo = ledger_repo()
    run = run_claude(claude, ["--init-only", "--plugin-dir", str(plugin_root)], cwd=repo, home=home)
    assert run.rc == 0, run.describe()
    assert _hook_finished(run.debug_log, "SessionStart:startup", "session-start"), run.describe()
    sizes = [int(n) for n in re.findall(
        r"Hook SessionStart \([^)]*hook session-start\) provided additionalContext \((\d+) chars\)",
        run.debug_log)]
    assert sizes and 0 < sizes[0] <= 9_500, run.describe()


# 3 ----------------------------------------------------------------------------------------------
def test_full_turn_session_start_context(claude, home, plugin_root, ledger_repo):
    repo = ledger_repo()
    run = run_claude(claude, ["-p", "What are this project's conventions?", "--plugin-dir",
                              str(plugin_root)], cwd=repo, home=home,
                     script=[{"text": "Money is integer cents."}])
    assert run.rc == 0 and "integer cents" in run.stdout, run.describe()
    _assert_session_context(session_start_context(run.model_requests[0]))


# 4 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", [None, "claude-sonnet-4-5"], ids=["default-model", "sonnet-4-5"])
def test_full_turn_failure_gets_raise_site(claude, home, plugin_root, ledger_repo, model):
    repo = ledger_repo(model=None)  # indexed with the real default model
    raise_line = line_of(repo / "ledgerly" / "accounts.py", "raise OverdraftLimitExceeded(")
    script = [{"tool_use": {"name": "Bash", "input": {"command": FAILING_CMD,
                                                       "description": "withdraw too much"}}},
              {"text": "The overdraft floor rejected it."}]
    args = ["-p", "withdraw 50000 cents from acme", "--plugin-dir", str(plugin_root),
            "--allowedTools", "Bash"] + (["--model", model] if model else [])
    run = run_claude(claude, args, cwd=repo, home=home, script=script,
                     env=base_env(home, model=None))
    assert run.rc == 0 and len(run.model_requests) >= 2, run.describe()
    nxt = run.model_requests[1]
    (use_id,) = tool_use_ids(nxt, "Bash")
    outcome = tool_outcome(nxt, use_id)
    assert outcome.is_error and "OverdraftLimitExceeded" in outcome.result, outcome
    # the real traceback from the fixture's code names the raise site
    assert f'ledgerly/accounts.py", line {raise_line}' in outcome.result
    where = outcome.result if model == "claude-sonnet-4-5" else outcome.seen
    assert "<search_results>" in where, run.describe()
    assert _covers(search_results(where), "ledgerly/accounts.py", raise_line), where[-4000:]


# 5 ----------------------------------------------------------------------------------------------
def test_full_turn_irrelevant_failure_injects_nothing(claude, home, plugin_root, ledger_repo):
    repo = ledger_repo()
    script = [{"tool_use": {"name": "Bash", "input": {"command": "command-that-does-not-exist --flag"}}},
              {"text": "That command is not installed."}]
    run = run_claude(claude, ["-p", "run the tool", "--plugin-dir", str(plugin_root),
                              "--allowedTools", "Bash"], cwd=repo, home=home, script=script)
    assert run.rc == 0 and len(run.model_requests) >= 2, run.describe()
    nxt = run.model_requests[1]
    (use_id,) = tool_use_ids(nxt, "Bash")
    outcome = tool_outcome(nxt, use_id)
    assert outcome.is_error and "not found" in outcome.result
    assert "<search_results>" not in outcome.seen and "PostToolUseFailure" not in outcome.seen
    # ...and it is silence by decision: hippo's failure hook did run, and exited 0
    assert _hook_finished(run.debug_log, "PostToolUseFailure:Bash", "tool-failure"), run.describe()


# 6 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["/rag", "/hippo:rag"])
def test_rag_command_puts_results_in_context(claude, home, plugin_root, ledger_repo, command):
    repo = ledger_repo()
    raise_line = line_of(repo / "ledgerly" / "accounts.py", "raise OverdraftLimitExceeded(")
    run = run_claude(claude, ["-p", f"{command} {RAG_QUERY}",
                              "--plugin-dir", str(plugin_root)], cwd=repo, home=home,
                     script=[{"text": "See [[ledgerly/accounts.py:34]]."}])
    assert run.rc == 0, run.describe()
    text = request_text(run.model_requests[0])
    assert f"hippo /rag results for: {RAG_QUERY}" in text, run.describe()
    assert _covers(search_results(text), "ledgerly/accounts.py", raise_line), text[-4000:]


def test_rag_hostile_arguments_run_no_shell(claude, home, plugin_root, ledger_repo, tmp_path):
    repo = ledger_repo()
    canaries = [tmp_path / f"pwned{i}" for i in range(4)]
    hostile = (f'overdraft $(touch {canaries[0]}) `touch {canaries[1]}` "quoted \\" arg" '
               f"'single' ; touch {canaries[2]} && echo x\n$(touch {canaries[3]})")
    run = run_claude(claude, ["-p", f"/rag {hostile}", "--plugin-dir", str(plugin_root)], cwd=repo,
                     home=home, script=[{"text": "ok"}])
    assert run.rc == 0, run.describe()
    assert not [c for c in canaries if c.exists()], "an argument reached a shell"
    text = request_text(run.model_requests[0])
    assert "<search_results>" in text, run.describe()  # the query still ran, as plain data


# 7 ----------------------------------------------------------------------------------------------
def test_mcp_list_connected(claude, home, plugin_root, ledger_repo):
    repo = ledger_repo()
    run = run_claude(claude, ["--plugin-dir", str(plugin_root), "mcp", "list"], cwd=repo, home=home,
                     debug=False)
    line = next((ln for ln in run.stdout.splitlines() if "plugin:hippo:hippo" in ln), "")
    assert "Connected" in line, run.describe()


@pytest.mark.parametrize("tool_search", [False, True], ids=["upfront", "via-ToolSearch"])
def test_mcp_tool_call_returns_xml(claude, home, plugin_root, ledger_repo, tool_search):
    repo = ledger_repo()
    raise_line = line_of(repo / "ledgerly" / "accounts.py", "raise OverdraftLimitExceeded(")
    call = {"tool_use": {"name": MCP_TOOL, "input": {"query": RAG_QUERY,
                                                      "keywords": ["OverdraftLimitExceeded"]}}}
    script = [call, {"text": "Found it."}]
    # In -p the first request normally goes out while MCP servers still connect (the model gets
    # a WaitForMcpServers tool); make the client wait so the first request is deterministic.
    env = base_env(home, MCP_CONNECTION_NONBLOCKING="false")
    if tool_search:  # default: MCP tools are deferred; the model must fetch the schema first
        script.insert(0, {"tool_use": {"name": "ToolSearch", "input": {"query": f"select:{MCP_TOOL}"}}})
    else:
        env["ENABLE_TOOL_SEARCH"] = "false"
    run = run_claude(claude, ["-p", "find the overdraft check", "--plugin-dir", str(plugin_root),
                              "--allowedTools", MCP_TOOL], cwd=repo, home=home, script=script, env=env)
    assert run.rc == 0 and not run.unused_turns, run.describe()
    first = run.model_requests[0]
    offered = [t["name"] for t in first["tools"]]
    if tool_search:
        assert MCP_TOOL not in offered and "ToolSearch" in offered
        assert MCP_TOOL in request_text(first), "deferred tool not announced to the model"
    else:
        assert MCP_TOOL in offered, offered
    last = run.model_requests[-1]
    (use_id,) = tool_use_ids(last, MCP_TOOL)
    outcome = tool_outcome(last, use_id)
    assert outcome is not None and not outcome.is_error, run.describe()
    assert "<search_results>" in outcome.result
    assert _covers(search_results(outcome.result), "ledgerly/accounts.py", raise_line), outcome.result


# 8 ----------------------------------------------------------------------------------------------
def _install_from_marketplace(claude: str, home: Path, plugin_root: Path, tmp_path: Path,
                              kind: str) -> tuple[str, Path]:
    """Install hippo from a marketplace made of a clean copy of the repo (what a clone holds).

    kind "directory": the repo's own marketplace.json, added from a local path (the documented
    flow). In 2.1.332 the client then runs the plugin from that directory, not from the copy it
    puts in the cache. kind "git": a one-entry marketplace whose source is a git URL (a file://
    bare clone, so it works offline); the client clones it and runs the cached copy, the case
    where paths escaping the plugin root would break. Returns (marketplace name, plugin dir used).
    """
    source = clean_copy(plugin_root, tmp_path / "hippo-src")
    if kind == "directory":
        mkt_dir = source
    else:
        git(source, "init", "-q", "-b", "main")
        git(source, "add", "-A")
        git(source, "commit", "-q", "-m", "hippo")
        bare = tmp_path / "hippo.git"
        git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
        mkt_dir = tmp_path / "mkt"
        (mkt_dir / ".claude-plugin").mkdir(parents=True)
        (mkt_dir / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
            "name": "e2e-git-mkt", "owner": {"name": "e2e"},
            "plugins": [{"name": "hippo", "source": {"source": "url", "url": bare.as_uri()}}]}))
    mkt_name = json.loads((mkt_dir / ".claude-plugin" / "marketplace.json").read_text())["name"]
    added = run_claude(claude, ["plugin", "marketplace", "add", str(mkt_dir)], cwd=tmp_path, home=home,
                       debug=False)
    assert added.rc == 0, added.describe()
    installed = run_claude(claude, ["plugin", "install", f"hippo@{mkt_name}"], cwd=tmp_path, home=home,
                           debug=False)
    assert installed.rc == 0, installed.describe()
    listing = run_claude(claude, ["plugin", "list", "--json"], cwd=tmp_path, home=home, debug=False)
    entry = next(p for p in json.loads(listing.stdout) if p["id"] == f"hippo@{mkt_name}")
    install_path = Path(entry["installPath"])
    assert home in install_path.parents and (install_path / "scripts" / "hippo").is_file()
    return mkt_name, (source if kind == "directory" else install_path)


@pytest.mark.parametrize("kind", ["directory", "git"])
def test_marketplace_install_then_session_start(claude, home, plugin_root, ledger_repo, tmp_path, kind):
    mkt_name, used = _install_from_marketplace(claude, home, plugin_root, tmp_path, kind)
    repo = ledger_repo()
    run = run_claude(claude, ["-p", "What are this project's conventions?"], cwd=repo, home=home,
                     script=[{"text": "Money is integer cents."}])
    assert run.rc == 0, run.describe()
    ran = _hook_finished(run.debug_log, "SessionStart:startup", "session-start", plugin=f"hippo@{mkt_name}")
    assert ran and f"{used}/scripts/hippo" in ran[0], run.describe()  # the installed plugin ran
    _assert_session_context(session_start_context(run.model_requests[0]))


def test_marketplace_install_without_hippo_fails_open(claude, home, plugin_root, tmp_path):
    """Installed copy, no hippo on PATH: the launcher starts its own venv build in the background,
    tells the user once, and the session goes on without hippo context (no network: it can't finish)."""
    mkt_name, _ = _install_from_marketplace(claude, home, plugin_root, tmp_path, "git")
    repo = make_fixture_repo("ledgerly", tmp_path / "ledgerly")  # no index needed: hippo can't run
    env = base_env(home, HIPPO_PIP_ARGS="--no-index")  # the background build must fail fast, offline
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep)
                                  if d and not (Path(d) / "hippo").exists())
    script = [{"tool_use": {"name": "Bash", "input": {"command": FAILING_CMD.replace("python", "python3")}}},
              {"text": "ok"}]
    run = run_claude(claude, ["-p", "hi", "--allowedTools", "Bash"], cwd=repo, home=home, script=script,
                     env=env)
    assert run.rc == 0, run.describe()
    plugin = f"hippo@{mkt_name}"
    assert _hook_finished(run.debug_log, "SessionStart:startup", "session-start", plugin=plugin)
    assert _hook_finished(run.debug_log, "PostToolUseFailure:Bash", "tool-failure", plugin=plugin)
    assert "installing its Python environment" in run.debug_log, run.describe()  # the one-time notice
    assert not session_start_context(run.model_requests[0])
    nxt = run.model_requests[-1]
    (use_id,) = tool_use_ids(nxt, "Bash")
    assert "<search_results>" not in tool_outcome(nxt, use_id).seen
