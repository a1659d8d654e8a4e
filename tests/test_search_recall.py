"""Recall for code questions: definitions whose names carry the question's words become candidates
(retrieval/namematch.py), and file ranking lifts the best file's co-change partners and call-graph
neighbours (filerank.Neighbours, index/cochange.py's source partners)."""
from __future__ import annotations

from fake_embedder import FakeEmbedder
from hippo.index import cochange
from hippo.index.indexer import index_repo
from hippo.retrieval import rankpolicy
from hippo.retrieval.filerank import Neighbours, rank_files
from hippo.retrieval.namematch import NameIndex, question_words, same_word
from hippo.retrieval.search import Searcher
from repo_helpers import git, write_files


def test_words_match_on_a_shared_head():
    assert same_word("proxies", "proxy") and same_word("decoder", "decoded") and same_word("suggest", "suggestions")
    assert not same_word("time", "tim") and not same_word("parse", "part") and not same_word("args", "arguments")
    assert question_words("how does the progress bar estimate the remaining time") == [
        "progress", "bar", "estimate", "remaining", "time"]


def test_names_carrying_the_question_words_come_first():
    index = NameIndex.build(["time_remaining", "get_time", "Progress", "remaining", "track", "_calculate_column_widths",
                             "get_environment_proxies", "column", "render", "time_elapsed", "Timer"])
    best = [n for n, _s, _t in index.best("how does the progress bar estimate the remaining time", 4)]
    assert best[0] == "time_remaining" and "track" not in best and "time_elapsed" not in best
    assert index.best("how are table column widths calculated", 1)[0][0] == "_calculate_column_widths"
    assert index.best("read proxy settings from environment variables", 1)[0][0] == "get_environment_proxies"
    assert index.best("how does it work", 5) == []  # nothing but question words


ESTIMATE = '''class Task:
    def __init__(self, total):
        self.total = total
        self.completed = 0
        self.rate = 0.0

    def time_remaining(self):
        if not self.rate:
            return None
        return (self.total - self.completed) / self.rate
'''

GUIDE = """# Progress bars, part {n}

The progress bar shows an estimate of the remaining time. The estimate of the remaining time on the
progress bar comes from the speed of the task; the remaining time estimate of a progress bar is hidden
until the first update. Progress bar, remaining time, estimate.
"""


def test_a_definition_named_by_the_question_becomes_a_candidate(git_repo):
    """Prose that repeats the question's words fills every full-text and vector slot; the method whose
    name carries them (inside its class's chunk) is found through the code graph's definitions and named
    in the answer."""
    files = {"pkg/progress.py": ESTIMATE, **{f"docs/guide{n}.md": GUIDE.format(n=n) for n in range(70)}}
    root = git_repo(files)
    index_repo(root, embedder=FakeEmbedder())
    resp = Searcher(root, embedder=FakeEmbedder()).search("how does the progress bar estimate the remaining time")
    named = [h.path for h in resp.hits] + [c.path for c in resp.candidates]
    assert "pkg/progress.py" in named, named


def test_a_reworded_statement_gets_no_name_matches(git_repo, monkeypatch):
    """Name matching is for questions about code; a statement ("the remaining time estimate is hidden until the
    first update") is answered by its text, and name matches there outranked it (bench/quality's spec rows)."""
    root = git_repo({"pkg/progress.py": ESTIMATE, "docs/guide0.md": GUIDE.format(n=0)})
    index_repo(root, embedder=FakeEmbedder())
    searcher = Searcher(root, embedder=FakeEmbedder())
    asked: list[str] = []
    real = Searcher._fuse_named
    monkeypatch.setattr(Searcher, "_fuse_named", lambda self, cands, q, pred: (asked.append(q), real(self, cands, q, pred)))
    searcher.search("the remaining time estimate is hidden until the first update")
    assert asked == []
    searcher.search("how does the progress bar estimate the remaining time")
    assert len(asked) == 1


def test_source_files_changed_together_are_recorded_and_bounded(git_repo, monkeypatch):
    monkeypatch.setattr(cochange, "MAX_PARTNERS", 2)
    root = git_repo({"src/a.py": "a = 1\n", "src/b.py": "b = 1\n", "src/c.py": "c = 1\n", "src/d.py": "d = 1\n",
                     "README.md": "# r\n"})
    for n, group in enumerate([("a", "b"), ("a", "b"), ("a", "c"), ("a", "d"), ("a", "b", "c")]):
        write_files(root, {f"src/{x}.py": f"{x} = {n + 2}\n" for x in group} | {"README.md": f"# r{n}\n"})
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"change {n}")
    (root / ".hippo").mkdir()
    cochange.update(root, root / ".hippo", git(root, "rev-parse", "HEAD").strip())
    data = cochange.load(root / ".hippo")
    assert data["with"]["src/a.py"] == {"src/b.py": 4, "src/c.py": 3}  # d (2 commits) pruned; docs never a partner
    assert data["with"]["src/b.py"]["src/a.py"] == 4 and "README.md" not in data["with"]


def _row(path: str, start: int = 1) -> dict:
    return {"path": path, "start_line": start, "end_line": start + 5, "symbol": ""}


def test_file_ranking_lifts_the_best_files_partners_and_graph_neighbours(monkeypatch):
    monkeypatch.setattr(rankpolicy, "GRAPH_LINK", 0.15)  # off by default (no effect on the tuning split)
    scored = [(_row("src/client.py"), 1.0), (_row("src/noise.py"), 0.5), (_row("src/models.py"), 0.45),
              (_row("src/urls.py"), 0.44)]
    plain = [f.path for f in rank_files(scored, {"redirect"}, "follow redirects")]
    assert plain == ["src/client.py", "src/noise.py", "src/models.py", "src/urls.py"]
    nb = Neighbours(cochange={"src/client.py": {"src/models.py": 5, "src/config.py": 3, "src/once.py": 1}},
                    linked=lambda row: {"src/urls.py"} if row["path"] == "src/client.py" else set())
    lifted = [f.path for f in rank_files(scored, {"redirect"}, "follow redirects", nb)]
    assert lifted[:3] == ["src/client.py", "src/models.py", "src/urls.py"]
    assert "src/config.py" in lifted and "src/once.py" not in lifted  # a partner with no chunk joins; one commit is chance
    many = Neighbours(linked=lambda row: {f"src/m{i}.py" for i in range(rankpolicy.GRAPH_MAX_FILES + 1)} | {"src/urls.py"})
    assert [f.path for f in rank_files(scored, {"redirect"}, "follow redirects", many)] == plain


def test_a_record_an_older_hippo_wrote_is_rebuilt_on_the_next_run(git_repo):
    """A cochange.json of VERSION 1 (no source partners) is replaced by the next index run, even one with no
    new commit, so file ranking and the failure diagnosis do not wait for the next commit."""
    import json

    root = git_repo({"src/a.py": "a = 1\n", "src/b.py": "b = 1\n", "tests/test_a.py": "def test_a():\n    pass\n"})
    index_repo(root, embedder=FakeEmbedder())
    path = root / ".hippo" / "cochange.json"
    path.write_text(json.dumps({"v": 1, "head": git(root, "rev-parse", "HEAD").strip(), "commits": 1,
                                "pairs": {}, "last": {}}, separators=(",", ":")))
    assert not cochange.is_current(root / ".hippo")
    index_repo(root, embedder=FakeEmbedder())
    data = cochange.load(root / ".hippo")
    assert cochange.is_current(root / ".hippo") and data["with"]["src/a.py"] == {"src/b.py": 1}


def test_closest_name_is_difflibs_answer_from_fewer_names():
    """The nearest-name fallback asks difflib only about names of a length that can reach the cutoff:
    the same answer as asking about every name."""
    import difflib
    import random

    from hippo.retrieval.namematch import closest_name

    rng = random.Random(5)
    letters = "abcdeXY_"
    names = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(1, 14))) for _ in range(800)})
    for _ in range(150):
        name = "".join(rng.choice(letters) for _ in range(rng.randint(1, 14)))
        full = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
        assert closest_name(name, names) == (full[0] if full else None), name
    assert closest_name("anything", []) is None


RETRY = '''def send_request(url, retries):
    """Send the request, retrying on a dropped connection."""
    for attempt in range(retries):
        try:
            return connect(url)
        except ConnectionError:
            continue
    raise ConnectionError(url)
'''


def test_a_change_request_lists_the_best_files_co_change_partners(git_repo):
    """A change request's answer is files: a file that changed with the best one in past commits is listed
    though its own chunk barely matches (its score, rankpolicy.COCHANGE of the best file's at most, is under the
    floor other questions keep); a partner deleted since is not."""
    noise = {f"src/mod{n}.py": f"def helper_{n}(value):\n    return value * {n}\n" for n in range(12)}
    root = git_repo({"src/client.py": RETRY, "src/settings.py": "LIMITS = {'pool': 10}\n",
                     "src/legacy.py": "OLD = 1\n", **noise})
    for n in range(2):
        write_files(root, {"src/client.py": RETRY + f"\nVERSION = {n}\n",
                           "src/settings.py": f"LIMITS = {{'pool': {n + 11}}}\n", "src/legacy.py": f"OLD = {n}\n"})
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"change {n}")
    git(root, "rm", "-q", "src/legacy.py")
    git(root, "commit", "-q", "-m", "drop legacy")
    index_repo(root, embedder=FakeEmbedder())
    searcher = Searcher(root, embedder=FakeEmbedder())
    change = searcher.search("Add a backoff between send_request retries on dropped connections")
    listed = [h.path for h in change.hits] + [c.path for c in change.candidates]
    assert listed[0] == "src/client.py" and "src/settings.py" in listed, (listed, change.candidates)
    assert "src/legacy.py" not in listed
    question = searcher.search("where are send_request retries on dropped connections handled")
    assert "src/settings.py" not in [h.path for h in question.hits] + [c.path for c in question.candidates], question.candidates
