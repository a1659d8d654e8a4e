"""Issue 19 part 3: a real git repository planted with >= 150 secrets of >= 50 kinds (fixtures/trust/
planted_secrets.py) in code, config, docs, commit messages, a branch name, file names and failed-command
output. After `hippo index`, no secret (nor any 12-character window of its random part) may be:

- stored: in any byte of any file under the index directory (LanceDB tables, FTS index, state.json, logs);
- shown: by search in every format, the CLI, MCP `search_codebase`, `/rag`, `hippo status` (text, JSON);
- injected: by the SessionStart hook (every source) or the failure hook (outputs that carry the secrets).

Figures go to $HIPPO_TRUST_REPORT when set (for docs/reliability.md).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
from planted_secrets import WINDOW, Corpus, Planted, build  # noqa: E402
from trustkit import (  # noqa: E402
    check_hook_output,
    failure_payload,
    git,
    hippo_in_process,
    record_figures,
    session_payload,
)

QUERIES = [("api token secret key client", ["token", "api_key"]), ("password database url", ["password"]),
           ("private key deploy tls", ["PRIVATE KEY", "deploy_key"]), ("curl authorization header", ["curl", "Api-Key"]),
           ("vault shopify digitalocean telegram", ["VAULT_TOKEN", "SHOPIFY"]),
           ("grafana twilio sentry config", ["grafana", "sentry"]), ("kubeconfig client key data", ["client-key-data"]),
           ("netrc machine login", ["machine", "login"]), ("customer export vault approle key notes", ["Rotated"]),
           ("service account json private_key_id", ["private_key_id"]), ("npmrc authToken pypirc", ["_authToken"]),
           ("webhook signing session secret", ["secret"]), ("release signing key bitbucket", ["Bitbucket"])]


_GRAMS: dict[int, tuple[list[Planted], dict[str, set[int]], re.Pattern[str]]] = {}  # (the list kept alive: ids stay unique)


def _grams(secrets: list[Planted]) -> tuple[dict[str, set[int]], re.Pattern[str]]:
    """Every lower-cased 12-character window -> the secrets holding it, and a pattern for the runs of
    characters such windows are made of."""
    if id(secrets) not in _GRAMS:
        grams: dict[str, set[int]] = {}
        for n, p in enumerate(secrets):
            for w in p.windows():
                grams.setdefault(w.lower(), set()).add(n)
        chars = sorted({c for g in grams for c in g})
        _GRAMS[id(secrets)] = secrets, grams, re.compile(f"[{re.escape(''.join(chars))}]{{{WINDOW},}}")
    _, grams, runs = _GRAMS[id(secrets)]
    return grams, runs


def leaks(text: str | bytes, secrets: list[Planted]) -> list[str]:
    """`n:kind@where` of every planted secret (n: its number) with any 12-character window of its random
    part in `text`, compared lower-cased (the FTS index stores lower-cased terms)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    grams, runs = _grams(secrets)
    found: set[int] = set()
    for m in runs.finditer(text.lower()):
        run = m.group(0)
        found.update(n for i in range(len(run) - WINDOW + 1) for n in grams.get(run[i:i + WINDOW], ()))
    return [f"{n}:{secrets[n].kind}@{secrets[n].where}" for n in sorted(found)]


def make_repo(root: Path, corpus: Corpus) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    *committed, untracked = corpus.token_files  # one token-named file stays untracked (SessionStart lists those)
    for rel, text in {**corpus.files, **corpus.token_files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", *corpus.files, *committed)
    git(root, "commit", "-q", "-m", "initial import")
    git(root, "checkout", "-q", "-b", corpus.branch)
    for i, message in enumerate(corpus.commits):
        (root / "NOTES.md").write_text(f"# Notes\n\nstep {i}\n", encoding="utf-8")
        git(root, "add", "NOTES.md")
        git(root, "commit", "-q", "-m", message)
    (root / "src/app/clients.py").write_text(corpus.files["src/app/clients.py"] + "\n# touched\n", encoding="utf-8")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    corpus = build()
    root = tmp_path_factory.mktemp("planted") / "repo"
    make_repo(root, corpus)
    proc = hippo_in_process(["index"], root)
    assert proc.returncode == 0, proc.stderr
    return root, corpus, (proc.stdout + proc.stderr).decode()


def test_corpus_is_big_varied_and_everywhere():
    corpus = build()
    assert len(corpus.secrets) >= 150 and len(corpus.kinds()) >= 50
    assert {p.where for p in corpus.secrets} == {"code", "config", "docs", "commit", "branch", "filename", "output"}
    assert build().secrets == corpus.secrets  # deterministic
    for p in corpus.secrets:
        assert p.windows(), p.kind


def test_nothing_stored(planted):
    from hippo.index.state import load_state

    root, corpus, _ = planted
    idx = root / ".hippo"
    state = load_state(idx)
    # the files were indexed (redacted), not skipped: the check is about redaction
    assert set(corpus.files) <= set(state.files), sorted(set(corpus.files) - set(state.files))
    found = {}
    for p in sorted(idx.rglob("*")):
        if p.is_file():
            hit = leaks(p.read_bytes(), corpus.secrets)
            if hit:
                found[str(p.relative_to(idx))] = hit
    stored = sorted({k for hit in found.values() for k in hit})
    record_figures(planted=len(corpus.secrets), kinds=len(corpus.kinds()), stored=len(stored), stored_kinds=stored)
    assert found == {}


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_nothing_shown(planted):
    from fake_embedder import FakeEmbedder
    from hippo.retrieval.render import to_json, to_text, to_xml
    from hippo.retrieval.search import Searcher
    from hippo.surfaces.hooks.prompt_expansion import rag_context
    from hippo.surfaces.mcp_server import SearchService, call_tool

    root, corpus, index_output = planted
    s = Searcher(root, embedder=FakeEmbedder())
    svc = SearchService(root, lambda r: Searcher(r, embedder=FakeEmbedder()))
    outs: list[str] = [index_output]
    for q, kws in QUERIES:
        for exact in (False, True):
            resp = s.search(q, keywords=kws, exact=exact, k=50, budget_chars=200_000)
            outs += [render(resp) for render in (to_xml, to_json, to_text)]
            text, is_error = call_tool(svc, "search_codebase", {"query": q, "keywords": kws,
                                                                 "requires_exact_match": exact})
            assert not is_error
            outs.append(text)
        outs.append(rag_context(root, f"{q} --k 20", searcher=s))
    for fmt in ("text", "xml", "json"):
        cli = hippo_in_process(["search", "token secret key password", "-w", "token", "--k", "50", "--format", fmt], root)
        assert cli.returncode == 0
        outs.append(cli.stdout.decode())
    for args in (["status"], ["status", "--json"]):
        cli = hippo_in_process(args, root)
        assert cli.returncode == 0
        outs.append(cli.stdout.decode() + cli.stderr.decode())
    assert "[REDACTED:" in "\n".join(outs)  # planted chunks were shown at all, redacted
    shown = sorted(set(leaks("\n".join(outs), corpus.secrets)))
    record_figures(shown_outputs=len(outs), shown=len(shown), shown_kinds=shown)
    assert shown == []


def test_nothing_injected(planted, tmp_path):
    root, corpus, _ = planted
    home = {"HIPPO_HOME": str(tmp_path / "home")}
    outs = []
    for source in ("startup", "compact", "resume", "clear"):
        data = check_hook_output(hippo_in_process(["hook", "session-start"], root, stdin=session_payload(root, source),
                                                  extra_env=home))
        outs.append(json.dumps(data or {}, ensure_ascii=False))
    assert "<recent_changes>" in outs[0] and "<commit" in outs[0] and "<uncommitted" in outs[0]  # shown at all
    answered = 0
    for i, err in enumerate(corpus.outputs):
        payload = failure_payload(root, err.replace("{root}", str(root)), session=f"f{i}")
        data = check_hook_output(hippo_in_process(["hook", "tool-failure"], root, stdin=payload, extra_env=home))
        answered += data is not None
        outs.append(json.dumps(data or {}, ensure_ascii=False))
    assert answered  # the failure hook answered at least once (it read the live files)
    injected = sorted(set(leaks("\n".join(outs), corpus.secrets)))
    record_figures(hook_outputs=len(outs), failure_answers=answered, injected=len(injected), injected_kinds=injected)
    assert injected == []


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6, 7, 8])
def test_other_seeds_leave_nothing(seed):
    """The same corpus with other random values, through redact/redact_name directly (no index): the rules
    hold for the formats, not for one draw of values."""
    from hippo.core.secrets import redact, redact_name

    corpus = build(seed)
    out = [redact(t)[0] for t in [*corpus.files.values(), *corpus.commits, *corpus.outputs]]
    out += [redact_name(n) for n in [corpus.branch, *corpus.token_files]]
    assert leaks("\n".join(out), corpus.secrets) == []
