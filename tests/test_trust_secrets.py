"""Planted secrets end to end: index, search output, hook output and MCP output must hold none.

The corpus (test_secrets.planted_corpus, generated from a seeded RNG so no credential-shaped literal is
committed) is spread over code, config, docs (spec files the SessionStart hook reads) and test fixtures,
plus a second seed as CONTRIBUTING.md. Figures (planted/found/leaked, false positives on normal code,
cost per chunk) are written to $HIPPO_TRUST_REPORT when set, for docs/reliability.md.
"""
from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
from trustkit import (  # noqa: E402
    check_hook_output,
    failure_payload,
    git,
    hippo_in_process,
    record_figures,
    session_payload,
)

from fake_embedder import FakeEmbedder  # noqa: E402
from hippo.core.secrets import redact  # noqa: E402
from hippo.retrieval.render import to_json, to_text, to_xml  # noqa: E402
from hippo.retrieval.search import Searcher  # noqa: E402
from hippo.surfaces.mcp_server import SearchService, call_tool  # noqa: E402
from secret_corpora import planted_corpus, planted_gaps  # noqa: E402

PLACES = {"settings.py": "src/app/settings.py", "config.js": "src/web/config.js",
          "docker-compose.yaml": "config/docker-compose.yaml", "README.md": "README.md",
          "tests/fixtures/keys.py": "tests/fixtures/keys.py", "service.json": "config/service.json",
          ".env.production": ".env.production", "main.go": "src/main.go", "config.php": "config/config.php"}
QUERIES = [("aws secret access key settings", ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"]),
           ("slack stripe openai keys config", ["slackToken", "apiKey", "clientSecret"]),
           ("database password environment", ["POSTGRES_PASSWORD", "DATABASE_URL", "dbPassword"]),
           ("private key fixtures", ["RSA_KEY", "PRIVATE KEY"]),
           ("service account json", ["private_key", "sendgrid", "password"]),
           ("authorization bearer token curl", ["Bearer", "OPENAI_API_KEY"]),
           ("php config token", ["db_password", "token"]),
           ("connection string password deploy", ["Password", "PGPASSWORD", "sshpass", "SecretAccessKey", "sig"])]


def _corpus():
    files, secrets = {}, []
    for name, text, planted in planted_corpus(7):
        files[PLACES[name]] = text
        secrets += planted
    for name, text, planted in planted_corpus(11):
        if name == "README.md":  # a second doc the SessionStart hook condenses
            files["CONTRIBUTING.md"] = "# Contributing\n\n## Setup\n\n" + text
            secrets += planted
        elif name == "settings.py":
            files["tests/test_settings_fixture.py"] = text
            secrets += planted
    for name, text, planted in planted_gaps(12):  # the kinds issue 12 found missing
        files[name] = text
        secrets += planted
        if name == "scripts/deploy.sh":  # and the same commands in a doc SessionStart condenses
            files["docs/development/testing.md"] = ("# Testing\n\n## Integration tests\n\nRun them against staging, then "
                                        "check the logs:\n\n```sh\n" + text + "```\n")
    return files, sorted(set(secrets), key=secrets.index)


@pytest.fixture(scope="module")
def secret_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("secrets") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    files, secrets = _corpus()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "config")
    proc = hippo_in_process(["index"], root)
    assert proc.returncode == 0, proc.stderr
    return root, secrets


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s in text]


def test_corpus_is_big_and_varied():
    files, secrets = _corpus()
    kinds = set()
    for text in files.values():
        kinds.update(redact(text)[1])
    assert len(secrets) >= 50 and len(kinds) >= 10, (len(secrets), kinds)
    dirs = {rel.split("/")[0] for rel in files}
    assert {"src", "config", "tests", "README.md", "CONTRIBUTING.md"} <= dirs


def test_no_secret_in_the_stored_index(secret_repo):
    from hippo.index.state import load_state
    from hippo.index.store import Store

    root, secrets = secret_repo
    store = Store(root / ".hippo", load_state(root / ".hippo").dim)
    rows = store.rows(columns=["path", "text", "text_ids", "symbol", "breadcrumb"])
    store.close()
    blob = "\n".join(str(v) for r in rows for v in r.values())
    assert rows and _leaks(blob, secrets) == []
    found = len(re.findall(r"\[REDACTED:[a-z_]+\]", "\n".join(r["text"] for r in rows)))
    # and not in any raw file of the LanceDB directory either (no copy of the text elsewhere)
    raw = b"".join(p.read_bytes() for p in (root / ".hippo").rglob("*") if p.is_file())
    assert [s for s in secrets if s.encode() in raw] == []
    record_figures(secrets_planted=len(secrets), redactions_in_index=found, leaked_index=0,
             files_indexed=len({r["path"] for r in rows}))


def test_no_secret_in_search_or_mcp_output(secret_repo):
    root, secrets = secret_repo
    s = Searcher(root, embedder=FakeEmbedder())
    svc = SearchService(root, lambda r: Searcher(r, embedder=FakeEmbedder()))
    outputs = 0
    for q, kws in QUERIES:
        for exact in (False, True):
            resp = s.search(q, keywords=kws, exact=exact, k=50, budget_chars=200_000)
            for render in (to_xml, to_json, to_text):
                text = render(resp)
                assert _leaks(text, secrets) == [], (q, render.__name__)
            text, is_error = call_tool(svc, "search_codebase", {"query": q, "keywords": kws,
                                                                 "requires_exact_match": exact})
            assert not is_error and _leaks(text, secrets) == []
            outputs += 4
    cli = hippo_in_process(["search", "password token secret key", "-w", "password", "--k", "50", "--format", "text"], root)
    assert cli.returncode == 0 and _leaks(cli.stdout.decode(), secrets) == []
    record_figures(search_outputs_checked=outputs + 1, leaked_search=0, leaked_mcp=0)


def test_no_secret_in_hook_output(secret_repo, tmp_path):
    root, secrets = secret_repo
    home = {"HIPPO_HOME": str(tmp_path / "home")}
    outs = []
    for source in ("startup", "compact", "resume", "clear"):
        data = check_hook_output(hippo_in_process(["hook", "session-start"], root, stdin=session_payload(root, source),
                                       extra_env=home))
        outs.append(json.dumps(data or {}, ensure_ascii=False))
    assert "Using the API" in outs[0]  # the spec files (README, CONTRIBUTING) were condensed at all
    assert "docs/development/testing.md" in outs[0]  # and the doc holding the command-line passwords
    settings = (root / "src/app/settings.py").read_text().splitlines()
    line = next(i for i, text in enumerate(settings, 1) if "def connect" in text)
    err = (f"Exit code 1\nTraceback (most recent call last):\n  File \"{root}/src/app/settings.py\", line {line + 1}, "
           f"in connect\n    return client.login(token=...)\nNameError: name 'client' is not defined\n")
    data = check_hook_output(hippo_in_process(["hook", "tool-failure"], root, stdin=failure_payload(root, err), extra_env=home))
    outs.append(json.dumps(data or {}, ensure_ascii=False))
    blob = "\n".join(outs)
    assert _leaks(blob, secrets) == [], _leaks(blob, secrets)
    record_figures(hook_outputs_checked=len(outs), leaked_hooks=0)


# --- false positives and cost on normal code --------------------------------------------------------
def _normal_corpus() -> list[tuple[str, str]]:
    import click
    import pathspec
    import rich

    import hippo

    out = []
    for pkg in (hippo, click, rich, pathspec):
        for p in sorted(Path(pkg.__file__).parent.rglob("*.py")):
            if "secrets" in p.name:  # hippo's own detector documents token formats
                continue
            out.append((str(p.relative_to(Path(pkg.__file__).parent.parent)), p.read_text(encoding="utf-8", errors="replace")))
    return out


def test_false_positives_and_cost_on_normal_code():
    corpus = _normal_corpus()
    total = sum(len(t) for _, t in corpus)
    hits: list[str] = []
    chunks = 0
    t0 = time.perf_counter()
    for name, text in corpus:
        for i in range(0, len(text), 1500):
            chunks += 1
            out, kinds = redact(text[i:i + 1500])
            if kinds:
                hits += [f"{name}: {line.strip()[:120]}" for line in out.splitlines() if "[REDACTED:" in line]
    per_chunk_us = (time.perf_counter() - t0) / chunks * 1e6
    record_figures(fp_corpus_bytes=total, fp_corpus_files=len(corpus), fp_chunks=chunks, fp_redactions=len(hits),
             fp_samples=hits[:20], redact_us_per_chunk=round(per_chunk_us, 1))
    assert total > 1_000_000
    assert len(hits) <= total / 200_000, hits  # at most one false positive per 200 KB of normal code
