"""A brief whose commands run (issue 20): each rule on a small fixture repo shaped like the case that broke.

pino's one-test command used jest while its suite runs node:test through borp; uvicorn's `scripts/coverage`
was listed as a test run and `scripts/lint` (it rewrites files) as a check; bare `mypy` stops at "Missing
target module" without `files`; tomlkit got `tox -e py38` against `requires-python >=3.9`; httpie got a
non-existent `python -m manager`; flask got install lines from `examples/*/README`; and briefs were padded
with user guides, design pages and git workflow where contributors' rules should be.
"""
from __future__ import annotations

import json

from hippo.core.config import DEFAULT_SPEC_GLOBS
from hippo.push.brief import commands, conventions, layout
from hippo.push.brief.repo import Repo


def cmds(root) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for c in commands.extract(Repo(root)):
        out.setdefault(c.kind, []).append(c.cmd)
    return out


def test_one_test_uses_the_runner_the_suite_runs_first(git_repo):
    root = git_repo({"package.json": json.dumps({
        "scripts": {"browser-test": "airtap test/browser.js", "test": "npm run lint && npm run borp && jest test/jest",
                    "borp": "borp --coverage", "lint": "eslint ."},
        "devDependencies": {"borp": "1", "jest": "29", "eslint": "9", "airtap": "4"}})})
    got = cmds(root)
    assert got["test_one"] == [commands.NODE_TEST_ONE]
    assert got["test"][0] == "npm test"  # the suite's own entry before the other test scripts


def test_one_test_runner_must_be_a_dependency(git_repo):
    root = git_repo({"package.json": json.dumps({"scripts": {"test": "mocha && vitest run"},
                                                 "devDependencies": {"vitest": "1"}})})
    assert cmds(root)["test_one"] == ["npx vitest run <file> -t '<name>'"]


def test_scripts_are_classified_by_what_they_run(git_repo):
    root = git_repo({
        "pyproject.toml": '[project]\nname = "srv"\n',
        "scripts/coverage": "#!/bin/sh -e\n${PREFIX}coverage report --show-missing --fail-under=98\n",
        "scripts/lint": "#!/bin/sh -e\nexport PREFIX=\"\"\n${PREFIX}ruff format\n${PREFIX}ruff check --fix\n",
        "scripts/check": "#!/bin/sh -e\n${PREFIX}ruff format --check --diff\n${PREFIX}mypy\n${PREFIX}ruff check\n",
        "scripts/test": "#!/bin/sh\n${PREFIX}coverage run --debug config -m pytest \"$@\"\n",
        "scripts/install": "#!/bin/sh\necho hi\n"})
    got = cmds(root)
    assert "scripts/test" in got["test"] and "scripts/coverage" not in got.get("test", [])
    assert "scripts/coverage" in got["other"]
    assert "scripts/lint" in got["format"] and "scripts/lint" not in got.get("lint", [])
    assert "scripts/check" in got["lint"]
    assert "scripts/install" in got["install"]  # nothing recognisable inside: the name decides


def test_mypy_gets_a_target_when_its_config_names_none(git_repo):
    files = {"src/shop/__init__.py": "", "tests/test_x.py": ""}
    bare = git_repo({**files, "pyproject.toml": '[project]\nname = "shop"\n[tool.mypy]\nstrict = true\n'})
    named = git_repo({**files, "pyproject.toml": '[project]\nname = "shop"\n[tool.mypy]\nfiles = "src"\n'})
    assert "mypy src/shop" in cmds(bare)["lint"] and "mypy" not in cmds(bare)["lint"]
    assert "mypy" in cmds(named)["lint"]


def test_tox_envs_stay_inside_the_supported_pythons(git_repo):
    root = git_repo({"pyproject.toml": '[project]\nname = "t"\nrequires-python = ">=3.9,<3.13"\n',
                     "tox.ini": "[tox]\nenvlist = py{38,39,310,313}, lint\n[testenv:lint]\ncommands = ruff check .\n"})
    got = cmds(root)
    assert "tox -e py39" in got["test"] and not any(c in got["test"] for c in ("tox -e py38", "tox -e py313"))
    assert commands.env_python("py3.12-django") == (3, 12) and commands.env_python("lint") is None


def test_setup_cfg_python_requires_bounds_tox_too(git_repo):
    root = git_repo({"setup.cfg": "[options]\npython_requires = >=3.10\n[tox:tox]\nenvlist = py39, py311\n"})
    assert "tox -e py311" in cmds(root)["test"] and "tox -e py39" not in cmds(root)["test"]


def test_python_m_takes_the_package_path(git_repo):
    root = git_repo({"httpie/__init__.py": "", "httpie/__main__.py": '"""The http command."""\n',
                     "httpie/manager/__init__.py": "", "httpie/manager/__main__.py": '"""The httpie manager."""\n',
                     "src/tool/__main__.py": '"""Tool entry."""\n'})
    text = layout.render(Repo(root), 1000)
    assert "`python -m httpie.manager` → httpie/manager/__main__.py" in text
    assert "`python -m httpie` → httpie/__main__.py" in text and "`python -m tool` → src/tool/__main__.py" in text
    assert "python -m manager`" not in text


def test_nothing_from_examples_or_tutorials(git_repo):
    root = git_repo({
        "pyproject.toml": '[project]\nname = "flask"\n',
        "CONTRIBUTING.rst": "Contributing\n============\n\nInstall\n-------\n\n.. code-block:: text\n\n    pip install -e .\n",
        "examples/tutorial/README.rst": "Flaskr\n======\n\nInstall\n-------\n\n::\n\n    pip install -e .\n    flask --app flaskr init-db\n\n"
                                        "Test\n----\n\n::\n\n    pip install '.[test]'\n    pytest\n",
        "docs/tutorial/tests.md": "# Testing\n\nWrite a test for every view: always use the client fixture here.\n",
        "docs/testing.rst": "Testing Flask Applications\n==========================\n\nRun it:\n\n::\n\n    pytest\n"})
    found = [c for c in commands.extract(Repo(root)) if c.rank == commands.DOCS]
    assert found and all(c.source == "CONTRIBUTING.rst" for c in found)  # no examples/, no user docs
    text = conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 3000)
    assert "client fixture" not in text


def test_conventions_come_from_contributor_text_only(git_repo):
    root = git_repo({
        "docs/design.md": "# Design decisions\n\nWe chose a global app object because it keeps examples short.\n",
        "docs/testing.md": "# Testing your application\n\nUse app.test_client() to test your views always.\n",
        "docs/development/style.md": "# Style\n\nKeep functions under forty lines; every fix comes with a test.\n",
        "CONTRIBUTING.md": "# Contributing\n\n## Git workflow\n\nCreate a branch off main, rebase before you push, "
                           "and squash fixups.\n\n## Tests\n\nEvery change needs a test in tests/; run pytest -q.\n"})
    text = conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 3000)
    assert "forty lines" in text and "run pytest -q" in text
    assert "global app object" not in text and "test_client" not in text and "rebase" not in text


def test_no_contributor_text_is_said_plainly(git_repo):
    root = git_repo({"README.md": "# Lib\n\n## Usage\n\nCall lib.run() with a path and it does the thing.\n",
                     "docs/guide.md": "# Guide\n\n## Testing your code\n\nUse the fixture in your own tests always.\n"})
    assert conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 3000) == conventions.NONE_WRITTEN


def test_docs_named_by_the_repos_own_spec_globs_still_count(git_repo):
    root = git_repo({"docs/design.md": "# Coding conventions\n\nEvery module owns one thing; never import upward.\n"})
    assert "never import upward" in conventions.render(Repo(root), ("docs/*.md",), 3000)
    assert "never import upward" not in conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 3000)


# --- found by the 23-repo brief bench (bench/brief/run.py), December 2026 --------------------------------
def test_a_readme_install_of_the_published_package_is_not_a_contributor_install(git_repo):
    """ufo's README says `pnpm install ufo` (a user adding the release); the checkout is set up with `pnpm install`."""
    root = git_repo({"package.json": json.dumps({"name": "ufo", "packageManager": "pnpm@10",
                                                 "scripts": {"test": "vitest run"}}),
                     "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
                     "README.md": "# ufo\n\n## Install\n\n```sh\npnpm install ufo\nbun install ufo\n```\n\n"
                                  "## Development\n\n```sh\npnpm install\npnpm test\n```\n"})
    installs = cmds(root)["install"]
    assert "pnpm install ufo" not in installs and "bun install ufo" not in installs
    assert "pnpm install" in installs
    assert commands.installs_own_package("python3 -m pip install --upgrade Humanize", {"humanize"})
    assert not commands.installs_own_package("pip install -e '.[tests]'", {"humanize"})


def test_the_one_test_template_names_the_repos_own_test_folder(git_repo):
    """python-tabulate keeps its tests in `test/`: `pytest tests/<file>.py` pointed at a folder it does not have."""
    root = git_repo({"pyproject.toml": '[project]\nname = "tab"\n[tool.pytest.ini_options]\naddopts = "-v"\n',
                     "tab/__init__.py": "", "test/test_x.py": "def test_x():\n    pass\n"})
    assert cmds(root)["test_one"] == ["pytest test/<file>.py::<test_name>"]


def test_maintainer_housekeeping_is_not_listed_among_other_tasks(git_repo):
    root = git_repo({"Makefile": "test:\n\tpytest\npublish:\n\ttwine upload dist/*\nhelp:\n\t@echo hi\n"
                                 "docs:\n\tsphinx-build docs out\nrelease:\n\t./release.sh\n"})
    text = commands.render(commands.extract(Repo(root)), 2000)
    assert "`make docs`" in text
    assert "make publish" not in text and "make help" not in text and "make release" not in text


def test_readme_api_sections_and_contributor_lists_are_not_conventions(git_repo):
    """picomatch's README documents its `.test()` function under `### [.test](lib/picomatch.js#L128)`, and
    python-tabulate's lists its contributors under `## Contributors`: neither is a testing or contributing rule."""
    root = git_repo({"README.md": "# lib\n\n## Testing\n\nRun every test with `npm test` before you push; "
                                  "new code needs a test.\n\n### [.test](lib/picomatch.js#L128)\n\nTest `input` "
                                  "with the given `regex`. This is used by the main function to test a string.\n\n"
                                  "## Contributors\n\nAda Lovelace, Grace Hopper, Alan Turing, Edsger Dijkstra, "
                                  "Barbara Liskov, Donald Knuth.\n",
                     "package.json": json.dumps({"name": "lib", "scripts": {"test": "mocha"}})})
    text = conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 3000)
    assert "README.md:3-" in text  # the real testing section stays
    assert ".test" not in text and "Grace Hopper" not in text
