"""File-level evidence and the demotion of changelogs, docs and tests for "where would I change X" questions."""
from __future__ import annotations

import pytest

from hippo.core.textutil import query_terms
from hippo.retrieval.filerank import path_terms, rank_files
from hippo.retrieval.render import to_xml
from hippo.retrieval.results import SearchResponse
from repo_helpers import indexed_searcher


def _row(path: str, start: int, symbol: str = "") -> dict:
    return {"path": path, "start_line": start, "end_line": start + 9, "symbol": symbol}


def test_several_matching_chunks_beat_one_slightly_better_chunk():
    scored = [(_row("lib/a.py", 1), 0.60), (_row("lib/b.py", 1), 0.55), (_row("lib/b.py", 20), 0.50),
              (_row("lib/b.py", 40), 0.45)]
    files = rank_files(scored, set(), "")
    assert [f.path for f in files] == ["lib/b.py", "lib/a.py"]
    assert files[0].chunks == 3 and files[0].best["start_line"] == 1


def test_many_weak_chunks_do_not_beat_one_strong_one():
    scored = [(_row("lib/strong.py", 1), 0.9)] + [(_row("lib/noisy.py", i * 10), 0.3) for i in range(12)]
    assert rank_files(scored, set(), "")[0].path == "lib/strong.py"


def test_file_name_and_symbol_named_in_the_query_lift_a_file():
    query = "Handle empty zstd responses in the decoder"
    scored = [(_row("httpx/_models.py", 1), 0.50), (_row("httpx/_decoders.py", 1), 0.48)]
    assert rank_files(scored, query_terms(query), query)[0].path == "httpx/_decoders.py"
    query = "Fix `buildURL` for array params"
    scored = [(_row("lib/helpers/a.js", 1, "other"), 0.50), (_row("lib/helpers/b.js", 1, "buildURL"), 0.48)]
    assert rank_files(scored, query_terms(query), query)[0].path == "lib/helpers/b.js"


def test_path_terms_skip_the_package_folder_and_generic_names():
    assert path_terms("httpx/_auth.py") == {"auth", "_auth"}
    assert "helpers" in path_terms("lib/helpers/buildURL.js") and "url" in path_terms("lib/helpers/buildURL.js")
    assert path_terms("src/index.ts") == set()


CLIENT = '''"""HTTP client with a connection pool and retries."""


class RetryPolicy:
    """How many times a request is retried and how long the client waits between attempts."""

    def __init__(self, retries=3, backoff=0.5):
        self.retries = retries
        self.backoff = backoff

    def delays(self):
        return [self.backoff * 2 ** n for n in range(self.retries)]


class Client:
    def __init__(self, retry_policy=None):
        self.retry_policy = retry_policy or RetryPolicy()

    def send(self, request):
        for delay in self.retry_policy.delays():
            response = self._attempt(request)
            if response.ok:
                return response
        raise ConnectionError("retries exhausted")
'''

TESTS = '''from client import Client, RetryPolicy


def test_retry_policy_backoff_delays():
    assert RetryPolicy(retries=2, backoff=1).delays() == [1, 2]


def test_client_retries_until_exhausted():
    client = Client(RetryPolicy(retries=1))
    assert client.retry_policy.retries == 1
'''


def _changelog() -> str:
    entries = [f"## 1.{n}.0\n\n- Client retry policy: retries and backoff delays fixed for case {n}.\n"
               f"- RetryPolicy backoff delays now respect retries ({n}).\n" for n in range(30)]
    return "# Changelog\n\n" + "\n".join(entries)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    files = {"src/client.py": CLIENT, "tests/test_client.py": TESTS, "CHANGELOG.md": _changelog(),
             "docs/retries.md": "# Retries\n\nThe client retry policy sets retries and backoff delays "
                                "between attempts.\n"}
    return indexed_searcher(tmp_path_factory.mktemp("where") / "repo", files)


def _files(resp) -> list[str]:
    return list(dict.fromkeys([h.path for h in resp.hits] + [c.path for c in resp.candidates]))


def test_change_request_puts_the_implementation_first_and_the_changelog_last(repo):
    resp = repo.search("Fix retry policy backoff delays when retries is zero")
    files = _files(resp)
    assert files[0] == "src/client.py"
    assert all(h.path != "CHANGELOG.md" for h in resp.hits[:1])
    if "CHANGELOG.md" in files:
        assert files.index("CHANGELOG.md") > files.index("src/client.py")
        assert files.index("CHANGELOG.md") > files.index("tests/test_client.py")


def test_asking_for_the_changelog_gets_it(repo):
    resp = repo.search("changelog entry for the retry policy backoff delays")
    assert "CHANGELOG.md" in [h.path for h in resp.hits[:3]]


def test_tests_are_kept_when_the_query_asks_for_them(repo):
    plain = _files(repo.search("where would I change the retry policy backoff delays"))
    asked = repo.search("where would I change the tests for the retry policy backoff delays")
    assert plain[0] == "src/client.py"
    assert "tests/test_client.py" in [h.path for h in asked.hits[:2]]


def test_candidates_are_other_files_than_the_snippets_and_point_at_real_lines(repo):
    resp = repo.search("Fix retry policy backoff delays when retries is zero", k=1)
    assert len(resp.hits) == 1 and resp.candidates
    shown = {h.path for h in resp.hits}
    assert not shown & {c.path for c in resp.candidates}
    assert len({c.path for c in resp.candidates}) == len(resp.candidates)  # one pointer per file
    for c in resp.candidates:
        lines = (repo.root / c.path).read_text().splitlines()
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert 0 < c.score <= 1


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_pointers_never_make_the_answer_longer_than_k_full_results(repo):
    from hippo.retrieval.search import RESULT_SLOT_CHARS, _pointers_cost

    for k, budget in ((1, 300), (2, 500), (8, 8000)):
        resp = repo.search("retry policy backoff delays", k=k, budget_chars=budget)
        spent = sum(len(h.snippet) for h in resp.hits) + _pointers_cost(resp.candidates)
        assert spent <= budget + RESULT_SLOT_CHARS * (k - len(resp.hits))
        if resp.hits:  # an unused result slot is worth at least the XML one result adds besides its snippet
            one = len(to_xml(SearchResponse(query="", hits=resp.hits[:1]))) - len(to_xml(SearchResponse(query="")))
            assert one - len(resp.hits[0].snippet) > RESULT_SLOT_CHARS


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_late_repeat_blocks_make_room_for_pointers_but_the_first_five_stay():
    from hippo.retrieval.filerank import FileEvidence
    from hippo.retrieval.results import Hit
    from hippo.retrieval.search import PROTECTED_HITS, _make_room_for_pointers

    def hit(i: int, path: str) -> Hit:
        return Hit(id=str(i), path=path, start_line=i * 10 + 1, end_line=i * 10 + 9, language="python",
                   score=0.9, snippet="x" * 1000)

    hits = [hit(i, "rich/progress.py") for i in range(8)]
    others = [FileEvidence(path=f"rich/m{i}.py", score=0.5, best={"start_line": 1, "end_line": 5, "symbol": ""},
                           best_final=0.5, chunks=1) for i in range(6)]
    files = [FileEvidence(path="rich/progress.py", score=0.9, best={"start_line": 1, "end_line": 9},
                          best_final=0.9, chunks=8), *others]
    kept = _make_room_for_pointers(hits, files, k=8, budget=8000)
    assert PROTECTED_HITS <= len(kept) < 8
    assert kept == hits[: len(kept)]  # the best blocks stay, in order
    # distinct files are never dropped, however many pointers are waiting
    distinct = [hit(i, f"rich/d{i}.py") for i in range(8)]
    assert _make_room_for_pointers(distinct, files, k=8, budget=8000) == distinct


def test_a_change_request_makes_room_for_pointers_up_to_the_files_it_may_name():
    """A change request's answer is files: late repeat blocks give way until the files named reach
    MAX_FILES_NAMED, not just MIN_POINTERS pointers (got's "Remove promise cancel API": five blocks of
    index.ts left room for four pointers; create.ts and types.ts, both changed, came next)."""
    from hippo.retrieval.filerank import FileEvidence
    from hippo.retrieval.results import Hit
    from hippo.retrieval.search import (
        MAX_FILES_NAMED,
        MIN_POINTERS,
        PROTECTED_HITS,
        _allowance,
        _candidates,
        _make_room_for_pointers,
        _pointers_cost,
    )

    hits = [Hit(id=str(i), path="src/core.ts" if i != 1 else "src/options.ts", start_line=i * 50 + 1,
                end_line=i * 50 + 40, language="typescript", score=0.9, snippet="x" * 950) for i in range(8)]
    files = [FileEvidence(path="src/core.ts", score=0.9, best={"start_line": 1, "end_line": 9}, best_final=0.9,
                          chunks=7),
             FileEvidence(path="src/options.ts", score=0.8, best={"start_line": 51, "end_line": 90}, best_final=0.8,
                          chunks=1),
             *[FileEvidence(path=f"src/part{i}.ts", score=0.6 - i * 0.01, best={"start_line": 1, "end_line": 5,
                                                                                "symbol": ""}, best_final=0.5, chunks=1)
               for i in range(12)]]
    plain = _make_room_for_pointers(hits, files, k=8, budget=8000)
    change = _make_room_for_pointers(hits, files, k=8, budget=8000, files_named=MAX_FILES_NAMED)
    assert PROTECTED_HITS <= len(change) < len(plain) and change == hits[: len(change)]
    want = _candidates(files, {"src/core.ts", "src/options.ts"})[: MAX_FILES_NAMED - 2]
    assert len(want) > MIN_POINTERS and _pointers_cost(want) <= _allowance(change, 8, 8000)
    assert _pointers_cost(want) > _allowance(plain, 8, 8000)
