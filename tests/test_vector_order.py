"""Vectors where they matter first: a build embeds recently changed source, then other source, then tests,
then docs, so a stopped or still-running build has its vectors where the user works."""
from __future__ import annotations

from fake_embedder import FakeEmbedder
from hippo.core import gitutil
from hippo.index.indexer import index_repo, vector_priority
from repo_helpers import git


def _module(name: str, n: int) -> str:
    """`n` functions of 30 lines: one chunk each."""
    body = "".join(f"    step_{j} = value * {j} + {len(name)}\n" for j in range(28))
    return "\n\n".join(f"def {name}_{i}(value):\n{body}    return step_27\n" for i in range(n))


def test_chunks_are_embedded_in_priority_order(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files = {f"src/cold_{i}.py": _module(f"cold{i}", 4) for i in range(30)}
    files |= {f"tests/test_{i}.py": _module(f"test{i}", 4) for i in range(30)}
    files |= {f"docs/page_{i}.md": "\n\n".join(f"## Part {j}\n\n" + f"Text {j} of page {i}. " * 60 for j in range(4))
              for i in range(30)}
    files["src/hot.py"] = _module("hot", 4)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    (root / "src/hot.py").write_text(_module("hot", 5))
    git(root, "commit", "-q", "-am", "work on hot")
    monkeypatch.setattr(gitutil, "RECENT_COMMITS", 1)

    from hippo.index.store import Store

    order: list[str] = []
    real = Store.update_vectors

    def recording(self, rows):
        order.extend(r["path"] for r in rows)
        return real(self, rows)

    monkeypatch.setattr(Store, "update_vectors", recording)
    index_repo(root, embedder=FakeEmbedder())
    tiers = [vector_priority(p, p == "src/hot.py") for p in order]
    assert len(order) > 256 and tiers == sorted(tiers), "embedded out of priority order"
    assert order[0] == "src/hot.py"
    first_tenth = order[: len(order) // 10]
    assert all(p.startswith("src/") for p in first_tenth)


def test_priority_of_paths():
    assert vector_priority("src/app.py", True) < vector_priority("src/app.py", False)
    assert vector_priority("src/app.py", False) < vector_priority("tests/test_app.py", False)
    assert vector_priority("tests/test_app.py", True) < vector_priority("docs/guide.md", True)
    assert vector_priority("examples/demo.py", True) == vector_priority("README.md", False)
