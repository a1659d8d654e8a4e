"""Smoke test for the benchmark scripts: task generators, baselines and metrics on a tiny corpus.

Benchmarks are scripts, not tests; this only proves they run and that their scoring can fail.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.quality import metrics, systems, tasks  # noqa: E402

PY = '''"""Tiny module."""


def load_profile(name):
    """Read the saved settings profile from the user's home folder."""
    if not name:
        raise ValueError(f"Profile {name!r} is empty and cannot be loaded from disk")
    return name


class Registry:
    """Keeps track of every registered plugin by its public handle."""

    def add(self, key):
        raise KeyError(_("Plugin handle is already registered: {key}").format(key=key))
'''

JS = '''// Compute the checksum of a downloaded tarball before unpacking it.
function verifyTarball (data) {
  if (!data) {
    throw new Error('Tarball integrity check failed for ' + data.name)
  }
  return true
}

class Publish {
  static description = 'Publish a package'
}
'''

MD = '''# Guide

## Release process

Every release is tagged from the main branch after the changelog is reviewed by two maintainers.
More text here.
More text here.
'''


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(PY)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "tar.js").write_text(JS)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text(MD)
    return tmp_path


FILES = ["docs/guide.md", "lib/tar.js", "src/app.py"]


def test_python_error_tasks_fill_messages_and_hide_the_gold_file(corpus: Path) -> None:
    errs = tasks.python_errors(corpus, FILES)
    assert {(t.path, t.start) for t in errs} == {("src/app.py", 7), ("src/app.py", 15)}
    for t in errs:
        assert "app.py" not in t.query  # frames name the caller, never the gold file
        assert t.query.startswith("Exit code 1\n")
    msgs = " ".join(t.query for t in errs)
    assert "is empty and cannot be loaded from disk" in msgs
    assert "Plugin handle is already registered:" in msgs and "{key}" not in msgs


def test_js_error_intent_and_spec_tasks(corpus: Path) -> None:
    (err,) = tasks.js_errors(corpus, FILES)
    assert (err.path, err.start) == ("lib/tar.js", 4)
    assert "Tarball integrity check failed for " in err.query and "tar.js" not in err.query
    intents = tasks.js_intents(corpus, FILES)
    assert {(t.path, t.start) for t in intents} == {("lib/tar.js", 2), ("lib/tar.js", 9)}
    assert all("verifyTarball" not in t.query for t in intents)
    py_int = tasks.python_intents(corpus, FILES)
    assert {t.start for t in py_int} == {4, 11}
    assert all("load_profile" not in t.query and "Registry" not in t.query for t in py_int)
    (spec,) = tasks.spec_tasks(corpus, FILES)
    assert (spec.path, spec.start, spec.end) == ("docs/guide.md", 3, 7)


def test_generation_is_deterministic_and_writes_jsonl(corpus: Path, tmp_path: Path) -> None:
    a = tasks.generate(corpus, FILES, "python", 10)
    b = tasks.generate(corpus, FILES, "python", 10)
    assert [t.to_json() for t in a["error"]] == [t.to_json() for t in b["error"]]
    assert len(a["irrelevant"]) == len(tasks.IRRELEVANT)
    out = tmp_path / "t" / "error.jsonl"
    tasks.write_jsonl(a["error"], out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and set(rows[0]) >= {"kind", "query", "path", "start", "end"}


def test_baselines_rank_and_metrics_can_fail(corpus: Path) -> None:
    docs = systems.read_corpus(corpus, FILES)
    (task,) = [t for t in tasks.python_errors(corpus, FILES) if t.start == 7]
    for sysm in (systems.BM25Windows(docs), systems.Grep(docs), systems.BM25Files(docs)):
        res = sysm.search(task.query)
        assert res and res[0].path == "src/app.py", sysm.name
    good = metrics.score(systems.Grep(docs).search(task.query), task)
    assert good["r1"] == 1.0 and good["h1"] == 1.0
    wrong = metrics.score([systems.Result("lib/tar.js", 1, 5, 10)], task)
    assert wrong["r10"] == 0.0 and wrong["h5"] == 0.0 and wrong["mrr"] == 0.0
    huge = metrics.score([systems.Result("src/app.py", 1, 500, 10)], task)
    assert huge["r1"] == 1.0 and huge["h1"] == 0.0  # right file, but not line-exact


def test_naive_dense_with_fake_embedder(corpus: Path) -> None:
    from fake_embedder import FakeEmbedder

    docs = systems.read_corpus(corpus, FILES)
    nd = systems.NaiveDense(docs, FakeEmbedder())
    res = nd.search("release tagged from the main branch changelog reviewed")
    assert res[0].path == "docs/guide.md"


@pytest.mark.parametrize("arg, expected", [
    ("'npm profile set <prop> <value>')", "npm profile set <prop> <value>"),  # `)` is not a value
    ("`${cmd} not recognized`)", "{v} not recognized"),
    ("'Invalid package, must have name and version')", "Invalid package, must have name and version"),
    ("`Unknown command ${c}`), {", "Unknown command {v}"),
    ("'Unknown profile command: ' + subcmd)", "Unknown profile command: {v}"),
    ("'found no deps installed from ' + 'a supported registry')", "found no deps installed from a supported registry"),
    ("'mode is ' + (json ? 'JSON' : 'text') + ' only')", "mode is {v} only"),
    ("'a' + this.npm.config.get('x').trim() + 'b')", "a{v}b"),
    ("`The \\`${key}\\` option`)", "The `{v}` option"),
    ("'first line\\nsecond line')", "first line\nsecond line"),
    ("err.message)", None),  # no literal: no task
])
def test_js_message_fills_only_real_values(arg: str, expected: str | None) -> None:
    got = tasks._js_message(arg, "seed")
    assert got == tasks._js_message(arg, "seed")  # deterministic
    if expected is None:
        assert got is None
        return
    fills = {f.strip("'") for f in tasks._FILL}
    head, _, tail = expected.partition("{v}")
    assert got.startswith(head) and got.endswith(tail), got
    if "{v}" in expected:
        assert got[len(head):len(got) - len(tail)] in fills, got
    else:
        assert got == expected


def test_js_errors_join_continued_lines_and_stop_at_the_paren(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "p.js").write_text(
        "function f (x) {\n"
        "  throw new Error('npm profile set <prop> <value>')\n"
        "}\n"
        "function g () {\n"
        "  throw new Error(\n"
        "    'Enabling two-factor authentication is an interactive operation and ' +\n"
        "    (json ? 'JSON' : 'parseable') + ' output mode is not available'\n"
        "  )\n"
        "}\n")
    errs = {t.start: t.query for t in tasks.js_errors(tmp_path, ["lib/p.js"])}
    assert "Error: npm profile set <prop> <value>\n" in errs[2]
    msg = next(ln for ln in errs[5].splitlines() if "two-factor" in ln)
    assert msg.startswith("Error: Enabling two-factor authentication is an interactive operation and ")
    assert msg.endswith(" output mode is not available")


def test_python_messages_do_not_double_quotes() -> None:
    import ast

    def render(src: str) -> str:
        return tasks._py_message(ast.parse(src, mode="eval").body, "seed")

    assert "''" not in render("f\"Name '{name}' defined twice\"")
    assert re.fullmatch(r"Unknown color \w[\w.-]*", render("f'Unknown color {c}'"))
    assert render("f'got {x!r} here'")[4:-5] in tasks._FILL  # !r keeps the repr: quoted strings, bare numbers
    assert re.fullmatch(r"Unknown stream: \S+ found", render("'Unknown stream: ' + name + ' found'"))


def test_spec_questions_paraphrase_without_copying_runs(corpus: Path) -> None:
    (spec,) = tasks.spec_tasks(corpus, FILES)
    section = MD.split("## Release process", 1)[1]
    assert not tasks.shares_run(spec.query, "Release process" + section)
    assert "release" not in spec.query.lower()  # heading words are not in the question
    assert "maintainer" in spec.query and "changelog" in spec.query
    assert tasks.shares_run("every release is tagged", section)  # the check itself can fail
    again = tasks.spec_tasks(corpus, FILES)[0]
    assert again.query == spec.query


def test_report_summary_states_wins_and_losses() -> None:
    from bench import run

    def m(h5: float, r10: float, ms: float = 10.0) -> dict:
        return {"h1": h5, "h5": h5, "r1": r10, "r10": r10, "mrr": r10, "ms": ms}

    res = {"hippo hybrid": {"error": m(0.9, 0.9, 300), "intent": m(0.5, 0.6), "spec": m(1.0, 1.0)},
           "hippo error hook": {"error": m(0.95, 0.95)},
           "grep": {"error": m(0.7, 0.95, 50), "intent": m(0.8, 0.6), "spec": m(1.0, 1.0)}, "bm25-files": {"error": m(0.1, 0.2, 2)}}
    q = {"corpora": {"demo": {"results": res, "gate": {"recall": 0.5, "precision": 1.0, "irrelevant_injected": 0,
                                                       "irrelevant_total": 24}}}}
    text = "\n".join(run.summary(q))
    assert "| demo | error | Hit@5 | hippo error hook 0.95 | grep 0.70 | +0.25 |" in text
    assert "| demo | intent | Hit@5 | hippo hybrid 0.50 | grep 0.80 | **-0.30** |" in text
    assert "| demo | intent | R@10 | hippo hybrid 0.60 | grep 0.60 | +0.00 |" in text
    assert "| demo | spec | R@10 | hippo hybrid 1.00 | grep 1.00 | +0.00 (both at the 1.00 ceiling) |" in text
    behind = text.split("Where hippo is behind", 1)[1]
    assert "demo / intent / Hit@5" in behind and "demo / error / Hit@5" not in behind
    assert "latency" in behind and "gate" in behind


def test_monorepo_lays_out_every_mirror_found_or_only_the_named_ones(tmp_path):
    from bench import monorepo

    for name in ["zz+late", "encode+httpx", "aa+early", "more-itertools+more-itertools"]:
        (tmp_path / name / "repo").mkdir(parents=True)
    (tmp_path / "fetch.sh").write_text("")
    assert monorepo.projects_in(tmp_path) == ["more-itertools+more-itertools", "encode+httpx", "aa+early", "zz+late"]
    assert monorepo.projects_in(tmp_path, ["zz+late", "encode+httpx"]) == ["encode+httpx", "zz+late"]
    with pytest.raises(SystemExit, match="not found"):
        monorepo.projects_in(tmp_path, ["psf+requests"])
