"""A repository's hippo.toml is attacker-controlled (issue 12, item 4): every value is type- and
range-checked, resource settings are clamped, a bad value is one clear line and then the default,
and no path (library, CLI, hooks) ever shows a traceback for it.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "trust"))
from trustkit import check_hook_output, git, hippo, session_payload  # noqa: E402

from hippo.core.config import RULES, Settings, check_settings, load_settings  # noqa: E402

CPUS = os.cpu_count() or 1
HOSTILE = """\
threads = 100000
max_file_bytes = 200000000
budget_chars = 1000000000
default_k = "abc"
index_submodules = "maybe"
spec_globs = [1, 2]
extra_ignores = { a = 1 }
model = "evil/model-from-the-hub"
index_dir = "../elsewhere"
no_such_setting = 1
"""


def _repo(tmp_path: Path, toml: str | bytes, name: str = "hippo.toml") -> Path:
    root = tmp_path / "repo"
    (root / Path(name).parent).mkdir(parents=True, exist_ok=True)
    target = root / name
    target.write_bytes(toml.encode() if isinstance(toml, str) else toml)
    return root


def test_every_setting_has_a_rule():
    assert set(RULES) == {f.name for f in dataclasses.fields(Settings)}


def test_hostile_repo_config_is_clamped_and_defaulted(tmp_path):
    s, problems = check_settings(_repo(tmp_path, HOSTILE), env={})
    d = Settings()
    assert s.threads == CPUS and s.max_file_bytes == 4_000_000
    assert s.budget_chars == 40_000
    assert (s.default_k, s.index_submodules, s.spec_globs, s.extra_ignores) == (
        d.default_k, d.index_submodules, d.spec_globs, d.extra_ignores)
    assert (s.model, s.index_dir) == (d.model, d.index_dir)  # environment-only settings
    assert "hippo.toml: default_k must be an integer 1-50, got 'abc'; using 8" in problems
    assert (f"hippo.toml: threads must be an integer 0-{CPUS} (0 = all cores) in a repository config, "
            f"got 100000; using {CPUS}") in problems
    assert any(p.startswith("hippo.toml: model can only be set by HIPPO_MODEL") for p in problems)
    assert any("unknown setting 'no_such_setting'" in p for p in problems)
    assert len(problems) <= 13 and all("\n" not in p for p in problems)


@pytest.mark.parametrize("name, toml", [
    ("hippo.toml", 'model = "evil_plugin:make"\n'),
    (".hippo/config.toml", '[hippo]\nmodel = "os:system"\n'),
])
def test_a_repo_config_cannot_make_hippo_import_a_module(tmp_path, name, toml):
    """A `module:factory` model imports and runs Python code: only HIPPO_MODEL may name one, never a clone."""
    root = _repo(tmp_path, toml, name)
    s, problems = check_settings(root, env={})
    assert s.model == Settings().model
    assert problems == [f"{name}: model can only be set by HIPPO_MODEL (a repository may not choose it); ignored"]
    s, problems = check_settings(root, env={"HIPPO_MODEL": "fake_embedder:FakeEmbedder"})
    assert s.model == "fake_embedder:FakeEmbedder"  # the environment may


@pytest.mark.parametrize("toml, field, expected", [
    ("threads = true", "threads", 0),  # a bool is not a number of threads
    ("threads = -3", "threads", 0),
    ("default_k = 0", "default_k", 1),
    ("default_k = 3.5", "default_k", 8),
    ("default_k = [1, 2]", "default_k", 8),
    ('default_k = "12"', "default_k", 12),
    ("budget_chars = -5", "budget_chars", 500),
    ("max_file_bytes = 0", "max_file_bytes", 1000),
    ("index_submodules = 1", "index_submodules", False),
    ('index_submodules = "yes"', "index_submodules", True),
    ('spec_globs = "README*"', "spec_globs", ("README*",)),
    ('spec_globs = ["a\\u001b[31m"]', "spec_globs", Settings().spec_globs),
    (f"extra_ignores = {['x'] * 300!r}", "extra_ignores", ()),
    ("[hippo]\ndefault_k = 5", "default_k", 5),
])
def test_each_bad_value_falls_back(tmp_path, toml, field, expected):
    s, problems = check_settings(_repo(tmp_path, toml), env={})
    assert getattr(s, field) == expected
    ok_values = ('default_k = "12"', "[hippo]\ndefault_k = 5", 'index_submodules = "yes"', 'spec_globs = "README*"')
    assert (problems == []) == (toml in ok_values), problems


@pytest.mark.parametrize("content, says", [
    ("threads = [[[", "not valid TOML"),
    (b"threads = \xff\xfe", "not UTF-8"),
    ("hippo = 5", "[hippo] must be a table"),
    ("a = [" * 5000, "not valid TOML"),
    ("# pad\n" * 20000, "larger than"),
])
def test_unusable_config_file_is_one_line_then_defaults(tmp_path, content, says):
    s, problems = check_settings(_repo(tmp_path, content), env={})
    assert s == Settings()
    assert len(problems) == 1 and problems[0].startswith("hippo.toml: ") and says in problems[0], problems


def test_config_file_that_is_a_link_fifo_or_in_a_linked_dir_is_not_read(tmp_path):
    outside = tmp_path / "outside.toml"
    outside.write_text("default_k = 3\n")
    root = tmp_path / "repo"
    root.mkdir()
    os.symlink(outside, root / "hippo.toml")
    s, problems = check_settings(root, env={})
    assert s.default_k == 8 and "symlink" in problems[0]
    os.unlink(root / "hippo.toml")
    os.mkfifo(root / "hippo.toml")  # opening a FIFO for reading would block forever
    s, problems = check_settings(root, env={})
    assert s == Settings() and "not a regular file" in problems[0]
    os.unlink(root / "hippo.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text("default_k = 3\n")
    os.symlink(elsewhere, root / ".hippo")
    s, problems = check_settings(root, env={})
    assert s.default_k == 8 and "outside the repository" in problems[0]


def test_many_bad_keys_give_a_bounded_report(tmp_path):
    toml = "\n".join(f'"bad_{i}\\u001b]0;owned\\u0007" = "\\u001b[2J"' for i in range(1000))
    _, problems = check_settings(_repo(tmp_path, toml), env={})
    assert len(problems) == 13 and problems[-1] == "... and 988 more configuration problems"
    assert not any("\x1b" in p or "\x07" in p for p in problems)  # a repo cannot drive the user's terminal


def test_environment_may_go_wider_but_is_type_checked(tmp_path):
    root = _repo(tmp_path, "threads = 100000\n")
    env = {"HIPPO_THREADS": "64", "HIPPO_MAX_FILE_BYTES": "50000000", "HIPPO_DEFAULT_K": "abc",
           "HIPPO_INDEX_SUBMODULES": "perhaps", "HIPPO_SPEC_GLOBS": "README*, docs/*.md"}
    s, problems = check_settings(root, env=env)
    assert s.threads == 64 and s.max_file_bytes == 50_000_000 and s.default_k == 8
    assert s.spec_globs == ("README*", "docs/*.md") and s.index_submodules is False
    assert "HIPPO_DEFAULT_K: default_k must be an integer 1-50, got 'abc'; using 8" in problems
    assert any(p.startswith("HIPPO_INDEX_SUBMODULES: ") for p in problems)
    s, problems = check_settings(root, env={"HIPPO_THREADS": "100000"})
    assert s.threads == 512 and problems[-1].endswith("got '100000'; using 512")


def test_each_problem_is_reported_once_per_process(tmp_path):
    root = _repo(tmp_path, 'default_k = "once-only-marker"\n')
    seen: list[str] = []
    for _ in range(3):
        load_settings(root, env={}, warn=seen.append)
    assert len([p for p in seen if "once-only-marker" in p]) == 1


VALUES = st.recursive(
    st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=30)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
@hsettings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(RULES)), VALUES, max_size=6))
def test_any_toml_value_gives_valid_settings(table):
    import tempfile

    from hippo.core.config import _read_config_file  # noqa: F401  (the file path is exercised above)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "hippo.toml").write_text(_toml_dump(table), encoding="utf-8")
        s, problems = check_settings(root, env={})
    assert 0 <= s.threads <= CPUS and 1_000 <= s.max_file_bytes <= 4_000_000
    assert 500 <= s.budget_chars <= 40_000 and 1 <= s.default_k <= 50
    assert isinstance(s.index_submodules, bool)
    assert all(isinstance(g, str) and g for g in s.spec_globs + s.extra_ignores)
    assert (s.model, s.index_dir, s.shared_index) == (Settings().model, "", "")
    assert all(isinstance(p, str) and "\n" not in p for p in problems)


def _toml_dump(table: dict) -> str:
    """Enough TOML for the property test: inline values only (json strings are valid TOML strings)."""
    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v) if not isinstance(v, float) or v == v and abs(v) != float("inf") else "0"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return "{" + ", ".join(f"{json.dumps(k)} = {val(x)}" for k, x in v.items()) + "}"
    return "".join(f"{k} = {val(v)}\n" for k, v in table.items())


# --- the same config through the real entry points -------------------------------------------------
@pytest.fixture
def hostile_repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "hippo.toml").write_text(HOSTILE)
    (root / "README.md").write_text("# Demo\n\n## Testing\n\nRun `pytest -q` before pushing any change.\n")
    (root / "app.py").write_text("def main():\n    return 42\n")
    (root / "big.py").write_text("x = 1\n" * 900_000)  # 5.4 MB: above the clamped 4 MB cap
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile config")
    return root


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_cli_says_one_line_per_problem_and_applies_the_clamps(hostile_repo):
    proc = hippo(["index"], hostile_repo)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert err.count("hippo: hippo.toml: default_k must be an integer 1-50, got 'abc'; using 8") == 1
    dry = hippo(["index", "--dry-run"], hostile_repo)
    assert dry.returncode == 0 and "1 over 4 MB" in dry.stdout.decode()  # big.py: 200 MB cap refused
    search = hippo(["search", "main", "--format", "json"], hostile_repo)
    assert search.returncode == 0 and "Traceback" not in search.stderr.decode()
    assert json.loads(search.stdout)["results"]


@pytest.mark.slow  # real processes or a big index: `make check` runs it, `make test-fast` skips it
def test_hooks_log_the_problem_and_still_answer(hostile_repo, tmp_path):
    home = {"HIPPO_HOME": str(tmp_path / "home")}
    assert hippo(["index"], hostile_repo).returncode == 0
    proc = hippo(["hook", "session-start"], hostile_repo, stdin=session_payload(hostile_repo, "startup"),
                 extra_env=home)
    data = check_hook_output(proc)
    assert proc.stderr == b"" and data and "pytest -q" in json.dumps(data)
    log = (hostile_repo / ".hippo" / "hippo.log").read_text()
    assert "settings: hippo.toml: default_k must be an integer 1-50, got 'abc'; using 8" in log
    assert "Traceback" not in log
