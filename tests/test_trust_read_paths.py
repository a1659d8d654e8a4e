"""Every path that reads a repository file applies the same gate (issue 12, item 4): SessionStart spec
files, the live-file check of search and failure-hook results, hippo.toml and .hippoignore. A repo's
`spec_globs` cannot pull .env, .git-credentials, keys or gitignored files into Claude's context, and no
reader follows a symlink out of the repo or blocks on a FIFO.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
from trustkit import check_hook_output, failure_payload, git, hippo, make_repo, session_payload, traceback_error  # noqa: E402

from fake_embedder import SPEC as FAKE  # noqa: E402
from fake_embedder import FakeEmbedder  # noqa: E402
from hippo.core.config import Settings  # noqa: E402
from hippo.core.repo_read import RefusedRead, RepoReader, read_regular  # noqa: E402
from hippo.retrieval.search import Searcher  # noqa: E402

HOOK_TIMEOUT = 60  # a reader blocked on a FIFO never returns; this turns that into a failure


def _doc(marker: str) -> str:
    return (f"# Guide\n\n## Code style\n\nFunctions use snake_case names and four-space indents; the words {marker} "
            "appear in this file and nowhere else in the repo.\n")


# Files a hostile hippo.toml points spec_globs at; none may reach the SessionStart context.
PLANTED = {
    ".env": "zebra-env-marker",
    ".env.local": "zebra-envlocal-marker",
    ".git-credentials": "zebra-gitcred-marker",
    "server.pem": "zebra-pem-marker",
    "id_rsa": "zebra-idrsa-marker",
    "deploy/prod.key": "zebra-key-marker",
    ".netrc": "zebra-netrc-marker",
    "notes/private.md": "zebra-gitignored-marker",  # .gitignore: notes/
    "docs/internal.md": "zebra-hippoignored-marker",  # .hippoignore
    "docs/huge.md": "zebra-huge-marker",  # over the size cap
}


@pytest.fixture
def spec_repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, marker in PLANTED.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(_doc(marker) * (4000 if rel == "docs/huge.md" else 1))
    (root / ".gitignore").write_text("notes/\n")
    (root / ".hippoignore").write_text("docs/internal.md\n")
    (root / "README.md").write_text(_doc("zebra-readme-visible"))
    (root / "docs" / "guide.md").write_text(_doc("zebra-guide-visible"))
    outside = tmp_path / "outside.md"
    outside.write_text(_doc("zebra-outside-marker"))
    os.symlink(outside, root / "docs" / "linked.md")
    (root / "hippo.toml").write_text(
        'spec_globs = [".env", ".env.*", ".git-credentials", "*.pem", "id_rsa", "deploy/*", ".netrc", '
        '"notes/*", "docs/*.md", "README*", ".git/config", "docs/fifo.md"]\n'
        "max_file_bytes = 100000\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "specs")
    os.mkfifo(root / "docs" / "fifo.md")  # opening it for reading would block the hook forever
    return root


def _session_context(root: Path, tmp_path: Path) -> str:
    proc = hippo(["hook", "session-start"], root, stdin=session_payload(root, "startup"), timeout=HOOK_TIMEOUT,
                 extra_env={"HIPPO_HOME": str(tmp_path / "home")})
    data = check_hook_output(proc)
    assert data is not None
    return data["hookSpecificOutput"]["additionalContext"]


def test_session_start_spec_globs_cannot_pull_secrets_or_ignored_files(spec_repo, tmp_path):
    ctx = _session_context(spec_repo, tmp_path)
    assert "zebra-readme-visible" in ctx and "zebra-guide-visible" in ctx
    leaked = [m for m in [*PLANTED.values(), "zebra-outside-marker"] if m in ctx]
    assert leaked == []


def test_session_start_default_globs_skip_gitignored_docs(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "docs" / "development" / "private").mkdir(parents=True)  # contributor docs (the rest of docs/ is for users)
    (root / "docs" / "development" / "guide.md").write_text(_doc("zebra-guide-visible"))
    (root / "docs" / "development" / "private" / "notes.md").write_text(_doc("zebra-private-notes"))  # docs/**/*.md
    (root / ".gitignore").write_text("docs/development/private/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "docs")
    ctx = _session_context(root, tmp_path)
    assert "zebra-guide-visible" in ctx and "zebra-private-notes" not in ctx


def test_reader_refusals_name_the_reason(spec_repo):
    reader = RepoReader(spec_repo, Settings(max_file_bytes=100_000))
    got = reader.refusals([".env", ".git-credentials", "server.pem", "id_rsa", "notes/private.md",
                           "docs/internal.md", ".git/config", ".hippo/state.json", "../outside.md",
                           "/etc/passwd", "README.md", "docs/guide.md", ".env.example"])
    assert got == {".env": "secret", ".git-credentials": "secret", "server.pem": "secret", "id_rsa": "secret",
                   "notes/private.md": "ignored", "docs/internal.md": "ignored", ".git/config": "ignored",
                   ".hippo/state.json": "ignored", "../outside.md": "outside_root", "/etc/passwd": "outside_root"}
    assert reader.read_text("README.md").startswith("# Guide")
    for rel in ("docs/linked.md", "docs/fifo.md", "docs/huge.md", "docs/missing.md"):
        assert reader.read_bytes(rel) is None, rel


def test_read_regular_refuses_links_fifos_and_big_files(tmp_path):
    (tmp_path / "f").write_text("abc")
    os.symlink(tmp_path / "f", tmp_path / "l")
    os.mkfifo(tmp_path / "p")
    assert read_regular(tmp_path / "f", 10) == b"abc"
    for name, reason in (("l", "symlink"), ("p", "not_a_file")):
        with pytest.raises(RefusedRead) as exc:
            read_regular(tmp_path / name, 10)
        assert exc.value.reason == reason
    with pytest.raises(RefusedRead) as exc:
        read_regular(tmp_path / "f", 2)
    assert exc.value.reason == "too_large"
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "absent", 10)


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_hippoignore_fifo_does_not_block_indexing(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("def f():\n    return 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a")
    os.mkfifo(root / ".hippoignore")
    proc = hippo(["index"], root, timeout=HOOK_TIMEOUT)
    assert proc.returncode == 0, proc.stderr.decode()


# --- live-file reads of search and failure-hook results -------------------------------------------
@pytest.fixture
def indexed(tmp_path):
    root = make_repo(tmp_path / "repo", files=12, docs=1)
    assert hippo(["index"], root).returncode == 0
    return root


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_search_live_check_does_not_follow_a_link_out_of_the_repo(indexed, tmp_path):
    rel = "pkg/sub3/mod_3.py"
    outside = tmp_path / "outside.py"
    outside.write_bytes((indexed / rel).read_bytes())  # the same bytes: a followed link would look fresh
    (indexed / rel).unlink()
    os.symlink(outside, indexed / rel)
    resp = Searcher(indexed, embedder=FakeEmbedder()).search("compute_3_0", keywords=["compute_3_0"], exact=True)
    assert resp.meta["total_hits"] and not [h for h in resp.hits if h.path == rel]  # found, not read via the link


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_search_and_failure_hook_do_not_block_on_a_fifo(indexed, tmp_path):
    rel = "pkg/sub5/mod_5.py"
    (indexed / rel).unlink()
    os.mkfifo(indexed / rel)
    proc = hippo(["search", "compute_5_0", "-w", "compute_5_0", "--exact", "--format", "json"], indexed,
                 timeout=HOOK_TIMEOUT)
    assert proc.returncode in (0, 1), proc.stderr.decode()  # 1: no results (the only hits were the FIFO's)
    out = json.loads(proc.stdout)
    assert out["meta"]["total_hits"] and not [h for h in out["results"] if h["path"] == rel]  # never read: dropped
    out = check_hook_output(hippo(["hook", "tool-failure"], indexed, timeout=HOOK_TIMEOUT,
                                  stdin=failure_payload(indexed, traceback_error(indexed, 5)),
                                  extra_env={"HIPPO_HOME": str(tmp_path / "home")}))
    # The failure hook injects live text only (issue 13): a file it cannot read is dropped, never shown stale.
    ctx = out["hookSpecificOutput"]["additionalContext"] if out else ""
    assert f"<source_file>{rel}</source_file>" not in ctx


def test_secret_name_lookup_equals_the_globs():
    """is_secret_path (set/prefix/suffix lookups) decides exactly as fnmatch over SECRET_GLOBS would."""
    import fnmatch
    import random

    from hippo.core.repo_read import SECRET_GLOBS, is_secret_path

    deny = [g for g in SECRET_GLOBS if not g.startswith("!")]
    allow = [g[1:] for g in SECRET_GLOBS if g.startswith("!")]

    def reference(name: str) -> bool:
        low = name.lower()
        return any(fnmatch.fnmatchcase(low, g) for g in deny) and not any(fnmatch.fnmatchcase(low, g) for g in allow)

    rng = random.Random(4)
    parts = [g.strip("!").replace("*", "").replace("?", "") for g in SECRET_GLOBS] + ["x", "a.py", "README", ".", "-"]
    names = {"".join(rng.choice(parts) for _ in range(rng.randint(1, 3))) + rng.choice(["", ".bak", ".py", ".PUB", ".json"])
             for _ in range(20_000)}
    assert [n for n in names if is_secret_path(f"d/{n}") != reference(n)] == []


def _capped(code: str, root: Path, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """Python code in a child with 3 GB of address space and a timeout: a reader that loops on /dev/zero
    fails here instead of taking the machine's memory."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, timeout=HOOK_TIMEOUT,
                          input=stdin, preexec_fn=cap, env={**os.environ, "HIPPO_MODEL": FAKE, "HIPPO_NO_BACKGROUND_INDEX": "1",
                                               "HIPPO_NO_SERVER": "1"})


@pytest.mark.parametrize("plant", ["dev-zero", "fifo"])
def test_session_start_memory_file_check_never_blocks_or_reads_out(tmp_path, plant):
    """SessionStart looks for hippo's rules block in CLAUDE.md: a link to /dev/zero (it read until the
    kernel killed it at 20 GB) or a FIFO (it blocked) is skipped, while CLAUDE.md -> AGENTS.md counts."""
    from hippo.surfaces.init_rules import BEGIN_PREFIX

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text(_doc("zebra-readme-visible"))
    if plant == "dev-zero":
        os.symlink("/dev/zero", root / "CLAUDE.md")
    else:
        os.mkfifo(root / "CLAUDE.md")
    check = ("from pathlib import Path; from hippo.surfaces.init_rules import rules_installed; "
             f"print(rules_installed(Path({str(root)!r}), home=Path({str(tmp_path / 'home')!r})))")
    proc = _capped(check, root)
    assert proc.stdout.decode().strip() == "False", proc.stderr.decode()[-500:]
    hook = _capped("from hippo.surfaces.hooks.main import main; main(['session-start'])", root,
                   stdin=session_payload(root, "startup"))
    assert hook.returncode == 0
    assert "zebra-readme-visible" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    os.unlink(root / "CLAUDE.md")
    (root / "AGENTS.md").write_text(f"# Agents\n{BEGIN_PREFIX} -->\n")
    os.symlink("AGENTS.md", root / "CLAUDE.md")
    assert _capped(check, root).stdout.decode().strip() == "True"
