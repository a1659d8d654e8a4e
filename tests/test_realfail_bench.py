"""bench/realfail's scoring on tiny synthetic in-repo cases, so the benchmark's arithmetic cannot
silently break. No network and no fetched repository: a two-file git repo made here, the fake embedder."""
from __future__ import annotations

import subprocess

import pytest
from bench.realfail import callees, corpora, scoring, tables, workspace
from bench.realfail import gold as goldmod
from bench.realfail.mutate import apply_mutation, candidates, line_sha, mutated_line
from bench.realfail.run import evaluate_case, finish_bm25, finish_callees, summarise
from bench.realfail.workspace import ROOT_TOKEN, claude_error, normalise, restore

from fake_embedder import SPEC as FAKE

CALC = '''"""Tiny module under test."""


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return low
    return value


def total(items):
    return sum(clamp(i, 0, 10) for i in items)
'''
TEST = '''from calc import total


def test_total():
    assert total([5, 20]) == 15
'''
PYTEST_OUT = """============================= test session starts ==============================
collected 1 item

tests/test_calc.py F                                                     [100%]

=================================== FAILURES ===================================
__________________________________ test_total __________________________________

    def test_total():
>       assert total([5, 20]) == 15
E       assert 5 == 15
E        +  where 5 = total([5, 20])

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_total - assert 5 == 15
============================== 1 failed in 0.02s ===============================
"""
GOLD = {"files": ["calc.py"], "lines": {"calc.py": [[8, 8]]},
        "functions": [{"file": "calc.py", "name": "clamp", "start": 4, "end": 9}]}


@pytest.fixture()
def repo(tmp_path):
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def test_gold_functions_and_hunks():
    assert goldmod.hunk_ranges("@@ -8 +8 @@\n-x\n+y\n@@ -12,0 +13,2 @@\n") == [(8, 8), (12, 13)]
    funcs = goldmod.functions(CALC, "calc.py")
    assert ("clamp", 4, 9) in funcs and ("total", 12, 13) in funcs
    assert goldmod.enclosing(funcs, 8, 8) == [("clamp", 4, 9)]


def test_score_file_function_line():
    assert scoring.score([scoring.Span("calc.py", 1, 3, 30)], GOLD) == {"file": True, "function": False, "line": False, "chars": 30}
    assert scoring.score([scoring.Span("calc.py", 7, 9, 40)], GOLD)["line"]
    assert scoring.score([scoring.Span("calc.py", 4, 5, 40)], GOLD)["function"]
    assert not scoring.score([scoring.Span("tests/test_calc.py", 1, 5, 9)], GOLD)["file"]


def test_frames_and_shown(repo):
    error = claude_error(1, PYTEST_OUT)
    assert error.startswith("Exit code 1\n")
    assert scoring.frames(error, repo) == [("tests/test_calc.py", 5)]
    assert not scoring.shown_by_frames(error, repo, GOLD)
    inside = error + f'\n  File "{repo}/calc.py", line 8, in clamp\n'
    assert scoring.shown_by_frames(inside, repo, GOLD)
    assert "site" not in str(scoring.frames('File "/usr/lib/python3/site-packages/x.py", line 3', repo))
    assert scoring.error_message(error).splitlines()[0] == "assert 5 == 15"


def test_baselines_windows_and_budget(repo):
    docs = scoring.read_docs(repo, ["calc.py", "tests/test_calc.py"])
    tb = scoring.traceback_windows(claude_error(1, PYTEST_OUT), repo, docs)
    assert [(s.path, s.start, s.end) for s in tb] == [("tests/test_calc.py", 1, 6)]  # the file ends in a newline
    cut = scoring.budget_matched([scoring.Span("a", 1, 9, 100), scoring.Span("b", 1, 9, 100), scoring.Span("c", 1, 9, 5)], 150)
    assert [(s.path, s.chars) for s in cut] == [("a", 100), ("b", 50)]


def test_normalise_roundtrip_and_truncation(tmp_path):
    text = f"\x1b[31mFAILED\x1b[0m {tmp_path}/x.py:3"
    stored = normalise(text, tmp_path, None)
    assert stored == f"FAILED {ROOT_TOKEN}/x.py:3" and restore(stored, tmp_path) == f"FAILED {tmp_path}/x.py:3"
    long = claude_error(2, "x" * 30_000)
    assert len(long) < 10_100 and "characters truncated" in long


def test_mutation_recreates_and_refuses_a_moved_line(repo):
    cands = candidates(CALC, "calc.py", 4, 9)
    flip = next(c for c in cands if c["op"] == "flip-compare")
    line = CALC.split("\n")[flip["line"] - 1]
    m = {"file": "calc.py", **flip, "line_sha": line_sha(line)}
    apply_mutation(repo, m)
    assert (repo / "calc.py").read_text().split("\n")[flip["line"] - 1] == mutated_line(line, m) != line
    with pytest.raises(RuntimeError):
        apply_mutation(repo, m)  # the line is no longer the recorded one


def test_evaluate_case_end_to_end_on_a_real_index(repo, monkeypatch):
    """The runner's per-case path on a real hippo index (fake embedder): one failing run, one
    environment failure; scores, the BM25 cut and the summary table come out consistent."""
    from hippo.index.embedding import load_embedder
    from hippo.index.indexer import index_repo
    from hippo.retrieval.search import Searcher

    monkeypatch.setenv("HIPPO_HOME", str(repo.parent / "home"))
    emb = load_embedder(FAKE)
    index_repo(repo, embedder=emb)
    searcher = Searcher(repo, embedder=emb)
    run_out = PYTEST_OUT.replace("tests/test_calc.py:5: AssertionError",
                                 f'tests/test_calc.py:5: in test_total\n{ROOT_TOKEN}/calc.py:8: in clamp\n    return low')
    fail = {"id": "t-fix", "kind": "fix", "repo": "local/calc", "language": "python", "commit": "x",
            "command": "python -m pytest tests/test_calc.py", "error": claude_error(1, run_out), "gold": GOLD}
    env = {"id": "t-env", "kind": "env", "repo": "local/calc", "language": "python", "commit": "x",
           "command": "pnpmx install", "error": "Exit code 127\nbash: line 1: pnpmx: command not found", "gold": None}
    recs = [evaluate_case(fail, repo, searcher), evaluate_case(env, repo, searcher)]
    finish_bm25(recs)
    finish_callees(recs)
    r = recs[0]
    assert r["shown_by_frames"] is True
    assert r["traceback±20"]["function"] and r["traceback±20"]["line"]
    assert r["hippo"]["injected"] and r["hippo"]["file"] and r["hippo"]["context_chars"] > 0
    assert recs[1]["hippo"]["context_chars"] == 0 and not recs[1]["hippo"]["injected"]
    assert r["bm25-windows"]["budget"] == r["hippo"]["context_chars"]
    summary = summarise(recs)
    assert summary["env_cases"] == 1 and summary["table"]["hippo"]["env_injections"] == 0
    assert summary["hippo_injected_no_code_under_test"] == (0 if r["hippo"]["file"] else 1)
    assert summary["table"]["hippo"]["cases"] == 1 and summary["table"]["traceback±20"]["function"] == 1.0
    # the direct-callees baseline: test_total calls total, whose definition window starts 2 lines above it
    callee_spans = r["test-callees"]["spans"]
    assert callee_spans and callee_spans[0]["path"] == "calc.py" and callee_spans[0]["start"] == 10
    assert r["test-callees"]["budget"] == r["bm25-windows"]["budget"]
    assert r["split"] in ("tune", "heldout") and "named" in r["hippo"] and "named" in r["traceback±20"]
    md = tables.render(recs)
    assert "| local/calc |" in md and "test's direct callees" in md
    assert "| pytest | 1 | 0 |" in md  # the per-runner row: one case, hippo not silent


def test_callees_from_the_runner_named_test_when_no_frame_is_in_a_test(repo):
    """No traceback into the test file (a mocha/jest title only): the body is found by the test's name."""
    docs = scoring.read_docs(repo, ["calc.py", "tests/test_calc.py"])
    out = "FAILED tests/test_calc.py::test_total - assert 5 == 15"
    body = callees.test_body(out, repo, docs, ["tests/test_calc.py"], lambda p: p.startswith("tests/"))
    assert body == ("tests/test_calc.py", 4, 5)
    spans = callees.callee_windows(out, repo, docs, ["tests/test_calc.py"], lambda p: p.startswith("tests/"),
                                   lambda p: p == "calc.py")
    assert [(s.path, s.start) for s in spans] == [("calc.py", 10)]
    js = "  1) options\n       should split the basename on backslashes:\n"
    assert "should split the basename on backslashes" in callees._failing_tests(js)


def test_js_definitions_the_grep_baseline_finds():
    for line in ("picomatch.makeRe = (input, options = {}) => {", "  static makeRe(input, options) {",
                 "export function makeRe(input: string): RegExp {", "const makeRe = (x) => x"):
        assert callees._js_def("makeRe").search(line), line
    assert not callees._js_def("makeRe").search("  const re = makeRe(input)")
    assert callees.called_names(["assert.strictEqual(makeRe('a').source, 'b')", "new Foo(1)"]) == ["makeRe", "Foo"]


def test_named_counts_pointers_but_shown_does_not():
    ctx = ('<failure_context><more_candidates note="x">\n    <candidate path="calc.py" lines="4-9" '
           'symbol="clamp" score="0.91"/>\n    <candidate path="a &amp; b.py" lines="1-2" score="0.1"/>'
           "</more_candidates></failure_context>")
    ptrs = scoring.pointers(ctx)
    assert [(p.path, p.start, p.end) for p in ptrs] == [("calc.py", 4, 9), ("a & b.py", 1, 2)]
    assert scoring.named([], ptrs, GOLD) is True
    assert scoring.score([], GOLD)["function"] is False
    assert scoring.named([scoring.Span("calc.py", 11, 13, 10)], [], GOLD) is False


def test_runner_is_read_from_the_checkout(tmp_path):
    c = corpora.by_repo("fb55/css-what")
    (tmp_path / "package.json").write_text('{"devDependencies": {"jest": "^24", "ts-jest": "^24"}}')
    assert c.command_for(tmp_path, ["src/parse.spec.ts"]) == "npx jest src/parse.spec.ts"
    (tmp_path / "package.json").write_text('{"devDependencies": {"vitest": "^2"}}')
    assert corpora.runner_of(c.command_for(tmp_path, ["src/parse.spec.ts"])) == "vitest"
    assert corpora.runner_of("node --test test/a.test.js") == "node:test"
    assert corpora.runner_of("PYTHONPATH=src python -m unittest tests/test_x.py") == "unittest"


def test_a_corpus_with_its_own_tools_has_its_own_environment(tmp_path, monkeypatch):
    """sphinx's docutils and pytest's own pluggy stay out of the shared environment the other corpora run in;
    pytest's checkout gets the version file setuptools-scm would write, past its last tag."""
    monkeypatch.setenv("REALFAIL_CACHE", str(tmp_path / "cache"))
    shared, own = corpora.by_repo("sympy/sympy"), corpora.by_repo("sphinx-doc/sphinx")
    assert shared.env_home().name == "py" and own.env_home().name == "py-sphinx"
    assert own.env_bin() == own.env_home() / "bin" and not shared.tools
    calls = []
    monkeypatch.setattr(corpora, "ensure_env", lambda *a: calls.append(a))
    tree = tmp_path / "pytest"
    (tree / "src" / "_pytest").mkdir(parents=True)
    for args in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "i"],
                 ["tag", "8.3.4"]):
        subprocess.run(["git", *args], cwd=tree, check=True)
    c = corpora.by_repo("pytest-dev/pytest")
    c.prepare(tree)
    assert calls == [("python", c.tools, c.env_home())]
    assert "version = '8.3.4.post1.dev0'" in (tree / "src" / "_pytest" / "_version.py").read_text()
    assert c.is_runnable("testing/python/collect.py") and c.is_runnable("testing/io/test_wcwidth.py")
    assert not c.is_runnable("testing/conftest.py") and c.is_src("src/_pytest/terminal.py")


def test_a_snapshot_missing_a_large_file_still_checks_out(tmp_path):
    """fetch's snapshots lack files of 4 MiB and more: the work tree leaves those paths out."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("a\n")
    (src / "big.txt").write_text("big\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "i"]):
        subprocess.run(["git", *args], cwd=src, check=True)
    blob = subprocess.run(["git", "rev-parse", "HEAD:big.txt"], cwd=src, capture_output=True, text=True).stdout.strip()
    (src / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--shared", str(src), str(work)], check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True).stdout.strip()
    workspace.reset(work, head)
    assert (work / "a.txt").read_text() == "a\n" and not (work / "big.txt").exists()


def test_typescript_mutants_are_parsed_as_typescript():
    """ufo's sources are TypeScript: read as JavaScript no mutant of them parses, so none was ever kept."""
    from bench.realfail.mutate import _parses

    assert _parses("export function f(x: string): number {\n  return x.length > 1 ? 1 : 0\n}\n", "src/utils.ts")
    assert not _parses("export function f(x: string): number {\n  return x.length >\n}\n", "src/utils.ts")


def test_a_path_that_merely_contains_the_home_dirs_text_is_kept(monkeypatch):
    """Home /root: sphinx's `{ROOT}/tests/roots` stayed `tests/roots`, not `tests~s`."""
    from bench.realfail.workspace import machine_neutral

    monkeypatch.setenv("HOME", "/root")
    text = "test roots directory: /root/.cache/t/tests/roots\nsee /root and '/root/x' /rootless\n"
    assert machine_neutral(text) == "test roots directory: ~/.cache/t/tests/roots\nsee ~ and '~/x' /rootless\n"


def test_stored_outputs_name_no_path_of_the_recording_machine():
    import getpass
    import sys
    from pathlib import Path

    from bench.realfail.workspace import machine_neutral

    user = f"pytest-of-{getpass.getuser()}"
    text = (f'tmp_path = PosixPath("/tmp/{user}/pytest-24/test_x0")\n'
            f'{sys.base_prefix}/lib/python3.11/argparse.py:1872: in parse_args\n'
            f'{Path.home()}/.pyenv/versions/3.11.7/lib/python3.11/unittest/mock.py:12\n')
    neutral = machine_neutral(text)
    assert user not in neutral and sys.base_prefix not in neutral and str(Path.home()) not in neutral
    back = restore(neutral, Path("/srv/repo"))
    assert f"{sys.base_prefix}/lib/python3.11/argparse.py:1872" in back and "/lib/python3.11/unittest/mock.py" in back


def test_fit_objective_counts_shown_and_named_and_the_search_improves_it(tmp_path, capsys):
    """bench.realfail.fit: a case whose fix ranks second is shown once a feature it has weighs more; the
    fitted weights are printed for policy.SUSPECT_WEIGHTS."""
    import json

    from bench.realfail import fit

    from hippo.push.diagnosis import policy

    zero = {k: 0.0 for k in policy.SUSPECT_WEIGHTS if k != "base"}

    def cand(gold: bool, distance: int, **feats: float) -> dict:
        return {"path": "a.py", "start": 1, "end": 2, "distance": distance, "gold": gold,
                "features": {**zero, "distance": float(distance - 1), **feats}}

    rows = [{"id": "c1", "reached": True, "other_shown": False,
             "candidates": [cand(False, 2, size=0.0), cand(False, 2), cand(True, 2, name_clue=2.0)]},
            {"id": "c2", "reached": False, "other_shown": True, "candidates": []}]
    w = {**policy.SUSPECT_WEIGHTS, "name_clue": 0.0}
    assert fit.objective(rows, w, shown_k=2, named_k=3, min_shown_distance=2) == (1, 2)  # c2 by other evidence
    assert fit.objective(rows, {**w, "name_clue": 5.0}, 2, 3, 2) == (2, 2)
    assert fit.objective(rows, {**w, "name_clue": 5.0}, 2, 3, 3) == (1, 2)  # distance 2 is not shown then
    record = tmp_path / "suspects.jsonl"
    record.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fit.main(["fit", str(record)]) == 0
    out = capsys.readouterr().out
    assert "2 tune cases, fix function reached by the graph in 1" in out and "SUSPECT_WEIGHTS = {" in out


def test_a_pytest_temp_dir_cut_by_the_output_truncation_is_still_made_a_token():
    """Claude Code cuts long output mid-way; a path cut right after `pytest-` kept the recording user's
    temp dir in a committed sphinx case."""
    from bench.realfail.workspace import PYTEST_TMP_TOKEN, machine_neutral

    cut = "Writing evaluated template result to /tmp/pytest-of-someone/pytest-\n\n... [8943 characters truncated]"
    assert "/tmp/pytest-of" not in machine_neutral(cut) and PYTEST_TMP_TOKEN in machine_neutral(cut)
    assert machine_neutral("/tmp/pytest-of-someone/pytest-12/basic") == PYTEST_TMP_TOKEN + "/basic"
