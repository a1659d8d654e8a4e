"""The SessionStart brief on hostile repository files (issue 19): every parser finishes, each manifest is
parsed once, and the hook answers whatever the repo holds.

A 2.4 KB justfile line held SessionStart for 20 s on main; a noxfile of `@nox.session(`, a pyproject or
Cargo.toml of `a.`, tox braces and a few more took seconds to forever. No test here asserts a duration:
* shape: every pattern in the brief's modules is free of nested and overlapping repeats (tests/regex_shape.py);
* work: the Python-level operations composing a brief grow linearly with a hostile file (4x the file,
  at most 6x the traced line events; quadratic code gives 16x);
* finish: every parser entry point runs on 120 KB of each attack class (the hook path on 200 KB) and on fuzzed text, under a hard stop
  and a pytest-timeout, so a regression fails instead of hanging;
* the real hook, run as Claude Code runs it on the red team's four files, replies with JSON and exits 0; a
  section that never finishes costs that section, not the reply.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hippo.core.config import DEFAULT_SPEC_GLOBS
from hippo.push.brief import commands, compose, conventions, layout
from hippo.push.brief import repo as brief_repo
from hippo.push.brief.repo import Repo, parse_ini, toml_key_cost
from hook_helpers import HOOK_ENV
from regex_shape import hard_stop, literal_patterns, problems

BENCH = Path(__file__).resolve().parent.parent / "bench" / "brief"
sys.path.insert(0, str(BENCH))
from attacks import ATTACKS, BY_NAME  # noqa: E402

BRIEF_DIR = Path(commands.__file__).resolve().parent
BRIEF_MODULES = sorted(BRIEF_DIR.glob("*.py")) + [BRIEF_DIR.parent.parent / "surfaces" / "hooks" / "session_start.py"]


# --- shape: no pattern can backtrack super-linearly ------------------------------------------------
def test_every_brief_pattern_has_a_linear_shape():
    found = [(where, pat, flags) for path in BRIEF_MODULES for where, pat, flags in literal_patterns(path)]
    assert len(found) >= 20  # the AST walk sees the module-level and the inline patterns
    bad = {where: problems(pat, flags) for where, pat, flags in found if problems(pat, flags)}
    assert not bad


@pytest.mark.parametrize("pattern", [
    r"^@?([A-Za-z_][A-Za-z0-9_-]*)((?:[ \t]+[^:\n]*?)?)[ \t]*:(?![=:])(.*)$",  # the cubic justfile recipe
    r"^([A-Za-z0-9][A-Za-z0-9_-]*(?:[ \t]+[A-Za-z0-9][A-Za-z0-9_-]*)*)[ \t]*:(?![:=])(.*)$",  # Makefile rule
    r"/\*\*?\s*\n?\s*\*?\s*([A-Z][^\n*]{8,})",  # block comment head (cubic in a run of spaces)
    r"\A(?:#![^\n]*\n)?(?:#[^\n]*\n|\s)*[rRuU]?(\"\"\"|''')\s*([^\n]+)",  # docstring head
    r"^(\s*)(?:-\s+)?run:\s*(.*)$",  # workflow run key
    r"py(py)?\d*|\d+(\.\d+)*|py\d+-\w+",
])
def test_the_shape_check_flags_the_patterns_it_replaced(pattern):
    assert problems(pattern)


@pytest.mark.parametrize("pattern", [r"[0-9a-f]{4,64}", r"\s*([-*+]|\d+[.)])\s", r"#{1,4}\s+\S", r"\"?([\w.-]+)\"?\s*[:=]\s*(\S.*?),?$"])
def test_the_shape_check_passes_safe_patterns(pattern):
    assert problems(pattern) == []


# --- work: linear in the file ---------------------------------------------------------------------
def _line_events(fn) -> int:
    count = [0]

    def local(frame, event, arg):
        if event == "line":
            count[0] += 1
        return local

    sys.settrace(lambda frame, event, arg: local)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count[0]


def _repo_with(git_repo, attack, size: int, name: str) -> Path:
    files = {attack.path: attack.text(size), "app/__init__.py": '"""The demo app."""\n'}
    files.setdefault("README.md", "# demo\n")
    return git_repo(files, name=name)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_composing_a_brief_is_linear_in_a_hostile_file(git_repo, attack):
    small = _repo_with(git_repo, attack, 4096, "small")
    big = _repo_with(git_repo, attack, 16384, "big")
    compose(small, DEFAULT_SPEC_GLOBS, 6000)  # imports and first-call caches out of the count
    n_small = _line_events(lambda: compose(small, DEFAULT_SPEC_GLOBS, 6000))
    n_big = _line_events(lambda: compose(big, DEFAULT_SPEC_GLOBS, 6000))
    assert n_big <= 6 * n_small, (n_small, n_big)


def test_the_work_count_sees_super_linear_python():
    """The measure fails main's recursive tox expansion (4x the spec, ~12^3x the work). It counts Python lines
    only: quadratic work inside C (tomllib's key tuples, a regex) is what the shape check, the size caps and
    the TOML cost screen bound, and the finish tests below would hang on."""
    import re

    def old_expand(spec: str) -> list[str]:
        m = re.search(r"\{([^{}]*)\}", spec)
        if not m:
            return [spec]
        opts = [p.strip() for p in m.group(1).split(",")]
        return [x for opt in opts[:12] for x in old_expand(spec[:m.start()] + opt + spec[m.end():])][:40]

    unit = "{a,b,c,d,e,f,g,h,i,j,k,l}"
    assert _line_events(lambda: old_expand(unit * 4)) > 6 * _line_events(lambda: old_expand(unit))
    assert _line_events(lambda: commands.expand(unit * 16)) <= 6 * _line_events(lambda: commands.expand(unit * 4))


# --- finish: each parser on 120 KB of every attack, and on fuzzed text -----------------------------
def every_parser(text: str) -> None:
    """Each entry point of brief/ that reads file text, on `text` whole (no size cap in front)."""
    lines = text.split("\n")
    for line in lines[:5000]:
        commands.make_rule(line)
        commands.just_recipe(line)
        commands.just_params(line)
        commands.classify(line)
        commands.kind_of_name(line)
        commands.run_key(line)
    for item in commands.env_items(text):
        commands.expand(item)
    commands.expand(text)
    commands.run_lines(text)
    commands._doc_command_lines(text)
    for path in ("README.md", "docs/guide.rst", "CONTRIBUTING"):
        for sec in conventions.sections(path, text):
            conventions.keep_section(sec)
            conventions.drop_process(sec.text)
    conventions.drop_process(text)
    conventions.yaml_list_after(text, "enable:")
    layout.head_summary(text)
    toml_key_cost(text)
    try:
        parse_ini(text)
    except Exception:  # noqa: BLE001 - malformed INI is expected; finishing is what is tested
        pass


@pytest.mark.slow  # 55 attacks at 120 KB (~12 CPU-s): `make check` runs them; the linear-count test above stays fast
@pytest.mark.timeout(60)
@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_every_parser_finishes_on_120kb_of_each_attack(attack):
    with hard_stop(40):
        every_parser(attack.text(120_000))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("attack", [BY_NAME[n] for n in ("justfile/space-tab", "noxfile/session-heads",
                                                         "pyproject/dotted-key", "tox/env-braces",
                                                         "makefile/distinct-targets", "src/comment-spaces")],
                         ids=lambda a: a.name)
def test_the_hook_path_finishes_on_200kb(git_repo, attack):
    root = _repo_with(git_repo, attack, 200_000, "big")
    with hard_stop(40):
        assert "The demo app" in compose(root, DEFAULT_SPEC_GLOBS, 6000)


ATOMS = [" ", "\t", " \t", "\n", "\n\n", "a", "a.", ".", "{", "}", "[", "]", "(", ")", ":", "=", "= ", ",", "#",
         "# ", "- ", "-", "@", "@nox.session(", "def f(", '"""', "'''", '"', "'", "`", "``", "```", "~~~", "===",
         "---", "*", "/**", "//", "//!", "run:", "- run: |", "id:", "enable:", "envlist = ", "{a,b}", "{1-9}",
         "py", "make ", "uv run ", "npx ", "python -m ", "sk-", "[tox]\n", "[tool.", "[[", "a = ", "\\\n", "$("]
pathological = st.lists(st.tuples(st.sampled_from(ATOMS), st.integers(1, 600)), min_size=1, max_size=8).map(
    lambda parts: "".join(atom * n for atom, n in parts)[:30_000])
FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.timeout(300)
@FUZZ
@given(pathological)
@example("build" + " \t" * 1200)
@example("@nox.session(" * 2000)
@example("{a,b,c,d,e,f,g,h,i,j,k,l}" * 200)
@example("/**" + " " * 1500)
def test_every_parser_finishes_on_fuzzed_text(text):
    with hard_stop(20):
        every_parser(text)


# --- one parse per file, caps and their notes -------------------------------------------------------
def test_each_manifest_is_read_and_parsed_once(git_repo, monkeypatch):
    root = git_repo({
        "pyproject.toml": '[project]\nname = "shop"\ndescription = "Sells."\n[project.scripts]\nshop = "shop.cli:main"\n'
                          '[tool.ruff]\nline-length = 100\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        "package.json": json.dumps({"name": "shop-ui", "scripts": {"test": "jest"}, "bin": "cli.js"}),
        "Cargo.toml": '[package]\nname = "shopd"\n', "rustfmt.toml": "max_width = 90\n",
        "tox.ini": "[tox]\nenvlist = py311\n[testenv]\ncommands = pytest\n",
        "setup.cfg": "[flake8]\nmax-line-length = 100\n[tox:tox]\nenvlist = py312\n",
        "shop/__init__.py": '"""Shop."""\n', "README.md": "# Shop\n"})
    import configparser
    from collections import Counter

    import tomllib

    parsed: Counter[str] = Counter()

    def counting(real):
        def parse(self_or_text, *a, **kw):
            parsed[self_or_text if isinstance(self_or_text, str) else a[0]] += 1
            return real(self_or_text, *a, **kw)
        return parse

    monkeypatch.setattr(tomllib, "loads", counting(tomllib.loads))
    monkeypatch.setattr(json, "loads", counting(json.loads))
    monkeypatch.setattr(configparser.ConfigParser, "read_string", counting(configparser.ConfigParser.read_string))
    text = compose(root, DEFAULT_SPEC_GLOBS, 6000)
    assert "Project: shop" in text and "`shop`" in text and "ruff.line-length=100" in text  # three readers
    assert "tox -e py311" in text and "rustfmt.toml: max_width=90" in text
    assert len(parsed) == 6 and max(parsed.values()) == 1, parsed  # every manifest, each once


def test_a_manifest_over_the_cap_is_skipped_and_said(git_repo):
    big = '[project]\nname = "huge"\n' + "".join(f'k{i} = "{"x" * 60}"\n' for i in range(1100))
    assert len(big) > brief_repo.MANIFEST_BYTES
    root = git_repo({"pyproject.toml": big, "Cargo.toml": "[package]\nname = " + "a." * 5000 + "\n"})
    repo = Repo(root)
    assert repo.toml("pyproject.toml") == {} and repo.toml("Cargo.toml") == {}
    assert any(n.startswith("skipped pyproject.toml:") and "over the 64 KB cap" in n for n in repo.notes)
    assert any(n.startswith("skipped Cargo.toml: its dotted keys") for n in repo.notes)


def test_toml_key_cost_counts_only_many_dotted_lines():
    assert toml_key_cost('version = "1.2.3"\nurl = "https://a.b.c/d.e"\n') == 0
    assert toml_key_cost("a." * 100 + "b = 1\n") == 100 * 100


def test_parse_ini_collapses_inner_spaces_and_keeps_continuations():
    cp = parse_ini("[testenv]\ncommands =\n    pytest    {posargs}\n    ruff   check .\nenvlist=py311\n")
    assert cp.get("testenv", "commands").split("\n") == ["", "pytest {posargs}", "ruff check ."]


# --- the deadline ---------------------------------------------------------------------------------
def test_a_passed_deadline_stops_the_brief_between_steps(git_repo):
    root = git_repo({"Makefile": "test:\n\tpytest\n", "README.md": "# r\n\n## Style\n\nShort functions, always.\n"})
    notes: list[str] = []
    assert compose(root, DEFAULT_SPEC_GLOBS, 6000, deadline=0.0, notes=notes) == ""
    assert any(n.startswith("deadline: commands stopped before from_makefile") for n in notes)
    assert "deadline: the conventions section was left out" in notes


@pytest.fixture
def hanging_layout(monkeypatch):
    """layout.render blocks until the test ends: a section that never finishes."""
    release = threading.Event()

    def stuck(repo, budget):
        release.wait(60)
        return "Layout (never shown)"

    monkeypatch.setattr(layout, "render", stuck)
    yield
    release.set()


@pytest.mark.slow  # waits out a timeout or a deadline: wall time, not CPU
def test_the_hook_answers_with_the_finished_sections_when_one_hangs(git_repo, monkeypatch, hanging_layout):
    from hippo.surfaces.hooks import session_start

    monkeypatch.setenv("HIPPO_NO_BACKGROUND_INDEX", "1")
    monkeypatch.setenv("HIPPO_BRIEF_SECONDS", "3")  # room for the commands on a loaded machine; layout never ends
    root = git_repo({"Makefile": "test:\n\tpython -m pytest\n", "README.md": "# r\n"})
    out = session_start.handle({"cwd": str(root), "session_id": "s", "source": "startup"})
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "`make test` = python -m pytest (Makefile)" in ctx and "never shown" not in ctx
    assert "hippo index:" in ctx  # the rest of the reply is whole
    log = (root / ".hippo" / "hippo.log").read_text()
    assert "brief: still composing at the deadline; answered with 1 finished section(s)" in log


def _hook(root: Path, home: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    payload = {"session_id": "h", "transcript_path": "/t.jsonl", "cwd": str(root), "hook_event_name": "SessionStart",
               "source": "startup"}
    env = {**os.environ, **HOOK_ENV, "HIPPO_HOME": str(home), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "hippo", "hook", "session-start"], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=30, env=env, cwd=str(root))


@pytest.mark.slow  # waits out a timeout or a deadline: wall time, not CPU
@pytest.mark.timeout(60)
def test_the_hook_process_exits_while_a_brief_thread_is_stuck(git_repo, tmp_path):
    """A thread that never returns (here: layout.render waits forever) neither holds the reply nor the process."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import threading\nfrom hippo.push.brief import layout\n"
        "layout.render = lambda repo, budget: threading.Event().wait()\n")
    root = git_repo({"Makefile": "test:\n\tpython -m pytest\n", "README.md": "# r\n"})
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = _hook(root, tmp_path, {"PYTHONPATH": path, "HIPPO_BRIEF_SECONDS": "3"})
    assert proc.returncode == 0, proc.stderr
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "`make test` = python -m pytest (Makefile)" in ctx


RED_TEAM_FILES = {  # the cases, at the sizes
    "justfile": "build" + " \t" * 1200,
    "noxfile.py": "@nox.session(" * 12_000,
    "pyproject.toml": "a." * 50_000,
    "Cargo.toml": "a." * 15_000,
}


@pytest.mark.timeout(90)
def test_the_session_start_hook_answers_on_the_red_team_files(git_repo, tmp_path):
    """With the default deadline the hook replies and exits 0 whatever the load; with room to finish (the suite's
    20 s, where main hung for minutes) the brief is whole and the log says what was skipped."""
    root = git_repo({**RED_TEAM_FILES, "app/__init__.py": '"""The demo app."""\n', "README.md": "# demo\n"})
    quick = _hook(root, tmp_path, {"HIPPO_BRIEF_SECONDS": "1"})
    assert quick.returncode == 0, quick.stderr
    assert "hippo index:" in json.loads(quick.stdout)["hookSpecificOutput"]["additionalContext"]
    proc = _hook(root, tmp_path)
    assert proc.returncode == 0, proc.stderr
    ctx = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "<project_brief>" in ctx and "The demo app" in ctx
    log = (root / ".hippo" / "hippo.log").read_text()
    assert "brief: skipped pyproject.toml: 100 KB, over the 64 KB cap" in log
    assert "brief: skipped Cargo.toml: its dotted keys" in log


# --- the rewritten readers still read real files ----------------------------------------------------
def test_make_rules():
    assert commands.make_rule("test lint: deps more # c") == (["test", "lint"], " deps more # c")
    for not_rule in ("X := 1", "a::b", "\ttest: x", "%.o: %.c", "a=b: c", "x ?= y:z", "no colon"):
        assert commands.make_rule(not_rule) is None, not_rule


def test_just_recipes_and_params():
    assert commands.just_recipe("@test-one file *args='a b':  build") == ("test-one", " file *args='a b'", "  build")
    assert commands.just_recipe("x := 'a'") is None and commands.just_recipe("a::b") is None
    assert commands.just_recipe("test(x):") is None
    assert commands.just_params(" file *args='a b' +rest $env=z mode=\"x y\"") == ["file", "args", "rest", "env", "mode"]


def test_tox_env_expansion_is_capped_and_ordered():
    assert commands.expand("py{310,311}-{a,b}") == ["py310-a", "py310-b", "py311-a", "py311-b"]
    assert commands.expand("3.1{0-2}") == ["3.10", "3.11", "3.12"]
    assert len(commands.expand("py{1-999999999}")) == 1  # not a range hippo expands: kept as one name
    assert len(commands.expand("x{a,b,c,d,e,f,g,h,i,j,k,l}" * 50)) == commands.MAX_ENVS
    assert commands.env_items("py{310,311}-{a,b}, lint\n  docs # comment, x") == ["py{310,311}-{a,b}", "lint", "docs"]


def test_noxfile_sessions_line_by_line(git_repo):
    root = git_repo({"noxfile.py": (
        "import nox\n\n@nox.session(python=['3.11'])\ndef tests(session):\n    \"\"\"Run the test suite.\"\"\"\n\n"
        "@nox.session(name='lint-all', reuse_venv=True)\n@nox.parametrize('x', [1])\ndef lint(\n    session,\n"
        "    x,\n) -> None:\n    '''not a docstring we read'''\n\n@nox.session\nasync def docs(session): ...\n")})
    got = [(c.cmd, c.detail) for c in commands.from_noxfile(Repo(root))]
    assert got == [("nox", "the default sessions"), ("nox -s tests", "Run the test suite."), ("nox -s lint-all", ""),
                   ("nox -s docs", "")]


def test_precommit_and_golangci_lists():
    assert conventions.yaml_list_after("linters:\n  enable:\n    - errcheck\n\n    - gosec\n  disable:\n    - x\n",
                                       "enable:") == ["errcheck", "gosec"]


def test_file_head_summaries():
    assert layout.head_summary('#!/usr/bin/env python\n# c\n"""The app does X.\n"""') == "The app does X."
    assert layout.head_summary('"""\n  Multi line doc.\n"""') == "Multi line doc."
    assert layout.head_summary("// Package foo implements the bar.\npackage foo") == "Package foo implements the bar."
    assert layout.head_summary("/**\n * Widget maker for things.\n */") == "Widget maker for things."
    assert layout.head_summary("import os\n") == "" and layout.head_summary("/**" + " " * 1500) == ""


# --- the budget is CPU time: a starved process still gets its brief ----------------------------------
def test_the_brief_budget_counts_cpu_time_not_time_spent_waiting():
    """Sleeping (what a starved thread does while other processes hold the cores) spends no budget; work does."""
    idle = Repo(Path("."), cpu_seconds=0.05, deadline=time.monotonic() + 30)
    time.sleep(0.2)
    assert not idle.expired()
    busy = Repo(Path("."), cpu_seconds=0.05, deadline=time.monotonic() + 30)
    end = time.thread_time() + 0.2
    while time.thread_time() < end:
        pass
    assert busy.expired()
    assert Repo(Path("."), cpu_seconds=30, deadline=time.monotonic() - 1).expired()  # the wall cap still holds


@pytest.mark.slow  # waits out a timeout or a deadline: wall time, not CPU
def test_a_starved_brief_is_waited_for_beyond_its_cpu_budget(git_repo, monkeypatch):
    """A brief thread that gets no CPU for longer than HIPPO_BRIEF_SECONDS (here: layout waits 1.3 s, as on a
    laptop at load 7) is still shown whole; a wall-clock deadline of 1 s cut it off."""
    from hippo.push.brief import layout
    from hippo.surfaces.hooks import session_start

    real = layout.render

    def starved(repo, budget):
        time.sleep(1.3)
        return real(repo, budget)

    monkeypatch.setattr(layout, "render", starved)
    monkeypatch.setenv("HIPPO_NO_BACKGROUND_INDEX", "1")
    monkeypatch.setenv("HIPPO_BRIEF_SECONDS", "1")
    root = git_repo({"Makefile": "test:\n\tpython -m pytest\n", "app/__init__.py": '"""The demo app."""\n',
                     "README.md": "# r\n"})
    out = session_start.handle({"cwd": str(root), "session_id": "s", "source": "startup"})
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert "`make test` = python -m pytest (Makefile)" in ctx
    assert "Layout (top-level folders" in ctx and "The demo app" in ctx
