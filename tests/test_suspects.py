"""Suspects through the code graph: a real pytest failure in a small git repo whose bug sits below what
the failing test calls, in a function the traceback never shows."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from repo_helpers import git

FILES = {
    "shop/__init__.py": "",
    "shop/invoice.py": (
        "class Invoice:\n"
        "    def __init__(self, lines):\n"
        "        self.lines = lines\n\n"
        "    def total(self):\n"
        "        return sum(self.lines)\n"),
    "shop/rates.py": (
        '"""Tax rates by country."""\n'
        "VAT = {'de': 0.19, 'fr': 0.20}\n\n\n"
        "def vat_rate(country):\n"
        "    return VAT.get(country.upper(), 0.0)\n"),  # the bug: the table's keys are lower case
    "shop/cart.py": (
        "from shop import rates\n\n\n"
        "class Cart:\n"
        "    def __init__(self, items, country):\n"
        "        self.items = items\n"
        "        self.country = country\n\n"
        "    def total(self):\n"
        "        net = sum(price for _, price in self.items)\n"
        "        return round(net + self._tax(net), 2)\n\n"
        "    def _tax(self, net):\n"
        "        return net * rates.vat_rate(self.country)\n"),
    "tests/__init__.py": "",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\n"
        "def test_german_vat():\n"
        "    cart = Cart([('book', 10.0)], 'de')\n"
        "    assert cart.total() == 11.9, 'German VAT rate is 19%'\n"),
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    pytest.importorskip("lancedb")
    from hippo.index.embedding import load_embedder
    from hippo.index.indexer import index_repo

    root = tmp_path_factory.mktemp("suspects") / "shop"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_cart.py"],
                         cwd=root, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stdout
    output = f"Exit code 1\n{run.stdout}{run.stderr}"
    assert "vat_rate" not in output and "rates.py" not in output  # the traceback does not show the bug
    embedder = load_embedder("fake")
    index_repo(root, embedder=embedder)
    return root, embedder, output


def _vat_rate_lines(root: Path) -> tuple[int, int]:
    lines = (root / "shop/rates.py").read_text().splitlines()
    start = next(i for i, t in enumerate(lines, 1) if t.startswith("def vat_rate"))
    return start, start + 1


def test_the_bug_two_calls_below_the_test_is_shown(shop):
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.retrieval.search import Searcher

    root, embedder, output = shop
    resp = diagnose(Searcher(root, embedder=embedder), {"error": output, "cwd": str(root)}, mode="keyword")
    start, end = _vat_rate_lines(root)
    shown = [h for h in resp["hits"] if h["path"] == "shop/rates.py" and h["start_line"] <= start <= h["end_line"]]
    assert shown, [(h["path"], h["why"]) for h in resp["hits"]]
    assert shown[0]["why"] == "called by Cart._tax, 3 calls down from test_german_vat"
    assert "return VAT.get(country.upper(), 0.0)" in shown[0]["snippet"]  # the whole (short) function


def test_the_hook_answer_names_further_suspects_within_budget(shop, tmp_path, monkeypatch):
    from hippo.push.diagnosis.pipeline import diagnose
    from hippo.retrieval.search import Searcher
    from hippo.surfaces.hooks import failure

    root, embedder, output = shop
    monkeypatch.setenv("HIPPO_HOME", str(tmp_path / "home"))

    def diagnoser(request):
        return diagnose(Searcher(root, embedder=embedder), request, mode="keyword")

    payload = {"tool_name": "Bash", "tool_input": {"command": "pytest tests/test_cart.py"}, "error": output,
               "session_id": "s", "cwd": str(root)}
    ctx = failure.handle(payload, diagnoser=diagnoser)["hookSpecificOutput"]["additionalContext"]
    assert len(ctx) <= 2000
    doc = ET.fromstring(ctx[ctx.index("<search_results>"):])
    named = {(c.get("path"), c.get("symbol")) for c in doc.iter("candidate")}
    shown = {r.findtext("source_file") for r in doc.findall("result")}
    assert "shop/rates.py" in shown
    assert all(c.get("why", "").startswith("called by ") for c in doc.iter("candidate"))
    assert ("shop/invoice.py", "Invoice.total") not in named  # same name, never called by this test
    env = {**payload, "error": "Exit code 4\nERROR: file or directory not found: tests/test_nope.py\n\n"
                               "no tests ran in 0.01s\n", "tool_input": {"command": "pytest tests/test_nope.py"},
           "session_id": "s2"}
    assert failure.handle(env, diagnoser=diagnoser) is None
