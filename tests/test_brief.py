"""The SessionStart brief's extractors (hippo.push.brief) on small fixture repos: commands with their source,
layout, conventions without process text, case-insensitive spec globs."""
from __future__ import annotations

import json

import pytest

from hippo.core.config import DEFAULT_SPEC_GLOBS
from hippo.push.brief import commands, compose, conventions, layout
from hippo.push.brief.repo import Repo


def cmds_of(root) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for c in commands.extract(Repo(root)):
        out.setdefault(c.kind, []).append((c.cmd, c.source))
    return out


def test_package_json_scripts_lockfile_and_case_insensitive_readme(git_repo):
    root = git_repo({
        "package.json": json.dumps({"name": "shop", "main": "lib/index.js", "bin": {"shop": "bin/shop.js"},
                                    "scripts": {"test": "xo && ava", "lint": "eslint .", "format": "prettier --write .",
                                                "build": "tsc -p .", "start": "node lib/index.js",
                                                "prepare": "npm run build", "check:format": "prettier --check ."}}),
        "package-lock.json": "{}",
        "Readme.md": "# Shop\n\nSells things.\n\n## Testing\n\nRun `npm run test:e2e` after `npm ci`; never skip the e2e suite.\n",
        "lib/index.js": "// Shop entry: wires the routes.\nmodule.exports = {}\n", "bin/shop.js": "#!/usr/bin/env node\n"})
    got = cmds_of(root)
    assert ("npm ci", "package.json") in got["install"]
    assert ("npm test", "package.json") in got["test"] and ("npm run test:e2e", "Readme.md") in got["test"]
    assert ("npm run lint", "package.json") in got["lint"] and ("npm run check:format", "package.json") in got["lint"]
    assert ("npm run format", "package.json") in got["format"] and ("npm run build", "package.json") in got["build"]
    assert ("npm start", "package.json") in got["run"]
    assert ("npx xo", "package.json scripts.test") in got["lint"]  # a linter run inside the test script
    assert ("npx ava <file> --match '<name>'", "package.json scripts.test") in got["test_one"]
    assert not any("prepare" in c for cs in got.values() for c, _ in cs)  # lifecycle scripts are not tasks
    text = commands.render(commands.extract(Repo(root)), 2000)
    assert "`npm test` = xo && ava (package.json)" in text
    assert text.index("- install:") < text.index("- build:") < text.index("- test (all):") < text.index("- lint/check:")
    lay = layout.render(Repo(root), 1000)
    assert "Project: shop" in lay and "lib/ — JavaScript source" in lay
    assert "entry module → lib/index.js (package.json main): Shop entry: wires the routes" in lay
    assert "entry `shop` → bin/shop.js (package.json bin)" in lay


def test_pyproject_tool_sections_hatch_poe_and_tox(git_repo):
    root = git_repo({
        "pyproject.toml": (
            '[build-system]\nrequires = ["hatchling"]\n\n[project]\nname = "inv"\ndescription = "Inventory."\n'
            '[project.optional-dependencies]\ntest = ["pytest"]\n[project.scripts]\ninv = "inv.cli:main"\n'
            '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n[tool.ruff]\nline-length = 100\n'
            '[tool.mypy]\nstrict = true\n'
            '[tool.hatch.envs.default.scripts]\ncov = "pytest --cov"\n[tool.hatch.envs.lint.scripts]\nstyle = "ruff check ."\n'
            '[tool.poe.tasks]\nfmt = "ruff format ."\n'),
        "tox.ini": ("[tox]\nenv_list = py3{11,12}, lint\n\n[testenv]\ncommands = pytest {posargs}\n\n"
                    "[testenv:lint]\ncommands =\n    ruff check .\n    mypy src\n"),
        "src/inv/__init__.py": '"""Inventory: stock levels per warehouse."""\n', "src/inv/cli.py": '"""The `inv` command line."""\n',
        "tests/test_inv.py": "def test_x():\n    pass\n"})
    got = cmds_of(root)
    assert ("pip install -e '.[test]'", "pyproject.toml") in got["install"]
    assert ("pytest", "pyproject.toml") in got["test"] and ("tox", "tox.ini") in got["test"]
    assert ("tox -e py311", "tox.ini") in got["test"] and ("tox -e py312", "tox.ini") not in got["test"]  # one of a kind
    assert ("pytest tests/<file>.py::<test_name>", "pyproject.toml") in got["test_one"]
    assert ("tox -e lint", "tox.ini") in got["lint"] and ("ruff check .", "pyproject.toml") in got["lint"]
    assert ("mypy src/inv", "pyproject.toml") in got["lint"] and ("hatch run lint:style", "pyproject.toml") in got["lint"]
    assert ("hatch run cov", "pyproject.toml") in got["test"] and ("poe fmt", "pyproject.toml") in got["format"]
    assert ("inv", "pyproject.toml") in got["run"]
    text = commands.render(commands.extract(Repo(root)), 2000)
    assert "`tox -e lint` = ruff check .; mypy src (tox.ini)" in text
    lay = layout.render(Repo(root), 1000)
    assert "src/inv/ (Python package)" in lay and "entry `inv` → src/inv/cli.py ([project.scripts] inv.cli:main): The `inv` command line" in lay
    conv = conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 3000)
    assert "ruff.line-length=100" in conv and "mypy.strict=True" in conv


def test_makefile_targets_with_recipes(git_repo):
    root = git_repo({"Makefile": (".PHONY: test lint\nVERSION := 1\n\ninit:\n\tpip install -r requirements-dev.txt\n\n"
                                  "test: init\n\t@echo testing\n\tpython -m pytest tests\n\nlint:\n\truff check src\n\n"
                                  "fmt:\n\truff format src\n\nall: lint test\n\n$(BIN)/tool: x.c\n\tcc x.c\n\n"
                                  "docs:\n\tcd docs && make html\n")})
    got = cmds_of(root)
    assert got["install"] == [("make init", "Makefile")]
    assert got["test"] == [("make test", "Makefile")] and got["lint"] == [("make lint", "Makefile")]
    assert got["format"] == [("make fmt", "Makefile")]
    text = commands.render(commands.extract(Repo(root)), 2000)
    assert "`make test` = python -m pytest tests (Makefile)" in text  # the recipe, not the echo
    assert "`make docs`" in text and "`make all`" in text and "$(BIN)" not in text and "VERSION" not in text


def test_justfile_recipes_and_one_test_recipe(git_repo):
    root = git_repo({"justfile": ("alias t := test\nlog := 'warn'\n\n# run the whole suite\ntest:\n  cargo test --all\n\n"
                                  "# only run tests matching PATTERN\nfilter PATTERN:\n  cargo test {{PATTERN}}\n\n"
                                  "fmt:\n  cargo fmt --all\n\n_private:\n  echo no\n")})
    got = cmds_of(root)
    assert got["test"] == [("just test", "justfile")] and got["test_one"] == [("just filter <PATTERN>", "justfile")]
    assert got["format"] == [("just fmt", "justfile")]
    assert "just _private" not in commands.render(commands.extract(Repo(root)), 2000)


def test_cargo_workspace_and_ci_lines_beat_inferred(git_repo):
    root = git_repo({"Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
                     "crates/core/Cargo.toml": '[package]\nname = "core"\n', "crates/core/src/lib.rs": "//! Core types.\n",
                     ".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: cargo clippy --workspace -- -D warnings\n"})
    got = cmds_of(root)
    assert ("cargo test --workspace", "Cargo.toml [workspace]") in got["test"]
    assert ("cargo fmt --all", "Cargo.toml [workspace]") in got["format"]
    assert got["lint"] == [("cargo clippy --workspace -- -D warnings", ".github/workflows/ci.yml")]  # exact CI line wins
    lay = layout.render(Repo(root), 1000)
    assert "workspace members: crates/* (Cargo.toml)" in lay and "crates/core/" in lay


def test_go_module_and_cmd_entry_points(git_repo):
    root = git_repo({"go.mod": "module example.com/tool\n\ngo 1.22\n", ".golangci.yml": "linters:\n  enable:\n    - errcheck\n",
                     "cmd/tool/main.go": "// Command tool prints the inventory.\npackage main\n",
                     "internal/store/store.go": "package store\n"})
    got = cmds_of(root)
    assert ("go test ./...", "go.mod") in got["test"] and ("go vet ./...", "go.mod") in got["lint"]
    assert ("golangci-lint run", ".golangci config") in got["lint"]
    assert ("go test ./<pkg> -run '^TestName$'", "go.mod") in got["test_one"]
    lay = layout.render(Repo(root), 1000)
    assert "entry binary `tool` → cmd/tool/main.go (Go cmd/): Command tool prints the inventory" in lay
    assert "Project: example.com/tool" in lay
    assert ".golangci.yml: enabled: errcheck" in conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 2000)


def test_workflow_run_lines_single_block_folded_and_skipped():
    text = ("jobs:\n  test:\n    steps:\n      - run: npm ci\n      - name: t\n        run: |\n          npm test\n"
            "          cargo test --locked \\\n            --all\n      - run: >\n          make\n          lint\n"
            "      - run: echo ${{ secrets.X }}\n      - run: 'go vet ./...'  # vet\n")
    lines = commands.run_lines(text)
    assert lines == ["npm ci", "npm test", "cargo test --locked --all", "make lint", "echo ${{ secrets.X }}", "go vet ./..."]
    assert [commands.classify(x) for x in lines] == ["install", "test", "test", "lint", None, "lint"]


def test_classify_keeps_dev_commands_and_drops_user_installs():
    assert commands.classify("pip install requests") is None  # a README's user install
    assert commands.classify("cargo install fd-find") is None and commands.classify("npm install ky") is None
    assert commands.classify("pip install -e '.[dev]'") == "install" and commands.classify("uv sync") == "install"
    assert commands.classify("uv run pytest -x") == "test" and commands.classify("python -m pytest") == "test"
    assert commands.classify("pre-commit run --all-files") == "lint" and commands.classify("ruff format .") == "format"
    assert commands.classify("gofmt -l .") == "lint" and commands.classify("gofmt -w .") == "format"
    assert commands.classify("tox -e docs") is None and commands.classify("nox -s lint") == "lint"
    assert commands.kind_of_name("fix:format") == "format" and commands.kind_of_name("check:format") == "lint"


def test_docs_commands_need_the_tool_manifest(git_repo):
    root = git_repo({"Cargo.toml": '[package]\nname = "x"\n', "src/main.rs": "fn main() {}\n",
                     "README.md": "# x\n\n## Development\n\n```sh\nnpm install\ncargo build --release\n```\n"})
    got = cmds_of(root)
    assert ("cargo build --release", "README.md") in got["build"]
    assert not any(c == "npm install" for c, _ in got.get("install", []))  # no package.json here


def test_spec_globs_are_case_insensitive(tmp_path):
    for rel in ["readme.rst", "Contributing.md", "docs/Guide.MD", "Claude.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# T\n\ntext text text text text text text text text\n")
    assert conventions.spec_files(tmp_path, DEFAULT_SPEC_GLOBS) == ["Contributing.md", "docs/Guide.MD", "readme.rst"]


@pytest.mark.parametrize("glob, rel, want", [
    ("*.toml", "pyproject.toml", True),
    ("*.toml", "crates/x/Cargo.toml", False),  # a bare name is a file at the root (fnmatch's `*` crossed `/`)
    ("/setup.cfg", "setup.cfg", True),
    ("docs/*.md", "docs/a.md", True),
    ("docs/*.md", "docs/x/a.md", False),  # `*` stays in one folder
    ("docs/**/*.md", "docs/x/y/a.md", True),
    ("docs/**/*.md", "docs/a.md", True),
    ("**/adr/**/*.md", "a/b/adr/0001.md", True),
    ("doc?/*.rst", "DOCS/Index.RST", True),  # case-insensitive
    ("doc?/*.rst", "doc/x.rst", False),
])
def test_spec_globs_mean_what_gitignore_globs_mean(glob, rel, want):
    assert conventions.spec_matcher([glob])(rel) is want


def test_a_negated_spec_glob_takes_files_out():
    matches = conventions.spec_matcher(["docs/**/*.md", "!docs/api/**"])
    assert matches("docs/guide.md") and not matches("docs/api/x.md")
    assert conventions.spec_matcher([]) is None and conventions.spec_matcher(["!x"]) is None


CONTRIBUTING = """# Contributing

Thanks for your interest! Please read our Code of Conduct first.

## Code of Conduct

Be kind. Harassment is not tolerated; report it to the maintainers.

## Sponsors

Support us on Open Collective: https://opencollective.com/x

## Opening a pull request

Fork the repo, create a feature branch and open a pull request against main.

## Code style

Fork the repository and open a pull request when you are ready; we will respond within a week.

Always run `make lint` before pushing; functions never exceed 40 lines and use type hints.

[![badge](https://img.shields.io/x.svg)](https://x)

## Testing

Every bug fix comes with a regression test in tests/.
"""


def test_process_text_is_dropped_and_rules_are_kept(git_repo):
    root = git_repo({"CONTRIBUTING.md": CONTRIBUTING,
                     "README.md": "# X\n\n## Installation\n\npip install x\n\n## FAQ: how do I test it?\n\nUse pytest.\n"})
    text = conventions.render(Repo(root), DEFAULT_SPEC_GLOBS, 4000)
    assert "(Code style)" in text and "(Testing)" in text
    assert "functions never exceed 40 lines and use type hints" in text
    assert "Every bug fix comes with a regression test" in text
    for dropped in ("Code of Conduct", "Harassment", "Open Collective", "feature branch", "Fork the repository",
                    "Thanks for your interest", "img.shields.io", "pip install x", "how do I test"):
        assert dropped not in text, dropped


def test_compose_stays_in_budget_and_in_order(git_repo):
    root = git_repo({"Makefile": "test:\n\tpytest\n", "CONTRIBUTING.md": CONTRIBUTING + ("\n## Style rules\n\n" + "Prefer x. " * 400),
                     "src/app/__init__.py": "", "pyproject.toml": '[project]\nname = "app"\n[tool.ruff]\nline-length = 90\n'})
    text = compose(root, DEFAULT_SPEC_GLOBS, 1500)
    assert len(text) <= 1500
    assert text.index("Commands (") < text.index("Layout (") < text.index("Project conventions")
    assert compose(root, DEFAULT_SPEC_GLOBS, 1500) == text  # deterministic


def test_brief_never_reads_outside_the_repo_and_redacts(git_repo, tmp_path):
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps({"scripts": {"test": "echo outside-marker"}}))
    root = git_repo({"Makefile": "deploy:\n\tcurl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789' x\n"})
    (root / "package.json").symlink_to(secret)
    text = compose(root, DEFAULT_SPEC_GLOBS, 3000)
    assert "outside-marker" not in text and "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in text
